"""The figures of Present mode (View > Present): the current run beside a baseline run, for a demo.

Qt-free: the window's ``PresentView`` only draws what :func:`present_figures` returns. The
baseline is a saved session's first run (:func:`baseline_from_session`); the current run is the
last samples of the live run's ring buffer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

RECENT = 2000  # samples of the live run the figures use (the last ones: what the room sees now)
MIN_SAMPLES = 20  # fewer and the figures say "measuring..."


@dataclass(frozen=True)
class Baseline:
    """A run to compare against: its name and its latencies in ms."""

    name: str
    latency_ms: np.ndarray
    backend: str | None = None


def baseline_from_session(path: str | os.PathLike[str]) -> Baseline:
    """The first run of the session at ``path``; InputError (one line) when it has none."""
    from trtstudio.errors import InputError
    from trtstudio.report.session import load_session

    s = load_session(path)
    runs = [r for r in s.runs if np.asarray(r.latency_ms).size]
    if not runs:
        raise InputError(path, "this session has no run with latencies to compare against")
    r = runs[0]
    return Baseline(name=str(r.name or os.path.basename(str(path))), latency_ms=np.asarray(r.latency_ms, dtype=float),
                    backend=r.backend)


def _stats(lat: np.ndarray) -> dict[str, float] | None:
    v = lat[np.isfinite(lat)]
    if v.size < MIN_SAMPLES:
        return None
    p50, p99 = np.percentile(v, [50, 99])
    return {"median_ms": float(p50), "p99_ms": float(p99), "samples": int(v.size)}


def present_figures(t_s: np.ndarray, latency_ms: np.ndarray, baseline: Baseline | None = None,
                    batch: int = 1) -> dict[str, Any]:
    """Now (median, p99, throughput over the last :data:`RECENT` samples), the baseline's median and
    p99, and the change of the median in words ("median 42 % lower than BASELINE (3.1 -> 1.8 ms)")."""
    lat = np.asarray(latency_ms, dtype=float)[-RECENT:]
    t = np.asarray(t_s, dtype=float)[-RECENT:]
    now = _stats(lat)
    if now is not None and t.size >= 2 and t[-1] > t[0]:
        now["throughput"] = float((t.size - 1) * max(1, batch) / (t[-1] - t[0]))
    base = _stats(baseline.latency_ms) if baseline is not None else None
    out: dict[str, Any] = {"now": now, "baseline": base, "baseline_name": baseline.name if baseline else None,
                           "change": None, "text": "measuring..." if now is None else ""}
    if now is None:
        return out
    if base is None:
        out["text"] = f"median {now['median_ms']:.3g} ms, p99 {now['p99_ms']:.3g} ms"
        return out
    ratio = base["median_ms"] / now["median_ms"]  # speed-up: > 1 is faster than the baseline
    change = 1.0 - now["median_ms"] / base["median_ms"]
    out["change"] = {"speedup": ratio, "median_change": -change}
    word = "lower" if change > 0 else "higher"
    out["text"] = (f"median {abs(change) * 100:.0f} % {word} than {out['baseline_name']} "
                   f"({base['median_ms']:.3g} -> {now['median_ms']:.3g} ms)")
    return out
