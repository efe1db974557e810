"""Where a precision variant loses accuracy, as the graph and the reports show it (no Qt).

:func:`trtstudio.precision.validate.localize` compares every float intermediate tensor of the FP32
model with its counterpart in the low-precision one (both run with ONNX Runtime, the tensors made
graph outputs) and keeps the error per tensor in topological order. This module turns one sweep
variant's result (``VariantResult.to_json``: ``first_over``, ``node_errors``, ``tensors``) into:

- :func:`divergence`: the first node whose output passes the threshold, the nodes that add the most
  error, and each node's tensor statistics (what Properties shows for a clicked node);
- :func:`accuracy_overlay`: graph colours, relative error on a continuous heat scale with the first
  diverging node marked in its own colour;
- :func:`divergence_section`: the report's section (the sentence, the first node, the worst
  nodes, an excerpt SVG of the graph around the first node).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

FIRST_COLOR = "#7b1fa2"  # the first diverging node (purple: apart from the heat scale's reds)
KEY = "divergence"  # the accuracy dict's key for the section (report.model keeps it beside the metrics)


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)) else None


def divergence(variant: dict[str, Any], top: int = 5) -> dict[str, Any] | None:
    """The localisation of one variant (a ``VariantResult.to_json`` dict or its fields), or None
    without one: ``{variant, threshold, first, growth, nodes: {node: stats}, text}``. ``stats`` of a
    node: its output tensor's ``rel`` (relative L2 error), ``cosine``, ``max_abs``, ``input_rel``
    (the worst error it received), ``growth`` (what it added), ``op_type``, ``tensor``."""
    errors = variant.get("node_errors") or {}
    tensors = variant.get("tensors") or []
    if not errors and not tensors:
        return None
    nodes: dict[str, dict[str, Any]] = {}
    for t in tensors:
        node = str(t.get("node", ""))
        rel = _num(t.get("rel"))
        if rel is None:
            continue
        stats = {"tensor": t.get("tensor"), "op_type": t.get("op_type"), "rel": rel, "cosine": _num(t.get("cosine")),
                 "max_abs": _num(t.get("max_abs")), "input_rel": _num(t.get("input_rel")) or 0.0}
        stats["growth"] = rel - stats["input_rel"]
        if node not in nodes or rel > nodes[node]["rel"]:
            nodes[node] = stats
    for node, rel in errors.items():
        if node not in nodes and _num(rel) is not None:
            nodes[node] = {"tensor": None, "op_type": None, "rel": float(rel), "cosine": None, "max_abs": None,
                           "input_rel": None, "growth": None}
    first = variant.get("first_over")
    threshold = _num(variant.get("localize_threshold"))
    name = str(variant.get("name") or variant.get("variant") or "variant")
    growth = sorted((dict(s, node=n) for n, s in nodes.items() if s.get("growth") is not None),
                    key=lambda s: -float(s["growth"]))[:top]
    worst = max(nodes.items(), key=lambda kv: kv[1]["rel"], default=None)
    if first:
        text = (f"{name}: the error first passes the threshold at {first.get('node')} ({first.get('op_type')}, "
                f"relative error {float(first.get('rel', 0.0)):.3g}, cosine {float(first.get('cosine', 1.0)):.5f})")
    else:
        text = f"{name}: no tensor passes the threshold"
    if worst is not None:
        text += f"; the worst tensor is {worst[0]}'s ({worst[1]['rel']:.3g})"
    return {"variant": name, "threshold": threshold, "first": dict(first) if first else None, "growth": growth,
            "nodes": nodes, "text": text, "worst": None if worst is None else {"node": worst[0], **worst[1]}}


def accuracy_overlay(nodes: Sequence[Any], div: dict[str, Any] | None) -> Any:
    """Nodes (objects with ``name``) coloured by their output's relative error against FP32 on a
    continuous heat scale (0 to the worst), the first diverging node in :data:`FIRST_COLOR`, nodes
    not measured pale; None without a localisation."""
    from trtstudio.engine.node_time import RAMP
    from trtstudio.engine.overlay import Overlay
    from trtstudio.palette import UNMEASURED_COLOR, heat

    if not div or not div.get("nodes"):
        return None
    rel = {n: s["rel"] for n, s in div["nodes"].items()}
    worst = max(rel.values(), default=0.0) or 1.0
    first = (div.get("first") or {}).get("node")
    colors = [FIRST_COLOR if n.name == first else heat(rel[n.name] / worst) if n.name in rel else UNMEASURED_COLOR
              for n in nodes]
    legend = [(f"relative error vs FP32: 0 - {worst:.3g}", f"{RAMP}{heat(0.0)}:{heat(1.0)}")]
    if first:
        legend.append((f"first over {div.get('threshold') or 'threshold'}: {first}", FIRST_COLOR))
    legend.append(("not measured", UNMEASURED_COLOR))
    return Overlay(colors, [False] * len(colors), legend)


def divergence_section(div: dict[str, Any] | None, graph: Any = None) -> dict[str, Any] | None:
    """The report section's data: the sentence, the first node's statistics, the nodes adding the
    most error, and (with ``graph``) an SVG excerpt around the first diverging node, each node's
    error in its tooltip. JSON-ready; None without a localisation."""
    if not div:
        return None
    sec = {"variant": div["variant"], "text": div["text"], "threshold": div.get("threshold"),
           "first": div.get("first"), "growth": div.get("growth") or [], "worst": div.get("worst"), "svg": None}
    anchor = (div.get("first") or {}).get("node") or (div.get("worst") or {}).get("node")
    if graph is not None and anchor:
        from trtstudio.report.excerpts import excerpt_svg, regions

        regs = regions(graph, [], [([anchor], "error", "first diverging node")])
        if regs:
            src, dst, _ = graph.edges()
            from trtstudio.palette import UNMEASURED_COLOR, heat

            rel = {n: s["rel"] for n, s in div["nodes"].items()}
            worst = max(rel.values(), default=0.0) or 1.0
            shown = [i for i in regs[0]["nodes"] if graph.nodes[i].name in rel]
            notes = {i: f"relative error {rel[graph.nodes[i].name]:.3g}" for i in shown}
            # as the window colours them: measured on the heat scale, the rest (fused away) pale
            fills = {i: heat(rel[graph.nodes[i].name] / worst) if graph.nodes[i].name in rel else UNMEASURED_COLOR
                     for i in regs[0]["nodes"]}
            sec["svg"] = excerpt_svg(graph, regs[0], src, dst, notes, fills)
            sec["anchor"] = "first" if (div.get("first") or {}).get("node") == anchor else "worst"
            sec["nodes"] = [graph.nodes[i].name for i in regs[0]["nodes"]]
    return sec


def section_rows(sec: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """Rows of the section's table: the first node, then the nodes adding the most error
    (node, op type, relative error, cosine, error added)."""
    def f(v: Any, fmt: str) -> str:
        n = _num(v)
        return "" if n is None else format(n, fmt)

    rows = []
    first = sec.get("first") if isinstance(sec.get("first"), dict) else None  # a session is data: checked
    if first:
        rel, got = _num(first.get("rel")), _num(first.get("input_rel")) or 0.0
        rows.append((f"{first.get('node')} (first over threshold)", str(first.get("op_type") or ""),
                     f(rel, ".3g"), f(first.get("cosine"), ".5f"), f(None if rel is None else rel - got, ".3g")))
    growth = sec.get("growth")
    for g in growth if isinstance(growth, list) else []:
        if not isinstance(g, dict) or (first and g.get("node") == first.get("node")):
            continue
        rows.append((str(g["node"]), str(g.get("op_type") or ""), f(g.get("rel"), ".3g"), f(g.get("cosine"), ".5f"),
                     f(g.get("growth"), ".3g")))
    return rows


SECTION_HEADERS = ("node", "op type", "relative error", "cosine", "error added")
