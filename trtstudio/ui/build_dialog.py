"""Build an engine from the open ONNX model: backend, targets, profiles and flags; progress, log, cancel.

The form makes a :class:`~trtstudio.backends.build_request.BuildRequest`, the request
``trtstudio build`` makes from its flags. The profile table starts with the model's shape plan
(:func:`~trtstudio.backends.shapes.plan_shapes`: metadata such as Ultralytics ``imgsz``, graph pins,
defaults), and the request carries only the rows the user edited, so an unedited build plans its
shapes exactly as the CLI does. The build runs in a worker thread
(:func:`trtstudio.ui.workers.run_in_thread`) through :func:`~trtstudio.backends.build_request.run_build`
with ``progress``/``log``/``cancel``/``parsed`` callbacks: the parser's rejected nodes show as soon as
its one parse ends. Progress and log lines reach the dialog only as queued signals; log lines are batched
in the worker so a verbose build does not flood the event loop. Cancel sets the task's stop flag,
which the builder's progress monitor polls at every step. Closing the dialog cancels and joins.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QRectF, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from trtstudio.backends.build import DEFAULT_MAX_DIM, MODULES, BuildResult
from trtstudio.backends.build_precision import flags_to_convert
from trtstudio.backends.build_request import BuildRequest
from trtstudio.backends.shapes import parse_dims
from trtstudio.backends.shapes.text import shape_text
from trtstudio.engine.buildtime import PHASES, PhaseRecorder
from trtstudio.engine.model import EngineInfo
from trtstudio.errors import FieldError, InputError
from trtstudio.ui.log_panel import LogPanel
from trtstudio.ui.workers import TaskState, WorkerDialog

TARGETS = ("sm75", "sm80", "sm86", "sm89", "sm120", "sm121")
BACKEND_LABELS = {"rtx": "TensorRT-RTX (tensorrt_rtx)", "tensorrt": "TensorRT (tensorrt)"}
LOG_BATCH_S = 0.05  # the worker sends log lines in batches at most this often
# request field -> the form's label (errors from the core name fields; the dialog shows labels)
FIELD_LABELS = {"shapes": "Optimization profile", "targets": "Targets", "output": "Engine file",
                "opt_level": "Optimization level", "workspace_bytes": "Workspace limit", "timing_cache": "Timing cache",
                "model": "Model", "fp16": "Precision", "bf16": "Precision", "int8": "Precision",
                "calib": "Calibration data"}


def installed_backends() -> dict[str, bool]:
    """For each backend of :data:`trtstudio.backends.build.MODULES`: is its module importable?"""
    out = {}
    for name, (module, _install) in MODULES.items():
        try:
            out[name] = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            out[name] = False
    return out


def weak_typing_flags(backend: str) -> list[str]:
    """The weak-typing precision flags (fp16/int8/bf16) the backend's module still has (TensorRT 10)."""
    try:
        trt = importlib.import_module(MODULES[backend][0])
    except (ImportError, OSError, KeyError):
        return []
    flags = getattr(trt, "BuilderFlag", None)
    return [f for f in ("fp16", "int8", "bf16") if flags is not None and hasattr(flags, f.upper())]


def engine_info_from_result(result: BuildResult) -> EngineInfo | None:
    """The layers of a built engine (see ``BuildResult.engine_info``), read on first call."""
    return result.engine_info


