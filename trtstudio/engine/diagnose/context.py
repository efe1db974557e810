"""What every rule reads: :class:`Ctx`, the engine's layers sorted in one pass into the lists the
rules walk (reformats, plugins, convolutions/GEMMs, regions, Q/DQ, compute, shape ops) with the
precisions they compare, and the engine's tensor graph (producers, consumers, its boundary); the
layer's time share (:func:`share_of`) and :func:`finding`, which every rule words its findings with."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, compress
from operator import attrgetter
from typing import Any

from trtstudio.engine.diagnose.classify import is_conv, is_gemm
from trtstudio.engine.model import EngineInfo, Finding, Layer, own_attrs_of

SHAPE_TYPES = frozenset(("Shape", "NoOp", "Constant", "Shuffle", "shape_call", "Reshape", "Identity"))
SHAPE_NAME_MARKERS = ("[Shuffle]", "[Constant]", "[Shape]", "[Identity]")
_SHAPE_OPS = frozenset(("Shape", "Reshape", "Constant", "ConstantOfShape", "Squeeze", "Unsqueeze", "Flatten",
                        "Identity"))
_CHUNK = 4096  # layers per C call where tensors are gathered
_NEAR = 4  # layers on either side that Ctx._touched looks at before the sets of all tensors
_NAME, _INPUTS, _OUTPUTS, _OP_TYPE = attrgetter("name"), attrgetter("inputs"), attrgetter("outputs"), attrgetter("op_type")
_QDQ_OPS = frozenset(("QuantizeLinear", "DequantizeLinear"))
_QDQ_OR_SHAPE_OPS = _QDQ_OPS | _SHAPE_OPS
_NOT_COMPUTE = SHAPE_TYPES | frozenset(("Reformat", "Myelin", "DLA", "DLATransfer", "TrainStation", "Unknown",
                                        "Slice", "Padding", "Concatenation", "Gather", "Cast"))


REFORMAT_WARN_SHARE = 2.0  # a reformat or Q/DQ layer holding this share of the time is a warning


def share_of(lay: Layer, total: float | None) -> float | None:
    """The layer's time share in percent: the profile's ``percent``, else its time over ``total``."""
    if lay.time is None:
        return None
    if lay.time.percent is not None:
        return lay.time.percent
    ms = lay.time.per_inference_ms
    if total and ms is not None:
        return 100.0 * ms / total
    return None


def share_text(share: float | None) -> str:
    """`` (12.3 % of the time)``, or nothing without a share."""
    return f" ({share:.1f} % of the time)" if share is not None else ""


def finding(kind: str, severity: str, lay: Layer | None, message: str, hint: str,
            nodes: Sequence[str] | None = None) -> Finding:
    """A finding about ``lay`` (its name, index and ONNX nodes unless ``nodes`` is given), or about
    the engine when ``lay`` is None."""
    return Finding(
        kind=kind,
        severity=severity,
        message=message,
        hint=hint,
        layer=lay.name if lay is not None else None,
        layer_index=lay.index if lay is not None else None,
        nodes=list(nodes if nodes is not None else (lay.onnx_nodes if lay is not None else [])),
    )


def graph_nodes(g: Any) -> tuple[set[str], set[str]]:
    """The names of the graph's Q/DQ nodes and of its shape-op nodes, the ones :class:`Ctx` asks for."""
    qdq_nodes: set[str] = set()
    shape_nodes: set[str] = set()
    # the graph may have 100,000s of nodes: picked in C (compress, map), the few the rules need
    for n in compress(g.nodes, map(_QDQ_OR_SHAPE_OPS.__contains__, map(_OP_TYPE, g.nodes))):
        (qdq_nodes if n.op_type in _QDQ_OPS else shape_nodes).add(n.name)
    return qdq_nodes, shape_nodes


