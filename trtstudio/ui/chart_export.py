"""Every chart of the window exportable and copyable: a right click on any pyqtgraph view (the live
panels, the engine's charts, the sweep's, the GPU panel) offers Export as PNG, Export as SVG and
Copy image, through pyqtgraph's own exporters (``ImageExporter``, ``SVGExporter``) on the view's
whole scene, and Copy series name / Copy point as JSON for the data point nearest the pointer
(:func:`point_at`: a curve's sample within ``NEAR_PX`` pixels, or the bar under it). One application
event filter (:func:`install`) serves every plot, made now or later, so the plots' modules need no
code of their own.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from PySide6.QtCore import QEvent, QObject, QPoint
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu, QWidget


def _graphics_view(obj: QObject) -> Any:
    """The pyqtgraph view ``obj`` is (or is the viewport of), else None."""
    pg = sys.modules.get("pyqtgraph")
    if pg is None:
        return None
    for o in (obj, obj.parent()):
        if isinstance(o, pg.GraphicsView):
            return o
    return None


def export_chart(view: Any, path: str) -> None:
    """Write the chart ``view`` (a pyqtgraph GraphicsView) to ``path``: SVG for ``.svg``, else an
    image in the format of the suffix (PNG by default), at the size shown."""
    import pyqtgraph.exporters as ex

    if not path.lower().endswith(".svg"):
        ex.ImageExporter(view.scene()).export(path)
        return
    try:
        ex.SVGExporter(view.scene()).export(path)
    except (ValueError, IndexError):
        # pyqtgraph 0.14's SVGExporter fails on some paths Qt 6 writes (a bar chart's: "x,y"
        # expected, one number found); Qt's own SVG generator draws the view as shown
        _render_svg(view, path)


def _render_svg(view: Any, path: str) -> None:
    from PySide6.QtCore import QPoint, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    gen = QSvgGenerator()
    gen.setFileName(path)
    gen.setSize(QSize(view.width(), view.height()))
    gen.setViewBox(view.rect())
    painter = QPainter(gen)
    QWidget.render(view, painter, QPoint(0, 0))  # the widget as drawn (QGraphicsView.render is its scene)
    painter.end()


def copy_chart(view: Any) -> None:
    """Put the chart ``view`` on the clipboard as an image."""
    QApplication.clipboard().setImage(view.grab().toImage())


NEAR_PX = 30  # a curve's sample counts as "under the pointer" within this many pixels


def _plain(v: Any) -> Any:
    """A number as JSON takes it (numpy scalars to float/int; NaN/inf to None)."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if not math.isfinite(f):
        return None
    return int(f) if f.is_integer() and abs(f) < 2**53 else f


def point_at(view: Any, pos: QPoint) -> dict[str, Any] | None:
    """The data point of chart ``view`` under widget point ``pos``: ``{chart, series, index, x, y}``
    (a bar chart's also ``label``, its category), the nearest curve sample within ``NEAR_PX``
    pixels or the bar whose rectangle holds the pointer; None where there is none."""
    pg = sys.modules.get("pyqtgraph")
    if pg is None:
        return None
    scene_pos = view.mapToScene(pos)
    title = ""
    plot = getattr(view, "getPlotItem", lambda: None)()
    if plot is not None and getattr(plot, "titleLabel", None) is not None:
        title = str(plot.titleLabel.text or "")
    best: tuple[float, dict[str, Any]] | None = None
    for vb in (i for i in view.scene().items() if isinstance(i, pg.ViewBox)):
        if not vb.sceneBoundingRect().contains(scene_pos):
            continue
        p = vb.mapSceneToView(scene_pos)
        px, py = vb.viewPixelSize()
        for item in vb.addedItems:
            if isinstance(item, pg.BarGraphItem):
                hit = _bar_at(item, p.x(), p.y())
                if hit is not None:
                    data = getattr(view, "data", None)
                    label = data[hit["index"]][0] if isinstance(data, list) and hit["index"] < len(data) else None
                    name = item.name() if hasattr(item, "name") and item.name() else title or "bars"
                    return {"chart": title, "series": name, **hit, **({"label": label} if label is not None else {})}
            elif isinstance(item, (pg.PlotDataItem, pg.PlotCurveItem)) and item.isVisible():
                x, y = item.getData()
                if x is None or y is None or len(x) == 0:
                    continue
                import numpy as np

                d = np.hypot((np.asarray(x, dtype=float) - p.x()) / (px or 1.0),
                             (np.asarray(y, dtype=float) - p.y()) / (py or 1.0))
                if not np.isfinite(d).any():
                    continue
                k = int(np.nanargmin(d))
                if d[k] <= NEAR_PX and (best is None or d[k] < best[0]):
                    best = (float(d[k]), {"chart": title, "series": str(item.name() or ""), "index": k,
                                          "x": _plain(x[k]), "y": _plain(y[k])})
    return best[1] if best is not None else None


