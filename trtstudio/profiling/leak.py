"""Memory-leak verdict: the least-squares slope of memory against inference count.

The slope is in MiB per 1,000 inferences. It is "growing" only when it is both above a threshold
and significant (its t statistic over its standard error beats ``t_min``); outliers beyond
``outlier_mads`` median absolute deviations from a first fit are dropped before the final fit, and
the first ``skip_fraction`` of the run (allocator warm-up) is ignored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MIB = 1024.0 * 1024.0


@dataclass(frozen=True)
class LeakVerdict:
    """Result of ``leak_check``: slope (MiB / 1k inferences), its standard error, points used, verdict."""

    slope_mib_per_1k: float
    stderr_mib_per_1k: float
    points: int
    verdict: str  # "growing", "stable" or "unknown"
    reason: str

    def to_dict(self) -> dict[str, object]:
        """Plain dict for JSON; an "unknown" verdict's slope and error (NaN: too few samples) are
        None, as a document says "no figure" (not through the writers' non-finite warning)."""
        return {
            "slope_mib_per_1k": self.slope_mib_per_1k if math.isfinite(self.slope_mib_per_1k) else None,
            "stderr_mib_per_1k": self.stderr_mib_per_1k if math.isfinite(self.stderr_mib_per_1k) else None,
            "points": self.points,
            "verdict": self.verdict,
            "reason": self.reason,
        }


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, np.ndarray]:
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    slope = float(((x - xm) * (y - ym)).sum() / sxx)
    intercept = float(ym - slope * xm)
    resid = y - (intercept + slope * x)
    dof = max(1, x.size - 2)
    stderr = float(np.sqrt((resid**2).sum() / dof / sxx))
    return slope, intercept, stderr, resid


def leak_check(
    inferences: np.ndarray,
    memory_bytes: np.ndarray,
    threshold_mib_per_1k: float = 0.5,
    t_min: float = 5.0,
    skip_fraction: float = 0.1,
    outlier_mads: float = 6.0,
    min_points: int = 8,
) -> LeakVerdict:
    """Slope of ``memory_bytes`` against ``inferences`` (same length) and a verdict."""
    x = np.asarray(inferences, dtype=np.float64)
    y = np.asarray(memory_bytes, dtype=np.float64) / MIB
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    skip = int(x.size * skip_fraction)
    x, y = x[skip:], y[skip:]
    if x.size < min_points or np.ptp(x) == 0:
        return LeakVerdict(float("nan"), float("nan"), int(x.size), "unknown", "too few memory samples")
    slope, _, _, resid = _fit(x, y)
    mad = float(np.median(np.abs(resid - np.median(resid))))
    if mad > 0:
        keep = np.abs(resid - np.median(resid)) <= outlier_mads * 1.4826 * mad
        if keep.sum() >= min_points:
            x, y = x[keep], y[keep]
            slope, _, _, _ = _fit(x, y)
    _, _, stderr, _ = _fit(x, y)
    per_1k, err_1k = slope * 1000.0, stderr * 1000.0
    significant = (per_1k / err_1k > t_min) if err_1k > 0 else per_1k > 0
    if per_1k > threshold_mib_per_1k and significant:
        return LeakVerdict(per_1k, err_1k, int(x.size), "growing", f"memory grows {per_1k:.3f} MiB per 1,000 inferences")
    reason = (
        f"slope {per_1k:.3f} MiB per 1,000 inferences is below {threshold_mib_per_1k}"
        if per_1k <= threshold_mib_per_1k
        else f"slope {per_1k:.3f} +- {err_1k:.3f} MiB per 1,000 inferences is not significant"
    )
    return LeakVerdict(per_1k, err_1k, int(x.size), "stable", reason)


# The memory series a leak verdict is given for: monitor key -> what the user reads.
LEAK_KEYS: dict[str, str] = {"process_gpu_bytes": "process GPU", "gpu_used_bytes": "GPU used",
                             "host_rss_bytes": "host RSS"}
MIN_WARN_POINTS = 30  # memory samples (100 ms apart) before "growing" is said: allocators warm up first
HOST_KEYS = ("host_rss_bytes",)  # series that other work in this process (loading a model) disturbs


def memory_verdicts(arrays: dict[str, np.ndarray], disturbances: list[str] | None = None) -> dict[str, LeakVerdict]:
    """A verdict per leak key present in a memory monitor's ``snapshot()`` (``index`` = inference count).

    ``disturbances`` (what else this process did during the run, e.g. "loaded model B.onnx"): the
    host series then cannot tell a leak from that work, so their "growing" becomes "unknown"."""
    out: dict[str, LeakVerdict] = {}
    for key in LEAK_KEYS:
        if key in arrays and arrays[key].size and "index" in arrays:
            v = leak_check(arrays["index"], arrays[key])
            if disturbances and key in HOST_KEYS and v.verdict == "growing":
                v = LeakVerdict(v.slope_mib_per_1k, v.stderr_mib_per_1k, v.points, "unknown",
                                f"{v.reason}, but {'; '.join(disturbances)} during the run")
            out[key] = v
    return out


def leak_warnings(verdicts: dict[str, dict[str, object]], min_points: int = MIN_WARN_POINTS) -> list[str]:
    """The one rule for "memory growing" warnings (whole runs and live panels): a "growing" verdict
    over at least ``min_points`` samples. ``verdicts``: key -> ``LeakVerdict.to_dict()``."""
    out = []
    for key, v in verdicts.items():
        points = v.get("points")
        if v.get("verdict") == "growing" and isinstance(points, int) and points >= min_points:
            out.append(f"memory growing ({LEAK_KEYS.get(key, key)}): {v.get('reason')}")
    return out
