"""TritonSearchDialog: which Triton config meets the latency target at the highest throughput, live.

Profile > Triton config search...: the model (a repository entry or an ONNX file), the server (one
trtstudio launches on 127.0.0.1, or a running one with explicit model control), the constraints and
the space. The search is ``trtstudio.triton.search.Search`` (Qt-free, the same as ``trtstudio
triton-search``), run in a worker; after each variant the worker sends the search's document so
far (front, winner and why-lost computed there), and the dialog only draws it: a throughput vs p99
scatter filling as variants are measured, the Pareto front joined and the winner marked, the table
of variants. A click on a point or a row shows that variant's sweep. Save config... writes the
winner's model-repository entry; Open search... shows a saved search session. ``sig_finished(dict)`` carries the ``trtstudio.tritonsearch/1``
document.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from trtstudio.tasks import TaskEvent, TaskState
from trtstudio.ui.plots import pg
from trtstudio.ui.workers import WorkerDialog

VARIANT_COLUMNS = ("variant", "infer/s", "p99 ms", "concurrency", "front", "why not the answer")
STEP_COLUMNS = ("concurrency", "requests", "infer/s", "p50 ms", "p99 ms", "queue µs", "compute µs")
COLOURS = {"winner": "#2ca02c", "front": "#ff7f0e", "ok": "#1f77b4", "over": "#999999"}


def _spin(lo: float, hi: float, value: float, suffix: str, special: str = "") -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(lo, hi)
    box.setValue(value)
    box.setSuffix(suffix)
    if special:
        box.setSpecialValueText(special)
    return box


class TritonSearchDialog(WorkerDialog):
    """Form | Start, Stop, Save config..., Export report...; the scatter; variants and a variant's sweep."""

    sig_finished = Signal(object)

    def __init__(self, parent: QWidget | None = None, model: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Triton config search")
        self.resize(1200, 860)
        self.document: dict[str, Any] | None = None
        self.source: Any = None  # the ModelSource searched (Save config writes its files)
        self.selected: str | None = None
        self._keys: list[str] = []
        self._current: dict[str, Any] = {}
        lay = QVBoxLayout(self)
        lay.addLayout(self._build_form(model))
        self.start_button = QPushButton("Start")
        self.start_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Stop")
        self.cancel_button.setToolTip("Stop after the current window; everything loaded is unloaded")
        self.cancel_button.clicked.connect(self._cancel_task)
        self.save_button = QPushButton("Save config…")
        self.save_button.setToolTip("Write the winner's model-repository entry (config.pbtxt and the model's files)")
        self.save_button.clicked.connect(self._on_save_clicked)
        self.export_button = QPushButton("Export report…")
        self.export_button.clicked.connect(self._on_export_clicked)
        self.open_button = QPushButton("Open search…")
        self.open_button.setToolTip("Show a saved search (trtstudio triton-search --session, or Export report as .json)")
        self.open_button.clicked.connect(self._on_open_clicked)
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.phase_label = QLabel("")
        buttons = QHBoxLayout()
        for w in (self.start_button, self.cancel_button, self.save_button, self.export_button, self.open_button,
                  self.progress,
                  self.phase_label):
            buttons.addWidget(w)
        lay.addLayout(buttons)
        self.status_label = QLabel("")
        self.status_label.setWordWrap(True)
        self.headline_label = QLabel("")
        self.headline_label.setWordWrap(True)
        self.headline_label.setStyleSheet("QLabel { font-weight: bold; }")
        lay.addWidget(self.status_label)
        lay.addWidget(self.headline_label)

        self.plot = pg.PlotWidget(title="Variants: throughput vs p99 (the Pareto front joined)")
        self.plot.setLabel("bottom", "p99 latency ms")
        self.plot.setLabel("left", "inferences/s")
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.front_curve = self.plot.plot([], [], pen=pg.mkPen(COLOURS["front"], width=2))
        self.scatter = pg.ScatterPlotItem(size=10, pen=pg.mkPen("k"))
        self.scatter.sigClicked.connect(self._on_scatter_clicked)
        self.plot.addItem(self.scatter)
        self.budget_line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#b00020", style=pg.QtCore.Qt.PenStyle.DashLine))
        self.budget_line.setVisible(False)
        self.plot.addItem(self.budget_line, ignoreBounds=True)  # the points set the range, not the budget
        self.labels: list[Any] = []

        self.variants_table = QTableWidget(0, len(VARIANT_COLUMNS))
        self.variants_table.setHorizontalHeaderLabels(list(VARIANT_COLUMNS))
        self.steps_table = QTableWidget(0, len(STEP_COLUMNS))
        self.steps_table.setHorizontalHeaderLabels(list(STEP_COLUMNS))
        for t in (self.variants_table, self.steps_table):
            t.verticalHeader().setVisible(False)
            t.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
            t.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
            t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            t.horizontalHeader().setStretchLastSection(True)
        self.variants_table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.variants_table.itemSelectionChanged.connect(self._on_variants_selection_changed)
        self.sweep_label = QLabel("Click a variant to see its sweep.")
        self.sweep_label.setWordWrap(True)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.sweep_label)
        rl.addWidget(self.steps_table)
        top = QSplitter()
        top.addWidget(self.plot)
        top.addWidget(right)
        top.setSizes([700, 500])
        lay.addWidget(top, 3)
        lay.addWidget(self.variants_table, 2)
        self._set_running(False)

    def _build_form(self, model: str) -> QHBoxLayout:
        form, form2 = QFormLayout(), QFormLayout()
        self.model_edit = QLineEdit(model)
        self.model_edit.setPlaceholderText("MODEL_REPO/MODEL (with config.pbtxt) or MODEL.onnx")
        self.shapes_edit = QLineEdit()
        self.shapes_edit.setPlaceholderText("ONNX dynamic dims: NAME:1x3x48x192")
        self.launch_radio = QRadioButton("Launch tritonserver (127.0.0.1, free ports)")
        self.server_radio = QRadioButton("Server")
        self.launch_radio.setChecked(True)
        self.python_edit = QLineEdit()
        self.python_edit.setPlaceholderText("Python with nvidia-pytriton (default: trtstudio's)")
        self.url_edit = QLineEdit("localhost:8000")
        self.url_edit.setToolTip("A Triton started with --model-control-mode=explicit (its HTTP port)")
        launch_row, server_row = QHBoxLayout(), QHBoxLayout()
        launch_row.addWidget(self.launch_radio)
        launch_row.addWidget(self.python_edit, 1)
        server_row.addWidget(self.server_radio)
        server_row.addWidget(self.url_edit, 1)
        form.addRow("Model", self.model_edit)
        form.addRow("Shapes", self.shapes_edit)
        form.addRow("Where", launch_row)
        form.addRow("", server_row)
        self.budget_spin = _spin(0.0, 1e6, 20.0, " ms", "none")
        self.mode_combo = QComboBox()
        self.mode_combo.addItems(["Quick (coordinate search, early stopping)", "Exhaustive"])
        self.concurrency_edit = QLineEdit("1,2,4,8")
        self.instances_edit = QLineEdit("1,2")
        self.batch_edit = QLineEdit("1,4,8")
        self.delay_edit = QLineEdit("off,100")
        self.delay_edit.setToolTip("dynamic batching max queue delays (µs); off = no dynamic batching")
        self.profiles_edit = QLineEdit()
        self.profiles_edit.setPlaceholderText("the model's (a TensorRT plan: 0,1)")
        self.profiles_edit.setToolTip("a TensorRT plan's optimization profiles to try, one per variant")
        self.gpus_edit = QLineEdit()
        self.gpus_edit.setPlaceholderText("Triton's choice (GPU instances: 0,1)")
        self.gpus_edit.setToolTip("the GPUs each variant's instances go on (instance_group gpus)")
        self.window_spin = _spin(0.1, 30.0, 0.5, " s")
        rows = {"p99 budget": self.budget_spin, "Search": self.mode_combo, "Concurrency": self.concurrency_edit,
                "Instances": self.instances_edit, "Max batch": self.batch_edit, "Queue delay µs": self.delay_edit,
                "Profiles": self.profiles_edit, "GPUs": self.gpus_edit, "Window": self.window_spin}
        for label, w in rows.items():
            form2.addRow(label, w)
        both = QHBoxLayout()
        for f in (form, form2):
            both.addLayout(f, 1)
        return both

    # -- control ---------------------------------------------------------------------------------
    def request(self) -> Any:
        """The :class:`~trtstudio.triton.search.SearchRequest` the form describes (InputError for a bad field)."""
        from trtstudio.backends.base import parse_shapes
        from trtstudio.errors import InputError
        from trtstudio.triton.search import Constraints, SearchRequest, SearchSettings
        from trtstudio.triton.variants import ModelSource, Space, gpu_list, parse_list, plan_profiles

        path = Path(self.model_edit.text().strip())
        if not str(path) or str(path) == ".":
            raise InputError("Model", "give a model-repository entry or an ONNX file")
        shapes = parse_shapes(self.shapes_edit.text().strip() or None, "Shapes")
        source = ModelSource.from_onnx(path, shapes) if path.suffix.lower() == ".onnx" else ModelSource.from_entry(path)
        space = Space(parse_list(self.instances_edit.text(), "--instances"), parse_list(self.batch_edit.text(), "Max batch"),
                      parse_list(self.delay_edit.text(), "Queue delay", allow_off=True), False,
                      plan_profiles(self.profiles_edit.text(), source, "Profiles"),
                      gpu_list(self.gpus_edit.text(), None, source, "GPUs"))
        conc = parse_list(self.concurrency_edit.text(), "Concurrency")
        settings = SearchSettings(concurrency=[c for c in conc if c > 0], window_s=self.window_spin.value(), max_windows=4,
                                  mode="exhaustive" if self.mode_combo.currentIndex() == 1 else "quick", space=space)
        launch = self.launch_radio.isChecked()
        return SearchRequest(source, url=None if launch else self.url_edit.text().strip(), launch=launch,
                             python=self.python_edit.text().strip() or None,
                             constraints=Constraints(latency_ms=self.budget_spin.value() or None), settings=settings)

    def start(self) -> None:
        """Start the search in a worker (a bad field is shown in the status line)."""
        from trtstudio.errors import InputError

        if self._handle is not None and not self._handle.is_done():
            return
        try:
            req = self.request()
        except InputError as exc:
            self._show_status(exc.one_line(), error=True)
            return
        self.source, self.document, self.selected = req.source, None, None
        self._draw({"variants": [], "front": [], "constraints": {"latency_ms": req.constraints.latency_ms}})
        self._show_status(f"searching {req.source.name} ({req.settings.mode})…")

        def task(state: TaskState) -> Any:
            from trtstudio.triton.search import Search, answer

            holder: list[Any] = []
            search = Search(req, should_stop=state.is_stop_requested,
                            on_variant=lambda e: state.event("variant", doc=answer(holder[0])),
                            on_status=lambda s: state.event("status", text=s))
            holder.append(search)
            return search.run()

        self._start_task(task, "triton-search")

    def _set_running(self, running: bool) -> None:
        self.start_button.setEnabled(not running)
        self.open_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.progress.setVisible(running)
        done = bool(self.document and self.document.get("variants"))
        self.save_button.setEnabled(not running and bool(self.document and self.document.get("winner")))
        self.export_button.setEnabled(not running and done)
        for w in (self.model_edit, self.shapes_edit, self.launch_radio, self.server_radio, self.python_edit,
                  self.url_edit, self.budget_spin, self.mode_combo, self.concurrency_edit, self.instances_edit,
                  self.batch_edit, self.delay_edit, self.profiles_edit, self.gpus_edit, self.window_spin):
            w.setEnabled(not running)

    # -- drawing -----------------------------------------------------------------------------------
    def _draw(self, doc: dict[str, Any]) -> None:
        """The scatter (one point per variant), the front, the budget line and the variants table."""
        budget = (doc.get("constraints") or {}).get("latency_ms")
        self.budget_line.setVisible(budget is not None)
        if budget is not None:
            self.budget_line.setValue(float(budget))
        spots, front, keys = [], [], []
        for v in doc.get("variants") or []:
            p = v.get("point")
            if not p or p.get("p99") is None or not math.isfinite(float(p["p99"])):
                continue
            state = ("winner" if v["key"] == doc.get("winner") else "front" if v.get("front")
                     else "ok" if v.get("feasible") else "over")
            spots.append({"pos": (float(p["p99"]), float(p["throughput"])), "data": v["key"],
                          "brush": pg.mkBrush(COLOURS[state]), "size": 16 if state == "winner" else 10})
            keys.append(v["key"])
            if v.get("front"):
                front.append((float(p["p99"]), float(p["throughput"])))
        self.scatter.setData(spots)
        front.sort()
        self.front_curve.setData([x for x, _ in front], [y for _, y in front])
        for item in self.labels:
            self.plot.removeItem(item)
        self.labels = []
        for s in spots:
            if s["data"] == doc.get("winner") or any(v["key"] == s["data"] and v.get("role") == "default"
                                                      for v in doc.get("variants") or []):
                tag = " (winner)" if s["data"] == doc.get("winner") else " (default)"
                label = pg.TextItem(s["data"] + tag, color="#333", anchor=(0, 1))
                label.setPos(*s["pos"])
                self.plot.addItem(label)
                self.labels.append(label)
        self._keys = [v["key"] for v in doc.get("variants") or []]
        self.variants_table.setRowCount(0)
        for v in doc.get("variants") or []:
            p = v.get("point") or {}
            tag = " (default)" if v.get("role") == "default" else " (winner)" if v["key"] == doc.get("winner") else ""
            cells = (v["key"] + tag, f"{p['throughput']:.1f}" if p else "-", f"{p['p99']:.2f}" if p else "-",
                     str(p.get("concurrency", "-")), "yes" if v.get("front") else "",
                     f"{v['lost']}: {v.get('lost_text', '')}" if v.get("lost") else "")
            r = self.variants_table.rowCount()
            self.variants_table.insertRow(r)
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(v.get("describe", ""))
                self.variants_table.setItem(r, c, item)
        self.headline_label.setText(str(doc.get("headline", "")))
        self._current = doc

    def show_variant(self, key: str) -> None:
        """Show ``key``'s sweep (its steps) beside the scatter."""
        doc = self._current
        v = next((x for x in doc.get("variants") or [] if x["key"] == key), None)
        if v is None:
            return
        self.selected = key
        why = f" — {v['lost']}: {v['lost_text']}" if v.get("lost") else " — the answer" if key == doc.get("winner") else ""
        extra = f"; {v['early_stop']}" if v.get("early_stop") else ""
        err = f"; error: {v['error']}" if v.get("error") else ""
        self.sweep_label.setText(f"<b>{key}</b>: {v.get('describe', '')}{why}{extra}{err}")
        self.steps_table.setRowCount(0)
        for p in v.get("steps") or []:
            cells = (str(p["concurrency"]), str(p["requests"]), f"{p['throughput']:.1f}",
                     "-" if p.get("p50") is None else f"{p['p50']:.2f}",
                     "-" if p.get("p99") is None else f"{p['p99']:.2f}", f"{p['queue_us']:.0f}", f"{p['compute_us']:.0f}")
            r = self.steps_table.rowCount()
            self.steps_table.insertRow(r)
            for c, text in enumerate(cells):
                self.steps_table.setItem(r, c, QTableWidgetItem(text))
        if key in self._keys:
            row = self._keys.index(key)
            item = self.variants_table.item(row, 0)
            if item is not None and not item.isSelected():
                self.variants_table.selectRow(row)

    def _on_scatter_clicked(self, _item: Any, points: Any, *_: Any) -> None:
        if len(points):
            self.show_variant(str(points[0].data()))

    def _on_variants_selection_changed(self) -> None:
        rows = {i.row() for i in self.variants_table.selectedIndexes()}
        if rows and min(rows) < len(self._keys) and self._keys[min(rows)] != self.selected:
            self.show_variant(self._keys[min(rows)])

    # -- saving ------------------------------------------------------------------------------------
    def save_config(self, folder: str) -> str:
        """Write the winner's model-repository entry as ``folder/MODEL``; its config.pbtxt ("" and a
        status line on failure)."""
        from trtstudio.tasks import error_text
        from trtstudio.triton.search import save_variant

        doc = self.document or {}
        entry = next((v for v in doc.get("variants") or [] if v["key"] == doc.get("winner")), None)
        if entry is None or self.source is None:
            self._show_status("nothing to save: no variant meets the constraints", error=True)
            return ""
        try:
            path = str(save_variant(self.source, entry, Path(folder) / self.source.name))
        except Exception as exc:  # noqa: BLE001 - any failure is one line in the dialog
            self._show_status(f"save failed: {error_text(exc)}", error=True)
            return ""
        self._show_status(f"wrote {path} ({entry['key']})")
        return path

    def export_report(self, path: str) -> str:
        from trtstudio.tasks import error_text
        from trtstudio.triton.search_report import write_search_report

        if not self.document:
            return ""
        try:
            written = str(write_search_report(self.document, path))
        except Exception as exc:  # noqa: BLE001
            self._show_status(f"export failed: {error_text(exc)}", error=True)
            return ""
        self._show_status(f"wrote {written}")
        return written

    def open_search(self, path: str) -> bool:
        """Show a saved search (its scatter, front and variants); Save config needs the model's files,
        so it stays off until a search runs here. False and a status line for a file that is not one."""
        from trtstudio.errors import InputError
        from trtstudio.triton.search_report import load_search

        try:
            doc = load_search(path)
        except InputError as exc:
            self._show_status(exc.one_line(), error=True)
            return False
        self.document, self.source, self.selected = doc, None, None
        self._draw(doc)
        self._set_running(False)
        self.save_button.setEnabled(False)
        self._show_status(f"{path}: {doc.get('mode')} search of {(doc.get('model') or {}).get('name')}, "
                          f"{doc.get('measured')} variant(s)")
        return True

    def _on_open_clicked(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getOpenFileName(self, "Open a Triton config search", "", "Search session (*.json)")
        if path:
            self.open_search(path)

    def _on_save_clicked(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        folder = QFileDialog.getExistingDirectory(self, "Model repository to write the winner into")
        if folder:
            self.save_config(folder)

    def _on_export_clicked(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getSaveFileName(self, "Export search report", "triton-search.html",
                                              "HTML (*.html);;Markdown (*.md);;Search session (*.json)")
        if path:
            self.export_report(path)

    # -- worker results ------------------------------------------------------------------------------
    def _on_worker_progress(self, value: object) -> None:
        if not isinstance(value, TaskEvent):
            return
        if value.kind == "variant":
            doc = value.data["doc"]
            self._draw(doc)
            self.phase_label.setText(f"{doc['measured']} variant(s) measured")
        elif value.kind == "status":
            self._show_status(value.data["text"])

    def _on_worker_done(self, result: object) -> None:
        doc = result if isinstance(result, dict) else {}
        self.document = doc
        self._draw(doc)
        if doc.get("error"):
            self._show_status(f"stopped early: {doc['error']} (the variants shown were measured before)", error=True)
        else:
            self._show_status(("stopped" if doc.get("stopped") else "finished") +
                              f": {doc.get('measured', 0)} variant(s) in {doc.get('duration_s', 0):.1f} s; everything "
                              "the search loaded is unloaded")
        self.phase_label.setText("")
        self.sig_finished.emit(doc)

    def _on_worker_error(self, exc: object) -> None:
        self.document = {"schema": "trtstudio.tritonsearch/1", "error": self._show_task_error(exc, "Triton config search")}
        self.sig_finished.emit(self.document)

    def _on_worker_finished(self) -> None:
        self._set_running(False)
