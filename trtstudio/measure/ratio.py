"""The one ratio rule: a ratio is always *other / baseline*, with a confidence interval.

``ratio_interval(base, other)`` is ``statistic(other) / statistic(base)``: for latencies, above 1
means slower than the baseline (a scenario's slowdown: together / alone). A speed-up is the same
ratio turned over (``Ratio.inverse()``: baseline / other, above 1 faster), and says so in its
name. The interval is a percentile bootstrap, seeded (the same inputs give the same interval):

- independent runs, in time order: each side resampled on its own, by blocks (``blocks``
  consecutive stretches of the run, drawn with replacement), so that drift within a run (a busy
  machine for a while) widens the interval as it should; each block is held as ``SKETCH`` of its
  quantiles, so 100,000 samples cost what 1,000 do. Fewer than ``4 * blocks`` samples are resampled
  one by one (for a percentile statistic the resampled order statistic is drawn directly: the k-th
  of n uniform draws is Beta(k, n+1-k)). Drift *between* two runs (the machine got busier between
  them) no interval over each run's own samples can see: paired rounds can;
- paired rounds (the same round measured both ways, e.g. variants interleaved round by round):
  round indices resampled together, which cancels the drift both sides shared.

A ratio whose interval holds 1.0 is ``no significant difference``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from trtstudio.measure.trend import figure

RESAMPLES = 2000
BLOCKS = 30
SKETCH = 16  # quantiles kept per block
MAX_RESAMPLED = 2_000_000  # resamples x values past which the mean's interval is the normal one
NO_DIFFERENCE = "no significant difference"


@dataclass(frozen=True)
class Ratio:
    """``value`` = statistic(other) / statistic(base) with its ``confidence`` interval [``low``,
    ``high``] (NaN when there was nothing to resample), how it was made (``method``: "bootstrap",
    "paired rounds", "normal" or "none") and the sizes of both sides."""

    value: float
    low: float
    high: float
    confidence: float = 0.95
    method: str = "bootstrap"
    statistic: str = "median"
    n_base: int = 0
    n_other: int = 0

    @property
    def has_interval(self) -> bool:
        """Both ends of the interval are finite."""
        return math.isfinite(self.low) and math.isfinite(self.high)

    @property
    def significant(self) -> bool:
        """The interval exists and does not hold 1.0."""
        return self.has_interval and not (self.low <= 1.0 <= self.high)

    def inverse(self) -> Ratio:
        """base / other (a speed-up from a latency ratio), interval turned over too."""
        def inv(v: float) -> float:
            return 1.0 / v if v and math.isfinite(v) else math.nan

        return Ratio(inv(self.value), inv(self.high), inv(self.low), self.confidence, self.method, self.statistic,
                     self.n_base, self.n_other)

    def describe(self, unit: str = "x") -> str:
        """'1.24x (95% interval 1.10-1.39x)', '1.24x (no interval)'."""
        if not math.isfinite(self.value):
            return "-"
        if not self.has_interval:
            return f"{self.value:.2f}{unit} (no interval)"
        return f"{self.value:.2f}{unit} ({self.confidence:.0%} interval {self.low:.2f}-{self.high:.2f}{unit})"

    def to_json(self) -> dict[str, Any]:
        """value, low, high (None where not finite), confidence, method, statistic, n_base,
        n_other and ``significant``."""
        return {"value": figure(self.value), "low": figure(self.low), "high": figure(self.high),
                "confidence": self.confidence, "method": self.method, "statistic": self.statistic,
                "n_base": self.n_base, "n_other": self.n_other, "significant": self.significant}


def _quantile_of(statistic: str) -> float | None:
    if statistic == "median":
        return 0.5
    if statistic.startswith("p") and statistic[1:].isdigit():
        digits = statistic[1:]
        return float(digits) / 10 ** len(digits) if len(digits) > 2 else float(digits) / 100
    return None


def point(values: np.ndarray, statistic: str) -> float:
    """``statistic`` ("median", "mean", "p90", "p99", "p999") of ``values``; NaN when empty."""
    if values.size == 0:
        return math.nan
    q = _quantile_of(statistic)
    if q is None:
        return float(values.mean())
    return float(np.quantile(values, q))


def _resampled(values: np.ndarray, statistic: str, resamples: int, rng: np.random.Generator,
               blocks: int = BLOCKS) -> tuple[np.ndarray, str]:
    """``resamples`` bootstrap values of ``statistic`` over ``values`` (finite, non-empty, in time order)."""
    n = values.size
    q = _quantile_of(statistic)
    if blocks > 1 and n >= 4 * blocks:
        parts = np.array_split(values, blocks)
        pick = rng.integers(0, blocks, size=(resamples, blocks))
        if q is None:
            return np.array([p.mean() for p in parts])[pick].mean(axis=1), "block bootstrap"
        probs = (np.arange(SKETCH) + 0.5) / SKETCH
        sketch = np.stack([np.quantile(p, probs) for p in parts])  # (blocks, SKETCH)
        pool = sketch[pick].reshape(resamples, -1)
        kth = int(round(q * (pool.shape[1] - 1)))
        return np.partition(pool, kth, axis=1)[:, kth], "block bootstrap"
    if q is not None:
        s = np.sort(values)
        k = min(n, max(1, math.ceil(q * n)))  # the k-th smallest of a resample
        u = rng.beta(k, n + 1 - k, size=resamples)
        return s[np.minimum((u * n).astype(np.int64), n - 1)], "bootstrap"
    if resamples * n <= MAX_RESAMPLED:
        idx = rng.integers(0, n, size=(resamples, n))
        return values[idx].mean(axis=1), "bootstrap"
    se = values.std(ddof=1) / math.sqrt(n) if n > 1 else 0.0
    return values.mean() + se * rng.standard_normal(resamples), "normal"


def _finite(a: Any) -> np.ndarray:
    v = np.asarray(a, dtype=np.float64).ravel()
    return v[np.isfinite(v)]


def ratio_interval(base: Any, other: Any, statistic: str = "median", confidence: float = 0.95,
                   resamples: int = RESAMPLES, seed: int = 0, paired: bool = False, blocks: int = BLOCKS) -> Ratio:
    """statistic(other) / statistic(base) with a bootstrap interval (see the module docstring).

    ``paired``: ``base`` and ``other`` are per-round figures of the same rounds (equal length; a
    round where either is not finite is dropped). ``blocks``: stretches per run for independent
    runs (1: resample sample by sample, for values known to be independent). Fewer than two values
    on a side: no interval."""
    rng = np.random.default_rng(seed)
    tail = (1.0 - confidence) / 2
    if paired:
        a, b = np.asarray(base, dtype=np.float64).ravel(), np.asarray(other, dtype=np.float64).ravel()
        if a.size != b.size:
            raise ValueError(f"paired rounds need equal lengths ({a.size} and {b.size})")
        ok = np.isfinite(a) & np.isfinite(b)
        a, b = a[ok], b[ok]
        value = point(b, statistic) / point(a, statistic) if a.size else math.nan
        if a.size < 2:
            return Ratio(value, math.nan, math.nan, confidence, "none", statistic, int(a.size), int(b.size))
        idx = rng.integers(0, a.size, size=(resamples, a.size))
        q = _quantile_of(statistic)
        ra, rb = (a[idx].mean(axis=1), b[idx].mean(axis=1)) if q is None else \
            (np.quantile(a[idx], q, axis=1), np.quantile(b[idx], q, axis=1))
        method = "paired rounds"
    else:
        a, b = _finite(base), _finite(other)
        value = point(b, statistic) / point(a, statistic) if a.size and b.size else math.nan
        if a.size < 2 or b.size < 2:
            return Ratio(value, math.nan, math.nan, confidence, "none", statistic, int(a.size), int(b.size))
        ra, method = _resampled(a, statistic, resamples, rng, blocks)
        rb, method_b = _resampled(b, statistic, resamples, rng, blocks)
        method = method if method == method_b else f"{method} / {method_b}"
    with np.errstate(divide="ignore", invalid="ignore"):
        r = rb / ra
    r = r[np.isfinite(r)]
    if r.size < resamples // 2 or not math.isfinite(value):
        return Ratio(value, math.nan, math.nan, confidence, "none", statistic, int(a.size), int(b.size))
    low, high = (float(v) for v in np.quantile(r, [tail, 1.0 - tail]))
    return Ratio(float(value), low, high, confidence, method, statistic, int(a.size), int(b.size))



def ratio_of(base: float | None, other: float | None) -> float | None:
    """other / base, the one direction (None when either is missing or base is not positive)."""
    if base is None or other is None or not float(base) > 0:
        return None
    return float(other) / float(base)


def speedup_of(base_latency: float | None, other_latency: float | None) -> float | None:
    """A speed-up from two latencies: the latency ratio turned over (base / other, > 1 faster)."""
    r = ratio_of(base_latency, other_latency)
    return 1.0 / r if r else None
