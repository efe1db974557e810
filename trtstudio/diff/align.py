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

import array
import bisect
import difflib
import functools
import hashlib
import itertools
import operator
import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from trtstudio.diff.views import (  # noqa: F401 - CHANGES, node_names and to_alayer: this module's names as ever
    CHANGES,
    ALayer,
    Group,
    _op_token,
    node_names,
    to_alayer,
    to_alayers,
)
from trtstudio.engine.model import Layer

_CONTROL_RE = re.compile(r"^(.*) \((?:If|Loop|Scan)\)$")
_CONTROL_OPS = frozenset(("if", "loop", "scan"))
_CONTROL_HINT = re.compile(r" \| |if|loop|scan", re.IGNORECASE)  # what every name control_nodes keeps holds


def control_nodes(*sides: Sequence[ALayer]) -> set[str]:
    """The control-flow nodes (``If``, ``Loop``, ``Scan``) the layers name: every layer inside a
    branch names its ``If`` beside its own node (``node_pad | true_graph_0 (then_branch) | node_cond__1
    (If)``), so they are never join keys; the branch's own nodes are."""
    every = [n for layers in sides for a in layers for n in a.nodes]
    out: set[str] = set()
    text = "\n".join(every)
    if text.isascii():  # most engines: no name could be one (four C scans of the lower-cased text)
        low = text.lower()
        if " | " not in low and "if" not in low and "loop" not in low and "scan" not in low:
            return out
    elif not _CONTROL_HINT.search(text):  # (the regex's case folding, beyond ASCII, is its own)
        return out
    for n in set(every):
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
    nodes are no key, :func:`control_nodes`), in the order of their first layer (base layer p is p,
    other layer p is len(base) + p).

    The layers that share a name are linked (each to the first layer of that name) and the
    components found by numpy, each layer labelled with the least layer of its own (labels lowered
    along the links and through each other until none changes); most components are a layer a
    side, taken in bulk, the others one by one."""
    import numpy as np

    control = control_nodes(base, other)
    nb = len(base)
    n = nb + len(other)
    # every (name, layer) in order, base first; each name's first layer found by a dict made in C
    names = [("\x00" + a.name,) if a.reformat else a.nodes for layers in (base, other) for a in layers]
    flat = list(itertools.chain.from_iterable(names))
    keys = np.repeat(np.arange(n, dtype=np.int64), np.fromiter(map(len, names), np.int64, n))
    if control:
        kept = [x not in control for x in flat]
        flat, keys = list(itertools.compress(flat, kept)), keys[np.array(kept, dtype=bool)]
    first = dict(zip(reversed(flat), reversed(keys.tolist()), strict=True))
    prev = np.fromiter(map(first.__getitem__, flat), np.int64, len(flat))
    linked = prev != keys  # a name an earlier layer had
    prev, keys = prev[linked], keys[linked]
    if not len(prev):
        return []
    label = np.arange(n, dtype=np.int64)
    while True:
        low = np.minimum(label[prev], label[keys])
        new = label.copy()
        np.minimum.at(new, prev, low)
        np.minimum.at(new, keys, low)
        while True:  # each label to its label's label, until they stand still
            deeper = new[new]
            if np.array_equal(deeper, new):
                break
            new = deeper
        if np.array_equal(new, label):
            break
        label = new
    members = np.unique(np.concatenate((prev, keys)))  # (sorted)
    members = members[np.lexsort((members, label[members]))]  # by component (its least layer), then layer
    roots = label[members]
    starts = np.flatnonzero(np.concatenate(([True], roots[1:] != roots[:-1])))
    sizes = np.diff(np.append(starts, len(members)))
    # a layer a side covering the same nodes (most components): in bulk; the others one by one
    two = starts[sizes == 2]
    b_at, o_at = members[two], members[two + 1]
    pairs = (b_at < nb) & (o_at >= nb)
    pair_at, bl, ol = two[pairs], b_at[pairs].tolist(), (o_at[pairs] - nb).tolist()
    av = list(map(base.__getitem__, bl))
    same = list(map(operator.eq, map(_NODES, av), map(_NODES, map(other.__getitem__, ol))))
    out = [Group([b], [o], "name" if r else "nodes") for b, o, r in
           zip(itertools.compress(bl, same), itertools.compress(ol, same), itertools.compress(map(_REFORMAT, av), same),
               strict=True)]
    where = pair_at[np.array(same, dtype=bool)].tolist()  # each group's component: where it starts among the members
    bulk = len(out)
    for k in itertools.compress(range(len(bl)), map(operator.not_, same)):
        g = _shared([bl[k], ol[k] + nb], nb, base, other)
        if g is not None:
            out.append(g)
            where.append(int(pair_at[k]))
    for c in np.flatnonzero(sizes != 2).tolist():
        g = _shared(members[starts[c]:starts[c] + sizes[c]].tolist(), nb, base, other)
        if g is not None:
            out.append(g)
            where.append(int(starts[c]))
    if len(out) > bulk:  # the components in the order of their least layer
        out = [out[i] for i in sorted(range(len(out)), key=where.__getitem__)]
    return out


_NODES, _REFORMAT = operator.attrgetter("nodes"), operator.attrgetter("reformat")


def _shared(members: list[int], nb: int, base: Sequence[ALayer], other: Sequence[ALayer]) -> Group | None:
    """The group of a component of pass 1 (its layers in ascending order, base before other), or
    None where it holds one side only or its names are no evidence."""
    cut = bisect.bisect_left(members, nb)
    if cut in (0, len(members)):
        return None
    gb, go = members[:cut], [k - nb for k in members[cut:]]
    if len(gb) == 1 and len(go) == 1:
        a, o = base[gb[0]], other[go[0]]
        # the same nodes are the same op; a partial match needs the same structure
        if a.nodes != o.nodes and (a.compute or o.compute) and (a.compute != o.compute or a.sig != o.sig):
            return None
    # a node shared by convolutions of different shapes (a residual Add fused into another
    # convolution on each side) is no evidence: the structure pass aligns them
    elif sorted(repr(base[i].sig) for i in gb if base[i].compute) != \
            sorted(repr(other[i].sig) for i in go if other[i].compute):
        cb = [base[i] for i in gb if base[i].compute]
        co = [other[i] for i in go if other[i].compute]
        # one convolution a side covering the same nodes is the same op, whatever else joined it
        # (an FP16 build's input Cast fused beside the first convolution: its tensors read otherwise)
        if not (len(cb) == len(co) == 1 and cb[0].nodes == co[0].nodes):
            return None
    return Group(gb, go, "name" if all(base[i].reformat for i in gb) else "nodes")


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


def _graph(layers: Sequence[Layer]) -> tuple[list[list[int]], list[list[int]], list[int]]:
    """An engine's layer graph through its tensor names: the layers each layer feeds, those it is
    fed by (in the order of its inputs), and those the engine's inputs feed (no input, or one no
    layer makes)."""
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
    return succ, pred, roots


class FlowGraph(NamedTuple):
    """:func:`_graph` flat, as another process sends it (:mod:`trtstudio.diff.prefetch`): layer
    ``p`` feeds ``succ_idx[succ_off[p]:succ_off[p + 1]]`` and is fed by the same run of ``pred``
    (arrays of machine integers: 8 bytes an entry, pickled as one block each)."""

    succ_off: array.array[int]
    succ_idx: array.array[int]
    pred_off: array.array[int]
    pred_idx: array.array[int]
    roots: list[int]


def flow_graph(layers: Sequence[Layer]) -> FlowGraph:
    """The :class:`FlowGraph` of ``layers``."""
    succ, pred, roots = _graph(layers)

    def flat(runs: list[list[int]]) -> tuple[array.array[int], array.array[int]]:
        return array.array("q", [0, *itertools.accumulate(map(len, runs))]), \
            array.array("q", itertools.chain.from_iterable(runs))
    return FlowGraph(*flat(succ), *flat(pred), roots)


Graphs = Callable[[int], "FlowGraph | None"]  # side (0 base, 1 other) -> its graph, where one is ready
Known = Callable[[str, int], Any]  # ("orientation" | "graph", side) -> what another process worked out, or None


class _Runs:
    """The runs of a flat :class:`FlowGraph`, indexed as the list of lists they stand for."""

    __slots__ = ("idx", "off")

    def __init__(self, off: array.array[int], idx: array.array[int]) -> None:
        self.off, self.idx = off, idx

    def __getitem__(self, p: int) -> list[int]:
        return self.idx[self.off[p]:self.off[p + 1]].tolist()


class _Flow:
    """One engine's layer graph through its tensor names (:func:`_graph`, or the same graph another
    process worked out, ``graph``): the layers each layer feeds, seen through reformat and no-op
    layers (which a QAT export adds and removes around every Q/DQ)."""

    def __init__(self, layers: Sequence[Layer], views: Sequence[ALayer], graph: FlowGraph | None = None) -> None:
        self.succ: _Runs | list[list[int]]
        self.pred: _Runs | list[list[int]]
        if graph is not None and len(graph.succ_off) == len(graph.pred_off) == len(layers) + 1:
            self.succ, self.pred, self.roots = _Runs(graph.succ_off, graph.succ_idx), \
                _Runs(graph.pred_off, graph.pred_idx), graph.roots
        else:
            self.succ, self.pred, self.roots = _graph(layers)
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

    def __init__(self, graphs: Graphs | None, *sides: tuple[Sequence[Layer], Sequence[ALayer]]) -> None:
        self._graphs = graphs
        self._sides = sides
        self._made: dict[int, _Flow] = {}

    def __getitem__(self, side: int) -> _Flow:
        got = self._made.get(side)
        if got is None:
            graph = self._graphs(side) if self._graphs is not None else None
            got = self._made[side] = _Flow(*self._sides[side], graph)
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
    feeds_b = {p for s in set(range(len(base))) - in_b for p in fb.pred[s]}
    feeds_o = {p for s in set(range(len(other))) - in_o for p in fo.pred[s]}
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


def orientation(layers: Sequence[Layer]) -> tuple[int, bytes]:
    """A key of a layer list that does not depend on which side it is given as: its length and a
    digest of its layers' names and types."""
    h = hashlib.blake2b(digest_size=16)  # one update of the whole text: the digest of one update a layer
    h.update("".join([f"{lay.name}\x1f{lay.type}\x1e" for lay in layers]).encode("utf-8", "surrogatepass"))
    return len(layers), h.digest()


