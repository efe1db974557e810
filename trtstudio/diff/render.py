"""A diff for people: text for the terminal, Markdown for a CI job page, a self-contained HTML page.

Story first (the sentences of ``PairDiff.story``), then the time summary with both sides'
provenance, the totals by change, memory side by side, and the groups (every one in HTML, the
changed ones in text and Markdown).
"""

from __future__ import annotations

from html import escape
from typing import Any

CHANGE_COLOURS = {"same": "#9e9e9e", "precision": "#1e88e5", "tactic": "#8e24aa", "format": "#fb8c00",
                  "fused": "#00897b", "only_base": "#e53935", "only_other": "#43a047"}


def _ms(v: Any) -> str:
    from trtstudio.fmt import sig

    return "-" if v is None else sig(v)


def _delta(v: Any) -> str:
    from trtstudio.fmt import sig

    if v is None:
        return "-"
    return "0" if v == 0 else ("+" if v > 0 else "-") + sig(abs(v))


def _precisions(g: dict[str, Any]) -> str:
    base, other = "/".join(g["base_precision"]) or "-", "/".join(g["other_precision"]) or "-"
    if not g["base_layers"]:
        return f"added: {other}"
    if not g["other_layers"]:
        return f"removed: {base}"
    return base if base == other else f"{base} -> {other}"


def delta_chart(pair: dict[str, Any], top: int = 15) -> str:
    """The groups whose time changed most (other - base, ms) as diverging SVG bars: gains to the
    left in green, losses to the right in red, each labelled with its change."""
    groups = sorted((g for g in pair["groups"] if g["delta_ms"]), key=lambda g: -abs(g["delta_ms"]))[:top]
    e = escape
    label_w, half, row, top_pad = 300, 230, 18, 34
    width, height = label_w + 2 * half + 40, top_pad + row * len(groups) + 12
    vmax = max((abs(g["delta_ms"]) for g in groups), default=1.0) or 1.0
    mid = label_w + half
    parts = [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             'font-family="Helvetica, Arial, sans-serif" role="img">',
             f'<rect width="{width}" height="{height}" fill="#fff"/>',
             f'<text x="4" y="16" font-size="13" font-weight="bold">{e("Largest changes per group, ")}'
             f'{e(pair["other"]["name"])} vs {e(pair["base"]["name"])} (ms per inference)</text>',
             f'<line x1="{mid}" y1="{top_pad - 6}" x2="{mid}" y2="{height - 6}" stroke="#888"/>']
    for i, g in enumerate(groups):
        y = top_pad + i * row
        d = float(g["delta_ms"])
        w = abs(d) / vmax * (half - 70)
        x = mid - w if d < 0 else mid
        name = (g["base_layers"] or g["other_layers"])[0]
        name = name if len(name) <= 46 else name[:43] + "..."
        colour = "#2e7d32" if d < 0 else "#c62828"
        text_x, anchor = (x - 4, "end") if d < 0 else (x + w + 4, "start")
        parts += [f'<text x="{label_w - 8}" y="{y + 12}" font-size="10" text-anchor="end">{e(name)}</text>',
                  f'<rect x="{x:.1f}" y="{y + 2}" width="{max(w, 1):.1f}" height="{row - 5}" fill="{colour}"/>',
                  f'<text x="{text_x:.1f}" y="{y + 12}" font-size="9" text-anchor="{anchor}">'
                  f'{e(_delta(d))} {e(g["change"])}</text>']
    parts.append("</svg>")
    return "".join(parts)


def _mib(v: Any) -> str:
    from trtstudio.fmt import sig

    return "-" if v is None else f"{sig(v / 2**20)} MiB"


def _names(layers: list[str], n: int = 2, width: int = 60) -> str:
    text = " | ".join(layers[:n]) + (f" (+{len(layers) - n})" if len(layers) > n else "")
    return text if len(text) <= width else text[:width - 3] + "..."


