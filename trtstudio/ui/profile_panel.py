"""The live profiling panel: run settings, Start / Pause / Stop, per-layer run, and the live plots.

The model's inputs are read and the run goes on in workers (``ui.workers``); this widget only holds
controls and forwards results. A run goes on while the user works elsewhere in the window; closing
the window calls ``shutdown`` (stop, then join every worker this panel started).
"""

from __future__ import annotations

import os
import re
import threading
import time
from functools import partial
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from trtstudio.backends import catalogue
from trtstudio.backends.shapes import parse_dims
from trtstudio.errors import FieldError, InputError
from trtstudio.profiling.memory import MemoryMonitor
from trtstudio.profiling.runner import RunState
from trtstudio.profiling.samples import SampleBuffer
from trtstudio.profiling.session import (
    BackendFactory,
    ProfileOutcome,
    ProfileRequest,
    run_layers,
    run_profile,
)
from trtstudio.tasks import TaskEvent, TaskState, error_text
from trtstudio.ui.live_panels import LivePanels
from trtstudio.ui.settings import PROFILE_WIDE_PX
from trtstudio.ui.workers import WorkerHandle, run_in_thread


def _load_proto(path: str) -> Any:
    """The ModelProto of ``path`` without external weights; InputError for an unreadable file."""
    import onnx

    try:
        return onnx.load(path, load_external_data=False)
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except Exception as exc:  # noqa: BLE001 - onnx raises DecodeError and others
        raise InputError(path, f"not a readable ONNX model: {str(exc).splitlines()[0] if str(exc) else exc}") from None


def read_model_inputs(path: str, model: Any = None) -> list[dict[str, Any]]:
    """Input specs (name, dtype, shape with str/'?' for dynamic dims) of an ONNX model, without
    weights (``model``: its ModelProto when already loaded): the model's one view, backends.model_io."""
    from trtstudio.backends.model_io import OnnxModel

    return [t.spec() for t in OnnxModel(model if model is not None else _load_proto(path)).inputs]


SPECS_WAIT_S = 10.0  # how long the input specs wait for the window's layout to settle (see set_model)


def _specs_task(path: str, backend: str, factory: BackendFactory | None, proto: Any = None,
                wait_for: threading.Event | None = None) -> Any:
    def task(state: TaskState) -> list[dict[str, Any]]:
        if wait_for is not None:  # the window lays a big graph out: read the inputs after that
            end = time.monotonic() + SPECS_WAIT_S
            while not wait_for.wait(0.1) and time.monotonic() < end:
                state.check()
        if path.lower().endswith(".onnx"):
            from trtstudio.backends.shapes import plan_shapes

            # the window's own ModelProto when it has one: parsing a big model holds the GIL (a GUI
            # stall) for as long as it takes
            model_proto = proto if proto is not None else _load_proto(path)
            specs = read_model_inputs(path, model_proto)
            # the shape plan (metadata, graph-pinned dims, defaults) without the onnxruntime probe the
            # run itself may make: a probe builds a session, too heavy to do on every model opened
            plan = plan_shapes(model_proto, {}, probe=False) if specs else None
            by_name = {i.name: i for i in plan.inputs} if plan is not None else {}
            for spec in specs:
                planned = by_name.get(spec["name"])
                if planned is not None:
                    spec["run"] = list(planned.opt)
                    spec["sources"] = list(planned.sources)
            if specs and plan is not None:  # the plan's own words on each guessed size
                specs[0]["plan_warnings"] = list(plan.warnings) + list(plan.notes)
            return specs
        from trtstudio.backends.base import open_backend

        b = (factory or open_backend)(backend, path)
        try:
            return [dict(s) for s in b.input_specs()]
        finally:
            b.close()

    return task


MAX_SHAPE_ROWS = 256  # inputs listed in the shapes table (a row per input of a 25,000-input model stalls)


def _where(spec: dict[str, Any]) -> str:
    """``dim: source`` of each dynamic dim of an input spec that carries the plan's ``sources``."""
    return "; ".join(f"{d}: {src}" for d, src in zip(spec["shape"], spec.get("sources", []), strict=False)
                     if not isinstance(d, int))


