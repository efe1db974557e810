"""TensorRT backend for engine plans, one code path for ``tensorrt`` (10.x, 11.x) and ``tensorrt_rtx``.

Written against the TensorRT Python API (ICudaEngine, IExecutionContext, IProfiler): the engine is
deserialized, I/O tensors get pinned host and device buffers (``set_tensor_address``), dynamic inputs
``set_input_shape`` inside optimization profile 0, and ``execute_async_v3`` runs on a pycuda stream
between CUDA events that time H2D, compute and D2H apart. Optional features are found with
``hasattr`` on the imported module, never from version strings. A CUDA graph of the enqueue is
captured when asked for (``cuda_graph=True``) through cuda-python (pycuda 2026.1 cannot capture
streams); without it the run goes on uncaptured, with a note.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.backends.base import InferTiming, InputSpec, LayerTime, require_module, resolve_shape
from trtstudio.backends.inputs import build_feeds
from trtstudio.errors import BackendError, InputError

_ONNX_LAYER = re.compile(r"\[ONNX Layer: ([^\]]*)\]")


def onnx_nodes_from_layer(name: str, metadata: str | None) -> list[str]:
    """ONNX nodes behind an engine layer: from ``Metadata`` ('[ONNX Layer: n]' entries joined by
    \\x1e or \\x1f) when present, else from the name (' + ' joins, 'PWN(a, b)', ForeignNode ranges)."""
    if metadata:
        found = [m.strip() for part in re.split("[\x1e\x1f]", metadata) for m in _ONNX_LAYER.findall(part)]
        if found:
            return list(dict.fromkeys(found))
    text = name
    fm = re.search(r"\{ForeignNode\[(.*)\]\}", text)
    if fm:
        return [p.strip() for p in fm.group(1).split("...") if p.strip()]
    text = re.sub(r"^PWN\((.*)\)$", r"\1", text)
    parts = re.split(r" \+ |, ", text)
    return [p.strip() for p in parts if p.strip() and not p.strip().startswith("Reformatting")]


class TrtBackend:
    """A deserialized engine with one execution context; options ``cuda_graph`` (bool), ``device``."""

    def __init__(
        self,
        name: str = "tensorrt",
        pip: str = "pip install tensorrt pycuda",
        module: str = "tensorrt",
        trt_module: Any = None,
        cuda_api: Any = None,
    ) -> None:
        self.name = name
        self.notes: list[str] = []
        self._pip = pip
        self._module_name = module
        self._trt = trt_module
        self._cuda = cuda_api
        self._path: Path | None = None
        self._options: dict[str, Any] = {}
        self._ctx: Any = None
        self._thread: int | None = None
        self.engine: Any = None
        self.context: Any = None
        self._inputs: list[str] = []
        self._outputs: list[str] = []
        self._host: dict[str, np.ndarray] = {}
        self._dev: dict[str, Any] = {}
        self._stream: Any = None
        self._events: list[Any] = []
        self._graph_exec: Any = None
        self.shapes: dict[str, tuple[int, ...]] = {}
        self._kept: list[Any] = []  # buffer slots kept per shape (keep_inputs), freed by close

    # -- loading ---------------------------------------------------------------------------------
    def load(self, path: str | os.PathLike[str], options: dict[str, Any]) -> None:
        """Deserialize the plan and create the execution context."""
        if self._trt is None:
            self._trt = require_module(self._module_name, self.name, self._pip)
        if self._cuda is None:
            from trtstudio.backends import cuda as cuda_api

            self._cuda = cuda_api
        trt = self._trt
        self._path = Path(path)
        self._options = dict(options)
        self._ctx = self._cuda.CudaContext(int(options.get("device", 0)))
        self._bind_thread()
        data = self._path.read_bytes()
        if not data:
            raise InputError(self._path, "empty engine file")
        self._logger = trt.Logger(trt.Logger.WARNING)
        self._runtime = trt.Runtime(self._logger)
        engine = self._runtime.deserialize_cuda_engine(data)
        if engine is None:
            raise InputError(
                self._path,
                f"{self._module_name} cannot deserialize this engine (built by another TensorRT version or for another GPU?)",
            )
        self.engine = engine
        self.context = engine.create_execution_context()
        if self.context is None:
            raise BackendError(f"{self._path}: create_execution_context failed (out of device memory?)")
        names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
        self._inputs = [n for n in names if engine.get_tensor_mode(n) == trt.TensorIOMode.INPUT]
        self._outputs = [n for n in names if n not in self._inputs]
        self._stream = self._cuda.new_stream()
        self._events = [self._cuda.new_event() for _ in range(4)]

    def _bind_thread(self) -> None:
        # pycuda contexts are per thread: make ours current on whichever thread runs us.
        ident = threading.get_ident()
        if self._thread != ident and self._ctx is not None:
            self._ctx.push()
            self._thread = ident

    def _dtype(self, name: str) -> np.dtype[Any]:
        dt = self.engine.get_tensor_dtype(name)
        try:
            return np.dtype(self._trt.nptype(dt))
        except (TypeError, KeyError) as exc:
            raise BackendError(f"tensor '{name}' has type {dt}, which trtstudio cannot feed from numpy") from exc

    def profile_range(self, name: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """(min, opt, max) shapes of an input in optimization profile 0."""
        mn, opt, mx = self.engine.get_tensor_profile_shape(name, 0)
        return tuple(mn), tuple(opt), tuple(mx)

    def input_specs(self) -> list[InputSpec]:
        """Engine inputs; dynamic dims are -1."""
        return [
            {"name": n, "dtype": self._dtype(n).name, "shape": [int(d) for d in self.engine.get_tensor_shape(n)]}
            for n in self._inputs
        ]

    def _resolve(self, spec: InputSpec, requested: tuple[int, ...] | None) -> tuple[tuple[int, ...], str | None]:
        if not any(isinstance(d, int) and d < 0 for d in spec["shape"]):
            return resolve_shape(spec, requested)
        mn, opt, mx = self.profile_range(spec["name"])
        if requested is None:
            shape = opt
            return shape, f"input '{spec['name']}' is dynamic; using the profile's opt shape {'x'.join(map(str, opt))}"
        shape, _ = resolve_shape(spec, requested)
        if len(shape) != len(mn) or any(not (lo <= d <= hi) for d, lo, hi in zip(shape, mn, mx, strict=True)):
            raise InputError(
                "--shapes",
                f"input '{spec['name']}' shape {'x'.join(map(str, shape))} is outside the optimization profile "
                f"(min {'x'.join(map(str, mn))}, max {'x'.join(map(str, mx))})",
            )
        return shape, None

    def prepare_inputs(self, shapes: dict[str, tuple[int, ...]], data: dict[str, Any] | None = None) -> None:
        """Set input shapes, allocate pinned host + device buffers and bind their addresses."""
        self._bind_thread()
        feeds, notes = build_feeds(self.input_specs(), shapes, data, self._resolve)
        self.notes.extend(n for n in notes if n not in self.notes)
        self._release_graph()
        self._free_buffers()
        for name, array in feeds.items():
            if not self.context.set_input_shape(name, tuple(array.shape)):
                raise InputError("--shapes", f"TensorRT refused shape {list(array.shape)} for input '{name}'")
            host = self._cuda.pinned_empty(array.shape, array.dtype)
            host[...] = array
            self._host[name] = host
        for name in self._outputs:
            shape = tuple(int(d) for d in self.context.get_tensor_shape(name))
            if any(d < 0 for d in shape):
                raise BackendError(f"output '{name}' has data-dependent shape {shape}; not supported yet")
            self._host[name] = self._cuda.pinned_empty(shape, self._dtype(name))
        for name, host in self._host.items():
            self._dev[name] = self._cuda.device_alloc(host.nbytes)
            self.context.set_tensor_address(name, int(self._dev[name]))
        self.shapes = {n: tuple(self._host[n].shape) for n in self._inputs}
        if self._options.get("cuda_graph"):
            self._capture_graph()

    def keep_inputs(self) -> Any:
        """The bound host/device buffers as a slot :meth:`use_inputs` switches back to with no new
        allocation (shape mixes keep one per shape): the buffers leave the backend's current set, so
        the next ``prepare_inputs`` allocates beside them instead of freeing them; :meth:`close` frees
        every slot. None with a CUDA graph (captured for one shape's addresses)."""
        if self._graph_exec is not None:
            return None
        slot = (self._host, self._dev, dict(self.shapes))
        self._kept.append(slot)
        self._host, self._dev = {}, {}
        return slot

    def use_inputs(self, slot: Any) -> None:
        """Bind a kept slot: ``set_input_shape`` per input and ``set_tensor_address`` per tensor
        (IExecutionContext, TensorRT 10 API; no allocation)."""
        self._bind_thread()
        self._host, self._dev, shapes = slot
        for name in self._inputs:
            if not self.context.set_input_shape(name, tuple(self._host[name].shape)):
                raise InputError("--shapes", f"TensorRT refused shape {list(self._host[name].shape)} for input '{name}'")
        for name, dev in self._dev.items():
            self.context.set_tensor_address(name, int(dev))
        self.shapes = dict(shapes)

    def _enqueue(self) -> None:
        if self._graph_exec is not None:
            self._graph_exec.launch(self._stream)
        elif not self.context.execute_async_v3(self._stream.handle):
            raise BackendError(f"{self._path}: execute_async_v3 failed")

    def _capture_graph(self) -> None:
        stream = self._stream
        if not hasattr(self._cuda, "capture_graph"):
            self.notes.append("CUDA graph asked for, but stream capture is not available; running without")
            return
        self._enqueue()  # TensorRT must run once after shape changes before it can be captured
        stream.synchronize()
        try:
            self._graph_exec = self._cuda.capture_graph(stream, lambda: self.context.execute_async_v3(stream.handle))
        except BackendError as exc:  # capture is best effort: some engines are not capturable
            self._graph_exec = None
            self.notes.append(f"CUDA graph capture failed ({exc}); running without")

    # -- running ---------------------------------------------------------------------------------
    def infer_once(self) -> InferTiming:
        """H2D copies, enqueue, D2H copies on one stream, each span between CUDA events."""
        if not self._host:
            raise BackendError("prepare_inputs must run before infer_once")
        self._bind_thread()
        e0, e1, e2, e3 = self._events
        s = self._stream
        t0 = time.perf_counter()
        e0.record(s)
        for name in self._inputs:
            self._cuda.htod_async(self._dev[name], self._host[name], s)
        e1.record(s)
        q0 = time.perf_counter()
        self._enqueue()
        enqueue = (time.perf_counter() - q0) * 1e3
        e2.record(s)
        for name in self._outputs:
            self._cuda.dtoh_async(self._host[name], self._dev[name], s)
        e3.record(s)
        e3.synchronize()
        total = (time.perf_counter() - t0) * 1e3
        return InferTiming(total, e1.time_since(e0), e2.time_since(e1), e3.time_since(e2), enqueue)

    def output(self, name: str) -> np.ndarray:
        """The host copy of an output after the last inference."""
        return self._host[name]

    def per_layer_profile(self, iterations: int) -> list[LayerTime]:
        """Median per-layer time through an IProfiler on a second execution context."""
        self._bind_thread()
        trt = self._trt
        times: dict[str, list[float]] = {}

        class _Collector(trt.IProfiler):  # type: ignore[misc,name-defined]
            def __init__(self) -> None:
                trt.IProfiler.__init__(self)

            def report_layer_time(self, layer_name: str, ms: float) -> None:
                times.setdefault(layer_name, []).append(float(ms))

        ctx = self.engine.create_execution_context()
        if ctx is None:
            raise BackendError("cannot create a second execution context for per-layer profiling")
        collector = _Collector()
        ctx.profiler = collector
        for name in self._inputs:
            ctx.set_input_shape(name, tuple(self._host[name].shape))
        for name, dev in self._dev.items():
            ctx.set_tensor_address(name, int(dev))
        for _ in range(max(1, iterations)):
            if not ctx.execute_async_v3(self._stream.handle):
                raise BackendError("execute_async_v3 failed while profiling layers")
            self._stream.synchronize()
        metadata = self._layer_metadata(ctx)
        provider = "TensorRT-RTX" if "rtx" in self._module_name else "TensorRT"
        del ctx
        return [
            {
                "name": layer,
                "onnx_nodes": onnx_nodes_from_layer(layer, metadata.get(layer)),
                "provider": provider,
                "time_ms": float(statistics.median(ts)),
                "fallback": False,
            }
            for layer, ts in times.items()
        ]

    def _layer_metadata(self, ctx: Any) -> dict[str, str]:
        trt = self._trt
        if not hasattr(self.engine, "create_engine_inspector") or not hasattr(trt, "LayerInformationFormat"):
            return {}
        try:
            inspector = self.engine.create_engine_inspector()
            inspector.execution_context = ctx
            out = {}
            for i in range(self.engine.num_layers):
                info = json.loads(inspector.get_layer_information(i, trt.LayerInformationFormat.JSON))
                if isinstance(info, dict) and "Name" in info:
                    out[str(info["Name"])] = str(info.get("Metadata", ""))
            return out
        except (ValueError, RuntimeError, TypeError):  # names-only engines answer plain strings
            return {}

    def memory(self) -> dict[str, int]:
        """Context device memory (``device_memory_size_v2`` where present), I/O buffers, plan size."""
        out: dict[str, int] = {}
        if self.engine is not None:
            attr = "device_memory_size_v2" if hasattr(self.engine, "device_memory_size_v2") else "device_memory_size"
            out["context_device_bytes"] = int(getattr(self.engine, attr))
        out["io_device_bytes"] = int(sum(h.nbytes for h in self._host.values()))
        out["io_host_pinned_bytes"] = out["io_device_bytes"]
        if self._path is not None and self._path.exists():
            out["engine_file_bytes"] = self._path.stat().st_size
        return out

    def _release_graph(self) -> None:
        if self._graph_exec is not None and hasattr(self._graph_exec, "close"):
            self._graph_exec.close()
        self._graph_exec = None

    def _free_buffers(self) -> None:
        for dev in self._dev.values():
            free = getattr(dev, "free", None)
            if free is not None:
                free()
        self._dev.clear()
        self._host.clear()

    def close(self) -> None:
        """Free buffers, the context and the engine, and release the CUDA context."""
        if self._ctx is None:
            return
        self._bind_thread()
        self._release_graph()
        current_host, current = self._host, self._dev
        for host, dev, _shapes in self._kept:  # shape-mix slots (keep_inputs), the current one freed below
            if dev is not current:
                self._host, self._dev = host, dev
                self._free_buffers()
        self._kept = []
        self._host, self._dev = current_host, current
        self._free_buffers()  # the current set (kept or not)
        self.context = None
        self.engine = None
        self._ctx.pop()
        self._ctx = None