def text(doc: dict[str, Any], limit: int = 40) -> str:
    """The terminal view: the warnings first (sides that may not belong together), then per pair
    the story, totals by change and the changed groups by time at stake."""
    out: list[str] = [f"warning: {w}" for w in doc.get("warnings") or []]
    if out:
        out.append("")
    for pair in doc["diffs"]:
        s = pair["summary"]
        out.append(f"== {pair['other']['name']} vs {pair['base']['name']}")
        out += pair["story"]
        out.append(f"time: {s['text']}")
        al = pair["alignment"]
        cl = al["compute_layers"]
        out.append(f"aligned {al['aligned_groups']} of {al['groups']} groups; convolutions/GEMMs aligned "
                   f"{cl['base_aligned']}/{cl['base']} (base), {cl['other_aligned']}/{cl['other']} (other)")
        out.append("by change: " + ", ".join(
            f"{k} {v['groups']}" + (f" ({_delta(v['delta_ms'])} ms)" if v["delta_ms"] is not None else "")
            for k, v in pair["totals"].items()))
        mem = [f"{k} {_mib(v['base'])} -> {_mib(v['other'])}" for k, v in (pair.get("memory") or {}).items()
               if isinstance(v, dict) and (v.get("change") or v.get("base") is None or v.get("other") is None)]
        if mem:  # the categories that differ or that one side does not record
            out.append("memory: " + ", ".join(mem))
        if pair.get("build_time"):  # both sides' build logs: build time by phase side by side
            from trtstudio.engine.buildtime import render_compare

            out += render_compare(pair["build_time"], ("base", "other"))
        changed = [g for g in pair["groups"] if g["change"] != "same"]
        changed.sort(key=lambda g: -abs(g["delta_ms"] or 0))
        if changed:
            out.append(f"\n  {'change':<11}{'base ms':>9}{'other ms':>10}{'delta':>9}  base layers -> other layers")
            for g in changed[:limit]:
                out.append(f"  {g['change']:<11}{_ms(g['base_ms']):>9}{_ms(g['other_ms']):>10}{_delta(g['delta_ms']):>9}  "
                           f"{_names(g['base_layers']) or '-'} -> {_names(g['other_layers']) or '-'}")
                if g["reason"] and g["base_layers"] and g["other_layers"]:  # fused, format: what changed
                    out.append(f"  {'':<11}{'':>28}  {_names([g['reason']], width=110)}")
            if len(changed) > limit:
                out.append(f"  ... {len(changed) - limit} more changed groups (--json or -o FILE lists all)")
        out.append("")
    return "\n".join(out).rstrip()


def markdown(doc: dict[str, Any], gates: list[str] | None = None) -> str:
    """A summary for a CI job page: verdicts, the time table, totals, the ten largest changes."""
    out = ["# trtstudio diff", ""]
    out += [f"> **warning:** {w}" for w in doc.get("warnings") or []]
    if doc.get("warnings"):
        out.append("")
    out += [f"- {g}" for g in gates or []]
    if gates:
        out.append("")
    out += ["| other vs base | median ms | p99 ms | ratio (95 % interval) | verdict |", "|---|---|---|---|---|"]
    for pair in doc["diffs"]:
        s = pair["summary"]
        iv = s.get("interval")
        ratio = "-" if s.get("ratio") is None else f"x{s['ratio']:.3f}" + (f" ({iv[0]:.3f}-{iv[1]:.3f})" if iv else "")
        out.append(f"| {pair['other']['name']} vs {pair['base']['name']} | {_ms(s['base_median_ms'])} -> "
                   f"{_ms(s['other_median_ms'])} | {_ms(s['base_p99_ms'])} -> {_ms(s['other_p99_ms'])} | {ratio} | "
                   f"{s['verdict']} |")
    for pair in doc["diffs"]:
        out += ["", f"## {pair['other']['name']} vs {pair['base']['name']}", "", *pair["story"], "",
                "| change | groups | delta ms |", "|---|---|---|"]
        out += [f"| {k} | {v['groups']} | {_delta(v['delta_ms'])} |" for k, v in pair["totals"].items()]
        top = sorted((g for g in pair["groups"] if g["delta_ms"] is not None and g["change"] != "same"),
                     key=lambda g: -abs(g["delta_ms"]))[:10]
        if top:
            out += ["", "| change | base layers | other layers | delta ms |", "|---|---|---|---|"]
            out += [f"| {g['change']} | {_names(g['base_layers']).replace('|', '/')} | "
                    f"{_names(g['other_layers']).replace('|', '/')} | {_delta(g['delta_ms'])} |" for g in top]
    return "\n".join(out) + "\n"


