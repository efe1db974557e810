"""TritonDialog: sweep a model served by Triton Inference Server from the window, live.

The sweep is ``trtstudio.triton.sweep.run_sweep`` (Qt-free, the same as ``trtstudio triton``), run
in a worker; each measurement window and each finished step come back as TaskEvents and are drawn
as they arrive: latency p50/p99 per window over time, the server's queue and compute time per
window, and the latency-throughput curve of the finished steps with a table of them.
``sig_finished(dict)`` carries the ``trtstudio.triton/1`` document.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from trtstudio.tasks import TaskEvent, TaskState
from trtstudio.triton.sweep import compute_us, step_figures
from trtstudio.ui.workers import WorkerDialog

STEP_COLUMNS = ("step", "requests", "infer/s", "p50 ms", "p99 ms", "queue µs", "compute µs", "stable")


class TritonDialog(WorkerDialog):
    """Server URL, model, concurrency (or rate) steps and limits; Start/Stop; live plots; the steps."""

    sig_finished = Signal(object)

    def __init__(self, parent: QWidget | None = None, url: str = "localhost:8000", model: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Triton Inference Server sweep")
        self.resize(1000, 720)
        self.document: dict[str, Any] | None = None
        self._windows: list[dict[str, Any]] = []
        self._steps: list[dict[str, Any]] = []

        form = QFormLayout()
        self.url_edit = QLineEdit(url)
        self.model_edit = QLineEdit(model)
        self.protocol_combo = QComboBox()
        self.protocol_combo.addItems(["auto (8001 = gRPC)", "http", "grpc"])
        self.mode_combo = QComboBox()
        self.mode_combo.addItems(["Concurrency", "Request rate (/s)"])
        self.steps_edit = QLineEdit("1,2,4,8")
        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(1, 4096)
        self.window_spin = QDoubleSpinBox()
        self.window_spin.setRange(0.1, 60.0)
        self.window_spin.setValue(1.0)
        self.window_spin.setSuffix(" s")
        self.budget_spin = QDoubleSpinBox()
        self.budget_spin.setRange(0.0, 1e6)
        self.budget_spin.setSpecialValueText("none")
        self.budget_spin.setSuffix(" ms")
        row = QHBoxLayout()
        row.addWidget(self.mode_combo)
        row.addWidget(self.steps_edit, 1)
        fields: tuple[tuple[str, QWidget], ...] = (
            ("Server", self.url_edit), ("Model", self.model_edit), ("Protocol", self.protocol_combo))
        for label, field in fields:
            form.addRow(label, field)
        form.addRow("Steps", row)
        fields = (("Batch", self.batch_spin), ("Window", self.window_spin), ("p99 budget", self.budget_spin))
        for label, field in fields:
            form.addRow(label, field)

        self.start_button = QPushButton("Start")
        self.start_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Stop")
        self.cancel_button.clicked.connect(self._cancel_task)
        self.progress = QProgressBar()
        self.phase_label = QLabel("")
        self.status_label = QLabel("")
        self.status_label.setWordWrap(True)
        buttons = QHBoxLayout()
        for widget in (self.start_button, self.cancel_button, self.progress, self.phase_label):
            buttons.addWidget(widget)

        self.latency_plot = pg.PlotWidget(title="Client latency per window")
        self.latency_plot.setLabel("left", "ms")
        self.latency_plot.setLabel("bottom", "window")
        self.latency_plot.addLegend()
        self.p50_curve = self.latency_plot.plot(pen=pg.mkPen("#1f77b4", width=2), name="p50")
        self.p99_curve = self.latency_plot.plot(pen=pg.mkPen("#ff7f0e", width=2), name="p99")
        self.server_plot = pg.PlotWidget(title="Server time per request")
        self.server_plot.setLabel("left", "µs")
        self.server_plot.addLegend()
        self.queue_curve = self.server_plot.plot(pen=pg.mkPen("#d62728", width=2), name="queue")
        self.compute_curve = self.server_plot.plot(pen=pg.mkPen("#2ca02c", width=2), name="compute")
        self.curve_plot = pg.PlotWidget(title="Latency vs throughput (finished steps)")
        self.curve_plot.setLabel("left", "p99 ms")
        self.curve_plot.setLabel("bottom", "inferences/s")
        self.step_curve = self.curve_plot.plot(pen=pg.mkPen("#9467bd", width=2), symbol="o")
        plots = QHBoxLayout()
        for p in (self.latency_plot, self.server_plot, self.curve_plot):
            plots.addWidget(p)

        self.table = QTableWidget(0, len(STEP_COLUMNS))
        self.table.setHorizontalHeaderLabels(list(STEP_COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.recommendation_label = QLabel("")
        self.recommendation_label.setWordWrap(True)

        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addLayout(buttons)
        lay.addWidget(self.status_label)
        lay.addLayout(plots, 3)
        lay.addWidget(self.table, 2)
        lay.addWidget(self.recommendation_label)
        self._set_running(False)

    # -- control ---------------------------------------------------------------------------------
    def settings(self) -> Any:
        """The SweepSettings the form describes (ValueError for malformed steps)."""
        from trtstudio.triton.sweep import SweepSettings, parse_steps

        rate = self.mode_combo.currentIndex() == 1
        values = parse_steps(self.steps_edit.text(), float if rate else int)
        budget = self.budget_spin.value() or None
        return SweepSettings(concurrency=[] if rate else values, rates=values if rate else [],
                             batch=self.batch_spin.value(), window_s=self.window_spin.value(), latency_budget_ms=budget)

    def start(self) -> None:
        """Start the sweep (errors in the form are shown, not raised)."""
        if self._handle is not None and not self._handle.is_done():
            return
        try:
            settings = self.settings()
        except ValueError as exc:
            self._show_status(str(exc), error=True)
            return
        url, model = self.url_edit.text().strip(), self.model_edit.text().strip()
        if not url or not model:
            self._show_status("give the server (host:port) and the model name", error=True)
            return
        protocol = {1: "http", 2: "grpc"}.get(self.protocol_combo.currentIndex())
        self._windows, self._steps, self.document = [], [], None
        self.table.setRowCount(0)
        self.recommendation_label.setText("")
        self.progress.setRange(0, len(settings.steps()))
        self.progress.setValue(0)
        self._show_status(f"connecting to {url}…")

        def task(state: TaskState) -> Any:
            from trtstudio.triton.sweep import run_sweep

            return run_sweep(url, model, settings, protocol=protocol, metrics=None,
                             should_stop=state.is_stop_requested,
                             on_window=lambda w: state.event("window", window=w),
                             on_step=lambda s: state.event("step", step=s))

        self._start_task(task, "triton")

    def _set_running(self, running: bool) -> None:
        self.start_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        for w in (self.url_edit, self.model_edit, self.protocol_combo, self.mode_combo, self.steps_edit,
                  self.batch_spin, self.window_spin, self.budget_spin):
            w.setEnabled(not running)

    # -- worker results ------------------------------------------------------------------------------
    def _on_worker_progress(self, value: object) -> None:
        if not isinstance(value, TaskEvent):
            return
        if value.kind == "window":
            w = value.data["window"]
            self._windows.append(w)
            self.phase_label.setText(f"step {w['step'] + 1}: {w['throughput']:.0f} infer/s")
            self._draw_windows()
        elif value.kind == "step":
            self._steps.append(value.data["step"])
            self.progress.setValue(len(self._steps))
            self._add_step_row(value.data["step"])

    def _draw_windows(self) -> None:
        xs = list(range(len(self._windows)))
        lat = [w.get("latency_ms") or {} for w in self._windows]
        self.p50_curve.setData(xs, [float(v.get("p50") or 0.0) for v in lat])
        self.p99_curve.setData(xs, [float(v.get("p99") or 0.0) for v in lat])
        per = [(w.get("server") or {}).get("server_us") or {} for w in self._windows]
        self.queue_curve.setData(xs, [float(p.get("queue") or 0.0) for p in per])
        self.compute_curve.setData(xs, [compute_us(p) for p in per])

    def _add_step_row(self, s: dict[str, Any]) -> None:
        f = step_figures(s)
        cells = (f"{f['mode']} {f['value']:g}", f"{f['requests']}", f"{f['throughput']:.1f}", f"{f['p50']:.3f}",
                 f"{f['p99']:.3f}", f"{f['queue_us']:.0f}", f"{f['compute_us']:.0f}", "yes" if f["stable"] else "no")
        r = self.table.rowCount()
        self.table.insertRow(r)
        for c, text in enumerate(cells):
            self.table.setItem(r, c, QTableWidgetItem(text))
        done = [x for x in self._steps if x.get("requests")]
        self.step_curve.setData([float(x["throughput"]) for x in done], [float(x["latency_ms"]["p99"]) for x in done])
        self.curve_plot.autoRange()

    def _on_worker_done(self, result: object) -> None:
        doc = result.to_json() if hasattr(result, "to_json") else {}
        self.document = doc
        rec = doc.get("recommendation") or {}
        self.recommendation_label.setText(f"Recommendation: {rec['reason']}" if rec.get("reason") else "")
        if doc.get("error"):
            self._show_status(f"stopped early: {doc['error']} (the steps above were measured before)", error=True)
        else:
            self._show_status(("stopped" if doc.get("stopped") else "finished") + f": {len(doc.get('steps', []))} step(s)")
        self.phase_label.setText("")
        self.sig_finished.emit(doc)

    def _on_worker_error(self, exc: object) -> None:
        self.document = {"schema": "trtstudio.triton/1", "error": self._show_task_error(exc, "Triton sweep")}
        self.sig_finished.emit(self.document)

    def _on_worker_finished(self) -> None:
        self._set_running(False)
