"""One profiling session for the CLI and the window: a :class:`ProfileRequest` in, a
:class:`ProfileOutcome` out, through :func:`run_profile`.

``trtstudio profile`` builds its request from its argument group (``commands/profile.py``); the
window's Live profile panel builds the same request from its form. Both call :func:`run_profile`
(the panel inside a worker thread, with a sample buffer its plots read), so the two produce the
same ``trtstudio.profile/1`` document. Errors in a request name its *fields* (``shapes``,
``input``, ``iterations``...) through :class:`~trtstudio.errors.FieldError`: the CLI turns a field
into its flag, the panel into its form label.

A run records what it ran (:class:`RunRecord`): the model path and the SHA-256 of its content, the
backend, the shapes and the settings, so a report or session can never put one model's latencies
under another model's name.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from trtstudio.errors import FieldError, InputError
from trtstudio.fileio import file_sha256
from trtstudio.tasks import TaskState

SCHEMA = "trtstudio.profile/1"

BackendFactory = Callable[..., Any]  # (name, path, **options) -> Backend, e.g. backends.base.open_backend


@dataclass
class ProfileRequest:
    """What a profiling run runs: a model or engine on one backend with fixed shapes and data."""

    model: str
    backend: str = "ort"
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    input_path: str | None = None
    warmup: int = 10
    iterations: int | None = 1000
    duration_s: float | None = None
    threads: int | None = None
    device: int | None = None  # CUDA device of a GPU backend (None: the backend's default, 0)
    cuda_graph: bool = False
    variant_rounds: int = 10  # with cuda_graph: paired rounds of eager against the graph (0: none)
    per_layer: bool = False
    layer_iterations: int = 20
    ring_capacity: int = 100_000

    def validate(self) -> None:
        """Raise :class:`FieldError` naming the first field that is out of range."""
        for name in ("iterations", "threads", "layer_iterations"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise FieldError(name, "must be positive")
        if self.warmup < 0:
            raise FieldError("warmup", "must be 0 or more")
        if self.variant_rounds < 0:
            raise FieldError("variant_rounds", "must be 0 or more")
        if self.cuda_graph:
            from trtstudio.backends.catalogue import graph_backends

            if self.backend not in graph_backends():
                raise FieldError("cuda_graph", f"backend '{self.backend}' cannot capture CUDA graphs; "
                                               f"{', '.join(sorted(graph_backends()))} can")
        if self.device is not None and self.device < 0:
            raise FieldError("device", "must be 0 or more")
        if self.device is not None and self.backend == "ort":
            raise FieldError("device", "backend 'ort' runs on the CPU; a CUDA device applies to ort-cuda, ort-trt, "
                                       "tensorrt, rtx, torch and torch-cuda")
        if self.duration_s is not None and not self.duration_s > 0:
            raise FieldError("duration_s", "must be positive")
        if not self.model:
            raise FieldError("model", "no model or engine given")

    def settings(self) -> dict[str, Any]:
        """The run settings as recorded with the run (JSON-ready)."""
        out = asdict(self)
        out["shapes"] = {k: list(v) for k, v in self.shapes.items()}
        return out


@dataclass
class RunRecord:
    """What a run ran: the model (path and content hash), backend, shapes and settings."""

    model: str
    model_sha256: str | None
    backend: str
    shapes: dict[str, list[int]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    started: float = 0.0  # time.time() when the backend was opened

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> RunRecord | None:
        """Inverse of ``to_json``, lenient for saved sessions: unknown keys are ignored, a missing hash
        is None; None without ``model`` and ``backend``."""
        if not isinstance(doc, dict) or not {"model", "backend"} <= set(doc):
            return None
        known = {f.name for f in fields(cls)}
        return cls(**{"model_sha256": None, **{k: v for k, v in doc.items() if k in known}})

    def same_model(self, path: str | None, sha256: str | None) -> bool:
        """True when ``path``/``sha256`` name the model this run ran (the hash decides when both are known)."""
        if path is None:
            return False
        if self.model_sha256 and sha256:
            return self.model_sha256 == sha256 and os.path.basename(self.model) == os.path.basename(path)
        return os.path.abspath(self.model) == os.path.abspath(path)


@dataclass
class ProfileOutcome:
    """A finished run (``result.error`` set when the backend raised mid-run) and its per-layer rows."""

    request: ProfileRequest
    record: RunRecord
    result: Any = None  # profiling.runner.RunResult
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    backend_memory: dict[str, int] = field(default_factory=dict)
    layers: list[dict[str, Any]] | None = None
    monitor: Any = None  # profiling.memory.MemoryMonitor
    shape_plan: Any = None  # backends.shapes.ShapePlan the backend chose its shapes from (None: not planned)
    variants: dict[str, Any] | None = None  # CUDA graph against eager (profiling.variants), with cuda_graph
    kernel_recording: dict[str, Any] | None = None  # how per-layer kernels were recorded (torch-cuda)

    def to_dict(self) -> dict[str, Any]:
        """The run as a ``trtstudio.profile/1`` document (what ``trtstudio profile --json`` prints)."""
        doc: dict[str, Any] = {
            "schema": SCHEMA,
            "backend": self.request.backend,
            "model": self.request.model,
            "model_sha256": self.record.model_sha256,
            "shapes": {k: list(v) for k, v in self.shapes.items()},
            "settings": self.record.settings,
            "shape_plan": self.shape_plan.to_json() if self.shape_plan is not None else None,
        }
        if self.result is not None:
            doc.update(self.result.to_dict())
            doc["memory"] = {**self.backend_memory, **doc["memory"]}
        else:
            doc["notes"] = list(self.notes)
        if self.layers is not None:
            doc["layers"] = self.layers
        if self.variants is not None:
            doc["variants"] = self.variants
        if self.kernel_recording is not None:
            from trtstudio.profiling.kernel_cover import summarise

            # what recording cost the pass, how much of the inference the kernels cover, launch-bound or not
            doc["kernel_recording"] = summarise(self.kernel_recording, (doc.get("latency_ms") or {}).get("median"),
                                                self.variants, bool(getattr(self.request, "cuda_graph", False)))
        return doc

    def run_data(self, name: str | None = None) -> Any:
        """The run as report :class:`~trtstudio.report.session.RunData` (samples included)."""
        from trtstudio.report.session import RunData

        return RunData.from_result(
            self.result, name=name or f"{os.path.basename(self.request.model)} ({self.request.backend})",
            backend=self.request.backend, model=self.request.model, layers=self.layers,
            shapes={k: list(v) for k, v in self.shapes.items()}, extra_memory=self.backend_memory,
            record=self.record.to_json())


class _ColdReporter:
    """Wraps a backend for the runner: reports the first (cold) inference as a ``cold`` event, then
    gets out of the way (its ``infer_once`` becomes the backend's own bound method)."""

    def __init__(self, backend: Any, state: TaskState) -> None:
        self._backend = backend
        self._state = state
        self.name = backend.name
        self.notes = backend.notes

    def infer_once(self) -> Any:
        timing = self._backend.infer_once()
        self.infer_once = self._backend.infer_once  # type: ignore[method-assign]
        self._state.event("cold", cold_ms=timing.total_ms)
        return timing

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)