def _run_dims(spec: dict[str, Any]) -> list[int]:
    return spec.get("run") or [d if isinstance(d, int) and d > 0 else 1 for d in spec["shape"]]


DIM_MAX = 8  # characters of a symbolic dim shown in the table; the tooltip has the whole shape


def _short_dim(d: Any) -> str:
    """A dim for the inputs table: ``p2o.DynamicDimension.0`` -> ``p2o…n.0`` (exporters' symbols run
    to 25 characters, four of them pushed the table past the dock's edge)."""
    text = str(d)
    return text if len(text) <= DIM_MAX else f"{text[:3]}\u2026{text[-3:]}"


def fill_shapes_table(table: QTableWidget, specs: list[dict[str, Any]]) -> dict[str, str]:
    """Rows input / model shape / run shape (editable; the plan's value, its sources as tooltip).
    Returns input -> the run shape text filled in."""
    planned: dict[str, str] = {}
    specs = specs[:MAX_SHAPE_ROWS]
    table.setRowCount(len(specs))
    for r, spec in enumerate(specs):
        dims = spec["shape"]
        model_text = "x".join(str(d) for d in dims) if dims else "scalar"
        planned[spec["name"]] = run_text = "x".join(map(str, _run_dims(spec)))
        name_item = QTableWidgetItem(spec["name"])
        name_item.setFlags(name_item.flags() & ~Qt.ItemFlag.ItemIsEditable)
        name_item.setToolTip(f"{spec['name']} ({spec['dtype']})")
        short = "x".join(_short_dim(d) for d in dims) if dims else "scalar"
        model_item = QTableWidgetItem(f"{short}  {spec['dtype']}")
        model_item.setFlags(model_item.flags() & ~Qt.ItemFlag.ItemIsEditable)
        model_item.setToolTip(f"{model_text}  {spec['dtype']}")  # the whole text, always
        run_item = QTableWidgetItem(run_text)
        if spec.get("sources"):
            run_item.setToolTip("where each size came from: " + _where(spec))
        for c, item in enumerate((name_item, model_item, run_item)):
            table.setItem(r, c, item)
    return planned


def shape_notes(specs: list[dict[str, Any]]) -> list[str]:
    """What was guessed: the shape plan's warnings and notes (sizes taken from metadata or the graph
    need none: the run-shape tooltip says where they came from); without a plan (an engine file), a
    line per input with dynamic dims."""
    if specs and "plan_warnings" in specs[0]:
        notes = list(specs[0]["plan_warnings"][:20])
    else:
        notes = [f"'{spec['name']}' has dynamic dims ({'x'.join(str(d) for d in spec['shape'])}); defaulted to "
                 f"{'x'.join(map(str, _run_dims(spec)))}" for spec in specs
                 if not all(isinstance(d, int) and d > 0 for d in spec["shape"])][:20]
    if len(specs) > MAX_SHAPE_ROWS:
        notes.append(f"{len(specs):,} inputs: the first {MAX_SHAPE_ROWS} are listed; the others run with "
                     "the planned shapes (set them with trtstudio profile --shapes)")
    return notes


def fill_layers_table(table: QTableWidget, rows: list[dict[str, Any]]) -> None:
    """Per-layer rows (name, provider, ms), sortable."""
    table.setSortingEnabled(False)
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        name = QTableWidgetItem(str(row.get("name", "")))
        name.setToolTip(", ".join(row.get("onnx_nodes", [])) or str(row.get("name", "")))
        ms = QTableWidgetItem()
        ms.setData(Qt.ItemDataRole.DisplayRole, round(float(row.get("time_ms", 0.0)), 4))
        prov = QTableWidgetItem(str(row.get("provider", "")).replace("ExecutionProvider", ""))
        if row.get("fallback"):
            prov.setToolTip("fell back to the CPU")
        for c, item in enumerate((name, prov, ms)):
            table.setItem(r, c, item)
    table.setSortingEnabled(True)


# request field -> the label of the control that sets it (the CLI shows its flags instead)
FIELD_LABELS = {"shapes": "run shapes", "input": "input data", "iterations": "Measure", "warmup": "Warm-up",
                "threads": "Threads", "layer_iterations": "Per-layer runs", "duration_s": "Measure (s)",
                "device": "Device", "cuda_graph": "CUDA graph"}


