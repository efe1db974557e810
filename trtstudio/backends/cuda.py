"""CUDA helpers over pycuda (buffers, streams, events, a transfer benchmark) and CUDA graphs.

NVML and CUDA free/total are asked in ``measure.devices``. pycuda is imported lazily; a missing one
is a BackendError naming the pip command. The device's primary context is retained and pushed on the calling thread, which is
what TensorRT shares, so a worker thread calls ``CudaContext.push`` before it touches buffers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from trtstudio.errors import BackendError

PIP_PYCUDA = "pip install pycuda"


def _driver() -> Any:
    try:
        import pycuda.driver as drv
    except ImportError as exc:
        raise BackendError(f"CUDA needs pycuda ({exc}); install it: {PIP_PYCUDA}") from exc
    return drv


class CudaContext:
    """The primary context of one device, made current on the thread that calls ``push``."""

    def __init__(self, device: int = 0) -> None:
        drv = _driver()
        try:
            drv.init()
            if device >= drv.Device.count():
                raise BackendError(f"no CUDA device {device} ({drv.Device.count()} present)")
            self.device = drv.Device(device)
            self._ctx = self.device.retain_primary_context()
        except drv.Error as exc:
            raise BackendError(f"CUDA is not usable here: {exc}") from exc
        self._pushed = 0

    def push(self) -> None:
        """Make the context current on this thread (pair with ``pop``)."""
        self._ctx.push()
        self._pushed += 1

    def pop(self) -> None:
        """Undo one ``push``."""
        if self._pushed:
            _driver().Context.pop()
            self._pushed -= 1

    def name(self) -> str:
        """The device's name, e.g. 'NVIDIA H200'."""
        return str(self.device.name())

    def __enter__(self) -> CudaContext:
        self.push()
        return self

    def __exit__(self, *exc: object) -> None:
        self.pop()


def pinned_empty(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A page-locked host array (fast, asynchronous copies)."""
    return _driver().pagelocked_empty(shape, dtype)


def device_alloc(nbytes: int) -> Any:
    """A device allocation of at least one byte; ``int(buf)`` is its address."""
    return _driver().mem_alloc(max(1, int(nbytes)))


def new_stream() -> Any:
    """A new CUDA stream (``stream.handle`` is the cudaStream_t TensorRT takes)."""
    return _driver().Stream()


def new_event() -> Any:
    """A CUDA event for timing."""
    return _driver().Event()


def htod_async(dev: Any, host: np.ndarray, stream: Any) -> None:
    """Copy a host array to the device on ``stream``."""
    _driver().memcpy_htod_async(dev, host, stream)


def dtoh_async(host: np.ndarray, dev: Any, stream: Any) -> None:
    """Copy device memory into a host array on ``stream``."""
    _driver().memcpy_dtoh_async(host, dev, stream)


@dataclass(frozen=True)
class TransferResult:
    """Bandwidth of one direction and kind of host memory, in GB/s (1e9 bytes)."""

    direction: str
    pinned: bool
    nbytes: int
    gbps: float
    median_ms: float


def transfer_benchmark(nbytes: int, pinned: bool, repeats: int = 10) -> list[TransferResult]:
    """H2D and D2H bandwidth for ``nbytes`` with pinned or pageable host memory (median of ``repeats``,
    timed with CUDA events around the copies; needs a current context)."""
    drv = _driver()
    n = nbytes // 4
    host = drv.pagelocked_empty((n,), np.float32) if pinned else np.empty((n,), np.float32)
    host[:] = 1.0
    dev = drv.mem_alloc(n * 4)
    stream = drv.Stream()
    start, end = drv.Event(), drv.Event()
    out: list[TransferResult] = []
    for direction in ("h2d", "d2h"):
        times = []
        for i in range(repeats + 1):
            start.record(stream)
            if direction == "h2d":
                drv.memcpy_htod_async(dev, host, stream) if pinned else drv.memcpy_htod(dev, host)
            else:
                drv.memcpy_dtoh_async(host, dev, stream) if pinned else drv.memcpy_dtoh(host, dev)
            end.record(stream)
            end.synchronize()
            if i:  # the first copy is a warm-up
                times.append(end.time_since(start))
        med = float(np.median(times))
        out.append(TransferResult(direction, pinned, n * 4, n * 4 / (med / 1e3) / 1e9, med))
    dev.free()
    return out



# -- CUDA graphs ----------------------------------------------------------------------------------
PIP_CUDA_PYTHON = "pip install cuda-python"


def _cudart() -> Any:
    """The CUDA runtime bindings of cuda-python (pycuda cannot capture streams)."""
    try:
        from cuda.bindings import runtime as rt
    except ImportError:
        try:
            from cuda import cudart as rt  # cuda-python before 12.8
        except ImportError as exc:
            raise BackendError(f"CUDA graphs need cuda-python ({exc}); install it: {PIP_CUDA_PYTHON}") from exc
    return rt


def _check(rt: Any, what: str, result: Any) -> Any:
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != rt.cudaError_t.cudaSuccess:
        raise BackendError(f"{what} failed: {err}")
    return rest[0] if len(rest) == 1 else rest


class CudaGraph:
    """The work ``enqueue()`` puts on ``stream``, captured once (thread-local mode, as trtexec does)
    and replayed by ``launch``; the stream is a pycuda Stream (its ``handle`` is the cudaStream_t)."""

    def __init__(self, stream: Any, enqueue: Any) -> None:
        rt = self._rt = _cudart()
        handle = int(stream.handle)
        mode = rt.cudaStreamCaptureMode.cudaStreamCaptureModeThreadLocal
        _check(rt, "cudaStreamBeginCapture", rt.cudaStreamBeginCapture(handle, mode))
        try:
            ok = enqueue()
        finally:
            graph = _check(rt, "cudaStreamEndCapture", rt.cudaStreamEndCapture(handle))
        self._graph = graph
        if ok is False:
            rt.cudaGraphDestroy(graph)
            raise BackendError("the enqueue failed during capture")
        self._exec = _check(rt, "cudaGraphInstantiate", rt.cudaGraphInstantiate(graph, 0))

    def launch(self, stream: Any) -> None:
        """Replay the graph on ``stream``."""
        _check(self._rt, "cudaGraphLaunch", self._rt.cudaGraphLaunch(self._exec, int(stream.handle)))

    def close(self) -> None:
        """Free the graph and its executable instance."""
        if self._exec is not None:
            self._rt.cudaGraphExecDestroy(self._exec)
            self._rt.cudaGraphDestroy(self._graph)
            self._exec = None


def capture_graph(stream: Any, enqueue: Any) -> CudaGraph:
    """Capture ``enqueue()`` (which returns False on failure) on ``stream`` into a ``CudaGraph``."""
    return CudaGraph(stream, enqueue)
