"""``trtexec --exportProfile`` JSON: [{"count": N}, {"name", "timeMs", "averageMs", "medianMs"?, "percentage"}...].

Also the legacy TensorRT 7/8 ``*.profile`` files (no medianMs, "input reformatter 0" names, DLA
"{...}" subgraphs, "data to nvm" copies). The result holds no layers but each record's name and
LayerTime in ``EngineInfo.times``: :func:`trtstudio.engine.load.load_engine` matches them to layer
information by name, or makes profile-only layers of them (``_common.layers_from_times``) when there
is none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trtstudio.engine.model import EngineInfo, LayerTime
from trtstudio.engine.readers import loads_json, register
from trtstudio.engine.readers._common import layer_time
from trtstudio.errors import InputError


def _sniff(head: str, path: Path) -> bool:
    s = head.lstrip()
    if not s.startswith("["):
        return False
    i = s.find('"count"')
    return 0 <= i < 40


@register("trtexec-profile", patterns=("*.profile.json", "*profile*.json", "*.profile"), sniff=_sniff,
          kind="profile", takes_bytes=True)
def read(path: Path, text: str | bytes) -> EngineInfo:
    """Read a per-layer profile into ``EngineInfo.times`` (a LayerTime per layer name)."""
    from trtstudio.engine.readers import _fast

    info, doc = _fast.read_or_parse(path, text, _fast.read_profile, _fast.read_profile_lines)
    return info if info is not None else _from_doc(path, doc)


def read_general(path: Path, text: str) -> EngineInfo:
    """:func:`read` without its fast path: any valid profile, the error line for the rest."""
    return _from_doc(path, loads_json(path, text))


def _from_doc(path: Path, doc: Any) -> EngineInfo:
    """The profile in the parsed document ``doc`` (its records are dropped as they are read)."""
    if not isinstance(doc, list):
        raise InputError(path, 'unknown profile schema: expected a JSON list [{"count": N}, {"name", "timeMs"...}]')
    count: int | None = None
    times: list[tuple[str, LayerTime]] = []
    for i, rec in enumerate(doc):
        if not isinstance(rec, dict):
            raise InputError(path, f"unknown profile schema: record {i} is not an object")
        if "name" not in rec:
            if "count" in rec and isinstance(rec["count"], (int, float)):
                count = int(rec["count"])
                continue
            raise InputError(path, f'unknown profile schema: record {i} has no "name"')
        name = rec["name"]
        if type(name) is not str:
            name = str(name)
        times.append((name, layer_time(rec, count)))
        doc[i] = None  # freed record by record, not all at once at the end (see info_from_layer_doc)
    info = EngineInfo(detailed=False, times=times)
    if count is not None:
        info.build_settings["profile_iterations"] = count
    return info
