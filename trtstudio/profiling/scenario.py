"""Production scenarios, Qt-free: contention, load/unload cycles, soak, cold start.

- **Contention**: N models (or N copies of one) each run alone, then all at once, each in its own
  worker thread; on CUDA each on a dedicated stream or all on one shared stream per device;
  optionally with CPU work per inference standing in for pre/post-processing. Reports each model's
  latency alone and together, the slowdown of median and p99, jitter and throughput.
- **Cycles**: load, run K inferences, unload, M times over a mix of models; after each cycle NVML
  used, CUDA free, the largest allocatable block and host RSS; a verdict: leak or fragmentation.
- **Soak**: one model for T minutes, a summary per window (latency, throughput, memory), drift of the
  first vs the last window and the memory slope; its own memory stays bounded.
- **Cold start**: load (deserialize, context, inputs) and first-inference time per model.

Faults end a scenario cleanly: a model that fails to load, runs out of memory or raises, or a stop
request; everything measured so far is kept, and ``failure`` names the model, phase and cycle.
Every worker checks the shared ``ScenarioState`` between inferences.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.backends.base import Backend, open_backend
from trtstudio.profiling.leak import leak_check
from trtstudio.profiling.runner import RunState
from trtstudio.profiling.samples import ExactStore, SampleBuffer
from trtstudio.profiling.scenario_memory import (
    DEFAULT_CAP,
    VerdictRules,
    cycle_verdict,
    host_rss,
    malloc_trim,
    nvml_used,
    snapshot,
)
from trtstudio.profiling.stats import latency_stats
from trtstudio.profiling.timeline import COMPUTE, D2H, H2D, HOST, Timeline

SCHEMA = "trtstudio.scenario/1"
KINDS = ("contention", "cycles", "soak", "coldstart")
STREAM_MODES = ("dedicated", "shared")
_GPU_BACKENDS = ("torch-cuda", "tensorrt", "rtx", "ort-cuda", "ort-trt")
_TORCH_SUFFIXES = (".pt2", ".pt", ".pth", ".ts", ".torchscript", ".jit")
_STAT_KEYS = ("count", "mean", "median", "p90", "p99", "min", "max", "std", "cov", "jitter_ms")


@dataclass
class ModelSpec:
    """One model of a scenario: file, backend (auto: by suffix), CUDA device, input shapes, options."""

    path: str
    backend: str = "auto"
    device: int | None = None
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    name: str = ""

    def label(self) -> str:
        """The name shown for this model (its file name unless named)."""
        return self.name or Path(self.path).name

    def backend_name(self) -> str:
        """The backend that runs it: ort for .onnx, torch for PyTorch files, tensorrt otherwise."""
        if self.backend != "auto":
            return self.backend
        suffix = Path(self.path).suffix.lower()
        if suffix == ".onnx":
            return "ort"
        return "torch" if suffix in _TORCH_SUFFIXES else "tensorrt"


Opener = Callable[[ModelSpec], Backend]


def open_model(spec: ModelSpec) -> Backend:
    """Open ``spec`` with its backend and prepare its inputs (the default opener of every scenario)."""
    options = dict(spec.options)
    if spec.device is not None:
        options["device"] = spec.device
    backend = open_backend(spec.backend_name(), spec.path, **options)
    try:
        backend.prepare_inputs(dict(spec.shapes))
    except BaseException:
        backend.close()
        raise
    return backend


def unique_labels(specs: Sequence[ModelSpec]) -> list[str]:
    """Labels made unique by a '#2', '#3' suffix (the same model twice in a contention scenario)."""
    seen: dict[str, int] = {}
    out = []
    for s in specs:
        base = s.label()
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base} #{seen[base]}")
    return out


@dataclass
class ScenarioFailure:
    """What ended a scenario early: which model, in which phase and cycle, and why."""

    model: str
    phase: str
    message: str
    cycle: int | None = None
    kind: str = "error"  # error, oom, load

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return {"model": self.model, "phase": self.phase, "cycle": self.cycle, "kind": self.kind, "message": self.message}

    def one_line(self) -> str:
        """'model m.onnx failed in cycle 7 (load): ...'."""
        where = f" in cycle {self.cycle}" if self.cycle is not None else ""
        what = " (out of memory)" if self.kind == "oom" else ""
        return f"model {self.model} failed{where} during {self.phase}{what}: {self.message}"


def failure_of(exc: BaseException, model: str, phase: str, cycle: int | None = None) -> ScenarioFailure:
    """A ScenarioFailure for ``exc``; out-of-memory errors (host or device) are kind 'oom'."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    oom = isinstance(exc, MemoryError) or "OutOfMemory" in type(exc).__name__ or "out of memory" in text.lower()
    kind = "oom" if oom else ("load" if phase == "load" else "error")
    prefix = "" if type(exc).__name__ in ("BackendError", "InputError") else f"{type(exc).__name__}: "
    return ScenarioFailure(model, phase, prefix + text, cycle, kind)


