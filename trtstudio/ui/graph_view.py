"""GraphView: a QWidget that paints a laid-out ONNX graph, with level of detail.

It does not create one QGraphicsItem per node: a 100k-node graph would cost seconds to build and
pan poorly. Positions live in numpy arrays; each paint selects the visible nodes with one vector
compare and draws only those. Zoomed far out, the visible nodes are rasterised straight into an
image (its cost does not depend on the node count); text is dropped below a readable scale.

The legend is a strip below the graph's drawing area, so it never covers a node. Constant and
shape-computation chains are folded into their consumer (see ``trtstudio.graph.fold``); a search
hit or a selected node inside a folded chain unfolds that chain. Re-layouts of big graphs run in a
worker.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QHelpEvent,
    QImage,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QPolygonF,
    QWheelEvent,
)
from PySide6.QtWidgets import QToolTip, QWidget

from trtstudio.graph.categories import CATEGORIES
from trtstudio.graph.fold import Folding, fold_constants, no_folding
from trtstudio.ui.graph_scene import DisplayGraph, Placement

IO_COLOR = "#e8e8e8"
SELECT_COLOR = QColor("#ffb000")
BADGE_COLOR = QColor("#5b5b66")
DETAIL_LIMIT = 2500  # more visible nodes than this: draw the overview image
TEXT_SCALE = 0.45  # below this zoom, no text
READABLE_SCALE = 0.6  # the first frame of a big graph is never smaller than this
LABEL_SCALE = 0.8  # edge labels from this zoom
SYNC_RELAYOUT = 5000  # re-layouts (fold toggle, unfolding a hit) of bigger graphs run in a worker
LEGEND_ROW = 18.0
FOLD_LEGEND = "+n: constant / shape nodes folded in"


class GraphView(QWidget):
    """Pan (drag), zoom (wheel, +/-), fit (F or 0), click to select, double-click to open a subgraph."""

    sig_node_selected = Signal(int)  # display index, -1 for none
    sig_node_activated = Signal(int)  # double click
    sig_zoom_changed = Signal(float)
    sig_folding_changed = Signal(int)  # nodes folded after a (re-)layout

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(False)
        self.setMinimumSize(200, 200)
        self.setAutoFillBackground(False)
        self.dg: DisplayGraph | None = None
        self.scale = 1.0
        self.offset = QPointF(0, 0)  # scene point at widget origin
        self.selected: set[int] = set()
        self.current: int = -1
        self._highlight: set[int] = set()  # search hits
        self.flagged: set[int] = set()  # nodes the TensorRT parser rejects
        self.folded: np.ndarray | None = None  # bool per display item: no engine layer (overlay)
        self._overlay: list[str] | None = None  # colour per display item, or None for categories
        self._qcolors: dict[str, QColor] = {}
        self._codes: np.ndarray = np.zeros(0, np.int32)  # category code per display item
        self._palette: list[QColor] = []
        self._colors: np.ndarray | None = None  # BGRA per item, for the overview raster
        self._drag_start: QPointF | None = None
        self._drag_offset = QPointF()
        self._moved = False
        self._font = QFont()
        self._font.setPointSizeF(9)
        self._small = QFont()
        self._small.setPointSizeF(7.5)
        self.legend: list[tuple[str, str]] = []
        self.dark = False
        self._fold_on = True  # the user's choice; build_display decides the first folding
        self._relayout_gen = 0
        self._relayout_handle: object | None = None
        self._pending_center: list[int] | None = None
        self._base: Folding | None = None
        self._user_moved = False  # pan, zoom or select since the first frame
        self._set_category_colors()

    def set_dark(self, dark: bool) -> None:
        self.dark = dark
        self.update()

    # ---- data -------------------------------------------------------------------------
    def set_display(self, dg: DisplayGraph | None) -> None:
        self.dg = dg
        self.selected.clear()
        self._highlight.clear()
        self.flagged.clear()
        self.current = -1
        self.folded = None
        self._overlay = None
        self._relayout_gen += 1
        self._pending_center = None
        self._fold_on = dg is not None and dg.folded_count > 0
        self._base = dg.folding if dg is not None and dg.folded_count else None
        self._set_category_colors()
        self._user_moved = False
        self.fit()
        if dg is not None and not dg.placement.complete:  # only the top is placed: the rest in a worker
            self._start_relayout(dg.folding)

    def _qcolor(self, hex_: str) -> QColor:
        c = self._qcolors.get(hex_)
        if c is None:
            c = self._qcolors[hex_] = QColor(hex_)
        return c

    def _set_category_colors(self) -> None:
        dg = self.dg
        keys = list(CATEGORIES)
        self._palette = [QColor(CATEGORIES[k][1]) for k in keys] + [QColor(IO_COLOR)]
        if dg is None:
            self._codes = np.zeros(0, np.int32)
            self.legend = []
        else:
            index = {k: i for i, k in enumerate(keys)}
            index["io"] = len(keys)
            other = index["other"]
            self._codes = np.fromiter((index.get(c, other) for c in dg.cats), np.int32, dg.n)
            shown = self._codes[~dg.hidden]
            present = set(np.unique(shown).tolist())
            self.legend = [CATEGORIES[k] for i, k in enumerate(keys) if i in present]
        self._colors = None
        self.update()

    def set_overlay(self, colors: list[str] | None, legend: list[tuple[str, str]] | None = None,
                    folded: np.ndarray | None = None) -> None:
        """Colour nodes by something else (fused layer, precision, time share, finding); None restores categories."""
        if colors is None or self.dg is None:
            self.folded = None
            self._overlay = None
            self._set_category_colors()
            return
        self._overlay = list(colors)
        self.legend = legend or []
        self.folded = folded
        self._colors = None
        self.update()

    def fill_color(self, i: int) -> QColor:
        """Fill colour of display item ``i`` (overlay or op category)."""
        if self._overlay is not None:
            return self._qcolor(self._overlay[i]) if i < len(self._overlay) else QColor("#999")
        return self._palette[int(self._codes[i])] if i < len(self._codes) else QColor("#999")

    # ---- folding ----------------------------------------------------------------------
    @property
    def folding_enabled(self) -> bool:
        """True when constant / shape chains are folded into their consumers."""
        return self._fold_on

    def set_folding(self, enabled: bool) -> None:
        """Fold (True) or unfold (False) constant and shape-computation chains, and lay out again.

        Search hits and selected nodes stay unfolded. Big graphs are laid out in a worker;
        ``sig_folding_changed`` tells when the new layout is shown."""
        self._fold_on = bool(enabled)
        self._update_folding(force=True)

    @property
    def highlight(self) -> set[int]:
        """Search hits (display indices); a hit inside a folded chain unfolds the chain."""
        return self._highlight

    @highlight.setter
    def highlight(self, value: Iterable[int]) -> None:
        self._highlight = set(value)
        self._update_folding()
        self.update()

    def _wanted_folding(self) -> Folding | None:
        dg = self.dg
        if dg is None:
            return None
        nn = len(dg.graph.nodes)
        if not self._fold_on:
            return no_folding(nn)
        base = self._base_folding()
        keep = [i - dg.node_offset for i in self._highlight | self.selected if 0 <= i - dg.node_offset < nn]
        return base.without(keep) if keep else base

    def _base_folding(self) -> Folding:
        """Every foldable chain folded (what build_display chose, or computed on the first toggle)."""
        if self._base is None:
            assert self.dg is not None
            self._base = fold_constants(self.dg.graph)
        return self._base

    def _update_folding(self, force: bool = False) -> None:
        dg = self.dg
        if dg is None or (not force and not self._fold_on and not dg.hidden.any()):
            return
        wanted = self._wanted_folding()
        if wanted is None or (np.array_equal(wanted.host, dg.folding.host) and dg.placement.complete):
            if force:
                self.sig_folding_changed.emit(dg.folded_count)
            return
        self._start_relayout(wanted)

    def _start_relayout(self, wanted: Folding) -> None:
        dg = self.dg
        assert dg is not None
        self._relayout_gen += 1
        gen = self._relayout_gen
        if dg.n <= SYNC_RELAYOUT:
            self._on_relayout_done(gen, dg, dg.place(wanted))
            return
        from trtstudio.ui.workers import run_in_thread

        self._relayout_handle = run_in_thread(
            lambda _state: dg.place(wanted),
            on_done=lambda placement: self._on_relayout_done(gen, dg, placement),
            name="graph-relayout")

    def _on_relayout_done(self, gen: int, dg: DisplayGraph, placement: Placement) -> None:
        if gen != self._relayout_gen or dg is not self.dg:
            return  # a newer request or another graph
        keep = self.to_scene(QPointF(self.width() / 2, self.viewport_height() / 2))
        anchor = self.current if self.current >= 0 else -1
        before = (float(dg.lay.x[anchor]), float(dg.lay.y[anchor])) if anchor >= 0 else None
        was_partial = not dg.placement.complete
        dg.apply(placement)
        if self._overlay is None:
            self._set_category_colors()
        if was_partial and not self._user_moved and not self._pending_center:
            self.fit()
        elif self._pending_center:
            target, self._pending_center = self._pending_center, None
            self.center_on(target, zoom_in=self.scale < 0.5 or len(target) > 1)
        elif before is not None:  # keep the current node where it was on screen
            self.offset += QPointF(float(dg.lay.x[anchor]) - before[0], float(dg.lay.y[anchor]) - before[1])
        else:
            vis = self.visible_scene_rect()
            self.offset = QPointF(keep.x() - vis.width() / 2, keep.y() - vis.height() / 2)
        self.update()
        self.sig_folding_changed.emit(dg.folded_count)

    # ---- geometry ---------------------------------------------------------------------
    def scene_rect(self) -> QRectF:
        if self.dg is None:
            return QRectF(0, 0, 1, 1)
        lay = self.dg.lay
        return QRectF(-40, -40, max(lay.width, 1) + 80, max(lay.height, 1) + 80)

    def legend_items(self) -> list[tuple[str, str]]:
        """What the legend strip lists: the colours in use, then the fold badge when nodes are folded."""
        items = list(self.legend)
        if self.dg is not None and self.dg.folded_count:
            items.append((FOLD_LEGEND, BADGE_COLOR.name()))
        return items

    def legend_rect(self) -> QRectF:
        """The strip at the bottom where the legend is drawn; the graph is never drawn there."""
        items = self.legend_items()
        if not items or self.dg is None:
            return QRectF(0, self.height(), self.width(), 0)
        fm = QFontMetricsF(self._small)
        x, rows = 8.0, 1
        for label, _ in items:
            w = fm.horizontalAdvance(label) + 32
            if x + w > self.width() - 4 and x > 8:
                rows += 1
                x = 8.0
            x += w
        h = rows * LEGEND_ROW + 8
        return QRectF(0, self.height() - h, self.width(), h)

    def viewport_height(self) -> float:
        """Height of the area the graph is drawn in (the widget less the legend strip)."""
        return max(float(self.height()) - self.legend_rect().height(), 1.0)

    def to_scene(self, p: QPointF) -> QPointF:
        return QPointF(p.x() / self.scale + self.offset.x(), p.y() / self.scale + self.offset.y())

    def to_view(self, x: float, y: float) -> QPointF:
        """Widget coordinates of scene point (x, y)."""
        return QPointF((x - self.offset.x()) * self.scale, (y - self.offset.y()) * self.scale)

    def visible_scene_rect(self) -> QRectF:
        return QRectF(self.offset.x(), self.offset.y(), self.width() / self.scale, self.viewport_height() / self.scale)

    def node_rect(self, i: int) -> QRectF:
        """Widget rectangle of display item ``i`` (as drawn now)."""
        assert self.dg is not None
        w, h = float(self.dg.widths[i]), float(self.dg.heights[i])
        tl = self.to_view(float(self.dg.lay.x[i]) - w / 2, float(self.dg.lay.y[i]) - h / 2)
        return QRectF(tl.x(), tl.y(), w * self.scale, h * self.scale)

    def fit(self, *, whole: bool = False) -> None:
        """Show the graph: all of it when that is readable, else its top at a readable zoom.

        The top is fitted to the width when the nodes of the first screen fit at a readable zoom;
        when they do not, the view starts at their left edge (never cutting off the first column).
        ``whole=True`` always shows everything (Shift+F)."""
        r = self.scene_rect()
        w, h = float(max(self.width(), 1)), self.viewport_height()
        s = min(w / r.width(), h / r.height())
        dg = self.dg
        if whole or dg is None or dg.n == 0 or s >= TEXT_SCALE:
            self._set_scale(min(max(s, 1e-4), 1.5))
            vis = self.visible_scene_rect()
            self.offset = QPointF(r.center().x() - vis.width() / 2, r.center().y() - vis.height() / 2)
            self.update()
            return
        lay = dg.lay
        shown = ~dg.hidden
        top = float(np.min(lay.y[shown] - dg.heights[shown] / 2)) - 20
        margin = 24.0
        s = min(1.0, max(READABLE_SCALE, w / r.width()))
        x0 = x1 = 0.0
        for _ in range(3):  # the band of the first screen depends on the zoom, and back
            band = shown & (lay.y - dg.heights / 2 <= top + h / s)
            x0 = float(np.min(lay.x[band] - dg.widths[band] / 2))
            x1 = float(np.max(lay.x[band] + dg.widths[band] / 2))
            s = min(1.0, max(READABLE_SCALE, w / (x1 - x0 + 2 * margin)))
        self._set_scale(s)
        vw = w / s
        left = (x0 + x1) / 2 - vw / 2 if x1 - x0 + 2 * margin <= vw else x0 - margin
        self.offset = QPointF(left, top)
        self.update()

    def zoom_by(self, factor: float, anchor: QPointF | None = None) -> None:
        self._user_moved = True
        anchor = anchor if anchor is not None else QPointF(self.width() / 2, self.viewport_height() / 2)
        before = self.to_scene(anchor)
        self._set_scale(min(max(self.scale * factor, 1e-4), 8.0))
        self.offset = QPointF(before.x() - anchor.x() / self.scale, before.y() - anchor.y() / self.scale)
        self.update()

    def _set_scale(self, s: float) -> None:
        self.scale = s
        self.sig_zoom_changed.emit(s)

    def center_on(self, display_indices: list[int], *, zoom_in: bool = True) -> None:
        if self.dg is None or not display_indices:
            return
        self._user_moved = True
        idx = np.asarray(display_indices)
        x, y = self.dg.lay.x[idx], self.dg.lay.y[idx]
        w = self.dg.widths[idx]
        box = QRectF(float((x - w / 2).min()), float(y.min()) - 40, float((x + w / 2).max() - (x - w / 2).min()),
                     float(y.max() - y.min()) + 80)
        if zoom_in:
            s = min(self.width() / max(box.width() + 80, 1), self.viewport_height() / max(box.height(), 1))
            self._set_scale(min(max(s, 0.6 if len(idx) < 30 else 0.05), 1.5))
        vis = self.visible_scene_rect()
        self.offset = QPointF(box.center().x() - vis.width() / 2, box.center().y() - vis.height() / 2)
        self.update()

    def node_at(self, p: QPointF) -> int:
        if self.dg is None or self.dg.n == 0 or p.y() > self.viewport_height():
            return -1
        sp = self.to_scene(p)
        lay = self.dg.lay
        hit = np.flatnonzero((np.abs(lay.x - sp.x()) <= self.dg.widths / 2)
                             & (np.abs(lay.y - sp.y()) <= self.dg.heights / 2) & ~self.dg.hidden)
        return int(hit[0]) if len(hit) else -1

    def edge_label_at(self, p: QPointF) -> int:
        """Drawn edge whose shape label is under widget point ``p`` (labels show from LABEL_SCALE), or -1."""
        dg = self.dg
        if dg is None or self.scale < LABEL_SCALE or len(dg.src) == 0:
            return -1
        sp = self.to_scene(p)
        off = dg.lay.edge_offsets
        pts = dg.lay.edge_xy
        has = np.diff(off) >= 2
        a = pts[np.minimum(off[:-1], len(pts) - 1)]
        b = pts[np.minimum(off[:-1] + 1, len(pts) - 1)]
        ax = (a[:, 0] + b[:, 0]) / 2 + 4
        ay = (a[:, 1] + b[:, 1]) / 2 + 3
        fm = QFontMetricsF(self._small)
        hh = fm.height() / self.scale
        near = np.flatnonzero(has & (sp.x() >= ax) & (sp.x() <= ax + 200 / self.scale) & (sp.y() <= ay + 2)
                              & (sp.y() >= ay - hh))
        for e in near.tolist():
            if sp.x() <= ax[e] + fm.horizontalAdvance(dg.edge_label(e)) / self.scale:
                return e
        return -1

    def tooltip_at(self, p: QPointF) -> str:
        """Tooltip text at widget point ``p``: a node's op, name and folded nodes, or an edge's full shape."""
        dg = self.dg
        if dg is None:
            return ""
        i = self.node_at(p)
        if i >= 0:
            text = f"{dg.labels[i]}  {dg.sublabels[i]}"
            members = dg.folded_into(i)
            if members:
                ops = Counter(dg.labels[m] for m in members)
                text += "\nfolded in: " + ", ".join(f"{c} {op}" for op, c in ops.most_common())
            return text
        e = self.edge_label_at(p)
        if e >= 0:
            return f"{dg.edge_tensor(e)}: {dg.edge_label_full(e)}"
        return ""

    def event(self, ev: QEvent) -> bool:
        if ev.type() == QEvent.Type.ToolTip and isinstance(ev, QHelpEvent):
            text = self.tooltip_at(QPointF(ev.pos()))
            if text:
                QToolTip.showText(ev.globalPos(), text, self)
            else:
                QToolTip.hideText()
                ev.ignore()
            return True
        return super().event(ev)

    # ---- selection --------------------------------------------------------------------
    def select(self, display_indices: list[int], *, center: bool = True, emit: bool = False) -> None:
        """Select items; a folded one unfolds its chain first (centring waits for that layout)."""
        self.selected = set(display_indices)
        self.current = display_indices[0] if display_indices else -1
        dg = self.dg
        hidden_target = dg is not None and any(bool(dg.hidden[i]) for i in display_indices if 0 <= i < dg.n)
        self._pending_center = list(display_indices) if hidden_target and center else None
        self._update_folding()
        if center and display_indices and not self._pending_center:
            self.center_on(display_indices, zoom_in=self.scale < 0.5 or len(display_indices) > 1)
        self.update()
        if emit:
            self.sig_node_selected.emit(self.current)

    # ---- events -----------------------------------------------------------------------
    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        steps = event.angleDelta().y() / 120.0
        self.zoom_by(1.2 ** steps, event.position())

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton:
            self._drag_start = event.position()
            self._drag_offset = QPointF(self.offset)
            self._moved = False

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._drag_start is not None:
            d = event.position() - self._drag_start
            if abs(d.x()) + abs(d.y()) > 3:
                self._moved = True
            self.offset = QPointF(self._drag_offset.x() - d.x() / self.scale, self._drag_offset.y() - d.y() / self.scale)
            self._user_moved = True
            self.update()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._drag_start is not None and not getattr(self, "_moved", False):
            i = self.node_at(event.position())
            self.select([i] if i >= 0 else [], center=False, emit=True)
        self._drag_start = None

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        i = self.node_at(event.position())
        if i >= 0:
            self.sig_node_activated.emit(i)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        key = event.key()
        self._user_moved = True
        step = 80 / self.scale
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_by(1.25)
        elif key == Qt.Key.Key_Minus:
            self.zoom_by(0.8)
        elif key in (Qt.Key.Key_0, Qt.Key.Key_F):
            self.fit(whole=bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier) or key == Qt.Key.Key_0)
        elif key == Qt.Key.Key_Left:
            self.offset -= QPointF(step, 0)
        elif key == Qt.Key.Key_Right:
            self.offset += QPointF(step, 0)
        elif key == Qt.Key.Key_Up:
            self.offset -= QPointF(0, step)
        elif key == Qt.Key.Key_Down:
            self.offset += QPointF(0, step)
        elif key == Qt.Key.Key_PageDown:
            self.offset += QPointF(0, self.height() / self.scale * 0.9)
        elif key == Qt.Key.Key_PageUp:
            self.offset -= QPointF(0, self.height() / self.scale * 0.9)
        else:
            super().keyPressEvent(event)
            return
        self.update()

    # ---- painting ---------------------------------------------------------------------
    def _visible(self, margin: float = 0.0) -> np.ndarray:
        assert self.dg is not None
        v = self.visible_scene_rect()
        lay = self.dg.lay
        hw = self.dg.widths / 2 + margin
        hh = self.dg.heights / 2 + margin
        return np.flatnonzero((lay.x + hw >= v.left()) & (lay.x - hw <= v.right())
                              & (lay.y + hh >= v.top()) & (lay.y - hh <= v.bottom()) & ~self.dg.hidden)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("#1e1f22" if self.dark else "#fbfbfd"))
        dg = self.dg
        if dg is None or dg.n == 0:
            p.setPen(QColor("#888"))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter,
                       "Open an ONNX model (File > Open, or drop a file here)" if dg is None else "empty graph")
            p.end()
            return
        p.save()
        p.setClipRect(QRectF(0, 0, self.width(), self.viewport_height()))
        vis = self._visible()
        if len(vis) > DETAIL_LIMIT:
            self._paint_overview(p, vis)
        else:
            p.save()
            p.scale(self.scale, self.scale)
            p.translate(-self.offset)
            p.setRenderHint(QPainter.RenderHint.Antialiasing, len(vis) < 800)
            self._paint_edges(p)
            self._paint_nodes(p, vis)
            p.restore()
        self._paint_marks(p)
        p.restore()
        self._paint_legend(p)
        p.end()

    def _paint_edges(self, p: QPainter) -> None:
        dg = self.dg
        assert dg is not None
        v = self.visible_scene_rect()
        bb = dg.edge_bbox
        if len(bb) == 0:
            return
        ev = np.flatnonzero((bb[:, 2] >= v.left()) & (bb[:, 0] <= v.right())
                            & (bb[:, 3] >= v.top()) & (bb[:, 1] <= v.bottom()))
        if len(ev) > 6000:
            ev = ev[:6000]
        off = dg.lay.edge_offsets
        pts = dg.lay.edge_xy
        pen = QPen(QColor("#9a9a9a" if self.dark else "#7a7a7a"))
        pen.setWidthF(1.0 / max(self.scale, 0.3))
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        show_text = self.scale >= LABEL_SCALE
        label_color = QColor("#aaa" if self.dark else "#555")
        sel = self.selected
        hot_pen = QPen(SELECT_COLOR.darker(120))
        hot_pen.setWidthF(2.0 / max(self.scale, 0.3))
        for e in ev.tolist():
            seg = pts[off[e]:off[e + 1]]
            if len(seg) < 2:
                continue
            hot = int(dg.src[e]) in sel or int(dg.dst[e]) in sel
            if hot:
                p.setPen(hot_pen)
            path = QPainterPath(QPointF(seg[0, 0], seg[0, 1]))
            if len(seg) == 2:
                midy = (seg[0, 1] + seg[1, 1]) / 2
                path.cubicTo(QPointF(seg[0, 0], midy), QPointF(seg[1, 0], midy), QPointF(seg[1, 0], seg[1, 1]))
            else:
                path.addPolygon(QPolygonF([QPointF(a, b) for a, b in seg]))
            p.drawPath(path)
            end = seg[-1]
            arrow = QPolygonF([QPointF(end[0], end[1]), QPointF(end[0] - 4, end[1] - 7), QPointF(end[0] + 4, end[1] - 7)])
            p.setBrush(p.pen().color())
            p.drawPolygon(arrow)
            p.setBrush(Qt.BrushStyle.NoBrush)
            label = dg.edge_label(e) if show_text else ""
            if label:
                a, b = seg[0], seg[1]
                p.setFont(self._small)
                p.setPen(label_color)
                p.drawText(QPointF((a[0] + b[0]) / 2 + 4, (a[1] + b[1]) / 2 + 3), label)
                p.setPen(hot_pen if hot else pen)
            elif hot:
                p.setPen(pen)

    def _mark_sets(self) -> tuple[set[int], set[int]]:
        """Flagged and highlighted items, moved onto their host when folded."""
        dg = self.dg
        assert dg is not None
        if not dg.hidden.any():
            return self.flagged, self._highlight
        return ({dg.visible_index(i) for i in self.flagged if 0 <= i < dg.n},
                {dg.visible_index(i) for i in self._highlight if 0 <= i < dg.n})

    def _paint_nodes(self, p: QPainter, vis: np.ndarray) -> None:
        dg = self.dg
        assert dg is not None
        lay = dg.lay
        text = self.scale >= TEXT_SCALE
        border = QPen(QColor("#333"))
        border.setWidthF(1.0 / max(self.scale, 0.3))
        sel_pen = QPen(SELECT_COLOR)
        sel_pen.setWidthF(3.5 / max(self.scale, 0.3))
        hl_pen = QPen(QColor("#1e88e5"))
        hl_pen.setWidthF(3.0 / max(self.scale, 0.3))
        bad_pen = QPen(QColor("#e00000"))
        bad_pen.setWidthF(4.0 / max(self.scale, 0.3))
        bad_pen.setStyle(Qt.PenStyle.DashLine)
        folded = self.folded
        fold_count = dg.placement.fold_count
        flagged, highlight = self._mark_sets()
        for i in vis.tolist():
            w, h = dg.widths[i], dg.heights[i]
            r = QRectF(lay.x[i] - w / 2, lay.y[i] - h / 2, w, h)
            fill = self.fill_color(i)
            if folded is not None and folded[i]:
                fill = QColor(fill)
                fill.setAlpha(70)
            p.setBrush(fill)
            p.setPen(sel_pen if i in self.selected else bad_pen if i in flagged
                     else hl_pen if i in highlight else border)
            if dg.kind[i] == 1:
                p.drawRoundedRect(r, 5, 5)
            else:
                p.drawRoundedRect(r, h / 2, h / 2)
            if not text:
                continue
            light = fill.lightness() < 140 and fill.alpha() > 150
            p.setPen(QColor("#fff") if light else QColor("#111"))
            if dg.kind[i] == 1:
                p.setFont(self._font)
                p.drawText(QRectF(r.left() + 4, r.top() + 2, w - 8, h / 2), Qt.AlignmentFlag.AlignCenter,
                           dg.labels[i])
                p.setFont(self._small)
                sub = p.fontMetrics().elidedText(dg.sublabels[i], Qt.TextElideMode.ElideLeft, int(w - 8))
                p.drawText(QRectF(r.left() + 4, r.top() + h / 2, w - 8, h / 2 - 2), Qt.AlignmentFlag.AlignCenter,
                           sub)
                if fold_count[i]:
                    self._paint_badge(p, r, int(fold_count[i]))
            else:
                p.setFont(self._small)
                p.drawText(r, Qt.AlignmentFlag.AlignCenter,
                           p.fontMetrics().elidedText(f"{dg.labels[i]}  {dg.sublabels[i]}",
                                                      Qt.TextElideMode.ElideMiddle, int(w - 10)))

    def _paint_badge(self, p: QPainter, r: QRectF, count: int) -> None:
        """``+n`` on a node's top-right corner: n constant / shape nodes are folded into it."""
        p.setFont(self._small)
        label = f"+{count}"
        bw = p.fontMetrics().horizontalAdvance(label) + 8
        box = QRectF(r.right() - bw + 4, r.top() - 7, bw, 13)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(BADGE_COLOR)
        p.drawRoundedRect(box, 6, 6)
        p.setPen(QColor("#fff"))
        p.drawText(box, Qt.AlignmentFlag.AlignCenter, label)

    def _overview_colors(self) -> np.ndarray:
        dg = self.dg
        assert dg is not None
        if self._colors is None or len(self._colors) != dg.n:
            if self._overlay is None:
                pal = np.array([[c.blue(), c.green(), c.red(), c.alpha()] for c in self._palette], np.uint8)
                self._colors = pal[self._codes] if len(self._codes) == dg.n else np.full((dg.n, 4), 128, np.uint8)
            else:
                uniq = {c: k for k, c in enumerate(dict.fromkeys(self._overlay))}
                pal = np.array([[q.blue(), q.green(), q.red(), q.alpha()] for q in map(self._qcolor, uniq)], np.uint8)
                codes = np.fromiter((uniq[c] for c in self._overlay), np.int64, len(self._overlay))
                self._colors = pal[codes] if len(codes) == dg.n else np.full((dg.n, 4), 128, np.uint8)
        return self._colors

    def _paint_overview(self, p: QPainter, vis: np.ndarray) -> None:
        """Far zoom: rasterise the visible nodes as blocks with numpy, straight into one image.

        The cost follows the pixels painted, not the node count, and the image is made at the
        current scale, so it stays sharp at every zoom level."""
        dg = self.dg
        assert dg is not None
        w, h = max(self.width(), 1), max(int(self.viewport_height()), 1)
        img = QImage(w, h, QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(QColor(0, 0, 0, 0))
        arr = np.ndarray((h, w, 4), dtype=np.uint8, buffer=img.bits())
        lay = dg.lay
        s = self.scale
        cx = ((lay.x[vis] - self.offset.x()) * s).astype(np.int64)
        cy = ((lay.y[vis] - self.offset.y()) * s).astype(np.int64)
        hw = (dg.widths[vis] * s / 2).astype(np.int64)
        hh = (dg.heights[vis] * s / 2).astype(np.int64)
        colors = self._overview_colors()[vis].copy()
        if self.folded is not None:
            colors[self.folded[vis], 3] = 90
        maxh = int(hh.max()) if len(hh) else 0
        maxw = int(hw.max()) if len(hw) else 0
        for dy in range(-maxh, maxh + 1):
            okh = np.abs(dy) <= hh
            yy = cy + dy
            okh &= (yy >= 0) & (yy < h)
            for dx in range(-maxw, maxw + 1):
                ok = okh & (np.abs(dx) <= hw)
                xx = cx + dx
                ok &= (xx >= 0) & (xx < w)
                arr[yy[ok], xx[ok]] = colors[ok]
        p.drawImage(0, 0, img)

    def _paint_marks(self, p: QPainter) -> None:
        """Zoomed out (no text): rings around selected, flagged and highlighted items."""
        dg = self.dg
        assert dg is not None
        flagged, highlight = self._mark_sets()
        marks = list(self.selected) + list(highlight) + list(flagged)
        if self.scale >= TEXT_SCALE or not marks:
            return
        p.setBrush(Qt.BrushStyle.NoBrush)
        for i in marks[:2000]:
            j = dg.visible_index(i)
            p.setPen(QPen(SELECT_COLOR if i in self.selected else QColor("#e00000") if i in flagged
                          else QColor("#1e88e5"), 2))
            p.drawEllipse(self.to_view(float(dg.lay.x[j]), float(dg.lay.y[j])), 6, 6)

    def _paint_legend(self, p: QPainter) -> None:
        """The legend strip below the drawing area: colour chips, wrapped to the width."""
        items = self.legend_items()
        if not items:
            return
        box = self.legend_rect()
        p.fillRect(box, QColor("#2a2b2f" if self.dark else "#eeeef2"))
        p.setPen(QColor("#555" if self.dark else "#c8c8d0"))
        p.drawLine(box.topLeft(), box.topRight())
        p.setFont(self._small)
        fm = p.fontMetrics()
        x, y = 8.0, box.top() + 4
        for label, col in items:
            w = fm.horizontalAdvance(label) + 32
            if x + w > self.width() - 4 and x > 8:
                x, y = 8.0, y + LEGEND_ROW
            if label == FOLD_LEGEND:
                chip = QRectF(x, y + 3, 16, 11)
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(BADGE_COLOR)
                p.drawRoundedRect(chip, 5, 5)
                p.setPen(QColor("#fff"))
                p.drawText(chip, Qt.AlignmentFlag.AlignCenter, "+")
            else:
                p.fillRect(QRectF(x, y + 3, 16, 11), QColor(col))
            p.setPen(QColor("#ddd" if self.dark else "#222"))
            p.drawText(QPointF(x + 21, y + 12), label)
            x += w
