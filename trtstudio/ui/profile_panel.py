"""The live profiling panel: run settings, Start / Pause / Stop, per-layer run, and the live plots.

Its parts: the Inputs box (``ui.profile_inputs.InputsBox``: the model's inputs and run shapes),
the Run box (``ui.profile_form.RunForm``: backend and run settings) and the run controller
(``ui.profile_run.ProfileRun``: the runs' workers). The model's inputs are read and the run goes on
in workers (``ui.workers``); this widget lays the parts out, builds the request from them and shows
what the controller reports. A run goes on while the user works elsewhere in the window; closing
the window calls ``shutdown`` (stop, then join every worker this panel started).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from trtstudio.errors import FieldError, InputError
from trtstudio.profiling.session import BackendFactory, ProfileRequest
from trtstudio.tasks import error_text
from trtstudio.ui.live_panels import LivePanels
from trtstudio.ui.profile_form import RunForm
from trtstudio.ui.profile_inputs import InputsBox
from trtstudio.ui.profile_run import ProfileRun
from trtstudio.ui.settings import PROFILE_WIDE_PX


def _same_name(a: Any, b: Any) -> bool:
    """Whether two model paths name the same file name (a session's model may have moved with it);
    True when ``a`` is not known."""
    return not a or (b is not None and os.path.basename(str(a)) == os.path.basename(str(b)))


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


class ProfilePanel(QWidget):
    """Settings and controls of a live profiling run beside its ``LivePanels``: ``inputs``
    (``InputsBox``), ``form`` (``RunForm``), the Start / Pause / Stop and per-layer controls, the
    status and error lines and the per-layer table; ``runner`` (``ProfileRun``) runs what they describe.

    Public: ``set_model``, ``request``, ``shapes``, ``start``, ``pause``, ``resume``, ``stop``,
    ``is_running``, ``run_layers``, ``shutdown``, ``statistics``. Signals: ``sig_run_finished(dict)``
    (the run's report document, also after an error), ``sig_layer_times(list)`` (per-layer rows),
    ``sig_model_ready(list)`` (input specs once read).
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
        self.wait_for: threading.Event | None = None  # set by the window: see profile_inputs._specs_task
        self._model: str | None = None
        self._pending_model: str | None = None  # opened while a run of another model goes on
        self._restore: dict[str, Any] | None = None  # a session's run settings, until its model's inputs come
        self._build(live)
        self.runner = ProfileRun(self.live, self)
        self._connect()
        self._sync_buttons()

    @property
    def last_outcome(self) -> Any:
        """The last finished run (ProfileOutcome, or remote.client.RemoteOutcome; samples included)."""
        return self.runner.last_outcome

    # -- layout ----------------------------------------------------------------------------------
    def _build(self, live: LivePanels | None) -> None:
        side = QWidget()
        col = QVBoxLayout(side)
        col.setContentsMargins(4, 4, 4, 4)
        self.model_label = QLabel("No model")
        self.model_label.setWordWrap(True)
        col.addWidget(self.model_label)
        self.inputs = InputsBox()
        col.addWidget(self.inputs)
        self.form = RunForm()
        col.addWidget(self.form)
        # the parts' controls that the window and the tests drive, under the panel's names
        self.shapes_table, self.shapes_note = self.inputs.table, self.inputs.note
        f = self.form
        self.backend_combo, self.data_combo, self.data_edit = f.backend_combo, f.data_combo, f.data_edit
        self.warmup_spin, self.count_mode, self.count_spin = f.warmup_spin, f.count_mode, f.count_spin
        self.threads_spin, self.device_spin, self.graph_check = f.threads_spin, f.device_spin, f.graph_check
        self._build_controls(col)
        side.setMinimumWidth(280)
        self._side = side

        self.live = live if live is not None else LivePanels()
        from trtstudio.ui.sweep_tab import SweepTab

        self.sweep_tab = SweepTab(self.request, self.backend_factory)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.live, "Live")
        self.tabs.addTab(self.sweep_tab, "Sweep")
        self._split = split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(side)
        split.addWidget(self.tabs)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        outer = QHBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(split)
        self._arrange(self.width())

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

        from trtstudio.ui.sweep_tab import status_lines

        self.status_label, self.error_label = status_lines(col)

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

    def _connect(self) -> None:
        """The parts' signals: the specs read, the backend picked, and what the runner reports."""
        self.inputs.sig_ready.connect(self._on_model_ready)
        self.inputs.sig_error.connect(self._show_error)
        self.backend_combo.currentIndexChanged.connect(lambda _i: self._sync_buttons())
        r = self.runner
        r.sig_started.connect(self.sig_run_started)
        r.sig_outcome.connect(self.sig_run_outcome)
        r.sig_finished.connect(self.sig_run_finished)
        r.sig_layers.connect(self._on_layers_done)
        r.sig_status.connect(self.status_label.setText)
        r.sig_error.connect(self._show_error)
        r.sig_run_ended.connect(self._on_run_ended)
        r.sig_layers_ended.connect(self._sync_buttons)
        self.sweep_tab.sig_running.connect(lambda _on: self._sync_buttons())

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
        self.form.offer_backends(self._model)
        self.inputs.load(self._model, self.form.backend(), self.backend_factory, proto, self.wait_for)
        self._sync_buttons()

    def _on_model_ready(self, specs: object) -> None:
        self.sweep_tab.set_specs(list(specs) if isinstance(specs, list) else [])
        if self._restore is not None and _same_name(self._restore.get("model"), self._model):
            if self._restore.get("backend") and self.form.backend() != self._restore["backend"]:
                self.form.apply_settings({"backend": self._restore["backend"]})  # enabled for this model now
            self.inputs.set_run_shapes(self._restore.get("shapes") or {})
            self._restore = None
        self._sync_buttons()
        self.sig_model_ready.emit(specs)

    def run_settings(self) -> dict[str, Any] | None:
        """The run the controls describe, as a session saves it (``ProfileRequest.settings()``, with
        every input's run shape, not only the edited ones); None without a model or with a
        malformed field."""
        if self._model is None:
            return None
        try:
            settings = self.form.settings()
            shapes = self.shapes()
        except InputError:
            return None
        req = ProfileRequest(model=self._model, shapes=shapes, layer_iterations=self.layers_spin.value(), **settings)
        return req.settings()

    def apply_run_settings(self, settings: dict[str, Any]) -> None:
        """Take a session's run settings: the Run box at once, the run shapes once the inputs of
        their model are in the table (now, where they are already)."""
        self.form.apply_settings(settings)
        if isinstance(settings.get("layer_iterations"), int) and settings["layer_iterations"] > 0:
            self.layers_spin.setValue(settings["layer_iterations"])
        self._restore = dict(settings)
        if self.inputs.specs and _same_name(settings.get("model"), self._model):
            self.inputs.set_run_shapes(settings.get("shapes") or {})
        self._sync_buttons()

    def shapes(self, edited_only: bool = False) -> dict[str, tuple[int, ...]]:
        """The run shapes in the table (``edited_only``: those the user changed from the plan);
        raises InputError naming the input for a malformed one."""
        return self.inputs.shapes(edited_only)

    def request(self) -> ProfileRequest:
        """The run the controls describe (InputError for a malformed shape or missing data path)."""
        if self._model is None:
            raise InputError(None, "open a model first")
        settings = self.form.settings()
        return ProfileRequest(model=self._model, shapes=self.shapes(edited_only=True),
                              layer_iterations=self.layers_spin.value(), **settings)

    # -- run control -----------------------------------------------------------------------------
    def _checked_request(self) -> ProfileRequest | None:
        """``request()`` with the error line cleared, or None with its error shown."""
        self._clear_error()
        try:
            return self.request()
        except InputError as exc:
            self._show_error(exc)
            return None

    @Slot()
    def start(self) -> None:
        """Start a run with the current settings (errors in the settings are shown, not raised)."""
        if self.is_running():
            return
        req = self._checked_request()
        if req is None:
            return
        target = self.target
        self.runner.start(req, target, self.backend_factory)
        where = f" on {target}" if target else ""
        self.status_label.setText(f"loading {os.path.basename(req.model)} on {self.backend_combo.currentText()}{where}…")
        self._sync_buttons()

    @Slot()
    def pause(self) -> None:
        """Hold the run between inferences."""
        self.runner.set_paused(True)
        self._sync_buttons()

    @Slot()
    def resume(self) -> None:
        """Go on with a paused run."""
        self.runner.set_paused(False)
        self._sync_buttons()

    def is_paused(self) -> bool:
        """True while a run is paused."""
        return self.runner.is_paused()

    @Slot()
    def stop(self) -> None:
        """Ask the run (or the Sweep tab's sweep) to end after the current inference (results arrive
        through ``sig_run_finished``, a sweep's in its tab)."""
        self.runner.stop()
        self.sweep_tab.stop()

    def is_running(self) -> bool:
        """True from ``start`` until the run's result has arrived."""
        return self.runner.is_running()

    def statistics(self) -> dict[str, Any]:
        """The latest statistics: live ones during a run, the whole-run report document after it."""
        return self.runner.statistics()

    @Slot()
    def run_layers(self) -> None:
        """Profile each layer in a worker (not while a run goes on); rows go to ``sig_layer_times``."""
        if self.is_running() or self.runner.layers_busy():
            return
        req = self._checked_request()
        if req is None:
            return
        self.runner.run_layers(req, self.backend_factory)
        self.status_label.setText(f"per-layer profile: {req.layer_iterations} runs…")
        self._sync_buttons()

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Stop every worker of this panel and join it (the main window calls this on close);
        True when all ended in time."""
        self.live.stop_timer()
        ok = self.runner.shutdown(timeout_ms) and self.sweep_tab.shutdown(timeout_ms)
        return self.inputs.shutdown(timeout_ms) and ok

    # -- what the runner reports -----------------------------------------------------------------
    def _on_run_ended(self) -> None:
        self._sync_buttons()
        if self._pending_model is not None:  # a model opened during the run: show it now
            self.set_model(self._pending_model)

    def _on_layers_done(self, rows: list[dict[str, Any]]) -> None:
        fill_layers_table(self.layers_table, rows)
        self.layers_table.setVisible(bool(rows))
        total = sum(float(r.get("time_ms", 0.0)) for r in rows)
        self.status_label.setText(f"per-layer: {len(rows)} layers, {total:.3f} ms in all")
        self.sig_layer_times.emit(rows)

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
        layers_busy = self.runner.layers_busy()
        have_model = self._model is not None and bool(self.inputs.specs)
        sweeping = self.sweep_tab.is_running()
        self.sweep_tab.set_blocked(running or layers_busy)
        self.start_button.setEnabled(have_model and not running and not sweeping and not layers_busy)
        self.pause_button.setEnabled(running)
        self.pause_button.setText("Resume" if self.is_paused() else "Pause")
        self.stop_button.setEnabled(running or sweeping)
        self.layers_button.setEnabled(have_model and not running and not sweeping and not layers_busy)
        self.form.sync(running)
        self.shapes_table.setEnabled(not running)

    @Slot()
    def _on_pause_button_clicked(self) -> None:
        if self.is_paused():
            self.resume()
        else:
            self.pause()
