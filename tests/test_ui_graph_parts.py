"""pytest-qt tests of the parts a GraphView is composed of: colours, legend strip, re-layout.

Driven through the public GraphView where the behaviour is the view's (a stale re-layout is
dropped), and through the part itself where it states an invariant of its own (the raster and
the per-node fill agree; the legend strip has room for every row it paints).
"""

from __future__ import annotations

from pathlib import Path

import graph_view_models as gm
import numpy as np
import onnx
import pytest

pytestmark = pytest.mark.gui

pytest.importorskip("PySide6")

from PySide6.QtGui import QColor  # noqa: E402

from trtstudio.graph.display import DisplayGraph, build_display  # noqa: E402
from trtstudio.graph.model import load_model  # noqa: E402
from trtstudio.ui import graph_view as gv_mod  # noqa: E402
from trtstudio.ui.graph_colors import NodeColors  # noqa: E402
from trtstudio.ui.graph_legend import LEGEND_ROW  # noqa: E402
from trtstudio.ui.graph_view import GraphView  # noqa: E402


def _display(tmp_path: Path, model: onnx.ModelProto, name: str = "m.onnx") -> DisplayGraph:
    p = tmp_path / name
    onnx.save(model, str(p))
    return build_display(load_model(p).graph)


def _view(qtbot, w: int, h: int) -> GraphView:
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(w, h)
    view.show()
    qtbot.waitExposed(view)
    return view


def _bgra(c: QColor) -> list[int]:
    return [c.blue(), c.green(), c.red(), c.alpha()]


def test_raster_colours_match_the_node_fill(tmp_path: Path) -> None:
    dg = _display(tmp_path, gm.detector_like())
    colors = NodeColors()
    colors.set_categories(dg)
    assert not colors.is_overlay and colors.legend
    # each item filled with its category's colour (graph inputs and outputs: the I/O colour)
    from trtstudio.graph.categories import CATEGORIES
    from trtstudio.ui.graph_colors import IO_COLOR

    assert [colors.fill(i).name() for i in range(dg.n)] == [
        QColor(IO_COLOR if c == "io" else CATEGORIES[c if c in CATEGORIES else "other"][1]).name() for c in dg.cats]
    raster = colors.raster(dg.n)
    assert [raster[i].tolist() for i in range(dg.n)] == [_bgra(colors.fill(i)) for i in range(dg.n)]
    hexes = ["#d62728", "#2ca02c", "#1f77b4"]
    colors.set_overlay([hexes[i % 3] for i in range(dg.n)], [("a", "#d62728")], None)
    assert colors.is_overlay and colors.legend == [("a", "#d62728")]
    raster = colors.raster(dg.n)
    assert [raster[i].tolist() for i in range(dg.n)] == [_bgra(colors.fill(i)) for i in range(dg.n)]
    assert colors.raster(dg.n + 1).tolist() == [[128] * 4] * (dg.n + 1)  # colours of another graph: grey


def test_narrow_legend_strip_holds_every_row_it_paints(qtbot, tmp_path: Path) -> None:
    dg = _display(tmp_path, gm.densenet_like(blocks=30))
    view = _view(qtbot, 220, 500)
    view.set_display(dg)
    items = view.legend_items()
    strip = view.legend_rect()
    rows = round((strip.height() - 8) / LEGEND_ROW)
    assert len(items) >= 4 and rows >= 3  # narrow: the chips wrap
    img = view.grab().toImage()
    background = img.pixel(int(strip.right()) - 2, int(strip.bottom()) - 2)
    # the last row of the strip has a chip painted in it, and nothing is painted below the strip
    last = range(int(strip.bottom() - LEGEND_ROW - 4), int(strip.bottom()))
    assert any(img.pixel(x, y) != background for y in last for x in range(8, 30))
    assert strip.bottom() == view.height()


