"""File > Upgrade check...: one model built by several TensorRT / TensorRT-RTX runtimes, side by side.

The form builds the same :class:`~trtstudio.runtimes.upgrade.UpgradeRequest` as ``trtstudio
upgrade-check`` (the runtimes ticked in the list: the managed ones, this Python's, folders added;
the build flags as ``trtstudio build`` takes them) and runs
:func:`~trtstudio.runtimes.upgrade.run_upgrade` in a worker. The result shows the side-by-side
table (:func:`~trtstudio.runtimes.upgrade.table_rows`: a column per runtime, the rows the text output
prints), the gates, and the diff of any two runtimes picked in the two lists, in the Compare dock's
view (:class:`~trtstudio.ui.compare_dock.CompareDock`).
"""

from __future__ import annotations

import shlex
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from trtstudio.ui.compare_dock import CompareDock


class UpgradeDialog(QDialog):
    """The form, the side-by-side table and the diff of two runtimes. ``sig_finished(result)`` when a
    check ends (``result`` an :class:`~trtstudio.runtimes.upgrade.UpgradeResult`, or the exception)."""

    sig_finished = Signal(object)

    def __init__(self, parent: QWidget | None = None, model: str = "", root: str | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Upgrade check")
        self.root = root
        self.result: Any = None
        self._worker: Any = None
        self.model_edit = QLineEdit(model)
        browse = QPushButton("Browse...")
        browse.clicked.connect(self._on_browse_clicked)
        row = QHBoxLayout()
        row.addWidget(self.model_edit, 1)
        row.addWidget(browse)
        self.runtime_list = QListWidget()
        self.runtime_list.setMaximumHeight(90)
        add = QPushButton("Add environment folder...")
        add.clicked.connect(self._on_add_clicked)
        self.flags_edit = QLineEdit()
        self.flags_edit.setPlaceholderText("trtstudio build flags, e.g. --fp16 --target sm86,sm120")
        self.run_button = QPushButton("Build with each runtime")
        self.run_button.clicked.connect(self.start)
        self.status = QLabel("Tick two or more runtimes, oldest first.")
        self.status.setWordWrap(True)
        form = QFormLayout()
        form.addRow("ONNX model:", row)
        form.addRow("Runtimes:", self.runtime_list)
        form.addRow("", add)
        form.addRow("Build flags:", self.flags_edit)
        self.table = QTableWidget()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.gates = QLabel()
        self.gates.setWordWrap(True)
        self.base_combo, self.other_combo = QComboBox(), QComboBox()
        for combo in (self.base_combo, self.other_combo):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            combo.currentIndexChanged.connect(self._on_pair_changed)
        pick = QHBoxLayout()
        pick.addWidget(QLabel("Diff"))
        pick.addWidget(self.other_combo)
        pick.addWidget(QLabel("against"))
        pick.addWidget(self.base_combo)
        pick.addStretch(1)
        self.compare = CompareDock()
        bottom = QWidget()
        lay_b = QVBoxLayout(bottom)
        lay_b.setContentsMargins(0, 0, 0, 0)
        lay_b.addLayout(pick)
        lay_b.addWidget(self.compare, 1)
        top = QWidget()
        lay_t = QVBoxLayout(top)
        lay_t.setContentsMargins(0, 0, 0, 0)
        lay_t.addWidget(self.table, 1)
        lay_t.addWidget(self.gates)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(bottom)
        split.setSizes([330, 420])  # the table's nine rows whole
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.run_button)
        lay.addWidget(self.status)
        lay.addWidget(split, 1)
        self.resize(1100, 820)
        self.fill_runtimes()

    def fill_runtimes(self) -> None:
        """The managed runtimes and this Python's (``here``), unticked."""
        from trtstudio.runtimes.manage import list_runtimes

        self.runtime_list.clear()
        for rt in list_runtimes(self.root):
            self._add_runtime(rt.name, f"{rt.label}  ({rt.name})")
        self._add_runtime("here", "this Python's TensorRT (here)")

    def _add_runtime(self, spec: str, text: str, checked: bool = False) -> None:
        item = QListWidgetItem(text)
        item.setData(Qt.ItemDataRole.UserRole, spec)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        self.runtime_list.addItem(item)

    def set_checked(self, specs: list[str]) -> None:
        """Tick the runtimes ``specs`` names (in that order: the list is reordered to match)."""
        for spec in specs:
            found = [self.runtime_list.item(i) for i in range(self.runtime_list.count())
                     if self.runtime_list.item(i).data(Qt.ItemDataRole.UserRole) == spec]
            if not found:
                self._add_runtime(spec, spec, True)
                continue
            item = self.runtime_list.takeItem(self.runtime_list.row(found[0]))
            item.setCheckState(Qt.CheckState.Checked)
            self.runtime_list.addItem(item)

    def _on_browse_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "ONNX model", "", "ONNX models (*.onnx);;All files (*)")
        if path:
            self.model_edit.setText(path)

    def _on_add_clicked(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "A virtual environment with TensorRT or TensorRT-RTX")
        if path:
            self._add_runtime(path, path, True)

    def request(self) -> Any:
        """The :class:`~trtstudio.runtimes.upgrade.UpgradeRequest` of the form."""
        from trtstudio.runtimes.upgrade import UpgradeRequest

        specs = [self.runtime_list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.runtime_list.count())
                 if self.runtime_list.item(i).checkState() == Qt.CheckState.Checked]
        return UpgradeRequest(model=self.model_edit.text().strip(), runtimes=specs,
                              build_args=shlex.split(self.flags_edit.text()), root=self.root)

    def start(self) -> None:
        """Run the check in a worker (the button stops a running one)."""
        from trtstudio.runtimes.upgrade import run_upgrade
        from trtstudio.ui.workers import run_in_thread

        if self._worker is not None and self._worker.is_running():
            self._worker.request_stop()
            return
        request = self.request()
        self.run_button.setText("Stop")
        self.status.setText(f"Building {request.model} with {len(request.runtimes)} runtime(s)...")

        def work(state: Any) -> Any:
            return run_upgrade(request, progress=lambda name, what: state.emit(f"{what} {name}"),
                               cancel=state.is_stop_requested)

        self._worker = run_in_thread(work, on_done=self.show_result, on_error=self._on_worker_error,
                                     on_progress=lambda text: self.status.setText(str(text)), name="upgrade-check")

    def _on_worker_error(self, exc: BaseException) -> None:
        self.run_button.setText("Build with each runtime")
        self.status.setText(f"error: {exc}")
        self.sig_finished.emit(exc)

    def show_result(self, result: Any) -> None:
        """Fill the table, the gates and the two runtime lists from an ``UpgradeResult``."""
        from trtstudio.runtimes.upgrade import table_rows

        self.result = result
        self.run_button.setText("Build with each runtime")
        doc = result.to_json()
        names = [c["name"] for c in doc["runtimes"]]
        rows = table_rows(doc)
        self.table.clear()
        self.table.setColumnCount(len(names))
        self.table.setRowCount(len(rows))
        self.table.setHorizontalHeaderLabels(names)
        self.table.setVerticalHeaderLabels([label for label, _ in rows])
        for r, (_, cells) in enumerate(rows):
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        for c in range(len(names)):
            self.table.setColumnWidth(c, min(self.table.columnWidth(c), 320))
        gates = doc["gates"]
        self.gates.setText("<br>".join(("<b>FAIL</b> " if g["failed"] else "ok " if g["checked"] else "n/a ") + g["text"]
                                       for g in gates) or "No gates asked for (--fail-on).")
        self.status.setText(f"{sum(c['ok'] for c in doc['runtimes'])} of {len(names)} built in {doc['wall_s']:.1f} s"
                            + (f"; {len(result.regressions)} regression(s)" if result.regressions else ""))
        built = [i for i, c in enumerate(result.columns) if c.ok]
        for combo in (self.base_combo, self.other_combo):
            combo.blockSignals(True)
            combo.clear()
            for i in built:
                combo.addItem(names[i], i)
            combo.blockSignals(False)
        if len(built) >= 2:
            self.base_combo.setCurrentIndex(len(built) - 2)
            self.other_combo.setCurrentIndex(len(built) - 1)
            self._on_pair_changed()
        self.sig_finished.emit(result)

    def _on_pair_changed(self, _index: int = 0) -> None:
        base, other = self.base_combo.currentData(), self.other_combo.currentData()
        if self.result is None or base is None or other is None:
            return
        try:
            self.show_pair(base, other)
        except Exception as exc:  # noqa: BLE001 - a diff that cannot be made is said, the table stays
            self.status.setText(f"{self.status.text()}; the diff of these two could not be made: {exc}")

    def show_pair(self, base: int, other: int) -> Any:
        """Show the diff of column ``other`` against column ``base``; the PairDiff."""
        pair = self.result.pair(base, other)
        self.compare.show_pair(pair)
        return pair

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        if self._worker is not None and self._worker.is_running():
            self._worker.stop(600000)
        super().closeEvent(event)
