"""Statistics against numpy, sample storage, leak verdicts and exports on known data."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from trtstudio.measure.stats import latency_stats, longest_spike, run_warnings, thin_tail, thin_tail_note
from trtstudio.profiling.export import chrome_trace, write_samples_csv, write_samples_npy, write_trace
from trtstudio.profiling.leak import MIB, leak_check
from trtstudio.profiling.samples import ExactStore, SampleBuffer


def test_stats_match_numpy() -> None:
    v = np.random.default_rng(3).lognormal(0.0, 0.3, 5000)
    s = latency_stats(v)
    assert s["count"] == 5000
    for key, q in (("median", 50), ("p90", 90), ("p95", 95), ("p99", 99), ("p999", 99.9)):
        assert s[key] == pytest.approx(np.percentile(v, q))
    assert s["mean"] == pytest.approx(v.mean()) and s["std"] == pytest.approx(v.std())
    assert s["min"] == v.min() and s["max"] == v.max()
    assert s["cov"] == pytest.approx(100 * v.std() / v.mean())
    assert s["jitter_ms"] == pytest.approx(np.percentile(v, 99) - np.percentile(v, 50))


def test_a_thin_p99_is_set_by_the_slowest_sample() -> None:
    """Below 100 samples a p99 lies between the two slowest (moving the slowest moves it): thin;
    from 101 on no single sample sets it."""
    rng = np.random.default_rng(8)
    for n in (2, 10, 60, 99, 101, 400):
        v = rng.lognormal(0.0, 0.3, n)
        slower = v.copy()
        slower[np.argmax(v)] *= 10
        moved = np.percentile(slower, 99) - np.percentile(v, 99)
        assert thin_tail("p99", n) == (n < 100) == (moved > 0)
    assert thin_tail("p999", 999) and not thin_tail("p999", 1000) and not thin_tail("median", 1)
    assert thin_tail_note("p99", 10, "requests") == "p99 of 10 requests: fewer than 100, so it is about the slowest of them, not a tail"
    assert thin_tail_note("p99", 100) is None


def test_longest_spike() -> None:
    v = np.ones(1000)
    v[100:103] = 5.0  # run of 3
    v[500:507] = 2.5  # run of 7, above 2x median
    spike = longest_spike(v, p99=float(np.percentile(v, 99)), median=1.0)
    assert spike["samples"] == 7 and spike["start"] == 500
    assert spike["duration_ms"] == pytest.approx(17.5)
    assert longest_spike(np.ones(10), 1.0, 1.0)["samples"] == 0


def test_warnings() -> None:
    stable = latency_stats(np.full(100, 1.0) + np.linspace(0, 0.01, 100))
    assert run_warnings(stable) == []
    noisy = latency_stats(np.random.default_rng(0).uniform(0.5, 1.5, 1000))
    assert any(w.startswith("unstable") for w in run_warnings(noisy))
    parts = {"h2d_ms": 0.6, "compute_ms": 1.0, "d2h_ms": 0.5}
    assert any(w.startswith("transfer-bound") for w in run_warnings(stable, parts))
    assert any(w.startswith("enqueue-bound") for w in run_warnings(stable, parts, enqueue_ms=2.0))
    assert not any(w.startswith("transfer-bound") for w in run_warnings(stable, {**parts, "compute_ms": 2.0}))


def test_ring_buffer_wraps_in_order_and_copies() -> None:
    buf = SampleBuffer(capacity=8)
    nbytes = buf.nbytes
    for i in range(20):
        buf.append(float(i), float(i) * 2, None, 1.0, None)
    snap = buf.snapshot()
    np.testing.assert_array_equal(snap["t_s"], np.arange(12, 20, dtype=float))
    np.testing.assert_array_equal(buf.snapshot(3)["latency_ms"], [34.0, 36.0, 38.0])
    assert np.isnan(snap["h2d_ms"]).all() and (snap["compute_ms"] == 1.0).all()
    snap["t_s"][:] = -1
    assert buf.snapshot()["t_s"][0] == 12.0  # a copy
    assert buf.count == 20 and buf.nbytes == nbytes


def test_exact_store_cap_and_reservoir() -> None:
    data = np.random.default_rng(1).normal(10, 1, 20_000)
    exact = ExactStore(cap=100_000)
    capped = ExactStore(cap=2000)
    for x in data:
        exact.add(float(x), 0.1, None, 0.2)
        capped.add(float(x))
    np.testing.assert_array_equal(exact.values(), data)
    assert exact.note() is None and capped.note() is not None
    assert capped.values().size == 2000
    t = capped.totals()
    assert t["count"] == 20_000 and t["mean"] == pytest.approx(data.mean())
    assert t["min"] == data.min() and t["max"] == data.max()
    assert np.median(capped.values()) == pytest.approx(np.median(data), abs=0.15)
    assert exact.part_means() == {
        "h2d_ms": pytest.approx(0.1), "compute_ms": None, "d2h_ms": pytest.approx(0.2), "enqueue_ms": None
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_leak_verdicts(seed: int) -> None:
    rng = np.random.default_rng(seed)
    idx = np.arange(0, 50_000, 250)
    base = 500 * MIB + rng.normal(0, 2 * MIB, idx.size)  # noise of 2 MiB
    base[::37] += 40 * MIB  # occasional outliers
    stable = leak_check(idx, base)
    assert stable.verdict == "stable", stable
    growing = leak_check(idx, base + idx * (2.0 * MIB / 1000))  # 2 MiB per 1,000 inferences
    assert growing.verdict == "growing"
    assert growing.slope_mib_per_1k == pytest.approx(2.0, rel=0.1)
    tiny = leak_check(idx, base + idx * (0.05 * MIB / 1000))
    assert tiny.verdict == "stable"
    short = leak_check(idx[:3], base[:3])
    assert short.verdict == "inconclusive" and short.evidence["inferences_needed"] > 500


def test_exports_parse_back(tmp_path: Path) -> None:
    buf = SampleBuffer(100)
    for i in range(10):
        buf.append(0.01 * (i + 1), 1.0 + i, 0.1, 0.8 + i, None)
    snap = buf.snapshot()
    assert write_samples_csv(tmp_path / "s.csv", snap) == 10
    with open(tmp_path / "s.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 10 and float(rows[3]["latency_ms"]) == 4.0 and rows[3]["d2h_ms"] == ""
    write_samples_npy(tmp_path / "s.npy", snap)
    arr = np.load(tmp_path / "s.npy")
    np.testing.assert_array_equal(arr["latency_ms"], snap["latency_ms"])
    mem = {"t_s": np.array([0.0, 0.05]), "index": np.array([0, 5]), "host_rss_bytes": np.array([2**20, 2**21])}
    layers = [{"name": "conv", "onnx_nodes": ["/c"], "provider": "CPU", "time_ms": 0.5}]
    write_trace(tmp_path / "t.json", chrome_trace(snap, mem, layers))
    doc = json.loads((tmp_path / "t.json").read_text())
    infer = [e for e in doc["traceEvents"] if e.get("name") == "infer"]
    assert len(infer) == 10 and infer[2]["dur"] == pytest.approx(3000.0)
    assert infer[0]["ts"] == pytest.approx(10_000 - 1000)
    counters = [e for e in doc["traceEvents"] if e["ph"] == "C"]
    assert [c["args"]["MiB"] for c in counters] == [1.0, 2.0]
    assert any(e.get("name") == "conv" and e["dur"] == 500.0 for e in doc["traceEvents"])
