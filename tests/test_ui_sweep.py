"""The Live profile panel's Sweep tab (pytest-qt, real ONNX Runtime sessions): the axes offered, a
batch sweep of NudeNet's YOLOv8n drawn a step at a time, the knee and profiles shown, Save into a
session and a report, errors in the steps as one line, and the panel's run controls held meanwhile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_precision_recipe import _package_file  # a model shipped by an installed package, not imported
from test_ui_profile import _open, tiny_model

from trtstudio.ui import workers

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

SCREENSHOT = Path("/tmp/sweep_tab.png")


@pytest.fixture
def panel(qtbot: Any):
    from trtstudio.ui.profile_panel import ProfilePanel

    p = ProfilePanel()
    qtbot.addWidget(p)
    p.resize(1400, 900)
    p.show()
    yield p
    assert p.shutdown(10_000)


def _fast(panel: Any, iterations: int = 4) -> None:
    panel.sweep_tab.step_spin.setValue(0)  # each step as the panel's Measure: a few inferences
    panel.count_mode.setCurrentIndex(0)
    panel.count_spin.setValue(iterations)
    panel.warmup_spin.setValue(1)
    panel.threads_spin.setValue(1)


def test_batch_sweep_draws_each_step_as_it_finishes_and_saves(qtbot: Any, panel: Any, tmp_path: Path) -> None:
    _open(qtbot, panel, _package_file("nudenet", "320n.onnx"))
    tab = panel.sweep_tab
    panel.tabs.setCurrentWidget(tab)
    assert [tab.axis_combo.itemText(i) for i in range(tab.axis_combo.count())] == ["batch", "images"]
    _fast(panel)
    tab.steps_edit.setText("1,2,3")
    tab.budget_spin.setValue(10_000.0)
    drawn: list[int] = []  # points on the chart each time a step arrives
    tab.sig_step.connect(lambda i, row: drawn.append(len(tab.median_curve.getOriginalDataset()[0])))
    with qtbot.waitSignal(tab.sig_finished, timeout=120_000) as done:
        qtbot.mouseClick(tab.run_button, pytest.importorskip("PySide6.QtCore").Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not panel.start_button.isEnabled(), timeout=5_000)  # one backend at a time
    doc = done.args[0]
    assert drawn == [1, 2, 3]
    assert doc is not None and [r["batch"] for r in doc["sweep"]] == [1, 2, 3]
    assert tab.table.rowCount() == 3 and tab.table.item(2, 0).text() == "batch 3"
    assert float(tab.table.item(0, 1).text()) == pytest.approx(doc["sweep"][0]["median_ms"], abs=1e-3)
    x, y = tab.tp_curve.getOriginalDataset()
    assert list(x) == [1.0, 2.0, 3.0] and y[1] == pytest.approx(doc["sweep"][1]["samples_per_s"])
    text = tab.findings.toPlainText()
    assert "knee:" in text and "budget: largest step" in text and "--min-shapes images:" in text
    qtbot.waitUntil(lambda: panel.start_button.isEnabled() and tab.save_button.isEnabled(), timeout=5_000)
    panel.grab().save(str(SCREENSHOT))  # the whole panel, Sweep tab showing
    written = tab.save_to(str(tmp_path / "s.trtstudio")) + tab.save_to(str(tmp_path / "r.html"))
    assert json.loads(Path(written[0]).read_text())["sweeps"][0]["sweep"][2]["batch"] == 3
    assert "Latency against the swept size" in Path(written[1]).read_text()
    qtbot.waitUntil(lambda: not workers.live_threads(), timeout=5_000)


def test_shape_axis_offers_its_dims_and_bad_steps_are_one_line(qtbot: Any, panel: Any, tmp_path: Path) -> None:
    _open(qtbot, panel, tiny_model(tmp_path / "tiny.onnx"))
    tab = panel.sweep_tab
    tab.axis_combo.setCurrentText("x")
    assert tab.steps_edit.text() == "1x32"  # no dynamic dim past the batch: one shape offered
    tab.steps_edit.setText("1x31")
    with qtbot.waitSignal(tab.sig_finished, timeout=30_000) as done:
        tab.run()
    assert done.args[0] is None
    assert tab.error_text().startswith("Steps: input 'x' is fixed at batchx32") and "\n" not in tab.error_text()
    qtbot.waitUntil(lambda: tab.run_button.isEnabled(), timeout=5_000)


def test_stop_keeps_the_finished_steps(qtbot: Any, panel: Any, tmp_path: Path) -> None:
    _open(qtbot, panel, tiny_model(tmp_path / "tiny.onnx"))
    _fast(panel, 50)
    tab = panel.sweep_tab
    tab.steps_edit.setText("1,2,4,8,16,32,64,128")
    tab.sig_step.connect(lambda i, row: panel.stop() if i == 0 else None)  # the panel's Stop stops the sweep
    with qtbot.waitSignal(tab.sig_finished, timeout=60_000) as done:
        tab.run()
    doc = done.args[0]
    assert doc["stopped"] and 1 <= len(doc["sweep"]) < 8


def test_a_sweep_runs_seconds_per_step_and_shows_progress_within_a_step(qtbot: Any, panel: Any,
                                                                         tmp_path: Path) -> None:
    """The default step is a duration, not the panel's 1,000 inferences; while a step runs the bar
    moves within it and estimates the time left (issue 52 item 5)."""
    from trtstudio.profiling.sweep import STEP_DURATION_S

    _open(qtbot, panel, _package_file("nudenet", "320n.onnx"))
    tab = panel.sweep_tab
    panel.tabs.setCurrentWidget(tab)
    assert tab.step_spin.value() == STEP_DURATION_S and panel.count_spin.value() == 1000
    tab.step_spin.setValue(1.0)
    panel.warmup_spin.setValue(1)
    tab.steps_edit.setText("1,2,4")
    seen: list[tuple[int, str]] = []

    def look() -> None:
        if tab.progress.isVisible():
            seen.append((tab.progress.value(), tab.progress.format()))

    from PySide6.QtCore import QTimer

    timer = QTimer()
    timer.timeout.connect(look)
    timer.start(100)
    with qtbot.waitSignal(tab.sig_finished, timeout=120_000) as done:
        tab.run()
    timer.stop()
    doc = done.args[0]
    # each step measured about its second, whatever its batch
    assert [r["batch"] for r in doc["sweep"]] == [1, 2, 4]
    measured = [r["count"] * r["mean_ms"] / 1e3 for r in doc["sweep"]]  # the inferences' own time, <= the step's
    assert all(0.6 <= m <= 1.3 for m in measured), measured
    within = [f for _v, f in seen if "step 2 of 3 (batch 2)" in f and "inferences" in f]
    assert within and any("left" in f for f in within)
    values = [v for v, _f in seen]
    assert values == sorted(values) and 0 < max(values) <= 1000
    assert any(333 < v < 667 for v in values)  # inside the second step, not only at its ends
    assert not tab.progress.isVisible()
    qtbot.waitUntil(lambda: not workers.live_threads(), timeout=5_000)