class ScenarioState(RunState):
    """Stop flag shared by every worker, plus what a live view reads: per-model sample buffers and a
    status dict (phase, cycle or lanes; named apart from TaskState.progress, the event method)."""

    def __init__(self, live_capacity: int = 20_000) -> None:
        super().__init__()
        self.live_capacity = live_capacity
        self.live: dict[str, SampleBuffer] = {}
        self.status: dict[str, Any] = {}
        self.cycles: list[dict[str, Any]] = []  # cycle records so far (cycles), window summaries (soak)

    def buffer(self, label: str) -> SampleBuffer:
        """The live buffer of one model (made on first use)."""
        buf = self.live.get(label)
        if buf is None:
            buf = self.live[label] = SampleBuffer(self.live_capacity)
        return buf


@dataclass
class ScenarioResult:
    """Everything a scenario measured; ``to_dict`` is the ``trtstudio.scenario/1`` document."""

    kind: str
    models: list[dict[str, Any]] = field(default_factory=list)
    cycles: list[dict[str, Any]] = field(default_factory=list)
    verdict: dict[str, Any] | None = None
    windows: list[dict[str, Any]] = field(default_factory=list)
    failure: ScenarioFailure | None = None
    stopped: bool = False
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    timeline: Timeline | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (schema ``trtstudio.scenario/1``)."""
        doc: dict[str, Any] = {"schema": SCHEMA, "kind": self.kind, "models": self.models}
        if self.kind == "cycles":
            doc["cycles"] = self.cycles
            doc["verdict"] = self.verdict
        if self.kind == "soak":
            doc["windows"] = self.windows
        doc.update(self.extra)
        if self.timeline is not None:
            doc["timeline"] = self.timeline.summary()
        doc.update(stopped=self.stopped, failure=None if self.failure is None else self.failure.to_dict(),
                   notes=list(self.notes))
        return doc


def stats_of(values: np.ndarray, active_s: float, parts: dict[str, float | None] | None = None) -> dict[str, Any]:
    """Latency summary of one model in one phase: count, mean, median, p90, p99, min, max, std, cov,
    jitter (p99 - p50), throughput per second and the mean H2D/compute/D2H/enqueue where measured."""
    s = latency_stats(values)
    out: dict[str, Any] = {k: s.get(k) for k in _STAT_KEYS}
    out["throughput_per_s"] = (s.get("count", 0) / active_s) if active_s > 0 else 0.0
    for k, v in (parts or {}).items():
        if v is not None:
            out[k] = v
    return out


# -- contention ------------------------------------------------------------------------------------
@dataclass
class ContentionConfig:
    """Measured inferences per model and phase, warm-up, stream mode, CPU work per inference (ms),
    timeline recording, and a safety cap on samples per model (``iterations`` x ``max_factor``)."""

    iterations: int = 500
    warmup: int = 20
    streams: str = "dedicated"
    cpu_load_ms: float = 0.0
    timeline: bool = True
    timeline_capacity: int = 500_000
    max_factor: int = 50
    alone: bool = True
    gpu_sampling: bool = True


class _Group:
    """The lanes of one phase: counts lanes that reached their iterations; ends the phase when all have."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._done = 0
        self._lock = threading.Lock()
        self.all_done = threading.Event()
        self.barrier = threading.Barrier(n)

    def done_one(self) -> None:
        with self._lock:
            self._done += 1
            if self._done >= self.n:
                self.all_done.set()

    def abort(self) -> None:
        self.all_done.set()
        self.barrier.abort()


