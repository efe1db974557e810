"""Engine > Explain precision...: why the open INT8 engine is not faster, in the engine dock's
Precision tab (``ExplainView``), computed in a worker by :func:`trtstudio.diff.explain.explain`.

The tab shows a warning line where the other build may not belong beside it (different models,
GPUs, TensorRT, too few layers aligned: ``diff.mismatch``), the verdict sentence, the causes (each with its layers and the time at stake: a row
selects its layers in the table and on the graph), and the suggestion to paste (trtexec
``--layerPrecisions`` and ``trtstudio precision --block-nodes``) with a Copy button. "Against
another build..." explains it beside an FP16/FP32 build of the same model, as ``trtstudio explain
--against`` does.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from trtstudio.ui.words import build_names, window_words

COLUMNS = ("Cause", "What", "Layers", "Time at stake (ms)")
EMPTY = ("Engine > Explain precision... tells why an INT8 engine is not faster: Q/DQ layers and reformats, "
         "convolutions writing FP16/FP32, layers kept wide, and (against an FP16/FP32 build) the layer groups "
         "where INT8 loses.")


def suggestion_text(doc: dict[str, Any]) -> str:
    """The text the Copy button puts on the clipboard: the trtexec flags and the trtstudio command,
    or the reason there is none."""
    s = doc.get("suggestion") or {}
    if not s.get("layer_precisions"):
        return window_words(str(s.get("basis") or ""))
    lines = [f"trtexec {s['layer_precisions']}", str(s.get("precision_command") or "")]
    if s.get("estimated_gain_ms") is not None:
        lines.append(f"# estimated gain {float(s['estimated_gain_ms']):.3g} ms per inference: {s.get('basis', '')}")
    return "\n".join(lines)


class ExplainView(QWidget):
    """The Precision tab. ``sig_layers(list[str])``: the layer names of the cause row picked."""

    sig_layers = Signal(object)
    sig_against = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from trtstudio.ui.compare_dock import WarningLine

        self.doc: dict[str, Any] | None = None
        self.warning = WarningLine()
        self.sentence = QLabel(EMPTY)
        self.sentence.setWordWrap(True)
        self.sentence.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.against_label = QLabel("")
        self.against_button = QPushButton("Against another build...")
        self.against_button.setToolTip("Explain beside an FP16/FP32 build of the same model (its files, folder or session)")
        self.against_button.clicked.connect(self.sig_against)
        top = QHBoxLayout()
        top.addWidget(self.against_label, 1)
        top.addWidget(self.against_button)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        head = self.table.horizontalHeader()
        head.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        head.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        head.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        head.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemSelectionChanged.connect(self._on_table_selection)
        self.suggestion = QPlainTextEdit()
        self.suggestion.setReadOnly(True)
        self.suggestion.setMaximumHeight(72)
        self.copy_button = QPushButton("Copy suggestion")
        self.copy_button.setEnabled(False)
        self.copy_button.clicked.connect(self.copy_suggestion)
        bottom = QHBoxLayout()
        bottom.addWidget(self.suggestion, 1)
        bottom.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)
        from trtstudio.ui.compare_dock import scrolling_body

        self.table.setMinimumHeight(120)
        lay = scrolling_body(self, 4)
        lay.addWidget(self.warning)
        lay.addWidget(self.sentence)
        lay.addLayout(top)
        lay.addWidget(self.table, 1)
        lay.addLayout(bottom)

    def reset(self) -> None:
        """Back to the empty tab (another engine was opened)."""
        self.doc = None
        self.warning.set_warnings([])
        self.sentence.setText(EMPTY)
        self.against_label.setText("")
        self.table.setRowCount(0)
        self.suggestion.setPlainText("")
        self.copy_button.setEnabled(False)

    def show_busy(self, text: str) -> None:
        """Say that an explanation is being computed."""
        self.sentence.setText(text)

    def show_doc(self, doc: dict[str, Any]) -> None:
        """Show an explanation (``trtstudio explain --json``'s document)."""
        self.doc = doc
        p = doc["precision"]
        self.warning.set_warnings(doc.get("warnings") or [])
        self.sentence.setText(f"<b>{html.escape(window_words(p['text']))}</b>")
        against = doc.get("against")
        self.against_label.setText(f"{doc.get('engine')} against {against}" if against else
                                   f"{doc.get('engine')} alone: add another build to find where INT8 loses")
        self.table.setRowCount(len(p["causes"]))
        for i, c in enumerate(p["causes"]):
            cells = (c["cause"], c["text"], str(c.get("count", len(c["layers"]))), f"{float(c['ms']):.4f}")
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text if col != 1 else text + "\n\n" + "\n".join(c["layers"][:30]))
                if col >= 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, col, item)
        text = suggestion_text(p)
        self.suggestion.setPlainText(text)
        self.copy_button.setEnabled(bool(p["suggestion"].get("layer_precisions")))

    def copy_suggestion(self) -> None:
        """Put the suggestion on the clipboard."""
        QGuiApplication.clipboard().setText(self.suggestion.toPlainText())

    def _on_table_selection(self) -> None:
        rows = {i.row() for i in self.table.selectedItems()}
        if self.doc is None or not rows:
            return
        cause = self.doc["precision"]["causes"][min(rows)]
        self.sig_layers.emit(list(cause["layers"]))


