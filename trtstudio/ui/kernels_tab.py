"""The engine dock's Kernels tab: the kernels the selected layer ran (or the selected node's, on the
PyTorch path), per inference, with their grid/block, time and share of the layer.

Filled from ``engine.node_time.layer_kernels`` (the engine's kernel table: an Nsight Systems export or
a Kineto trace opened beside the engine) or ``engine.node_time.row_kernels`` (the latest run's PyTorch
kernel rows); the workspace's selection drives it.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from trtstudio.engine.node_time import LayerKernels, fmt_ms, layer_kernels, row_kernels

COLUMNS = ("Kernel", "Grid / block", "Calls", "Time (ms)", "Share of layer")
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
    """A title line and the kernel table of one layer (``show_kernels``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
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
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.title)
        lay.addWidget(self.table)
        self.shown: LayerKernels | None = None

    def show_kernels(self, k: LayerKernels | None, what: str = "") -> None:
        """Show ``k`` (None: say why nothing is listed: ``what`` names the selection)."""
        self.shown = k
        self.table.setSortingEnabled(False)
        self.table.setRowCount(0)
        if k is None:
            self.title.setText(f"{what}: no kernels recorded for it. {EMPTY}" if what else EMPTY)
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

    def copy_text(self) -> str:
        """The table as tab-separated text (what Copy puts on the clipboard)."""
        rows = ["\t".join(COLUMNS)]
        for i in range(self.table.rowCount()):
            cells = [self.table.item(i, c) for c in range(len(COLUMNS))]
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
    sel = workspace.selection
    if sel.layers and engine is not None and sel.layers[0] < len(engine.layers):
        pos = sel.layers[0]
        view.show_kernels(layer_kernels(engine, pos), f"Layer {engine.layers[pos].name}")
        return
    if sel.nodes:
        rows = next((r.data.layers for r in reversed(workspace.runs_of_model())
                     if r.data is not None and not r.active and r.data.layers), None)
        view.show_kernels(row_kernels(rows, sel.nodes[0]), f"Node {sel.nodes[0]}")
        return
    view.show_kernels(None)
