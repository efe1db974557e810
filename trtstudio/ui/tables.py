"""What the big tables of the window (layers, findings) share."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QItemSelection, QItemSelectionModel
from PySide6.QtGui import QRegion
from PySide6.QtWidgets import QStyle, QTableView

# A selection change of more pieces than this repaints the whole viewport (see RowsTable)
REGION_RANGES_MAX = 64


class RowsTable(QTableView):
    """A QTableView for the big tables (layers, findings), where a selection can be tens of
    thousands of pieces: after a sort or filter, the selected rows are scattered.

    On each selection change Qt repaints the region of the selected and deselected pieces, a
    rectangle each united into one QRegion: 0.16-0.3 s of the GUI thread for 50,000 pieces, to
    select them or to clear them (a bare selection model takes 3 ms). Over
    ``REGION_RANGES_MAX`` pieces the region is the viewport: a repaint of the rows in view."""

    def visualRegionForSelection(self, selection: QItemSelection) -> QRegion:  # noqa: N802 - Qt override
        if selection.count() > REGION_RANGES_MAX:
            return QRegion(self.viewport().rect())
        return super().visualRegionForSelection(selection)


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
