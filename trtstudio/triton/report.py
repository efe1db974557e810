"""Triton sessions, reports and comparisons (Qt-free).

A Triton session is the ``trtstudio.triton/1`` document of a sweep, written as JSON. Reports are
HTML (an inline SVG latency-throughput curve) or Markdown: the curve, the breakdown table (where a
request's time goes per step: client/network vs queue vs compute), the server and model config
and the recommendation. ``compare_sessions`` matches steps (concurrency or rate) across sessions:
throughput and p50/p99 deltas against the first, and each session's recommendation
(``trtstudio.triton-comparison/1``).
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any

from trtstudio.errors import InputError
from trtstudio.filekinds import is_triton_file as is_triton_file  # the one file-kind rule
from trtstudio.triton import SCHEMA
from trtstudio.triton.client import config_summary
from trtstudio.triton.sweep import notes, step_figures

COMPARISON_SCHEMA = "trtstudio.triton-comparison/1"
REPORT_EXTENSIONS = (".html", ".htm", ".md", ".json")
QUANTILES = (("p50", "#1f77b4"), ("p90", "#9467bd"), ("p99", "#ff7f0e"))


def load_session(path: str | Path) -> dict[str, Any]:
    """A Triton session (``trtstudio.triton/1`` JSON); InputError naming the file for anything else."""
    from trtstudio.jsonio import read_json_file

    p = Path(path)
    doc = read_json_file(p, "Triton session JSON")
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise InputError(p, f"not a Triton session (schema {SCHEMA})")
    steps = doc.get("steps")
    if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps):
        raise InputError(p, "damaged Triton session: 'steps' is not a list of steps")
    try:
        for s in steps:
            step_figures(s)
            if s.get("requests"):
                p99 = s["latency_ms"]["p99"]
                float(s["throughput"]), None if p99 is None else float(p99)  # null: no figure for the step
    except (TypeError, KeyError, ValueError) as exc:
        raise InputError(p, f"damaged Triton session: step: {type(exc).__name__}: {exc}") from None
    return doc


def write_session(doc: dict[str, Any], path: str | Path) -> Path:
    """Write the sweep document as a session file (JSON, atomically)."""
    from trtstudio.fileio import atomic_write
    from trtstudio.jsonio import dumps

    data = dumps(doc, indent=2)
    return atomic_write(path, lambda fh: fh.write(data), mode="wb")


# -- report -------------------------------------------------------------------------------------

def _fmt(v: Any, spec: str = ".3f") -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "-"
    return format(f, spec) if math.isfinite(f) else "-"


def breakdown_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Per step: throughput, p50/p90/p99 (ms) and where the mean request time went (µs)."""
    rows = []
    for s in doc.get("steps", []):
        f = step_figures(s)
        us = s.get("server_us") or {}
        lat = s.get("latency_ms") or {}
        rows.append({
            "step": f"{f['mode']} {f['value']:g}", "mode": f["mode"], "value": f["value"],
            "requests": f["requests"], "throughput": f["throughput"],
            "p50": lat.get("p50"), "p90": lat.get("p90"), "p99": lat.get("p99"),
            "client_network_us": s.get("client_overhead_us"), "queue_us": us.get("queue"),
            "compute_input_us": us.get("compute_input"), "compute_infer_us": us.get("compute_infer"),
            "compute_output_us": us.get("compute_output"), "stable": bool(s.get("stable")),
            "error": s.get("error"),
        })
    return rows


BREAKDOWN_HEAD = ("step", "requests", "infer/s", "p50 ms", "p90 ms", "p99 ms", "client/network µs", "queue µs",
                  "compute input µs", "compute infer µs", "compute output µs", "stable")


def _cells(r: dict[str, Any]) -> list[str]:
    return [r["step"], str(r["requests"]), _fmt(r["throughput"], ".1f"), _fmt(r["p50"]), _fmt(r["p90"]), _fmt(r["p99"]),
            _fmt(r["client_network_us"], ".0f"), _fmt(r["queue_us"], ".0f"), _fmt(r["compute_input_us"], ".0f"),
            _fmt(r["compute_infer_us"], ".0f"), _fmt(r["compute_output_us"], ".0f"), "yes" if r["stable"] else "no"]


def _facts(doc: dict[str, Any]) -> tuple[list[str], list[str]]:
    server = doc.get("server") or {}
    model = doc.get("model") or {}
    srv = [f"server: {server.get('name', '')} {server.get('version', '')} at {server.get('url', '')} "
           f"({server.get('protocol', '')})",
           f"extensions: {', '.join(server.get('extensions', [])) or '-'}", *notes(doc)]
    mod = [f"model: {model.get('name', '')} version {model.get('version') or 'latest'}", *config_summary(model)]
    return srv, mod


