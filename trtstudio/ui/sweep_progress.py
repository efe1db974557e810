"""The Sweep tab's progress bar: the share of the sweep done, progress within the step under way
(inferences measured, or seconds of its duration) and an estimate of the time left
(:func:`trtstudio.profiling.sweep.sweep_progress`), read from the sweep's ``RunState`` four times a
second while it runs. A 4-step sweep once sat on "step 3 of 4 done" for 100 s with nothing moving."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QProgressBar, QWidget

TICK_MS = 250


def _secs(s: float) -> str:
    return f"{s:.0f} s" if s < 90 else f"{s / 60:.1f} min"


class SweepProgress(QProgressBar):
    """``begin(state, iterations, duration_s)`` when a sweep starts; ``plan(steps)``,
    ``step_started(index, label)``, ``step_done()`` from its events; ``finish()`` when it ends."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRange(0, 1000)
        self.setTextVisible(True)
        self.hide()
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self.tick)
        self._state: Any = None
        self._iterations: int | None = None
        self._duration: float | None = None
        self.steps = 0
        self.finished_s: list[float] = []
        self._label = ""
        self._started: float | None = None
        self.last: dict[str, Any] = {}  # what the last tick computed (sweep_progress's answer)

    def begin(self, state: Any, iterations: int | None, duration_s: float | None) -> None:
        self._state, self._iterations, self._duration = state, iterations, duration_s
        self.steps, self.finished_s, self._label, self._started, self.last = 0, [], "", None, {}
        self.setValue(0)
        self.setFormat("loading the model…")
        self.show()
        self._timer.start()

    def plan(self, steps: int) -> None:
        self.steps = steps

    def step_started(self, index: int, label: str) -> None:
        self._label = f"step {index + 1} of {self.steps or '?'} ({label})"
        self._started = time.monotonic()
        self.tick()

    def step_done(self) -> None:
        if self._started is not None:
            self.finished_s.append(time.monotonic() - self._started)
        self._started = None
        self.tick()

    def finish(self) -> None:
        self._timer.stop()
        self._state = None
        self.hide()

    def tick(self) -> None:
        """Read the run's state and show where the sweep stands."""
        from trtstudio.profiling.sweep import sweep_progress

        if self._state is None or not self.steps:
            return
        current = time.monotonic() - self._started if self._started is not None else 0.0
        phase = getattr(self._state, "phase", "measure")
        measuring = self._started is not None and phase in ("measure", "paused")
        done = int(getattr(self._state, "done", 0)) if measuring else 0
        p = self.last = sweep_progress(self.steps, self.finished_s, current, done, self._iterations, self._duration,
                                       measuring)
        self.setValue(round(1000 * p["fraction"]))
        if self._started is None:
            where = f"{len(self.finished_s)} of {self.steps} steps done"
        elif not measuring:
            where = f"{self._label}: {'warming up' if phase in ('cold', 'warmup') else 'preparing'}"
        elif self._iterations:
            where = f"{self._label}: {done:,} of {self._iterations:,} inferences"
        else:
            where = f"{self._label}: {done:,} inferences, {_secs(current)} of about {_secs(self._duration or 0)}"
        left = p["left_s"]
        self.setFormat(where + (f" · about {_secs(left)} left" if left is not None else ""))


class StepPace(QObject):
    """Time within the step under way and the time left, for work reported in steps (a precision
    sweep's variants, then its profiling rounds: ``report(message, step, total)``, ``step`` the steps
    done; a new ``total`` starts a new count), written into
    ``label`` every second so a long step never looks frozen."""

    def __init__(self, label: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.label = label
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self.tick)
        self.message, self.step, self.total = "", 0, 0
        self.finished_s: list[float] = []
        self._since = time.monotonic()

    def start(self) -> None:
        self.message, self.step, self.total, self.finished_s = "", 0, 0, []
        self._since = time.monotonic()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def report(self, message: str, step: int, total: int) -> None:
        now = time.monotonic()
        if total != self.total or step < self.step:  # another phase, counted in steps of its own
            self.finished_s, self.step, self._since = [], 0, now
        if step > self.step:  # steps ended since the last report: their time, shared out
            self.finished_s += [(now - self._since) / (step - self.step)] * (step - self.step)
            self._since = now
        self.message, self.step, self.total = message, step, total
        self.tick()

    def tick(self) -> None:
        from trtstudio.profiling.sweep import sweep_progress

        if not self.total or self.step >= self.total:
            self.label.setText(self.message)
            return
        current = time.monotonic() - self._since
        left = sweep_progress(self.total, self.finished_s, current)["left_s"]
        self.label.setText(f"{self.message} · step {self.step + 1} of {self.total}, {_secs(current)} in it"
                           + (f" · about {_secs(left)} left" if left is not None else ""))
