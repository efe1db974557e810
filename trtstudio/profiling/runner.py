"""The profiling run loop: plain Python driven by the caller's thread (a Qt worker, the CLI).

Order of a run: one cold inference (timed apart), ``warmup`` inferences (not recorded), then
inferences until ``iterations`` or ``duration_s`` is reached or a stop is requested. Pause and
stop are cooperative: the loop checks its ``RunState`` between inferences. A backend that raises
ends the run; the error is kept in the result together with every sample taken so far.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trtstudio.backends.base import Backend
from trtstudio.measure.stats import latency_stats, run_warnings
from trtstudio.profiling.leak import leak_warnings, memory_verdicts
from trtstudio.profiling.memory import MemoryMonitor
from trtstudio.profiling.samples import ExactStore, SampleBuffer
from trtstudio.tasks import EventSink, TaskState


class RunState(TaskState):
    """Cooperative control of a run, shared between the loop's thread and the controller: the
    :class:`~trtstudio.tasks.TaskState` stop flag and pause gate, plus what a progress view reads."""

    def __init__(self, on_event: EventSink | None = None) -> None:
        super().__init__(on_event)
        self.done = 0  # inferences recorded so far (read by a progress view)
        self.phase = "idle"  # idle, cold, warmup, measure, paused, finished
        self.disturbances: list[str] = []  # other work this process did during the run (see leak.py)

    def note_disturbance(self, what: str) -> None:
        """Record other work in this process (e.g. "model B.onnx loaded") that moves host memory."""
        self.disturbances.append(what)


@dataclass
class RunConfig:
    """What to run: ``iterations`` or ``duration_s`` (both None: until stopped); ``batch`` for samples/s."""

    warmup: int = 10
    iterations: int | None = 1000
    duration_s: float | None = None
    batch: int = 1
    ring_capacity: int = 100_000
    exact_cap: int = 10_000_000


@dataclass
class RunResult:
    """Everything a run produced; ``error`` is set when the backend raised mid-run."""

    samples: SampleBuffer
    exact: ExactStore
    config: RunConfig
    cold_ms: float | None = None
    active_s: float = 0.0
    stopped: bool = False
    error: BaseException | None = None
    memory: MemoryMonitor | None = None
    notes: list[str] = field(default_factory=list)
    disturbances: list[str] = field(default_factory=list)  # other work in this process during the run

    @property
    def count(self) -> int:
        """Recorded (measured) inferences."""
        return self.exact.count

    @property
    def error_text(self) -> str | None:
        """The error as one line, or None."""
        return None if self.error is None else f"{type(self.error).__name__}: {self.error}"

    def latency(self) -> dict[str, Any]:
        """Latency statistics over the whole run (exact count/mean/min/max even past the cap)."""
        stats = latency_stats(self.exact.values())
        if not self.exact.exact and stats.get("count"):
            totals = self.exact.totals()
            stats.update(count=int(totals["count"]), mean=totals["mean"], min=totals["min"], max=totals["max"])
        return stats

    def throughput(self) -> dict[str, float]:
        """Inferences and samples (inferences x batch) per second of unpaused run time."""
        if self.active_s <= 0 or self.count == 0:
            return {"inferences_per_s": 0.0, "samples_per_s": 0.0}
        ips = self.count / self.active_s
        return {"inferences_per_s": ips, "samples_per_s": ips * self.config.batch}

    def memory_summary(self) -> dict[str, Any]:
        """First/last/peak per monitor key and a leak verdict per key that was sampled."""
        if self.memory is None:
            return {}
        arrays = self.memory.snapshot()
        out: dict[str, Any] = dict(self.memory.series.summary())
        for key, verdict in memory_verdicts(arrays, self.disturbances).items():
            out.setdefault(key, {})["leak"] = verdict.to_dict()
        return out

    def warnings(self, stats: dict[str, Any] | None = None) -> list[str]:
        """trtexec-like warnings plus the run's notes and its error."""
        parts = self.exact.part_means()
        out = run_warnings(stats or self.latency(), parts, enqueue_ms=parts.get("enqueue_ms"))
        note = self.exact.note()
        if note:
            out.append(note)
        verdicts = {k: v["leak"] for k, v in self.memory_summary().items() if isinstance(v, dict) and "leak" in v}
        out += leak_warnings(verdicts)
        out += [f"memory verdict of the host: {d} during the run" for d in self.disturbances]
        if self.error is not None:
            out.append(f"run stopped by an error after {self.count} inferences: {self.error_text}")
        return out

    def to_dict(self) -> dict[str, Any]:
        """The run as JSON-ready data (the ``latency_ms`` ... ``warnings`` part of a profile report)."""
        stats = self.latency()
        latency = {k: stats.get(k) for k in ("count", "mean", "median", "p90", "p95", "p99", "p999", "min", "max", "std", "cov")}
        return {
            "latency_ms": latency,
            "jitter_ms": stats.get("jitter_ms"),
            "longest_spike": stats.get("longest_spike"),
            "parts_ms": self.exact.part_means(),
            "cold_ms": self.cold_ms,
            "throughput": self.throughput(),
            "memory": self.memory_summary(),
            "warnings": self.warnings(stats),
            "notes": list(self.notes),
            "stopped": self.stopped,
            "error": self.error_text,
        }