class PhaseBarView(QWidget):
    """The build's phases as one bar: a segment per phase as long as its time so far (the open one
    grows), its name and seconds inside where they fit; below, the open phase's elapsed time and,
    once it has reported a step, an estimate of what is left of it. Draws a
    :class:`~trtstudio.engine.buildtime.PhaseRecorder`'s snapshot or a finished build's timeline."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(26)
        self.segments: list[tuple[str, float]] = []
        self.caption = ""

    def set_phases(self, totals: dict[str, float], caption: str = "") -> None:
        self.segments = [(k, v) for k, v in totals.items() if v > 0]
        self.caption = caption
        self.setToolTip("\n".join(f"{k}: {v:.2f} s" for k, v in self.segments) + (f"\n{caption}" if caption else ""))
        self.update()

    @staticmethod
    def color(phase: str) -> QColor:
        i = PHASES.index(phase) if phase in PHASES else len(PHASES)
        return QColor.fromHsv((i * 47) % 360, 110, 225)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        r = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        p.setPen(self.palette().mid().color())
        p.drawRect(r)
        whole = sum(v for _, v in self.segments)
        x = r.left()
        for name, v in self.segments:
            w = r.width() * v / whole if whole else 0.0
            seg = QRectF(x, r.top(), w, r.height())
            p.fillRect(seg, self.color(name))
            label = f"{name} {v:.1f} s"
            if p.fontMetrics().horizontalAdvance(label) + 6 < w:
                p.setPen(QColor(20, 20, 20))
                p.drawText(seg, Qt.AlignmentFlag.AlignCenter, label)
            x += w
        p.end()


def _build_task(request: BuildRequest):  # noqa: ANN202
    """The function run on the worker thread; talks back only through ``state.set_progress``."""

    def task(state: TaskState) -> BuildResult:
        from trtstudio.backends.build_request import run_build

        pending: list[tuple[str, str]] = []
        last = [time.monotonic()]

        def flush_log() -> None:
            if pending:
                state.set_progress(("log", list(pending)))
                pending.clear()
            last[0] = time.monotonic()

        def on_log(severity: str, message: str) -> None:
            pending.append((severity, message))
            if time.monotonic() - last[0] >= LOG_BATCH_S:
                flush_log()

        def on_progress(phase: str, step: int, total: int) -> None:
            flush_log()
            state.set_progress(("progress", phase, step, total))

        def on_parsed(rejected: list[dict[str, Any]]) -> None:
            flush_log()
            state.set_progress(("unsupported", rejected))

        state.set_progress(("progress", "Parsing the ONNX model", 0, 0))
        try:
            result = run_build(request, progress=on_progress, log=on_log, cancel=state.is_stop_requested,
                               parsed=on_parsed)
        finally:
            flush_log()
        if result.ok:
            engine_info_from_result(result)  # read here, off the GUI thread; kept on the result
        return result

    return task


class BuildDialog(WorkerDialog):
    """Build an engine for ``model_path``; ``sig_built(BuildResult)`` when a build succeeded.

    The emitted result carries ``engine_info`` (an :class:`EngineInfo` read from the inspector JSON
    or the verbose build log), also kept in :attr:`engine_info`. Log lines go to ``log_panel`` when
    one is given, else to a panel inside the dialog.
    """

    sig_built = Signal(object)
    sig_unsupported = Signal(list)  # the parser's rejected nodes [{node, op_type, reason}], before building

    def __init__(self, model_path: str, parent: QWidget | None = None, log_panel: LogPanel | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Build engine — {Path(model_path).name}")
        self.model_path = str(model_path)
        self.build_result: BuildResult | None = None
        self.engine_info: EngineInfo | None = None
        self._own_log = log_panel is None
        self.log_panel = log_panel if log_panel is not None else LogPanel()
        self._installed = installed_backends()
        self._weak_flags: dict[str, bool] = {}  # backend -> has TensorRT 10's precision builder flags
        self._build_form()
        self._fill_profiles()
        self._on_backend_changed()
        self._set_running(False)

    # -- form ---------------------------------------------------------------------------------
    def _build_form(self) -> None:
        self.backend_combo = QComboBox()
        model = QStandardItemModel(self.backend_combo)
        self.backend_combo.setModel(model)
        for name, label in BACKEND_LABELS.items():
            ok = self._installed.get(name, False)
            self.backend_combo.addItem(label if ok else f"{label} — not installed", name)
            item = model.item(self.backend_combo.count() - 1)
            item.setEnabled(ok)
            if not ok:
                item.setToolTip(f"install: {MODULES[name][1]}")
        first = next((i for i in range(self.backend_combo.count()) if model.item(i).isEnabled()), -1)
        self.backend_combo.setCurrentIndex(first)

        self.target_boxes: dict[str, QCheckBox] = {}
        targets = QHBoxLayout()
        for t in TARGETS:
            box = QCheckBox(t.upper())
            box.setChecked(t == "sm86")
            self.target_boxes[t] = box
            targets.addWidget(box)
        targets.addStretch(1)

        self.workspace_spin = QSpinBox()
        self.workspace_spin.setRange(0, 1 << 20)
        self.workspace_spin.setSuffix(" MiB")
        self.workspace_spin.setSpecialValueText("TensorRT default")
        self.workspace_spin.setSingleStep(256)
        self.opt_level_spin = QSpinBox()
        self.opt_level_spin.setRange(0, 5)
        self.opt_level_spin.setValue(3)
        self.cache_edit = QLineEdit()
        self.cache_edit.setPlaceholderText("none (optional file, read and updated)")
        cache_button = QPushButton("…")
        cache_button.clicked.connect(self._on_cache_browse)
        cache_row = QHBoxLayout()
        cache_row.addWidget(self.cache_edit, 1)
        cache_row.addWidget(cache_button)
        self.output_edit = QLineEdit(self._default_output())
        self.detailed_check = QCheckBox("Detailed profiling verbosity (layer formats, tactics)")
        self.detailed_check.setChecked(True)
        self.tf32_check = QCheckBox("TF32 for FP32 math")
        self.tf32_check.setChecked(True)
        self.strong_check = QCheckBox("Strongly typed network")
        self.precision_boxes = {f: QCheckBox(f.upper()) for f in ("fp16", "bf16", "int8")}
        self.precision_row = QWidget()
        row = QHBoxLayout(self.precision_row)
        row.setContentsMargins(0, 0, 0, 0)
        for box in self.precision_boxes.values():
            row.addWidget(box)
        self.precision_note = QLabel()
        self.precision_note.setWordWrap(True)
        row.addWidget(self.precision_note, 1)
        self.calib_edit = QLineEdit()
        self.calib_edit.setPlaceholderText("INT8: a folder of .npy/.npz or images, or samples.py")
        calib_button = QPushButton("…")
        calib_button.clicked.connect(self._on_calib_browse)
        self.calib_row = QWidget()
        calib = QHBoxLayout(self.calib_row)
        calib.setContentsMargins(0, 0, 0, 0)
        calib.addWidget(self.calib_edit, 1)
        calib.addWidget(calib_button)
        self.precision_boxes["int8"].toggled.connect(self._on_precision_changed)

        form = QFormLayout()
        form.addRow("Backend", self.backend_combo)
        form.addRow("Targets", targets)
        form.addRow("Workspace limit", self.workspace_spin)
        form.addRow("Optimization level", self.opt_level_spin)
        form.addRow("Timing cache", cache_row)
        form.addRow("Engine file", self.output_edit)
        form.addRow("", self.detailed_check)
        form.addRow("", self.tf32_check)
        form.addRow("", self.strong_check)
        self._precision_label = QLabel("Precision")
        form.addRow(self._precision_label, self.precision_row)
        self._calib_label = QLabel("Calibration data")
        form.addRow(self._calib_label, self.calib_row)
        self._lay_out(form, self._build_profile_box(), self._build_buttons())

    def _build_profile_box(self) -> QGroupBox:
        """The profile table (filled by :meth:`_fill_profiles`) and the parser's rejected nodes."""
        self.profile_table = QTableWidget(0, 4)
        self.profile_table.setHorizontalHeaderLabels(["Input", "Min", "Opt", "Max"])
        self.profile_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.profile_table.verticalHeader().hide()
        self.profile_note = QLabel()
        self.profile_note.setWordWrap(True)
        profiles = QGroupBox("Optimization profile (dynamic inputs)")
        pl = QVBoxLayout(profiles)
        pl.addWidget(self.profile_note)
        pl.addWidget(self.profile_table)

        self.unsupported_list = QListWidget()
        self.unsupported_box = QGroupBox("Nodes the ONNX parser rejects")
        ul = QVBoxLayout(self.unsupported_box)
        ul.addWidget(self.unsupported_list)
        self.unsupported_box.hide()
        return profiles

    def _build_buttons(self) -> QHBoxLayout:
        """Progress, status and the Build / Cancel / Close buttons."""
        self.phase_label = QLabel()
        self.phase_bar = PhaseBarView()
        self.phase_caption = QLabel()
        self.phase_recorder: PhaseRecorder | None = None
        self.phase_timer = QTimer(self)
        self.phase_timer.setInterval(250)
        self.phase_timer.timeout.connect(self._on_phase_timer_timeout)
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.status_label = QLabel()
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.build_button = QPushButton("Build")
        self.build_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel build")
        self.close_button = QPushButton("Close")
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.build_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.close_button)
        self.build_button.clicked.connect(self.start_build)
        self.cancel_button.clicked.connect(self.cancel_build)
        self.close_button.clicked.connect(self.close)
        self.backend_combo.currentIndexChanged.connect(self._on_backend_changed)
        return buttons

    def _lay_out(self, form: QFormLayout, profiles: QGroupBox, buttons: QHBoxLayout) -> None:
        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addLayout(form)
        tl.addWidget(profiles)
        tl.addWidget(self.unsupported_box)
        tl.addWidget(self.phase_label)
        tl.addWidget(self.progress)
        tl.addWidget(self.phase_bar)
        tl.addWidget(self.phase_caption)
        tl.addWidget(self.status_label)
        tl.addStretch(1)
        lay = QVBoxLayout(self)
        if self._own_log:
            split = QSplitter(Qt.Orientation.Vertical)
            split.addWidget(top)
            split.addWidget(self.log_panel)
            split.setStretchFactor(1, 1)
            lay.addWidget(split, 1)
        else:
            lay.addWidget(top, 1)
        lay.addLayout(buttons)
        self.resize(720, 820 if self._own_log else 620)

    def _default_output(self) -> str:
        model = Path(self.model_path)
        folder = model.parent
        package = Path(__file__).resolve().parents[1]
        inside_package = package in folder.resolve().parents or folder.resolve() == package
        if inside_package or not os.access(folder, os.W_OK):
            folder = Path(tempfile.gettempdir()) / "trtstudio-engines"
        return str(folder / f"{model.stem}.engine")

    def _fill_profiles(self) -> None:
        """The table of the inputs with dynamic dims, filled with the model's shape plan (read once,
        without the onnxruntime probe a build may make for guessed sizes)."""
        from trtstudio.backends.shapes import plan_shapes

        self.profile_table.setRowCount(0)
        self._planned: dict[str, tuple[str, str, str]] = {}
        try:
            plan = plan_shapes(self.model_path, batch_max=DEFAULT_MAX_DIM)
        except InputError as exc:
            self.profile_note.setText(f"cannot read the model's inputs: {exc.one_line()}")
            self.profile_table.hide()
            self.build_button.setEnabled(False)
            return
        rows = [i for i in plan.inputs if i.dynamic and not i.shape_tensor]
        for inp in rows:
            r = self.profile_table.rowCount()
            self.profile_table.insertRow(r)
            item = QTableWidgetItem(inp.name)
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
            where = "; ".join(f"{d}: {src}" for d, src in zip(inp.declared, inp.sources, strict=True) if src != "model")
            item.setToolTip(f"model shape [{', '.join(str(d) for d in inp.declared)}]\n{where}")
            self.profile_table.setItem(r, 0, item)
            texts = tuple(shape_text(s) for s in (inp.min, inp.opt, inp.max))
            self._planned[inp.name] = texts  # type: ignore[assignment]
            for c, text in enumerate(texts, start=1):
                self.profile_table.setItem(r, c, QTableWidgetItem(text))
        if rows:
            said = [*plan.warnings, *plan.notes]
            self.profile_note.setText("Sizes from the model's shape plan (metadata, graph, defaults), as "
                                      "trtstudio build plans them; edit them to the shapes you will run."
                                      + "".join(f"\n• {w}" for w in said))
            self.profile_table.setFixedHeight(
                self.profile_table.horizontalHeader().height() + 8 + sum(
                    self.profile_table.rowHeight(r) for r in range(self.profile_table.rowCount())))
        else:
            self.profile_note.setText("All inputs are static: no optimization profile needed.")
            self.profile_table.hide()

    def _cell(self, row: int, col: int) -> str:
        item = self.profile_table.item(row, col)
        return item.text().strip() if item is not None else ""

    def profiles(self) -> list[dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]]]:
        """The profile rows the user edited (the others are the plan's, which the build makes itself);
        FieldError ``shapes`` for a malformed cell."""
        prof = {}
        for r in range(self.profile_table.rowCount()):
            name = self._cell(r, 0)
            texts = tuple(self._cell(r, c) for c in (1, 2, 3))
            if self._planned.get(name) == texts:
                continue
            try:
                prof[name] = tuple(parse_dims(text, "shapes", f"{name} {label}")
                                   for text, label in zip(texts, ("min", "opt", "max"), strict=True))
            except InputError as exc:
                raise FieldError("shapes", exc.message) from None
        return [prof] if prof else []  # type: ignore[list-item]

    def request(self) -> BuildRequest:
        """The BuildRequest the form describes (FieldError for a bad field, checked as the CLI checks it)."""
        backend = self.backend_combo.currentData()
        if not backend:
            raise InputError(None, "no TensorRT backend is installed: pip install tensorrt-rtx-cu13")
        targets = [t for t, box in self.target_boxes.items() if box.isChecked()]
        if backend == "rtx" and not targets:
            raise FieldError("targets", "choose at least one compute-capability target")
        precision = {f: box.isChecked() and not self.precision_row.isHidden() for f, box in self.precision_boxes.items()}
        request = BuildRequest(
            model=self.model_path,
            output=self.output_edit.text().strip(),
            backend=backend,
            targets=targets if backend == "rtx" else [],
            workspace_bytes=self.workspace_spin.value() << 20 if self.workspace_spin.value() else None,
            profiles=self.profiles(),
            opt_level=self.opt_level_spin.value(),
            timing_cache=self.cache_edit.text().strip() or None,
            detailed_profiling=self.detailed_check.isChecked(),
            tf32=self.tf32_check.isChecked(),
            strongly_typed=self.strong_check.isChecked(),
            shapes_source="the build dialog",
            calib=self.calib_edit.text().strip() or None if precision["int8"] else None,
            **precision,
        )
        request.validate()
        if any(precision.values()) and not self._weak_flags.get(backend, False):
            if precision["int8"] and not request.calib:
                raise FieldError("calib", f"INT8 on {MODULES[backend][0]} (strongly typed) comes from Q/DQ nodes "
                                          "placed with calibration data: choose a folder of .npy/.npz or images, "
                                          "or make an INT8 model with Precision and build that")
            flags_to_convert(importlib.import_module(MODULES[backend][0]), request)  # FP16 with BF16...
        return request

    @Slot()
    def _on_backend_changed(self) -> None:
        backend = self.backend_combo.currentData()
        for box in self.target_boxes.values():
            box.setEnabled(backend == "rtx")
        flags = weak_typing_flags(backend) if backend else []
        if backend:
            self._weak_flags[backend] = bool(flags)
        self.precision_row.setVisible(bool(backend))
        self._precision_label.setVisible(bool(backend))
        self.precision_note.setText(
            "(TensorRT 10 builder flags; deprecated)" if flags else
            "(strongly typed: the model is converted as Precision does — FP16/BF16 weights and casts, "
            "FP32 islands kept — and that model is built)")
        self._on_precision_changed()
        if not backend:
            self._show_status("No TensorRT backend is installed: pip install tensorrt-rtx-cu13", error=True)

    @Slot()
    def _on_precision_changed(self) -> None:
        """The calibration data row, for INT8 on a strongly typed runtime."""
        backend = self.backend_combo.currentData()
        show = bool(backend) and self.precision_boxes["int8"].isChecked() and not self._weak_flags.get(backend, False)
        self.calib_row.setVisible(show)
        self._calib_label.setVisible(show)

    @Slot()
    def _on_calib_browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Calibration data", self.calib_edit.text())
        if path:
            self.calib_edit.setText(path)

    @Slot()
    def _on_cache_browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Timing cache", self.cache_edit.text(),
                                              "Timing cache (*.cache *.timing);;All files (*)")
        if path:
            self.cache_edit.setText(path)

    # -- build --------------------------------------------------------------------------------
    def is_building(self) -> bool:
        """True while a build's worker thread runs."""
        return self._handle is not None and self._handle.is_running()

    @Slot()
    def start_build(self) -> None:
        """Start a build with the form's options (shows the error instead when they are bad)."""
        if self._handle is not None:
            return
        self._closing = False
        try:
            request = self.request()
        except FieldError as exc:
            self._show_status(exc.named(FIELD_LABELS.get(exc.field, exc.field)).one_line(), error=True)
            return
        except InputError as exc:
            self._show_status(exc.one_line(), error=True)
            return
        self.build_result = None
        self.engine_info = None
        self.unsupported_list.clear()
        self.unsupported_box.hide()
        self.progress.setRange(0, 0)
        self.phase_label.setText("Starting…")
        self.phase_recorder = PhaseRecorder()
        self.phase_bar.set_phases({})
        self.phase_caption.clear()
        self.phase_timer.start()
        self._show_status("Building…")
        self.log_panel.append("INFO", f"trtstudio: building {self.model_path} -> {request.engine_path()} "
                                      f"with {json.dumps(request.to_json())}")
        self._start_task(_build_task(request), "build")

    @Slot()
    def cancel_build(self) -> None:
        """Ask the running build to stop at the builder's next progress step."""
        self._cancel_task()

    def _set_running(self, running: bool) -> None:
        self.build_button.setEnabled(not running and bool(self.backend_combo.currentData()))
        self.cancel_button.setEnabled(running)

    @Slot(object)
    def _on_worker_progress(self, value: object) -> None:
        if not isinstance(value, tuple) or not value:
            return
        kind = value[0]
        if kind == "log":
            for severity, message in value[1]:
                self.log_panel.append(severity, message)
        elif kind == "progress":
            _, phase, step, total = value
            self._record_phase(str(phase), int(step), int(total))
            self.phase_label.setText(str(phase))
            if total > 0:
                self.progress.setRange(0, int(total))
                self.progress.setValue(min(int(step), int(total)))
                self.progress.setFormat(f"%v / %m  ({phase})")
            else:
                self.progress.setRange(0, 0)
        elif kind == "unsupported":
            self._show_unsupported(value[1])

    def _record_phase(self, phase: str, step: int, total: int) -> None:
        """The live phase bar's recorder, fed from the queued progress events (the build keeps its
        own exact timeline, shown when it ends)."""
        rec = self.phase_recorder
        if rec is None:
            return
        if step == 0:
            rec.start(phase, total)
        elif total and step >= total:
            rec.finish(phase)
        else:
            rec.step(phase, step, total)

    @Slot()
    def _on_phase_timer_timeout(self) -> None:
        if self.phase_recorder is None:
            return
        snap = self.phase_recorder.snapshot()
        o = snap["open"]
        caption = f"{snap['elapsed_s']:.1f} s"
        if o is not None:
            caption += f"  ·  {o['name']}: {o['elapsed_s']:.1f} s"
            if o["left_s"] is not None:
                caption += f", about {o['left_s']:.1f} s left ({o['step']}/{o['total']})"
        self.phase_caption.setText(caption)
        self.phase_bar.set_phases(snap["phases"], caption)

    def _show_timeline(self, result: BuildResult) -> None:
        from trtstudio.engine.buildtime import phase_totals

        self.phase_timer.stop()
        self.phase_recorder = None
        totals = phase_totals(result.timeline)
        top = sorted(totals.items(), key=lambda kv: -kv[1])[:3]
        caption = (("Until cancelled: " if result.cancelled else "") + f"{result.seconds:.1f} s; "
                   + ", ".join(f"{k} {v:.1f} s" for k, v in top))
        self.phase_caption.setText(caption)
        self.phase_bar.set_phases(totals, caption)

    def _show_unsupported(self, items: list[dict[str, Any]]) -> None:
        self.unsupported_list.clear()
        for u in items:
            self.unsupported_list.addItem(f"{u.get('node') or '?'} ({u.get('op_type') or '?'}): {u.get('reason')}")
        self.unsupported_box.setVisible(bool(items))
        self.sig_unsupported.emit(list(items))

    @Slot(object)
    def _on_worker_done(self, result: object) -> None:
        assert isinstance(result, BuildResult)
        self.build_result = result
        self._show_timeline(result)
        if result.unsupported:
            self._show_unsupported(result.unsupported)
        if result.ok:
            self.engine_info = result.engine_info
            n = len(self.engine_info.layers) if self.engine_info else 0
            self.progress.setRange(0, 1)
            self.progress.setValue(1)
            self.progress.setFormat("done")
            self.phase_label.setText("Built")
            self._show_status(f"Built {result.engine_path} ({result.engine_bytes} bytes, {n} layers) "
                              f"in {result.seconds:.1f} s"
                              + (f"\n{result.precision.summary()}" if result.precision is not None else ""))
            self.log_panel.append("INFO", f"trtstudio: built {result.engine_path} in {result.seconds:.1f} s")
            if not self._closing:
                self.sig_built.emit(result)
            return
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("cancelled" if result.cancelled else "failed")
        self.phase_label.setText("Cancelled" if result.cancelled else "Failed")
        text = "Build cancelled." if result.cancelled else f"Build failed: {result.error}"
        self._show_status(text, error=not result.cancelled)
        self.log_panel.append("INFO" if result.cancelled else "ERROR", f"trtstudio: {text}")

    @Slot(object)
    def _on_worker_error(self, exc: object) -> None:
        self.phase_timer.stop()
        text = self._show_task_error(exc, "Build")
        self.progress.setFormat("failed")
        self.log_panel.append("ERROR", f"trtstudio: build failed: {text}")

    @Slot()
    def _on_worker_finished(self) -> None:
        if self._handle is not None:
            self._handle.join(self.JOIN_MS)
        self._handle = None
        self._set_running(False)
        self.log_panel.flush()