@dataclass
class _Lane:
    label: str
    backend: Backend
    live: SampleBuffer
    row: int | None
    exact: ExactStore = field(default_factory=lambda: ExactStore(cap=5_000_000))
    active_s: float = 0.0
    error: BaseException | None = None
    count: int = 0


def cpu_work(ms: float, scratch: np.ndarray) -> None:
    """Busy numpy work for ``ms`` (a stand-in for pre/post-processing; numpy releases the GIL)."""
    end = time.perf_counter() + ms / 1e3
    while time.perf_counter() < end:
        np.dot(scratch, scratch)


_FLUSH_INTERVALS = 192  # a worker hands its timeline intervals over in batches of about this many ...
_FLUSH_S = 0.05  # ... or at least this often, so a live view lags by no more


def _lane_loop(lane: _Lane, group: _Group, cfg: ContentionConfig, state: ScenarioState,
               timeline: Timeline | None, t_origin: float) -> None:
    """One model's worker: warm up, wait for the others, measure until every lane reached its count.

    The measured loop does what the plain runner's does (one ``infer_once``, a live sample, an exact
    sample) plus the timeline's intervals, which are gathered in a local list and handed to the
    timeline in batches; lookups are resolved before the loop."""
    backend, perf = lane.backend, time.perf_counter
    infer = backend.infer_once
    live_append, exact_add, row = lane.live.append, lane.exact.add, lane.row
    stop_requested, all_done = state.is_stop_requested, group.all_done.is_set
    scratch = np.ones((96, 96), np.float32) if cfg.cpu_load_ms > 0 else None
    cap = cfg.iterations * cfg.max_factor
    flush = partial(timeline.add_many, row) if timeline is not None and row is not None else None
    has_marks = hasattr(backend, "stage_marks")
    pending: list[tuple[int, float, float, int]] = []
    t0 = flushed = perf()
    n = 0
    try:
        for _ in range(cfg.warmup):
            if stop_requested():
                break
            infer()
        group.barrier.wait(timeout=600)
        t0 = flushed = perf()
        while not (stop_requested() or all_done()):
            if scratch is not None:
                cpu_work(cfg.cpu_load_ms, scratch)
            a = perf()
            timing = infer()
            now = perf()
            live_append(now - t_origin, timing.total_ms, timing.h2d_ms, timing.compute_ms, timing.d2h_ms)
            exact_add(timing.total_ms, timing.h2d_ms, timing.compute_ms, timing.d2h_ms, timing.enqueue_ms)
            if flush is not None:
                marks = backend.stage_marks if has_marks else None  # type: ignore[attr-defined]
                if marks is not None:
                    m0, m1, m2, m3 = marks
                    pending += ((H2D, m0, m1, n), (COMPUTE, m1, m2, n), (D2H, m2, m3, n))
                else:
                    pending.append((HOST, (a - t_origin) * 1e3, (now - t_origin) * 1e3, n))
                if len(pending) >= _FLUSH_INTERVALS or now - flushed >= _FLUSH_S:
                    flush(pending)
                    pending.clear()
                    flushed = now
            n += 1
            lane.count = n
            if n == cfg.iterations:
                group.done_one()
            if n >= cap:  # counted as done at ``iterations`` already
                break
    except threading.BrokenBarrierError:
        pass  # another lane failed before the start; it holds the error
    except Exception as exc:  # noqa: BLE001 - the phase ends, the error names this model
        lane.error = exc
        group.abort()
        state.request_stop()
    finally:
        lane.active_s = perf() - t0 if n else 0.0
        if flush is not None and pending:
            flush(pending)


