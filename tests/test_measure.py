"""The measurement vocabulary (issue 33 item 5): the one trend fit, ratio with interval, Verdict,
the statistics summary's names, the devices probes; and speed-ups with their confidence in
comparisons of real ONNX Runtime runs (issue 28 item 5)."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx_models import conv_net
from test_report_model import ort_run

from trtstudio.measure import devices
from trtstudio.measure.ratio import NO_DIFFERENCE, ratio_interval, ratio_of, speedup_of
from trtstudio.measure.stats import latency_stats, stat
from trtstudio.measure.trend import fit_trend, t_quantile
from trtstudio.measure.verdict import Verdict
from trtstudio.report import build_report
from trtstudio.report.compare import compare, speedup_verdict


# -- trend -----------------------------------------------------------------------------------------
def test_t_quantile_matches_tables() -> None:
    for dof, exact in ((3, 3.182), (10, 2.228), (30, 2.042), (1e9, 1.960)):
        assert t_quantile(0.975, dof) == pytest.approx(exact, rel=0.01)


def test_trend_slope_interval_covers_and_widens_for_steps() -> None:
    rng = np.random.default_rng(0)
    x = np.arange(200.0)
    hits = 0
    for seed in range(200):
        y = 3.0 + 0.05 * x + np.random.default_rng(seed).normal(0, 1.0, x.size)
        tr = fit_trend(x, y)
        hits += tr.low <= 0.05 <= tr.high
    assert 0.9 <= hits / 200 <= 0.99  # a 95% interval on independent noise
    step = np.where(x < 100, 0.0, 1.0) + rng.normal(0, 0.01, x.size)
    plain, widened = fit_trend(x, step, autocorrelated=False), fit_trend(x, step)
    assert widened.autocorrelation > 0.5 and (widened.high - widened.low) > 3 * (plain.high - plain.low)
    assert math.isnan(fit_trend([1, 1, 1], [1, 2, 3]).slope) and fit_trend([1, 2], [1, 2]).points == 2
    out = fit_trend(x, 2 * x, outlier_mads=6)
    assert out.slope == pytest.approx(2.0) and out.to_json(10)["slope"] == pytest.approx(20.0)


# -- ratio -----------------------------------------------------------------------------------------
def test_ratio_is_other_over_baseline_with_a_seeded_interval() -> None:
    rng = np.random.default_rng(1)
    base = rng.lognormal(0, 0.3, 300)
    faster = rng.lognormal(0, 0.3, 300) * 0.8
    r = ratio_interval(base, faster)
    assert r.value == pytest.approx(np.median(faster) / np.median(base))
    assert r.low < r.value < r.high < 1.0 and r.significant and r.method == "block bootstrap"
    assert ratio_interval(base, faster) == r  # seeded: the same inputs, the same interval
    sp = r.inverse()
    assert sp.value == pytest.approx(1 / r.value) and sp.low == pytest.approx(1 / r.high) and sp.low > 1
    same = ratio_interval(base, rng.lognormal(0, 0.3, 300))
    assert not same.significant and same.low <= 1.0 <= same.high
    assert ratio_of(2.0, 3.0) == 1.5 and speedup_of(2.0, 1.0) == 2.0 and ratio_of(0.0, 1.0) is None
    few = ratio_interval([1.0], [2.0])
    assert few.value == 2.0 and not few.has_interval and few.to_json()["low"] is None
    assert ratio_interval(base[:20], faster[:20]).method == "bootstrap"  # too few for blocks


def test_paired_rounds_cancel_shared_drift() -> None:
    drift = np.linspace(1.0, 3.0, 30)  # the machine got busier round by round, for both variants
    rng = np.random.default_rng(2)
    a = drift * rng.lognormal(0, 0.02, 30)
    b = 0.9 * drift * rng.lognormal(0, 0.02, 30)
    paired, apart = ratio_interval(a, b, paired=True), ratio_interval(a, b, blocks=1)
    assert paired.method == "paired rounds" and paired.significant and paired.high < 0.95
    assert not apart.significant  # without the pairing the drift hides a 10% gain
    with pytest.raises(ValueError):
        ratio_interval(a, b[:-1], paired=True)


def test_interval_of_100k_samples_is_fast() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.lognormal(0, 0.5, 100_000), rng.lognormal(0, 0.5, 100_000) * 1.01
    t0 = time.perf_counter()
    r = ratio_interval(a, b)
    assert time.perf_counter() - t0 < 2.0 and r.low < 1.01 < r.high


# -- verdict, statistics names, devices -------------------------------------------------------------
def test_verdict_round_trips_and_reads_older_documents() -> None:
    v = Verdict("memory growth", "stable", "memory held", {"slope": 0.1, "points": 30})
    doc = json.loads(json.dumps(v.to_json()))
    assert Verdict.from_json(doc) == v and v.conclusive
    old = Verdict.from_json({"verdict": "unknown", "reason": "too few memory samples"})
    assert old.text == "too few memory samples" and old.topic == ""


def test_summary_names_read_both_ways_and_the_empty_case() -> None:
    s = latency_stats(np.array([1.0, 2.0, 3.0, 4.0]))
    assert stat(s, "p50") == stat(s, "median") == 2.5
    assert stat({"p50": 7.0}, "median") == 7.0 and stat({"p50": float("nan")}, "median") is None
    assert latency_stats(np.array([])) == {"count": 0} and stat({"count": 0}, "median") is None
    from trtstudio.triton.sweep import latency_figures

    lat = np.array([0.010, 0.012, 0.011, 0.020])
    assert latency_figures(lat)["p50"] == pytest.approx(latency_stats(lat * 1e3)["median"])
    assert all(math.isnan(v) for v in latency_figures(np.array([])).values())


def test_devices_probes_answer_none_without_a_gpu_context() -> None:
    assert devices.cuda_mem_info() is None or len(devices.cuda_mem_info()) == 2  # type: ignore[arg-type]
    nv = devices.nvml_or_none()
    if nv is None:
        assert devices.list_gpus() == [] or devices.list_gpus()[0].total_bytes > 0
        assert devices.gpu_reading(0) == {} and devices.nvml_used(0) == {}
    else:  # pragma: no cover - a machine with NVML
        assert devices.nvml() is nv


# -- comparisons ------------------------------------------------------------------------------------
@pytest.fixture
def small_model(tmp_path: Path) -> Path:
    path = tmp_path / "conv_net.onnx"
    onnx.save(conv_net(batch=1), path)
    return path


def test_compare_says_no_significant_difference_for_one_run_against_itself(small_model: Path, tmp_path: Path) -> None:
    run = ort_run(small_model, iterations=300, per_layer=False)
    rep = build_report(model=small_model, run=run)
    comp = compare([rep, rep], ["a", "a again"]).to_json()
    v = comp["variants"][1]
    assert v["verdict"]["verdict"] == NO_DIFFERENCE and v["speedup_interval"]["low"] <= 1.0 <= v["speedup_interval"]["high"]
    assert comp["summary"][1]["verdict_text"].startswith(NO_DIFFERENCE)
    assert comp["variants"][0]["verdict"] is None and comp["ratio_rule"].startswith("speed-up = baseline median")


def test_a_real_slower_model_is_called_slower_with_its_interval(small_model: Path, tmp_path: Path) -> None:
    big = tmp_path / "big.onnx"
    onnx.save(conv_net(batch=1, channels=96), big)
    fast = build_report(model=small_model, run=ort_run(small_model, iterations=300, per_layer=False, threads=1))
    slow = build_report(model=big, run=ort_run(big, iterations=300, per_layer=False, threads=1))
    comp = compare([fast, slow], ["small", "big"])
    s = comp.summary[1]
    assert s["verdict"] == "slower" and s["speedup_high"] < 1.0, s
    assert "slower than small" in s["verdict_text"] and "interval" in s["verdict_text"]
    from trtstudio.report.writers import write_comparison

    html = write_comparison(comp, tmp_path / "c.html")[0].read_text()
    assert s["verdict_text"].split(" (")[0] in html
    assert f"({s['speedup_low']:.2f}-{s['speedup_high']:.2f}x)" in html
    assert "No layers to compare" in html and "No accuracy results in these inputs." in html


def test_noisy_inputs_and_inputs_without_samples_are_said_in_the_verdict() -> None:
    rng = np.random.default_rng(4)
    base, other = rng.lognormal(0, 1.0, 300), rng.lognormal(0, 1.0, 300)
    v, sp = speedup_verdict("fp32", base, "fp16", other, [70.0, 68.0])
    assert "CV 70%, 68%" in v.text and v.evidence["noisy"] and sp.has_interval
    none, sp2 = speedup_verdict("fp32", np.zeros(0), "fp16", np.zeros(0), [1.0, 1.0])
    assert none.verdict == "inconclusive" and "no latency samples" in none.text and not sp2.has_interval


def test_cycle_verdict_is_a_verdict_document_with_its_figures_flat_too() -> None:
    from trtstudio.profiling.scenario_memory import cycle_verdict

    mib = 2**20
    rows = [{"cycle": i, "gpu_used_bytes": (1000 + 40 * i) * mib} for i in range(8)]
    doc = cycle_verdict(rows)
    v = Verdict.from_json(doc)
    assert v.verdict == doc["verdict"] == "leak" and v.text == doc["reason"]
    assert v.evidence["used_slope_bytes_per_cycle"] == pytest.approx(40 * mib) == doc["used_slope_bytes_per_cycle"]


def test_contention_slowdown_has_an_interval_and_a_verdict() -> None:
    from trtstudio.profiling.scenario_contention import _slowdown_interval

    rng = np.random.default_rng(1)
    alone = rng.lognormal(np.log(2.0), 0.05, 400)
    slower = _slowdown_interval("m", alone, rng.lognormal(np.log(3.0), 0.05, 400))
    assert slower["verdict"]["verdict"] == "slower"
    assert 1.3 < slower["median_interval"]["low"] < 1.5 < slower["median_interval"]["high"] < 1.7
    same = _slowdown_interval("m", alone, rng.lognormal(np.log(2.0), 0.05, 400))
    assert same["verdict"]["verdict"] == "no significant difference"
    assert _slowdown_interval("m", None, None)["verdict"]["verdict"] == "inconclusive"
