"""What the graph view draws: the display graph (inputs, nodes, outputs) and its layout.

Plain numpy, no Qt, so it can run in a worker thread: loading and laying out a 100k-node model
never blocks the GUI thread. Constant and shape-computation chains can be folded into their
consumer (``trtstudio.graph.fold``): folded items keep their display index but take no place in
the layout; they sit at their host's position, and their edges are not drawn.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from trtstudio.bigdocs.gcpause import gc_paused
from trtstudio.graph.categories import CATEGORIES, category
from trtstudio.graph.fold import FOLD_DEFAULT_MIN_NODES, Folding, fold_constants, no_folding
from trtstudio.graph.layout import Layout, layout
from trtstudio.graph.model import Graph

NODE_H = 36.0
IO_H = 28.0
BIG_GRAPH = 20_000  # above this many display items, fewer crossing-reduction sweeps (first frame first)
FIRST_SCREEN = 4000  # nodes placed before the first frame of a big graph
SHAPE_LABEL_MAX = 26  # characters of an edge's shape label; the full text is in the tooltip
_DIM_MAX = 10


_DIM_WORDS = re.compile(r"(?:dynamic_?)?dim(?:ension)?", re.IGNORECASE)


def short_dim(dim: str) -> str:
    """The readable part of a symbolic dim: exporters' generated names lose their namespace and
    boilerplate (``p2o.DynamicDimension.0`` -> ``d0``, ONNX's ``unk__2`` -> ``?2``, ``s77``); a
    user's name is kept (``batch``, ``height``) or cut to :data:`_DIM_MAX` characters. Numbers are
    kept as they are."""
    d = dim.strip()
    if not d or d.lstrip("-").isdigit():
        return d
    m = re.fullmatch(r"unk__(\d+)", d)
    if m:
        return f"?{m.group(1)}"
    parts = [p for p in d.split(".") if p]
    if len(parts) > 1:  # a namespace (p2o., torch.) and a generated word: the word's initial and the number
        word = next((p for p in reversed(parts) if not p.isdigit()), parts[-1])
        num = parts[-1] if parts[-1].isdigit() else ""
        if _DIM_WORDS.fullmatch(word):
            return f"d{num}"
        d = word + (num if num else "")
    if len(d) > _DIM_MAX:
        d = d[: _DIM_MAX - 1] + "…"
    return d


def short_shape(text: str, limit: int = SHAPE_LABEL_MAX) -> str:
    """A shape label short enough for an edge: symbolic dims shortened to their readable part
    (:func:`short_dim`), then elided; the full text goes in the tooltip.

    ``[p2o.DynamicDimension.0,16,unk__2,unk__3]`` -> ``[d0,16,?2,?3]``."""
    inner = text[1:-1] if text.startswith("[") and text.endswith("]") else None
    if inner is not None and any(not d.strip().lstrip("-").isdigit() for d in inner.split(",") if d.strip()):
        text = "[" + ",".join(short_dim(d) for d in inner.split(",")) + "]"
    if len(text) > limit:
        keep = limit - 1
        text = text[: keep - keep // 3] + "…" + text[len(text) - keep // 3:]
    return text


@dataclass
class Placement:
    """One layout of a display graph under one folding (computed in a worker, applied in the GUI)."""

    folding: Folding  # node-level
    hidden: np.ndarray  # bool per display item
    host: np.ndarray  # display index of the host of a hidden item, else -1
    fold_count: np.ndarray  # per display item: how many nodes are folded into it
    edges: np.ndarray  # indices into the display graph's edges that are drawn
    lay: Layout  # x/y/layer/order for every display item (hidden ones at their host); polylines of ``edges``
    edge_bbox: np.ndarray  # xmin, ymin, xmax, ymax per drawn edge
    complete: bool = True  # False: only the top of a big graph is placed (the rest hidden, host -1)
    # per drawn edge: whether it carries its tensor's shape label (one per tensor leaving an item)
    labelled: np.ndarray | None = None


@dataclass
class DisplayGraph:
    """Display items: graph inputs first, then the graph's nodes, then graph outputs.

    Edges are kept twice: every edge (``all_src``, ``all_dst``, ``all_tensors``) and the drawn ones
    under the current folding (``src``, ``dst``, indexed like ``lay.edge_offsets``)."""

    graph: Graph
    kind: np.ndarray  # 0 input, 1 node, 2 output
    ref: list[str | int]  # tensor name for inputs/outputs, node index for nodes
    labels: list[str]
    sublabels: list[str]
    cats: list[str]
    widths: np.ndarray
    heights: np.ndarray
    all_src: np.ndarray
    all_dst: np.ndarray
    all_tensors: list[str]
    node_offset: int  # display index of graph.nodes[0]
    placement: Placement
    src: np.ndarray
    dst: np.ndarray

    @property
    def n(self) -> int:
        return len(self.kind)

    @property
    def lay(self) -> Layout:
        return self.placement.lay

    @property
    def edge_bbox(self) -> np.ndarray:
        return self.placement.edge_bbox

    @property
    def hidden(self) -> np.ndarray:
        return self.placement.hidden

    @property
    def folding(self) -> Folding:
        return self.placement.folding

    @property
    def folded_count(self) -> int:
        """Nodes hidden in their consumer under the current folding."""
        return int((self.placement.host >= 0).sum())

    def display_index(self, node_index: int) -> int:
        return self.node_offset + node_index

    def display_indices(self, names: Iterable[str]) -> list[int]:
        """The display indices of the nodes of these names (names not in the graph skipped),
        ascending. Looked up in C: a selection of every layer names 100,000s of nodes."""
        found = list(map(self.graph.node_by_name.get, names))
        if None in found:
            found = [i for i in found if i is not None]
        return self.display_indices_of(np.asarray(found, dtype=np.int64))

    def display_indices_of(self, node_index: np.ndarray) -> list[int]:
        """The display indices of these graph node indices, ascending."""
        return (np.sort(node_index) + self.node_offset).tolist()  # type: ignore[no-any-return]

    def node_index(self, display_index: int) -> int | None:
        i = display_index - self.node_offset
        return i if 0 <= i < len(self.graph.nodes) else None

    @cached_property
    def category_codes(self) -> np.ndarray:
        """Each item's category as its position in ``CATEGORIES`` (one past the end: a graph input or
        output; "other" for a category not listed), int32. Made with the display (in the loader's
        worker): 30-60 ms of the GUI thread at 100,000 nodes, twice that while a worker runs."""
        keys = list(CATEGORIES)
        index = {k: i for i, k in enumerate(keys)}
        index["io"] = len(keys)
        other = index["other"]
        return np.fromiter((index.get(c, other) for c in self.cats), np.int32, len(self.cats))

    @cached_property
    def tensor_ids(self) -> np.ndarray:
        """A number per tensor name (its ``hash``, which the strings already hold), for each edge
        in ``all_tensors``' order: equal for one tensor's edges, and for two tensors of one node
        only if their 64-bit hashes collide (one label would then be missing)."""
        return np.fromiter(map(hash, self.all_tensors), np.int64, len(self.all_tensors))

    def edge_labelled(self, e: int) -> bool:
        """Whether drawn edge ``e`` carries its tensor's shape label."""
        lab = self.placement.labelled
        return lab is None or bool(lab[e])

    def edge_tensor(self, e: int) -> str:
        """Tensor name of drawn edge ``e``."""
        return self.all_tensors[int(self.placement.edges[e])]

    def edge_label_full(self, e: int) -> str:
        t = self.graph.tensors.get(self.edge_tensor(e))
        return t.shape_text() if t is not None and t.shape is not None else ""

    def edge_label(self, e: int) -> str:
        """Shape of drawn edge ``e``, shortened for the canvas (see :func:`short_shape`)."""
        return short_shape(self.edge_label_full(e))

    def sublabel_full(self, i: int) -> str:
        """Item ``i``'s second line in full (a graph input's or output's dtype and whole shape, for the
        tooltip; the canvas draws ``sublabels[i]``, its symbolic dims shortened)."""
        if int(self.kind[i]) == 1:
            return self.sublabels[i]
        t = self.graph.tensors.get(str(self.ref[i]))
        return f"{t.dtype} {t.shape_text()}" if t is not None else self.sublabels[i]

    def folded_into(self, display_index: int) -> list[int]:
        """Display indices of the items folded into ``display_index``."""
        return [int(i) for i in np.flatnonzero(self.placement.host == display_index)]

    def visible_index(self, display_index: int) -> int:
        """The item drawn for ``display_index``: itself, or its host when it is folded."""
        h = int(self.placement.host[display_index])
        return h if h >= 0 else display_index

    def visible_indices(self, items: set[int]) -> set[int]:
        """:meth:`visible_index` of each item (in range) of ``items``, with numpy: a search can
        highlight 10,000s of nodes, and the view asks on every paint."""
        if not items:
            return set()
        idx = np.fromiter(items, dtype=np.int64, count=len(items))
        idx = idx[(idx >= 0) & (idx < self.n)]
        host = self.placement.host[idx]
        return set(np.where(host >= 0, host, idx).tolist())

    def place(self, folding: Folding, *, sweeps: int | None = None, first: int | None = None) -> Placement:
        """Lay the graph out under ``folding`` (pure; run it in a worker for big graphs).

        ``first``: place only the graph inputs and the first ``first`` nodes (file order, which is
        topological): the top of the graph, for a first frame; the placement is not ``complete``."""
        return _place(self, folding, sweeps, first)

    def apply(self, placement: Placement) -> None:
        """Adopt a placement from :meth:`place` (cheap; GUI thread)."""
        self.placement = placement
        self.src = self.all_src[placement.edges]
        self.dst = self.all_dst[placement.edges]

    def set_folding(self, folding: Folding | bool) -> None:
        """Fold (True: the default chains, a :class:`Folding`) or unfold (False) and lay out again."""
        if folding is True:
            folding = fold_constants(self.graph)
        elif folding is False:
            folding = no_folding(len(self.graph.nodes))
        self.apply(self.place(folding))


