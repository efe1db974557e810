"""The alignment's view of a layer (:class:`ALayer`: its ONNX nodes, kind, precision, tactic, time
per inference, tensor formats and structural signature) and of a group of aligned layers
(:class:`Group`), made for both sides of a diff by :func:`to_alayers` (:mod:`trtstudio.diff.align`
aligns them)."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

import msgspec

from trtstudio.engine.diagnose import is_conv, is_gemm, is_reformat
from trtstudio.engine.layer_stats import layer_ms
from trtstudio.engine.mapping import split_name
from trtstudio.engine.model import Layer

_WORD_RE = re.compile(r"[a-z]+")
# name words (as exporters spell ops) -> the op class the last alignment pass pairs by
_NAME_CLASSES = (("conv", "conv"), ("deconv", "conv"), ("maxpool", "pool"), ("max", "pool"), ("avgpool", "pool"),
                 ("pool", "pool"), ("matmul", "gemm"), ("gemm", "gemm"), ("linear", "gemm"), ("dense", "gemm"),
                 ("fc", "gemm"), ("softmax", "softmax"), ("transpose", "shuffle"), ("reshape", "shuffle"),
                 ("shuffle", "shuffle"))
CHANGES = ("same", "precision", "tactic", "format", "fused", "only_base", "only_other")
_META_RE = re.compile(r"\[ONNX Layer: ([^\]\x1e\x1f]+)\]")
_TRAILING_NUM = re.compile(r"[_.:]?\d+$")
_SKIP_PREFIXES = ("(Unnamed Layer", "Reformatting CopyNode", "ONNXTRT_", "unsqueeze_node_after_", "copied_squeeze_after_")


class ALayer(msgspec.Struct, gc=False):
    """One layer as the alignment sees it (a Struct: made in C, 100,000 of them a 50,000-layer diff;
    it holds no cycle, so the collector need not track it)."""

    pos: int
    name: str
    type: str
    kind: str
    precision: str | None
    tactic: str | None
    time_ms: float | None
    nodes: tuple[str, ...]
    reformat: bool
    compute: bool  # a convolution or GEMM (the groups the alignment budget counts)
    layer: Layer
    _ops: frozenset[str] | None = None
    _sig: tuple[Any, ...] | None = None
    _formats: tuple[str, ...] | None = None

    @property
    def sig(self) -> tuple[Any, ...]:
        """Its structural signature: kind, first input's dims without the batch, output channels,
        kernel, stride, groups (made on first use: most layers of two builds match by name)."""
        if self._sig is None:
            self._sig = _signature(self.layer, self.kind, self.compute)
        return self._sig

    @property
    def loose(self) -> tuple[Any, ...]:
        """The signature's kind and output channels."""
        return (self.sig[0], self.sig[2])

    @property
    def ops(self) -> frozenset[str]:
        """The op types its nodes name (``MaxPool_2`` -> ``maxpool``) and its layer type, lower case."""
        if self._ops is None:
            self._ops = frozenset(_op_token(n) for n in self.nodes) | {self.type.lower()}
        return self._ops

    @property
    def name_class(self) -> str | None:
        """The op its name speaks of first (``Conv-1 + ReLU-2``, ``node_conv2d`` -> ``conv``), or None."""
        for n in self.nodes or (self.name,):
            for word in _WORD_RE.findall(n.lower()):
                for prefix, cls in _NAME_CLASSES:
                    if word.startswith(prefix):
                        return cls
        return None

    @property
    def formats(self) -> tuple[str, ...]:
        """Its tensors' formats, inputs then outputs ("" where the listing records none: a data type
        is no format, and TensorRT-RTX 1.4's log records types only)."""
        if self._formats is None:
            lay = self.layer
            self._formats = tuple([str(t.format or "") for t in lay.inputs] + [str(t.format or "") for t in lay.outputs])
        return self._formats


class Group(msgspec.Struct, gc=False):
    """Aligned layers of both sides (positions in each engine's layer list) and how they matched
    (a Struct: 50,000 of them made in C; it holds lists of positions, no cycle)."""

    base: list[int] = []  # (msgspec gives each Group its own empty list)
    other: list[int] = []
    matched_by: str = "nodes"  # nodes, name, structure, structure-loose, fused, none
    change: str = "same"
    reason: str = ""


def _op_token(name: str) -> str:
    last = name.split(" | ", 1)[0].rstrip("/").rsplit("/", 1)[-1]  # a node in a branch: "node | graph (then_branch) | If_0 (If)"
    return _TRAILING_NUM.sub("", last).lower()


def node_names(lay: Layer, memo: dict[str, tuple[str, ...]] | None = None) -> tuple[str, ...]:
    """The ONNX node names ``lay`` covers, from the model's mapping, its metadata or its name
    (``memo``: what a metadata string or a name gave before; the two sides of a diff share most)."""
    md = lay.metadata
    if lay.onnx_nodes and not (md and any("[ONNX Layer: " in n or "\x1f" in n for n in lay.onnx_nodes)):
        # (a reader that split "[ONNX Layer: Conv@4]__gemm_from_conv1x1\x1f[ONNX Layer: Mul@1]" wrongly
        # left the markers in: its metadata is read again below)
        return tuple(lay.onnx_nodes)
    key = md if md and "[ONNX Layer: " in md else "\x00" + lay.name
    if memo is not None:
        got = memo.get(key)
        if got is None:
            got = memo[key] = _node_names(lay, md)
        return got
    return _node_names(lay, md)


