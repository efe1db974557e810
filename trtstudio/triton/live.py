"""TritonLive: the live views of a Triton sweep computed off the GUI thread (Qt-free).

The dialog's worker feeds each measurement window (with its requests' end times and latencies)
and sends the resulting frame to the GUI, which only calls setData: the request curve
(peak-decimated), rolling p50/p99 bands, spikes and the view's top, the latency histogram,
throughput over time, and the server-side breakdown per window stacked (queue, compute
input/infer/output, client/network). The maths is ``trtstudio.profiling.live``'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trtstudio.profiling.live import histogram, latency_view, peak_decimate, rolling_bands, throughput_series
from trtstudio.triton.sweep import BREAKDOWN_PARTS, breakdown_us

MAX_SAMPLES = 200_000  # requests kept for the latency views (the oldest go first)


class TritonLive:
    """Accumulates windows; ``add_window`` returns the frame to draw."""

    def __init__(self) -> None:
        self._t0: float | None = None
        self._t = np.empty(0)
        self._ms = np.empty(0)
        self._rows: list[tuple[float, dict[str, float]]] = []

    def add_window(self, w: dict[str, Any]) -> dict[str, Any]:
        t = np.asarray(w.get("samples_t", ()), dtype=float)
        ms = np.asarray(w.get("samples_ms", ()), dtype=float)
        if self._t0 is None:
            self._t0 = float(t[0]) - 1e-3 if t.size else 0.0
        self._t = np.concatenate((self._t, t - self._t0))[-MAX_SAMPLES:]
        self._ms = np.concatenate((self._ms, ms))[-MAX_SAMPLES:]
        b = breakdown_us(w)
        if b is not None:
            self._rows.append((float(self._t[-1]) if self._t.size else 0.0, b))
        frame: dict[str, Any] = {"breakdown": self._breakdown()}
        if self._ms.size:
            frame |= self._latency()
        return frame

    def _latency(self) -> dict[str, Any]:
        t, ms = self._t, self._ms
        stats = {"median": float(np.median(ms)), "p99": float(np.percentile(ms, 99)),
                 "p999": float(np.percentile(ms, 99.9))}
        top, idx = latency_view(t, ms, stats)
        counts, edges, note = histogram(ms, stats)
        width = max(0.25, min(1.0, float(t[-1] - t[0]) / 60.0)) if t.size > 1 else 0.25
        return {"samples": peak_decimate(t, ms, finite=True),  # min/max per bucket: spikes survive
                "bands": rolling_bands(t, ms, bins=200, min_per_bin=20), "spikes": (t[idx], ms[idx]), "top": top,
                "hist": (edges, counts, note), "throughput": throughput_series(t, width)}

    def _breakdown(self) -> tuple[np.ndarray, list[np.ndarray]] | None:
        if not self._rows:
            return None
        xs = np.array([r[0] for r in self._rows])
        acc = np.zeros(len(self._rows))
        tops = [acc.copy()]
        for part in BREAKDOWN_PARTS:
            acc = acc + np.array([r[1][part] for r in self._rows])
            tops.append(acc.copy())
        return xs, tops
