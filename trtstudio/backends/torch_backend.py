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

The backend is a thin class over three parts, each in its own module: the model (``torch_model``:
reading the file, converting ONNX, choosing the device), the run on the device (``torch_device``:
buffers, stream, CUDA events and graph, time origin, allocator statistics) and the per-layer
recording (``torch_kernels``: forward hooks, torch.profiler ranges, CUPTI kernel activity).
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from trtstudio.backends.base import InferTiming, InputSpec, LayerTime
from trtstudio.backends.inputs import build_feeds
from trtstudio.backends.shapes import run_plan
from trtstudio.backends.torch_device import (
    TORCH_STATS_KEYS,
    DeviceRun,
    allocator_stats,
    flatten_outputs,
    graph_pool_stats,
    torch_allocator_stats,
)
from trtstudio.backends.torch_kernels import LayerRecorder
from trtstudio.backends.torch_model import INPUTS_FILE, PIP_TORCH, TorchModel
from trtstudio.errors import BackendError

__all__ = ["INPUTS_FILE", "PIP_TORCH", "TORCH_STATS_KEYS", "TorchBackend", "allocator_stats", "flatten_outputs",
           "graph_pool_stats", "torch_allocator_stats"]


class _Part:
    """An attribute of the backend that is one of a part's (read and written there): the names callers,
    tests and benchmarks have used since the backend was one class."""

    def __init__(self, part: str, attr: str) -> None:
        self._part, self._attr = part, attr

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return self if obj is None else getattr(getattr(obj, self._part), self._attr)

    def __set__(self, obj: Any, value: Any) -> None:
        setattr(getattr(obj, self._part), self._attr, value)


