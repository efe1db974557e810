"""The figures of Present mode (View > Present): the current run beside a baseline run, for a demo.

Qt-free: the window's ``PresentView`` only draws what :func:`present_figures` returns. The
baseline is a saved session's first run (:func:`baseline_from_session`); the current run is the
last samples of the live run's ring buffer.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

RECENT = 2000  # samples of the live run the figures use (the last ones: what the room sees now)
MIN_SAMPLES = 20  # fewer and the figures say "measuring..."
COMPARE_EVERY_S = 1.0  # the figures (their comparison with the baseline a bootstrap) are made again at most this often


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


def compare_to_baseline(baseline: Baseline, latency_ms: np.ndarray, baseline_stats: dict[str, Any] | None = None,
                        ) -> dict[str, Any]:
    """The change of the median against ``baseline`` by ``compare``'s rule
    (:func:`trtstudio.report.compare.speedup_verdict`: the latency ratio bootstrapped over stretches
    of both runs, ``no significant difference`` when its 95 % interval holds 1.0, a run whose CoV is
    over ``NOISY_COV_PERCENT`` called noisy), in words for a room: "median 59 % lower than fp32
    (95 % interval 55-62 %): 92.1 -> 38.0 ms; noisy: fp32 CoV 17 %".

    Returns ``speedup`` (baseline / now medians), ``median_change`` (now / baseline - 1, negative:
    lower), ``interval`` (of that change, or None), ``verdict`` (faster, slower, no significant
    difference, inconclusive; ``verdict_json`` the whole verdict), ``noisy`` ({name: CoV %} of the noisy
    sides) and ``text``."""
    from trtstudio.measure.stats import latency_stats
    from trtstudio.report.compare import NOISY_COV_PERCENT, speedup_verdict

    lat = np.asarray(latency_ms, dtype=float)
    base_stats = baseline_stats if baseline_stats is not None else latency_stats(baseline.latency_ms)
    covs = {baseline.name: base_stats.get("cov"), "this run": latency_stats(lat).get("cov")}
    verdict, sp = speedup_verdict(baseline.name, baseline.latency_ms, "this run", lat, list(covs.values()))
    ratio = sp.inverse()  # now / baseline
    base_ms, now_ms = _median(baseline.latency_ms), _median(lat)
    change = ratio.value - 1.0
    interval = [ratio.low - 1.0, ratio.high - 1.0] if ratio.has_interval else None
    figures = f"{base_ms:.3g} -> {now_ms:.3g} ms"
    if interval is None:
        word = "lower" if change < 0 else "higher"
        text = f"median {abs(change) * 100:.0f} % {word} than {baseline.name} ({figures}; no interval: too few samples)"
    elif not sp.significant:
        text = (f"{verdict.verdict} from {baseline.name}: median {figures} (change {change * 100:+.0f} %, "
                f"95 % interval {interval[0] * 100:+.0f} to {interval[1] * 100:+.0f} %)")
    else:
        word = "lower" if change < 0 else "higher"
        ends = sorted(abs(v) * 100 for v in interval)
        text = (f"median {abs(change) * 100:.0f} % {word} than {baseline.name} "
                f"(95 % interval {ends[0]:.0f}-{ends[1]:.0f} %): {figures}")
    noisy = {name: float(c) for name, c in covs.items() if c is not None and c > NOISY_COV_PERCENT}
    if noisy:
        text += f"; noisy (CoV over {NOISY_COV_PERCENT:.0f} %): " + ", ".join(f"{name} {c:.3g} %" for name, c in noisy.items())
    return {"speedup": sp.value, "median_change": change, "interval": interval, "verdict": verdict.verdict,
            "verdict_json": verdict.to_json(), "noisy": noisy, "text": text}


def _median(values: np.ndarray) -> float:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(np.median(v)) if v.size else float("nan")


def present_figures(t_s: np.ndarray, latency_ms: np.ndarray, baseline: Baseline | None = None,
                    batch: int = 1, change: dict[str, Any] | None = None) -> dict[str, Any]:
    """Now (median, p99, throughput over the last :data:`RECENT` samples), the baseline's median and
    p99, and the change of the median against it by ``compare``'s rule (:func:`compare_to_baseline`;
    ``change``: one computed earlier, reused as it is). ``text`` says the change, or the run's
    figures without a baseline, or "measuring..."."""
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
    if base is None or baseline is None:
        out["text"] = f"median {now['median_ms']:.3g} ms, p99 {now['p99_ms']:.3g} ms"
        return out
    out["change"] = change if change is not None else compare_to_baseline(baseline, lat)
    out["text"] = out["change"]["text"]
    return out


def run_headline(fig: dict[str, Any], label: str, live: bool, figures: bool = True) -> str:
    """The headline of a run from its figures: "Live: sample.onnx (ort): median 38.0 ms, p99 45.1 ms,
    26 inferences/s over the last 2,000 inferences" (``live``), "Last run: ..." once it ended. Without
    ``figures`` (Present mode, whose figures stand below it in large type) it names the run and what
    the figures are of: "Live: sample.onnx (ort), the last 2,000 inferences"."""
    head = f"{'Live' if live else 'Last run'}: {label}"
    now = fig.get("now")
    if now is None:
        return f"{head}: measuring..." if live else f"{head}: too few inferences to sum up"
    if not figures:
        return f"{head}, the last {now['samples']:,} inferences"
    tp = f", {now['throughput']:,.3g} inferences/s" if "throughput" in now else ""
    return (f"{head}: median {now['median_ms']:.3g} ms, p99 {now['p99_ms']:.3g} ms{tp} "
            f"over the last {now['samples']:,} inferences")


class PresentFigures:
    """The figures of Present mode frame by frame. The comparison with the baseline is a bootstrap
    (some ms), so the figures are made again only after ``every_s`` seconds, when the baseline or the
    run changed, or while too few samples gave none: the headline, the figures and the change then
    always come from the same samples, and a 4 Hz refresh stays light on the window's thread."""

    def __init__(self, every_s: float = COMPARE_EVERY_S, clock: Any = time.monotonic) -> None:
        self.every_s, self.clock = every_s, clock
        self._key: tuple[Any, ...] | None = None
        self._at = -math.inf
        self._fig: dict[str, Any] | None = None
        self._base_stats: tuple[Any, dict[str, Any]] | None = None

    def __call__(self, t_s: np.ndarray, latency_ms: np.ndarray, baseline: Baseline | None = None,
                 batch: int = 1, run: Any = None) -> dict[str, Any]:
        """The figures; ``run`` names the run the samples are of (a new one makes them again)."""
        key = (id(baseline), run)
        now = self.clock()
        if (key == self._key and self._fig is not None and self._fig["now"] is not None
                and now - self._at < self.every_s):
            return self._fig
        lat = np.asarray(latency_ms, dtype=float)[-RECENT:]
        change = None
        if baseline is not None and _stats(lat) is not None and _stats(baseline.latency_ms) is not None:
            change = compare_to_baseline(baseline, lat, self._baseline_stats(baseline))
        self._key, self._at = key, now
        self._fig = present_figures(t_s, lat, baseline, batch, change)
        return self._fig

    def _baseline_stats(self, baseline: Baseline) -> dict[str, Any]:
        if self._base_stats is None or self._base_stats[0] is not baseline:
            from trtstudio.measure.stats import latency_stats

            self._base_stats = (baseline, latency_stats(baseline.latency_ms))
        return self._base_stats[1]
