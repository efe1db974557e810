"""Live maths of a profiling run without Qt: sample window, decimation, bands, statistics, histogram,
spike view, memory verdicts and the one "memory growing" rule (trtstudio.profiling.live / leak)."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from trtstudio.measure.stats import latency_stats
from trtstudio.profiling.leak import (
    HOST_KEYS,
    LEAK_KEYS,
    MIB,
    MIN_WARN_POINTS,
    leak_check,
    leak_warnings,
    memory_verdicts,
)
from trtstudio.profiling.live import (
    MAX_SPIKES,
    SampleWindow,
    fmt_ms,
    histogram,
    latency_view,
    live_statistics,
    peak_decimate,
    rolling_bands,
    round_sig,
    split_top,
    throughput_series,
)
from trtstudio.profiling.memory import MemoryMonitor
from trtstudio.profiling.samples import COLUMNS, SampleBuffer

latencies = hnp.arrays(np.float64, st.integers(1, 3000),
                       elements=st.floats(1e-4, 1e4, allow_nan=False, allow_infinity=False))


# -- round_sig ---------------------------------------------------------------------------------------


@given(st.floats(1e-9, 1e9, allow_nan=False, allow_infinity=False))
@example(0.95).via("k * step lands an ulp above 0.95")
@example(0.69).via("and above 0.69")
@example(0.35).via("and above 0.35")
def test_round_sig_brackets_the_value_with_two_significant_digits(v: float) -> None:
    lo, hi = round_sig(v, down=True), round_sig(v, down=False)
    assert lo <= v <= hi
    assert hi - lo <= 10 ** (math.floor(math.log10(v)) - 1) * 1.000001  # one step of the 2nd digit
    for r in (lo, hi):
        digits = f"{r:.6e}".split("e")[0].replace(".", "").rstrip("0")
        assert len(digits) <= 2


def test_round_sig_leaves_zero_negative_and_non_finite_alone() -> None:
    assert round_sig(0.0, down=True) == 0.0
    assert round_sig(-3.14159, down=False) == -3.14159
    assert math.isinf(round_sig(math.inf, down=True))
    assert math.isnan(round_sig(math.nan, down=True))


# -- peak_decimate -------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, st.integers(0, 20_000), elements=st.floats(-1e3, 1e3, allow_nan=False)),
       st.integers(16, 4096))
def test_peak_decimate_keeps_every_bucket_extreme(v: np.ndarray, buckets: int) -> None:
    t = np.arange(v.size, dtype=np.float64) * 1e-3
    dt, dv = peak_decimate(t, v, buckets, finite=True)
    k = v.size // buckets
    if k < 2:  # short already: drawn as it is
        assert dt is t and dv is v
        return
    m = (v.size // k) * k
    tail = v[v.size - m:]
    assert dv.size == dt.size == 2 * (m // k)
    assert m // k < 2 * buckets  # about ``buckets`` runs (up to 1.5x as many while runs are short)
    assert np.all(np.diff(dt) >= 0)
    assert dv.max() == tail.max() and dv.min() == tail.min()  # the largest spike is never dropped
    per_bucket = tail.reshape(-1, k)
    np.testing.assert_array_equal(dv[1::2], per_bucket.max(axis=1))
    np.testing.assert_array_equal(dv[0::2], per_bucket.min(axis=1))


def test_peak_decimate_keeps_the_max_spikes_of_a_long_run() -> None:
    rng = np.random.default_rng(3)
    v = 1.0 + 0.01 * rng.random(100_000)
    spikes = {1_000: 50.0, 40_000: 20.0, 99_999: 80.0}
    for i, s in spikes.items():
        v[i] = s
    t = np.arange(v.size) * 1e-4
    dt, dv = peak_decimate(t, v, 2048, finite=True)
    assert dv.size < 4 * 2048
    for i, s in spikes.items():
        j = int(np.flatnonzero(dv == s)[0])
        assert dt[j] <= t[i] < dt[j] + 0.1  # drawn at its own bucket's time
    assert np.isclose(dv.min(), v.min())


def test_peak_decimate_is_nan_aware_and_keeps_all_nan_buckets_nan() -> None:
    v = np.arange(4096, dtype=np.float64)
    v[:8] = np.nan  # a whole bucket missing (a part the backend does not time)
    v[10] = np.nan  # one missing value inside a bucket
    with np.errstate(all="raise"):
        _, dv = peak_decimate(np.arange(v.size, dtype=np.float64), v, buckets=512)
    assert np.isnan(dv[0]) and np.isnan(dv[1])
    assert dv[2] == 8.0 and dv[3] == 15.0  # the finite min and max of bucket 1 (8..15, 10 missing)
    assert np.isfinite(dv[2:]).all()


# -- rolling bands, throughput --------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float64, st.integers(0, 30_000), elements=st.floats(0.01, 100.0, allow_nan=False)),
       st.integers(2, 300), st.integers(1, 200))
def test_rolling_bands_are_ordered_and_inside_the_data(y: np.ndarray, bins: int, min_per_bin: int) -> None:
    t = np.cumsum(np.full(y.size, 1e-3))
    out = rolling_bands(t, y, bins=bins, min_per_bin=min_per_bin)
    nb = min(bins, y.size // min_per_bin)
    if nb < 2:
        assert out is None
        return
    assert out is not None
    tc, p50, p99 = out
    assert tc.size == p50.size == p99.size == nb
    assert np.all(np.diff(tc) > 0)
    assert np.all(p50 <= p99)
    k = y.size // nb
    covered = y[y.size - nb * k:]
    assert covered.min() <= p50.min() and p99.max() <= covered.max()
    assert tc[-1] <= t[-1]  # the latest sample ends the last bin


def test_rolling_bands_follow_a_step_in_latency() -> None:
    y = np.concatenate([np.full(5_000, 1.0), np.full(5_000, 3.0)])
    y[::100] += 10.0  # a spike every 100 samples: p99 above p50 in every bin
    t = np.arange(y.size) * 1e-3
    out = rolling_bands(t, y, bins=20, min_per_bin=100)
    assert out is not None
    _, p50, p99 = out
    assert np.all(p50[:10] == 1.0) and np.all(p50[10:] == 3.0)
    assert np.all(p99 > p50)


def test_throughput_series_measures_a_steady_rate() -> None:
    rate = 2_000.0  # inferences per second
    t = np.arange(0, 3.0, 1.0 / rate)
    x, ips = throughput_series(t, width_s=0.25)
    assert x.size == ips.size == 11  # 12 bins, the last (partial) one dropped
    np.testing.assert_allclose(ips, rate, rtol=1e-3)
    assert np.all(np.diff(x) == pytest.approx(0.25))
    assert throughput_series(np.array([1.0]), 0.25)[0].size == 0


# -- SampleWindow ---------------------------------------------------------------------------------------


def test_sample_window_follows_a_buffer_written_concurrently() -> None:
    buf = SampleBuffer(5_000)
    win = SampleWindow(buf.capacity)
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set() and i < 60_000:
            buf.append(i * 1e-6, float(i))
            i += 1

    th = threading.Thread(target=writer)
    th.start()
    sizes = []
    while th.is_alive():
        win.update(buf)
        cols = win.columns()
        sizes.append(len(win))
        y = cols["latency_ms"]
        assert np.all(np.diff(y) == 1.0)  # no gap, no repeat, in order, across compactions
        if len(sizes) > 20_000:
            stop.set()
    th.join()
    win.update(buf)
    np.testing.assert_array_equal(win.columns()["latency_ms"], buf.snapshot()["latency_ms"])
    assert len(win) == min(buf.count, buf.capacity) and max(sizes) <= buf.capacity


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 400), st.lists(st.integers(0, 900), min_size=1, max_size=25))
def test_sample_window_holds_the_newest_rows_whatever_the_chunking(capacity: int, chunks: list[int]) -> None:
    buf = SampleBuffer(max(capacity, 300))
    win = SampleWindow(capacity)
    n = 0
    for c in chunks:
        for _ in range(c):
            buf.append(n * 1e-3, float(n), 0.1, float(n) - 0.2, 0.1)
            n += 1
        new = win.update(buf)
        assert 0 <= new <= capacity
        cols = win.columns()
        want = buf.snapshot(last_n=capacity)
        assert set(cols) == set(COLUMNS)
        for c_name in COLUMNS:
            np.testing.assert_array_equal(cols[c_name], want[c_name])
    assert win.update(buf) == 0  # nothing new: nothing taken


# -- live statistics ---------------------------------------------------------------------------------------


class GrowingProbe:
    """Test double of a memory probe: 1 MiB more device memory and host RSS at every reading."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> dict[str, int]:
        self.n += 1
        return {"gpu_used_bytes": (100 + self.n) << 20, "host_rss_bytes": (500 + self.n) << 20}


