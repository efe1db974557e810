"""Comparisons of two or more reports (FP32 vs FP16 vs INT8, two builds): schema ``trtstudio.comparison/2``.

For each variant: latency percentiles, throughput, speed-ups against the baseline (the first
variant; ``> 1`` means faster), peak memory, engine size and device memory, accuracy, the layer
mix by precision, and ``provenance``: the engine's GPU and TensorRT from its own files
(``engine.provenance``; ``not recorded`` where they are silent). A variant without a run whose
engine files hold trtexec's per-inference times (``--exportTimes``) counts those as its run
(``timing`` says which figure they are) and trtexec's throughput as its throughput. The median
speed-up carries its 95% interval (``measure.ratio``: the ratio is variant / baseline latency, the
speed-up its inverse, bootstrapped over both runs' samples) and a ``Verdict``: ``faster``,
``slower``, ``no significant difference`` (the interval holds 1.0) or ``inconclusive`` (no samples
to resample: report JSON inputs). Inputs whose latency varies much (coefficient of variation over
``NOISY_COV_PERCENT``) are warned about in that verdict's text and in the warnings.

For each variant after the first, the layer diff against the baseline is ``trtstudio diff``'s
(:func:`trtstudio.diff.core.diff_sides`, one comparison core): groups aligned by the ONNX nodes the
layers name, then by the structure of the two layer graphs, each with one change label (``same``,
``precision``, ``tactic``, ``format``, ``fused``, ``only_base``, ``only_other``) and the diff's
row fields (``base_layers``, ``other_layers``, ``base_ms``, ``other_ms``, ``delta_ms``,
``base_precision``, ...). Schema 1 had ``a_*``/``b_*`` fields and the labels ``fusion``,
``only_a``, ``only_b``: they are ``fused``, ``only_base``, ``only_other`` now. A report JSON input
(no engine object) is aligned through layers rebuilt from its rows. ``summary`` is the one-page
table fit for a slide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from trtstudio.diff.align import CHANGES
from trtstudio.diff.core import PairDiff, diff_sides
from trtstudio.diff.sides import Side
from trtstudio.engine.model import EngineInfo, Layer, LayerTime, TensorDesc
from trtstudio.measure.ratio import NO_DIFFERENCE, Ratio, ratio_interval, ratio_of, speedup_of
from trtstudio.measure.stats import latency_stats, stat
from trtstudio.measure.verdict import INCONCLUSIVE, Verdict
from trtstudio.report.model import Report, _clean, now_iso

SCHEMA = "trtstudio.comparison/2"
PCTS = ("mean", "median", "p90", "p95", "p99", "p999", "min", "max")
_MEM_KEYS = ("process_gpu_bytes", "gpu_used_bytes", "host_rss_bytes")
NOISY_COV_PERCENT = 10.0  # latency CV above which a comparison's input is called noisy
RATIO_RULE = ("speed-up = baseline median latency / variant median latency (> 1: faster), with its 95% "
              "interval bootstrapped over stretches of both runs (drift within a run widens it); no significant "
              "difference when it holds 1.0")


def _samples(rep: Report) -> np.ndarray:
    return np.zeros(0) if rep.samples is None else np.asarray(rep.samples, dtype=np.float64)


def speedup_verdict(base_name: str, base: np.ndarray, name: str, other: np.ndarray,
                    covs: Sequence[float | None] = ()) -> tuple[Verdict, Ratio]:
    """The verdict on ``name``'s median speed-up over ``base_name`` (latency samples in ms) and the
    speed-up itself (``ratio_interval(base, other).inverse()``: baseline / variant). ``covs``: both
    runs' coefficients of variation (%), named in the text when over ``NOISY_COV_PERCENT``."""
    sp = ratio_interval(base, other, "median").inverse()
    noisy = [c for c in covs if c is not None and c > NOISY_COV_PERCENT]
    noise = (f"; latency varies a lot (CV {', '.join(f'{c:.0f}%' for c in covs if c is not None)}), "
             "so run longer on a quieter machine for a narrower interval") if noisy else ""
    evidence = {"speedup": sp.to_json(), "rule": RATIO_RULE, "cov_percent": list(covs),
                "noisy": bool(noisy), "noisy_cov_percent": NOISY_COV_PERCENT}
    topic = f"speed-up of {name} over {base_name}"
    if not sp.has_interval:
        why = "no latency samples to resample (report JSON inputs keep none; compare sessions)" \
            if sp.n_base < 2 or sp.n_other < 2 else "the samples gave no interval"
        return Verdict(topic, INCONCLUSIVE, f"{name} vs {base_name}: speed-up {sp.describe()}; {why}{noise}", evidence), sp
    sizes = f"{sp.method} over {sp.n_base:,} and {sp.n_other:,} inferences"
    if not sp.significant:
        return Verdict(topic, NO_DIFFERENCE, f"{NO_DIFFERENCE} between {name} and {base_name}: speed-up "
                       f"{sp.describe()} holds 1.0 ({sizes}){noise}", evidence), sp
    word = "faster" if sp.value > 1 else "slower"
    factor = sp if sp.value > 1 else sp.inverse()
    return Verdict(topic, word, f"{name} is {factor.describe()} {word} than {base_name} ({sizes}){noise}", evidence), sp


