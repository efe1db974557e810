"""IEngineInspector / ``trtexec --exportLayerInfo`` JSON, TensorRT 8.2 to 11.

Detailed documents (``Layers`` of objects) and LAYER_NAMES_ONLY documents (``Layers`` of strings),
``Bindings`` (<=10.x) and ``I/O Tensors`` (11.x). The same schema comes from trtexec, the Python
inspector (``trt_engine_info.json``), Torch-TensorRT and files with a ``.log`` extension.
"""

from __future__ import annotations

from pathlib import Path

from trtstudio.engine.model import EngineInfo
from trtstudio.engine.readers import as_text, loads_json, register
from trtstudio.engine.readers._common import info_from_layer_doc


def _sniff(head: str, path: Path) -> bool:
    s = head.lstrip()
    if not s.startswith("{"):
        return False
    i = s.find('"Layers"')
    return 0 <= i < 64


@register(
    "inspector-json",
    patterns=("*.graph.json", "*layer*info*.json", "*exportlayerinfo*", "*engine_info*.json", "*.layers.json"),
    sniff=_sniff,
    kind="layers",
    takes_bytes=True,
)
def read(path: Path, text: str | bytes) -> EngineInfo:
    """Read an engine inspector JSON document."""
    from trtstudio.engine.readers import _fast

    if _fast.use_fast_path(text):
        info = _fast.read_layer_doc(text)
        if info is not None:
            return info
    else:  # a big document in the window's loader: in pieces, each record decoded on its own
        from trtstudio import children

        doc = children.read_pieces(str(path), raw=True)
        if doc is not None:
            info = _fast.read_layer_lines(doc)
            return info if info is not None else info_from_layer_doc(path, children.parse_raw(doc), consume=True)
        return info_from_layer_doc(path, loads_json(path, as_text(text), pieces=False), consume=True)
    return info_from_layer_doc(path, loads_json(path, as_text(text)), consume=True)
