"""IEngineInspector / ``trtexec --exportLayerInfo`` JSON, TensorRT 8.2 to 11.

Detailed documents (``Layers`` of objects) and LAYER_NAMES_ONLY documents (``Layers`` of strings),
``Bindings`` (<=10.x) and ``I/O Tensors`` (11.x). The same schema comes from trtexec, the Python
inspector (``trt_engine_info.json``), Torch-TensorRT and files with a ``.log`` extension.
"""

from __future__ import annotations

from pathlib import Path

from trtstudio.engine.model import EngineInfo
from trtstudio.engine.readers import register
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

    info, doc = _fast.read_or_parse(path, text, _fast.read_layer_doc, _fast.read_layer_lines, _fast.LayerFeed)
    return info if info is not None else info_from_layer_doc(path, doc, consume=True)
