"""The torch backend's per-layer recording: each leaf module's time (onnx2torch keeps one per ONNX node),
from forward hooks around a synchronised call, or, on CUDA, the kernels it launched (``torch.profiler``
ranges, and CUPTI kernel activity where ``cupti-python`` is installed), with each leaf's ONNX node and
op type.

:class:`LayerRecorder` knows the module and two calls it is handed (one eager inference on the prepared
buffers, one timed inference as the run does); :class:`~trtstudio.backends.torch_backend.TorchBackend`
builds one per recording.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from trtstudio.backends.base import InferTiming, LayerTime
from trtstudio.backends.torch_model import first_line


class LayerRecorder:
    """Per-layer times of one loaded module on its device.

    ``call`` runs one eager inference on the prepared buffers; ``onnx_model`` is the ONNX model the module
    was converted from (None for a module of another kind: its leaves are named by their class);
    ``notes`` is the backend's list, appended to."""

    def __init__(self, torch: Any, device: Any, cuda: bool, module: Any, onnx_model: Any,
                 call: Callable[[], Any], notes: list[str]) -> None:
        self.torch, self.device, self.cuda = torch, device, cuda
        self.module, self.onnx_model = module, onnx_model
        self.call, self.notes = call, notes

    def hook_times(self, iterations: int) -> list[LayerTime]:
        """Each leaf's median time, timed by forward hooks with a device synchronisation around each
        (slower than a plain run, comparable between layers); the first call is left out."""
        torch = self.torch
        leaves = self.leaves()
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
                self.call()
        finally:
            for h in handles:
                h.remove()
        provider = f"PyTorch ({self.device})"
        onnx_names = self.onnx_node_names()
        ops = self.op_types()
        return [
            {"name": name, "onnx_nodes": [onnx_names[name.strip("/")]] if name.strip("/") in onnx_names else [],
             "op_type": ops.get(name), "provider": provider,
             "time_ms": float(np.median(ts[1:] if len(ts) > 1 else ts)), "fallback": False}
            for name, ts in times.items()
        ]

    def kernel_profile(self, iterations: int, infer: Callable[[], InferTiming]) -> tuple[list[LayerTime], dict[str, Any]]:
        """The CUDA kernels each leaf launched, and how they were recorded (the backend's
        ``kernel_coverage``); see :meth:`TorchBackend.kernel_profile`. ``infer`` is one inference as
        the timed run does it (the CUDA graph replayed where one was captured)."""
        from trtstudio.backends import cupti_trace
        from trtstudio.engine.kineto import kernel_sequence, trace_table
        from trtstudio.engine.nsys import KernelTable

        torch = self.torch
        self.call()  # warm: first-call kernels (autotuning, lazy init) left out
        torch.cuda.synchronize(self.device)
        n = max(1, iterations)
        light = cupti_trace.available() and not os.environ.get("TRTSTUDIO_TORCH_PROFILER_KERNELS")
        events = self.traced_events(1 if light else n)
        samples: list[float] = []
        table: KernelTable | None = None
        in_order_share: float | None = None
        if light:
            expected = kernel_sequence(events)
            try:
                with cupti_trace.KernelRecorder() as rec:
                    samples = [infer().total_ms for _ in range(n)]
            except Exception as exc:  # noqa: BLE001 - cupti's own errors (another subscriber, old driver)
                self.notes.append(f"CUPTI could not record kernels ({first_line(exc)}): traced by torch.profiler")
                light = False
                events = self.traced_events(n)
            else:
                table, in_order_share = cupti_trace.table_by_order(expected, rec.kernels)
        if table is None:
            table = trace_table(events, kinds=("user_annotation",))
        how = ("CUPTI kernel activity, put on nodes by the launch order of one traced inference" if light
               else "torch.profiler")
        coverage = {"total_ms": table.total_ms / n, "attributed_ms": table.attributed_ms / n,
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
        onnx_names = self.onnx_node_names()
        ops = self.op_types()
        by_range = {r["name"]: r for r in table.ranges}
        rows: list[LayerTime] = []
        for name, _mod in self.leaves():
            r = by_range.get(f"trtstudio::{name}")
            node = onnx_names.get(name.strip("/"))
            rows.append({"name": name, "onnx_nodes": [node] if node else [], "op_type": ops.get(name),
                         "provider": provider, "time_ms": r["ms"] / n if r else 0.0, "fallback": False, "timing": "kernels",
                         "kernels": [{"name": k["name"], "count": k["count"] / n, "ms": k["ms"] / n,
                                      **({"launch": k["launch"]} if k.get("launch") else {})}
                                     for k in (r["kernels"] if r else [])]})
        return rows, coverage

    def leaves(self) -> list[tuple[str, Any]]:
        """The module's leaf submodules (onnx2torch keeps one per ONNX node), by name."""
        return [(n, m) for n, m in self.module.named_modules() if n and not list(m.children())]

    def traced_events(self, n: int) -> list[Any]:
        """The Chrome-trace events of ``n`` eager inferences under ``torch.profiler`` (CPU and CUDA
        activity), each leaf module inside a ``record_function`` range ``trtstudio::NAME``."""
        import tempfile

        torch = self.torch
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
        for name, mod in self.leaves():
            handles.append(mod.register_forward_pre_hook(pre(name)))
            handles.append(mod.register_forward_hook(post))
        try:
            # torch.profiler's own warnings (Kineto's, "profiler already enabled") are the tool's
            # business, not the terminal's: kept as notes, once each
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                    for _ in range(n):
                        self.call()
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
            note = f"torch.profiler: {first_line(w.message)}"  # type: ignore[arg-type]  # a Warning instance
            if note not in self.notes:
                self.notes.append(note)
        return events

    def op_types(self) -> dict[str, str]:
        """Each leaf module's op: its ONNX node's op type (onnx2torch keeps one module per node), else
        the module's class (``Conv2d``, ``ReLU``)."""
        by_module: dict[str, str] = {}
        if self.onnx_model is not None:
            by_module = {(n.domain + n.name).replace(".", "/").strip("/"): n.op_type for n in self.onnx_model.graph.node}
        return {name: by_module.get(name.strip("/")) or type(mod).__name__ for name, mod in self.leaves()}

    def onnx_node_names(self) -> dict[str, str]:
        """Each leaf's ONNX node name, by the leaf's name without its leading '/' ({} without a model)."""
        if self.onnx_model is None:
            return {}
        nodes = self.onnx_model.graph.node
        # onnx2torch names submodules after the nodes (domain first; '.' becomes '/'); the module path
        # comes back without the leading '/'
        return {(n.domain + n.name).replace(".", "/").strip("/"): n.name for n in nodes}
