"""ONNX element types: their short names and item sizes (shared by the graph loader and the
parameter counts)."""

from __future__ import annotations

import numpy as np

DTYPE_NAMES: dict[int, str] = {}

# bytes per element of the types whose size is whole bytes (others: float8, int4, ... count 0 bytes)
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int8": 1, "uint8": 1, "int16": 2,
            "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "bool": 1}


def dtype_name(elem_type: int) -> str:
    """ONNX TensorProto element type -> short lower-case name ("float32", "float16", "int64", ...)."""
    if not DTYPE_NAMES:
        from onnx import helper

        for code in range(0, 30):
            try:
                DTYPE_NAMES[code] = str(np.dtype(helper.tensor_dtype_to_np_dtype(code)))
            except Exception:  # noqa: BLE001 - undefined, string, or types numpy lacks
                try:
                    DTYPE_NAMES[code] = helper.tensor_dtype_to_string(code).replace("TensorProto.", "").lower()
                except Exception:  # noqa: BLE001
                    continue
        DTYPE_NAMES[0] = "undefined"
        DTYPE_NAMES[8] = "string"
    return DTYPE_NAMES.get(elem_type, f"type{elem_type}")