class WrappedNote(QLabel):
    """A word-wrapped label whose long names break after a ``.``, ``,``, ``/`` or ``=`` followed by
    a letter (a zero-width space; numbers stay whole). An exporter's symbolic dims (``[p2o.DynamicDimension.0,3,p2o.DynamicDimension.1,...]``)
    are one word to Qt: the note ran past the right edge, and the Inputs box, sized for the
    unbroken word, cut its last lines off."""

    _BREAK_AFTER = re.compile(r"([.,/=])(?=[A-Za-z_])")

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        super().setText(self._BREAK_AFTER.sub("\\1\u200b", text))

    def plain_text(self) -> str:
        """The text as set, without the break opportunities."""
        return self.text().replace("\u200b", "")


class ProfilePanel(QWidget):
    """Settings and controls of a live profiling run beside its ``LivePanels``.

    Public: ``set_model``, ``start``, ``pause``, ``resume``, ``stop``, ``is_running``, ``run_layers``,
    ``shutdown``, ``statistics``. Signals: ``sig_run_finished(dict)`` (the run's report document,
    also after an error), ``sig_layer_times(list)`` (per-layer rows), ``sig_model_ready(list)``
    (input specs once read).
    """

    sig_run_finished = Signal(object)
    sig_run_started = Signal(object, object)  # (ProfileRequest, RunState)
    sig_run_outcome = Signal(object, object)  # (ProfileRequest, ProfileOutcome or None when it could not start)
    sig_layer_times = Signal(object)
    sig_model_ready = Signal(object)

    def __init__(self, parent: QWidget | None = None, backend_factory: BackendFactory | None = None,
                 live: LivePanels | None = None) -> None:
        """``live``: the live panels, made already (the window makes them a plot at a time)."""
        super().__init__(parent)
        self.backend_factory = backend_factory  # (name, path, **options) -> Backend; tests inject doubles
        self.target: str | None = None  # ssh://... (Profile > Target), None: this machine
        self.wait_for: threading.Event | None = None  # set by the window: see _specs_task
        self._model: str | None = None
        self._specs: list[dict[str, Any]] = []
        self._run: WorkerHandle | None = None
        self._layers: WorkerHandle | None = None
        self._loader: WorkerHandle | None = None
        self._state: RunState | None = None
        self._samples: SampleBuffer | None = None
        self._final: dict[str, Any] | None = None
        self._layer_rows: list[dict[str, Any]] = []
        self._planned: dict[str, str] = {}  # input -> the run shape the plan filled in (edits differ)
        self._pending_model: str | None = None  # opened while a run of another model goes on
        self._request: ProfileRequest | None = None
        self.last_outcome: Any = None  # ProfileOutcome, or remote.client.RemoteOutcome  # the last finished run (samples included)
        self._build(live)
        self._sync_buttons()

    # -- layout ----------------------------------------------------------------------------------
    def _build(self, live: LivePanels | None) -> None:
        side = QWidget()
        col = QVBoxLayout(side)
        col.setContentsMargins(4, 4, 4, 4)
        self.model_label = QLabel("No model")
        self.model_label.setWordWrap(True)
        col.addWidget(self.model_label)
        col.addWidget(self._build_inputs())
        col.addWidget(self._build_run_form())
        self._build_controls(col)
        side.setMinimumWidth(280)
        self._side = side

        self.live = live if live is not None else LivePanels()
        self._split = split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(side)
        split.addWidget(self.live)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        outer = QHBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(split)
        self._arrange(self.width())

    def _build_inputs(self) -> QGroupBox:
        """The Inputs box: the shapes table and the dynamic-dims note."""
        box = QGroupBox("Inputs")
        v = QVBoxLayout(box)
        self.shapes_table = QTableWidget(0, 3)
        self.shapes_table.setHorizontalHeaderLabels(["input", "model shape", "run shape"])
        self.shapes_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.shapes_table.horizontalHeader().setStretchLastSection(True)
        self.shapes_table.verticalHeader().setVisible(False)
        self.shapes_table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # what is still too long: both ends kept
        self.shapes_table.setMaximumHeight(110)
        self.shapes_table.setSizeAdjustPolicy(QAbstractItemView.SizeAdjustPolicy.AdjustToContents)
        self.shapes_table.setToolTip("Edit 'run shape' as e.g. 1x3x224x224")
        v.addWidget(self.shapes_table)
        self.shapes_note = WrappedNote("")
        self.shapes_note.setWordWrap(True)
        self.shapes_note.setStyleSheet("color: #a05000;")
        self.shapes_note.setVisible(False)
        # never squeezed below its wrapped height (a tall panel scrolls instead of cutting lines off)
        self.shapes_note.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        v.addWidget(self.shapes_note)
        return box

    def _build_run_form(self) -> QGroupBox:
        """The Run box: backend, input data, warm-up, measure, threads and device."""
        form_box = QGroupBox("Run")
        form = QFormLayout(form_box)
        self.backend_combo = self._backend_combo()
        form.addRow("Backend", self.backend_combo)
        data_row = QHBoxLayout()
        self.data_combo = QComboBox()
        self.data_combo.addItems(["Random", "File / folder"])
        self.data_combo.currentIndexChanged.connect(self._on_data_combo_changed)
        self.data_edit = QLineEdit()
        self.data_edit.setPlaceholderText(".npy, .npz or folder of NAME.npy")
        self.data_edit.setEnabled(False)
        self.data_browse = QPushButton("…")
        self.data_browse.setEnabled(False)
        self.data_browse.setMaximumWidth(28)
        self.data_browse.clicked.connect(self._on_data_browse_clicked)
        data_row.addWidget(self.data_combo)
        data_row.addWidget(self.data_edit, 1)
        data_row.addWidget(self.data_browse)
        form.addRow("Input data", data_row)
        self.warmup_spin = QSpinBox()
        self.warmup_spin.setRange(0, 1_000_000)
        self.warmup_spin.setValue(10)
        form.addRow("Warm-up", self.warmup_spin)
        count_row = QHBoxLayout()
        self.count_mode = QComboBox()
        self.count_mode.addItems(["Iterations", "Duration (s)", "Until stopped"])
        self.count_spin = QSpinBox()
        self.count_spin.setRange(1, 1_000_000_000)
        self.count_spin.setValue(1000)
        self.count_mode.currentIndexChanged.connect(self._on_count_mode_changed)
        count_row.addWidget(self.count_mode)
        count_row.addWidget(self.count_spin, 1)
        form.addRow("Measure", count_row)
        self.threads_spin = QSpinBox()
        self.threads_spin.setRange(0, 256)
        self.threads_spin.setSpecialValueText("default")
        self.threads_spin.setToolTip("onnxruntime intra-op threads (0: onnxruntime's default)")
        form.addRow("Threads", self.threads_spin)
        self.device_spin = QSpinBox()  # the CUDA device of the torch and ORT GPU backends
        self.device_spin.setRange(-1, 63)
        self.device_spin.setSpecialValueText("default")
        self.device_spin.setValue(-1)
        self.device_spin.setToolTip("CUDA device for GPU backends (default: device 0); 'ort' runs on the CPU")
        form.addRow("Device", self.device_spin)
        self.graph_check = QCheckBox("CUDA graph (compared with eager)")
        self.graph_check.setToolTip("TensorRT, PyTorch: replay the enqueue from a CUDA graph (--cuda-graph); PyTorch "
                                    "also runs eager against it in paired rounds: what launch overhead costs")
        form.addRow(self.graph_check)
        self.backend_combo.currentIndexChanged.connect(lambda _i: self._sync_buttons())
        return form_box

    def _build_controls(self, col: QVBoxLayout) -> None:
        """Start/Pause/Stop, the per-layer run, the status and error lines and the layers table."""
        buttons = QHBoxLayout()
        self.start_button = QPushButton("Start")
        self.pause_button = QPushButton("Pause")
        self.stop_button = QPushButton("Stop")
        self.start_button.clicked.connect(self.start)
        self.pause_button.clicked.connect(self._on_pause_button_clicked)
        self.stop_button.clicked.connect(self.stop)
        for b in (self.start_button, self.pause_button, self.stop_button):
            buttons.addWidget(b)
        col.addLayout(buttons)
        layer_row = QHBoxLayout()
        self.layers_button = QPushButton("Per-layer run")
        self.layers_button.setToolTip("Profile each layer (a separate, profiled session; not while a run goes on)")
        self.layers_button.clicked.connect(self.run_layers)
        self.layers_spin = QSpinBox()
        self.layers_spin.setRange(1, 100_000)
        self.layers_spin.setValue(20)
        self.layers_spin.setSuffix(" runs")
        layer_row.addWidget(self.layers_button)
        layer_row.addWidget(self.layers_spin)
        col.addLayout(layer_row)

        self.status_label = QLabel("")
        self.status_label.setWordWrap(True)
        col.addWidget(self.status_label)
        self.error_label = QLabel("")
        self.error_label.setStyleSheet("color: #c00000;")
        self.error_label.setWordWrap(True)
        self.error_label.setVisible(False)
        col.addWidget(self.error_label)

        self.layers_table = QTableWidget(0, 3)
        self.layers_table.setHorizontalHeaderLabels(["layer", "provider", "ms"])
        self.layers_table.verticalHeader().setVisible(False)
        self.layers_table.horizontalHeader().setStretchLastSection(False)
        self.layers_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.layers_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.layers_table.setSortingEnabled(True)
        self.layers_table.setVisible(False)
        col.addWidget(self.layers_table, 10)
        col.addStretch(1)

    WIDE_PX = PROFILE_WIDE_PX  # narrower than this (a dock), the controls go above the plots

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._arrange(event.size().width())

    def _arrange(self, width: int) -> None:
        wide = width >= self.WIDE_PX
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self._split.orientation() == orientation and self._split.property("arranged"):
            return
        self._split.setProperty("arranged", True)
        self._split.setOrientation(orientation)
        self._side.setMaximumWidth(420 if wide else 16777215)
        if wide:
            self._split.setSizes([340, max(1, width - 340)])
        else:
            self._split.setSizes([self._side.sizeHint().height(), 10_000])

    # -- model -----------------------------------------------------------------------------------
    def set_model(self, path: str, proto: Any = None) -> None:
        """Show ``path`` (an .onnx model or an engine; ``proto``: its ModelProto when the caller has
        parsed it); its inputs are read in a worker and fill the
        shapes table when ready (``sig_model_ready``). Backends that cannot run it here are disabled.
        While a run goes on, the panel keeps showing the model that runs (a run is never relabelled)
        and switches to ``path`` when that run has ended."""
        if self.is_running() and self._model is not None and os.path.abspath(str(path)) != os.path.abspath(self._model):
            self._pending_model = str(path)
            self.model_label.setText(f"{os.path.basename(self._model)} (running; {os.path.basename(str(path))} next)")
            return
        self._pending_model = None
        self._model = str(path)
        self.model_label.setText(os.path.basename(self._model))
        self.model_label.setToolTip(self._model)
        self._clear_error()
        self._offer_backends(self._model)
        self.shapes_table.setRowCount(0)
        self._specs = []
        if self._loader is not None:
            self._loader.request_stop()
        self._loader = run_in_thread(
            _specs_task(self._model, str(self.backend_combo.currentData()), self.backend_factory, proto,
                        self.wait_for),
            # a later set_model wins: results for a model no longer shown are dropped
            on_done=partial(self._on_specs_done, path=self._model),
            on_error=partial(self._on_specs_error, path=self._model),
            name="model-inputs",
        )
        self._sync_buttons()

    def _backend_combo(self) -> QComboBox:
        """The catalogue's backends (the CLI's --backend choices), by label. Until the user picks
        one, each model opened gets the backend ``auto`` picks for it on the command line
        (catalogue.default_backend); a pick is kept for the models it can run."""
        combo = QComboBox()
        for info in catalogue.CATALOGUE.values():
            combo.addItem(info.label, info.name)
        self._backend_picked = False
        combo.activated.connect(self._on_backend_picked)
        return combo

    def _offer_backends(self, path: str) -> None:
        """Enable the backends that can run ``path`` here (the others say why in their tooltip) and
        select the one ``auto`` picks for it (the user's pick, where they made one it can run)."""
        avail = catalogue.availability(path)
        model = self.backend_combo.model()
        for i in range(self.backend_combo.count()):
            why = avail.get(self.backend_combo.itemData(i))
            item = model.item(i)  # type: ignore[attr-defined]
            item.setEnabled(why is None)
            item.setToolTip(why or "")
        current = self.backend_combo.currentData()
        if self._backend_picked and avail.get(current) is None:
            return
        auto = catalogue.default_backend(path)
        usable = [name for name, why in avail.items() if why is None]
        want = auto if avail.get(auto) is None else (usable[0] if usable else auto)
        self.backend_combo.setCurrentIndex(self.backend_combo.findData(want))

    @Slot(int)
    def _on_backend_picked(self, _index: int) -> None:
        self._backend_picked = True

    def _on_specs_done(self, specs: object, path: str | None = None) -> None:
        if not isinstance(specs, list) or (path is not None and path != self._model):
            return
        self._specs = specs
        self._planned = fill_shapes_table(self.shapes_table, specs)
        notes = shape_notes(specs)
        self.shapes_note.setText("\n".join(notes) + ("\nEdit 'run shape' to change." if notes else ""))
        self.shapes_note.setVisible(bool(notes))
        self._sync_buttons()
        self.sig_model_ready.emit(specs)

    def _on_specs_error(self, exc: object, path: str | None = None) -> None:
        if path is None or path == self._model:
            self._show_error(exc)

    def shapes(self, edited_only: bool = False) -> dict[str, tuple[int, ...]]:
        """The run shapes in the table (``edited_only``: those the user changed from the plan);
        raises InputError naming the input for a malformed one."""
        out: dict[str, tuple[int, ...]] = {}
        for r in range(self.shapes_table.rowCount()):
            name_item, shape_item = self.shapes_table.item(r, 0), self.shapes_table.item(r, 2)
            if name_item is None or shape_item is None:
                continue
            text = shape_item.text().strip().lower()
            # the one shape-text rule (backends.shapes.text), as --shapes reads it; empty: a scalar
            dims = parse_dims(text, None, f"input '{name_item.text()}'") if text else ()
            if edited_only and self._planned.get(name_item.text()) == text:
                continue  # as planned: the run plans it the same way and records where it came from
            out[name_item.text()] = dims
        return out

    def request(self) -> ProfileRequest:
        """The run the controls describe (InputError for a malformed shape or missing data path)."""
        if self._model is None:
            raise InputError(None, "open a model first")
        mode = self.count_mode.currentIndex()
        data = self.data_edit.text().strip() if self.data_combo.currentIndex() == 1 else None
        if self.data_combo.currentIndex() == 1 and not data:
            raise InputError(None, "choose an input data file or folder, or pick Random")
        threads = self.threads_spin.value() or None
        return ProfileRequest(
            model=self._model,
            backend=str(self.backend_combo.currentData()),
            shapes=self.shapes(edited_only=True),
            input_path=data,
            warmup=self.warmup_spin.value(),
            iterations=self.count_spin.value() if mode == 0 else None,
            duration_s=float(self.count_spin.value()) if mode == 1 else None,
            threads=threads,
            device=self.device_spin.value() if self.device_spin.value() >= 0 and self.backend_combo.currentData() != "ort"
            else None,
            layer_iterations=self.layers_spin.value(),
            cuda_graph=self.graph_check.isEnabled() and self.graph_check.isChecked(),
        )

    # -- run control -----------------------------------------------------------------------------
    @Slot()
    def start(self) -> None:
        """Start a run with the current settings (errors in the settings are shown, not raised)."""
        if self.is_running():
            return
        self._clear_error()
        try:
            req = self.request()
        except InputError as exc:
            self._show_error(exc)
            return
        self._final = None
        self._state = RunState()
        self._samples = SampleBuffer(req.ring_capacity)
        monitor = MemoryMonitor(probes=[], interval_ms=100)
        self.live.attach(self._samples, monitor)
        state, samples, factory = self._state, self._samples, self.backend_factory
        self.live.set_disturbances(state.disturbances)
        self._request = req
        self.sig_run_started.emit(req, state)
        target = self.target
        if target:  # a remote target (Profile > Target): the same request, samples streamed into the same buffer
            from trtstudio.remote.client import profile_request_remote

            def task(_s: object) -> object:
                return profile_request_remote(target, req, state, samples)
        else:
            def task(_s: object) -> object:
                return run_profile(req, state, samples, monitor, factory)
        self._run = run_in_thread(
            task,
            on_done=self._on_run_done, on_error=self._on_run_error, on_progress=self._on_run_progress,
            on_finished=self._on_run_finished, state=state, name="profile",
        )
        where = f" on {target}" if target else ""
        self.status_label.setText(f"loading {os.path.basename(req.model)} on {self.backend_combo.currentText()}{where}…")
        self._sync_buttons()

    @Slot()
    def pause(self) -> None:
        """Hold the run between inferences."""
        self._set_paused(True)

    @Slot()
    def resume(self) -> None:
        """Go on with a paused run."""
        self._set_paused(False)

    def _set_paused(self, paused: bool) -> None:
        if self._state is None or not self.is_running():
            return
        if paused:
            self._state.pause()
            self.status_label.setText(f"paused after {self._state.done:,} inferences")
        else:
            self._state.resume()
            self.status_label.setText("running")
        self._sync_buttons()

    def is_paused(self) -> bool:
        """True while a run is paused."""
        return self._state is not None and self.is_running() and self._state.is_paused()

    @Slot()
    def stop(self) -> None:
        """Ask the run to end after the current inference (results arrive through ``sig_run_finished``)."""
        if self._run is not None and self.is_running():
            self._run.request_stop()
            self.status_label.setText("stopping…")

    def is_running(self) -> bool:
        """True from ``start`` until the run's result has arrived."""
        return self._run is not None and not self._run.is_done()

    def statistics(self) -> dict[str, Any]:
        """The latest statistics: live ones during a run, the whole-run report document after it."""
        if self._final is not None:
            return dict(self._final)
        return self.live.statistics()

    @Slot()
    def run_layers(self) -> None:
        """Profile each layer in a worker (not while a run goes on); rows go to ``sig_layer_times``."""
        if self.is_running() or (self._layers is not None and not self._layers.is_done()):
            return
        self._clear_error()
        try:
            req = self.request()
        except InputError as exc:
            self._show_error(exc)
            return
        self._layers = run_in_thread(
            lambda s: run_layers(req, s, self.backend_factory),
            on_done=self._on_layers_done, on_error=self._on_layers_error,
            on_finished=self._sync_buttons, name="per-layer",
        )
        self.status_label.setText(f"per-layer profile: {req.layer_iterations} runs…")
        self._sync_buttons()

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Stop every worker of this panel and join it (the main window calls this on close);
        True when all ended in time."""
        self.live.stop_timer()
        ok = True
        for h in (self._run, self._layers, self._loader):
            if h is not None:
                ok = h.stop(timeout_ms) and ok
        return ok

    # -- worker results --------------------------------------------------------------------------
    def _on_run_progress(self, event: object) -> None:
        if not isinstance(event, TaskEvent):
            return
        info = {"event": event.kind, **event.data}
        if info.get("event") == "loaded":
            self.live.set_batch(int(info.get("batch", 1)))
            shapes = ", ".join(f"{k} {'x'.join(map(str, v))}" for k, v in info.get("shapes", {}).items())
            self.status_label.setText(f"running ({shapes})" + "".join(f"\nnote: {n}" for n in info.get("notes", [])))
        elif info.get("event") == "cold":
            self.live.set_cold_ms(float(info["cold_ms"]))
        elif info.get("event") == "variants":
            self.status_label.setText(f"comparing eager with the CUDA graph ({info.get('rounds')} paired rounds)…")

    def _on_run_done(self, outcome: object) -> None:
        from trtstudio.remote.client import RemoteOutcome

        if not isinstance(outcome, (ProfileOutcome, RemoteOutcome)):
            return
        doc = outcome.to_dict()
        self._final = doc
        self.last_outcome = outcome  # the full run (samples included) for reports and sessions
        self.sig_run_outcome.emit(outcome.request, outcome)
        self.live.finish(doc)
        result = outcome.result
        if result is not None and result.error is not None:
            self._show_error(result.error, prefix=f"run stopped after {result.count:,} inferences: ")
            self.status_label.setText(f"failed after {result.count:,} inferences")
        else:
            how = "stopped" if doc.get("stopped") else "finished"
            self.status_label.setText(f"{how}: {doc['latency_ms'].get('count') or 0:,} inferences"
                                      + (f"\n{doc['variants']['verdict']}" if doc.get("variants") else ""))
        self.sig_run_finished.emit(doc)

    def _on_run_error(self, exc: object) -> None:
        self.live.finish(None)
        self._show_error(exc)
        self.status_label.setText("the run could not start")
        self._final = {"schema": "trtstudio.profile/1", "error": error_text(exc) if isinstance(exc, BaseException) else str(exc)}
        self.sig_run_outcome.emit(self._request, None)
        self.sig_run_finished.emit(dict(self._final))

    def _on_run_finished(self) -> None:
        self._sync_buttons()
        if self._pending_model is not None:  # a model opened during the run: show it now
            self.set_model(self._pending_model)

    def _on_layers_done(self, outcome: object) -> None:
        if not isinstance(outcome, ProfileOutcome) or outcome.layers is None:
            return
        rows = sorted(outcome.layers, key=lambda r: -float(r.get("time_ms", 0.0)))
        self._layer_rows = rows
        fill_layers_table(self.layers_table, rows)
        self.layers_table.setVisible(bool(rows))
        total = sum(float(r.get("time_ms", 0.0)) for r in rows)
        self.status_label.setText(f"per-layer: {len(rows)} layers, {total:.3f} ms in all")
        self.sig_layer_times.emit(rows)

    def _on_layers_error(self, exc: object) -> None:
        self._show_error(exc, prefix="per-layer run failed: ")

    # -- small helpers ---------------------------------------------------------------------------
    def error_text(self) -> str:
        """The error line shown (empty when none)."""
        return self.error_label.text() if self.error_label.isVisible() or self.error_label.text() else ""

    def _show_error(self, exc: object, prefix: str = "") -> None:
        if isinstance(exc, FieldError):  # the core names fields; here they are the form's labels
            exc = exc.named(FIELD_LABELS.get(exc.field, exc.field))
        text = error_text(exc) if isinstance(exc, BaseException) else str(exc)
        self.error_label.setText(prefix + text)
        self.error_label.setToolTip(prefix + text)
        self.error_label.setVisible(True)

    def _clear_error(self) -> None:
        self.error_label.setText("")
        self.error_label.setVisible(False)

    def _sync_buttons(self) -> None:
        running = self.is_running()
        layers_busy = self._layers is not None and not self._layers.is_done()
        have_model = self._model is not None and bool(self._specs)
        self.start_button.setEnabled(have_model and not running and not layers_busy)
        self.pause_button.setEnabled(running)
        self.pause_button.setText("Resume" if self.is_paused() else "Pause")
        self.stop_button.setEnabled(running)
        self.layers_button.setEnabled(have_model and not running and not layers_busy)
        for w in (self.backend_combo, self.shapes_table, self.warmup_spin, self.count_mode, self.count_spin,
                  self.threads_spin, self.data_combo):
            w.setEnabled(not running)
        self.count_spin.setEnabled(not running and self.count_mode.currentIndex() != 2)
        self.device_spin.setEnabled(not running and self.backend_combo.currentData() != "ort")
        self.graph_check.setEnabled(not running and self.backend_combo.currentData() in catalogue.graph_backends())

    @Slot()
    def _on_pause_button_clicked(self) -> None:
        if self.is_paused():
            self.resume()
        else:
            self.pause()

    @Slot(int)
    def _on_count_mode_changed(self, index: int) -> None:
        self.count_spin.setEnabled(index != 2)
        if index == 1 and self.count_spin.value() > 3600:
            self.count_spin.setValue(10)

    @Slot(int)
    def _on_data_combo_changed(self, index: int) -> None:
        self.data_edit.setEnabled(index == 1)
        self.data_browse.setEnabled(index == 1)

    @Slot()
    def _on_data_browse_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Input data", "", "Arrays (*.npy *.npz);;All files (*)")
        if path:
            self.data_edit.setText(path)
