"""Diagnostics: what in an engine costs time or precision, and what to do about it.

``diagnose(engine, graph=None, unsupported=None, model_precision=None)`` returns a list of
:class:`~trtstudio.engine.model.Finding`. Each finding has a ``kind``, a ``severity`` (``error``,
``warning``, ``info``), the ``layer`` (name and index) or none for engine-level findings, the ONNX
``nodes`` involved (from ``engine.mapping``; a graph given here is mapped first if no layer has
nodes yet), a ``message`` and a ``hint`` saying what to do. "Time share" below is the layer's
``percent`` from the profile, else its time over the sum of all layer times; rules that use it
work without times too.

Rules
-----

``unsupported_node`` (error)
    Each entry of ``unsupported`` (the ONNX parser's list of ``{node, op_type, reason}`` from
    ``backends.build.parse_onnx``). Hint: replace/decompose the op, fold constants, or add a plugin.
``plugin`` (info; warning when the plugin takes >= 5 % of the time)
    Layers of type ``PluginV2``/``PluginV3``/``Plugin*`` (or named ``[PluginV2...]``,
    ``[PluginV3...]``), and ``Successfully created plugin: NAME`` lines in the engine's log when the
    layers do not show it. Plugins are opaque to fusion and often force reformats around them.
``reformat`` (info; warning when type-converting or >= 2 % of the time)
    ``Reformat`` layers and ``Reformatting CopyNode ...`` layers that are not ``NoOp`` and whose
    ``Origin`` is not ``QDQ`` (those are quantize layers, see below). The message names the formats
    or data types on both sides; an input type different from the output type is a precision
    change TensorRT inserted between layers that disagree.
``precision_fallback`` (warning or info)
    * an FP32 compute layer in an engine that otherwise computes in FP16/BF16 (or FP32 compute
      when ``model_precision`` asks for fp16/bf16/int8): an FP32 island (warning);
    * an INT8 convolution/GEMM with a float output; warning when its output feeds a separate
      quantize layer (the Q of the next Q/DQ pair was not fused into it), info otherwise (the last
      INT8 layer of a region legitimately outputs float);
    * Q/DQ not fused: a quantize/dequantize that survives as its own layer (a ``Reformat`` of
      ``Origin`` ``QDQ``, a ``Quantize``/``Dequantize`` layer, or a layer whose ONNX nodes are only
      QuantizeLinear/DequantizeLinear) (info; warning when >= 2 % of the time).
``no_tensor_cores`` (warning)
    A convolution or GEMM/MatMul computing in FP16/BF16/INT8/FP8 whose tactic (kernel) name has
    none of the tensor-core markers in :data:`TENSOR_CORE_MARKERS` (derived from real tactic names
    in TensorRT 8.2-10.16 engines: ``tensor16x8x16``, ``tensor8x8x16``, ``tensor1688``, ``hmma``,
    ``h16816``/``h1688`` (cuDNN/cuBLAS ampere kernels), ``imma``, ``i8816``, Hopper
    ``warpgroup``/``wgmma``/``cgasize``), or has one of :data:`NO_TENSOR_CORE_MARKERS`
    (``ffma``, ``simt``, ``scudnn``, ``sgemm``, ``int8x4``/``dp4a`` (INT8 on CUDA cores)).
    Matrix-vector kernels (``gemv``) and depthwise convolutions are not flagged: tensor cores do
    not help them. Layers without a tactic name are skipped.
``unaligned_channels`` (warning; info for image inputs with C <= 4)
    Convolution/GEMM layers whose input channels C or output channels K (dimension 1 of the
    input/output, the last dimension for GEMM/MatMul layers) are not a multiple of 8 for
    FP16/BF16 or 16 for INT8/FP8: tensor-core kernels then pad or fall back. A convolution whose
    only misaligned side is an input of C <= 4 channels (an image: the network's first
    convolution) is said at ``info`` whatever its time (FP32 ones too, against TF32's 4), with
    the fix: expected; pad the input to 4 channels only if the layer's time matters.
``foreign_node`` (info)
    Myelin regions (``{ForeignNode[first...last]}`` layers or regions named by reformats) and DLA
    regions (``{a,b,...}``), with the ONNX nodes they cover: they are compiled as one opaque unit.
``shape_ops`` (info; warning when >= 5 % of the time)
    One engine-level finding counting Shape/NoOp/Constant/Shuffle/shape_call layers (and layers
    whose ONNX nodes are only Shape/Reshape/Constant/Squeeze/Unsqueeze/Flatten/Identity) and their
    time share.
``names_only`` (warning)
    Engine-level: the layer information has names only (``detailed=False``): rebuild with
    ``--profilingVerbosity=detailed``.
``other_model`` (warning)
    Engine-level, with a model: under ``mapping.OTHER_MODEL_SHARE`` (20 %) of the layers that are not
    reformats map to its nodes, so the model is probably not the one the engine was built from
    (and its nodes without a layer were not folded away: the models differ).

``reformat`` at the engine's boundary (info, whatever its time)
    The quantize of a network's float input and the dequantize of its output (a Q/DQ layer
    reading an engine input, or writing an engine output, through layers that only move data)
    are required by float I/O, not Q/DQ left unfused: each is one ``info`` reformat finding (TREx
    flags it) whose hint is the I/O format that removes the copy, from the format the layer
    writes (reads): ``trtexec --inputIOFormats=int8:chw4`` (``--outputIOFormats``), with the
    caller quantizing (dequantizing) the data.

Not findings: an INT8 layer whose float output is the engine's output (a classifier's logits)
has nothing to hand INT8 to.

Severity
--------

Each rule gives the severity its kind deserves (above); then the time at stake decides, where a
profile gives the layer's time share (:func:`by_time`): a layer finding at or above
``TIME_WARN_SHARE`` (5 %) of the engine's time is raised to ``warning``, one below
``TIME_INFO_SHARE`` (2 %, the share at which the reformat and Q/DQ rules already warn) lowered to
``info``; in between the rule's own severity stands. Findings without a layer (engine-level, the
parser's errors, this machine's checks), errors, and the two expected ones above (the boundary
quantize/dequantize, a first convolution's image channels: ``_Ctx.expected``) keep theirs: a layer that costs 18 % of the time
is not a footnote, and one that costs 1 % is not what to fix first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from itertools import chain, compress
from operator import attrgetter
from typing import Any

from trtstudio.bigdocs.gcpause import gc_paused
from trtstudio.engine.mapping import Resolver, map_layers
from trtstudio.engine.model import EngineInfo, Finding, Layer, own_attrs_of

TENSOR_CORE_MARKERS: tuple[str, ...] = (
    "hmma", "imma", "h16816", "h1688", "i8816", "i16832", "s16816", "s1688", "bf16816",
    "_tc_", "warpgroup", "wgmma", "cgasize",
)
_TENSOR_SHAPE_RE = re.compile(r"tensor\d+x\d+x\d+|tensor\d{3,}")
NO_TENSOR_CORE_MARKERS: tuple[str, ...] = (
    "ffma", "simt", "scudnn", "sgemm", "int8x4", "dp4a", "volta_s", "_fp32_",
)
_NO_TC_EXEMPT = ("gemv", "depthwise")

REDUCED = frozenset(("FP16", "BF16"))
LOW = frozenset(("FP16", "BF16", "INT8", "FP8", "FP4", "INT4"))
FLOAT = frozenset(("FP32", "FP16", "BF16"))
ALIGN = {"FP16": 8, "BF16": 8, "INT8": 16, "FP8": 16, "FP4": 32, "INT4": 32}
TF32_ALIGN = 4  # an FP32 convolution on TF32 tensor cores: only a first convolution's image input is said

REFORMAT_WARN_SHARE = 2.0
PLUGIN_WARN_SHARE = 5.0
SHAPE_WARN_SHARE = 5.0

_SHAPE_TYPES = frozenset(("Shape", "NoOp", "Constant", "Shuffle", "shape_call", "Reshape", "Identity"))
_SHAPE_NAME_MARKERS = ("[Shuffle]", "[Constant]", "[Shape]", "[Identity]")
_SHAPE_OPS = frozenset(("Shape", "Reshape", "Constant", "ConstantOfShape", "Squeeze", "Unsqueeze", "Flatten",
                        "Identity"))
_CHUNK = 4096  # layers per C call where tensors are gathered
_NEAR = 4  # layers on either side that Ctx._touched looks at before the sets of all tensors
_NAME, _INPUTS, _OUTPUTS, _OP_TYPE = attrgetter("name"), attrgetter("inputs"), attrgetter("outputs"), attrgetter("op_type")
_QDQ_OPS = frozenset(("QuantizeLinear", "DequantizeLinear"))
_QDQ_OR_SHAPE_OPS = _QDQ_OPS | _SHAPE_OPS
_NOT_COMPUTE = _SHAPE_TYPES | frozenset(("Reformat", "Myelin", "DLA", "DLATransfer", "TrainStation", "Unknown",
                                         "Slice", "Padding", "Concatenation", "Gather", "Cast"))
_PLUGIN_LOG_RE = re.compile(r"Successfully created plugin: ?(\S+)")

NAMES_ONLY_HINT = (
    "rebuild with trtexec --profilingVerbosity=detailed --exportLayerInfo=layers.json (or "
    "config.profiling_verbosity = ProfilingVerbosity.DETAILED) to see precision, formats and tactics"
)


def _share(lay: Layer, total: float | None) -> float | None:
    if lay.time is None:
        return None
    if lay.time.percent is not None:
        return lay.time.percent
    ms = lay.time.per_inference_ms
    if total and ms is not None:
        return 100.0 * ms / total
    return None


def _share_text(share: float | None) -> str:
    return f" ({share:.1f} % of the time)" if share is not None else ""


def _finding(kind: str, severity: str, lay: Layer | None, message: str, hint: str,
             nodes: Sequence[str] | None = None) -> Finding:
    return Finding(
        kind=kind,
        severity=severity,
        message=message,
        hint=hint,
        layer=lay.name if lay is not None else None,
        layer_index=lay.index if lay is not None else None,
        nodes=list(nodes if nodes is not None else (lay.onnx_nodes if lay is not None else [])),
    )


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


def _dim(shape: Sequence[Any] | None, i: int) -> int | None:
    if not shape:
        return None
    try:
        v = shape[i]
    except IndexError:
        return None
    return v if isinstance(v, int) and v > 0 else None


class _Ctx:
    def __init__(self, engine: EngineInfo, qdq_nodes: set[str], shape_nodes: set[str]) -> None:
        """``qdq_nodes``, ``shape_nodes``: names of the graph's Q/DQ and shape-op nodes."""
        self.engine = engine
        self.total = engine.total_time_ms
        self.qdq_nodes = qdq_nodes
        self.shape_nodes = shape_nodes
        self._qdq_ids: set[int] = set()
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
        qdq_ids, compute_ids = self._qdq_ids, self._compute_ids
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
                                      ltype in _NOT_COMPUTE, ltype in _SHAPE_TYPES)
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
                and any(m in name for m in _SHAPE_NAME_MARKERS)
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
        return _share(lay, self.total)

    def _passes_through(self, lay: Layer) -> bool:
        """A layer that only moves or reshapes data (a reformat that is not a Q/DQ, a NoOp, a shape op)."""
        if self._shape_ids is None:
            self._shape_ids = set(map(id, self.shape_ops))
        return (id(lay) in self.reformat_ids and id(lay) not in self._qdq_ids) or lay.type == "NoOp" or (
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
        return id(lay) in self._qdq_ids

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


def _unsupported(items: Iterable[dict[str, Any]]) -> list[Finding]:
    out = []
    for it in items:
        node = str(it.get("node") or "")
        op = str(it.get("op_type") or "")
        reason = str(it.get("reason") or "not supported by the TensorRT ONNX parser")
        what = f"{node} ({op})" if node and op else (node or op or "a node")
        out.append(Finding(
            kind="unsupported_node",
            severity="error",
            message=f"ONNX node {what} cannot be built: {reason}",
            hint=(f"replace or decompose {op or 'the op'} in the exporter, fold it with `polygraphy surgeon "
                  "sanitize --fold-constants`, export with a newer opset, or provide a TensorRT plugin for it"),
            nodes=[node] if node else [],
        ))
    return out


def _plugins(ctx: _Ctx) -> list[Finding]:
    out = []
    seen_names: set[str] = set()
    for lay in ctx.plugins:
        share = ctx.share(lay)
        sev = "warning" if share is not None and share >= PLUGIN_WARN_SHARE else "info"
        kind = lay.type if lay.type.startswith("Plugin") else "plugin"
        seen_names.add(lay.name)
        out.append(_finding(
            "plugin", sev, lay,
            f"{lay.name} runs a {kind} layer{_share_text(share)}: TensorRT cannot fuse across it or choose its kernels",
            "check that the plugin supports the precision and formats of its neighbours (else reformats are "
            "inserted around it); prefer a native TensorRT op when one exists",
        ))
    if not out:
        created: list[str] = []
        for line in ctx.engine.log:
            if "plugin" not in line:
                continue
            m = _PLUGIN_LOG_RE.search(line)
            if m and m.group(1) not in created:
                created.append(m.group(1))
        for name in created:
            out.append(_finding(
                "plugin", "info", None,
                f"the build log shows plugin {name} being created; the engine contains a plugin layer",
                "check that the plugin supports the precision and formats of its neighbours; export the layer "
                "information (--exportLayerInfo --profilingVerbosity=detailed) to see which layer it is",
            ))
    return out


def _tensor_desc(t: Any) -> str:
    return "?" if t is None else (t.format or t.dtype or t.raw or "?")


def _tensor_types(lay: Layer) -> tuple[str, str]:
    return (_tensor_desc(lay.inputs[0] if lay.inputs else None),
            _tensor_desc(lay.outputs[0] if lay.outputs else None))


_BOUNDARY_HINT = (
    "the engine's I/O tensors are in another type/format than the layers next to them: give the "
    "I/O the engine's own type and format (trtexec --inputIOFormats/--outputIOFormats=fp16:chw, "
    "or FP16 inputs/outputs in the model) to drop this copy")
_CONVERTING_HINT = (
    "the layers on both sides run in different precisions: make the model's types agree "
    "(cast the weights/inputs of the FP32 side to FP16/BF16, or add Q/DQ on both sides for INT8)")
_FORMAT_HINT = (
    "neighbouring layers want different memory formats; a channel count that is a multiple of "
    "8 (FP16) or 32 (INT8), or keeping consecutive layers in one precision, usually removes it")


def _reformats(ctx: _Ctx) -> list[Finding]:
    out: list[Finding] = []
    append = out.append
    qdq_ids = ctx._qdq_ids
    total = ctx.total
    at_boundary = ctx.at_boundary
    for lay in ctx.reformats:  # often a sixth of the layers: the checks are written out
        if lay.type == "NoOp" or id(lay) in qdq_ids:
            continue
        share = _share(lay, total)
        din, dout = lay.precision_in, lay.precision_out
        converting = bool(din and dout and din != dout)
        boundary = at_boundary(lay)
        sev = "warning" if (converting and not boundary) or (
            share is not None and share >= REFORMAT_WARN_SHARE) else "info"
        if converting:
            change = f"{din} -> {dout}"
        else:
            fin, fout = _tensor_types(lay)
            change = f"{fin} -> {fout}" if fin != "?" or fout != "?" else "(formats not recorded)"
        where = " at the engine's input/output" if boundary else ""
        origin = f" (origin {lay.origin})" if lay.origin else ""
        append(_finding("reformat", sev, lay, f"{lay.name}: reformat {change}{where}{origin}{_share_text(share)}",
                        _BOUNDARY_HINT if boundary else _CONVERTING_HINT if converting else _FORMAT_HINT))
    return out


_ISLAND_HINT = (
    "TensorRT keeps FP32 where the model's types say so (strongly typed) or where no faster "
    "kernel exists: cast this node's inputs/weights to FP16/BF16 in the ONNX model, or check "
    "--layerPrecisions/precision constraints that pin it to FP32")
_INT8_OUT_HINT = (
    "place the QuantizeLinear of the next Q/DQ pair directly after this layer's output (after the "
    "Add/Relu it fuses) so TensorRT can write INT8 directly; export with opset >= 13 Q/DQ pairs "
    "on every input of residual Adds")
_QDQ_HINT = (
    "TensorRT fuses a Q/DQ pair into the neighbouring layer when the pair sits directly on the "
    "input/output of a fusible op: export with opset >= 13 Q/DQ pairs around every conv/GEMM input and "
    "the residual Add inputs, and avoid Q/DQ around ops with no INT8 kernel (pooling, resize)")


def _precision(ctx: _Ctx, model_precision: str | None) -> list[Finding]:
    out: list[Finding] = []
    append = out.append
    compute = ctx.compute
    # Layer.precision (precision_in, else precision_out) in REDUCED
    has_reduced = any((pin or pout) in REDUCED for pin, pout in zip(ctx.compute_in, ctx.compute_out, strict=True))
    want = (model_precision or "").upper()
    want_low = want in LOW
    islands = want_low or has_reduced
    conv_gemm = set(map(id, ctx.conv_gemm))  # a compute layer is a conv/GEMM when it is there (in C)
    total = ctx.total
    requantized_by: Callable[[Layer], Layer | None] | None = None
    for lay, pin, pout in zip(compute, ctx.compute_in, ctx.compute_out, strict=True):  # 100,000s: the checks are written out
        if pin == "FP32" and islands and pout in (None, "FP32"):
            around = ctx.neighbours(lay, False) + ctx.neighbours(lay, True)
            low_around = [n for n in around if (n.precision_in in LOW or n.precision_out in LOW)]
            if want_low or (low_around and len(low_around) == len(around)):
                kinds = sorted({_low_of(n) for n in low_around})
                why = f"the model asks for {want}" if want_low and not low_around else (
                    f"its neighbours compute in {', '.join(kinds)}")
                append(_finding(
                    "precision_fallback", "warning", lay,
                    f"{lay.name} runs in FP32 while {why}: an FP32 island{_share_text(_share(lay, total))}",
                    _ISLAND_HINT,
                ))
        elif pin == "INT8" and pout in FLOAT and id(lay) in conv_gemm:
            if ctx.feeds_engine_output(lay):
                continue  # the network's own float output (a classifier's logits): nothing to fuse
            if requantized_by is None:
                requantized_by = _requantizer(ctx)
            requant = requantized_by(lay)
            tail = (f"; its output is re-quantized by {requant.name}, a separate layer" if requant else "")
            append(_finding("precision_fallback", "warning" if requant else "info", lay,
                            f"{lay.name} is an INT8 {lay.type} with {pout} output{tail}{_share_text(_share(lay, total))}",
                            _INT8_OUT_HINT))
    for lay, pin, pout in zip(ctx.qdq, ctx.qdq_in, ctx.qdq_out, strict=True):
        if pout in LOW and pin not in LOW and ctx.reads_engine_input(lay):
            append(_boundary_qdq(ctx, lay, pin, pout, True))  # required: said, with the I/O format that drops it
            continue
        if pin in LOW and pout not in LOW and ctx.feeds_engine_output(lay):
            append(_boundary_qdq(ctx, lay, pin, pout, False))
            continue
        share = _share(lay, total)
        sev = "warning" if share is not None and share >= REFORMAT_WARN_SHARE else "info"
        conv = f" ({pin} -> {pout})" if pin and pout else ""
        append(_finding("precision_fallback", sev, lay,
                        f"{lay.name} runs as its own quantize/dequantize layer{conv}{_share_text(share)}: Q/DQ not fused",
                        _QDQ_HINT))
    return out


# the IOFormats word of a TensorRT format text (trtexec --inputIOFormats=TYPE:FORMAT), the first
# that the text holds ("thirty-two wide" before "two wide", which it also holds)
_LAYOUT_WORDS = (("thirty-two wide channel vectorized", "chw32"), ("two wide channel vectorized", "chw2"),
                 ("four wide channel vectorized", "chw4"), ("sixteen wide channel vectorized", "chw16"),
                 ("channel % 16 == 0", "hwc16"), ("channel % 8 == 0", "hwc8"), ("channel major", "hwc"),
                 ("row major", "chw"))


def io_format(t: Any, precision: str | None) -> str:
    """``int8:chw4``: the ``--inputIOFormats``/``--outputIOFormats`` spec of tensor ``t``'s type and
    layout (``chw`` where its format text says none)."""
    text = (getattr(t, "format", None) or "").lower()
    layout = next((word for key, word in _LAYOUT_WORDS if key in text), "chw")
    if "3 spatial" in text:
        layout = {"chw32": "cdhw32", "hwc8": "dhwc8", "hwc": "dhwc"}.get(layout, layout)
    return f"{(precision or 'fp32').lower()}:{layout}"


def _boundary_qdq(ctx: _Ctx, lay: Layer, pin: str | None, pout: str | None, quantize: bool) -> Finding:
    """The info finding of the quantize of the network's float input (``quantize``) or the
    dequantize of its output: required by float I/O, removed by giving the engine the low-precision
    I/O format the layer writes (reads). Listed in ``ctx.expected``: info whatever its time."""
    share = ctx.share(lay)
    if quantize:
        spec = io_format(lay.outputs[0] if lay.outputs else None, pout)
        what, flag, data = "quantizes the engine's float input", "--inputIOFormats", "quantize its input data"
    else:
        spec = io_format(lay.inputs[0] if lay.inputs else None, pin)
        what, flag, data = ("dequantizes to the engine's float output", "--outputIOFormats",
                            "dequantize the output it receives")
    conv = f" ({pin} -> {pout})" if pin and pout else ""
    f = _finding("reformat", "info", lay,
                 f"{lay.name} {what}{conv}{_share_text(share)}: required while the engine's I/O is float, "
                 "a copy of the whole tensor",
                 f"expected with float I/O; to drop the copy build with trtexec {flag}={spec} (the layout the "
                 f"layer {'writes' if quantize else 'reads'}) and {data} with the model's Q/DQ scale in the caller")
    ctx.expected.append(f)
    return f


def _requantizer(ctx: _Ctx) -> Callable[[Layer], Layer | None]:
    """A function giving the first of a layer's direct consumers (through reformats that are not
    Q/DQ, in the order of the layer's outputs and then of the engine) that is a separate quantize
    layer writing INT8, or None."""
    get = ctx.consumers.get
    reformats = ctx.reformat_ids
    qdq = ctx._qdq_ids

    def requantized_by(lay: Layer) -> Layer | None:  # tens of thousands of calls: the lookups bound once
        for t in lay.outputs:
            for c in get(t.name, ()):
                if id(c) in reformats and id(c) not in qdq:  # a reformat (is_reformat) of the engine
                    for t2 in c.outputs:
                        for n in get(t2.name, ()):
                            if id(n) in qdq and n.precision_out == "INT8":
                                return n
                elif id(c) in qdq and c.precision_out == "INT8":
                    return c
        return None

    return requantized_by


def _low_of(lay: Layer) -> str:
    return lay.precision_in if lay.precision_in in LOW else (lay.precision_out or "?")


def _is_depthwise(lay: Layer) -> bool:
    g = lay.groups()
    c = _dim(lay.inputs[0].shape, 1) if lay.inputs else None
    return "depthwise" in lay.type.lower() or (isinstance(g, int) and g > 1 and c is not None and g == c)


def _no_tensor_cores(tactic: str) -> bool:
    """A kernel that should use tensor cores and does not (gemv and depthwise kernels are exempt)."""
    t = tactic.lower()
    return not any(x in t for x in _NO_TC_EXEMPT) and uses_tensor_cores(tactic) is False


def _tensor_cores(ctx: _Ctx) -> list[Finding]:
    out = []
    flagged: dict[str, bool] = {}  # per tactic: an engine has a few hundred
    for lay, pin, pout in zip(ctx.conv_gemm, ctx.conv_gemm_in, ctx.conv_gemm_out, strict=True):
        tactic = lay.tactic
        if not tactic:
            continue
        p = pin or pout  # Layer.precision
        if p not in LOW:
            continue
        bad = flagged.get(tactic)
        if bad is None:
            bad = flagged[tactic] = _no_tensor_cores(tactic)
        if not bad:
            continue
        if _is_depthwise(lay):  # reads the layer's Groups: last, only for the few it concerns
            continue
        out.append(_finding(
            "no_tensor_cores", "warning", lay,
            f"{lay.name} computes in {p} but its kernel {lay.tactic} does not use tensor cores"
            f"{_share_text(ctx.share(lay))}",
            "tensor-core kernels need aligned channels (multiples of 8 for FP16, 16/32 for INT8), supported "
            "formats and enough workspace: align the channels, give the builder more workspace "
            "(--memPoolSize=workspace:...), or check the GPU has tensor cores for this type",
        ))
    return out


def _alignment(ctx: _Ctx) -> list[Finding]:
    out = []
    kinds: dict[tuple[str, Any], tuple[bool, bool]] = {}  # (type, parameter type) -> (is_conv, is_gemm)
    for lay, pin, pout in zip(ctx.conv_gemm, ctx.conv_gemm_in, ctx.conv_gemm_out, strict=True):
        if not lay.inputs or not lay.outputs:
            continue
        ptype = lay.parameter_type
        key = (lay.type, ptype if type(ptype) is str else None)  # as is_conv/is_gemm read them
        kind = kinds.get(key)
        if kind is None:
            kind = kinds[key] = (is_conv(lay), is_gemm(lay))
        conv, gemm = kind
        if not (conv or gemm):
            continue
        p = pin or pout  # Layer.precision
        need = ALIGN.get(p or "")
        tf32 = need is None and p == "FP32" and conv  # TF32 tensor cores: only an image input is said
        if tf32:
            need = TF32_ALIGN
        elif need is None:
            continue
        ishape, oshape = lay.inputs[0].shape, lay.outputs[0].shape
        if gemm and not conv:
            c, k = _dim(ishape, -1), _dim(oshape, -1)
        else:
            c, k = _dim(ishape, 1), _dim(oshape, 1)
        if (c is None or not c % need) and (k is None or not k % need):  # most layers: aligned
            continue
        bad = [(n, v) for n, v in (("C", c), ("K", k)) if v is not None and v % need]
        image = conv and c is not None and c <= 4 and [n for n, _ in bad] == ["C"]
        if tf32 and not image:
            continue
        what = ", ".join(f"{n}={v}" for n, v in bad)
        tc = " (TF32 tensor cores)" if tf32 else ""
        f = _finding(
            "unaligned_channels", "info" if image else "warning", lay,
            f"{lay.name}: {what} is not a multiple of {need} for {p}{tc}{_share_text(ctx.share(lay))}",
            (f"expected for an image input of {c} channels (the kernel pads it); only if this layer's time "
             "matters, pad the input to 4 channels" + ("" if need == 4 else f" (TensorRT's first-layer kernels "
                                                      f"take 4) or to a multiple of {need}")
             + ", zeros in the data and in the weights") if image else
            f"make channels a multiple of {need} (pad the weights with zero channels, or choose layer widths "
            f"that are multiples of {need})",
        )
        out.append(f)
        if image:
            ctx.expected.append(f)
    return out


def _regions(ctx: _Ctx, graph: Any) -> list[Finding]:
    out = []
    seen: set[str] = set()
    names: set[str] | None = None  # every layer's name, made when a region is named by another layer
    resolver: Any = None
    for lay in ctx.region_layers:
        name = lay.name
        region: str | None = None
        if "{ForeignNode[" in name:
            region = name[name.index("{ForeignNode["):]
            if region.endswith("]}") is False:
                end = region.find("]}")
                region = region[:end + 2] if end >= 0 else region
        elif lay.type == "DLA" or (name.startswith("{") and name.endswith("}")):
            region = name
        if region is None or region in seen:
            continue
        own = region == name
        if not own:
            if names is None:
                names = {lay.name for lay in ctx.engine.layers}
            if region in names:
                continue  # the region's own layer reports it
        seen.add(region)
        nodes = lay.onnx_nodes if own else []
        if not own and graph is not None:
            if resolver is None:
                resolver = Resolver(graph)
            idx, _ = resolver.resolve_name(region)
            nodes = [resolver.nodes[i].name for i in idx]
        kind = "DLA" if region.startswith("{") and not region.startswith("{ForeignNode[") else "Myelin"
        span = f", covering {len(nodes)} ONNX nodes ({nodes[0]} ... {nodes[-1]})" if nodes else ""
        share = ctx.share(lay) if own else None
        out.append(_finding(
            "foreign_node", "info", lay if own else None,
            f"{kind} region {region}{span}{_share_text(share)}",
            "the region is compiled as one opaque unit: per-node precision and time are not visible; "
            "profile with --profilingVerbosity=detailed (TensorRT >= 10 lists its kernels) or mark "
            "intermediate tensors as outputs to split it" if kind == "Myelin" else
            "these layers run on the DLA; layers outside the region fall back to the GPU with "
            "transfers (data to/from nvm) in between: keep DLA-supported ops contiguous",
            nodes=nodes,
        ))
    return out


def _shape_ops(ctx: _Ctx) -> list[Finding]:
    hits = ctx.shape_ops
    if not hits:
        return []
    shares = [ctx.share(lay) for lay in hits]
    known = [s for s in shares if s is not None]
    total = sum(known) if known else None
    sev = "warning" if total is not None and total >= SHAPE_WARN_SHARE else "info"
    kinds: dict[str, int] = {}
    for lay in hits:
        label = lay.type
        if label == "Unknown":
            label = next((m.strip("[]") for m in _SHAPE_NAME_MARKERS if m in lay.name), "shape op")
        kinds[label] = kinds.get(label, 0) + 1
    by = ", ".join(f"{v} {k}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]))
    nodes = [n for lay in hits for n in lay.onnx_nodes]
    return [Finding(
        kind="shape_ops",
        severity=sev,
        message=(f"{len(hits)} of {len(ctx.engine.layers)} layers are shape/copy overhead ({by})"
                 + (f", {total:.1f} % of the time" if total is not None else "")),
        hint=("fold shape computations before building (`polygraphy surgeon sanitize --fold-constants`, "
              "onnxsim), use static shapes where possible, and remove Reshape/Transpose pairs that cancel out"),
        nodes=list(dict.fromkeys(nodes)),
    )]


def _other_model(ctx: _Ctx) -> list[Finding]:
    from trtstudio.engine.mapping import OTHER_MODEL_SHARE, other_model

    found = other_model(ctx.engine)
    if found is None:
        return []
    mapped, counted = found
    return [Finding(
        kind="other_model",
        severity="warning",
        message=(f"only {mapped} of {counted} engine layers (reformats not counted) map to nodes of the ONNX model, "
                 f"under {OTHER_MODEL_SHARE:.0%}: the model is probably not the one the engine was built from"),
        hint=("open the ONNX model the engine was built from (the file given to trtexec --onnx or the parser); "
              "a model exported again, or simplified, has other node names. Nodes without a layer say nothing "
              "about folding while the models differ"),
    )]


TIME_WARN_SHARE = 5.0  # a layer finding at or above this share of the time is at least a warning
TIME_INFO_SHARE = 2.0  # ... and below this share at most info (needs a profile; errors stay errors)


def by_time(findings: list[Finding], engine: EngineInfo) -> list[Finding]:
    """The findings with their severity set by the time at stake (see "Severity" in the module
    docstring): a finding about a layer holding >= :data:`TIME_WARN_SHARE` % of the engine's time
    becomes a warning, one about a layer under :data:`TIME_INFO_SHARE` % info. Findings without a
    layer, layers without a time, and errors keep their severity. The list is changed in place
    (and returned)."""
    total = engine.total_time_ms
    pos: dict[int, Layer] | None = None
    for f in findings:
        if f.layer_index is None or f.severity == "error":
            continue
        if pos is None:
            pos = {lay.index: lay for lay in engine.layers}
        lay = pos.get(f.layer_index)
        share = _share(lay, total) if lay is not None else None
        if share is None:
            continue
        if share >= TIME_WARN_SHARE:
            f.severity = "warning"
        elif share < TIME_INFO_SHARE:
            f.severity = "info"
    return findings


def diagnose(
    engine: EngineInfo,
    graph: Any = None,
    unsupported: Iterable[dict[str, Any]] | None = None,
    model_precision: str | None = None,
    mapped: bool = False,
) -> list[Finding]:
    """Run every rule of this module over ``engine`` (see the module docstring); returns the findings.

    ``graph`` (a trtstudio Graph/Model) adds ONNX node names and op types; ``unsupported`` is the
    parser's list of unsupported nodes; ``model_precision`` ("fp16", "bf16", "int8", ...) is the
    precision the model is meant to run in. The engine is not changed, except that layers get
    ``onnx_nodes`` when a graph is given and no layer has any yet, unless ``mapped``: the caller
    has mapped the engine to this graph already (``engine.analysis``), and a layer without nodes
    is one the mapping found none for (mapping again took 2.6 s at 300,000 layers of an engine
    from another model).
    """
    with gc_paused():
        return _diagnose(engine, graph, unsupported, model_precision, mapped)


def _diagnose(engine: EngineInfo, graph: Any, unsupported: Iterable[dict[str, Any]] | None,
              model_precision: str | None, mapped: bool = False) -> list[Finding]:
    qdq_nodes: set[str] = set()
    shape_nodes: set[str] = set()
    if graph is not None:
        g = graph.graph if not hasattr(graph, "nodes") and hasattr(graph, "graph") else graph
        # the graph may have 100,000s of nodes: picked in C (compress, map), the few the rules need
        for n in compress(g.nodes, map(_QDQ_OR_SHAPE_OPS.__contains__, map(_OP_TYPE, g.nodes))):
            (qdq_nodes if n.op_type in _QDQ_OPS else shape_nodes).add(n.name)
        if not mapped and engine.layers and not any(lay.onnx_nodes for lay in engine.layers):
            map_layers(engine, g)
    ctx = _Ctx(engine, qdq_nodes, shape_nodes)
    findings: list[Finding] = []
    if not engine.detailed:
        findings.append(Finding(
            kind="names_only",
            severity="warning",
            message="names-only layer info: rebuild with --profilingVerbosity=detailed",
            hint=NAMES_ONLY_HINT,
        ))
    findings += _unsupported(unsupported or ())
    findings += _plugins(ctx)
    findings += _reformats(ctx)
    findings += _precision(ctx, model_precision)
    findings += _tensor_cores(ctx)
    findings += _alignment(ctx)
    findings += _regions(ctx, graph)
    findings += _shape_ops(ctx)
    if graph is not None:
        findings += _other_model(ctx)
    by_time(findings, engine)
    for f in ctx.expected:  # what is expected where it is stays info, whatever the time at stake
        f.severity = "info"
    return findings
