"""Comparisons of two or more reports (FP32 vs FP16 vs INT8, two builds): schema ``trtstudio.comparison/1``.

For each variant: latency percentiles, throughput, speed-ups against the baseline (the first
variant; ``> 1`` means faster), peak memory, engine size and device memory, accuracy, and the
layer mix by precision. The median speed-up carries its 95% interval (``measure.ratio``: the ratio
is variant / baseline latency, the speed-up its inverse, bootstrapped over both runs' samples) and
a ``Verdict``: ``faster``, ``slower``, ``no significant difference`` (the interval holds 1.0) or
``inconclusive`` (no samples to resample: report JSON inputs). Inputs whose latency varies much
(coefficient of variation over ``NOISY_COV_PERCENT``) are warned about in that verdict's text and in
the warnings. For each variant after the first, a layer-level diff against the
baseline: layers are matched through the ONNX nodes they were built from (a layer of A and a layer
of B that share a node fall in the same row, so different fusions line up as one row with several
layers on a side); layers without ONNX nodes match by name. A row is marked ``precision`` when
the precisions differ, ``tactic`` when the tactic/kernel names differ, ``fusion`` when a side has
a different number of layers, ``only_a``/``only_b`` when one side has nothing; it carries both
times and the delta. ``summary`` is the one-page table fit for a slide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from trtstudio.measure.ratio import NO_DIFFERENCE, Ratio, ratio_interval, ratio_of, speedup_of
from trtstudio.measure.verdict import INCONCLUSIVE, Verdict
from trtstudio.profiling.stats import stat
from trtstudio.report.model import Report, _clean, now_iso

SCHEMA = "trtstudio.comparison/1"
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


def _peak_memory(rep: Report) -> tuple[str | None, int | None]:
    for key in _MEM_KEYS:
        v = rep.memory.get(key)
        if isinstance(v, dict) and v.get("peak") is not None:
            return key, int(v["peak"])
    return None, None


def variant_of(rep: Report, name: str) -> dict[str, Any]:
    """One column of the comparison: the figures of one report."""
    run = rep.run or {}
    lat = dict(run.get("latency_ms") or {})
    mem_key, mem_peak = _peak_memory(rep)
    build_mem = (rep.build or {}).get("memory") or {}
    by_prec: dict[str, int] = {}
    for r in rep.layers:
        if r.get("precision"):
            by_prec[str(r["precision"])] = by_prec.get(str(r["precision"]), 0) + 1
    return {
        "name": name, "title": rep.title, "backend": run.get("backend"),
        "latency_ms": {k: lat.get(k) for k in ("count", *PCTS, "std", "cov")},
        "throughput": dict(run.get("throughput") or {}),
        "memory_key": mem_key, "memory_peak_bytes": mem_peak,
        "engine_size_bytes": (rep.engine or {}).get("engine_size_bytes") or build_mem.get("engine_size"),
        "device_memory_bytes": build_mem.get("device_memory"),
        "weights_bytes": build_mem.get("weights"),
        "layers": len(rep.layers), "layers_by_precision": dict(sorted(by_prec.items())),
        "findings": len(rep.findings), "leak": (rep.leak or {}).get("verdict"),
        "accuracy": rep.accuracy, "warnings": list(rep.warnings),
    }


class _Union:
    def __init__(self) -> None:
        self.parent: dict[Any, Any] = {}

    def find(self, x: Any) -> Any:
        p = self.parent.setdefault(x, x)
        while p != self.parent[p]:
            self.parent[p] = self.parent[self.parent[p]]
            p = self.parent[p]
        self.parent[x] = p
        return p

    def union(self, a: Any, b: Any) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _join(values: Sequence[Any]) -> str:
    return ", ".join(dict.fromkeys(str(v) for v in values if v))


def layer_diff(a_rows: list[dict[str, Any]], b_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of matched layers of A and B (see the module docstring), in A's layer order."""
    u = _Union()
    node_owner: dict[str, tuple[str, int]] = {}
    for side, rows in (("a", a_rows), ("b", b_rows)):
        for i, r in enumerate(rows):
            key = (side, i)
            u.find(key)
            for n in r.get("onnx_nodes") or []:
                other = node_owner.get(n)
                if other is None:
                    node_owner[n] = key
                else:
                    u.union(other, key)
    # layers without nodes: match by name
    b_by_name: dict[str, int] = {}
    for i, r in enumerate(b_rows):
        if not r.get("onnx_nodes"):
            b_by_name.setdefault(str(r["name"]), i)
    for i, r in enumerate(a_rows):
        if not r.get("onnx_nodes") and str(r["name"]) in b_by_name:
            u.union(("a", i), ("b", b_by_name[str(r["name"])]))
    groups: dict[Any, dict[str, list[int]]] = {}
    for side, rows in (("a", a_rows), ("b", b_rows)):
        for i in range(len(rows)):
            groups.setdefault(u.find((side, i)), {"a": [], "b": []})[side].append(i)
    out: list[dict[str, Any]] = []
    for g in groups.values():
        ra = [a_rows[i] for i in g["a"]]
        rb = [b_rows[i] for i in g["b"]]
        nodes = list(dict.fromkeys(n for r in ra + rb for n in r.get("onnx_nodes") or []))
        ta = [r["time_ms"] for r in ra if r.get("time_ms") is not None]
        tb = [r["time_ms"] for r in rb if r.get("time_ms") is not None]
        time_a = float(sum(ta)) if ta else None
        time_b = float(sum(tb)) if tb else None
        pa = sorted({str(r.get("precision")) for r in ra if r.get("precision")})
        pb = sorted({str(r.get("precision")) for r in rb if r.get("precision")})
        tac_a = sorted({str(r.get("tactic")) for r in ra if r.get("tactic")})
        tac_b = sorted({str(r.get("tactic")) for r in rb if r.get("tactic")})
        changes = []
        if not ra:
            changes.append("only_b")
        elif not rb:
            changes.append("only_a")
        else:
            if pa != pb:
                changes.append("precision")
            if tac_a != tac_b:
                changes.append("tactic")
            if len(ra) != len(rb):
                changes.append("fusion")
        out.append({
            "onnx_nodes": nodes,
            "a_layers": [r["name"] for r in ra], "b_layers": [r["name"] for r in rb],
            "a_index": g["a"][0] if g["a"] else None, "b_index": g["b"][0] if g["b"] else None,
            "a_types": _join([r.get("type") for r in ra]), "b_types": _join([r.get("type") for r in rb]),
            "a_precision": pa, "b_precision": pb, "a_tactics": tac_a, "b_tactics": tac_b,
            "a_time_ms": time_a, "b_time_ms": time_b,
            "delta_ms": None if time_a is None or time_b is None else time_b - time_a,
            "changes": changes,
        })
    big = 1 << 40
    out.sort(key=lambda r: (r["a_index"] if r["a_index"] is not None else big,
                            r["b_index"] if r["b_index"] is not None else big))
    return out


