"""Per-layer inspector dumps: ``get_layer_information(i, JSON)`` printed under "--- Layer N ---" lines."""

from __future__ import annotations

import re
from pathlib import Path

from trtstudio.engine.model import EngineInfo
from trtstudio.engine.readers import loads_json, register
from trtstudio.engine.readers._common import info_from_layer_doc
from trtstudio.errors import InputError

_SEP = re.compile(r"^--- Layer (\d+) ---[ \t]*$", re.M)


def _sniff(head: str, path: Path) -> bool:
    return head.lstrip().startswith("--- Layer ")


@register("layer-dump", patterns=("*layer_info*.txt",), sniff=_sniff, kind="layers", priority=40)
def read(path: Path, text: str) -> EngineInfo:
    """Read "--- Layer N ---" separated JSON records into one EngineInfo."""
    parts = _SEP.split(text)
    # parts: [before, n0, body0, n1, body1, ...]
    records = []
    line = 1 + parts[0].count("\n")
    for k in range(1, len(parts), 2):
        body = parts[k + 1]
        line += 1
        try:
            rec = loads_json(path, body)
        except InputError as exc:  # re-raise naming the layer section
            msg = exc.message
            raise InputError(path, f"layer {parts[k]} (from line {line}): {msg}") from None
        line += body.count("\n")
        records.append(rec)
    if not records:
        raise InputError(path, 'unknown layer schema: expected "--- Layer N ---" sections')
    info = info_from_layer_doc(path, {"Layers": records})
    return info