def _recommendation(doc: dict[str, Any]) -> str:
    rec = doc.get("recommendation") or {}
    return str(rec.get("reason") or "no recommendation (no step within the budget, or no budget given)")


def curve_svg(doc: dict[str, Any], width: int = 640, height: int = 320) -> str:
    """The latency-throughput curve (p50/p90/p99 against inferences/s) as an SVG element."""
    rows = [r for r in breakdown_rows(doc) if r["requests"] and r["p99"] is not None]
    if not rows:
        return "<p>(no measured step)</p>"
    pad = 48
    xs = [float(r["throughput"]) for r in rows]
    ys = [float(r[q]) for r in rows for q, _ in QUANTILES if r[q] is not None]
    x0, x1 = min(xs) * 0.95, max(xs) * 1.05 or 1.0
    y1 = max(ys) * 1.1 or 1.0
    if x1 <= x0:
        x1 = x0 + 1.0

    def px(x: float, y: float) -> str:
        return f"{pad + (x - x0) / (x1 - x0) * (width - 2 * pad):.1f},{height - pad - y / y1 * (height - 2 * pad):.1f}"

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-size="11">',
             f'<rect x="{pad}" y="{pad}" width="{width - 2 * pad}" height="{height - 2 * pad}" fill="none" stroke="#999"/>',
             f'<text x="{width / 2}" y="{height - 10}" text-anchor="middle">inferences/s</text>',
             f'<text x="12" y="{height / 2}" transform="rotate(-90 12 {height / 2})" text-anchor="middle">latency ms</text>',
             f'<text x="{pad}" y="{height - pad + 14}">{x0:.0f}</text>',
             f'<text x="{width - pad}" y="{height - pad + 14}" text-anchor="end">{x1:.0f}</text>',
             f'<text x="{pad - 4}" y="{pad + 4}" text-anchor="end">{y1:.3g}</text>',
             f'<text x="{pad - 4}" y="{height - pad}" text-anchor="end">0</text>']
    for i, (q, colour) in enumerate(QUANTILES):
        pts = [px(float(r["throughput"]), float(r[q])) for r in rows if r[q] is not None]
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(pts)}"/>')
        parts += [f'<circle cx="{p.split(",")[0]}" cy="{p.split(",")[1]}" r="3" fill="{colour}"/>' for p in pts]
        parts.append(f'<text x="{width - pad - 40}" y="{pad + 14 + 14 * i}" fill="{colour}">{q}</text>')
    for r in rows:  # which step each point is
        x, y = px(float(r["throughput"]), float(r["p99"])).split(",")
        parts.append(f'<text x="{x}" y="{float(y) - 6:.1f}" text-anchor="middle" fill="#555">{html.escape(r["step"])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def markdown(doc: dict[str, Any]) -> str:
    """The report as Markdown."""
    srv, mod = _facts(doc)
    rows = breakdown_rows(doc)
    lines = [f"# Triton sweep: {(doc.get('model') or {}).get('name', '')}", "", *[f"- {x}" for x in srv], "",
             "## Model config", "", *[f"- {x}" for x in mod], "",
             "## Latency-throughput and where the time goes", "",
             "| " + " | ".join(BREAKDOWN_HEAD) + " |", "|" + "---|" * len(BREAKDOWN_HEAD)]
    lines += ["| " + " | ".join(_cells(r)) + " |" for r in rows]
    lines += ["", "## Recommendation", "", _recommendation(doc)]
    if doc.get("error"):
        lines += ["", f"Stopped early: {doc['error']} (the steps above were measured before)."]
    return "\n".join(lines) + "\n"


def html_report(doc: dict[str, Any]) -> str:
    """The report as one self-contained HTML page."""
    esc = html.escape
    srv, mod = _facts(doc)
    rows = breakdown_rows(doc)
    head = "".join(f"<th>{esc(h)}</th>" for h in BREAKDOWN_HEAD)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in _cells(r)) + "</tr>" for r in rows)
    err = f"<p class=err>Stopped early: {esc(str(doc['error']))}</p>" if doc.get("error") else ""
    return (f"<!doctype html><html><head><meta charset=utf-8><title>Triton sweep: "
            f"{esc(str((doc.get('model') or {}).get('name', '')))}</title><style>"
            "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}.err{color:#b00}</style></head><body>"
            f"<h1>Triton sweep: {esc(str((doc.get('model') or {}).get('name', '')))}</h1>"
            f"<ul>{''.join(f'<li>{esc(x)}</li>' for x in srv)}</ul>"
            f"<h2>Model config</h2><ul>{''.join(f'<li>{esc(x)}</li>' for x in mod)}</ul>"
            f"<h2>Latency-throughput curve</h2>{curve_svg(doc)}"
            f"<h2>Where the time goes</h2><table><tr>{head}</tr>{body}</table>"
            f"<h2>Recommendation</h2><p>{esc(_recommendation(doc))}</p>{err}</body></html>")


