"""The one statistics summary of latency samples, and trtexec-like warnings.

Vocabulary, for every document trtstudio writes or reads: ``count``, ``mean``, ``median``, ``p90``,
``p95``, ``p99``, ``p999``, ``min``, ``max``, ``std``, ``cov`` (%), ``jitter_ms`` (p99 - median).
``median`` is the 50th percentile; Triton documents name it ``p50`` (perf_analyzer's word), and
:func:`stat` reads either name from either kind of document. The empty case is ``{"count": 0}``
with no other figure (where a document lists its keys anyway, a missing figure is null, never 0):
:func:`stat` gives None for it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

UNSTABLE_COV_PERCENT = 2.5  # trtexec warns when the coefficient of variance exceeds 1%; GPUs vary less than CPUs


def longest_spike(values: np.ndarray, p99: float, median: float) -> dict[str, float]:
    """Longest run of consecutive samples that are above p99 or above twice the median."""
    if values.size == 0:
        return {"samples": 0, "start": -1, "duration_ms": 0.0}
    spike = (values > p99) | (values > 2.0 * median)
    if not spike.any():
        return {"samples": 0, "start": -1, "duration_ms": 0.0}
    padded = np.concatenate(([False], spike, [False])).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    starts, ends = edges[0::2], edges[1::2]
    lengths = ends - starts
    k = int(np.argmax(lengths))
    s, e = int(starts[k]), int(ends[k])
    return {"samples": int(lengths[k]), "start": s, "duration_ms": float(values[s:e].sum())}


ALIASES = {"p50": "median", "median": "p50"}  # the same figure under its two names
PERCENTILES = {"median": 50.0, "p90": 90.0, "p95": 95.0, "p99": 99.0, "p999": 99.9}


def stat(stats: dict[str, Any] | None, name: str) -> float | None:
    """Figure ``name`` of a summary (``median`` and ``p50`` read each other); None when the summary
    has none (empty run, missing key, null or NaN)."""
    if not stats:
        return None
    v = stats.get(name)
    if v is None and name in ALIASES:
        v = stats.get(ALIASES[name])
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def thin_tail(name: str, count: int) -> bool:
    """Whether percentile ``name`` (``p90`` ... ``p999``) of ``count`` samples is thin: with fewer
    than 1 / (1 - q) samples none lies beyond it, so it is (about) the slowest sample, not a tail
    estimate (a p99 needs 100, a p99.9 1,000). Figures with no tail (``median``) are never thin."""
    q = PERCENTILES.get(name, 50.0) / 100.0
    return q > 0.5 and count < round(1.0 / (1.0 - q))


def thin_tail_note(name: str, count: int, unit: str = "samples") -> str | None:
    """The one wording for a thin percentile (:func:`thin_tail`), None when it is not thin:
    "p99 of 10 requests: fewer than 100, so it is about the slowest of them, not a tail"."""
    if not thin_tail(name, count):
        return None
    need = round(1.0 / (1.0 - PERCENTILES[name] / 100.0))
    return (f"{name} of {count:,} {unit}: fewer than {need:,}, so it is about the slowest of them, "
            "not a tail")


def latency_stats(values: np.ndarray) -> dict[str, Any]:
    """count, mean, median, p90/p95/p99/p999, min, max, std, cov (%), jitter (p99 - p50) and the
    longest spike, over latencies in ms (linear-interpolated percentiles, as numpy's default)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return {"count": 0}
    p50, p90, p95, p99, p999 = (float(x) for x in np.percentile(v, list(PERCENTILES.values())))
    mean = float(v.mean())
    std = float(v.std())
    return {
        "count": int(v.size),
        "mean": mean,
        "median": p50,
        "p90": p90,
        "p95": p95,
        "p99": p99,
        "p999": p999,
        "min": float(v.min()),
        "max": float(v.max()),
        "std": std,
        "cov": 100.0 * std / mean if mean > 0 else float("nan"),
        "jitter_ms": p99 - p50,
        "longest_spike": longest_spike(v, p99, p50),
    }


def run_warnings(
    stats: dict[str, Any],
    parts: dict[str, float | None] | None = None,
    enqueue_ms: float | None = None,
    cov_limit: float = UNSTABLE_COV_PERCENT,
) -> list[str]:
    """Warnings in the spirit of trtexec's: unstable latency, transfer-bound, enqueue-bound."""
    out: list[str] = []
    cov = stats.get("cov")
    if cov is not None and not math.isnan(cov) and cov > cov_limit:
        out.append(
            f"unstable: latency coefficient of variation is {cov:.1f}% (> {cov_limit}%); lock clocks, "
            "close other work, or run longer"
        )
    parts = parts or {}
    h2d, compute, d2h = parts.get("h2d_ms"), parts.get("compute_ms"), parts.get("d2h_ms")
    if compute is not None and h2d is not None and d2h is not None and h2d + d2h > compute:
        out.append(
            f"transfer-bound: H2D + D2H take {h2d + d2h:.3f} ms, more than compute ({compute:.3f} ms); "
            "keep data on the GPU or overlap copies"
        )
    if enqueue_ms is not None and compute is not None and enqueue_ms > compute:
        out.append(
            f"enqueue-bound: enqueue takes {enqueue_ms:.3f} ms, more than GPU compute ({compute:.3f} ms); "
            "try CUDA graphs"
        )
    return out
