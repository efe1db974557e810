"""Each layer's memory in the window (issue 49 item 2): the layer table's memory columns (shown where
some layer has the figure, numeric sort), Colour by Memory on the engine's graph, and the Engine
dock's Memory tab (the categories `trtstudio memory` prints, live activations with the peak, the
tensors alive there; a click on the chart selects the layer). Real MainWindow, real TREx A100
engine files and trt-samples' ProfilingVerbosity log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise")]

pytest.importorskip("PySide6")

from PySide6.QtCore import QPointF, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from trtstudio.ui.main_window import MainWindow  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_memory_columns import A100_FP32, VERBOSE_LOG, _a100_files, _file_figures, _need  # noqa: E402
from test_ui_engine_graph import open_engine_graph, shot  # noqa: E402


def column(table: Any, header: str) -> int:
    from trtstudio.ui.layer_table import COLUMNS

    return next(i for i, c in enumerate(COLUMNS) if c.header == header)


def cli_memory(files: list[str]) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "trtstudio", "memory", *files, "--json"], capture_output=True,
                         text=True, check=True, timeout=120)
    return json.loads(out.stdout)


def click_chart(qtbot: Any, mv: Any, position: int) -> None:
    """A real left click on the memory chart over layer ``position``."""
    vb = mv.plot.getPlotItem().getViewBox()
    y = float(mv._alive[position]) / 2**20 / 2
    scene = vb.mapViewToScene(QPointF(position + 0.5, y))
    p = mv.plot.mapFromScene(scene)
    QTest.mouseClick(mv.plot.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, p)


def test_memory_columns_colour_and_tab(qtbot: Any, window: MainWindow, trt_real: Path, tmp_path: Path) -> None:
    from trtstudio.palette import heat

    files = _a100_files()
    open_engine_graph(qtbot, window, files)
    figures = _file_figures()
    lt = window.engine_tabs.layer_table
    out_col, w_col, scratch_col = column(lt, "Output bytes"), column(lt, "Weights"), column(lt, "Scratch")
    assert not lt.table.isColumnHidden(out_col) and not lt.table.isColumnHidden(w_col)
    assert lt.table.isColumnHidden(scratch_col)  # no verbose log: no layer has a scratch figure
    # numeric sort, largest first
    lt.table.sortByColumn(out_col, Qt.SortOrder.DescendingOrder)
    shown = [figures[lt.model.position(r)][1] for r in range(lt.model.rowCount())]
    assert shown == sorted((f[1] for f in figures), reverse=True)

    # Colour by Memory on the engine's graph: the layer with the most bytes darkest
    window.overlay.setCurrentText("Memory")
    view = window.graphs.engine_view
    g = view.dg.graph
    di = [g.node_by_name[n.name] + view.dg.node_offset for n in g.nodes]
    per_layer = np.array([o + (0.0 if np.isnan(w) else w) for _, o, w in figures])
    top = int(np.argmax(per_layer))
    assert view.fill_color(di[top]).name() == heat(1.0)
    assert any("MiB" in label for label, _ in view.legend)

    # the Memory tab: the command's categories, the live peak, the tensors alive at it
    tabs = window.engine_tabs
    mv = tabs.memory_view
    window.engine_dock.setFloating(True)
    window.engine_dock.resize(1300, 420)
    tabs.setCurrentWidget(mv)
    qtbot.waitUntil(lambda: mv.categories.rowCount() > 0, timeout=5000)
    doc = cli_memory([str(A100_FP32)])  # the engine's folder, as a user names it
    want = {c["name"]: c["bytes"] for c in doc["categories"]}
    for r in range(mv.categories.rowCount()):
        name = mv.categories.item(r, 0).text()
        if name in want:
            recorded = want[name] is not None
            assert (mv.categories.item(r, 1).toolTip() == f"{want[name]:,} bytes") if recorded else \
                mv.categories.item(r, 1).text() == "not recorded", name
    live = doc["live"]
    assert int(np.argmax(mv._alive)) == live["peak_index"] and mv._alive.max() == live["peak_bytes"]
    peak = mv.peak.data[0]
    assert (peak["x"], peak["y"]) == (live["peak_index"] + 0.5, live["peak_bytes"] / 2**20)
    assert [mv.alive.item(r, 0).text() for r in range(mv.alive.rowCount())] == \
        [t["tensor"] for t in live["alive_at_peak"]]
    shot(tabs, "memory_tab_a100.png", tmp_path)

    # a click on the chart selects that layer in the table, the workspace and the chart
    k = 7
    click_chart(qtbot, mv, k)
    assert lt.selected_layers() == [window.engine.layers[k].index]
    assert window.workspace.selection.layers == [window.engine.layers[k].index]
    assert mv.marked_position() == k
    # ... and a selection made elsewhere is marked on the chart
    window.graphs.select_layers([3])
    assert mv.marked_position() == 3
    window.engine_dock.setFloating(False)


def test_verbose_log_shows_scratch_and_persistent_columns(qtbot: Any, window: MainWindow, trt_real: Path,
                                                          tmp_path: Path) -> None:
    path = str(_need(VERBOSE_LOG))
    open_engine_graph(qtbot, window, [path])
    lt = window.engine_tabs.layer_table
    for header in ("Scratch", "Host persistent", "Device persistent"):
        assert not lt.table.isColumnHidden(column(lt, header)), header
    assert lt.table.isColumnHidden(column(lt, "Output bytes"))  # dynamic shapes (-1): no output has a size
    conv = next(p for p, lay in enumerate(window.engine.layers) if lay.name == "node_conv2d_1 + node_relu_1")
    row = lt.model.row_of_position(conv)
    assert lt.model.index(row, column(lt, "Scratch")).data() == "512 B"
    assert lt.model.index(row, column(lt, "Host persistent")).data() == "6.97 KiB"  # 7136 bytes in the log
    mv = window.engine_tabs.memory_view
    window.engine_tabs.setCurrentWidget(mv)
    qtbot.waitUntil(lambda: mv.categories.rowCount() > 0, timeout=5000)
    assert "{ForeignNode[gemm1.weight...ONNXTRT_castHelper_9]}: scratch 935,424 B" in mv.notes.toPlainText()
    tensors = {t.name for lay in window.engine.layers for t in (*lay.inputs, *lay.outputs)}  # each with a -1 batch
    assert f"{len(tensors)} tensor(s) without a known size" in mv.notes.toPlainText()
    assert mv.plot.isHidden() and mv.alive.isHidden() and not len(mv._alive)
    assert "activations TensorRT allocates 1.1 MiB" in mv.headline.text()  # Total Activation Memory: 1186304 bytes
    shot(window.engine_tabs, "memory_tab_verbose_log.png", tmp_path)


def test_colour_by_memory_on_the_models_graph(qtbot: Any, window: MainWindow, trt_real: Path, tmp_path: Path) -> None:
    """Colour by Memory on the ONNX graph: a node takes the bytes of the layers it became (the
    fuzzylabs ResNet-18 engine over a model with its node names), nodes no layer came from folded."""
    import onnx
    from test_analysis import RESNET18, resnet18_like

    from trtstudio.engine.node_time import RAMP
    from trtstudio.palette import NO_LAYER_COLOR, heat

    files = sorted(str(p) for p in _need(RESNET18).glob("*.json"))
    path = tmp_path / "resnet18.onnx"
    onnx.save(resnet18_like(), path)
    with qtbot.waitSignal(window.sig_model_loaded, timeout=60000):
        window.open_model(str(path))
    window.open_engine(files)
    qtbot.waitUntil(lambda: not window.is_busy() and window.analysis is not None and not window.analysis.pending
                    and window.analysis.mapping is not None, timeout=60000)
    window.overlay.setCurrentText("Memory")
    an, view, dg = window.analysis, window.view, window.display
    mem = an.columns.memory
    per_layer = np.nansum(np.vstack([mem[k] for k in ("activation_bytes", "weight_bytes", "scratch_bytes",
                                                      "device_persistent_bytes")]), axis=0)
    by_node = {n.name: sum(per_layer[p] for p in an.layers_of(n.name)) for n in dg.graph.nodes if an.layers_of(n.name)}
    top_node = max(by_node, key=by_node.__getitem__)
    assert view.fill_color(dg.display_index(dg.graph.node_by_name[top_node])).name() == heat(1.0)
    folded = next((n.name for n in dg.graph.nodes if not an.layers_of(n.name)), None)
    if folded is not None:
        assert view.fill_color(dg.display_index(dg.graph.node_by_name[folded])).name() == NO_LAYER_COLOR
    ramp = next(label for label, c in view.legend if c.startswith(RAMP))
    assert f"{max(by_node.values()) / 2**20:.3g} MiB" in ramp
    shot(window, "memory_colour_model_graph.png", tmp_path)
