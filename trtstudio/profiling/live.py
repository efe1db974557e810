"""Live maths of a profiling run, without Qt: the panels' sample window, decimation, rolling
bands, throughput, statistics with warnings and the memory verdicts, histogram and view ranges.

``ui.live_panels.LivePanels`` calls these on each frame and only draws the results (``setData``,
``setText``); everything here is tested without Qt.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from trtstudio.measure.stats import latency_stats, run_warnings
from trtstudio.profiling.leak import LEAK_KEYS, MIN_WARN_POINTS, leak_warnings, memory_verdicts
from trtstudio.profiling.samples import COLUMNS, SampleBuffer

MAX_SPIKES = 300  # spike markers drawn at most (the largest spikes)
HIST_BINS = 80


def round_sig(v: float, down: bool, digits: int = 2) -> float:
    """``v`` rounded down or up to ``digits`` significant digits (0 stays 0)."""
    if v <= 0 or not math.isfinite(v):
        return v
    step = 10.0 ** (math.floor(math.log10(v)) - digits + 1)
    r = (math.floor(v / step) if down else math.ceil(v / step)) * step
    # a value with ``digits`` digits already stays as it is: k * step can land an ulp past it
    # (0.95 -> 0.9500000000000001), which made the histogram's range start above its own minimum
    return v if math.isclose(r, v, rel_tol=1e-12) else r


def peak_decimate(
    t: np.ndarray, v: np.ndarray, buckets: int = 2048, finite: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Min and max of each of ``buckets`` runs of samples, interleaved (what pyqtgraph's 'peak'
    downsampling draws), NaN-aware unless ``finite``; the input as it is when it is short already.
    Done once here, it spares pyqtgraph clipping and decimating 100k samples per curve and frame."""
    n = int(v.size)
    k = n // buckets
    if k < 2:
        return t, v
    m = (n // k) * k
    vv = v[n - m :].reshape(-1, k)
    tt = t[n - m :: k]
    if finite:
        lo, hi = vv.min(axis=1), vv.max(axis=1)
    else:
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN buckets stay NaN
            lo, hi = np.nanmin(vv, axis=1), np.nanmax(vv, axis=1)
    return np.repeat(tt, 2), np.column_stack((lo, hi)).ravel()


def rolling_bands(t: np.ndarray, y: np.ndarray, bins: int = 200, min_per_bin: int = 100) -> tuple[np.ndarray, ...] | None:
    """Windowed p50 and p99 over consecutive bins of samples (the latest sample ends the last bin):
    returns bin-centre times, p50, p99; None when there are too few samples."""
    n = int(y.size)
    nb = min(bins, n // min_per_bin)
    if nb < 2:
        return None
    k = n // nb
    m = nb * k
    yy = y[n - m :].reshape(nb, k)
    tc = t[n - m :].reshape(nb, k).mean(axis=1)
    p50, p99 = np.percentile(yy, [50.0, 99.0], axis=1)
    return tc, p50, p99


def throughput_series(t: np.ndarray, width_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Inferences per second in bins of ``width_s`` over the sample times (the last, partial bin dropped)."""
    if t.size < 2:
        return np.empty(0), np.empty(0)
    t0 = float(t[0])
    idx = ((t - t0) / width_s).astype(np.int64)
    counts = np.bincount(idx)
    if counts.size > 1:
        counts = counts[:-1]
    x = t0 + (np.arange(counts.size) + 0.5) * width_s
    return x, counts / width_s


class SampleWindow:
    """The panels' own copy of the last ``capacity`` samples, fed incrementally: each frame copies only
    the rows appended since the last one (``SampleBuffer.snapshot(last_n)``, told apart by their
    strictly increasing ``t_s``). Rows live in a buffer twice the capacity; when its end is reached the
    newest ``capacity`` rows move to the front (one copy per ``capacity`` samples), so ``columns()``
    are contiguous views, never copies."""

    def __init__(self, capacity: int) -> None:
        self.capacity = int(capacity)
        self._data = np.empty((len(COLUMNS), 2 * self.capacity), dtype=np.float64)
        self._start = 0
        self._end = 0
        self._seen = 0
        self._last_t = -math.inf

    def __len__(self) -> int:
        return self._end - self._start

    def update(self, buf: SampleBuffer) -> int:
        """Take the rows appended since the last call; returns how many were new."""
        count = buf.count
        new = count - self._seen
        if new <= 0:
            return 0
        # ask for more than the count says: rows appended meanwhile are told apart by their time
        want = min(new + max(1024, new), self.capacity)
        snap = buf.snapshot(last_n=want)
        t = snap["t_s"]
        keep = t > self._last_t
        if keep.size and keep[0] and self._end > self._start and want < self.capacity:
            # even the oldest row asked for is new: more arrived than asked for; take all held
            snap = buf.snapshot(last_n=self.capacity)
            t = snap["t_s"]
            keep = t > self._last_t
        if not keep.any():
            self._seen = count
            return 0
        first = int(np.argmax(keep))
        rows = np.vstack([snap[c][first:] for c in COLUMNS])
        n = rows.shape[1]
        if n >= self.capacity:
            rows, n = rows[:, -self.capacity :], self.capacity
            self._start, self._end = 0, 0
        if self._end + n > self._data.shape[1]:
            keep_n = min(len(self), self.capacity - n)
            self._data[:, :keep_n] = self._data[:, self._end - keep_n : self._end]
            self._start, self._end = 0, keep_n
        self._data[:, self._end : self._end + n] = rows
        self._end += n
        if len(self) > self.capacity:
            self._start = self._end - self.capacity
        self._last_t = float(self._data[0, self._end - 1])
        # every row up to ``count`` was inside the request; rows past it may have come along too
        self._seen = max(self._seen + n, count)
        return n

    def columns(self) -> dict[str, np.ndarray]:
        """Views of the held rows by column name, oldest first (valid until the next ``update``)."""
        return {c: self._data[i, self._start : self._end] for i, c in enumerate(COLUMNS)}


def fmt_ms(v: float | None) -> str:
    """A latency for people: µs below 1 ms, 3 decimals below 100 ms, "-" when unknown."""
    if v is None or not math.isfinite(v):
        return "-"
    if v >= 100:
        return f"{v:.1f} ms"
    if v >= 1:
        return f"{v:.3f} ms"
    return f"{v * 1e3:.1f} µs"


def fmt_rate(v: float | None) -> str:
    """A rate with thousands separators, "-" when unknown."""
    return "-" if v is None or not math.isfinite(v) else f"{v:,.1f}"


def live_statistics(snap: dict[str, np.ndarray], count: int, batch: int = 1, memory: dict[str, np.ndarray] | None = None,
                    cold_ms: float | None = None, disturbances: list[str] | None = None) -> dict[str, Any]:
    """Statistics of the window ``snap`` (``SampleWindow.columns()``) of a run that has recorded
    ``count`` inferences: latency statistics, throughput over the last second, the H2D/compute/D2H
    means, the memory verdicts (``memory``: a monitor snapshot), warnings (the same rules as a whole
    run's, ``leak_warnings`` included) and a one-line ``scope`` text. {} when the window is empty."""
    y, t = snap["latency_ms"], snap["t_s"]
    stats: dict[str, Any] = latency_stats(y)
    if not stats.get("count"):
        return {}
    recent = t >= t[-1] - 1.0
    span = float(t[-1] - t[recent][0]) if recent.sum() > 1 else 0.0
    ips = (int(recent.sum()) - 1) / span if span > 0 else float("nan")
    stats["throughput"] = {"inferences_per_s": ips, "samples_per_s": ips * max(1, batch)}
    stats["total_count"] = count
    stats["window"] = int(y.size)
    parts = {k: (float(np.nanmean(v)) if np.isfinite(v).any() else None) for k, v in snap.items()
             if k in ("h2d_ms", "compute_ms", "d2h_ms")}
    stats["parts_ms"] = parts
    enqueue = None
    if parts and all(v is not None for v in parts.values()):
        # host time outside the GPU spans: enqueue plus synchronisation, an upper bound of enqueue time
        enqueue = stats["mean"] - sum(v for v in parts.values() if v is not None)
    warns = run_warnings(stats, parts, enqueue)
    verdicts = {k: v.to_dict() for k, v in memory_verdicts(memory or {}, disturbances).items()}
    stats["memory"] = {LEAK_KEYS[k]: v for k, v in verdicts.items()}
    warns += leak_warnings(verdicts)
    stats["warnings"] = warns
    if cold_ms is not None:
        stats["cold_ms"] = cold_ms
    if count > y.size:
        scope = f"live: statistics over the last {y.size:,} of {count:,} inferences"
    else:
        scope = f"live: {count:,} inferences"
    stats["scope"] = scope + memory_text(stats["memory"])
    return stats


def memory_text(memory: dict[str, dict[str, Any]]) -> str:
    """The memory verdicts (label -> ``LeakVerdict.to_dict()``) as a short text for the stats strip."""
    parts = []
    for label, v in memory.items():
        if v.get("slope_mib_per_1k") is None or v["verdict"] in ("unknown", "inconclusive"):
            continue
        verdict = v["verdict"] if v["points"] >= MIN_WARN_POINTS else "too early to tell"
        parts.append(f"{label} {v['slope_mib_per_1k']:+.3f} MiB/1k inferences ({verdict})")
    return ("   memory: " + "; ".join(parts)) if parts else ""


def latency_view(t: np.ndarray, y_ms: np.ndarray, stats: dict[str, Any]) -> tuple[float, np.ndarray]:
    """The top of the latency view (ms; long tails clipped at 4x p99) and the indices of spikes
    (above p99 or twice the median; the ``MAX_SPIKES`` largest)."""
    ymax = float(np.max(y_ms))
    p50 = float(stats["median"]) if "median" in stats else float(np.median(y_ms))
    p99 = float(stats["p99"]) if "p99" in stats else ymax
    top = 1.08 * max(min(ymax, 4.0 * p99), p99)
    idx = np.flatnonzero((y_ms > p99) | (y_ms > 2.0 * p50))
    if idx.size > MAX_SPIKES:
        idx = idx[np.argpartition(y_ms[idx], -MAX_SPIKES)[-MAX_SPIKES:]]
    return top, idx


def histogram(y_ms: np.ndarray, stats: dict[str, Any], bins: int = HIST_BINS) -> tuple[np.ndarray, np.ndarray, str]:
    """Counts and edges (ms) of the latency histogram on a rounded range that cuts far tails, and a
    note on the share off-scale ("" when under 0.05 %)."""
    lo, ymax = float(y_ms.min()), float(y_ms.max())
    p99 = float(stats["p99"]) if "p99" in stats else ymax
    p999 = float(stats["p999"]) if "p999" in stats else ymax
    hi = min(ymax, 1.5 * p99 if p999 > 3.0 * p99 else 1.05 * p999)
    # bins on a rounded range: it (and the view, whose change costs a repaint) moves seldom
    lo, hi = round_sig(lo, down=True), round_sig(hi, down=False)
    if hi <= lo:
        hi = lo + 1e-3
    counts, edges = np.histogram(y_ms, bins=bins, range=(lo, hi))
    beyond = float((y_ms > hi).mean())
    edge = f"{hi:.3g} ms" if hi >= 1 else f"{hi * 1e3:.3g} µs"
    note = f"{100 * beyond:.1f}% &gt; {edge} off-scale" if beyond >= 0.0005 else ""
    return counts, edges, note


def split_top(t: np.ndarray, parts: dict[str, np.ndarray]) -> float:
    """The top of the H2D/compute/D2H view (ms): the largest p99.5 over a strided subsample."""
    top = 0.0
    step = max(1, t.size // 4096)  # a full percentile of 100k samples costs milliseconds
    for v in parts.values():
        sub = v[::step]
        sub = sub[np.isfinite(sub)]
        if sub.size:
            top = max(top, float(np.percentile(sub, 99.5)))
    return top
