"""ScenarioDialog: configure and run a scenario (contention, cycles, soak, cold start) in a worker, with
live curves per model, the timeline, per-GPU panels and the result summary.

The scenario itself is ``profiling.scenario`` (Qt-free); this dialog builds the same
``ScenarioRequest`` as ``trtstudio scenario`` from its form (``request()``), checks it with the same
rules, runs ``run_scenario`` through ``ui.workers.run_in_thread`` with the ``ScenarioState`` as the
cancel state, and reads the state's live buffers on a timer. The GPU panel shows the run's own GPU
sampler (``ScenarioState.gpu_sampler``); the dialog starts none. ``sig_finished(result)`` hands the
``ScenarioResult`` to whoever embeds the dialog (the main window stores it with the session).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from trtstudio.backends.catalogue import choices
from trtstudio.errors import FieldError, InputError
from trtstudio.profiling import scenario as sc
from trtstudio.profiling.scenario_text import top_cause_text
from trtstudio.ui.gpu_panel import DevicePicker, GpuMemoryPanel
from trtstudio.ui.plots import pg
from trtstudio.ui.timeline_view import TimelineView
from trtstudio.ui.workers import TaskState, WorkerHandle, error_text, run_in_thread

# request field -> the form's label (errors from the core name fields; the dialog shows labels)
FIELD_LABELS = {"models": "Models", "backend": "Backend", "device": "Device", "iterations": "Iterations per phase",
                "warmup": "Warm-up", "streams": "Streams", "isolation": "Isolation", "cpu_load_ms": "CPU work per inference",
                "cycles": "Cycles", "inferences": "Inferences per cycle", "minutes": "Minutes", "window_s": "Window"}
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
MIB = float(1 << 20)


class ScenarioDialog(QDialog):
    """Configure, run, watch and stop one scenario at a time."""

    sig_started = Signal(str)
    sig_finished = Signal(object)  # ScenarioResult

    def __init__(self, parent: QWidget | None = None, models: list[str] | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Scenario")
        self.resize(1100, 720)
        self.state: sc.ScenarioState | None = None
        self.handle: WorkerHandle | None = None
        self.scenario_result: sc.ScenarioResult | None = None
        self.curves: dict[str, pg.PlotDataItem] = {}
        self._build()
        self.add_models(models or [])
        self.timer = QTimer(self)
        self.timer.setInterval(40)
        self.timer.timeout.connect(self._on_timer_timeout)
        self._on_kind_changed()

    # -- layout ----------------------------------------------------------------------------------
    def _build_controls(self) -> QWidget:
        self.kind = QComboBox()
        self.kind.addItems(list(sc.KINDS))
        self.kind.currentTextChanged.connect(self._on_kind_changed)
        self.models = QListWidget()
        self.models.setMaximumHeight(110)
        add, remove = QPushButton("Add models..."), QPushButton("Remove")
        add.clicked.connect(self._on_add_clicked)
        remove.clicked.connect(self._on_remove_clicked)
        self.backend = QComboBox()
        self.backend.addItems(list(choices()))
        self.device = DevicePicker()
        self.isolation = QComboBox()
        self.isolation.addItems(list(sc.ISOLATIONS))
        self.isolation.setToolTip("process: each model in its own process, as a server runs model instances; "
                                  "thread: threads of one process (they share the Python interpreter lock)")
        self.streams = QComboBox()
        self.streams.addItems(list(sc.STREAM_MODES))
        self.iterations = self._spin(1, 10_000_000, 500)
        self.warmup = self._spin(0, 100_000, 20)
        self.cpu_load = QDoubleSpinBox()
        self.cpu_load.setRange(0, 1000)
        self.cpu_load.setSuffix(" ms")
        self.cycles = self._spin(1, 100_000, 10)
        self.inferences = self._spin(1, 1_000_000, 50)
        self.minutes = QDoubleSpinBox()
        self.minutes.setRange(0.01, 7 * 24 * 60)
        self.minutes.setValue(10)
        self.window_s = QDoubleSpinBox()
        self.window_s.setRange(0.1, 3600)
        self.window_s.setValue(10)
        self.window_s.setSuffix(" s")
        form = QFormLayout()
        form.addRow("Scenario", self.kind)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(remove)
        form.addRow("Models", self.models)
        form.addRow("", _wrap(buttons))
        form.addRow("Backend", self.backend)
        form.addRow("Device", self.device)
        self._rows: dict[str, list[QWidget]] = {}
        for label, widget, kinds in (
            ("Isolation", self.isolation, ("contention",)), ("Streams", self.streams, ("contention",)),
            ("Iterations per phase", self.iterations, ("contention",)),
            ("Warm-up", self.warmup, ("contention",)), ("CPU work per inference", self.cpu_load, ("contention",)),
            ("Cycles", self.cycles, ("cycles",)), ("Inferences per cycle", self.inferences, ("cycles",)),
            ("Minutes", self.minutes, ("soak",)), ("Window", self.window_s, ("soak",)),
        ):
            form.addRow(label, widget)
            for k in kinds:
                self._rows.setdefault(k, []).append(widget)
        self._form = form
        self.run_button, self.stop_button = QPushButton("Run"), QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.run_button.clicked.connect(self._on_run_clicked)
        self.stop_button.clicked.connect(self._on_stop_clicked)
        self.status = QLabel("ready")
        self.status.setWordWrap(True)
        self.why = QLabel("")  # the top cause of each model's slowdown, in words (contention)
        self.why.setWordWrap(True)
        controls = QVBoxLayout()
        controls.addLayout(form)
        row = QHBoxLayout()
        row.addWidget(self.run_button)
        row.addWidget(self.stop_button)
        controls.addLayout(row)
        controls.addWidget(self.status)
        controls.addWidget(self.why)
        controls.addStretch(1)

        return _wrap(controls)

    def _build(self) -> None:
        controls = self._build_controls()
        self.plot = pg.PlotWidget()
        self.plot.setBackground("w")
        self.plot.addLegend(offset=(-10, 10))
        self.plot.setMenuEnabled(False)
        self.timeline = TimelineView()
        self.gpus = GpuMemoryPanel()
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(pg.QtGui.QFontDatabase.systemFont(pg.QtGui.QFontDatabase.SystemFont.FixedFont))
        self.tabs = QTabWidget()
        self.tabs.addTab(self.plot, "Live")
        self.tabs.addTab(self.timeline, "Timeline")
        self.tabs.addTab(self.gpus, "GPUs")
        self.tabs.addTab(self.text, "Result")
        split = QSplitter()
        split.addWidget(controls)
        split.addWidget(self.tabs)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(split)

    @staticmethod
    def _spin(lo: int, hi: int, value: int) -> QSpinBox:
        s = QSpinBox()
        s.setRange(lo, hi)
        s.setValue(value)
        return s

    # -- configuration ---------------------------------------------------------------------------
    def add_models(self, paths: list[str]) -> None:
        """Append model files to the list."""
        for p in paths:
            self.models.addItem(str(p))

    def model_paths(self) -> list[str]:
        """The listed model files, in order."""
        return [self.models.item(i).text() for i in range(self.models.count())]

    def request(self) -> sc.ScenarioRequest:
        """The ScenarioRequest of the form (one backend and device for all), as ``trtstudio scenario``
        builds it from the same settings."""
        return sc.ScenarioRequest(
            kind=self.kind.currentText(), models=self.model_paths(), backend=self.backend.currentText(),
            device=self.device.device(), iterations=self.iterations.value(), warmup=self.warmup.value(),
            streams=self.streams.currentText(), isolation=self.isolation.currentText(),
            cpu_load_ms=self.cpu_load.value(), cycles=self.cycles.value(), inferences=self.inferences.value(),
            minutes=self.minutes.value(), window_s=self.window_s.value())

    def specs(self) -> list[sc.ModelSpec]:
        """ModelSpecs of the form's request."""
        return self.request().specs()

    def _on_kind_changed(self, *_: Any) -> None:
        kind = self.kind.currentText()
        for k, widgets in self._rows.items():
            for w in widgets:
                self._form.setRowVisible(w, k == kind)

    def _on_add_clicked(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Models", "", "Models (*.onnx *.pt2 *.pt *.ts *.engine *.plan);;All files (*)")
        self.add_models(paths)

    def _on_remove_clicked(self) -> None:
        for item in self.models.selectedItems():
            self.models.takeItem(self.models.row(item))

    # -- running ---------------------------------------------------------------------------------
    def is_running(self) -> bool:
        """True while a scenario's worker thread runs."""
        return self.handle is not None and self.handle.is_running()

    def start(self) -> bool:
        """Start the configured scenario in a worker; False (with a status line) when the request fails
        the checks the CLI makes."""
        if self.is_running():
            return False
        request = self.request()
        try:
            request.validate()
        except FieldError as exc:
            self.status.setText(f"error: {FIELD_LABELS.get(exc.field, exc.field)}: {exc.message}")
            return False
        except InputError as exc:
            self.status.setText(f"error: {exc.one_line()}")
            return False
        state = self.state = sc.ScenarioState()
        self.scenario_result = None
        self.why.setText("")

        def task(_ts: TaskState) -> sc.ScenarioResult:
            return sc.run_scenario(request, state)

        self._reset_plot(request.kind, request.specs())
        self.handle = run_in_thread(task, on_done=self._on_worker_done, on_error=self._on_worker_error,
                                    cancel_state=state, name=f"scenario-{request.kind}")
        self.run_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.status.setText(f"running {request.kind} on {len(request.paths())} model(s)")
        self.timer.start()
        self.sig_started.emit(request.kind)
        return True

    def stop(self, timeout_ms: int = 10_000) -> bool:
        """Ask the scenario to stop and wait for its worker; True when it has ended."""
        if self.handle is None:
            return True
        return self.handle.stop(timeout_ms)

    def _on_run_clicked(self) -> None:
        self.start()

    def _on_stop_clicked(self) -> None:
        if self.state is not None:
            self.state.request_stop()
            self.status.setText("stopping after the current inference...")

    def _on_worker_done(self, result: object) -> None:
        assert isinstance(result, sc.ScenarioResult)
        self.scenario_result = result
        self._finish()
        self.text.setPlainText(result.render_text())
        self.why.setText("\n".join(t for t in (top_cause_text(m) for m in result.models) if t))
        if result.timeline is not None:
            self.timeline.set_timeline(result.timeline)
        if result.failure is not None:
            self.status.setText("error: " + result.failure.one_line())
        else:
            self.status.setText("stopped: the figures are what was measured" if result.stopped else "finished")
        self.tabs.setCurrentWidget(self.text)
        self.sig_finished.emit(result)

    def _on_worker_error(self, exc: object) -> None:
        self._finish()
        self.status.setText("error: " + (error_text(exc) if isinstance(exc, BaseException) else str(exc)))

    def _finish(self) -> None:
        self.timer.stop()
        self.gpus.stop()
        if self.gpus.sampler is not None:
            self.gpus.sampler.stop()
        self._on_timer_timeout()
        self.gpus.stop()
        self.run_button.setEnabled(True)
        self.stop_button.setEnabled(False)

    # -- live view -------------------------------------------------------------------------------
    def _reset_plot(self, kind: str, specs: list[sc.ModelSpec]) -> None:
        self.plot.clear()
        self.curves.clear()
        if kind == "cycles":
            self.plot.setLabel("left", "MiB")
            self.plot.setLabel("bottom", "cycle")
            names: tuple[str, ...] = ("host_rss_bytes", "gpu_used_bytes", "cuda_free_bytes", "largest_block_bytes")
        else:
            self.plot.setLabel("left", "latency (ms)")
            self.plot.setLabel("bottom", "time (s)")
            names = tuple(sc.unique_labels(specs)) if kind != "soak" else (specs[0].label(),)
        for i, name in enumerate(names):
            c = self.plot.plot(pen=pg.mkPen(COLORS[i % len(COLORS)], width=1), name=name)
            c.setClipToView(True)
            c.setDownsampling(auto=True, method="peak")
            self.curves[name] = c
        self.tabs.setCurrentWidget(self.plot)

    def _on_timer_timeout(self) -> None:
        state = self.state
        if state is None:
            return
        if state.gpu_sampler is not None and self.gpus.sampler is not state.gpu_sampler:
            self.gpus.set_sampler(state.gpu_sampler)  # the run's own sampler: the dialog starts none
        if self.kind.currentText() == "cycles":
            rows = list(state.cycles)
            for key, curve in self.curves.items():
                pts = [(c["cycle"], c[key] / MIB) for c in rows if key in c]
                if pts:
                    x, y = zip(*pts, strict=True)
                    curve.setData(np.array(x), np.array(y))
        else:
            for name, buf in list(state.live.items()):
                curve = self.curves.get(name)
                if curve is not None and buf.count:
                    snap = buf.snapshot()
                    curve.setData(snap["t_s"], snap["latency_ms"])
        self.status.setText(f"{state.phase}" if self.is_running() else self.status.text())

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        """Stop the scenario and wait for its worker before closing."""
        self.stop()
        self._finish()
        super().closeEvent(event)


def _wrap(layout: Any) -> QWidget:
    w = QWidget()
    w.setLayout(layout)
    return w
