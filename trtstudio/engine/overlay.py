"""Graph overlays from an engine analysis: a colour per ONNX node and a legend, without Qt.

``overlay(analysis, nodes, mode)`` colours each node (in graph order) by the engine layer it became
(``Fused layer``), that layer's precision, the share of engine time it accounts for, its worst
finding, or the device memory of its layers (``Memory``: each layer's outputs, weights, scratch and
device persistent bytes where the files give them, on a heat scale from 0 to the largest, with a
legend in MiB); nodes no layer came from are marked folded. ``error_overlay`` colours nodes by their
relative error against FP32 (a precision sweep). The graph view only paints the result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
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
    heat_colors,
    precision_color,
)

MEMORY_MODE = "Memory"
MODES = ("Op category", "Fused layer", "Precision", "Time share", "Finding", MEMORY_MODE)
MIB = 1 << 20
NO_MEMORY = "no memory figure"
# a continuous legend chip's colour prefix, as engine.node_time.RAMP (which imports this module: not imported
# from there), drawn as a gradient by ui.graph_legend
RAMP = "ramp:"


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
    if mode == MEMORY_MODE:
        return _memory_overlay(analysis, nodes)
    if _indexes(analysis, nodes):
        return Overlay(*_by_columns(analysis, mode, total))
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
    return Overlay(colors, folded, _legend(mode, used, other_model(analysis)))


def other_model(analysis: Analysis) -> bool:
    """Whether the analysis found its model is probably not the engine's (``other_model``):
    then a node without a layer says nothing about folding."""
    return any(f.kind == "other_model" for f in analysis.findings)


NO_LAYER = "no engine layer (folded)"
NO_LAYER_OTHER_MODEL = "no engine layer (the model is probably not the engine's)"


def _mode_legend(mode: str, used: set[str]) -> list[tuple[str, str]]:
    """The legend entries of ``mode`` (``used``: the precisions shown)."""
    if mode == "Precision":
        return [(p, c) for p, c in PRECISION_COLORS.items() if p in used]
    if mode == "Time share":
        return [(">= 10% of engine time", heat(1.0)), ("5%", heat(0.5)), ("< 1%", heat(0.05))]
    if mode == "Finding":
        return [(s, SEVERITY_COLORS[s]) for s in ("error", "warning", "info")] + [("no finding", NO_FINDING_COLOR)]
    return [("colour = engine layer", FUSED_COLORS[0])]


def _legend(mode: str, used: set[str], other: bool = False) -> list[tuple[str, str]]:
    return [*_mode_legend(mode, used), (NO_LAYER_OTHER_MODEL if other else NO_LAYER, NO_LAYER_COLOR)]


_SEVERITY_NAMES = ("", "info", "warning", "error")  # Analysis.columns.severity codes


def layer_overlay(analysis: Any, n_layers: int, mode: str) -> tuple[list[str], list[tuple[str, str]]] | None:
    """One colour per engine layer (the engine's own graph: node ``i`` is layer ``i``) for ``mode``
    (one of :data:`MODES` other than Op category) from ``analysis.columns``, and the legend; None
    without columns for these layers. The same colours :func:`overlay` gives the nodes of a layer."""
    import numpy as np

    cols = getattr(analysis, "columns", None)
    if cols is None or len(cols) != n_layers:
        return None
    if mode == "Fused layer":  # the colour its ONNX nodes have in the model's graph
        pal = np.asarray(FUSED_COLORS, dtype=object)
        return pal[np.arange(n_layers) % len(pal)].tolist(), [("colour = layer (as its ONNX nodes)", FUSED_COLORS[0])]
    if mode == "Precision":
        used = set(cols.precision)
        color_of = {p: precision_color(p) for p in used}
        legend = _mode_legend(mode, used)
        if any(p.upper() not in PRECISION_COLORS for p in used):
            legend.append(("other / unknown", precision_color(None)))
        return [color_of[p] for p in cols.precision], legend
    if mode == "Time share":
        t = np.asarray(cols.num.get("ms", np.full(n_layers, np.nan)), dtype=np.float64)
        total = float(np.nansum(t))
        if not total:
            return [UNMEASURED_COLOR] * n_layers, [("no layer times in these files", UNMEASURED_COLOR)]
        colors = np.asarray(heat_colors(np.minimum(1.0, t / total * 10)), dtype=object)
        colors[np.isnan(t)] = UNMEASURED_COLOR
        return colors.tolist(), [*_mode_legend(mode, set()), ("not timed", UNMEASURED_COLOR)]
    if mode == "Finding":
        pal = np.asarray([NO_FINDING_COLOR] + [SEVERITY_COLORS[s] for s in _SEVERITY_NAMES[1:]], dtype=object)
        return pal[np.clip(cols.severity.astype(np.int64), 0, 3)].tolist(), _mode_legend(mode, set())
    if mode == MEMORY_MODE:
        return memory_colors(layer_bytes(analysis, n_layers))
    return None


def layer_bytes(analysis: Any, n_layers: int) -> Any:
    """Each layer's device memory (``engine.table.layer_memory_bytes``: outputs, weights, scratch and
    device persistent bytes where known, NaN where none is) of ``analysis`` (its columns, else its
    memory's per-layer rows); None without either."""
    import numpy as np

    from trtstudio.engine.table import DEVICE_MEMORY_KEYS, MEMORY_KEYS, layer_memory_bytes, sum_known

    cols = getattr(analysis, "columns", None)
    if cols is not None and cols.memory and len(cols) == n_layers:
        return layer_memory_bytes(cols)
    memory = getattr(analysis, "memory", None)
    if memory is None or not memory.layers:
        return None
    rows = memory.layers[:n_layers]
    return sum_known([np.array([r.get(MEMORY_KEYS[k]) for r in rows], dtype=float) for k in DEVICE_MEMORY_KEYS])


def memory_colors(values: Any, what: str = "memory per layer") -> tuple[list[str], list[tuple[str, str]]]:
    """Heat colours of ``values`` (bytes, NaN unknown) from 0 to the largest, the unknown pale, and
    the legend: a ramp in MiB (``what`` it shows) and the unknown's chip."""
    import numpy as np

    if values is None or not len(values) or np.isnan(values).all():
        n = 0 if values is None else len(values)
        return [UNMEASURED_COLOR] * n, [("no per-layer memory in these files", UNMEASURED_COLOR)]
    top = float(np.nanmax(values)) or 1.0
    colors = np.full(len(values), UNMEASURED_COLOR, dtype=object)
    known = ~np.isnan(values)
    colors[known] = np.asarray(heat_colors(values[known] / top), dtype=object)
    label = f"{what}: 0 - {_mib_text(top)} MiB (outputs + weights + scratch + persistent)"
    return colors.tolist(), [(label, f"{RAMP}{heat(0.0)}:{heat(1.0)}"), (NO_MEMORY, UNMEASURED_COLOR)]


def _mib_text(n: float) -> str:
    v = n / MIB
    return f"{v:.3g}" if v < 1000 else f"{v:,.0f}"


def _memory_overlay(analysis: Analysis, nodes: Sequence[Any]) -> Overlay:
    """``Memory`` on the model's graph: each node the summed device memory of the layers it became
    (a fused layer's on each of its nodes), through the layer-node map."""
    import numpy as np

    per_layer = layer_bytes(analysis, len(analysis.engine.layers))
    n = len(nodes)
    node_bytes = np.full(n, np.nan)
    folded = np.ones(n, dtype=bool)
    if _indexes(analysis, nodes) and analysis.layer_nodes is not None:  # numpy over the map
        ln = analysis.layer_nodes
        layer_of = np.repeat(np.arange(len(ln.offsets) - 1, dtype=np.int64), np.diff(ln.offsets))
        folded[ln.index] = False
        if per_layer is not None:
            v = per_layer[layer_of]
            known = ~np.isnan(v)
            sums = np.bincount(ln.index[known], weights=v[known], minlength=n)
            has = np.bincount(ln.index[known], minlength=n) > 0
            node_bytes[has] = sums[has]
    else:
        for i, node in enumerate(nodes):
            layers = analysis.node_layers.get(node.name, [])
            if layers:
                folded[i] = False
                if per_layer is not None:
                    vals = [float(per_layer[p]) for p in layers if per_layer[p] == per_layer[p]]
                    if vals:
                        node_bytes[i] = sum(vals)
    shown = np.where(folded, np.nan, node_bytes)
    colors, legend = memory_colors(shown, "memory of each node's layers")
    out = np.asarray(colors, dtype=object)
    out[folded] = NO_LAYER_COLOR
    return Overlay(out.tolist(), folded.tolist(),
                   [*legend, (NO_LAYER_OTHER_MODEL if other_model(analysis) else NO_LAYER, NO_LAYER_COLOR)])


def _indexes(analysis: Analysis, nodes: Sequence[Any]) -> bool:
    """Whether ``analysis.layer_nodes`` indexes ``nodes`` (the graph it was made with: the same
    node count, first and last names) and the analysis has the columns :func:`_by_columns` reads."""
    ln = analysis.layer_nodes
    return (ln is not None and analysis.columns is not None and len(nodes) == len(ln.names)
            and (not nodes or (nodes[0].name == ln.names[0] and nodes[-1].name == ln.names[-1])))


def _by_columns(analysis: Analysis, mode: str, total: float) -> tuple[list[str], list[bool], list[tuple[str, str]]]:
    """:func:`overlay`'s colours, folded flags and legend, for the graph whose nodes
    ``analysis.layer_nodes`` indexes, from the analysis's columns with numpy: the same as its
    loop node by node, which took 100-250 ms of the GUI thread at 100,000 nodes."""
    import numpy as np

    ln, cols = analysis.layer_nodes, analysis.columns
    assert ln is not None and cols is not None
    n_nodes = len(ln.names)
    counts = np.diff(ln.offsets)
    layer_of = np.repeat(np.arange(len(counts), dtype=np.int64), counts)  # the layer of each entry of ln.index
    nodes, first_entry = np.unique(ln.index, return_index=True)  # entries run in layer order: the first is the first layer
    first = np.full(n_nodes, -1, dtype=np.int64)
    first[nodes] = layer_of[first_entry]
    folded = first < 0
    mapped = ~folded
    out = np.full(n_nodes, NO_LAYER_COLOR, dtype=object)
    used: set[str] = set()
    if mode == "Fused layer":
        out[mapped] = np.asarray(FUSED_COLORS, dtype=object)[first[mapped] % len(FUSED_COLORS)]
    elif mode == "Precision":
        precision = list(map(cols.precision.__getitem__, first[mapped].tolist()))  # Layer.precision or ""
        used = set(precision)
        color_of = {p: precision_color(p) for p in used}
        out[mapped] = np.fromiter(map(color_of.__getitem__, precision), dtype=object, count=len(precision))
    elif mode == "Time share":
        names = list(compress(ln.names, mapped.tolist()))
        t = np.fromiter(map(analysis.node_time_ms.get, names, repeat(0.0)), dtype=np.float64, count=len(names))
        share = t / total if total else np.zeros(len(names))
        v = share * 10
        v = np.where(np.isnan(v), 1.0, np.minimum(1.0, v))  # min(1.0, v), as Python takes it for NaN
        out[mapped] = np.asarray(heat_colors(v), dtype=object)
    else:
        names = list(compress(ln.names, mapped.tolist()))
        out[mapped] = np.fromiter(map(SEVERITY_COLORS.get, map(analysis.node_severity.get, names, repeat("")),
                                      repeat(NO_FINDING_COLOR)), dtype=object, count=len(names))
    return out.tolist(), folded.tolist(), _legend(mode, used, other_model(analysis))


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