def _run_phase(lanes: list[_Lane], cfg: ContentionConfig, state: ScenarioState, timeline: Timeline | None,
               t_origin: float) -> None:
    group = _Group(len(lanes))
    threads = [
        threading.Thread(target=_lane_loop, args=(lane, group, cfg, state, timeline, t_origin),
                         name=f"trtstudio-scenario-{lane.label}", daemon=True)
        for lane in lanes
    ]
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():
            t.join(timeout=0.2)
            if state.is_stop_requested():
                group.abort()


def _device_key(backend: Backend) -> str:
    dev = getattr(backend, "device", None)
    return str(dev) if dev is not None and getattr(backend, "cuda", False) else "cpu"


def share_streams(backends: Sequence[Backend], labels: Sequence[str], mode: str) -> list[str]:
    """In ``shared`` mode put every CUDA model of one device on one stream; returns notes on models
    that have no stream to share (CPU backends, backends without ``use_stream``)."""
    if mode not in STREAM_MODES:
        raise ValueError(f"streams must be one of {STREAM_MODES}")
    notes: list[str] = []
    if mode == "dedicated":
        return notes
    shared: dict[str, Any] = {}
    for b, label in zip(backends, labels, strict=True):
        if not hasattr(b, "use_stream") or not getattr(b, "cuda", False):
            notes.append(f"{label}: {b.name} runs without a CUDA stream here; the shared-stream mode does not apply to it")
            continue
        key = _device_key(b)
        if key not in shared:
            shared[key] = b.new_stream()  # type: ignore[attr-defined]
        b.use_stream(shared[key])  # type: ignore[attr-defined]
    return notes


def _set_time_origins(backends: Sequence[Backend]) -> None:
    origins: dict[str, Any] = {}
    for b in backends:
        if not hasattr(b, "set_time_origin") or not getattr(b, "cuda", False):
            continue
        key = _device_key(b)
        if key not in origins:
            origins[key] = b.make_time_origin()  # type: ignore[attr-defined]
        b.set_time_origin(origins[key])  # type: ignore[attr-defined]


