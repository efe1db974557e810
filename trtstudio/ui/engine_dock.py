"""The Engine dock: layer table, time charts, findings and the build log, filled from one Analysis."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QLabel, QTabWidget, QTreeWidget, QTreeWidgetItem, QWidget

from trtstudio.palette import SEVERITY_COLORS

FINDINGS_CHUNK = 500  # tree items added per event-loop turn


class EngineTabs(QTabWidget):
    """Tabs ``layer_table``, ``charts``, ``findings_view``, ``log_panel`` (each None when its module
    cannot load). Signals: ``sig_layers_selected(list)`` (table rows picked), ``sig_finding_clicked
    (layer_index or None, node names)``."""

    sig_layers_selected = Signal(list)
    sig_finding_clicked = Signal(object, list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.layer_table: Any = None
        self.charts: Any = None
        self.log_panel: Any = None
        self._pending: list[Any] = []  # findings not yet added to the tree
        self._gen = 0
        try:
            from trtstudio.ui.layer_table import LayerTableView

            self.layer_table = LayerTableView()
            self.layer_table.sig_layers_selected.connect(self.sig_layers_selected)
            self.addTab(self.layer_table, "Layers")
        except ImportError:
            self.addTab(QLabel("layer table unavailable"), "Layers")
        try:
            from trtstudio.ui.engine_charts import EngineChartsView

            self.charts = EngineChartsView()
            self.addTab(self.charts, "Time by type / precision")
        except ImportError:
            pass
        self.findings_view = QTreeWidget()
        self.findings_view.setHeaderLabels(["Severity", "Kind", "Layer", "Message", "Hint"])
        self.findings_view.setUniformRowHeights(True)  # tens of thousands of rows: no per-row height pass
        self.findings_view.setRootIsDecorated(False)
        self.findings_view.itemClicked.connect(self._on_findings_item_clicked)
        self.addTab(self.findings_view, "Findings")
        try:
            from trtstudio.ui.log_panel import LogPanel

            self.log_panel = LogPanel()
            self.addTab(self.log_panel, "Log")
        except ImportError:
            pass

    def show_analysis(self, analysis: Any, engine: Any = None) -> None:
        """Fill the tabs from ``analysis`` (an engine.analysis.Analysis with ``columns``); with only
        ``engine`` (no analysis yet) the table shows the engine as read."""
        eng = analysis.engine if analysis is not None else engine
        columns = analysis.columns if analysis is not None else None
        self._gen += 1
        gen = self._gen
        if self.layer_table is not None:
            self.layer_table.set_engine(eng, columns)
        self.findings_view.clear()
        findings = analysis.findings if analysis is not None else []
        self._pending = list(findings)
        self.setTabText(self.indexOf(self.findings_view), f"Findings ({len(findings)})")
        # The charts and the findings follow on later event-loop turns: with 50,000 layers each
        # part takes tens of milliseconds, and together they held the GUI thread a quarter second.
        QTimer.singleShot(0, lambda: self._show_rest(gen, eng, columns))

    def _show_rest(self, gen: int, engine: Any, columns: Any) -> None:
        if gen != self._gen:
            return  # a newer analysis replaced this one
        if self.charts is not None:
            self.charts.set_engine(engine, columns)
        QTimer.singleShot(0, lambda: self._add_findings(gen))

    def _add_findings(self, gen: int) -> None:
        """Add the next chunk of findings; the rest follow on later event-loop turns, so tens of
        thousands of findings never hold the GUI thread for long."""
        if gen != self._gen:
            return  # a newer analysis replaced them
        chunk, self._pending = self._pending[:FINDINGS_CHUNK], self._pending[FINDINGS_CHUNK:]
        brushes = {sev: QBrush(QColor(c)) for sev, c in SEVERITY_COLORS.items()}
        other = QBrush(QColor("#333333"))
        items = []
        for f in chunk:
            item = QTreeWidgetItem([f.severity, f.kind, f.layer or "", f.message, f.hint])
            item.setData(0, Qt.ItemDataRole.UserRole, (f.layer_index, list(f.nodes)))
            item.setForeground(0, brushes.get(f.severity, other))
            items.append(item)
        self.findings_view.addTopLevelItems(items)
        if self.findings_view.topLevelItemCount() == len(items):  # the first chunk sizes the columns
            for c in range(4):
                self.findings_view.resizeColumnToContents(c)
        if self._pending:
            QTimer.singleShot(0, lambda: self._add_findings(gen))

    def finding_count(self) -> int:
        """Findings listed so far (all of them once the chunks are in)."""
        return self.findings_view.topLevelItemCount()

    def select_layers(self, positions: list[int]) -> None:
        """Select rows of the layer table (no signal loop: the table does not re-emit)."""
        if self.layer_table is not None:
            self.layer_table.select_layers(positions)

    def _on_findings_item_clicked(self, item: QTreeWidgetItem) -> None:
        layer_index, nodes = item.data(0, Qt.ItemDataRole.UserRole)
        self.sig_finding_clicked.emit(layer_index, list(nodes))
