"""Desktop habits (issue 52 item 6): Ctrl+C copies the selected rows as TSV (a real key press),
rows and graph nodes have context menus (copy name, copy row/node as JSON, select in graph,
export), every chart exports as PNG and SVG through pyqtgraph's exporters and copies as an image.
Real MainWindow, real TREx A100 engine files."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from test_ui_compare import compared  # noqa: E402
from test_ui_engine_graph import A100, engine_files, open_engine_graph  # noqa: E402
from test_ui_selection import press_release  # noqa: E402

from trtstudio.ui.main_window import MainWindow  # noqa: E402


def action(menu: Any, text: str) -> Any:
    return next(a for a in menu.actions() if a.text() == text)


def test_ctrl_c_copies_rows_as_tsv_and_row_menus(qtbot: Any, window: MainWindow, trt_real: Path, tmp_path: Path) -> None:
    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    lt = window.engine_tabs.layer_table
    table, engine = lt.table, window.engine
    press_release(table, 3)
    vp = table.viewport()
    pos = table.visualRect(table.model().index(6, 1)).center()
    QTest.mouseClick(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, pos)
    assert len(lt.selected_layers()) == 4
    QTest.keyClick(table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    rows = list(csv.reader(io.StringIO(QApplication.clipboard().text()), delimiter="\t"))
    shown = [c for c in range(table.model().columnCount()) if not table.isColumnHidden(c)]
    assert len(rows) == 5 and len(rows[0]) == len(shown)  # the titles, then one line per row
    name_col = rows[0].index("Name")
    assert [r[name_col] for r in rows[1:]] == [engine.layers[i].name for i in lt.selected_layers()]
    # the row menu: copy name, copy row as JSON, select in graph, export
    menu = table.row_menu(4)
    action(menu, "Copy name").trigger()
    layer = engine.layers[lt.model.position(4)]
    assert QApplication.clipboard().text() == layer.name
    action(menu, "Copy row as JSON").trigger()
    assert json.loads(QApplication.clipboard().text()) == json.loads(json.dumps(layer.to_json(), default=str))
    out = tmp_path / "layers.csv"
    table.export_csv(str(out))
    assert len(list(csv.reader(out.open()))) == table.model().rowCount() + 1
    window.tabs.setCurrentIndex(0)
    action(menu, "Select in graph").trigger()
    assert window.graphs.engine_view.selected == set(window.graphs.layer_display_indices(
        window.graphs.engine_view.dg, lt.selected_layers()))

    # the Compare dock's rows too
    c = compared(qtbot, window, [str(trt_real / A100 / "fp16")])
    dock = window.compare.dock_widget
    menu = dock.table.row_menu(2)
    action(menu, "Copy row as JSON").trigger()
    g = dock.model.groups[dock.proxy.mapToSource(dock.proxy.index(2, 0)).row()]
    assert json.loads(QApplication.clipboard().text())["base_layers"] == g["base_layers"]
    action(menu, "Select in graph").trigger()
    assert lt.selected_layers() == g["base_index"] and c.pair.groups.index(g) == dock.selected_group()
    dock.table.selectRow(2)
    QTest.keyClick(dock.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.clipboard().text().splitlines()[0].startswith("Change\tBase layers")


def test_graph_node_menu_and_image_export(qtbot: Any, window: MainWindow, trt_real: Path, tmp_path: Path) -> None:
    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    view, engine = window.graphs.engine_view, window.engine
    di = view.dg.display_index(5)
    view.center_on([di], zoom_in=True)
    p = view.to_view(float(view.dg.lay.x[di]), float(view.dg.lay.y[di]))
    assert view.node_at(p) == di
    menu = view.node_menu(di)
    action(menu, "Copy name").trigger()
    assert QApplication.clipboard().text() == engine.layers[5].name
    action(menu, "Copy as JSON").trigger()
    assert json.loads(QApplication.clipboard().text())["name"] == engine.layers[5].name
    png, svg = tmp_path / "g.png", tmp_path / "g.svg"
    view.export_image(str(png))
    view.export_image(str(svg))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and engine.layers[5].name.split(" + ")[0] in text


@pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise", "grabbing the keyboard")  # offscreen popups
def test_every_chart_exports_png_svg_and_copies(qtbot: Any, window: MainWindow, trt_real: Path, tmp_path: Path) -> None:
    import pyqtgraph as pg
    from PySide6.QtGui import QContextMenuEvent

    from trtstudio.ui import chart_export

    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    app = QApplication.instance()
    charts = [w for w in app.allWidgets() if isinstance(w, pg.GraphicsView) and w.window() is window]
    assert len(charts) >= 2
    window.engine_tabs.setCurrentIndex(next(i for i in range(window.engine_tabs.count())
                                            if window.engine_tabs.widget(i).findChildren(pg.GraphicsView)))
    qtbot.wait(20)
    for k, view in enumerate(c for c in charts if c.isVisible()):
        png, svg = tmp_path / f"c{k}.png", tmp_path / f"c{k}.svg"
        chart_export.export_chart(view, str(png))
        chart_export.export_chart(view, str(svg))
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "<svg" in svg.read_text()
        menu = chart_export.chart_menu(view)
        assert [a.text() for a in menu.actions()][:3] == ["Export as PNG...", "Export as SVG...", "Copy image"]
        action(menu, "Copy image").trigger()
        assert not QApplication.clipboard().image().isNull()
    # the filter answers a right click on a chart's viewport (the menu closed by a timer)
    from PySide6.QtCore import QTimer

    shown: list[str] = []

    def close_menu() -> None:
        from PySide6.QtWidgets import QMenu

        m = QApplication.activePopupWidget()
        if isinstance(m, QMenu):
            shown.extend(a.text() for a in m.actions())
            m.close()

    QTimer.singleShot(100, close_menu)
    view = next(c for c in charts if c.isVisible())
    ev = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, QPoint(10, 10), view.viewport().mapToGlobal(QPoint(10, 10)))
    QApplication.sendEvent(view.viewport(), ev)
    assert "Export as SVG..." in shown
