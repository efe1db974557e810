"""Present mode (View > Present, F11): the run and its verdicts in large type, for a room.

A full-screen window showing the At a glance figures of what the window holds (the report's
``summary``, computed in a worker), the live latency of the current run, and a chosen baseline run
(a saved session) beside it, so a demo shows the optimisation happening. Readable from across a
room on a 1080p projector: figures in 56 px, text in 22 px. Esc or F11 leaves it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import QFileDialog, QGridLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from trtstudio.profiling.present import Baseline, PresentFigures, baseline_from_session, run_headline
from trtstudio.ui.workers import error_text, run_in_thread

REFRESH_MS = 250
TEXT_PX, FIGURE_PX, HEAD_PX = 22, 56, 30
TICK_PX = FIGURE_PX // 2  # the plot's ticks and axis labels, scaled with the figures (18 px could not be read at 3 m)
_NOW, _BASE = "#1f77b4", "#9a9a9a"


def _label(px: int, bold: bool = False, color: str | None = None) -> QLabel:
    lab = QLabel("–")
    f = QFont()
    f.setPixelSize(px)
    f.setBold(bold)
    lab.setFont(f)
    lab.setWordWrap(True)
    if color:
        lab.setStyleSheet(f"color: {color};")
    return lab


class PresentView(QWidget):
    """The Present window over ``window`` (the MainWindow): its workspace and live profile."""

    def __init__(self, window: Any) -> None:
        super().__init__(None, Qt.WindowType.Window)
        self.w = window
        self.baseline: Baseline | None = None
        self._workers: list[Any] = []
        self._figures = PresentFigures()
        self._summary: dict[str, Any] | None = None  # the At a glance summary last computed
        self._summary_run: Any = None  # the run data it was computed with (None: no run)
        self._summary_done = False
        self._summary_error: str | None = None
        self.last_figures: dict[str, Any] = {}  # what the last frame showed (profiling.present's figures)
        self.setWindowTitle("trtstudio - Present")
        self.setStyleSheet("background: white; color: #1b1b1b;")
        self._build()
        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.refresh)
        for key in ("Esc", "F11"):
            QShortcut(QKeySequence(key), self, self.close)

    def _build(self) -> None:
        root = QVBoxLayout(self)
        root.setContentsMargins(48, 32, 48, 32)
        self.title = _label(HEAD_PX, bold=True)
        self.headline = _label(TEXT_PX)
        root.addWidget(self.title)
        root.addWidget(self.headline)
        grid = QGridLayout()
        self.figures: dict[str, tuple[QLabel, QLabel]] = {}
        for col, (key, caption) in enumerate((("median", "median now"), ("p99", "p99 now"),
                                               ("throughput", "inferences/s now"), ("baseline", "baseline median"))):
            value, cap = _label(FIGURE_PX, bold=True, color=_BASE if key == "baseline" else _NOW), _label(TEXT_PX)
            cap.setText(caption)
            grid.addWidget(value, 0, col)
            grid.addWidget(cap, 1, col)
            self.figures[key] = (value, cap)
        root.addLayout(grid)
        self.change = _label(HEAD_PX, bold=True)
        root.addWidget(self.change)
        self.plot = pg.PlotWidget(background="w")
        style = {"font-size": f"{TICK_PX}px"}
        self.plot.setLabel("left", "latency", units="ms", **style)
        self.plot.setLabel("bottom", "inference (the last 2,000)", **style)
        f = QFont()
        f.setPixelSize(TICK_PX)
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).setTickFont(f)
            self.plot.getAxis(axis).setStyle(tickTextOffset=8, tickLength=-12)
            self.plot.getAxis(axis).setPen(pg.mkPen("#1b1b1b", width=2))
            self.plot.getAxis(axis).setTextPen(pg.mkPen("#1b1b1b"))
        self.curve = self.plot.plot(pen=pg.mkPen(_NOW, width=2))
        self.base_line = pg.InfiniteLine(angle=0, pen=pg.mkPen(_BASE, width=3, style=Qt.PenStyle.DashLine))
        self.base_line.hide()
        self.plot.addItem(self.base_line)
        root.addWidget(self.plot, 1)
        self.glance = _label(TEXT_PX)
        root.addWidget(self.glance)
        row = QHBoxLayout()
        self.baseline_button = QPushButton("Baseline session...")
        self.baseline_button.setFont(self.glance.font())
        self.baseline_button.clicked.connect(self._on_baseline_button_clicked)
        row.addWidget(self.baseline_button)
        row.addStretch(1)
        hint = _label(16, color="#777")
        hint.setText("Esc or F11 leaves Present mode")
        row.addWidget(hint)
        root.addLayout(row)

    # -- data --------------------------------------------------------------------------------------
    def samples(self) -> Any:
        """The live run's ring buffer (None before the first run)."""
        panel = getattr(self.w, "profile_panel", None)
        live = getattr(panel, "live", None) if panel is not None else None
        return getattr(live, "samples", None)

    def set_baseline(self, baseline: Baseline | None) -> None:
        self.baseline = baseline
        self.refresh()

    def current_run(self) -> Any:
        """The run the live panel shows: the active run, else the last one that ended (None: none yet)."""
        ws = self.w.workspace
        active = ws.active_runs()
        return active[-1] if active else (ws.runs[-1] if ws.runs else None)

    def refresh(self) -> None:
        """One frame: the headline, the figures and the plot from the last samples of the live run."""
        buf = self.samples()
        snap = buf.snapshot(last_n=2000) if buf is not None and buf.count else {"t_s": np.zeros(0),
                                                                                 "latency_ms": np.zeros(0)}
        entry = self.current_run()
        fig = self._figures(snap["t_s"], snap["latency_ms"], self.baseline, run=id(entry))
        self.last_figures = fig
        now, base = fig["now"], fig["baseline"]
        self.headline.setText(self._headline(fig, entry))
        self.figures["median"][0].setText(f"{now['median_ms']:.3g} ms" if now else "–")
        self.figures["p99"][0].setText(f"{now['p99_ms']:.3g} ms" if now else "–")
        self.figures["throughput"][0].setText(f"{now['throughput']:,.0f}" if now and "throughput" in now else "–")
        self.figures["baseline"][0].setText(f"{base['median_ms']:.3g} ms" if base else "–")
        self.figures["baseline"][1].setText(f"baseline median ({fig['baseline_name']})" if base else
                                            "no baseline: choose a saved session")
        self.change.setText(self._change_text(fig, entry))
        self.curve.setData(snap["latency_ms"])
        if base:
            self.base_line.setValue(base["median_ms"])
            self.base_line.show()
        else:
            self.base_line.hide()

    def _change_text(self, fig: dict[str, Any], entry: Any) -> str:
        """The change against the baseline; without one, what would give it (the run's own figures
        are in the headline's figures already: the room read them three times)."""
        if fig["now"] is None:
            return fig["text"] if entry is not None and entry.active else "No run yet: start one (F5) to see it live."
        return fig["text"] if fig["change"] is not None else "Choose a baseline session to see the change."

    def _headline(self, fig: dict[str, Any], entry: Any) -> str:
        """The live run while one is going; after it, the At a glance headline once it sums that run
        up (until then the run's own figures); with no run, the summary's."""
        if entry is not None and entry.active:
            return run_headline(fig, entry.label(), live=True, figures=False)
        last = self.w.workspace.last_run()
        fresh = self._summary_done and self._summary_run is (last.data if last is not None else None)
        if fresh and self._summary:
            return str(self._summary["headline"]["text"])
        if entry is not None and fig["now"] is not None:
            return run_headline(fig, entry.label(), live=False, figures=False)
        if self._summary_done and not self._summary:
            return self._summary_error or "Open a model, an engine or a run to sum up."
        return str(self._summary["headline"]["text"]) if self._summary else "summing up..."

    def start(self) -> None:
        """Show full screen, compute the At a glance summary in a worker (again whenever a run ends or
        the engine changes), start the refresh timer."""
        ws = self.w.workspace
        name = ws.model_path or (ws.last_run().model if ws.last_run() is not None else "no model open")
        self.title.setText(str(name).rsplit("/", 1)[-1])
        self.headline.setText("summing up...")
        self.resummarize()
        for event in ("runs", "analysis"):
            ws.events.connect(event, self._on_workspace_changed)
        self.showFullScreen()
        self.refresh()
        self.timer.start()

    def resummarize(self) -> None:
        """Compute the At a glance summary of the workspace in a worker."""
        inputs = self.w.workspace.report_inputs()
        run = inputs.get("run")
        self._workers.append(run_in_thread(lambda _s: _summary(inputs), on_done=lambda s: self._on_summary(s, run),
                                           on_error=self._on_summary_error, name="present"))

    def _on_workspace_changed(self, ws: Any) -> None:
        if not ws.active_runs():  # a run ended (or the engine changed): sum up again
            self.resummarize()

    def _on_summary_error(self, exc: BaseException) -> None:
        self._summary_error = error_text(exc)
        self._on_summary(None, None)

    def _on_summary(self, s: dict[str, Any] | None, run: Any = None) -> None:
        self._summary, self._summary_run, self._summary_done = s, run, True
        if s is not None:
            self._summary_error = None
        self.refresh()
        if not s:
            return
        parts = []
        if s["time_by_type"]:
            what = "time" if s.get("timed") else "layers"
            parts.append(f"Most {what}: " + ", ".join(f"{t['type']} {t['share'] * 100:.0f} %" for t in s["time_by_type"][:3]))
        counts = s["findings_by_severity"]["counts"]
        if any(counts.values()):
            parts.append("Findings: " + ", ".join(f"{n} {k}" for k, n in counts.items() if n))
        if s["next_steps"]:
            parts.append("Next: " + s["next_steps"][0]["action"])
        prov = s["headline"].get("engine_provenance")
        if prov:  # the engine's GPU and TensorRT from its own files, never this machine's
            from trtstudio.report.compare import prov_text

            parts.append(f"Engine: {prov_text(prov)} (from its files)")
        self.glance.setText("\n".join(parts))

    def _on_baseline_button_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Baseline session", "", "trtstudio sessions (*.trtstudio);;All files (*)")
        if path:
            self.load_baseline(path)

    def load_baseline(self, path: str) -> None:
        """Read the session at ``path`` in a worker and take its first run as the baseline."""
        self._workers.append(run_in_thread(lambda _s: baseline_from_session(path), on_done=self.set_baseline,
                                           on_error=lambda e: self.change.setText(error_text(e)), name="baseline"))

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self.timer.stop()
        for name in ("runs", "analysis"):
            try:
                self.w.workspace.events.disconnect(name, self._on_workspace_changed)
            except (KeyError, ValueError):
                pass
        for h in self._workers:
            h.stop(2000)
        super().closeEvent(event)


def _summary(inputs: dict[str, Any]) -> dict[str, Any] | None:
    if not any(inputs.get(k) for k in ("model", "engine", "run")):
        return None
    from trtstudio.report.model import build_report

    rep = build_report(**inputs)
    return rep.summary
