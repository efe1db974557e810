"""PyTorch backend: ``torch.export`` programs (.pt2), TorchScript files, and ONNX models through onnx2torch.

It is the baseline a TensorRT engine is compared against. On CUDA it runs on a stream of its own
(or one a scenario shares between models), copies inputs from pinned host buffers and outputs back
into pinned host buffers, and times H2D, compute and D2H between four CUDA events; the host time of
the module call is the enqueue time. On CPU only the total is known. ``torch`` and ``onnx2torch``
are imported inside ``load``.

Options: ``accelerator`` (auto: CUDA when a device is visible, else CPU with a note; cuda; cpu),
``device`` (CUDA device index, default 0), ``threads`` (torch intra-op threads, process-wide),
``pinned`` (False: pageable host buffers, to compare), ``default_dim`` (for dynamic dims, 1),
``cuda_graph`` (CUDA: capture the module call once on the backend's stream and replay it; an ONNX model
is converted again with its shapes fixed so no shape is computed at run time).

ONNX models choose their input shapes through the shape plan (``trtstudio.backends.shapes``), as the ORT
backend does; they are converted by ``torch_convert`` (constant folding where onnx2torch needs it, and
converters it lacks). ``load_times`` breaks a load down: ``import_ms`` (onnx2torch), ``read_ms``,
``fold_ms``, ``convert_ms``, ``to_device_ms``; ``prepare_inputs`` adds ``first_inference_ms`` and
``to_first_inference_ms`` (read to the end of the first inference, imports excluded).

TorchScript keeps no input shapes: a file saved with ``_extra_files={"trtstudio_inputs.json": ...}``
(a JSON list of ``{"name", "dtype", "shape"}``) states them; otherwise ``--shapes`` must.
"""

from __future__ import annotations

import json
import os
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.backends.base import InferTiming, InputSpec, LayerTime, require_module, resolve_shape
from trtstudio.backends.inputs import build_feeds
from trtstudio.backends.shapes import explain_run_failure, run_plan
from trtstudio.errors import BackendError, InputError

PIP_TORCH = "pip install torch (and onnx2torch for .onnx models)"
INPUTS_FILE = "trtstudio_inputs.json"
_NP_NAMES = {
    "float32": "float32", "float16": "float16", "float64": "float64", "bfloat16": "bfloat16",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "bool": "bool",
}
_TORCHSCRIPT_SUFFIXES = (".pt", ".pth", ".ts", ".torchscript", ".jit", ".zip")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def flatten_outputs(out: Any) -> list[Any]:
    """The tensors of a module's result (a tensor, or nested tuples/lists/dicts of them), in order."""
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in flatten_outputs(o)]
    if isinstance(out, dict):
        return [t for k in out for t in flatten_outputs(out[k])]
    return [out] if hasattr(out, "shape") else []


