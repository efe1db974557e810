"""pytest-qt tests of the graph view's first frame on models shaped like real exports.

Each test grabs the widget to a PNG (kept in pytest's tmp_path to look at) and asserts geometry of
what was drawn: nodes not clipped at the left, the legend strip clear of every node, folding.
"""

from __future__ import annotations

from pathlib import Path

import graph_view_models as gm
import numpy as np
import onnx
import pytest

pytestmark = pytest.mark.gui

pytest.importorskip("PySide6")

from PySide6.QtCore import QPointF, QRectF  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402

from trtstudio.graph.display import DisplayGraph, build_display  # noqa: E402
from trtstudio.graph.model import load_model  # noqa: E402
from trtstudio.ui import graph_view as gv_mod  # noqa: E402
from trtstudio.ui.graph_view import READABLE_SCALE, GraphView  # noqa: E402


def _display(tmp_path: Path, model: onnx.ModelProto, **kw: object) -> DisplayGraph:
    p = tmp_path / "m.onnx"
    onnx.save(model, str(p))
    return build_display(load_model(p).graph, **kw)  # type: ignore[arg-type]


def _view(qtbot, dg: DisplayGraph, w: int = 420, h: int = 560) -> GraphView:
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(w, h)
    view.show()
    qtbot.waitExposed(view)
    view.set_display(dg)
    return view


def _shot(view: GraphView, path: Path) -> QImage:
    img = view.grab().toImage()
    assert view.grab().save(str(path))
    return img


def _drawn_nodes(view: GraphView) -> list[int]:
    return view._visible().tolist()


def _distinct_colours(img: QImage, rect: QRectF) -> int:
    seen = set()
    for y in range(int(rect.top()) + 1, int(rect.bottom()) - 1, 3):
        for x in range(int(rect.left()) + 1, int(rect.right()) - 1, 3):
            seen.add(img.pixel(x, y))
    return len(seen)


def test_densenet_first_screen_is_the_data_path_not_a_constant_fan(qtbot, tmp_path: Path) -> None:
    dg = _display(tmp_path, gm.densenet_like(blocks=60))
    view = _view(qtbot, dg)
    img = _shot(view, tmp_path / "densenet_first.png")
    assert dg.folded_count == 60 * 5 and view.folding_enabled
    shown = _drawn_nodes(view)
    labels = {dg.labels[i] for i in shown}
    assert "ConstantOfShape" not in labels and "Unsqueeze" not in labels
    assert {"input", "Conv", "Mul", "Add", "Relu"} <= labels
    assert view.scale >= READABLE_SCALE
    # few edges cross the first screen: a chain, not a fan of hundreds
    v = view.visible_scene_rect()
    bb = dg.edge_bbox
    on_screen = (bb[:, 2] >= v.left()) & (bb[:, 0] <= v.right()) & (bb[:, 3] >= v.top()) & (bb[:, 1] <= v.bottom())
    assert int(on_screen.sum()) <= len(shown) + 2
    # the fold badge is explained in the legend, and the legend strip is drawn
    assert any("folded" in label for label, _ in view.legend_items())
    assert _distinct_colours(img, view.legend_rect()) > 3
    # tooltip of a host lists what is folded into it
    mul = next(i for i in shown if dg.labels[i] == "Mul")
    tip = view.tooltip_at(view.node_rect(mul).center())
    assert "folded in:" in tip and "ConstantOfShape" in tip and "Unsqueeze" in tip


def test_legend_never_covers_a_node(qtbot, tmp_path: Path) -> None:
    dg = _display(tmp_path, gm.wide_top(branches=6, depth=40))
    view = _view(qtbot, dg, 360, 420)
    legend = view.legend_rect()
    assert legend.height() > 0 and legend.bottom() == view.height()
    # the strip lies below the scene area: no scene point drawn there
    assert view.to_scene(QPointF(0, legend.top())).y() == pytest.approx(view.visible_scene_rect().bottom())
    strip = legend.toRect().adjusted(0, 1, 0, 0)
    reference = _shot(view, tmp_path / "legend_first.png").copy(strip)
    for step in range(5):  # pan so that nodes sit exactly across the strip's top edge
        i = int(np.flatnonzero(~dg.hidden)[(step * 37) % int((~dg.hidden).sum())])
        view.offset = QPointF(float(dg.lay.x[i]) - view.width() / 2 / view.scale,
                              float(dg.lay.y[i]) - (legend.top() + 4) / view.scale)
        view.update()
        assert view.node_rect(i).intersects(legend)  # the node's box reaches into the strip
        img = _shot(view, tmp_path / f"legend_{step}.png")
        assert img.copy(strip) == reference  # yet the strip shows only the legend
        assert i in _drawn_nodes(view)  # and the node is drawn above it, clipped at the strip
    # fitting and centring place nodes above the strip, never behind it
    view.fit(whole=True)
    assert max(view.node_rect(i).bottom() for i in _drawn_nodes(view)) <= legend.top()
    last = int(np.argmax(dg.lay.y))
    view.center_on([last])
    assert view.node_rect(last).bottom() <= legend.top()


