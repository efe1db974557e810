"""A table model over a list of rows with fixed column titles: what a small table of the window
(no sorting role, no cache) needs beyond its ``data``."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt


class RowsModel(QAbstractTableModel):
    """``rows`` (any list) under the titles ``COLUMNS``; a subclass sets ``COLUMNS`` and gives
    ``data``. :meth:`replace` swaps the rows in one reset."""

    COLUMNS: tuple[str, ...] = ()
    # columns whose first click sorts descending (times: the slowest first), by Qt's InitialSortOrderRole
    DESCENDING_FIRST: frozenset[int] = frozenset()

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[Any] = []

    def replace(self, rows: list[Any]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.InitialSortOrderRole:
            return initial_sort_order(section in self.DESCENDING_FIRST)
        return None


def initial_sort_order(descending: bool) -> int | None:
    """What ``headerData`` answers for Qt's ``InitialSortOrderRole``: a time column's first click
    sorts it descending (the slowest first); None leaves Qt's ascending."""
    return Qt.SortOrder.DescendingOrder.value if descending else None
