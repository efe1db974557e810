"""Painting of a graph view: edges with shape labels, nodes with text and fold badges, marks.

Only the visible nodes are drawn (the view selects them with one vector compare). Zoomed far out,
they are rasterised straight into an image with numpy, so a frame costs the pixels painted, not
the node count; text is dropped below a readable scale.
"""

from __future__ import annotations

import struct
from typing import Protocol

import numpy as np
from PySide6.QtCore import QByteArray, QDataStream, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPainterPath, QPen

from trtstudio.graph.display import DisplayGraph
from trtstudio.ui.graph_colors import NodeColors
from trtstudio.ui.graph_legend import BADGE_COLOR


class PaintedView(Protocol):
    """What :class:`GraphPainter` reads of the view it paints (``graph_view.GraphView`` is one):
    the display graph, the camera, the colours and the marks. The painter knows the view by this
    alone, so the view's module imports the painter's and not the other way round."""

    dg: DisplayGraph | None
    scale: float
    offset: QPointF
    dark: bool
    selected: set[int]
    flagged: set[int]
    colors: NodeColors

    @property
    def highlight(self) -> set[int]: ...

    @property
    def folded(self) -> np.ndarray | None: ...

    def fill_color(self, i: int) -> QColor: ...

    def width(self) -> int: ...

    def viewport_height(self) -> float: ...

    def to_view(self, x: float, y: float) -> QPointF: ...

    def visible_scene_rect(self) -> QRectF: ...

SELECT_COLOR = QColor("#ffb000")
HIGHLIGHT_COLOR = QColor("#1e88e5")  # search hits
FLAG_COLOR = QColor("#e00000")  # nodes the TensorRT parser rejects
DETAIL_LIMIT = 2500  # more visible nodes than this: draw the overview image
TEXT_SCALE = 0.45  # below this zoom, no text
LABEL_SCALE = 0.8  # edge labels from this zoom
MAX_EDGES = 6000  # edges drawn per frame at most
MAX_MARKS = 2000  # rings drawn per frame at most (zoomed out)


def _pen(color: QColor, width: float, scale: float) -> QPen:
    """A pen ``width`` pixels wide on screen at zoom ``scale`` (never thinner than at 0.3)."""
    pen = QPen(color)
    pen.setWidthF(width / max(scale, 0.3))
    return pen


