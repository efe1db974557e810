"""EngineInfo: what we know about one TensorRT engine, whatever file it was read from.

Plain dataclasses, no Qt. Times in milliseconds, memory in bytes.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import Any, ClassVar

import msgspec

from trtstudio.bigdocs.gcpause import gc_paused

SCHEMA = "trtstudio.layers/1"
SEVERITY_RANK = {"info": 1, "warning": 2, "error": 3}  # a finding's severity, ordered


class TensorDesc(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """One input or output of a layer (or of the engine).

    A msgspec Struct whose field names in JSON are the inspector's keys: the inspector reader's
    fast path (:mod:`trtstudio.engine.readers._fast`) decodes a layer's tensors straight into it.
    A tensor with any other key (other spellings some tools write: Type, DataType, Shape, Format)
    fails that decoding, and the document is read the general way (``_common.tensor_from_dict``).
    ``dtype`` and ``raw`` are derived, never read: their JSON names cannot occur in a document.
    """

    name: str = msgspec.field(name="Name")
    shape: list[int | str] | None = msgspec.field(default=None, name="Dimensions")
    dtype: str | None = msgspec.field(default=None, name="trtstudio:dtype")  # "FP32", "FP16", "INT8", ...
    # e.g. "Row major linear FP32", "Channel major FP16 format where channel % 8 == 0"
    format: str | None = msgspec.field(default=None, name="Format/Datatype")
    raw: str | None = msgspec.field(default=None, name="trtstudio:raw")  # the format/type string when parsed
    location: str | None = msgspec.field(default=None, name="Location")  # "Device" / "Host", as the source said

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "shape": self.shape, "dtype": self.dtype, "format": self.format}


@dataclass(slots=True)
class LayerTime:
    """A layer's profiled time. ``total_ms`` is the sum over every profiled run (trtexec's
    ``timeMs``, ``count`` runs): never a time per inference. :attr:`per_inference_ms` is the one
    rule every view uses for a layer's time per inference."""

    total_ms: float | None = None
    average_ms: float | None = None
    median_ms: float | None = None
    percent: float | None = None  # share of the engine's total, 0-100
    count: int | None = None

    @property
    def per_inference_ms(self) -> float | None:
        """The layer's time per inference: the median where the profile has one, else the average,
        else the total over the runs divided by their count; None where none of them is known. Never
        a total over runs."""
        for v in (self.median_ms, self.average_ms):
            if v is not None and v == v:
                return float(v)
        if self.total_ms is not None and self.total_ms == self.total_ms and self.count:
            return float(self.total_ms) / self.count
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total_ms,
            "average": self.average_ms,
            "median": self.median_ms,
            "percent": self.percent,
            "count": self.count,
        }


