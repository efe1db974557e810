"""The Sweep tab's shape mix (a mix file picked, the per-shape table, the weighted median and p99),
and the window's sessions keeping the Sweep tab's results: File > Save Session writes them, and
opening the session shows them in the Sweep tab again (pytest-qt, real ONNX Runtime sessions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_ui_profile import _open, tiny_model
from test_ui_sweep import _fast, panel  # noqa: F401 - the panel fixture

from trtstudio.ui import workers

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]


def _mix_csv(path: Path) -> Path:
    path.write_text("x,count\n1x32,7\n4x32,3\n8x32,2\n")
    return path


def test_the_sweep_tab_replays_a_shape_mix(qtbot: Any, panel: Any, tmp_path: Path) -> None:  # noqa: F811
    _open(qtbot, panel, tiny_model(tmp_path / "tiny.onnx"))
    _fast(panel, iterations=24)  # the form's Measure is the mix's length: 24 requests, weighted 7/3/2
    tab = panel.sweep_tab
    panel.tabs.setCurrentWidget(tab)
    tab.kind_combo.setCurrentText("Shape mix")
    assert tab.run_button.text() == "Run mix" and not tab.form.isRowVisible(tab.steps_edit)
    # no mix file: one line naming the field
    with qtbot.waitSignal(tab.sig_finished, timeout=5_000) as none:
        tab.run()
    assert none.args[0] is None and tab.error_text().startswith("Mix file:")
    tab.mix_edit.setText(str(_mix_csv(tmp_path / "mix.csv")))
    tab.pad_check.setChecked(True)
    with qtbot.waitSignal(tab.sig_finished, timeout=120_000) as done:
        tab.run()
    doc = done.args[0]
    assert doc is not None and doc["schema"] == "trtstudio.mix/1" and doc["mix"]["requests"] == 24
    assert doc["counts"]["used"] == "weights" and doc["counts"]["planned"] == [14, 6, 4]
    shapes = doc["mix"]["shapes"]
    assert tab.table.rowCount() == len(shapes) == 3
    assert [tab.table.horizontalHeaderItem(c).text() for c in range(2)] == ["shape", "count"]
    by_label = {tab.table.item(r, 0).text(): r for r in range(3)}
    for row in shapes:
        r = by_label[f"x {row['shapes']['x']}"]
        assert int(tab.table.item(r, 1).text()) == row["count"]
        assert float(tab.table.item(r, 2).text()) == pytest.approx(row["median_ms"], abs=1e-3)
    status = tab.status_label.text()
    assert f"weighted median {doc['mix']['median_ms']:.3f} ms" in status and f"p99 {doc['mix']['p99_ms']:.3f}" in status
    text = tab.findings.toPlainText()
    assert "mix (weighted by count)" in text and "padding every request" in text
    assert tab.mix_line.isVisible() and tab.mix_line.value() == pytest.approx(doc["mix"]["median_ms"])
    assert tab.results_combo.count() == 1 and tab.results_combo.currentText().startswith("mix mix.csv")
    qtbot.waitUntil(lambda: tab.save_button.isEnabled(), timeout=5_000)
    panel.grab().save(str(tmp_path / "mix.png"))
    qtbot.waitUntil(lambda: not workers.live_threads(), timeout=5_000)


def test_save_session_keeps_the_sweep_tab_results_and_opening_shows_them(qtbot: Any, window: Any,
                                                                         tmp_path: Path) -> None:
    model = tiny_model(tmp_path / "tiny.onnx")
    with qtbot.waitSignal(window.sig_model_loaded, timeout=60_000):
        window.open_model(str(model))
    qtbot.waitUntil(lambda: window.profile_panel is not None and not window.plots_pending(), timeout=60_000)
    live = window.profile_panel
    qtbot.waitUntil(lambda: live.sweep_tab.run_button.isEnabled(), timeout=30_000)
    _fast(live)
    tab = live.sweep_tab
    tab.steps_edit.setText("1,2")
    with qtbot.waitSignal(tab.sig_finished, timeout=120_000) as swept:
        tab.run()
    tab.kind_combo.setCurrentText("Shape mix")
    tab.mix_edit.setText(str(_mix_csv(tmp_path / "mix.csv")))
    qtbot.waitUntil(lambda: tab.run_button.isEnabled(), timeout=30_000)
    with qtbot.waitSignal(tab.sig_finished, timeout=120_000) as mixed:
        tab.run()
    assert window.workspace.sweeps == [swept.args[0], mixed.args[0]]
    path = tmp_path / "s.trtstudio"
    with qtbot.waitSignal(window.sessions.sig_session_saved, timeout=60_000):
        window.sessions.save_session(str(path))
    saved = json.loads(path.read_text())["sweeps"]
    assert [d["schema"] for d in saved] == ["trtstudio.sweep/1", "trtstudio.mix/1"]
    assert [r["batch"] for r in saved[0]["sweep"]] == [1, 2] and saved[1]["mix"]["requests"] == live.count_spin.value()
    # a report of the window has them in its Shapes section
    report = tmp_path / "r.html"
    with qtbot.waitSignal(window.sessions.sig_report_written, timeout=60_000):
        window.sessions.export_report(str(report))
    assert "Shapes: sweeps and mixes" in report.read_text()
    # opened again: the Sweep tab lists them (after its own two) and shows the session's last
    with qtbot.waitSignal(window.sessions.sig_session_loaded, timeout=60_000):
        window.sessions.open_session(str(path))
    qtbot.waitUntil(lambda: tab.results_combo.count() == 4, timeout=30_000)
    assert tab.doc is not None and tab.doc["schema"] == "trtstudio.mix/1"
    assert tab.doc["mix"]["median_ms"] == pytest.approx(mixed.args[0]["mix"]["median_ms"])
    assert tab.table.rowCount() == 3
    tab.results_combo.activated.emit(2)  # the session's sweep
    assert tab.doc["schema"] == "trtstudio.sweep/1" and tab.table.item(1, 0).text() == "batch 2"
    qtbot.waitUntil(lambda: not workers.live_threads(), timeout=10_000)
