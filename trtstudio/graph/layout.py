"""Layered (Sugiyama) layout of a directed graph, vectorised with numpy.

Steps, each over whole arrays (no per-layer Python loops, so graphs tens of thousands of layers
deep, like transformers, stay fast):

1. Clean the edges (drop self loops and duplicates) and break cycles by reversing DFS back edges.
2. Longest-path layering from the sources, then nodes with more out- than in-edges are pulled
   down next to their successors (this shortens edges, like Netron: constants and side inputs sit
   beside their consumer instead of at the top).
3. Edges spanning several layers are split by dummy nodes into unit segments.
4. Crossing reduction: barycenter sweeps, alternately downward and upward, pipelined: step c
   re-sorts every layer l with l % 64 == c at once, so a sweep costs 64 numpy steps however deep
   the graph is and still behaves like a sequential sweep (a layer sees its neighbour layer
   already re-sorted, except at every 64th layer). Each sweep is followed by a vectorised
   transpose pass that swaps adjacent nodes where that removes crossings; the best order seen
   (by the vectorised crossing count) is kept.
5. x coordinates: nodes packed in order with gaps, then pipelined Gauss-Seidel sweeps (down,
   up) minimise sum w_e * |x_u - x_v| (reweighted least squares; dummy-dummy segments weigh 8,
   dummy-real 2, real-real 1, as in dot, so long edges run straight). A layer's optimum under
   the non-overlap constraints is a weighted isotonic regression, solved by a parallel
   pool-adjacent-violators pass over all layers of a step at once.

y is ``layer * layer_gap`` (grows downward).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

DEFAULT_WIDTH = 160.0
DEFAULT_HEIGHT = 36.0
_BAND = 64  # layers re-sorted per pipelined sweep step (see _Orderer.band_sweep)
_DUMMY_BUDGET = 16  # dummy nodes per real node before the longest edges are drawn straight
_EDGE_POINTS_LIMIT = 20_000  # above this many input edges, Layout.edge_points is None (use edge_xy)


@dataclass
class Layout:
    """Positions of a layered layout; arrays are indexed by node.

    ``x``/``y`` are node centres; x is shifted so the bounding box starts at x = 0, and layer k
    has y = k * layer_gap. ``order`` is a node's rank among the real nodes of its layer (left to
    right). ``crossings`` counts crossings between adjacent layers with long edges routed through
    their dummy nodes. ``edge_points[i]`` is the polyline (k x 2) of input edge i from the
    bottom centre of its source to the top centre of its target (top/bottom swapped for an edge
    that points upward because it closed a cycle), through its dummy nodes; a self loop gives two
    copies of the node centre. ``edge_points`` is None for very large graphs; the same points are
    always available flat in ``edge_xy`` with ``edge_offsets`` ([E + 1], edge i owns rows
    ``edge_offsets[i]:edge_offsets[i + 1]``).
    """

    x: np.ndarray
    y: np.ndarray
    layer: np.ndarray
    order: np.ndarray
    width: float
    height: float
    crossings: int
    edge_points: list[np.ndarray] | None
    edge_xy: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    edge_offsets: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    reversed_edges: int = 0


# --------------------------------------------------------------------------------------------
# crossing counting


def count_crossings(upper: np.ndarray, lower: np.ndarray, group: np.ndarray | None = None) -> int:
    """Count crossing pairs among edges between adjacent layers.

    Edge i runs from position ``upper[i]`` in one layer to position ``lower[i]`` in the next;
    ``group[i]`` (default: all 0) names the layer pair, and edges of different groups never cross.
    Edges i, j cross when ``(upper[i] - upper[j]) * (lower[i] - lower[j]) < 0`` (edges sharing an
    endpoint do not cross). Runs a merge-sort inversion count for all groups at once:
    O(E log E log G) for largest group size G.
    """
    a = np.asarray(upper, dtype=np.int64).ravel()
    b = np.asarray(lower, dtype=np.int64).ravel()
    if a.shape != b.shape:
        raise ValueError("upper and lower must have the same length")
    g = np.zeros_like(a) if group is None else np.asarray(group, dtype=np.int64).ravel()
    if g.shape != a.shape:
        raise ValueError("group must have the same length as upper")
    if a.size < 2:
        return 0
    groups, dense = np.unique(g, return_inverse=True)
    return int(crossings_by_group(a, b, dense.astype(np.int64).ravel(), groups.size).sum())


def crossings_by_group(a: np.ndarray, b: np.ndarray, g: np.ndarray, ngroups: int) -> np.ndarray:
    """Crossings per group (int64 [ngroups]) for int64 edge arrays as in :func:`count_crossings`.

    ``g`` must hold group ids in ``0..ngroups-1``.
    """
    out = np.zeros(ngroups, dtype=np.int64)
    m = a.size
    if m < 2:
        return out
    b = b - b.min()
    a = a - a.min()
    wa, wb = int(a.max()) + 1, int(b.max()) + 1
    if ngroups * wa * wb < 2**62:
        o = np.argsort((g * wa + a) * wb + b)
    else:
        o = np.lexsort((b, a, g))
    g = g[o]
    b = b[o]
    bspan = int(b.max()) + 1
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    sizes = np.diff(np.r_[starts, m])
    biggest = int(sizes.max())
    if biggest < 2:
        return out
    # After sorting by (group, upper, lower), inversions of ``lower`` inside a group are the
    # crossings. Bottom-up merge sort over the local index t of each edge in its group: at each
    # level, count for every element of a right block the greater elements of its left sibling.
    t = np.arange(m, dtype=np.int64) - np.repeat(starts, sizes)
    gid = np.repeat(np.arange(starts.size, dtype=np.int64), sizes)
    gval = g[starts]
    level = 0
    while (1 << level) < biggest:
        blk = t >> (level + 1)
        side = (t >> level) & 1
        # dense pair-block id: blocks of one group are numbered from the group's first edge
        pid = starts[gid] + blk
        key = (pid * bspan + b) * 2 + side
        o = np.argsort(key, kind="stable")
        pid, b, side, t, gid = pid[o], b[o], side[o], t[o], gid[o]
        is_left = side == 0
        cum_left = np.cumsum(is_left)
        pstart = np.flatnonzero(np.r_[True, pid[1:] != pid[:-1]])
        psize = np.diff(np.r_[pstart, m])
        left_before_block = np.repeat(np.r_[0, cum_left][pstart], psize)
        left_total = np.repeat(np.add.reduceat(is_left.astype(np.int64), pstart), psize)
        right = ~is_left
        greater = left_total[right] - (cum_left[right] - left_before_block[right])
        out += np.bincount(gval[gid[right]], weights=greater, minlength=ngroups).astype(np.int64)
        level += 1
    return out


# --------------------------------------------------------------------------------------------
# graph cleaning, cycle breaking, layering


def _csr(n: int, s: np.ndarray) -> np.ndarray:
    return np.r_[0, np.cumsum(np.bincount(s, minlength=n))].astype(np.int64)


def _kahn(n: int, ptr: list[int], adj: list[int], indeg: list[int]) -> tuple[list[int], list[int]]:
    """Longest-path layers from sources and the visit order; order is short if there is a cycle."""
    deg = list(indeg)
    layer = [0] * n
    stack = [v for v in range(n - 1, -1, -1) if deg[v] == 0]
    order: list[int] = []
    append = order.append
    while stack:
        v = stack.pop()
        append(v)
        lv = layer[v] + 1
        for w in reversed(adj[ptr[v] : ptr[v + 1]]):
            if layer[w] < lv:
                layer[w] = lv
            deg[w] -= 1
            if deg[w] == 0:
                stack.append(w)
    return layer, order


def _back_edges(n: int, ptr: list[int], adj: list[int]) -> list[int]:
    """Indices (into adj) of DFS back edges; reversing them leaves a DAG."""
    state = [0] * n
    back: list[int] = []
    for root in range(n):
        if state[root]:
            continue
        state[root] = 1
        stack = [[root, ptr[root]]]
        while stack:
            top = stack[-1]
            v, i = top
            if i < ptr[v + 1]:
                top[1] = i + 1
                w = adj[i]
                if state[w] == 0:
                    state[w] = 1
                    stack.append([w, ptr[w]])
                elif state[w] == 1:
                    back.append(i)
            else:
                state[v] = 2
                stack.pop()
    return back


def _pull_down(layer: list[int], order: list[int], ptr: list[int], adj: list[int], indeg: list[int]) -> None:
    """Move nodes with more successors than predecessors down next to their successors."""
    for v in reversed(order):
        lo, hi = ptr[v], ptr[v + 1]
        if hi - lo > indeg[v]:
            target = min([layer[w] for w in adj[lo:hi]]) - 1
            if target > layer[v]:
                layer[v] = target


# --------------------------------------------------------------------------------------------
# helpers over nodes sorted by (layer, position)


def _positions(layer: np.ndarray, key: np.ndarray, tie: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort nodes by (layer, key, tie); return (node order, position of each node in its layer)."""
    o = np.lexsort((tie, key, layer))
    lay = layer[o]
    starts = np.flatnonzero(np.r_[True, lay[1:] != lay[:-1]])
    sizes = np.diff(np.r_[starts, lay.size])
    pos = np.empty(layer.size, dtype=np.int64)
    pos[o] = np.arange(layer.size, dtype=np.int64) - np.repeat(starts, sizes)
    return o, pos


