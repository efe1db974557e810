"""TensorRT in scenarios: an ``IGpuAllocator`` that records every allocation an engine makes, cold-start
timing (runtime, deserialization, execution context), and extra execution contexts of one engine,
each on its own stream, for contention between contexts.

Written against NVIDIA's TensorRT Python API documentation (``tensorrt.IGpuAllocator``: ``allocate``,
``reallocate``, ``deallocate``, ``allocate_async``, ``deallocate_async`` must all be overridden, and
the base ``__init__`` called explicitly; ``Runtime.gpu_allocator`` / ``Builder.gpu_allocator``;
``deserialize_cuda_engine``; ``create_execution_context``). Full TensorRT does not install on this
project's machines and TensorRT-RTX refuses the lent H200, so the tests exercise this module with a
test double of the TensorRT runtime.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from trtstudio.backends.tensorrt import TrtBackend
from trtstudio.errors import BackendError, InputError


@dataclass
class Allocation:
    """One allocation TensorRT asked for: size, alignment, flags, stream (async only), and when it was
    made and freed (ms since the allocator was created; ``freed_ms`` None while live)."""

    address: int
    size: int
    alignment: int
    flags: int
    stream: int | None
    alloc_ms: float
    freed_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return asdict(self)


def _address(memory: Any) -> int:
    """An address from an int or a PyCapsule (the Python API hands ``void*`` over as either)."""
    if isinstance(memory, int):
        return memory
    try:
        return int(memory)
    except (TypeError, ValueError):
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        return int(get(memory, None) or 0)


def cuda_malloc_free() -> tuple[Callable[[int], int], Callable[[int], None]]:
    """cudaMalloc / cudaFree through cuda-python: (alloc(size) -> address or 0, free(address))."""
    try:
        from cuda.bindings import runtime as rt
    except ImportError:
        try:
            from cuda import cudart as rt
        except ImportError as exc:
            raise BackendError(f"recording TensorRT allocations needs cuda-python ({exc}); pip install cuda-python") from exc
    ok = rt.cudaError_t.cudaSuccess

    def alloc(size: int) -> int:
        err, ptr = rt.cudaMalloc(size)
        if err != ok:
            rt.cudaGetLastError()
            return 0
        return int(ptr)

    def free(address: int) -> None:
        rt.cudaFree(address)

    return alloc, free


def make_recording_allocator(
    trt: Any, alloc: Callable[[int], int] | None = None, free: Callable[[int], None] | None = None
) -> Any:
    """An instance of a ``trt.IGpuAllocator`` subclass that allocates with ``alloc``/``free`` (default
    cudaMalloc/cudaFree) and records every call. Set it with ``runtime.gpu_allocator = a`` (and
    ``builder.gpu_allocator``) before deserializing; it must outlive every engine that used it."""
    if alloc is None or free is None:
        alloc, free = cuda_malloc_free()
    base = trt.IGpuAllocator
    do_alloc, do_free = alloc, free

    class RecordingGpuAllocator(base):  # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            base.__init__(self)
            self.records: list[Allocation] = []
            self.refused_reallocs = 0
            self._live: dict[int, Allocation] = {}
            self._lock = threading.Lock()
            self._t0 = time.perf_counter()

        def _now(self) -> float:
            return (time.perf_counter() - self._t0) * 1e3

        def _alloc(self, size: int, alignment: int, flags: int, stream: int | None) -> int | None:
            if size == 0:
                return None
            address = do_alloc(int(size))
            if not address:
                return None  # TensorRT reports the failed request itself
            rec = Allocation(address, int(size), int(alignment), int(flags), stream, self._now())
            with self._lock:
                self.records.append(rec)
                self._live[address] = rec
            return address

        def _free(self, memory: Any) -> bool:
            address = _address(memory)
            with self._lock:
                rec = self._live.pop(address, None)
                if rec is not None:
                    rec.freed_ms = self._now()
            if rec is None:
                return False
            do_free(address)
            return True

        def allocate(self, size: int, alignment: int, flags: int) -> int | None:
            return self._alloc(size, alignment, flags, None)

        def allocate_async(self, size: int, alignment: int, flags: int, stream: Any) -> int | None:
            return self._alloc(size, alignment, flags, _address(stream) if stream is not None else 0)

        def reallocate(self, address: Any, alignment: int, new_size: int) -> None:
            # Returning None tells TensorRT the block cannot grow in place; the old one stays valid.
            self.refused_reallocs += 1
            return None

        def deallocate(self, memory: Any) -> bool:
            return self._free(memory)

        def deallocate_async(self, memory: Any, stream: Any) -> bool:
            return self._free(memory)

        def summary(self) -> dict[str, Any]:
            """Count, total and peak live bytes, what is still live, the largest request."""
            with self._lock:
                records = list(self.records)
            return allocation_summary(records, self.refused_reallocs)

    return RecordingGpuAllocator()


def allocation_summary(records: list[Allocation], refused_reallocs: int = 0) -> dict[str, Any]:
    """Count, total and peak live bytes, what is still live, the largest request of ``records``."""
    events = sorted([(r.alloc_ms, r.size) for r in records]
                    + [(r.freed_ms, -r.size) for r in records if r.freed_ms is not None])
    live = peak = 0
    for _, delta in events:
        live += delta
        peak = max(peak, live)
    still = [r for r in records if r.freed_ms is None]
    return {
        "allocations": len(records), "total_bytes": sum(r.size for r in records), "peak_live_bytes": peak,
        "live_bytes": sum(r.size for r in still), "live_allocations": len(still),
        "largest_bytes": max((r.size for r in records), default=0), "refused_reallocs": refused_reallocs,
        "async_allocations": sum(1 for r in records if r.stream is not None),
    }


def trt_cold_start(path: str | Path, trt: Any, allocator: Any | None = None, contexts: int = 1) -> dict[str, Any]:
    """Time ``trt.Runtime`` creation, ``deserialize_cuda_engine`` and ``create_execution_context`` (for
    ``contexts`` contexts) of one plan, beside its size and device memory; the allocator's summary
    when one records. The engine and contexts are released before returning."""
    data = Path(path).read_bytes()
    if not data:
        raise InputError(path, "empty engine file")
    perf = time.perf_counter
    t0 = perf()
    runtime = trt.Runtime(trt.Logger(trt.Logger.WARNING))
    if allocator is not None:
        runtime.gpu_allocator = allocator
    t1 = perf()
    engine = runtime.deserialize_cuda_engine(data)
    t2 = perf()
    if engine is None:
        raise InputError(path, "TensorRT cannot deserialize this engine (another TensorRT version or GPU?)")
    ctx_ms = []
    made = []
    for _ in range(max(1, contexts)):
        c0 = perf()
        ctx = engine.create_execution_context()
        ctx_ms.append((perf() - c0) * 1e3)
        if ctx is None:
            raise BackendError(f"{path}: create_execution_context failed (out of device memory?)")
        made.append(ctx)
    attr = "device_memory_size_v2" if hasattr(engine, "device_memory_size_v2") else "device_memory_size"
    out: dict[str, Any] = {
        "engine_bytes": len(data), "runtime_ms": (t1 - t0) * 1e3, "deserialize_ms": (t2 - t1) * 1e3,
        "context_ms": ctx_ms, "device_memory_bytes": int(getattr(engine, attr, 0)),
    }
    if allocator is not None:
        out["allocator_with_engine"] = allocator.summary()
    del made, ctx, engine
    if allocator is not None:
        out["allocator_after_release"] = allocator.summary()
    return out


class TrtContextBackend(TrtBackend):
    """Another execution context of an engine a ``TrtBackend`` already holds: its own stream, events
    and I/O buffers, the same engine and CUDA context. The inherited ``close`` frees its buffers and
    context, drops its reference to the engine and pops the one context push it made."""

    def __init__(self, parent: TrtBackend, index: int = 1) -> None:
        super().__init__(name=parent.name, module=parent._module_name, trt_module=parent._trt, cuda_api=parent._cuda)
        if parent.engine is None:
            raise BackendError("the parent backend holds no engine")
        self._parent = parent
        self._path = parent._path
        self._options = dict(parent._options)
        self._ctx = parent._ctx
        self._bind_thread()
        self.engine = parent.engine
        self.context = parent.engine.create_execution_context()
        if self.context is None:
            raise BackendError(f"{parent._path}: execution context {index + 1} could not be created (out of device memory?)")
        self._inputs, self._outputs = list(parent._inputs), list(parent._outputs)
        self._stream = self._cuda.new_stream()
        self._events = [self._cuda.new_event() for _ in range(4)]
        self.notes = [f"execution context {index + 1} of the engine"]

    def load(self, path: Any, options: dict[str, Any]) -> None:
        """Not used: the engine comes from the parent."""
        raise BackendError("TrtContextBackend takes its engine from a parent TrtBackend")


def engine_contexts(parent: TrtBackend, count: int, shapes: dict[str, tuple[int, ...]]) -> list[TrtBackend]:
    """``parent`` plus ``count - 1`` more contexts of its engine, each with inputs prepared."""
    out: list[TrtBackend] = [parent]
    for i in range(1, count):
        b = TrtContextBackend(parent, i)
        b.prepare_inputs(shapes)
        out.append(b)
    return out
