"""The before/after story of a comparison: what changed, in sentences, before any table.

"fp16 cuts the median 42 % (3.1 -> 1.8 ms) at cosine 0.99999; int8 fails the accuracy budget
(cosine 0.80 < 0.98)". Each sentence rests on the comparison's own figures: the median speed-up's
verdict and interval (``report.compare.speedup_verdict``: a difference whose interval holds 1.0 is
said as no significant difference), the accuracy each input carries, the layers whose precision
changed. Also the data of the two charts that follow it: the latency distributions on common bins
and the time by layer type side by side. Pure data, no rendering.
"""

from __future__ import annotations

from typing import Any

import numpy as np

ACCURACY_KEYS = ("cosine", "cosine_min", "top1_agreement", "max_abs_error")
TOP_TYPES = 8


def _accuracy(acc: Any) -> tuple[str | None, float | None, bool | None]:
    """(metric, value, passed) of an input's accuracy dict (a run's, or a sweep variant's)."""
    if not isinstance(acc, dict):
        return None, None, None
    nested = acc.get("accuracy")
    inner: dict[str, Any] = nested if isinstance(nested, dict) else acc
    passed = acc.get("passed") if isinstance(acc.get("passed"), bool) else None
    for key in ACCURACY_KEYS:
        v = inner.get(key)
        if isinstance(v, dict):
            v = v.get("min", v.get("mean"))
        if isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v):
            return key, float(v), passed
    return None, None, passed


def _latency_clause(v: dict[str, Any], base: dict[str, Any]) -> str:
    a, b = base["latency_ms"].get("median"), v["latency_ms"].get("median")
    if a is None or b is None:
        return "has no run to time"
    figures = f"({a:.3g} -> {b:.3g} ms)"
    verdict = (v.get("verdict") or {}).get("verdict")
    change = 1.0 - b / a if a else 0.0
    if verdict == "faster":
        return f"cuts the median {change * 100:.0f} % {figures}"
    if verdict == "slower":
        return f"raises the median {-change * 100:.0f} % {figures}"
    if verdict == "no significant difference":
        return f"makes no significant difference to the median {figures}"
    return f"moves the median {-change * 100:+.0f} % {figures}, with no samples to judge it"


def story(comp: Any) -> list[str]:
    """One sentence per variant (the baseline is the first input), then one on precision changes."""
    base = comp.variants[0]
    out = []
    for v in comp.variants[1:]:
        clause = _latency_clause(v, base)
        metric, value, passed = _accuracy(v.get("accuracy"))
        if passed is False:
            acc = f"but fails the accuracy budget ({metric} {value:.5g})" if metric else "but fails the accuracy budget"
        elif metric is not None:
            acc = f"at {metric} {value:.5g}"
        else:
            acc = ""
        out.append(f"{v['name']} {clause}{(' ' + acc) if acc else ''} against {base['name']}.")
    for d in comp.layer_diffs:
        c = d["summary"]["changes"]
        if d["rows"] and (c.get("precision") or c.get("fused")):
            out.append(f"{d['b']} changes the precision of {c.get('precision', 0)} and the fusion of "
                       f"{c.get('fused', 0)} layer groups of {d['a']}.")
    return out


def distributions(samples: list[np.ndarray], names: list[str], bins: int = 50) -> dict[str, Any] | None:
    """The latency distributions of the inputs on common bins (0.5th to 99.5th percentile of all),
    as fractions; None when fewer than two inputs have samples."""
    have = [(n, np.asarray(s, dtype=np.float64)) for n, s in zip(names, samples, strict=True) if len(s)]
    have = [(n, s[np.isfinite(s)]) for n, s in have if np.isfinite(s).any()]
    if len(have) < 2:
        return None
    every = np.concatenate([s for _, s in have])
    lo, hi = (float(x) for x in np.percentile(every, [0.5, 99.5]))
    if hi <= lo:
        hi = lo + max(abs(lo) * 1e-3, 1e-9)
    edges = np.linspace(lo, hi, bins + 1)
    series = {n: (np.histogram(np.clip(s, lo, hi), edges)[0] / s.size).round(6).tolist() for n, s in have}
    return {"edges": edges.round(6).tolist(), "series": series}


def time_by_type(reports: list[Any], names: list[str]) -> dict[str, Any] | None:
    """Each input's profiled time per layer type (the types of the largest totals), or None when no
    input has per-layer times."""
    per = {n: {g["key"]: float(g["time_ms"]) for g in r.time_by_type} for r, n in zip(reports, names, strict=True)}
    if not any(per.values()):
        return None
    totals: dict[str, float] = {}
    for d in per.values():
        for k, t in d.items():
            totals[k] = totals.get(k, 0.0) + t
    types = [k for k, _ in sorted(totals.items(), key=lambda kv: -kv[1])[:TOP_TYPES]]
    return {"types": types, "series": {n: [per[n].get(t, 0.0) for t in types] for n in names if per[n]}}


def sweep_story(doc: dict[str, Any]) -> list[str]:
    """The before/after story of a precision sweep (``trtstudio.precision/1``): for each variant, its
    median against FP32 (said from its speed-up verdict and interval) and whether it keeps the
    accuracy budget ("fp16 cuts the median 42 % (3.1 -> 1.8 ms) at cosine 0.99999; int8 fails the
    accuracy budget (cosine 0.80)")."""
    variants = [v for v in doc.get("variants") or [] if isinstance(v, dict)]
    base = next((v for v in variants if v.get("name") == "fp32"), None)
    a = ((base or {}).get("latency_ms") or {}).get("median")
    out = []
    for v in variants:
        if v is base:
            continue
        name = str(v.get("name"))
        if v.get("error"):
            out.append(f"{name} could not be made or run: {v['error']}.")
            continue
        b = (v.get("latency_ms") or {}).get("median")
        verdict = (v.get("speedup_verdict") or {}).get("verdict")
        if a is None or b is None:
            clause = "was not timed on this backend"
        else:
            change, figures = 1.0 - b / a, f"({a:.3g} -> {b:.3g} ms)"
            clause = {"faster": f"cuts the median {change * 100:.0f} % {figures}",
                      "slower": f"raises the median {-change * 100:.0f} % {figures}",
                      "no significant difference": f"makes no significant difference to the median {figures}"
                      }.get(str(verdict), f"moves the median {-change * 100:+.0f} % {figures}")
        metric, value, _ = _accuracy(v.get("accuracy"))
        acc = f" {metric} {value:.5g}" if metric else ""
        if v.get("passed") is False:
            reasons = [str(r) for r in v.get("reasons") or []]
            out.append(f"{name} {clause} but fails the accuracy budget ({reasons[0] if reasons else acc.strip()}).")
        else:
            out.append(f"{name} {clause}{' at' + acc if acc else ''}.")
    return out
