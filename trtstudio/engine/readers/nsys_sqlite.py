"""``nsys export --type sqlite`` files: kernels per NVTX range (:mod:`trtstudio.engine.nsys`).

A TensorRT run's export carries one NVTX range per engine layer (domain ``TensorRT``): those become
the engine's per-layer times, as a profile's (each layer's kernels' time per instance of its range),
so the file opens alone or beside the engine's layer listing. Every export (PyTorch's ``aten::``
ranges too) carries its kernel table in ``EngineInfo.kernels``.
"""

from __future__ import annotations

from pathlib import Path

from trtstudio.engine.model import EngineInfo, LayerTime
from trtstudio.engine.readers import register


def _sniff(head: str, path: Path) -> bool:
    return head.startswith("SQLite format 3\x00")


@register("nsys-sqlite", patterns=("*.sqlite", "*.nsys.sqlite"), sniff=_sniff, kind="profile", binary=True, priority=1)
def read(path: Path, text: str) -> EngineInfo:
    """The export's kernel table, and the TensorRT layers' times where it has their ranges."""
    from trtstudio.engine.nsys import read_kernels

    table = read_kernels(path)
    total = sum(ms for _, _, ms in table.layer_times())
    times = [(name, LayerTime(total_ms=ms, average_ms=ms / count if count else None,
                              percent=100.0 * ms / total if total else None, count=count))
             for name, count, ms in table.layer_times()]
    info = EngineInfo(detailed=False, times=times, kernels=table.to_json())
    info.warnings.extend(table.notes)
    return info
