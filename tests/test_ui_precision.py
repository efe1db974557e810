"""The precision sweep driven from its dialog (pytest-qt), with a screenshot."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_precision_sweep import tiny  # noqa: F401, F811 - the tiny model + calibration folder fixture

# ruff: noqa: F811 - pytest injects the imported `tiny` fixture by argument name
pytestmark = pytest.mark.gui
pytest.importorskip("onnxruntime")


def test_sweep_from_dialog(qtbot, tiny, tmp_path) -> None:
    from trtstudio.precision.sweep import SweepResult
    from trtstudio.ui.precision_dialog import COLUMNS, PrecisionSweepDialog

    model, calib = tiny
    dlg = PrecisionSweepDialog(str(model))
    qtbot.addWidget(dlg)
    dlg.calib_edit.setText(str(calib))
    dlg.variant_boxes["bf16"].setChecked(False)
    dlg.engines_box.setChecked(False)
    dlg.method_combo.setCurrentText("minmax")
    dlg.show()
    with qtbot.waitSignal(dlg.sig_finished, timeout=60_000) as blocker:
        qtbot.mouseClick(dlg.run_button, __import__("PySide6.QtCore", fromlist=["Qt"]).Qt.MouseButton.LeftButton)
        assert not dlg.run_button.isEnabled()
    result = blocker.args[0]
    assert isinstance(result, SweepResult)
    # the phase line was paced step by step (what it said is test_step_pace_says_the_step_and_the_time_left's)
    assert dlg._pace.finished_s and len(dlg._pace.finished_s) <= dlg._pace.total and not dlg._pace._timer.isActive()
    assert [v.name for v in result.variants] == ["fp32", "fp16", "int8"]
    assert dlg.table.rowCount() == 3 and dlg.table.columnCount() == len(COLUMNS)
    assert dlg.table.item(1, 0).text() == "FP16"
    fp16, int8 = result.variant("fp16"), result.variant("int8")
    assert fp16 and int8 and fp16.passed and int8.error is None
    assert float(dlg.table.item(1, COLUMNS.index("Median ms")).text()) > 0
    assert int8.accuracy["max_abs"] > fp16.accuracy["max_abs"] > 0
    assert result.recommendation and dlg.recommendation_label.text().startswith(result.recommendation[:20])
    qtbot.waitUntil(lambda: dlg.run_button.isEnabled(), timeout=10_000)
    with qtbot.waitSignal(dlg.sig_node_errors, timeout=5_000) as heat:
        dlg.table.selectRow(2)
    assert heat.args[0] == int8.node_errors and "/conv1/Conv" in heat.args[0]
    shot = Path(os.environ.get("TRTSTUDIO_SHOTS", tmp_path)) / "precision_dialog.png"
    assert dlg.grab().save(str(shot))
    assert shot.stat().st_size > 0


def test_cancel_stops_the_sweep(qtbot, tiny) -> None:
    from trtstudio.ui.precision_dialog import PrecisionSweepDialog

    model, calib = tiny
    dlg = PrecisionSweepDialog(str(model))
    qtbot.addWidget(dlg)
    dlg.calib_edit.setText(str(calib))
    dlg.engines_box.setChecked(False)
    with qtbot.waitSignal(dlg.sig_finished, timeout=60_000) as blocker:
        dlg.start_sweep()
        dlg.cancel_sweep()
    result = blocker.args[0]
    assert result.cancelled
    assert len(result.variants) < 4
    qtbot.waitUntil(lambda: dlg._handle is None, timeout=10_000)


def test_bad_calibration_folder_reports_error(qtbot, tiny, tmp_path) -> None:
    from trtstudio.ui.precision_dialog import PrecisionSweepDialog

    model, _ = tiny
    empty = tmp_path / "empty"
    empty.mkdir()
    dlg = PrecisionSweepDialog(str(model))
    qtbot.addWidget(dlg)
    dlg.calib_edit.setText(str(empty))
    dlg.start_sweep()
    qtbot.waitUntil(lambda: "Sweep failed" in dlg.status_label.text(), timeout=20_000)
    assert "input 'x'" in dlg.status_label.text() and "[N,3,16,16]" in dlg.status_label.text()
    qtbot.waitUntil(lambda: dlg._handle is None, timeout=10_000)


def test_step_pace_says_the_step_and_the_time_left(qtbot, monkeypatch) -> None:
    """A precision sweep's steps (variants) paced by the finished ones: the step under way, its
    seconds and an estimate of the time left, refreshed without a new report."""
    from PySide6.QtWidgets import QLabel

    from trtstudio.ui import sweep_progress

    now = [100.0]
    monkeypatch.setattr(sweep_progress.time, "monotonic", lambda: now[0])
    label = QLabel()
    qtbot.addWidget(label)
    pace = sweep_progress.StepPace(label)
    pace.start()
    pace.report("fp32: making the variant", 0, 4)
    assert "step 1 of 4" in label.text() and "left" not in label.text()  # no pace yet
    now[0] += 10.0
    pace.report("fp16: making the variant", 1, 4)
    now[0] += 4.0
    pace.tick()  # the timer's refresh: no report needed
    text = label.text()
    assert text.startswith("fp16: making the variant") and "step 2 of 4, 4 s in it" in text
    assert "about 26 s left" in text  # 6 s more of this step, then 2 steps of 10 s
    pace.stop()