def html(doc: dict[str, Any]) -> str:
    """A self-contained HTML page of the diff (every group listed)."""
    e = escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>trtstudio diff</title><style>",
             "body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;"
             "font-size:13px}td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}"
             "td.n{text-align:right;font-variant-numeric:tabular-nums}.chip{color:#fff;border-radius:3px;padding:1px 6px}"
             ".story{font-size:17px}.warning{font-size:16px;color:#8a4b00;background:#fff3e0;padding:6px 10px;"
             "border-left:4px solid #fb8c00}", "</style></head><body><h1>trtstudio diff</h1>"]
    for pair in doc["diffs"]:
        s = pair["summary"]
        pb, po = pair["provenance"]["base"], pair["provenance"]["other"]
        parts.append(f"<h2>{e(pair['other']['name'])} vs {e(pair['base']['name'])}</h2>")
        parts += [f"<p class='warning'>warning: {e(w)}</p>" for w in pair.get("warnings") or []]
        parts += [f"<p class='story'>{e(t)}</p>" for t in pair["story"]]
        parts.append("<h3>Time</h3><table><tr><th></th><th>base</th><th>other</th></tr>")
        rows = [("side", pair["base"]["name"], pair["other"]["name"]),
                ("GPU", pb["gpu"], po["gpu"]), ("TensorRT", pb["tensorrt"], po["tensorrt"]),
                ("median ms", _ms(s["base_median_ms"]), _ms(s["other_median_ms"])),
                ("p99 ms", _ms(s["base_p99_ms"]), _ms(s["other_p99_ms"])),
                ("throughput /s", _ms(s["throughput"]["base"]), _ms(s["throughput"]["other"])),
                ("layer time per inference ms (sum of layers)", _ms(s["layer_sum_ms"]["base"]), _ms(s["layer_sum_ms"]["other"]))]
        rows += [(f"memory: {k}", _mib(v["base"]), _mib(v["other"])) for k, v in pair["memory"].items()]
        parts += [f"<tr><th>{e(str(a))}</th><td>{e(str(b))}</td><td>{e(str(c))}</td></tr>" for a, b, c in rows]
        parts.append(f"</table><p>{e(s['text'])}</p>")
        if any(g["delta_ms"] for g in pair["groups"]):
            parts.append(f"<div>{delta_chart(pair)}</div>")
        parts.append("<h3>By change</h3><table><tr><th>change</th><th>groups</th><th>base ms</th><th>other ms</th>"
                     "<th>delta ms</th></tr>")
        for k, v in pair["totals"].items():
            parts.append(f"<tr><td><span class='chip' style='background:{CHANGE_COLOURS.get(k, '#666')}'>{e(k)}</span></td>"
                         f"<td class='n'>{v['groups']}</td><td class='n'>{_ms(v['base_ms'])}</td>"
                         f"<td class='n'>{_ms(v['other_ms'])}</td><td class='n'>{_delta(v['delta_ms'])}</td></tr>")
        parts.append("</table><h3>Groups</h3><table><tr><th>change</th><th>base layers</th><th>other layers</th>"
                     "<th>precision</th><th>base ms</th><th>other ms</th><th>delta</th><th>why</th></tr>")
        for g in pair["groups"]:
            prec = _precisions(g)
            parts.append(
                f"<tr><td><span class='chip' style='background:{CHANGE_COLOURS.get(g['change'], '#666')}'>"
                f"{e(g['change'])}</span></td><td>{'<br>'.join(e(n) for n in g['base_layers']) or '-'}</td>"
                f"<td>{'<br>'.join(e(n) for n in g['other_layers']) or '-'}</td><td>{e(prec)}</td>"
                f"<td class='n'>{_ms(g['base_ms'])}</td><td class='n'>{_ms(g['other_ms'])}</td>"
                f"<td class='n'>{_delta(g['delta_ms'])}</td><td>{e(g['reason'] or g['matched_by'])}</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_text(path: str, content: str) -> str:
    """Write ``content`` to ``path`` atomically (a temporary file beside it, then replaced)."""
    from trtstudio.fileio import atomic_write

    def put(fh: Any) -> None:
        fh.write(content)

    atomic_write(path, put)
    return path


def write(doc: dict[str, Any], path: str, gate_lines: list[str]) -> str:
    """Write the diff as ``path``'s suffix asks (.html, .pdf, .md, .json); returns the path."""
    from pathlib import Path

    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        from trtstudio.jsonio import dumps_text

        return write_text(path, dumps_text(doc, indent=2, where=path))
    if suffix == ".md":
        return write_text(path, markdown(doc, gate_lines))
    page = html(doc)
    if suffix == ".pdf":
        from trtstudio.report.pdf import write_pdf

        write_pdf(page, {}, path, title="trtstudio diff")
        return path
    return write_text(path, page)
