"""ONNX Runtime backend (CPU, CUDA and TensorRT execution providers) with per-node profiles.

Per-layer times come from ORT's own profiler (``SessionOptions.enable_profiling``): its JSON holds one
``"cat": "Node"`` event per executed kernel with ``args.op_name``, ``args.provider`` and ``dur`` in
microseconds. ORT renames nodes it fuses or re-lays out (``r_nchwc`` for a Conv+Relu turned NCHWc,
compiled EP nodes such as ``TensorrtExecutionProvider_TRTKernel_graph_...``), so names are mapped back
to the model's ONNX nodes through the optimized graph ORT saves: the original nodes whose results
the optimized node now produces, walking back through tensors the optimization removed.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.backends.base import InferTiming, InputSpec, LayerTime, require_module, resolve_shape
from trtstudio.backends.inputs import build_feeds
from trtstudio.backends.model_io import OnnxModel, TensorDecl, read_onnx
from trtstudio.backends.shapes import explain_run_failure, run_plan
from trtstudio.errors import BackendError, InputError

_ORT_TYPES = {
    "tensor(float)": "float32",
    "tensor(float16)": "float16",
    "tensor(double)": "float64",
    "tensor(int8)": "int8",
    "tensor(int16)": "int16",
    "tensor(int32)": "int32",
    "tensor(int64)": "int64",
    "tensor(uint8)": "uint8",
    "tensor(uint16)": "uint16",
    "tensor(uint32)": "uint32",
    "tensor(uint64)": "uint64",
    "tensor(bool)": "bool",
}
_FEEDABLE = frozenset(_ORT_TYPES.values())
# Nodes ORT inserts itself (layout changes, copies between devices): no ONNX node behind them.
_INSERTED_OPS = {"ReorderInput", "ReorderOutput", "MemcpyFromHost", "MemcpyToHost"}
_CPU = "CPUExecutionProvider"


class OrtBackend:
    """onnxruntime ``InferenceSession``; options: ``threads`` (intra-op threads), ``default_dim`` (for
    dynamic dims, 1), ``optimization`` (disable, basic, extended, all: ORT's graph optimization level)."""

    def __init__(self, name: str = "ort", pip: str = "pip install onnxruntime", providers: list[str] | None = None) -> None:
        self.name = name
        self.notes: list[str] = []
        self._pip = pip
        self._providers = list(providers or [_CPU])
        self._path: Path | None = None
        self._options: dict[str, Any] = {}
        self._session: Any = None
        self._feeds: dict[str, np.ndarray] = {}
        self._outputs: list[str] = []
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.shape_plan: Any = None  # the ShapePlan of the last prepare_inputs (trtstudio.backends.shapes)
        self._inputs: list[TensorDecl] = []  # the model's inputs (backends.model_io), read with the model
        self._model: OnnxModel | None = None  # the model read at load, kept until the first plan is made

    # -- loading ---------------------------------------------------------------------------------
    def _ort(self) -> Any:
        return require_module("onnxruntime", self.name, self._pip)

    def _session_options(self, profile_prefix: str | None = None, optimized_path: str | None = None) -> Any:
        ort = self._ort()
        so = ort.SessionOptions()
        threads = self._options.get("threads")
        if threads:
            so.intra_op_num_threads = int(threads)
        if profile_prefix:
            so.enable_profiling = True
            so.profile_file_prefix = profile_prefix
        if optimized_path:
            so.optimized_model_filepath = optimized_path
        level = self._options.get("optimization")
        if level:
            levels = {
                "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
                "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
                "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
                "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
            }
            if level not in levels:
                raise InputError(None, f"optimization must be one of {', '.join(levels)}, not '{level}'")
            so.graph_optimization_level = levels[level]
        so.log_severity_level = 3
        return so

    def _make_session(self, so: Any) -> Any:
        ort = self._ort()
        providers: list[Any] = list(self._providers)
        if self._options.get("device") is not None:  # --device N: the GPU the CUDA/TensorRT providers use
            providers = [p if p == _CPU else (p, {"device_id": int(self._options["device"])}) for p in providers]
        try:
            return ort.InferenceSession(str(self._path), so, providers=providers)
        except Exception as exc:  # ORT raises its own Fail/InvalidGraph/... types
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            if "protobuf" in text.lower() or "invalid" in text.lower() or "load model" in text.lower():
                raise InputError(self._path, f"onnxruntime cannot load the model: {text}") from None
            raise BackendError(f"{self._path}: onnxruntime failed to create a session: {text}") from None

    def load(self, path: str | os.PathLike[str], options: dict[str, Any]) -> None:
        """Create the session; a requested GPU provider that this onnxruntime lacks is a BackendError."""
        ort = self._ort()
        self._path = Path(path)
        self._options = dict(options)
        available = ort.get_available_providers()
        wanted = [p for p in self._providers if p != _CPU]
        missing = [p for p in wanted if p not in available]
        if missing:
            raise BackendError(
                f"backend '{self.name}' needs {', '.join(missing)}, which this onnxruntime "
                f"({ort.__version__}: {', '.join(available)}) lacks; install: {self._pip}"
            )
        self._session = self._make_session(self._session_options())
        try:
            self._model = read_onnx(self._path)
        except InputError:  # a model only onnxruntime reads (e.g. ORT format): its session's view
            self._model = None
        self._inputs = self._model.inputs if self._model is not None else []
        self._outputs = [o.name for o in self._session.get_outputs()]
        active = self._session.get_providers()
        if wanted and wanted[0] not in active:
            self.notes.append(f"{wanted[0]} did not start; running on {', '.join(active)}")

    def input_specs(self) -> list[InputSpec]:
        """The model's inputs (backends.model_io: symbolic dims are str, unknown dims '?'); for a file
        only onnxruntime reads, as its session reports them."""
        specs: list[InputSpec] = []
        if self._model is None and not self._inputs:
            for i in self._require().get_inputs():
                dtype = _ORT_TYPES.get(i.type)
                if dtype is None:
                    raise InputError(self._path, f"input '{i.name}' has type {i.type}, which trtstudio cannot feed")
                specs.append({"name": i.name, "dtype": dtype,
                              "shape": [d if isinstance(d, int) else (d or "?") for d in (i.shape or [])]})
            return specs
        for t in self._inputs:
            if t.dtype not in _FEEDABLE:
                raise InputError(self._path, f"input '{t.name}' has type {t.onnx_type}, which trtstudio cannot feed")
            specs.append({"name": t.name, "dtype": t.dtype, "shape": list(t.dims)})
        return specs

    def prepare_inputs(self, shapes: dict[str, tuple[int, ...]], data: dict[str, Any] | None = None) -> None:
        """Fix shapes (dynamic dims from ``shapes`` or ``default_dim``, 1) and make the feeds."""
        default_dim = int(self._options.get("default_dim", 1))
        self.shape_plan = run_plan(self._model or self._path, shapes, data)
        self._model = None  # planned: the proto is not kept beside the session
        feeds, notes = build_feeds(
            self.input_specs(), shapes, data, lambda spec, req: resolve_shape(spec, req, default_dim), plan=self.shape_plan
        )
        self._feeds = feeds
        self.shapes = {k: tuple(v.shape) for k, v in feeds.items()}
        self.notes.extend(n for n in notes if n not in self.notes)

    def keep_inputs(self) -> Any:
        """The prepared inputs as a slot that :meth:`use_inputs` switches back to with no new
        buffer (shape mixes keep one per shape; ``prepare_inputs`` makes new arrays, not reusing these)."""
        return (self._feeds, dict(self.shapes), self.shape_plan)

    def use_inputs(self, slot: Any) -> None:
        """Run on the inputs of a slot from :meth:`keep_inputs`."""
        self._feeds, shapes, self.shape_plan = slot
        self.shapes = dict(shapes)

    # -- running ---------------------------------------------------------------------------------
    def _require(self) -> Any:
        if self._session is None:
            raise BackendError(f"backend '{self.name}' has no model loaded")
        return self._session

    def infer_once(self) -> InferTiming:
        """One ``session.run``; ORT does not split out transfers, so only the total is known."""
        session = self._require()
        t0 = time.perf_counter()
        try:
            session.run(self._outputs, self._feeds)
        except Exception as exc:  # a shape problem gets the plan's hint (dims guessed, flag to set)
            hint = explain_run_failure(self.shape_plan, exc)
            if hint is None:
                raise
            raise BackendError(hint) from exc
        return InferTiming((time.perf_counter() - t0) * 1e3)

    def run_outputs(self) -> list[np.ndarray]:
        """Outputs of one inference on the prepared inputs (for accuracy checks)."""
        return list(self._require().run(self._outputs, self._feeds))

    def per_layer_profile(self, iterations: int) -> list[LayerTime]:
        """Median time per executed node over ``iterations`` runs of a profiling session."""
        if not self._feeds:
            raise BackendError("prepare_inputs must run before per_layer_profile")
        with tempfile.TemporaryDirectory(prefix="trtstudio-ort-") as tmp:
            optimized = os.path.join(tmp, "optimized.onnx")
            prefix = os.path.join(tmp, "prof")
            try:
                session = self._make_session(self._session_options(prefix, optimized))
            except BackendError:  # compiled EP nodes cannot be saved: profile without the optimized graph
                optimized = ""
                session = self._make_session(self._session_options(prefix))
            for _ in range(max(1, iterations) + 1):  # one extra: the first run is dropped as warm-up
                session.run(self._outputs, self._feeds)
            trace_path = session.end_profiling()
            with open(trace_path, encoding="utf-8") as f:
                events = json.load(f)
            opt_model = _load_onnx(optimized) if optimized and os.path.exists(optimized) else None
        return parse_ort_profile(events, _load_onnx(str(self._path)), opt_model, self._providers)

    def memory(self) -> dict[str, int]:
        """ORT exposes no allocator statistics through Python; the model file size only."""
        return {"model_file_bytes": self._path.stat().st_size} if self._path else {}

    def close(self) -> None:
        """Drop the session and the feeds."""
        self._session = None
        self._feeds = {}


def _load_onnx(path: str) -> Any:
    import onnx

    try:
        return onnx.load(path, load_external_data=False)
    except Exception as exc:  # onnx raises DecodeError and others
        raise InputError(path, f"not a readable ONNX model: {exc}") from None


def parse_ort_profile(
    events: list[dict[str, Any]], model: Any, optimized: Any | None, providers: list[str]
) -> list[LayerTime]:
    """Turn ORT profiler events into per-layer rows: median ``dur`` per node (first run dropped),
    ``onnx_nodes`` mapped to the original model, ``fallback`` for CPU nodes when a GPU EP was asked."""
    durations: dict[str, list[float]] = {}
    info: dict[str, tuple[str, str]] = {}
    for ev in events:
        if ev.get("cat") != "Node" or not str(ev.get("name", "")).endswith("_kernel_time"):
            continue
        name = ev["name"][: -len("_kernel_time")]
        args = ev.get("args", {})
        durations.setdefault(name, []).append(float(ev.get("dur", 0)) / 1e3)
        info.setdefault(name, (str(args.get("op_name", "")), str(args.get("provider", ""))))
    mapper = NodeMapper(model, optimized)
    gpu_asked = any(p != _CPU for p in providers)
    rows: list[LayerTime] = []
    for name, times in durations.items():
        op, provider = info[name]
        kept = times[1:] if len(times) > 1 else times
        rows.append(
            {
                "name": name,
                "op_type": op,
                "onnx_nodes": mapper.onnx_nodes(name, op),
                "provider": provider,
                "time_ms": float(statistics.median(kept)),
                "fallback": gpu_asked and provider == _CPU,
            }
        )
    mapper.assign_unclaimed(rows)
    return rows


class NodeMapper:
    """Maps names of nodes ORT executed back to the ONNX nodes of the model the user gave.

    Each optimized node is anchored to original tensors: its outputs where they kept their names, and
    its own name where ORT named it after the tensor it produces (``<tensor>_nchwc``). The ONNX nodes
    behind it are the producers of those tensors plus, walking back, the producers of inputs that the
    optimization removed (a BatchNormalization and Conv folded into a fused Conv+Clip), stopping at
    tensors that still exist or that anchor another optimized node.
    """

    _SUFFIX = re.compile(r"(_nchwc|_token_\d+|_fused\S*)$")

    def __init__(self, model: Any, optimized: Any | None) -> None:
        graph = model.graph
        self.names = [n.name for n in graph.node]
        self._order = {n: i for i, n in enumerate(self.names)}
        self._name_set = set(self.names)
        self._by_name = {n.name: n for n in graph.node}
        self._producer = {out: n.name for n in graph.node for out in n.output if out}
        self._opt_nodes: dict[str, Any] = {}
        self._opt_tensors: set[str] = set()
        self._anchors: dict[str, list[str]] = {}
        if optimized is not None:
            og = optimized.graph
            self._opt_nodes = {n.name: n for n in og.node}
            self._opt_tensors = {t for n in og.node for t in (*n.input, *n.output) if t}
            self._opt_tensors |= {i.name for i in og.input} | {i.name for i in og.initializer}
            for n in og.node:
                if n.op_type in _INSERTED_OPS:
                    continue
                found = [self._original_tensor(t) for t in (*n.output, n.name) if t]
                self._anchors[n.name] = list(dict.fromkeys(t for t in found if t))
        self._anchor_set = {t for ts in self._anchors.values() for t in ts}
        # forward fusion: an Add/Sum folded into the node that produces one of its inputs (NCHWc Conv+Sum)
        self._forward: dict[str, list[str]] = {}
        consumers: dict[str, list[str]] = {}
        for n in graph.node:
            for i in n.input:
                consumers.setdefault(i, []).append(n.name)
        for opt_name, tensors in self._anchors.items():
            for t in tensors:
                for c in consumers.get(t, []):
                    cn = self._by_name[c]
                    if (
                        cn.op_type in ("Add", "Sum")
                        and len(consumers[t]) == 1  # fusable only when nothing else reads the producer's result
                        and c not in self._opt_nodes
                        and not any(o in self._anchor_set for o in cn.output)
                    ):
                        self._forward.setdefault(opt_name, []).append(c)
                        self._anchor_set.update(o for o in cn.output if o)

    def _original_tensor(self, tensor: str) -> str | None:
        t = tensor
        while t:
            if t in self._producer:
                return t
            stripped = self._SUFFIX.sub("", t)
            if stripped == t:
                return None
            t = stripped
        return None

    def _walk_back(self, tensors: list[str]) -> list[str]:
        found: list[str] = []
        stack = list(tensors)
        seen: set[str] = set()
        while stack:
            t = stack.pop()
            node_name = self._producer.get(t)
            if node_name is None or node_name in seen:
                continue
            seen.add(node_name)
            found.append(node_name)
            stack.extend(
                i
                for i in self._by_name[node_name].input
                if i and i not in self._opt_tensors and i not in self._anchor_set
            )
        return sorted(found, key=lambda n: self._order[n])

    def onnx_nodes(self, name: str, op_type: str) -> list[str]:
        """ONNX node names behind one executed node ([] for nodes ORT inserted)."""
        if op_type in _INSERTED_OPS:
            return []
        if name in self._anchors:
            found = self._walk_back(self._anchors[name])
            found = sorted({*found, *self._forward.get(name, [])}, key=lambda n: self._order[n])
            if name in self._name_set and name not in found:
                found.insert(0, name)
            if found:
                return found
        if name in self._name_set:
            return [name]
        tensor = self._original_tensor(name)
        if tensor is not None:
            return [self._producer[tensor]]
        # fused names that embed original names ("/conv/Conv_fused_..."): longest match first
        hits = [n for n in self._name_set if n and n in name]
        return sorted(hits, key=len, reverse=True)[:1]

    def assign_unclaimed(self, rows: list[LayerTime]) -> None:
        """Give ONNX nodes no row claimed to a row: a node fused forward into a claimed producer (an
        Add folded into the Conv before it) joins that producer's row; else a single compiled-EP row
        with no mapping takes them all."""
        claimed = {n: r for r in rows for n in r["onnx_nodes"]}
        if self._opt_tensors:
            for name in self.names:
                node = self._by_name[name]
                if name in claimed or any(o in self._opt_tensors for o in node.output if o):
                    continue
                owner = next((claimed[p] for i in node.input if (p := self._producer.get(i)) in claimed), None)
                if owner is not None:
                    owner["onnx_nodes"] = sorted([*owner["onnx_nodes"], name], key=lambda n: self._order[n])
                    claimed[name] = owner
        empty = [r for r in rows if not r["onnx_nodes"] and r.get("op_type") not in _INSERTED_OPS]
        if len(empty) == 1:
            empty[0]["onnx_nodes"] = [n for n in self.names if n not in claimed]