_CORE_FIELDS = {"--shapes": "shapes", "--input": "input"}  # what backends name, as request fields


def open_prepared(request: ProfileRequest, factory: BackendFactory | None = None) -> Any:
    """Open the request's backend, load its input data and fix its shapes; the caller closes it.
    Errors in the shapes or data are :class:`FieldError` naming the field."""
    from trtstudio.backends.base import open_backend
    from trtstudio.backends.inputs import load_input_file

    options: dict[str, Any] = {"threads": request.threads, "device": request.device}
    if request.cuda_graph:
        options["cuda_graph"] = True
    backend = (factory or open_backend)(request.backend, request.model, **options)
    try:
        data = None
        if request.input_path:
            try:
                data = load_input_file(request.input_path, [s["name"] for s in backend.input_specs()])
            except InputError as exc:  # the data file is what is wrong: name it (CLI and window alike)
                if exc.path in (None, "--input"):
                    raise InputError(request.input_path, exc.message) from None
                raise
        try:
            backend.prepare_inputs(dict(request.shapes), data)
        except InputError as exc:
            if exc.path == "--input" and request.input_path:
                raise InputError(request.input_path, exc.message) from None
            raise
    except InputError as exc:
        backend.close()
        if exc.path in _CORE_FIELDS:
            raise FieldError(_CORE_FIELDS[exc.path], exc.message) from None
        raise
    except BaseException:
        backend.close()
        raise
    return backend