def run_contention(
    specs: Sequence[ModelSpec],
    config: ContentionConfig | None = None,
    state: ScenarioState | None = None,
    opener: Opener = open_model,
) -> ScenarioResult:
    """Each model alone (one after another), then all together; see the module docstring."""
    cfg = config or ContentionConfig()
    state = state or ScenarioState()
    labels = unique_labels(specs)
    result = ScenarioResult("contention", extra={"streams": cfg.streams, "iterations": cfg.iterations,
                                                 "cpu_load_ms": cfg.cpu_load_ms})
    backends: list[Backend] = []
    sampler = None
    try:
        for spec, label in zip(specs, labels, strict=True):
            if state.is_stop_requested():
                result.stopped = True
                return result
            state.phase = f"load {label}"
            try:
                backends.append(opener(spec))
            except Exception as exc:  # noqa: BLE001
                result.failure = failure_of(exc, label, "load")
                return result
        for b, label in zip(backends, labels, strict=True):
            result.notes.extend(f"{label}: {n}" for n in getattr(b, "notes", []))
        result.notes.extend(share_streams(backends, labels, cfg.streams))
        timeline = Timeline(cfg.timeline_capacity) if cfg.timeline else None
        rows: list[int | None] = []
        for b, label in zip(backends, labels, strict=True):
            if timeline is None:
                rows.append(None)
                continue
            dev = _device_key(b)
            where = "shared stream" if cfg.streams == "shared" and dev != "cpu" else ("stream" if dev != "cpu" else "worker")
            rows.append(timeline.add_row(f"{label} ({where})", dev))
        result.timeline = timeline
        if cfg.gpu_sampling and any(_device_key(b) != "cpu" for b in backends):
            from trtstudio.profiling.scenario_devices import GpuSampler

            sampler = GpuSampler(interval_ms=100).start()
        _set_time_origins(backends)
        t_origin = time.perf_counter()
        per_model: list[dict[str, Any]] = [{"model": label, "path": s.path, "backend": b.name, "device": _device_key(b)}
                                           for s, label, b in zip(specs, labels, backends, strict=True)]
        phases: list[tuple[str, list[int]]] = []
        if cfg.alone:
            phases += [(f"alone {labels[i]}", [i]) for i in range(len(backends))]
        phases.append(("together", list(range(len(backends)))))
        for phase, idx in phases:
            if state.is_stop_requested():
                result.stopped = True
                break
            state.phase = phase
            lanes = [_Lane(labels[i], backends[i], state.buffer(labels[i]), rows[i]) for i in idx]
            state.status = {"phase": phase, "lanes": lanes}
            _run_phase(lanes, cfg, state, timeline, t_origin)
            key = "together" if phase == "together" else "alone"
            for i, lane in zip(idx, lanes, strict=True):
                per_model[i][key] = stats_of(lane.exact.values(), lane.active_s, lane.exact.part_means())
            failed = next((lane for lane in lanes if lane.error is not None), None)
            if failed is not None:
                result.failure = failure_of(failed.error, failed.label, phase)  # type: ignore[arg-type]
                break
            if state.is_stop_requested():
                result.stopped = True
                break
        for m in per_model:
            if "alone" in m and "together" in m:
                m["slowdown"] = _slowdown(m["alone"], m["together"])
        result.models = per_model
        result.extra["throughput"] = _totals(per_model)
        if sampler is not None:
            result.extra["gpus"] = sampler.summary()
        return result
    finally:
        if sampler is not None:
            sampler.stop()
        for b in backends:
            try:
                b.close()
            except Exception as exc:  # noqa: BLE001 - closing must not hide what was measured
                result.notes.append(f"{b.name}: close failed: {exc}")
        state.phase = "finished"


def _ratio(a: Any, b: Any) -> float | None:
    return float(b) / float(a) if a and b is not None and float(a) > 0 else None


def _slowdown(alone: dict[str, Any], together: dict[str, Any]) -> dict[str, Any]:
    """Together / alone for median and p99 latency (> 1: slower together), jitter change, and the
    throughput kept (together / alone)."""
    return {
        "median": _ratio(alone.get("median"), together.get("median")),
        "p99": _ratio(alone.get("p99"), together.get("p99")),
        "jitter_ms_change": (together["jitter_ms"] - alone["jitter_ms"])
        if together.get("jitter_ms") is not None and alone.get("jitter_ms") is not None else None,
        "throughput_kept": _ratio(alone.get("throughput_per_s"), together.get("throughput_per_s")),
    }


def _totals(models: list[dict[str, Any]]) -> dict[str, float]:
    alone = sum(m["alone"]["throughput_per_s"] for m in models if "alone" in m)
    together = sum(m["together"]["throughput_per_s"] for m in models if "together" in m)
    return {"alone_sum_per_s": alone, "together_per_s": together}


# -- load/unload cycles ----------------------------------------------------------------------------
@dataclass
class CyclesConfig:
    """M cycles of load -> K inferences -> unload per model; the memory reading after each cycle
    (largest-block probe within ``probe_budget_ms``, up to ``probe_cap_bytes``); ``release_cache``
    empties torch's cache and its per-stream cuBLAS workspaces after each cycle."""

    cycles: int = 10
    inferences: int = 50
    probe: bool = True
    probe_budget_ms: float = 50.0
    probe_cap_bytes: int | None = DEFAULT_CAP  # the probe answers "a block of at least this size?"
    release_cache: bool = False
    device: int | None = None  # None: the GPU the first model ran on, if any
    rules: VerdictRules = field(default_factory=VerdictRules)