@dataclass(slots=True)
class Layer:
    """One engine layer. The readers build tens of thousands of these with positional arguments
    (``_common.layer_from_dict``): keep that call in step when adding or moving a field."""

    index: int
    name: str
    type: str = "Unknown"  # LayerType / "Reformat" / "PluginV2" / "Myelin" / ...
    parameter_type: str | None = None  # ParameterType in detailed JSON (Convolution, Reformat, Pooling...)
    inputs: list[TensorDesc] = field(default_factory=list)
    outputs: list[TensorDesc] = field(default_factory=list)
    tactic: str | None = None  # tactic name or kernel name
    tactic_value: str | None = None
    stream: int | None = None
    metadata: str | None = None  # raw Metadata string
    onnx_nodes: list[str] = field(default_factory=list)  # filled by engine.mapping
    mapping_confidence: float = 0.0  # 1.0 metadata, lower for name heuristics
    origin: str | None = None  # Reformat origin: REFORMAT / QDQ / ...
    time: LayerTime | None = None
    attrs: dict[str, Any] = field(default_factory=dict)  # everything else the source said

    def shallow_copy(self) -> Layer:
        """A copy sharing tensors, time and attrs (``onnx_nodes`` is a new list)."""
        return Layer(self.index, self.name, self.type, self.parameter_type, self.inputs, self.outputs, self.tactic,
                     self.tactic_value, self.stream, self.metadata, list(self.onnx_nodes), self.mapping_confidence,
                     self.origin, self.time, self.attrs)

    def own_attrs(self) -> dict[str, Any]:
        """``attrs`` for the keys trtstudio itself sets and reads (``reformat``, ``profile``,
        ``profile_only``): the same dict, but a :class:`SourcedLayer` does not parse its record
        for them."""
        return self.attrs

    def groups(self) -> Any:
        """``attrs.get("Groups")`` (a convolution's group count), which a :class:`SourcedLayer`
        whose reader decoded it answers without parsing its record."""
        return self.attrs.get("Groups")

    def constants(self) -> tuple[Any, Any]:
        """``(attrs["Weights"], attrs["Bias"])``, ``msgspec.UNSET`` for a key the layer has not:
        what a :class:`SourcedLayer` whose reader decoded them answers without parsing its record."""
        attrs = self.attrs
        return attrs.get("Weights", msgspec.UNSET), attrs.get("Bias", msgspec.UNSET)

    @property
    def precision(self) -> str | None:
        """The layer's compute precision: its first input's dtype (the input/weight type, as TREx reads
        it: a Q/DQ-fused INT8 convolution with FP16 output is INT8), else the first output's."""
        for t in self.inputs:
            if t.dtype:
                return t.dtype
        for t in self.outputs:
            if t.dtype:
                return t.dtype
        return None

    @property
    def precision_in(self) -> str | None:
        for t in self.inputs:  # a loop: next() over a generator costs twice as much, 100,000s of times
            if t.dtype:
                return t.dtype
        return None

    def precisions(self) -> tuple[str | None, str | None]:
        """``(precision_in, precision_out)`` in one call, for loops over 50,000s of layers."""
        pin = pout = None
        for t in self.inputs:
            if t.dtype:
                pin = t.dtype
                break
        for t in self.outputs:
            if t.dtype:
                pout = t.dtype
                break
        return pin, pout

    @property
    def precision_out(self) -> str | None:
        for t in self.outputs:
            if t.dtype:
                return t.dtype
        return None

    def to_json(self) -> dict[str, Any]:
        p_in, p_out = self.precision_in, self.precision_out
        return {
            "index": self.index,
            "name": self.name,
            "type": self.type,
            "parameter_type": self.parameter_type,
            "precision": p_in or p_out,  # Layer.precision: the compute precision, input first
            "precision_in": p_in,
            "precision_out": p_out,
            "inputs": [{"name": t.name, "shape": t.shape, "dtype": t.dtype, "format": t.format} for t in self.inputs],
            "outputs": [{"name": t.name, "shape": t.shape, "dtype": t.dtype, "format": t.format}
                        for t in self.outputs],
            "tactic": self.tactic,
            "tactic_value": self.tactic_value,
            "stream": self.stream,
            "onnx_nodes": self.onnx_nodes,
            "mapping_confidence": self.mapping_confidence,
            "origin": self.origin,
            "time_ms": self.time.to_json() if self.time else None,
        }


def layer_ms(lay: Layer) -> float | None:
    """A layer's time per inference in ms (:attr:`LayerTime.per_inference_ms`: median, else average,
    else total over its count of runs); None when it was not timed. The one helper every module
    reads a layer's time through."""
    t = lay.time
    return None if t is None else t.per_inference_ms


_LAYER_KEYS = Layer(0, "").to_json().keys()


_ATTRS_SLOT = Layer.__dict__["attrs"]  # the slot behind Layer.attrs (a member descriptor)
_LAYER_FIELDS = Layer.__dataclass_fields__.keys()  # type: ignore[attr-defined]


def own_attrs_of(layers: Iterable[Layer]) -> Iterator[dict[str, Any]]:
    """Each layer's :meth:`Layer.own_attrs`, read from the slot in C (no call per layer, and a
    SourcedLayer's record stays unparsed)."""
    return map(_ATTRS_SLOT.__get__, layers)


_PARSE_LOCK = threading.Lock()


