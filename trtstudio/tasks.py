"""One task abstraction for long work: builds, profiling runs, precision sweeps, loading, export.

Every long piece of work in trtstudio is a plain function that takes a :class:`TaskState` and
returns a result. The state carries

* a cooperative stop flag (``request_stop`` / ``is_stop_requested`` / ``check``), checked by the
  work between steps: never a thread kill;
* a pause gate (``pause`` / ``resume`` / ``wait_while_paused``) for loops that can hold;
* typed events (:class:`TaskEvent`: ``progress``, ``log`` or a task-specific kind such as
  ``loaded`` or ``cold``) handed to ``on_event`` on the worker's thread.

The CLI passes ``on_event=None`` (or a printer); the Qt adapter in ``trtstudio.ui.workers`` passes a
queued signal's ``emit``, so the GUI receives events in its own thread. ``RunState`` (profiling) and
``PrecisionState`` (precision) are subclasses that keep their own counters.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from trtstudio.errors import BackendError, BuildError, InputError


class Cancelled(Exception):
    """Raised inside a task by :meth:`TaskState.check` once a stop was requested."""


class Stoppable(Protocol):
    """Anything with a cooperative ``request_stop`` (every TaskState)."""

    def request_stop(self) -> None: ...


@dataclass(frozen=True)
class TaskEvent:
    """One event of a task. ``kind``: ``progress`` (``phase``, ``message``, ``step`` of ``total``),
    ``log`` (``severity``, ``message``) or a task-specific kind with its ``data``."""

    kind: str
    phase: str = ""
    message: str = ""
    step: int | None = None
    total: int | None = None
    severity: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def fraction(self) -> float | None:
        """``step / total`` when both are known, else None."""
        if self.step is None or not self.total:
            return None
        return max(0.0, min(1.0, self.step / self.total))


EventSink = Callable[[Any], None]


class TaskState:
    """Stop flag, pause gate and event sink of one task (thread-safe)."""

    def __init__(self, on_event: EventSink | None = None) -> None:
        self._stop = threading.Event()
        self._running = threading.Event()
        self._running.set()
        self.on_event = on_event

    # -- stop --------------------------------------------------------------------------------------
    def request_stop(self) -> None:
        """Ask the task to end at its next check (also wakes a paused task)."""
        self._stop.set()
        self._running.set()

    def is_stop_requested(self) -> bool:
        """True once a stop was asked for."""
        return self._stop.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` when a stop was requested."""
        if self._stop.is_set():
            raise Cancelled("cancelled")

    # -- pause -------------------------------------------------------------------------------------
    def pause(self) -> None:
        """Hold the task at its next ``wait_while_paused``."""
        self._running.clear()

    def resume(self) -> None:
        """Let a paused task go on."""
        self._running.set()

    def is_paused(self) -> bool:
        """True while paused."""
        return not self._running.is_set()

    def wait_while_paused(self, timeout: float | None = None) -> None:
        """Block while paused (returns at once when running)."""
        self._running.wait(timeout)

    # -- events ------------------------------------------------------------------------------------
    def emit(self, event: Any) -> None:
        """Hand ``event`` (normally a :class:`TaskEvent`) to the sink, if any."""
        if self.on_event is not None:
            self.on_event(event)

    def event(self, kind: str, **data: Any) -> None:
        """Emit a task-specific event ``kind`` carrying ``data``."""
        self.emit(TaskEvent(kind, data=data))

    def progress(self, phase: str, message: str = "", step: int | None = None, total: int | None = None) -> None:
        """Emit a ``progress`` event."""
        self.emit(TaskEvent("progress", phase=phase, message=message, step=step, total=total))

    def log(self, severity: str, message: str) -> None:
        """Emit a ``log`` event (one line of a build log, a warning...)."""
        self.emit(TaskEvent("log", severity=severity, message=message))

    def set_progress(self, value: object) -> None:
        """Emit ``value`` as it is (dialogs that predate :class:`TaskEvent` send dicts)."""
        self.emit(value)

    # -- adapters ----------------------------------------------------------------------------------
    def build_callbacks(self) -> dict[str, Callable[..., Any]]:
        """``progress``/``log``/``cancel`` keyword arguments for ``backends.build.build_engine``."""
        return {
            "progress": lambda phase, step, total: self.progress(str(phase), step=step, total=total),
            "log": lambda severity, message: self.log(str(severity), str(message)),
            "cancel": self.is_stop_requested,
        }


def error_text(exc: BaseException) -> str:
    """One line for the user: our own errors as they read, others prefixed by their type; no traceback."""
    if isinstance(exc, InputError):
        return exc.one_line()
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, (BackendError, BuildError)):
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
