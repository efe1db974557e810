"""Pure rules of the scenarios on synthetic series: the leak/fragmentation verdict, the largest-block
bisection, timeline overlap and storage, device lists, and the per-GPU sampler."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trtstudio.errors import InputError
from trtstudio.profiling.scenario_devices import GpuInfo, GpuSampler, parse_devices
from trtstudio.profiling.scenario_memory import VerdictRules, cycle_verdict, largest_block
from trtstudio.profiling.timeline import COMPUTE, D2H, H2D, Timeline, chrome_trace, overlap_share, union

MIB = 1 << 20
GIB = 1 << 30


def cycles(used: list[float], free: list[float] | None = None, big: list[float] | None = None) -> list[dict[str, int]]:
    out = []
    for i, u in enumerate(used):
        row = {"cycle": i + 1, "gpu_used_bytes": int(u)}
        if free is not None and big is not None:
            row.update(cuda_free_bytes=int(free[i]), largest_block_bytes=int(big[i]))
        out.append(row)
    return out


rng = np.random.default_rng(0)
noise = rng.normal(0, 1 * MIB, 12)


def test_growing_used_memory_is_a_leak() -> None:
    used = [10 * GIB + 50 * MIB * i + noise[i] for i in range(10)]
    v = cycle_verdict(cycles(used))
    assert v["verdict"] == "leak" and v["series"] == "gpu_used_bytes"
    assert v["used_slope_bytes_per_cycle"] == pytest.approx(50 * MIB, rel=0.05)


def test_free_steady_and_largest_block_shrinking_is_fragmentation() -> None:
    n = 10
    used = [20 * GIB + noise[i] for i in range(n)]
    free = [100 * GIB + noise[i] for i in range(n)]
    big = [80 * GIB - 4 * GIB * i for i in range(n)]
    v = cycle_verdict(cycles(used, free, big))
    assert v["verdict"] == "fragmentation", v
    assert v["largest_block_change_bytes"] == pytest.approx(-4 * GIB * (n - 2), rel=0.01)  # first cycle skipped


def test_steady_memory_is_stable_and_noise_is_not_a_leak() -> None:
    used = [10 * GIB + noise[i] * 3 for i in range(10)]
    free = [100 * GIB + noise[i] for i in range(10)]
    big = [90 * GIB + noise[i] for i in range(10)]
    assert cycle_verdict(cycles(used, free, big))["verdict"] == "stable"


def test_a_step_that_levels_off_is_not_a_leak() -> None:
    used = [10 * GIB] * 3 + [10 * GIB + 200 * MIB] * 7  # a pool grew once, then held
    used = [u + noise[i] for i, u in enumerate(used)]
    assert cycle_verdict(cycles(used))["verdict"] == "stable"


def test_leak_with_shrinking_block_is_named_leak_first() -> None:
    n = 10
    used = [10 * GIB + 100 * MIB * i for i in range(n)]
    free = [100 * GIB - 10 * MIB * i for i in range(n)]  # within the steady band
    big = [80 * GIB - 3 * GIB * i for i in range(n)]
    v = cycle_verdict(cycles(used, free, big))
    assert v["verdict"] == "leak" and v["also"].startswith("fragmentation")


def test_too_few_cycles_is_inconclusive_and_no_series_is_unknown() -> None:
    few = cycle_verdict(cycles([1, 2, 3]))
    assert few["verdict"] == "inconclusive" and "run 5 cycles or more" in few["text"]
    assert cycle_verdict([{"cycle": i} for i in range(8)])["verdict"] == "unknown"
    short = cycle_verdict(cycles([float(i) * GIB for i in range(8)]), VerdictRules(min_cycles=20))
    assert short["verdict"] == "inconclusive" and "21 cycles" in short["reason"]


def test_host_rss_is_used_without_nvml() -> None:
    rows = [{"cycle": i, "host_rss_bytes": 100 * MIB + 30 * MIB * i} for i in range(8)]
    v = cycle_verdict(rows)
    assert v["series"] == "host_rss_bytes" and v["verdict"] == "leak"


# -- largest block -------------------------------------------------------------------------------
def fake_heap(largest: int) -> tuple[list[int], object]:
    calls: list[int] = []

    def try_alloc(n: int) -> bool:
        calls.append(n)
        return n <= largest

    return calls, try_alloc


@settings(max_examples=60, deadline=None)
@given(largest=st.integers(min_value=0, max_value=140 * GIB), free_extra=st.integers(min_value=0, max_value=40 * GIB))
def test_bisection_brackets_the_largest_block(largest: int, free_extra: int) -> None:
    calls, try_alloc = fake_heap(largest)
    res = largest_block(try_alloc, largest + free_extra, granularity=2 * MIB, budget_ms=1e9)  # type: ignore[arg-type]
    assert res.exact
    assert res.largest_bytes <= largest < res.failed_bytes
    assert res.failed_bytes - res.largest_bytes <= 2 * MIB
    assert res.steps == len(calls) <= 20  # log2(180 GiB / 2 MiB) ~ 17


def test_unfragmented_heap_takes_one_step() -> None:
    calls, try_alloc = fake_heap(64 * GIB)
    res = largest_block(try_alloc, 64 * GIB, budget_ms=1e9)  # type: ignore[arg-type]
    assert res.steps == 1 and res.largest_bytes == 64 * GIB


def test_cap_bounds_the_question() -> None:
    calls, try_alloc = fake_heap(100 * GIB)
    res = largest_block(try_alloc, 120 * GIB, cap=8 * GIB, budget_ms=1e9)  # type: ignore[arg-type]
    assert res.largest_bytes == 8 * GIB and max(calls) <= 8 * GIB and res.steps == 1
    calls, try_alloc = fake_heap(3 * GIB)  # fragmented below the cap: found exactly
    res = largest_block(try_alloc, 120 * GIB, cap=8 * GIB, budget_ms=1e9)  # type: ignore[arg-type]
    assert res.exact and res.largest_bytes <= 3 * GIB < res.failed_bytes and max(calls) <= 8 * GIB


def test_probe_stops_at_its_budget_with_a_lower_bound() -> None:
    def slow(n: int) -> bool:
        time.sleep(0.01)
        return n <= 5 * GIB

    t0 = time.perf_counter()
    res = largest_block(slow, 100 * GIB, budget_ms=35)
    elapsed = (time.perf_counter() - t0) * 1e3
    assert not res.exact and res.largest_bytes <= 5 * GIB < res.failed_bytes
    assert 2 <= res.steps <= 5 and elapsed < 80


# -- timeline ------------------------------------------------------------------------------------
def test_union_and_overlap_share() -> None:
    s, e = union(np.array([5.0, 0.0, 2.0, 10.0]), np.array([6.0, 3.0, 4.0, 12.0]))
    assert s.tolist() == [0.0, 5.0, 10.0] and e.tolist() == [4.0, 6.0, 12.0]
    # copies [3,5] (1 of 2 inside [0,4]) and [11,13] (1 of 2 inside [10,12])
    share = overlap_share(np.array([3.0, 11.0]), np.array([5.0, 13.0]), np.array([0.0, 10.0]), np.array([4.0, 12.0]))
    assert share == pytest.approx(0.5)
    assert overlap_share(np.array([0.0]), np.array([1.0]), np.array([]), np.array([])) == 0.0


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 200), st.integers(1, 30)), min_size=1, max_size=30),
       st.lists(st.tuples(st.integers(0, 200), st.integers(1, 30)), min_size=0, max_size=30))
def test_overlap_share_matches_a_brute_force_count(copies: list[tuple[int, int]], comps: list[tuple[int, int]]) -> None:
    grid = np.zeros(240, bool)
    for a, d in comps:
        grid[a:a + d] = True
    inside = sum(grid[a:a + d].sum() for a, d in copies)
    total = sum(d for _, d in copies)
    cs = np.array([float(a) for a, _ in copies])
    ce = np.array([float(a + d) for a, d in copies])
    ps = np.array([float(a) for a, _ in comps])
    pe = np.array([float(a + d) for a, d in comps])
    assert overlap_share(cs, ce, ps, pe) == pytest.approx(inside / total)


def test_timeline_summary_per_device_and_ring() -> None:
    tl = Timeline(capacity=9)
    r0 = tl.add_row("a (stream)", "cuda:0")
    r1 = tl.add_row("b (stream)", "cuda:0")
    tl.add_stages(r0, (0.0, 1.0, 5.0, 6.0), 0)  # h2d 0-1, compute 1-5, d2h 5-6
    tl.add_stages(r1, (2.0, 3.0, 4.0, 7.0), 0)  # h2d 2-3 inside a's compute; d2h 4-7: 1 of 3 inside
    s = tl.summary()
    dev = s["devices"]["cuda:0"]
    assert dev["copy_ms"] == pytest.approx(6.0)
    # compute covers [1, 5]: b's h2d (1 ms) and 4-5 of b's d2h lie inside; a's own copies do not
    assert dev["copy_overlapped_share"] == pytest.approx(2.0 / 6.0)
    tl.add_stages(r0, (8.0, 9.0, 10.0, 11.0), 1)  # 9 intervals now: full
    tl.add(r1, COMPUTE, 20.0, 21.0, 1)  # the oldest (a's first h2d) is dropped
    a = tl.arrays()
    assert tl.dropped == 1 and a["start"][0] == 1.0 and a["start"][-1] == 20.0
    trace = chrome_trace(tl)
    names = {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"}
    assert names == {"h2d", "compute", "d2h"} and trace["otherData"]["dropped_intervals"] == 1
    assert {H2D, D2H} <= set(a["kind"].tolist())


@settings(max_examples=60, deadline=None)
@given(capacity=st.integers(1, 12), batches=st.lists(st.integers(0, 20), min_size=1, max_size=6))
def test_timeline_batches_store_what_single_adds_store(capacity: int, batches: list[int]) -> None:
    one, many = Timeline(capacity), Timeline(capacity)
    for t in (one, many):
        t.add_row("w", "cpu")
    seq = 0
    for size in batches:
        batch = [(i % 4, float(seq + i), float(seq + i) + 0.5, seq + i) for i in range(size)]
        for kind, a, b, n in batch:
            one.add(0, kind, a, b, n)
        many.add_many(0, batch)
        seq += size
    assert many.count == one.count == seq and many.dropped == one.dropped
    x, y = one.arrays(), many.arrays()
    for key in x:
        np.testing.assert_array_equal(x[key], y[key])


# -- devices -------------------------------------------------------------------------------------
def test_parse_devices() -> None:
    assert parse_devices(None, 3, 1) == [1, 1, 1]
    assert parse_devices("0,1", 2) == [0, 1]
    assert parse_devices("2", 3) == [2, 2, 2]
    assert parse_devices("cpu,0", 2) == [None, 0]
    with pytest.raises(InputError, match="2 devices for 3 models"):
        parse_devices("0,1", 3)
    with pytest.raises(InputError):
        parse_devices("a,b", 2)


def test_gpu_sampler_keeps_one_bounded_series_per_gpu() -> None:
    gpus = [GpuInfo(i, f"GPU{i}", 80 * GIB) for i in range(3)]
    ticks = {"n": 0}

    def read(index: int) -> dict[str, float]:
        ticks["n"] += 1
        if index == 2:
            raise RuntimeError("GPU fell off the bus")
        return {"used_bytes": float(index * GIB + ticks["n"]), "total_bytes": 80.0 * GIB, "util_percent": 10.0 * index}

    sampler = GpuSampler(gpus, interval_ms=1, max_len=8, read=read)
    for _ in range(20):
        sampler.sample()
    snap = sampler.snapshot()
    assert sorted(snap) == [0, 1, 2]
    assert 4 <= snap[0]["t_s"].size <= 8  # thinned, never more than max_len
    assert np.all(np.diff(snap[1]["used_bytes"]) > 0) and np.isnan(snap[2]["used_bytes"]).all()
    summary = {s["gpu"]: s for s in sampler.summary()}
    assert summary[1]["mean_util_percent"] == 10.0 and summary[2]["peak_used_bytes"] is None
    assert gpus[0].label() == "GPU 0: GPU0 (80 GiB)"