def _node_names(lay: Layer, md: str | None) -> tuple[str, ...]:
    if md and "[ONNX Layer: " in md:
        found = _META_RE.findall(md)
        if found:
            return tuple(dict.fromkeys(map(str.strip, found)))
    out: list[str] = []
    for kind, text in split_name(lay.name):
        if kind == "span":
            first, _, last = text.partition("...")
            out += [p for p in (first.strip(), last.strip()) if p]
        elif not text.startswith(_SKIP_PREFIXES):
            out.append(text)
    return tuple(dict.fromkeys(out))


def _dims(t: Any) -> tuple[Any, ...]:
    shape = getattr(t, "shape", None)
    return tuple(shape[1:]) if isinstance(shape, list) and shape else ()


def _kind(lay: Layer, nodes: tuple[str, ...] = ()) -> str:
    if is_reformat(lay):
        return "reformat"
    kind = _type_kind(lay.type, lay.parameter_type)
    if kind in ("conv", "gemm") or lay.type.lower() not in _FUSED_TYPES:
        return kind
    return _fused_kind(lay.name, nodes) or kind


# layer types of Myelin/runtime fusions: a convolution or GEMM by what they cover, not by their type
_FUSED_TYPES = frozenset(("runtime_fusion", "myelin", "foreignnode", "fused"))
_CAMEL_RE = re.compile(r"[A-Z][a-z]*")
_MYELIN_OPS = {"Corr": "conv", "Conv": "conv", "Deconv": "conv", "Fc": "gemm", "Gemm": "gemm", "Mmul": "gemm",
               "Matmul": "gemm", "Bmm": "gemm"}
_NODE_OPS = (("conv", "conv"), ("deconv", "conv"), ("matmul", "gemm"), ("gemm", "gemm"), ("linear", "gemm"),
             ("fc", "gemm"), ("dense", "gemm"))


def _fused_kind(name: str, nodes: tuple[str, ...]) -> str | None:
    """``conv``/``gemm`` for a Myelin fusion by what it covers: its name's ops (``__myl_CorrMulAddRelu``:
    a correlation, ``__myl_FcAdd``: a fully connected layer), else its ONNX nodes' (``node_linear``,
    ``/conv1/Conv``); None where neither says."""
    if name.startswith("__myl_"):
        for word in _CAMEL_RE.findall(name[6:].split("_", 1)[0]):
            if word in _MYELIN_OPS:
                return _MYELIN_OPS[word]
    for n in nodes:
        for word in _WORD_RE.findall(_op_token(n)):
            for prefix, cls in _NODE_OPS:
                if word.startswith(prefix):
                    return cls
    return None


@functools.lru_cache(maxsize=1024)
def _type_kind(type_: str, parameter_type: str | None) -> str:
    lay = Layer(0, "", type_, parameter_type)
    if is_conv(lay) or type_ == "correlation":  # a Myelin (TensorRT-RTX) convolution is a "correlation"
        return "conv"
    if is_gemm(lay):
        return "gemm"
    t = (lay.parameter_type or lay.type or "").lower()
    for word in ("pool", "elementwise", "activation", "softmax", "shuffle", "noop", "reduce", "concat", "slice",
                 "resize", "plugin", "myelin", "foreign", "norm", "scale", "matmul"):
        if word in t:
            return word
    return t or "unknown"


def _tup(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


def _signature(lay: Layer, kind: str, compute: bool) -> tuple[Any, ...]:
    attrs = lay.attrs if compute else {}  # a SourcedLayer parses its record for them: only where used
    out_maps = attrs.get("OutMaps") if attrs else None
    first_in = _dims(lay.inputs[0]) if lay.inputs else ()
    if out_maps is None and lay.outputs:
        first_out = _dims(lay.outputs[0])
        out_maps = first_out[0] if first_out else None
    return (kind, first_in, out_maps, _tup(attrs.get("Kernel")), _tup(attrs.get("Stride")), attrs.get("Groups"))


def to_alayer(pos: int, lay: Layer, memo: dict[str, tuple[str, ...]] | None = None) -> ALayer:
    """The alignment's view of ``lay`` (at ``pos`` in its engine)."""
    nodes = node_names(lay, memo)
    kind = _kind(lay, nodes)
    return ALayer(pos, lay.name, lay.type, kind, lay.precision, lay.tactic or lay.tactic_value, layer_ms(lay),
                  nodes, kind == "reformat", kind in ("conv", "gemm"), lay)


def to_alayers(layers: Sequence[Layer], memo: dict[str, tuple[str, ...]]) -> list[ALayer]:
    """The alignment's views of a side's ``layers`` (``memo``: node names per metadata string, shared
    by the two sides of a diff)."""
    return [to_alayer(i, lay, memo) for i, lay in enumerate(layers)]