def align(base_layers: Sequence[Layer], other_layers: Sequence[Layer],
          known: Known | None = None) -> tuple[list[Group], list[ALayer], list[ALayer]]:
    """The groups of ``base_layers`` and ``other_layers`` (every layer in exactly one group, in base
    order, one-sided groups placed where they occur) and both sides' :class:`ALayer` views.
    ``known(what, side)``: what another process worked out of a side (0 the base, 1 the other)
    where it has it ready when asked, else None: its ``"orientation"`` (:func:`orientation`) and
    its ``"graph"`` (:class:`FlowGraph`, asked when the structure pass first needs it).

    The alignment is the same whichever side is the base: the two lists are aligned in an order of
    their own (:func:`orientation`), and the groups swapped where the base came second, so that
    ``diff(A, B)`` and ``diff(B, A)`` hold the same groups with their changes mirrored."""
    memo: dict[str, tuple[str, ...]] = {}
    base = to_alayers(base_layers, memo)
    other = to_alayers(other_layers, memo)
    kb = (known("orientation", 0) if known is not None else None) or orientation(base_layers)
    ko = (known("orientation", 1) if known is not None else None) or orientation(other_layers)
    if kb <= ko:
        graphs = None if known is None else lambda side: known("graph", side)
        return _align(base_layers, other_layers, base, other, graphs=graphs)
    swapped = None if known is None else lambda side: known("graph", 1 - side)
    groups, _, _ = _align(other_layers, base_layers, other, base, labelled=False, graphs=swapped)
    for g in groups:
        g.base, g.other = g.other, g.base
        label(g, base, other)
    return _in_base_order(groups, len(other)), base, other


