"""The torch backend's run on its device: input and output buffers (pinned host tensors on CUDA), the
stream (its own, or one a scenario shares between models), the four CUDA events that time H2D,
compute and D2H, the CUDA graph of the module call, and the time origin of ``stage_marks``.

:class:`DeviceRun` runs the module a :class:`~trtstudio.backends.torch_model.TorchModel` holds;
:class:`~trtstudio.backends.torch_backend.TorchBackend` composes the two. The caching allocator's
statistics (``torch_allocator_stats``) are read here too.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from trtstudio.backends.base import InferTiming
from trtstudio.backends.shapes import explain_run_failure
from trtstudio.backends.torch_model import TorchModel, first_line
from trtstudio.errors import BackendError


def flatten_outputs(out: Any) -> list[Any]:
    """The tensors of a module's result (a tensor, or nested tuples/lists/dicts of them), in order."""
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in flatten_outputs(o)]
    if isinstance(out, dict):
        return [t for k in out for t in flatten_outputs(out[k])]
    return [out] if hasattr(out, "shape") else []


class DeviceRun:
    """Buffers, stream, events and CUDA graph of the module of one :class:`TorchModel`."""

    def __init__(self, model: TorchModel, notes: list[str]) -> None:
        self.model = model
        self.notes = notes  # the backend's notes: one list, appended to
        self.stream: Any = None
        self.own_stream: Any = None
        self.events: list[Any] = []
        self.origin: Any = None
        self.host_in: list[Any] = []
        self.dev_in: list[Any] = []
        self.host_out: list[Any] = []
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.shape_plan: Any = None  # the ShapePlan of the last prepare (ONNX models; None otherwise)
        self.graph: Any = None  # torch.cuda.CUDAGraph of the module call (cuda_graph), while replayed
        self.captured: Any = None  # the same graph, kept while the eager variant runs (use_graph)
        self.graph_outs: list[Any] = []
        self.stage_marks: tuple[float, float, float, float] | None = None  # ms since the time origin

    def start(self) -> None:
        """A stream (one handed back by a closed backend on this device, else a new one) and the four events."""
        torch, device = self.model.torch, self.model.device
        self.own_stream = self.stream = _STREAMS.take(torch, device)
        self.events = [torch.cuda.Event(enable_timing=True) for _ in range(4)]

    # -- buffers ---------------------------------------------------------------------------------
    def prepare(self, feeds: dict[str, np.ndarray]) -> float:
        """Host buffers (pinned on CUDA), device buffers, and output buffers sized by one run (the first
        inference); returns the ms from the device buffers to the end of that run."""
        m = self.model
        torch = m.torch
        pinned = m.cuda and m.options.get("pinned", True)
        self.host_in = [_host_tensor(torch, arr, pinned) for arr in feeds.values()]
        self.shapes = {k: tuple(v.shape) for k, v in feeds.items()}
        t0 = time.perf_counter()
        if m.cuda:
            with torch.cuda.stream(self.stream):
                self.dev_in = [torch.empty_like(h, device=m.device) for h in self.host_in]
                for d, h in zip(self.dev_in, self.host_in, strict=True):
                    d.copy_(h, non_blocking=True)
            outs = self.call(self.dev_in)
            with torch.cuda.stream(self.stream):
                self.host_out = [torch.empty(o.shape, dtype=o.dtype, pin_memory=bool(pinned)) for o in outs]
            self.stream.synchronize()
        else:
            self.dev_in = self.host_in
            self.call(self.dev_in)
        return (time.perf_counter() - t0) * 1e3

    def keep(self) -> Any:
        """The prepared buffers as a slot :meth:`use` switches back to; None with a CUDA graph."""
        if self.graph is not None:
            return None
        return (self.host_in, self.dev_in, self.host_out, dict(self.shapes), self.shape_plan)

    def use(self, slot: Any) -> None:
        """Run on the buffers of a slot from :meth:`keep`."""
        self.host_in, self.dev_in, self.host_out, shapes, self.shape_plan = slot
        self.shapes = dict(shapes)

    # -- calls -----------------------------------------------------------------------------------
    def call(self, inputs: list[Any]) -> list[Any]:
        """One module call on ``inputs`` (on the stream, on CUDA), its outputs flattened."""
        m = self.model
        torch = m.torch
        try:
            with torch.inference_mode():
                if m.cuda:
                    with torch.cuda.stream(self.stream):
                        return flatten_outputs(m.module(*inputs))
                return flatten_outputs(m.module(*inputs))
        except torch.cuda.OutOfMemoryError as exc:
            raise BackendError(f"{m.path}: CUDA out of memory: {first_line(exc)}") from None
        except (RuntimeError, TypeError, ValueError, IndexError) as exc:
            raise BackendError(self._failure(exc)) from None

    def _failure(self, exc: BaseException) -> str:
        """The module's error in one line, with the shape plan's hint where it looks like a shape problem."""
        hint = explain_run_failure(self.shape_plan, exc)
        return f"{self.model.path}: the module failed: {hint or first_line(exc)}"

    def capture(self) -> float:
        """Capture the module call on the stream into a CUDA graph (its outputs stay fixed tensors that
        :meth:`infer_once` copies out); returns the ms of the warm-up and capture. A model that cannot
        be captured is refused."""
        m = self.model
        torch = m.torch
        t0 = time.perf_counter()
        for _ in range(3):  # warm-up on the capture stream (cuDNN/cuBLAS choose their kernels here)
            self.call(self.dev_in)
        self.stream.synchronize()
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.inference_mode(), torch.cuda.graph(graph, stream=self.stream):
                self.graph_outs = flatten_outputs(m.module(*self.dev_in))
        except Exception as exc:  # noqa: BLE001 - capture raises RuntimeError and the module's own errors
            self.graph_outs = []
            torch.cuda.synchronize(m.device)
            raise BackendError(f"{m.path}: CUDA graph capture failed ({first_line(exc)}); "
                               "run without --cuda-graph") from None
        self.graph = self.captured = graph
        ms = (time.perf_counter() - t0) * 1e3
        self.notes.append("CUDA graph: the module call is captured once and replayed; enqueue_ms is the replay's launch")
        return ms

    def use_graph(self, on: bool) -> None:
        """Replay the captured graph (``on``) or call the module itself (eager)."""
        if on and self.captured is None:
            raise BackendError(f"backend '{self.model.name}': no CUDA graph was captured (run with --cuda-graph)")
        self.graph = self.captured if on else None

    def infer_once(self) -> InferTiming:
        """CUDA: H2D, module, D2H on the stream between CUDA events. CPU: the module call."""
        m = self.model
        torch = m.torch
        if not self.host_in:
            raise BackendError("prepare_inputs must run before infer_once")
        if not m.cuda:
            t0 = time.perf_counter()
            self.call(self.host_in)
            return InferTiming((time.perf_counter() - t0) * 1e3)
        e0, e1, e2, e3 = self.events
        s = self.stream
        t0 = time.perf_counter()
        try:
            with torch.inference_mode(), torch.cuda.stream(s):
                e0.record(s)
                for d, h in zip(self.dev_in, self.host_in, strict=True):
                    d.copy_(h, non_blocking=True)
                e1.record(s)
                q0 = time.perf_counter()
                if self.graph is not None:
                    self.graph.replay()
                    outs = self.graph_outs
                else:
                    outs = flatten_outputs(m.module(*self.dev_in))
                enqueue = (time.perf_counter() - q0) * 1e3
                e2.record(s)
                for h, o in zip(self.host_out, outs, strict=True):
                    h.copy_(o, non_blocking=True)
                e3.record(s)
            e3.synchronize()
        except torch.cuda.OutOfMemoryError as exc:
            raise BackendError(f"{m.path}: CUDA out of memory: {first_line(exc)}") from None
        except RuntimeError as exc:
            raise BackendError(self._failure(exc)) from None
        total = (time.perf_counter() - t0) * 1e3
        if self.origin is not None:
            o = self.origin
            self.stage_marks = (o.elapsed_time(e0), o.elapsed_time(e1), o.elapsed_time(e2), o.elapsed_time(e3))
        return InferTiming(total, e0.elapsed_time(e1), e1.elapsed_time(e2), e2.elapsed_time(e3), enqueue)

    def outputs(self) -> list[np.ndarray]:
        """Host copies of the outputs of the last inference (CUDA), or of a fresh run (CPU)."""
        if self.model.cuda:
            return [h.numpy() for h in self.host_out]
        return [o.detach().numpy() for o in self.call(self.host_in)]

    # -- streams and time origin (scenarios) -------------------------------------------------------
    def new_stream(self) -> Any:
        """A new CUDA stream on the device (None on CPU)."""
        m = self.model
        return m.torch.cuda.Stream(device=m.device) if m.cuda else None

    def use_stream(self, stream: Any | None) -> None:
        """Run on ``stream`` (one shared with other models); None goes back to the run's own."""
        m = self.model
        if not m.cuda:
            return
        if stream is not None and stream.device != m.device:
            raise BackendError(f"a stream of {stream.device} cannot run a model on {m.device}")
        self.stream = stream if stream is not None else self.own_stream

    def make_time_origin(self) -> Any:
        """Record and wait for an event on this device: the zero of ``stage_marks`` (None on CPU)."""
        m = self.model
        if not m.cuda:
            return None
        ev = m.torch.cuda.Event(enable_timing=True)
        ev.record(self.stream)
        ev.synchronize()
        return ev

    def set_time_origin(self, event: Any | None) -> None:
        """After each inference, ``stage_marks`` holds its four event times in ms since ``event``."""
        self.origin = event
        self.stage_marks = None

    # -- memory and closing ----------------------------------------------------------------------
    def memory(self) -> dict[str, int]:
        """Model file size, host I/O buffers and, on CUDA, the caching allocator's statistics."""
        m = self.model
        out: dict[str, int] = {}
        if m.path is not None and m.path.exists():
            out["model_file_bytes"] = m.path.stat().st_size
        out["io_host_bytes"] = int(sum(t.numel() * t.element_size() for t in (*self.host_in, *self.host_out)))
        if m.cuda:
            out.update(torch_allocator_stats(m.torch, m.device, graph_pools=self.captured is not None))
        return out

    def close(self) -> None:
        """Drop every buffer and the graph and hand the stream back for reuse."""
        if self.model.cuda and self.stream is not None:
            self.stream.synchronize()
        if self.own_stream is not None:
            _STREAMS.give_back(self.own_stream)
        self.graph = self.captured = None
        self.graph_outs = []
        self.host_in, self.dev_in, self.host_out = [], [], []
        self.events, self.origin = [], None
        self.stream = self.own_stream = None


