"""Shapes as text: the one parser of shape flags and cells, and how shapes are written back.

The rule, for ``--shapes``/``--min-shapes``/``--opt-shapes``/``--max-shapes`` of every command and
for the window's shape cells:

- a shape is integers joined by ``x`` (``1x3x224x224``); spaces around them are ignored;
- each integer is 0 or more: 0 is a real size (ONNX and TensorRT allow empty dimensions, and a
  shape-tensor input given trtexec-style takes values such as Reshape's 0, "copy this dim");
  a negative number, a word or an empty shape is refused;
- a flag lists ``NAME:SHAPE`` items joined by commas; the name is what comes before the *last*
  colon (names such as ``scope:0`` keep theirs) and may be quoted, as trtexec allows.

Metadata values (Ultralytics ``imgsz: [640, 640]``) are read by :func:`metadata_ints`, which also
takes Python literals.
"""

from __future__ import annotations

import ast
from typing import Any

from trtstudio.errors import InputError

Shape = tuple[int, ...]
SHAPE_RULE = "integers >= 0 joined by 'x', e.g. 1x3x224x224"


def parse_dims(text: str, source: Any = "--shapes", what: str = "") -> Shape:
    """``"1x3x224x224"`` -> ``(1, 3, 224, 224)``; InputError (``source``, naming ``what``) otherwise."""
    parts = [p.strip() for p in str(text).strip().lower().split("x")]
    try:
        dims = tuple(int(p, 10) for p in parts)
    except ValueError:
        dims = ()
    if not dims or any(d < 0 for d in dims):
        raise InputError(source, f"{what + ': ' if what else ''}{str(text).strip()!r} is not a shape ({SHAPE_RULE})")
    return dims


def parse_shapes(text: str | None, source: Any = "--shapes") -> dict[str, Shape]:
    """``"name:1x3x224x224,other:1x10"`` -> ``{"name": (1, 3, 224, 224), "other": (1, 10)}`` (see the rule)."""
    shapes: dict[str, Shape] = {}
    if not text:
        return shapes
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, dims = item.rpartition(":")
        name = name.strip().strip("'\"")
        if not sep or not name:
            raise InputError(source, f"'{item}' is not NAME:DxDxD (e.g. input:1x3x224x224)")
        shapes[name] = parse_dims(dims, source, f"input '{name}'")
    return shapes


def metadata_ints(text: str) -> list[int] | None:
    """A metadata value as ints: ``'[640, 640]'`` / ``'640'`` / ``'(1, 3, 640, 640)'`` / ``'640x640'``;
    None when it is not that."""
    text = text.strip()
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        try:
            return list(parse_dims(text)) if "x" in text.lower() else None
        except InputError:
            return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return [value]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return [int(v) for v in value]
    return None


def shape_text(shape: Any) -> str:
    """``1x3x224x224``; ``scalar`` for the empty shape."""
    return "x".join(str(int(d)) for d in shape) if len(shape) else "scalar"


def decl_text(dims: Any) -> str:
    """Declared dims as ``[batch,3,?,?]``."""
    return "[" + ",".join(str(d) for d in dims) + "]"
