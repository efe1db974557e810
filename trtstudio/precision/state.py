"""Progress and cooperative cancel for precision work (conversion, calibration, sweeps).

Like :class:`trtstudio.profiling.runner.RunState`: plain Python, shared between the thread that does
the work and the one that watches it. ``on_progress`` (optional) receives every ``report`` call on
the worker's thread; a Qt worker adapts it to a queued signal.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class Cancelled(Exception):
    """Raised inside precision work when a stop was requested."""


class PrecisionState:
    """Progress (``step`` of ``total``, ``phase``, ``message``) and a stop flag."""

    def __init__(self, on_progress: Callable[[dict[str, Any]], None] | None = None) -> None:
        self._stop = threading.Event()
        self.on_progress = on_progress
        self.phase = "idle"
        self.message = ""
        self.step = 0
        self.total = 0

    def request_stop(self) -> None:
        """Ask the work to end at its next check."""
        self._stop.set()

    def is_stop_requested(self) -> bool:
        """True once ``request_stop`` was called."""
        return self._stop.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` when a stop was requested."""
        if self._stop.is_set():
            raise Cancelled("cancelled")

    def report(self, phase: str, message: str = "", step: int | None = None, total: int | None = None) -> None:
        """Record progress and pass it to ``on_progress``."""
        self.phase, self.message = phase, message
        if step is not None:
            self.step = step
        if total is not None:
            self.total = total
        if self.on_progress is not None:
            self.on_progress({"phase": phase, "message": message, "step": self.step, "total": self.total})
