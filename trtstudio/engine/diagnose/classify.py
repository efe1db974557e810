"""What a layer is, as every rule family reads it: a reformat, a convolution, a GEMM, a plugin, a
kernel on tensor cores or not; the precision sets the rules compare against."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from trtstudio.engine.model import Layer

TENSOR_CORE_MARKERS: tuple[str, ...] = (
    "hmma", "imma", "h16816", "h1688", "i8816", "i16832", "s16816", "s1688", "bf16816",
    "_tc_", "warpgroup", "wgmma", "cgasize",
)
_TENSOR_SHAPE_RE = re.compile(r"tensor\d+x\d+x\d+|tensor\d{3,}")
NO_TENSOR_CORE_MARKERS: tuple[str, ...] = (
    "ffma", "simt", "scudnn", "sgemm", "int8x4", "dp4a", "volta_s", "_fp32_",
)

REDUCED = frozenset(("FP16", "BF16"))
LOW = frozenset(("FP16", "BF16", "INT8", "FP8", "FP4", "INT4"))
FLOAT = frozenset(("FP32", "FP16", "BF16"))


def is_reformat(lay: Layer) -> bool:
    """A layer that only changes format or type (Reformat, CopyNode, legacy "reformatter")."""
    return (
        lay.type == "Reformat"
        or bool(lay.own_attrs().get("reformat"))
        or lay.name.startswith("Reformatting CopyNode")
        or " reformatter " in lay.name
    )


def is_conv(lay: Layer) -> bool:
    t = lay.type.lower()
    return lay.parameter_type == "Convolution" or "convolution" in t or t == "convactpool"


def is_gemm(lay: Layer) -> bool:
    t = lay.type.lower()
    return t in ("gemm", "matrixmultiply", "matmul", "fullyconnected", "cublasgemm") or (
        lay.parameter_type in ("MatrixMultiply", "FullyConnected")
    )


def is_plugin(lay: Layer) -> bool:
    return lay.type.startswith("Plugin") or "[PluginV2" in lay.name or "[PluginV3" in lay.name


@lru_cache(maxsize=4096)
def uses_tensor_cores(tactic: str) -> bool | None:
    """True/False from a tactic or kernel name; None when the name says neither."""
    t = tactic.lower()
    if any(m in t for m in TENSOR_CORE_MARKERS) or _TENSOR_SHAPE_RE.search(t):
        return True
    if any(m in t for m in NO_TENSOR_CORE_MARKERS):
        return False
    return None


def dim(shape: Sequence[Any] | None, i: int) -> int | None:
    """Dimension ``i`` of ``shape`` when it is a known positive size, else None."""
    if not shape:
        return None
    try:
        v = shape[i]
    except IndexError:
        return None
    return v if isinstance(v, int) and v > 0 else None
