"""HTML for reports: one self-contained file (inline CSS, plots as inline SVG, pictures as data:
URIs, no external URL), with print CSS. The same markup, with images as named resources instead,
feeds the PDF writer (``trtstudio.report.pdf``), so both show the same text.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path
from typing import Any

import trtstudio.report.plots as plots
from trtstudio.fmt import fmt_bytes, fmt_ms, fmt_ms3, fmt_num, fmt_pct, fmt_sig, fmt_value
from trtstudio.graph.params import parameters_text
from trtstudio.report.glance_html import GLANCE_CSS

CSS = """
body { font-family: Helvetica, Arial, sans-serif; font-size: 13px; color: #1b1b1b; margin: 24px auto; max-width: 1100px; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 2px; } h2 { font-size: 17px; border-bottom: 2px solid #1f6fb4; padding-bottom: 2px;
  margin-top: 28px; } h3 { font-size: 14px; }
.sub { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 6px 0 12px 0; }
th, td { border: 1px solid #c8c8c8; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #eef3f9; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.layers { font-size: 11px; } table.layers td { max-width: 360px; overflow-wrap: anywhere; }
tr.error td { background: #fbe3e3; } tr.warning td { background: #fff4d6; } tr.info td { background: #f3f7fb; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; }
.card { border: 1px solid #c8c8c8; border-radius: 6px; padding: 8px 12px; min-width: 140px; }
.card .v { font-size: 18px; font-weight: bold; } .card .k { color: #555; font-size: 11px; }
.verdict-growing { color: #b00020; font-weight: bold; } .verdict-stable { color: #1d7a32; font-weight: bold; }
.verdict-inconclusive { color: #8a6100; font-weight: bold; }
figure { margin: 8px 0; } figure svg, figure img { max-width: 100%; height: auto; }
.graph { max-height: 900px; overflow: auto; border: 1px solid #ddd; }
ul.warnings li { margin-bottom: 3px; }
.muted { color: #777; }
@media print {
  body { margin: 0; max-width: none; font-size: 10px; }
  h2 { break-after: avoid; page-break-after: avoid; }
  section { break-inside: auto; } figure, .cards, tr { break-inside: avoid; page-break-inside: avoid; }
  .graph { max-height: none; overflow: visible; border: none; }
  .pagebreak { break-after: page; page-break-after: always; }
  table.layers { font-size: 8px; }
}
"""


class Images:
    """Embeds pictures: inline (HTML file) or as named resources (for QTextDocument in the PDF writer)."""

    def __init__(self, inline: bool = True) -> None:
        self.inline = inline
        self.resources: dict[str, tuple[str, bytes]] = {}  # name -> (mime, data)

    def svg(self, svg: str, name: str, css: str = "") -> str:
        if self.inline:
            return f'<figure class="{css}">{svg}</figure>'
        self.resources[name] = ("image/svg+xml", plots.standalone(svg).encode("utf-8"))
        return f'<p><img src="{name}"></p>'

    def picture(self, mime: str, data: bytes, name: str) -> str:
        if mime == "image/svg+xml":
            return self.svg(data.decode("utf-8"), name, "graph")
        if self.inline:
            b64 = base64.b64encode(data).decode("ascii")
            return f'<figure class="graph"><img alt="graph" src="data:{mime};base64,{b64}"></figure>'
        self.resources[name] = (mime, data)
        return f'<p><img src="{name}"></p>'


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], num: Iterable[int] = (), cls: str = "",
          row_classes: Sequence[str | None] | None = None) -> str:
    """An HTML table; columns in ``num`` are right-aligned; cells are escaped strings."""
    numset = set(num)
    out = [f'<table class="{cls}" border="1" cellspacing="0" cellpadding="3">']
    if any(headers):
        out.append("<thead><tr>")
        out += [f'<th class="{"num" if i in numset else ""}">{escape(h)}</th>' for i, h in enumerate(headers)]
        out.append("</tr></thead>")
    out.append("<tbody>")
    for k, row in enumerate(rows):
        rc = row_classes[k] if row_classes is not None else None
        out.append(f'<tr class="{rc}">' if rc else "<tr>")
        out += [f'<td class="num">{escape(str(c))}</td>' if i in numset else f"<td>{escape(str(c))}</td>"
                for i, c in enumerate(row)]
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def kv_table(items: Iterable[tuple[str, Any]]) -> str:
    """Two-column table of key / formatted value."""
    return table(("", ""), [(k, fmt_value(k, v)) for k, v in items])


def cards(items: Iterable[tuple[str, str]]) -> str:
    """Key figures: a row of boxes with a big value and a small label (a table, which QTextDocument also draws)."""
    cells = "".join(f'<td class="card"><div class="v">{escape(v)}</div><div class="k">{escape(k)}</div></td>'
                    for k, v in items)
    return f'<table class="cards" cellspacing="6" cellpadding="6"><tr>{cells}</tr></table>'


def section(title: str, body: str, anchor: str, new_page: bool = False) -> str:
    """One titled section (``new_page``: start it on a new printed page, in the browser and the PDF)."""
    style = ' style="page-break-before: always"' if new_page else ""
    return f'<section id="{anchor}"><h2{style}>{escape(title)}</h2>{body}</section>'


def page(title: str, subtitle: str, body: Iterable[str]) -> str:
    """The whole document."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}{GLANCE_CSS}</style></head><body>"
            f"<h1>{escape(title)}</h1><p class=\"sub\">{escape(subtitle)}</p>" + "".join(body) + "</body></html>\n")


# ------------------------------------------------------------------------------------------------
# the report


def summary_cards(rep: Any) -> list[tuple[str, str]]:
    """The key figures shown first (and on the comparison page), three significant digits each
    (full precision in the Latency section and the JSON)."""
    items: list[tuple[str, str]] = []
    run = rep.run or {}
    lat = run.get("latency_ms") or {}
    eng_lat = (rep.engine or {}).get("latency_ms") or {}
    if lat.get("count"):
        items += [("median latency", fmt_ms3(lat.get("median"))), ("p99 latency", fmt_ms3(lat.get("p99"))),
                  ("mean latency", fmt_ms3(lat.get("mean")))]
        tp = run.get("throughput") or {}
        items.append(("throughput", fmt_sig(tp.get("inferences_per_s"), unit="inferences/s")))
    elif isinstance(eng_lat, dict) and eng_lat.get("median") is not None:  # trtexec's, in the engine's files
        items += [("median (trtexec)", fmt_ms3(eng_lat.get("median"))), ("p99 (trtexec)", fmt_ms3(eng_lat.get("p99")))]
        if eng_lat.get("throughput_qps") is not None:
            items.append(("throughput (trtexec)", fmt_sig(eng_lat.get("throughput_qps"), unit="inferences/s")))
    if rep.engine:
        items.append(("engine layers", fmt_num(rep.engine.get("layers"))))
        if rep.engine.get("engine_size_bytes"):
            items.append(("engine size", fmt_bytes(rep.engine["engine_size_bytes"])))
    elif rep.layers:
        items.append(("profiled nodes", fmt_num(len(rep.layers))))
    if rep.model and not items:
        items += [("model nodes", fmt_num(rep.model.get("nodes"))), ("parameters", _parameters(rep.model))]
    if rep.findings:
        sev = {s: sum(1 for f in rep.findings if f["severity"] == s) for s in ("error", "warning", "info")}
        items.append(("findings", " / ".join(f"{n} {s}" for s, n in sev.items() if n)))
    if rep.leak:
        items.append(("memory", str(rep.leak["verdict"])))
    return items


def _environment(env: dict[str, Any]) -> str:
    """The machine that wrote the report (its GPUs and packages), which is not the engine's."""
    rows = [(k, env[k]) for k in ("os", "platform", "python", "cpu", "cpu_count") if env.get(k) is not None]
    if env.get("host_memory_bytes"):
        rows.append(("host memory", fmt_bytes(env["host_memory_bytes"])))
    for g in env.get("gpus") or []:
        rows.append((f"GPU {g.get('index', '')}", f"{g.get('name')} (driver {g.get('driver')}, CUDA {g.get('cuda_driver')}, "
                                                   f"{fmt_bytes(g.get('memory_bytes'))}, SM {g.get('compute_capability')})"))
    if not env.get("gpus"):
        rows.append(("GPU", "none found (NVML not available)"))
    for k, v in (env.get("versions") or {}).items():
        rows.append((k, v if v else "not installed"))
    note = ('<p class="muted">The machine that wrote this report. The engine\'s own GPU and TensorRT, from its '
            'files, are under Build settings (Engine provenance).</p>')
    return note + table(("", ""), [(k, str(v)) for k, v in rows])


def _provenance(rep: Any) -> str:
    """The engine's GPU, TensorRT and CUDA as its own files name them (``not recorded`` where silent)."""
    from trtstudio.report.summary import engine_provenance

    prov = engine_provenance(rep)
    if not prov:
        return ""
    rows = [("GPU", prov.get("gpu")), ("TensorRT", prov.get("tensorrt")), ("CUDA", prov.get("cuda") or "not recorded")]
    return ("<h3>Engine provenance</h3><p class=\"muted\">From the engine's own files, not the machine that wrote "
            "this report.</p>" + table(("", ""), [(k, str(v)) for k, v in rows]))


def _parameters(m: dict[str, Any]) -> str:
    """The count and where the weights are (initializers, Constant nodes, ...)."""
    return parameters_text(m) if m.get("parameters") is not None else fmt_num(None)


def _model(rep: Any, images: Images) -> str:
    m = rep.model or {}
    parts = []
    if m:
        io = "; ".join(f"{t['name']} {t.get('dtype')} {t.get('shape')}" for t in m.get("inputs", []))
        oo = "; ".join(f"{t['name']} {t.get('dtype')} {t.get('shape')}" for t in m.get("outputs", []))
        ops = ", ".join(f"{k} {v}" for k, v in list((m.get("op_counts") or {}).items())[:20])
        parts.append(table(("", ""), [
            ("path", m.get("path")), ("producer", m.get("producer") or ""), ("opsets", fmt_value("opsets", m.get("opsets"))),
            ("nodes", fmt_num(m.get("nodes"))), ("parameters", _parameters(m)),
            ("parameter size", fmt_bytes(m.get("parameter_bytes"))), ("inputs", io), ("outputs", oo), ("ops", ops),
        ]))
    excerpts = getattr(rep, "graph_excerpts", None)
    if excerpts:
        from trtstudio.report.excerpts import excerpts_html

        parts.append(excerpts_html(excerpts, images))
    pic = rep.graph_picture
    if pic and not (excerpts and pic["mime"] == "image/svg+xml"):  # excerpts replace the drawn thumbnail
        data = base64.b64decode(pic["base64"])
        parts.append(images.picture(pic["mime"], data, "graph" + (".svg" if pic["mime"] == "image/svg+xml" else ".png")))
    return "".join(parts)


def _build(rep: Any) -> str:
    b = rep.build or {}
    parts = [_provenance(rep)]
    settings = b.get("settings") or {}
    if settings:
        parts.append(kv_table(sorted(settings.items())))
    if b.get("versions"):
        parts.append("<h3>Versions</h3>" + kv_table(sorted(b["versions"].items())))
    if b.get("memory"):
        parts.append("<h3>Engine memory</h3>" + kv_table(sorted(b["memory"].items())))
    e = rep.engine or {}
    if e:
        rows = [("files", ", ".join(e.get("files") or e.get("sources") or [])), ("formats", ", ".join(e.get("formats") or [])),
                ("layers", e.get("layers")), ("detailed", e.get("detailed")),
                ("layer time per inference ms (sum of layers)", e.get("total_layer_time_ms"))]
        rows += [(f"I/O {t['name']}", _io_text(t)) for t in e.get("io_tensors") or []]
        parts.append("<h3>Engine</h3>" + kv_table(rows))
    return "".join(parts)


def _io_text(t: dict[str, Any]) -> str:
    """An engine I/O tensor's type, shape and format; what the engine files do not say is said so."""
    parts = [str(t["dtype"]) if t.get("dtype") else "", "x".join(str(d) for d in t["shape"]) if t.get("shape") else "",
             str(t.get("format") or "")]
    text = " ".join(p for p in parts if p)
    return text or "\u2013 (the engine files give no type or shape: export with --profilingVerbosity=detailed)"


LAT_KEYS = ("count", "mean", "median", "p90", "p95", "p99", "p999", "min", "max", "std")


def latency_table(lat: dict[str, Any]) -> str:
    """The latency statistics row (the same format in every writer)."""
    heads = ["count", "mean", "median", "p90", "p95", "p99", "p99.9", "min", "max", "std", "CoV"]
    row = [fmt_num(lat.get("count"))] + [fmt_ms(lat.get(k)) for k in LAT_KEYS[1:]] + [fmt_pct(lat.get("cov"), 2)]
    return table(heads, [row], num=range(len(heads)))


def _latency(rep: Any, images: Images) -> str:
    run = rep.run or {}
    lat = run.get("latency_ms") or {}
    parts = [table(("", ""), [("run", run.get("name")), ("backend", run.get("backend")), ("model", run.get("model")),
                              ("shapes", fmt_value("shapes", run.get("shapes") or {})),
                              ("config", fmt_value("config", run.get("config") or {}))])]
    parts.append(latency_table(lat))
    extra = [("jitter (p99 - p50)", fmt_ms(run.get("jitter_ms"))), ("cold first inference", fmt_ms(run.get("cold_ms")))]
    tp = run.get("throughput") or {}
    extra.append(("throughput", f"{fmt_num(tp.get('inferences_per_s'), 1)} inferences/s, "
                                f"{fmt_num(tp.get('samples_per_s'), 1)} samples/s"))
    spike = run.get("longest_spike") or {}
    if spike.get("samples"):
        extra.append(("longest spike", f"{spike['samples']} samples from #{spike['start']}, {fmt_ms(spike['duration_ms'])}"))
    for k, v in (run.get("parts_ms") or {}).items():
        if v is not None:
            extra.append((f"stage {k[:-3]} (mean)", fmt_ms(v)))
    if run.get("error"):
        extra.append(("error", run["error"]))
    parts.append(table(("", ""), extra))
    p = rep.plots
    if "latency_over_time" in p:
        d = p["latency_over_time"]
        parts.append(images.svg(plots.svg_envelope(d, f"Latency over the run ({fmt_num(d['n'])} inferences"
                                                   + (", min/max per column)" if d["n"] > len(d["x"]) else ")"),
                                                   ylabel="latency (ms)", hlines=d.get("hlines")), "latency_over_time.svg"))
    if "latency_histogram" in p:
        parts.append(images.svg(plots.svg_histogram(p["latency_histogram"], "Latency distribution"), "latency_histogram.svg"))
    return "".join(parts)


def _leak_slope(lk: dict[str, Any]) -> str:
    """'+0.4290 (+0.2130 to +0.6450)' from a leak verdict's JSON (older documents: the slope alone)."""
    slope = lk.get("slope_mib_per_1k")
    if slope is None:
        return ""
    ev = lk.get("evidence") or {}
    low, high = ev.get("low_mib_per_1k"), ev.get("high_mib_per_1k")
    return f"{slope:+.4f}" + ("" if low is None or high is None else f" ({low:+.4f} to {high:+.4f})")


def _memory(rep: Any, images: Images) -> str:
    parts = []
    leak = rep.leak or {}
    if leak:
        parts.append(f'<p>Leak verdict: <span class="verdict-{escape(str(leak["verdict"]))}">{escape(str(leak["verdict"]))}'
                     f'</span> <span class="muted">({escape(str(leak.get("reason", "")))})</span></p>')
    rows = []
    for k, v in sorted(rep.memory.items()):
        if isinstance(v, dict):
            lk = v.get("leak") or {}
            rows.append((k, fmt_bytes(v.get("first")), fmt_bytes(v.get("last")), fmt_bytes(v.get("peak")),
                         lk.get("verdict", ""), _leak_slope(lk)))
        else:
            rows.append((k, "", "", fmt_bytes(v), "", ""))
    if rows:
        parts.append(table(("key", "first", "last", "peak", "leak", "MiB / 1k inferences after warm-up (95% interval)"),
                           rows, num=(1, 2, 3, 5)))
    if "memory" in rep.plots:
        parts.append(images.svg(plots.svg_series(rep.plots["memory"], "Memory over the run"), "memory.svg"))
    return "".join(parts)


def _engine_memory(doc: dict[str, Any]) -> str:
    """Where the engine's GPU memory goes, by category, each figure with the line or field it came
    from (``trtstudio memory``); what no file records says so."""
    from trtstudio.engine.memory import short_source

    rows = [(c["name"], fmt_bytes(c["bytes"]) if c["bytes"] is not None else "not recorded",
             short_source(c["source"]) if c["bytes"] is not None else "") for c in doc.get("categories", [])]
    return ('<p class="muted">From the engine\'s own files (trtstudio memory); activations are what the engine '
            "allocates (block assignment), beside TREx's naive sum of every layer's inputs and outputs.</p>"
            + table(("category", "bytes", "from"), rows, num=(1,)))


def _slowest(rep: Any, images: Images) -> str:
    top = rep.top_layers
    rows = [(r["index"], r["name"], r["type"], r["precision"] or "", fmt_ms(r["time_ms"]), fmt_pct(r["percent"]),
             ", ".join(r["findings"])) for r in top]
    svg = plots.svg_bars([r["name"] for r in top], [r["time_ms"] for r in top], f"Top {len(top)} layers by time")
    nt = getattr(rep, "node_times", None)
    note = (f'<p class="muted">Per-node time from the {escape(str(nt["source"]))}: {nt["nodes_timed"]:,} ONNX nodes '
            "timed, each with the time of the layer or profile row it ran in (the window's Colour by Time (ms), "
            "EnginePlan.node_times()).</p>") if nt else ""
    return note + table(("#", "layer", "type", "precision", "time", "share", "findings"), rows, num=(0, 4, 5)) + images.svg(svg, "top_layers.svg")


def _layer_charts(rep: Any, images: Images) -> str:
    """Every layer's time in layer order, memory per layer, convolution work (the Python API's
    plot_layers, plot_memory and plot_macs)."""
    parts = []
    lt = rep.plots.get("layer_times")
    if lt:
        parts.append(images.svg(plots.svg_bars(lt["names"], lt["ms"], f"Time per layer, all {len(lt['ms']):,} in layer "
                                               "order (ms)", max_label=40), "layer_times.svg"))
    mem = rep.plots.get("layer_memory")
    if mem:
        parts.append(images.svg(plots.svg_grouped_bars([r["layer"] for r in mem],
                                                       {"weights": [r["weights"] / 2**20 for r in mem],
                                                        "activations": [r["activations"] / 2**20 for r in mem]},
                                                       "Memory per layer, the largest (MiB)", unit="MiB"),
                                "layer_memory.svg"))
    macs = rep.plots.get("conv_macs")
    if macs:
        notes = [f"{r['arithmetic_intensity']:.0f} FLOP/B" if r["arithmetic_intensity"] else "" for r in macs]
        parts.append(images.svg(plots.svg_bars([r["layer"] for r in macs], [r["macs"] / 1e9 for r in macs],
                                               "Convolution work, GMAC per inference (arithmetic intensity)",
                                               unit="GMAC", notes=notes), "conv_macs.svg"))
    return "".join(parts)


def _groups(rep: Any, images: Images) -> str:
    parts = []
    for title, data, name in (("By layer type", rep.time_by_type, "by_type.svg"),
                              ("By precision", rep.time_by_precision, "by_precision.svg")):
        if not data:
            continue
        rows = [(d["key"], d["layers"], fmt_ms(d["time_ms"]), fmt_pct(d["percent"])) for d in data]
        parts.append(f"<h3>{title}</h3>" + table(("", "layers", "time", "share"), rows, num=(1, 2, 3)))
        top = data[:12]
        parts.append(images.svg(plots.svg_bars([d["key"] for d in top], [d["time_ms"] for d in top], title + " (time)"), name))
    return "".join(parts)


def _first(items: Sequence[Any], max_rows: int | None, what: str, where: str) -> tuple[Sequence[Any], str]:
    """``items`` cut to ``max_rows`` (None: all), and the line under the table that says so and
    ``where`` they all are."""
    if max_rows is None or len(items) <= max_rows:
        return items, ""
    return items[:max_rows], f'<p class="muted">The first {max_rows:,} of {len(items):,} {what}: {where} list them all.</p>'


def _findings(rep: Any, max_rows: int | None = None) -> str:
    shown, more = _first(rep.findings, max_rows, "findings", "the HTML and JSON reports")
    rows = [(f["severity"], f["kind"], f.get("layer") or "(engine)", f["message"], f.get("hint") or "") for f in shown]
    return table(("severity", "kind", "layer", "message", "hint"), rows, row_classes=[f["severity"] for f in shown]) + more


def _runs(rep: Any) -> str:
    rows = [(r["name"], r.get("backend") or "\u2013", r.get("where") or "\u2013", fmt_num(r.get("samples")),
             fmt_ms(r.get("median_ms")), fmt_ms(r.get("p99_ms")), fmt_num(r.get("throughput"), 1)) for r in rep.runs]
    return ('<p class="muted">The first run is the one the sections above describe.</p>'
            + table(("run", "backend", "where", "inferences", "median", "p99", "inferences/s"), rows, num=(3, 4, 5, 6)))


def _layers(rep: Any, max_rows: int | None = None) -> str:
    shown, more = _first(rep.layers, max_rows, "layers", "the HTML, CSV and JSON reports")
    dash = "\u2013"  # unknown, never "None": the engine files did not say (names-only exports have no tactic)
    rows = [(r["index"], r["name"], r["type"] or dash, r["precision"] or dash, r["tactic"] or r.get("provider") or dash,
             fmt_ms(r["time_ms"]), fmt_pct(r["percent"]), ", ".join(r["onnx_nodes"]), ", ".join(r["findings"]),
             " ".join(r["hints"])) for r in shown]
    return table(("#", "layer", "type", "precision", "tactic / provider", "time", "share", "ONNX nodes", "findings", "hints"),
                 rows, num=(0, 5, 6), cls="layers", row_classes=[r["severity"] for r in shown]) + more


def accuracy_rows(acc: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Flattened accuracy results (nested dicts become ``a.b`` keys)."""
    out: list[tuple[str, str]] = []
    for k, v in acc.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out += accuracy_rows(v, key + ".")
        else:
            out.append((key, fmt_num(v, 6) if isinstance(v, float) else fmt_value(key, v)))
    return out


def report_body(rep: Any, images: Images, max_rows: int | None = None) -> list[str]:
    """The sections of a report, in order; empty sections are left out. ``max_rows``: the most rows
    the layer and finding tables show (None: all)."""
    from trtstudio.report.glance_html import glance_html
    from trtstudio.report.summary import at_a_glance

    glance = at_a_glance(rep)  # from the report's own sections, never from a stored copy
    body = [section("At a glance", glance_html(glance, cards(summary_cards(rep))), "summary")]
    body.append(section("Environment (the machine that wrote this report)", _environment(rep.environment),
                        "environment"))
    if rep.model or rep.graph_picture:
        body.append(section("Model", _model(rep, images), "model"))
    if rep.build or rep.engine:
        body.append(section("Build settings", _build(rep), "build"))
    if getattr(rep, "build_timeline", None):
        from trtstudio.report.build_section import build_html

        body.append(section("Build: where the build spent its time", build_html(rep.build_timeline, images, table),
                            "build-timeline"))
    if rep.run:
        body.append(section("Latency", _latency(rep, images), "latency"))
        body.append(section("Memory", _memory(rep, images), "memory"))
    if getattr(rep, "engine_memory", None):
        body.append(section("Engine memory", _engine_memory(rep.engine_memory), "engine-memory"))
    if rep.top_layers:
        body.append(section("Slowest layers", _slowest(rep, images), "slowest"))
        body.append(section("Time by layer type and precision", _groups(rep, images), "groups"))
    charts = _layer_charts(rep, images)
    if charts:
        body.append(section("Layer charts: time, memory, convolution work", charts, "layer-charts"))
    if getattr(rep, "precision_explain", None):
        from trtstudio.report.precision_sections import explain_html

        body.append(section("INT8: why it is not faster", explain_html(rep.precision_explain, table), "int8"))
    if rep.findings:
        body.append(section("Findings", _findings(rep, max_rows), "findings"))
    if rep.layers:
        body.append(section("Layers", _layers(rep, max_rows), "layers", new_page=True))
    if len(getattr(rep, "runs", None) or []) > 1:
        body.append(section("Runs", _runs(rep), "runs"))
    if getattr(rep, "sweeps", None):
        from trtstudio.report.shapes import shapes_html

        body.append(section("Shapes: sweeps and mixes", shapes_html(rep.sweeps, images, table), "shapes"))
    if rep.accuracy:
        body.append(section("Accuracy", table(("metric", "value"), accuracy_rows(rep.accuracy), num=(1,)), "accuracy"))
    if getattr(rep, "divergence", None):
        from trtstudio.report.precision_sections import divergence_html

        body.append(section("Where accuracy is lost", divergence_html(rep.divergence, images, table), "divergence"))
    warn = "".join(f"<li>{escape(w)}</li>" for w in rep.warnings) or "<li>none</li>"
    body.append(section("Warnings", f'<ul class="warnings">{warn}</ul>', "warnings"))
    return body


def render_report(rep: Any, inline: bool = True, max_rows: int | None = None) -> tuple[str, dict[str, tuple[str, bytes]]]:
    """(HTML text, image resources) of a report; resources are empty when ``inline``; ``max_rows``
    as :func:`report_body` takes it."""
    images = Images(inline)
    body = report_body(rep, images, max_rows)
    return page(rep.title, f"generated {rep.generated} by trtstudio", body), images.resources


def write_html(rep: Any, path: Path) -> list[Path]:
    """Write the self-contained HTML file."""
    from trtstudio.fileio import atomic_write

    text, _ = render_report(rep, inline=True)
    return [atomic_write(path, lambda fh: fh.write(text))]


# ------------------------------------------------------------------------------------------------
# comparisons


def _per_s(v: float | None) -> str:
    text = fmt_sig(v)
    return text if text == "\u2013" else f"{text}/s"


def _fmt_speed(v: float | None) -> str:
    from trtstudio.fmt import fmt_speedup

    return fmt_speedup(v)


def _comparison_summary(comp: Any, images: Images) -> str:
    from trtstudio.report.compare import prov_text, speedup_text

    rows = []
    for s in comp.summary:
        acc = s.get("accuracy") or {}
        prov = s.get("provenance") or {}
        rows.append((s["name"], fmt_ms3(s["median_ms"]), fmt_ms3(s["p99_ms"]), speedup_text(s),
                     _per_s(s["inferences_per_s"]),
                     prov_text(prov) if prov else "\u2013",
                     fmt_bytes(s["engine_size_bytes"]),
                     fmt_bytes(s["memory_peak_bytes"]),
                     f"{acc['metric']} {fmt_num(acc['value'], 6) if isinstance(acc.get('value'), float) else acc.get('value')}" if acc else "\u2013",
                     ", ".join(f"{k} {n}" for k, n in (s.get("precisions") or {}).items())))
    rule = getattr(comp, "ratio_rule", "speed-up = baseline median / variant median (> 1 is faster)")
    story = getattr(comp, "story", None) or []
    charts = getattr(comp, "charts", None) or {}
    verdicts = [f"<li>{escape(s['verdict_text'])}</li>" for s in comp.summary if s.get("verdict_text")]
    parts = [f'<p class="headline" style="font-size:16px">{escape(" ".join(story))}</p>' if story else "",
             f"<p>Baseline: <b>{escape(comp.baseline)}</b>; {escape(rule)}.</p>",
             f'<ul class="verdicts">{"".join(verdicts)}</ul>' if verdicts else "",
             table(("variant", "median", "p99", "speed-up (95% interval)", "throughput",
                    "engine GPU, TensorRT (its files)", "engine size", "peak memory",
                    "accuracy", "layers by precision"), rows, num=(1, 2, 3, 4, 6, 7))]
    med = [(s["name"], s["median_ms"]) for s in comp.summary if s["median_ms"] is not None]
    if med:
        notes = [speedup_text(s) for s in comp.summary if s["median_ms"] is not None]
        parts.append(images.svg(plots.svg_bars([m[0] for m in med], [m[1] for m in med], "Median latency", notes=notes),
                                "compare_median.svg"))
    if charts.get("latency"):
        parts.append(images.svg(plots.svg_distributions(charts["latency"]), "compare_distributions.svg"))
    if charts.get("time_by_type"):
        t = charts["time_by_type"]
        parts.append(images.svg(plots.svg_grouped_bars(t["types"], t["series"], "Time by layer type"),
                                "compare_time_by_type.svg"))
    for d in comp.layer_diffs:
        c = d["summary"]["changes"]
        if not d["rows"]:
            parts.append(f"<p>{escape(d['b'])} vs {escape(d['a'])}: {_NO_LAYERS}</p>")
            continue
        conv = (d["summary"].get("alignment") or {}).get("compute_layers") or {}
        aligned = (f" ({conv['base_aligned']} of {conv['base']} convolutions/GEMMs of {escape(d['a'])} aligned)"
                   if conv.get("base") else "")
        parts.append(f"<p>{escape(d['b'])} vs {escape(d['a'])}: {d['summary']['matched']} aligned layer groups{aligned}, "
                     f"{c['precision']} precision changes, {c['tactic']} tactic changes, {c['fused']} fused differently, "
                     f"{c['format']} format changes, {c['only_base']} only in {escape(d['a'])}, "
                     f"{c['only_other']} only in {escape(d['b'])}.</p>")
    return "".join(parts)


_NO_LAYERS = "no layers to compare: neither input has engine layers or a per-layer profile."


def _comparison_details(comp: Any) -> str:
    heads = ["variant", *("p99.9" if k == "p999" else k for k in ("count", "mean", "median", "p90", "p95", "p99", "p999", "min", "max")),
             "CoV", "speed-up mean", "speed-up p99"]
    rows = []
    for v in comp.variants:
        lat = v["latency_ms"]
        rows.append([v["name"], fmt_num(lat.get("count"))] + [fmt_ms(lat.get(k)) for k in ("mean", "median", "p90", "p95", "p99", "p999", "min", "max")]
                    + [fmt_pct(lat.get("cov"), 2), _fmt_speed(v["speedup"]["mean"]), _fmt_speed(v["speedup"]["p99"])])
    lat_t = table(heads, rows, num=range(1, len(heads)))
    mem_rows = [(v["name"], fmt_bytes(v["engine_size_bytes"]), _fmt_speed(v["engine_size_ratio"]),
                 fmt_bytes(v["device_memory_bytes"]), fmt_bytes(v["weights_bytes"]),
                 fmt_bytes(v["memory_peak_bytes"]) + (f" ({v['memory_key']})" if v["memory_key"] else ""), v["leak"] or "\u2013")
                for v in comp.variants]
    mem_t = table(("variant", "engine size", "vs baseline", "device memory", "weights", "peak memory", "leak"), mem_rows,
                  num=(1, 2, 3, 4))
    return lat_t + "<h3>Memory and size</h3>" + mem_t


def _comparison_accuracy(comp: Any) -> str:
    keys: list[str] = []
    flat = []
    for v in comp.variants:
        d = dict(accuracy_rows(v["accuracy"] or {}))
        flat.append(d)
        keys += [k for k in d if k not in keys]
    if not keys:
        return ""
    rows = [[k] + [f.get(k, "\u2013") for f in flat] for k in keys]
    return table(["metric"] + [v["name"] for v in comp.variants], rows, num=range(1, len(comp.variants) + 1))


def _layer_diff_table(d: dict[str, Any], changed_only: bool, max_rows: int | None = None) -> str:
    rows, classes = [], []
    chosen = [r for r in d["rows"] if r["change"] != "same" or not changed_only]
    shown, more = _first(chosen, max_rows, "rows", "the HTML and JSON comparisons")
    for r in shown:
        rows.append((", ".join(r["onnx_nodes"][:4]) + (" ..." if len(r["onnx_nodes"]) > 4 else ""),
                     "; ".join(r["base_layers"]), "/".join(r["base_precision"]), fmt_ms(r["base_ms"]),
                     "; ".join(r["other_layers"]), "/".join(r["other_precision"]), fmt_ms(r["other_ms"]),
                     fmt_ms(r["delta_ms"]), r["change"] + (f": {r['reason']}" if r.get("reason") else "")))
        classes.append("warning" if r["change"] == "precision" else ("info" if r["change"] != "same" else None))
    return table(("ONNX nodes", f"{d['a']} layers", "precision", "time", f"{d['b']} layers", "precision", "time", "delta",
                  "change"), rows, num=(3, 6, 7), cls="layers", row_classes=classes) + more


def _memory_table(d: dict[str, Any]) -> str:
    """A layer diff's memory by category side by side (``engine.memory``), where the files record any."""
    mem = d.get("memory") or {}
    if not mem:
        return ""
    rows = [(k, fmt_bytes(v.get("base")), fmt_bytes(v.get("other")),
             "" if v.get("change") is None else ("+" if v["change"] > 0 else "") + fmt_bytes(v["change"]))
            for k, v in mem.items()]
    return "<h3>Memory by category</h3>" + table(["category", d["a"], d["b"], "change"], rows, (1, 2, 3))


def render_comparison(comp: Any, inline: bool = True,
                      max_rows: int | None = None) -> tuple[str, dict[str, tuple[str, bytes]]]:
    """(HTML text, image resources) of a comparison: one-page summary first, then details;
    ``max_rows``: the most rows each layer-diff table shows (None: all)."""
    images = Images(inline)
    body = [section("Summary", _comparison_summary(comp, images), "summary"),
            section("Latency", _comparison_details(comp), "latency", new_page=True)]
    acc = _comparison_accuracy(comp)
    body.append(section("Accuracy", acc or "<p>No accuracy results in these inputs.</p>", "accuracy"))
    for i, d in enumerate(comp.layer_diffs):
        changed = sum(1 for r in d["rows"] if r["change"] != "same")
        if not d["rows"]:
            text = f"<p>{_NO_LAYERS.capitalize()}</p>"
        elif not changed:
            text = f"<p>No changes in {len(d['rows'])} matched rows.</p>" + _layer_diff_table(d, False, max_rows)
        else:
            text = f"<h3>Changed ({changed} of {len(d['rows'])} rows)</h3>" + _layer_diff_table(d, True, max_rows)
            if changed < len(d["rows"]):
                text += "<h3>All layers</h3>" + _layer_diff_table(d, False, max_rows)
        text += _memory_table(d)
        body.append(section(f"Layer diff: {d['b']} vs {d['a']}", text, f"diff-{i}"))
    if getattr(comp, "sweeps", None):
        from trtstudio.report.shapes import comparison_html

        body.append(section("Sweeps and shape mixes", comparison_html(comp.sweeps, table), "sweeps"))
    warn = "".join(f"<li>{escape(w)}</li>" for w in comp.warnings) or "<li>none</li>"
    body.append(section("Warnings", f'<ul class="warnings">{warn}</ul>', "warnings"))
    return page(comp.title, f"generated {comp.generated} by trtstudio", body), images.resources
