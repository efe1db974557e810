"""Aligning the layers of two engines into groups, each with one change label.

Two passes, as the design asks (what the files say first, then structure, never position alone):

1. **Names.** Each layer names the ONNX nodes it covers: ``Layer.onnx_nodes`` where a model mapped
   it, else the ``[ONNX Layer: ...]`` entries of its metadata, else the parts of its (fused) name
   (``Conv_0 + Relu_1``, ``PWN(...)``, ``{ForeignNode[first...last]}``, through
   :func:`trtstudio.engine.mapping.split_name`). Layers of either side that share a node fall in one
   group (a union-find), so different fusions line up as one group with several layers on a side.
   Reformat layers (``Reformatting CopyNode for ...``, Q/DQ reformats) match only by their whole name:
   their name parts point at the layer they feed, not at nodes of their own.
2. **Structure.** Where the names differ (a QAT export adds Q/DQ nodes and renumbers every node,
   another exporter names nodes its own way), the layers left over between two groups of pass 1
   are aligned as sequences of structural signatures (kind of op, input dims without the batch,
   output channels, kernel, stride, groups: the layer's place in the graph's compute order, as
   TREx's isomorphism compare matched them), first exactly, then on the kind and output channels
   alone. A layer left on one side whose op (``MaxPool_2``) the neighbouring group's other side
   names among its fused parts (``conv1.weight + Conv_9 + MaxPool_12``) joins that group: it was
   fused there.

Control-flow nodes (``If``, ``Loop``, ``Scan``) are never join keys: every layer inside a branch
names its ``If`` beside its own node, and the branch nodes align them (:func:`control_nodes`).
Myelin fusions (``runtime_fusion``) count as convolutions/GEMMs by what they cover
(``__myl_CorrMulAddRelu``, ``__myl_FcAdd``, or their ONNX nodes). A one-sided Myelin layer of no ONNX
node joins the group of a layer it feeds or is fed by (split off or absorbed there).

Each group gets one change label, the first that holds: ``only_base``/``only_other`` (one side
empty; ``format`` instead when that side holds reformats only: a reformat added or removed),
``fused`` (the sides hold different numbers of non-reformat layers, or a layer type changed, its
implementation aside, or, where the sides share ONNX node names, the nodes each layer covers),
``precision`` (compute precisions differ), ``tactic`` (kernel/tactic names differ), ``format``
(tensor formats differ), ``same``; what one side does not record (a names-only listing has no
precisions, tactics or formats; TensorRT-RTX 1.4's log has data types but no formats) is no change. A last pass pairs what is left by the op each layer's name speaks of
(``Conv-1 + ReLU-2`` and ``node_conv2d + node_relu`` are both a convolution), in order: names-only
listings have no types, and another exporter names nodes its own way.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

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


@dataclass(slots=True)
class ALayer:
    """One layer as the alignment sees it."""

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


@dataclass
class Group:
    """Aligned layers of both sides (positions in each engine's layer list) and how they matched."""

    base: list[int] = field(default_factory=list)
    other: list[int] = field(default_factory=list)
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
            return tuple(dict.fromkeys(n.strip() for n in found))
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
    """``[to_alayer(i, lay, memo) for i, lay in enumerate(layers)]``, the same views made in one
    loop (node_names' and _kind's common cases inline: 100,000 layers in a diff of two 50,000-layer
    engines)."""
    out: list[ALayer] = []
    append = out.append
    get = memo.get
    type_kind = _type_kind
    kinds: dict[tuple[str, str | None], tuple[str, bool]] = {}  # (type, parameter type) -> kind, Myelin fusion
    for pos, lay in enumerate(layers):
        md = lay.metadata
        if lay.onnx_nodes:
            nodes = node_names(lay, memo)
        else:
            key = md if md and "[ONNX Layer: " in md else "\x00" + lay.name
            nodes = get(key)  # type: ignore[assignment]
            if nodes is None:
                nodes = memo[key] = _node_names(lay, md)
        name, ltype = lay.name, lay.type
        if ltype == "Reformat" or lay.own_attrs().get("reformat") or name.startswith("Reformatting CopyNode") \
                or " reformatter " in name:
            kind = "reformat"
        else:
            tk = (ltype, lay.parameter_type)
            kind_fused = kinds.get(tk)
            if kind_fused is None:
                k = type_kind(ltype, lay.parameter_type)
                kind_fused = kinds[tk] = (k, k not in ("conv", "gemm") and ltype.lower() in _FUSED_TYPES)
            kind = kind_fused[0]
            if kind_fused[1]:
                kind = _fused_kind(name, nodes) or kind
        t = lay.time
        ins, outs = lay.inputs, lay.outputs
        prec = None
        for tensor in ins:  # Layer.precision, inline: the first input's dtype, else the first output's
            if tensor.dtype:
                prec = tensor.dtype
                break
        else:
            for tensor in outs:
                if tensor.dtype:
                    prec = tensor.dtype
                    break
        # the formats too, while the tensors are at hand (ALayer.formats; most groups compare them)
        fmts = tuple([str(x.format or "") for x in ins] + [str(x.format or "") for x in outs])
        append(ALayer(pos, name, ltype, kind, prec, lay.tactic or lay.tactic_value,
                      None if t is None else t.per_inference_ms, nodes, kind == "reformat", kind in ("conv", "gemm"),
                      lay, None, None, fmts))
    return out


_CONTROL_RE = re.compile(r"^(.*) \((?:If|Loop|Scan)\)$")
_CONTROL_OPS = frozenset(("if", "loop", "scan"))
_CONTROL_HINT = re.compile(r" \| |if|loop|scan", re.IGNORECASE)  # what every name control_nodes keeps holds


def control_nodes(*sides: Sequence[ALayer]) -> set[str]:
    """The control-flow nodes (``If``, ``Loop``, ``Scan``) the layers name: every layer inside a
    branch names its ``If`` beside its own node (``node_pad | true_graph_0 (then_branch) | node_cond__1
    (If)``), so they are never join keys; the branch's own nodes are."""
    names = {n for layers in sides for a in layers for n in a.nodes}
    out: set[str] = set()
    if not _CONTROL_HINT.search("\n".join(names)):  # most engines: no name could be one (one C scan)
        return out
    for n in names:
        if not _CONTROL_HINT.search(n):
            continue
        if " | " in n:
            for part in n.split(" | ")[1:]:
                m = _CONTROL_RE.match(part)
                if m:
                    out.add(m.group(1))
        elif _op_token(n) in _CONTROL_OPS:
            out.add(n)
    return out


def _by_names(base: Sequence[ALayer], other: Sequence[ALayer]) -> list[Group]:
    """Pass 1: groups of layers that share ONNX node names (reformats: their whole name; control-flow
    nodes are no key, :func:`control_nodes`). A union-find over integers (base layer p is p, other
    layer p is len(base) + p)."""
    control = control_nodes(base, other)
    nb = len(base)
    parent = list(range(nb + len(other)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    # every (name, layer) in order, base first; each name's first layer found by a dict made in C
    names = [("\x00" + a.name,) if a.reformat else a.nodes for layers in (base, other) for a in layers]
    flat = [n for ns in names for n in ns]
    keys = [k for k, ns in enumerate(names) for _ in ns]  # (base layer p is p, other layer p is nb + p)
    if control:
        kept = [i for i, n in enumerate(flat) if n not in control]
        flat, keys = [flat[i] for i in kept], [keys[i] for i in kept]
    first = dict(zip(reversed(flat), reversed(keys), strict=True))
    links = [(f, k) for f, k in zip(map(first.__getitem__, flat), keys, strict=True) if f != k]  # a name an earlier layer had
    for prev, key in links:
        ra, rb = find(prev), find(key)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    linked = set(itertools.chain.from_iterable(links))
    comps: dict[int, Group] = {}
    for k in sorted(linked):
        g = comps.get(r := find(k))
        if g is None:
            g = comps[r] = Group()
        (g.base if k < nb else g.other).append(k if k < nb else k - nb)
    out = []
    for g in comps.values():
        if not (g.base and g.other):
            continue
        # a node shared by convolutions of different shapes (a residual Add fused into another
        # convolution on each side) is no evidence: the structure pass aligns them
        if len(g.base) == 1 and len(g.other) == 1:
            a, o = base[g.base[0]], other[g.other[0]]
            # the same nodes are the same op; a partial match needs the same structure
            if a.nodes != o.nodes and (a.compute or o.compute) and (a.compute != o.compute or a.sig != o.sig):
                continue
        elif sorted(repr(base[i].sig) for i in g.base if base[i].compute) != \
                sorted(repr(other[i].sig) for i in g.other if other[i].compute):
            cb = [base[i] for i in g.base if base[i].compute]
            co = [other[i] for i in g.other if other[i].compute]
            # one convolution a side covering the same nodes is the same op, whatever else joined it
            # (an FP16 build's input Cast fused beside the first convolution: its tensors read otherwise)
            if not (len(cb) == len(co) == 1 and cb[0].nodes == co[0].nodes):
                continue
        g.matched_by = "name" if all(base[i].reformat for i in g.base) else "nodes"
        out.append(g)
    return out


def _match_seq(b: list[ALayer], o: list[ALayer], key: str) -> tuple[list[Group], list[ALayer], list[ALayer]]:
    """Groups of equal signatures in order (difflib's longest matching blocks), and what is left."""
    sb = [getattr(x, key) for x in b]
    so = [getattr(x, key) for x in o]
    sm = difflib.SequenceMatcher(None, sb, so, autojunk=False)
    groups: list[Group] = []
    used_b: set[int] = set()
    used_o: set[int] = set()
    for blk in sm.get_matching_blocks():
        for k in range(blk.size):
            groups.append(Group([b[blk.a + k].pos], [o[blk.b + k].pos], "structure" if key == "sig" else "structure-loose"))
            used_b.add(blk.a + k)
            used_o.add(blk.b + k)
    return groups, [x for i, x in enumerate(b) if i not in used_b], [x for i, x in enumerate(o) if i not in used_o]


def _anchors(groups: list[Group]) -> list[tuple[int, int]]:
    """(last base position, last other position) of the name groups that keep both orders."""
    pts = sorted((max(g.base), max(g.other)) for g in groups)
    out: list[tuple[int, int]] = []
    for b, o in pts:
        if not out or o > out[-1][1]:
            out.append((b, o))
    return out


class _Flow:
    """One engine's layer graph through its tensor names: the layers each layer feeds, seen through
    reformat and no-op layers (which a QAT export adds and removes around every Q/DQ)."""

    def __init__(self, layers: Sequence[Layer], views: Sequence[ALayer]) -> None:
        producer = {t.name: i for i, lay in enumerate(layers) for t in lay.outputs}  # (the last producer of a name)
        get = producer.get
        succ: list[list[int]] = [[] for _ in layers]
        pred: list[list[int]] = [[] for _ in layers]
        roots: list[int] = []
        for i, lay in enumerate(layers):
            ins = lay.inputs
            fed = not ins
            mine = pred[i]
            for t in ins:
                p = get(t.name)
                if p is None:
                    fed = True
                elif p != i and p not in mine:  # (i in succ[p] exactly when p in pred[i]: the shorter list)
                    succ[p].append(i)
                    mine.append(p)
            if fed:
                roots.append(i)
        self.succ, self.pred, self.roots = succ, pred, roots
        self.clear = [v.reformat or v.kind in ("noop", "shuffle") for v in views]
        self._eff: dict[int, list[int]] = {}

    def after(self, pos: int) -> list[int]:
        """The layers ``pos`` feeds (-1: the engine's inputs), through transparent layers."""
        got = self._eff.get(pos)
        if got is not None:
            return got
        out: list[int] = []
        seen: set[int] = set()
        stack = list(reversed(self.roots if pos < 0 else self.succ[pos]))
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            if self.clear[s]:
                stack.extend(reversed(self.succ[s]))
            else:
                out.append(s)
        out.sort()
        self._eff[pos] = out
        return out


class _Flows:
    """Both sides' :class:`_Flow`, each made on first use (two builds whose layers all pair by
    their names need neither: 0.1 s at 50,000 layers a side)."""

    def __init__(self, *sides: tuple[Sequence[Layer], Sequence[ALayer]]) -> None:
        self._sides = sides
        self._made: dict[int, _Flow] = {}

    def __getitem__(self, side: int) -> _Flow:
        got = self._made.get(side)
        if got is None:
            got = self._made[side] = _Flow(*self._sides[side])
        return got


def _pair(cb: list[ALayer], co: list[ALayer], key: str) -> tuple[list[tuple[int, int]], list[ALayer], list[ALayer]]:
    """Pairs of equal ``key`` signatures, in layer order within each signature; what is left."""
    by: dict[Any, list[ALayer]] = {}
    for a in co:
        by.setdefault(getattr(a, key), []).append(a)
    pairs: list[tuple[int, int]] = []
    left_b: list[ALayer] = []
    for a in cb:
        lst = by.get(getattr(a, key))
        if lst:
            pairs.append((a.pos, lst.pop(0).pos))
        else:
            left_b.append(a)
    used = {o for _, o in pairs}
    return pairs, left_b, [a for a in co if a.pos not in used]


def _by_flow(groups: list[Group], base: list[ALayer], other: list[ALayer], fb: _Flow, fo: _Flow,
             in_b: set[int], in_o: set[int]) -> None:
    """Pass 2a: from the engines' inputs and every group matched so far, pair the layers each
    side's group feeds, by signature (the compute order and topology of the two graphs)."""
    import heapq

    # in the base engine's layer order (a topological order): a pair reached by a short way round
    # (a residual branch) waits for the main path before it
    tick = 0
    queue: list[tuple[int, int, list[int], list[int], Group | None]] = [(-1, 0, [-1], [-1], None)]

    def push(bs: list[int], os_: list[int], g: Group | None) -> None:
        nonlocal tick
        tick += 1
        heapq.heappush(queue, (min(bs), tick, bs, os_, g))

    # the groups next to a layer not matched yet (most are not, between two builds alike): those
    # holding a layer that feeds one
    feeds_b = {p for s, ps in enumerate(fb.pred) if s not in in_b for p in ps}
    feeds_o = {p for s, ps in enumerate(fo.pred) if s not in in_o for p in ps}
    for g in list(groups):
        if not feeds_b.isdisjoint(g.base) or not feeds_o.isdisjoint(g.other):
            push(g.base, g.other, g)
    # layers one side's group feeds while the other's feeds none left (the two engines fused a
    # residual Add into different convolutions): paired among themselves once the walk stalls
    pend_b: dict[int, None] = {}
    pend_o: dict[int, None] = {}
    while queue or (pend_b and pend_o):
        if not queue:
            bs = [b for b in pend_b if b not in in_b]
            os_ = [o for o in pend_o if o not in in_o]
            pend_b.clear()
            pend_o.clear()
            cb, co, owner = [base[b] for b in sorted(bs)], [other[o] for o in sorted(os_)], None
        else:
            _, _, bs, os_, owner = heapq.heappop(queue)
            cb = [base[s] for s in dict.fromkeys(s for b in bs for s in fb.after(b)) if s not in in_b]
            co = [other[s] for s in dict.fromkeys(s for o in os_ for s in fo.after(o)) if s not in in_o]
        if not cb or not co:
            pend_b.update(dict.fromkeys(a.pos for a in cb))
            pend_o.update(dict.fromkeys(a.pos for a in co))
            if not cb and not co:
                continue
        pairs, lb, lo = _pair(cb, co, "sig")
        how = {p: "structure" for p in pairs}
        if lb and lo:
            more, lb, lo = _pair(lb, lo, "loose")
            how.update({p: "structure-loose" for p in more})
            pairs += more
        for b, o in pairs:
            g = Group([b], [o], how[(b, o)])
            groups.append(g)
            in_b.add(b)
            in_o.add(o)
            push([b], [o], g)
        if owner is None:
            continue
        # one side's layer the other side's group fused in: it joins the group, the walk goes on from it
        for side, left, used in ((0, lb, in_b), (1, lo, in_o)):
            for a in left:
                if _fused_into(a, owner, side, base, other):
                    _join(owner, side, a)
                    used.add(a.pos)
                    if side == 0:
                        push([a.pos], list(owner.other), owner)
                    else:
                        push(list(owner.base), [a.pos], owner)


def _orientation(layers: Sequence[Layer]) -> tuple[int, bytes]:
    """A key of a layer list that does not depend on which side it is given as: its length and a
    digest of its layers' names and types."""
    h = hashlib.blake2b(digest_size=16)  # one update of the whole text: the digest of one update a layer
    h.update("".join([f"{lay.name}\x1f{lay.type}\x1e" for lay in layers]).encode("utf-8", "surrogatepass"))
    return len(layers), h.digest()


def align(base_layers: Sequence[Layer], other_layers: Sequence[Layer]) -> tuple[list[Group], list[ALayer], list[ALayer]]:
    """The groups of ``base_layers`` and ``other_layers`` (every layer in exactly one group, in base
    order, one-sided groups placed where they occur) and both sides' :class:`ALayer` views.

    The alignment is the same whichever side is the base: the two lists are aligned in an order of
    their own (:func:`_orientation`), and the groups swapped where the base came second, so that
    ``diff(A, B)`` and ``diff(B, A)`` hold the same groups with their changes mirrored."""
    if _orientation(base_layers) <= _orientation(other_layers):
        return _align(base_layers, other_layers)
    groups, other, base = _align(other_layers, base_layers, labelled=False)
    for g in groups:
        g.base, g.other = g.other, g.base
        label(g, base, other)
    return _in_base_order(groups, len(other)), base, other


def _align(base_layers: Sequence[Layer], other_layers: Sequence[Layer],
           labelled: bool = True) -> tuple[list[Group], list[ALayer], list[ALayer]]:
    """:func:`align` in the order given (``labelled=False``: the groups' changes and order left for the caller,
    who swaps the sides first)."""
    memo: dict[str, tuple[str, ...]] = {}
    base = to_alayers(base_layers, memo)
    other = to_alayers(other_layers, memo)
    groups = _by_names(base, other)
    in_b = {i for g in groups for i in g.base}
    in_o = {i for g in groups for i in g.other}
    flows = _Flows((base_layers, base), (other_layers, other))
    if len(in_b) < len(base) or len(in_o) < len(other):  # (every layer paired by its names: no walk to take)
        _by_flow(groups, base, other, flows[0], flows[1], in_b, in_o)
    anchors = [(-1, -1), *_anchors(groups), (len(base), len(other))]
    for (b0, o0), (b1, o1) in zip(anchors, anchors[1:], strict=False):
        if b1 - b0 < 2 or o1 - o0 < 2:  # (most anchors are neighbours: nothing between them on a side)
            continue
        seg_b = [a for a in base[b0 + 1:b1] if a.pos not in in_b and not a.reformat]
        seg_o = [a for a in other[o0 + 1:o1] if a.pos not in in_o and not a.reformat]
        if not seg_b or not seg_o:
            continue
        found, seg_b, seg_o = _match_seq(seg_b, seg_o, "sig")
        more, seg_b, seg_o = _match_seq(seg_b, seg_o, "loose") if seg_b and seg_o else ([], seg_b, seg_o)
        for g in found + more:
            in_b.update(g.base)
            in_o.update(g.other)
            groups.append(g)
    # what is left anywhere: the same structure in the same order, across segments
    pairs, _, _ = _pair([a for a in base if a.pos not in in_b and not a.reformat],
                        [a for a in other if a.pos not in in_o and not a.reformat], "sig")
    for b, o in pairs:
        groups.append(Group([b], [o], "structure"))
        in_b.add(b)
        in_o.add(o)
    # last: the op each name speaks of (names-only listings have no types; another exporter names
    # "Conv-1" what this one names "node_conv2d"), in order
    left_b = [a for a in base if a.pos not in in_b and not a.reformat and a.name_class]
    left_o = [a for a in other if a.pos not in in_o and not a.reformat and a.name_class]
    if left_b and left_o:
        found, _, _ = _match_seq(left_b, left_o, "name_class")
        for g in found:
            g.matched_by = "op names"
            groups.append(g)
            in_b.update(g.base)
            in_o.update(g.other)
    _attach_fused(groups, base, other, in_b, in_o, flows)
    for side, layers, used in ((0, base, in_b), (1, other, in_o)):
        for a in layers:
            if a.pos not in used:
                groups.append(Group([a.pos], [], "none") if side == 0 else Group([], [a.pos], "none"))
    for g in groups:
        g.base.sort()
        g.other.sort()
        if labelled:
            label(g, base, other)
    # (unlabelled, the caller swaps the sides and orders the groups itself: each group's key is its
    # own, so no order made here would survive)
    return (_in_base_order(groups, len(other)) if labelled else groups), base, other


def _in_base_order(groups: list[Group], n_other: int) -> list[Group]:
    """``groups`` sorted in base order; a group only in other sits after the group that precedes
    it in other's order."""
    placed: list[int] = [-1] * n_other  # base position of the group of each other layer (-1: none)
    for g in groups:
        for p in g.other:
            placed[p] = g.base[0] if g.base else -1
    before = [-1] * (n_other + 1)  # the latest base position placed before each other position
    for p, b in enumerate(placed):
        before[p + 1] = max(before[p], b)

    def key(g: Group) -> tuple[float, int]:
        if g.base:
            return (g.base[0], g.other[0] if g.other else -1)
        return (before[g.other[0]] + 0.5, g.other[0])
    groups.sort(key=key)
    return groups


def _attach_fused(groups: list[Group], base: list[ALayer], other: list[ALayer], in_b: set[int], in_o: set[int],
                  flows: _Flows) -> None:
    """A layer left on one side joins the neighbouring group whose other side names its op among
    its fused parts (``MaxPool_2`` beside ``conv1.weight + ... + Conv_9 + MaxPool_12``); a Myelin
    layer of no ONNX node (``__myl_Tran_myl0_74``) left on one side joins the group of a layer it
    feeds or is fed by: its work was split off or absorbed there (``__myl_MoveMean`` -> ``__myl_Tran``
    + ``__myl_Mean``)."""
    if len(in_b) == len(base) and len(in_o) == len(other):
        return  # every layer has its group
    where: dict[tuple[int, int], Group] = {}
    for g in groups:
        for p in g.base:
            where[(0, p)] = g
        for p in g.other:
            where[(1, p)] = g
    for side, layers, used in ((0, base, in_b), (1, other, in_o)):
        for a in layers:
            if a.pos in used or a.reformat:
                continue
            for step in (-1, 1, -2, 2):
                near = where.get((side, a.pos + step))
                if near is not None and _fused_into(a, near, side, base, other):
                    _join(near, side, a)
                    used.add(a.pos)
                    where[(side, a.pos)] = near
                    break
    for side, layers, used in ((0, base, in_b), (1, other, in_o)):
        for a in layers:
            if a.pos in used or a.reformat or a.compute or not _myelin_own(a):
                continue
            flow = flows[side]
            for n in (*flow.succ[a.pos], *flow.pred[a.pos]):
                near = where.get((side, n))
                if near is not None and near.base and near.other:
                    _join(near, side, a)
                    used.add(a.pos)
                    where[(side, a.pos)] = near
                    break


_MYELIN_NAME = re.compile(r"_myl\d+_\d+$")


def _myelin_own(a: ALayer) -> bool:
    """A layer Myelin made of no ONNX node: its name is its own (``__myl_Tran_myl0_74``), no metadata names a node."""
    lay = a.layer
    return not lay.onnx_nodes and not (lay.metadata and "[ONNX Layer: " in lay.metadata) and \
        bool(_MYELIN_NAME.search(lay.name))


def _fused_into(a: ALayer, g: Group, side: int, base: list[ALayer], other: list[ALayer]) -> bool:
    """Whether ``a``, left on ``side`` (0 base, 1 other), was fused into ``g`` on the other side: it
    is no convolution or GEMM (those are never fused into another one) and its op is among the
    other side's fused parts but not among its own side's."""
    if a.compute:
        return False
    mine, opp = (g.base, g.other) if side == 0 else (g.other, g.base)
    own_layers, opp_layers = (base, other) if side == 0 else (other, base)
    opp_ops = frozenset().union(*(opp_layers[i].ops for i in opp))
    own_ops = frozenset().union(*(own_layers[i].ops for i in mine))
    return bool((a.ops - {a.type.lower()}) & (opp_ops - own_ops))


def _join(g: Group, side: int, a: ALayer) -> None:
    """``a`` joins ``g`` on ``side``, fused there."""
    (g.base if side == 0 else g.other).append(a.pos)
    if g.matched_by != "nodes":
        g.matched_by = f"{g.matched_by}+fused"


def _set(layers: list[ALayer], idx: list[int], attr: str) -> list[str]:
    if len(idx) == 1:
        v = getattr(layers[idx[0]], attr)
        return [str(v)] if v else []
    return sorted({str(v) for v in (getattr(layers[i], attr) for i in idx) if v})


def _known(formats: tuple[str, ...]) -> bool:
    return bool(formats) and all(formats)


def _differ(a: list[str], b: list[str]) -> bool:
    """Two sides' values differ, both known (what one side does not record is no change)."""
    return bool(a) and bool(b) and a != b


def label(g: Group, base: list[ALayer], other: list[ALayer]) -> None:
    """Set ``g.change`` and ``g.reason`` (one-sided, fused and format groups), see the module docstring."""
    g.reason = ""
    if not g.base or not g.other:
        layers, idx, where = (other, g.other, "base") if not g.base else (base, g.base, "other")
        if all(layers[i].reformat for i in idx):
            g.change = "format"
            a = layers[idx[0]]
            what = "Q/DQ layer" if "quantize" in a.name.lower() else "reformat"
            g.reason = f"{what} {'added' if not g.base else 'removed'}: {where} has no such layer"
        else:
            g.change = "only_other" if not g.base else "only_base"
            a = layers[idx[0]]
            nodes = ", ".join(a.nodes[:3]) or a.name
            g.reason = (f"no layer of {where} covers its ONNX nodes ({nodes}) or has its structure "
                        f"({a.kind}{'' if a.sig[2] is None else f', {a.sig[2]} out'})")
        return
    if len(g.base) == 1 and len(g.other) == 1:  # most groups: one layer a side
        a, o = base[g.base[0]], other[g.other[0]]
        if a.reformat == o.reformat:
            fused = _refused([a], [o])
            if fused:
                g.change, g.reason = "fused", fused
            # what one side does not record (a names-only listing) is no change
            elif a.precision and o.precision and a.precision != o.precision:
                g.change = "precision"
            elif a.tactic and o.tactic and a.tactic != o.tactic:
                g.change = "tactic"
            else:
                fa, fo = a.formats, o.formats
                if fa != fo and _known(fa) and _known(fo):
                    g.change, g.reason = "format", _format_reason([a], [o])
                else:
                    g.change = "same"
            return
    real_b = [base[i] for i in g.base if not base[i].reformat]
    real_o = [other[i] for i in g.other if not other[i].reformat]
    if len(real_b) != len(real_o):
        g.change = "fused"
        g.reason = (f"{len(real_b)} -> {len(real_o)} layers: "
                    f"{', '.join(a.name for a in real_b[:3])} -> {', '.join(a.name for a in real_o[:3])}")
    elif fused := _refused(real_b, real_o):
        g.change, g.reason = "fused", fused
    elif _differ(_set(base, [a.pos for a in real_b] or g.base, "precision"),
                 _set(other, [a.pos for a in real_o] or g.other, "precision")):
        g.change = "precision"
    elif _differ(_set(base, g.base, "tactic"), _set(other, g.other, "tactic")):
        g.change = "tactic"
    elif all(_known(base[i].formats) for i in g.base) and all(_known(other[i].formats) for i in g.other) and \
            [base[i].formats for i in g.base] != [other[i].formats for i in g.other]:
        g.change = "format"
        g.reason = _format_reason([base[i] for i in g.base], [other[i] for i in g.other])
    else:
        g.change = "same"


def _refused(bs: list[ALayer], os_: list[ALayer]) -> str:
    """Why layers aligned one for one were fused otherwise ("" where they were not): a layer type
    changed (``gemm`` -> ``runtime_fusion``: a bias Add folded into the FC), or, where the two
    sides name the same ONNX nodes, the nodes each layer covers."""
    if len(bs) == 1 and len(os_) == 1 and bs[0].type == os_[0].type and bs[0].nodes == os_[0].nodes:
        return ""  # most groups of two builds: one layer a side, same type, same nodes
    tb = [_op_type(a.type) for a in bs]
    to = [_op_type(a.type) for a in os_]
    if all(tb) and all(to) and sorted(tb) != sorted(to):
        pairs = [f"{x} -> {y}" for x, y in zip(tb, to, strict=False) if x != y] or [f"{', '.join(tb)} -> {', '.join(to)}"]
        return f"layer type {'; '.join(pairs[:3])}{_covers(bs, os_)}"
    nb = [frozenset(a.nodes) for a in bs]
    no = [frozenset(a.nodes) for a in os_]
    if sorted(map(sorted, nb)) != sorted(map(sorted, no)) and frozenset().union(*nb) & frozenset().union(*no):
        return f"the ONNX nodes each layer covers changed{_covers(bs, os_)}"
    return ""


_IMPL_RE = re.compile(r"^(?:cublaslt|cublas|cudnn|cuda|cask|tiled|generic)(?=[a-z])")


@functools.lru_cache(maxsize=512)
def _op_type(type_: str) -> str:
    """A layer type without its implementation (TensorRT's ``CaskConvolution``, ``CudnnConvolution`` ->
    ``convolution``; ``TiledPooling``, ``CudaPooling`` -> ``pooling``: a kernel choice, no fusion);
    "" where the listing records none (a names-only listing's ``unknown``)."""
    t = type_.lower()
    return "" if t in ("", "unknown") else _IMPL_RE.sub("", t)


def _covers(bs: list[ALayer], os_: list[ALayer]) -> str:
    def nodes(layers: list[ALayer]) -> str:
        got = list(dict.fromkeys(_short(n) for a in layers for n in a.nodes))
        return ", ".join(got[:4]) + (", ..." if len(got) > 4 else "") if got else "no node named"
    b, o = nodes(bs), nodes(os_)
    return f" (covers {b} -> {o})" if b != o else ""


def _short(node: str) -> str:
    return node.split(" | ", 1)[0]


def _format_reason(bs: list[ALayer], os_: list[ALayer]) -> str:
    """Which tensors changed format, both sides' formats."""
    out = []
    for a, o in zip(bs, os_, strict=False):
        la, lo = a.layer, o.layer
        for what, ta, to in (("input", la.inputs, lo.inputs), ("output", la.outputs, lo.outputs)):
            for k, (x, y) in enumerate(zip(ta, to, strict=False)):
                if (x.format or "") != (y.format or ""):
                    out.append(f"{what} {k} {x.format} -> {y.format}")
            if len(ta) != len(to):
                out.append(f"{len(ta)} -> {len(to)} {what}s")
    return "tensor format: " + "; ".join(out[:3]) + (f" and {len(out) - 3} more" if len(out) > 3 else "") if out \
        else "tensor formats differ"


def formats_of(layers: list[ALayer], idx: list[int]) -> list[list[str]]:
    """Each layer's tensor formats (inputs then outputs), for a group's JSON."""
    return [list(layers[i].formats) for i in idx]


def lacks_formats(layers: Sequence[ALayer]) -> bool:
    """Whether a listing records no tensor format at all (TensorRT-RTX 1.4's log: data types only),
    though its layers have tensors."""
    with_tensors = [a for a in layers if a.layer.inputs or a.layer.outputs]
    return bool(with_tensors) and not any(any(a.formats) for a in with_tensors)