class DocRecords:
    """The layer records of one JSON document, cut into each record's raw JSON when one is first
    asked for (``decode(text)``: the list of them). Until then only the document's text is held:
    the records of an engine whose ``attrs`` nobody reads are never cut (0.5 s at 300,000 layers)."""

    __slots__ = ("_decode", "_raws", "_text")

    def __init__(self, text: Any, decode: Callable[[Any], list[Any]] | None = None,
                 raws: list[Any] | None = None) -> None:
        """``raws``: the records cut already (then ``text`` and ``decode`` are not used)."""
        self._text: Any = text
        self._decode = decode
        self._raws: list[Any] | None = raws

    def get(self, i: int) -> Any:
        """Record ``i``'s raw JSON (called under the lock that SourcedLayer.attrs holds)."""
        if self._raws is None:
            assert self._decode is not None
            try:
                raws = self._decode(self._text)
            except RecursionError:
                # msgspec counts a document's nesting from the caller's stack depth: a document
                # read at a shallow depth may be asked for deep in a stack. Cut on a fresh stack.
                raws = _on_fresh_stack(lambda: self._decode(self._text))  # type: ignore[misc]
            self._raws = raws
            self._text = None
        return self._raws[i]


def _on_fresh_stack(fn: Callable[[], Any]) -> Any:
    """``fn()`` in a new thread (its stack starts empty), its result or exception here."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append((True, fn()))
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
            out.append((False, exc))

    t = threading.Thread(target=run, name="trtstudio-records")
    t.start()
    t.join()
    ok, value = out[0]
    if not ok:
        raise value
    return value


GROUPS_IN_ATTRS: Any = object()  # DocRecord.groups: the record's Groups is read from attrs


class DocRecord:
    """Record ``index`` of :class:`DocRecords`, and the record's ``Groups`` as its reader
    decoded it (``UNSET`` where it has none; :data:`GROUPS_IN_ATTRS` where the value could parse
    otherwise from the record): the one extra key the rules read. ``constants``: the record's
    ``Weights`` and ``Bias`` as its reader decoded them (``(weights, bias)``, each ``UNSET``
    where the record has none; None where it has neither), which the engine summary sums
    (:func:`trtstudio.engine.summary.layer_memory`) without parsing the record."""

    __slots__ = ("constants", "groups", "index", "records")

    def __init__(self, records: DocRecords, index: int, groups: Any, constants: tuple[Any, Any] | None = None) -> None:
        if not (groups is msgspec.UNSET or groups is None or (type(groups) is int and -(1 << 63) <= groups < 1 << 64)):
            groups = GROUPS_IN_ATTRS  # the record's parser (orjson) reads what is not an int of 64 bits its own way
        self.records, self.index, self.groups, self.constants = records, index, groups, constants


class _SharedRecord:
    """A record that shallow copies of a SourcedLayer share (with their attrs dict)."""

    __slots__ = ("parsed", "raw")

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.parsed = False


def _merge_record(d: dict[str, Any], raw: Any, known: frozenset[str]) -> None:
    """Put the keys of the JSON record ``raw`` that are not in ``known`` into ``d``, before what
    ``d`` holds already (the order an eager reader gives)."""
    from trtstudio.jsonio import loads

    if type(raw) is DocRecord:
        raw = raw.records.get(raw.index)
    rec = loads(bytes(raw))
    extra = {k: v for k, v in rec.items() if k not in known} if type(rec) is dict else {}
    if extra:
        own = dict(d)
        d.clear()
        d.update(extra)
        d.update(own)


class SourcedLayer(Layer):
    """A Layer that still holds its source record (raw JSON bytes): the record's keys beyond the
    ones Layer has fields for (a convolution's Kernel, Stride, Weights...) are parsed into
    ``attrs`` when ``attrs`` is first read. The inspector reader's fast path makes these: most
    layers' extra keys are never looked at, and parsing them took a third of the read.

    ``attrs`` then holds what an eager reader would have put there, in the same order (the
    record's keys first, then what the readers added). Copies and pickles are plain Layers."""

    __slots__ = ("source",)

    source: Any  # the record (a DocRecord; a _SharedRecord once copied), or None once parsed
    # the inspector record keys that Layer has fields for (the rest go to attrs)
    known: ClassVar[frozenset[str]] = frozenset(
        ("Name", "LayerType", "Inputs", "Outputs", "ParameterType", "TacticName", "TacticValue", "StreamId",
         "Metadata", "Origin")
    )

    @property  # type: ignore[override]
    def attrs(self) -> dict[str, Any]:
        d: dict[str, Any] = _ATTRS_SLOT.__get__(self)
        if self.source is not None:
            with _PARSE_LOCK:  # one parse, whichever thread or copy asks first; the others wait for it
                src = self.source
                if src is not None:
                    shared = src if type(src) is _SharedRecord else None
                    if shared is None or not shared.parsed:
                        _merge_record(d, shared.raw if shared is not None else src, self.known)
                        if shared is not None:
                            shared.parsed = True
                    self.source = None  # only now: a reader that sees None finds the dict complete
        return d

    @attrs.setter
    def attrs(self, value: dict[str, Any]) -> None:
        self.source = None
        _ATTRS_SLOT.__set__(self, value)

    def own_attrs(self) -> dict[str, Any]:
        return _ATTRS_SLOT.__get__(self)  # type: ignore[no-any-return]

    def groups(self) -> Any:
        src = self.source
        rec = src.raw if type(src) is _SharedRecord else src
        if type(rec) is DocRecord and rec.groups is not GROUPS_IN_ATTRS:
            return None if rec.groups is msgspec.UNSET else rec.groups
        return self.attrs.get("Groups")

    def constants(self) -> tuple[Any, Any]:
        src = self.source
        rec = src.raw if type(src) is _SharedRecord else src
        if type(rec) is DocRecord:
            return rec.constants if rec.constants is not None else (msgspec.UNSET, msgspec.UNSET)
        return Layer.constants(self)

    def shallow_copy(self) -> Layer:
        out = SourcedLayer(self.index, self.name, self.type, self.parameter_type, self.inputs, self.outputs,
                           self.tactic, self.tactic_value, self.stream, self.metadata, list(self.onnx_nodes),
                           self.mapping_confidence, self.origin, self.time, _ATTRS_SLOT.__get__(self))
        src = self.source
        if src is not None and type(src) is not _SharedRecord:
            src = self.source = _SharedRecord(src)  # the same dict: whichever copy parses first fills it for both
        out.source = src
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        return Layer, tuple(getattr(self, f) for f in _LAYER_FIELDS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layer):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _LAYER_FIELDS)

    __hash__ = None  # type: ignore[assignment]


_TIME = attrgetter("time")
_TIME_VALUES = attrgetter("total_ms", "average_ms", "median_ms", "percent", "count")
_CONFIDENCE = attrgetter("mapping_confidence")
_INPUTS = attrgetter("inputs")
_OUTPUTS = attrgetter("outputs")
_SHAPE = attrgetter("shape")
_PARAMETER_TYPE = attrgetter("parameter_type")
_ORIGIN = attrgetter("origin")
_NOT_FLOATS = frozenset((str, int, bool, type(None)))


def _non_finite_numbers(values: Callable[[], Iterable[Any]]) -> int:
    """NaN/infinite floats among ``values()`` (called again only where there are any): one sum in
    C says whether there can be any."""
    try:
        if math.isfinite(math.fsum(filter(None, values()))):  # None and zeros left out
            return 0
    except (TypeError, OverflowError, ValueError):  # text among them, a sum beyond a float, inf - inf
        pass
    return sum(1 for v in values() if type(v) is float and v - v != 0.0)


def count_non_finite_layers(layers: list[Layer], read_finite: bool = False) -> int:
    """NaN/infinite floats in the ``to_json`` of ``layers`` where :func:`count_non_finite_doc`
    looks for them (times, mapping confidence, tensor shapes, the raw parameter type and origin),
    read from the layers in C: 0.4 s for 300,000 layers, against 0.7 s walking their JSON.
    ``read_finite`` (:attr:`EngineInfo.finite`): only the mapping confidence, which trtstudio
    computes, is looked at; what the readers read is finite."""
    n = _non_finite_numbers(lambda: map(_CONFIDENCE, layers))
    if read_finite:
        return n
    n += _non_finite_numbers(lambda: chain.from_iterable(map(_TIME_VALUES, filter(None, map(_TIME, layers)))))

    def dims() -> Iterator[Any]:
        tensors = chain(chain.from_iterable(map(_INPUTS, layers)), chain.from_iterable(map(_OUTPUTS, layers)))
        return chain.from_iterable(filter(None, map(_SHAPE, tensors)))

    from trtstudio.jsonio import count_non_finite

    if not set(map(type, dims())) <= _NOT_FLOATS:
        n += sum(count_non_finite(v) for v in dims() if type(v) is not int and type(v) is not str)

    def raw() -> Iterator[Any]:  # as the source said: any JSON value
        return chain(map(_PARAMETER_TYPE, layers), map(_ORIGIN, layers))

    if not set(map(type, raw())) <= _NOT_FLOATS:
        n += sum(count_non_finite(v) for v in raw() if type(v) is not str and v is not None)
    return n


_FINDING_SCALARS = attrgetter("kind", "severity", "layer", "layer_index", "message", "hint")
_FINDING_NODES = attrgetter("nodes")


def count_non_finite_findings(findings: list[Finding]) -> int:
    """NaN/infinite floats in the ``to_json`` of ``findings`` (none, unless a rule put a number
    where text or an index belongs), found by the types of their fields in C."""
    types = set(map(type, chain.from_iterable(map(_FINDING_SCALARS, findings))))
    types.update(map(type, chain.from_iterable(map(_FINDING_NODES, findings))))
    if types <= _NOT_FLOATS:
        return 0
    from trtstudio.jsonio import count_non_finite

    return count_non_finite([f.to_json() for f in findings])


def count_non_finite_doc(doc: dict[str, Any]) -> int:
    """NaN/infinite floats in a ``trtstudio.layers/1`` document, as :func:`trtstudio.jsonio.count_non_finite`
    counts them, but walking each layer's known shape (times, confidence, tensor shapes, the raw
    parameter type and origin) instead of every value: 10x faster on 50,000 layers."""
    from trtstudio.jsonio import count_non_finite

    layers = doc.get("layers")
    if type(layers) is not list:
        return count_non_finite(doc)
    n = count_non_finite({k: v for k, v in doc.items() if k != "layers"})
    for lay in layers:
        if type(lay) is not dict or lay.keys() != _LAYER_KEYS:
            n += count_non_finite(lay)
            continue
        t = lay["time_ms"]
        if t is not None:
            for v in t.values():
                if type(v) is float and v - v != 0.0:
                    n += 1
        v = lay["mapping_confidence"]
        if type(v) is float and v - v != 0.0:
            n += 1
        for key in ("parameter_type", "origin"):  # as the source said: any JSON value
            v = lay[key]
            if v is not None and type(v) is not str:
                n += count_non_finite(v)
        for td in lay["inputs"] + lay["outputs"]:
            shape = td["shape"]
            if shape:
                for v in shape:
                    if type(v) is float:
                        n += v - v != 0.0
                    elif type(v) is not int and type(v) is not str:
                        n += count_non_finite(v)  # a list or object where a dimension belongs
    return n


@dataclass(slots=True)  # 100,000s in a big engine: 88 bytes each without a __dict__, not 352
class Finding:
    kind: str  # unsupported_node, plugin, reformat, precision_fallback, no_tensor_cores, ...
    severity: str  # "error" | "warning" | "info"
    message: str
    hint: str = ""
    layer: str | None = None  # layer name
    layer_index: int | None = None
    nodes: list[str] = field(default_factory=list)  # ONNX node names

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "layer": self.layer,
            "layer_index": self.layer_index,
            "nodes": self.nodes,
            "message": self.message,
            "hint": self.hint,
        }