def write_report(doc: dict[str, Any], path: str | Path) -> Path:
    """Write the report; the format follows the extension (.html/.htm, .md, .json)."""
    from trtstudio.fileio import atomic_write

    p = Path(path)
    ext = p.suffix.lower()
    if ext not in REPORT_EXTENSIONS:
        raise InputError(p, f"no Triton report format for {ext or 'no extension'} (use {', '.join(REPORT_EXTENSIONS)})")
    if ext == ".json":
        return write_session(doc, p)
    text = markdown(doc) if ext == ".md" else html_report(doc)
    return atomic_write(p, lambda fh: fh.write(text))


# -- comparison ---------------------------------------------------------------------------------

def _pct(new: float | None, base: float | None) -> float | None:
    if new is None or base is None or not base:
        return None
    return 100.0 * (float(new) - float(base)) / float(base)


def _delta(new: float | None, base: float | None) -> float | None:
    return None if new is None or base is None else float(new) - float(base)


def compare_sessions(docs: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    """Match steps (same concurrency or rate) across sessions; deltas are against the first."""
    tables = [{(r["mode"], r["value"]): r for r in breakdown_rows(d) if r["requests"]} for d in docs]
    keys = sorted({k for t in tables for k in t}, key=lambda k: (k[0], k[1]))
    steps = []
    for mode, value in keys:
        base = tables[0].get((mode, value))
        entries = []
        for name, t in zip(names, tables, strict=True):
            r = t.get((mode, value))
            e: dict[str, Any] = {"name": name, "present": r is not None}
            if r is not None:
                e |= {"throughput": r["throughput"], "p50_ms": r["p50"], "p99_ms": r["p99"]}
                if base is not None:
                    e |= {"throughput_delta": r["throughput"] - base["throughput"],
                          "throughput_delta_pct": _pct(r["throughput"], base["throughput"]),
                          "p50_delta_ms": _delta(r["p50"], base["p50"]),
                          "p99_delta_ms": _delta(r["p99"], base["p99"]),
                          "p50_delta_pct": _pct(r["p50"], base["p50"]), "p99_delta_pct": _pct(r["p99"], base["p99"])}
            entries.append(e)
        steps.append({mode: value, "mode": mode, "sessions": entries})
    sessions = [{"name": n, "server": (d.get("server") or {}).get("url"), "model": (d.get("model") or {}).get("name"),
                 "server_version": (d.get("server") or {}).get("version"),
                 "recommendation": d.get("recommendation"), "error": d.get("error")} for n, d in zip(names, docs, strict=True)]
    return {"schema": COMPARISON_SCHEMA, "baseline": names[0], "sessions": sessions, "steps": steps}


def comparison_text(comp: dict[str, Any]) -> str:
    """The comparison as a text table."""
    lines = [f"baseline: {comp['baseline']}"]
    for st in comp["steps"]:
        lines.append(f"{st['mode']} {st[st['mode']]:g}")
        for e in st["sessions"]:
            if not e["present"]:
                lines.append(f"  {e['name']:<24} (not measured)")
                continue
            delta = "" if e["name"] == comp["baseline"] or "throughput_delta_pct" not in e else (
                f"  Δ {_fmt(e['throughput_delta_pct'], '+.1f')} % infer/s, p50 {_fmt(e['p50_delta_ms'], '+.3f')} ms, "
                f"p99 {_fmt(e['p99_delta_ms'], '+.3f')} ms")
            lines.append(f"  {e['name']:<24} {_fmt(e['throughput'], '.1f'):>9} infer/s  p50 {_fmt(e['p50_ms'])} ms"
                         f"  p99 {_fmt(e['p99_ms'])} ms{delta}")
    lines.append("recommendations:")
    for s in comp["sessions"]:
        lines.append(f"  {s['name']}: {(s['recommendation'] or {}).get('reason') or 'none'}")
    return "\n".join(lines)