def _isotonic(y: np.ndarray, wt: np.ndarray, first: np.ndarray, max_iter: int = 64) -> np.ndarray:
    """Weighted isotonic regression within each group: non-decreasing z closest to y.

    Groups are contiguous and start where ``first`` is True. Parallel pool-adjacent-violators:
    every violating pair of adjacent blocks is merged at once, until none is left (merging in
    any order reaches the same unique optimum). After ``max_iter`` rounds a running max makes
    the result feasible anyway.
    """
    m = y.size
    if m == 0:
        return y
    start = first.copy()
    start[0] = True
    wy = wt * y
    for _ in range(max_iter):
        bid = np.cumsum(start) - 1
        nb = int(bid[-1]) + 1
        sw = np.bincount(bid, weights=wt, minlength=nb)
        val = np.bincount(bid, weights=wy, minlength=nb) / sw
        bstart = np.flatnonzero(start)
        # boundary before block k (k >= 1) violates when val[k - 1] > val[k] in one group
        viol = (val[:-1] > val[1:] + 1e-9) & ~first[bstart[1:]]
        if not viol.any():
            return val[bid]
        start[bstart[1:][viol]] = False
    z = val[bid]
    # feasibility fallback: running max within groups, on ranks (exact)
    srt = np.argsort(z, kind="stable")
    r = np.empty(m, dtype=np.int64)
    r[srt] = np.arange(m, dtype=np.int64)
    off = (np.cumsum(first) - 1) * m
    return z[srt][np.maximum.accumulate(r + off) - off]


