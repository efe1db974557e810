"""The Live profile panel's Sweep tab: which input and dims to sweep, the steps, a latency budget,
Run / Stop / Save; latency and throughput drawn against the swept size as each step finishes. Or a
shape mix: a mix file (CSV, JSON or a folder of ``.npy``/``.npz`` requests) replayed as
``trtstudio profile --shape-mix`` does (:func:`trtstudio.profiling.shape_mix.run_mix`), its
per-shape table, the count-weighted median and p99, and the padded replay with "Pad to opt".
Each finished sweep or mix is a result the Result list keeps (a session's too, once opened), and
the window saves them in its sessions and reports (``Workspace.sweeps``).

The sweep itself is :func:`trtstudio.profiling.sweep.run_sweep` in a worker (``ui.workers``), with
the panel's request (model, backend, warm-up, measured inferences or seconds per step, threads):
the same run as ``trtstudio profile --sweep``. Its ``step`` events arrive here queued, one per
finished step: the table gets the row and the charts the point. The finished document (knee,
best step under the budget, recommended profiles with their build and trtexec flags) is shown and
saved with Save (a session ``.trtstudio`` or a report, as ``--session``/``--report`` do).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from trtstudio.errors import FieldError, InputError
from trtstudio.profiling.runner import RunState
from trtstudio.profiling.sweep import STEP_DURATION_S
from trtstudio.tasks import TaskEvent, error_text
from trtstudio.ui.sweep_charts import SweepCharts
from trtstudio.ui.sweep_progress import SweepProgress
from trtstudio.ui.workers import WorkerHandle, run_in_thread

STEP_ITERATIONS = 200  # per step when the panel's run has no end (Measure: until stopped) and Per step is 0
COLUMNS = ("step", "median ms", "p99 ms", "inferences/s", "samples/s", "peak MiB")
MIX_COLUMNS = ("shape", "count", "median ms", "p99 ms", "re-plan ms", "first ms")
MIX_REQUESTS = 1  # measured inferences per request of a mix (its counts say how many requests)
SWEEP, MIX = "Sweep", "Shape mix"
STACK_BELOW_PX = 1000  # narrower than this, the table goes under the charts (its columns need ~450 px)


def result_label(doc: dict[str, Any]) -> str:
    """A finished sweep's or mix's name in the Result list."""
    from pathlib import Path

    if is_mix(doc):
        mix = doc.get("mix") or {}
        return f"mix {Path(str(doc.get('source', ''))).name}: {mix.get('requests', 0)} requests"
    rows = doc.get("sweep") or []
    span = f"{rows[0]['label']} .. {rows[-1]['label']}" if rows else "no steps"
    return f"sweep {span}"


def is_mix(doc: dict[str, Any] | None) -> bool:
    return bool(doc) and str(doc.get("schema", "")).startswith("trtstudio.mix/")  # type: ignore[union-attr]


def status_lines(col: QVBoxLayout) -> tuple[QLabel, QLabel]:
    """A status line and a red error line (hidden until an error), added to ``col``."""
    status = QLabel("")
    status.setWordWrap(True)
    col.addWidget(status)
    error = QLabel("")
    error.setStyleSheet("color: #c00000;")
    error.setWordWrap(True)
    error.setVisible(False)
    col.addWidget(error)
    return status, error


def fill_step_row(table: QTableWidget, r: int, row: dict[str, Any]) -> None:
    """Row ``r`` of a sweep's table: the step's label, median and p99 ms, throughput, samples/s, peak MiB."""
    if r >= table.rowCount():
        table.setRowCount(r + 1)
    table.setItem(r, 0, QTableWidgetItem(row["label"]))
    if row.get("error") and not row.get("count"):
        item = QTableWidgetItem(f"error: {row['error']}")
        item.setToolTip(row["error"])
        table.setItem(r, 1, item)
        return
    mem = row.get("peak_memory_bytes")
    values = (row["median_ms"], row["p99_ms"], row["throughput"], row["samples_per_s"], mem / 2**20 if mem else None)
    for c, v in enumerate(values, start=1):
        table.setItem(r, c, QTableWidgetItem("-" if v is None else f"{v:.3f}" if c < 3 else f"{v:.1f}"))


def fill_mix_row(table: QTableWidget, r: int, row: dict[str, Any]) -> None:
    """Row ``r`` of a mix's table: the shapes, their count, median and p99 ms, re-plan and first-call ms."""
    if r >= table.rowCount():
        table.setRowCount(r + 1)
    label = ", ".join(f"{n} {s}" for n, s in row["shapes"].items())
    cells = (label, str(row["count"]), row["median_ms"], row["p99_ms"], row["replan_ms"], row["first_ms"])
    for c, v in enumerate(cells):
        text = v if isinstance(v, str) else "-" if v is None else f"{v:.3f}"
        table.setItem(r, c, QTableWidgetItem(text))


