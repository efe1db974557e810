"""The report's **Build** section: where the build of the report's engine spent its time, from
the same core as ``trtstudio build-log`` (:mod:`trtstudio.engine.buildtime`).

A report gets it from a build log among its engine's files (trtexec ``--verbose``, TensorRT's
Python logger, ``trtstudio build --save-log``), from a ``trtstudio build --json`` document
(``trtstudio.build/1``), from a ``BuildResult`` handed to ``build_report``, or from a session that
holds one (``Session.build``, saved with it, so the section survives the log file). The JSON report
carries it as ``build_timeline``: the timeline (phases with start, duration, share, laid end to end
as the log states them or as trtstudio recorded them), the phases summed, the total seconds and
where that total comes from, the 20 layers that cost the most build time with the settings that
cut it, timing-cache hits and misses, memory peaks and the log's warnings. HTML and Markdown draw
it; nothing here imports Qt.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from html import escape
from pathlib import Path
from typing import Any

SCHEMA = "trtstudio.report.build/1"
BAR_PHASES = 14  # phases drawn in the chart (a 10.16 log's several passes are summed by phase)
_KEEP = ("source", "total_seconds", "total_source", "recorded_seconds", "parse_seconds", "passes", "timeline",
         "log_timeline", "phases", "cache", "memory", "top_layers", "global_settings", "verbose", "versions",
         "cancelled", "warnings")


def _is_build_document(path: Path) -> dict[str, Any] | None:
    """The ``trtstudio.build/1`` document in ``path``, or None where it is not one."""
    if path.suffix.lower() != ".json" or not path.is_file():
        return None
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            head = fh.read(256)
            if '"trtstudio.build/1"' not in head:
                return None
            import json

            doc = json.loads(head + fh.read())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("schema") == "trtstudio.build/1" else None


def build_log_doc(engine: Any = None, paths: Iterable[str] = ()) -> dict[str, Any] | None:
    """The ``trtstudio.buildlog/1`` document of the build behind a report's engine: a
    ``BuildResult`` (its log and recorded timeline), else the first build log or ``trtstudio build
    --json`` document among ``paths``; None where none of them states a build."""
    from trtstudio.engine import buildtime

    if engine is not None and hasattr(engine, "log_text") and hasattr(engine, "ok"):  # backends.build.BuildResult
        own = buildtime.analyse_text(engine.log_text(), str(engine.engine_path or "trtstudio build"))
        return own if buildtime.states_a_build(own) else None
    files = [str(p) for p in paths]
    found = buildtime.build_log_of(files)
    if found is not None:
        return found
    for p in files:
        build = _is_build_document(Path(p))
        if build is not None:
            doc = buildtime.analyse_build_document(build, p)
            if buildtime.states_a_build(doc):
                return doc
    return None


def section_json(doc: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a report keeps of a build-log document (``build_timeline``): everything but the full
    per-layer and per-tactic lists, which stay with ``trtstudio build-log --json``; the top layers
    carry their tactic figures."""
    if not doc:
        return None
    out = {k: doc[k] for k in _KEEP if k in doc}
    by_name = {lay["name"]: lay for lay in doc.get("layers") or []}
    out["top_layers"] = [{**t, **{k: by_name.get(t["layer"], {}).get(k) for k in
                                  ("tactics_tried", "runners_timed", "chosen", "fastest", "runner_up",
                                   "speedup_over_runner_up", "cache_hits", "profiles")}}
                         for t in doc.get("top_layers") or []]
    out["layers_timed"] = len(doc.get("layers") or [])
    out["timeline_seconds"] = round(sum(float(r["seconds"]) for r in doc.get("timeline") or []), 6)
    return {"schema": SCHEMA, **out}


def _secs(s: Any) -> str:
    if s is None:
        return "\u2013"
    s = float(s)
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s" if s < 100 else f"{s / 60:.1f} min"


def _bytes(b: Any) -> str:
    from trtstudio.fmt import fmt_bytes

    return "not stated" if b is None else fmt_bytes(b)


def headline(sec: dict[str, Any]) -> str:
    """One sentence: the total, where it comes from, the largest phase and the cache's use."""
    total, src = sec.get("total_seconds"), sec.get("total_source")
    if sec.get("recorded_seconds") is not None:  # a trtstudio build: its whole time, TensorRT's own total beside
        src = "recorded by trtstudio" + (f"; TensorRT's Engine generation completed in {_secs(total)}"
                                         if total is not None else "")
        total = sec["recorded_seconds"]
    if total is None:
        total, src = sec.get("timeline_seconds"), "the phases stated by the log, added up"
    phases = sec.get("phases") or {}
    whole = sum(phases.values()) or 0.0
    top = max(phases.items(), key=lambda kv: kv[1]) if phases else None
    parts = [f"The build took {_secs(total)} ({src})"]
    from trtstudio.engine.buildtime import UNSTATED

    if top and whole > 0 and top[0] == UNSTATED:
        parts.append(f"the log itemises {100 * (1 - top[1] / whole):.0f} % of it (a verbose log itemises more)")
    elif top and whole > 0:
        parts.append(f"{top[0]} is the largest phase ({_secs(top[1])}, {100 * top[1] / whole:.0f} % of the timeline)")
    c = sec.get("cache") or {}
    if is_rtx(sec):
        return "; ".join(parts) + "; TensorRT-RTX keeps no timing cache."
    parts.append(f"timing cache: {c.get('hits', 0)} hits, {c.get('misses', 0)} misses"
                 + (f" ({c['kind']} cache)" if c.get("kind") else ""))
    return "; ".join(parts) + "."


