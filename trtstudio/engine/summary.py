"""The engine summary TREx gave (``trex.summary_dict``): I/O tensors, layers, average time, weights
and activations, computed from the layer information.

:func:`layer_memory` sums, as TREx's ``EnginePlan`` does (``trex/layer.py``, ``engine_plan.py``),
over the layers that are neither ``Constant`` nor ``NoOp``:

``layer_weights``
    each layer's ``Weights`` count times the size of its type (``Int8`` 1, ``Half`` 2, ``Float`` 4 ...);
``layer_bias``
    the same for ``Bias``, counted apart (TREx leaves it out of its Weights figure);
``layer_activations``
    each layer's input plus output tensor sizes (elements times the size of the tensor's type): a
    tensor counts once for the layer that writes it and once for each that reads it, so this is
    the traffic the layers' I/O amounts to, not a peak of device memory;
``layer_constants``
    the weights of ``Constant`` layers (TREx leaves them out; given apart here).

Bytes, each key only where the layers record something to sum (a names-only listing, or a
TensorRT 10 engine whose Myelin regions list no weights, gives no key rather than a zero). A tensor
with a dynamic (-1) or symbolic dimension, or no known type, adds nothing (TREx sized an unknown
format at 0 bytes too). These keys sit beside the ones the readers fill from TensorRT's own
figures (``weights`` and ``activation`` from trtexec's "Total Weights/Activation Memory",
``device_memory``, ``engine_size``): those are never replaced. The analysis adds them
(``engine.analysis.diagnosed``, so every ``analyze`` caller: ``layers``, reports, the window's
second stage), not ``load_engine``: 0.4 s at 300,000 layers is the diagnosis's to spend, not the
table's first showing.

:func:`fill_io_tensors` gives the engine's I/O tensors that the file named only (TensorRT 8's
``Bindings`` is a list of names) the shape, type and format of the layer tensor of that name;
:func:`summary` is the TREx summary as numbers and texts.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from itertools import chain, compress, repeat
from operator import attrgetter, methodcaller
from typing import Any

import msgspec

from trtstudio.engine.model import DocRecord, EngineInfo, Layer, SourcedLayer, TensorDesc, own_attrs_of

MEMORY_KEYS = ("layer_weights", "layer_bias", "layer_activations", "layer_constants")
MIB = 1024 * 1024

# bytes per element of a tensor dtype (Layer tensors' normalised dtypes)
DTYPE_BYTES: dict[str, float] = {
    "FP64": 8, "INT64": 8, "FP32": 4, "INT32": 4, "FP16": 2, "BF16": 2, "INT8": 1, "UINT8": 1, "FP8": 1,
    "BOOL": 1, "INT4": 0.5, "FP4": 0.5,
}
# bytes per element of a Weights/Bias "Type" as the inspector writes it (TREx's table and its
# older spellings), lower-cased
WEIGHT_TYPE_BYTES: dict[str, float] = {
    "int8": 1, "half": 2, "float": 4, "int32": 4, "fp16": 2, "fp32": 4, "bfloat16": 2, "bf16": 2,
    "fp8": 1, "uint8": 1, "bool": 1, "int64": 8, "double": 8, "int4": 0.5, "fp4": 0.5,
}
_SKIPPED = frozenset(("Constant", "NoOp"))


def _kind(lay: Layer) -> str:
    """TREx's layer type: the ParameterType, else the LayerType."""
    ptype = lay.parameter_type
    return ptype if type(ptype) is str and ptype else lay.type


def tensor_bytes(t: TensorDesc) -> float | None:
    """Elements times the size of the tensor's type; None for an unknown type or a shape that is
    not all known, non-negative integers."""
    size = DTYPE_BYTES.get(t.dtype or "")
    shape = t.shape
    if size is None or shape is None:
        return None
    n = 1
    for d in shape:
        if type(d) is not int or d < 0:
            return None
        n *= d
    return n * size if n <= _MOST_ELEMENTS else None  # beyond: a damaged shape, not a tensor


