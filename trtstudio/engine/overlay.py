"""Graph overlays from an engine analysis: a colour per ONNX node and a legend, without Qt.

``overlay(analysis, nodes, mode)`` colours each node (in graph order) by the engine layer it became
(``Fused layer``), that layer's precision, the share of engine time it accounts for, or its worst
finding; nodes no layer came from are marked folded. ``error_overlay`` colours nodes by their
relative error against FP32 (a precision sweep). The graph view only paints the result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from trtstudio.engine.analysis import Analysis
from trtstudio.palette import (
    FUSED_COLORS,
    NO_FINDING_COLOR,
    NO_LAYER_COLOR,
    PRECISION_COLORS,
    SEVERITY_COLORS,
    UNMEASURED_COLOR,
    heat,
    precision_color,
)

MODES = ("Op category", "Fused layer", "Precision", "Time share", "Finding")


@dataclass
class Overlay:
    """Colours per node (graph order), which nodes are folded away, and the legend (label, colour)."""

    colors: list[str]
    folded: list[bool]
    legend: list[tuple[str, str]] = field(default_factory=list)


def overlay(analysis: Analysis, nodes: Sequence[Any], mode: str) -> Overlay | None:
    """The overlay ``mode`` (one of :data:`MODES`) of ``nodes`` (objects with ``name``); None for
    ``Op category`` (the view's own colours)."""
    if mode == "Op category":
        return None
    if mode not in MODES:
        raise ValueError(f"unknown overlay {mode!r}; one of {', '.join(MODES)}")
    engine = analysis.engine
    total = analysis.total_time_ms or 0.0
    colors: list[str] = []
    folded: list[bool] = []
    used: set[str] = set()
    for node in nodes:
        layers = analysis.node_layers.get(node.name, [])
        if not layers:
            colors.append(NO_LAYER_COLOR)
            folded.append(True)
            continue
        folded.append(False)
        lay = engine.layers[layers[0]]
        if mode == "Fused layer":
            colors.append(FUSED_COLORS[layers[0] % len(FUSED_COLORS)])
        elif mode == "Precision":
            used.add(lay.precision or "")
            colors.append(precision_color(lay.precision))
        elif mode == "Time share":
            share = analysis.node_time_ms.get(node.name, 0.0) / total if total else 0.0
            colors.append(heat(min(1.0, share * 10)))
        else:
            colors.append(SEVERITY_COLORS.get(analysis.node_severity.get(node.name, ""), NO_FINDING_COLOR))
    legend: list[tuple[str, str]]
    if mode == "Precision":
        legend = [(p, c) for p, c in PRECISION_COLORS.items() if p in used]
    elif mode == "Time share":
        legend = [(">= 10% of engine time", heat(1.0)), ("5%", heat(0.5)), ("< 1%", heat(0.05))]
    elif mode == "Finding":
        legend = [(s, SEVERITY_COLORS[s]) for s in ("error", "warning", "info")] + [("no finding", NO_FINDING_COLOR)]
    else:
        legend = [("colour = engine layer", FUSED_COLORS[0])]
    legend.append(("no engine layer (folded)", NO_LAYER_COLOR))
    return Overlay(colors, folded, legend)


def error_overlay(nodes: Sequence[Any], errors: dict[str, float]) -> Overlay | None:
    """Nodes coloured by their relative error against FP32 (darkest = worst); None without errors."""
    if not errors:
        return None
    worst = max((v for v in errors.values() if not math.isnan(v)), default=0.0) or 1.0
    colors = [heat(float(errors[n.name]) / worst) if n.name in errors else UNMEASURED_COLOR for n in nodes]
    legend = [(f"rel. error {worst:.3g} (worst)", heat(1.0)), (f"{worst / 2:.3g}", heat(0.5)), ("~0", heat(0.0)),
              ("not measured", UNMEASURED_COLOR)]
    return Overlay(colors, [False] * len(colors), legend)


SUPPORT_COLORS = {"supported": "#59a14f", "unsupported": "#d62728", "boundary": "#f28e2b"}


def support_overlay(nodes: Sequence[Any], states: dict[str, dict[str, Any]]) -> Overlay:
    """Nodes coloured by TensorRT's support check (``CheckResult.node_states``): supported,
    unsupported, and the first/last node of an unsupported partition (where the graph would be cut
    between TensorRT and another runtime); nodes the check did not cover stay pale."""
    colors = []
    for n in nodes:
        st = states.get(n.name)
        if st is None:
            colors.append(UNMEASURED_COLOR)
        elif st["state"] == "unsupported":
            colors.append(SUPPORT_COLORS["boundary"] if st.get("boundary") else SUPPORT_COLORS["unsupported"])
        else:
            colors.append(SUPPORT_COLORS["supported"])
    legend = [("supported by TensorRT", SUPPORT_COLORS["supported"]), ("unsupported", SUPPORT_COLORS["unsupported"]),
              ("unsupported partition edge", SUPPORT_COLORS["boundary"]), ("not checked", UNMEASURED_COLOR)]
    return Overlay(colors, [False] * len(colors), legend)