def _host_tensor(torch: Any, arr: np.ndarray, pinned: bool) -> Any:
    t = torch.from_numpy(np.ascontiguousarray(arr))
    return t.pin_memory() if pinned else t


class _StreamPool:
    """Streams handed back by closed backends, reused by the next one on the same device.

    PyTorch's caching allocator keeps freed blocks per stream and a cuBLAS workspace (32 MiB) per
    stream it has run on; a fresh stream per model load therefore grows reserved memory on every
    load/unload cycle until torch's own pool of streams wraps around (measured on an H200: about
    430 MiB per cycle of two models). Reusing the stream of the model that was unloaded keeps it flat.
    """

    def __init__(self) -> None:
        self._free: dict[str, list[Any]] = {}
        self._lock = threading.Lock()

    def take(self, torch: Any, device: Any) -> Any:
        with self._lock:
            free = self._free.get(str(device))
            if free:
                return free.pop()
        return torch.cuda.Stream(device=device)

    def give_back(self, stream: Any) -> None:
        with self._lock:
            self._free.setdefault(str(stream.device), []).append(stream)


_STREAMS = _StreamPool()


def torch_allocator_stats(torch: Any, device: Any, graph_pools: bool = False) -> dict[str, int]:
    """The caching allocator's view of one device, from ``torch.cuda.memory_stats`` (documented keys):
    allocated, reserved, inactive split bytes (``*.all.current``), peak allocated; with
    ``graph_pools`` (a captured CUDA graph: its private pool holds its own segments) also the
    segments of private pools from ``torch.cuda.memory_snapshot()`` (``segment_pool_id`` other than
    ``(0, 0)``): ``torch_graph_pool_bytes`` reserved there, ``torch_graph_pool_allocated_bytes`` used."""
    stats = torch.cuda.memory_stats(device)
    out = allocator_stats(stats)
    if graph_pools:
        out.update(graph_pool_stats(torch.cuda.memory_snapshot()))
    return out


TORCH_STATS_KEYS = {
    "torch_allocated_bytes": "allocated_bytes.all.current",
    "torch_reserved_bytes": "reserved_bytes.all.current",
    "torch_inactive_split_bytes": "inactive_split_bytes.all.current",
    "torch_peak_allocated_bytes": "allocated_bytes.all.peak",
}


def allocator_stats(stats: dict[str, Any]) -> dict[str, int]:
    """Our keys from a ``torch.cuda.memory_stats()`` dict (a key it lacks reads 0)."""
    return {k: int(stats.get(v, 0)) for k, v in TORCH_STATS_KEYS.items()}


def graph_pool_stats(segments: list[dict[str, Any]]) -> dict[str, int]:
    """Bytes reserved and allocated in private pools (CUDA graphs' pools; ``segment_pool_id`` not
    ``(0, 0)``) of a ``torch.cuda.memory_snapshot()`` segment list."""
    private = [s for s in segments if tuple(s.get("segment_pool_id") or (0, 0)) != (0, 0)]
    return {"torch_graph_pool_bytes": int(sum(int(s.get("total_size", 0)) for s in private)),
            "torch_graph_pool_allocated_bytes": int(sum(int(s.get("allocated_size", 0)) for s in private))}
