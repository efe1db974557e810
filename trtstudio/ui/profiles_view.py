"""The engine dock's Profiles tab: an engine's optimization profiles side by side.

Shown for an engine whose files list several profiles (``engine.multiprofile``: each profile read,
diagnosed and aligned in a worker). The tab holds a line per profile (layers, time, findings,
shapes), the profile the Layers tab shows (changing it opens the engine again with that profile's
layers), and two layer tables, a profile each (profile 0 and 1 at first), their rows matched by
name and scrolled together; cells that differ between the two are tinted, a layer one side lacks
leaves that side's row empty.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from trtstudio.ui.rows_model import RowsModel

COLUMNS = ("#", "Name", "Type", "Precision", "Tactic", "Time ms")
_KEYS = (None, "name", "type", "precision", "tactic", None)
DIFFER = "#fff1c2"  # a cell whose value the other side does not share
MISSING = "#eeeeee"  # a row this side has no layer for


def _ms(v: Any) -> str:
    return "" if v is None else f"{v:.4f}"


class ProfileSideModel(RowsModel):
    """One side: the aligned rows (``multiprofile.side_by_side``) as profile ``mine``'s layers,
    compared with profile ``other``'s. ``Qt.UserRole`` of a row: that side's layer index or None."""

    COLUMNS = COLUMNS

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.mine = 0
        self.other = 1
        self._differ = QBrush(QColor(DIFFER))
        self._missing = QBrush(QColor(MISSING))

    def set_rows(self, rows: list[dict[str, Any]], mine: int, other: int) -> None:
        self.mine, self.other = mine, other
        self.replace(rows)

    def cell(self, row: int) -> dict[str, Any] | None:
        return self.rows[row]["profiles"][self.mine]  # type: ignore[no-any-return]

    def differs(self, row: int, key: str) -> bool:
        a, b = self.rows[row]["profiles"][self.mine], self.rows[row]["profiles"][self.other]
        return a is not None and b is not None and a[key] != b[key]

    def text(self, row: int, col: int) -> str:
        c = self.cell(row)
        if c is None:
            return ""
        if col == 0:
            return str(c["index"])
        if col == 5:
            return _ms(c["time_ms"])
        return str(c[_KEYS[col]] or "")  # type: ignore[index]

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return self.text(row, col)
        if role == Qt.ItemDataRole.BackgroundRole:
            if self.cell(row) is None:
                return self._missing
            key = _KEYS[col]
            if key is not None and key != "name" and self.differs(row, key):
                return self._differ
            return None
        if role == Qt.ItemDataRole.UserRole:
            c = self.cell(row)
            return None if c is None else c["index"]
        return None


class ProfileSide(QWidget):
    """A profile picker over one side's table."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pick = QComboBox()
        self.model = ProfileSideModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        head = QHBoxLayout()
        head.addWidget(QLabel(title))
        head.addWidget(self.pick)
        head.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(head)
        lay.addWidget(self.table)


