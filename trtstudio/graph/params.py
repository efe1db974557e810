"""Parameter counts of an ONNX graph: the weights it stores, wherever the exporter put them.

Most exporters store weights as initializers. paddle2onnx (PaddleOCR's models) stores them in
``Constant`` nodes instead, and ONNX's "light" test models make them at run time with
``ConstantOfShape`` from a shape held in the file. :func:`count_parameters` counts all three and
says which is which; every figure of a model's parameters (``inspect``, the Model page, reports,
the precision sweep's size estimates) comes from it.

What counts (top-level graph, as for initializers):

- every initializer, whatever its size or use (as ONNX tools count them);
- a ``Constant`` node's value when it holds numbers (not bool or string) and either has at least
  :data:`MIN_WEIGHT_ELEMENTS` elements or feeds an op that takes weights (:data:`WEIGHT_OPS`, e.g. a
  6-element convolution bias): scalars and short shape, axis or scale vectors (Reshape shapes,
  Resize scales, Clip bounds, the 0.5 of a Mul) are arguments, not parameters;
- a ``ConstantOfShape`` node's output when its shape is written in the file (an initializer or a
  ``Constant``) and it feeds an op of :data:`WEIGHT_OPS`: a mask or padding made from a shape
  computed at run time is not a weight. Its bytes are those of the tensor it makes, not of the one
  value the file stores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import compress
from typing import Any

from trtstudio.graph.dtypes import ITEMSIZE, dtype_name

MIN_WEIGHT_ELEMENTS = 16

# ops whose non-first inputs (and MatMul's either input) are weights when they are constant
WEIGHT_OPS = frozenset({
    "Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "DeformConv", "Gemm", "MatMul", "MatMulInteger",
    "QLinearMatMul", "Einsum", "BatchNormalization", "InstanceNormalization", "LayerNormalization",
    "GroupNormalization", "RMSNormalization", "PRelu", "LSTM", "GRU", "RNN",
})

SOURCES = ("initializer", "Constant", "ConstantOfShape")
_MAKERS = frozenset(SOURCES[1:])
_NOT_NUMBERS = frozenset({"bool", "string", "undefined"})
_ONNX_DOMAINS = ("", "ai.onnx")


@dataclass(frozen=True, slots=True)
class Source:
    """The parameters of one kind of storage: how many tensors, elements and bytes."""

    tensors: int = 0
    parameters: int = 0
    bytes: int = 0

    def to_json(self) -> dict[str, int]:
        return {"tensors": self.tensors, "parameters": self.parameters, "bytes": self.bytes}


@dataclass(frozen=True, slots=True)
class ParameterCount:
    """A graph's parameters by source (``initializer``, ``Constant``, ``ConstantOfShape``)."""

    sources: dict[str, Source]
    float_parameters: int  # those of a floating-point type (what an FP16 or INT8 build stores smaller)
    float_bytes: int

    @property
    def parameters(self) -> int:
        return sum(s.parameters for s in self.sources.values())

    @property
    def bytes(self) -> int:
        return sum(s.bytes for s in self.sources.values())

    @property
    def in_constants(self) -> int:
        """Parameters held by Constant and ConstantOfShape nodes (not initializers)."""
        return self.parameters - self.sources["initializer"].parameters

    def bytes_with_floats_of(self, itemsize: int) -> int:
        """The parameters' bytes with every floating-point one stored in ``itemsize`` bytes (2 for
        FP16/BF16, 1 for INT8/FP8) and the others as they are: the weights' share of an engine's or
        converted model's size."""
        return self.bytes - self.float_bytes + self.float_parameters * itemsize

    def to_json(self) -> dict[str, dict[str, int]]:
        return {k: s.to_json() for k, s in self.sources.items()}


def count_parameters(graph: Any, op_types: list[str] | None = None) -> ParameterCount:
    """The parameters of ``graph`` (a :class:`trtstudio.graph.model.Graph`, or a ``Model``: its
    graph) under the rules of this module. For a file: ``count_parameters(load_model(path,
    infer_shapes=False))`` (shape inference changes nothing here). ``op_types``: the op type of each
    node of ``graph``, when the caller has them (they are what costs time at 100,000 nodes)."""
    graph = getattr(graph, "graph", graph)  # a Model
    acc = {k: [0, 0, 0] for k in SOURCES}
    floats = [0, 0]

    def add(source: str, dtype: str, n: int) -> None:
        size = ITEMSIZE.get(dtype, 0) * n
        a = acc[source]
        a[0] += 1
        a[1] += n
        a[2] += size
        if dtype.startswith(("float", "bfloat")):
            floats[0] += n
            floats[1] += size

    for proto in graph.initializers.values():
        add("initializer", dtype_name(proto.data_type), math.prod(int(d) for d in proto.dims))
    if op_types is None:
        op_types = [n.op_type for n in graph.nodes]
    for node in compress(graph.nodes, map(_MAKERS.__contains__, op_types)):  # in C over 100,000s of nodes
        if node.domain not in _ONNX_DOMAINS or not node.outputs or node.proto is None:
            continue
        if node.op_type == "Constant":  # 6 us each (protobuf access): 50,000 Constants take 0.3 s
            got = _constant(node.proto)
            if got is None or got[1] < 0:  # no numbers; a negative dim (a broken file, the load warned)
                continue
            if got[1] < MIN_WEIGHT_ELEMENTS and not _feeds_weight_op(graph, node):
                continue
        else:
            got = _filled(graph, node)
            if got is None or not _feeds_weight_op(graph, node):
                continue
        dtype = dtype_name(got[0])
        if dtype not in _NOT_NUMBERS:
            add(node.op_type, dtype, got[1])
    return ParameterCount({k: Source(*v) for k, v in acc.items()}, floats[0], floats[1])


