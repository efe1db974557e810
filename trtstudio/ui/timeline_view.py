"""TimelineView: a scenario's intervals (H2D, compute, D2H, host work), one row per stream or worker,
zoomable and pannable in time with the wheel and drag (time only), smooth at 100,000 intervals.

Each frame draws only what is in view: per row and kind the intervals are kept sorted, the visible
slice is found by binary search, and when it holds more intervals than the view has pixels they are
merged per pixel column (coloured by the kind with the most time there), so a frame draws at most a
few rectangles per pixel column.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QPainter, QPen
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from trtstudio.profiling.timeline import KINDS, Timeline
from trtstudio.ui.plots import pg

KIND_COLORS = {"h2d": "#2ca02c", "compute": "#1f77b4", "d2h": "#ff7f0e", "host": "#7f7f7f"}
ROW_HEIGHT = 0.8


class _Lane:
    """One row's intervals sorted by start, with a running maximum of ends for the visible search."""

    def __init__(self, row: int, kinds: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
        order = np.argsort(starts, kind="stable")
        self.row = row
        self.kinds = np.ascontiguousarray(kinds[order])
        self.starts = np.ascontiguousarray(starts[order])
        self.ends = np.ascontiguousarray(ends[order])
        self.max_end = np.maximum.accumulate(self.ends) if self.ends.size else self.ends

    def visible(self, x0: float, x1: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        i0 = int(np.searchsorted(self.max_end, x0, side="left"))
        i1 = int(np.searchsorted(self.starts, x1, side="right"))
        return self.kinds[i0:i1], self.starts[i0:i1], self.ends[i0:i1]


def pixel_runs(kinds: np.ndarray, starts: np.ndarray, ends: np.ndarray, x0: float, px: float, width: int,
               n_kinds: int = len(KINDS)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Intervals narrower than a pixel, merged per pixel column: each busy column takes the colour of
    the kind with the most time in it; runs of equal columns become one. Returns (kind, start, end)."""
    if starts.size == 0:
        return kinds[:0], starts[:0], ends[:0]
    col = np.clip(((starts - x0) / px).astype(np.int64), 0, width - 1)
    busy = np.zeros((n_kinds, width))
    for k in range(n_kinds):
        sel = kinds == k
        if sel.any():
            busy[k] = np.bincount(col[sel], weights=ends[sel] - starts[sel], minlength=width)[:width]
    code = np.where(busy.sum(axis=0) > 0, busy.argmax(axis=0), -1)
    change = np.flatnonzero(np.diff(np.concatenate(([-2], code, [-2]))) != 0)
    a, b = change[:-1], change[1:]
    keep = code[a] >= 0
    a, b = a[keep], b[keep]
    return code[a].astype(kinds.dtype), x0 + a * px, x0 + b * px


class IntervalsItem(pg.GraphicsObject):
    """Draws every row's visible intervals as filled rectangles (no outline); intervals narrower than a
    pixel are merged per pixel column when a row holds more of them than the view has pixels."""

    def __init__(self) -> None:
        super().__init__()
        self.lanes: list[_Lane] = []
        self._bounds = QRectF(0, -1, 1, 1)
        self._brushes = [QBrush(QColor(KIND_COLORS[k])) for k in KINDS]
        self.drawn = 0  # rectangles in the last frame (tests, benchmarks)

    def set_lanes(self, lanes: list[_Lane], rows: int) -> None:
        self.prepareGeometryChange()
        self.lanes = lanes
        lo = min((float(ln.starts[0]) for ln in lanes if ln.starts.size), default=0.0)
        hi = max((float(ln.max_end[-1]) for ln in lanes if ln.ends.size), default=1.0)
        self._bounds = QRectF(lo, -0.5, max(hi - lo, 1e-6), max(rows, 1))
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return self._bounds

    def paint(self, painter: QPainter, *args: Any) -> None:
        vb = self.getViewBox()
        if vb is None or not self.lanes:
            return
        (x0, x1), _ = vb.viewRange()
        width = max(1, int(vb.width()))
        px = (x1 - x0) / width
        painter.setPen(QPen(Qt.PenStyle.NoPen))
        drawn = 0
        for lane in self.lanes:
            k, s, e = lane.visible(x0, x1)
            if s.size == 0:
                continue
            y = lane.row - ROW_HEIGHT / 2
            if s.size > width:
                wide = (e - s) >= px
                rk, rs, re_ = pixel_runs(k[~wide], s[~wide], e[~wide], x0, px, width)
                k, s, e = np.concatenate((k[wide], rk)), np.concatenate((s[wide], rs)), np.concatenate((e[wide], re_))
            e = np.maximum(e, s + px)  # at least one pixel wide
            for kind in range(len(KINDS)):
                sel = k == kind
                if sel.any():
                    painter.setBrush(self._brushes[kind])
                    painter.drawRects([QRectF(a, y, w, ROW_HEIGHT) for a, w in zip(s[sel].tolist(), (e[sel] - s[sel]).tolist(), strict=True)])
                    drawn += int(sel.sum())
        self.drawn = drawn


class TimelineView(QWidget):
    """One row per stream (or CPU worker); time in ms on x. ``set_timeline`` shows a ``Timeline``;
    ``refresh`` re-reads it (a running scenario); wheel zooms, drag pans, both along time only."""

    sig_range_changed = Signal(float, float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = pg.PlotWidget()
        self.plot.setBackground("w")
        self.plot.setMenuEnabled(False)
        self.plot.setLabel("bottom", "time since the scenario started (ms)")
        self.plot.getPlotItem().hideButtons()
        vb = self.plot.getViewBox()
        vb.setMouseEnabled(x=True, y=False)
        vb.invertY(True)
        self.item = IntervalsItem()
        self.plot.addItem(self.item)
        self.legend = QLabel(" ".join(f"<span style='color:{c}'>&#9632;</span> {k}" for k, c in KIND_COLORS.items()))
        self.info = QLabel("")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.legend)
        layout.addWidget(self.info)
        self._timeline: Timeline | None = None
        self._count = -1
        self.timer = QTimer(self)
        self.timer.setInterval(500)
        self.timer.timeout.connect(self._on_timer_timeout)
        vb.sigXRangeChanged.connect(self._on_view_x_range_changed)

    # -- data ------------------------------------------------------------------------------------
    def set_timeline(self, timeline: Timeline | None, live: bool = False) -> None:
        """Show ``timeline``; with ``live`` re-read it twice a second until ``stop_live``."""
        self._timeline = timeline
        self._count = -1
        self.refresh(fit=True)
        if live:
            self.timer.start()
        else:
            self.timer.stop()

    def stop_live(self) -> None:
        """Stop re-reading the timeline (the scenario ended)."""
        self.timer.stop()
        self.refresh()

    def refresh(self, fit: bool = False) -> None:
        """Re-read the timeline when it changed."""
        tl = self._timeline
        if tl is None:
            self.item.set_lanes([], 0)
            self.info.setText("no timeline")
            return
        if tl.count == self._count and not fit:
            return
        self._count = tl.count
        a = tl.arrays()
        self.set_intervals(a["row"], a["kind"], a["start"], a["end"], list(tl.rows), fit=fit)
        if tl.dropped:
            self.info.setText(self.info.text() + f"; {tl.dropped:,} older intervals dropped")

    def set_intervals(self, row: np.ndarray, kind: np.ndarray, start: np.ndarray, end: np.ndarray,
                      names: list[str], fit: bool = True) -> None:
        """Show raw interval columns (row index, kind index into ``KINDS``, start/end ms)."""
        lanes = []
        for r in range(len(names)):
            sel = row == r
            if sel.any():
                lanes.append(_Lane(r, kind[sel], start[sel], end[sel]))
        self.item.set_lanes(lanes, len(names))
        left = self.plot.getAxis("left")
        left.setTicks([[(i, n) for i, n in enumerate(names)]])
        left.setWidth(max((self.fontMetrics().horizontalAdvance(n) for n in names), default=40) + 16)
        self.plot.getViewBox().setYRange(-0.6, max(len(names), 1) - 0.4, padding=0)
        n = int(row.size)
        self.info.setText(f"{n:,} intervals on {len(names)} rows")
        if fit and n:
            self.plot.getViewBox().setXRange(float(start.min()), float(end.max()), padding=0.01)

    # -- navigation ------------------------------------------------------------------------------
    def x_range(self) -> tuple[float, float]:
        """The visible time range (ms)."""
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        return float(x0), float(x1)

    def set_x_range(self, x0: float, x1: float) -> None:
        """Show [x0, x1] ms."""
        self.plot.getViewBox().setXRange(x0, x1, padding=0)

    def pan(self, fraction: float) -> None:
        """Move the view by ``fraction`` of its width (negative: back in time)."""
        x0, x1 = self.x_range()
        d = (x1 - x0) * fraction
        self.set_x_range(x0 + d, x1 + d)

    def zoom(self, factor: float) -> None:
        """Zoom about the centre (factor > 1 zooms in)."""
        x0, x1 = self.x_range()
        c, half = (x0 + x1) / 2, (x1 - x0) / 2 / factor
        self.set_x_range(c - half, c + half)

    def _on_view_x_range_changed(self, _vb: Any, rng: tuple[float, float]) -> None:
        self.sig_range_changed.emit(float(rng[0]), float(rng[1]))

    def _on_timer_timeout(self) -> None:
        self.refresh()
