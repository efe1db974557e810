"""The engine's layer table: one row per layer, sortable, filterable, coloured by precision or finding.

Fast for 50,000 layers: :meth:`LayerTableModel.set_engine` turns the layers into column lists of
display strings and numpy sort keys once; ``data()`` only indexes them. Sorting happens in the
model with numpy over those keys (:func:`sort_order`; a ``QSortFilterProxyModel`` sorting through Python
``data()`` calls takes seconds at that size), and the model filters too, through a boolean mask
over the layers: the rows it shows are the sorted positions the mask keeps. There is no proxy
model: one calls a Python ``filterAcceptsRow`` per row on every reset and filter change (0.3 s
at 300,000 layers, on the GUI thread).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from PySide6.QtCore import (
    QAbstractItemModel,
    QAbstractTableModel,
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QBrush, QColor, QMouseEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QVBoxLayout,
    QWidget,
)

from trtstudio.engine.model import EngineInfo
from trtstudio.engine.table import SEVERITY_RANK, LayerColumns, layer_columns
from trtstudio.palette import OTHER_PRECISION_COLOR as _OTHER_PRECISION
from trtstudio.palette import PRECISION_COLORS as _PRECISION
from trtstudio.palette import SEVERITY_COLORS as _SEVERITY
from trtstudio.palette import tint
from trtstudio.ui.layer_selection import MaskSelection
from trtstudio.ui.rows_model import initial_sort_order
from trtstudio.ui.tables import RowsTable, rows_only_header

SORT_ROLE = int(Qt.ItemDataRole.UserRole) + 1  # raw number (float) or lower-case text
LAYER_INDEX_ROLE = int(Qt.ItemDataRole.UserRole) + 2  # Layer.index of the row

ALL = "All"
# the layout signals' overload that carries a hint (PySide6 picks an overload by these names)
_PERSISTENT_LIST, _HINT = "QList<QPersistentModelIndex>", "QAbstractItemModel::LayoutChangeHint"
# row backgrounds: light tints of the palette's hues (the graph and charts use the hues themselves)
SEVERITY_COLORS = {k: tint(v, 0.7) for k, v in _SEVERITY.items()}
PRECISION_COLORS = {k: tint(v, 0.72) for k, v in _PRECISION.items()}
OTHER_PRECISION_COLOR = tint(_OTHER_PRECISION, 0.72)  # INT32, INT64, BOOL, UINT8...


# above this many layers a text column's sort keys are made in steps between the GUI's events
# (see LayerTableModel._text_rank)
RANKED_IN_STEPS_ROWS = 20_000


PREFIX_WORDS = 4  # the first 32 bytes of each text are sorted by numpy
_CHUNK = 10_000  # texts handled per Python step (a few ms each at most)
RANK_TURN_S = 0.008  # steps taken in one turn of the event loop while this time is not spent


def text_rank_steps(texts: Sequence[str]) -> Generator[None, None, np.ndarray]:
    """:func:`text_rank` in steps: a generator that yields after each step of a few milliseconds
    (``_CHUNK`` texts of Python, or one numpy sort) and returns the ranks. ``texts`` is read a
    slice at a time, so that a :class:`~trtstudio.engine.table.LazyText` makes its cells in steps
    too."""
    n = len(texts)
    width = 8 * PREFIX_WORDS
    lower: list[str] = []
    parts: list[bytes] = []
    for a in range(0, n, _CHUNK):
        low = [t.lower() for t in texts[a:a + _CHUNK]]
        lower += low
        parts.append(b"".join([t.encode()[:width].ljust(width, b"\0") for t in low]))
        yield
    keys = np.frombuffer(b"".join(parts), dtype=">u8").reshape(n, PREFIX_WORDS)
    order = np.lexsort(keys.T[::-1]).astype(np.int64) if n else np.empty(0, dtype=np.int64)
    yield
    tied = np.r_[False, (keys[order[1:]] == keys[order[:-1]]).all(axis=1), False].astype(np.int8)
    edges = np.diff(tied)
    yield
    done = 0
    for first, last in zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist(), strict=True):
        group = order[first:last + 1].tolist()  # texts alike in their first 32 bytes
        group.sort(key=lower.__getitem__)
        order[first:last + 1] = group
        done += len(group)
        if done >= _CHUNK:
            done = 0
            yield
    new = np.ones(n, dtype=bool)  # a text unlike the one before it in the order
    for a in range(1, n, _CHUNK):
        b = min(n, a + _CHUNK)
        here = [lower[i] for i in order[a - 1:b].tolist()]
        new[a:b] = np.fromiter(map(str.__ne__, here[1:], here[:-1]), dtype=bool, count=b - a)
        yield
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.cumsum(new) - 1
    return rank


def text_rank(texts: Sequence[str]) -> np.ndarray:
    """Each text's rank by its lower-case form (equal texts, equal ranks), as Python orders strings.

    The first 32 bytes of each text's UTF-8 (which orders as the code points do) are sorted by
    ``numpy.lexsort``, and only texts equal in those bytes are sorted by Python, a group at a time
    (a Python ``sorted`` of 300,000 strings is 0.1-0.15 s in one C call). A big table makes these
    ranks in steps (:func:`text_rank_steps`) between the GUI's events, not in a worker: a worker
    running Python holds the GIL each time the GUI thread asks for it, and a repaint of the table,
    some 4,000 calls into Python, took 0.1-0.12 s instead of 0.02 s while one ran."""
    steps = text_rank_steps(texts)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return cast(np.ndarray, done.value)


def sort_order(keys: np.ndarray, descending: bool = False, ranks: bool = False) -> np.ndarray:
    """The positions of ``keys`` in their order, as ``numpy.argsort(-keys if descending else keys,
    kind="stable")`` gives them: equal keys (0.0 and -0.0 too) in position order both ways, like
    Python's ``sorted(reverse=True)``, and NaN (unknown) last both ways. ``ranks``: the keys are
    dense ranks (0 to their count - 1, as :func:`text_rank` makes).

    A stable ``argsort`` of 300,000 keys is a merge sort, 22-25 ms; here each key's dense rank
    (from numpy's unstable, vectorised ``argsort``: equal keys get one rank whatever their order)
    is packed with its position into one int64 whose plain ``numpy.sort`` orders ties by position:
    8-14 ms."""
    n = len(keys)
    if ranks:
        rank = np.asarray(keys, dtype=np.int64)
        if descending and n:
            rank = int(rank.max()) - rank
    else:
        bits = np.add(keys, 0.0, dtype=np.float64).view(np.uint64)  # (+ 0.0: -0.0 is 0.0)
        # ordered as the numbers are: negative ones with every bit flipped, others with the sign set
        u = np.where(bits >> np.uint64(63), ~bits, bits | np.uint64(1 << 63))
        if descending:
            u = ~u
        u[np.isnan(keys)] = np.iinfo(np.uint64).max  # last, and equal to each other
        by_key = np.argsort(u)
        ordered = u[by_key]
        new = np.empty(n, dtype=np.int64)  # 1 where a key differs from the one before it
        new[:1] = 1
        np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
        rank = np.empty(n, dtype=np.int64)
        rank[by_key] = np.cumsum(new) - 1
    shift = max(1, (n - 1).bit_length())
    packed = (rank << shift) | np.arange(n, dtype=np.int64)
    packed.sort()
    return packed & ((1 << shift) - 1)


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    numeric: bool = False
    timed: bool = False  # shown only when the engine has per-layer times
    memory: bool = False  # bytes (LayerColumns.memory): shown only when some layer has the figure
    tip: str = ""  # the header's tooltip


COLUMNS: tuple[Column, ...] = (
    Column("index", "#", numeric=True),
    Column("name", "Name"),
    Column("type", "Type"),
    Column("precision_in", "Prec. in"),
    Column("precision_out", "Prec. out"),
    Column("ms", "ms/inference", numeric=True, timed=True),
    Column("total_ms", "Total ms (all runs)", numeric=True, timed=True),
    Column("average_ms", "Avg ms", numeric=True, timed=True),
    Column("median_ms", "Median ms", numeric=True, timed=True),
    Column("percent", "% of total", numeric=True, timed=True),
    Column("activation_bytes", "Output bytes", numeric=True, memory=True,
           tip="the layer's output activations (their shapes x type size, as the layer information gives them; "
               "TensorRT shares activation memory between layers, so these do not add up to what it allocates)"),
    Column("weight_bytes", "Weights", numeric=True, memory=True,
           tip="the layer's Weights + Bias (counts x type size, from the layer information)"),
    Column("scratch_bytes", "Scratch", numeric=True, memory=True,
           tip="the layer's scratch (workspace) memory, from a verbose build log's 'Layer: ... Scratch Memory' line"),
    Column("device_persistent_bytes", "Device persistent", numeric=True, memory=True,
           tip="the layer's device persistent memory, from a verbose build log's per-layer line"),
    Column("host_persistent_bytes", "Host persistent", numeric=True, memory=True,
           tip="the layer's host persistent memory, from a verbose build log's per-layer line"),
    Column("findings", "Findings"),
    Column("nodes", "ONNX nodes"),
    Column("tactic", "Tactic / kernel"),
    Column("parameter_type", "Parameter type"),
    Column("in_formats", "Input formats"),
    Column("in_shapes", "Input shapes"),
    Column("out_formats", "Output formats"),
    Column("out_shapes", "Output shapes"),
    Column("stream", "Stream", numeric=True),
)
COLUMN = {c.key: i for i, c in enumerate(COLUMNS)}


def _numbers(cols: LayerColumns, key: str, n: int) -> np.ndarray:
    """A numeric column's values by layer position: the table's numbers, else its memory bytes
    (NaN for all until the diagnosis brings them)."""
    values = cols.num.get(key)
    if values is None:
        values = cols.memory.get(key)
    return values if values is not None else np.full(n, np.nan)


class LayerTableModel(QAbstractTableModel):
    """Table model over column arrays built once per engine; sorts itself with numpy."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._engine: EngineInfo | None = None
        self._cols: LayerColumns | None = None  # what _build took
        self._text: list[Sequence[str]] = [[] for _ in COLUMNS]
        self._num: dict[int, np.ndarray] = {}  # numeric column -> values by position (NaN unknown)
        self._rank: dict[int, np.ndarray] = {}  # text column -> each layer's rank by lower-case text (first sort)
        self._sorted = np.empty(0, dtype=np.int64)  # every layer position, in the sort order
        self._mask: np.ndarray | None = None  # layer positions shown (None: all)
        self._order = np.empty(0, dtype=np.int64)  # model row -> layer position (sorted, filtered)
        self._row_of = np.empty(0, dtype=np.int64)  # layer position -> model row (-1: filtered out)
        self._tooltips: list[str] = []
        self._tips: list[Sequence[str]] = [[] for _ in COLUMNS]
        self._severity = np.empty(0, dtype=np.int8)
        self._precision: list[str] = []
        self._types: list[str] = []
        self._precisions: list[str] = []
        self._times = np.empty(0)
        self._haystack: Sequence[str] = []
        self._color_mode = "precision"
        self._brushes: dict[str, QBrush] = {}
        self._sort_column = -1
        self._sort_order = Qt.SortOrder.AscendingOrder
        # (column, its texts, the steps making their ranks): a big table's text column being ranked
        self._ranking: tuple[int, Sequence[str], Generator[None, None, np.ndarray]] | None = None
        self._pending_sort: tuple[int, Qt.SortOrder] | None = None  # waiting for its column's ranks
        self._rank_timer = QTimer(self)  # takes the next step of _ranking (after the events waiting)
        self._rank_timer.setSingleShot(True)
        self._rank_timer.setInterval(0)
        self._rank_timer.timeout.connect(self._rank_step)
        self._dropping: list[Any] = []  # an earlier engine's columns, let go of a few per turn
        self._drop_timer = QTimer(self)
        self._drop_timer.setSingleShot(True)
        self._drop_timer.setInterval(0)
        self._drop_timer.timeout.connect(self._drop_step)
        self.has_times = False
        # the selected layer positions (set by the view's MaskSelection; painted from here)
        self.selected = np.zeros(0, dtype=bool)
        self._selected_brushes: tuple[QBrush, QBrush] | None = None  # (background, text)

    # -- building ---------------------------------------------------------------------------
    def set_engine(self, engine: EngineInfo | None, columns: LayerColumns | None = None) -> None:
        """Replace the engine shown (beginResetModel/endResetModel). ``columns``: its cells as computed
        off the GUI thread (``engine.analysis``); computed here when not given."""
        self.beginResetModel()
        self._engine = engine
        self._build(columns if columns is not None else layer_columns(engine))
        self._sort_column = -1
        self._mask = None
        self.endResetModel()

    def takes_findings(self, columns: LayerColumns | None) -> bool:
        """Whether ``columns`` are those shown with the findings added (``engine.table.with_findings``
        of the same layers: the window's diagnosis landing after the table was shown)."""
        return columns is not None and self._cols is not None and columns.num is self._cols.num \
            and len(columns) == len(self._cols)

    def set_findings(self, engine: EngineInfo | None, columns: LayerColumns) -> None:
        """Take the findings of ``columns`` (see :meth:`takes_findings`): the severities, the
        Findings column and its tooltips change; rows, sort order, filter and selection stay."""
        self._engine = engine
        self._cols = columns
        self._severity = columns.severity
        self._tooltips = columns.tooltips
        self._text[COLUMN["findings"]] = columns.text.get("findings", self._text[COLUMN["findings"]])
        for i, c in enumerate(COLUMNS):  # the memory columns come with the diagnosis too
            if c.memory and c.key in columns.memory:
                self._num[i] = columns.memory[c.key]
                self._text[i] = columns.text.get(c.key, self._text[i])
                self._tips[i] = columns.tips.get(c.key, self._text[i])
        self._haystack = columns.haystack
        self._rank.pop(COLUMN["findings"], None)  # a worker making them drops its keys (_text_rank)
        if self._sort_column == COLUMN["findings"]:
            column, order = self._sort_column, self._sort_order
            self._sort_column = -1
            self.sort(column, order)  # by the findings now there
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, self.columnCount() - 1))

    def _build(self, cols: LayerColumns) -> None:
        n = len(cols)
        old = self._cols
        if old is not None and old is not cols:
            # the columns shown before are let go of after this, a few per turn of the event loop
            # (all at once, the strings of 300,000 layers took 45-55 ms of the GUI thread)
            self._dropping += [*old.text.values(), *old.tips.values(), old.tooltips, old.haystack, old.precision,
                               *self._text, *self._tips]
            self._drop_timer.start()
        self._cols = cols
        self.has_times = cols.has_times
        self._severity = cols.severity
        self._tooltips = cols.tooltips
        self._text = [cols.text.get(c.key, [""] * n) for c in COLUMNS]
        self._tips = [cols.tips.get(c.key, self._text[i]) for i, c in enumerate(COLUMNS)]
        self._num = {i: _numbers(cols, c.key, n) for i, c in enumerate(COLUMNS) if c.numeric}
        self._rank = {}
        self._ranking = None
        self._rank_timer.stop()
        self._pending_sort = None
        self._times = cols.num.get("ms", np.full(n, np.nan))
        self._precision = cols.precision
        self._types = cols.types
        self._precisions = cols.precisions
        self._haystack = cols.haystack
        self._sorted = np.arange(n, dtype=np.int64)
        self._order = self._sorted
        self._row_of = self._sorted

    def _drop_step(self) -> None:
        """Let go of the earlier columns for a few ms (see :meth:`_build`), then wait for another turn."""
        start = time.perf_counter()
        while self._dropping and time.perf_counter() - start < RANK_TURN_S:
            self._dropping.pop()
        if self._dropping:
            self._drop_timer.start()

    def _arrange(self) -> None:
        """``_order`` and ``_row_of`` from the sort order and the mask."""
        order = self._sorted if self._mask is None else self._sorted[self._mask[self._sorted]]
        row_of = np.full(len(self._sorted), -1, dtype=np.int64)
        row_of[order] = np.arange(len(order), dtype=np.int64)
        self._order, self._row_of = order, row_of

    def _rearrange(self, change: Any, sort: bool = False) -> None:
        """Apply ``change()`` (new sort order or mask) as a layout change: persistent indexes follow
        their layers; a row filtered out loses its persistent indexes. ``sort``: the rows only
        change order (a vertical sort), so the selection model keeps one index per selected row
        rather than one per cell. The view carries its selection through a filter change itself
        (:meth:`LayerTableView._apply_filter`)."""
        hint = QAbstractItemModel.LayoutChangeHint.VerticalSortHint if sort else \
            QAbstractItemModel.LayoutChangeHint.NoLayoutChangeHint
        self.layoutAboutToBeChanged[_PERSISTENT_LIST, _HINT].emit([], hint)  # type: ignore[index]  # stubs lack overloads
        persistent = self.persistentIndexList()
        old_order = self._order
        # (layer position, column) of each persistent index; position -1 for one past the rows
        held = [(int(old_order[p.row()]) if 0 <= p.row() < len(old_order) else -1, p.column()) for p in persistent]
        change()
        self._arrange()
        new_idx = []
        for pos, col in held:
            row = int(self._row_of[pos]) if pos >= 0 else -1
            new_idx.append(self.createIndex(row, col) if row >= 0 else QModelIndex())
        self.changePersistentIndexList(persistent, new_idx)
        self.layoutChanged[_PERSISTENT_LIST, _HINT].emit([], hint)  # type: ignore[index]

    def _text_rank(self, column: int) -> np.ndarray | None:
        """Each layer's rank by the column's lower-case text (equal texts, equal ranks), made on a
        column's first sort; above ``RANKED_IN_STEPS_ROWS`` layers (0.15-0.3 s at 300,000 layers)
        in steps of a few ms on the GUI thread, one per turn of its event loop (see
        :func:`text_rank`), and None until they are made (the sort follows then)."""
        rank = self._rank.get(column)
        if rank is not None:
            return rank
        texts = self._text[column]
        if len(texts) <= RANKED_IN_STEPS_ROWS:
            rank = self._rank[column] = text_rank(texts)
            return rank
        if self._ranking is None or self._ranking[0] != column:
            self._ranking = (column, texts, text_rank_steps(texts))  # (another column's steps dropped)
            self._rank_timer.start()
        return None

    def _rank_step(self) -> None:
        """One step of the ranks being made (:meth:`_text_rank`); the sort waiting for them when
        they are made."""
        if self._ranking is None:
            return
        column, texts, steps = self._ranking
        if texts is not self._text[column]:  # the findings came meanwhile (set_findings)
            texts = self._text[column]
            self._ranking = (column, texts, text_rank_steps(texts))
            steps = self._ranking[2]
        start = time.perf_counter()
        try:
            next(steps)
            while time.perf_counter() - start < RANK_TURN_S:
                next(steps)
        except StopIteration as done:
            self._ranking = None
            self._rank[column] = done.value
            pending = self._pending_sort
            if pending is not None and pending[0] == column:
                self._pending_sort = None
                self.sort(*pending)
            return
        self._rank_timer.start()

    def sort_pending(self) -> bool:
        """A sort waits for its column's keys (made in steps between events, ``text_rank_steps``)."""
        return self._pending_sort is not None

    # -- queries used by the view -----------------------------------------------------------
    def layer_count(self) -> int:
        return len(self._sorted)

    def set_selection_colors(self, background: QColor, text: QColor) -> None:
        """How a selected row is painted (the view's palette: Highlight, HighlightedText)."""
        self._selected_brushes = (QBrush(background), QBrush(text))

    def engine(self) -> EngineInfo | None:
        """The engine shown, or None."""
        return self._engine

    def position(self, row: int) -> int:
        """The position in ``engine.layers`` of model row ``row``."""
        return int(self._order[row])

    def row_of_position(self, pos: int) -> int:
        """The model row showing ``engine.layers[pos]``; -1 where the filter hides it."""
        return int(self._row_of[pos])

    def rows_of_positions(self, positions: np.ndarray, keep_order: bool = False) -> np.ndarray:
        """The rows showing these layer positions: sorted, those filtered out dropped; or, with
        ``keep_order``, one per position in its order, -1 where filtered out."""
        rows = self._row_of[positions] if len(positions) else np.empty(0, dtype=np.int64)
        return rows if keep_order else np.sort(rows[rows >= 0])

    def positions_of_layers(self, indices: Sequence[int]) -> np.ndarray:
        """The positions of the layers whose ``Layer.index`` is among ``indices``, ascending."""
        if not len(indices):
            return np.empty(0, dtype=np.int64)
        return np.flatnonzero(np.isin(self._num[COLUMN["index"]], np.asarray(indices, dtype=np.float64)))

    def layer_indices(self, positions: np.ndarray) -> np.ndarray:
        """``Layer.index`` of the layers at these positions."""
        return self._num[COLUMN["index"]][positions].astype(np.int64) if len(positions) else np.empty(0, np.int64)

    def positions(self) -> np.ndarray:
        """The layer positions shown, one per row, top to bottom."""
        return self._order

    def mask(self) -> np.ndarray | None:
        """The filter's mask over layer positions (None: every layer shown)."""
        return self._mask

    def shows_same_rows(self, mask: np.ndarray | None) -> bool:
        """Whether ``mask`` keeps exactly the rows shown now (another keystroke of a filter that
        hides nothing more)."""
        if mask is None or self._mask is None:
            return (mask is None or bool(mask.all())) and (self._mask is None or bool(self._mask.all()))
        return bool(np.array_equal(mask, self._mask))

    def set_mask(self, mask: np.ndarray | None) -> None:
        """Show only the layer positions where ``mask`` is True (None: all), in the sort order."""
        if self.shows_same_rows(mask):
            self._mask = mask  # the same rows: no layout change (Qt walks a big selection on one)
            return

        def change() -> None:
            self._mask = mask
        self._rearrange(change)

    def layer_types(self) -> list[str]:
        """Distinct layer types, sorted."""
        return list(self._types)

    def precisions(self) -> list[str]:
        """Distinct layer precisions, sorted."""
        return list(self._precisions)

    def times(self) -> np.ndarray:
        """Per-position time per inference in ms (NaN where unknown)."""
        return self._times

    def has_column(self, column: int) -> bool:
        """Whether column ``column`` has something to show: a time column with a profile, a memory
        column where some layer has the figure, every other column always."""
        c = COLUMNS[column]
        if c.timed:
            return self.has_times
        if c.memory:
            values = self._num.get(column)
            return values is not None and bool(len(values)) and not bool(np.isnan(values).all())
        return True

    def filter_mask(self, text: str = "", layer_type: str = ALL, precision: str = ALL,
                    has_finding: bool = False) -> np.ndarray:
        """Boolean mask over layer positions for the given filter (vectorised)."""
        n = len(self._sorted)
        mask = np.ones(n, dtype=bool)
        if text:
            needle = text.lower()
            mask &= np.fromiter((needle in h for h in self._haystack), dtype=bool, count=n)
        if layer_type != ALL:
            mask &= np.fromiter((t == layer_type for t in self._text[COLUMN["type"]]), dtype=bool, count=n)
        if precision != ALL:
            mask &= np.array(self._precision, dtype=object) == precision
        if has_finding:
            mask &= self._severity > 0
        return mask

    def set_color_mode(self, mode: str) -> None:
        """Row colours by ``"precision"``, ``"severity"`` (of the layer's findings) or ``"none"``."""
        self._color_mode = mode
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, self.columnCount() - 1),
                                  [Qt.ItemDataRole.BackgroundRole])

    def _brush(self, color: str) -> QBrush:
        brush = self._brushes.get(color)
        if brush is None:
            brush = self._brushes[color] = QBrush(QColor(color))
        return brush

    def _background(self, pos: int) -> QBrush | None:
        if self._color_mode == "precision":
            prec = self._precision[pos]
            return self._brush(PRECISION_COLORS.get(prec, OTHER_PRECISION_COLOR)) if prec else None
        if self._color_mode == "severity":
            sev = int(self._severity[pos])
            name = next((k for k, v in SEVERITY_RANK.items() if v == sev), None)
            return self._brush(SEVERITY_COLORS[name]) if name else None
        return None

    # -- Qt model interface ---------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._order)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            if orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
                return COLUMNS[section].header
            if orientation == Qt.Orientation.Vertical:
                return str(section + 1)
        if role == Qt.ItemDataRole.InitialSortOrderRole and orientation == Qt.Orientation.Horizontal:
            return initial_sort_order(0 <= section < len(COLUMNS) and (COLUMNS[section].timed or COLUMNS[section].memory))
        if role == Qt.ItemDataRole.ToolTipRole and orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
            return COLUMNS[section].tip or None
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        if not (0 <= row < len(self._order) and 0 <= col < len(COLUMNS)):
            return None
        pos = int(self._order[row])
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text[col][pos]
        if role == SORT_ROLE:
            if COLUMNS[col].numeric:
                v = float(self._num[col][pos])
                return None if v != v else v
            return self._text[col][pos].lower()
        if role == Qt.ItemDataRole.BackgroundRole:
            if self._selected_brushes is not None and self.selected[pos]:
                return self._selected_brushes[0]
            return self._background(pos)
        if role == Qt.ItemDataRole.ForegroundRole:
            if self._selected_brushes is not None and self.selected[pos]:
                return self._selected_brushes[1]
            return self._brush("#000000") if self._background(pos) is not None else None
        if role == Qt.ItemDataRole.ToolTipRole:
            if COLUMNS[col].key == "findings":
                return self._tooltips[pos] or None
            return self._tips[col][pos] or None
        if role == Qt.ItemDataRole.TextAlignmentRole and COLUMNS[col].numeric:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == LAYER_INDEX_ROLE:
            return int(self._num[COLUMN["index"]][pos])
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort rows by ``column`` with numpy (stable; numbers numerically; unknown values last)."""
        n = len(self._sorted)
        if not 0 <= column < len(COLUMNS) or n == 0:
            return
        if column == self._sort_column and order == self._sort_order:
            return  # QTableView.sortByColumn asks twice (its header's signal, then itself)
        descending = order == Qt.SortOrder.DescendingOrder
        numeric = COLUMNS[column].numeric
        keys = self._num[column] if numeric else self._text_rank(column)
        if keys is None:
            self._pending_sort = (column, order)  # the header shows it already; the rows follow
            return
        self._pending_sort = None
        if self._ranking is not None and self._ranking[0] != column:
            self._ranking = None  # ranks no sort waits for (made again on that column's first sort)
            self._rank_timer.stop()
        new = sort_order(keys, descending, ranks=not numeric)

        def change() -> None:
            self._sorted = new

        self._rearrange(change, sort=True)  # the selection is by layer: a sort leaves it as it is
        self._sort_column, self._sort_order = column, order


def add_selection_actions(menu: QMenu, layers: list[int], compare: Callable[[list[int]], bool] | None,
                          export: Callable[[list[int]], None] | None, with_compare: bool = True) -> None:
    """The row menus' Compare and Export: ``compare(layers)`` selects their counterpart in the
    Compare dock (disabled, saying why, where no comparison is open); ``export(layers)`` writes a
    report of those layers (a file dialog first)."""
    menu.addSeparator()
    act = menu.addAction("Compare: select in the Compare dock")
    act.setVisible(with_compare)
    if compare is None:
        act.setEnabled(False)
        act.setToolTip("no comparison open (Engine > Compare with...)")
        act.setText("Compare: select in the Compare dock (none open)")
    else:
        act.triggered.connect(lambda: compare(layers))
    exp = menu.addAction(f"Export report of the selection ({len(layers)} layer{'s' if len(layers) != 1 else ''})...")
    exp.setEnabled(export is not None and bool(layers))
    if export is not None:
        exp.triggered.connect(lambda: export(layers))


class _LayerRows(RowsTable):
    """The layer table's view: ``clearSelection`` goes to the selection model's own (Qt's skips
    a selection model whose range store is empty, as a :class:`MaskSelection`'s always is).
    Its row menu adds Compare and Export (:func:`add_selection_actions`) through ``compare_layers``
    (set by the Compare dock while a comparison is open) and ``export_layers`` (the window's)."""

    compare_layers: Callable[[list[int]], bool] | None = None
    export_layers: Callable[[list[int]], None] | None = None
    selected_layers: Callable[[], list[int]] | None = None

    def row_menu(self, row: int) -> QMenu:
        menu = super().row_menu(row)
        layers = self.selected_layers() if self.selected_layers is not None else []
        add_selection_actions(menu, layers, self.compare_layers, self.export_layers)
        return menu

    def clearSelection(self) -> None:  # noqa: N802 - Qt's name
        self.selectionModel().clearSelection()

    def selected_rows(self) -> list[int]:
        """The rows of the layers selected (the mask's), top to bottom."""
        sm, model = self.selectionModel(), self.model()
        if isinstance(sm, MaskSelection) and isinstance(model, LayerTableModel):
            return [int(r) for r in np.sort(model.rows_of_positions(sm.positions()))]
        return super().selected_rows()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt override
        sm = self.selectionModel()
        if isinstance(sm, MaskSelection):
            sm.show_qt_row(self.indexAt(event.position().toPoint()))
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt override
        super().mouseReleaseEvent(event)
        sm = self.selectionModel()
        if isinstance(sm, MaskSelection):
            sm.show_qt_row(QModelIndex())


BANNER_STYLE = {  # the warnings banner: amber on light, dark amber on dark (both >= 4.5:1)
    False: "QLabel { background: #fff3cd; color: #664d03; border: 1px solid #e0c87a; padding: 4px; }",
    True: "QLabel { background: #3d3000; color: #ffe08a; border: 1px solid #7a6520; padding: 4px; }",
}


class LayerTableView(QWidget):
    """The layer table with its filter bar, colour legend, warnings banner and totals line.

    ``sig_layers_selected(list[int])`` carries the ``Layer.index`` of the rows the user selected;
    :meth:`select_layers` selects rows from code without emitting it.
    """

    sig_layers_selected = Signal(object)  # list[int]; object: PySide copies a list (50,000 layers: 70 ms)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = LayerTableModel(self)
        self._quiet = False

        self.banner = QLabel()
        self.banner.setWordWrap(True)
        self.banner.hide()

        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter name, type, tactic, ONNX nodes…")
        self.filter_edit.setClearButtonEnabled(True)
        self.type_combo = QComboBox()
        self.type_combo.setToolTip("Layer type")
        self.precision_combo = QComboBox()
        self.precision_combo.setToolTip("Layer precision")
        self.finding_check = QCheckBox("Has finding")
        self.color_combo = QComboBox()
        self.color_combo.addItem("Colour: precision", "precision")
        self.color_combo.addItem("Colour: finding severity", "severity")
        self.color_combo.addItem("Colour: none", "none")

        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.filter_edit, 3)
        bar.addWidget(self.type_combo, 1)
        bar.addWidget(self.precision_combo, 1)
        bar.addWidget(self.finding_check)
        bar.addWidget(self.color_combo)

        self.legend = QWidget()
        self._legend_layout = QHBoxLayout(self.legend)
        self._legend_layout.setContentsMargins(0, 0, 0, 0)
        self._legend_layout.setSpacing(4)

        self.table = _LayerRows()
        self.table.setModel(self.model)
        self.table.row_name = lambda row: self._layer(row).name
        self.table.row_json = lambda row: self._layer(row).to_json()
        self.table.show_in_graph = lambda _row: self.sig_layers_selected.emit(self.selected_layers())
        self.table.selected_layers = self.selected_layers
        self.selection = MaskSelection(self.model, self.table)
        self.table.setSelectionModel(self.selection)
        self.selection.on_change = self._on_selection_changed
        self._restyle()
        self.table.setSortingEnabled(True)
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        rows_only_header(self.table)  # Ctrl+A at 50,000 layers: 1.1 s of header paint without it
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self._set_default_widths()

        self.totals = QLabel()

        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.banner)
        lay.addLayout(bar)
        lay.addWidget(self.legend)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.totals)

        self.filter_edit.textChanged.connect(self._on_filter_changed)
        self.type_combo.currentIndexChanged.connect(self._on_filter_changed)
        self.precision_combo.currentIndexChanged.connect(self._on_filter_changed)
        self.finding_check.toggled.connect(self._on_filter_changed)
        self.color_combo.currentIndexChanged.connect(self._on_color_changed)
        self._fill_combos()
        self._update_legend()
        self._update_totals()

    def _set_default_widths(self) -> None:
        widths = {"index": 48, "name": 300, "type": 120, "parameter_type": 100, "precision_in": 64,
                  "precision_out": 64, "in_formats": 160, "out_formats": 160, "in_shapes": 110,
                  "out_shapes": 110, "tactic": 220, "stream": 56, "nodes": 200, "ms": 96, "total_ms": 124,
                  "average_ms": 72, "median_ms": 72, "percent": 72, "findings": 160, "activation_bytes": 96,
                  "weight_bytes": 84, "scratch_bytes": 84, "device_persistent_bytes": 112,
                  "host_persistent_bytes": 104}
        for i, c in enumerate(COLUMNS):
            self.table.setColumnWidth(i, widths.get(c.key, 100))

    # -- public API ---------------------------------------------------------------------------
    def set_engine(self, engine: EngineInfo | None, columns: LayerColumns | None = None) -> None:
        """Show ``engine`` (replaces the model's contents; filters keep their text); ``columns``: its
        cells computed off the GUI thread (see ``engine.analysis``)."""
        if columns is not None and self.model.takes_findings(columns):
            self._set_findings(engine, columns)
            return
        self._quiet = True
        try:
            self.model.set_engine(engine, columns)
            self.selection.resize()
            self.table.viewport().update()
            self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
            self._hide_empty_columns()
            self._fill_combos()
            warnings = list(engine.warnings) if engine else []
            self.banner.setText("\n".join(f"⚠ {w}" for w in warnings))
            self.banner.setVisible(bool(warnings))
            self._apply_filter()
            self._update_legend()
        finally:
            self._quiet = False

    def _set_findings(self, engine: EngineInfo | None, columns: LayerColumns) -> None:
        """The diagnosis of the engine shown: its findings go into the rows as they are (sorted,
        filtered, selected); a "Has finding" filter is applied again."""
        self._quiet = True
        try:
            self.model.set_findings(engine, columns)
            self._hide_empty_columns()
            if self.finding_check.isChecked():
                self._apply_filter()
            self.table.viewport().update()
        finally:
            self._quiet = False

    def engine(self) -> EngineInfo | None:
        """The engine shown, or None."""
        return self.model.engine()

    def _hide_empty_columns(self) -> None:
        """The time columns without a profile and the memory columns no layer has a figure for are hidden."""
        for i in range(len(COLUMNS)):
            self.table.setColumnHidden(i, not self.model.has_column(i))

    def select_layers(self, indices: list[int]) -> None:
        """Select the rows of these ``Layer.index`` values and scroll to the first; emits nothing."""
        engine = self.model.engine()
        if engine is None:
            return
        positions = self.model.positions_of_layers(indices)
        self._quiet = True
        try:
            rows = self._select_positions(positions, clear=True)
            if len(rows):
                first = self.model.index(int(rows[0]), 0)
                self.table.selectionModel().setCurrentIndex(first, QItemSelectionModel.SelectionFlag.NoUpdate)
                self.table.scrollTo(first, QAbstractItemView.ScrollHint.PositionAtCenter)
        finally:
            self._quiet = False

    def _select_positions(self, positions: np.ndarray, clear: bool) -> np.ndarray:
        """Select the layers at these positions that the filter shows; returns their rows, sorted.
        Emits nothing itself: the caller holds ``_quiet``."""
        rows = self.model.rows_of_positions(positions)
        self.selection.select_positions(self.model.positions()[rows], clear)
        return rows

    def _selected_positions(self) -> np.ndarray:
        """The layer positions of the selected rows, in row order."""
        return self.selection.positions(row_order=True)

    def _restyle(self) -> None:
        """Colours taken from the palette: a selected row's (Highlight, HighlightedText), painted by
        the model itself, and the banner's for a light or dark window."""
        pal = self.table.palette()
        self.model.set_selection_colors(pal.color(pal.ColorRole.Highlight), pal.color(pal.ColorRole.HighlightedText))
        self.banner.setStyleSheet(BANNER_STYLE[pal.color(pal.ColorRole.Base).lightness() < 128])
        self.table.viewport().update()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        """A theme switch (the application's palette changed) repaints the selection and banner."""
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            QTimer.singleShot(0, self, self._restyle)  # once the table's own palette has changed too
        super().changeEvent(event)

    def _layer(self, row: int) -> Any:
        engine = self.model.engine()
        assert engine is not None
        return engine.layers[self.model.position(row)]

    def selected_layers(self) -> list[int]:
        """``Layer.index`` of the selected rows, in row order (from the selection's mask)."""
        return self.model.layer_indices(self._selected_positions()).tolist()

    def visible_positions(self) -> list[int]:
        """Positions in ``engine.layers`` of the rows shown, top to bottom."""
        return self.model.positions().tolist()

    # -- slots ----------------------------------------------------------------------------------
    def _fill_combos(self) -> None:
        for combo, values, label in ((self.type_combo, self.model.layer_types(), "All types"),
                                     (self.precision_combo, self.model.precisions(), "All precisions")):
            current = combo.currentData()
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(label, ALL)
            for v in values:
                combo.addItem(v, v)
            i = combo.findData(current) if current is not None else 0
            combo.setCurrentIndex(max(i, 0))
            combo.blockSignals(False)

    @Slot()
    def _on_filter_changed(self) -> None:
        self._apply_filter()

    def _apply_filter(self) -> None:
        text = self.filter_edit.text().strip()
        ltype = self.type_combo.currentData() or ALL
        prec = self.precision_combo.currentData() or ALL
        has = self.finding_check.isChecked()
        mask = None if not text and ltype == ALL and prec == ALL and not has else \
            self.model.filter_mask(text, ltype, prec, has)
        if self.model.shows_same_rows(mask):
            self.model.set_mask(mask)
            self._update_totals()
            return
        # The selection is by layer: the layers the filter hides leave it (and the graph hears of it)
        sm = self.table.selectionModel()
        current = self.table.currentIndex()
        old_order = self.model.positions()
        cur_row, cur_col = (current.row(), current.column()) if current.isValid() else (-1, 0)
        was_quiet, self._quiet = self._quiet, True
        try:
            self.model.set_mask(mask)
            dropped = self.selection.keep(mask)
            if 0 <= cur_row < len(old_order):
                row = self._nearest_shown_row(old_order, cur_row)
                if row >= 0:
                    sm.setCurrentIndex(self.model.index(row, cur_col), QItemSelectionModel.SelectionFlag.NoUpdate)
        finally:
            self._quiet = was_quiet
        if dropped and not was_quiet:
            self.sig_layers_selected.emit(self.selected_layers())
        self._update_totals()

    def _nearest_shown_row(self, old_order: np.ndarray, old_row: int) -> int:
        """The row now showing the layer at ``old_row`` of ``old_order``, else the next layer below
        it that is still shown, else the one above; -1 when no row is shown."""
        shown = self.model.rows_of_positions(old_order, keep_order=True)
        below = np.flatnonzero(shown[old_row:] >= 0)
        if len(below):
            return int(shown[old_row + below[0]])
        above = np.flatnonzero(shown[:old_row] >= 0)
        return int(shown[above[-1]]) if len(above) else -1

    @Slot()
    def _on_color_changed(self) -> None:
        self.model.set_color_mode(self.color_combo.currentData())
        self._update_legend()

    def _update_legend(self) -> None:
        while self._legend_layout.count():
            item = self._legend_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        mode = self.color_combo.currentData()
        entries: list[tuple[str, str]] = []
        if mode == "precision":
            present = self.model.precisions()
            entries = [(p, PRECISION_COLORS.get(p, OTHER_PRECISION_COLOR)) for p in present]
        elif mode == "severity":
            entries = [(s, SEVERITY_COLORS[s]) for s in ("error", "warning", "info")]
        for name, color in entries:
            chip = QLabel(f" {name} ")
            chip.setStyleSheet(f"QLabel {{ background: {color}; color: black; border: 1px solid #999; "
                               "border-radius: 3px; padding: 0px 4px; }")
            self._legend_layout.addWidget(chip)
        self._legend_layout.addStretch(1)
        self.legend.setVisible(bool(entries))

    def _update_totals(self) -> None:
        engine = self.model.engine()
        total_layers = len(engine.layers) if engine else 0
        shown = self.model.rowCount()
        text = f"{shown} layers shown of {total_layers}"
        if self.model.has_times:
            times = self.model.times()
            mask = self.model.mask()
            all_ms = float(np.nansum(times))
            shown_ms = float(np.nansum(times[mask])) if mask is not None else all_ms
            pct = shown_ms / all_ms * 100.0 if all_ms > 0 else 0.0
            text += f"  ·  {shown_ms:.4g} ms per inference  ·  {pct:.1f} % of engine ({all_ms:.4g} ms per inference)"
        self.totals.setText(text)

    def _on_selection_changed(self) -> None:
        self.table.viewport().update()  # the rows in view, painted from the mask
        if not self._quiet:
            self.sig_layers_selected.emit(self.selected_layers())