class TorchBackend:
    """A PyTorch module on CUDA (own stream, pinned buffers, CUDA events) or on the CPU."""

    def __init__(self, name: str = "torch", pip: str = PIP_TORCH) -> None:
        self.name = name
        self.notes: list[str] = []
        self._pip = pip
        self._torch: Any = None
        self._path: Path | None = None
        self._options: dict[str, Any] = {}
        self._module: Any = None
        self._kind = ""
        self._specs: list[InputSpec] = []
        self.device: Any = None  # torch.device
        self.cuda = False
        self.kernel_coverage: dict[str, Any] | None = None  # set by kernel_profile
        self._stream: Any = None
        self._own_stream: Any = None
        self._events: list[Any] = []
        self._origin: Any = None
        self._host_in: list[Any] = []
        self._dev_in: list[Any] = []
        self._host_out: list[Any] = []
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.shape_plan: Any = None  # the ShapePlan of the last prepare_inputs (ONNX models; None otherwise)
        self.load_times: dict[str, float] = {}
        self._onnx_model: Any = None  # the ONNX model converted (after folding, when it was folded)
        self._graph: Any = None  # torch.cuda.CUDAGraph of the module call (cuda_graph), while replayed
        self._captured: Any = None  # the same graph, kept while the eager variant runs (use_graph)
        self._graph_outs: list[Any] = []
        self.stage_marks: tuple[float, float, float, float] | None = None  # ms since the time origin

    # -- loading ---------------------------------------------------------------------------------
    def load(self, path: str | os.PathLike[str], options: dict[str, Any]) -> None:
        """Read the file, choose the device, move the module there."""
        torch = self._torch = require_module("torch", self.name, self._pip)
        self._path = Path(path)
        self._options = dict(options)
        if self._path.stat().st_size == 0:
            raise InputError(self._path, "empty file")
        self._choose_device(torch)
        if options.get("cuda_graph") and not self.cuda:
            raise BackendError(f"backend '{self.name}' runs on the CPU here: --cuda-graph needs a CUDA device")
        if options.get("threads"):
            torch.set_num_threads(int(options["threads"]))
            self.notes.append(f"torch intra-op threads set to {int(options['threads'])} (process-wide)")
        suffix = self._path.suffix.lower()
        prefetch = _Prefetch(self.name) if suffix == ".onnx" else None  # imports onnx2torch while CUDA starts
        if self.cuda:
            torch.empty(0, device=self.device)  # the CUDA context, overlapping the import
        self.load_times = prefetch.join() if prefetch is not None else {}
        t0 = time.perf_counter()
        if suffix == ".pt2":
            self._load_exported(torch)
        elif suffix == ".onnx":
            self._load_onnx(torch)
        else:
            self._load_torchscript(torch)
        if "read_ms" not in self.load_times:
            self.load_times["read_ms"] = (time.perf_counter() - t0) * 1e3
        t1 = time.perf_counter()
        if self._kind != "exported":  # an exported program is already in inference form; it refuses eval()
            self._module.eval()
        if self.cuda and self._kind != "torchscript":  # TorchScript was mapped onto the device while loading
            self._module = self._to_device(self._module)
        if self.cuda:
            torch.cuda.synchronize(self.device)
            self._own_stream = self._stream = _STREAMS.take(torch, self.device)
            self._events = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        self.load_times["to_device_ms"] = (time.perf_counter() - t1) * 1e3

    def _choose_device(self, torch: Any) -> None:
        want = str(self._options.get("accelerator", "auto"))
        if want not in ("auto", "cuda", "cpu"):
            raise InputError(None, f"accelerator must be auto, cuda or cpu, not '{want}'")
        index = int(self._options.get("device") or 0)
        count = torch.cuda.device_count() if want != "cpu" and torch.cuda.is_available() else 0
        if want != "cpu" and index < count:
            self.device, self.cuda = torch.device("cuda", index), True
        elif want == "cuda" or (want == "auto" and self._options.get("device") is not None):
            seen = f"{count} CUDA device(s)" if count else f"no CUDA device (torch {torch.__version__})"
            raise BackendError(f"backend '{self.name}' needs CUDA device {index}; this machine has {seen}")
        else:
            self.device, self.cuda = torch.device("cpu"), False
            if want == "auto":
                self.notes.append("no CUDA device visible to torch: running on the CPU")

    def _to_device(self, module: Any) -> Any:
        """The module on the device; an onnx2torch module keeps the constants it reads on the host
        (shapes, axes, scales) on the CPU, so running it needs no device-to-host synchronisation."""
        if self._kind != "onnx2torch":
            return module.to(self.device)
        from trtstudio.backends.torch_convert import host_constants

        keep = {name: module.get_buffer(name) for name in host_constants(module, self._onnx_model)}
        module = module.to(self.device)
        for name, tensor in keep.items():
            owner, _, leaf = name.rpartition(".")
            module.get_submodule(owner)._buffers[leaf] = tensor
        return module

    def _load_exported(self, torch: Any) -> None:
        try:
            ep = torch.export.load(str(self._path))
        except Exception as exc:  # noqa: BLE001 - torch raises many types for a bad archive
            raise InputError(self._path, f"torch.export cannot load this file: {_first_line(exc)}") from None
        if self.cuda:
            try:
                from torch.export.passes import move_to_device_pass

                ep = move_to_device_pass(ep, self.device)
            except ImportError:  # older torch: the module is moved with .to()
                pass
        placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
        specs: list[InputSpec] = []
        for s in ep.graph_signature.input_specs:
            if getattr(s.kind, "name", "") != "USER_INPUT":
                continue
            val = placeholders[s.arg.name].meta.get("val")
            shape: list[int | str] = [d if isinstance(d, int) else str(d) for d in getattr(val, "shape", [])]
            specs.append({"name": s.arg.name, "dtype": self._np_dtype(getattr(val, "dtype", None)), "shape": shape})
        self._specs = specs
        self._module = ep.module()
        self._kind = "exported"

    def _load_torchscript(self, torch: Any) -> None:
        extra = {INPUTS_FILE: ""}
        try:
            module = torch.jit.load(str(self._path), map_location=self.device, _extra_files=extra)
        except Exception as exc:  # noqa: BLE001
            raise InputError(
                self._path, f"not a TorchScript file torch can load ({_first_line(exc)}); .pt2 files are read with torch.export"
            ) from None
        names = [a.name for a in module.forward.schema.arguments[1:]]
        declared: dict[str, dict[str, Any]] = {}
        if extra[INPUTS_FILE]:
            try:
                declared = {d["name"]: d for d in json.loads(extra[INPUTS_FILE])}
            except (ValueError, TypeError, KeyError) as exc:
                raise InputError(self._path, f"{INPUTS_FILE} inside the file is not a list of inputs: {exc}") from None
        specs: list[InputSpec] = []
        for name in names:
            d = declared.get(name)
            if d is None:
                specs.append({"name": name, "dtype": "float32", "shape": ["?unknown-rank"]})
            else:
                specs.append({"name": name, "dtype": str(d.get("dtype", "float32")), "shape": list(d["shape"])})
        self._specs = specs
        self._module = module
        self._kind = "torchscript"

    def _load_onnx(self, torch: Any) -> None:
        import onnx

        from trtstudio.backends.torch_convert import convert_onnx

        converted = convert_onnx(self._path, self.name)  # type: ignore[arg-type]
        self._module, self._onnx_model = converted.module, converted.model
        self.load_times.update(converted.times)
        self.notes.extend(converted.notes)
        model = converted.model
        inits = {i.name for i in model.graph.initializer}
        specs: list[InputSpec] = []
        for vi in model.graph.input:
            if vi.name in inits:
                continue
            tt = vi.type.tensor_type
            dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type).name
            shape: list[int | str] = [
                d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim
            ]
            specs.append({"name": vi.name, "dtype": dtype, "shape": shape})
        self._specs = specs
        self._kind = "onnx2torch"

    def _np_dtype(self, dtype: Any) -> str:
        name = str(dtype).replace("torch.", "") if dtype is not None else "float32"
        if name not in _NP_NAMES:
            raise BackendError(f"{self._path}: input dtype {dtype} cannot be fed from numpy")
        return _NP_NAMES[name]

    def input_specs(self) -> list[InputSpec]:
        """Inputs with numpy dtype names; symbolic dims are str."""
        return [dict(s) for s in self._specs]  # type: ignore[misc]

    def _resolve(self, spec: InputSpec, requested: tuple[int, ...] | None) -> tuple[tuple[int, ...], str | None]:
        if spec["shape"] == ["?unknown-rank"]:
            if requested is None:
                raise InputError(
                    "--shapes", f"TorchScript file {self._path} keeps no shape for input '{spec['name']}'; give --shapes "
                    f"{spec['name']}:1x3x224x224 (or save it with _extra_files={{'{INPUTS_FILE}': ...}})"
                )
            return tuple(requested), None
        return resolve_shape(spec, requested, int(self._options.get("default_dim", 1)))

    # -- inputs ----------------------------------------------------------------------------------
    def prepare_inputs(self, shapes: dict[str, tuple[int, ...]], data: dict[str, Any] | None = None) -> None:
        """Host buffers (pinned on CUDA), device buffers, and output buffers sized by one run (the first
        inference); an ONNX model's shapes come from the shape plan. With ``cuda_graph``, the call is
        captured here."""
        torch = self._require()
        self.shape_plan = run_plan(self._path, shapes, data) if self._kind == "onnx2torch" else None
        feeds, notes = build_feeds(self.input_specs(), shapes, data, self._resolve, plan=self.shape_plan)
        self.notes.extend(n for n in notes if n not in self.notes)
        pinned = self.cuda and self._options.get("pinned", True)
        self._host_in = [self._host_tensor(torch, arr, pinned) for arr in feeds.values()]
        self.shapes = {k: tuple(v.shape) for k, v in feeds.items()}
        t0 = time.perf_counter()
        if self.cuda:
            with torch.cuda.stream(self._stream):
                self._dev_in = [torch.empty_like(h, device=self.device) for h in self._host_in]
                for d, h in zip(self._dev_in, self._host_in, strict=True):
                    d.copy_(h, non_blocking=True)
            outs = self._call(self._dev_in)
            with torch.cuda.stream(self._stream):
                self._host_out = [torch.empty(o.shape, dtype=o.dtype, pin_memory=bool(pinned)) for o in outs]
            self._stream.synchronize()
        else:
            self._dev_in = self._host_in
            self._call(self._dev_in)
        if "read_ms" in self.load_times and "first_inference_ms" not in self.load_times:
            first = self.load_times["first_inference_ms"] = (time.perf_counter() - t0) * 1e3
            parts = ("read_ms", "fold_ms", "convert_ms", "to_device_ms")
            self.load_times["to_first_inference_ms"] = first + sum(self.load_times.get(k, 0.0) for k in parts)
        if self._options.get("cuda_graph"):
            self._capture()

    def keep_inputs(self) -> Any:
        """The prepared host/device/output buffers as a slot :meth:`use_inputs` switches back to with no
        new allocation (shape mixes keep one per shape); None with a CUDA graph, whose capture is tied
        to one shape (the caller re-prepares instead)."""
        if self._graph is not None:
            return None
        return (self._host_in, self._dev_in, self._host_out, dict(self.shapes), self.shape_plan)

    def use_inputs(self, slot: Any) -> None:
        """Run on the buffers of a slot from :meth:`keep_inputs`."""
        self._host_in, self._dev_in, self._host_out, shapes, self.shape_plan = slot
        self.shapes = dict(shapes)

    def _capture(self) -> None:
        """Capture the module call on the backend's stream into a CUDA graph (its outputs stay fixed
        tensors that ``infer_once`` copies out); a model that cannot be captured is refused."""
        torch = self._torch
        if self._kind == "onnx2torch":
            from trtstudio.backends.torch_convert import specialize

            fixed = specialize(self._onnx_model, self.shapes, self.name)
            self._onnx_model = fixed.model
            self._module = self._to_device(fixed.module.eval())
            self.load_times.update({f"graph_{k}": v for k, v in fixed.times.items()})
        t0 = time.perf_counter()
        for _ in range(3):  # warm-up on the capture stream (cuDNN/cuBLAS choose their kernels here)
            self._call(self._dev_in)
        self._stream.synchronize()
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.inference_mode(), torch.cuda.graph(graph, stream=self._stream):
                self._graph_outs = flatten_outputs(self._module(*self._dev_in))
        except Exception as exc:  # noqa: BLE001 - capture raises RuntimeError and the module's own errors
            self._graph_outs = []
            torch.cuda.synchronize(self.device)
            raise BackendError(f"{self._path}: CUDA graph capture failed ({_first_line(exc)}); "
                               "run without --cuda-graph") from None
        self._graph = self._captured = graph
        self.load_times["graph_capture_ms"] = (time.perf_counter() - t0) * 1e3
        self.notes.append("CUDA graph: the module call is captured once and replayed; enqueue_ms is the replay's launch")

    @property
    def graph_captured(self) -> bool:
        """A CUDA graph of the module call was captured (``cuda_graph``)."""
        return self._captured is not None

    def use_graph(self, on: bool) -> None:
        """Replay the captured graph (``on``) or call the module itself (eager), on the same stream,
        buffers and shapes: the two variants of a ``--cuda-graph`` run (``profiling.variants``)."""
        if on and self._captured is None:
            raise BackendError(f"backend '{self.name}': no CUDA graph was captured (run with --cuda-graph)")
        self._graph = self._captured if on else None

    @staticmethod
    def _host_tensor(torch: Any, arr: np.ndarray, pinned: bool) -> Any:
        t = torch.from_numpy(np.ascontiguousarray(arr))
        return t.pin_memory() if pinned else t

    def _require(self) -> Any:
        if self._module is None:
            raise BackendError(f"backend '{self.name}' has no model loaded")
        return self._torch

    def _call(self, inputs: list[Any]) -> list[Any]:
        torch = self._torch
        try:
            with torch.inference_mode():
                if self.cuda:
                    with torch.cuda.stream(self._stream):
                        return flatten_outputs(self._module(*inputs))
                return flatten_outputs(self._module(*inputs))
        except torch.cuda.OutOfMemoryError as exc:
            raise BackendError(f"{self._path}: CUDA out of memory: {_first_line(exc)}") from None
        except (RuntimeError, TypeError, ValueError, IndexError) as exc:
            raise BackendError(self._failure(exc)) from None

    def _failure(self, exc: BaseException) -> str:
        """The module's error in one line, with the shape plan's hint where it looks like a shape problem."""
        hint = explain_run_failure(self.shape_plan, exc)
        return f"{self._path}: the module failed: {hint or _first_line(exc)}"

    # -- running ---------------------------------------------------------------------------------
    def infer_once(self) -> InferTiming:
        """CUDA: H2D, module, D2H on the stream between CUDA events. CPU: the module call."""
        torch = self._require()
        if not self._host_in:
            raise BackendError("prepare_inputs must run before infer_once")
        if not self.cuda:
            t0 = time.perf_counter()
            self._call(self._host_in)
            return InferTiming((time.perf_counter() - t0) * 1e3)
        e0, e1, e2, e3 = self._events
        s = self._stream
        t0 = time.perf_counter()
        try:
            with torch.inference_mode(), torch.cuda.stream(s):
                e0.record(s)
                for d, h in zip(self._dev_in, self._host_in, strict=True):
                    d.copy_(h, non_blocking=True)
                e1.record(s)
                q0 = time.perf_counter()
                if self._graph is not None:
                    self._graph.replay()
                    outs = self._graph_outs
                else:
                    outs = flatten_outputs(self._module(*self._dev_in))
                enqueue = (time.perf_counter() - q0) * 1e3
                e2.record(s)
                for h, o in zip(self._host_out, outs, strict=True):
                    h.copy_(o, non_blocking=True)
                e3.record(s)
            e3.synchronize()
        except torch.cuda.OutOfMemoryError as exc:
            raise BackendError(f"{self._path}: CUDA out of memory: {_first_line(exc)}") from None
        except RuntimeError as exc:
            raise BackendError(self._failure(exc)) from None
        total = (time.perf_counter() - t0) * 1e3
        if self._origin is not None:
            o = self._origin
            self.stage_marks = (o.elapsed_time(e0), o.elapsed_time(e1), o.elapsed_time(e2), o.elapsed_time(e3))
        return InferTiming(total, e0.elapsed_time(e1), e1.elapsed_time(e2), e2.elapsed_time(e3), enqueue)

    def outputs(self) -> list[np.ndarray]:
        """Host copies of the outputs of the last inference (CUDA), or of a fresh run (CPU)."""
        if self.cuda:
            return [h.numpy() for h in self._host_out]
        return [o.detach().numpy() for o in self._call(self._host_in)]

    # -- streams and time origin (scenarios) -------------------------------------------------------
    def new_stream(self) -> Any:
        """A new CUDA stream on this backend's device (None on CPU)."""
        return self._torch.cuda.Stream(device=self.device) if self.cuda else None

    def use_stream(self, stream: Any | None) -> None:
        """Run on ``stream`` (one shared with other models); None goes back to the backend's own."""
        if not self.cuda:
            return
        if stream is not None and stream.device != self.device:
            raise BackendError(f"a stream of {stream.device} cannot run a model on {self.device}")
        self._stream = stream if stream is not None else self._own_stream

    def make_time_origin(self) -> Any:
        """Record and wait for an event on this device: the zero of ``stage_marks`` (None on CPU)."""
        if not self.cuda:
            return None
        ev = self._torch.cuda.Event(enable_timing=True)
        ev.record(self._stream)
        ev.synchronize()
        return ev

    def set_time_origin(self, event: Any | None) -> None:
        """After each inference, ``stage_marks`` holds its four event times in ms since ``event``."""
        self._origin = event
        self.stage_marks = None

    # -- layers and memory -----------------------------------------------------------------------
    def per_layer_profile(self, iterations: int) -> list[LayerTime]:
        """Per leaf submodule (onnx2torch keeps one per ONNX node): on CUDA, the GPU time of the
        kernels it launched (:meth:`kernel_profile`); on the CPU, its median time, timed by forward
        hooks with a device synchronisation around each (slower than a plain run, comparable between
        layers)."""
        torch = self._require()
        if not self._host_in:
            raise BackendError("prepare_inputs must run before per_layer_profile")
        if self._kind != "onnx2torch":
            raise BackendError(
                f"{self._path}: per-layer PyTorch times need an ONNX model (onnx2torch keeps one submodule per node); "
                f"a {self._kind} file has no layer structure to hook"
            )
        if self.cuda and not os.environ.get("TRTSTUDIO_TORCH_HOOK_TIMES"):
            return self.kernel_profile(iterations)
        leaves = self._leaves()
        times: dict[str, list[float]] = {}
        starts: dict[str, float] = {}

        def sync() -> None:
            if self.cuda:
                torch.cuda.synchronize(self.device)

        def pre(name: str) -> Any:
            def hook(_m: Any, _i: Any) -> None:
                sync()
                starts[name] = time.perf_counter()
            return hook

        def post(name: str) -> Any:
            def hook(_m: Any, _i: Any, _o: Any) -> None:
                sync()
                times.setdefault(name, []).append((time.perf_counter() - starts[name]) * 1e3)
            return hook

        handles = []
        for name, mod in leaves:
            handles.append(mod.register_forward_pre_hook(pre(name)))
            handles.append(mod.register_forward_hook(post(name)))
        try:
            for _ in range(max(1, iterations) + 1):
                self._call(self._dev_in)
        finally:
            for h in handles:
                h.remove()
        provider = f"PyTorch ({self.device})"
        onnx_names = self._onnx_node_names()
        ops = self._op_types()
        return [
            {"name": name, "onnx_nodes": [onnx_names[name.strip("/")]] if name.strip("/") in onnx_names else [],
             "op_type": ops.get(name), "provider": provider,
             "time_ms": float(np.median(ts[1:] if len(ts) > 1 else ts)), "fallback": False}
            for name, ts in times.items()
        ]

    def kernel_profile(self, iterations: int) -> list[LayerTime]:
        """The CUDA kernels each ONNX node's module launched. Each leaf module runs inside a
        ``torch.profiler`` ``record_function`` range named after it and each kernel goes to the
        innermost range open when it was launched (:func:`trtstudio.engine.kineto.trace_table`, the
        join Nsight Systems exports get). With ``cupti-python`` installed one inference is traced so,
        and ``iterations`` inferences run as the timed run does (the CUDA graph replayed where one was
        captured) with CUPTI recording kernels alone, each put on its node by launch order
        (:mod:`trtstudio.backends.cupti_trace`); without it, ``iterations`` inferences are traced
        (1.7-2.3x slower on models bound by launching kernels). Rows: the node's kernel time per
        inference (``time_ms``), its kernels (name, launches and ms per inference, grid/block) and
        ``timing: "kernels"``; the share of kernel time attributed and how the kernels were recorded
        are in :attr:`kernel_coverage`."""
        torch = self._require()
        from trtstudio.backends import cupti_trace
        from trtstudio.engine.kineto import kernel_sequence, trace_table
        from trtstudio.engine.nsys import KernelTable

        self._call(self._dev_in)  # warm: first-call kernels (autotuning, lazy init) left out
        torch.cuda.synchronize(self.device)
        n = max(1, iterations)
        light = cupti_trace.available() and not os.environ.get("TRTSTUDIO_TORCH_PROFILER_KERNELS")
        events = self._traced_events(1 if light else n)
        samples: list[float] = []
        table: KernelTable | None = None
        in_order_share: float | None = None
        if light:
            expected = kernel_sequence(events)
            try:
                with cupti_trace.KernelRecorder() as rec:
                    samples = [self.infer_once().total_ms for _ in range(n)]
            except Exception as exc:  # noqa: BLE001 - cupti's own errors (another subscriber, old driver)
                self.notes.append(f"CUPTI could not record kernels ({_first_line(exc)}): traced by torch.profiler")
                light = False
                events = self._traced_events(n)
            else:
                table, in_order_share = cupti_trace.table_by_order(expected, rec.kernels)
        if table is None:
            table = trace_table(events, kinds=("user_annotation",))
        how = ("CUPTI kernel activity, put on nodes by the launch order of one traced inference" if light
               else "torch.profiler")
        self.kernel_coverage = {"total_ms": table.total_ms / n, "attributed_ms": table.attributed_ms / n,
                                "share": table.attributed_ms / table.total_ms if table.total_ms else None,
                                "kernels_per_inference": table.kernels / n, "notes": table.notes,
                                "recorder": "cupti" if light else "torch.profiler",
                                "in_launch_order": in_order_share,
                                "recorded_median_ms": float(np.median(samples)) if samples else None}
        if table.total_ms:
            self.notes.append(f"per-layer times are CUDA kernel times ({how}): "
                              f"{100 * table.attributed_ms / table.total_ms:.1f} % of the GPU's kernel time "
                              f"({table.total_ms / n:.3g} ms per inference) attributed to ONNX nodes")
        if not light:
            self.notes.append("pip install cupti-python (matching torch.version.cuda) to record kernels without "
                              "tracing every launch: torch.profiler slows a launch-bound model 1.7-2.3x")
        provider = f"PyTorch kernels ({self.device})"
        onnx_names = self._onnx_node_names()
        ops = self._op_types()
        by_range = {r["name"]: r for r in table.ranges}
        rows: list[LayerTime] = []
        for name, _mod in self._leaves():
            r = by_range.get(f"trtstudio::{name}")
            node = onnx_names.get(name.strip("/"))
            rows.append({"name": name, "onnx_nodes": [node] if node else [], "op_type": ops.get(name),
                         "provider": provider, "time_ms": r["ms"] / n if r else 0.0, "fallback": False, "timing": "kernels",
                         "kernels": [{"name": k["name"], "count": k["count"] / n, "ms": k["ms"] / n,
                                      **({"launch": k["launch"]} if k.get("launch") else {})}
                                     for k in (r["kernels"] if r else [])]})
        return rows

    def _leaves(self) -> list[tuple[str, Any]]:
        """The module's leaf submodules (onnx2torch keeps one per ONNX node), by name."""
        return [(n, m) for n, m in self._module.named_modules() if n and not list(m.children())]

    def _traced_events(self, n: int) -> list[Any]:
        """The Chrome-trace events of ``n`` eager inferences under ``torch.profiler`` (CPU and CUDA
        activity), each leaf module inside a ``record_function`` range ``trtstudio::NAME``."""
        import tempfile

        torch = self._torch
        from torch.profiler import ProfilerActivity, profile, record_function

        from trtstudio.engine.kineto import read_events

        open_ranges: list[Any] = []

        def pre(name: str) -> Any:
            def hook(_m: Any, _i: Any) -> None:
                rf = record_function(f"trtstudio::{name}")
                rf.__enter__()
                open_ranges.append(rf)
            return hook

        def post(_m: Any, _i: Any, _o: Any) -> None:
            if open_ranges:
                open_ranges.pop().__exit__(None, None, None)

        handles = []
        for name, mod in self._leaves():
            handles.append(mod.register_forward_pre_hook(pre(name)))
            handles.append(mod.register_forward_hook(post))
        try:
            # torch.profiler's own warnings (Kineto's, "profiler already enabled") are the tool's
            # business, not the terminal's: kept as notes, once each
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                    for _ in range(n):
                        self._call(self._dev_in)
                    torch.cuda.synchronize(self.device)
        finally:
            for h in handles:
                h.remove()
        with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(record=True) as more:
            warnings.simplefilter("always")
            trace = os.path.join(tmp, "trace.json")
            prof.export_chrome_trace(trace)
            events = read_events(trace)
        for w in [*caught, *more]:
            note = f"torch.profiler: {_first_line(w.message)}"  # type: ignore[arg-type]  # a Warning instance
            if note not in self.notes:
                self.notes.append(note)
        return events

    def _op_types(self) -> dict[str, str]:
        """Each leaf module's op: its ONNX node's op type (onnx2torch keeps one module per node), else
        the module's class (``Conv2d``, ``ReLU``)."""
        by_module: dict[str, str] = {}
        if self._kind == "onnx2torch" and self._onnx_model is not None:
            by_module = {(n.domain + n.name).replace(".", "/").strip("/"): n.op_type for n in self._onnx_model.graph.node}
        return {name: by_module.get(name.strip("/")) or type(mod).__name__ for name, mod in self._leaves()}

    def _onnx_node_names(self) -> dict[str, str]:
        if self._kind != "onnx2torch" or self._onnx_model is None:
            return {}
        nodes = self._onnx_model.graph.node
        # onnx2torch names submodules after the nodes (domain first; '.' becomes '/'); the module path
        # comes back without the leading '/'
        return {(n.domain + n.name).replace(".", "/").strip("/"): n.name for n in nodes}

    def memory(self) -> dict[str, int]:
        """Model file size, host I/O buffers and, on CUDA, the caching allocator's statistics."""
        out: dict[str, int] = {}
        if self._path is not None and self._path.exists():
            out["model_file_bytes"] = self._path.stat().st_size
        out["io_host_bytes"] = int(sum(t.numel() * t.element_size() for t in (*self._host_in, *self._host_out)))
        if self.cuda:
            out.update(torch_allocator_stats(self._torch, self.device, graph_pools=self._captured is not None))
        return out

    def close(self) -> None:
        """Drop the module and every buffer and hand the stream back for reuse; cached device memory
        stays with torch's allocator."""
        if self.cuda and self._stream is not None:
            self._stream.synchronize()
        if self._own_stream is not None:
            _STREAMS.give_back(self._own_stream)
        self._module = self._graph = self._captured = None
        self._graph_outs = []
        self._host_in, self._dev_in, self._host_out = [], [], []
        self._events, self._origin = [], None
        self._stream = self._own_stream = None


class _Prefetch:
    """Imports onnx2torch (with trtstudio's converters) on a thread while the caller starts CUDA; ``join``
    returns ``{"import_ms": ...}`` or raises what the import raised."""

    def __init__(self, backend: str) -> None:
        self._backend = backend
        self._error: BaseException | None = None
        self._ms = 0.0
        self._thread = threading.Thread(target=self._run, name="trtstudio-onnx2torch-import", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from trtstudio.backends.torch_convert import import_onnx2torch

        t0 = time.perf_counter()
        try:
            import_onnx2torch(self._backend)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread in join()
            self._error = exc
        self._ms = (time.perf_counter() - t0) * 1e3

    def join(self) -> dict[str, float]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return {"import_ms": self._ms}


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
