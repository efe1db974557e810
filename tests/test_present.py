"""Present mode: the core figures (Qt-free) and the full-screen window over a real run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from trtstudio.profiling.present import Baseline, present_figures


def test_figures_compare_the_recent_run_with_the_baseline() -> None:
    t = np.arange(500) * 0.002  # 500 inferences at 2 ms apart
    lat = np.full(500, 1.8)
    base = Baseline("fp32", np.full(300, 3.0))
    fig = present_figures(t, lat, base)
    assert fig["now"]["median_ms"] == pytest.approx(1.8) and fig["baseline"]["median_ms"] == pytest.approx(3.0)
    assert fig["now"]["throughput"] == pytest.approx(500.0)
    assert fig["change"]["speedup"] == pytest.approx(3.0 / 1.8)
    assert "40 % lower than fp32" in fig["text"]
    slower = present_figures(t, np.full(500, 3.3), base)
    assert "higher" in slower["text"]
    assert present_figures(t[:5], lat[:5], base)["now"] is None  # too few samples: "measuring..."


@pytest.mark.gui
def test_present_window_shows_the_live_run_beside_a_baseline(qtbot, sample_model: Path, tmp_path: Path) -> None:
    pytest.importorskip("PySide6")
    pytest.importorskip("onnxruntime")
    from trtstudio.profiling.session import ProfileRequest, run_profile
    from trtstudio.report.model import save_session
    from trtstudio.ui.main_window import MainWindow

    base_path = tmp_path / "base.trtstudio"
    out = run_profile(ProfileRequest(model=str(sample_model), backend="ort", iterations=40, warmup=2))
    save_session(base_path, run=out.run_data("baseline run"))

    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    panel = win.profile_panel
    with qtbot.waitSignal(win.sig_model_loaded, timeout=60000), qtbot.waitSignal(panel.sig_model_ready, timeout=60000):
        win.open_model(str(sample_model))
    panel.count_mode.setCurrentIndex(2)  # until stopped
    panel.start()
    view = win.tools.present()
    try:
        qtbot.waitUntil(lambda: view.headline.text() not in ("–", "summing up..."), timeout=60000)
        assert "Median" in view.headline.text() or "No latency" in view.headline.text()
        view.load_baseline(str(base_path))
        qtbot.waitUntil(lambda: view.baseline is not None, timeout=30000)
        qtbot.waitUntil(lambda: view.figures["median"][0].text() != "–", timeout=30000)
        view.refresh()
        assert view.figures["baseline"][0].text().endswith("ms")
        assert "than baseline run" in view.change.text()
        assert view.base_line.isVisible() and view.curve.getData()[1].size > 0
        assert view.figures["median"][0].font().pixelSize() >= 48  # readable from across a room
    finally:
        view.close()
        with qtbot.waitSignal(panel.sig_run_finished, timeout=30000):
            panel.stop()
