"""Engine > Compare with...: a second engine beside the open one, aligned layer group by group.

The open engine is the base: its :class:`~trtstudio.diff.sides.Side` is made from the workspace's
engine (the analysis's copy, its layers carrying their ONNX nodes) and its per-inference times
(``EngineInfo.samples_ms``, as ``diff.sides.load_side`` takes them); the other side is read by
``load_side`` (engine files, a folder, a session). One loader worker reads it, runs
``diff.core.diff_sides`` and lays out the other engine's graph (and the base's, when the window
has not yet); the colours of every view for the two change colourings are made there too.

The window shows: a "Compare" dock (the story, the aligned groups in a sortable table with the
change in colour and a filter by change), a tab with both engines' graphs side by side, and the
Colour by modes ``Change`` and ``Change: time`` on the model's graph, the engine's graph and the
two side-by-side views, each with its legend. A row selects its layers in the open engine's table,
its ONNX nodes on the model's graph, its layers on the engine's graph and both sides' layers in
the side-by-side views; a node clicked in either of those selects its group's row.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import (
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPointF,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from trtstudio.diff.render import CHANGE_COLOURS
from trtstudio.graph.display import DisplayGraph
from trtstudio.palette import NO_LAYER_COLOR, SEVERITY_COLORS, UNMEASURED_COLOR, tint
from trtstudio.ui.engine_graph import build_engine_graph, engine_label, paint_layers, show_layer_properties
from trtstudio.ui.graph_view import GraphView
from trtstudio.ui.rows_model import RowsModel
from trtstudio.ui.tables import RowsTable

CHANGE_MODES = ("Change", "Change: time")
CHANGE_TEXT = {"same": "same", "precision": "precision changed", "tactic": "kernel (tactic) changed",
               "format": "reformat added or removed", "fused": "fused differently", "only_base": "only in base",
               "only_other": "only in other"}
# time classes of a group: its delta against the larger of its two times
SAME_TIME_PERCENT = 5.0
TIME_COLOURS = {"much faster": "#1b7837", "faster": "#7fbf7b", "about the same": "#d9d9d9", "slower": "#ef8a62",
                "much slower": "#b2182b", "not timed": UNMEASURED_COLOR}
# the delta columns' text: green faster, red slower, on the table's light or dark base (>= 4.5:1 both)
DELTA_COLOURS = {False: {"faster": "#1b7837", "slower": "#b2182b", "same": "#555555"},
                 True: {"faster": "#7fd67f", "slower": "#ff8a80", "same": "#b0b0b0"}}
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
COLUMNS = ("Change", "Base layers", "Base precision", "Base ms", "Other layers", "Other precision", "Other ms",
           "Δ ms", "Δ %", "Matched by / reason")


_NOT_COMPUTE = re.compile(r"(\.(weight|bias)(_quant(ized)?)?$)|^(Quantize|Dequantize)Linear(_\d+)?$")


def layer_display_name(name: str) -> str:
    """A layer's name as the table shows it: a fused name without the parts that are weights or
    Q/DQ nodes (``layer1.0.conv1.weight + QuantizeLinear_20 + Conv_22`` -> ``Conv_22``), so the
    convolution shows where QAT exports fold their weights in; the name as it is when nothing else
    is left. The tooltip keeps the whole name."""
    parts = name.split(" + ")
    kept = [p for p in parts if not _NOT_COMPUTE.search(p)]
    return " + ".join(kept) if kept and len(kept) < len(parts) else name


@dataclass
class ShortNamesDisplay(DisplayGraph):
    """A layer graph whose nodes' second line is :func:`layer_display_name` of the layer (the
    convolution, not the weights and Q/DQ nodes folded into its name); the tooltip keeps the name."""

    full: list[str] = field(default_factory=list)  # each item's second line as the layer graph had it

    def sublabel_full(self, i: int) -> str:
        return self.full[i] if int(self.kind[i]) == 1 and i < len(self.full) else super().sublabel_full(i)


def short_names(dg: Any) -> Any:
    """``dg`` (a layer graph's display) with its nodes' second lines shortened (a shallow copy: the
    layout and graph are shared, so the window's engine graph keeps its own labels)."""
    if dg is None:
        return None
    out = copy.copy(dg)
    out.__class__ = ShortNamesDisplay
    out.full = list(dg.sublabels)
    out.sublabels = [layer_display_name(t) if int(k) == 1 else t for t, k in zip(dg.sublabels, dg.kind, strict=True)]
    return out


def time_class(g: dict[str, Any], largest: float) -> str:
    """``g``'s time change: faster/slower (``much`` when at least half the ``largest`` |delta|),
    ``about the same`` within ``SAME_TIME_PERCENT`` of its time, ``not timed``."""
    d = g["delta_ms"]
    if d is None:
        return "not timed"
    ref = max(g["base_ms"] or 0.0, g["other_ms"] or 0.0)
    if ref <= 0 or abs(d) < ref * SAME_TIME_PERCENT / 100:
        return "about the same"
    much = largest > 0 and abs(d) >= largest / 2
    return ("much " if much else "") + ("faster" if d < 0 else "slower")


def group_colours(groups: list[dict[str, Any]], mode: str) -> tuple[list[str], list[tuple[str, str]]]:
    """One colour per group for ``mode`` (one of :data:`CHANGE_MODES`) and the legend of those in use."""
    if mode == "Change":
        colours = [CHANGE_COLOURS.get(g["change"], "#666") for g in groups]
        used = {g["change"] for g in groups}
        return colours, [(CHANGE_TEXT[k], CHANGE_COLOURS[k]) for k in CHANGE_TEXT if k in used]
    largest = max((abs(g["delta_ms"]) for g in groups if g["delta_ms"] is not None), default=0.0)
    classes = [time_class(g, largest) for g in groups]
    used = set(classes)
    legend = [(f"{k} ({'< ' if k == 'about the same' else ''}{SAME_TIME_PERCENT:g} %)" if k == "about the same" else k,
               c) for k, c in TIME_COLOURS.items() if k in used]
    return [TIME_COLOURS[c] for c in classes], legend


def _per_layer(groups: list[dict[str, Any]], colours: list[str], key: str, n: int) -> list[str]:
    out = np.full(n, NO_LAYER_COLOR, dtype=object)
    for g, c in zip(groups, colours, strict=True):
        idx = g[key]
        if idx:
            out[np.asarray(idx, dtype=np.int64)] = c
    return out.tolist()  # type: ignore[no-any-return]


def node_colours(groups: list[dict[str, Any]], model: Any) -> dict[str, tuple[list[str], list[bool], list[tuple[str, str]]]]:
    """Per change mode: the colour of each node of ``model`` (an ONNX model: the colour of the group
    whose ONNX nodes it is among), whether no group has it, and the legend ({} without a model)."""
    out: dict[str, tuple[list[str], list[bool], list[tuple[str, str]]]] = {}
    if model is None:
        return out
    for mode in CHANGE_MODES:
        colours, legend = group_colours(groups, mode)
        of = {n: col for g, col in zip(groups, colours, strict=True) for n in g["onnx_nodes"]}
        nodes = model.graph.nodes
        out[mode] = ([of.get(n.name, NO_LAYER_COLOR) for n in nodes], [n.name not in of for n in nodes],
                     [*legend, ("no engine layer", NO_LAYER_COLOR)])
    return out


def _group_of(groups: list[dict[str, Any]], key: str, n: int) -> np.ndarray:
    """The group row of each layer of one side (-1: in none)."""
    out = np.full(n, -1, dtype=np.int64)
    for row, g in enumerate(groups):
        if g[key]:
            out[np.asarray(g[key], dtype=np.int64)] = row
    return out


@dataclass
class Comparison:
    """What the compare worker made: the diff, both sides' layer graphs, the other side's analysis
    (colours by precision, time, finding in its view), the colours of the change modes per side
    (one per layer) and for the model's graph (one per node, for ``model``), and each layer's group row."""

    pair: Any  # diff.core.PairDiff
    base_engine: Any
    other_model: Any
    other_display: Any
    other_analysis: Any
    base_model: Any = None
    base_display: Any = None
    layer_colours: dict[tuple[str, str], tuple[list[str], list[tuple[str, str]]]] = field(default_factory=dict)
    node_colours: dict[str, tuple[list[str], list[bool], list[tuple[str, str]]]] = field(default_factory=dict)
    model: Any = None  # the ONNX model node_colours are for
    base_group: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    other_group: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    for_engine: Any = None  # the Workspace.engine (as read) that was the base


def base_side(engine: Any, paths: list[str], model_path: str | None) -> Any:
    """The open engine as a diff's base side: its layers (with their ONNX nodes), files, model and
    per-inference times, as ``diff.sides.load_side`` takes them from the files."""
    from trtstudio.diff.sides import Side, engine_samples

    side = Side(engine_label(paths), engine, list(paths), model_path)
    side.samples, side.metric = engine_samples(engine)
    return side


def _folder_name(paths: list[str]) -> str | None:
    if not paths:
        return None
    p = Path(paths[0])
    return p.name if p.is_dir() else p.parent.name or None


def compare(base: Any, other_spec: str, model: Any, base_graph: tuple[Any, Any] | None) -> Comparison:
    """Read the other side (``other_spec``: files joined with commas, a folder, a session), diff it
    against ``base`` and make what the window shows (see :class:`Comparison`); ``model``: the ONNX
    model open (its nodes coloured by change), ``base_graph``: the base's layer model and display
    when the window has them."""
    from trtstudio.diff.core import diff_sides
    from trtstudio.diff.sides import load_side
    from trtstudio.engine.analysis import analyze

    other = load_side(other_spec)
    if os.path.isdir(other_spec) and _folder_name(base.paths):  # a folder each, named by it (fp32, fp16)
        base.name = _folder_name(base.paths) or base.name
    if other.name == base.name:  # two builds of one model: their folders tell them apart
        b, o = _folder_name(base.paths), _folder_name(other.paths)
        if b and o and b != o:
            base.name, other.name = b, o
        else:
            other.name = f"{other.name} (other)"
    pair = diff_sides(base, other)
    other_model, other_display = build_engine_graph(other.engine, other.paths[0] if other.paths else None)
    c = Comparison(pair, base.engine, other_model, other_display, analyze(other.engine, None, columns=True))
    if base_graph is None:
        c.base_model, c.base_display = build_engine_graph(base.engine, base.paths[0] if base.paths else None)
    else:
        c.base_model, c.base_display = base_graph
    groups = pair.groups
    nb, no = len(base.engine.layers), len(other.engine.layers)
    for mode in CHANGE_MODES:
        colours, legend = group_colours(groups, mode)
        c.layer_colours[(mode, "base")] = (_per_layer(groups, colours, "base_index", nb), legend)
        c.layer_colours[(mode, "other")] = (_per_layer(groups, colours, "other_index", no), legend)
    c.node_colours, c.model = node_colours(groups, model), model
    c.base_group, c.other_group = _group_of(groups, "base_index", nb), _group_of(groups, "other_index", no)
    return c


class GroupsModel(RowsModel):
    """The aligned groups of a PairDiff, one per row (see :data:`COLUMNS`)."""

    COLUMNS = COLUMNS
    DESCENDING_FIRST = frozenset({3, 6, 7, 8})  # the time columns: the slowest (or most slowed) first

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._largest = 0.0

    @property
    def groups(self) -> list[dict[str, Any]]:
        return self.rows

    def set_groups(self, groups: list[dict[str, Any]]) -> None:
        self._largest = max((abs(g["delta_ms"]) for g in groups if g["delta_ms"] is not None), default=0.0)
        self.replace(groups)

    @staticmethod
    def _percent(g: dict[str, Any]) -> float | None:
        d, b = g["delta_ms"], g["base_ms"]
        return None if d is None or not b else d / b * 100

    def _value(self, g: dict[str, Any], col: int) -> Any:
        return (g["change"], g["base_layers"], g["base_precision"], g["base_ms"], g["other_layers"],
                g["other_precision"], g["other_ms"], g["delta_ms"], self._percent(g),
                g["matched_by"] if g["base_layers"] and g["other_layers"] else (g["reason"] or g["matched_by"] or ""))[col]

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        g, col = self.groups[index.row()], index.column()
        v = self._value(g, col)
        if role == Qt.ItemDataRole.DisplayRole:
            if isinstance(v, list):
                shown = [layer_display_name(n) for n in v[:3]]
                return " | ".join(shown) + (f" (+{len(v) - 3})" if len(v) > 3 else "") if v else "-"
            if col in (3, 6):
                return "-" if v is None else f"{v:.3g}"
            if col == 7:
                return "-" if v is None else "0" if v == 0 else f"{v:+.3g}"
            if col == 8:
                return "-" if v is None else f"{v:+.0f} %"
            return CHANGE_TEXT.get(v, v) if col == 0 else v
        if role == SORT_ROLE:
            if isinstance(v, list):
                return " | ".join(v)
            return v if v is not None else float("nan") if col in (3, 6, 7, 8) else ""
        if role == Qt.ItemDataRole.BackgroundRole and col == 0:
            return QColor(tint(CHANGE_COLOURS.get(g["change"], "#666"), 0.55))
        if role == Qt.ItemDataRole.ForegroundRole and col == 0:  # on its light tint, in either theme
            return QColor("#000000")
        if role == Qt.ItemDataRole.ForegroundRole and col in (7, 8):
            cls = time_class(g, self._largest)
            dark = QApplication.palette().color(QPalette.ColorRole.Base).lightness() < 128  # the theme now
            return QColor(DELTA_COLOURS[dark]["faster" if "faster" in cls else "slower" if "slower" in cls else "same"])
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = [f"{CHANGE_TEXT.get(g['change'], g['change'])}"
                     + (f" (matched by {g['matched_by']})" if g["matched_by"] else "")]
            lines += [f"base: {', '.join(g['base_layers']) or '-'}", f"other: {', '.join(g['other_layers']) or '-'}"]
            if g["onnx_nodes"]:
                lines.append(f"ONNX nodes: {', '.join(g['onnx_nodes'][:8])}" + (" ..." if len(g["onnx_nodes"]) > 8 else ""))
            if g["reason"]:
                lines.append(f"reason: {g['reason']}")
            return "\n".join(lines)
        return None


class GroupsFilter(QSortFilterProxyModel):
    """Sorts by :data:`SORT_ROLE`; keeps the groups of one change (``wanted``: a change label,
    ``changed``, ``faster``, ``slower`` or None for all)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.wanted: str | None = None
        self.setSortRole(SORT_ROLE)

    def set_wanted(self, wanted: str | None) -> None:
        self.beginFilterChange()
        self.wanted = wanted
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:  # noqa: N802
        src = self.sourceModel()
        if self.wanted is None or not isinstance(src, GroupsModel):
            return True
        g = src.groups[row]
        if self.wanted == "changed":
            return bool(g["change"] != "same")
        if self.wanted in ("faster", "slower"):
            return self.wanted in time_class(g, src._largest)
        return bool(g["change"] == self.wanted)

    def lessThan(self, left: QModelIndex | QPersistentModelIndex, right: QModelIndex | QPersistentModelIndex) -> bool:  # noqa: N802
        a, b = left.data(SORT_ROLE), right.data(SORT_ROLE)
        if isinstance(a, float) and isinstance(b, float):
            if np.isnan(a) or np.isnan(b):  # unknown times last, whichever way
                return bool(np.isnan(b) and not np.isnan(a)) == (self.sortOrder() == Qt.SortOrder.AscendingOrder)
            return a < b
        return str(a) < str(b)


def scrolling_body(owner: QWidget, margin: int) -> QVBoxLayout:
    """The layout of ``owner``'s content, inside a frameless scroll area that fills ``owner``: in a
    short dock the content scrolls instead of being squeezed (a warning line drawn over the story)."""
    body = QWidget()
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setWidget(body)
    outer = QVBoxLayout(owner)
    outer.setContentsMargins(0, 0, 0, 0)
    outer.addWidget(scroll)
    lay = QVBoxLayout(body)
    lay.setContentsMargins(margin, margin, margin, margin)
    return lay


class WarningLine(QLabel):
    """A visible line above a story: why the two sides may not belong together (``diff.mismatch``
    sentences: different models, GPUs, TensorRT, too few layers aligned); hidden when there are none."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setStyleSheet(f"QLabel {{ background: {tint(SEVERITY_COLORS['warning'], 0.8)}; color: #000; "
                           f"border-left: 4px solid {SEVERITY_COLORS['warning']}; padding: 4px; }}")
        self.warnings: list[str] = []
        self.hide()

    def set_warnings(self, warnings: list[str]) -> None:
        """Show ``warnings`` (one line each), or hide when there are none."""
        self.warnings = list(warnings)
        self.setText("<br>".join(f"<b>Warning:</b> {_html(w)}" for w in self.warnings))
        self.setVisible(bool(self.warnings))
        self._fit()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        """Keep every line readable: a small dock squeezed a wrapped label to two of its lines (a
        heightForWidth policy instead made the main window narrow its side docks)."""
        want = self.heightForWidth(max(self.width(), 200)) if self.warnings else 0
        if want != self.minimumHeight():
            self.setMinimumHeight(max(want, 0))


class _GroupRows(RowsTable):
    """The groups' table: its row menu adds Export, a report of the selected group's base layers
    (``export_layers``, set by the window)."""

    export_layers: Any = None
    group_layers: Any = None  # view row -> the group's base layer positions

    def row_menu(self, row: int) -> Any:
        from trtstudio.ui.layer_table import add_selection_actions

        menu = super().row_menu(row)
        layers = list(self.group_layers(row)) if self.group_layers is not None else []
        add_selection_actions(menu, layers, None, self.export_layers, with_compare=False)  # the row is the comparison's
        return menu


class CompareDock(QWidget):
    """The story, the filter and the aligned groups' table; ``sig_group_selected(int)``: the group
    row (in ``PairDiff.groups``) the user picked."""

    sig_group_selected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.warning = WarningLine()
        self.story = QLabel()
        self.story.setWordWrap(True)
        self.story.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.story.setStyleSheet("QLabel { padding: 4px; }")
        # three lines kept for it (a heightForWidth policy here made the main window narrow its side docks)
        self.story.setMinimumHeight(3 * self.story.fontMetrics().lineSpacing() + 8)
        self.story.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.filter = QComboBox()
        self.filter.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.filter.currentIndexChanged.connect(self._on_filter)
        self.count_label = QLabel()
        self.count_label.setMinimumWidth(1)
        self.model = GroupsModel(self)
        self.proxy = GroupsFilter(self)
        self.proxy.setSourceModel(self.model)
        self.table = _GroupRows()
        self.table.setModel(self.proxy)
        self.table.group_layers = lambda row: self._group(row)["base_index"]
        self.table.row_name = lambda row: " + ".join(self._group(row)["base_layers"] or self._group(row)["other_layers"])
        self.table.row_json = self._group
        self.table.show_in_graph = lambda row: self.sig_group_selected.emit(self.proxy.mapToSource(self.proxy.index(row, 0)).row())
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setMinimumHeight(4 * self.table.verticalHeader().defaultSectionSize())
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Show:"))
        bar.addWidget(self.filter)
        bar.addWidget(self.count_label, 1)
        lay = scrolling_body(self, 2)
        lay.addWidget(self.warning)
        lay.addWidget(self.story)
        lay.addLayout(bar)
        lay.addWidget(self.table, 1)
        self._quiet = False

    def show_pair(self, pair: Any) -> None:
        """Fill from a ``diff.core.PairDiff``."""
        s = pair.summary
        head = pair.story[0] if pair.story else ""
        rest = " ".join(pair.story[1:])
        verdict = s.get("verdict", "") + ("" if s.get("reliable", True) else ", unreliable")
        self.warning.set_warnings(pair.warnings)
        self.story.setText(f"<b>{_html(pair.other.name)} against {_html(pair.base.name)} (base): {_html(verdict)}.</b> "
                           f"{_html(head)}<br><span style='color:#666'>{_html(rest)}</span>")
        self.model.set_groups(pair.groups)
        self._quiet = True
        try:
            self.filter.clear()
            counts: dict[str, int] = {}
            for g in pair.groups:
                counts[g["change"]] = counts.get(g["change"], 0) + 1
            changed = sum(n for k, n in counts.items() if k != "same")
            self.filter.addItem(f"All groups ({len(pair.groups)})", None)
            self.filter.addItem(f"Changed ({changed})", "changed")
            self.filter.addItem("Faster", "faster")
            self.filter.addItem("Slower", "slower")
            for k in CHANGE_TEXT:
                if k in counts:
                    self.filter.addItem(f"{CHANGE_TEXT[k]} ({counts[k]})", k)
        finally:
            self._quiet = False
        self.proxy.set_wanted(None)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # layer order, as aligned
        fm = self.table.fontMetrics()
        widths = {0: fm.horizontalAdvance("reformat added or removed") + 16, 1: 260, 4: 260,
                  7: fm.horizontalAdvance("+0.0000") + 16, 8: fm.horizontalAdvance("-100 %") + 16}
        for col, name in enumerate(COLUMNS[:-1]):
            self.table.setColumnWidth(col, widths.get(col, fm.horizontalAdvance(name) + 24))
        self._count()

    def _count(self) -> None:
        self.count_label.setText(f"  {self.proxy.rowCount()} of {self.model.rowCount()} groups shown; "
                                 "click a row to select its layers on both sides")

    def _on_filter(self, _i: int) -> None:
        if not self._quiet:
            self.proxy.set_wanted(self.filter.currentData())
            self._count()

    def set_filter(self, wanted: str | None) -> None:
        """Show only the groups of ``wanted`` (see :class:`GroupsFilter`)."""
        i = self.filter.findData(wanted)
        if i >= 0:
            self.filter.setCurrentIndex(i)

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid() and not self._quiet:
            self.sig_group_selected.emit(self.proxy.mapToSource(current).row())

    def select_group(self, row: int) -> None:
        """Select the group ``row`` (shown by the filter, else the filter is reset) and say so."""
        src = self.model.index(row, 0)
        idx = self.proxy.mapFromSource(src)
        if not idx.isValid():
            self.set_filter(None)
            idx = self.proxy.mapFromSource(src)
        if not idx.isValid():
            return
        if self.table.selectionModel().currentIndex().row() != idx.row():
            self.table.selectRow(idx.row())
        # only brought into view, never centred, and not at all while a button is held: a row the
        # user is clicking is under the pointer already (even half shown at the edge), and a scroll
        # under a held button made Qt's drag-select take the row that came under the pointer
        if QApplication.mouseButtons() == Qt.MouseButton.NoButton:
            self.table.scrollTo(idx, QAbstractItemView.ScrollHint.EnsureVisible)

    def _group(self, row: int) -> dict[str, Any]:
        """The group shown at view ``row``."""
        return self.model.groups[self.proxy.mapToSource(self.proxy.index(row, 0)).row()]

    def clear_selection(self) -> None:
        """No row selected (Esc); the next click on any row selects it."""
        self._quiet = True
        try:
            self.table.clearSelection()
            self.table.selectionModel().setCurrentIndex(QModelIndex(), QItemSelectionModel.SelectionFlag.NoUpdate)
        finally:
            self._quiet = False

    def selected_group(self) -> int | None:
        idx = self.table.selectionModel().currentIndex()
        return self.proxy.mapToSource(idx).row() if idx.isValid() else None


def _html(text: str) -> str:
    from html import escape

    return escape(str(text))


class SideBySide(QSplitter):
    """Both engines' layer graphs, base left, other right, each under its title (in full, wrapped).

    The two views move together: a pan, zoom or fit of one moves the other by as much (same zoom,
    its centre shifted by the same scene distance), so a part of one engine and its counterpart
    stay side by side; a group's selection centres each on its own layers (:meth:`unlinked`)."""

    def __init__(self, controller: CompareController, base_title: str, other_title: str) -> None:
        super().__init__(Qt.Orientation.Horizontal)
        self.controller = controller
        self.base_view, self.other_view = GraphView(), GraphView()
        self._current = self.base_view
        self.titles: list[QLabel] = []
        self._linking = False
        for view, title in ((self.base_view, base_title), (self.other_view, other_title)):
            box = QWidget()
            lay = QVBoxLayout(box)
            lay.setContentsMargins(0, 0, 0, 0)
            label = QLabel(title)
            label.setStyleSheet("QLabel { font-weight: bold; padding: 3px; }")
            label.setToolTip(title)
            label.setWordWrap(True)  # both engines' names in full, on two lines where narrow
            label.setMinimumWidth(1)  # a long title must not widen the centre (the side docks would shrink)
            self.titles.append(label)
            lay.addWidget(label)
            lay.addWidget(view, 1)
            self.addWidget(box)
            view.sig_node_selected.connect(lambda i, v=view: self._on_node(v, i))
        self._seen = {id(v): (v.scale, v.center_scene()) for v in (self.base_view, self.other_view)}
        for v in (self.base_view, self.other_view):
            v.sig_view_moved.connect(lambda v=v: self._on_moved(v))
            v.sig_zoom_changed.connect(lambda _s, v=v: self._on_moved(v))

    def _other(self, view: GraphView) -> GraphView:
        return self.other_view if view is self.base_view else self.base_view

    def _remember(self) -> None:
        for v in (self.base_view, self.other_view):
            self._seen[id(v)] = (v.scale, v.center_scene())

    def _on_moved(self, view: GraphView) -> None:
        if self._linking:
            return
        _s0, c0 = self._seen[id(view)]
        c1 = view.center_scene()
        dst = self._other(view)
        _ds, dc = self._seen[id(dst)]
        self._linking = True
        try:
            dst.set_view(view.scale, QPointF(dc.x() + c1.x() - c0.x(), dc.y() + c1.y() - c0.y()))
        finally:
            self._linking = False
        self._remember()

    @contextmanager
    def unlinked(self) -> Iterator[None]:
        """Moves made inside (each side centred on its own layers) are not copied to the other side."""
        was, self._linking = self._linking, True
        try:
            yield
        finally:
            self._linking = was
            self._remember()

    def fit_both(self) -> None:
        """Fit each side to the pane it has now (once the tab is laid out), at one zoom: the smaller
        of the two fits, so labels read the same size on both sides."""
        with self.unlinked():
            for v in (self.base_view, self.other_view):
                if v.selected:
                    v.center_on(sorted(v.selected), zoom_in=False)
                else:
                    v.fit()
            scale = min(self.base_view.scale, self.other_view.scale)
            for v in (self.base_view, self.other_view):
                v.set_view(scale, v.center_scene())

    def current_view(self) -> GraphView:
        """The side clicked last (the base at first): Fit, zoom and search act on it."""
        return self._current

    def _on_node(self, view: GraphView, display_index: int) -> None:
        self._current = view
        self.controller.on_side_node(view is self.base_view, display_index)

    def on_close(self) -> None:
        self.controller.closed_tab()


class CompareController(QObject):
    """Engine > Compare with...: runs the comparison and links its dock, tab and colours to the
    window (``window``: the MainWindow). ``sig_compared(Comparison)`` once shown."""

    sig_compared = Signal(object)

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.w = window
        self.result: Comparison | None = None
        self.dock_widget = CompareDock()
        self.dock_widget.sig_group_selected.connect(self.select_group)
        self.dock: Any = None
        self.tab: SideBySide | None = None
        self._linking = False
        window.workspace.events.connect("engine", self._on_engine)

    def select_layers_group(self, layers: list[int]) -> bool:
        """A layer row's Compare: the Compare dock's group holding the first of ``layers`` (a base
        layer) selected, with the rest it links; False where no group holds it."""
        c = self.result
        if c is None or not layers:
            return False
        first = int(layers[0])
        row = next((k for k, g in enumerate(c.pair.groups) if first in g["base_index"]), None)
        if row is None:
            return False
        if self.dock is not None:
            self.dock.show()
            self.dock.raise_()
        self.dock_widget.select_group(row)
        self.select_group(row)
        return True

    def _layer_rows(self) -> Any:
        tabs = getattr(self.w, "engine_tabs", None)
        lt = getattr(tabs, "layer_table", None) if tabs is not None else None
        return lt.table if lt is not None else None

    def _on_engine(self, ws: Any) -> None:
        if self.result is not None and ws.engine is not self.result.for_engine:
            self.close()  # another engine opened: it is not the base compared

    # ---- opening ----------------------------------------------------------------------------------
    FILTERS = ("Engine files and sessions (*.json *.log *.txt *.engine *.plan *.profile *.trtstudio);;"
               "trtstudio sessions (*.trtstudio);;All files (*)")

    def open_dialog(self) -> None:
        """Engine > Compare with...: the other engine's files (several, of one engine) or a session."""
        if not self._need_engine():
            return
        paths, _ = QFileDialog.getOpenFileNames(self.w, "Compare with: the other engine's files, or a session",
                                                self.w.prefs.last_dir(), self.FILTERS)
        if paths:
            self.compare_with(paths)

    def open_folder_dialog(self) -> None:
        """Engine > Compare with folder...: a folder of one engine's files (the trtexec/TREx layout)."""
        if not self._need_engine():
            return
        folder = QFileDialog.getExistingDirectory(self.w, "Compare with: a folder of one engine's files",
                                                  self.w.prefs.last_dir())
        if folder:
            self.compare_with([folder])

    def _need_engine(self) -> bool:
        if self.w.workspace.engine is None:
            self.w.sig_error.emit("open an engine first (File > Open engine files), then compare another with it")
            return False
        return True

    def compare_with(self, paths: list[str]) -> None:
        """Compare the open engine (the base) with the engine in ``paths`` (its files, a folder or a
        session), in a loader worker; the dock, the tab and the colours follow."""
        if not self._need_engine():
            return
        ws = self.w.workspace
        paths = [os.fspath(p) for p in paths]
        base = base_side(self.w.engine, list(ws.engine_paths), ws.model_path)
        model = ws.model
        eg = self.w.engine_graph
        base_graph = (eg.model, eg.display) if eg.display is not None else None
        token = ws.token()
        spec = paths[0] if len(paths) == 1 else ",".join(paths)

        def done(c: Comparison) -> None:
            if ws.engine is None or ws.token()[1] != token[1]:
                self.w.statusBar().showMessage("comparison dropped: another engine was opened meanwhile", 8000)
                return
            c.for_engine = ws.engine
            self.show(c)

        self.w.loader.work(f"Comparing with {', '.join(Path(p).name for p in paths)}...",
                           lambda: compare(base, spec, model, base_graph), done, name="compare")

    # ---- showing ----------------------------------------------------------------------------------
    def show(self, c: Comparison) -> None:
        """Show a finished comparison: the dock, the side-by-side tab, the Change colours."""
        from PySide6.QtWidgets import QDockWidget

        w = self.w
        self.close_tab()
        self.result = c
        if self.dock is None:
            self.dock = QDockWidget("Compare", w)
            self.dock.setObjectName("dock_compare")
            self.dock.setWidget(self.dock_widget)
            w.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
            w.tabifyDockWidget(w.engine_dock, self.dock)
        self.dock.show()
        self.dock.raise_()
        pair = c.pair
        self.dock_widget.show_pair(pair)
        prov = pair.to_json()["provenance"]

        def title(side: Any, p: dict[str, Any], role: str) -> str:
            return f"{role}: {side.name}, {len(side.engine.layers)} layers ({p.get('gpu', 'GPU not recorded')})"

        rows = self._layer_rows()
        if rows is not None:  # the layer rows' Compare: select their group here
            rows.compare_layers = self.select_layers_group
        self.tab = SideBySide(self, title(pair.base, prov["base"], "Base (open)"), title(pair.other, prov["other"], "Other"))
        for v in (self.tab.base_view, self.tab.other_view):
            v.set_dark(w.theme == "Dark")
        self.tab.base_view.set_display(short_names(c.base_display))
        self.tab.other_view.set_display(short_names(c.other_display))
        tabs = w.graphs.tabs
        tabs.addTab(self.tab, f"Compare: {pair.base.name} | {pair.other.name}")
        eg = w.engine_graph
        if eg.display is None and c.base_model is not None and w.workspace.engine is not None:
            eg.adopt(c.base_model, c.base_display)  # the window's engine graph: laid out by the comparison
        w.set_change_modes(True)
        tabs.setCurrentWidget(self.tab)
        QTimer.singleShot(0, self.tab, self.tab.fit_both)  # sized now that the tab is shown
        w.statusBar().showMessage(f"Compared with {pair.other.name}: {len(pair.groups)} groups, "
                                  f"{pair.alignment.get('aligned_groups', 0)} aligned", 10000)
        self.sig_compared.emit(c)

    def paint(self, mode: str) -> None:
        """Colour the side-by-side views by ``mode`` (a change mode, or any Colour by)."""
        c, tab = self.result, self.tab
        if c is None or tab is None:
            return
        for view, dg, side, analysis in ((tab.base_view, c.base_display, "base", self.w.analysis),
                                         (tab.other_view, c.other_display, "other", c.other_analysis)):
            if dg is not None:
                paint_layers(view, dg, analysis, mode, self.layer_change(side, mode))

    def layer_change(self, side: str, mode: str) -> Any:
        """For :func:`ui.engine_graph.paint_layers`: the per-layer colours of a change ``mode`` of
        ``side`` (base, other), or None when ``mode`` is not one."""
        c = self.result
        if c is None or mode not in CHANGE_MODES:
            return None
        got = c.layer_colours[(mode, side)]
        return lambda: got

    def model_overlay(self, mode: str) -> Any:
        """The change ``mode``'s ``engine.overlay.Overlay`` of the open model's graph (None when the
        comparison was made without this model: it is made for the model then)."""
        from trtstudio.engine.overlay import Overlay

        c, model = self.result, self.w.workspace.model
        if c is None or model is None or mode not in CHANGE_MODES:
            return None
        if c.model is not model:  # another model opened since: its nodes coloured here once
            c.node_colours, c.model = node_colours(c.pair.groups, model), model
        colours, folded, legend = c.node_colours[mode]
        return Overlay(colours, folded, legend)

    # ---- linking ----------------------------------------------------------------------------------
    def select_group(self, row: int) -> None:
        """Group ``row``: its layers in the open engine's table and graph, its ONNX nodes on the
        model's graph, both sides' layers in the side-by-side views."""
        c, w = self.result, self.w
        if c is None or not 0 <= row < len(c.pair.groups) or self._linking:
            return
        g = c.pair.groups[row]
        self._linking = True
        try:
            graphs = w.graphs
            if w.analysis is not None:
                base = list(g["base_index"])
                w.engine_tabs.select_layers(base)
                sel = w.workspace.select_layers(base, source="compare")
                if not base and g["onnx_nodes"]:  # only in the other engine: its ONNX nodes, if this model has them
                    sel = w.workspace.select_nodes(g["onnx_nodes"], source="compare")
                shown = graphs.tabs.currentIndex() == 0
                graphs.select_model_nodes(sel, center=shown and not graphs.showing_engine_graph())
                if graphs.engine_view.dg is not None:
                    graphs.engine_view.select(graphs.layer_display_indices(graphs.engine_view.dg, base),
                                              center=shown and graphs.showing_engine_graph())
            if self.tab is not None:
                with self.tab.unlinked():  # each side centred on its own layers
                    for view, key in ((self.tab.base_view, "base_index"), (self.tab.other_view, "other_index")):
                        idx = graphs.layer_display_indices(view.dg, list(g[key]))
                        view.select(idx, center=bool(idx))
            self.dock_widget.select_group(row)
        finally:
            self._linking = False

    def on_side_node(self, base: bool, display_index: int) -> None:
        """A node clicked in a side-by-side view: its group's row (which selects the rest)."""
        c, tab = self.result, self.tab
        if c is None or tab is None:
            return
        view = tab.base_view if base else tab.other_view
        if view.dg is not None and display_index >= 0:  # the layer's properties, from its own side's analysis
            show_layer_properties(self.w.side_tabs, view.dg, display_index, self.w.analysis if base else c.other_analysis)
        layer = view.dg.node_index(display_index) if view.dg is not None else None
        lookup = c.base_group if base else c.other_group
        if layer is None or not 0 <= layer < len(lookup) or lookup[layer] < 0:
            return
        self.dock_widget.select_group(int(lookup[layer]))

    # ---- closing ----------------------------------------------------------------------------------
    def close_tab(self) -> None:
        """Remove the side-by-side tab (a new comparison replaces it)."""
        tab, self.tab = self.tab, None
        if tab is not None:
            tabs = self.w.graphs.tabs
            i = tabs.indexOf(tab)
            if i >= 0:
                tabs.removeTab(i)
            tab.deleteLater()

    def closed_tab(self) -> None:
        """The user closed the side-by-side tab: the comparison ends (dock hidden, colours back)."""
        self.tab = None
        self.close()

    def close(self) -> None:
        """End the comparison: its tab and dock go, the graphs' colours return to Colour by."""
        self.close_tab()
        self.result = None
        rows = self._layer_rows()
        if rows is not None:
            rows.compare_layers = None
        if self.dock is not None:
            self.dock.hide()
        self.w.set_change_modes(False)


__all__ = ["CHANGE_MODES", "CompareController", "CompareDock", "Comparison", "GroupsModel", "base_side", "compare",
           "group_colours", "time_class"]
