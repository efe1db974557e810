"""Triton config searches as sessions, reports and comparisons (Qt-free).

A search session is the ``trtstudio.tritonsearch/1`` document of ``trtstudio triton-search``
written as JSON. Reports (HTML with an inline SVG chart, or Markdown) open with the headline (the
best config and its gain over the default), then the best variant per constraint, the chart of
throughput vs the latency percentile with the Pareto front joined and the winner and default
marked, and the table of variants with why each lost. :func:`compare_searches` sets two or more
searches side by side (``trtstudio.tritonsearch-comparison/1``): each one's winner, its figures and
its gain over its default, and the variants both measured with their throughput deltas.
"""

from __future__ import annotations

import html
import os
import stat
from pathlib import Path
from typing import Any

from trtstudio.errors import InputError
from trtstudio.triton.report import _fmt as _f
from trtstudio.triton.report import write_session

SEARCH_SCHEMA = "trtstudio.tritonsearch/1"  # the same string as trtstudio.triton.search.SEARCH_SCHEMA
COMPARISON_SCHEMA = "trtstudio.tritonsearch-comparison/1"
REPORT_EXTENSIONS = (".html", ".htm", ".md", ".json")


def is_search_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a regular JSON file of schema ``trtstudio.tritonsearch/1``."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except (OSError, ValueError):
        return False
    return f'"{SEARCH_SCHEMA}"'.encode() in head


def load_search(path: str | Path) -> dict[str, Any]:
    """A search session; InputError naming the file for anything else or a damaged one."""
    from trtstudio.jsonio import read_json_file

    p = Path(path)
    doc = read_json_file(p, "Triton search JSON")
    rows = doc.get("variants") if isinstance(doc, dict) and doc.get("schema") == SEARCH_SCHEMA else None
    if rows is None:
        raise InputError(p, f"not a Triton search (schema {SEARCH_SCHEMA})")
    ok = isinstance(rows, list) and all(isinstance(v, dict) and isinstance(v.get("key"), str)
                                        and isinstance(v.get("steps") or [], list) for v in rows)
    steps = [st for v in rows for st in v.get("steps") or []] if ok else []
    if not ok or not all(isinstance(st, dict) and isinstance(st.get("throughput"), (int, float))
                         and isinstance(st.get("concurrency"), int) for st in steps):
        raise InputError(p, "damaged Triton search: 'variants' is not a list of variants with their steps")
    return doc


def write_search(doc: dict[str, Any], path: str | Path) -> Path:
    """Write the search document (or a comparison) as JSON, atomically (as Triton sessions are written)."""
    return write_session(doc, path)


def _ci(ci: Any, spec: str = ".1f") -> str:
    return f"[{_f(ci[0], spec)}, {_f(ci[1], spec)}]" if ci else ""


def pct_key(doc: dict[str, Any]) -> str:
    return f"p{(doc.get('constraints') or {}).get('percentile', 99)}"