def phase_rows(sec: dict[str, Any]) -> list[tuple[str, float, float]]:
    """(phase, seconds, share of the timeline) by phase, in the order phases first appear."""
    phases = sec.get("phases") or {}
    whole = sum(phases.values()) or 0.0
    return [(k, float(v), float(v) / whole if whole > 0 else 0.0) for k, v in phases.items()]


def _timeline_rows(sec: dict[str, Any]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for r in sec.get("timeline") or []:
        where = f" (pass {r['pass']})" if r.get("pass") else ""
        detail = r.get("detail")
        if detail:  # a recorded row: the TensorRT (or trtstudio) steps behind it
            where += ": " + ", ".join(str(d) for d in (detail if isinstance(detail, list) else [detail])[:3])
        share = r.get("share")
        rows.append((f"{r['phase']}{where}", f"{float(r['start_s']):.3f}", f"{float(r['seconds']):.3f}",
                     "\u2013" if share is None else f"{100 * float(share):.1f} %"))
    return rows


def _layer_rows(sec: dict[str, Any]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for t in sec.get("top_layers") or []:
        chosen = t.get("chosen") or {}
        sp = t.get("speedup_over_runner_up")
        cut = "; ".join(f"{s['setting']}: saves {_secs(s['saving_s'])}" for s in t.get("settings") or [] if s.get("saving_s"))
        rows.append((t["layer"], _secs(t["seconds"]) if t["seconds"] else "not stated", str(t.get("tactics_tried") if t.get("tactics_tried") is not None else "\u2013"),
                     f"{chosen.get('runner', '')} {chosen.get('tactic', '')}".strip() or "\u2013",
                     f"{sp:.2f}x" if sp else "\u2013", cut))
    return rows


def unestimated(sec: dict[str, Any]) -> list[str]:
    """Settings the top layers name whose saving the log cannot give, each once with its reason."""
    out = {s["setting"]: s.get("why") or "" for t in sec.get("top_layers") or [] for s in t.get("settings") or []
           if not s.get("saving_s")}
    return [f"{k}: {v}" for k, v in out.items()]


def _memory_rows(sec: dict[str, Any]) -> list[tuple[str, str]]:
    m = sec.get("memory") or {}
    rows = [("host peak (process)", _bytes(m.get("host_peak_bytes"))),
            ("GPU peak (process)", _bytes(m.get("gpu_peak_bytes")) if m.get("gpu_peak_bytes") is not None
             or not m.get("gpu_source") else f"not measured: {m['gpu_source']}")]
    if m.get("host_source") or m.get("source"):
        rows.append(("measured by", str(m.get("host_source") or m.get("source"))))
    rows += [("TensorRT CPU allocator peak", _bytes(m.get("allocator_cpu_peak_bytes"))),
             ("TensorRT GPU allocator peak", _bytes(m.get("allocator_gpu_peak_bytes")))]
    return rows


RTX_CACHE_NOTE = ("TensorRT-RTX keeps no timing cache (misses count the Timing Runner blocks); it compiles "
                  "kernels when an engine runs and can keep them in a runtime cache file the application names "
                  "(trtstudio build-log --cache FILE shows one)")


def is_rtx(sec: dict[str, Any]) -> bool:
    """Whether the build was TensorRT-RTX's (by the module the build recorded, or the log's prefix)."""
    v = sec.get("versions") or {}
    return v.get("module") == "tensorrt_rtx" or "tensorrt_rtx" in v


def _cache_rows(sec: dict[str, Any]) -> list[tuple[str, str]]:
    c = sec.get("cache") or {}
    if is_rtx(sec):
        return [("timing cache", RTX_CACHE_NOTE), ("Timing Runner blocks", str(c.get("misses", 0)))]
    rows = [("hits (got cached result)", str(c.get("hits", 0))), ("misses (Timing Runner blocks)", str(c.get("misses", 0)))]
    rows += [(k.replace("_", " "), str(v)) for k, v in c.items() if k not in ("hits", "misses") and v is not None]
    return rows


def timeline_svg(sec: dict[str, Any]) -> str:
    """The build's phases as a bar chart (seconds per phase, share beside each bar)."""
    import trtstudio.report.plots as plots

    rows = phase_rows(sec)[:BAR_PHASES]
    return plots.svg_bars([r[0] for r in rows], [r[1] for r in rows], "Build time by phase", unit="s",
                          notes=[f"({100 * r[2]:.1f} %)" for r in rows])


def strip_svg(sec: dict[str, Any], width: int = 900) -> str:
    """The timeline as one strip: each phase a segment at its start, as long as it lasted."""
    import trtstudio.report.plots as plots

    rows = sec.get("timeline") or []
    end = max((float(r["start_s"]) + float(r["seconds"]) for r in rows), default=0.0)
    if end <= 0:
        return ""
    names = list(dict.fromkeys(r["phase"] for r in rows))
    color = {n: plots.COLORS[i % len(plots.COLORS)] for i, n in enumerate(names)}
    height = 34 + 16 * ((len(names) + 3) // 4)
    parts = [f'<rect width="{width}" height="{height}" fill="#ffffff"/>']
    scale = (width - 8) / end
    for r in rows:
        x, w = 4 + float(r["start_s"]) * scale, max(float(r["seconds"]) * scale, 0.5)
        parts.append(f'<rect x="{x:.1f}" y="4" width="{w:.1f}" height="16" fill="{color[r["phase"]]}">'
                     f'<title>{escape(r["phase"])}: {float(r["start_s"]):.3f} s + {float(r["seconds"]):.3f} s</title></rect>')
    parts.append(f'<text x="{width - 4}" y="32" font-size="10" text-anchor="end">{_secs(end)}</text>')
    for k, n in enumerate(names):
        lx, ly = 4 + (k % 4) * (width - 8) / 4, 40 + (k // 4) * 16
        parts.append(f'<rect x="{lx:.0f}" y="{ly - 9}" width="10" height="10" fill="{color[n]}"/>'
                     f'<text x="{lx + 14:.0f}" y="{ly}" font-size="10">{escape(n)}</text>')
    return plots._svg(parts, width, height, "Build timeline")


def build_html(sec: dict[str, Any], images: Any, table: Callable[..., str]) -> str:
    """The Build section's HTML (``images``: report.html.Images; ``table``: report.html.table)."""
    parts = [f"<p>{escape(headline(sec))}</p>"]
    strip = strip_svg(sec)
    if strip:
        parts.append(images.svg(strip, "build-strip.svg"))
    if sec.get("phases"):
        parts.append(images.svg(timeline_svg(sec), "build-phases.svg"))
    if sec.get("timeline"):
        src = ("recorded by trtstudio from TensorRT's progress monitor" if sec.get("log_timeline")
               else "laid end to end from the durations the log states")
        parts.append(f"<h3>Timeline</h3><p class=\"muted\">Phases {src}.</p>"
                     + table(("phase", "start (s)", "seconds", "share"), _timeline_rows(sec), num=(1, 2, 3)))
    if sec.get("top_layers"):
        parts.append(f"<h3>Layers that cost the most build time ({len(sec['top_layers'])} of "
                     f"{sec.get('layers_timed', 0)} timed)</h3>"
                     + table(("layer", "build time", "tactics tried", "chosen", "vs runner-up", "settings that cut it"),
                             _layer_rows(sec), num=(1, 2), cls="layers"))
        more = unestimated(sec)
        if more:
            parts.append("<p>Also cuts build time, by an amount the log cannot give: "
                         + "; ".join(escape(m) for m in more) + ".</p>")
    for g in sec.get("global_settings") or []:
        parts.append(f"<p>{escape(g['setting'])}: saves {_secs(g.get('saving_s'))} ({escape(g.get('why') or '')})</p>")
    parts.append("<h3>Timing cache</h3>" + table(("", ""), _cache_rows(sec)))
    parts.append("<h3>Build memory</h3>" + table(("", ""), _memory_rows(sec), num=(1,)))
    if sec.get("warnings"):
        parts.append("<ul>" + "".join(f"<li>{escape(w)}</li>" for w in sec["warnings"]) + "</ul>")
    if sec.get("source"):
        parts.append(f'<p class="muted">From {escape(os.path.basename(str(sec["source"])))}.</p>')
    return "".join(parts)


def build_markdown(sec: dict[str, Any], md_table: Callable[..., str]) -> list[str]:
    """The Build section's Markdown lines (``md_table``: report.markdown.md_table)."""
    out = ["## Build", "", headline(sec), ""]
    if sec.get("phases"):
        width = 30
        out += ["```"] + [f"{name:<26} {_secs(s):>10} {100 * share:5.1f} %  {'#' * max(1 if s > 0 else 0, round(width * share))}"
                          for name, s, share in phase_rows(sec)] + ["```", ""]
    if sec.get("timeline"):
        out += [md_table(("phase", "start (s)", "seconds", "share"), _timeline_rows(sec)), ""]
    if sec.get("top_layers"):
        out += [f"**Layers that cost the most build time** ({len(sec['top_layers'])} of {sec.get('layers_timed', 0)} timed)", "",
                md_table(("layer", "build time", "tactics tried", "chosen", "vs runner-up", "settings that cut it"),
                         _layer_rows(sec)), ""]
        out += [f"Also cuts build time, by an amount the log cannot give: {m}." for m in unestimated(sec)] + [""]
    out += [md_table(("timing cache", ""), _cache_rows(sec)), "", md_table(("build memory", ""), _memory_rows(sec)), ""]
    out += [f"- {w}" for w in sec.get("warnings") or []]
    return out + ([""] if sec.get("warnings") else [])