def _sweeps(n: int) -> int:
    return 4 if n <= BIG_GRAPH else 1


def _place(dg: DisplayGraph, folding: Folding, sweeps: int | None, first: int | None = None) -> Placement:
    n = dg.n
    off = dg.node_offset
    nn = len(dg.graph.nodes)
    host = np.full(n, -1, dtype=np.int64)
    fh = folding.host
    host[off:off + nn] = np.where(fh >= 0, fh + off, -1)
    folded = host >= 0
    fold_count = np.bincount(host[folded], minlength=n).astype(np.int64) if folded.any() else np.zeros(n, np.int64)
    complete = first is None or first >= nn
    hidden = folded.copy()
    if not complete:
        hidden[off + int(first or 0):] = True  # not placed yet
    shown = np.flatnonzero(~hidden)
    remap = np.full(n, -1, dtype=np.int64)
    remap[shown] = np.arange(shown.size)
    keep = ~hidden[dg.all_src] & ~hidden[dg.all_dst] if dg.all_src.size else np.zeros(0, bool)
    edges = np.flatnonzero(keep)
    s = remap[dg.all_src[edges]]
    d = remap[dg.all_dst[edges]]
    sub = layout(shown.size, s, d, dg.widths[shown], dg.heights[shown],
                 sweeps=_sweeps(shown.size) if sweeps is None else sweeps)
    if hidden.any():
        at = np.where(folded, remap[np.maximum(host, 0)], np.maximum(remap, 0))
        lay = Layout(x=sub.x[at], y=sub.y[at], layer=sub.layer[at], order=sub.order[at], width=sub.width,
                     height=sub.height, crossings=sub.crossings, edge_points=sub.edge_points, edge_xy=sub.edge_xy,
                     edge_offsets=sub.edge_offsets, reversed_edges=sub.reversed_edges)
    else:
        lay = sub
    bbox = np.zeros((edges.size, 4))
    if edges.size:
        eo = lay.edge_offsets
        pts = lay.edge_xy
        nonempty = np.diff(eo) > 0
        starts = eo[:-1][nonempty]
        bbox[nonempty, 0] = np.minimum.reduceat(pts[:, 0], starts)
        bbox[nonempty, 1] = np.minimum.reduceat(pts[:, 1], starts)
        bbox[nonempty, 2] = np.maximum.reduceat(pts[:, 0], starts)
        bbox[nonempty, 3] = np.maximum.reduceat(pts[:, 1], starts)
    labelled = _labelled(remap[dg.all_src[edges]], dg.tensor_ids[edges], lay.edge_offsets, lay.edge_xy)
    return Placement(folding, hidden, host, fold_count, edges, lay, bbox, complete, labelled)


