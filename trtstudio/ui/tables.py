"""What the big tables of the window (layers, findings) share."""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QTableView


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


__all__ = ["rows_only_header"]
