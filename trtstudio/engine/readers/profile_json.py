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
from trtstudio.engine.readers import as_text, loads_json, register
from trtstudio.engine.readers._common import layer_time
from trtstudio.errors import InputError

_UNREAD: Any = object()


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

    if _fast.use_fast_path(text):
        fast = _fast.read_profile(text)
        if fast is not None:
            return fast
    else:  # a big profile in the window's loader: in pieces, each record decoded on its own
        from trtstudio import children

        doc = children.read_pieces(str(path), raw=True)
        if doc is not None:
            fast = _fast.read_profile_lines(doc)
            return fast if fast is not None else read_general(path, "", children.parse_raw(doc))
        return read_general(path, as_text(text), pieces=False)
    return read_general(path, as_text(text))


def read_general(path: Path, text: str, doc: Any = _UNREAD, pieces: bool = True) -> EngineInfo:
    """:func:`read` without its fast path: any valid profile, the error line for the rest
    (``doc``: the document, already parsed from ``text``)."""
    if doc is _UNREAD:
        doc = loads_json(path, text, pieces=pieces)
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