class ProfilesView(QWidget):
    """The Profiles tab. ``sig_profile_chosen(int)``: the user picked the profile the Layers tab
    shows. :meth:`set_document` takes ``multiprofile.profiles_document``'s result."""

    sig_profile_chosen = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc: dict[str, Any] | None = None
        self._rows: list[dict[str, Any]] = []
        self.figures = QLabel()
        self.figures.setTextFormat(Qt.TextFormat.RichText)
        self.shown = QComboBox()  # the profile the Layers tab shows
        self.shown.setToolTip("the optimization profile whose layers the Layers, Findings and Summary tabs show")
        self.only_differ = QCheckBox("only rows that differ")
        self.left, self.right = ProfileSide("Left:"), ProfileSide("Right:")
        head = QHBoxLayout()
        head.addWidget(QLabel("Layers tab shows profile"))
        head.addWidget(self.shown)
        head.addSpacing(16)
        head.addWidget(self.only_differ)
        head.addStretch(1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.left)
        split.addWidget(self.right)
        lay = QVBoxLayout(self)
        lay.addWidget(self.figures)
        lay.addLayout(head)
        lay.addWidget(split, 1)
        # the two sides scroll together and select the same row
        for a, b in ((self.left, self.right), (self.right, self.left)):
            a.table.verticalScrollBar().valueChanged.connect(b.table.verticalScrollBar().setValue)
            a.table.clicked.connect(lambda index, other=b: other.table.selectRow(index.row()))
            a.pick.currentIndexChanged.connect(self._fill)
        self.only_differ.toggled.connect(self._fill)
        self.shown.activated.connect(lambda i: self.sig_profile_chosen.emit(int(i)))

    def set_document(self, doc: dict[str, Any], shown: int = 0) -> None:
        """Show ``doc``'s profiles; ``shown``: the profile the Layers tab shows now."""
        self.doc = doc
        profiles = doc["profiles"]
        names = [f"profile {p['profile']}" for p in profiles]
        for combo, current in ((self.shown, shown), (self.left.pick, 0), (self.right.pick, min(1, len(names) - 1))):
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(names)
            combo.setCurrentIndex(current)
            combo.blockSignals(False)
        self.figures.setText(_figures_html(profiles))
        self._fill()

    def set_shown(self, profile: int) -> None:
        """The Layers tab shows ``profile`` (no signal)."""
        self.shown.blockSignals(True)
        self.shown.setCurrentIndex(profile)
        self.shown.blockSignals(False)

    def _fill(self, *_: Any) -> None:
        if self.doc is None:
            return
        a, b = self.left.pick.currentIndex(), self.right.pick.currentIndex()
        rows = self.doc["side_by_side"]
        if self.only_differ.isChecked():
            rows = [r for r in rows if _row_differs(r, a, b)]
        self._rows = rows
        self.left.model.set_rows(rows, a, b)
        self.right.model.set_rows(rows, b, a)
        for side in (self.left, self.right):
            side.table.resizeColumnsToContents()
            side.table.setColumnWidth(1, min(side.table.columnWidth(1), 320))
            side.table.setColumnWidth(4, min(side.table.columnWidth(4), 260))

    def differing_rows(self) -> int:
        """Rows shown whose two sides differ (type, precision, tactic, or a missing layer)."""
        a, b = self.left.pick.currentIndex(), self.right.pick.currentIndex()
        return sum(1 for r in self._rows if _row_differs(r, a, b))


def _row_differs(row: dict[str, Any], a: int, b: int) -> bool:
    x, y = row["profiles"][a], row["profiles"][b]
    if x is None or y is None:
        return x is not y
    return any(x[k] != y[k] for k in ("type", "precision", "tactic"))


def _figures_html(profiles: list[dict[str, Any]]) -> str:
    import html

    rows = []
    for p in profiles:
        f = p["findings"]
        found = f"{sum(f.values())}" + (" (" + ", ".join(f"{v} {k}" for k, v in f.items()) + ")" if f else "")
        shapes = "; ".join(f"{n} {'x'.join(map(str, s['min']))} .. {'x'.join(map(str, s['opt']))} .. "
                           f"{'x'.join(map(str, s['max']))}" for n, s in (p.get("shapes") or {}).items())
        t = p["time_ms"]
        cells = (f"profile {p['profile']}", f"{p['layers']:,} layers", "time not recorded" if t is None else f"{t:.3f} ms",
                 f"findings {found}", shapes)
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return f"<table cellspacing=6>{''.join(rows)}</table>"


def show_profiles(tabs: Any, doc: dict[str, Any] | None, shown: int = 0, on_choose: Any = None) -> ProfilesView | None:
    """Put ``doc`` (``multiprofile.profiles_document``) in ``tabs``' Profiles tab, made on first
    use after the Summary tab; ``doc`` None (an engine of one profile) removes the tab.
    ``on_choose(profile)``: called when the user picks the profile the Layers tab shows."""
    view: ProfilesView | None = getattr(tabs, "profiles_view", None)
    if doc is None or len(doc["profiles"]) < 2:
        if view is not None and tabs.indexOf(view) >= 0:
            tabs.removeTab(tabs.indexOf(view))
        return None
    if view is None:
        view = ProfilesView()
        tabs.profiles_view = view
        if on_choose is not None:
            view.sig_profile_chosen.connect(on_choose)
    if tabs.indexOf(view) < 0:
        tabs.insertTab(tabs.indexOf(tabs.summary_view) + 1, view, "Profiles")
    view.set_document(doc, shown)
    tabs.setTabText(tabs.indexOf(view), f"Profiles ({len(doc['profiles'])})")
    return view