def _labelled(src: np.ndarray, tensors: np.ndarray, offsets: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Per edge, whether it carries the shape label: one edge for each tensor leaving an item, the
    one whose first segment runs most nearly straight down (the labels of a tensor's other edges
    began at the same point and printed the same text over each other and over the arrows)."""
    n = len(src)
    out = np.zeros(n, dtype=bool)
    if n == 0 or len(pts) == 0:
        return out
    a = pts[np.minimum(offsets[:-1], len(pts) - 1)]
    b = pts[np.minimum(offsets[:-1] + 1, len(pts) - 1)]
    order = np.lexsort((np.arange(n), np.abs(b[:, 0] - a[:, 0]), tensors, src))
    s, t = src[order], tensors[order]
    first = np.ones(n, dtype=bool)
    first[1:] = (s[1:] != s[:-1]) | (t[1:] != t[:-1])
    out[order[first]] = True
    return out


def _widths(labels: list[str], subs: list[str]) -> np.ndarray:
    a = np.fromiter(map(len, labels), np.int64, len(labels))
    b = np.minimum(np.fromiter(map(len, subs), np.int64, len(subs)), 34)
    return np.minimum(260.0, np.maximum(90.0, 7.2 * np.maximum(a, b) + 24))


def build_display(graph: Graph, *, sweeps: int | None = None, fold: bool | None = None,
                  first: int | None = None) -> DisplayGraph:
    """Collect display items, fold constant chains (``fold=None``: when the graph has more than
    ``FOLD_DEFAULT_MIN_NODES`` nodes) and lay them out top to bottom, the garbage collector paused
    (its full passes over a growing heap hold the GIL for 0.1-0.3 s each at 100k nodes, stalling
    the GUI thread).

    ``first``: lay out only the top ``first`` nodes now (see :meth:`DisplayGraph.place`); the view
    lays out the rest in a worker. By default a graph of more than ``BIG_GRAPH`` items is placed
    ``FIRST_SCREEN`` nodes first."""
    with gc_paused():
        return _build_display(graph, sweeps, fold, first)


def _build_display(graph: Graph, sweeps: int | None, fold: bool | None, first: int | None) -> DisplayGraph:
    labels: list[str] = []
    subs: list[str] = []
    cats: list[str] = []
    kind: list[int] = []
    ref: list[str | int] = []

    def add_tensor(k: int, name: str) -> int:
        t = graph.tensors[name]
        kind.append(k)
        ref.append(name)
        labels.append(name)
        subs.append(f"{t.dtype} {short_shape(t.shape_text(), 34)}")  # the full shape: the tooltip
        cats.append("io")
        return len(kind) - 1

    in_index = {name: add_tensor(0, name) for name in graph.inputs}
    offset = len(kind)
    nodes = graph.nodes
    kind.extend([1] * len(nodes))
    ref.extend(range(len(nodes)))
    labels.extend(node.qualified_op for node in nodes)
    subs.extend(node.name for node in nodes)
    cat_of: dict[tuple[str, str], str] = {}
    for node in nodes:
        key = (node.op_type, node.domain)
        c = cat_of.get(key)
        if c is None:
            c = cat_of[key] = category(*key)
        cats.append(c)
    out_index = {name: add_tensor(2, name) for name in graph.outputs}

    s, d, tnames = graph.edges()
    names = list(tnames)
    extra_s: list[int] = []
    extra_d: list[int] = []
    if in_index:
        for node in nodes:
            for tname in node.inputs + graph.implicit_inputs.get(node.index, []):
                if tname in in_index:
                    extra_s.append(in_index[tname])
                    extra_d.append(offset + node.index)
                    names.append(tname)
    for name, di in out_index.items():
        t = graph.tensors[name]
        if t.producer is not None:
            extra_s.append(offset + t.producer)
            extra_d.append(di)
            names.append(name)
        elif name in in_index:
            extra_s.append(in_index[name])
            extra_d.append(di)
            names.append(name)
    src_a = np.concatenate([s + offset, np.asarray(extra_s, np.int64)]).astype(np.int64)
    dst_a = np.concatenate([d + offset, np.asarray(extra_d, np.int64)]).astype(np.int64)

    widths = _widths(labels, subs)
    kind_a = np.asarray(kind, np.int8)
    heights = np.where(kind_a == 1, NODE_H, IO_H).astype(np.float64)
    if fold is None:
        fold = len(nodes) > FOLD_DEFAULT_MIN_NODES
    folding = fold_constants(graph, (s, d)) if fold else no_folding(len(nodes))
    dg = DisplayGraph(graph, kind_a, ref, labels, subs, cats, widths, heights, src_a, dst_a, names, offset,
                      placement=None, src=src_a, dst=dst_a)  # type: ignore[arg-type]
    dg.category_codes  # noqa: B018 - made here, in the loader's worker, not when the view first colours it
    if first is None and len(kind) > BIG_GRAPH:
        first = FIRST_SCREEN
    dg.apply(dg.place(folding, sweeps=sweeps, first=first))
    return dg

