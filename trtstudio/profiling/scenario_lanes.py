"""The measuring loop of a contention scenario and its thread runner.

A *lane* is one model's worker in one phase: warm up, wait for the other lanes, then run inferences
until every lane has reached its count (or a stop, or a fault). :func:`measure` is the loop itself,
shared by both runners: :class:`ThreadLanes` runs each lane as a thread of this process (the models
share the interpreter lock), ``scenario_procs.ProcessLanes`` each in its own process (as a server
runs model instances). Timeline intervals are gathered in a local list and handed over in batches.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from trtstudio.backends.base import Backend
from trtstudio.profiling.samples import ExactStore
from trtstudio.profiling.scenario_common import (
    ISOLATIONS,
    STREAM_MODES,
    ModelSpec,
    Opener,
    ScenarioFailure,
    ScenarioState,
    device_key,
    error_info,
    failure_of,
)
from trtstudio.profiling.timeline import COMPUTE, D2H, H2D, HOST, Timeline

_FLUSH_INTERVALS = 192  # a worker hands its timeline intervals over in batches of about this many ...
_FLUSH_S = 0.05  # ... or at least this often, so a live view lags by no more


@dataclass
class ContentionConfig:
    """Measured inferences per model and phase, warm-up, stream mode, CPU work per inference (ms),
    timeline recording, a safety cap on samples per model (``iterations`` x ``max_factor``), and the
    isolation: each model in its own ``process`` (the default, as a server runs model instances) or
    as a ``thread`` of this process. With threads, ``gil_check`` runs the together phase once more
    in processes, to measure what the interpreter lock costs."""

    iterations: int = 500
    warmup: int = 20
    streams: str = "dedicated"
    cpu_load_ms: float = 0.0
    timeline: bool = True
    timeline_capacity: int = 500_000
    max_factor: int = 50
    alone: bool = True
    gpu_sampling: bool = True
    isolation: str = "process"
    gil_check: bool = True

    def check(self) -> None:
        """ValueError for a stream mode or isolation this runner does not know, or a mix it cannot run."""
        if self.streams not in STREAM_MODES:
            raise ValueError(f"streams must be one of {STREAM_MODES}")
        if self.isolation not in ISOLATIONS:
            raise ValueError(f"isolation must be one of {ISOLATIONS}")
        if self.isolation == "process" and self.streams == "shared":
            raise ValueError("a CUDA stream is shared only between threads of one process: use isolation 'thread'")


@dataclass
class LaneResult:
    """What one lane measured in one phase; ``failure`` is (type, message, out of memory) of its error."""

    label: str
    exact: ExactStore = field(default_factory=lambda: ExactStore(cap=5_000_000))
    count: int = 0
    active_s: float = 0.0
    cpu_s: float | None = None  # CPU time of the process while this lane measured
    failure: tuple[str, str, bool] | None = None
    values: np.ndarray | None = None  # set from ``exact`` by ``finish`` (or sent by a child process)
    parts: dict[str, float | None] = field(default_factory=dict)

    def finish(self) -> LaneResult:
        """Take the latencies and mean parts out of ``exact``."""
        self.values, self.parts = self.exact.values(), self.exact.part_means()
        return self


def cpu_work(ms: float, scratch: np.ndarray) -> None:
    """Busy numpy work for ``ms`` (a stand-in for pre/post-processing; numpy releases the GIL)."""
    end = time.perf_counter() + ms / 1e3
    while time.perf_counter() < end:
        np.dot(scratch, scratch)


Sample = Callable[[float, float, "float | None", "float | None", "float | None"], None]


def measure(backend: Backend, cfg: ContentionConfig, lane: LaneResult, ended: Callable[[], Any],
            reached: Callable[[], None], sample: Sample, flush: Callable[[list[Any]], None] | None,
            t_origin: float, intervals: bool, offset_ms: float = 0.0) -> None:
    """The measured loop: one ``infer_once``, a live sample, an exact sample, the timeline's intervals
    (``intervals``: GPU stages from ``stage_marks`` plus ``offset_ms``, else the host call), handed to
    ``flush`` in batches; ``reached()`` once at ``iterations``; until ``ended()`` or the cap. Fills
    ``lane``'s count, active and CPU time even when the backend raises (the error propagates)."""
    perf, infer, exact_add = time.perf_counter, backend.infer_once, lane.exact.add
    scratch = np.ones((96, 96), np.float32) if cfg.cpu_load_ms > 0 else None
    cap = cfg.iterations * cfg.max_factor
    has_marks = hasattr(backend, "stage_marks")
    pending: list[tuple[int, float, float, int]] = []
    t0 = flushed = perf()
    c0 = time.process_time()
    n = 0
    try:
        while not ended():
            if scratch is not None:
                cpu_work(cfg.cpu_load_ms, scratch)
            a = perf()
            timing = infer()
            now = perf()
            sample(now - t_origin, timing.total_ms, timing.h2d_ms, timing.compute_ms, timing.d2h_ms)
            exact_add(timing.total_ms, timing.h2d_ms, timing.compute_ms, timing.d2h_ms, timing.enqueue_ms)
            if flush is not None:
                if intervals:
                    marks = backend.stage_marks if has_marks else None  # type: ignore[attr-defined]
                    if marks is not None:
                        m0, m1, m2, m3 = (m + offset_ms for m in marks)
                        pending += ((H2D, m0, m1, n), (COMPUTE, m1, m2, n), (D2H, m2, m3, n))
                    else:
                        pending.append((HOST, (a - t_origin) * 1e3, (now - t_origin) * 1e3, n))
                if len(pending) >= _FLUSH_INTERVALS or now - flushed >= _FLUSH_S:
                    flush(pending)
                    pending.clear()
                    flushed = now
            n += 1
            if n == cfg.iterations:
                reached()
            if n >= cap:  # counted as done at ``iterations`` already
                break
    finally:
        lane.count = n
        lane.active_s = perf() - t0 if n else 0.0
        lane.cpu_s = time.process_time() - c0
        if flush is not None and pending:
            flush(pending)