def _filled(n: int, capacity: int, seed: int = 0) -> tuple[SampleBuffer, SampleWindow]:
    rng = np.random.default_rng(seed)
    buf = SampleBuffer(capacity)
    for i in range(n):
        lat = 1.0 + 0.01 * rng.random()
        buf.append(i * 1e-3, lat, 0.2, lat - 0.4, 0.2)
    win = SampleWindow(capacity)
    win.update(buf)
    return buf, win


def test_live_statistics_of_the_window_match_the_whole_run_rules() -> None:
    buf, win = _filled(3_000, 2_000)
    snap = win.columns()
    stats = live_statistics(snap, buf.count, batch=4, cold_ms=12.5)
    ref = latency_stats(snap["latency_ms"])
    for key in ("count", "mean", "median", "p99", "min", "max"):
        assert stats[key] == pytest.approx(ref[key])
    assert stats["count"] == 2_000 and stats["total_count"] == 3_000 and stats["window"] == 2_000
    assert "last 2,000 of 3,000" in stats["scope"]
    # one inference per ms over the last second
    assert stats["throughput"]["inferences_per_s"] == pytest.approx(1_000.0, rel=1e-6)
    assert stats["throughput"]["samples_per_s"] == pytest.approx(4 * stats["throughput"]["inferences_per_s"])
    assert stats["parts_ms"]["h2d_ms"] == pytest.approx(0.2)
    assert stats["cold_ms"] == 12.5
    assert stats["memory"] == {} and stats["warnings"] == []
    assert live_statistics({c: np.empty(0) for c in COLUMNS}, 0) == {}


