"""The one view of an ONNX model's inputs and outputs: names, dtypes and declared dims, read once.

:func:`read_onnx` is the one place a model file is read for its graph (``onnx.load`` without its
external weights; a missing, empty or non-ONNX file is an :class:`~trtstudio.errors.InputError`).
:class:`OnnxModel` holds the ``ModelProto`` with the path it came from, and lists its inputs and
outputs as :class:`TensorDecl` on first use. The shape planner, the engine build and its support
check, the ONNX Runtime backend, the Live profile panel and ``trtstudio triton-config`` all read
a model's inputs from here, so they agree on what a model takes:

- ``dims``: an int where the model fixes the size (0 included: ONNX allows empty dimensions), the
  symbol where it names one (``"batch"``), ``"?"`` where it names none;
- ``dtype``: the numpy name (``float32``, ``int64``, ``bool``), else ONNX's own name lower-cased;
- an initializer listed among the graph inputs is a weight, not an input.

Qt-free; ``onnx`` is imported inside the functions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from trtstudio.errors import InputError

UNKNOWN_DIM = "?"  # a dimension the model leaves unnamed (and some exporters name so, Paddle2ONNX)


@dataclass(frozen=True)
class TensorDecl:
    """One graph input or output as the model declares it."""

    name: str
    elem_type: int  # ONNX TensorProto element type; 0 for a value that is not a tensor
    onnx_type: str  # ONNX's name of the element type (FLOAT, INT64...) or the value's kind (sequence_type...)
    dtype: str  # numpy dtype name, else ONNX's name lower-cased
    dims: tuple[int | str, ...]

    @property
    def dynamic(self) -> bool:
        """True when some dimension is not fixed by the model."""
        return any(not isinstance(d, int) for d in self.dims)

    def spec(self) -> dict[str, Any]:
        """``{"name", "dtype", "shape"}`` (a backend's ``InputSpec``)."""
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.dims)}

    def fixed_dims(self, unknown: int = -1) -> list[int]:
        """The dims with ``unknown`` for every dimension the model does not fix."""
        return [d if isinstance(d, int) else unknown for d in self.dims]


def _onnx_type(elem_type: int) -> str:
    import onnx

    try:
        return str(onnx.TensorProto.DataType.Name(elem_type))
    except ValueError:
        return str(elem_type)


def _numpy_dtype(elem_type: int) -> str:
    import onnx

    try:
        return str(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, ValueError, TypeError):
        return _onnx_type(elem_type).lower()


def declared_dims(value_info: Any) -> tuple[int | str, ...]:
    """The dims of a ``ValueInfoProto`` (see the module docstring)."""
    dims: list[int | str] = []
    for d in value_info.type.tensor_type.shape.dim:
        if d.HasField("dim_value") and d.dim_value >= 0 and not d.dim_param:
            dims.append(int(d.dim_value))
        else:
            dims.append(d.dim_param or UNKNOWN_DIM)
    return tuple(dims)


def tensor_decl(value_info: Any) -> TensorDecl:
    """The :class:`TensorDecl` of one ``ValueInfoProto``."""
    if value_info.type.HasField("tensor_type"):
        elem = int(value_info.type.tensor_type.elem_type)
        return TensorDecl(value_info.name, elem, _onnx_type(elem), _numpy_dtype(elem), declared_dims(value_info))
    kind = value_info.type.WhichOneof("value") or "?"
    return TensorDecl(value_info.name, 0, kind, kind, ())


@dataclass
class OnnxModel:
    """A ``ModelProto`` (without external weights) and the file it came from (None: given in memory)."""

    proto: Any
    path: Path | None = None

    @cached_property
    def initializer_names(self) -> frozenset[str]:
        return frozenset(i.name for i in self.proto.graph.initializer)

    @cached_property
    def inputs(self) -> list[TensorDecl]:
        """The graph inputs that are not initializers, in graph order."""
        inits = self.initializer_names
        return [tensor_decl(vi) for vi in self.proto.graph.input if vi.name not in inits]

    @cached_property
    def outputs(self) -> list[TensorDecl]:
        """The graph outputs, in graph order."""
        return [tensor_decl(vi) for vi in self.proto.graph.output]

    @cached_property
    def metadata(self) -> dict[str, str]:
        """The model's ``metadata_props``."""
        return {p.key: p.value for p in self.proto.metadata_props}

    @property
    def name(self) -> str | None:
        """The path as text, None for a model given in memory."""
        return str(self.path) if self.path is not None else None


def read_onnx(path: str | os.PathLike[str]) -> OnnxModel:
    """Read an ONNX file without its external weights; InputError for a missing, empty or non-ONNX file."""
    p = Path(path)
    if not p.is_file():
        raise InputError(p, "no such file")
    with p.open("rb") as fh:
        if not fh.read(1):
            raise InputError(p, "empty file, not an ONNX model")
    import onnx

    try:
        proto = onnx.load(str(p), load_external_data=False)
    except Exception as exc:  # noqa: BLE001 - DecodeError, json_format.ParseError (onnx.load goes by extension), ...
        raise InputError(p, f"not an ONNX model ({type(exc).__name__})") from None
    if not proto.graph.node and not proto.graph.output:
        raise InputError(p, "not an ONNX model (no graph)")
    return OnnxModel(proto, p)


def onnx_model(model: Any) -> OnnxModel:
    """``model`` as an :class:`OnnxModel`: one itself, a path (read), a ``ModelProto``, or an object
    holding one in ``.proto`` (a trtstudio ``Model``)."""
    if isinstance(model, OnnxModel):
        return model
    if isinstance(model, (str, os.PathLike)):
        return read_onnx(model)
    proto = getattr(model, "proto", model)
    if not hasattr(proto, "graph"):
        raise InputError(None, "expected an ONNX path or ModelProto")
    return OnnxModel(proto)