class SweepTab(QWidget):
    """The Sweep tab. ``request_fn()`` gives the panel's ``ProfileRequest`` (InputError when the form
    is incomplete); ``factory`` the backends (None: the real ones).

    Public: ``set_specs``, ``run``, ``stop``, ``is_running``, ``shutdown``, ``save_to``, ``doc`` (the
    result shown: a sweep's or a mix's document), ``results`` (every result, in the Result list),
    ``add_results``, ``show_doc``. Signals: ``sig_step(index, row)`` after a step is drawn,
    ``sig_finished(doc)`` (None when it could not start), ``sig_running(bool)``."""

    sig_step = Signal(int, object)
    sig_finished = Signal(object)
    sig_running = Signal(bool)

    def __init__(self, request_fn: Callable[[], Any], factory: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.request_fn = request_fn
        self.factory = factory
        self.doc: dict[str, Any] | None = None
        self.results: list[dict[str, Any]] = []
        self.rows: list[dict[str, Any]] = []
        self._specs: list[dict[str, Any]] = []
        self._handle: WorkerHandle | None = None
        self._state: RunState | None = None
        self._blocked = False  # the panel's own run (or per-layer run) goes on
        self._measure: tuple[int | None, float | None] = (None, None)  # a step's iterations or seconds
        self._build()
        self._on_kind_combo_changed(0)
        self._sync()

    # -- layout ----------------------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        self.form = form = QFormLayout()
        self._add_sweep_rows(form)
        self._add_mix_rows(form)
        outer.addLayout(form)
        outer.addLayout(self._button_row())
        self.status_label, self.error_label = status_lines(outer)
        self.progress = SweepProgress()  # within the step under way, and the time left
        outer.addWidget(self.progress)
        outer.addWidget(self._result_split(), 1)

    def _add_sweep_rows(self, form: QFormLayout) -> None:
        """Run (sweep or mix), and a sweep's rows: the axis, the steps, the p99 budget, a step's length."""
        self.kind_combo = QComboBox()
        self.kind_combo.addItems([SWEEP, MIX])
        self.kind_combo.setToolTip("a sweep over batch sizes or shapes, or a shape mix replayed as a server receives it")
        self.kind_combo.currentIndexChanged.connect(self._on_kind_combo_changed)
        form.addRow("Run", self.kind_combo)
        self.axis_combo = QComboBox()
        self.axis_combo.setToolTip("batch: every input with a dynamic first dim; an input: its whole shape per step "
                                   "(dims other inputs share by name follow)")
        self.axis_combo.currentIndexChanged.connect(self._on_axis_combo_changed)
        form.addRow("Sweep", self.axis_combo)
        self.steps_edit = QLineEdit("1,2,4,8")
        self.steps_edit.setToolTip("batch sizes (1,2,4,8) or shapes (1x3x320x320,1x3x640x640), comma-separated")
        form.addRow("Steps", self.steps_edit)
        self.budget_spin = QDoubleSpinBox()
        self.budget_spin.setRange(0.0, 1e6)
        self.budget_spin.setDecimals(2)
        self.budget_spin.setSuffix(" ms")
        self.budget_spin.setSpecialValueText("none")
        self.budget_spin.setToolTip("name the largest step whose p99 is within this latency")
        form.addRow("p99 budget", self.budget_spin)
        self.step_spin = QDoubleSpinBox()  # a step's length: seconds measured (0: the panel's Measure)
        self.step_spin.setRange(0.0, 3600.0)
        self.step_spin.setDecimals(1)
        self.step_spin.setSuffix(" s")
        self.step_spin.setSpecialValueText("as Measure")
        self.step_spin.setValue(STEP_DURATION_S)
        self.step_spin.setToolTip("seconds measured per step, whatever its batch (every step as long, the time left "
                                  "known); 0: the Live profile's Measure (iterations or seconds) per step")
        form.addRow("Per step", self.step_spin)

    def _add_mix_rows(self, form: QFormLayout) -> None:
        """A shape mix's rows: the mix file (with its picker), Pad to opt, the seed of the requests' order."""
        self.mix_edit = QLineEdit()
        self.mix_edit.setPlaceholderText("mix.csv, mix.json, or a folder of .npy/.npz requests")
        self.mix_edit.setToolTip("CSV: a column per input (dims joined by x) and a count column; JSON: "
                                 '[{"shapes": {"NAME": "1x3x320x320"}, "count": N}]; or a folder of requests')
        self.mix_button = QPushButton("…")
        self.mix_button.setToolTip("pick the mix file")
        self.mix_button.clicked.connect(self._on_mix_button_clicked)
        self.mix_row = mix_row = QWidget()
        mix_lay = QHBoxLayout(mix_row)
        mix_lay.setContentsMargins(0, 0, 0, 0)
        mix_lay.addWidget(self.mix_edit, 1)
        mix_lay.addWidget(self.mix_button)
        form.addRow("Mix file", mix_row)
        self.pad_check = QCheckBox("replay again padded to the recommended profile's opt shape")
        form.addRow("Pad to opt", self.pad_check)
        self.seed_spin = QSpinBox()
        self.seed_spin.setRange(0, 2**31 - 1)
        self.seed_spin.setToolTip("the seed of the requests' random order")
        form.addRow("Seed", self.seed_spin)

    def _button_row(self) -> QHBoxLayout:
        """Run, Stop, Save… and the Result list."""
        buttons = QHBoxLayout()
        self.run_button = QPushButton("Run sweep")
        self.stop_button = QPushButton("Stop")
        self.save_button = QPushButton("Save…")
        self.save_button.setToolTip("save the sweep as a session (.trtstudio) or a report (.html, .md, .json, .pdf)")
        self.run_button.clicked.connect(self.run)
        self.stop_button.clicked.connect(self.stop)
        self.save_button.clicked.connect(self._on_save_button_clicked)
        for b in (self.run_button, self.stop_button, self.save_button):
            buttons.addWidget(b)
        buttons.addSpacing(12)
        buttons.addWidget(QLabel("Result"))
        self.results_combo = QComboBox()
        self.results_combo.setToolTip("the sweeps and mixes of this window and of the session opened")
        self.results_combo.setMinimumContentsLength(24)
        self.results_combo.activated.connect(self._on_results_combo_activated)
        buttons.addWidget(self.results_combo, 1)
        return buttons

    def _result_split(self) -> QSplitter:
        """The charts beside (or above: :meth:`resizeEvent`) the step table and the findings."""
        self.split = split = QSplitter()  # side by side when wide, else the table under the charts (resizeEvent)
        split.setChildrenCollapsible(False)
        self.charts = charts = SweepCharts()  # latency and throughput against the swept size (ui.sweep_charts)
        self.median_curve, self.tp_curve, self.mix_line = charts.median_curve, charts.tp_curve, charts.mix_line
        split.addWidget(charts)
        split.addWidget(self._table_and_findings())
        split.setSizes([560, 480])
        return split

    def _table_and_findings(self) -> QWidget:
        """The steps' table over the findings text (knee, budget, recommended profiles)."""
        right = QWidget()
        rcol = QVBoxLayout(right)
        rcol.setContentsMargins(0, 0, 0, 0)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setMinimumHeight(4 * self.table.verticalHeader().defaultSectionSize() + 28)  # header + 4 rows
        rcol.addWidget(self.table, 3)
        self.findings = QPlainTextEdit()
        self.findings.setReadOnly(True)
        self.findings.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.findings.setPlaceholderText("the knee, the budget's answer and the recommended optimization profiles "
                                         "(build and trtexec flags) appear here when the sweep ends")
        rcol.addWidget(self.findings, 2)
        return right

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        """The charts beside the table when the tab is wide enough for both, else above it: side by
        side in a docked panel the table got about 190 px, its columns cut."""
        super().resizeEvent(event)
        wide = self.width() >= STACK_BELOW_PX
        want = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.split.orientation() != want:
            self.split.setOrientation(want)
            total = self.split.width() if wide else self.split.height()
            self.split.setSizes([total * 3 // 5, total * 2 // 5] if wide else [total // 2, total // 2])

    def mix_mode(self) -> bool:
        """The form runs a shape mix (else a sweep)."""
        return self.kind_combo.currentText() == MIX

    def _on_kind_combo_changed(self, _index: int) -> None:
        mix = self.mix_mode()
        sweep_rows: list[QWidget] = [self.axis_combo, self.steps_edit, self.budget_spin, self.step_spin]
        mix_rows: list[QWidget] = [self.mix_row, self.pad_check, self.seed_spin]
        for w in sweep_rows:
            self.form.setRowVisible(w, not mix)
        for w in mix_rows:
            self.form.setRowVisible(w, mix)
        self.run_button.setText("Run mix" if mix else "Run sweep")

    def _on_mix_button_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Shape mix", self.mix_edit.text(),
                                              "Shape mixes (*.csv *.json);;All files (*)")
        if path:
            self.mix_edit.setText(path)

    # -- model -----------------------------------------------------------------------------------
    def set_specs(self, specs: list[dict[str, Any]]) -> None:
        """The model's inputs (the panel's, once read): the axes offered are batch and each input."""
        self._specs = list(specs)
        current = self.axis_combo.currentText()
        self.axis_combo.blockSignals(True)
        self.axis_combo.clear()
        batched = any(s["shape"] and not (isinstance(s["shape"][0], int) and s["shape"][0] >= 0) for s in specs)
        if batched:
            self.axis_combo.addItem("batch")
        for s in specs:
            self.axis_combo.addItem(s["name"])
        self.axis_combo.blockSignals(False)
        k = self.axis_combo.findText(current)
        self.axis_combo.setCurrentIndex(k if k >= 0 else 0)
        self._on_axis_combo_changed(self.axis_combo.currentIndex())

    def _on_axis_combo_changed(self, _index: int) -> None:
        """Offer steps that fit the chosen axis: batch sizes, or the input's shape with its dynamic
        dims doubled twice."""
        axis = self.axis_combo.currentText()
        spec = next((s for s in self._specs if s["name"] == axis), None)
        if axis == "batch" or spec is None:
            if not self.steps_edit.text() or "x" in self.steps_edit.text():
                self.steps_edit.setText("1,2,4,8")
            return
        shape = self._run_shape(spec)
        dyn = [k for k, d in enumerate(spec["shape"]) if not (isinstance(d, int) and d >= 0) and k > 0]
        steps = []
        for f in (1, 2, 4):
            steps.append("x".join(str(v * f if k in dyn else v) for k, v in enumerate(shape)))
        self.steps_edit.setText(",".join(dict.fromkeys(steps)))

    def _run_shape(self, spec: dict[str, Any]) -> list[int]:
        try:
            shapes = self.request_fn().shapes
        except InputError:
            shapes = {}
        if spec["name"] in shapes:
            return list(shapes[spec["name"]])
        return [d if isinstance(d, int) and d >= 0 else (1 if k == 0 else 64) for k, d in enumerate(spec["shape"])]

    # -- running ---------------------------------------------------------------------------------
    def sweep_text(self) -> str:
        """The ``--sweep`` text the form describes."""
        return f"{self.axis_combo.currentText()}={self.steps_edit.text().replace(' ', '')}"

    def is_running(self) -> bool:
        return self._handle is not None and not self._handle.is_done()

    @Slot()
    def run(self) -> None:
        """Start the sweep the form and the panel describe (errors shown, not raised)."""
        if self.is_running() or self._blocked:
            return
        self._show_error(None)
        try:
            req = self.request_fn()
        except InputError as exc:
            self._show_error(exc)
            return
        if self.mix_mode():
            self._run_mix(req)
            return
        if self.step_spin.value() > 0:
            req = dataclasses.replace(req, iterations=None, duration_s=self.step_spin.value())
        elif req.iterations is None and req.duration_s is None:
            req = dataclasses.replace(req, iterations=STEP_ITERATIONS)
        req = dataclasses.replace(req, input_path=None, cuda_graph=False, per_layer=False)
        self._measure = (req.iterations if req.duration_s is None else None, req.duration_s)
        budget = self.budget_spin.value() or None
        text = self.sweep_text()
        self._clear(mix=False)
        factory = self.factory

        def task(state: RunState) -> object:
            from trtstudio.profiling.sweep import run_sweep

            return run_sweep(req, [text], budget_ms=budget, state=state, factory=factory)

        self._start(task, f"sweep {text}: loading…", "sweep")

    def _run_mix(self, req: Any) -> None:
        """Replay the mix file the form names with the panel's request (a measured inference per
        request: the file's counts say how many), as ``profile --shape-mix``."""
        source = self.mix_edit.text().strip()
        if not source:
            self._show_error(FieldError("mix", "give the mix file (CSV, JSON, or a folder of .npy/.npz requests)"))
            self.sig_finished.emit(None)
            return
        # the form's Measure (iterations or seconds) is the mix's length, its counts the weights, as
        # profile --shape-mix --iterations/--duration; "until stopped" replays the counts as given
        iterations, duration_s = req.iterations, req.duration_s
        req = dataclasses.replace(req, input_path=None, cuda_graph=False, per_layer=False,
                                  iterations=MIX_REQUESTS, duration_s=None)
        pad, seed, factory = "opt" if self.pad_check.isChecked() else None, self.seed_spin.value(), self.factory
        self._clear(mix=True)

        def task(state: RunState) -> object:
            from trtstudio.profiling.shape_mix import run_mix

            return run_mix(req, source, pad_to=pad, seed=seed, state=state, factory=factory,
                           iterations=iterations, duration_s=duration_s)

        self._start(task, f"mix {source}: loading…", "mix")

    def _clear(self, mix: bool) -> None:
        self.doc, self.rows = None, []
        self.table.setRowCount(0)
        self._headers(mix)
        self.findings.setPlainText("")
        self._redraw()

    def _start(self, task: Callable[[RunState], object], status: str, name: str) -> None:
        self._state = state = RunState()
        self._handle = run_in_thread(lambda _s: task(state), on_done=self._on_worker_done,
                                     on_error=self._on_worker_error, on_progress=self._on_worker_progress,
                                     on_finished=self._on_worker_finished, state=state, name=name)
        self.status_label.setText(status)
        if name == "sweep":
            self.progress.begin(state, *self._measure)
        self._sync()
        self.sig_running.emit(True)

    def _headers(self, mix: bool) -> None:
        self.table.setHorizontalHeaderLabels(list(MIX_COLUMNS if mix else COLUMNS))
        self.charts.set_mix(mix)

    @Slot()
    def stop(self) -> None:
        """End the sweep after the current inference (finished steps are kept)."""
        if self._handle is not None and self.is_running():
            self._handle.request_stop()
            self.status_label.setText("stopping…")

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Stop and join the worker (the panel calls this when the window closes)."""
        return self._handle.stop(timeout_ms) if self._handle is not None else True

    # -- what the worker reports -----------------------------------------------------------------
    def _on_worker_progress(self, event: object) -> None:
        if not isinstance(event, TaskEvent):
            return
        if event.kind == "mix_plan":
            labels = [str(x) for x in event.data.get("shapes", [])]
            self.table.setRowCount(len(labels))
            for r, label in enumerate(labels):
                self.table.setItem(r, 0, QTableWidgetItem(label))
            self.status_label.setText(f"mix: replaying {event.data.get('requests', 0)} requests over "
                                      f"{len(labels)} shapes…")
        elif event.kind == "sweep_plan":
            labels = list(event.data.get("steps", []))
            self.table.setRowCount(len(labels))
            for r, label in enumerate(labels):
                self.table.setItem(r, 0, QTableWidgetItem(label))
            self.status_label.setText(f"sweep: {len(labels)} steps")
            self.progress.plan(len(labels))
        elif event.kind == "step_start":
            self.progress.step_started(int(event.data["index"]), str(event.data.get("label", "")))
        elif event.kind == "step":
            index, row = int(event.data["index"]), dict(event.data["row"])
            self.rows.append(row)
            fill_step_row(self.table, index, row)
            self._redraw()
            total = self.table.rowCount()
            self.status_label.setText(f"step {index + 1} of {total} done: {row['label']}")
            self.progress.step_done()
            self.sig_step.emit(index, row)

    def _redraw(self) -> None:
        """The charts (``ui.sweep_charts``) of the sweep's finished steps, or of the mix shown."""
        doc = self.doc
        if doc is not None and is_mix(doc):
            self.charts.draw_mix(doc["mix"])
            return
        axis = "batch" if self.axis_combo.currentText() == "batch" else f"elements of {self.axis_combo.currentText()}"
        self.charts.draw_sweep(self.rows, axis, self.budget_spin.value())

    def _on_worker_done(self, outcome: object) -> None:
        doc = outcome.to_dict()  # type: ignore[attr-defined]
        self.add_results([doc])
        self.sig_finished.emit(doc)

    def add_results(self, docs: list[dict[str, Any]]) -> None:
        """Keep ``docs`` (sweep or mix documents: a run's, a session's) in the Result list and show
        the last."""
        for doc in docs:
            self.results.append(doc)
            self.results_combo.addItem(result_label(doc))
        if docs:
            self.results_combo.setCurrentIndex(self.results_combo.count() - 1)
            self.show_doc(docs[-1])
            self._sync()

    def _on_results_combo_activated(self, index: int) -> None:
        if 0 <= index < len(self.results) and not self.is_running():
            self.show_doc(self.results[index])

    def show_doc(self, doc: dict[str, Any]) -> None:
        """Show a finished sweep or mix: its table, charts and findings (knee, budget, profiles)."""
        if is_mix(doc):
            self._show_mix(doc)
            return
        self.doc = doc
        self._headers(False)
        self.table.setRowCount(0)
        self.charts.knee_line.setVisible(False)
        self.rows = list(doc["sweep"])
        for r, row in enumerate(self.rows):
            fill_step_row(self.table, r, row)
        self._redraw()
        knee = doc.get("knee")
        if knee is not None and knee.get("index") is not None:
            self.charts.knee_line.setValue(float(self.rows[knee["index"]]["size"]))
            self.charts.knee_line.setVisible(not knee.get("still_growing"))
        from trtstudio.profiling.profiles import render_text as profiles_text
        from trtstudio.ui.words import window_words

        lines = [f"knee: {knee['text']}"] if knee else []
        if doc.get("best_under_budget"):
            lines.append(f"budget: {doc['best_under_budget']['text']}")
        lines += [window_words(ln) for ln in profiles_text(doc.get("profiles"), doc["model"]) if ln]
        lines += [f"warning: {w}" for w in doc.get("warnings", [])]
        self.findings.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.findings.setPlainText("\n".join(lines))
        how = "stopped" if doc.get("stopped") else "finished"
        self.status_label.setText(f"sweep {how}: {len(self.rows)} steps")

    def _show_mix(self, doc: dict[str, Any]) -> None:
        from trtstudio.profiling.shape_mix import render_text

        self.doc = doc
        self.rows = []
        self._headers(True)
        self.charts.knee_line.setVisible(False)
        shapes = doc["mix"]["shapes"]
        self.table.setRowCount(len(shapes))
        for r, row in enumerate(shapes):
            fill_mix_row(self.table, r, row)
        self._redraw()
        self.findings.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)  # its per-shape table in columns
        self.findings.setPlainText(render_text(doc))
        mix = doc["mix"]
        how = "stopped" if doc.get("stopped") else "finished"
        figures = ("" if mix["median_ms"] is None else
                   f": weighted median {mix['median_ms']:.3f} ms, p99 {mix['p99_ms']:.3f} ms")
        self.status_label.setText(f"mix {how}, {mix['requests']} requests over {len(shapes)} shapes{figures}")

    def _on_worker_error(self, exc: object) -> None:
        self._show_error(exc)
        self.status_label.setText("the sweep could not start")
        self.sig_finished.emit(None)

    def _on_worker_finished(self) -> None:
        self.progress.finish()
        self._sync()
        self.sig_running.emit(False)

    # -- saving ----------------------------------------------------------------------------------
    def save_to(self, path: str) -> list[str]:
        """Write the last sweep as a session (``.trtstudio``) or a report (by extension)."""
        from trtstudio.profiling.production import save

        if self.doc is None:
            raise InputError(None, "no finished sweep or mix to save")
        if path.endswith(".trtstudio"):
            return save(self.doc, session_path=path)
        return save(self.doc, report_path=path)

    def _on_save_button_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save the mix" if is_mix(self.doc) else "Save the sweep",
                                              "mix.trtstudio" if is_mix(self.doc) else "sweep.trtstudio",
                                              "Session (*.trtstudio);;Report (*.html *.md *.json *.pdf)")
        if not path:
            return
        try:
            written = self.save_to(path)
        except InputError as exc:
            self._show_error(exc)
            return
        self.status_label.setText("saved " + ", ".join(written))

    # -- small helpers ---------------------------------------------------------------------------
    def error_text(self) -> str:
        return self.error_label.text()

    def _show_error(self, exc: object) -> None:
        if exc is None:
            self.error_label.setText("")
            self.error_label.setVisible(False)
            return
        if isinstance(exc, FieldError):
            exc = exc.named({"sweep": "Steps", "mix": "Mix file", "pad_to": "Pad to opt"}.get(exc.field, exc.field))
        text = error_text(exc) if isinstance(exc, BaseException) else str(exc)
        self.error_label.setText(text)
        self.error_label.setVisible(True)

    def set_blocked(self, blocked: bool) -> None:
        """Hold Run while the panel's other runs go on (one backend at a time)."""
        self._blocked = blocked
        self._sync()

    def _sync(self) -> None:
        running = self.is_running()
        self.run_button.setEnabled(not running and not self._blocked and bool(self._specs))
        self.stop_button.setEnabled(running)
        self.save_button.setEnabled(not running and self.doc is not None)
        for w in (self.kind_combo, self.axis_combo, self.steps_edit, self.budget_spin, self.step_spin, self.mix_edit,
                  self.mix_button, self.pad_check, self.seed_spin, self.results_combo):
            w.setEnabled(not running)