# --------------------------------------------------------------------------------------------
# the layout


def _prepare(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Clean edges, break cycles, layer. Returns (s, d, layer, topo_rank, edge_map).

    edge_map[i] for input edge i: index of its unique oriented edge, ``-1 - k`` if reversed
    (for unique edge k), or a large sentinel ``-(2**62)`` for a self loop.
    """
    s = np.asarray(src, dtype=np.int64).ravel()
    d = np.asarray(dst, dtype=np.int64).ravel()
    if s.shape != d.shape:
        raise ValueError(f"src and dst differ in length ({s.size} vs {d.size})")
    if s.size and (min(s.min(), d.min()) < 0 or max(s.max(), d.max()) >= n):
        raise ValueError(f"edge endpoint out of range 0..{n - 1}")
    loop = s == d
    # one pass to detect cycles; a second after reversing back edges
    keys = np.where(loop, -1, s * max(n, 1) + d)
    uniq, inv = np.unique(keys[~loop], return_inverse=True)
    us, ud = uniq // max(n, 1), uniq % max(n, 1)
    ptr_a = _csr(n, us)
    ptr, adj = ptr_a.tolist(), ud.tolist()
    indeg = np.bincount(ud, minlength=n).tolist()
    layer, order = _kahn(n, ptr, adj, indeg)
    flip = np.zeros(uniq.size, dtype=bool)
    if len(order) < n:
        flip[_back_edges(n, ptr, adj)] = True
        fs = np.where(flip, ud, us)
        fd = np.where(flip, us, ud)
        keys2 = fs * n + fd
        uniq2, inv2 = np.unique(keys2, return_inverse=True)
        us, ud = uniq2 // n, uniq2 % n
        ptr, adj = _csr(n, us).tolist(), ud.tolist()
        indeg = np.bincount(ud, minlength=n).tolist()
        layer, order = _kahn(n, ptr, adj, indeg)
        if len(order) < n:  # pragma: no cover - reversing DFS back edges always leaves a DAG
            raise RuntimeError("cycle breaking failed")
        unique_of_input = inv2[inv]
        flipped_input = flip[inv]
    else:
        unique_of_input = inv
        flipped_input = np.zeros(inv.size, dtype=bool)
    _pull_down(layer, order, ptr, adj, indeg)
    lay = np.asarray(layer, dtype=np.int64)
    if n:
        _, lay = np.unique(lay, return_inverse=True)  # drop layers left empty by pulling
    topo = np.empty(n, dtype=np.int64)
    topo[np.asarray(order, dtype=np.int64)] = np.arange(n, dtype=np.int64)
    edge_map = np.full(s.size, -(2**62), dtype=np.int64)
    uidx = unique_of_input.astype(np.int64)
    edge_map[~loop] = np.where(flipped_input, -1 - uidx, uidx)
    return us, ud, lay.astype(np.int64), topo, edge_map


def _split_long_edges(
    n: int, s: np.ndarray, d: np.ndarray, lay: np.ndarray, topo: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Dummy nodes for long edges. Returns (layer_all, init_key, tie, seg_u, seg_v, chain, chain_off).

    When the dummies would pass ``_DUMMY_BUDGET`` per node (one graph input feeding every block of a
    deep model: hundreds of millions of dummies), the longest edges get none: they are drawn
    straight and take no part in crossing reduction."""
    span = lay[d] - lay[s]
    extra = span - 1
    direct = np.zeros(span.size, dtype=bool)
    budget = _DUMMY_BUDGET * max(n, 1)
    if int(extra.sum()) > budget:
        order = np.argsort(extra, kind="stable")
        within = np.cumsum(extra[order]) <= budget
        direct[order[~within]] = True
        extra = np.where(direct, 0, extra)
    n_dummy = int(extra.sum())
    e_of_dummy = np.repeat(np.arange(s.size, dtype=np.int64), extra)
    first_dummy = np.cumsum(extra) - extra
    step = np.arange(n_dummy, dtype=np.int64) - np.repeat(first_dummy, extra) + 1
    layer_all = np.r_[lay, lay[s][e_of_dummy] + step]
    # initial order: visit order for real nodes; a dummy follows its edge's source
    key = np.r_[topo.astype(np.float64), topo[s][e_of_dummy] + 0.5]
    tie = np.r_[np.zeros(n, dtype=np.int64), topo[d][e_of_dummy]]
    clen = extra + 2
    chain_off = np.r_[0, np.cumsum(clen)].astype(np.int64)
    chain = np.empty(int(chain_off[-1]), dtype=np.int64)
    starts = chain_off[:-1]
    chain[starts] = s
    chain[starts + clen - 1] = d
    chain[np.repeat(starts, extra) + step] = n + np.arange(n_dummy, dtype=np.int64)
    seg_u = np.delete(chain, starts + clen - 1)
    seg_v = np.delete(chain, starts)
    if direct.any():  # a straight edge spans many layers: not a segment between adjacent layers
        keep = ~np.repeat(direct, clen - 1)
        seg_u, seg_v = seg_u[keep], seg_v[keep]
    return layer_all, key, tie, seg_u, seg_v, chain, chain_off


class _Orderer:
    """Crossing reduction state over the proper (unit-span) graph."""

    def __init__(self, layer: np.ndarray, seg_u: np.ndarray, seg_v: np.ndarray) -> None:
        self.layer = layer
        self.u = seg_u
        self.v = seg_v
        self.n = layer.size
        self.count = np.bincount(layer)
        self.first_slot = (np.cumsum(self.count) - self.count)[layer]

    def setup_bands(self, band: int) -> None:
        """Group layers by ``layer % band`` for pipelined sweeps (see :meth:`band_sweep`)."""
        self.band = max(1, min(band, self.count.size))
        cls = self.layer % self.band
        nodes = np.lexsort((self.layer, cls))
        self.loc = np.empty(self.n, dtype=np.int64)
        offs = np.r_[0, np.cumsum(np.bincount(cls, minlength=self.band))]
        self.cls_nodes: list[np.ndarray] = []
        self.cls_lstart: list[np.ndarray] = []
        for c in range(self.band):
            nd = nodes[offs[c] : offs[c + 1]]
            self.cls_nodes.append(nd)
            self.loc[nd] = np.arange(nd.size)
            lay = self.layer[nd]
            first = np.flatnonzero(np.r_[True, lay[1:] != lay[:-1]]) if nd.size else np.zeros(0, np.int64)
            self.cls_lstart.append(np.repeat(first, np.diff(np.r_[first, nd.size])))
        self.cls_segs: dict[bool, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        for down, me in ((True, self.v), (False, self.u)):
            c_me = cls[me]
            order = np.argsort(c_me, kind="stable")
            so = np.r_[0, np.cumsum(np.bincount(c_me, minlength=self.band))]
            lst = []
            for c in range(self.band):
                sg = order[so[c] : so[c + 1]]
                mloc = self.loc[me[sg]]
                cnt = np.bincount(mloc, minlength=self.cls_nodes[c].size)
                lst.append((sg, mloc, cnt))
            self.cls_segs[down] = lst

    def band_sweep(self, pos: np.ndarray, down: bool) -> np.ndarray:
        """One barycenter sweep, layers handled ``band`` at a time in pipeline order.

        Step c re-sorts every layer l with l % band == c (downward; the reverse upward), so each
        layer sees the neighbour layer already re-sorted in this sweep, except at band borders.
        Python steps: ``band``, independent of the depth.
        """
        pos = pos.copy()
        width = self.count[self.layer].astype(np.float64)
        steps = range(self.band) if down else range(self.band - 1, -1, -1)
        nb_all = self.u if down else self.v
        for c in steps:
            nd = self.cls_nodes[c]
            if nd.size == 0:
                continue
            sg, mloc, cnt = self.cls_segs[down][c]
            nb = nb_all[sg]
            tot = np.bincount(mloc, weights=(pos[nb] + 0.5) / width[nb], minlength=nd.size)
            own = (pos[nd] + 0.5) / width[nd]
            bary = np.where(cnt > 0, tot / np.maximum(cnt, 1), own)
            o = np.lexsort((own, bary, self.layer[nd]))
            pos[nd[o]] = np.arange(nd.size) - self.cls_lstart[c]
        return pos

    def crossings(self, pos: np.ndarray) -> int:
        return int(self.by_layer(pos).sum())

    def by_layer(self, pos: np.ndarray) -> np.ndarray:
        """Crossings between layer l and l + 1, for every l."""
        return crossings_by_group(pos[self.u], pos[self.v], self.layer[self.u], self.count.size)

    def transpose(self, pos: np.ndarray, o: np.ndarray) -> tuple[np.ndarray, int]:
        """Swap adjacent node pairs whose swap removes crossings (all independent pairs at once).

        ``o`` lists nodes sorted by (layer, pos). Pairs (a, b) are taken at even then odd offsets,
        within layers of one parity at a time, so the neighbours a swap is judged against stay put.
        """
        swaps = 0
        for lpar in (0, 1):
            for off in (0, 1):
                a = o[:-1]
                b = o[1:]
                la = self.layer[a]
                ok = (la == self.layer[b]) & ((pos[a] & 1) == off) & ((la & 1) == lpar)
                a, b = a[ok], b[ok]
                if a.size == 0:
                    continue
                gain = self._swap_gain(pos, a, b)
                do = gain > 0
                if do.any():
                    sa, sb = a[do], b[do]
                    pa = pos[sa].copy()
                    pos[sa] = pos[sb]
                    pos[sb] = pa
                    swaps += int(do.sum())
                    o = self._order_from_pos(pos)
        return pos, swaps

    def _order_from_pos(self, pos: np.ndarray) -> np.ndarray:
        """Nodes sorted by (layer, pos); positions are dense per layer, so a scatter does it."""
        o = np.empty(self.n, dtype=np.int64)
        o[self.first_slot + pos] = np.arange(self.n, dtype=np.int64)
        return o

    def _swap_gain(self, pos: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """crossings(a before b) - crossings(b before a) for each pair, both sides together.

        Per side: c(a, b) = #{x in N(a), y in N(b): x > y}; the swap turns it into #{x < y}.
        """
        pair_of = np.full(self.n, -1, dtype=np.int64)
        pair_of[a] = np.arange(a.size)
        pair_of[b] = np.arange(b.size)
        is_b = np.zeros(self.n, dtype=bool)
        is_b[b] = True
        span = int(np.max(self.count)) + 2
        gain = np.zeros(a.size, dtype=np.int64)
        for me, nb in ((self.v, self.u), (self.u, self.v)):
            p = pair_of[me]
            on = p >= 0
            side_b = is_b[me]
            sel_a = on & ~side_b
            sel_b = on & side_b
            if not sel_a.any() or not sel_b.any():
                continue
            pa = p[sel_a]
            a_flat = np.sort(pa * span + pos[nb[sel_a]])
            a_cnt = np.bincount(pa, minlength=a.size)
            a_end = np.cumsum(a_cnt)
            a_start = a_end - a_cnt
            b_p = p[sel_b]
            q = b_p * span + pos[nb[sel_b]]
            lo = np.searchsorted(a_flat, q, side="left")
            hi = np.searchsorted(a_flat, q, side="right")
            greater = a_end[b_p] - hi  # a's neighbours right of b's: cross while a is left of b
            less = lo - a_start[b_p]  # a's neighbours left of b's: cross after the swap
            gain += np.bincount(b_p, weights=greater - less, minlength=a.size).astype(np.int64)
        return gain


def _assign_x(
    layer: np.ndarray, pos: np.ndarray, w: np.ndarray, real: np.ndarray, seg_u: np.ndarray, seg_v: np.ndarray,
    seg_w: np.ndarray, node_gap: float, rounds: int = 4,
) -> np.ndarray:
    """x centres: packed in order, then Gauss-Seidel sweeps on sum w_e * |x_u - x_v|.

    The L1 objective (straight segments win over many small bends) is approached by reweighting
    a quadratic one (weights w_e / |dx_e|). Sweeps go down then up, pipelined like the crossing
    sweeps: step k moves every layer l with l % 64 == k, its neighbour layers fixed; a layer's
    optimum under the separation constraints is a weighted isotonic regression of the
    neighbour means.
    """
    n = layer.size
    o = np.lexsort((pos, layer))
    lay_o = layer[o]
    w_o = w[o]
    real_o = real[o]
    first = np.r_[True, lay_o[1:] != lay_o[:-1]]
    gap = np.where(real_o[1:] & real_o[:-1], node_gap, node_gap * 0.5)
    sep = np.r_[0.0, (w_o[1:] + w_o[:-1]) * 0.5 + gap]
    sep[first] = 0.0
    c = np.cumsum(sep)
    starts = np.flatnonzero(first)
    sizes = np.diff(np.r_[starts, n])
    c -= np.repeat(c[starts], sizes)  # cumulative separation from the layer's first node
    total = np.repeat(c[np.r_[starts[1:], n] - 1], sizes)
    x = np.empty(n)
    x[o] = c - total * 0.5
    if seg_u.size == 0 or rounds <= 0:
        return x
    c_node = np.empty(n)
    c_node[o] = c
    first_node = np.empty(n, dtype=bool)
    first_node[o] = first
    band = max(2, min(_BAND, int(layer.max()) + 1))
    cls = layer % band
    order = np.lexsort((pos, layer, cls))
    offs = np.r_[0, np.cumsum(np.bincount(cls, minlength=band))]
    loc = np.empty(n, dtype=np.int64)
    # segments touching each class: (local index of the moving end, the other end, segment id)
    me = np.r_[seg_v, seg_u]
    nb = np.r_[seg_u, seg_v]
    sid = np.r_[np.arange(seg_u.size), np.arange(seg_u.size)]
    by_cls = np.argsort(cls[me], kind="stable")
    soffs = np.r_[0, np.cumsum(np.bincount(cls[me], minlength=band))]
    steps = []
    for k in range(band):
        idx = order[offs[k] : offs[k + 1]]
        loc[idx] = np.arange(idx.size)
        sg = by_cls[soffs[k] : soffs[k + 1]]
        steps.append((idx, first_node[idx], c_node[idx], loc[me[sg]], nb[sg], sid[sg]))
    eps = 1e-3  # nodes without neighbours stay put
    for r in range(rounds * 2):
        ew = seg_w / np.maximum(np.abs(x[seg_u] - x[seg_v]), 1.0)
        for k in range(band) if r % 2 == 0 else range(band - 1, -1, -1):
            idx, fst, cc, mloc, other, s_id = steps[k]
            if idx.size == 0:
                continue
            wts = ew[s_id]
            wsum = np.bincount(mloc, weights=wts, minlength=idx.size) + eps
            tot = np.bincount(mloc, weights=wts * x[other], minlength=idx.size) + eps * x[idx]
            x[idx] = _isotonic(tot / wsum - cc, wsum, fst) + cc
    return x


def layout(
    n: int,
    src: np.ndarray,
    dst: np.ndarray,
    widths: np.ndarray | None = None,
    heights: np.ndarray | None = None,
    *,
    node_gap: float = 30.0,
    layer_gap: float = 70.0,
    sweeps: int = 4,
) -> Layout:
    """Lay out a directed graph of ``n`` nodes in layers, edges pointing down.

    ``src``/``dst`` are node indices of the edges; self loops and duplicate edges are ignored for
    placement, cycles are broken by reversing DFS back edges. ``widths``/``heights`` default to
    160 x 36. ``sweeps`` is the number of down+up barycenter sweep pairs (each followed by a
    transpose pass). Returns a :class:`Layout`.
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    w_real = np.full(n, DEFAULT_WIDTH) if widths is None else np.asarray(widths, dtype=np.float64).ravel()
    h_real = np.full(n, DEFAULT_HEIGHT) if heights is None else np.asarray(heights, dtype=np.float64).ravel()
    if w_real.size != n or h_real.size != n:
        raise ValueError("widths and heights must have one entry per node")
    s_in = np.asarray(src, dtype=np.int64).ravel()
    if n == 0:
        if s_in.size:
            raise ValueError("edges given for an empty graph")
        return Layout(np.zeros(0), np.zeros(0), np.zeros(0, np.int32), np.zeros(0, np.int32), 0.0, 0.0, 0, [])
    us, ud, lay, topo, edge_map = _prepare(n, src, dst)
    layer_all, key, tie, seg_u, seg_v, chain, chain_off = _split_long_edges(n, us, ud, lay, topo)
    n_all = layer_all.size
    real = np.zeros(n_all, dtype=bool)
    real[:n] = True
    seg_w = 1.0 + (~real[seg_u]) + (~real[seg_v]) * 1.0
    seg_w = np.where(~real[seg_u] & ~real[seg_v], 8.0, seg_w)

    pos, best = _reduce_crossings(layer_all, key, tie, seg_u, seg_v, sweeps)

    # coordinates
    w_all = np.r_[w_real, np.zeros(n_all - n)]
    x_all = _assign_x(layer_all, pos, w_all, real, seg_u, seg_v, seg_w, node_gap)
    x_all -= float(np.min(x_all - w_all * 0.5))
    y_all = layer_all.astype(np.float64) * layer_gap
    h_all = np.r_[h_real, np.zeros(n_all - n)]
    width = float(np.max(x_all + w_all * 0.5))
    height = float(np.max(y_all[:n] + h_real * 0.5) - np.min(y_all[:n] - h_real * 0.5))

    order = _order_in_layers(n, pos, lay)
    edge_xy, edge_offsets = _edge_polylines(x_all, y_all, h_all, chain, chain_off, edge_map, s_in)
    points = None
    if edge_map.size <= _EDGE_POINTS_LIMIT:
        points = np.split(edge_xy, edge_offsets[1:-1]) if edge_map.size else []
    return Layout(
        x=x_all[:n].copy(),
        y=y_all[:n].copy(),
        layer=lay.astype(np.int32),
        order=order,
        width=width,
        height=height,
        crossings=int(best),
        edge_points=points,
        edge_xy=edge_xy,
        edge_offsets=edge_offsets,
        reversed_edges=int(np.unique(-1 - edge_map[(edge_map < 0) & (edge_map > -(2**62))]).size),
    )


def _reduce_crossings(
    layer_all: np.ndarray, key: np.ndarray, tie: np.ndarray, seg_u: np.ndarray, seg_v: np.ndarray, sweeps: int,
) -> tuple[np.ndarray, int]:
    """Crossing reduction: the positions in their layers with the fewest crossings seen over
    ``sweeps`` down+up band sweeps (each followed by a transpose pass), and that count."""
    _, pos = _positions(layer_all, key, tie)
    ordr = _Orderer(layer_all, seg_u, seg_v)
    ordr.setup_bands(_BAND)
    best_pos, best = pos, ordr.crossings(pos)
    for i in range(max(sweeps, 0) * 2):
        if best == 0:
            break
        down = i % 2 == 0
        pos = ordr.band_sweep(pos, down)
        pos, _ = ordr.transpose(pos.copy(), ordr._order_from_pos(pos))
        cr = ordr.crossings(pos)
        if cr < best:
            best_pos, best = pos, cr
    return best_pos, best


def _order_in_layers(n: int, pos: np.ndarray, lay: np.ndarray) -> np.ndarray:
    """Each real node's rank among the real nodes of its layer."""
    o = np.lexsort((pos[:n], lay))
    ls = lay[o]
    starts = np.flatnonzero(np.r_[True, ls[1:] != ls[:-1]])
    sizes = np.diff(np.r_[starts, n])
    order = np.empty(n, dtype=np.int32)
    order[o] = (np.arange(n) - np.repeat(starts, sizes)).astype(np.int32)
    return order


def _edge_polylines(
    x: np.ndarray, y: np.ndarray, h: np.ndarray, chain: np.ndarray, chain_off: np.ndarray, edge_map: np.ndarray,
    loop_src: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Flat polylines for input edges (reversed ones run backward), with their offsets."""
    m = edge_map.size
    loop = edge_map == -(2**62)
    rev = (edge_map < 0) & ~loop
    k = np.where(rev, -1 - edge_map, edge_map)
    k[loop] = 0
    chain_off = np.r_[chain_off, chain_off[-1]]  # so a graph of only self loops indexes safely
    lens = np.where(loop, 2, chain_off[k + 1] - chain_off[k])
    offsets = np.r_[0, np.cumsum(lens)].astype(np.int64)
    total = int(offsets[-1])
    idx_in = np.arange(total, dtype=np.int64) - np.repeat(offsets[:-1], lens)  # 0..len-1
    e = np.repeat(np.arange(m, dtype=np.int64), lens)
    fwd_idx = np.where(rev[e], lens[e] - 1 - idx_in, idx_in)
    node = np.where(loop[e], 0, chain[np.minimum(chain_off[k[e]] + fwd_idx, chain.size - 1)] if chain.size else 0)
    xy = np.empty((total, 2))
    xy[:, 0] = x[node]
    xy[:, 1] = y[node]
    if total:
        first = offsets[:-1]
        last = offsets[1:] - 1
        nl = ~loop
        down = np.ones(m, dtype=bool)
        down[nl] = xy[last[nl], 1] > xy[first[nl], 1]
        hs = h[node[first]] * 0.5
        ht = h[node[last]] * 0.5
        xy[first[nl], 1] += np.where(down[nl], hs[nl], -hs[nl])
        xy[last[nl], 1] -= np.where(down[nl], ht[nl], -ht[nl])
        if loop.any():
            # a self loop: both points are the node centre
            ln = loop_src[loop]
            xy[first[loop]] = np.c_[x[ln], y[ln]]
            xy[last[loop]] = xy[first[loop]]
    return xy, offsets