@dataclass
class EngineInfo:
    layers: list[Layer] = field(default_factory=list)
    io_tensors: list[TensorDesc] = field(default_factory=list)  # engine inputs/outputs ("Bindings"/"I/O Tensors")
    sources: list[str] = field(default_factory=list)  # files this was read from
    formats: list[str] = field(default_factory=list)  # reader names used
    versions: dict[str, str] = field(default_factory=dict)  # {"tensorrt": "10.4.0", ...}
    device: dict[str, Any] = field(default_factory=dict)  # name, compute capability, memory...
    memory: dict[str, int] = field(default_factory=dict)  # bytes: device_memory, engine_size, weights...
    build_settings: dict[str, Any] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)  # from trtexec summaries/exportTimes
    # per-inference series in ms, in run order, from --exportTimes: "latency" (host latency) and
    # "compute" (GPU compute); what a diff resamples for its interval (not in to_json)
    samples_ms: dict[str, list[float]] = field(default_factory=dict, compare=False, repr=False)
    # kernels per NVTX range from an Nsight Systems export (engine.nsys.KernelTable.to_json), or {}
    kernels: dict[str, Any] = field(default_factory=dict, repr=False)
    detailed: bool = True  # False for LAYER_NAMES_ONLY layer info
    findings: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # reader warnings for the user
    log: list[str] = field(default_factory=list)  # raw log lines when read from a log
    # per-layer times by layer name, from a profile (--exportProfile): no Layer objects, which
    # load_engine makes only for an engine known from its profile alone (see _common.layers_from_times)
    times: list[tuple[str, LayerTime]] = field(default_factory=list)
    # True where every number the readers put in the layers (times, tensor shapes, raw parameter
    # types and origins) came from a msgspec decode, which refuses NaN and numbers beyond a float:
    # count_non_finite_layers need not look at them. Not compared: a fact about the reading.
    finite: bool = field(default=False, compare=False, repr=False)

    @property
    def total_time_ms(self) -> float | None:
        """The engine's layer time per inference: the sum of its layers'
        :attr:`LayerTime.per_inference_ms` (None without a profile). Never a total over the
        profile's runs."""
        times = [t for lay in self.layers if lay.time and (t := lay.time.per_inference_ms) is not None]
        return float(sum(times)) if times else None

    def to_json(self) -> dict[str, Any]:
        # Millions of small dicts and no cycles: the cyclic collector's passes over them would cost
        # more than building them (2.5 s against 0.5 s at 50,000 layers).
        with gc_paused(freeze=False):
            return self._to_json()

    def _to_json(self) -> dict[str, Any]:
        return {key: value() for key, value in self.json_parts()}

    def json_pieces(self, size: int = 4096) -> list[tuple[str, Any]]:
        """:meth:`json_parts` with the layers and the findings as :class:`trtstudio.bigdocs.forked.Chunked`
        arrays of ``size`` items a piece (for ``bigdocs.forked.ForkedHead``), the other values made."""
        from trtstudio.bigdocs.forked import Chunked

        def chunked(items: list[Any], count: Callable[[], int]) -> Chunked:
            return Chunked(lambda: ([x.to_json() for x in items[i:i + size]] for i in range(0, len(items), size)),
                           count=count)

        layers, findings, finite = self.layers, self.findings, self.finite
        arrays = {"layers": chunked(layers, lambda: count_non_finite_layers(layers, read_finite=finite)),
                  "findings": chunked(findings, lambda: count_non_finite_findings(findings))}
        return [(key, arrays[key] if key in arrays else value()) for key, value in self.json_parts()]

    def json_parts(self) -> list[tuple[str, Callable[[], Any]]]:
        """The document's keys in order, each with the function that makes its value (the
        ``trtstudio layers`` command encodes the first ones in another process)."""
        return [
            ("schema", lambda: SCHEMA),
            ("source", lambda: self.sources),
            ("formats", lambda: self.formats),
            ("engine", lambda: {
                "versions": self.versions,
                "device": self.device,
                "memory": self.memory,
                "build_settings": self.build_settings,
                "latency_ms": self.latency_ms,
                "detailed": self.detailed,
                "io_tensors": [t.to_json() for t in self.io_tensors],
            }),
            ("layers", lambda: [lay.to_json() for lay in self.layers]),
            ("findings", lambda: [f.to_json() for f in self.findings]),
            ("warnings", lambda: self.warnings),
            *([("kernels", lambda: self.kernels)] if self.kernels else []),
        ]
