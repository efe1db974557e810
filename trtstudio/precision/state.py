"""Progress and cooperative cancel for precision work (conversion, calibration, sweeps).

A :class:`trtstudio.tasks.TaskState` like every task's state: plain Python, shared between the
thread that does the work and the one that watches it. ``on_progress`` (optional) receives every ``report`` call on
the worker's thread; a Qt worker adapts it to a queued signal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trtstudio.tasks import Cancelled, TaskState

__all__ = ["Cancelled", "PrecisionState"]


class PrecisionState(TaskState):
    """Progress (``step`` of ``total``, ``phase``, ``message``) and the TaskState stop flag.

    ``on_progress`` receives every ``report`` as a dict (what the precision dialog and the CLI read);
    the same report is also emitted as a ``progress`` :class:`~trtstudio.tasks.TaskEvent`."""

    def __init__(self, on_progress: Callable[[dict[str, Any]], None] | None = None) -> None:
        super().__init__()
        self.on_progress = on_progress
        self.phase = "idle"
        self.message = ""
        self.step = 0
        self.total = 0

    def report(self, phase: str, message: str = "", step: int | None = None, total: int | None = None) -> None:
        """Record progress and pass it to ``on_progress``."""
        self.phase, self.message = phase, message
        if step is not None:
            self.step = step
        if total is not None:
            self.total = total
        if self.on_progress is not None:
            self.on_progress({"phase": phase, "message": message, "step": self.step, "total": self.total})
        self.progress(phase, message, self.step, self.total)
