"""Every chart of the window exportable and copyable: a right click on any pyqtgraph view (the live
panels, the engine's charts, the sweep's, the GPU panel) offers Export as PNG, Export as SVG and
Copy image, through pyqtgraph's own exporters (``ImageExporter``, ``SVGExporter``) on the view's
whole scene. One application event filter (:func:`install`) serves every plot, made now or later,
so the plots' modules need no code of their own.
"""

from __future__ import annotations

import sys
from typing import Any

from PySide6.QtCore import QEvent, QObject
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


def chart_menu(view: Any) -> QMenu:
    """The context menu of chart ``view``."""
    menu = QMenu(view)

    def save(kind: str) -> None:
        path, _ = QFileDialog.getSaveFileName(view, "Export chart", f"chart.{kind}", f"{kind.upper()} (*.{kind})")
        if path:
            export_chart(view, path)

    menu.addAction("Export as PNG...", lambda: save("png"))
    menu.addAction("Export as SVG...", lambda: save("svg"))
    menu.addAction("Copy image", lambda: copy_chart(view))
    return menu


class ChartMenus(QObject):
    """Shows :func:`chart_menu` on a right click in any pyqtgraph view of the application."""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.ContextMenu and isinstance(event, QContextMenuEvent):
            view = _graphics_view(obj)
            if view is not None:
                chart_menu(view).exec(event.globalPos())
                return True
        return False


def install(app: Any) -> ChartMenus:
    """Install the charts' context menu on ``app`` once; returns the filter."""
    found = app.findChild(ChartMenus)
    if found is None:
        found = ChartMenus(app)
        app.installEventFilter(found)
    return found  # type: ignore[no-any-return]


__all__ = ["ChartMenus", "chart_menu", "copy_chart", "export_chart", "install"]
