"""Selection that holds (issue 52 item 2): real mouse presses and releases at row coordinates
(``visualRect``) on the Compare dock's table, the layer table and the graph; the clicked row is
the row selected, everywhere. Real MainWindow, real TREx A100 engine files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from test_ui_compare import compared  # noqa: E402
from test_ui_engine_graph import A100, engine_files, open_engine_graph  # noqa: E402

from trtstudio.ui.main_window import MainWindow  # noqa: E402


def press_release(table: Any, row: int, col: int = 1) -> QPoint:
    """A real press, then release, on the centre of cell (``row``, ``col``) of ``table``, as a
    user's click: the release goes to where the pointer is, whatever moved under it meanwhile."""
    table.scrollTo(table.model().index(row, col))
    rect = table.visualRect(table.model().index(row, col))
    pos = rect.center()
    vp = table.viewport()
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, pos)
    QTest.mouseMove(vp, pos + QPoint(1, 0), 20)  # a hand moves a pixel while the button is down
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, pos + QPoint(1, 0), 60)
    return pos


def test_compare_row_clicked_is_the_row_selected(qtbot: Any, window: MainWindow, trt_real: Path) -> None:
    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    c = compared(qtbot, window, [str(trt_real / A100 / "qat-residual")])
    dock = window.compare.dock_widget
    table, proxy, model = dock.table, dock.proxy, dock.model
    window.compare.dock.raise_()
    qtbot.waitUntil(lambda: table.isVisible() and table.viewport().height() > 60)
    groups = c.pair.groups
    names = [" + ".join(g["base_layers"]) for g in groups]
    # every fused group, the residual ones first ("Conv_10 + Add_11 + Relu_12" in the issue)
    rows = [r for r, g in enumerate(groups) if len(g["base_layers"]) >= 1 and "Add" in names[r]][:4]
    rows += [r for r in range(len(groups)) if r not in rows][:: max(1, len(groups) // 6)]
    assert rows
    for r in rows:
        view_row = proxy.mapFromSource(model.index(r, 0)).row()
        pos = press_release(table, view_row)
        got = dock.selected_group()
        assert got == r, f"clicked {names[r]!r}, selected {names[got] if got is not None else None!r}"
        # the row under the pointer is still the row clicked: nothing scrolled under it
        assert table.indexAt(pos).row() == view_row, "the table scrolled under the pointer"
        assert window.engine_tabs.layer_table.selected_layers() == groups[r]["base_index"]
