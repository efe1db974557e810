"""Qt workers: run plain-Python tasks (builds, profiling runs, calibration) off the GUI thread.

Standard QThread wiring (STYLE.md): a worker QObject without parent is moved to a QThread without
parent; ``thread.started -> worker.work``, ``worker finished -> thread.quit``, ``deleteLater`` on
both. The task talks to the GUI only through queued signals, re-emitted by a ``WorkerHandle`` that
lives in the GUI thread; workers never touch widgets. Stop is cooperative: ``request_stop`` sets
the task's flag (and the caller's ``cancel_state``); shutdown quits and waits, never terminates.

Every started thread is kept in a module registry until it finishes, so ``live_threads()`` can tell
tests (and the main window) which threads still run, and ``shutdown_all`` can join them on close.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import shiboken6
from PySide6.QtCore import QObject, QThread, Signal, Slot
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QDialog

from trtstudio.errors import BackendError, BuildError, InputError

_HANDLES: list[WorkerHandle] = []
_LOCK = threading.Lock()


class Stoppable(Protocol):
    """What ``cancel_state`` must offer (``profiling.runner.RunState`` and build cancel objects do)."""

    def request_stop(self) -> None: ...


class TaskState:
    """Handed to the task: a cancel flag checked between steps and a progress reporter (Orange3's
    ``TaskState`` in spirit). ``set_progress`` may be called from the worker thread at any rate the
    task likes; each call is one queued signal, so report steps, not samples."""

    def __init__(self, emit: Callable[[object], None]) -> None:
        self._stop = threading.Event()
        self._emit = emit

    def request_stop(self) -> None:
        """Ask the task to end at its next check."""
        self._stop.set()

    def is_stop_requested(self) -> bool:
        """True once a stop was asked for."""
        return self._stop.is_set()

    def set_progress(self, value: object) -> None:
        """Report progress (any object: a fraction, a dict, a log line) to ``on_progress``."""
        self._emit(value)


def error_text(exc: BaseException) -> str:
    """One line for the user: our own errors as they read, others prefixed by their type; no traceback."""
    if isinstance(exc, InputError):
        return exc.one_line()
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, (BackendError, BuildError)):
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Worker(QObject):
    """Runs ``fn(task_state)`` once on its thread; results leave only through signals."""

    sig_done = Signal(object)
    sig_error = Signal(object)
    sig_progress = Signal(object)
    sig_finished = Signal()

    def __init__(self, fn: Callable[[TaskState], Any]) -> None:
        super().__init__()  # no parent: it is moved to its own thread
        self._fn = fn
        self.state = TaskState(self.sig_progress.emit)

    @Slot()
    def work(self) -> None:
        try:
            result = self._fn(self.state)
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to the GUI as a signal
            self.sig_error.emit(exc)
        else:
            self.sig_done.emit(result)
        finally:
            self.sig_finished.emit()


class WorkerHandle(QObject):
    """The GUI-thread side of one task: queued re-emission of its signals, stop and join.

    Signals: ``sig_done(result)``, ``sig_error(exception)``, ``sig_progress(value)``, and
    ``sig_finished()`` after either of the first two (the thread may still be winding down).
    """

    sig_done = Signal(object)
    sig_error = Signal(object)
    sig_progress = Signal(object)
    sig_finished = Signal()

    def __init__(self, fn: Callable[[TaskState], Any], cancel_state: Stoppable | None = None, name: str = "") -> None:
        super().__init__()
        self.name = name or getattr(fn, "__name__", "task")
        self.cancel_state = cancel_state
        self.result: Any = None
        self.error: BaseException | None = None
        self._done = False
        self.qthread = QThread()  # no parent
        self.qthread.setObjectName(f"trtstudio-{self.name}")
        self.worker = _Worker(fn)
        # kept apart from the worker: its C++ side is deleted when the thread ends
        self._state = self.worker.state
        self.worker.moveToThread(self.qthread)
        self.qthread.started.connect(self.worker.work)
        self.worker.sig_finished.connect(self.qthread.quit)
        self.worker.sig_finished.connect(self.worker.deleteLater)
        self.qthread.finished.connect(self.qthread.deleteLater)
        # the handle lives in the GUI thread: these connections are queued
        self.worker.sig_done.connect(self._on_worker_done)
        self.worker.sig_error.connect(self._on_worker_error)
        self.worker.sig_progress.connect(self.sig_progress)
        self.qthread.finished.connect(self._on_thread_finished)

    @property
    def task_state(self) -> TaskState:
        """The state object the task receives."""
        return self._state

    def start(self) -> WorkerHandle:
        """Register and start the thread; returns self."""
        with _LOCK:
            _HANDLES.append(self)
        self.qthread.start()
        return self

    def is_running(self) -> bool:
        """True until the thread has finished."""
        return shiboken6.isValid(self.qthread) and self.qthread.isRunning()

    def is_done(self) -> bool:
        """True once the task returned or raised (its result signal may still be queued)."""
        return self._done

    def request_stop(self) -> None:
        """Ask the task to stop cooperatively (its TaskState and the caller's cancel_state)."""
        self._state.request_stop()
        if self.cancel_state is not None:
            self.cancel_state.request_stop()

    def join(self, timeout_ms: int = 5000) -> bool:
        """Quit the thread's loop and wait up to ``timeout_ms``; True when it has ended."""
        if not shiboken6.isValid(self.qthread):
            _unregister(self)
            return True
        self.qthread.quit()
        ended = bool(self.qthread.wait(timeout_ms))
        if ended:
            _unregister(self)
        return ended

    def stop(self, timeout_ms: int = 5000) -> bool:
        """``request_stop`` then ``join``; True when the thread has ended. Never terminates it."""
        self.request_stop()
        return self.join(timeout_ms)

    @Slot(object)
    def _on_worker_done(self, result: object) -> None:
        self.result, self._done = result, True
        self.sig_done.emit(result)
        self.sig_finished.emit()

    @Slot(object)
    def _on_worker_error(self, exc: object) -> None:
        self.error = exc if isinstance(exc, BaseException) else RuntimeError(str(exc))
        self._done = True
        self.sig_error.emit(exc)
        self.sig_finished.emit()

    @Slot()
    def _on_thread_finished(self) -> None:
        _unregister(self)


def _unregister(handle: WorkerHandle) -> None:
    with _LOCK:
        if handle in _HANDLES:
            _HANDLES.remove(handle)


def run_in_thread(
    fn: Callable[[TaskState], Any],
    *,
    on_done: Callable[[Any], None] | None = None,
    on_error: Callable[[BaseException], None] | None = None,
    on_progress: Callable[[object], None] | None = None,
    on_finished: Callable[[], None] | None = None,
    cancel_state: Stoppable | None = None,
    name: str = "",
) -> WorkerHandle:
    """Run ``fn(task_state)`` on a new QThread and return its started handle.

    ``on_done(result)``, ``on_error(exc)``, ``on_progress(value)`` and ``on_finished()`` run in the
    GUI thread (queued). ``cancel_state.request_stop()`` is called by ``handle.request_stop()``,
    which lets a loop that checks its own state object (a profiling ``RunState``) stop too.
    Call from the GUI thread.
    """
    handle = WorkerHandle(fn, cancel_state, name)
    if on_done is not None:
        handle.sig_done.connect(on_done)
    if on_error is not None:
        handle.sig_error.connect(on_error)
    if on_progress is not None:
        handle.sig_progress.connect(on_progress)
    if on_finished is not None:
        handle.sig_finished.connect(on_finished)
    return handle.start()


def live_handles() -> list[WorkerHandle]:
    """Handles whose threads have not been joined or reported finished yet."""
    with _LOCK:
        return list(_HANDLES)


def live_threads() -> list[QThread]:
    """QThreads started here that are still running (tests fail when one is left behind)."""
    return [h.qthread for h in live_handles() if h.is_running()]


def shutdown_all(timeout_ms: int = 5000) -> list[str]:
    """Request stop on every live task, quit and wait (the whole call shares ``timeout_ms``).

    The main window calls this on close / ``aboutToQuit``. Returns the names of tasks that did not
    end in time (empty when all joined); those are never terminated.
    """
    import time

    handles = live_handles()
    for h in handles:
        h.request_stop()
    deadline = time.monotonic() + timeout_ms / 1e3
    left: list[str] = []
    for h in handles:
        remaining = max(0, int((deadline - time.monotonic()) * 1e3))
        if not h.join(remaining):
            left.append(h.name)
    return left


# -- the profiling worker ------------------------------------------------------------------------

BackendFactory = Callable[..., Any]  # (name, path, **options) -> Backend, e.g. backends.base.open_backend


@dataclass
class ProfileRequest:
    """What the profiling worker runs: a model or engine on one backend with fixed shapes and data."""

    model: str
    backend: str = "ort"
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    input_path: str | None = None
    warmup: int = 10
    iterations: int | None = 1000
    duration_s: float | None = None
    threads: int | None = None
    ring_capacity: int = 100_000
    layer_iterations: int = 20


@dataclass
class ProfileOutcome:
    """A finished run (``result.error`` set when the backend raised mid-run) or per-layer profile."""

    request: ProfileRequest
    result: Any = None  # profiling.runner.RunResult
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    backend_memory: dict[str, int] = field(default_factory=dict)
    layers: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The run as a ``trtstudio.profile/1`` document (the CLI's shape)."""
        doc: dict[str, Any] = {
            "schema": "trtstudio.profile/1",
            "backend": self.request.backend,
            "model": self.request.model,
            "shapes": {k: list(v) for k, v in self.shapes.items()},
        }
        if self.result is not None:
            doc.update(self.result.to_dict())
            doc["memory"] = {**self.backend_memory, **doc["memory"]}
        if self.layers is not None:
            doc["layers"] = self.layers
        return doc


class _ColdReporter:
    """Wraps a backend for the runner: reports the first (cold) inference as progress, then gets out
    of the way (its ``infer_once`` becomes the backend's own bound method)."""

    def __init__(self, backend: Any, report: Callable[[object], None]) -> None:
        self._backend = backend
        self._report = report
        self.name = backend.name
        self.notes = backend.notes

    def infer_once(self) -> Any:
        timing = self._backend.infer_once()
        self.infer_once = self._backend.infer_once  # type: ignore[method-assign]
        self._report({"event": "cold", "cold_ms": timing.total_ms})
        return timing

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)


def _open_prepared(request: ProfileRequest, factory: BackendFactory | None) -> Any:
    from trtstudio.backends.base import open_backend
    from trtstudio.backends.inputs import load_input_file

    backend = (factory or open_backend)(request.backend, request.model, threads=request.threads)
    try:
        data = None
        if request.input_path:
            data = load_input_file(request.input_path, [s["name"] for s in backend.input_specs()])
        backend.prepare_inputs(dict(request.shapes), data)
    except InputError as exc:
        backend.close()
        # the core names CLI flags; in the GUI name the data file, or the shapes table
        if exc.path == "--input" and request.input_path:
            raise InputError(request.input_path, exc.message) from None
        if exc.path == "--shapes":
            raise InputError(None, f"run shapes: {exc.message}") from None
        raise
    except BaseException:
        backend.close()
        raise
    return backend


def profile_task(
    request: ProfileRequest,
    samples: Any,
    run_state: Any,
    monitor: Any = None,
    factory: BackendFactory | None = None,
) -> Callable[[TaskState], ProfileOutcome]:
    """The task a profiling worker runs: open and prepare the backend, run the ``Runner`` into
    ``samples`` (a ``SampleBuffer`` the live panels read) under ``run_state``, close the backend.
    Progress: ``{"event": "loaded", "shapes", "notes", "batch"}`` then ``{"event": "cold", "cold_ms"}``."""

    def task(state: TaskState) -> ProfileOutcome:
        from trtstudio.profiling.memory import default_probes
        from trtstudio.profiling.runner import RunConfig, Runner

        backend = _open_prepared(request, factory)
        try:
            shapes = dict(getattr(backend, "shapes", {}))
            batch = next((int(s[0]) for s in shapes.values() if s), 1)
            if monitor is not None:
                monitor.probes.extend(default_probes(gpu=request.backend not in ("ort",)))
                if "context_device_bytes" in backend.memory():
                    monitor.probes.append(lambda: {"context_device_bytes": int(backend.memory()["context_device_bytes"])})
            state.set_progress({"event": "loaded", "shapes": shapes, "notes": list(backend.notes), "batch": batch})
            config = RunConfig(warmup=request.warmup, iterations=request.iterations, duration_s=request.duration_s,
                               batch=batch, ring_capacity=request.ring_capacity)
            if run_state.is_stop_requested():
                run_state.phase = "finished"
            runner = Runner(_ColdReporter(backend, state.set_progress), config, run_state, samples, monitor)  # type: ignore[arg-type]
            result = runner.run()
            return ProfileOutcome(request, result, shapes, list(backend.notes), dict(backend.memory()))
        finally:
            backend.close()

    return task


def layer_task(request: ProfileRequest, factory: BackendFactory | None = None) -> Callable[[TaskState], ProfileOutcome]:
    """The task of a per-layer run: ``request.layer_iterations`` profiled inferences on a fresh backend."""

    def task(state: TaskState) -> ProfileOutcome:
        backend = _open_prepared(request, factory)
        try:
            state.set_progress({"event": "loaded", "shapes": dict(getattr(backend, "shapes", {}))})
            layers = backend.per_layer_profile(request.layer_iterations)
            return ProfileOutcome(request, None, dict(getattr(backend, "shapes", {})), list(backend.notes),
                                  dict(backend.memory()), [dict(r) for r in layers])
        finally:
            backend.close()

    return task


class WorkerDialog(QDialog):
    """A dialog that runs one task at a time in ``self._handle``; closing it cancels the task and
    waits for its thread (up to ``JOIN_MS``). Subclasses set ``_handle`` when they start a task."""

    JOIN_MS = 60_000

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._handle: WorkerHandle | None = None
        self._closing = False

    def _start_task(self, fn: Callable[[TaskState], Any], name: str, cancel_state: Stoppable | None = None) -> None:
        """Run ``fn`` with the subclass's ``_on_worker_done/_error/_progress/_finished`` slots."""
        self._handle = run_in_thread(fn, cancel_state=cancel_state, on_done=self._on_worker_done,
                                     on_error=self._on_worker_error, on_progress=self._on_worker_progress,
                                     on_finished=self._on_worker_finished, name=name)
        self._set_running(True)

    def _cancel_task(self) -> None:
        """Ask the running task to stop at its next check (needs ``phase_label`` and ``cancel_button``)."""
        if self._handle is not None:
            self._handle.request_stop()
            self.phase_label.setText("Cancelling…")  # type: ignore[attr-defined]
            self.cancel_button.setEnabled(False)  # type: ignore[attr-defined]

    def _show_task_error(self, exc: object, what: str) -> str:
        """A task that raised: reset the progress bar, say "<what> failed: ..." and return the one line."""
        text = error_text(exc) if isinstance(exc, BaseException) else str(exc)
        self.progress.setRange(0, 1)  # type: ignore[attr-defined]
        self.progress.setValue(0)  # type: ignore[attr-defined]
        self.phase_label.setText("Failed")  # type: ignore[attr-defined]
        self._show_status(f"{what} failed: {text}", error=True)
        return text

    def _show_status(self, text: str, error: bool = False) -> None:
        self.status_label.setText(text)  # type: ignore[attr-defined]
        self.status_label.setStyleSheet("QLabel { color: #b00020; }" if error else "")  # type: ignore[attr-defined]

    def shutdown(self) -> bool:
        """Cancel a running task and wait for its thread; True when none is left running."""
        self._closing = True
        handle = self._handle
        if handle is None:
            return True
        ended = handle.stop(self.JOIN_MS)
        if ended:
            self._handle = None
        return ended

    def done(self, r: int) -> None:  # accept/reject both end here
        self.shutdown()
        super().done(r)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self.shutdown()
        super().closeEvent(event)
