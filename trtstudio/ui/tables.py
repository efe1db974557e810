"""What the tables of the window (layers, findings, the Compare dock's groups) share: the big
tables' repaint, Ctrl+C of the selected rows as TSV, and the row context menu (copy name, copy
row as JSON, copy the selection, select in graph, export the table as CSV)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable
from typing import Any

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt
from PySide6.QtGui import QContextMenuEvent, QKeyEvent, QKeySequence, QRegion
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu, QStyle, QTableView

# A selection change of more pieces than this repaints the whole viewport (see RowsTable)
REGION_RANGES_MAX = 64


class RowsTable(QTableView):
    """A QTableView for the big tables (layers, findings), where a selection can be tens of
    thousands of pieces: after a sort or filter, the selected rows are scattered.

    On each selection change Qt repaints the region of the selected and deselected pieces, a
    rectangle each united into one QRegion: 0.16-0.3 s of the GUI thread for 50,000 pieces, to
    select them or to clear them (a bare selection model takes 3 ms). Over
    ``REGION_RANGES_MAX`` pieces the region is the viewport: a repaint of the rows in view."""

    # set by the table's owner: a row's name and JSON document, and "select in graph"
    row_name: Callable[[int], str] | None = None
    row_json: Callable[[int], Any] | None = None
    show_in_graph: Callable[[int], None] | None = None

    def visualRegionForSelection(self, selection: QItemSelection) -> QRegion:  # noqa: N802 - Qt override
        if selection.count() > REGION_RANGES_MAX:
            return QRegion(self.viewport().rect())
        return super().visualRegionForSelection(selection)

    def selected_rows(self) -> list[int]:
        """The selected rows, top to bottom (the current row when none is selected)."""
        rows = sorted({i.row() for i in self.selectionModel().selectedRows()})
        if not rows and self.currentIndex().isValid():
            rows = [self.currentIndex().row()]
        return rows

    def rows_tsv(self, rows: Iterable[int]) -> str:
        """``rows`` as tab-separated text with the shown columns' titles first, as the cells read."""
        return _delimited(self, rows, "\t")

    def copy_selection(self) -> str:
        """Ctrl+C: the selected rows, every shown column, as TSV on the clipboard; returns the text."""
        text = self.rows_tsv(self.selected_rows())
        QApplication.clipboard().setText(text)
        return text

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_selection()
            event.accept()
            return
        super().keyPressEvent(event)

    def row_menu(self, row: int) -> QMenu:
        """The context menu of ``row`` (what :meth:`contextMenuEvent` shows)."""
        menu = QMenu(self)
        name_of, json_of, show = self.row_name, self.row_json, self.show_in_graph
        if name_of is not None:
            menu.addAction("Copy name", lambda: QApplication.clipboard().setText(name_of(row)))
        if json_of is not None:
            menu.addAction("Copy row as JSON", lambda: QApplication.clipboard().setText(
                json.dumps(json_of(row), indent=1, default=str)))
        menu.addAction("Copy selected rows (TSV)", self.copy_selection).setShortcut(QKeySequence.StandardKey.Copy)
        if show is not None:
            menu.addSeparator()
            menu.addAction("Select in graph", lambda: show(row))
        menu.addSeparator()
        menu.addAction("Export table as CSV...", self.export_csv_dialog)
        return menu

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt override
        row = self.indexAt(event.pos()).row()
        if row < 0:
            return
        if row not in self.selected_rows():  # as file managers do: the row under the pointer first
            self.selectRow(row)
        self.row_menu(row).exec(event.globalPos())

    def export_csv(self, path: str) -> None:
        """Every row shown, every shown column, as CSV at ``path``."""
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(_delimited(self, range(self.model().rowCount()), ","))

    def export_csv_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export table", "table.csv", "CSV (*.csv)")
        if path:
            self.export_csv(path)


def _delimited(view: QTableView, rows: Iterable[int], sep: str) -> str:
    model = view.model()
    cols = [c for c in range(model.columnCount()) if not view.isColumnHidden(c)]
    out = io.StringIO()
    writer = csv.writer(out, delimiter=sep, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow([str(model.headerData(c, Qt.Orientation.Horizontal) or "") for c in cols])
    for r in rows:
        writer.writerow([_cell(model.index(r, c).data()) for c in cols])
    return out.getvalue()


def _cell(v: Any) -> str:
    return "" if v is None else " ".join(str(v).split("\n"))



def rows_only_header(view: QTableView) -> None:
    """Give the column header of ``view`` (a view whose model is set, selecting whole rows) a
    selection model of its own that nothing selects.

    The header paints each section asking whether its whole column is selected, and Qt answers
    row by row (``QItemSelectionModel::isColumnSelected``), through the model's ``rowCount`` and
    ``columnCount``, Python methods here, for each cell: with every row selected (Ctrl+A), 1.1 s
    of the GUI thread at 50,000 layers. A column is never what is selected in these views, so the
    header has nothing to show for it. Call again after ``view.setModel`` (which gives the header
    the view's selection model)."""
    header = view.horizontalHeader()
    header.setHighlightSections(False)
    header.setSelectionModel(QItemSelectionModel(view.model(), header))


def size_columns_to_texts(view: QTableView, texts: dict[int, Iterable[str]]) -> None:
    """Size each column ``c`` of ``texts`` to the widest of ``texts[c]`` (the display texts of the
    rows to size from) as ``view.resizeColumnToContents(c)`` would, its header's text included,
    measured here in one go.

    Qt's sizing asks the model for each cell's data in several roles, a call into Python each; while
    a worker thread runs Python, each call first waits for the GIL (up to the switch interval): 100
    rows of 4 columns held the GUI thread 0.1-0.15 s while a session's model was read."""
    header = view.horizontalHeader()
    metrics = view.fontMetrics()
    # the item's text margins, as QCommonStyle sizes a view item (and a pixel each side)
    pad = 2 * (view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1) + 2
    for c, column in texts.items():
        widest = max((metrics.horizontalAdvance(t) for t in set(column)), default=0)
        header.resizeSection(c, max(widest + pad, header.sectionSizeFromContents(c).width()))


__all__ = ["REGION_RANGES_MAX", "RowsTable", "rows_only_header", "size_columns_to_texts"]
