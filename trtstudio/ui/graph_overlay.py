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
    nodes = dg.graph.nodes
    if len(ov.colors) != len(nodes) or len(ov.folded) != len(nodes):
        raise ValueError(f"an overlay of {len(ov.colors)} nodes for a graph of {len(nodes)}")
    if all(nodes[i].index == i for i in {0, len(nodes) - 1} if nodes):  # node i at display index offset + i
        start = dg.display_index(0)
        colors[start:start + len(nodes)] = ov.colors  # in C: 100,000s of nodes
        folded[start:start + len(nodes)] = ov.folded
    else:
        for node, color, fold in zip(nodes, ov.colors, ov.folded, strict=True):
            di = dg.display_index(node.index)
            colors[di], folded[di] = color, fold
    view.set_overlay(colors, ov.legend, folded)