def _gpu_of(backend: Backend, spec: ModelSpec) -> int | None:
    if getattr(backend, "cuda", False):
        return int(getattr(backend.device, "index", None) or 0)  # type: ignore[attr-defined]
    if spec.backend_name() in _GPU_BACKENDS:
        return spec.device or 0
    return None


def _torch_stats(device: int | None) -> dict[str, int]:
    torch = sys.modules.get("torch")
    if device is None or torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return {}
    from trtstudio.backends.torch_backend import torch_allocator_stats

    dev = torch.device("cuda", device)
    stats = torch_allocator_stats(torch, dev)
    # the largest block the caching allocator can hand out without asking CUDA for more
    inactive = [b["size"] for seg in torch.cuda.memory_snapshot() if seg.get("device") == device
                for b in seg.get("blocks", []) if b.get("state") == "inactive"]
    stats["torch_largest_inactive_block_bytes"] = int(max(inactive, default=0))
    return stats


def _release(release_cache: bool) -> None:
    gc.collect()
    malloc_trim()
    torch = sys.modules.get("torch")
    if release_cache and torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
        if clear is not None:  # PyTorch keeps a cuBLAS workspace per stream it has used (32 MiB each)
            clear()
        torch.cuda.empty_cache()


def run_cycles(
    specs: Sequence[ModelSpec],
    config: CyclesConfig | None = None,
    state: ScenarioState | None = None,
    opener: Opener = open_model,
    on_cycle: Callable[[dict[str, Any]], None] | None = None,
) -> ScenarioResult:
    """Cycle 0 is the reading before any load; cycles 1..M follow. See ``CyclesConfig``."""
    cfg = config or CyclesConfig()
    state = state or ScenarioState()
    labels = unique_labels(specs)
    result = ScenarioResult("cycles", models=[{"model": lb, "path": s.path, "backend": s.backend_name()}
                                              for s, lb in zip(specs, labels, strict=True)],
                            extra={"inferences": cfg.inferences})
    device = cfg.device if cfg.device is not None else next((s.device for s in specs if s.device is not None), None)
    if device is None and any(s.backend_name() in _GPU_BACKENDS for s in specs):
        device = 0

    def record(cycle: int, per_model: dict[str, Any]) -> None:
        _release(cfg.release_cache)
        rec: dict[str, Any] = {"cycle": cycle, **snapshot(device, cfg.probe, cfg.probe_budget_ms, cfg.probe_cap_bytes)}
        torch_stats = _torch_stats(device)
        if torch_stats:
            rec["torch"] = torch_stats
        rec["models"] = per_model
        result.cycles.append(rec)
        state.cycles.append(rec)
        if on_cycle is not None:
            on_cycle(rec)

    record(0, {})
    perf = time.perf_counter
    for cycle in range(1, cfg.cycles + 1):
        state.status = {"cycle": cycle, "cycles": cfg.cycles}
        per_model: dict[str, Any] = {}
        for spec, label in zip(specs, labels, strict=True):
            if state.is_stop_requested():
                break
            state.phase = f"cycle {cycle}: {label}"
            t0 = perf()
            try:
                backend = opener(spec)
            except Exception as exc:  # noqa: BLE001
                result.failure = failure_of(exc, label, "load", cycle)
                break
            load_ms = (perf() - t0) * 1e3
            if device is None:
                device = _gpu_of(backend, spec)
            lat: list[float] = []
            try:
                for _ in range(cfg.inferences):
                    if state.is_stop_requested():
                        break
                    lat.append(backend.infer_once().total_ms)
            except Exception as exc:  # noqa: BLE001
                result.failure = failure_of(exc, label, "run", cycle)
            finally:
                t1 = perf()
                try:
                    backend.close()
                except Exception as exc:  # noqa: BLE001
                    result.failure = result.failure or failure_of(exc, label, "unload", cycle)
                del backend
            per_model[label] = {
                "load_ms": load_ms, "first_ms": lat[0] if lat else None,
                "median_ms": float(np.median(lat[1:] if len(lat) > 1 else lat)) if lat else None,
                "inferences": len(lat), "unload_ms": (perf() - t1) * 1e3,
            }
            if result.failure is not None:
                break
        if per_model:
            record(cycle, per_model)
        if result.failure is not None:
            break
        if state.is_stop_requested():
            result.stopped = True
            break
    measured = [c for c in result.cycles if c["cycle"] > 0]
    result.verdict = cycle_verdict(measured, cfg.rules)
    result.extra["device"] = device
    probes = [c["largest_block_probe"]["elapsed_ms"] for c in result.cycles if "largest_block_probe" in c]
    if probes:
        result.extra["largest_block_probe_ms"] = {"median": float(np.median(probes)), "max": float(np.max(probes))}
    state.phase = "finished"
    return result