def test_first_frame_of_a_wide_graph_starts_at_its_left_column(qtbot, tmp_path: Path) -> None:
    dg = _display(tmp_path, gm.wide_top(branches=24, depth=12))
    view = _view(qtbot, dg, 500, 500)
    _shot(view, tmp_path / "wide_first.png")
    assert view.scale >= READABLE_SCALE  # readable, so the top is wider than the window
    shown = _drawn_nodes(view)
    assert len(shown) >= 10
    # every row on the first screen starts inside the view: its leftmost node is not cut off
    for layer in np.unique(dg.lay.layer[shown]):
        row = np.flatnonzero((dg.lay.layer == layer) & ~dg.hidden)
        r = view.node_rect(int(row[np.argmin(dg.lay.x[row])]))
        if r.top() < view.viewport_height():
            assert r.left() >= 0, layer
    assert min(view.node_rect(i).left() for i in shown) < view.width() / 4  # and the view starts at the left
    assert min(view.node_rect(i).top() for i in shown) >= 0  # at the top


def test_graph_that_fits_is_shown_whole_and_centred(qtbot, tmp_path: Path) -> None:
    dg = _display(tmp_path, gm.detector_like())
    view = _view(qtbot, dg, 900, 900)
    _shot(view, tmp_path / "detector_first.png")
    rects = [view.node_rect(i) for i in range(dg.n) if not dg.hidden[i]]
    assert min(r.left() for r in rects) >= 0 and max(r.right() for r in rects) <= view.width()
    assert min(r.top() for r in rects) >= 0 and max(r.bottom() for r in rects) <= view.viewport_height()


def test_toggle_folding_and_search_hits_unfold_their_chain(qtbot, tmp_path: Path) -> None:
    dg = _display(tmp_path, gm.densenet_like(blocks=50))
    view = _view(qtbot, dg)
    g = dg.graph
    with qtbot.waitSignal(view.sig_folding_changed, timeout=5000) as blocker:
        view.set_folding(False)
    assert blocker.args == [0] and dg.folded_count == 0 and not view.folding_enabled
    _shot(view, tmp_path / "unfolded.png")
    assert "ConstantOfShape" in {dg.labels[i] for i in _drawn_nodes(view)} or view.scale >= READABLE_SCALE
    view.set_folding(True)
    assert dg.folded_count == 250
    # a search hit inside a folded chain unfolds that chain only
    cs = dg.display_index(g.node_by_name["cs7"])
    us = dg.display_index(g.node_by_name["us7"])
    assert dg.hidden[cs]
    view.highlight = {cs}
    assert not dg.hidden[cs] and not dg.hidden[us] and dg.folded_count == 248
    view.highlight = set()
    assert dg.folded_count == 250
    # selecting a folded node unfolds it and centres on it
    view.select([cs], center=True)
    assert not dg.hidden[cs]
    r = view.node_rect(cs)
    assert QRectF(0, 0, view.width(), view.viewport_height()).contains(r.center())
    _shot(view, tmp_path / "selected_folded.png")


def test_big_graph_refolds_in_a_worker(qtbot, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(gv_mod, "SYNC_RELAYOUT", 100)
    dg = _display(tmp_path, gm.densenet_like(blocks=40))
    view = _view(qtbot, dg)
    before = dg.placement
    with qtbot.waitSignal(view.sig_folding_changed, timeout=20000) as blocker:
        view.set_folding(False)
        assert dg.placement is before  # still the old layout while the worker runs
    assert blocker.args == [0] and dg.folded_count == 0
    from trtstudio.ui.workers import live_handles

    qtbot.waitUntil(lambda: not live_handles(), timeout=5000)


def test_edge_label_tooltip_gives_the_full_shape(qtbot, tmp_path: Path) -> None:
    dg = _display(tmp_path, gm.detector_like())
    view = _view(qtbot, dg, 700, 700)
    view.center_on([dg.display_index(dg.graph.node_by_name["conv_s1"])], zoom_in=False)
    view._set_scale(1.0)
    view.center_on([dg.display_index(dg.graph.node_by_name["conv_s1"])], zoom_in=False)
    e = next(i for i in range(len(dg.src)) if dg.edge_tensor(i) == "images" and dg.edge_labelled(i))
    off = dg.lay.edge_offsets
    a, b = dg.lay.edge_xy[off[e]], dg.lay.edge_xy[off[e] + 1]
    anchor = view.to_view((a[0] + b[0]) / 2 + 4, (a[1] + b[1]) / 2 + 3)
    assert view.edge_label_at(anchor + QPointF(6, -3)) == e
    assert view.tooltip_at(anchor + QPointF(6, -3)) == "images: [1,3,height,width]"


def test_big_graph_shows_its_top_first_and_the_rest_follows(qtbot, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(gv_mod, "SYNC_RELAYOUT", 100)
    dg = _display(tmp_path, gm.densenet_like(blocks=40), first=60)
    assert not dg.placement.complete and dg.folded_count == 40 * 5
    placed = ~dg.hidden
    assert placed[: dg.node_offset + 60].any() and not placed[dg.node_offset + 60:].any()
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(420, 560)
    view.show()
    with qtbot.waitSignal(view.sig_folding_changed, timeout=20000):
        view.set_display(dg)
        top = sorted(_drawn_nodes(view))
        assert top and all(i < dg.node_offset + 60 for i in top)  # the first frame: the top, placed
        assert not view.layout_settled.is_set()  # work that can wait waits for the rest
    assert dg.placement.complete and dg.folded_count == 200
    assert view.layout_settled.is_set()
    assert int((~dg.hidden).sum()) == dg.n - 200  # everything else placed now
    assert view.scale >= READABLE_SCALE and min(view.node_rect(i).top() for i in _drawn_nodes(view)) >= 0
    _shot(view, tmp_path / "big_after_full_layout.png")