def speedup_text(row: dict[str, Any]) -> str:
    """A summary row's speed-up for a table: '1.24x (1.10-1.39x)', '1.02x (n.s.: 0.95-1.10x)', or the
    bare figure where there is no interval."""
    sp, low, high = row.get("speedup_median"), row.get("speedup_low"), row.get("speedup_high")
    text = "\u2013" if sp is None else f"{sp:.2f}x"
    if low is None or high is None:
        return text
    mark = "n.s.: " if row.get("verdict") == NO_DIFFERENCE else ""
    return f"{text} ({mark}{low:.2f}-{high:.2f}x)"


def prov_text(prov: dict[str, Any]) -> str:
    """'NVIDIA A100 80GB PCIe (SM 8.0), TensorRT not recorded': an engine's GPU and TensorRT as its files name them."""
    gpu, trt = str(prov.get("gpu") or "not recorded"), str(prov.get("tensorrt") or "not recorded")
    return f"{'GPU not recorded' if gpu == 'not recorded' else gpu}, {'TensorRT not recorded' if trt == 'not recorded' else trt}"


def _peak_memory(rep: Report) -> tuple[str | None, int | None]:
    for key in _MEM_KEYS:
        v = rep.memory.get(key)
        if isinstance(v, dict) and v.get("peak") is not None:
            return key, int(v["peak"])
    return None, None


def variant_of(rep: Report, name: str) -> dict[str, Any]:
    """One column of the comparison: the figures of one report. Without a run, the per-inference
    times in the engine's own files (trtexec) are its latency (``timing`` says which), trtexec's
    throughput its throughput; ``provenance``: the engine's GPU and TensorRT from its files."""
    from trtstudio.report.summary import engine_provenance

    run = rep.run or {}
    lat = dict(run.get("latency_ms") or {})
    throughput = dict(run.get("throughput") or {})
    backend, timing = run.get("backend"), "run" if lat.get("count") else None
    samples, metric = _samples_of(rep)
    if not lat.get("count") and samples.size:
        lat = latency_stats(samples)
        backend, timing = "trtexec", {"gpu_compute": "GPU compute time per inference (trtexec --exportTimes)",
                                      "latency": "latency per inference (trtexec --exportTimes)"}.get(metric, metric)
        qps = (rep.engine or {}).get("latency_ms", {}).get("throughput_qps")
        if qps is not None:
            throughput = {"inferences_per_s": qps, "source": "trtexec (the engine's metadata)"}
    prov = engine_provenance(rep)
    mem_key, mem_peak = _peak_memory(rep)
    build_mem = (rep.build or {}).get("memory") or {}
    by_prec: dict[str, int] = {}
    for r in rep.layers:
        if r.get("precision"):
            by_prec[str(r["precision"])] = by_prec.get(str(r["precision"]), 0) + 1
    return {
        "name": name, "title": rep.title, "backend": backend, "timing": timing,
        "provenance": None if prov is None else {k: prov.get(k) for k in ("gpu", "tensorrt", "cuda")},
        "latency_ms": {k: lat.get(k) for k in ("count", *PCTS, "std", "cov")},
        "throughput": throughput,
        "memory_key": mem_key, "memory_peak_bytes": mem_peak,
        "engine_size_bytes": (rep.engine or {}).get("engine_size_bytes") or build_mem.get("engine_size"),
        "device_memory_bytes": build_mem.get("device_memory"),
        "weights_bytes": build_mem.get("weights"),
        "layers": len(rep.layers), "layers_by_precision": dict(sorted(by_prec.items())),
        "findings": len(rep.findings), "leak": (rep.leak or {}).get("verdict"),
        "accuracy": rep.accuracy, "warnings": list(rep.warnings),
    }


def _samples_of(rep: Report) -> tuple[np.ndarray, str]:
    """(latency samples, what they are): the run's, else the per-inference times in the engine's
    own files (trtexec ``--exportTimes``: GPU compute, else latency), which count as a run."""
    samples = _samples(rep)
    if samples.size or rep.engine_info is None:
        return samples, "run" if samples.size else ""
    from trtstudio.diff.sides import engine_samples

    return engine_samples(rep.engine_info)