def _open_recorded(request: ProfileRequest,
                   factory: BackendFactory | None) -> tuple[Any, dict[str, tuple[int, ...]], RunRecord]:
    """Validate, hash the model, open the prepared backend; its shapes and the run's record."""
    request.validate()
    sha = file_sha256(request.model)
    started = time.time()
    backend = open_prepared(request, factory)
    shapes = {k: tuple(int(d) for d in v) for k, v in dict(getattr(backend, "shapes", {})).items()}
    record = RunRecord(request.model, sha, request.backend, {k: list(v) for k, v in shapes.items()},
                       request.settings(), started)
    return backend, shapes, record


def run_profile(
    request: ProfileRequest,
    state: Any = None,
    samples: Any = None,
    monitor: Any = None,
    factory: BackendFactory | None = None,
) -> ProfileOutcome:
    """Run ``request``: open and prepare the backend, run the ``Runner`` (into ``samples``, a
    ``SampleBuffer`` live plots read, when given) under ``state`` (a ``RunState``: stop, pause,
    events), the per-layer profile when asked, close the backend.

    Events on ``state``: ``loaded`` (shapes, notes, batch, record) then ``cold`` (cold_ms).
    """
    from trtstudio.profiling.memory import MemoryMonitor, backend_probe, default_probes
    from trtstudio.profiling.runner import RunConfig, Runner, RunState

    state = state if state is not None else RunState()
    backend, shapes, record = _open_recorded(request, factory)
    try:
        batch = next((int(s[0]) for s in shapes.values() if s), 1)
        monitor = monitor if monitor is not None else MemoryMonitor(probes=[], interval_ms=100)
        monitor.probes.extend(default_probes(gpu=request.backend != "ort"))
        probe = backend_probe(backend)  # the TensorRT context's device memory, torch's allocator statistics
        if probe is not None:
            monitor.probes.append(probe)
        state.event("loaded", shapes=shapes, notes=list(backend.notes), batch=batch, record=record)
        iterations = request.iterations if request.duration_s is None else None
        config = RunConfig(warmup=request.warmup, iterations=iterations, duration_s=request.duration_s,
                           batch=batch, ring_capacity=request.ring_capacity)
        if state.is_stop_requested():
            state.phase = "finished"
        result = Runner(_ColdReporter(backend, state), config, state, samples, monitor).run()  # type: ignore[arg-type]
        variants = _variants(request, backend, result, state)
        layers = None
        if request.per_layer and result.error is None and not state.is_stop_requested():
            layers = [dict(r) for r in backend.per_layer_profile(request.layer_iterations)]
        return ProfileOutcome(request, record, result, shapes, list(backend.notes), dict(backend.memory()), layers,
                              monitor, getattr(backend, "shape_plan", None), variants,
                              getattr(backend, "kernel_coverage", None) if layers is not None else None)
    finally:
        backend.close()


def _variants(request: ProfileRequest, backend: Any, result: Any, state: Any) -> dict[str, Any] | None:
    """With ``cuda_graph``: the graph against eager in paired rounds (``profiling.variants``), after a
    run that ended well; a backend that cannot run both says so in a note."""
    from trtstudio.profiling.variants import graph_vs_eager, supports_variants

    if not request.cuda_graph or not request.variant_rounds or result.error is not None or state.is_stop_requested():
        return None
    if not supports_variants(backend):
        backend.notes.append(f"backend '{request.backend}' replays its CUDA graph only: no eager variant to compare")
        return None
    state.event("variants", rounds=request.variant_rounds)
    return graph_vs_eager(backend, request.variant_rounds, stop=state.is_stop_requested)


def run_layers(request: ProfileRequest, state: TaskState | None = None,
               factory: BackendFactory | None = None) -> ProfileOutcome:
    """A per-layer run alone: ``request.layer_iterations`` profiled inferences on a fresh backend."""
    backend, shapes, record = _open_recorded(request, factory)
    try:
        if state is not None:
            state.event("loaded", shapes=shapes, notes=list(backend.notes), batch=1, record=record)
        layers = [dict(r) for r in backend.per_layer_profile(request.layer_iterations)]
        return ProfileOutcome(request, record, None, shapes, list(backend.notes), dict(backend.memory()), layers,
                              shape_plan=getattr(backend, "shape_plan", None),
                              kernel_recording=getattr(backend, "kernel_coverage", None))
    finally:
        backend.close()