class TorchBackend:
    """A PyTorch module on CUDA (own stream, pinned buffers, CUDA events) or on the CPU."""

    device = _Part("_model", "device")  # torch.device
    cuda = _Part("_model", "cuda")
    load_times = _Part("_model", "load_times")
    shapes = _Part("_run", "shapes")
    shape_plan = _Part("_run", "shape_plan")  # the ShapePlan of the last prepare_inputs (ONNX models; None otherwise)
    stage_marks = _Part("_run", "stage_marks")  # ms since the time origin
    _module = _Part("_model", "module")
    _stream = _Part("_run", "stream")
    _host_in = _Part("_run", "host_in")
    _dev_in = _Part("_run", "dev_in")
    _host_out = _Part("_run", "host_out")
    _graph = _Part("_run", "graph")
    _graph_outs = _Part("_run", "graph_outs")

    def __init__(self, name: str = "torch", pip: str = PIP_TORCH) -> None:
        self.name = name
        self.notes: list[str] = []
        self._model = TorchModel(name, pip, self.notes)
        self._run = DeviceRun(self._model, self.notes)
        self.kernel_coverage: dict[str, Any] | None = None  # set by kernel_profile

    # -- loading ---------------------------------------------------------------------------------
    def load(self, path: str | os.PathLike[str], options: dict[str, Any]) -> None:
        """Read the file, choose the device, move the module there."""
        self._model.read(path, options)
        t1 = time.perf_counter()
        self._model.place()
        if self._model.cuda:
            self._run.start()
        self.load_times["to_device_ms"] = (time.perf_counter() - t1) * 1e3

    def input_specs(self) -> list[InputSpec]:
        """Inputs with numpy dtype names; symbolic dims are str."""
        return self._model.input_specs()

    # -- inputs ----------------------------------------------------------------------------------
    def prepare_inputs(self, shapes: dict[str, tuple[int, ...]], data: dict[str, Any] | None = None) -> None:
        """Host buffers (pinned on CUDA), device buffers, and output buffers sized by one run (the first
        inference); an ONNX model's shapes come from the shape plan. With ``cuda_graph``, the call is
        captured here."""
        m = self._model
        m.require()
        self.shape_plan = run_plan(m.path, shapes, data) if m.kind == "onnx2torch" else None
        feeds, notes = build_feeds(self.input_specs(), shapes, data, m.resolve, plan=self.shape_plan)
        self.notes.extend(n for n in notes if n not in self.notes)
        first = self._run.prepare(feeds)
        if "read_ms" in self.load_times and "first_inference_ms" not in self.load_times:
            self.load_times["first_inference_ms"] = first
            parts = ("read_ms", "fold_ms", "convert_ms", "to_device_ms")
            self.load_times["to_first_inference_ms"] = first + sum(self.load_times.get(k, 0.0) for k in parts)
        if m.options.get("cuda_graph"):
            self._capture()

    def keep_inputs(self) -> Any:
        """The prepared host/device/output buffers as a slot :meth:`use_inputs` switches back to with no
        new allocation (shape mixes keep one per shape); None with a CUDA graph, whose capture is tied
        to one shape (the caller re-prepares instead)."""
        return self._run.keep()

    def use_inputs(self, slot: Any) -> None:
        """Run on the buffers of a slot from :meth:`keep_inputs`."""
        self._run.use(slot)

    def _capture(self) -> None:
        """Capture the module call on the backend's stream into a CUDA graph (its outputs stay fixed
        tensors that ``infer_once`` copies out); an ONNX model is converted again with its shapes fixed
        first; a model that cannot be captured is refused."""
        if self._model.kind == "onnx2torch":
            self._model.specialize(self.shapes)
        self.load_times["graph_capture_ms"] = self._run.capture()

    @property
    def graph_captured(self) -> bool:
        """A CUDA graph of the module call was captured (``cuda_graph``)."""
        return self._run.captured is not None

    def use_graph(self, on: bool) -> None:
        """Replay the captured graph (``on``) or call the module itself (eager), on the same stream,
        buffers and shapes: the two variants of a ``--cuda-graph`` run (``profiling.variants``)."""
        self._run.use_graph(on)

    # -- running ---------------------------------------------------------------------------------
    def infer_once(self) -> InferTiming:
        """CUDA: H2D, module, D2H on the stream between CUDA events. CPU: the module call."""
        self._model.require()
        return self._run.infer_once()

    def outputs(self) -> list[np.ndarray]:
        """Host copies of the outputs of the last inference (CUDA), or of a fresh run (CPU)."""
        return self._run.outputs()

    # -- streams and time origin (scenarios) -------------------------------------------------------
    def new_stream(self) -> Any:
        """A new CUDA stream on this backend's device (None on CPU)."""
        return self._run.new_stream()

    def use_stream(self, stream: Any | None) -> None:
        """Run on ``stream`` (one shared with other models); None goes back to the backend's own."""
        self._run.use_stream(stream)

    def make_time_origin(self) -> Any:
        """Record and wait for an event on this device: the zero of ``stage_marks`` (None on CPU)."""
        return self._run.make_time_origin()

    def set_time_origin(self, event: Any | None) -> None:
        """After each inference, ``stage_marks`` holds its four event times in ms since ``event``."""
        self._run.set_time_origin(event)

    # -- layers and memory -----------------------------------------------------------------------
    def per_layer_profile(self, iterations: int) -> list[LayerTime]:
        """Per leaf submodule (onnx2torch keeps one per ONNX node): on CUDA, the GPU time of the
        kernels it launched (:meth:`kernel_profile`); on the CPU, its median time, timed by forward
        hooks with a device synchronisation around each (slower than a plain run, comparable between
        layers)."""
        m = self._model
        m.require()
        if not self._host_in:
            raise BackendError("prepare_inputs must run before per_layer_profile")
        if m.kind != "onnx2torch":
            raise BackendError(
                f"{m.path}: per-layer PyTorch times need an ONNX model (onnx2torch keeps one submodule per node); "
                f"a {m.kind} file has no layer structure to hook"
            )
        if self.cuda and not os.environ.get("TRTSTUDIO_TORCH_HOOK_TIMES"):
            return self.kernel_profile(iterations)
        return self._recorder().hook_times(iterations)

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
        self._model.require()
        rows, self.kernel_coverage = self._recorder().kernel_profile(iterations, self.infer_once)
        return rows

    def _recorder(self) -> LayerRecorder:
        """A recorder of the loaded module's leaves, calling it on the prepared buffers."""
        m, run = self._model, self._run
        return LayerRecorder(m.torch, m.device, m.cuda, m.module, m.onnx_model if m.kind == "onnx2torch" else None,
                             lambda: run.call(run.dev_in), self.notes)

    def memory(self) -> dict[str, int]:
        """Model file size, host I/O buffers and, on CUDA, the caching allocator's statistics."""
        return self._run.memory()

    def close(self) -> None:
        """Drop the module and every buffer and hand the stream back for reuse; cached device memory
        stays with torch's allocator."""
        self._run.close()
        self._model.module = None