def _layers_of(rep: Report) -> list[Layer]:
    """The report's engine layers: its engine object where it was made from one (a session, engine
    files), else layers rebuilt from its layer rows (a report JSON: names, types, precisions,
    tactics, ONNX nodes and times, no tensors, so the alignment goes by names and layer kinds)."""
    if rep.engine_info is not None and rep.engine_info.layers:
        return list(rep.engine_info.layers)
    return _layers_from_rows(rep)


def _layers_from_rows(rep: Report) -> list[Layer]:
    out = []
    for i, r in enumerate(rep.layers):
        p_in = r.get("precision_in") or r.get("precision")
        p_out = r.get("precision_out") or p_in
        t = r.get("time_ms")
        out.append(Layer(int(r["index"]) if isinstance(r.get("index"), int) else i, str(r.get("name")),
                         str(r.get("type") or "Unknown"), None,
                         [TensorDesc(name="", dtype=str(p_in))] if p_in else [],
                         [TensorDesc(name="", dtype=str(p_out))] if p_out else [],
                         str(r["tactic"]) if r.get("tactic") else None,
                         onnx_nodes=[str(n) for n in r.get("onnx_nodes") or []],
                         time=LayerTime(average_ms=float(t)) if t is not None else None))
    return out


def side_of(rep: Report, name: str, rows_only: bool = False) -> Side:
    """A report as one side of :mod:`trtstudio.diff` (its engine, its samples); ``rows_only``: its
    layers rebuilt from its rows even where it has the engine object (beside a report JSON input,
    so that both sides' layers say the same things: names, kinds, precisions, no tensors)."""
    engine = rep.engine_info if rep.engine_info is not None and not rows_only else None
    if engine is None or (not engine.layers and rep.layers):
        engine = EngineInfo(layers=_layers_from_rows(rep) if rows_only else _layers_of(rep))
    samples, metric = _samples_of(rep)
    files = (rep.engine or {}).get("files") or []
    return Side(name, engine, [str(f) for f in files], None, samples, metric, (rep.run or {}).get("backend"))


def _names(layers: list[str], most: int = 2) -> str:
    return " + ".join(layers[:most]) + (f" (+{len(layers) - most})" if len(layers) > most else "")


def _precision_change(g: dict[str, Any]) -> str:
    """'Conv_0 + Relu_1: FP32 -> FP16' (the base's layers; the other's where they are named otherwise)."""
    base, other = g["base_layers"], g["other_layers"]
    where = _names(base) + ("" if other == base else f" / {_names(other)}")
    return f"{where}: {'/'.join(g['base_precision']) or '?'} -> {'/'.join(g['other_precision']) or '?'}"


def _diff_summary(p: PairDiff) -> dict[str, Any]:
    rows = p.groups
    counts = {k: sum(1 for r in rows if r["change"] == k) for k in CHANGES if k != "same"}
    return {"rows": len(rows), "matched": sum(1 for r in rows if r["base_layers"] and r["other_layers"]),
            "changes": counts, "alignment": p.alignment, "totals": p.totals,
            "precision_changes": [_precision_change(r) for r in rows if r["change"] == "precision"][:50]}


def layer_diff(base: Report, other: Report, base_name: str = "a", other_name: str = "b") -> dict[str, Any]:
    """The layer diff of ``other`` against ``base``: :func:`trtstudio.diff.core.diff_sides` (the one
    comparison core ``trtstudio diff`` stands on), its groups as rows (see the module docstring)."""
    rows_only = base.engine_info is None or other.engine_info is None
    p = diff_sides(side_of(base, base_name, rows_only), side_of(other, other_name, rows_only))
    return {"a": base_name, "b": other_name, "summary": _diff_summary(p), "rows": p.groups,
            "unmatched": p.unmatched(), "story": p.story, "build": p.build, "memory": p.memory,
            "build_time": p.build_time}


@dataclass
class Comparison:
    """A comparison document (see the module docstring)."""

    title: str
    generated: str
    baseline: str
    variants: list[dict[str, Any]] = field(default_factory=list)
    summary: list[dict[str, Any]] = field(default_factory=list)
    layer_diffs: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    ratio_rule: str = RATIO_RULE
    story: list[str] = field(default_factory=list)  # report.story: what changed, in sentences, first
    charts: dict[str, Any] = field(default_factory=dict)  # latency distributions, time by layer type
    sweeps: list[dict[str, Any]] = field(default_factory=list)  # sweeps and mixes against the baseline's (report.shapes)

    def to_json(self) -> dict[str, Any]:
        """The comparison as one JSON-ready document."""
        return _clean({"schema": SCHEMA, **{f.name: getattr(self, f.name) for f in fields(self)}})  # type: ignore[no-any-return]


