"""The engine's own graph in the window (issue 39 item 8): engine files opened without their ONNX
model draw the engine's layers as nodes, coloured by the window's Colour by, layers with findings
outlined, selectable from the table and back; nothing takes it for a model to run or report; a
toggle between the model's graph and the engine's. Real MainWindow, real TREx A100 engine files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, Qt  # noqa: E402

from trtstudio.ui.main_window import MainWindow  # noqa: E402

A100 = "NVIDIA_TensorRT_trex/release-11.0/examples/pytorch/resnet/A100"


def engine_files(trt_real: Path, build: str) -> list[str]:
    folder = trt_real / A100 / build
    if not folder.is_dir():
        pytest.skip(f"fixture {folder} absent")
    return sorted(str(p) for p in folder.iterdir() if p.is_file())


def shot(widget: Any, name: str, tmp_path: Path) -> Path:
    """Save ``widget.grab()`` (also under $TRTSTUDIO_SHOTS when set, to look at) and check it is a
    picture, not a blank pane: many distinct colours."""
    from PySide6.QtWidgets import QApplication

    for _ in range(3):  # the layouts of what changed last, done as the event loop would
        QApplication.processEvents()
    img = widget.grab().toImage()
    out = tmp_path / name
    assert img.save(str(out))
    if os.environ.get("TRTSTUDIO_SHOTS"):
        img.save(str(Path(os.environ["TRTSTUDIO_SHOTS"]) / name))
    colours = {img.pixel(x, y) for x in range(0, img.width(), 7) for y in range(0, img.height(), 7)}
    assert len(colours) > 20, f"{name}: {len(colours)} colours, a blank picture?"
    return out


def open_engine_graph(qtbot: Any, window: MainWindow, files: list[str]) -> None:
    window.open_engine(files)
    qtbot.waitUntil(lambda: not window.is_busy() and window.engine_graph.display is not None
                    and window.analysis is not None and not window.analysis.pending, timeout=60000)


def click_node(qtbot: Any, view: Any, display_index: int) -> None:
    """A real mouse click on the centre of item ``display_index`` of ``view``."""
    view.center_on([display_index], zoom_in=True)
    dg = view.dg
    p = view.to_view(float(dg.lay.x[display_index]), float(dg.lay.y[display_index]))
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=QPoint(int(p.x()), int(p.y())))


def test_engine_files_alone_draw_the_engines_graph(qtbot: Any, window: MainWindow, trt_real: Path, tmp_path: Path) -> None:
    from trtstudio.engine.layer_graph import is_layer_model
    from trtstudio.palette import SEVERITY_COLORS, precision_color
    from trtstudio.ui.engine_graph import FINDING_OUTLINE

    files = engine_files(trt_real, "fp32")
    open_engine_graph(qtbot, window, files)
    graphs, engine = window.graphs, window.engine
    view = graphs.engine_view
    assert graphs.showing_engine_graph() and window.current_view() is view
    assert window.tabs.tabText(0) == "Engine: resnet.onnx"
    assert window.act_engine_graph.isEnabled() and window.act_engine_graph.isChecked()
    g = view.dg.graph
    assert [n.onnx_name for n in g.nodes] == [lay.name for lay in engine.layers]
    assert [n.op_type for n in g.nodes] == [lay.type for lay in engine.layers]
    assert is_layer_model(window.engine_graph.model)
    # it is no model of the workspace: nothing runs, reports or saves it
    assert window.workspace.model is None and window.display is None

    # Colour by precision: each layer's node in its precision's colour; the findings outlined
    window.overlay.setCurrentText("Precision")
    di = [g.node_by_name[n.name] + view.dg.node_offset for n in g.nodes]
    for k, lay in enumerate(engine.layers):
        assert view.fill_color(di[k]).name() == precision_color(lay.precision).lower()
    assert ("FP32", precision_color("FP32")) in view.legend and FINDING_OUTLINE in view.legend
    flagged_layers = {f.layer_index for f in window.analysis.findings if f.layer_index is not None}
    assert flagged_layers and view.flagged == {di[k] for k in flagged_layers}
    reformat = next(k for k, lay in enumerate(engine.layers) if lay.type == "Reformat")
    assert reformat in flagged_layers
    window.overlay.setCurrentText("Finding")
    worst = max((f for f in window.analysis.findings if f.layer_index == reformat),
                key=lambda f: ("info", "warning", "error").index(f.severity))
    assert view.fill_color(di[reformat]).name() == SEVERITY_COLORS[worst.severity]
    window.overlay.setCurrentText("Op category")
    assert any(label == "Reformat" for label, _ in view.legend)

    # the table selects the graph ...
    table = window.engine_tabs.layer_table
    table.table.selectRow(next(r for r in range(table.model.rowCount())
                               if table.model.positions()[r] == 5))
    assert view.selected == {di[5]}
    # ... and a click on the graph selects the table, with the layer's properties
    click_node(qtbot, view, di[reformat])
    assert table.selected_layers() == [reformat]
    assert window.workspace.selection.layers == [reformat]
    props = window.side_tabs.props
    rows = {props.topLevelItem(i).text(0): props.topLevelItem(i).text(1) for i in range(props.topLevelItemCount())}
    assert rows["Layer"] == f"#{reformat} {engine.layers[reformat].name}" and rows["Type"].startswith("Reformat")
    assert "Findings" in rows

    # the search field finds layers by name and type
    window.search.setText("Reformat")
    window.search_ctl.refresh()
    reformats = {di[k] for k, lay in enumerate(engine.layers) if "Reformat" in lay.type or "Reformat" in lay.name}
    assert reformats and reformats <= view.highlight
    window.search.setText("")
    window.search_ctl.refresh()

    window.overlay.setCurrentText("Precision")
    graphs.engine_view.fit()
    shot(window, "engine_graph.png", tmp_path)

    # what runs a model refuses, with the reason
    errors: list[str] = []
    window.sig_error.connect(errors.append)
    window.tools.open_precision_dialog()
    assert window.precision_dialog is None and errors and "open an ONNX model first" in errors[-1]
    panel = window.profile_panel
    assert panel is None or panel._model is None
    # a session saved now holds the engine, no model
    out = tmp_path / "engine-only.trtstudio"
    with qtbot.waitSignal(window.sig_session_saved, timeout=30000):
        window.save_session(str(out))
    from trtstudio.report.session import load_session

    saved = load_session(str(out))
    assert saved.model_path is None and saved.engines and len(saved.engines[0].info.layers) == len(engine.layers)


def test_a_session_without_its_model_draws_the_engine(qtbot: Any, window: MainWindow, trt_real: Path,
                                                      tmp_path: Path) -> None:
    files = engine_files(trt_real, "qat-residual")
    open_engine_graph(qtbot, window, files)
    out = tmp_path / "qat.trtstudio"
    with qtbot.waitSignal(window.sig_session_saved, timeout=30000):
        window.save_session(str(out))
    second = MainWindow()
    qtbot.addWidget(second)
    try:
        second.resize(1200, 800)
        second.show()
        second.open_session(str(out))
        qtbot.waitUntil(lambda: not second.is_busy() and second.engine_graph.display is not None, timeout=60000)
        assert second.graphs.showing_engine_graph() and second.workspace.model is None
        assert len(second.graphs.engine_view.dg.graph.nodes) == len(window.engine.layers)
    finally:
        second.shutdown()


def test_toggle_between_the_model_and_the_engine_graph(qtbot: Any, window: MainWindow, trt_real: Path,
                                                      sample_model: Path) -> None:
    files = engine_files(trt_real, "fp16")
    with qtbot.waitSignal(window.sig_model_loaded, timeout=60000):
        window.open_model(str(sample_model))
    window.open_engine(files)
    qtbot.waitUntil(lambda: not window.is_busy() and window.analysis is not None and not window.analysis.pending,
                    timeout=60000)
    graphs, act = window.graphs, window.act_engine_graph
    # a model is open: its graph stays; the engine's is one toggle away (laid out then)
    assert not graphs.showing_engine_graph() and window.engine_graph.display is None
    assert act.isEnabled() and not act.isChecked()
    act.trigger()
    qtbot.waitUntil(lambda: graphs.showing_engine_graph(), timeout=60000)
    assert window.current_view() is graphs.engine_view and act.isChecked()
    assert window.tabs.tabText(0).startswith("Engine: ")
    act.trigger()
    assert not graphs.showing_engine_graph() and window.current_view() is window.view
    assert window.tabs.tabText(0) == sample_model.name
    # the model is still the one the panels run
    assert window.workspace.model is not None and window.workspace.model.path.endswith(".onnx")


def test_screenshot_of_engine_files_alone(trt_real: Path, tmp_path: Path) -> None:
    files = engine_files(trt_real, "fp32")
    out = tmp_path / "gui.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    r = subprocess.run([sys.executable, "-m", "trtstudio", "gui", *files, "--screenshot", str(out), "--size", "1400x900"],
                       capture_output=True, text=True, env=env, timeout=180)
    assert r.returncode == 0, r.stderr
    from PySide6.QtGui import QImage

    img = QImage(str(out))
    assert img.width() == 1400 and img.height() == 900
    if os.environ.get("TRTSTUDIO_SHOTS"):
        img.save(str(Path(os.environ["TRTSTUDIO_SHOTS"]) / "gui_engine_only.png"))
    assert json.dumps(r.stderr).count("error") == 0
