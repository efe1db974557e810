"""TensorRT parts of the scenarios against a test double of the full-TensorRT runtime (no TensorRT
runtime installs here): the recording IGpuAllocator, cold-start timing, extra execution contexts.

``FakeAllocatingTrt_test_double`` extends the double of tests/test_backends_trt.py with what the
TensorRT documentation says the runtime does with a ``gpu_allocator``: deserialization allocates the
engine's weights through it, each execution context its activation memory (``allocate_async`` on a
stream), and both are released through ``deallocate_async`` when the objects are destroyed."""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_backends_trt import FakeContext, FakeEngine, host_compute, make_fake_trt, open_fake

from trtstudio.profiling import scenario as sc
from trtstudio.profiling.scenario_trt import (
    TrtContextBackend,
    _address,
    engine_contexts,
    make_recording_allocator,
    trt_cold_start,
)

WEIGHTS, ACTIVATIONS = 3 << 20, 1 << 20


def make_allocating_trt() -> Any:
    base = make_fake_trt()

    class FakeAllocatingTrt_test_double(base):  # type: ignore[misc,valid-type]
        class IGpuAllocator:
            def __init__(self) -> None:
                self.base_initialised = True

        class Runtime:
            def __init__(self, logger: Any) -> None:
                self.gpu_allocator: Any = None

            def deserialize_cuda_engine(self, data: bytes) -> Any:
                if not data.startswith(b"FAKEPLAN"):
                    return None
                return AllocatingEngine(self.gpu_allocator)

    class AllocatingContext(FakeContext):
        def __init__(self, engine: AllocatingEngine) -> None:
            super().__init__(engine)
            self._alloc = engine.allocator
            self._mem = self._alloc.allocate_async(ACTIVATIONS, 256, 0, 7) if self._alloc else None

        def __del__(self) -> None:
            if self._mem is not None:
                self._alloc.deallocate_async(self._mem, 7)

    class AllocatingEngine(FakeEngine):
        def __init__(self, allocator: Any) -> None:
            super().__init__(host_compute)
            self.allocator = allocator
            self.device_memory_size_v2 = ACTIVATIONS
            self._weights = allocator.allocate(WEIGHTS, 512, 0) if allocator else None
            self.allocator.allocate(0, 0, 0) if allocator else None  # a zero request must not allocate

        def create_execution_context(self) -> AllocatingContext:
            return AllocatingContext(self)

        def __del__(self) -> None:
            if self._weights is not None:
                self.allocator.deallocate(self._weights)

    return FakeAllocatingTrt_test_double


class HostHeap:
    """Real host memory standing in for cudaMalloc/cudaFree (ctypes buffers, real addresses)."""

    def __init__(self) -> None:
        self.live: dict[int, Any] = {}

    def alloc(self, n: int) -> int:
        buf = ctypes.create_string_buffer(n)
        self.live[ctypes.addressof(buf)] = buf
        return ctypes.addressof(buf)

    def free(self, address: int) -> None:
        del self.live[address]


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    p = tmp_path / "m.plan"
    p.write_bytes(b"FAKEPLAN" + b"\0" * 1000)
    return p


def test_recording_allocator_sees_weights_and_context_memory(plan: Path) -> None:
    trt = make_allocating_trt()
    heap = HostHeap()
    alloc = make_recording_allocator(trt, heap.alloc, heap.free)
    assert alloc.base_initialised  # the base __init__ was called explicitly, as pybind11 requires
    out = trt_cold_start(plan, trt, alloc, contexts=2)
    assert out["engine_bytes"] == 1008 and out["device_memory_bytes"] == ACTIVATIONS
    assert out["deserialize_ms"] >= 0 and len(out["context_ms"]) == 2
    held = out["allocator_with_engine"]
    assert held["allocations"] == 3 and held["live_bytes"] == WEIGHTS + 2 * ACTIVATIONS
    assert held["peak_live_bytes"] == WEIGHTS + 2 * ACTIVATIONS and held["largest_bytes"] == WEIGHTS
    assert held["async_allocations"] == 2
    after = out["allocator_after_release"]
    assert after["live_bytes"] == 0 and after["live_allocations"] == 0
    assert heap.live == {}  # every block went back through deallocate / deallocate_async
    rec = alloc.records[0]
    assert rec.size == WEIGHTS and rec.alignment == 512 and rec.stream is None and rec.freed_ms >= rec.alloc_ms


def test_allocator_refuses_realloc_and_unknown_frees() -> None:
    heap = HostHeap()
    alloc = make_recording_allocator(make_allocating_trt(), heap.alloc, heap.free)
    a = alloc.allocate(4096, 256, 0)
    assert alloc.reallocate(a, 256, 8192) is None and alloc.summary()["refused_reallocs"] == 1
    assert alloc.deallocate(12345) is False  # never handed out
    assert alloc.deallocate(a) is True and heap.live == {}


def test_address_reads_ints_and_capsules() -> None:
    buf = ctypes.create_string_buffer(16)
    address = ctypes.addressof(buf)
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype, new_capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    assert _address(address) == address and _address(new_capsule(address, None, None)) == address


def test_cold_start_of_a_bad_plan_is_input_error(tmp_path: Path) -> None:
    from trtstudio.errors import InputError

    bad = tmp_path / "bad.plan"
    bad.write_bytes(b"garbage")
    with pytest.raises(InputError, match="cannot deserialize"):
        trt_cold_start(bad, make_allocating_trt())


def test_contexts_of_one_engine_contend_in_a_scenario(plan: Path) -> None:
    parent = open_fake(plan)
    parent.prepare_inputs({"x": (4, 4)})
    backends = engine_contexts(parent, 3, {"x": (4, 4)})
    assert [type(b).__name__ for b in backends] == ["TrtBackend", "TrtContextBackend", "TrtContextBackend"]
    assert all(b.engine is parent.engine for b in backends)
    assert len({id(b.context) for b in backends}) == 3 and len({id(b._stream) for b in backends}) == 3
    queue = list(backends)
    result = sc.run_contention([sc.ModelSpec(str(plan), backend="tensorrt", name=f"ctx{i}") for i in range(3)],
                               sc.ContentionConfig(iterations=20, warmup=1, isolation="thread", gil_check=False),
                               opener=lambda spec: queue.pop(0))  # contexts of one engine: threads of one process
    assert result.failure is None
    assert [m["model"] for m in result.models] == ["ctx0", "ctx1", "ctx2"]
    assert all(m["together"]["count"] >= 20 and m["together"]["h2d_ms"] >= 0 for m in result.models)
    x = np.ones((4, 4), np.float32)
    child = TrtContextBackend(open_fake(plan), 1)
    child.prepare_inputs({}, {"x": x})
    child.infer_once()
    np.testing.assert_array_equal(child.output("y"), 2 * x)
    bufs = list(child._dev.values())
    child.close()
    assert all(b.freed for b in bufs)