def test_live_statistics_warn_of_transfer_bound_runs() -> None:
    buf = SampleBuffer(1_000)
    for i in range(1_000):
        buf.append(i * 1e-3, 1.0, 0.4, 0.2, 0.4)  # copies outweigh compute
    win = SampleWindow(1_000)
    win.update(buf)
    stats = live_statistics(win.columns(), buf.count)
    assert stats["scope"] == "live: 1,000 inferences"
    assert any(w.startswith("transfer-bound") for w in stats["warnings"])


def _monitor(readings: int) -> MemoryMonitor:
    mon = MemoryMonitor(probes=[GrowingProbe()], interval_ms=0)
    for i in range(readings):
        mon.record(i * 100)
    return mon


def test_live_statistics_say_memory_grows_only_after_enough_points() -> None:
    _, win = _filled(500, 500)
    early = live_statistics(win.columns(), 500, memory=_monitor(12).snapshot())
    assert early["memory"]["GPU used"]["verdict"] == "growing"  # the fit sees it...
    assert early["warnings"] == []  # ...but 11 points are too early to say so
    assert "too early to tell" in early["scope"]
    late = live_statistics(win.columns(), 500, memory=_monitor(40).snapshot())
    assert any(w.startswith("memory growing (GPU used)") for w in late["warnings"])
    assert any(w.startswith("memory growing (host RSS)") for w in late["warnings"])
    assert "GPU used +10.000 MiB/1k inferences (growing)" in late["scope"]  # 1 MiB per 100 inferences