def test_relayout_of_a_replaced_graph_is_dropped(qtbot, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(gv_mod, "SYNC_RELAYOUT", 100)
    first = _display(tmp_path, gm.densenet_like(blocks=40), "a.onnx")
    second = _display(tmp_path, gm.detector_like(), "b.onnx")
    view = _view(qtbot, 420, 560)
    view.set_display(first)
    before = first.placement
    changes: list[int] = []
    view.sig_folding_changed.connect(changes.append)
    view.set_folding(False)  # the unfolded layout is computed in a worker ...
    view.set_display(second)  # ... while another graph replaces this one
    from trtstudio.ui.workers import live_handles

    qtbot.waitUntil(lambda: not live_handles(), timeout=20000)
    qtbot.wait(50)  # let the worker's queued result arrive
    assert first.placement is before and first.folded_count == 200
    assert changes == [] and view.dg is second
    assert not np.array_equal(view._visible(), [])  # the new graph is drawn


def _elements(path) -> list[tuple[int, float, float]]:  # type: ignore[no-untyped-def]
    out = []
    for i in range(path.elementCount()):
        e = path.elementAt(i)
        out.append((int(e.type.value), round(e.x, 6), round(e.y, 6)))
    return out


def test_edges_and_arrow_heads_are_one_path_each_with_the_elements_of_each_edge() -> None:
    """The edges of a paint go to Qt as one QPainterPath (read from its QDataStream form) instead
    of one per edge: the same curves and polylines, a long polyline cut to the band painted."""
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QPainterPath

    from trtstudio.ui.graph_paint import _arrows_path, _edges_path

    rng = np.random.default_rng(1)
    long_y = np.arange(40, dtype=float) * 10.0  # an edge down through 40 layers (y ascending)
    segs = [np.array([[0.0, 0.0], [30.0, 50.0]]), np.array([[5.0, 5.0], [6.0, 20.0], [7.0, 90.0]]),
            np.column_stack([rng.normal(size=40), long_y]), np.array([[1.5, 2.5], [-3.0, 80.25]])]
    pts = np.concatenate(segs)
    counts = np.array([len(s) for s in segs])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    top, bottom = 95.0, 205.0
    expected = QPainterPath()
    for s in (segs[0], segs[3]):  # the two-point edges first, as S curves
        mid = (s[0, 1] + s[1, 1]) / 2
        expected.moveTo(QPointF(*s[0]))
        expected.cubicTo(QPointF(s[0, 0], mid), QPointF(s[1, 0], mid), QPointF(*s[1]))
    for s in (segs[1], segs[2][9:22]):  # the long one from the point above the band (y 90) to the one below (210)
        expected.moveTo(QPointF(*s[0]))
        for x, y in s[1:]:
            expected.lineTo(QPointF(x, y))
    assert _elements(_edges_path(pts, starts, counts, top, bottom)) == _elements(expected)
    heads = _arrows_path(np.array([[10.0, 20.0], [10.0, 20.0]]))  # two heads on one node
    assert heads.elementCount() == 8 and heads.fillRule().name == "WindingFill"
    assert heads.contains(QPointF(10.0, 16.0)) and not heads.contains(QPointF(10.0, 21.0))


def test_an_edge_with_a_point_not_a_number_leaves_the_other_edges_drawn() -> None:
    """Qt drops a whole QPainterPath read with one NaN point, and a frame's edges are one path: an
    edge with such a point is left out instead of every edge of the frame."""
    from trtstudio.ui.graph_paint import _drawable, _edges_path

    pts = np.array([[0, 0], [1, 10], [np.nan, 20], [3, 30], [4, 40], [5, 50], [6, 60]], dtype=float)
    starts, counts = np.array([0, 2, 4, 6]), np.array([2, 2, 2, 1])
    assert _drawable(pts, starts, counts).tolist() == [True, False, True, False]  # NaN; one point
    assert _edges_path(pts, starts, counts, 0, 100).elementCount() == 0  # what Qt makes of it unfiltered
    keep = _drawable(pts, starts, counts)
    assert _edges_path(pts, starts[keep], counts[keep], 0, 100).elementCount() == 8


def test_visible_indices_are_each_items_visible_index(tmp_path: Path) -> None:
    """DisplayGraph.visible_indices (numpy, every paint of a search's highlights) is visible_index
    item by item: a folded item moves onto its host; out-of-range items are dropped."""
    p = tmp_path / "d.onnx"
    onnx.save(gm.detector_like(), str(p))
    dg = build_display(load_model(p).graph, fold=True)
    assert dg.hidden.any()  # its constant chains are folded
    items = set(range(-2, dg.n + 3))
    assert dg.visible_indices(items) == {dg.visible_index(i) for i in items if 0 <= i < dg.n}
    assert dg.visible_indices(set()) == set()
