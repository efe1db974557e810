"""The Live profile panel's run controller: a run (here or on a remote target) and a per-layer run,
each in a worker (``ui.workers``), their pause/resume/stop, and their results forwarded as signals.
It holds no widgets but the ``LivePanels`` it feeds; the panel shows what it reports."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from trtstudio.profiling.memory import MemoryMonitor
from trtstudio.profiling.runner import RunState
from trtstudio.profiling.samples import SampleBuffer
from trtstudio.profiling.session import (
    BackendFactory,
    ProfileOutcome,
    ProfileRequest,
    run_layers,
    run_profile,
)
from trtstudio.tasks import TaskEvent, error_text
from trtstudio.ui.live_panels import LivePanels
from trtstudio.ui.workers import WorkerHandle, run_in_thread


class ProfileRun(QObject):
    """Starts, pauses and stops the panel's runs; the samples go to ``live``.

    Signals: ``sig_started(request, state)``, ``sig_outcome(request, outcome or None)``,
    ``sig_finished(doc)`` (the run's report document, also after an error), ``sig_layers(rows)``,
    ``sig_status(text)`` (the status line), ``sig_error(exc, prefix)``, ``sig_run_ended()`` and
    ``sig_layers_ended()`` (a worker is done: the buttons change).
    """

    sig_started = Signal(object, object)  # (ProfileRequest, RunState)
    sig_outcome = Signal(object, object)  # (ProfileRequest, ProfileOutcome or None when it could not start)
    sig_finished = Signal(object)
    sig_layers = Signal(object)
    sig_status = Signal(str)
    sig_error = Signal(object, str)
    sig_run_ended = Signal()
    sig_layers_ended = Signal()

    def __init__(self, live: LivePanels, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.live = live
        self.run: WorkerHandle | None = None
        self.layers: WorkerHandle | None = None
        self.state: RunState | None = None  # the run's (pause, stop, phase, disturbances)
        self.samples: SampleBuffer | None = None  # the run's ring buffer
        self.request: ProfileRequest | None = None  # the run's request
        self.final: dict[str, Any] | None = None  # the last run's report document
        self.layer_rows: list[dict[str, Any]] = []  # the last per-layer run's rows, slowest first
        self.last_outcome: Any = None  # ProfileOutcome, or remote.client.RemoteOutcome  # the last finished run (samples included)

    # -- run -------------------------------------------------------------------------------------
    def start(self, req: ProfileRequest, target: str | None, factory: BackendFactory | None) -> None:
        """Run ``req`` in a worker: on ``target`` (ssh://..., the samples streamed into the same
        buffer) or here with ``factory``'s backends (None: the real ones)."""
        self.final = None
        self.state = RunState()
        self.samples = SampleBuffer(req.ring_capacity)
        monitor = MemoryMonitor(probes=[], interval_ms=100)
        self.live.attach(self.samples, monitor)
        state, samples = self.state, self.samples
        self.live.set_disturbances(state.disturbances)
        self.request = req
        self.sig_started.emit(req, state)
        if target:  # a remote target (Profile > Target): the same request, samples streamed into the same buffer
            from trtstudio.remote.client import profile_request_remote

            def task(_s: object) -> object:
                return profile_request_remote(target, req, state, samples)
        else:
            def task(_s: object) -> object:
                return run_profile(req, state, samples, monitor, factory)
        self.run = run_in_thread(
            task,
            on_done=self._on_run_done, on_error=self._on_run_error, on_progress=self._on_run_progress,
            on_finished=self._on_run_finished, state=state, name="profile",
        )

    def set_paused(self, paused: bool) -> None:
        """Hold the run between inferences, or go on with it."""
        if self.state is None or not self.is_running():
            return
        if paused:
            self.state.pause()
            self.sig_status.emit(f"paused after {self.state.done:,} inferences")
        else:
            self.state.resume()
            self.sig_status.emit("running")

    def is_paused(self) -> bool:
        """True while a run is paused."""
        return self.state is not None and self.is_running() and self.state.is_paused()

    def stop(self) -> None:
        """Ask the run to end after the current inference."""
        if self.run is not None and self.is_running():
            self.run.request_stop()
            self.sig_status.emit("stopping…")

    def is_running(self) -> bool:
        """True from ``start`` until the run's result has arrived."""
        return self.run is not None and not self.run.is_done()

    def statistics(self) -> dict[str, Any]:
        """The latest statistics: live ones during a run, the whole-run report document after it."""
        if self.final is not None:
            return dict(self.final)
        return self.live.statistics()

    # -- per-layer run ---------------------------------------------------------------------------
    def layers_busy(self) -> bool:
        """True while a per-layer run goes on."""
        return self.layers is not None and not self.layers.is_done()

    def run_layers(self, req: ProfileRequest, factory: BackendFactory | None) -> None:
        """Profile each layer of ``req``'s model in a worker; rows go to ``sig_layers``."""
        self.layers = run_in_thread(
            lambda s: run_layers(req, s, factory),
            on_done=self._on_layers_done, on_error=self._on_layers_error,
            on_finished=self._on_layers_finished, name="per-layer",
        )

    def shutdown(self, timeout_ms: int) -> bool:
        """Stop both workers and join them; True when both ended in time."""
        ok = True
        for h in (self.run, self.layers):
            if h is not None:
                ok = h.stop(timeout_ms) and ok
        return ok

    # -- worker results --------------------------------------------------------------------------
    def _on_run_progress(self, event: object) -> None:
        if not isinstance(event, TaskEvent):
            return
        info = {"event": event.kind, **event.data}
        if info.get("event") == "loaded":
            self.live.set_batch(int(info.get("batch", 1)))
            shapes = ", ".join(f"{k} {'x'.join(map(str, v))}" for k, v in info.get("shapes", {}).items())
            self.sig_status.emit(f"running ({shapes})" + "".join(f"\nnote: {n}" for n in info.get("notes", [])))
        elif info.get("event") == "cold":
            self.live.set_cold_ms(float(info["cold_ms"]))
        elif info.get("event") == "variants":
            self.sig_status.emit(f"comparing eager with the CUDA graph ({info.get('rounds')} paired rounds)…")

    def _on_run_done(self, outcome: object) -> None:
        from trtstudio.remote.client import RemoteOutcome

        if not isinstance(outcome, (ProfileOutcome, RemoteOutcome)):
            return
        doc = outcome.to_dict()
        self.final = doc
        self.last_outcome = outcome  # the full run (samples included) for reports and sessions
        self.sig_outcome.emit(outcome.request, outcome)
        self.live.finish(doc)
        result = outcome.result
        if result is not None and result.error is not None:
            self.sig_error.emit(result.error, f"run stopped after {result.count:,} inferences: ")
            self.sig_status.emit(f"failed after {result.count:,} inferences")
        else:
            how = "stopped" if doc.get("stopped") else "finished"
            self.sig_status.emit(f"{how}: {doc['latency_ms'].get('count') or 0:,} inferences"
                                 + (f"\n{doc['variants']['verdict']}" if doc.get("variants") else ""))
        self.sig_finished.emit(doc)

    def _on_run_error(self, exc: object) -> None:
        self.live.finish(None)
        self.sig_error.emit(exc, "")
        self.sig_status.emit("the run could not start")
        self.final = {"schema": "trtstudio.profile/1", "error": error_text(exc) if isinstance(exc, BaseException) else str(exc)}
        self.sig_outcome.emit(self.request, None)
        self.sig_finished.emit(dict(self.final))

    def _on_run_finished(self) -> None:
        self.sig_run_ended.emit()

    def _on_layers_finished(self) -> None:
        self.sig_layers_ended.emit()

    def _on_layers_done(self, outcome: object) -> None:
        if not isinstance(outcome, ProfileOutcome) or outcome.layers is None:
            return
        self.layer_rows = sorted(outcome.layers, key=lambda r: -float(r.get("time_ms", 0.0)))
        self.sig_layers.emit(self.layer_rows)

    def _on_layers_error(self, exc: object) -> None:
        self.sig_error.emit(exc, "per-layer run failed: ")
