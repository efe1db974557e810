"""Memory-growth verdicts that hold still: warm-up is not a leak, noise is not growth.

Memory is read against the inference count (not time, so a loaded machine, which runs fewer
inferences per reading, does not change the answer). The first ``warmup_fraction`` of the
inferences is left out (allocator arenas, first-touch pages, lazy state). Over the rest, the later
part, the one trend fit (``measure.trend.fit_trend``: least squares, slope interval widened for
autocorrelated readings, outliers dropped) decides:

- ``growing``: the slope's whole interval is above zero, the slope above ``threshold_mib_per_1k``,
  both halves of the later part rise (growth that continues, not one step), the last half
  significantly, and the later part grew at least ``min_growth_mib`` (allocator granularity).
- ``stable``: the interval's top is below the threshold, or the last half is flat (its interval's
  top below the threshold): memory stepped up once and held.
- ``inconclusive``: anything else, with the number of inferences that would tell.

Each verdict is a ``measure.verdict.Verdict`` whose evidence holds the slope and interval (MiB per
1,000 inferences), the points, the halves' slopes and the windows excluded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from trtstudio.measure.trend import Trend, figure, fit_trend
from trtstudio.measure.verdict import INCONCLUSIVE, Verdict

MIB = 1024.0 * 1024.0
PER_1K = 1000.0


@dataclass(frozen=True)
class LeakRules:
    """Thresholds of ``leak_check`` (see the module docstring)."""

    threshold_mib_per_1k: float = 1.0
    min_growth_mib: float = 1.0
    warmup_fraction: float = 0.25
    confidence: float = 0.95
    outlier_mads: float = 6.0
    min_points: int = 8


class LeakVerdict(Verdict):
    """A memory-growth ``Verdict``; its JSON also carries, flat, the figures that documents written
    before the Verdict type hold (``slope_mib_per_1k``, ``stderr_mib_per_1k``, ``points``,
    ``reason``), so old and new readers read each other's files."""

    @property
    def slope_mib_per_1k(self) -> float:
        """The later part's slope (NaN when it could not be fitted)."""
        v = self.evidence.get("slope_mib_per_1k")
        return math.nan if v is None else float(v)

    @property
    def stderr_mib_per_1k(self) -> float:
        """The slope's standard error (NaN when it could not be fitted)."""
        v = self.evidence.get("stderr_mib_per_1k")
        return math.nan if v is None else float(v)

    @property
    def points(self) -> int:
        """Memory readings the fit used."""
        return int(self.evidence.get("points") or 0)

    @property
    def reason(self) -> str:
        """The one-sentence text (the name older documents give it)."""
        return self.text

    def to_json(self) -> dict[str, Any]:
        """``Verdict.to_json`` plus the flat figures (see the class docstring)."""
        return {**super().to_json(), "slope_mib_per_1k": self.evidence.get("slope_mib_per_1k"),
                "stderr_mib_per_1k": self.evidence.get("stderr_mib_per_1k"), "points": self.points,
                "reason": self.text}

    to_dict = to_json  # the name the run loop and live panels call


def _round_up(n: float) -> int:
    """``n`` rounded up to two significant figures (a count of inferences to suggest)."""
    if not math.isfinite(n) or n <= 0:
        return 0
    step = 10 ** max(0, int(math.floor(math.log10(n))) - 1)
    return int(math.ceil(n / step) * step)


def _narrowed(tr: Trend, span: float, t: float) -> float:
    """The span over which ``tr``'s interval would clear the threshold ``t`` (below it) or zero
    (above it, when the slope is above ``t``): intervals narrow as span^-1.5 (readings in
    proportion to inferences)."""
    s, half = tr.slope * PER_1K, (tr.high - tr.slope) * PER_1K
    gap = t - s if s < t else s
    if not (math.isfinite(s) and span > 0 and gap > 0 and half > 0):
        return span
    return span * max(1.0, (half / gap) ** (2 / 3))