def compare(reports: Sequence[Report], names: Sequence[str] | None = None, title: str | None = None) -> Comparison:
    """Compare ``reports`` (the first is the baseline); ``names`` label them (default: their titles).
    With the cyclic collector paused (``gcpause``): the layer diff of two big engines is 100,000s
    of small objects."""
    from trtstudio.bigdocs.gcpause import gc_paused

    with gc_paused():
        return _compare(reports, names, title)


def _compare(reports: Sequence[Report], names: Sequence[str] | None, title: str | None) -> Comparison:
    if len(reports) < 2:
        raise ValueError("a comparison needs at least two reports")
    labels = list(names) if names else [r.title for r in reports]
    seen: dict[str, int] = {}
    for i, lab in enumerate(labels):  # unique labels
        if lab in seen:
            labels[i] = f"{lab} ({i + 1})"
        seen[lab] = i
    variants = [variant_of(r, n) for r, n in zip(reports, labels, strict=True)]
    base = variants[0]
    bl = base["latency_ms"]
    base_samples = _samples_of(reports[0])[0]
    for i, (rep, v) in enumerate(zip(reports, variants, strict=True)):
        lat = v["latency_ms"]
        v["speedup"] = {k: speedup_of(bl.get(k), lat.get(k)) for k in ("mean", "median", "p99")}
        v["throughput_ratio"] = ratio_of(base["throughput"].get("inferences_per_s"), v["throughput"].get("inferences_per_s"))
        v["engine_size_ratio"] = ratio_of(base["engine_size_bytes"], v["engine_size_bytes"])
        v["speedup_interval"], v["verdict"] = None, None
        if i and lat.get("count") and bl.get("count"):
            verdict, sp = speedup_verdict(base["name"], base_samples, v["name"], _samples_of(rep)[0],
                                          [stat(bl, "cov"), stat(lat, "cov")])
            v["speedup_interval"], v["verdict"] = sp.to_json(), verdict.to_json()
    summary = []
    for v in variants:
        acc = v["accuracy"] or {}
        head = next(((k, val) for k, val in acc.items() if isinstance(val, (int, float)) and not isinstance(val, bool)), None)
        summary.append({
            "name": v["name"], "median_ms": v["latency_ms"].get("median"), "p99_ms": v["latency_ms"].get("p99"),
            "speedup_median": v["speedup"]["median"],
            "speedup_low": (v["speedup_interval"] or {}).get("low"), "speedup_high": (v["speedup_interval"] or {}).get("high"),
            "verdict": (v["verdict"] or {}).get("verdict"), "verdict_text": (v["verdict"] or {}).get("text"),
            "inferences_per_s": v["throughput"].get("inferences_per_s"),
            "engine_size_bytes": v["engine_size_bytes"], "memory_peak_bytes": v["memory_peak_bytes"],
            "accuracy": None if head is None else {"metric": head[0], "value": head[1]},
            "precisions": v["layers_by_precision"], "timing": v["timing"], "provenance": v["provenance"],
        })
    diffs = [layer_diff(reports[0], rep, base["name"], v["name"]) for rep, v in zip(reports[1:], variants[1:], strict=True)]
    warnings = []
    for v in variants:
        cov = stat(v["latency_ms"], "cov")
        if not v["latency_ms"].get("count"):
            warnings.append(f"{v['name']}: no run, so no latency to compare")
        elif cov is not None and cov > NOISY_COV_PERCENT:
            warnings.append(f"{v['name']}: noisy latency (coefficient of variation {cov:.0f}% > {NOISY_COV_PERCENT:.0f}%); "
                            "speed-ups against it carry wide intervals")
    backends = {v["backend"] for v in variants if v["backend"]}
    if len(backends) > 1:
        warnings.append("the variants ran on different backends: " + ", ".join(sorted(backends)))
    comp = Comparison(title=title or "trtstudio comparison: " + " vs ".join(labels), generated=now_iso(),
                      baseline=base["name"], variants=variants, summary=summary, layer_diffs=diffs, warnings=warnings)
    import trtstudio.report.story as story

    comp.story = story.story(comp)
    comp.charts = {k: v for k, v in (("latency", story.distributions([_samples_of(r)[0] for r in reports], labels)),
                                     ("time_by_type", story.time_by_type(list(reports), labels))) if v}
    from trtstudio.report.shapes import compare_sweeps

    comp.sweeps = compare_sweeps(list(reports), labels)
    return comp
