"""The HTML (and PDF) of a report's At a glance section, from :func:`report.summary.at_a_glance`.

Kept apart from ``report.html`` so that the first screen's layout has one home: a headline
sentence, the key figures, where the time goes, what is wrong, the verdicts and the next steps.
Every missing figure is an en dash with a title saying why (never ``nan`` or ``None``).
"""

from __future__ import annotations

from html import escape
from typing import Any

from trtstudio.fmt import fmt_ms3, fmt_num

GLANCE_CSS = """
.glance .headline { font-size: 16px; margin: 6px 0 10px 0; }
.glance h3 { margin: 10px 0 4px 0; }
.glance ol li, .glance ul li { margin-bottom: 3px; }
.glance .basis { color: #666; font-size: 11px; }
.v-pass, .v-stable { color: #1d7a32; font-weight: bold; } .v-fail, .v-growing, .v-unstable { color: #b00020; font-weight: bold; }
table.cards { table-layout: fixed; width: 100%; } table.cards td.card { min-width: 0; overflow-wrap: anywhere; }
.v-inconclusive { color: #8a6d00; font-weight: bold; }
"""
DASH = "–"
_TABLE = '<table border="1" cellspacing="0" cellpadding="3">'


def _missing(why: str) -> str:
    return f'<span class="muted" title="{escape(why)}">{DASH}</span>'


def _pct(share: float | None) -> str:
    return _missing("no profiled time") if share is None else f"{100.0 * share:.1f} %"


def _ms(ms: float | None, why: str = "not measured") -> str:
    return _missing(why) if ms is None else escape(fmt_ms3(ms))


def _time_table(s: dict[str, Any]) -> str:
    types = s["time_by_type"]
    if not types:
        return '<p class="muted">No engine layers and no per-layer profile: nothing to break down.</p>'
    timed = bool(s.get("timed", s["time_basis"] == "profile"))
    time_th = "<th class=num>time</th>" if timed else ""
    head = (f"<tr><th>layer type</th><th class=num>layers</th>{time_th}"
            f"<th class=num>{'share' if timed else 'share of layers'}</th></tr>")
    rows = "".join(f"<tr><td>{escape(str(t['type']))}</td><td class=num>{fmt_num(t['layers'])}</td>"
                   + (f"<td class=num>{_ms(t['time_ms'], 'no profile')}</td>" if timed else "")
                   + f"<td class=num>{_pct(t['share'])}</td></tr>" for t in types)
    basis = ("" if s["time_basis"] == "profile" else f'<p class="muted">From {escape(s["time_basis"])}.</p>') if timed \
        else '<p class="muted">No per-layer profile of the engine: the layer mix by count.</p>'
    out = f"{basis}{_TABLE}{head}{rows}</table>"
    if s["top_layers"]:
        lrows = "".join(
            f"<tr><td>{escape(str(t['name']))}</td><td>{escape(str(t['type']))}</td>"
            f"<td class=num>{_ms(t['time_ms'])}</td><td class=num>{_pct(t['share'])}</td>"
            f"<td>{escape(', '.join(t['onnx_nodes'][:4]) + (' …' if len(t['onnx_nodes']) > 4 else '')) or _missing('not mapped to ONNX nodes')}</td></tr>"
            for t in s["top_layers"])
        out += (f"{_TABLE}<tr><th>slowest layers</th><th>type</th><th class=num>time</th><th class=num>share</th>"
                f"<th>from ONNX nodes</th></tr>{lrows}</table>")
    return out


def _findings(s: dict[str, Any]) -> str:
    f = s["findings_by_severity"]
    if not f["by_rule"]:
        return "<p>No findings: nothing in the engine calls for attention.</p>"
    counts = ", ".join(f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in f["counts"].items() if n)
    rows = "".join(f"<tr class=\"{escape(e['severity'])}\"><td>{escape(e['rule'])}</td><td>{escape(e['severity'])}</td>"
                   f"<td class=num>{fmt_num(e['count'])}</td><td class=num>{_ms(e['time_ms'], 'no profiled time')}</td>"
                   f"<td class=num>{_pct(e['share'])}</td></tr>" for e in f["by_rule"])
    out = (f"<p>{escape(counts)}.</p>{_TABLE}<tr><th>rule</th><th>severity</th><th class=num>count</th>"
           f"<th class=num>time at stake</th><th class=num>share</th></tr>{rows}</table>")
    if f["rejected_nodes"]:
        names = ", ".join(f["rejected_nodes"][:10]) + (" …" if len(f["rejected_nodes"]) > 10 else "")
        out += f"<p><b>Rejected by TensorRT:</b> {escape(names)}</p>"
    return out


def _verdicts(s: dict[str, Any]) -> str:
    if not s["verdicts"]:
        return '<p class="muted">No run or accuracy check yet: no verdicts.</p>'
    items = "".join(f'<li><span class="v-{escape(v["verdict"])}">{escape(v["verdict"])}</span> '
                    f'<b>{escape(v["topic"])}</b>: {escape(v["text"])}</li>' for v in s["verdicts"])
    return f"<ul>{items}</ul>"


def _next_steps(s: dict[str, Any]) -> str:
    if not s["next_steps"]:
        return "<p>No step suggested: no finding with a known remedy.</p>"
    items = []
    for st in s["next_steps"]:
        gain = st["estimated_gain_ms"]
        what = "blocking" if st.get("blocking") else (f"up to {fmt_ms3(gain)}" if gain is not None else "gain not estimated")
        items.append(f"<li>{escape(st['action'])} <b>({escape(what)})</b><br><span class=basis>{escape(st['basis'])}</span></li>")
    return f"<ol>{''.join(items)}</ol>"


def glance_html(s: dict[str, Any], cards_html: str) -> str:
    """The body of the At a glance section of summary ``s``, with the key-figure cards."""
    return (f'<div class="glance"><p class="headline">{escape(s["headline"]["text"])}</p>{cards_html}'
            f"<h3>Where the time goes</h3>{_time_table(s)}"
            f"<h3>What is wrong</h3>{_findings(s)}"
            f"<h3>Verdicts</h3>{_verdicts(s)}"
            f"<h3>Next steps</h3>{_next_steps(s)}</div>")