# -- soak ------------------------------------------------------------------------------------------
@dataclass
class SoakConfig:
    """``minutes`` of inference, a summary every ``window_s``; ``rate_hz`` paces inferences (None: as
    fast as they go). At most ``max_windows`` summaries are kept (every other middle one dropped
    beyond) and ``window_cap`` latencies per window (a uniform reservoir beyond), so the soak's own
    memory does not grow with its length."""

    minutes: float = 10.0
    window_s: float = 10.0
    rate_hz: float | None = None
    warmup: int = 10
    max_windows: int = 2000
    window_cap: int = 65_536
    device: int | None = None


def run_soak(
    spec: ModelSpec,
    config: SoakConfig | None = None,
    state: ScenarioState | None = None,
    opener: Opener = open_model,
    on_window: Callable[[dict[str, Any]], None] | None = None,
) -> ScenarioResult:
    """One model for ``minutes``; windows, drift (last vs first window) and memory slope."""
    cfg = config or SoakConfig()
    state = state or ScenarioState()
    label = spec.label()
    result = ScenarioResult("soak", models=[{"model": label, "path": spec.path, "backend": spec.backend_name()}],
                            extra={"minutes": cfg.minutes, "window_s": cfg.window_s, "rate_hz": cfg.rate_hz})
    try:
        backend = opener(spec)
    except Exception as exc:  # noqa: BLE001
        result.failure = failure_of(exc, label, "load")
        return result
    device = cfg.device if cfg.device is not None else _gpu_of(backend, spec)
    perf = time.perf_counter
    buf = np.empty(cfg.window_cap, np.float64)
    rng = np.random.default_rng(0)
    live = state.buffer(label)
    total = 0
    try:
        for _ in range(cfg.warmup):
            backend.infer_once()
        t_start = perf()
        t_end = t_start + cfg.minutes * 60.0
        period = 1.0 / cfg.rate_hz if cfg.rate_hz else 0.0
        next_t = t_start
        while perf() < t_end and not state.is_stop_requested():
            w0 = perf()
            w_end = min(w0 + cfg.window_s, t_end)
            n = 0
            while perf() < w_end and not state.is_stop_requested():
                if period:
                    next_t += period
                    delay = next_t - perf()
                    if delay > 0:
                        time.sleep(delay)
                    elif delay < -1.0:
                        next_t = perf()  # fell far behind: do not burst to catch up
                ms = backend.infer_once().total_ms
                if n < cfg.window_cap:
                    buf[n] = ms
                else:
                    j = int(rng.integers(0, n + 1))
                    if j < cfg.window_cap:
                        buf[j] = ms
                n += 1
                live.append(perf() - t_start, ms)
            total += n
            window = _window(len(result.windows), w0 - t_start, perf() - t_start, buf[: min(n, cfg.window_cap)], n, total, device)
            result.windows.append(window)
            state.cycles.append(window)
            if len(state.cycles) > cfg.max_windows:
                del state.cycles[: len(state.cycles) - cfg.max_windows]
            if on_window is not None:
                on_window(window)
            if len(result.windows) > cfg.max_windows:
                result.windows = [result.windows[0], *result.windows[1:-1][1::2], result.windows[-1]]
    except Exception as exc:  # noqa: BLE001
        result.failure = failure_of(exc, label, "run")
    finally:
        try:
            backend.close()
        except Exception:  # noqa: BLE001
            pass
    result.stopped = state.is_stop_requested()
    result.extra.update(soak_summary(result.windows))
    result.extra["inferences"] = total
    state.phase = "finished"
    return result


