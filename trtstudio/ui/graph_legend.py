"""The legend strip at the bottom of a graph view: colour chips wrapped to the width.

A chip whose colour is ``ramp:#low:#high`` (:data:`trtstudio.engine.node_time.RAMP`) is a continuous
scale, drawn as a gradient bar before its label (the ``Time (ms)`` colouring's 0 - max ms).

The strip is not part of the drawing area, so the legend never covers a node. The same chip
layout sizes the strip and paints it, so the rows counted are the rows drawn.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QLinearGradient, QPainter

from trtstudio.engine.node_time import RAMP

LEGEND_ROW = 18.0
RAMP_WIDTH = 96  # a continuous legend's gradient bar (``ramp:#low:#high``), in pixels
FOLD_LEGEND = "+n: constant / shape nodes folded in"
BADGE_COLOR = QColor("#5b5b66")  # the "+n" fold badge on nodes and its legend chip


class GraphLegend:
    """Lays out and paints (label, hex colour) chips in rows of ``LEGEND_ROW`` pixels."""

    def __init__(self, font: QFont) -> None:
        self.font = font

    @staticmethod
    def items(entries: list[tuple[str, str]], folded_count: int) -> list[tuple[str, str]]:
        """The chips: the colours in use, then the fold badge when nodes are folded."""
        items = list(entries)
        if folded_count:
            items.append((FOLD_LEGEND, BADGE_COLOR.name()))
        return items

    def _chips(self, items: list[tuple[str, str]], width: int) -> list[tuple[float, int]]:
        """(x, row) of each chip: left to right, a new row when the next would pass the right edge."""
        fm = QFontMetrics(self.font)
        x, row, out = 8.0, 0, []
        for label, col in items:
            w = fm.horizontalAdvance(label) + 32 + (RAMP_WIDTH - 16 if col.startswith(RAMP) else 0)
            if x + w > width - 4 and x > 8:
                x, row = 8.0, row + 1
            out.append((x, row))
            x += w
        return out

    def rect(self, items: list[tuple[str, str]], width: int, height: int) -> QRectF:
        """The strip in a widget of ``width`` x ``height``; empty (at the bottom) without items."""
        if not items:
            return QRectF(0, height, width, 0)
        h = (self._chips(items, width)[-1][1] + 1) * LEGEND_ROW + 8
        return QRectF(0, height - h, width, h)

    def paint(self, p: QPainter, items: list[tuple[str, str]], width: int, height: int, dark: bool) -> None:
        """Draw the strip's background, top line and chips."""
        if not items:
            return
        box = self.rect(items, width, height)
        p.fillRect(box, QColor("#2a2b2f" if dark else "#eeeef2"))
        p.setPen(QColor("#555" if dark else "#c8c8d0"))
        p.drawLine(box.topLeft(), box.topRight())
        p.setFont(self.font)
        for (label, col), (x, row) in zip(items, self._chips(items, width), strict=True):
            y = box.top() + 4 + row * LEGEND_ROW
            chip = QRectF(x, y + 3, 16, 11)
            text_x = x + 21
            if col.startswith(RAMP):  # a continuous scale: low colour on the left, high on the right
                low, high = col[len(RAMP):].split(":")[:2]
                bar = QRectF(x, y + 3, RAMP_WIDTH, 11)
                grad = QLinearGradient(bar.topLeft(), bar.topRight())
                grad.setColorAt(0.0, QColor(low))
                grad.setColorAt(1.0, QColor(high))
                p.fillRect(bar, grad)
                text_x = x + RAMP_WIDTH + 5
            elif label == FOLD_LEGEND:
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(BADGE_COLOR)
                p.drawRoundedRect(chip, 5, 5)
                p.setPen(QColor("#fff"))
                p.drawText(chip, Qt.AlignmentFlag.AlignCenter, "+")
            else:
                p.fillRect(chip, QColor(col))
            p.setPen(QColor("#ddd" if dark else "#222"))
            p.drawText(QPointF(text_x, y + 12), label)
