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


def props_rows(window: MainWindow) -> dict[str, str]:
    props = window.side_tabs.props
    return {props.topLevelItem(i).text(0): props.topLevelItem(i).text(1) for i in range(props.topLevelItemCount())}


def key(qtbot: Any, window: MainWindow, seq: str) -> None:
    """A real key press on the window, as the user's keyboard sends it (through QAction shortcuts)."""
    from PySide6.QtGui import QKeySequence

    combo = QKeySequence(seq)[0]
    QTest.keyClick(window.graphs.current_view(), combo.key(), combo.keyboardModifiers())
    qtbot.wait(10)


def test_search_ranks_layer_names_first_and_selects_everywhere(qtbot: Any, window: MainWindow, trt_real: Path) -> None:
    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    engine, view, table = window.engine, window.graphs.engine_view, window.engine_tabs.layer_table
    g = view.dg.graph
    window.search.setText("Reformat")
    window.search_ctl.refresh()
    hits = [view.dg.node_index(d) for d in window.search_ctl.hits]
    named = [i for i in hits if "reformat" in g.nodes[i].name.lower()]
    by_tensor = [i for i in hits if "reformat" not in g.nodes[i].name.lower()
                 and "reformat" not in g.nodes[i].qualified_op.lower()]
    assert named and by_tensor, "the fixture has layers named Reformat... and layers whose tensors are"
    assert hits[:len(named)] == named  # every name match before any tensor-name match
    # Enter: the first match is selected as a click on it would be
    QTest.keyClick(window.search, Qt.Key.Key_Return)
    first = hits[0]
    assert "reformat" in engine.layers[first].name.lower()
    assert table.selected_layers() == [first] and window.workspace.selection.layers == [first]
    row = table.model.row_of_position(first)
    assert table.table.rowAt(table.table.visualRect(table.model.index(row, 1)).center().y()) == row  # in view
    assert props_rows(window)["Layer"] == f"#{first} {engine.layers[first].name}"  # the engine layer's fields


def test_esc_clears_and_alt_arrows_walk_the_selections(qtbot: Any, window: MainWindow, trt_real: Path) -> None:
    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    table = window.engine_tabs.layer_table
    # three rows clicked in the layer table, with the mouse
    picked = []
    for row in (2, 7, 11):
        press_release(table.table, row)
        picked.append(table.selected_layers())
    assert [len(p) for p in picked] == [1, 1, 1] and len({p[0] for p in picked}) == 3
    assert window.workspace.selection.layers == picked[-1]
    key(qtbot, window, "Esc")
    assert table.selected_layers() == [] and window.workspace.selection.layers == []
    assert window.graphs.engine_view.selected == set() and window.side_tabs.props.topLevelItemCount() == 0
    key(qtbot, window, "Alt+Left")  # back to what Esc cleared
    assert table.selected_layers() == picked[2]
    key(qtbot, window, "Alt+Left")
    assert table.selected_layers() == picked[1] == window.workspace.selection.layers
    assert window.graphs.engine_view.selected == set(window.graphs.layer_display_indices(
        window.graphs.engine_view.dg, picked[1]))
    key(qtbot, window, "Alt+Left")
    key(qtbot, window, "Alt+Left")  # at the start: stays
    assert table.selected_layers() == picked[0]
    key(qtbot, window, "Alt+Right")
    key(qtbot, window, "Alt+Right")
    assert table.selected_layers() == picked[2]
    # the shortcuts page lists these keys from the window's own actions
    from PySide6.QtGui import QAction, QKeySequence

    from trtstudio.ui.actions import shortcuts_table

    rows = shortcuts_table(window)
    keys = {text: keys for _menu, text, keys in rows}
    actions = {a.text().replace("&", ""): a for a in window.findChildren(QAction) if not a.shortcut().isEmpty()}
    native = QKeySequence.SequenceFormat.NativeText
    assert set(keys) == set(actions)  # every action with a key, nothing written by hand
    for text, a in actions.items():
        assert keys[text] == a.shortcut().toString(native)
    assert {"Clear selection", "Back (previous selection)", "Forward (next selection)", "Find"} <= set(keys)
    from trtstudio.ui.actions import show_shortcuts

    dlg = show_shortcuts(window)
    qtbot.addWidget(dlg)
    from PySide6.QtWidgets import QTableWidget

    shown = dlg.findChild(QTableWidget, "shortcuts_table")
    assert shown.rowCount() == len(rows) and shown.item(0, 2).text() == rows[0][2]
    dlg.close()


def test_side_by_side_views_move_together_and_name_layers_by_their_op(qtbot: Any, window: MainWindow,
                                                                     trt_real: Path, tmp_path: Path) -> None:
    from test_ui_engine_graph import shot

    from trtstudio.ui.compare_dock import COLUMNS

    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    c = compared(qtbot, window, [str(trt_real / A100 / "qat-residual")])
    tab = window.compare.tab
    qtbot.waitUntil(lambda: tab.base_view.width() > 100)
    qtbot.wait(20)
    b, o = tab.base_view, tab.other_view
    assert b.scale == pytest.approx(o.scale)  # one zoom after the fit: labels the same size
    # a drag on the base pans the other as far; a wheel on the other zooms both
    ob, oo = b.center_scene(), o.center_scene()
    start = QPoint(b.width() // 2, b.height() // 2)
    QTest.mousePress(b, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    QTest.mouseMove(b, start + QPoint(0, -120), 20)
    QTest.mouseRelease(b, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start + QPoint(0, -120), 20)
    db, do = b.center_scene() - ob, o.center_scene() - oo
    assert db.y() > 0 and do.y() == pytest.approx(db.y()) and do.x() == pytest.approx(db.x())
    QTest.keyClick(o, Qt.Key.Key_Plus)
    assert b.scale == pytest.approx(o.scale) and o.scale > 0
    # the titles in full: each names its side's GPU whole
    for label, side in zip(tab.titles, (c.pair.base, c.pair.other), strict=True):
        assert label.wordWrap() and side.name in label.text() and label.text().endswith(")")
        assert label.heightForWidth(label.width()) <= label.height() + 1  # every wrapped line shown
    # "Other layers": the convolution where the QAT export folded its weights into the name
    dock = window.compare.dock_widget
    col = COLUMNS.index("Other layers")
    texts = [dock.model.index(r, col).data() for r in range(dock.model.rowCount())]
    fused = [r for r, g in enumerate(c.pair.groups) if any(".weight + " in n for n in g["other_layers"])]
    assert fused
    for r in fused:
        assert ".weight" not in texts[r] and ("Conv_" in texts[r] or "Gemm_" in texts[r]), texts[r]
        assert c.pair.groups[r]["other_layers"][0] in dock.model.index(r, col).data(Qt.ItemDataRole.ToolTipRole)
    shot(tab, "side_by_side_linked.png", tmp_path)


def test_first_click_on_a_time_column_sorts_slowest_first(qtbot: Any, window: MainWindow, trt_real: Path) -> None:
    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    table = window.engine_tabs.layer_table
    from trtstudio.ui.layer_table import COLUMN

    header = table.table.horizontalHeader()
    col = COLUMN["ms"]
    x = header.sectionViewportPosition(col) + header.sectionSize(col) // 2
    QTest.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     QPoint(x, header.height() // 2))
    ms = [table.model.index(r, col).data(Qt.ItemDataRole.DisplayRole) for r in range(table.model.rowCount())]
    times = table.model.times()[table.model.positions()]
    assert header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder and ms[0]
    assert times[0] == max(times) and list(times) == sorted(times, reverse=True)
    assert "per inference" in table.totals.text()