_FLOAT32, _INT64 = 1, 7  # onnx.TensorProto.FLOAT, INT64


def _constant(proto: Any) -> tuple[int, int] | None:
    """(element type, elements) of a Constant node's value; None for strings or no value."""
    for attr in proto.attribute:
        name = attr.name
        if name == "value":
            t = attr.t
            return t.data_type, math.prod(t.dims)
        if name == "sparse_value":
            st = attr.sparse_tensor
            return st.values.data_type, math.prod(st.dims)
        if name in ("value_float", "value_int"):
            return (_FLOAT32 if name == "value_float" else _INT64), 1
        if name in ("value_floats", "value_ints"):
            return (_FLOAT32, len(attr.floats)) if name == "value_floats" else (_INT64, len(attr.ints))
    return None


def _filled(graph: Any, node: Any) -> tuple[int, int] | None:
    """(element type, elements) of what a ConstantOfShape makes, when its shape is written in the file."""
    dtype = _FLOAT32  # the operator's default
    for attr in node.proto.attribute:
        if attr.name == "value":
            dtype = attr.t.data_type
    shape = _static_values(graph, node.inputs[0]) if node.inputs else None
    if shape is None or any(d < 0 for d in shape):
        return None
    return dtype, math.prod(shape)


def _static_values(graph: Any, name: str) -> list[int] | None:
    """The integers of tensor ``name`` when the file holds them (an initializer or a Constant's value)."""
    if name in graph.initializers:
        arr = graph.initializer_array(name)
    else:
        t = graph.tensors.get(name)
        producer = graph.nodes[t.producer] if t is not None and t.producer is not None else None
        if producer is None or producer.op_type != "Constant" or producer.proto is None:
            return None
        from onnx import numpy_helper

        try:
            arr = next((numpy_helper.to_array(a.t) for a in producer.proto.attribute if a.name == "value"), None)
        except Exception:  # noqa: BLE001 - a malformed value: no count, as initializer_array
            return None
    if arr is None or arr.dtype.kind not in "iu" or arr.ndim > 1:
        return None
    return [int(v) for v in arr.reshape(-1)]


def _feeds_weight_op(graph: Any, node: Any) -> bool:
    t = graph.tensors.get(node.outputs[0])
    if t is None:
        return False
    nodes = graph.nodes
    return any(nodes[c].op_type in WEIGHT_OPS for c in t.consumers)


_SOURCE_WORDS = {"initializer": "in {} initializers", "Constant": "in {} Constant nodes",
                 "ConstantOfShape": "made by {} ConstantOfShape nodes"}


def sources_text(summary: dict[str, Any]) -> str:
    """Where a model summary's parameters are, in words: ``in 269 initializers``, or with several
    sources ``2,194 in 269 initializers + 25,608,360 made by 239 ConstantOfShape nodes`` ("" when
    none). Several sources are joined by `` + ``. Reads the JSON (``parameter_sources``), so reports written before it existed still read."""
    sources = summary.get("parameter_sources")
    if not isinstance(sources, dict):  # a summary from before the Constant counts: initializers only
        n = summary.get("initializers")
        return _SOURCE_WORDS["initializer"].format(n) if n else ""
    used = [(k, s) for k, s in sources.items() if k in _SOURCE_WORDS and s.get("tensors")]
    if len(used) == 1:
        return _SOURCE_WORDS[used[0][0]].format(f"{used[0][1]['tensors']:,}")
    return " + ".join(f"{s['parameters']:,} " + _SOURCE_WORDS[k].format(f"{s['tensors']:,}") for k, s in used)


def parameters_text(summary: dict[str, Any]) -> str:
    """A model summary's parameter count and where they are: ``1,171,616 in 129 Constant nodes``, or
    ``25,610,554 = 2,194 in 269 initializers + 25,608,360 made by 239 ConstantOfShape nodes``."""
    where = sources_text(summary)
    sep = " = " if " + " in where else " "
    return f"{summary.get('parameters') or 0:,}" + (f"{sep}{where}" if where else "")
