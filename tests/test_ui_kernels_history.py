"""The Kernels tab joins the selection history (issue 52 item 2): TREx's A100 QAT engine with a
TensorRT-domain Nsight Systems export; with nothing selected the tab lists the export's ranges, and
a real click (QTest at the row's visualRect) on a range named after a layer selects that layer in
the table and the graph, recorded as the Kernels tab's; Esc clears it, Alt+Left/Alt+Right bring the
selections back with the tab in front."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from trtstudio.ui.main_window import MainWindow  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from nsys_synth import write_trt_export  # noqa: E402
from test_ui_engine_graph import engine_files, shot  # noqa: E402
from test_ui_selection import key  # noqa: E402


def click_range(qtbot: Any, kv: Any, name: str) -> None:
    """A real click on the range row named ``name`` of the Kernels tab."""
    table = kv.ranges
    row = next(r for r in range(table.rowCount()) if table.item(r, 0).text() == name)
    table.scrollToItem(table.item(row, 0))
    pos = table.visualItemRect(table.item(row, 1)).center()
    QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, pos + QPoint(1, 0))
    qtbot.wait(10)


def test_kernels_tab_selections_in_history(qtbot: Any, window: MainWindow, trt_real: Path, tmp_path: Path) -> None:
    files = engine_files(trt_real, "qat")
    graph = next(f for f in files if f.endswith(".graph.json"))
    names = [lay["Name"] for lay in json.loads(Path(graph).read_text())["Layers"]]
    export = tmp_path / "qat.sqlite"
    write_trt_export(export, names, inferences=2, kernels_per_layer=2)
    window.open_engine([*files, str(export)])
    qtbot.waitUntil(lambda: not window.is_busy() and window.analysis is not None and not window.analysis.pending
                    and bool(window.engine.kernels), timeout=60000)
    tabs, kv = window.engine_tabs, window.engine_tabs.kernels_view
    window.resize(1600, 1000)
    tabs.setCurrentWidget(kv)
    qtbot.waitUntil(lambda: kv.ranges.isVisible() and kv.ranges.rowCount() > 0)
    listed = {kv.ranges.item(r, 0).text() for r in range(kv.ranges.rowCount())}
    convs = [n for n in names if "Conv" in n and n in listed][:2]
    assert len(convs) == 2
    first, second = names.index(convs[0]), names.index(convs[1])
    table = tabs.layer_table

    click_range(qtbot, kv, convs[0])
    assert window.workspace.selection.layers == [first] and window.workspace.selection.source == "kernels"
    assert table.selected_layers() == [first]
    assert tabs.currentWidget() is kv and convs[0] in kv.title.text() and kv.table.rowCount() == 2
    # another layer from the table, then Esc: nothing selected, the tab back to the ranges
    window.graphs.select_layers([second])
    assert kv.table.rowCount() == 2 and convs[1] in kv.title.text()
    key(qtbot, window, "Esc")
    assert window.workspace.selection.layers == [] and table.selected_layers() == []
    assert kv.ranges.isVisibleTo(kv)
    # back: the table's choice; back again: the Kernels tab's, with the tab in front
    tabs.setCurrentWidget(table)
    key(qtbot, window, "Alt+Left")
    assert table.selected_layers() == [second] and convs[1] in kv.title.text()
    key(qtbot, window, "Alt+Left")
    assert table.selected_layers() == [first] and window.workspace.selection.layers == [first]
    assert tabs.currentWidget() is kv and convs[0] in kv.title.text()
    key(qtbot, window, "Alt+Right")
    assert table.selected_layers() == [second]
    shot(window, "kernels_history.png", tmp_path)