def _label_anchor(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scene point where an edge's shape label starts, from the first two points of its polyline."""
    return (a[..., 0] + b[..., 0]) / 2 + 4, (a[..., 1] + b[..., 1]) / 2 + 3


# QPainterPath element types, as QDataStream writes them
_MOVE, _LINE, _CURVE, _CURVE_DATA = 0, 1, 2, 3
_CURVE_KINDS = np.array([_MOVE, _CURVE, _CURVE_DATA, _CURVE_DATA], dtype=np.int32)
_ARROW_KINDS = np.array([_MOVE, _LINE, _LINE, _LINE], dtype=np.int32)
_ARROW_SHAPE = np.array([[0.0, 0.0], [-4.0, -7.0], [4.0, -7.0], [0.0, 0.0]])  # tip, corners, tip: closed


def _path_of(kinds: np.ndarray, xy: np.ndarray, winding: bool = False) -> QPainterPath:
    """A QPainterPath of elements (``kinds``: move/line/curve, ``xy``: their points) read from
    QPainterPath's QDataStream form in one call (as pyqtgraph's arrayToQPath does): making it
    element by element from Python costs a call each."""
    n = len(kinds)
    path = QPainterPath()
    if not n:
        return path
    rec = np.empty(n, dtype=[("kind", ">i4"), ("x", ">f8"), ("y", ">f8")])
    rec["kind"], rec["x"], rec["y"] = kinds, xy[:, 0], xy[:, 1]
    tail = struct.pack(">ii", 0, int(Qt.FillRule.WindingFill.value if winding else Qt.FillRule.OddEvenFill.value))
    QDataStream(QByteArray(struct.pack(">i", n) + rec.tobytes() + tail)) >> path  # type: ignore[operator]
    return path


def _edges_path(pts: np.ndarray, starts: np.ndarray, counts: np.ndarray, top: float, bottom: float) -> QPainterPath:
    """One path for these edges (each ``counts`` points of ``pts`` from ``starts``): an edge of two
    points as a vertical S curve, a longer one as its polyline (the part in the band ``top``..``bottom``)."""
    kinds: list[np.ndarray] = []
    xy: list[np.ndarray] = []
    two = counts == 2
    if two.any():
        a, b = pts[starts[two]], pts[starts[two] + 1]
        mid = (a[:, 1] + b[:, 1]) / 2
        curve = np.stack([a, np.column_stack([a[:, 0], mid]), np.column_stack([b[:, 0], mid]), b], axis=1)
        kinds.append(np.tile(_CURVE_KINDS, len(a)))
        xy.append(curve.reshape(-1, 2))
    for s0, n in zip(starts[~two].tolist(), counts[~two].tolist(), strict=True):
        part = _band(pts[s0:s0 + n], top, bottom)
        k = np.full(len(part), _LINE, dtype=np.int32)
        k[0] = _MOVE
        kinds.append(k)
        xy.append(part)
    return _path_of(np.concatenate(kinds), np.concatenate(xy)) if kinds else QPainterPath()


def _arrows_path(ends: np.ndarray) -> QPainterPath:
    """One path of arrow heads, a closed triangle pointing down at each of ``ends`` (winding fill:
    heads that overlap at one node stay filled)."""
    xy = (ends[:, None, :] + _ARROW_SHAPE[None, :, :]).reshape(-1, 2)
    return _path_of(np.tile(_ARROW_KINDS, len(ends)), xy, winding=True)


def _drawable(pts: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Which edges (``counts`` points of ``pts`` from ``starts``) a paint draws: two points or more,
    all finite (Qt drops a whole QPainterPath read with one NaN point: every edge of the frame)."""
    drawn = counts >= 2
    if not np.isfinite(pts).all():
        bad = np.concatenate([[0], np.cumsum(~np.isfinite(pts).all(axis=1))])
        drawn &= bad[starts + counts] == bad[starts]
    return drawn  # type: ignore[no-any-return]


def _band(seg: np.ndarray, top: float, bottom: float) -> np.ndarray:
    """The points of an edge's polyline that a paint of the band ``top``..``bottom`` needs: from the
    last one above it to the first one below. The layered layout routes every edge downwards, so
    its points go by ascending y; a long edge (a graph input read by every layer) has thousands,
    and making a QPointF of each, on every paint, stalled the window for a tenth of a second.
    A polyline not in y order is kept whole."""
    if len(seg) <= 8:
        return seg
    y = seg[:, 1]
    if not bool(np.all(y[1:] >= y[:-1])):
        return seg
    lo = max(int(np.searchsorted(y, top, side="left")) - 1, 0)
    hi = min(int(np.searchsorted(y, bottom, side="right")) + 1, len(seg))
    return seg[lo:hi] if hi - lo >= 2 else seg[max(0, hi - 2):max(2, hi)]


class GraphPainter:
    """Draws the graph of ``view`` (its display graph, camera, colours and marks) with a QPainter."""

    def __init__(self, view: PaintedView) -> None:
        self.view = view
        self.font = QFont()
        self.font.setPointSizeF(9)
        self.small = QFont()
        self.small.setPointSizeF(7.5)

    def _dg(self) -> DisplayGraph:
        dg = self.view.dg
        assert dg is not None
        return dg

    def paint_graph(self, p: QPainter, vis: np.ndarray) -> None:
        """Draw the visible items ``vis``: in detail, or as the far-zoom raster above DETAIL_LIMIT."""
        view = self.view
        if len(vis) > DETAIL_LIMIT:
            self._paint_overview(p, vis)
        else:
            p.save()
            p.scale(view.scale, view.scale)
            p.translate(-view.offset)
            p.setRenderHint(QPainter.RenderHint.Antialiasing, len(vis) < 800)
            self._paint_edges(p)
            self._paint_nodes(p, vis)
            p.restore()
        self._paint_marks(p)

    def edge_label_at(self, sp: QPointF) -> int:
        """Drawn edge whose shape label covers scene point ``sp`` (labels show from LABEL_SCALE), or -1."""
        dg, scale = self.view.dg, self.view.scale
        if dg is None or scale < LABEL_SCALE or len(dg.src) == 0:
            return -1
        off = dg.lay.edge_offsets
        pts = dg.lay.edge_xy
        has = np.diff(off) >= 2
        ax, ay = _label_anchor(pts[np.minimum(off[:-1], len(pts) - 1)], pts[np.minimum(off[:-1] + 1, len(pts) - 1)])
        fm = QFontMetricsF(self.small)
        hh = fm.height() / scale
        near = np.flatnonzero(has & (sp.x() >= ax) & (sp.x() <= ax + 200 / scale) & (sp.y() <= ay + 2)
                              & (sp.y() >= ay - hh))
        for e in near.tolist():
            if dg.edge_labelled(e) and sp.x() <= ax[e] + fm.horizontalAdvance(dg.edge_label(e)) / scale:
                return e
        return -1

    def _paint_edges(self, p: QPainter) -> None:
        view, dg = self.view, self._dg()
        v = view.visible_scene_rect()
        bb = dg.edge_bbox
        if len(bb) == 0:
            return
        ev = np.flatnonzero((bb[:, 2] >= v.left()) & (bb[:, 0] <= v.right())
                            & (bb[:, 3] >= v.top()) & (bb[:, 1] <= v.bottom()))[:MAX_EDGES]
        off = dg.lay.edge_offsets
        pts = dg.lay.edge_xy
        starts = off[ev]
        counts = off[ev + 1] - starts
        drawn = _drawable(pts, starts, counts)
        ev, starts, counts = ev[drawn], starts[drawn], counts[drawn]
        if not len(ev):
            return
        pen = _pen(QColor("#9a9a9a" if view.dark else "#7a7a7a"), 1.0, view.scale)
        hot_pen = _pen(SELECT_COLOR.darker(120), 2.0, view.scale)
        sel = view.selected
        hot = np.zeros(len(ev), dtype=bool)
        if sel:
            chosen = np.fromiter(sel, dtype=np.int64, count=len(sel))
            hot = np.isin(dg.src[ev], chosen) | np.isin(dg.dst[ev], chosen)
        # each pen's edges, then their arrow heads (filled in the pen's colour), as one path each:
        # a QPainterPath and two draw calls per edge took 100 ms a paint at 4,000 edges
        for group, group_pen in ((~hot, pen), (hot, hot_pen)):
            if not group.any():
                continue
            p.setPen(group_pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawPath(_edges_path(pts, starts[group], counts[group], v.top(), v.bottom()))
            p.setBrush(group_pen.color())
            p.drawPath(_arrows_path(pts[starts[group] + counts[group] - 1]))
        p.setBrush(Qt.BrushStyle.NoBrush)
        if view.scale >= LABEL_SCALE:
            p.setFont(self.small)
            p.setPen(QColor("#aaa" if view.dark else "#555"))
            for e, s0 in zip(ev.tolist(), starts.tolist(), strict=True):
                label = dg.edge_label(e) if dg.edge_labelled(e) else ""
                if label:
                    lx, ly = _label_anchor(pts[s0], pts[s0 + 1])
                    p.drawText(QPointF(float(lx), float(ly)), label)

    def _mark_sets(self) -> tuple[set[int], set[int]]:
        """Flagged and highlighted items, moved onto their host when folded."""
        view, dg = self.view, self._dg()
        if not dg.hidden.any():
            return view.flagged, view.highlight
        return dg.visible_indices(view.flagged), dg.visible_indices(view.highlight)

    def _paint_nodes(self, p: QPainter, vis: np.ndarray) -> None:
        view, dg = self.view, self._dg()
        lay = dg.lay
        text = view.scale >= TEXT_SCALE
        border = _pen(QColor("#333"), 1.0, view.scale)
        sel_pen = _pen(SELECT_COLOR, 3.5, view.scale)
        hl_pen = _pen(HIGHLIGHT_COLOR, 3.0, view.scale)
        bad_pen = _pen(FLAG_COLOR, 4.0, view.scale)
        bad_pen.setStyle(Qt.PenStyle.DashLine)
        folded = view.folded
        fold_count = dg.placement.fold_count
        flagged, highlight = self._mark_sets()
        for i in vis.tolist():
            w, h = dg.widths[i], dg.heights[i]
            r = QRectF(lay.x[i] - w / 2, lay.y[i] - h / 2, w, h)
            fill = view.fill_color(i)
            if folded is not None and folded[i]:
                fill = QColor(fill)
                fill.setAlpha(70)
            p.setBrush(fill)
            p.setPen(sel_pen if i in view.selected else bad_pen if i in flagged
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
                p.setFont(self.font)
                p.drawText(QRectF(r.left() + 4, r.top() + 2, w - 8, h / 2), Qt.AlignmentFlag.AlignCenter,
                           dg.labels[i])
                p.setFont(self.small)
                sub = p.fontMetrics().elidedText(dg.sublabels[i], Qt.TextElideMode.ElideLeft, int(w - 8))
                p.drawText(QRectF(r.left() + 4, r.top() + h / 2, w - 8, h / 2 - 2), Qt.AlignmentFlag.AlignCenter,
                           sub)
                if fold_count[i]:
                    self._paint_badge(p, r, int(fold_count[i]))
            else:
                p.setFont(self.small)
                p.drawText(r, Qt.AlignmentFlag.AlignCenter,
                           p.fontMetrics().elidedText(f"{dg.labels[i]}  {dg.sublabels[i]}",
                                                      Qt.TextElideMode.ElideMiddle, int(w - 10)))

    def _paint_badge(self, p: QPainter, r: QRectF, count: int) -> None:
        """``+n`` on a node's top-right corner: n constant / shape nodes are folded into it."""
        p.setFont(self.small)
        label = f"+{count}"
        bw = p.fontMetrics().horizontalAdvance(label) + 8
        box = QRectF(r.right() - bw + 4, r.top() - 7, bw, 13)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(BADGE_COLOR)
        p.drawRoundedRect(box, 6, 6)
        p.setPen(QColor("#fff"))
        p.drawText(box, Qt.AlignmentFlag.AlignCenter, label)

    def _paint_overview(self, p: QPainter, vis: np.ndarray) -> None:
        """Far zoom: rasterise the visible nodes as blocks with numpy, straight into one image.

        The cost follows the pixels painted, not the node count, and the image is made at the
        current scale, so it stays sharp at every zoom level."""
        view, dg = self.view, self._dg()
        w, h = max(view.width(), 1), max(int(view.viewport_height()), 1)
        img = QImage(w, h, QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(QColor(0, 0, 0, 0))
        arr = np.ndarray((h, w, 4), dtype=np.uint8, buffer=img.bits())
        lay = dg.lay
        s = view.scale
        cx = ((lay.x[vis] - view.offset.x()) * s).astype(np.int64)
        cy = ((lay.y[vis] - view.offset.y()) * s).astype(np.int64)
        hw = (dg.widths[vis] * s / 2).astype(np.int64)
        hh = (dg.heights[vis] * s / 2).astype(np.int64)
        colors = view.colors.raster(dg.n)[vis].copy()
        if view.folded is not None:
            colors[view.folded[vis], 3] = 90
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
        view, dg = self.view, self._dg()
        flagged, highlight = self._mark_sets()
        marks = list(view.selected) + list(highlight) + list(flagged)
        if view.scale >= TEXT_SCALE or not marks:
            return
        p.setBrush(Qt.BrushStyle.NoBrush)
        for i in marks[:MAX_MARKS]:
            j = dg.visible_index(i)
            p.setPen(QPen(SELECT_COLOR if i in view.selected else FLAG_COLOR if i in flagged
                          else HIGHLIGHT_COLOR, 2))
            p.drawEllipse(view.to_view(float(dg.lay.x[j]), float(dg.lay.y[j])), 6, 6)