def _needed(tr: Trend, last: Trend, span: float, r: LeakRules) -> int:
    """Inferences (whole run) after which this run's later part would decide: enough points, the
    later part's and its last half's intervals narrow enough, and growth over ``min_growth_mib``."""
    later = max(_narrowed(tr, span, r.threshold_mib_per_1k), 2 * _narrowed(last, span / 2, r.threshold_mib_per_1k))
    if tr.points < r.min_points:
        later = max(later, span * r.min_points / max(1, tr.points))
    s = tr.slope * PER_1K
    if math.isfinite(s) and s >= r.threshold_mib_per_1k:
        later = max(later, r.min_growth_mib / s * PER_1K)
    return _round_up(later / (1.0 - r.warmup_fraction))


def _halves(x: np.ndarray, y: np.ndarray, r: LeakRules) -> tuple[Trend, Trend]:
    mid = x.min() + (x.max() - x.min()) / 2
    first, last = x <= mid, x >= mid
    return (fit_trend(x[first], y[first], r.confidence, outlier_mads=r.outlier_mads),
            fit_trend(x[last], y[last], r.confidence, outlier_mads=r.outlier_mads))


def leak_check(inferences: Any, memory_bytes: Any, rules: LeakRules | None = None, topic: str = "memory growth",
               **overrides: Any) -> LeakVerdict:
    """The verdict on ``memory_bytes`` read at ``inferences`` (same length); ``overrides`` change
    single fields of ``rules`` (e.g. ``min_points=4`` for a soak's few windows)."""
    r = replace(rules or LeakRules(), **overrides)
    x = np.asarray(inferences, dtype=np.float64).ravel()
    y = np.asarray(memory_bytes, dtype=np.float64).ravel() / MIB
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    lo_x, hi_x = (float(x.min()), float(x.max())) if x.size else (0.0, 0.0)
    cut = lo_x + r.warmup_fraction * (hi_x - lo_x)
    later = x >= cut
    xl, yl = x[later], y[later]
    tr = fit_trend(xl, yl, r.confidence, outlier_mads=r.outlier_mads)
    first, last = _halves(xl, yl, r) if xl.size >= 6 else (tr, tr)
    span = hi_x - cut
    t = r.threshold_mib_per_1k
    s, low, high = tr.slope * PER_1K, tr.low * PER_1K, tr.high * PER_1K
    growth = tr.slope * span
    evidence = {
        **{f"{k}_mib_per_1k": v for k, v in tr.to_json(PER_1K).items() if k in ("slope", "stderr", "low", "high")},
        "confidence": r.confidence, "points": tr.points, "outliers_dropped": tr.dropped,
        "autocorrelation": figure(tr.autocorrelation),
        "inferences": [figure(lo_x), figure(hi_x)], "later_growth_mib": figure(growth),
        "halves_slope_mib_per_1k": [figure(first.slope * PER_1K), figure(last.slope * PER_1K)],
        "excluded": [{"inferences": [figure(lo_x), figure(cut)], "points": int((~later).sum()), "why": "warm-up"}],
        "threshold_mib_per_1k": t, "min_growth_mib": r.min_growth_mib,
    }
    ival = f"{s:+.3f} MiB per 1,000 inferences ({r.confidence:.0%} interval {low:+.3f} to {high:+.3f})"
    if tr.points < r.min_points or not math.isfinite(s):
        need = _needed(tr, last, span, r)
        evidence["inferences_needed"] = need
        return LeakVerdict(topic, INCONCLUSIVE, f"{tr.points} memory readings after warm-up, {r.min_points} needed; "
                           f"run about {need:,} inferences to tell", evidence)
    if high < t:
        return LeakVerdict(topic, "stable", f"memory after warm-up changes {ival}, below {t} MiB", evidence)
    continues = (first.slope * PER_1K > t / 2 and last.slope * PER_1K > t / 2 and last.low > 0)
    if low > 0 and s > t and continues and growth >= r.min_growth_mib:
        return LeakVerdict(topic, "growing", f"memory grows {ival}, {growth:.1f} MiB after warm-up, still "
                           "growing in the last part of the run", evidence)
    if last.points >= r.min_points // 2 and last.high * PER_1K < t:
        return LeakVerdict(topic, "stable", f"memory stepped up {growth:.2f} MiB after warm-up, then held: the last half "
                           f"changes {last.slope * PER_1K:+.3f} MiB per 1,000 inferences", evidence)
    need = _needed(tr, last, span, r)
    evidence["inferences_needed"] = need
    return LeakVerdict(topic, INCONCLUSIVE, f"memory after warm-up changes {ival}; too little to tell a leak "
                       f"from allocator steps: run about {need:,} inferences", evidence)