def _diff_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    counts = {k: sum(1 for r in rows if k in r["changes"]) for k in ("precision", "tactic", "fusion", "only_a", "only_b")}
    matched = sum(1 for r in rows if r["a_layers"] and r["b_layers"])
    return {"rows": len(rows), "matched": matched, "changes": counts,
            "precision_changes": [f"{', '.join(r['onnx_nodes'][:3])}: {'/'.join(r['a_precision'])} -> {'/'.join(r['b_precision'])}"
                                  for r in rows if "precision" in r["changes"]][:50]}


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
    base_samples = _samples(reports[0])
    for i, (rep, v) in enumerate(zip(reports, variants, strict=True)):
        lat = v["latency_ms"]
        v["speedup"] = {k: speedup_of(bl.get(k), lat.get(k)) for k in ("mean", "median", "p99")}
        v["throughput_ratio"] = ratio_of(base["throughput"].get("inferences_per_s"), v["throughput"].get("inferences_per_s"))
        v["engine_size_ratio"] = ratio_of(base["engine_size_bytes"], v["engine_size_bytes"])
        v["speedup_interval"], v["verdict"] = None, None
        if i and lat.get("count") and bl.get("count"):
            verdict, sp = speedup_verdict(base["name"], base_samples, v["name"], _samples(rep),
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
            "precisions": v["layers_by_precision"],
        })
    diffs = []
    for rep, v in zip(reports[1:], variants[1:], strict=True):
        rows = layer_diff(reports[0].layers, rep.layers)
        diffs.append({"a": base["name"], "b": v["name"], "summary": _diff_summary(rows), "rows": rows})
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
    from trtstudio.report import story

    comp.story = story.story(comp)
    comp.charts = {k: v for k, v in (("latency", story.distributions([_samples(r) for r in reports], labels)),
                                     ("time_by_type", story.time_by_type(list(reports), labels))) if v}
    return comp