class Ctx:
    """The engine as the rules read it (see the module docstring); made once per :func:`diagnose`."""

    def __init__(self, engine: EngineInfo, qdq_nodes: set[str], shape_nodes: set[str]) -> None:
        """``qdq_nodes``, ``shape_nodes``: names of the graph's Q/DQ and shape-op nodes."""
        self.engine = engine
        self.total = engine.total_time_ms
        self.qdq_nodes = qdq_nodes
        self.shape_nodes = shape_nodes
        self.qdq_ids: set[int] = set()
        self._compute_ids: set[int] = set()
        self.io = {t.name for t in engine.io_tensors}
        self._producer: dict[str, Layer] | None = None  # made when a rule first walks the engine
        self._reformat_ids: set[int] | None = None
        self._shape_ids: set[int] | None = None
        self._consumers: dict[str, list[Layer]] | None = None
        self._written_read: tuple[set[str], set[str]] | None = None  # tensor names some layer writes / reads
        self.expected: list[Finding] = []  # info findings of what is expected where it is: by_time leaves them info
        # One classification pass (_classify); the rules then walk only the layers they are about.
        self.reformats: list[Layer] = []
        self.plugins: list[Layer] = []
        self.conv_gemm: list[Layer] = []
        self.region_layers: list[Layer] = []
        self.qdq: list[Layer] = []
        self.compute: list[Layer] = []
        self.shape_ops: list[Layer] = []
        # precision_in and precision_out of each layer of compute, conv_gemm and qdq, in their
        # order: read once here, not by each rule (a million property calls at 300,000 layers)
        self.compute_in: list[str | None] = []
        self.compute_out: list[str | None] = []
        self.conv_gemm_in: list[str | None] = []
        self.conv_gemm_out: list[str | None] = []
        self.qdq_in: list[str | None] = []
        self.qdq_out: list[str | None] = []
        self._classify(engine)

    def _classify(self, engine: EngineInfo) -> None:
        """Sort the engine's layers into the lists of __init__, in one pass over them."""
        reformats, plugins, conv_gemm, region_layers = self.reformats, self.plugins, self.conv_gemm, self.region_layers
        qdq_layers, compute, shape_ops = self.qdq, self.compute, self.shape_ops
        compute_in, compute_out = self.compute_in, self.compute_out
        conv_gemm_in, conv_gemm_out = self.conv_gemm_in, self.conv_gemm_out
        qdq_in, qdq_out = self.qdq_in, self.qdq_out
        qdq_ids, compute_ids = self.qdq_ids, self._compute_ids
        qdq_nodes, shape_nodes = self.qdq_nodes, self.shape_nodes
        # what the type alone says, per (type, parameter_type): a few dozen pairs in any engine
        by_type: dict[tuple[str, str | None], tuple[bool, bool, bool, bool, bool]] = {}
        # the checks of is_reformat, is_plugin, ... written out: 50,000s of layers
        for lay, own in zip(engine.layers, own_attrs_of(engine.layers), strict=True):
            ltype, name = lay.type, lay.name
            ptype = lay.parameter_type
            key = (ltype, ptype if type(ptype) is str else None)  # the rules match strings only
            cls = by_type.get(key)
            if cls is None:
                cls = by_type[key] = (ltype == "Reformat", ltype.startswith("Plugin"), is_conv(lay) or is_gemm(lay),
                                      ltype in _NOT_COMPUTE, ltype in SHAPE_TYPES)
            refm = cls[0] or (bool(own.get("reformat")) if own else False) or (
                name.startswith("Reformatting CopyNode") or " reformatter " in name)
            plug = cg = False
            if refm:
                reformats.append(lay)
            elif cls[1] or "[PluginV2" in name or "[PluginV3" in name:
                plug = True
                plugins.append(lay)
            elif cls[2]:
                cg = True
            if "{" in name or ltype == "DLA":
                region_layers.append(lay)
            nodes = lay.onnx_nodes
            # a quantize/dequantize that runs as its own layer
            if lay.origin == "QDQ" or ltype == "Quantize" or ltype == "Dequantize":
                qdq = True
            elif nodes:
                qdq = nodes[0] in qdq_nodes and (len(nodes) == 1 or all(n in qdq_nodes for n in nodes))
            elif " + " not in name and (ltype == "Unknown" or ltype == "Scale"):
                qdq = name.rsplit("/", 1)[-1].startswith(("QuantizeLinear", "DequantizeLinear"))
            else:
                qdq = False
            comp = not (refm or plug or qdq or cls[3])
            if cg or qdq or comp:
                pin, pout = lay.precisions()
                if cg:
                    conv_gemm.append(lay)
                    conv_gemm_in.append(pin)
                    conv_gemm_out.append(pout)
                if qdq:
                    qdq_layers.append(lay)
                    qdq_in.append(pin)
                    qdq_out.append(pout)
                    qdq_ids.add(id(lay))
                if comp and (pin is not None or pout is not None):  # Layer.precision is not None
                    compute.append(lay)
                    compute_in.append(pin)
                    compute_out.append(pout)
                    compute_ids.add(id(lay))
            # shape and copy overhead: by type, by TensorRT's "[Shuffle]"-style names, or mapping to shape ops only
            if cls[4] or (
                name.endswith("]") and "] " not in name and " + " not in name
                and any(m in name for m in SHAPE_NAME_MARKERS)
            ) or (nodes and nodes[0] in shape_nodes and (len(nodes) == 1 or all(n in shape_nodes for n in nodes))):
                shape_ops.append(lay)

    @property
    def reformat_ids(self) -> set[int]:
        """ids of the engine's reformat layers (those :func:`is_reformat` says are)."""
        if self._reformat_ids is None:
            self._reformat_ids = set(map(id, self.reformats))
        return self._reformat_ids

    @property
    def producer(self) -> dict[str, Layer]:
        """Tensor name -> the first layer writing it."""
        if self._producer is None:
            producer: dict[str, Layer] = {}
            setdefault = producer.setdefault
            for lay in self.engine.layers:
                for t in lay.outputs:
                    setdefault(t.name, lay)
            self._producer = producer
        return self._producer

    @property
    def consumers(self) -> dict[str, list[Layer]]:
        """Tensor name -> the layers reading it, in engine order."""
        if self._consumers is None:
            consumers: dict[str, list[Layer]] = {}
            get = consumers.get
            for lay in self.engine.layers:
                for t in lay.inputs:
                    lst = get(t.name)
                    if lst is None:
                        consumers[t.name] = [lay]
                    else:
                        lst.append(lay)
            self._consumers = consumers
        return self._consumers

    def at_boundary(self, lay: Layer) -> bool:
        """A layer reading an engine input or writing an engine output: a tensor of the engine's
        I/O, or one no layer writes (an input) or reads (an output)."""
        io = self.io
        for t in lay.inputs:
            if t.name in io or not self._touched(t.name, lay, False):
                return True
        for t in lay.outputs:
            if t.name in io or not self._touched(t.name, lay, True):
                return True
        return False

    def _touched(self, name: str, lay: Layer, read: bool) -> bool:
        """Whether some layer reads (``read``) or writes ``name``. The layers next to ``lay`` are
        asked first: a reformat's tensors almost always come from the layer before it and go to the
        one after; only a tensor they do not have costs the sets of every layer's tensors."""
        layers = self.engine.layers
        i = lay.index
        n = len(layers)
        if 0 <= i < n and layers[i] is lay:
            for j in range(i + 1, min(n, i + 1 + _NEAR)) if read else range(i - 1, max(-1, i - 1 - _NEAR), -1):
                for t in layers[j].inputs if read else layers[j].outputs:
                    if t.name == name:
                        return True
        if self._written_read is None:  # two sets, cheaper to make than the producer and consumer maps
            written: set[str] = set()
            read_: set[str] = set()
            for k in range(0, len(layers), _CHUNK):  # in chunks: a C loop holds the GIL (the window waits)
                part = layers[k:k + _CHUNK]
                written.update(map(_NAME, chain.from_iterable(map(_OUTPUTS, part))))
                read_.update(map(_NAME, chain.from_iterable(map(_INPUTS, part))))
            self._written_read = (written, read_)
        return name in self._written_read[1 if read else 0]

    def share(self, lay: Layer) -> float | None:
        return share_of(lay, self.total)

    def _passes_through(self, lay: Layer) -> bool:
        """A layer that only moves or reshapes data (a reformat that is not a Q/DQ, a NoOp, a shape op)."""
        if self._shape_ids is None:
            self._shape_ids = set(map(id, self.shape_ops))
        return (id(lay) in self.reformat_ids and id(lay) not in self.qdq_ids) or lay.type == "NoOp" or (
            id(lay) in self._shape_ids)

    def feeds_engine_output(self, lay: Layer, depth: int = 4) -> bool:
        """Whether every output of ``lay`` is an engine output, directly or through layers that only
        move data (:meth:`_passes_through`, at most ``depth`` of them)."""
        if not lay.outputs:
            return False
        for t in lay.outputs:
            if t.name in self.io:
                continue
            readers = self.consumers.get(t.name, ())
            if not readers:
                continue  # read by no layer: an output of the engine
            if depth <= 0 or not all(self._passes_through(c) and self.feeds_engine_output(c, depth - 1)
                                     for c in readers):
                return False
        return True

    def reads_engine_input(self, lay: Layer, depth: int = 4) -> bool:
        """Whether every input of ``lay`` is an engine input, directly or through layers that only
        move data (at most ``depth`` of them)."""
        if not lay.inputs:
            return False
        for t in lay.inputs:
            if t.name in self.io:
                continue
            p = self.producer.get(t.name)
            if p is None:
                continue  # written by no layer: an input of the engine (or a weight)
            if depth <= 0 or not (self._passes_through(p) and self.reads_engine_input(p, depth - 1)):
                return False
        return True

    def is_qdq_layer(self, lay: Layer) -> bool:
        """A quantize/dequantize that runs as its own layer."""
        return id(lay) in self.qdq_ids

    def is_compute(self, lay: Layer) -> bool:
        """A layer doing arithmetic (not a reformat, plugin, Q/DQ, shape or region layer) with a known type."""
        return id(lay) in self._compute_ids

    def neighbours(self, lay: Layer, down: bool, depth: int = 4) -> list[Layer]:
        """The nearest compute layers before (or after) ``lay``, looking through reformats and no-ops."""
        out: list[Layer] = []
        frontier = [lay]
        seen = {id(lay)}
        for _ in range(depth):
            nxt: list[Layer] = []
            for cur in frontier:
                tensors = cur.outputs if down else cur.inputs
                cands: list[Layer] = []
                for t in tensors:
                    if down:
                        cands.extend(self.consumers.get(t.name, ()))
                    else:
                        p = self.producer.get(t.name)
                        if p is not None:
                            cands.append(p)
                for c in cands:
                    if id(c) in seen:
                        continue
                    seen.add(id(c))
                    (out if self.is_compute(c) else nxt).append(c)
            if not nxt:
                break
            frontier = nxt
        return out

