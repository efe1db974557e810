"""Kineto / Chrome traces (``torch.profiler``'s ``export_chrome_trace``): kernels per range
(:mod:`trtstudio.engine.kineto`), in ``EngineInfo.kernels``; no layers of their own."""

from __future__ import annotations

from pathlib import Path

from trtstudio.engine.model import EngineInfo
from trtstudio.engine.readers import register


def _sniff(head: str, path: Path) -> bool:
    from trtstudio.engine.kineto import looks_like_trace

    return head.lstrip().startswith("{") and looks_like_trace(head)


@register("kineto-trace", patterns=("*.pt.trace.json", "*chrome_trace*.json"), sniff=_sniff, kind="profile", priority=5)
def read(path: Path, text: str) -> EngineInfo:
    """The trace's kernel table (CPU ranges: record_function annotations and aten ops)."""
    from trtstudio.engine.kineto import read_trace

    table = read_trace(path)
    info = EngineInfo(detailed=False, kernels=table.to_json())
    info.warnings.extend(table.notes)
    return info
