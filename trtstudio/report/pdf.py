"""PDF writer: the report's HTML laid out by Qt's QTextDocument and printed with QPdfWriter.

THE ONE DOCUMENTED EXCEPTION to "nothing outside trtstudio/ui imports PySide6": this module imports
PySide6.QtCore, QtGui and QtSvg, and QtWidgets only to create a QApplication when none runs yet
(inside functions, so importing it is cheap), because Qt is the
only PDF renderer among our dependencies. pyproject.toml's import-linter contract lists these
imports in ``ignore_imports``; nothing else in ``trtstudio.report`` imports this module except
the ``pdf`` writer function, lazily. It runs headless: without a display it sets
``QT_QPA_PLATFORM=offscreen`` before creating the QGuiApplication it needs (an existing
application, e.g. the GUI's, is reused).

Plots arrive as SVG resources: each is drawn into a QImage with QSvgRenderer (QtSvg is part of
PySide6-Essentials) at twice its size; if QtSvg is missing, a plain QPainter placeholder naming
the plot is drawn instead. PNG pictures (the GUI's graph view) are loaded as they are.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from trtstudio.errors import BackendError

PAGE_WIDTH_PX = 680  # printable width of an A4 page at 96 dpi with the margins below
_SCALE = 2
_app: Any = None


def _ensure_app() -> Any:
    """The running Qt application, or a new one. A QApplication (QtWidgets) when available, not a
    bare QGuiApplication: one process has one application for good, and the GUI (or pytest-qt)
    creating widgets later needs a QApplication."""
    global _app
    try:
        from PySide6.QtCore import QCoreApplication
    except ImportError as exc:
        raise BackendError(f"PDF reports need PySide6 (pip install PySide6-Essentials): {exc}") from None
    app = QCoreApplication.instance()
    if app is None:
        if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        try:
            from PySide6.QtWidgets import QApplication as App
        except ImportError:
            from PySide6.QtGui import QGuiApplication as App  # type: ignore[assignment]
        _app = App(["trtstudio-report"])
        app = _app
    elif not hasattr(app, "primaryScreen"):  # a QCoreApplication cannot lay out text
        raise BackendError("PDF reports need a QGuiApplication; this process runs a QCoreApplication")
    return app


def _svg_image(data: bytes, name: str) -> tuple[Any, int]:
    from PySide6.QtCore import QByteArray, QRectF, Qt
    from PySide6.QtGui import QColor, QImage, QPainter

    m = re.search(rb'width="([\d.]+)" height="([\d.]+)"', data[:400])
    w, h = (float(m.group(1)), float(m.group(2))) if m else (760.0, 230.0)
    img = QImage(int(w * _SCALE), int(h * _SCALE), QImage.Format.Format_ARGB32)
    img.fill(QColor("white"))
    painter = QPainter(img)
    try:
        try:
            from PySide6.QtSvg import QSvgRenderer

            renderer = QSvgRenderer(QByteArray(data))
            if not renderer.isValid():
                raise ValueError("invalid SVG")
            renderer.render(painter, QRectF(0, 0, img.width(), img.height()))
        except (ImportError, ValueError):
            painter.setPen(QColor("black"))
            painter.drawRect(0, 0, img.width() - 1, img.height() - 1)
            painter.drawText(img.rect(), int(Qt.AlignmentFlag.AlignCenter), f"{name} (QtSvg not available)")
    finally:
        painter.end()
    return img, int(w)


def _display_width(px: int) -> int:
    return max(1, min(px, PAGE_WIDTH_PX))


def write_pdf(html: str, resources: dict[str, tuple[str, bytes]], path: str | os.PathLike[str], title: str = "") -> Path:
    """Lay out ``html`` (images referenced by the names in ``resources``) and print it to ``path``.
    The PDF is written to a temporary file beside ``path`` and moved over it when complete."""
    _ensure_app()
    from PySide6.QtCore import QMarginsF, QSizeF, QUrl
    from PySide6.QtGui import QImage, QPageLayout, QPageSize, QPdfWriter, QTextDocument

    from trtstudio.fileio import atomic_replace

    doc = QTextDocument()
    doc.setDefaultStyleSheet("body { font-family: Helvetica, Arial, sans-serif; font-size: 9pt; } "
                             "th { background-color: #eef3f9; } h2 { color: #1f4f84; } .muted { color: #777777; }")
    widths: dict[str, int] = {}
    for name, (mime, data) in resources.items():
        if mime == "image/svg+xml":
            img, w = _svg_image(data, name)
        else:
            img = QImage()
            img.loadFromData(data)
            w = img.width() or PAGE_WIDTH_PX
        doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl(name), img)
        widths[name] = _display_width(w)
    for name, w in widths.items():
        html = html.replace(f'<img src="{name}">', f'<img src="{name}" width="{w}">')
    html = re.sub(r"<style>.*?</style>", "", html, flags=re.S)  # browser CSS; QTextDocument has its own sheet
    doc.setHtml(html)
    doc.setMetaInformation(QTextDocument.MetaInformation.DocumentTitle, title)

    def make(tmp: str) -> None:
        writer = QPdfWriter(tmp)
        writer.setTitle(title)
        writer.setCreator("trtstudio")
        writer.setResolution(96)
        writer.setPageLayout(QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait,
                                         QMarginsF(12, 12, 12, 12), QPageLayout.Unit.Millimeter))
        doc.setPageSize(QSizeF(writer.width(), writer.height()))
        doc.print_(writer)
        del writer  # the file is complete once the writer is gone

    return atomic_replace(path, make)