_MOST_ELEMENTS = 1 << 60


def _constant_bytes(value: Any) -> float | None:
    """A ``Weights``/``Bias`` record ``{"Type": "Int8", "Count": 864}`` in bytes (None otherwise)."""
    if not isinstance(value, dict):
        return None
    count, typ = value.get("Count"), value.get("Type")
    if type(count) is not int or not 0 <= count <= _MOST_ELEMENTS or not isinstance(typ, str):
        return None
    size = WEIGHT_TYPE_BYTES.get(typ.lower())
    return None if size is None else count * size


def layer_memory(layers: list[Layer]) -> dict[str, int]:
    """The :data:`MEMORY_KEYS` of ``layers`` (see the module docstring), in bytes. A layer's
    ``Weights``/``Bias`` come from :meth:`Layer.constants` (the fast reader decoded them: no record
    is parsed); the tensors are sized by numpy, :data:`STEP` layers at a time (each C loop short:
    the window's thread gets the GIL between two), 0.1 s at 50,000 layers."""
    sums: dict[str, float] = {}
    for a in range(0, len(layers), STEP):
        _add_step(layers[a:a + STEP], sums)
    return {k: int(math.ceil(sums[k])) for k in MEMORY_KEYS if k in sums}


def _add_step(step: list[Layer], sums: dict[str, float]) -> None:
    """Add the sums of the layers ``step`` to ``sums``."""
    types = list(map(_TYPE, step))
    ptypes = list(map(_PARAMETER_TYPE, step))
    skipped = not (_SKIPPED.isdisjoint(types) and _SKIPPED.isdisjoint(filter(_is_str, ptypes)))
    unset = msgspec.UNSET
    for i, (w, b) in _constants(step):
        ptype = ptypes[i]
        kind = ptype if type(ptype) is str and ptype else types[i]
        if kind == "NoOp":
            continue
        wb = None if w is unset else _constant_bytes(w)
        if wb is not None:
            wkey = "layer_constants" if kind == "Constant" else "layer_weights"
            sums[wkey] = sums.get(wkey, 0.0) + wb
        bb = None if b is unset or kind == "Constant" else _constant_bytes(b)
        if bb is not None:
            sums["layer_bias"] = sums.get("layer_bias", 0.0) + bb
    kept = [lay for lay in step if _kind(lay) not in _SKIPPED] if skipped else step
    act = activation_bytes(chain.from_iterable(chain(map(_INPUTS, kept), map(_OUTPUTS, kept))))
    if act is not None:
        sums["layer_activations"] = sums.get("layer_activations", 0.0) + act


def _constants(step: list[Layer]) -> list[tuple[int, tuple[Any, Any]]]:
    """(position in ``step``, :meth:`Layer.constants`) of the layers that have a ``Weights`` or
    ``Bias``, found in C where it can: the records a fast reader decoded (``DocRecord.constants``),
    the attrs of plain layers; a layer of another kind is asked."""
    kinds = set(map(type, step))
    if kinds == {SourcedLayer}:
        sources = list(map(_SOURCE, step))
        if set(map(type, sources)) == {DocRecord}:
            consts = list(map(_CONSTANTS, sources))  # None where the record has neither
            return [(i, consts[i]) for i in compress(range(len(step)), consts)]
    elif kinds == {Layer}:
        attrs = list(own_attrs_of(step))
        has = list(map(operator.or_, map(operator.contains, attrs, repeat("Weights")),
                       map(operator.contains, attrs, repeat("Bias"))))
        return [(i, step[i].constants()) for i in compress(range(len(step)), has)]
    unset = msgspec.UNSET
    return [(i, c) for i, c in enumerate(map(methodcaller("constants"), step)) if c[0] is not unset or c[1] is not unset]


def _is_str(x: Any) -> bool:
    return type(x) is str