def test_live_statistics_distrust_host_memory_after_other_work() -> None:
    _, win = _filled(500, 500)
    stats = live_statistics(win.columns(), 500, memory=_monitor(40).snapshot(), disturbances=["loaded model B.onnx"])
    assert stats["memory"]["host RSS"]["verdict"] == "inconclusive"
    assert "loaded model B.onnx" in stats["memory"]["host RSS"]["text"]
    assert stats["memory"]["GPU used"]["verdict"] == "growing"  # device memory is not disturbed by loading
    assert not any("host RSS" in w for w in stats["warnings"])
    assert "host RSS" not in stats["scope"]


# -- memory verdicts and the one warning rule ------------------------------------------------------------


def _series(points: int, slope_mib_per_1k: float, noise_mib: float = 0.0, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    index = np.arange(points, dtype=np.int64) * 1_000
    mib = 200.0 + slope_mib_per_1k * index / 1_000 + noise_mib * rng.standard_normal(points)
    mem = (mib * MIB).astype(np.int64)
    return {"index": index, **{k: mem.copy() for k in LEAK_KEYS}}


def test_leak_verdicts_growing_flat_noisy_and_too_few() -> None:
    growing = memory_verdicts(_series(60, 2.0))
    assert {v.verdict for v in growing.values()} == {"growing"}
    assert growing["gpu_used_bytes"].slope_mib_per_1k == pytest.approx(2.0, rel=1e-3)
    flat = memory_verdicts(_series(60, 0.0, noise_mib=0.05))
    assert {v.verdict for v in flat.values()} == {"stable"}
    below = leak_check(*_pair(_series(60, 0.8)))
    assert below.verdict == "stable" and "below 1.0 MiB" in below.text
    noisy = leak_check(*_pair(_series(60, 1.5, noise_mib=40.0, seed=2)))
    assert noisy.verdict == "inconclusive" and noisy.evidence["inferences_needed"] > 59_000
    assert f"{noisy.evidence['inferences_needed']:,} inferences" in noisy.text
    few = memory_verdicts(_series(11, 5.0))  # a quarter left out as warm-up: 11 -> 8, still enough
    assert few["gpu_used_bytes"].verdict == "growing" and few["gpu_used_bytes"].points == 8
    fewer = memory_verdicts(_series(10, 5.0))
    assert {v.verdict for v in fewer.values()} == {"inconclusive"} and fewer["gpu_used_bytes"].points == 7
    assert fewer["gpu_used_bytes"].evidence["inferences_needed"] > 9_000
    # a document says "no figure" as null, not NaN: an inconclusive verdict's interval is a figure
    doc = fewer["gpu_used_bytes"].to_dict()
    assert doc["verdict"] == "inconclusive" and doc["reason"] == doc["text"]
    assert memory_verdicts({"index": np.arange(3)}) == {}
    none = leak_check(np.arange(2), np.arange(2)).to_json()
    assert none["slope_mib_per_1k"] is None and none["evidence"]["low_mib_per_1k"] is None
    assert growing["gpu_used_bytes"].to_dict()["slope_mib_per_1k"] == pytest.approx(2.0, rel=1e-3)


def _pair(s: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    return s["index"], s["gpu_used_bytes"]


def test_one_outlier_does_not_make_flat_memory_grow() -> None:
    s = _series(60, 0.0, noise_mib=0.01)
    s["gpu_used_bytes"][-1] += 500 * int(MIB)  # one reading of another process's allocation
    assert leak_check(*_pair(s)).verdict == "stable"


def test_leak_warning_threshold_is_min_warn_points() -> None:
    # a quarter of the inferences is left out as warm-up: 40 points at 0, 1k, ... leave 30 (from 10k on)
    at = memory_verdicts(_series(40, 3.0))
    short = memory_verdicts(_series(39, 3.0))
    assert at["gpu_used_bytes"].points == MIN_WARN_POINTS and short["gpu_used_bytes"].points == MIN_WARN_POINTS - 1
    assert all(v.verdict == "growing" for v in (*at.values(), *short.values()))
    warned = leak_warnings({k: v.to_dict() for k, v in at.items()})
    assert len(warned) == len(LEAK_KEYS) and all(w.startswith("memory growing (") for w in warned)
    assert leak_warnings({k: v.to_dict() for k, v in short.items()}) == []


def test_disturbed_host_memory_is_unknown_not_growing() -> None:
    s = _series(60, 3.0)
    disturbed = memory_verdicts(s, ["loaded model B.onnx"])
    for key, v in disturbed.items():
        assert v.verdict == ("inconclusive" if key in HOST_KEYS else "growing")
    warned = leak_warnings({k: v.to_dict() for k, v in disturbed.items()})
    assert not any(LEAK_KEYS[k] in w for k in HOST_KEYS for w in warned)
    assert len(warned) == len(LEAK_KEYS) - len(HOST_KEYS)
    assert memory_verdicts(_series(60, 0.0), ["loaded model B.onnx"])["host_rss_bytes"].verdict == "stable"


# -- latency view, histogram, split view, text --------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(latencies)
def test_latency_view_marks_the_largest_spikes_and_shows_p99(y: np.ndarray) -> None:
    stats = latency_stats(y)
    top, idx = latency_view(np.arange(y.size) * 1e-3, y, stats)
    p50, p99 = stats["median"], stats["p99"]
    assert top >= p99
    candidates = np.flatnonzero((y > p99) | (y > 2.0 * p50))
    assert idx.size == min(candidates.size, MAX_SPIKES)
    assert set(idx.tolist()) <= set(candidates.tolist())
    if candidates.size > MAX_SPIKES:  # the ones left out are no larger than any marked one
        left = np.setdiff1d(candidates, idx)
        assert y[left].max() <= y[idx].min()


@settings(max_examples=150, deadline=None)
@given(latencies)
def test_histogram_edges_cover_the_data_or_count_it_off_scale(y: np.ndarray) -> None:
    stats = latency_stats(y)
    counts, edges, note = histogram(y, stats, bins=40)
    assert counts.size == 40 and edges.size == 41 and np.all(np.diff(edges) > 0)
    assert edges[0] <= y.min()
    hi = edges[-1]
    off = int((y > hi).sum())
    assert int(counts.sum()) + off == y.size  # every sample is in a bin or counted off-scale
    if off / y.size >= 0.0005:
        assert "off-scale" in note
    else:
        assert note == ""
    if stats["p999"] * 1.05 >= y.max() and stats["p999"] <= 3.0 * stats["p99"]:
        assert hi >= y.max()  # no far tail: nothing is cut


@pytest.mark.parametrize("value", [0.95, 0.69, 0.35, 2.0, 1.5e-3])
def test_histogram_of_a_constant_latency_counts_every_sample(value: float) -> None:
    y = np.full(500, value)  # a latency with 2 significant digits: the rounded range starts on it
    counts, edges, note = histogram(y, latency_stats(y))
    assert counts.sum() == 500 and note == ""
    assert edges[0] <= value <= edges[-1]


def test_histogram_cuts_a_far_tail_and_says_so() -> None:
    y = np.concatenate([np.full(9_980, 1.0) + np.linspace(0, 0.1, 9_980), np.full(20, 100.0)])
    stats = latency_stats(y)
    counts, edges, note = histogram(y, stats)
    assert edges[-1] < 100.0 and counts.sum() == 9_980
    assert note.startswith("0.2% &gt;") and "off-scale" in note


def test_split_top_is_the_largest_high_percentile_of_the_parts() -> None:
    t = np.arange(10_000) * 1e-3
    parts = {"h2d_ms": np.full(t.size, 0.1), "compute_ms": np.linspace(0.0, 2.0, t.size),
             "d2h_ms": np.full(t.size, np.nan)}
    top = split_top(t, parts)
    assert top == pytest.approx(np.percentile(parts["compute_ms"], 99.5), rel=1e-3)
    assert split_top(t, {"d2h_ms": np.full(t.size, np.nan)}) == 0.0


def test_fmt_ms_units() -> None:
    assert fmt_ms(None) == "-" and fmt_ms(float("nan")) == "-" and fmt_ms(float("inf")) == "-"
    assert fmt_ms(0.0123) == "12.3 µs"
    assert fmt_ms(1.5) == "1.500 ms"
    assert fmt_ms(250.0) == "250.0 ms"
