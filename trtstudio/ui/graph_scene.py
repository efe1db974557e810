"""What the graph view draws: the display graph (inputs, nodes, outputs) and its layout.

Plain numpy, no Qt, so it can run in a worker thread: loading and laying out a 100k-node model
never blocks the GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from trtstudio.graph.categories import CATEGORIES, category
from trtstudio.graph.layout import Layout, layout
from trtstudio.graph.model import Graph

NODE_H = 36.0
IO_H = 28.0


@dataclass
class DisplayGraph:
    """Display items: graph inputs first, then the graph's nodes, then graph outputs."""

    graph: Graph
    kind: np.ndarray  # 0 input, 1 node, 2 output
    ref: list[str | int]  # tensor name for inputs/outputs, node index for nodes
    labels: list[str]
    sublabels: list[str]
    cats: list[str]
    widths: np.ndarray
    heights: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    edge_labels: list[str]
    lay: Layout
    node_offset: int  # display index of graph.nodes[0]
    edge_bbox: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))  # xmin, ymin, xmax, ymax per edge

    @property
    def n(self) -> int:
        return len(self.kind)

    def display_index(self, node_index: int) -> int:
        return self.node_offset + node_index

    def node_index(self, display_index: int) -> int | None:
        i = display_index - self.node_offset
        return i if 0 <= i < len(self.graph.nodes) else None

    def category_color_codes(self) -> np.ndarray:
        keys = list(CATEGORIES)
        return np.array([keys.index(c) if c in CATEGORIES else keys.index("other") for c in self.cats], np.int32)


def _width(label: str, sub: str) -> float:
    return float(min(260.0, max(90.0, 7.2 * max(len(label), min(len(sub), 34)) + 24)))


def build_display(graph: Graph, *, sweeps: int = 4) -> DisplayGraph:
    """Collect display items and lay them out top to bottom."""
    labels: list[str] = []
    subs: list[str] = []
    cats: list[str] = []
    kind: list[int] = []
    ref: list[str | int] = []

    def add(k: int, r: str | int, label: str, sub: str, cat: str) -> int:
        kind.append(k)
        ref.append(r)
        labels.append(label)
        subs.append(sub)
        cats.append(cat)
        return len(kind) - 1

    def add_tensor(k: int, name: str) -> int:
        t = graph.tensors[name]
        return add(k, name, name, f"{t.dtype} {t.shape_text()}", "io")

    in_index = {name: add_tensor(0, name) for name in graph.inputs}
    offset = len(kind)
    for node in graph.nodes:
        add(1, node.index, node.qualified_op, node.name, category(node.op_type, node.domain))
    out_index = {name: add_tensor(2, name) for name in graph.outputs}

    s, d, tnames = graph.edges()
    src = [s + offset]
    dst = [d + offset]
    names = list(tnames)
    extra_s: list[int] = []
    extra_d: list[int] = []
    for node in graph.nodes:
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
    src.append(np.asarray(extra_s, np.int64))
    dst.append(np.asarray(extra_d, np.int64))
    src_a = np.concatenate(src).astype(np.int64)
    dst_a = np.concatenate(dst).astype(np.int64)
    edge_labels = []
    for tname in names:
        t = graph.tensors.get(tname)
        edge_labels.append(t.shape_text() if t is not None and t.shape is not None else "")

    widths = np.array([_width(a, b) for a, b in zip(labels, subs, strict=True)], np.float64)
    kind_a = np.asarray(kind, np.int8)
    heights = np.where(kind_a == 1, NODE_H, IO_H).astype(np.float64)
    lay = layout(len(kind), src_a, dst_a, widths, heights, sweeps=sweeps)
    bbox = np.zeros((len(src_a), 4))
    if len(src_a):
        off = lay.edge_offsets
        pts = lay.edge_xy
        counts = np.diff(off)
        nonempty = counts > 0
        starts = off[:-1][nonempty]
        bbox[nonempty, 0] = np.minimum.reduceat(pts[:, 0], starts)
        bbox[nonempty, 1] = np.minimum.reduceat(pts[:, 1], starts)
        bbox[nonempty, 2] = np.maximum.reduceat(pts[:, 0], starts)
        bbox[nonempty, 3] = np.maximum.reduceat(pts[:, 1], starts)
    return DisplayGraph(graph, kind_a, ref, labels, subs, cats, widths, heights, src_a, dst_a, edge_labels, lay,
                        offset, bbox)