def activation_bytes(tensors: Iterable[TensorDesc]) -> float | None:
    """The summed :func:`tensor_bytes` of ``tensors`` (those that have a size); None when none has.
    The dimensions of every shape go to numpy in one pass (each shape's product and least
    dimension by ``reduceat``); where one is not a number (None, a symbolic name), each tensor is
    sized on its own."""
    import numpy as np

    ts = list(tensors)
    if not ts:
        return None
    shapes = list(map(_SHAPE, ts))
    try:
        dims = np.fromiter(chain(chain.from_iterable(shapes), (1.0,)), dtype=float)  # 1.0: reduceat's end
        lens = np.fromiter(map(len, shapes), dtype=np.int64, count=len(ts))
    except (TypeError, ValueError, OverflowError):  # a shape unknown (None), symbolic or not a list
        sized = [x for x in map(tensor_bytes, ts) if x is not None]
        return float(sum(sized)) if sized else None
    starts = np.zeros(len(ts), dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    with np.errstate(over="ignore", invalid="ignore"):
        count = np.multiply.reduceat(dims, starts)
        lowest = np.minimum.reduceat(dims, starts)
    scalar = lens == 0  # reduceat gives the next dimension for an empty run: a scalar is one element
    count[scalar] = 1.0
    lowest[scalar] = 0.0
    size = np.fromiter(map(_DTYPE_BYTES_GET, map(_DTYPE, ts), repeat(math.nan)), dtype=float, count=len(ts))
    ok = (lowest >= 0) & ~np.isnan(size) & (count <= _MOST_ELEMENTS)
    return float((count[ok] * size[ok]).sum()) if ok.any() else None


STEP = 4_096
_INPUTS, _OUTPUTS, _SHAPE, _DTYPE = attrgetter("inputs"), attrgetter("outputs"), attrgetter("shape"), attrgetter("dtype")
_TYPE, _PARAMETER_TYPE, _SOURCE, _CONSTANTS = (attrgetter("type"), attrgetter("parameter_type"), attrgetter("source"),
                                               attrgetter("constants"))
_NAME = attrgetter("name")
_DTYPE_BYTES_GET = DTYPE_BYTES.get


def add_layer_memory(engine: EngineInfo) -> EngineInfo:
    """``engine`` with :func:`layer_memory` in a new ``memory`` dict (the keys the readers filled
    kept as they are); the same object, changed in place."""
    if engine.detailed and engine.layers:
        engine.memory = {**layer_memory(engine.layers), **engine.memory}
    return engine


def fill_io_tensors(engine: EngineInfo) -> None:
    """Give each I/O tensor without a shape, type or format those of the layer tensor of its name
    (the first layer reading it, else the last writing it): TensorRT 8's ``Bindings`` name them only.
    New TensorDesc objects: the readers' are not changed. The first and last :data:`NEAR_IO` layers
    are searched first (an engine's inputs are read at its start, its outputs written at its end)."""
    missing = [i for i, t in enumerate(engine.io_tensors) if t.shape is None or t.dtype is None or t.format is None]
    if not missing or not engine.layers:
        return
    wanted = {engine.io_tensors[i].name for i in missing}
    layers = engine.layers
    found: dict[str, TensorDesc] = {}
    for head, tail in ((layers[:NEAR_IO], layers[-NEAR_IO:]), (layers, layers)):
        for lay in head:
            for t in lay.inputs:
                if t.name in wanted:
                    found.setdefault(t.name, t)
        for lay in reversed(tail):
            for t in lay.outputs:
                if t.name in wanted:
                    found.setdefault(t.name, t)
        if len(found) == len(wanted) or len(layers) <= NEAR_IO:
            break
    io = list(engine.io_tensors)
    for i in missing:
        src = found.get(io[i].name)
        if src is not None:
            t = io[i]
            io[i] = msgspec.structs.replace(t, shape=t.shape if t.shape is not None else src.shape,
                            dtype=t.dtype or src.dtype, format=t.format or src.format, raw=t.raw or src.raw,
                            location=t.location or src.location)
    engine.io_tensors = io


NEAR_IO = 64


def io_roles(engine: EngineInfo) -> dict[str, str]:
    """Each I/O tensor's ``"input"`` or ``"output"``: what the file said (TensorRT 11's IOMode),
    else whether a layer writes the tensor (an output, whatever reads it after) or only reads it
    (an input); tensors no layer names are left out."""
    roles: dict[str, str] = {}
    for t in engine.io_tensors:
        if t.raw in ("Input", "Output"):
            roles[t.name] = t.raw.lower()
    rest = {t.name for t in engine.io_tensors} - roles.keys()
    layers = engine.layers
    # No layer writes an engine input; a layer writes each output (which later layers may read
    # too). Layers come in execution order, so the first and last NEAR_IO layers are asked first:
    # a tensor written there is an output, one read there and written by none of the layers
    # before it an input; every layer for what they leave.
    for head, tail in ((layers[:NEAR_IO], layers[-NEAR_IO:]), (layers, layers)):
        if not rest:
            break
        written_tail = set(map(_NAME, chain.from_iterable(map(_OUTPUTS, tail))))
        for name in rest & written_tail:
            roles[name] = "output"
        rest -= roles.keys()
        written_head = written_tail if head is tail else set(map(_NAME, chain.from_iterable(map(_OUTPUTS, head))))
        for name in rest & (set(map(_NAME, chain.from_iterable(map(_INPUTS, head)))) - written_head):
            roles[name] = "input"
        rest -= roles.keys()
    return roles


def tensor_text(t: TensorDesc) -> str:
    """``input1: [1, 3, 224, 224]xFP32 NCHW`` as TREx prints a binding (TREx's short format
    names where it has one: the layer table's :func:`trtstudio.engine.table.format_text` otherwise)."""
    shape = "?" if t.shape is None else "[" + ", ".join(str(d) for d in t.shape) + "]"
    return f"{t.name}: {shape}x{short_format(t)}"


# TREx's short names of TensorRT's format texts (trex/activations.py, the common ones)
_SHORT_FORMATS = {
    "row major linear fp32": "FP32 NCHW", "row major linear fp16 format": "FP16 NCHW",
    "row major linear int32": "INT32 NCHW", "row major int8 format": "Int8 NCHW",
    "row major linear bfloat16 format": "BF16 NCHW", "row major linear fp8 format": "FP8 NCHW",
    "row major linear int64 format": "Int64 NCHW", "row major linear uint8 format": "UInt8 NCHW",
    "row major linear bool": "Bool", "channel major fp32 format": "FP32 NHWC",
    "channel major fp16 format": "FP16 NHWC", "channel major int8 format": "Int8 NHWC",
    "four wide channel vectorized row major int8 format": "Int8 NC/4HW4",
    "thirty-two wide channel vectorized row major int8 format": "Int8 NC/32HW32",
    "thirty-two wide channel vectorized row major fp16 format": "FP16 NC/32HW32",
    "thirty-two wide channel vectorized row major fp32 format": "FP32 NC/32HW32",
    "two wide channel vectorized row major fp16 format": "FP16 NC/2HW2",
    "sixteen wide channel vectorized row major fp16 format": "FP16 NC16HW",
    "channel major fp16 format where channel % 8 == 0": "FP16 NHWC8",
    "channel major fp16 format where channel % 4 == 0": "FP16 NHWC4",
    "channel major fp32 format where channel % 4 == 0": "FP32 NHWC4",
}


def short_format(t: TensorDesc) -> str:
    """TREx's short name of the tensor's format (``FP32 NCHW``), else the layer table's."""
    fmt = (t.format or "").replace(".", "").strip().lower()
    short = _SHORT_FORMATS.get(fmt)
    if short is not None:
        return short
    from trtstudio.engine.table import format_text  # numpy: only for formats TREx had no name for

    return format_text(t)


def _kept(layers: list[Layer]) -> list[Layer]:
    """``layers`` without the ``Constant``/``NoOp`` ones TREx drops (found in C where none is)."""
    if _SKIPPED.isdisjoint(map(_TYPE, layers)) and _SKIPPED.isdisjoint(filter(_is_str, map(_PARAMETER_TYPE, layers))):
        return layers
    return [lay for lay in layers if _kind(lay) not in _SKIPPED]


def average_time_ms(engine: EngineInfo, kept: list[Layer] | None = None) -> float | None:
    """The sum of the layers' average times (TREx's "Average time"; ``NoOp``/``Constant``
    layers, which TREx drops, take no time; ``kept``: the others, where known); None without
    per-layer averages."""
    times = filter(None, map(_TIME, _kept(engine.layers) if kept is None else kept))
    avgs = [v for v in map(_AVERAGE, times) if v is not None]
    return float(sum(avgs)) if avgs else None


_TIME, _AVERAGE = attrgetter("time"), attrgetter("average_ms")


def summary(engine: EngineInfo) -> dict[str, Any]:
    """TREx's engine summary as numbers: ``inputs``/``outputs`` (TensorDesc JSON with ``text``),
    ``layers`` (without the ``Constant``/``NoOp`` layers TREx drops; ``layers_all`` with them),
    ``average_time_ms``, and the :data:`MEMORY_KEYS` of ``engine.memory`` (bytes; absent when not
    known) with the TREx texts ``weights_text``/``activations_text`` (MiB to one decimal, "MB" as TREx
    wrote it)."""
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    roles = io_roles(engine)
    for t in engine.io_tensors:
        role = roles.get(t.name)
        entry = {**t.to_json(), "text": tensor_text(t)}
        (outputs if role == "output" else inputs).append(entry)
    kept = _kept(engine.layers)
    out: dict[str, Any] = {
        "inputs": inputs,
        "outputs": outputs,
        "layers": len(kept),
        "layers_all": len(engine.layers),
        "average_time_ms": average_time_ms(engine, kept),
    }
    mem = engine.memory
    for key in MEMORY_KEYS:
        if key in mem:
            out[key] = mem[key]
    if "layer_weights" in mem:
        out["weights_text"] = f"{mem['layer_weights'] / MIB:.1f} MB"
    if "layer_activations" in mem:
        out["activations_text"] = f"{mem['layer_activations'] / MIB:.1f} MB"
    return out


def summary_lines(engine: EngineInfo) -> list[str]:
    """:func:`summary` as the lines ``trtstudio layers`` prints (TREx's keys and texts)."""
    s = summary(engine)
    lines = []
    for key, title in (("inputs", "inputs"), ("outputs", "outputs")):
        if s[key]:
            lines.append(f"{title}: " + "; ".join(e["text"] for e in s[key]))
    parts = [f"{s['layers']} layers" + (f" ({s['layers_all']} with Constant/NoOp)" if s["layers_all"] != s["layers"] else "")]
    if s["average_time_ms"] is not None:
        parts.append(f"average time {s['average_time_ms']:.3f} ms")
    if "weights_text" in s:
        parts.append(f"weights {s['weights_text']}" + (
            f" (+ bias {s['layer_bias'] / MIB:.2f} MB)" if s.get("layer_bias") else ""))
    if "activations_text" in s:
        parts.append(f"activations {s['activations_text']} (layer inputs + outputs)")
    lines.append("engine: " + ", ".join(parts))
    return lines


def mapping_text(engine: EngineInfo, mapping: Any) -> str:
    """How the layers of ``engine`` (mapped by ``mapping``, a MappingResult) map to the model's
    nodes; where too few map, that the model is probably another (and not that its nodes without
    a layer were folded away)."""
    from trtstudio.engine.mapping import other_model

    mapped = len(engine.layers) - len(mapping.unmapped_layers)
    head = f"mapped {mapped} of {len(engine.layers)} layers to ONNX nodes"
    other = other_model(engine)
    if other is not None:
        return (f"{head} ({other[0]} of {other[1]} not counting reformats): the model is probably not the one "
                "the engine was built from")
    return f"{head}; {len(mapping.unmapped_nodes)} nodes have no layer (folded or fused away)"
