"""Precision sweep dialog: pick variants and data, run the sweep in a worker, see one table.

The sweep (:func:`trtstudio.precision.sweep.run_sweep`) runs in a worker thread through
:func:`trtstudio.ui.workers.run_in_thread`; its :class:`~trtstudio.precision.state.PrecisionState`
reports progress through the task's queued progress signal and Cancel sets its stop flag. The
results table shows precision x median/p99 latency x throughput x model/engine size x memory x
accuracy; ``sig_finished(object)`` carries the :class:`~trtstudio.precision.sweep.SweepResult`.
Closing the dialog cancels and joins the worker.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from trtstudio.precision.recipe import METHODS
from trtstudio.precision.state import PrecisionState
from trtstudio.precision.sweep import SweepOptions, SweepResult, run_sweep
from trtstudio.ui.sweep_progress import StepPace
from trtstudio.ui.workers import TaskState, WorkerDialog

VARIANT_NAMES = ("fp16", "bf16", "int8", "fp8")
TARGETS = ("sm75", "sm80", "sm86", "sm89", "sm120", "sm121")
COLUMNS = ("Precision", "Median ms", "p99 ms", "Inferences/s", "Model", "Engine", "RSS added",
           "Cosine", "Max abs", "Top-1", "Result")
PASS_COLOR, FAIL_COLOR = QColor("#d8f0d8"), QColor("#f6d5d5")


def _bytes(n: int | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def _num(v: Any, fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def _sweep_task(model_path: str, options: SweepOptions, state: PrecisionState) -> Any:
    """The worker's task: the sweep, its progress sent through the task's queued signal (the handle's
    ``request_stop`` reaches ``state`` as its cancel_state)."""

    def task(ts: TaskState) -> SweepResult:
        state.on_progress = ts.set_progress
        return run_sweep(model_path, options, state)

    return task


class PrecisionSweepDialog(WorkerDialog):
    """Sweep FP32 / FP16 / BF16 / INT8 variants of ``model_path`` and show the table."""

    sig_finished = Signal(object)
    sig_node_errors = Signal(object)  # {node name: relative error} of the selected variant (a heat overlay)

    def __init__(self, model_path: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model_path = str(model_path)
        self.sweep_result: SweepResult | None = None
        self.state: PrecisionState | None = None
        self.setWindowTitle(f"Precision sweep: {self.model_path}")
        self.resize(1000, 520)
        form = self._build_form()
        buttons = self._build_buttons()
        self._build_results()
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.phase_label)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.recommendation_label)
        layout.addWidget(self.status_label)

    def _build_form(self) -> QFormLayout:
        """The variants, data, method, Keep FP32 and engine rows."""
        self.variant_boxes: dict[str, QCheckBox] = {}
        row = QHBoxLayout()
        fp32 = QCheckBox("FP32 (reference)")
        fp32.setChecked(True)
        fp32.setEnabled(False)
        row.addWidget(fp32)
        for name in VARIANT_NAMES:
            box = QCheckBox(name.upper())
            box.setChecked(name in ("fp16", "bf16", "int8"))
            self.variant_boxes[name] = box
            row.addWidget(box)
        row.addStretch(1)

        self.calib_edit = QLineEdit()
        self.calib_edit.setPlaceholderText("folder of .npy/.npz, images, or samples.py (needed for INT8)")
        self.val_edit = QLineEdit()
        self.val_edit.setPlaceholderText("validation data (default: the calibration samples)")
        self.method_combo = QComboBox()
        self.method_combo.addItems(list(METHODS))  # the first is the CLI's default too
        self.block_edit = QLineEdit()
        self.block_edit.setPlaceholderText("op types kept FP32, e.g. Softmax,LayerNormalization")
        self.engines_box = QCheckBox("Build TensorRT-RTX engines when tensorrt_rtx is installed, for")
        self.engines_box.setChecked(True)
        self.target_combo = QComboBox()
        self.target_combo.addItems(list(TARGETS))
        self.target_combo.setCurrentText("sm86")
        self.target_combo.setToolTip("TensorRT-RTX compute capability; FP8 needs sm89 or newer")
        engine_row = QHBoxLayout()
        engine_row.addWidget(self.engines_box)
        engine_row.addWidget(self.target_combo)
        engine_row.addStretch(1)

        form = QFormLayout()
        form.addRow("Variants", row)
        form.addRow("Calibration data", self._with_browse(self.calib_edit, "calib"))
        form.addRow("Validation data", self._with_browse(self.val_edit, "val"))
        form.addRow("Calibration method", self.method_combo)
        form.addRow("Keep FP32", self.block_edit)
        form.addRow("", engine_row)
        return form

    def _build_buttons(self) -> QHBoxLayout:
        """Run, Cancel and the progress bar (the phase label goes under them)."""
        self.run_button = QPushButton("Run")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.run_button.clicked.connect(self.start_sweep)
        self.cancel_button.clicked.connect(self.cancel_sweep)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.phase_label = QLabel("")
        self._pace = StepPace(self.phase_label, self)  # the step under way and the time left, every second
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.progress, 1)
        return buttons

    def _build_results(self) -> None:
        """The variants table, the recommendation and the status line."""
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.itemSelectionChanged.connect(self._on_table_selection)
        self.recommendation_label = QLabel("")
        self.recommendation_label.setWordWrap(True)
        self.recommendation_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status_label = QLabel("")
        self.status_label.setWordWrap(True)

    def _with_browse(self, edit: QLineEdit, kind: str) -> QWidget:
        w = QWidget()
        h = QHBoxLayout(w)
        h.setContentsMargins(0, 0, 0, 0)
        h.addWidget(edit, 1)
        button = QPushButton("Browse…")
        button.clicked.connect(lambda: self._browse(edit, kind))
        h.addWidget(button)
        return w

    def _browse(self, edit: QLineEdit, kind: str) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Calibration data" if kind == "calib" else "Validation data",
                                                  edit.text())
        if folder:
            edit.setText(folder)

    # -- running --------------------------------------------------------------------------------
    def options(self) -> SweepOptions:
        """The sweep the widgets describe."""
        variants = ["fp32", *(n for n, b in self.variant_boxes.items() if b.isChecked())]
        return SweepOptions(
            variants=tuple(variants),
            calib=self.calib_edit.text().strip() or None,
            val=self.val_edit.text().strip() or None,
            method=self.method_combo.currentText(),
            block_ops=tuple(x.strip() for x in self.block_edit.text().split(",") if x.strip()),
            build_engines=None if self.engines_box.isChecked() else False,
            targets=(self.target_combo.currentText(),),
        )

    @Slot()
    def start_sweep(self) -> None:
        """Start the sweep in a worker thread."""
        if self._handle is not None:
            return
        options = self.options()
        self.sweep_result = None
        self.table.setRowCount(0)
        self.recommendation_label.setText("")
        self._show_status("Running…")
        self.progress.setRange(0, 0)
        self._pace.start()
        self.state = PrecisionState()
        self._start_task(_sweep_task(self.model_path, options, self.state), "precision-sweep",
                         cancel_state=self.state)

    @Slot()
    def cancel_sweep(self) -> None:
        """Ask the sweep to stop after its current step."""
        self._cancel_task()

    def _set_running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)

    @Slot(object)
    def _on_worker_progress(self, value: object) -> None:
        if not isinstance(value, dict):
            return
        self._pace.report(str(value.get("message", "")), int(value.get("step") or 0), int(value.get("total") or 0))
        total = int(value.get("total") or 0)
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(min(int(value.get("step") or 0), total))

    @Slot(object)
    def _on_worker_done(self, result: object) -> None:
        assert isinstance(result, SweepResult)
        self.sweep_result = result
        self.show_result(result)
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self._pace.stop()
        self.phase_label.setText("Cancelled" if result.cancelled else "Finished")
        errors = [f"{v.name}: {v.error}" for v in result.variants if v.error]
        self._show_status("; ".join(errors) if errors else " ".join(result.notes), error=bool(errors))
        if not self._closing:
            self.sig_finished.emit(result)

    @Slot(object)
    def _on_worker_error(self, exc: object) -> None:
        self._show_task_error(exc, "Sweep")

    @Slot()
    def _on_worker_finished(self) -> None:
        self._pace.stop()
        if self._handle is not None:
            self._handle.join(self.JOIN_MS)
        self._handle = None
        self._set_running(False)

    def show_result(self, result: SweepResult) -> None:
        """Fill the table and the recommendation from a sweep result."""
        self.table.setRowCount(len(result.variants))
        for r, v in enumerate(result.variants):
            lat = v.latency_ms or {}
            acc = v.accuracy or {}
            verdict = f"error: {v.error}" if v.error else ("pass" if v.passed else "FAIL: " + "; ".join(v.reasons))
            cells = [v.name.upper(), _num(lat.get("median"), ".3f"), _num(lat.get("p99"), ".3f"),
                     _num(v.throughput, ".0f"), _bytes(v.model_bytes), _bytes(v.engine_bytes),
                     _bytes(v.memory_bytes), _num(acc.get("cosine"), ".5f"), _num(acc.get("max_abs"), ".3g"),
                     _num(acc.get("top1"), ".3f"), verdict]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if 0 < c < len(cells) - 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if c == len(cells) - 1:
                    item.setBackground(QBrush(PASS_COLOR if v.passed and not v.error else FAIL_COLOR))
                tips = [*v.notes]
                if v.layer_precisions:
                    tips.append("engine layers: " + ", ".join(f"{k} {n}" for k, n in sorted(v.layer_precisions.items())))
                if v.first_over:
                    tips.append(f"error first over threshold at {v.first_over['node']}")
                item.setToolTip("\n".join(tips))
                self.table.setItem(r, c, item)
        star = f" Recommended: {result.recommended.upper()}." if result.recommended else ""
        self.recommendation_label.setText(result.recommendation + star)

    @Slot()
    def _on_table_selection(self) -> None:
        rows = {i.row() for i in self.table.selectedItems()}
        if self.sweep_result is None or len(rows) != 1:
            return
        row = rows.pop()
        if 0 <= row < len(self.sweep_result.variants):
            self.sig_node_errors.emit(dict(self.sweep_result.variants[row].node_errors))
