"""Precision in the window (issue 40 items 1 and 5): Engine > Explain precision... on TREx's A100
QAT engine against its FP16 build (the Precision tab: sentence, causes selecting their layers, Copy
suggestion), and a precision sweep's localisation drawn on the bundled model's graph (error as
colour, the first diverging node marked and centred, a click shows the tensor's statistics, the
report made from the window has the section). Real MainWindow; screenshots under $TRTSTUDIO_SHOTS."""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

pytest.importorskip("PySide6")
pytest.importorskip("onnxruntime")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication  # noqa: E402

from trtstudio.ui.main_window import MainWindow  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_ui_engine_graph import click_node, engine_files, shot  # noqa: E402


def _settled(window: MainWindow) -> bool:
    return not window.is_busy() and window.analysis is not None and not window.analysis.pending


def test_explain_panel_against_fp16(qtbot: Any, window: MainWindow, trt_real: Path, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    from trtstudio.cli import main

    qat, fp16 = engine_files(trt_real, "qat"), engine_files(trt_real, "fp16")
    window.open_engine(qat)
    qtbot.waitUntil(lambda: _settled(window), timeout=60000)
    view = window.engine_tabs.explain_view
    # the menu item runs it alone; the tab says what it found
    act = next(a for a in window.findChildren(type(window.act_open)) if a.text().startswith("E&xplain precision"))
    act.trigger()
    qtbot.waitUntil(lambda: view.doc is not None, timeout=60000)
    assert window.engine_tabs.currentWidget() is view
    assert view.doc["against"] is None and "convolutions/GEMMs run INT8" in view.sentence.text()
    assert not view.copy_button.isEnabled()  # no suggestion without another build
    # against the FP16 build's folder: what trtstudio explain --against says
    folder = str(Path(fp16[0]).parent)
    window.explain.explain([folder])
    qtbot.waitUntil(lambda: view.doc is not None and view.doc["against"] is not None, timeout=60000)
    capsys.readouterr()
    assert main(["explain", str(Path(qat[0]).parent), "--against", folder, "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["precision"]
    p = view.doc["precision"]
    # the same sentence; the window names the builds by what distinguishes them (FP16, not the folder fp16)
    assert p["text"].lower() == cli["text"].lower() and cli["text"].lower() in html.unescape(view.sentence.text()).lower()
    assert view.table.rowCount() == len(cli["causes"])
    assert [view.table.item(r, 0).text() for r in range(view.table.rowCount())] == [c["cause"] for c in cli["causes"]]
    # a cause row selects its layers in the table
    row = next(r for r, c in enumerate(cli["causes"]) if c["cause"] == "qdq_not_fused")
    view.table.selectRow(row)
    names = {lay.name for lay in window.engine.layers}
    want = sorted(i for i, lay in enumerate(window.engine.layers) if lay.name in set(cli["causes"][row]["layers"]))
    assert want and set(cli["causes"][row]["layers"]) <= names
    assert sorted(window.engine_tabs.layer_table.selected_layers()) == want
    # Copy suggestion: the trtexec flags and the trtstudio command
    assert view.copy_button.isEnabled()
    qtbot.mouseClick(view.copy_button, Qt.MouseButton.LeftButton)
    clip = QGuiApplication.clipboard().text()
    assert cli["suggestion"]["layer_precisions"] in clip and cli["suggestion"]["precision_command"] in clip
    shot(window, "explain_panel.png", tmp_path)
    # another engine clears the tab
    window.open_engine(fp16)
    qtbot.waitUntil(lambda: view.doc is None, timeout=60000)


def test_accuracy_localisation_on_the_graph(qtbot: Any, window: MainWindow, sample_model: Path, tmp_path: Path) -> None:
    from trtstudio.precision.localize import FIRST_COLOR

    calib = tmp_path / "calib"
    calib.mkdir()
    rng = np.random.default_rng(0)
    for i in range(3):
        np.save(calib / f"input_{i}.npy", rng.uniform(0, 1, (1, 3, 224, 224)).astype(np.float32))
    with qtbot.waitSignal(window.sig_model_loaded, timeout=60000):
        window.open_model(str(sample_model))
    window.tools.open_precision_dialog()
    dlg = window.precision_dialog
    dlg.calib_edit.setText(str(calib))
    for name, box in dlg.variant_boxes.items():
        box.setChecked(name == "int8")
    dlg.engines_box.setChecked(False)
    with qtbot.waitSignal(dlg.sig_finished, timeout=180_000) as blocker:
        dlg.start_sweep()
    int8 = blocker.args[0].variant("int8")
    assert int8 is not None and int8.error is None and int8.tensors and int8.node_errors
    qtbot.waitUntil(lambda: dlg.run_button.isEnabled(), timeout=10_000)
    row = next(r for r in range(dlg.table.rowCount()) if dlg.table.item(r, 0).text() == "INT8")
    dlg.table.selectRow(row)
    qtbot.waitUntil(lambda: window.side_tabs.accuracy is not None, timeout=10_000)
    div = window.side_tabs.accuracy
    view, dg = window.view, window.display
    first = (div["first"] or div["worst"])["node"]
    di = dg.display_index(dg.graph.node_by_name[first])
    if div["first"]:
        assert first == int8.first_over["node"] and view.fill_color(di).name() == FIRST_COLOR
        assert any(first in label and c == FIRST_COLOR for label, c in view.legend)
    assert any(c.startswith("ramp:") and "relative error" in label for label, c in view.legend)
    assert window.overlay.currentText() == "Error vs FP32"
    # Colour by another mode and back: the localisation is kept
    window.overlay.setCurrentText("Op category")
    assert not any(c.startswith("ramp:") for _, c in view.legend)
    window.overlay.setCurrentText("Error vs FP32")
    if div["first"]:
        assert view.fill_color(di).name() == FIRST_COLOR
    # each measured node coloured by its error: the worst darkest
    worst = div["worst"]["node"]
    if worst != (div["first"] or {}).get("node"):
        assert view.fill_color(dg.display_index(dg.graph.node_by_name[worst])).name() == "#af2814"
    dlg.close()
    window.activateWindow()
    # a click on the first diverging node: its tensor's statistics in Properties
    click_node(qtbot, view, di)
    props = window.side_tabs.props
    top = {props.topLevelItem(i).text(0): props.topLevelItem(i) for i in range(props.topLevelItemCount())}
    acc = top["Accuracy vs FP32"]
    kids = {acc.child(i).text(0): acc.child(i).text(1) for i in range(acc.childCount())}
    stats = div["nodes"][first]
    assert float(kids["relative error (L2)"]) == pytest.approx(stats["rel"], rel=1e-3)
    assert float(kids["cosine"]) == pytest.approx(stats["cosine"], abs=1e-6) and "tensor" in kids
    shot(window, "accuracy_overlay.png", tmp_path)
    # the report made from the window has the section, its excerpt around that node
    acc_doc = window.workspace.accuracy
    assert acc_doc and acc_doc["divergence"][0]["variant"] == "int8"
    out = tmp_path / "window.html"
    with qtbot.waitSignal(window.sig_report_written, timeout=60000):
        window.export_report(str(out))
    text = out.read_text()
    assert "Where accuracy is lost" in text and first in text
