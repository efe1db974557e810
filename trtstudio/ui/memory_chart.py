"""The Engine dock's Memory tab: where an engine's GPU memory goes, from its files.

Left, the engine's memory by category as ``trtstudio memory`` prints it (``engine.memory``: weights,
activations as TensorRT allocates them beside the naive per-layer sum, persistent and scratch memory,
I/O buffers, CUDA context, libraries, the builder's peak, the engine's size), each with the line or
field it came from, ``not recorded`` where no file says; per optimization profile where there are
several; the per-layer lines of a verbose log that no layer of the engine is named after. Right, the
activation memory alive along the layer order (a tensor from the layer that writes it to the last
that reads it, nothing shared: ``engine.memory.live_memory``) with its peak marked, TensorRT's own
allocation beside it where a log gives it, and the tensors alive at the peak. A click on the chart
selects the layer under it (``sig_layer_chosen``). Everything shown was computed in the loading
worker (``engine.analysis``: ``Analysis.memory``); the tab only draws it, when it is first shown.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from trtstudio.engine.memory import CATEGORIES, MIB, NOT_RECORDED, short_source
from trtstudio.palette import heat
from trtstudio.ui.plots import pg

__all__ = ["MemoryView", "bytes_label"]

CURVE_COLOR = "#4e79a7"
PEAK_COLOR = heat(1.0)
ALLOCATED_COLOR = "#59a14f"
SELECTED_COLOR = "#e15759"
ALIVE_SHOWN = 20  # tensors alive at the peak listed (engine.memory.live_memory keeps the largest 20)


def bytes_label(n: int | float | None) -> str:
    """``1.2 MiB`` (one decimal) at or above a MiB, ``12,345 B`` below; ``not recorded`` for None."""
    if n is None:
        return NOT_RECORDED
    return f"{n / MIB:,.1f} MiB" if abs(n) >= MIB else f"{int(n):,} B"


class MemoryView(QWidget):
    """The Memory tab. :meth:`set_memory` takes an ``engine.memory.EngineMemory`` (None: not yet
    computed, or no engine) and its engine; ``sig_layer_chosen(Layer.index)`` when the chart is
    clicked."""

    sig_layer_chosen = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._memory: Any = None
        self._engine: Any = None
        self._pending = False
        self._dirty = False
        self._position_of: dict[int, int] | None = None  # Layer.index -> position (made on first mark)
        self._alive = np.zeros(0)

        self.headline = QLabel("No engine loaded.")
        self.headline.setWordWrap(True)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.categories = QTableWidget(0, 3)
        self.categories.setHorizontalHeaderLabels(["Category", "Size", "Source"])
        self._table_style(self.categories)
        self.notes = QPlainTextEdit()  # per profile, the log's unmatched layer lines, tensors left out
        self.notes.setReadOnly(True)
        self.notes.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.categories)
        left.addWidget(self.notes)
        left.setStretchFactor(0, 3)
        left.setStretchFactor(1, 1)

        self.plot = pg.PlotWidget()
        self.plot.setBackground("w")
        self.plot.setTitle("Activations alive along the layer order (nothing shared)", color="#333", size="10pt")
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=True, y=False)
        self.plot.hideButtons()
        self.plot.showGrid(x=False, y=True, alpha=0.3)
        self.plot.setLabel("bottom", "layer (engine order)", color="#333")
        self.plot.setLabel("left", "MiB alive", color="#333")
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).setTextPen("#333")
            self.plot.getAxis(axis).setPen("#888")
            self.plot.getAxis(axis).enableAutoSIPrefix(False)
        self.plot.setDownsampling(auto=True, mode="peak")
        self.plot.setClipToView(True)
        self.curve = self.plot.plot([], [], pen=pg.mkPen(CURVE_COLOR, width=1.5), fillLevel=0,
                                    brush=pg.mkBrush(78, 121, 167, 60))
        self.peak = pg.ScatterPlotItem(size=10, brush=pg.mkBrush(PEAK_COLOR), pen=pg.mkPen("#333"))
        self.plot.addItem(self.peak)
        self.peak_label = pg.TextItem("", color="#222", anchor=(0, 0))
        self.plot.addItem(self.peak_label)
        self.allocated = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(ALLOCATED_COLOR, width=1.5,
                                                                            style=Qt.PenStyle.DashLine),
                                         label="", labelOpts={"position": 0.02, "color": ALLOCATED_COLOR,
                                                              "anchors": [(0, 1), (0, 1)]})
        self.plot.addItem(self.allocated)
        self.selected = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(SELECTED_COLOR, width=1))
        self.plot.addItem(self.selected)
        self.selected.hide()
        self.plot.scene().sigMouseClicked.connect(self._on_plot_clicked)

        self.alive = QTableWidget(0, 2)
        self.alive.setHorizontalHeaderLabels(["Tensor alive at the peak", "Size"])
        self._table_style(self.alive)
        # side by side: the Engine dock is wide and short
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(self.plot)
        split.addWidget(self.alive)
        for i, stretch in enumerate((3, 4, 2)):
            split.setStretchFactor(i, stretch)
        split.setSizes([420, 560, 280])
        self.alive.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.alive.horizontalHeader().setStretchLastSection(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.headline)
        lay.addWidget(split, 1)

    @staticmethod
    def _table_style(table: QTableWidget) -> None:
        table.verticalHeader().hide()
        table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 4)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setWordWrap(False)
        table.setShowGrid(False)
        table.horizontalHeader().setStretchLastSection(True)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)

    # -- data ---------------------------------------------------------------------------------------
    def set_memory(self, memory: Any, engine: Any = None, pending: bool = False) -> None:
        """Show ``memory`` (an ``engine.memory.EngineMemory``) of ``engine``; ``pending``: the
        analysis that brings it is still running. Drawn now when the tab is shown, else when it is."""
        self._memory, self._engine, self._pending = memory, engine, pending
        self._position_of = None
        self._dirty = True
        if self.isVisible():
            self._draw()

    def memory(self) -> Any:
        """The ``EngineMemory`` shown (None without one)."""
        return self._memory

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if self._dirty:
            self._draw()

    def _draw(self) -> None:
        self._dirty = False
        m = self._memory
        self.selected.hide()
        if m is None:
            self.headline.setText("The engine's memory comes with the findings..." if self._pending and self._engine
                                  is not None else "No engine loaded.")
            self.categories.setRowCount(0)
            self.alive.setRowCount(0)
            self.notes.setPlainText("")
            self.notes.hide()
            self._set_live(None)
            return
        self.headline.setText(headline(m))
        self._fill_categories(m)
        notes = notes_text(m)
        self.notes.setPlainText(notes)
        self.notes.setVisible(bool(notes))
        self._set_live(m.live)

    def _fill_categories(self, m: Any) -> None:
        rows = [m.categories[n] for n in CATEGORIES] + [m.context]
        grey = QColor("#888888")
        self.categories.setRowCount(len(rows))
        for r, fig in enumerate(rows):
            name = "context (device memory)" if fig is m.context else fig.name
            recorded = fig.bytes is not None
            src = short_source(fig.source) if recorded else ""
            items = [QTableWidgetItem(name), QTableWidgetItem(bytes_label(fig.bytes)), QTableWidgetItem(src)]
            items[1].setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if recorded:
                items[1].setToolTip(f"{fig.bytes:,} bytes")
            tip = fig.source + (f"\n({fig.note})" if fig.note else "")
            for extra in fig.also:
                tip += f"\nalso: {bytes_label(extra.get('bytes'))} {extra.get('what', '')} {extra.get('source', '')}"
            items[2].setToolTip(tip if recorded else "no file of this engine says")
            for it in items:
                if not recorded:
                    it.setForeground(grey)
                self.categories.setItem(r, items.index(it), it)
        self.categories.resizeColumnToContents(0)
        self.categories.resizeColumnToContents(1)

    def _set_live(self, live: dict[str, Any] | None) -> None:
        alive = np.asarray(live["bytes"], dtype=float) if live and live.get("peak_bytes") else np.zeros(0)
        self._alive = alive
        self.plot.setVisible(bool(len(alive)))
        self.alive.setVisible(bool(len(alive)))
        if not len(alive):
            self.curve.setData([], [])
            self.peak.setData([], [])
            self.peak_label.setText("")
            self.allocated.hide()
            self.alive.setRowCount(0)
            self.plot.setTitle("Activations alive along the layer order: no layer tensors with a size in these files",
                               color="#333", size="10pt")
            return
        self.plot.setTitle("Activations alive along the layer order (nothing shared)", color="#333", size="10pt")
        mib = alive / MIB
        n = len(mib)
        self.curve.setData(np.arange(n + 1, dtype=float), mib, stepMode="center")
        assert live is not None
        peak = int(live["peak_index"])
        self.peak.setData([peak + 0.5], [float(mib[peak])])
        layer = self._layer_at(peak)
        self.peak_label.setText(f"peak {bytes_label(live['peak_bytes'])} at #{layer.index if layer else peak} "
                                f"{live['peak_layer']}")
        self.peak_label.setAnchor((1, 0) if peak > n / 2 else (0, 0))  # beside the point, inside the chart
        self.peak_label.setPos(peak + 0.5, float(mib[peak]))
        top = float(mib.max()) or 1.0
        act = self._memory.categories["activations"] if self._memory is not None else None
        if act is not None and act.bytes is not None:
            self.allocated.setValue(act.bytes / MIB)
            self.allocated.label.setFormat(f"TensorRT allocates {bytes_label(act.bytes)} (blocks shared)")
            self.allocated.show()
            top = max(top, act.bytes / MIB)
        else:
            self.allocated.hide()
        self.plot.setXRange(0, n, padding=0.01)
        self.plot.setYRange(0, top * 1.15, padding=0)
        rows = live.get("alive_at_peak") or []
        self.alive.setRowCount(len(rows[:ALIVE_SHOWN]))
        for r, t in enumerate(rows[:ALIVE_SHOWN]):
            size = QTableWidgetItem(bytes_label(t["bytes"]))
            size.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            size.setToolTip(f"{t['bytes']:,} bytes")
            name = QTableWidgetItem(t["tensor"])
            name.setToolTip(t["tensor"])
            self.alive.setItem(r, 0, name)
            self.alive.setItem(r, 1, size)
        self.alive.setHorizontalHeaderLabels([f"Tensors alive at the peak ({live['alive_count']})", "Size"])
        self.alive.setColumnWidth(1, self.alive.fontMetrics().horizontalAdvance("0,000.0 MiB") + 16)

    def _layer_at(self, position: int) -> Any:
        layers = getattr(self._engine, "layers", None) or []
        return layers[position] if 0 <= position < len(layers) else None

    # -- selection ----------------------------------------------------------------------------------
    def position_at(self, scene_pos: Any) -> int | None:
        """The layer position under a point of the plot's scene (None outside the chart's data)."""
        vb = self.plot.getPlotItem().getViewBox()
        if not len(self._alive) or not vb.sceneBoundingRect().contains(scene_pos):
            return None
        x = vb.mapSceneToView(scene_pos).x()
        pos = int(math.floor(x))
        return pos if 0 <= pos < len(self._alive) else None

    def _on_plot_clicked(self, event: Any) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        pos = self.position_at(event.scenePos())
        if pos is None:
            return
        layer = self._layer_at(pos)
        if layer is not None:
            self.mark_positions([pos])
            self.sig_layer_chosen.emit(int(layer.index))

    def mark_layers(self, indices: list[int]) -> None:
        """Mark the first of these layers (``Layer.index``) on the chart (none: the mark goes)."""
        if not indices or self._engine is None:
            self.mark_positions([])
            return
        if self._position_of is None:
            self._position_of = {lay.index: p for p, lay in enumerate(self._engine.layers)}
        pos = self._position_of.get(indices[0])
        self.mark_positions([] if pos is None else [pos])

    def mark_positions(self, positions: list[int]) -> None:
        if positions and len(self._alive):
            self.selected.setValue(positions[0] + 0.5)
            self.selected.show()
        else:
            self.selected.hide()

    def marked_position(self) -> int | None:
        """The layer position marked on the chart (None: none)."""
        return int(self.selected.value() - 0.5) if self.selected.isVisible() else None


def headline(m: Any) -> str:
    """One sentence: what TensorRT allocates for activations, the live peak along the layers and
    the naive sum users read, with the weights."""
    parts = []
    act, naive, weights = m.categories["activations"], m.categories["activations_naive"], m.categories["weights"]
    if weights.bytes is not None:
        parts.append(f"weights {bytes_label(weights.bytes)}")
    parts.append(f"activations TensorRT allocates {bytes_label(act.bytes)}")
    live = m.live or {}
    if live.get("peak_bytes"):
        parts.append(f"live peak {bytes_label(live['peak_bytes'])} (nothing shared)")
    if naive.bytes is not None:
        parts.append(f"all layers' tensors {bytes_label(naive.bytes)} (TREx's sum, not an allocation)")
    return f"{m.name}: " + "; ".join(parts)


def notes_text(m: Any) -> str:
    """Per-profile activations, the log's per-layer lines no layer is named after, warnings."""
    lines = []
    for p in m.profiles:
        act = next((c for c in p["categories"] if c["name"] == "activations"), None)
        if act is not None:
            lines.append(f"profile {p['profile']}: activations {bytes_label(act['bytes'])}")
    unmatched = [r for r in m.layers if r.get("index") is None]
    if unmatched:
        lines.append(f"{len(unmatched)} per-layer line(s) of the log name no layer of the engine (its kernels are "
                     "listed under other names):")
        for r in unmatched[:8]:
            figs = ", ".join(f"{k.replace('_', ' ')} {bytes_label(r[k])}" for k in
                             ("scratch", "device_persistent", "host_persistent") if r.get(k) is not None)
            lines.append(f"  {r['name']}: {figs}")
    if m.live and m.live.get("unsized"):
        lines.append(f"{m.live['unsized']} tensor(s) without a known size (dynamic shape or type) left out of "
                     "the live activations")
    return "\n".join(lines)
