"""The Engine dock: layer table, time charts, findings and the build log, filled from one Analysis."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QTabWidget, QTreeWidget, QTreeWidgetItem, QWidget

from trtstudio.palette import SEVERITY_COLORS


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
        if self.layer_table is not None:
            self.layer_table.set_engine(eng, columns)
        if self.charts is not None:
            self.charts.set_engine(eng)
        self.findings_view.clear()
        findings = analysis.findings if analysis is not None else []
        items = []
        for f in findings:
            item = QTreeWidgetItem([f.severity, f.kind, f.layer or "", f.message, f.hint])
            item.setData(0, Qt.ItemDataRole.UserRole, (f.layer_index, list(f.nodes)))
            item.setForeground(0, QColor(SEVERITY_COLORS.get(f.severity, "#333333")))
            items.append(item)
        self.findings_view.addTopLevelItems(items)
        for c in range(4):
            self.findings_view.resizeColumnToContents(c)
        self.setTabText(self.indexOf(self.findings_view), f"Findings ({len(findings)})")

    def select_layers(self, positions: list[int]) -> None:
        """Select rows of the layer table (no signal loop: the table does not re-emit)."""
        if self.layer_table is not None:
            self.layer_table.select_layers(positions)

    def _on_findings_item_clicked(self, item: QTreeWidgetItem) -> None:
        layer_index, nodes = item.data(0, Qt.ItemDataRole.UserRole)
        self.sig_finding_clicked.emit(layer_index, list(nodes))
