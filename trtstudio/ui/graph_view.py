"""GraphView: a QWidget that paints a laid-out ONNX graph, with level of detail.

It does not create one QGraphicsItem per node: a 100k-node graph would cost seconds to build and
pan poorly. Positions live in numpy arrays; each paint selects the visible nodes with one vector
compare and draws only those. Zoomed far out, a cached overview image is blitted instead (its
cost does not depend on the node count); text is dropped below a readable scale.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
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
from PySide6.QtWidgets import QWidget

from trtstudio.graph.categories import CATEGORIES
from trtstudio.ui.graph_scene import DisplayGraph

IO_COLOR = "#e8e8e8"
SELECT_COLOR = QColor("#ffb000")
DETAIL_LIMIT = 2500  # more visible nodes than this: draw the overview image
TEXT_SCALE = 0.45  # below this zoom, no text


class GraphView(QWidget):
    """Pan (drag), zoom (wheel, +/-), fit (F or 0), click to select, double-click to open a subgraph."""

    sig_node_selected = Signal(int)  # display index, -1 for none
    sig_node_activated = Signal(int)  # double click
    sig_zoom_changed = Signal(float)

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
        self.highlight: set[int] = set()  # search hits
        self.flagged: set[int] = set()  # nodes the TensorRT parser rejects
        self.folded: np.ndarray | None = None  # bool per display item: no engine layer
        self._fill: list[QColor] = []
        self._colors: np.ndarray | None = None  # BGRA per item, for the overview raster
        self._drag_start: QPointF | None = None
        self._drag_offset = QPointF()
        self._font = QFont()
        self._font.setPointSizeF(9)
        self._small = QFont()
        self._small.setPointSizeF(7.5)
        self.legend: list[tuple[str, str]] = []
        self.dark = False
        self._set_category_colors()

    def set_dark(self, dark: bool) -> None:
        self.dark = dark
        self.update()

    # ---- data -------------------------------------------------------------------------
    def set_display(self, dg: DisplayGraph | None) -> None:
        self.dg = dg
        self.selected.clear()
        self.highlight.clear()
        self.flagged.clear()
        self.current = -1
        self.folded = None
        self._set_category_colors()
        self.fit()

    def _set_category_colors(self) -> None:
        dg = self.dg
        self.legend = [(label, col) for label, col in CATEGORIES.values()]
        if dg is None:
            self._fill = []
        else:
            self._fill = [QColor(IO_COLOR if c == "io" else CATEGORIES.get(c, CATEGORIES["other"])[1])
                          for c in dg.cats]
        self._colors = None
        self.update()

    def set_overlay(self, colors: list[str] | None, legend: list[tuple[str, str]] | None = None,
                    folded: np.ndarray | None = None) -> None:
        """Colour nodes by something else (fused layer, precision, time share, finding); None restores categories."""
        if colors is None or self.dg is None:
            self.folded = None
            self._set_category_colors()
            return
        self._fill = [QColor(c) for c in colors]
        self.legend = legend or []
        self.folded = folded
        self._colors = None
        self.update()

    # ---- geometry ---------------------------------------------------------------------
    def scene_rect(self) -> QRectF:
        if self.dg is None:
            return QRectF(0, 0, 1, 1)
        lay = self.dg.lay
        return QRectF(-40, -40, max(lay.width, 1) + 80, max(lay.height, 1) + 80)

    def to_scene(self, p: QPointF) -> QPointF:
        return QPointF(p.x() / self.scale + self.offset.x(), p.y() / self.scale + self.offset.y())

    def visible_scene_rect(self) -> QRectF:
        return QRectF(self.offset.x(), self.offset.y(), self.width() / self.scale, self.height() / self.scale)

    def fit(self, *, whole: bool = False) -> None:
        """Fit the graph in the view; a graph too tall to read that way starts at its top, readable.

        ``whole=True`` always shows everything (Shift+F)."""
        r = self.scene_rect()
        w, h = max(self.width(), 1), max(self.height(), 1)
        s = min(w / r.width(), h / r.height())
        if not whole and s < TEXT_SCALE and self.dg is not None and self.dg.n > 0:
            s = max(TEXT_SCALE + 0.25, min(1.0, w / r.width()))
        self._set_scale(min(max(s, 1e-4), 1.5))
        vis = self.visible_scene_rect()
        self.offset = QPointF(r.center().x() - vis.width() / 2,
                              r.top() if r.height() * self.scale > h else r.center().y() - vis.height() / 2)
        self.update()

    def zoom_by(self, factor: float, anchor: QPointF | None = None) -> None:
        anchor = anchor if anchor is not None else QPointF(self.width() / 2, self.height() / 2)
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
        idx = np.asarray(display_indices)
        x, y = self.dg.lay.x[idx], self.dg.lay.y[idx]
        w = self.dg.widths[idx]
        box = QRectF(float((x - w / 2).min()), float(y.min()) - 40, float((x + w / 2).max() - (x - w / 2).min()),
                     float(y.max() - y.min()) + 80)
        if zoom_in:
            s = min(self.width() / max(box.width() + 80, 1), self.height() / max(box.height(), 1))
            self._set_scale(min(max(s, 0.6 if len(idx) < 30 else 0.05), 1.5))
        vis = self.visible_scene_rect()
        self.offset = QPointF(box.center().x() - vis.width() / 2, box.center().y() - vis.height() / 2)
        self.update()

    def node_at(self, p: QPointF) -> int:
        if self.dg is None or self.dg.n == 0:
            return -1
        sp = self.to_scene(p)
        lay = self.dg.lay
        hit = np.flatnonzero((np.abs(lay.x - sp.x()) <= self.dg.widths / 2)
                             & (np.abs(lay.y - sp.y()) <= self.dg.heights / 2))
        return int(hit[0]) if len(hit) else -1

    # ---- selection --------------------------------------------------------------------
    def select(self, display_indices: list[int], *, center: bool = True, emit: bool = False) -> None:
        self.selected = set(display_indices)
        self.current = display_indices[0] if display_indices else -1
        if center and display_indices:
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
                              & (lay.y + hh >= v.top()) & (lay.y - hh <= v.bottom()))

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
        self._paint_selection_overlay(p)
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
        show_text = self.scale >= 0.8
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
            if show_text and dg.edge_labels[e]:
                a, b = seg[0], seg[1]
                p.setFont(self._small)
                p.setPen(QColor("#aaa" if self.dark else "#555"))
                p.drawText(QPointF((a[0] + b[0]) / 2 + 4, (a[1] + b[1]) / 2 + 3), dg.edge_labels[e])
                p.setPen(hot_pen if hot else pen)
            elif hot:
                p.setPen(pen)

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
        for i in vis.tolist():
            w, h = dg.widths[i], dg.heights[i]
            r = QRectF(lay.x[i] - w / 2, lay.y[i] - h / 2, w, h)
            fill = self._fill[i] if i < len(self._fill) else QColor("#999")
            if folded is not None and folded[i]:
                fill = QColor(fill)
                fill.setAlpha(70)
            p.setBrush(fill)
            p.setPen(sel_pen if i in self.selected else bad_pen if i in self.flagged
                     else hl_pen if i in self.highlight else border)
            if dg.kind[i] == 1:
                p.drawRoundedRect(r, 5, 5)
            else:
                p.drawRoundedRect(r, h / 2, h / 2)
            if text:
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
                else:
                    p.setFont(self._small)
                    p.drawText(r, Qt.AlignmentFlag.AlignCenter,
                               p.fontMetrics().elidedText(f"{dg.labels[i]}  {dg.sublabels[i]}",
                                                          Qt.TextElideMode.ElideMiddle, int(w - 10)))

    def _paint_overview(self, p: QPainter, vis: np.ndarray) -> None:
        """Far zoom: rasterise the visible nodes as blocks with numpy, straight into one image.

        The cost follows the pixels painted, not the node count, and the image is made at the
        current scale, so it stays sharp at every zoom level."""
        dg = self.dg
        assert dg is not None
        w, h = max(self.width(), 1), max(self.height(), 1)
        img = QImage(w, h, QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(QColor(0, 0, 0, 0))
        arr = np.ndarray((h, w, 4), dtype=np.uint8, buffer=img.bits())
        lay = dg.lay
        s = self.scale
        cx = ((lay.x[vis] - self.offset.x()) * s).astype(np.int64)
        cy = ((lay.y[vis] - self.offset.y()) * s).astype(np.int64)
        hw = (dg.widths[vis] * s / 2).astype(np.int64)
        hh = (dg.heights[vis] * s / 2).astype(np.int64)
        if self._colors is None or len(self._colors) != dg.n:
            self._colors = np.array([[c.blue(), c.green(), c.red(), c.alpha()] for c in self._fill], np.uint8) \
                if len(self._fill) == dg.n else np.full((dg.n, 4), 128, np.uint8)
        colors = self._colors[vis].copy()
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

    def _paint_selection_overlay(self, p: QPainter) -> None:
        dg = self.dg
        assert dg is not None
        marks = list(self.selected) + list(self.highlight) + list(self.flagged)
        if self.scale < TEXT_SCALE and marks:
            for i in marks[:2000]:
                sp = QPointF((dg.lay.x[i] - self.offset.x()) * self.scale, (dg.lay.y[i] - self.offset.y()) * self.scale)
                p.setPen(QPen(SELECT_COLOR if i in self.selected else QColor("#e00000") if i in self.flagged
                              else QColor("#1e88e5"), 2))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawEllipse(sp, 6, 6)
        # legend
        if self.legend:
            p.setFont(self._small)
            fm = p.fontMetrics()
            x, y = 10, self.height() - 10 - 16 * len(self.legend)
            wmax = max(fm.horizontalAdvance(t) for t, _ in self.legend) + 30
            p.fillRect(QRectF(x - 4, y - 4, wmax + 8, 16 * len(self.legend) + 6), QColor(255, 255, 255, 220))
            for label, col in self.legend:
                p.fillRect(QRectF(x, y + 2, 14, 10), QColor(col))
                p.setPen(QColor("#222"))
                p.drawText(QPointF(x + 20, y + 11), label)
                y += 16
