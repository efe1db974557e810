"""What was left of issue 52 items 2 and 6: the side-by-side compare graphs name the convolution,
not the weights folded into a layer's name; row context menus Compare and Export; plot menus that
copy the series' name and the point under the pointer; a theme switch repaints the layer table's
selection colour. Real MainWindow, real TREx A100 engine files, real input events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

pytest.importorskip("PySide6")

from PySide6.QtCore import QPointF  # noqa: E402
from test_ui_compare import compared  # noqa: E402
from test_ui_engine_graph import A100, engine_files, open_engine_graph, shot  # noqa: E402

from trtstudio.ui.main_window import MainWindow  # noqa: E402


def test_side_by_side_sub_labels_name_the_convolution(qtbot: Any, window: MainWindow, trt_real: Path,
                                                      tmp_path: Path) -> None:
    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    compared(qtbot, window, [str(trt_real / A100 / "qat-residual")])
    tab = window.compare.tab
    view = tab.other_view
    dg = view.dg
    names = [n.name for n in dg.graph.nodes]
    i = next(k for k, n in enumerate(names) if n.endswith("+ Conv_22") and ".weight + QuantizeLinear" in n)
    d = dg.display_index(i)
    assert dg.sublabels[d] == "Conv_22"
    view.center_on([d], zoom_in=True)
    p = view.to_view(float(dg.lay.x[d]), float(dg.lay.y[d]))
    tip = view.tooltip_at(QPointF(p.x(), p.y()))
    assert names[i] in tip  # the whole name in the tooltip
    # every node: no weight or Q/DQ part left where a compute part is in the name
    for k, n in enumerate(names):
        sub = dg.sublabels[dg.display_index(k)]
        parts = n.split(" + ")
        if any("Conv" in part for part in parts):
            assert ".weight" not in sub and "QuantizeLinear" not in sub.replace("DequantizeLinear", ""), (n, sub)
    # the window's own engine graph keeps its labels (the comparison's copy is shortened)
    eg = window.graphs.engine_view.dg
    assert all(eg.sublabels[eg.display_index(k)] == node.name for k, node in enumerate(eg.graph.nodes))
    window.graphs.tabs.setCurrentWidget(tab)
    shot(window, "compare_sub_labels.png", tmp_path)


def _action(menu: Any, start: str) -> Any:
    return next(a for a in menu.actions() if a.text().startswith(start))


def _export_json(qtbot: Any, window: MainWindow, act: Any, path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:  # type: ignore[type-arg]
    from PySide6.QtWidgets import QFileDialog

    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), "JSON (*.json)"))
    with qtbot.waitSignal(window.sig_report_written, timeout=60000):
        act.trigger()
    return json.loads(path.read_text())  # type: ignore[no-any-return]


@pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise", "grabbing the keyboard")  # offscreen popups
def test_row_menus_compare_and_export(qtbot: Any, window: MainWindow, trt_real: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from test_ui_selection import press_release

    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    lt = window.engine_tabs.layer_table
    table, engine = lt.table, window.engine
    row = next(r for r in range(lt.model.rowCount()) if engine.layers[lt.model.position(r)].name == "Conv_5 + Add_6 + Relu_7")
    press_release(table, row)
    layer = lt.selected_layers()
    assert [engine.layers[i].name for i in layer] == ["Conv_5 + Add_6 + Relu_7"]
    menu = table.row_menu(row)
    assert not _action(menu, "Compare").isEnabled() and "none open" in _action(menu, "Compare").text()
    # Export: a report of the selected layer only (the same core as File > Export report)
    doc = _export_json(qtbot, window, _action(menu, "Export report of the selection (1 layer)"), tmp_path / "sel.json",
                       monkeypatch)
    assert [r["name"] for r in doc["layers"]] == ["Conv_5 + Add_6 + Relu_7"]
    assert doc["title"].endswith("(1 selected layer)") and doc["warnings"][0] == \
        f"this report covers 1 selected layers of {len(engine.layers)}"
    full = window.engine.layers[layer[0]].time
    assert doc["top_layers"][0]["time_ms"] == pytest.approx(full.per_inference_ms)
    assert doc["summary"]["top_layers"][0]["name"] == "Conv_5 + Add_6 + Relu_7"

    # with a comparison open, Compare selects the row's group in the Compare dock
    c = compared(qtbot, window, [str(trt_real / A100 / "qat-residual")])
    window.engine_tabs.raise_()
    press_release(table, lt.model.row_of_position(layer[0]))
    menu = table.row_menu(lt.model.row_of_position(layer[0]))
    act = _action(menu, "Compare")
    assert act.isEnabled()
    act.trigger()
    dock = window.compare.dock_widget
    g = c.pair.groups[dock.selected_group()]
    assert layer[0] in g["base_index"] and g["other_layers"][0].endswith("Conv_34 + Add_42 + Relu_43")
    assert window.compare.tab.other_view.selected  # the other side shows its layers
    # the Compare dock's own row: Export of the group's base layers, no Compare entry
    view_row = dock.proxy.mapFromSource(dock.model.index(dock.selected_group(), 0)).row()
    gmenu = dock.table.row_menu(view_row)
    assert not _action(gmenu, "Compare").isVisible()
    doc = _export_json(qtbot, window, _action(gmenu, "Export report of the selection"), tmp_path / "g.json",
                       monkeypatch)
    assert [r["index"] for r in doc["layers"]] == sorted(g["base_index"])
    # a real right click on a layer row opens the menu with both entries (closed by a timer)
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QContextMenuEvent
    from PySide6.QtWidgets import QApplication, QMenu

    shown: list[str] = []

    def close_menu() -> None:
        m = QApplication.activePopupWidget()
        if isinstance(m, QMenu):
            shown.extend(a.text() for a in m.actions() if a.isVisible())
            m.close()

    QTimer.singleShot(100, close_menu)
    r = lt.model.row_of_position(layer[0])
    pos = table.visualRect(table.model().index(r, 1)).center()
    ev = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, table.viewport().mapToGlobal(pos))
    QApplication.sendEvent(table.viewport(), ev)
    assert "Compare: select in the Compare dock" in shown and any(t.startswith("Export report") for t in shown)


@pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise", "grabbing the keyboard")
def test_plot_menus_copy_series_and_point(qtbot: Any, window: MainWindow, trt_real: Path) -> None:
    import numpy as np
    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication

    from trtstudio.ui import chart_export

    # a named curve, as the live panels draw them: the sample under the pointer, its series' name
    plot = pg.PlotWidget(title="latency")
    qtbot.addWidget(plot)
    x = np.arange(50, dtype=float)
    y = np.sin(x / 5) + 2
    plot.plot(x, y, name="median (ms)")
    plot.resize(500, 300)
    plot.show()
    qtbot.waitExposed(plot)
    qtbot.wait(50)  # the first auto-range, as the event loop does it
    vb = plot.getPlotItem().getViewBox()
    p = plot.mapFromScene(vb.mapViewToScene(pg.Point(17, float(y[17]))))
    menu = chart_export.chart_menu(plot, p)
    assert _action(menu, "Copy series name").isEnabled()
    _action(menu, "Copy series name").trigger()
    assert QApplication.clipboard().text() == "median (ms)"
    _action(menu, "Copy point as JSON").trigger()
    got = json.loads(QApplication.clipboard().text())
    assert got == {"chart": "latency", "series": "median (ms)", "index": 17, "x": 17, "y": pytest.approx(float(y[17]))}
    far = chart_export.chart_menu(plot, plot.mapFromScene(vb.mapViewToScene(pg.Point(17, 40.0))))
    assert not _action(far, "Copy point as JSON").isEnabled()

    # the engine's bar charts: the bar under the pointer, its category and value
    from trtstudio.ui.engine_charts import _BarChart

    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    tabs = window.engine_tabs
    bars = [b for b in window.findChildren(_BarChart) if b.data]
    chart = bars[0]
    tabs.setCurrentIndex(next(i for i in range(tabs.count()) if tabs.widget(i).isAncestorOf(chart)))
    qtbot.waitUntil(chart.isVisible)
    k = 1 if len(chart.data) > 1 else 0
    cvb = chart.getPlotItem().getViewBox()
    yk = float(len(chart.data) - 1 - k)
    pt = chart.mapFromScene(cvb.mapViewToScene(pg.Point(chart.data[k][1] / 2, yk)))
    got = chart_export.point_at(chart, pt)
    assert got is not None and got["label"] == chart.data[k][0] and got["x"] == pytest.approx(chart.data[k][1])


def test_theme_switch_repaints_selection_and_styled_colours(qtbot: Any, window: MainWindow, trt_real: Path,
                                                            tmp_path: Path) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QApplication
    from test_ui_selection import press_release

    from trtstudio.ui import theme

    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    lt = window.engine_tabs.layer_table
    press_release(lt.table, 2)
    idx = lt.model.index(2, 1)

    def selected_colour() -> str:
        return QColor(lt.model.data(idx, Qt.ItemDataRole.BackgroundRole).color()).name()

    light = selected_colour()
    assert light == QApplication.palette().color(QPalette.ColorRole.Highlight).name()
    window.set_theme("Dark")
    try:
        dark = QApplication.palette()
        # the selected row: the dark palette's Highlight (on the next turn of the event loop), its text readable on it
        qtbot.waitUntil(lambda: selected_colour() == dark.color(QPalette.ColorRole.Highlight).name())
        assert selected_colour() != light
        text = QColor(lt.model.data(idx, Qt.ItemDataRole.ForegroundRole).color())
        assert theme.contrast_ratio(text, QColor(selected_colour())) >= 4.5
        # the warnings banner follows, readable on its own background
        assert "#3d3000" in lt.banner.styleSheet()
        assert theme.contrast_ratio("#ffe08a", "#3d3000") >= 4.5
        # the Compare dock's delta text: light green/red on the dark base
        c = compared(qtbot, window, [str(trt_real / A100 / "qat-residual")])
        dock = window.compare.dock_widget
        row = next(r for r, g in enumerate(c.pair.groups) if g["delta_ms"] is not None and g["delta_ms"] < 0)
        fg = QColor(dock.model.data(dock.model.index(row, 7), Qt.ItemDataRole.ForegroundRole))
        assert theme.contrast_ratio(fg, dark.color(QPalette.ColorRole.Base)) >= 4.5
        for r, g in enumerate(c.pair.groups):  # the Change cell: dark text on its light tint
            bg = QColor(dock.model.data(dock.model.index(r, 0), Qt.ItemDataRole.BackgroundRole))
            text = QColor(dock.model.data(dock.model.index(r, 0), Qt.ItemDataRole.ForegroundRole))
            assert theme.contrast_ratio(text, bg) >= 4.5, g["change"]
        shot(window, "dark_compare.png", tmp_path)
        window.engine_dock.raise_()
        shot(window, "dark_selection.png", tmp_path)
    finally:
        window.set_theme("Light")
    qtbot.waitUntil(lambda: selected_colour() == light)
    assert "#fff3cd" in lt.banner.styleSheet()
