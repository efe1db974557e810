"""Present mode: the core figures (Qt-free) and the full-screen window over a real run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from trtstudio.profiling.present import (
    Baseline,
    PresentFigures,
    compare_to_baseline,
    present_figures,
    run_headline,
)


def test_figures_compare_the_recent_run_with_the_baseline() -> None:
    t = np.arange(500) * 0.002  # 500 inferences at 2 ms apart
    lat = np.full(500, 1.8)
    base = Baseline("fp32", np.full(300, 3.0))
    fig = present_figures(t, lat, base)
    assert fig["now"]["median_ms"] == pytest.approx(1.8) and fig["baseline"]["median_ms"] == pytest.approx(3.0)
    assert fig["now"]["throughput"] == pytest.approx(500.0)
    assert fig["change"]["speedup"] == pytest.approx(3.0 / 1.8)
    assert "40 % lower than fp32" in fig["text"]
    assert fig["change"]["verdict"] == "faster" and "95 % interval" in fig["text"]
    slower = present_figures(t, np.full(500, 3.3), base)
    assert "higher" in slower["text"]
    assert present_figures(t[:5], lat[:5], base)["now"] is None  # too few samples: "measuring..."




def test_the_change_follows_compare_s_rule() -> None:
    """The interval is compare's (report.compare.speedup_verdict): no significant difference when it
    holds 1.0, a significant change with its interval, and a word for a side whose CoV is over 10 %."""
    from trtstudio.measure.stats import latency_stats
    from trtstudio.report.compare import NOISY_COV_PERCENT, speedup_verdict

    rng = np.random.default_rng(7)
    noisy_base = Baseline("fp32", rng.gamma(35, 92.0 / 35, 400))  # CoV ~17 %, as the baseline
    quiet_now = rng.gamma(2000, 38.0 / 2000, 600)  # CoV ~2 %
    change = compare_to_baseline(noisy_base, quiet_now)
    verdict, sp = speedup_verdict("fp32", noisy_base.latency_ms, "this run", quiet_now,
                                  [latency_stats(noisy_base.latency_ms)["cov"], latency_stats(quiet_now)["cov"]])
    assert change["verdict"] == verdict.verdict == "faster" and change["speedup"] == pytest.approx(sp.value)
    low, high = (round((1 / v - 1) * -100) for v in (sp.high, sp.low))  # the change's interval, as % lower
    assert f"% lower than fp32 (95 % interval {min(low, high)}-{max(low, high)} %)" in change["text"]
    cov = latency_stats(noisy_base.latency_ms)["cov"]
    assert cov > NOISY_COV_PERCENT and f"noisy (CoV over 10 %): fp32 {cov:.3g} %" in change["text"]
    assert "this run" not in change["noisy"]

    same = compare_to_baseline(Baseline("fp32", quiet_now[:300]), quiet_now[300:])
    assert same["verdict"] == "no significant difference" and same["interval"][0] <= 0 <= same["interval"][1]
    assert same["text"].startswith("no significant difference from fp32") and "noisy" not in same["text"]


def test_the_comparison_is_made_again_at_most_once_a_second() -> None:
    clock = [0.0]
    figures = PresentFigures(every_s=1.0, clock=lambda: clock[0])
    base = Baseline("b", np.random.default_rng(1).normal(3.0, 0.1, 300))
    t = np.arange(400) * 0.01
    first = figures(t, np.full(400, 1.5), base, run=1)
    clock[0] = 0.5
    again = figures(t, np.full(400, 2.9), base, run=1)  # within the second: the same figures, all from one sample set
    assert again is first and again["now"]["median_ms"] == pytest.approx(1.5) and "1.5 ms" in again["text"]
    clock[0] = 1.2
    assert figures(t, np.full(400, 2.9), base, run=1)["change"]["speedup"] == pytest.approx(3.0 / 2.9, rel=0.05)
    assert figures(t, np.full(400, 1.5), base, run=2)["change"] is not again["change"]  # a new run: new figures
    measuring = PresentFigures(every_s=1.0, clock=lambda: 0.0)
    assert measuring(t[:5], np.ones(5), base)["now"] is None
    assert measuring(t, np.ones(400), base)["now"] is not None  # "measuring..." is not held for a second


def test_the_run_headline_says_live_or_last() -> None:
    fig = present_figures(np.arange(100) * 0.04, np.full(100, 38.0))
    live = run_headline(fig, "m.onnx (ort)", live=True)
    assert live.startswith("Live: m.onnx (ort): median 38 ms") and "over the last 100 inferences" in live
    assert run_headline(fig, "m.onnx (ort)", live=False).startswith("Last run: m.onnx (ort): median 38 ms")
    assert run_headline(present_figures(np.zeros(3), np.ones(3)), "m", live=True) == "Live: m: measuring..."
    # Present mode's headline names the run; its figures stand below it once
    assert run_headline(fig, "m.onnx (ort)", live=True, figures=False) == "Live: m.onnx (ort), the last 100 inferences"


@pytest.mark.gui
@pytest.mark.slow
def test_present_window_follows_the_live_run_beside_a_baseline(qtbot, sample_model: Path, tmp_path: Path) -> None:
    """A real ONNX Runtime run beside a baseline session: the headline follows the live run (never
    "nothing to sum up"), the change is compare's, and after the run the headline sums that run up."""
    pytest.importorskip("onnxruntime")
    from trtstudio.measure.stats import latency_stats
    from trtstudio.profiling.session import ProfileRequest, run_profile
    from trtstudio.report.compare import NOISY_COV_PERCENT
    from trtstudio.report.model import save_session
    from trtstudio.ui.main_window import MainWindow

    base_path = tmp_path / "base.trtstudio"
    out = run_profile(ProfileRequest(model=str(sample_model), backend="ort", iterations=150, warmup=5, threads=1))
    save_session(base_path, run=out.run_data("baseline run"))

    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    panel = win.profile_panel
    with qtbot.waitSignal(win.sig_model_loaded, timeout=60000), qtbot.waitSignal(panel.sig_model_ready, timeout=60000):
        win.open_model(str(sample_model))
    view = win.tools.present()
    try:
        qtbot.waitUntil(lambda: view._summary_done, timeout=60000)
        before = view.headline.text()
        assert "engine" in before.lower() or "latency" in before.lower()  # the model alone: no run yet
        panel.count_mode.setCurrentIndex(2)  # until stopped
        panel.start()
        view.load_baseline(str(base_path))
        qtbot.waitUntil(lambda: view.baseline is not None, timeout=30000)
        qtbot.waitUntil(lambda: (view.last_figures.get("now") or {}).get("samples", 0) >= 100, timeout=90000)
        qtbot.waitUntil(lambda: view.last_figures.get("change") is not None, timeout=60000)
        fig = view.last_figures
        head = view.headline.text()
        assert head.startswith("Live: mobilenetv2_035.onnx (ort), the last ") and "nothing to sum up" not in head
        # the median stands in the figures, not again in the headline (it was printed three times)
        assert view.figures["median"][0].text() not in head and "median" not in head
        change = fig["change"]
        assert view.change.text() == change["text"]
        assert change["verdict"] in ("faster", "slower", "no significant difference")
        if change["verdict"] == "no significant difference":
            assert change["interval"][0] <= 0 <= change["interval"][1]
        else:
            assert "95 % interval" in change["text"] and not change["interval"][0] <= 0 <= change["interval"][1]
        base_cov = latency_stats(view.baseline.latency_ms)["cov"]
        assert ("baseline run" in change["noisy"]) == (base_cov > NOISY_COV_PERCENT)
        assert ("noisy" in change["text"]) == bool(change["noisy"])
        view.showNormal()
        view.resize(1920, 1080)
        qtbot.waitUntil(lambda: view.width() == 1920, timeout=5000)
        shot = tmp_path / "present_live.png"
        assert view.grab().save(str(shot))
        print(f"screenshot: {shot}")
        assert view.headline.fontMetrics().horizontalAdvance(head) < 2 * (1920 - 96)  # two lines at most
    finally:
        with qtbot.waitSignal(panel.sig_run_finished, timeout=30000):
            panel.stop()
    try:
        # after the run: the At a glance headline of that run (its median), never "nothing to sum up"
        qtbot.waitUntil(lambda: view.headline.text().startswith("Median"), timeout=60000)
        median = float(np.median(win.workspace.last_run().data.latency_ms))
        shown = float(view.headline.text().split()[1])  # "Median 4.16 ms, p99 ..."
        assert shown == pytest.approx(median, rel=0.01), view.headline.text()
    finally:
        view.close()