def _align(base_layers: Sequence[Layer], other_layers: Sequence[Layer], base: list[ALayer], other: list[ALayer],
           labelled: bool = True, graphs: Graphs | None = None) -> tuple[list[Group], list[ALayer], list[ALayer]]:
    """:func:`align` in the order given, of the sides' layers and their views (``labelled=False``:
    the groups' changes and order left for the caller, who swaps the sides first)."""
    groups = _by_names(base, other)
    in_b = {i for g in groups for i in g.base}
    in_o = {i for g in groups for i in g.other}
    flows = _Flows(graphs, (base_layers, base), (other_layers, other))
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
    where: tuple[list[Group | None], list[Group | None]] = ([None] * len(base), [None] * len(other))  # a layer's group
    wb, wo = where
    for g in groups:
        for p in g.base:
            wb[p] = g
        for p in g.other:
            wo[p] = g
    for side, layers, used in ((0, base, in_b), (1, other, in_o)):
        w = where[side]
        for pos in sorted(set(range(len(layers))) - used):  # the layers left, in order
            a = layers[pos]
            if a.reformat:
                continue
            for step in (-1, 1, -2, 2):
                near = w[pos + step] if 0 <= pos + step < len(w) else None
                if near is not None and _fused_into(a, near, side, base, other):
                    _join(near, side, a)
                    used.add(pos)
                    w[pos] = near
                    break
    for side, layers, used in ((0, base, in_b), (1, other, in_o)):
        w = where[side]
        for pos in sorted(set(range(len(layers))) - used):
            a = layers[pos]
            if a.reformat or a.compute or not _myelin_own(a):
                continue
            flow = flows[side]
            for n in (*flow.succ[pos], *flow.pred[pos]):
                near = w[n]
                if near is not None and near.base and near.other:
                    _join(near, side, a)
                    used.add(pos)
                    w[pos] = near
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


def _formats_differ(a: ALayer, o: ALayer) -> bool:
    """The two layers' tensor formats differ, both known (:attr:`ALayer.formats`); the tensors'
    own format strings first, which are equal for most layers of two builds (then so are their
    formats, and no tuple of them is made)."""
    la, lo = a.layer, o.layer
    if [t.format for t in la.inputs] == [t.format for t in lo.inputs] and \
            [t.format for t in la.outputs] == [t.format for t in lo.outputs]:
        return False
    fa, fo = a.formats, o.formats
    return fa != fo and _known(fa) and _known(fo)


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
            # (_refused's first test here: most groups of two builds are one layer a side, same type, same nodes)
            fused = "" if a.type == o.type and a.nodes == o.nodes else _refused([a], [o])
            if fused:
                g.change, g.reason = "fused", fused
            # what one side does not record (a names-only listing) is no change
            elif a.precision and o.precision and a.precision != o.precision:
                g.change = "precision"
            elif a.tactic and o.tactic and a.tactic != o.tactic:
                g.change = "tactic"
            elif _formats_differ(a, o):
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
    seen = False
    for a in layers:  # (most listings: the first layer with tensors has a format)
        lay = a.layer
        if lay.inputs or lay.outputs:
            if any(a.formats):
                return False
            seen = True
    return seen