class Runner:
    """Runs ``backend.infer_once`` in a loop and records samples; call ``run`` on the worker's thread."""

    def __init__(
        self,
        backend: Backend,
        config: RunConfig | None = None,
        state: RunState | None = None,
        samples: SampleBuffer | None = None,
        monitor: MemoryMonitor | None = None,
    ) -> None:
        self.backend = backend
        self.config = config or RunConfig()
        self.state = state or RunState()
        self.samples = samples or SampleBuffer(self.config.ring_capacity)
        self.monitor = monitor

    def run(self) -> RunResult:
        """The whole run; never raises for a backend error (see ``RunResult.error``)."""
        cfg, state, backend = self.config, self.state, self.backend
        exact = ExactStore(cap=cfg.exact_cap)
        result = RunResult(self.samples, exact, cfg, memory=self.monitor, notes=list(getattr(backend, "notes", [])),
                           disturbances=state.disturbances)  # the state's list: later notes count too
        samples, monitor = self.samples, self.monitor
        perf = time.perf_counter
        t0 = perf()
        paused = 0.0
        try:
            state.phase = "cold"
            if monitor is not None:
                monitor.record(0)
            result.cold_ms = backend.infer_once().total_ms
            state.phase = "warmup"
            for _ in range(cfg.warmup):
                if state.is_stop_requested():
                    break
                backend.infer_once()
            state.phase = "measure"
            iterations, duration = cfg.iterations, cfg.duration_s
            n = 0
            t0 = perf()
            while True:
                if state.is_stop_requested():
                    result.stopped = True
                    break
                if state.is_paused():
                    p0 = perf()
                    state.phase = "paused"
                    while state.is_paused() and not state.is_stop_requested():
                        state.wait_while_paused(0.1)
                    paused += perf() - p0
                    state.phase = "measure"
                    continue
                if iterations is not None and n >= iterations:
                    break
                if duration is not None and perf() - t0 - paused >= duration:
                    break
                timing = backend.infer_once()
                now = perf()
                samples.append(now - t0, timing.total_ms, timing.h2d_ms, timing.compute_ms, timing.d2h_ms)
                exact.add(timing.total_ms, timing.h2d_ms, timing.compute_ms, timing.d2h_ms, timing.enqueue_ms)
                n += 1
                state.done = n
                if monitor is not None:
                    monitor.maybe_sample(now, n)
        except Exception as exc:  # noqa: BLE001 - the run ends, the error and the samples are kept
            result.error = exc
        result.active_s = max(0.0, perf() - t0 - paused)
        if monitor is not None:
            try:
                monitor.record(exact.count)
            except Exception:  # noqa: BLE001
                pass
        state.phase = "finished"
        return result


def snapshot_latencies(result: RunResult) -> np.ndarray:
    """The measured latencies in order (ms), while the run kept them all."""
    return result.exact.values()