def points(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One point per measured variant: key, throughput, latency, on the front, winner, default."""
    pk = pct_key(doc)
    out = []
    for v in doc.get("variants") or []:
        p = v.get("point")
        if not p or p.get(pk) is None:
            continue
        out.append({"key": v["key"], "throughput": float(p["throughput"]), "latency": float(p[pk]),
                    "front": bool(v.get("front")), "winner": v["key"] == doc.get("winner"),
                    "default": v.get("role") == "default", "feasible": bool(v.get("feasible"))})
    return out


def front_svg(doc: dict[str, Any], width: int = 640, height: int = 360) -> str:
    """Throughput vs the latency percentile, one dot per variant, the Pareto front joined, the
    budget as a dashed line, the winner and the default labelled (an SVG element)."""
    pts = points(doc)
    if not pts:
        return "<p>(no variant measured)</p>"
    pad, esc = 52, html.escape
    budget = (doc.get("constraints") or {}).get("latency_ms")
    xs = [p["latency"] for p in pts] + ([float(budget)] if budget else [])
    ys = [p["throughput"] for p in pts]
    x1, y1 = max(xs) * 1.1 or 1.0, max(ys) * 1.1 or 1.0

    def px(x: float, y: float) -> tuple[float, float]:
        return pad + x / x1 * (width - 2 * pad), height - pad - y / y1 * (height - 2 * pad)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-size="11">',
             f'<rect x="{pad}" y="{pad}" width="{width - 2 * pad}" height="{height - 2 * pad}" fill="none" stroke="#999"/>',
             f'<text x="{width / 2}" y="{height - 12}" text-anchor="middle">{pct_key(doc)} latency ms</text>',
             f'<text x="14" y="{height / 2}" transform="rotate(-90 14 {height / 2})" text-anchor="middle">inferences/s</text>',
             f'<text x="{pad}" y="{height - pad + 14}">0</text>',
             f'<text x="{width - pad}" y="{height - pad + 14}" text-anchor="end">{x1:.3g}</text>',
             f'<text x="{pad - 4}" y="{pad + 4}" text-anchor="end">{y1:.0f}</text>']
    if budget:
        bx, _ = px(float(budget), 0)
        parts.append(f'<line x1="{bx:.1f}" y1="{pad}" x2="{bx:.1f}" y2="{height - pad}" stroke="#b00" stroke-dasharray="4 3"/>'
                     f'<text x="{bx + 3:.1f}" y="{pad + 12}" fill="#b00">budget {float(budget):g} ms</text>')
    front = sorted((p for p in pts if p["front"]), key=lambda p: p["latency"])
    if len(front) > 1:
        line = " ".join("{:.1f},{:.1f}".format(*px(p["latency"], p["throughput"])) for p in front)
        parts.append(f'<polyline fill="none" stroke="#ff7f0e" stroke-width="2" points="{line}"/>')
    for p in pts:
        x, y = px(p["latency"], p["throughput"])
        colour = "#2ca02c" if p["winner"] else "#ff7f0e" if p["front"] else "#1f77b4" if p["feasible"] else "#999"
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{6 if p["winner"] else 4}" fill="{colour}">'
                     f'<title>{esc(p["key"])}: {p["throughput"]:.1f} infer/s, {p["latency"]:.2f} ms</title></circle>')
        if p["winner"] or p["default"] or p["front"]:
            label = p["key"] + (" (winner)" if p["winner"] else " (default)" if p["default"] else "")
            right = x > width / 2  # labels on the right half end at their point, inside the chart
            anchor = ' text-anchor="end"' if right else ""
            parts.append(f'<text x="{x - 7 if right else x + 7:.1f}" y="{y - 6:.1f}" fill="#333"{anchor}>'
                         f'{esc(label)}</text>')
    parts.append(f'<text x="{width - pad - 4}" y="{height - pad - 8}" text-anchor="end" fill="#555">'
                 'green: winner, orange: Pareto front, blue: within constraints, grey: not</text></svg>')
    return "".join(parts)


HEAD = ("variant", "config", "infer/s", "interval", "latency ms", "interval", "concurrency", "front", "why not the answer")


def table_rows(doc: dict[str, Any]) -> list[list[str]]:
    pk = pct_key(doc)
    rows = []
    for v in doc.get("variants") or []:
        p = v.get("point") or {}
        tag = " (default)" if v.get("role") == "default" else " (winner)" if v["key"] == doc.get("winner") else ""
        why = f"{v['lost']}: {v.get('lost_text', '')}" if v.get("lost") else ""
        rows.append([v["key"] + tag, str(v.get("describe", "")), _f(p.get("throughput"), ".1f"), _ci(p.get("throughput_ci")),
                     _f(p.get(pk)), _ci(p.get("latency_ci"), ".2f"), str(p.get("concurrency", "-")),
                     "yes" if v.get("front") else "", why])
    return rows


def best_lines(doc: dict[str, Any]) -> list[str]:
    pk = pct_key(doc)
    out = []
    for b in doc.get("best") or []:
        if not b.get("variant"):
            out.append(f"{b['text']}: no variant")
            continue
        g = b.get("gain") or {}
        gain = (f"; {_f(g.get('percent'), '+.1f')} % {_ci(g.get('interval'), '+.1f')} throughput against the default "
                f"({g.get('verdict')})") if g else ""
        out.append(f"{b['text']}: {b['variant']} ({b.get('describe', '')}), {_f(b.get('throughput'), '.1f')} "
                   f"{_ci(b.get('throughput_ci'))} infer/s, {pk} {_f(b.get(pk))} {_ci(b.get('latency_ci'), '.2f')} ms at "
                   f"concurrency {b.get('concurrency')}{gain}")
    return out


def _out_lines(doc: dict[str, Any]) -> list[str]:
    out = doc.get("out") or {}
    if not out:
        return []
    if not out.get("path"):
        return [str(out.get("error"))]
    conf = out.get("confirm") or {}
    lines = [f"written: {out['path']} ({out.get('variant')})"]
    if conf.get("loaded"):
        lines.append(f"loaded again ({conf.get('how')}) and re-measured at concurrency {conf.get('concurrency')}: "
                     f"{_f(conf.get('throughput'), '.1f')} infer/s, {pct_key(doc)} {_f(conf.get(pct_key(doc)))} ms")
    if conf.get("error"):
        lines.append(f"confirmation failed: {conf['error']}")
    return lines


def _facts(doc: dict[str, Any]) -> list[str]:
    srv, model = doc.get("server") or {}, doc.get("model") or {}
    return [f"model: {model.get('name')} ({model.get('origin')})",
            f"server: Triton {srv.get('version', '')} at {srv.get('url')}"
            f"{' (launched by trtstudio)' if srv.get('launched') else ''}",
            f"search: {doc.get('mode')}, {doc.get('measured')} variant(s) in {_f(doc.get('duration_s'), '.1f')} s; "
            f"constraints: {(doc.get('constraints') or {}).get('text')}",
            *[f"note: {n}" for n in doc.get("notes") or []],
            *([f"stopped early: {doc['error']} (the variants shown were measured before)"] if doc.get("error") else [])]


def markdown(doc: dict[str, Any]) -> str:
    lines = [f"# Triton config search: {(doc.get('model') or {}).get('name')}", "", "## At a glance", "",
             str(doc.get("headline", "")), "", *[f"- {x}" for x in best_lines(doc)], "", *[f"- {x}" for x in _facts(doc)],
             *[f"- {x}" for x in _out_lines(doc)], "", "## Variants", "", "| " + " | ".join(HEAD) + " |",
             "|" + "---|" * len(HEAD)]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in r) + " |" for r in table_rows(doc)]
    return "\n".join(lines) + "\n"


def html_report(doc: dict[str, Any]) -> str:
    esc = html.escape
    name = esc(str((doc.get("model") or {}).get("name")))
    head = "".join(f"<th>{esc(h)}</th>" for h in HEAD)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in table_rows(doc))
    li = "".join(f"<li>{esc(x)}</li>" for x in best_lines(doc))
    facts = "".join(f"<li>{esc(x)}</li>" for x in _facts(doc) + _out_lines(doc))
    return ("<!doctype html><html><head><meta charset=utf-8>"
            f"<title>Triton config search: {name}</title><style>body{{font-family:sans-serif;margin:2em}}"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px}</style></head><body>"
            f"<h1>Triton config search: {name}</h1><h2>At a glance</h2><p><b>{esc(str(doc.get('headline', '')))}</b></p>"
            f"<ul>{li}</ul><ul>{facts}</ul><h2>Throughput vs latency: the Pareto front</h2>{front_svg(doc)}"
            f"<h2>Variants</h2><table><tr>{head}</tr>{body}</table></body></html>")


def write_search_report(doc: dict[str, Any], path: str | Path) -> Path:
    """Write the report; the format follows the extension (.html/.htm, .md, .json)."""
    from trtstudio.report.session import atomic_write

    p = Path(path)
    makers = {".html": html_report, ".htm": html_report, ".md": markdown}
    if p.suffix.lower() == ".json":
        return write_search(doc, p)
    maker = makers.get(p.suffix.lower())
    if maker is None:
        raise InputError(p, f"no search report format for {p.suffix or 'no extension'} (use {', '.join(REPORT_EXTENSIONS)})")
    text = maker(doc)
    return atomic_write(p, lambda fh: fh.write(text))


# -- comparison ---------------------------------------------------------------------------------

def compare_searches(docs: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    """Searches side by side: each winner and gain; the variants (by key) measured in every search
    with their throughput and latency and the change against the first search."""
    pk = pct_key(docs[0])
    searches = []
    for n, d in zip(names, docs, strict=True):
        b = (d.get("best") or [{}])[0]
        searches.append({"name": n, "model": (d.get("model") or {}).get("name"), "server": (d.get("server") or {}).get("url"),
                         "mode": d.get("mode"), "constraints": (d.get("constraints") or {}).get("text"),
                         "winner": d.get("winner"), "throughput": b.get("throughput"), pk: b.get(pk),
                         "gain": b.get("gain"), "measured": d.get("measured"), "duration_s": d.get("duration_s"),
                         "headline": d.get("headline"), "error": d.get("error")})
    tables = [{p["key"]: p for p in points(d)} for d in docs]
    common = [k for k in tables[0] if all(k in t for t in tables[1:])]
    variants = []
    for k in common:
        base = tables[0][k]
        variants.append({"key": k, "searches": [
            {"name": n, "throughput": t[k]["throughput"], pk: t[k]["latency"],
             "throughput_delta_pct": 100.0 * (t[k]["throughput"] / base["throughput"] - 1) if base["throughput"] else None}
            for n, t in zip(names, tables, strict=True)]})
    same = len({s["winner"] for s in searches}) == 1
    return {"schema": COMPARISON_SCHEMA, "baseline": names[0], "searches": searches, "variants": variants,
            "same_winner": same, "percentile": pk}


def comparison_text(comp: dict[str, Any]) -> str:
    pk = comp["percentile"]
    lines = [f"baseline: {comp['baseline']}; "
             + ("the searches agree on the winner" if comp["same_winner"] else "the searches pick different winners")]
    for s in comp["searches"]:
        g = s.get("gain") or {}
        gain = f", {_f(g.get('percent'), '+.1f')} % vs its default ({g.get('verdict')})" if g else ""
        lines.append(f"{s['name']:<24} winner {s['winner'] or 'none'}: {_f(s['throughput'], '.1f')} infer/s, "
                     f"{pk} {_f(s.get(pk))} ms{gain}  [{s['mode']}, {s['measured']} variants, {s['constraints']}]")
    if comp["variants"]:
        lines.append("variants measured by every search:")
    for v in comp["variants"]:
        cells = "  ".join(f"{e['name']}: {_f(e['throughput'], '.1f')} infer/s {pk} {_f(e[pk])} ms"
                          + (f" ({_f(e['throughput_delta_pct'], '+.1f')} %)" if e["name"] != comp["baseline"] else "")
                          for e in v["searches"])
        lines.append(f"  {v['key']:<22} {cells}")
    return "\n".join(lines)

