"""Opening another model while a live run goes on never relabels the run (issue 11), driven as a
user would: open A, start a run, open B, stop, export reports."""

from __future__ import annotations

import json
import os
from pathlib import Path

import onnx
import onnx_models as models
import pytest

pytestmark = pytest.mark.gui

pytest.importorskip("PySide6")

from trtstudio.ui.main_window import MainWindow  # noqa: E402


def _open(qtbot, win: MainWindow, path: Path) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(win.sig_model_loaded, timeout=60000):
        win.open_model(str(path))


def _report(qtbot, win: MainWindow, path: Path) -> dict:  # type: ignore[no-untyped-def,type-arg]
    with qtbot.waitSignal(win.sig_report_written, timeout=60000):
        win.export_report(str(path))
    return json.loads(path.read_text())


def test_model_switch_during_a_run_keeps_the_run_under_its_model(qtbot, sample_model: Path,  # type: ignore[no-untyped-def]
                                                                  tmp_path: Path) -> None:
    a = sample_model
    b = tmp_path / "other.onnx"
    onnx.save(models.conv_net(), str(b))
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    try:
        panel = win.profile_panel
        with qtbot.waitSignal(panel.sig_model_ready, timeout=60000):
            _open(qtbot, win, a)
        panel.count_mode.setCurrentIndex(2)  # until stopped
        panel.warmup_spin.setValue(1)
        panel.start()
        assert [r.status for r in win.workspace.runs] == ["running"]
        qtbot.waitUntil(lambda: win.workspace.runs[0].state.done > 20, timeout=30000)

        _open(qtbot, win, b)  # while A runs
        assert win.model.path == str(b)
        assert panel.is_running()
        assert os.path.basename(str(a)) in panel.model_label.text()  # the panel still names the model that runs
        run = win.workspace.runs[0]
        assert run.model == str(a) and run.active
        assert run.state.disturbances, "loading B in this process must be noted on A's run"

        with qtbot.waitSignal(panel.sig_run_finished, timeout=30000):
            panel.stop()
        qtbot.waitUntil(lambda: not panel.is_running(), timeout=10000)
        assert run.status == "stopped" and run.data is not None and run.data.model == str(a)
        qtbot.waitUntil(lambda: os.path.basename(str(b)) in panel.model_label.text(), timeout=10000)

        # B is open: its report has no run (A's latencies are never written under B's name)
        rb = _report(qtbot, win, tmp_path / "b.json")
        assert rb["model"]["path"] == str(b)
        assert rb.get("run") is None

        # back on A: the report holds A's run, and run.model names the report's model
        _open(qtbot, win, a)
        ra = _report(qtbot, win, tmp_path / "a.json")
        assert ra["model"]["path"] == str(a)
        assert ra["run"]["model"] == ra["model"]["path"]
        assert ra["run"]["latency_ms"]["count"] > 20
    finally:
        win.shutdown()