def _window(index: int, t0: float, t1: float, values: np.ndarray, n: int, total: int, device: int | None) -> dict[str, Any]:
    s = latency_stats(values)
    w: dict[str, Any] = {
        "window": index, "t_start_s": t0, "t_end_s": t1, "count": n, "inferences_total": total,
        "median": s.get("median"), "p99": s.get("p99"), "mean": s.get("mean"), "max": s.get("max"),
        "throughput_per_s": n / (t1 - t0) if t1 > t0 else 0.0, "host_rss_bytes": host_rss(trim=True),
    }
    if device is not None:
        w.update(nvml_used(device))
    return w


def soak_summary(windows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Drift (last window vs first, medians and p99) and memory slope (MiB per hour, and the leak
    verdict against inferences) over the windows."""
    if len(windows) < 2:
        return {"drift": None, "memory": {}}
    first, last = windows[0], windows[-1]
    drift = {"median_ratio": _ratio(first["median"], last["median"]), "p99_ratio": _ratio(first["p99"], last["p99"]),
             "first_median": first["median"], "last_median": last["median"]}
    memory: dict[str, Any] = {}
    t = np.array([w["t_end_s"] for w in windows])
    n = np.array([w["inferences_total"] for w in windows])
    for key in ("host_rss_bytes", "gpu_used_bytes", "process_gpu_bytes"):
        if not all(key in w for w in windows):
            continue
        y = np.array([w[key] for w in windows], dtype=np.float64)
        slope = float(np.polyfit(t, y, 1)[0]) if np.ptp(t) > 0 else 0.0
        memory[key] = {
            "first": int(y[0]), "last": int(y[-1]), "slope_mib_per_hour": slope * 3600.0 / 2**20,
            "leak": leak_check(n, y, min_points=4).to_dict(),
        }
    return {"drift": drift, "memory": memory}


# -- cold start ------------------------------------------------------------------------------------
def run_coldstart(
    specs: Sequence[ModelSpec], state: ScenarioState | None = None, opener: Opener = open_model
) -> ScenarioResult:
    """Per model: open (deserialize / load, context, input buffers) time, its phases where the backend
    reports them (``load_times``), the first and the second inference, and the file size."""
    state = state or ScenarioState()
    result = ScenarioResult("coldstart")
    perf = time.perf_counter
    for spec, label in zip(specs, unique_labels(specs), strict=True):
        if state.is_stop_requested():
            result.stopped = True
            break
        state.phase = f"cold start {label}"
        t0 = perf()
        try:
            backend = opener(spec)
        except Exception as exc:  # noqa: BLE001
            result.failure = failure_of(exc, label, "load")
            break
        row: dict[str, Any] = {"model": label, "path": spec.path, "backend": backend.name,
                               "open_ms": (perf() - t0) * 1e3, "file_bytes": Path(spec.path).stat().st_size}
        row.update({k: v for k, v in getattr(backend, "load_times", {}).items()})
        try:
            row["first_ms"] = backend.infer_once().total_ms
            row["second_ms"] = backend.infer_once().total_ms
        except Exception as exc:  # noqa: BLE001
            result.failure = failure_of(exc, label, "first inference")
        finally:
            backend.close()
        result.models.append(row)
        if result.failure is not None:
            break
    state.phase = "finished"
    return result
