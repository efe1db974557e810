"""Paint an :class:`~trtstudio.engine.overlay.Overlay` (colours in graph node order) on a graph view."""

from __future__ import annotations

from typing import Any

import numpy as np

from trtstudio.engine.overlay import Overlay
from trtstudio.palette import UNMEASURED_COLOR


def paint_overlay(view: Any, dg: Any, ov: Overlay | None) -> None:
    """Show ``ov`` on ``view`` (a GraphView drawing ``dg``); None restores the op-category colours."""
    if dg is None or ov is None:
        view.set_overlay(None)
        return
    colors = [UNMEASURED_COLOR] * dg.n
    folded = np.zeros(dg.n, bool)
    for node, color, fold in zip(dg.graph.nodes, ov.colors, ov.folded, strict=True):
        di = dg.display_index(node.index)
        colors[di], folded[di] = color, fold
    view.set_overlay(colors, ov.legend, folded)
