"""The report's Shapes section: sweeps (latency and throughput against the swept size, the knee,
the budget's answer) and shape mixes (per shape and weighted), with the recommended optimization
profiles as build and trtexec flags.

A session keeps each sweep or mix document as ``profiling.sweep`` / ``profiling.shape_mix`` made it
(``Session.sweeps``); the report copies them (``Report.sweeps``) and draws them here. Plain data in,
HTML (and text lines for Markdown) out; no Qt.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

import trtstudio.report.plots as plots


def _f(v: Any, nd: int = 3) -> str:
    return "-" if v is None else f"{float(v):.{nd}f}"


def is_mix(doc: dict[str, Any]) -> bool:
    return str(doc.get("schema", "")).startswith("trtstudio.mix/")


def title_of(doc: dict[str, Any]) -> str:
    """'Batch sweep of model.onnx (ort)' and the like."""
    from pathlib import Path

    name = Path(str(doc.get("model") or "")).name
    if is_mix(doc):
        return f"Shape mix of {name} ({doc.get('backend')}): {doc['mix']['requests']} requests"
    what = "Batch sweep" if doc.get("axis") == "batch" else f"Shape sweep of {doc.get('axis')}"
    return f"{what}: {name} ({doc.get('backend')})"


def sweep_plots(doc: dict[str, Any]) -> dict[str, Any]:
    """Plot data (``plots.series``) of latency and throughput against the swept size."""
    import numpy as np

    rows = [r for r in doc.get("sweep", []) if r.get("median_ms") is not None]
    if not rows:
        return {}
    x = np.asarray([float(r["size"]) for r in rows])
    lat = plots.series(x, {"median": np.asarray([r["median_ms"] for r in rows]),
                           "p99": np.asarray([r["p99_ms"] for r in rows])})
    tp = plots.series(x, {"samples/s": np.asarray([r["samples_per_s"] for r in rows])})
    return {"latency": lat, "throughput": tp}


Table = Callable[..., str]  # report.html.table, passed in (report.html imports this module)


def _profiles_html(doc: dict[str, Any] | None, table: Table) -> str:
    if not doc:
        return ""
    option = doc["one"] if doc["recommended"] == 1 else doc["two"]
    rows = []
    for k, p in enumerate(option["profiles"]):
        for name, v in p["inputs"].items():
            rows.append((str(k), name, "x".join(map(str, v["min"])), "x".join(map(str, v["opt"])),
                         "x".join(map(str, v["max"]))))
    flags = "".join(f"<pre style=\"white-space: pre-wrap\">{escape(p['build_flags'])}\ntrtexec {escape(p['trtexec'])}</pre>" for p in option["profiles"])
    return (f"<p><b>Optimization profiles:</b> {escape(doc['text'])}</p>"
            + table(("profile", "input", "min", "opt", "max"), rows) + flags)


def section_html(doc: dict[str, Any], images: Any, index: int, table: Table) -> str:
    """One sweep or mix as HTML (charts through ``images``, the report's picture embedder; tables by ``table``)."""
    out = [f"<h3>{escape(title_of(doc))}</h3>"]
    if is_mix(doc):
        mix = doc["mix"]
        rows = [(", ".join(f"{n} {s}" for n, s in r["shapes"].items()), r["count"], _f(r["median_ms"]),
                 _f(r["p99_ms"]), _f(r["replan_ms"], 2), _f(r["first_ms"], 2)) for r in mix["shapes"]]
        out.append(f"<p>Weighted by count: median <b>{_f(mix['median_ms'])} ms</b>, p99 <b>{_f(mix['p99_ms'])} ms</b> "
                   f"over {mix['warm']} warm requests (seed {doc.get('seed')}); input buffers allocated "
                   f"{doc['buffers']['allocations']} times for {len(mix['shapes'])} shapes.</p>")
        if doc.get("padded"):
            out.append(f"<p>{escape(doc['padded']['text'])}</p>")
        out.append(table(("shape", "count", "median ms", "p99 ms", "re-plan ms", "first ms"), rows, num=(1, 2, 3, 4, 5)))
    else:
        data = sweep_plots(doc)
        xlabel = "batch" if doc.get("axis") == "batch" else f"elements of {doc.get('axis')}"
        if data:
            out.append(images.svg(plots.svg_series(data["latency"], "Latency against the swept size", xlabel, "ms"),
                                  f"sweep{index}-latency.svg"))
            out.append(images.svg(plots.svg_series(data["throughput"], "Throughput against the swept size", xlabel,
                                                   "samples/s"), f"sweep{index}-throughput.svg"))
        for key in ("knee", "best_under_budget"):
            if doc.get(key):
                out.append(f"<p><b>{'Knee' if key == 'knee' else 'Latency budget'}:</b> {escape(doc[key]['text'])}</p>")
        steps: list[tuple[Any, ...]] = []
        for r in doc.get("sweep", []):
            iv = r.get("median_interval_ms")
            steps.append((r["label"], _f(r["median_ms"]), f"{_f(iv[0])}-{_f(iv[1])}" if iv else "-", _f(r["p99_ms"]),
                         _f(r["throughput"], 1), _f(r["samples_per_s"], 1),
                         "-" if not r.get("peak_memory_bytes") else f"{r['peak_memory_bytes'] / 2**20:.0f} MiB",
                         r.get("error") or ""))
        out.append(table(("step", "median ms", "95% interval", "p99 ms", "inferences/s", "samples/s", "peak memory",
                          "error"), steps, num=(1, 3, 4, 5, 6)))
    out.append(_profiles_html(doc.get("profiles"), table))
    return "".join(out)


def shapes_html(docs: list[dict[str, Any]], images: Any, table: Table) -> str:
    """The whole Shapes section."""
    return "".join(section_html(d, images, i, table) for i, d in enumerate(docs))


def markdown_lines(docs: list[dict[str, Any]]) -> list[str]:
    """The Shapes section as Markdown lines."""
    out: list[str] = []
    for doc in docs:
        out += [f"### {title_of(doc)}", ""]
        if is_mix(doc):
            mix = doc["mix"]
            out += [f"Weighted median {_f(mix['median_ms'])} ms, p99 {_f(mix['p99_ms'])} ms.", "",
                    "| shape | count | median ms | p99 ms |", "|---|---:|---:|---:|"]
            out += [f"| {', '.join(f'{n} {s}' for n, s in r['shapes'].items())} | {r['count']} | {_f(r['median_ms'])} "
                    f"| {_f(r['p99_ms'])} |" for r in mix["shapes"]]
        else:
            out += ["| step | median ms | p99 ms | samples/s |", "|---|---:|---:|---:|"]
            out += [f"| {r['label']} | {_f(r['median_ms'])} | {_f(r['p99_ms'])} | {_f(r['samples_per_s'], 1)} |"
                    for r in doc.get("sweep", [])]
            out += [""] + [f"{k}: {doc[k]['text']}" for k in ("knee", "best_under_budget") if doc.get(k)]
        prof = doc.get("profiles")
        if prof:
            option = prof["one"] if prof["recommended"] == 1 else prof["two"]
            out += ["", f"Optimization profiles: {prof['text']}", ""]
            out += [f"    {p['build_flags']}\n    trtexec {p['trtexec']}" for p in option["profiles"]]
        out.append("")
    return out


def _ratio(base: Any, other: Any) -> float | None:
    return float(other) / float(base) if base and other is not None else None


def compare_sweeps(reports: list[Any], labels: list[str]) -> list[dict[str, Any]]:
    """Each variant's sweeps and mixes against the baseline's of the same kind (same swept axis, or
    both mixes): sweep steps matched by label, with latency speed-ups (baseline / variant medians)
    and samples/s ratios (variant / baseline), and the knees; mixes by their weighted figures. The
    documents keep each step's figures, not its samples: these ratios carry no interval."""
    base_docs = list(getattr(reports[0], "sweeps", None) or [])
    out: list[dict[str, Any]] = []
    for rep, label in zip(reports[1:], labels[1:], strict=True):
        for doc in getattr(rep, "sweeps", None) or []:
            base = next((b for b in base_docs if is_mix(b) == is_mix(doc) and b.get("axis") == doc.get("axis")), None)
            if base is None:
                continue
            entry: dict[str, Any] = {"a": labels[0], "b": label, "kind": "mix" if is_mix(doc) else "sweep",
                                     "axis": doc.get("axis")}
            if is_mix(doc):
                entry["rows"] = [{"label": k, "a_ms": base["mix"].get(k), "b_ms": doc["mix"].get(k),
                                  "speedup": _ratio(doc["mix"].get(k), base["mix"].get(k))}
                                 for k in ("median_ms", "p99_ms")]
            else:
                theirs = {r["label"]: r for r in doc.get("sweep", [])}
                entry["rows"] = [{"label": r["label"], "a_ms": r.get("median_ms"), "b_ms": theirs[r["label"]].get("median_ms"),
                                  "speedup": _ratio(theirs[r["label"]].get("median_ms"), r.get("median_ms")),
                                  "a_samples_per_s": r.get("samples_per_s"),
                                  "b_samples_per_s": theirs[r["label"]].get("samples_per_s"),
                                  "throughput_ratio": _ratio(r.get("samples_per_s"), theirs[r["label"]].get("samples_per_s"))}
                                 for r in base.get("sweep", []) if r["label"] in theirs]
                entry["knees"] = [(base.get("knee") or {}).get("label"), (doc.get("knee") or {}).get("label")]
            out.append(entry)
    return out


def comparison_html(entries: list[dict[str, Any]], table: Table) -> str:
    """The comparison's Sweeps section."""
    out = []
    for e in entries:
        out.append(f"<h3>{escape(e['b'])} against {escape(e['a'])}: "
                   f"{'shape mix' if e['kind'] == 'mix' else 'sweep of ' + escape(str(e['axis']))}</h3>")
        rows = [(r["label"], _f(r["a_ms"]), _f(r["b_ms"]), "-" if r["speedup"] is None else f"{r['speedup']:.2f}x",
                 "-" if r.get("throughput_ratio") is None else f"{r['throughput_ratio']:.2f}x") for r in e["rows"]]
        out.append(table(("step" if e["kind"] == "sweep" else "figure", f"{e['a']} median ms", f"{e['b']} median ms",
                          "speed-up", "samples/s ratio"), rows, num=(1, 2, 3, 4)))
        if e.get("knees"):
            out.append(f"<p>Knee: {escape(str(e['knees'][0]))} ({escape(e['a'])}), "
                       f"{escape(str(e['knees'][1]))} ({escape(e['b'])}). Figures per step, without intervals "
                       "(sweeps keep each step's figures, not its samples).</p>")
    return "".join(out)
