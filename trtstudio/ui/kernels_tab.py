"""The engine dock's Kernels tab: the kernels the selected layer ran (or the selected node's, on the
PyTorch path), per inference, with their grid/block, time and share of the layer; with nothing
selected (or a kernel file opened alone, without an engine's layers), the file's ranges as a table
and a chart of their kernel time, as ``trtstudio layers export.sqlite`` prints them.

Filled from ``engine.node_time.layer_kernels`` (the engine's kernel table: an Nsight Systems export or
a Kineto trace opened beside the engine) or ``engine.node_time.row_kernels`` (the latest run's PyTorch
kernel rows); the workspace's selection drives it. Above, the one-line verdict of the kernel file
(``engine.node_time.trace_verdict``: what it holds, whose layers, which GPU, how much matched), which the
window's loader puts in ``EngineInfo.kernels["verdict"]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from trtstudio.engine.node_time import LayerKernels, fmt_ms, layer_kernels, row_kernels

COLUMNS = ("Kernel", "Grid / block", "Calls", "Time (ms)", "Share of layer")
RANGE_COLUMNS = ("Range", "Domain", "Calls", "Kernel time (ms)", "Share of kernels", "Kernels", "Heaviest kernel")
CHART_RANGES = 10  # ranges in the chart (the table lists them all)
EMPTY = ("Select a layer to see its kernels. Kernels come from an Nsight Systems export (nsys export --type "
         "sqlite) or a Kineto trace opened with the engine (File > Open engine files, or drop it on the window), "
         "or from a torch-cuda Per-layer run.")


class _Num(QTableWidgetItem):
    """A cell that sorts by its number."""

    def __init__(self, text: str, value: float) -> None:
        super().__init__(text)
        self.value = value
        self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        return self.value < getattr(other, "value", 0.0)


class KernelsView(QWidget):
    """A title line and the kernel table of one layer (``show_kernels``); with nothing selected, the
    kernel file's ranges, where a click on a range named after an engine layer selects that layer
    (``sig_layer_chosen``): the selection goes into the workspace's history like any other, so Esc
    clears it and Alt+Left/Right bring it back."""

    sig_layer_chosen = Signal(int)  # the engine layer (position) of the range row clicked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.layer_of: dict[str, int] = {}  # engine layer name -> position (the ranges a click can select)
        self.title = QLabel(EMPTY)
        self.title.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        head = self.table.horizontalHeader()
        head.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in range(1, len(COLUMNS)):
            head.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        self.verdict = QLabel()  # what the kernel file opened with the engine held (one line)
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.verdict.setStyleSheet("QLabel { border-left: 3px solid #6a9fd4; padding-left: 4px; }")
        self.verdict.hide()
        self.ranges = QTableWidget(0, len(RANGE_COLUMNS))  # a kernel file's ranges (nothing selected)
        self.ranges.setHorizontalHeaderLabels(list(RANGE_COLUMNS))
        self.ranges.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.ranges.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.ranges.verticalHeader().setVisible(False)
        self.ranges.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.ranges.setShowGrid(False)
        self.ranges.setWordWrap(False)
        rhead = self.ranges.horizontalHeader()
        rhead.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        for c in range(1, len(RANGE_COLUMNS) - 1):
            rhead.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        rhead.setStretchLastSection(True)
        self.ranges.cellClicked.connect(self._on_ranges_clicked)
        self.chart: Any = None  # the ranges' bar chart, made when first shown (pyqtgraph), beside the table
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.setChildrenCollapsible(False)
        self.split.addWidget(self.table)
        self.split.addWidget(self.ranges)
        self.ranges.hide()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.verdict)
        lay.addWidget(self.title)
        lay.addWidget(self.split, 1)
        self.shown: LayerKernels | None = None
        self.shown_ranges: dict[str, Any] | None = None  # the kernel table whose ranges are listed

    def set_verdict(self, verdict: dict[str, Any] | None) -> None:
        """The kernel file's one-line verdict above the table (hidden without one)."""
        text = str((verdict or {}).get("text") or "")
        self.verdict.setText(text)
        self.verdict.setToolTip(text)
        self.verdict.setVisible(bool(text))

    def _layer_mode(self) -> None:
        self.ranges.hide()
        if self.chart is not None:
            self.chart.hide()
        self.table.show()

    def show_kernels(self, k: LayerKernels | None, what: str = "", missing: str = "") -> None:
        """Show ``k`` (None: say why nothing is listed: ``what`` names the selection; ``missing``:
        why the kernel file open has none for it, instead of the hint to open one)."""
        self.shown = k
        self._layer_mode()
        self.table.setSortingEnabled(False)
        self.table.setRowCount(0)
        if k is None:
            why = missing or EMPTY
            self.title.setText(f"{what}: no kernels recorded for it. {why}" if what else why)
            return
        self.title.setText(f"<b>{k.owner}</b>: {len(k.rows)} kernel(s), {fmt_ms(k.ms)} ms per inference "
                           f"({k.source})")
        self.table.setRowCount(len(k.rows))
        for i, r in enumerate(k.rows):
            name = QTableWidgetItem(r["name"])
            name.setToolTip(r["name"])
            self.table.setItem(i, 0, name)
            self.table.setItem(i, 1, QTableWidgetItem(r["launch"] or "not recorded"))
            self.table.setItem(i, 2, _Num(f"{r['count']:.3g}", r["count"]))
            self.table.setItem(i, 3, _Num(f"{r['ms']:.4f}", r["ms"]))
            share = r["share"]
            self.table.setItem(i, 4, _Num("" if share is None else f"{100 * share:.1f} %", share or 0.0))
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(3, Qt.SortOrder.DescendingOrder)

    def show_ranges(self, kt: dict[str, Any], layers: bool = False) -> None:
        """A kernel file's ranges (``EngineInfo.kernels``): each range name with its domain, calls,
        kernel time and share, its kernel count and heaviest kernel, and a bar chart of the
        heaviest ranges' time. ``layers``: the engine has layers to select."""
        self.shown, self.shown_ranges = None, kt
        self.table.hide()
        self.ranges.show()
        total = float(kt.get("total_ms") or 0.0)
        rows = sorted((r for r in kt.get("ranges") or [] if isinstance(r, dict)), key=lambda r: -float(r.get("ms") or 0))
        attributed = float(kt.get("attributed_ms") or 0.0)
        self.title.setText(
            f"{int(kt.get('kernels') or 0):,} kernels, {fmt_ms(total)} ms of kernel time; {len(rows)} ranges hold "
            f"{int(kt.get('attributed_kernels') or 0):,} of them ({100 * attributed / total if total else 0:.0f} % "
            "of the time)." + (" Select a layer to see its own kernels." if layers else ""))
        self.ranges.setSortingEnabled(False)
        self.ranges.setRowCount(len(rows))
        for i, r in enumerate(rows):
            ms, kernels = float(r.get("ms") or 0.0), r.get("kernels") or []
            name = QTableWidgetItem(str(r.get("name", "?")))
            name.setToolTip(str(r.get("name", "?")))
            self.ranges.setItem(i, 0, name)
            self.ranges.setItem(i, 1, QTableWidgetItem(str(r.get("domain", ""))))
            self.ranges.setItem(i, 2, _Num(f"{int(r.get('count') or 0):,}", float(r.get("count") or 0)))
            self.ranges.setItem(i, 3, _Num(f"{ms:.4f}", ms))
            self.ranges.setItem(i, 4, _Num(f"{100 * ms / total:.1f} %" if total else "", ms / total if total else 0.0))
            self.ranges.setItem(i, 5, _Num(f"{sum(int(x.get('count') or 0) for x in kernels):,}",
                                           float(sum(int(x.get("count") or 0) for x in kernels))))
            heavy = str(kernels[0].get("name", "")) if kernels else ""
            cell = QTableWidgetItem(heavy)
            cell.setToolTip(heavy)
            self.ranges.setItem(i, 6, cell)
        self.ranges.setSortingEnabled(True)
        self.ranges.sortByColumn(3, Qt.SortOrder.DescendingOrder)
        self.ranges.resizeColumnToContents(0)
        self.ranges.setColumnWidth(0, min(self.ranges.columnWidth(0), 220))
        self._chart_ranges(rows, total)

    def _on_ranges_clicked(self, row: int, _col: int) -> None:
        item = self.ranges.item(row, 0)
        pos = self.layer_of.get(item.text()) if item is not None else None
        if pos is not None:
            self.sig_layer_chosen.emit(pos)

    def clear_rows(self) -> None:
        """No row selected in either table (Esc)."""
        self.table.clearSelection()
        self.ranges.clearSelection()

    def _chart_ranges(self, rows: list[dict[str, Any]], total: float) -> None:
        try:
            from trtstudio.ui.engine_charts import TYPE_COLOR, _BarChart
        except ImportError:  # pyqtgraph absent: the table alone
            return
        if self.chart is None:
            self.chart = _BarChart(f"Kernel time of the {CHART_RANGES} heaviest ranges (ms)")
            self.chart.setMinimumWidth(240)
            self.split.addWidget(self.chart)
            width = max(self.split.width(), 600)
            self.split.setSizes([0, 3 * width // 5, 2 * width // 5])  # the table wider than the chart
        self.chart.show()
        top = [(str(r.get("name", "?")), float(r.get("ms") or 0.0)) for r in rows[:CHART_RANGES]]
        self.chart.set_bars(top, [TYPE_COLOR] * len(top), total)

    def copy_text(self) -> str:
        """The table shown as tab-separated text (what Copy puts on the clipboard)."""
        table, cols = (self.ranges, RANGE_COLUMNS) if self.ranges.isVisibleTo(self) else (self.table, COLUMNS)
        rows = ["\t".join(cols)]
        for i in range(table.rowCount()):
            cells = [table.item(i, c) for c in range(len(cols))]
            rows.append("\t".join(c.text() if c is not None else "" for c in cells))
        return "\n".join(rows)

    def keyPressEvent(self, event: Any) -> None:  # noqa: N802
        if event.matches(QKeySequence.StandardKey.Copy):
            QGuiApplication.clipboard().setText(self.copy_text())
            return
        super().keyPressEvent(event)


def show_selection(view: KernelsView, workspace: Any, engine: Any) -> None:
    """Fill ``view`` for the workspace's selection: the first selected layer's kernels from
    ``engine``'s kernel table, else the first selected node's from the latest run's kernel rows."""
    kt = getattr(engine, "kernels", None) or {}
    verdict = kt.get("verdict")
    view.set_verdict(verdict)
    # with a kernel file open, a layer without kernels says why, never asks for the file again
    missing = (f"{Path(str(verdict.get('file'))).name} holds {verdict.get('holds')}, none for it."
               if isinstance(verdict, dict) and verdict.get("file") else
               "The kernel file opened with the engine has no range named after it." if kt else "")
    view.layer_of = {lay.name: i for i, lay in enumerate(getattr(engine, "layers", None) or [])}
    sel = workspace.selection
    if sel.layers and engine is not None and sel.layers[0] < len(engine.layers):
        pos = sel.layers[0]
        view.show_kernels(layer_kernels(engine, pos), f"Layer {engine.layers[pos].name}", missing)
        return
    if sel.nodes:
        rows = next((r.data.layers for r in reversed(workspace.runs_of_model())
                     if r.data is not None and not r.active and r.data.layers), None)
        got = row_kernels(rows, sel.nodes[0])
        if got is not None or not kt.get("ranges"):
            view.show_kernels(got, f"Node {sel.nodes[0]}", missing)
            return
    if kt.get("ranges"):
        view.show_ranges(kt, layers=bool(getattr(engine, "layers", None)))
        return
    view.show_kernels(None, missing=missing)


def trace_log_lines(engine: Any) -> list[str]:
    """The Log tab's line for the kernel file opened with ``engine`` (its verdict, tagged as
    information), [] without one."""
    verdict = (getattr(engine, "kernels", None) or {}).get("verdict")
    return [f"[I] trtstudio: {verdict['text']}"] if isinstance(verdict, dict) and verdict.get("text") else []
