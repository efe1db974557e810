"""Tests of the layered layout (numpy only)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from trtstudio.graph.layout import Layout, count_crossings, layout


def random_dag(n: int, m: int, seed: int, window: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Random edges i -> j with i < j (j - i <= window when given)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n, size=m)
    b = rng.integers(0, n, size=m)
    if window is not None:
        b = np.minimum(a + 1 + rng.integers(0, window, size=m), n - 1)
    keep = a != b
    a, b = a[keep], b[keep]
    return np.minimum(a, b), np.maximum(a, b)


def brute_crossings(upper: np.ndarray, lower: np.ndarray, group: np.ndarray) -> int:
    count = 0
    for i, j in itertools.combinations(range(len(upper)), 2):
        if group[i] == group[j] and (upper[i] - upper[j]) * (lower[i] - lower[j]) < 0:
            count += 1
    return count


def polyline_crossings(lay: Layout, src: np.ndarray, dst: np.ndarray, layer_gap: float = 70.0) -> int:
    """Crossings recounted by brute force from the polylines (x order stands for position order)."""
    assert lay.edge_points is not None
    segs: list[tuple[int, float, float]] = []
    seen: set[tuple[int, int]] = set()
    for e, (a, b) in enumerate(zip(src.tolist(), dst.tolist(), strict=True)):
        key = (min(a, b), max(a, b))
        if a == b or key in seen:
            continue
        seen.add(key)
        pts = lay.edge_points[e]
        pts = pts[np.argsort(pts[:, 1], kind="stable")]
        for p, q in zip(pts[:-1], pts[1:], strict=True):
            segs.append((int(round(p[1] / layer_gap)), float(p[0]), float(q[0])))
    count = 0
    for (l1, a1, b1), (l2, a2, b2) in itertools.combinations(segs, 2):
        if l1 == l2 and (a1 - a2) * (b1 - b2) < 0:
            count += 1
    return count


def check_non_overlap(lay: Layout, widths: np.ndarray, gap: float) -> None:
    for layer in np.unique(lay.layer):
        idx = np.flatnonzero(lay.layer == layer)
        idx = idx[np.argsort(lay.x[idx])]
        assert np.array_equal(lay.order[idx], np.arange(idx.size)), "order must follow x"
        for i, j in itertools.combinations(idx.tolist(), 2):
            need = (widths[i] + widths[j]) / 2 + gap - 1e-6
            assert abs(lay.x[i] - lay.x[j]) >= need, (layer, i, j)


def test_edges_point_down_and_y_follows_layer() -> None:
    src, dst = random_dag(300, 600, seed=1, window=20)
    lay = layout(300, src, dst, layer_gap=55.0)
    assert np.all(lay.layer[dst] > lay.layer[src])
    assert np.allclose(lay.y, lay.layer * 55.0)
    assert lay.layer.dtype == np.int32 and lay.order.dtype == np.int32
    assert lay.x.dtype == np.float64 and lay.x.shape == (300,)
    assert lay.layer.min() == 0
    # no empty layer between used ones
    assert np.array_equal(np.unique(lay.layer), np.arange(lay.layer.max() + 1))


def test_no_overlap_in_a_layer_with_mixed_widths() -> None:
    n = 200
    src, dst = random_dag(n, 500, seed=2, window=15)
    rng = np.random.default_rng(3)
    widths = rng.uniform(20, 300, size=n)
    heights = rng.uniform(10, 50, size=n)
    lay = layout(n, src, dst, widths, heights, node_gap=12.0)
    check_non_overlap(lay, widths, 12.0)
    assert np.all(lay.x - widths / 2 >= -1e-9)
    assert np.all(lay.x + widths / 2 <= lay.width + 1e-9)
    top = np.min(lay.y - heights / 2)
    bottom = np.max(lay.y + heights / 2)
    assert lay.height == pytest.approx(bottom - top)


def test_default_sizes_are_160_by_36() -> None:
    lay = layout(3, np.array([0, 0]), np.array([1, 2]))
    check_non_overlap(lay, np.full(3, 160.0), 30.0)
    assert lay.height == pytest.approx(70.0 + 36.0)
    assert abs(lay.x[1] - lay.x[2]) == pytest.approx(190.0)
    assert lay.width == pytest.approx(160.0 * 2 + 30.0)


def test_deterministic() -> None:
    src, dst = random_dag(400, 900, seed=4, window=30)
    a = layout(400, src, dst)
    b = layout(400, src.copy(), dst.copy())
    for name in ("x", "y", "layer", "order"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.crossings == b.crossings and a.width == b.width


def test_cycles_self_loops_and_duplicates() -> None:
    # a 3-cycle, a 2-cycle, self loops, duplicates, and a cycle through a long path
    src = np.array([0, 1, 2, 3, 4, 4, 5, 5, 0, 0, 6, 7, 8, 9, 9])
    dst = np.array([1, 2, 0, 4, 3, 4, 5, 6, 1, 1, 7, 8, 9, 6, 0])
    n = 10
    lay = layout(n, src, dst)
    assert lay.reversed_edges >= 3
    loop = src == dst
    # every non-loop edge joins different layers, in one direction or the other
    assert np.all(lay.layer[src[~loop]] != lay.layer[dst[~loop]])
    # one edge of each 2-cycle pair goes down, the other up
    assert lay.layer[4] != lay.layer[3]
    assert lay.edge_points is not None and len(lay.edge_points) == src.size
    for e in np.flatnonzero(loop):
        pts = lay.edge_points[e]
        assert pts.shape == (2, 2) and np.allclose(pts[0], [lay.x[src[e]], lay.y[src[e]]])
    check_non_overlap(lay, np.full(n, 160.0), 30.0)


def test_big_cycle_terminates_and_is_layered() -> None:
    n = 2000
    src = np.arange(n)
    dst = (np.arange(n) + 1) % n  # one cycle through every node
    lay = layout(n, src, dst)
    assert lay.reversed_edges == 1
    assert sorted(lay.layer.tolist()) == list(range(n))


def test_empty_and_single_node() -> None:
    empty = layout(0, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    assert empty.x.size == 0 and empty.crossings == 0 and empty.width == 0.0
    one = layout(1, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    assert one.layer.tolist() == [0] and one.order.tolist() == [0]
    assert one.width == pytest.approx(160.0) and one.height == pytest.approx(36.0)
    assert one.x[0] == pytest.approx(80.0)
    loop = layout(1, np.array([0]), np.array([0]))
    assert loop.layer.tolist() == [0] and loop.crossings == 0


def test_isolated_nodes_side_by_side() -> None:
    lay = layout(5, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    assert np.all(lay.layer == 0)
    check_non_overlap(lay, np.full(5, 160.0), 30.0)


def test_bad_input_raises() -> None:
    with pytest.raises(ValueError):
        layout(3, np.array([0]), np.array([3]))
    with pytest.raises(ValueError):
        layout(3, np.array([0, 1]), np.array([2]))
    with pytest.raises(ValueError):
        layout(3, np.array([0]), np.array([1]), widths=np.ones(2))


def test_chain_and_tree_have_no_crossings() -> None:
    n = 500
    chain = layout(n, np.arange(n - 1), np.arange(1, n))
    assert chain.crossings == 0
    assert np.array_equal(chain.layer, np.arange(n))
    # a straight chain is drawn straight
    assert np.allclose(chain.x, chain.x[0])
    parents = np.random.default_rng(5).integers(0, np.arange(1, n))  # parent of node i+1 is < i+1
    tree = layout(n, parents, np.arange(1, n))
    assert tree.crossings == 0
    assert polyline_crossings(tree, parents, np.arange(1, n)) == 0


def test_long_edges_go_through_dummies() -> None:
    # 0 -> 1 -> 2 -> 3 -> 4 and a skip 0 -> 4
    src = np.array([0, 1, 2, 3, 0])
    dst = np.array([1, 2, 3, 4, 4])
    lay = layout(5, src, dst)
    assert lay.edge_points is not None
    skip = lay.edge_points[4]
    assert skip.shape == (5, 2)  # source port, three dummies, target port
    assert np.allclose(skip[1:-1, 1], np.array([1, 2, 3]) * 70.0)
    assert skip[0, 1] == pytest.approx(lay.y[0] + 18.0)
    assert skip[-1, 1] == pytest.approx(lay.y[4] - 18.0)
    assert np.all(np.abs(skip[1:-1, 0] - lay.x[1:4]) >= 80.0 + 15.0 - 1e-6)  # dummies clear of nodes
    assert lay.edge_offsets[-1] == lay.edge_xy.shape[0]


def test_sources_are_pulled_down_to_their_consumer() -> None:
    # chain 0..5; node 6 (a constant-like source) feeds only node 5
    src = np.array([0, 1, 2, 3, 4, 6])
    dst = np.array([1, 2, 3, 4, 5, 5])
    lay = layout(7, src, dst)
    assert lay.layer[6] == lay.layer[5] - 1


def test_crossing_reduction_beats_initial_order() -> None:
    src, dst = random_dag(300, 700, seed=6, window=25)
    initial = layout(300, src, dst, sweeps=0)
    reduced = layout(300, src, dst, sweeps=4)
    assert initial.crossings > 0
    assert reduced.crossings < initial.crossings * 0.9
    assert np.array_equal(initial.layer, reduced.layer)


@pytest.mark.parametrize("seed", range(6))
def test_reported_crossings_match_brute_force_on_polylines(seed: int) -> None:
    n = 40
    src, dst = random_dag(n, 70, seed=seed, window=6)
    lay = layout(n, src, dst)
    assert lay.crossings == polyline_crossings(lay, src, dst)


@pytest.mark.parametrize("seed", range(20))
def test_count_crossings_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    m = int(rng.integers(0, 120))
    width = int(rng.integers(1, 12))
    upper = rng.integers(0, width, size=m)
    lower = rng.integers(0, width, size=m)
    group = rng.integers(0, 4, size=m) * 7  # sparse group ids
    assert count_crossings(upper, lower, group) == brute_crossings(upper, lower, group)
    assert count_crossings(upper, lower) == brute_crossings(upper, lower, np.zeros(m, dtype=np.int64))


def test_count_crossings_known_cases() -> None:
    # complete bipartite K(3,3) without shared endpoints crossing: 9 edges, 9 crossings
    u = np.repeat(np.arange(3), 3)
    v = np.tile(np.arange(3), 3)
    assert count_crossings(u, v) == brute_crossings(u, v, np.zeros(9, dtype=np.int64)) == 9
    assert count_crossings(np.arange(5), np.arange(5)[::-1]) == 10
    assert count_crossings(np.arange(5), np.arange(5)) == 0
    assert count_crossings(np.array([], dtype=np.int64), np.array([], dtype=np.int64)) == 0
    with pytest.raises(ValueError):
        count_crossings(np.arange(3), np.arange(2))


def test_a_source_feeding_every_block_of_a_deep_chain_stays_bounded() -> None:
    """One graph input used by each of 4,000 chained nodes (a shared mask or shape input) would need
    ~8 million dummy nodes; the longest edges are drawn straight instead, ending on their nodes."""
    from trtstudio.graph import layout as lay_mod

    chain = 4000
    n = chain + 1  # node 0 is the shared input
    src = np.r_[np.arange(1, chain), np.zeros(chain, dtype=np.int64)]
    dst = np.r_[np.arange(2, chain + 1), np.arange(1, chain + 1)]
    out = layout(n, src, dst, sweeps=1)
    assert out.layer[chain] - out.layer[1] == chain - 1  # the chain keeps its layers
    pts = [out.edge_xy[out.edge_offsets[i]:out.edge_offsets[i + 1]] for i in range(src.size)]
    dummies = sum(len(p) - 2 for p in pts)
    assert dummies <= lay_mod._DUMMY_BUDGET * n
    for i in range(src.size):  # every edge still runs from its source to its target
        assert abs(pts[i][0, 0] - out.x[src[i]]) < 1e-6 and abs(pts[i][-1, 0] - out.x[dst[i]]) < 1e-6
