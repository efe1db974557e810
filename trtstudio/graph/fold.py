"""Fold constant and shape-computation chains into the node that consumes them (no Qt).

Exporters leave many small nodes that only compute constants or shapes: ``Constant``,
``ConstantOfShape`` producing weights, ``Shape -> Gather -> Unsqueeze -> Concat`` feeding a
``Reshape``'s shape input. Drawn as nodes they fill the first screen (a DenseNet export is a fan of
about 800 edges from ``ConstantOfShape`` nodes) and hide the data path. Folding hides such a node
and charges it to its consumer (its *host*); the view then draws the host with a badge.

A node is *foldable* when it has no subgraph, is not a Q/DQ node (those carry precision, which the
engine views map), produces no graph output, and either

- is constant: every input is an initializer or the output of a constant node (a node with no
  inputs, like ``Constant``, is constant), or
- computes shapes: it is ``Shape``/``Size``, or every input is an initializer or an output of a
  constant or shape-computing node.

Each foldable node is folded into the first (in file order) non-folded node reached through its
consumers; a foldable node with no such consumer stays shown.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trtstudio.graph.model import Graph

#: Folding is on by default for graphs with more nodes than this.
FOLD_DEFAULT_MIN_NODES = 200

SHAPE_SOURCES = frozenset({"Shape", "Size"})
NEVER_FOLD = frozenset({"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "If", "Loop", "Scan",
                        "SequenceMap", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                        "Multinomial", "Bernoulli"})


@dataclass(frozen=True)
class Folding:
    """``host[i]``: index of the node that node i is folded into, or -1 when node i is shown."""

    host: np.ndarray

    @property
    def folded(self) -> np.ndarray:
        """Bool per node: hidden in its host."""
        return self.host >= 0

    @property
    def count(self) -> int:
        return int((self.host >= 0).sum())

    def members(self, host: int) -> list[int]:
        """Nodes folded into ``host``, in file order."""
        return [int(i) for i in np.flatnonzero(self.host == host)]

    def counts(self) -> np.ndarray:
        """Number of nodes folded into each node."""
        h = self.host[self.host >= 0]
        return np.bincount(h, minlength=self.host.size)

    def without(self, nodes: list[int] | np.ndarray) -> Folding:
        """The same folding with ``nodes`` and the rest of their chains shown (for search hits).

        Every node folded into the same host as a given node is shown too, so an unfolded chain is
        seen whole and its edges stay connected."""
        host = self.host.copy()
        idx = np.asarray(nodes, dtype=np.int64)
        idx = idx[(idx >= 0) & (idx < host.size)]
        hosts = np.unique(host[idx][host[idx] >= 0])
        if hosts.size:
            host[np.isin(host, hosts)] = -1
        return Folding(host)


def no_folding(n: int) -> Folding:
    return Folding(np.full(n, -1, dtype=np.int64))


def _topological(n: int, src: np.ndarray, dst: np.ndarray) -> list[int]:
    """File order when it is topological (ONNX requires it), else Kahn's order."""
    if src.size == 0 or bool(np.all(src < dst)):
        return list(range(n))
    indeg = np.bincount(dst, minlength=n).tolist()
    order_e = np.argsort(src, kind="stable")
    ptr = np.r_[0, np.cumsum(np.bincount(src, minlength=n))].tolist()
    succ = dst[order_e].tolist()
    stack = [i for i in range(n - 1, -1, -1) if indeg[i] == 0]
    out: list[int] = []
    while stack:
        v = stack.pop()
        out.append(v)
        for w in succ[ptr[v]:ptr[v + 1]]:
            indeg[w] -= 1
            if indeg[w] == 0:
                stack.append(w)
    return out  # nodes on a cycle are left out (never folded)


def fold_constants(graph: Graph, edges: tuple[np.ndarray, np.ndarray] | None = None) -> Folding:
    """Find the constant and shape-computation nodes of ``graph`` and the node each folds into.

    ``edges``: ``graph.edges()``'s (src, dst) when the caller already has them."""
    nodes = graph.nodes
    n = len(nodes)
    if n == 0:
        return no_folding(0)
    tensors = graph.tensors
    inits = graph.initializers
    graph_outputs = set(graph.outputs)
    # 0: data, 1: constant, 2: shape-computing
    state = [0] * n
    src, dst = edges if edges is not None else graph.edges()[:2]
    order = _topological(n, src, dst)
    for i in order:
        node = nodes[i]
        op = node.op_type
        if node.subgraphs or op in NEVER_FOLD or node.domain not in ("", "ai.onnx") \
                or any(o in graph_outputs for o in node.outputs) or graph.implicit_inputs.get(i):
            continue
        if op in SHAPE_SOURCES:
            state[i] = 2
            continue
        st = 1
        for name in node.inputs:
            if not name or name in inits:
                continue
            t = tensors.get(name)
            p = t.producer if t is not None else None
            if p is None or state[p] == 0:
                st = 0
                break
            if state[p] == 2:
                st = 2
        state[i] = st
    host = np.full(n, -1, dtype=np.int64)
    foldable = np.asarray(state, dtype=np.int8) > 0
    if not foldable.any():
        return Folding(host)
    # consumers of each node, file order
    order_e = np.lexsort((dst, src))
    s_sorted, d_sorted = src[order_e], dst[order_e]
    ptr = np.r_[0, np.cumsum(np.bincount(s_sorted, minlength=n))]
    resolved = np.where(foldable, -2, -1)  # -2: not decided yet; the final host or -1 (shown)
    for i in reversed(order):
        if not foldable[i]:
            continue
        best = -1
        for c in d_sorted[ptr[i]:ptr[i + 1]].tolist():
            h = c if resolved[c] == -1 else int(resolved[c])
            if h >= 0 and (best < 0 or h < best):
                best = h
        resolved[i] = best  # -1: no shown consumer, so this node stays shown
    host[:] = np.where(resolved >= 0, resolved, -1)
    return Folding(host)