# The memory series a leak verdict is given for: monitor key -> what the user reads.
LEAK_KEYS: dict[str, str] = {"process_gpu_bytes": "process GPU", "gpu_used_bytes": "GPU used",
                             "host_rss_bytes": "host RSS"}
MIN_WARN_POINTS = 30  # memory samples (100 ms apart) before "growing" is said: allocators warm up first
HOST_KEYS = ("host_rss_bytes",)  # series that other work in this process (loading a model) disturbs


def memory_verdicts(arrays: dict[str, np.ndarray], disturbances: list[str] | None = None) -> dict[str, LeakVerdict]:
    """A verdict per leak key present in a memory monitor's ``snapshot()`` (``index`` = inference count).

    ``disturbances`` (what else this process did during the run, e.g. "loaded model B.onnx"): the
    host series then cannot tell a leak from that work, so their "growing" becomes "inconclusive"."""
    out: dict[str, LeakVerdict] = {}
    for key, label in LEAK_KEYS.items():
        if key in arrays and arrays[key].size and "index" in arrays:
            v = leak_check(arrays["index"], arrays[key], topic=f"memory growth ({label})")
            if disturbances and key in HOST_KEYS and v.verdict == "growing":
                v = LeakVerdict(v.topic, INCONCLUSIVE, f"{v.text}, but {'; '.join(disturbances)} during the run",
                                {**v.evidence, "disturbances": list(disturbances)})
            if key in GPU_KEYS and v.verdict == "growing":
                v = _named(v, arrays)
            out[key] = v
    return out


GPU_KEYS = ("process_gpu_bytes", "gpu_used_bytes")  # series whose growth the process's split can name
CACHE_CATEGORIES = {"allocator cache (free)": "memory the allocator holds free, not tensors",
                    "inactive split (fragmentation)": "fragmentation of the allocator's blocks, not tensors"}


def _named(v: LeakVerdict, arrays: dict[str, np.ndarray]) -> LeakVerdict:
    """``v`` (a "growing" GPU verdict) naming the category of the process's GPU memory that grows
    (``profiling.memory_split``), where the run has the figures to split it."""
    from trtstudio.profiling.memory_split import growing_category, growth_text, memory_split

    g = growing_category(memory_split(arrays))
    if g is None:
        return v
    text = f"{v.text}; {growth_text(g)}"
    if g["category"] in CACHE_CATEGORIES:
        text += f" ({CACHE_CATEGORIES[g['category']]})"
    evidence = {**v.evidence, "category": g["category"], "category_growth_mib": figure(g["growth_bytes"] / MIB),
                "growth_by_category_mib": {k: figure(b / MIB) for k, b in g["by_category"].items()}}
    return LeakVerdict(v.topic, v.verdict, text, evidence)


def leak_warnings(verdicts: dict[str, dict[str, object]], min_points: int = MIN_WARN_POINTS) -> list[str]:
    """The one rule for "memory growing" warnings (whole runs and live panels): a "growing" verdict
    over at least ``min_points`` samples. ``verdicts``: key -> ``LeakVerdict.to_json()``."""
    out = []
    for key, v in verdicts.items():
        points = v.get("points")
        if v.get("verdict") == "growing" and isinstance(points, int) and points >= min_points:
            out.append(f"memory growing ({LEAK_KEYS.get(key, key)}): {v.get('text') or v.get('reason')}")
    return out


