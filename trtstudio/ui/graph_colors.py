"""Fill colours of a graph view's display items: by op category, or by an overlay.

An overlay colours nodes by something else (fused layer, precision, time share, finding) and may
mark nodes no engine layer came from as folded (drawn pale). Colours are kept as codes into a small
palette, never as one QColor per node, and turned into one BGRA array for the far-zoom raster.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor

from trtstudio.graph.categories import CATEGORIES
from trtstudio.graph.display import DisplayGraph

IO_COLOR = "#e8e8e8"
_MISSING = "#999"  # an index past the colours given


def _bgra(colors: list[QColor]) -> np.ndarray:
    return np.array([[c.blue(), c.green(), c.red(), c.alpha()] for c in colors], np.uint8)


class NodeColors:
    """The colour of every display item of one display graph, and the legend entries for them."""

    def __init__(self) -> None:
        self.legend: list[tuple[str, str]] = []  # (label, hex colour) of the colours in use
        self.folded: np.ndarray | None = None  # bool per display item: no engine layer (overlay)
        self._overlay: list[str] | None = None  # hex colour per display item, or None for categories
        self._qcolors: dict[str, QColor] = {}
        self._keys = list(CATEGORIES)
        self._palette = [QColor(CATEGORIES[k][1]) for k in self._keys] + [QColor(IO_COLOR)]
        self._codes: np.ndarray = np.zeros(0, np.int32)  # category code per display item
        self._raster: np.ndarray | None = None  # BGRA per item, for the overview raster

    @property
    def is_overlay(self) -> bool:
        """True while an overlay (not the op categories) colours the nodes."""
        return self._overlay is not None

    def set_categories(self, dg: DisplayGraph | None) -> None:
        """Colour by op category; the legend lists the categories of the items shown now."""
        self._overlay = None
        self.folded = None
        self._raster = None
        if dg is None:
            self._codes = np.zeros(0, np.int32)
            self.legend = []
            return
        self._codes = dg.category_codes  # self._palette's order
        present = set(np.unique(self._codes[~dg.hidden]).tolist())
        self.legend = [CATEGORIES[k] for i, k in enumerate(self._keys) if i in present]

    def set_overlay(self, colors: list[str], legend: list[tuple[str, str]] | None,
                    folded: np.ndarray | None) -> None:
        """Colour item ``i`` with ``colors[i]`` (hex); ``folded`` items are drawn pale."""
        self._overlay = list(colors)
        self.legend = legend or []
        self.folded = folded
        self._raster = None

    def qcolor(self, hex_: str) -> QColor:
        """A shared QColor for a hex string."""
        c = self._qcolors.get(hex_)
        if c is None:
            c = self._qcolors[hex_] = QColor(hex_)
        return c

    def fill(self, i: int) -> QColor:
        """Fill colour of display item ``i``."""
        if self._overlay is not None:
            return self.qcolor(self._overlay[i]) if i < len(self._overlay) else QColor(_MISSING)
        return self._palette[int(self._codes[i])] if i < len(self._codes) else QColor(_MISSING)

    def raster(self, n: int) -> np.ndarray:
        """BGRA rows (uint8, n x 4) for ``n`` display items; grey when the colours do not cover them."""
        if self._raster is None or len(self._raster) != n:
            if self._overlay is None:
                pal, codes = _bgra(self._palette), self._codes
            else:
                uniq = {c: k for k, c in enumerate(dict.fromkeys(self._overlay))}
                pal = _bgra([self.qcolor(c) for c in uniq])
                codes = np.fromiter((uniq[c] for c in self._overlay), np.int64, len(self._overlay))
            self._raster = pal[codes] if len(codes) == n else np.full((n, 4), 128, np.uint8)
        return self._raster
