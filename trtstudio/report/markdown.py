"""A report as Markdown (``-o report.md``): At a glance first, then runs, the slowest layers,
findings and warnings, for pull requests, wikis and chat. The same :class:`Report` the HTML and
PDF writers render; missing figures are an en dash, never ``None`` or ``nan``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from trtstudio.fmt import fmt_bytes, fmt_ms, fmt_ms3, fmt_num

DASH = "\u2013"


def _cell(v: Any) -> str:
    text = DASH if v is None or v == "" else str(v)
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def _pct(share: float | None) -> str:
    return DASH if share is None else f"{100 * share:.1f} %"


def _glance(s: dict[str, Any]) -> list[str]:
    out = ["## At a glance", "", s["headline"]["text"], ""]
    if s["time_by_type"]:
        timed = bool(s.get("timed", s["time_basis"] == "profile"))
        how = "" if s["time_basis"] == "profile" else f" (from {s['time_basis']})" if timed else \
            " (no per-layer profile: the layer mix by count)"
        out += ["**Where the time goes**" + how, "",
                md_table(("layer type", "layers", "time", "share"),
                         [(t["type"], t["layers"], fmt_ms3(t["time_ms"]) if timed else DASH, _pct(t["share"]))
                          for t in s["time_by_type"]]), ""]
    if s["top_layers"]:
        out += [md_table(("slowest layer", "type", "time", "share", "ONNX nodes"),
                         [(t["name"], t["type"], fmt_ms3(t["time_ms"]), _pct(t["share"]),
                           ", ".join(t["onnx_nodes"][:4])) for t in s["top_layers"]]), ""]
    f = s["findings_by_severity"]
    if f["by_rule"]:
        out += ["**What is wrong**", "", md_table(("rule", "severity", "count", "time at stake", "share"),
                                                  [(e["rule"], e["severity"], e["count"], fmt_ms3(e["time_ms"]),
                                                    _pct(e["share"])) for e in f["by_rule"]]), ""]
        if f["rejected_nodes"]:
            out += ["Rejected by TensorRT: " + ", ".join(f["rejected_nodes"][:10]), ""]
    else:
        out += ["No findings.", ""]
    if s["verdicts"]:
        out += ["**Verdicts**", ""] + [f"- **{v['verdict']}** {v['topic']}: {v['text']}" for v in s["verdicts"]] + [""]
    if s["next_steps"]:
        out += ["**Next steps**", ""]
        for k, st in enumerate(s["next_steps"], start=1):
            gain = ("blocking" if st.get("blocking") else
                    f"up to {fmt_ms3(st['estimated_gain_ms'])}" if st["estimated_gain_ms"] is not None else "gain not estimated")
            out.append(f"{k}. {st['action']} ({gain}). _{st['basis']}_")
        out.append("")
    return out


def render_markdown(rep: Any) -> str:
    """The Markdown of report ``rep``."""
    from trtstudio.report.summary import at_a_glance

    out = [f"# {rep.title}", "", f"_generated {rep.generated} by trtstudio_", ""]
    out += _glance(at_a_glance(rep))
    if len(rep.runs) > 1:
        out += ["## Runs", "", md_table(("run", "backend", "where", "inferences", "median", "p99", "inferences/s"),
                                        [(r["name"], r.get("backend"), r.get("where"), r.get("samples"),
                                          fmt_ms(r.get("median_ms")), fmt_ms(r.get("p99_ms")),
                                          fmt_num(r.get("throughput"), 1)) for r in rep.runs]), ""]
    if getattr(rep, "build_timeline", None):
        from trtstudio.report.build_section import build_markdown

        out += build_markdown(rep.build_timeline, md_table)
    if getattr(rep, "sweeps", None):
        from trtstudio.report.shapes import markdown_lines

        out += ["## Shapes: sweeps and mixes", "", *markdown_lines(rep.sweeps)]
    if getattr(rep, "precision_explain", None):
        from trtstudio.report.precision_sections import explain_markdown

        out += explain_markdown(rep.precision_explain, md_table)
    if getattr(rep, "divergence", None):
        from trtstudio.report.precision_sections import divergence_markdown

        out += divergence_markdown(rep.divergence, md_table)
    mem = getattr(rep, "engine_memory", None)
    if mem:
        from trtstudio.engine.memory import short_source

        out += ["## Engine memory", "", md_table(("category", "bytes", "from"), [
            (c["name"], fmt_bytes(c["bytes"]) if c["bytes"] is not None else "not recorded",
             short_source(c["source"]) if c["bytes"] is not None else "") for c in mem.get("categories", [])]), ""]
    if rep.findings:
        out += ["## Findings", "", md_table(("severity", "rule", "layer", "message", "hint"),
                                            [(f["severity"], f["kind"], f.get("layer"), f["message"], f.get("hint"))
                                             for f in rep.findings[:200]]), ""]
        if len(rep.findings) > 200:
            out += [f"({len(rep.findings) - 200:,} more findings in the HTML and JSON reports)", ""]
    if rep.warnings:
        out += ["## Warnings", ""] + [f"- {w}" for w in rep.warnings] + [""]
    return "\n".join(out)
