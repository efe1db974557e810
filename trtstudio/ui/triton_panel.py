"""TritonDialog: sweep a model served by Triton Inference Server from the window, live.

The sweep is ``trtstudio.triton.sweep.run_sweep`` (Qt-free, the same as ``trtstudio triton``), run
in a worker; each measurement window and each finished step come back as TaskEvents and are drawn
as they arrive: latency p50/p99 per window over time, the server's queue and compute time per
window, and the latency-throughput curve of the finished steps with a table of them.
``sig_finished(dict)`` carries the ``trtstudio.triton/1`` document.

The form builds the same :class:`~trtstudio.triton.request.TritonRequest` as ``trtstudio triton``'s
flags (``request()``), with request headers (one NAME=VALUE per line: access tokens, auth) and
TLS (HTTPS / gRPC TLS, an optional CA bundle); header values stay in the form and the clients,
never in the document. Where the server restricts its repository index and statistics, the model
list holds what the user typed, and the status line says what the sweep did without.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from trtstudio.errors import FieldError
from trtstudio.tasks import TaskEvent, TaskState
from trtstudio.triton.sweep import step_figures
from trtstudio.ui.triton_live import TritonLivePanels
from trtstudio.ui.workers import WorkerDialog

MODEL_COLUMNS = ("model", "version", "state", "reason")
STEP_COLUMNS = ("step", "requests", "infer/s", "p50 ms", "p99 ms", "queue µs", "compute µs", "stable")
# the request's fields as the form names them (the CLI names them by flag)
FIELD_LABELS = {"url": "Server", "model": "Model", "protocol": "Protocol", "concurrency": "Steps", "rates": "Steps",
                "batch": "Batch", "window_s": "Window", "latency_budget_ms": "p99 budget", "metrics": "Metrics",
                "headers": "Headers", "ca": "CA bundle", "timeout_s": "Timeout"}


class TritonDialog(WorkerDialog):
    """Server URL, model, concurrency (or rate) steps and limits; Start/Stop; live plots; the steps."""

    sig_finished = Signal(object)

    def __init__(self, parent: QWidget | None = None, url: str = "localhost:8000", model: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Triton Inference Server sweep")
        self.resize(1280, 900)
        self.document: dict[str, Any] | None = None
        self._windows: list[dict[str, Any]] = []
        self._steps: list[dict[str, Any]] = []
        self._task = ""  # "browse" or "sweep": what the running worker does
        self._notes: list[str] = []  # what the running sweep does without (restricted APIs)
        self.repository: dict[str, Any] | None = None
        forms = self._build_forms(url, model)

        self.start_button = QPushButton("Start")
        self.start_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Stop")
        self.cancel_button.clicked.connect(self._cancel_task)
        self.export_button = QPushButton("Export report…")
        self.export_button.setToolTip("The sweep as a report (.html, .md) or a Triton session (.json)")
        self.export_button.clicked.connect(self._on_export_clicked)
        self.export_button.setEnabled(False)
        self.progress = QProgressBar()
        self.phase_label = QLabel("")
        self.status_label = QLabel("")
        self.status_label.setWordWrap(True)
        buttons = QHBoxLayout()
        for widget in (self.start_button, self.cancel_button, self.export_button, self.progress, self.phase_label):
            buttons.addWidget(widget)

        self.panels = TritonLivePanels()

        self.table = QTableWidget(0, len(STEP_COLUMNS))
        self.table.setHorizontalHeaderLabels(list(STEP_COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.recommendation_label = QLabel("")
        self.recommendation_label.setWordWrap(True)

        lay = QVBoxLayout(self)
        lay.addLayout(forms)
        lay.addLayout(buttons)
        lay.addWidget(self.status_label)
        lay.addWidget(self.panels, 4)
        self.models_table = QTableWidget(0, len(MODEL_COLUMNS))
        self.models_table.setHorizontalHeaderLabels(list(MODEL_COLUMNS))
        self.models_table.verticalHeader().setVisible(False)
        self.models_table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.models_table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.models_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.models_table.itemSelectionChanged.connect(self._on_models_selection_changed)
        self.config_label = QLabel("Connect to list the server's models.")
        self.config_label.setWordWrap(True)
        self.config_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for t in (self.table, self.models_table):
            t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            t.horizontalHeader().setStretchLastSection(True)
        bottom = QHBoxLayout()
        bottom.addWidget(self.table, 3)
        repo_box = QVBoxLayout()
        repo_box.addWidget(self.models_table, 1)
        repo_box.addWidget(self.config_label)
        bottom.addLayout(repo_box, 2)
        lay.addLayout(bottom, 2)
        lay.addWidget(self.recommendation_label)
        self._set_running(False)

    def _build_forms(self, url: str, model: str) -> QHBoxLayout:
        """The two columns of the form: server, model, protocol, metrics, headers, TLS | steps, batch,
        window, budget."""
        form = QFormLayout()
        self.url_edit = QLineEdit(url)
        self.model_edit = QLineEdit(model)
        self.version_edit = QLineEdit()
        self.version_edit.setPlaceholderText("version: latest")
        self.version_edit.setToolTip("The model version (empty: the server's choice)")
        self.version_edit.setMaximumWidth(220)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_edit, 1)
        model_row.addWidget(self.version_edit)
        self.metrics_edit = QLineEdit()
        self.metrics_edit.setPlaceholderText("auto: HTTP port + 2, else HOST:8002; 'none' to skip")
        self.protocol_combo = QComboBox()
        self.protocol_combo.addItems(["auto (8001 = gRPC)", "http", "grpc"])
        self.headers_edit = QPlainTextEdit()
        self.headers_edit.setPlaceholderText("one NAME=VALUE per line, e.g. triton-access-token=…\n"
                                             "(gRPC: triton-grpc-protocol-triton-access-token=…)")
        self.headers_edit.setToolTip("Sent with every request; the values are never written into sessions or reports")
        self.headers_edit.setFixedHeight(3 * self.headers_edit.fontMetrics().lineSpacing() + 12)
        self.ssl_check = QCheckBox("TLS (HTTPS / gRPC TLS)")
        self.ca_edit = QLineEdit()
        self.ca_edit.setPlaceholderText("CA bundle (PEM); empty: the system's CAs")
        tls_row = QHBoxLayout()
        tls_row.addWidget(self.ssl_check)
        tls_row.addWidget(self.ca_edit, 1)
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
        self.poisson_check = QCheckBox("Poisson")
        self.poisson_check.setToolTip("With a request rate: Poisson arrivals (default constant)")
        row.addWidget(self.poisson_check)
        row.addWidget(self.steps_edit, 1)
        self.connect_button = QPushButton("Connect")
        self.connect_button.setToolTip("List the server's models (repository index) and their configs")
        self.connect_button.clicked.connect(self.browse)
        server_row = QHBoxLayout()
        server_row.addWidget(self.url_edit, 1)
        server_row.addWidget(self.connect_button)
        form.addRow("Server", server_row)
        form.addRow("Model", model_row)
        fields: tuple[tuple[str, QWidget], ...] = (
            ("Protocol", self.protocol_combo), ("Metrics", self.metrics_edit),
            ("Headers", self.headers_edit))
        for label, field in fields:
            form.addRow(label, field)
        form.addRow("TLS", tls_row)
        form2 = QFormLayout()
        form2.addRow("Steps", row)
        fields = (("Batch", self.batch_spin), ("Window", self.window_spin), ("p99 budget", self.budget_spin))
        for label, field in fields:
            form2.addRow(label, field)
        forms = QHBoxLayout()
        forms.addLayout(form, 1)
        forms.addLayout(form2, 1)
        return forms

    # -- control ---------------------------------------------------------------------------------
    def request(self) -> Any:
        """The :class:`TritonRequest` the form describes, as ``trtstudio triton``'s flags would
        (FieldError naming the field for malformed steps or headers; not validated further)."""
        from trtstudio.triton.request import TritonRequest, parse_headers
        from trtstudio.triton.sweep import parse_steps

        rate = self.mode_combo.currentIndex() == 1
        try:
            values = parse_steps(self.steps_edit.text(), float if rate else int)
        except ValueError as exc:
            raise FieldError("rates" if rate else "concurrency", str(exc)) from None
        given = self.metrics_edit.text().strip()
        return TritonRequest(
            url=self.url_edit.text().strip(), model=self.model_edit.text().strip(), version=self.version_edit.text().strip(),
            protocol={1: "http", 2: "grpc"}.get(self.protocol_combo.currentIndex()),
            concurrency=[] if rate else values, rates=values if rate else [],
            distribution="poisson" if rate and self.poisson_check.isChecked() else "constant", batch=self.batch_spin.value(),
            window_s=self.window_spin.value(), latency_budget_ms=self.budget_spin.value() or None,
            metrics=None if given.lower() == "none" else (given or "auto"),
            headers=parse_headers(self.headers_edit.toPlainText().splitlines()),
            ssl=self.ssl_check.isChecked(), ca=self.ca_edit.text().strip() or None)

    def _form_request(self, sweep: bool) -> Any:
        """The form's request, validated; None (the field's error in the status line) when it is not."""
        try:
            req = self.request()
            if sweep:
                req.validate()
            else:
                req.validate_connection()
        except FieldError as exc:
            self._show_status(exc.named(FIELD_LABELS.get(exc.field, exc.field)).one_line(), error=True)
            return None
        return req

    def browse(self) -> None:
        """List the server's models and their configs in a worker."""
        if self._handle is not None and not self._handle.is_done():
            return
        req = self._form_request(sweep=False)
        if req is None:
            return
        self._show_status(f"reading the model repository of {req.url}…")

        def task(state: TaskState) -> Any:
            from trtstudio.triton.request import browse

            return browse(req)

        self._task = "browse"
        self._start_task(task, "triton-browse")

    def _show_repository(self, repo: dict[str, Any]) -> None:
        self.repository = repo
        models = repo.get("models", [])
        self.models_table.setRowCount(0)
        for m in models:
            r = self.models_table.rowCount()
            self.models_table.insertRow(r)
            for c, key in enumerate(("name", "version", "state", "reason")):
                self.models_table.setItem(r, c, QTableWidgetItem(str(m.get(key, ""))))
        server = repo.get("server", {})
        notes = "".join(f"; {n}" for n in repo.get("notes") or [])
        self._show_status(f"{server.get('name', 'server')} {server.get('version', '')} at {server.get('url', '')}: "
                          f"{len(models)} model(s), {sum(m['state'] == 'READY' for m in models)} ready{notes}")
        current = self.model_edit.text().strip()
        rows = [i for i, m in enumerate(models) if m["name"] == current] or [
            i for i, m in enumerate(models) if m["state"] == "READY"]
        if rows:
            self.models_table.selectRow(rows[0])

    def _on_models_selection_changed(self) -> None:
        rows = {i.row() for i in self.models_table.selectedIndexes()}
        if not rows or self.repository is None:
            return
        from trtstudio.triton.client import config_summary

        m = self.repository["models"][min(rows)]
        self.model_edit.setText(m["name"])
        if "config" in m:
            self.config_label.setText(f"<b>{m['name']}</b><br>" + "<br>".join(config_summary(m["config"])))
        else:
            why = m.get("config_error") or m.get("reason") or f"the model is {m.get('state') or 'not ready'}"
            self.config_label.setText(f"<b>{m['name']}</b>: no config ({why})")

    def export_report(self, path: str) -> str:
        """Write the last sweep as a report or session (by extension); "" and a status line on failure."""
        from trtstudio.tasks import error_text
        from trtstudio.triton.report import write_report

        if not self.document or not self.document.get("steps"):
            self._show_status("nothing to export: run a sweep first", error=True)
            return ""
        try:
            written = str(write_report(self.document, path))
        except Exception as exc:  # noqa: BLE001 - any failure is one line in the dialog
            self._show_status(f"export failed: {error_text(exc)}", error=True)
            return ""
        self._show_status(f"wrote {written}")
        return written

    def _on_export_clicked(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getSaveFileName(self, "Export Triton report", "triton-report.html",
                                              "HTML (*.html);;Markdown (*.md);;Triton session (*.json)")
        if path:
            self.export_report(path)

    def start(self) -> None:
        """Start the sweep (errors in the form are shown, not raised)."""
        if self._handle is not None and not self._handle.is_done():
            return
        req = self._form_request(sweep=True)
        if req is None:
            return
        self._windows, self._steps, self.document, self._notes = [], [], None, []
        self.table.setRowCount(0)
        self.panels.clear()
        self.recommendation_label.setText("")
        self.progress.setRange(0, len(req.settings().steps()))
        self.progress.setValue(0)
        self._show_status(f"connecting to {req.url}…")

        def task(state: TaskState) -> Any:
            from trtstudio.triton.live import TritonLive
            from trtstudio.triton.request import run_triton

            live = TritonLive()  # the panels' maths runs here, in the worker; the GUI only draws frames

            def on_window(w: dict[str, Any]) -> None:
                frame = live.add_window(w)
                state.event("window", window={k: v for k, v in w.items() if not k.startswith("samples_")}, frame=frame)

            return run_triton(req, should_stop=state.is_stop_requested, on_window=on_window,
                              on_step=lambda s: state.event("step", step=s),
                              on_notes=lambda notes, source: state.event("notes", notes=notes, source=source))

        self._task = "sweep"
        self._start_task(task, "triton")

    def _set_running(self, running: bool) -> None:
        self.start_button.setEnabled(not running)
        self.connect_button.setEnabled(not running)
        self.export_button.setEnabled(not running and bool(self.document and self.document.get("steps")))
        self.cancel_button.setEnabled(running)
        for w in (self.url_edit, self.model_edit, self.version_edit, self.poisson_check, self.protocol_combo, self.metrics_edit, self.mode_combo, self.steps_edit,
                  self.batch_spin, self.window_spin, self.budget_spin, self.headers_edit, self.ssl_check, self.ca_edit):
            w.setEnabled(not running)

    # -- worker results ------------------------------------------------------------------------------
    def _on_worker_progress(self, value: object) -> None:
        if not isinstance(value, TaskEvent):
            return
        if value.kind == "window":
            w = value.data["window"]
            self._windows.append(w)
            self.phase_label.setText(f"step {w['step'] + 1}: {w['throughput']:.0f} infer/s")
            self.panels.add_window(w, value.data.get("frame"))
        elif value.kind == "notes":
            self._notes = list(value.data["notes"])
            self.panels.set_breakdown_source(value.data["source"])
            if self._notes:
                self._show_status("; ".join(self._notes))
        elif value.kind == "step":
            self._steps.append(value.data["step"])
            self.progress.setValue(len(self._steps))
            self._add_step_row(value.data["step"])

    def _add_step_row(self, s: dict[str, Any]) -> None:
        f = step_figures(s)
        cells = (f"{f['mode']} {f['value']:g}", f"{f['requests']}", f"{f['throughput']:.1f}", f"{f['p50']:.3f}",
                 f"{f['p99']:.3f}", f"{f['queue_us']:.0f}", f"{f['compute_us']:.0f}", "yes" if f["stable"] else "no")
        r = self.table.rowCount()
        self.table.insertRow(r)
        for c, text in enumerate(cells):
            self.table.setItem(r, c, QTableWidgetItem(text))
        self.panels.add_step(s)

    def _on_worker_done(self, result: object) -> None:
        if self._task == "browse":
            self._show_repository(result if isinstance(result, dict) else {})
            return
        doc = result.to_json() if hasattr(result, "to_json") else {}
        self.document = doc
        rec = doc.get("recommendation") or {}
        self.recommendation_label.setText(f"Recommendation: {rec['reason']}" if rec.get("reason") else "")
        if doc.get("error"):
            self._show_status(f"stopped early: {doc['error']} (the steps above were measured before)", error=True)
        else:
            notes = "".join(f"; {n}" for n in doc.get("notes") or [])
            self._show_status(("stopped" if doc.get("stopped") else "finished") + f": {len(doc.get('steps', []))} step(s)"
                              + notes)
        self.phase_label.setText("")
        self.sig_finished.emit(doc)

    def _on_worker_error(self, exc: object) -> None:
        if self._task == "browse":
            self._show_task_error(exc, "Reading the model repository")
            return
        self.document = {"schema": "trtstudio.triton/1", "error": self._show_task_error(exc, "Triton sweep")}
        self.sig_finished.emit(self.document)

    def _on_worker_finished(self) -> None:
        self._set_running(False)