def _bar_at(item: Any, x: float, y: float) -> dict[str, Any] | None:
    """The bar of ``item`` (a pyqtgraph BarGraphItem) holding data point (``x``, ``y``)."""
    import numpy as np

    o = item.opts
    n = max(np.size(o.get(k)) for k in ("x", "x0", "x1", "y", "y0", "y1", "width", "height") if o.get(k) is not None)

    def arr(key: str) -> Any:
        v = o.get(key)
        return None if v is None else np.broadcast_to(np.asarray(v, dtype=float), (n,))

    def span(lo: str, mid: str, hi: str, size: str) -> tuple[Any, Any]:
        a, c, b, w = arr(lo), arr(mid), arr(hi), arr(size)
        if a is None and c is not None and w is not None:
            a = c - w / 2
        if a is None and b is not None and w is not None:
            a = b - w
        if b is None and a is not None and w is not None:
            b = a + w
        return a, b

    x0, x1 = span("x0", "x", "x1", "width")
    y0, y1 = span("y0", "y", "y1", "height")
    if x0 is None or y0 is None:
        return None
    inside = np.flatnonzero((np.minimum(x0, x1) <= x) & (x <= np.maximum(x0, x1))
                            & (np.minimum(y0, y1) <= y) & (y <= np.maximum(y0, y1)))
    if inside.size == 0:
        return None
    k = int(inside[0])
    return {"index": k, "x": _plain(x1[k] - x0[k]) if o.get("x0") is not None else _plain((x0[k] + x1[k]) / 2),
            "y": _plain(y1[k] - y0[k]) if o.get("y0") is not None else _plain((y0[k] + y1[k]) / 2)}


def chart_menu(view: Any, pos: QPoint | None = None) -> QMenu:
    """The context menu of chart ``view``; ``pos`` (widget point): the data point there can be
    copied (its series' name, or the point as JSON)."""
    menu = QMenu(view)

    def save(kind: str) -> None:
        path, _ = QFileDialog.getSaveFileName(view, "Export chart", f"chart.{kind}", f"{kind.upper()} (*.{kind})")
        if path:
            export_chart(view, path)

    menu.addAction("Export as PNG...", lambda: save("png"))
    menu.addAction("Export as SVG...", lambda: save("svg"))
    menu.addAction("Copy image", lambda: copy_chart(view))
    point = point_at(view, pos) if pos is not None else None
    menu.addSeparator()
    name = menu.addAction("Copy series name", lambda: QApplication.clipboard().setText(str((point or {}).get("series"))))
    data = menu.addAction("Copy point as JSON", lambda: QApplication.clipboard().setText(json.dumps(point)))
    for act in (name, data):
        act.setEnabled(point is not None)
        if point is None:
            act.setToolTip("no data point under the pointer")
    if point is not None:
        name.setText(f"Copy series name ({point['series'] or 'unnamed'})")
    return menu


class ChartMenus(QObject):
    """Shows :func:`chart_menu` on a right click in any pyqtgraph view of the application."""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.ContextMenu and isinstance(event, QContextMenuEvent):
            view = _graphics_view(obj)
            if view is not None:
                chart_menu(view, view.mapFromGlobal(event.globalPos())).exec(event.globalPos())
                return True
        return False


def install(app: Any) -> ChartMenus:
    """Install the charts' context menu on ``app`` once; returns the filter."""
    found = app.findChild(ChartMenus)
    if found is None:
        found = ChartMenus(app)
        app.installEventFilter(found)
    return found  # type: ignore[no-any-return]


__all__ = ["ChartMenus", "chart_menu", "copy_chart", "export_chart", "install", "point_at"]