class ExplainController:
    """Runs the explainer for the window's open engine in a loader worker and shows it in the tab."""

    FILTERS = "Engine files, folders or sessions (*.json *.log *.txt *.engine *.plan *.profile *.trtstudio);;All files (*)"

    def __init__(self, window: Any, view: ExplainView) -> None:
        self.w = window
        self.view = view
        self.against: list[str] | None = None
        view.sig_against.connect(self.open_against_dialog)
        view.sig_layers.connect(self._on_view_layers)
        window.workspace.events.connect("engine", self._on_workspace_engine)

    def _on_workspace_engine(self, _ws: Any) -> None:
        self.against = None
        self.view.reset()

    def open(self) -> None:
        """Engine > Explain precision...: explain the open engine (against the build chosen before)."""
        self.explain(self.against)

    def open_against_dialog(self) -> None:
        """Pick the other build's files and explain against it."""
        paths, _ = QFileDialog.getOpenFileNames(self.w, "Explain against: an FP16/FP32 build of the same model",
                                                self.w.prefs.last_dir(), self.FILTERS)
        if paths:
            self.explain(paths)

    def explain(self, against: list[str] | None = None) -> None:
        """Explain the open engine, beside ``against`` (files of another build, a folder or a
        session) when given; the result shows in the Precision tab (errors as one line)."""
        ws = self.w.workspace
        if ws.engine is None:
            self.w.sig_error.emit("open an INT8 engine first (File > Open engine files), then explain its precision")
            return
        from trtstudio.ui.compare_dock import base_side

        side = base_side(self.w.engine, list(ws.engine_paths), ws.model_path)
        model = ws.model_path
        spec = None if not against else (against[0] if len(against) == 1 else ",".join(os.fspath(p) for p in against))
        token = ws.token()
        self.against = list(against) if against else None
        tabs = self.w.engine_tabs
        tabs.setCurrentWidget(self.view)
        self.w.engine_dock.show()
        self.view.show_busy("Explaining precision" + (f" against {Path(str(spec)).name}" if spec else "") + "...")

        def work() -> dict[str, Any]:
            from trtstudio.diff.explain import explain
            from trtstudio.diff.sides import load_side

            other = load_side(spec, model) if spec else None
            if other is not None:  # named by what tells the builds apart (precision, folder, TensorRT version)
                side.name, other.name = build_names((side.engine, side.paths, side.name),
                                                    (other.engine, other.paths, other.name))
            return explain(side, other).to_json()

        def done(doc: dict[str, Any]) -> None:
            if ws.token()[1] != token[1]:
                return  # another engine since
            self.view.show_doc(doc)

        self.w.loader.work("Explaining precision...", work, done, name="explain")

    def _on_view_layers(self, names: list[str]) -> None:
        engine = self.w.engine
        if engine is None:
            return
        want = set(names)
        self.w.select_layers([lay.index for lay in engine.layers if lay.name in want])
