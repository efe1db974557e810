"""The one trend fit: a least-squares line with its slope's confidence interval.

Memory readings taken over a run are not independent: a reading repeats the last one until an
allocation moves it, so the residuals of a line fit are autocorrelated and the textbook standard
error is too small. ``fit_trend`` corrects for that with the lag-1 autocorrelation of the residuals
(the AR(1) effective sample size, as in climate and soak-test trend tests), so "significant" means
what it says on a step-shaped series too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

MAX_AUTOCORRELATION = 0.95  # beyond this the effective sample size is clipped (a staircase of few steps)


def figure(value: float | None) -> float | None:
    """A figure for a JSON document: the float, or None when it is missing or not finite."""
    return float(value) if value is not None and math.isfinite(value) else None


def t_quantile(p: float, dof: float) -> float:
    """Quantile ``p`` of Student's t with ``dof`` degrees of freedom (Cornish-Fisher expansion,
    Abramowitz & Stegun 26.7.5; within 0.5% of the exact value for dof >= 3)."""
    z = NormalDist().inv_cdf(p)
    if not math.isfinite(dof) or dof > 1e6:
        return z
    d = max(float(dof), 1.0)
    z3, z5, z7 = z**3, z**5, z**7
    return (z + (z3 + z) / (4 * d) + (5 * z5 + 16 * z3 + 3 * z) / (96 * d**2)
            + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * d**3))


@dataclass(frozen=True)
class Trend:
    """``slope`` (y units per x unit) with its standard error and the ``confidence`` interval
    [``low``, ``high``], over ``points`` points (``dropped`` outliers left out); ``autocorrelation``
    is the residuals' lag-1 autocorrelation the error was widened for. NaN figures when fewer than
    three distinct x values were given."""

    slope: float
    intercept: float
    stderr: float
    low: float
    high: float
    points: int
    confidence: float = 0.95
    autocorrelation: float = 0.0
    dropped: int = 0

    @property
    def rising(self) -> bool:
        """The whole interval is above zero."""
        return bool(self.low > 0)

    def to_json(self, scale: float = 1.0) -> dict[str, Any]:
        """slope, stderr, low, high (times ``scale``, e.g. 1000 / MiB for MiB per 1,000), points,
        confidence, autocorrelation and dropped; a figure that could not be computed is None."""
        return {"slope": figure(self.slope * scale), "stderr": figure(self.stderr * abs(scale)),
                "low": figure(min(self.low * scale, self.high * scale)),
                "high": figure(max(self.low * scale, self.high * scale)), "points": self.points,
                "confidence": self.confidence, "autocorrelation": figure(self.autocorrelation),
                "dropped": self.dropped}


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float, np.ndarray, float]:
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    slope = float(((x - xm) * (y - ym)).sum() / sxx)
    intercept = float(ym - slope * xm)
    return slope, intercept, y - (intercept + slope * x), sxx


def fit_trend(x: Any, y: Any, confidence: float = 0.95, autocorrelated: bool = True,
              outlier_mads: float | None = None) -> Trend:
    """Least-squares ``y = intercept + slope * x`` over the finite pairs, with the slope's interval.

    ``autocorrelated``: widen the error for the residuals' lag-1 autocorrelation (when positive).
    ``outlier_mads``: drop points whose residual from a first fit is more than this many median
    absolute deviations from the median residual, then fit again (when at least 3 points stay).
    """
    xa, ya = np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel()
    ok = np.isfinite(xa) & np.isfinite(ya)
    xa, ya = xa[ok], ya[ok]
    nan = math.nan
    if xa.size < 3 or np.unique(xa).size < 3:
        return Trend(nan, nan, nan, nan, nan, int(xa.size), confidence)
    slope, intercept, resid, sxx = _line(xa, ya)
    dropped = 0
    if outlier_mads is not None:
        dev = np.abs(resid - np.median(resid))
        mad = float(np.median(dev))
        keep = dev <= outlier_mads * 1.4826 * mad if mad > 0 else np.ones(xa.size, bool)
        if 3 <= keep.sum() < xa.size and np.unique(xa[keep]).size >= 3:
            dropped = int(xa.size - keep.sum())
            xa, ya = xa[keep], ya[keep]
            slope, intercept, resid, sxx = _line(xa, ya)
    n = xa.size
    ss = float((resid**2).sum())
    r1 = 0.0
    if autocorrelated and n > 3 and ss > 0:
        order = np.argsort(xa, kind="stable")
        e = resid[order]
        r1 = min(MAX_AUTOCORRELATION, max(0.0, float((e[1:] * e[:-1]).sum() / ss)))
    n_eff = n * (1 - r1) / (1 + r1)
    dof = max(1.0, n_eff - 2)
    stderr = math.sqrt(ss / max(1, n - 2) / sxx) * math.sqrt((1 + r1) / (1 - r1))
    half = t_quantile(0.5 + confidence / 2, dof) * stderr
    return Trend(slope, intercept, stderr, slope - half, slope + half, int(n), confidence, r1, dropped)
