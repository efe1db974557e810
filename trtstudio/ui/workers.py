"""Qt workers: run plain-Python tasks (builds, profiling runs, calibration) off the GUI thread.

Standard QThread wiring (STYLE.md): a worker QObject without parent is moved to a QThread without
parent; ``thread.started -> worker.work``, ``worker finished -> thread.quit``, ``deleteLater`` on
the thread. The worker moves itself back to the GUI thread when its task ends and is deleted
there (deleting a Python-wrapped QObject on the worker thread can deadlock with the GIL). The task talks to the GUI only through queued signals, re-emitted by a ``WorkerHandle`` that
lives in the GUI thread; workers never touch widgets. Stop is cooperative: ``request_stop`` sets
the task's flag (and the caller's ``cancel_state``); shutdown quits and waits, never terminates.

Every started thread is kept in a module registry until it finishes, so ``live_threads()`` can tell
tests (and the main window) which threads still run, and ``shutdown_all`` can join them on close.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QDialog, QLabel, QProgressBar, QPushButton

from trtstudio.tasks import Stoppable, TaskState, error_text

__all__ = ["Stoppable", "TaskState", "WorkerDialog", "WorkerHandle", "error_text", "live_handles", "live_threads",
           "run_in_thread", "shutdown_all"]

_HANDLES: list[WorkerHandle] = []
_LOCK = threading.Lock()


class _Worker(QObject):
    """Runs ``fn(task_state)`` once on its thread; results leave only through signals."""

    sig_done = Signal(object)
    sig_error = Signal(object)
    sig_progress = Signal(object)
    sig_finished = Signal()

    def __init__(self, fn: Callable[[TaskState], Any], state: TaskState | None = None) -> None:
        super().__init__()  # no parent: it is moved to its own thread
        self._fn = fn
        self.state = state if state is not None else TaskState()
        self.state.on_event = self.sig_progress.emit  # events leave the worker thread as a queued signal

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
            # Hand the worker back to the GUI thread: its C++ side is then deleted there, with the
            # GIL held. Deleted on this thread (deleteLater), ~QObject takes Qt's connection mutex
            # and then waits for the GIL (shiboken's override lookup) while the GUI thread holds
            # the GIL and waits for that mutex in connect(): a deadlock seen under load.
            app = QCoreApplication.instance()
            if app is not None:
                self.moveToThread(app.thread())


class WorkerHandle(QObject):
    """The GUI-thread side of one task: queued re-emission of its signals, stop and join.

    Signals: ``sig_done(result)``, ``sig_error(exception)``, ``sig_progress(value)``, and
    ``sig_finished()`` after either of the first two (the thread may still be winding down).
    """

    sig_done = Signal(object)
    sig_error = Signal(object)
    sig_progress = Signal(object)
    sig_finished = Signal()

    def __init__(self, fn: Callable[[TaskState], Any], cancel_state: Stoppable | None = None, name: str = "",
                 state: TaskState | None = None) -> None:
        super().__init__()
        self.name = name or getattr(fn, "__name__", "task")
        self.cancel_state = cancel_state
        self.result: Any = None
        self.error: BaseException | None = None
        self._done = False
        self.qthread = QThread()  # no parent
        self.qthread.setObjectName(f"trtstudio-{self.name}")
        self.worker = _Worker(fn, state)
        # kept apart from the worker: its C++ side is deleted when the thread ends
        self._state = self.worker.state
        self.worker.moveToThread(self.qthread)
        self.qthread.started.connect(self.worker.work)
        self.worker.sig_finished.connect(self.qthread.quit)
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
        self.worker = None  # type: ignore[assignment]  # deleted here, on the GUI thread (see _Worker.work)


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
    state: TaskState | None = None,
) -> WorkerHandle:
    """Run ``fn(task_state)`` on a new QThread and return its started handle.

    ``on_done(result)``, ``on_error(exc)``, ``on_progress(value)`` and ``on_finished()`` run in the
    GUI thread (queued). ``cancel_state.request_stop()`` is called by ``handle.request_stop()``,
    which lets a loop that checks its own state object (a profiling ``RunState``) stop too.
    ``state`` (e.g. a profiling ``RunState``) is the TaskState the task receives; its events are
    re-emitted as ``on_progress``. Call from the GUI thread.
    """
    handle = WorkerHandle(fn, cancel_state, name, state)
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


class WorkerDialog(QDialog):
    """A dialog that runs one task at a time in ``self._handle``; closing it cancels the task and
    waits for its thread (up to ``JOIN_MS``). Subclasses set ``_handle`` when they start a task.

    Subclasses create the four widgets declared below and implement the ``_on_worker_*`` slots and
    ``_set_running``."""

    JOIN_MS = 60_000
    phase_label: QLabel
    cancel_button: QPushButton
    progress: QProgressBar
    status_label: QLabel

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

    def _set_running(self, running: bool) -> None:
        """Enable the form's controls for a running (or finished) task."""
        raise NotImplementedError

    def _on_worker_done(self, result: object) -> None:
        """The task returned ``result``."""
        raise NotImplementedError

    def _on_worker_error(self, exc: object) -> None:
        """The task raised ``exc``."""
        raise NotImplementedError

    def _on_worker_progress(self, value: object) -> None:
        """The task reported ``value`` (a TaskEvent or a legacy tuple/dict)."""
        raise NotImplementedError

    def _on_worker_finished(self) -> None:
        """The task ended either way."""
        raise NotImplementedError

    def _cancel_task(self) -> None:
        """Ask the running task to stop at its next check."""
        if self._handle is not None:
            self._handle.request_stop()
            self.phase_label.setText("Cancelling…")
            self.cancel_button.setEnabled(False)

    def _show_task_error(self, exc: object, what: str) -> str:
        """A task that raised: reset the progress bar, say "<what> failed: ..." and return the one line."""
        text = error_text(exc) if isinstance(exc, BaseException) else str(exc)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.phase_label.setText("Failed")
        self._show_status(f"{what} failed: {text}", error=True)
        return text

    def _show_status(self, text: str, error: bool = False) -> None:
        self.status_label.setText(text)
        self.status_label.setStyleSheet("QLabel { color: #b00020; }" if error else "")

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
