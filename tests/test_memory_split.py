"""The live run's GPU memory by category (issue 49, item 4): the process's measured GPU memory split
into categories that sum to it, which category grows, and the leak verdict naming it. Without a
GPU here: the torch-cuda arithmetic runs on dicts shaped as ``torch.cuda.memory_stats()`` and
``torch.cuda.memory_snapshot()`` document them, with the figures issue 49 measured on an H100; the
GPU test at the end (marked ``gpu``) runs the real allocator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from trtstudio.backends.torch_backend import allocator_stats, graph_pool_stats
from trtstudio.profiling.leak import memory_verdicts
from trtstudio.profiling.memory import MemoryMonitor, backend_probe
from trtstudio.profiling.memory_split import REST, growing_category, memory_split

MIB = 1 << 20


def memory_stats(allocated: int, reserved: int, inactive_split: int) -> dict[str, int]:
    """A ``torch.cuda.memory_stats()`` dict: its documented ``{stat}.{pool}.{metric}`` keys."""
    out: dict[str, int] = {}
    for stat, current in (("allocated_bytes", allocated), ("reserved_bytes", reserved),
                          ("active_bytes", allocated), ("inactive_split_bytes", inactive_split)):
        for pool, share in (("all", 1.0), ("large_pool", 0.75), ("small_pool", 0.25)):
            for metric, v in (("current", current), ("peak", 2 * current), ("allocated", 5 * current), ("freed", 4 * current)):
                out[f"{stat}.{pool}.{metric}"] = int(v * share)
    out.update({"num_alloc_retries": 0, "num_ooms": 0})
    return out


def test_allocator_keys_are_read_from_memory_stats_and_pools_from_the_snapshot() -> None:
    stats = memory_stats(39 * MIB, 80 * MIB, 3 * MIB)
    got = allocator_stats(stats)
    assert got == {"torch_allocated_bytes": stats["allocated_bytes.all.current"],
                   "torch_reserved_bytes": stats["reserved_bytes.all.current"],
                   "torch_inactive_split_bytes": stats["inactive_split_bytes.all.current"],
                   "torch_peak_allocated_bytes": stats["allocated_bytes.all.peak"]}
    segments = [{"segment_pool_id": (0, 0), "total_size": 20 * MIB, "allocated_size": 12 * MIB},
                {"segment_pool_id": (1, 0), "total_size": 8 * MIB, "allocated_size": 6 * MIB},
                {"segment_pool_id": (1, 0), "total_size": 2 * MIB, "allocated_size": 0}]
    assert graph_pool_stats(segments) == {"torch_graph_pool_bytes": 10 * MIB, "torch_graph_pool_allocated_bytes": 6 * MIB}
    assert allocator_stats({}) == dict.fromkeys(got, 0)  # an older torch without a key: 0, not a KeyError


def _torch_run(n: int, process: np.ndarray, allocated: np.ndarray, reserved: np.ndarray,
               split: np.ndarray | None = None, pool: np.ndarray | None = None) -> dict[str, np.ndarray]:
    out = {"t_s": np.arange(n) * 0.1, "index": np.arange(n) * 100, "process_gpu_bytes": process.astype(np.int64),
           "torch_allocated_bytes": allocated.astype(np.int64), "torch_reserved_bytes": reserved.astype(np.int64),
           "torch_inactive_split_bytes": (split if split is not None else np.zeros(n)).astype(np.int64)}
    if pool is not None:
        out["torch_graph_pool_bytes"] = pool.astype(np.int64)
        out["torch_graph_pool_allocated_bytes"] = (pool // 2).astype(np.int64)
    return out


def test_the_issue_s_shufflenet_run_splits_into_the_allocator_and_the_context() -> None:
    """Issue 49: process 834 MiB, torch allocated 39 MiB, reserved 80 MiB: the 754 MiB outside the
    allocator (context, cuDNN/cuBLAS workspaces, kernels) was nowhere named."""
    n = 5
    one = np.ones(n)
    stats = allocator_stats(memory_stats(39 * MIB, 80 * MIB, 3 * MIB))
    arrays = _torch_run(n, 834 * MIB * one, stats["torch_allocated_bytes"] * one, stats["torch_reserved_bytes"] * one,
                        stats["torch_inactive_split_bytes"] * one)
    split = memory_split(arrays)
    assert split is not None and split.source == "torch allocator"
    last = split.last()
    assert sum(last.values()) == 834 * MIB  # the categories add up to the measured curve
    assert last[REST] == (834 - 80) * MIB
    assert last["tensors (allocated)"] == 39 * MIB and last["inactive split (fragmentation)"] == 3 * MIB
    assert last["allocator cache (free)"] == (80 - 39 - 3) * MIB and last["CUDA graph pools"] == 0
    tops = [top for _, top in split.stacked()]
    assert np.all(np.diff(np.vstack(tops), axis=0) >= 0) and np.array_equal(tops[-1], split.total)


def test_graph_pools_and_readings_out_of_step_keep_the_sum() -> None:
    n = 4
    process = np.array([100, 100, 90, 100]) * MIB  # one reading taken before the allocator grew
    reserved = np.array([60, 60, 95, 95]) * MIB
    arrays = _torch_run(n, process, np.full(n, 30 * MIB), reserved, np.full(n, 2 * MIB), pool=np.full(n, 10 * MIB))
    split = memory_split(arrays)
    assert split is not None
    cats = np.vstack(list(split.categories.values()))
    assert np.all(cats >= 0) and np.array_equal(cats.sum(axis=0), process.astype(float))
    assert split.categories["CUDA graph pools"][0] == 10 * MIB
    assert split.categories["tensors (allocated)"][0] == (30 - 5) * MIB  # half the pool's 10 MiB is allocated there
    assert split.categories[REST][2] == 0  # reserved above the process's reading: nothing left for the context


def test_tensorrt_and_other_backends() -> None:
    n = 3
    base = {"t_s": np.arange(n) * 0.1, "index": np.arange(n), "process_gpu_bytes": np.full(n, 500 * MIB)}
    trt = memory_split({**base, "context_device_bytes": np.full(n, 120 * MIB), "engine_file_bytes": np.full(n, 30 * MIB)})
    assert trt is not None and trt.source == "TensorRT"
    assert trt.last() == {"activations & scratch (context)": 120 * MIB, "engine (plan size)": 30 * MIB, REST: 350 * MIB}
    ort = memory_split(base)
    assert ort is not None and ort.source == "none" and list(ort.last().values()) == [500 * MIB]
    assert memory_split({"t_s": np.arange(n), "torch_reserved_bytes": np.ones(n)}) is None  # no measured total


@pytest.mark.parametrize(("grows", "named"), [("cache", "allocator cache (free)"), ("tensors", "tensors (allocated)"),
                                              ("context", REST)])
def test_a_growing_run_names_the_category_that_grows(grows: str, named: str) -> None:
    n = 400
    rng = np.random.default_rng(3)
    ramp = np.linspace(0, 64 * MIB, n)  # 64 MiB over 40,000 inferences: 1.6 MiB per 1,000
    allocated = 39 * MIB + (ramp if grows == "tensors" else 0) + rng.integers(0, 4096, n)
    reserved = 80 * MIB + (ramp if grows in ("cache", "tensors") else np.zeros(n))
    process = 834 * MIB + ramp
    verdicts = memory_verdicts(_torch_run(n, process, allocated, reserved))
    v = verdicts["process_gpu_bytes"]
    assert v.verdict == "growing"
    assert v.evidence["category"] == named and named in v.text
    assert v.evidence["category_growth_mib"] == pytest.approx(64 * 0.65, rel=0.1)  # after the 25 % warm-up
    assert ("not tensors" in v.text) == (grows == "cache")
    g = growing_category(memory_split(_torch_run(n, process, allocated, reserved)))
    assert g is not None and g["share"] == pytest.approx(1.0, abs=0.05)


def test_a_flat_run_names_nothing() -> None:
    n = 200
    flat = np.full(n, 834 * MIB)
    arrays = _torch_run(n, flat, np.full(n, 39 * MIB), np.full(n, 80 * MIB))
    assert memory_verdicts(arrays)["process_gpu_bytes"].verdict == "stable"
    assert "category" not in memory_verdicts(arrays)["process_gpu_bytes"].evidence
    assert growing_category(memory_split(arrays)) is None


def test_backend_probe_reads_only_what_a_backend_reports(sample_model: Path) -> None:
    pytest.importorskip("onnxruntime")
    from trtstudio.backends.base import open_backend

    backend = open_backend("ort", str(sample_model))
    try:
        assert backend_probe(backend) is None  # ONNX Runtime reports no allocator figures
    finally:
        backend.close()


@pytest.mark.gpu
def test_torch_cuda_run_splits_the_process_memory(sample_model: Path) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device visible to torch")
    from trtstudio.profiling.memory import nvml_probe
    from trtstudio.profiling.session import ProfileRequest, run_profile

    out = run_profile(ProfileRequest(model=str(sample_model), backend="torch-cuda", iterations=300, warmup=10),
                      monitor=MemoryMonitor(probes=[nvml_probe()], interval_ms=20))
    split = memory_split(out.monitor.snapshot())
    assert split is not None and split.source == "torch allocator"
    last = split.last()
    assert sum(last.values()) == int(split.total[-1])
    assert last["tensors (allocated)"] > 0 and last[REST] > 100 * MIB  # the CUDA context alone is far more
    assert out.backend_memory["torch_reserved_bytes"] >= out.backend_memory["torch_allocated_bytes"]