def _ignore(*_: Any) -> None:
    pass


# -- threads ---------------------------------------------------------------------------------------
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


def _thread_lane(lane: LaneResult, backend: Backend, group: _Group, cfg: ContentionConfig, state: ScenarioState,
                 timeline: Timeline | None, row: int | None, t_origin: float, live: bool = True) -> None:
    """One model's worker thread: warm up, wait for the others, measure."""
    stop_requested, all_done = state.is_stop_requested, group.all_done.is_set
    flush = partial(timeline.add_many, row) if timeline is not None and row is not None else None
    try:
        for _ in range(cfg.warmup):
            if stop_requested():
                break
            backend.infer_once()
        group.barrier.wait(timeout=600)
        sample = state.buffer(lane.label).append if live else _ignore
        measure(backend, cfg, lane, lambda: stop_requested() or all_done(), group.done_one, sample, flush, t_origin,
                flush is not None)
    except threading.BrokenBarrierError:
        pass  # another lane failed before the start; it holds the error
    except Exception as exc:  # noqa: BLE001 - the phase ends, the error names this model
        lane.failure = error_info(exc)
        group.abort()
        state.request_stop()


class ThreadLanes:
    """Every model open in this process; a phase runs its lanes as threads (the models share the
    interpreter lock, and on CUDA one context per device)."""

    isolation = "thread"

    def __init__(self, specs: Sequence[ModelSpec], labels: Sequence[str], opener: Opener) -> None:
        self.specs, self.labels, self.opener = list(specs), list(labels), opener
        self.backends: list[Backend] = []
        self.models: list[dict[str, Any]] = []  # per model: backend, device, notes

    def open(self, state: ScenarioState) -> ScenarioFailure | None:
        """Open every model in order; the first that fails is the failure (None: all open, or stopped)."""
        for spec, label in zip(self.specs, self.labels, strict=True):
            if state.is_stop_requested():
                return None
            state.phase = f"load {label}"
            try:
                b = self.opener(spec)
            except Exception as exc:  # noqa: BLE001
                return failure_of(exc, label, "load")
            self.backends.append(b)
            self.models.append({"backend": b.name, "device": device_key(b), "notes": list(getattr(b, "notes", []))})
        return None

    def prepare(self, streams: str) -> list[str]:
        """Share streams (``shared`` mode) and give each device one time origin; notes on what did not apply."""
        notes = share_streams(self.backends, self.labels, streams)
        origins: dict[str, Any] = {}
        for b in self.backends:
            if hasattr(b, "set_time_origin") and getattr(b, "cuda", False):
                key = device_key(b)
                if key not in origins:
                    origins[key] = b.make_time_origin()  # type: ignore[attr-defined]
                b.set_time_origin(origins[key])  # type: ignore[attr-defined]
        return notes

    def run_phase(self, idx: Sequence[int], cfg: ContentionConfig, state: ScenarioState, timeline: Timeline | None,
                  rows: Sequence[int | None], t_origin: float, live: bool = True) -> list[LaneResult]:
        """Run the lanes ``idx`` at once until each reached ``cfg.iterations``; their results in order.
        Samples go to the state's live buffers unless not ``live``."""
        lanes = [LaneResult(self.labels[i]) for i in idx]
        group = _Group(len(lanes))
        threads = [threading.Thread(target=_thread_lane, name=f"trtstudio-scenario-{lane.label}", daemon=True,
                                    args=(lane, self.backends[i], group, cfg, state, timeline, rows[i], t_origin, live))
                   for i, lane in zip(idx, lanes, strict=True)]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(timeout=0.2)
                if state.is_stop_requested():
                    group.abort()
        if len(lanes) > 1:  # the process's CPU time is every lane's together: no lane's own
            for lane in lanes:
                lane.cpu_s = None
        return [lane.finish() for lane in lanes]

    def close(self) -> list[str]:
        """Close every backend; notes on those that failed to close."""
        notes = []
        for b in self.backends:
            try:
                b.close()
            except Exception as exc:  # noqa: BLE001 - closing must not hide what was measured
                notes.append(f"{b.name}: close failed: {exc}")
        self.backends = []
        return notes


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
        key = device_key(b)
        if key not in shared:
            shared[key] = b.new_stream()  # type: ignore[attr-defined]
        b.use_stream(shared[key])  # type: ignore[attr-defined]
    return notes
