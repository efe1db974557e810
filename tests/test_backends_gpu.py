"""CUDA helpers, memory monitors and TrtBackend's buffer/event path on a real GPU (skipped without one).

The TensorRT engine here is still the test double of tests/test_backends_trt.py (no TensorRT runtime
runs on this project's GPU machines), but buffers, copies, streams, events and memory are real.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

drv = pytest.importorskip("pycuda.driver")
try:
    drv.init()
    HAVE_GPU = drv.Device.count() > 0
except Exception:  # noqa: BLE001
    HAVE_GPU = False
if not HAVE_GPU:
    pytest.skip("no CUDA device", allow_module_level=True)

from trtstudio.backends import cuda  # noqa: E402

GIB = 1 << 30


@pytest.fixture(scope="module")
def ctx() -> Any:
    c = cuda.CudaContext(0)
    c.push()
    yield c
    c.pop()


def test_pinned_roundtrip(ctx: Any) -> None:
    host = cuda.pinned_empty((1 << 20,), np.float32)
    host[:] = np.random.default_rng(0).random(host.shape, dtype=np.float32)
    back = cuda.pinned_empty(host.shape, np.float32)
    dev = cuda.device_alloc(host.nbytes)
    s = cuda.new_stream()
    e0, e1 = cuda.new_event(), cuda.new_event()
    e0.record(s)
    cuda.htod_async(dev, host, s)
    cuda.dtoh_async(back, dev, s)
    e1.record(s)
    e1.synchronize()
    np.testing.assert_array_equal(back, host)
    assert e1.time_since(e0) > 0


def test_transfer_pinned_beats_pageable(ctx: Any) -> None:
    pinned = {r.direction: r.gbps for r in cuda.transfer_benchmark(64 << 20, pinned=True, repeats=5)}
    pageable = {r.direction: r.gbps for r in cuda.transfer_benchmark(64 << 20, pinned=False, repeats=5)}
    assert pinned["h2d"] > 1.0 and pinned["d2h"] > 1.0
    assert pinned["h2d"] > pageable["h2d"]


def test_memory_monitors_see_one_gib(ctx: Any) -> None:
    from trtstudio.profiling.memory import MemoryMonitor, default_probes

    mon = MemoryMonitor(default_probes(gpu=True), interval_ms=1)
    before = mon.record(0)
    assert "cuda_free_bytes" in before and "gpu_used_bytes" in before and "host_rss_bytes" in before
    buf = cuda.device_alloc(GIB)
    after = mon.record(1)
    assert before["cuda_free_bytes"] - after["cuda_free_bytes"] >= 0.9 * GIB
    assert after["gpu_used_bytes"] - before["gpu_used_bytes"] >= 0.9 * GIB
    if "process_gpu_bytes" in after:
        assert after["process_gpu_bytes"] - before.get("process_gpu_bytes", 0) >= 0.9 * GIB
    buf.free()


def test_trt_backend_real_buffers(ctx: Any, tmp_path: Path) -> None:
    from test_backends_trt import open_fake

    def device_copy(c: Any, stream: int) -> None:  # the double's "engine": y = x on the device
        n = int(np.prod(c.shapes["x"])) * 4
        drv.memcpy_dtod(c.addresses["y"], c.addresses["x"], n)

    plan = tmp_path / "m.plan"
    plan.write_bytes(b"FAKEPLAN")
    b = open_fake(plan, cuda=cuda, compute=device_copy)
    x = np.random.default_rng(1).random((8, 4), dtype=np.float32)
    b.prepare_inputs({}, {"x": x})
    t = b.infer_once()
    np.testing.assert_array_equal(b.output("y"), x)
    assert t.h2d_ms is not None and t.h2d_ms >= 0 and t.compute_ms is not None and t.d2h_ms is not None
    b.close()


def test_trt_backend_cuda_graph_replays_capture(ctx: Any, tmp_path: Path) -> None:
    pytest.importorskip("cuda.bindings.runtime")
    from test_backends_trt import open_fake

    holder: dict[str, Any] = {}

    def async_copy(c: Any, stream: int) -> None:  # capturable: an async copy on the backend's stream
        n = int(np.prod(c.shapes["x"])) * 4
        drv.memcpy_dtod_async(c.addresses["y"], c.addresses["x"], n, holder["b"]._stream)

    plan = tmp_path / "g.plan"
    plan.write_bytes(b"FAKEPLAN")
    b = open_fake(plan, cuda=cuda, compute=async_copy)
    holder["b"] = b
    b._options["cuda_graph"] = True
    b.prepare_inputs({"x": (4, 4)})
    assert b._graph_exec is not None, b.notes
    executed = b.context.executed  # one warm-up run and one captured run
    for k in range(3):
        b._host["x"][...] = k + 1.0
        t = b.infer_once()
        np.testing.assert_array_equal(b.output("y"), np.full((4, 4), k + 1.0, np.float32))
    assert b.context.executed == executed  # the graph replayed: no new execute_async_v3 calls
    assert t.enqueue_ms is not None and t.compute_ms is not None
    b.close()
