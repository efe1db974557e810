"""``trtstudio inspect MODEL.onnx [--json]``: the model summary."""

from __future__ import annotations

import argparse
from typing import Any

from trtstudio.commands._args import add_json

HELP = "summarise an ONNX model (IR, opsets, ops, parameters, inputs/outputs, subgraphs)"


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="ONNX model file")
    add_json(p, "trtstudio.model/1")
    p.add_argument("--no-shape-inference", action="store_true", help="skip ONNX shape inference")


def _fmt_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024
    return f"{n} B"


def _io(items: list[dict]) -> str:
    return "\n".join(
        f"    {t['name']}: {t['dtype']} [{', '.join(str(d) for d in (t['shape'] or ['?']))}]" for t in items
    ) or "    (none)"


def run(args: argparse.Namespace) -> int:
    from trtstudio.commands._emit import emit
    from trtstudio.graph.model import load_model

    model = load_model(args.model, infer_shapes=not args.no_shape_inference)
    return emit(model.summary(), args.json, render_text)


def render_text(s: dict[str, Any]) -> str:
    """The model summary as text."""
    from trtstudio.graph.params import parameters_text

    opsets = ", ".join(f"{k} {v}" for k, v in s["opsets"].items())
    top = ", ".join(f"{k} {v}" for k, v in list(s["op_counts"].items())[:12])
    lines = [
        f"{s['path']}",
        f"  IR version {s['ir_version']}; opsets: {opsets}; producer: {s['producer'] or '-'}",
        f"  nodes: {s['nodes']} top level ({s['nodes_total']} with subgraphs); ops: {top}",
        f"  parameters: {parameters_text(s)} ({_fmt_bytes(s['parameter_bytes'])})",
        "  inputs:",
        _io(s["inputs"]),
        "  outputs:",
        _io(s["outputs"]),
    ]
    if s["subgraphs"]:
        lines.append("  subgraphs:")
        lines += [f"    {g['owner']}: {g['nodes']} nodes" for g in s["subgraphs"]]
    if s["custom_domains"]:
        lines.append(f"  custom domains: {', '.join(s['custom_domains'])}")
    for w in s["warnings"]:
        lines.append(f"  warning: {w}")
    return "\n".join(lines)
