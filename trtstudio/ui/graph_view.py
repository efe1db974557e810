"""GraphView: a QWidget that shows a laid-out ONNX graph, with level of detail.

It does not create one QGraphicsItem per node: a 100k-node graph would cost seconds to build and
pan poorly. Positions live in numpy arrays; each paint selects the visible nodes with one vector
compare and draws only those (``graph_paint.GraphPainter``; far out, one raster image).

The view is the camera (pan, zoom, fit), selection, search hits and input; the parts it is
composed of each hold one concern: ``graph_colors.NodeColors`` (category or overlay colours),
``graph_legend.GraphLegend`` (the strip below the drawing area, so it never covers a node),
``graph_relayout.Relayout`` (constant and shape-computation chains folded into their consumer,
see ``trtstudio.graph.fold``; a search hit or a selected node inside a folded chain unfolds that
chain; re-layouts of big graphs run in a worker).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu, QToolTip, QWidget

from trtstudio.graph.display import DisplayGraph, Placement
from trtstudio.graph.fold import Folding
from trtstudio.ui.graph_colors import NodeColors
from trtstudio.ui.graph_legend import GraphLegend
from trtstudio.ui.graph_paint import TEXT_SCALE, GraphPainter
from trtstudio.ui.graph_relayout import Relayout

FIRST_FRAME_MS = 60  # a big graph's full layout starts this long after its top is shown
READABLE_SCALE = 0.6  # the first frame of a big graph is never smaller than this
SYNC_RELAYOUT = 5000  # re-layouts (fold toggle, unfolding a hit) of bigger graphs run in a worker


class GraphView(QWidget):
    """Pan (drag), zoom (wheel, +/-), fit (F or 0), click to select, double-click to open a subgraph."""

    sig_node_selected = Signal(int)  # display index, -1 for none
    sig_node_activated = Signal(int)  # double click
    sig_zoom_changed = Signal(float)
    sig_folding_changed = Signal(int)  # nodes folded after a (re-)layout
    sig_view_moved = Signal()  # the scene point at the widget's origin changed (pan, zoom, fit, centring)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(False)
        self.setMinimumSize(200, 200)
        self.setAutoFillBackground(False)
        self.dg: DisplayGraph | None = None
        self.scale = 1.0
        self._offset = QPointF(0, 0)  # scene point at widget origin (``offset``)
        self.selected: set[int] = set()
        self.current: int = -1
        self._highlight: set[int] = set()  # search hits
        self.flagged: set[int] = set()  # nodes the TensorRT parser rejects
        self.dark = False
        self.colors = NodeColors()
        self._painter = GraphPainter(self)
        self.legend_strip = GraphLegend(self._painter.small)
        self._relayout = Relayout()
        # Set while the graph's layout is complete; cleared while a big graph is laid out in a worker.
        # Work that can wait (the profile panel's input specs) waits on it, so it does not compete
        # with the layout and the first paints for the GIL.
        self.layout_settled = threading.Event()
        self.layout_settled.set()
        self._rest_pending: DisplayGraph | None = None  # shown in part; its full layout starts soon
        self._drag_start: QPointF | None = None
        self._drag_offset = QPointF()
        self._moved = False
        self._pending_center: list[int] | None = None  # centre on these once the re-layout is shown
        self._user_moved = False  # pan, zoom or select since the first frame

    @property
    def offset(self) -> QPointF:
        """The scene point at the widget's origin; setting it emits ``sig_view_moved`` (a copy is
        returned, so ``view.offset -= d`` sets it)."""
        return QPointF(self._offset)

    @offset.setter
    def offset(self, value: QPointF) -> None:
        if value != self._offset:
            self._offset = QPointF(value)
            self.sig_view_moved.emit()

    def center_scene(self) -> QPointF:
        """The scene point at the centre of the drawing area."""
        return self.to_scene(QPointF(self.width() / 2, self.viewport_height() / 2))

    def set_view(self, scale: float, center: QPointF) -> None:
        """Show scene point ``center`` at the middle of the drawing area at zoom ``scale``."""
        self._set_scale(scale)
        self.offset = QPointF(center.x() - self.width() / 2 / scale, center.y() - self.viewport_height() / 2 / scale)
        self.update()

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
        self._relayout.reset(dg)
        self._pending_center = None
        self.colors.set_categories(dg)
        self._user_moved = False
        self.fit()
        if dg is not None and not dg.placement.complete:  # only the top is placed: the rest in a worker
            self.layout_settled.clear()
            # after the first frame: the worker's layout and that paint competed for the GIL
            self._rest_pending = dg
            QTimer.singleShot(FIRST_FRAME_MS, lambda: self._start_rest(dg))
        else:
            self.layout_settled.set()

    def _start_rest(self, dg: DisplayGraph) -> None:
        if self._rest_pending is dg and dg is self.dg:  # no other layout was asked for meanwhile
            self._start_relayout(dg.folding)

    @property
    def legend(self) -> list[tuple[str, str]]:
        """(label, hex colour) of the colours in use (categories or the overlay's legend)."""
        return self.colors.legend

    @property
    def folded(self) -> np.ndarray | None:
        """Bool per display item: no engine layer came from it (set by an overlay), or None."""
        return self.colors.folded

    def set_overlay(self, colors: list[str] | None, legend: list[tuple[str, str]] | None = None,
                    folded: np.ndarray | None = None) -> None:
        """Colour nodes by something else (fused layer, precision, time share, finding); None restores categories."""
        if colors is None or self.dg is None:
            self.colors.set_categories(self.dg)
        else:
            self.colors.set_overlay(colors, legend, folded)
        self.update()

    def fill_color(self, i: int) -> QColor:
        """Fill colour of display item ``i`` (overlay or op category)."""
        return self.colors.fill(i)

    # ---- folding ----------------------------------------------------------------------
    @property
    def folding_enabled(self) -> bool:
        """True when constant / shape chains are folded into their consumers."""
        return self._relayout.enabled

    def set_folding(self, enabled: bool) -> None:
        """Fold (True) or unfold (False) constant and shape-computation chains, and lay out again.

        Search hits and selected nodes stay unfolded. Big graphs are laid out in a worker;
        ``sig_folding_changed`` tells when the new layout is shown."""
        self._relayout.enabled = bool(enabled)
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

    def _update_folding(self, force: bool = False) -> None:
        wanted = self._relayout.change(self.dg, self._highlight | self.selected, force=force)
        if wanted is not None:
            self._start_relayout(wanted)
        elif force and self.dg is not None:
            self.sig_folding_changed.emit(self.dg.folded_count)

    def _start_relayout(self, wanted: Folding) -> None:
        assert self.dg is not None
        self._rest_pending = None
        self._relayout.start(self.dg, wanted, sync=self.dg.n <= SYNC_RELAYOUT, done=self._on_relayout_done)

    def _on_relayout_done(self, dg: DisplayGraph, placement: Placement) -> None:
        if dg is not self.dg:
            return  # another graph
        keep = self.to_scene(QPointF(self.width() / 2, self.viewport_height() / 2))
        anchor = self.current if self.current >= 0 else -1
        before = (float(dg.lay.x[anchor]), float(dg.lay.y[anchor])) if anchor >= 0 else None
        was_partial = not dg.placement.complete
        dg.apply(placement)
        if dg.placement.complete:
            self.layout_settled.set()
        if not self.colors.is_overlay:
            self.colors.set_categories(dg)  # the legend lists the categories shown now
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
        return self.legend_strip.items(self.legend, self.dg.folded_count if self.dg is not None else 0)

    def legend_rect(self) -> QRectF:
        """The strip at the bottom where the legend is drawn; the graph is never drawn there."""
        items = self.legend_items() if self.dg is not None else []
        return self.legend_strip.rect(items, self.width(), self.height())

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
        return self._painter.edge_label_at(self.to_scene(p))

    def tooltip_at(self, p: QPointF) -> str:
        """Tooltip text at widget point ``p``: a node's op, name and folded nodes, or an edge's full shape."""
        dg = self.dg
        if dg is None:
            return ""
        i = self.node_at(p)
        if i >= 0:
            text = f"{dg.labels[i]}  {dg.sublabel_full(i)}"
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
        hidden_target = False
        if dg is not None and display_indices:  # with numpy: a table's Ctrl+A selects 100,000s of nodes
            idx = np.asarray(display_indices, dtype=np.int64)
            hidden_target = bool(dg.hidden[idx[(idx >= 0) & (idx < dg.n)]].any())
        self._pending_center = list(display_indices) if hidden_target and center else None
        self._update_folding()
        if center and display_indices and not self._pending_center:
            self.center_on(display_indices, zoom_in=self.scale < 0.5 or len(display_indices) > 1)
        self.update()
        if emit:
            self.sig_node_selected.emit(self.current)

    # ---- context menu and export -------------------------------------------------------
    def item_json(self, i: int) -> dict[str, Any]:
        """What "Copy as JSON" copies for display item ``i``: a node's name, op, inputs and
        outputs (a layer graph's node: the layer's name), or a graph input/output tensor."""
        dg = self.dg
        assert dg is not None
        ni = dg.node_index(i)
        if ni is None:
            return {"tensor": str(dg.ref[i]), "kind": "input" if dg.kind[i] == 0 else "output"}
        n = dg.graph.nodes[ni]
        return {"name": n.onnx_name or n.name, "op_type": n.op_type, "domain": n.domain,
                "inputs": list(n.inputs), "outputs": list(n.outputs)}

    def node_menu(self, i: int) -> QMenu:
        """The context menu at display item ``i`` (-1: the background)."""
        menu = QMenu(self)
        clip = QApplication.clipboard()
        if i >= 0 and self.dg is not None:
            doc = self.item_json(i)
            menu.addAction("Copy name", lambda: clip.setText(str(doc.get("name", doc.get("tensor", "")))))
            menu.addAction("Copy as JSON", lambda: clip.setText(json.dumps(doc, indent=1)))
            menu.addSeparator()
        menu.addAction("Fit", self.fit)
        menu.addAction("Export as PNG...", lambda: self._export_dialog("png"))
        menu.addAction("Export as SVG...", lambda: self._export_dialog("svg"))
        menu.addAction("Copy image", lambda: clip.setImage(self.grab().toImage()))
        return menu

    def export_image(self, path: str) -> None:
        """The view as drawn now, at ``path``: SVG (vector, through QSvgGenerator) or an image."""
        if path.lower().endswith(".svg"):
            from PySide6.QtCore import QPoint, QSize
            from PySide6.QtSvg import QSvgGenerator

            gen = QSvgGenerator()
            gen.setFileName(path)
            gen.setSize(QSize(self.width(), self.height()))
            gen.setViewBox(self.rect())
            gen.setTitle("trtstudio graph")
            painter = QPainter(gen)
            self.render(painter, QPoint(0, 0))
            painter.end()
        else:
            self.grab().save(path)

    def _export_dialog(self, kind: str) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export graph", f"graph.{kind}", f"{kind.upper()} (*.{kind})")
        if path:
            self.export_image(path)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt override
        i = self.node_at(QPointF(event.pos()))
        if i >= 0 and i not in self.selected:  # the node under the pointer is selected first
            self.select([i], center=False, emit=True)
        self.node_menu(i).exec(event.globalPos())

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
        if self._drag_start is not None and not self._moved:
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
        """Display indices of the placed items inside the drawing area (grown by ``margin``)."""
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
        self._painter.paint_graph(p, self._visible())
        p.restore()
        self.legend_strip.paint(p, self.legend_items(), self.width(), self.height(), self.dark)
        p.end()
