"""The layer table's selection as numpy masks over layer positions, behind Qt's selection model.

Qt keeps a selection as ranges of rows: after a sort or a filter the selected rows of a big
engine are tens of thousands of pieces, which Qt carries through the layout change one persistent
index at a time, unites into repaint regions, and answers ``isSelected`` from by scanning them per
painted cell (0.3-0.9 s of the GUI thread at 300,000 layers). Here the view's mouse and keyboard
handling stay Qt's: every change still arrives as ``select(selection, flags)``, which this model
turns into two boolean masks over layer positions, the committed selection and the range being
made (Qt's "current selection", which a Shift+click or Shift+arrow replaces), combined as Qt
combines them. A mask is by layer, so a sort leaves it as it is and a filter only ands it with the
rows shown. Qt's own range store stays empty: the table model paints a row as selected from
:attr:`LayerTableModel.selected`, and whoever asks what is selected asks this model
(:meth:`positions`), not ``selectedRows``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import QItemSelection, QItemSelectionModel, QModelIndex, QObject, QPersistentModelIndex

F = QItemSelectionModel.SelectionFlag
# the flags as plain ints (Qt passes them as an enum flag, or an int from Python callers)
NO_UPDATE, CLEAR, SELECT, DESELECT, TOGGLE, CURRENT, ROWS = (
    int(f.value) for f in (F.NoUpdate, F.Clear, F.Select, F.Deselect, F.Toggle, F.Current, F.Rows))
_CHANGE = SELECT | DESELECT | TOGGLE


def _int(flags: Any) -> int:
    return int(flags.value) if hasattr(flags, "value") else int(flags)


class MaskSelection(QItemSelectionModel):
    """Selection model of a :class:`~trtstudio.ui.layer_table.LayerTableModel` (``table``): whole
    rows only, kept as masks. ``on_change()`` is called after each change of what is selected."""

    def __init__(self, table: Any, parent: QObject) -> None:
        super().__init__(table, parent)
        self._t = table
        self._done = np.zeros(0, dtype=bool)  # committed
        self._now = np.zeros(0, dtype=bool)  # the range being made
        self._cmd = NO_UPDATE  # how the range being made applies (Select, Deselect or Toggle)
        self.on_change: Callable[[], None] | None = None
        self.resize()

    def resize(self) -> None:
        """Nothing selected, for the table's engine (after ``set_engine``)."""
        n = self._t.layer_count()
        self._done = np.zeros(n, dtype=bool)
        self._now = np.zeros(n, dtype=bool)
        self._cmd = NO_UPDATE
        self._t.selected = np.zeros(n, dtype=bool)

    # -- what is selected ---------------------------------------------------------------------
    def _combined(self) -> np.ndarray:
        if self._cmd == NO_UPDATE:
            return self._done
        if self._cmd & TOGGLE:
            return self._done ^ self._now
        if self._cmd & DESELECT:
            return self._done & ~self._now
        return self._done | self._now

    def positions(self, row_order: bool = False) -> np.ndarray:
        """The selected layer positions, ascending; or in the rows' order (``row_order``)."""
        sel = self._t.selected
        if row_order:
            order = self._t.positions()
            return order[sel[order]]
        return np.flatnonzero(sel)

    def hasSelection(self) -> bool:  # noqa: N802 - Qt's name (for Python callers)
        return bool(len(self._t.selected)) and bool(self._t.selected.any())

    # -- changes --------------------------------------------------------------------------------
    def _rows(self, what: Any, flags: int) -> np.ndarray:
        """The rows a ``select`` call names: whole rows only (the Rows flag, or ranges as wide as
        the table); a selection of cells selects no row."""
        last = self._t.columnCount() - 1
        if isinstance(what, (QModelIndex, QPersistentModelIndex)):
            return np.array([what.row()] if what.isValid() and flags & ROWS else [], dtype=np.int64)
        parts = [np.arange(r.top(), r.bottom() + 1, dtype=np.int64)
                 for r in (what.at(i) for i in range(what.count()))
                 if r.isValid() and (flags & ROWS or (r.left() == 0 and r.right() == last))]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)

    def select(self, what: Any, flags: Any) -> None:  # type: ignore[override]  # both of Qt's overloads
        flags = _int(flags)
        if flags == NO_UPDATE:
            return
        rows = self._rows(what, flags)
        before = self._t.selected
        if flags & CLEAR:
            self._done = np.zeros_like(self._done)
            self._now = np.zeros_like(self._now)
            self._cmd = NO_UPDATE
        if not flags & CURRENT:  # a new range: the one being made is committed
            self._done, self._cmd = self._combined(), NO_UPDATE
            self._now = np.zeros_like(self._done)
        if flags & _CHANGE:
            now = np.zeros_like(self._done)
            order = self._t.positions()
            rows = rows[(rows >= 0) & (rows < len(order))]
            now[order[rows]] = True
            self._now, self._cmd = now, flags & _CHANGE
        self._publish(before)

    def clearSelection(self) -> None:  # noqa: N802 - Qt's name
        self.select(QItemSelection(), CLEAR)

    def show_qt_row(self, index: QModelIndex) -> None:
        """Put the row of ``index``, when selected, into Qt's own range store (else clear that
        store): Qt reads ``isSelected`` (which it does not let Python answer) when a mouse button
        goes down, so that a Ctrl+click on a selected row takes it out, and a Ctrl+drag from one
        deselects. Called by the view on each press (and with an invalid index on release)."""
        base = QItemSelectionModel
        selected = index.isValid() and 0 <= index.row() < len(self._t.positions()) and \
            bool(self._t.selected[self._t.positions()[index.row()]])
        if selected:
            row = index.row()  # (the index overload would call this model's select)
            whole = QItemSelection(self._t.index(row, 0), self._t.index(row, self._t.columnCount() - 1))
            base.select(self, whole, F.ClearAndSelect)
        elif base.hasSelection(self):
            base.select(self, QItemSelection(), F.Clear)

    def select_positions(self, positions: np.ndarray, clear: bool) -> None:
        """Select these layer positions (committed), after clearing the rest with ``clear``; hidden
        ones too (the caller selects only what the filter shows)."""
        before = self._t.selected
        done = np.zeros_like(self._done) if clear else self._combined().copy()
        done[positions] = True
        self._done, self._now, self._cmd = done, np.zeros_like(done), NO_UPDATE
        self._publish(before)

    def keep(self, shown: np.ndarray | None) -> bool:
        """Only the layers ``shown`` (a filter's mask; None: all) stay selected; whether any left."""
        if shown is None:
            return False
        before = self._t.selected
        self._done = self._done & shown
        self._now = self._now & shown
        return self._publish(before)

    def _publish(self, before: np.ndarray) -> bool:
        after = self._combined()
        if after is self._done:
            after = after.copy()  # the model's mask is never changed in place
        self._t.selected = after
        changed = not np.array_equal(before, after)
        if changed and self.on_change is not None:
            self.on_change()
        return changed


__all__ = ["MaskSelection"]
