"""What every scenario shares, Qt-free: the model spec and its opener, failures that name the model,
the state workers share (stop flag, live buffers, status), the result and its document.

``ScenarioResult.to_json()`` is the ``trtstudio.scenario/1`` document and ``render_text()`` its
summary for people (``scenario_text``); the CLI prints them and the window shows them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.backends.base import Backend, open_backend
from trtstudio.backends.catalogue import gpu_backends, resolve
from trtstudio.measure.stats import latency_stats
from trtstudio.profiling.runner import RunState
from trtstudio.profiling.samples import SampleBuffer
from trtstudio.profiling.timeline import Timeline

SCHEMA = "trtstudio.scenario/1"
KINDS = ("contention", "cycles", "soak", "coldstart")
STREAM_MODES = ("dedicated", "shared")
ISOLATIONS = ("process", "thread")
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
        """The backend that runs it: ``backend``, or on auto the catalogue's choice for the file (the
        one ``trtstudio profile`` makes: ort for .onnx, torch for PyTorch files, tensorrt otherwise)."""
        return resolve(self.backend, self.path)

    def on_gpu(self) -> bool:
        """Whether its backend runs on an NVIDIA GPU (or a device was asked for)."""
        return self.device is not None or self.backend_name() in gpu_backends()


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
    return failure_from(error_info(exc), model, phase, cycle)


def error_info(exc: BaseException) -> tuple[str, str, bool]:
    """(type name, first line, out of memory?) of ``exc``: what a child process sends back of an error."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    oom = isinstance(exc, MemoryError) or "OutOfMemory" in type(exc).__name__ or "out of memory" in text.lower()
    return type(exc).__name__, text, oom


def failure_from(info: tuple[str, str, bool], model: str, phase: str, cycle: int | None = None) -> ScenarioFailure:
    """A ScenarioFailure from ``error_info``'s triple."""
    name, text, oom = info
    kind = "oom" if oom else ("load" if phase == "load" else "error")
    prefix = "" if name in ("", "BackendError", "InputError") else f"{name}: "
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
        self.gpu_sampler: Any = None  # the run's GpuSampler while it samples (a view shows it; none of its own)

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

    def to_json(self) -> dict[str, Any]:
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

    to_dict = to_json  # the older name

    def render_text(self) -> str:
        """The result as a readable summary (what ``trtstudio scenario`` prints without --json)."""
        from trtstudio.profiling.scenario_text import render_text

        return render_text(self.to_json())


def stats_of(values: np.ndarray, active_s: float, parts: dict[str, float | None] | None = None,
             cpu_s: float | None = None) -> dict[str, Any]:
    """Latency summary of one model in one phase: count, mean, median, p90, p99, min, max, std, cov,
    jitter (p99 - p50), throughput per second, the mean H2D/compute/D2H/enqueue where measured, and
    with ``cpu_s`` (CPU time of the process that ran only this model) the CPU ms per inference and the
    cores it kept busy."""
    s = latency_stats(values)
    out: dict[str, Any] = {k: s.get(k) for k in _STAT_KEYS}
    count = s.get("count", 0)
    out["throughput_per_s"] = (count / active_s) if active_s > 0 else 0.0
    for k, v in (parts or {}).items():
        if v is not None:
            out[k] = v
    if cpu_s is not None and count and active_s > 0:
        out["cpu_ms_per_inference"] = cpu_s * 1e3 / count
        out["cores_used"] = cpu_s / active_s
    return out


def ratio(a: Any, b: Any) -> float | None:
    """b / a (the later or contended figure over the reference), None where a is missing or 0:
    ``measure.ratio.ratio_of``, the project's one ratio direction (other / baseline)."""
    from trtstudio.measure.ratio import ratio_of

    return ratio_of(a, b)


def device_key(backend: Backend) -> str:
    """'cuda:N' for a backend running on a GPU, else 'cpu'."""
    dev = getattr(backend, "device", None)
    return str(dev) if dev is not None and getattr(backend, "cuda", False) else "cpu"
