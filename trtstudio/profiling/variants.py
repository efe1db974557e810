"""CUDA graph against eager, as two variants of one run: what launch overhead costs.

A run with ``--cuda-graph`` replays the captured module call; the same backend can also run the
module call itself (eager), on the same stream, buffers and shapes. :func:`graph_vs_eager` runs
the two in paired rounds (eager then graph, graph then eager, ... : ABBA, so that a drift of the
machine falls on both alike), ``per_round`` inferences a side a round, and compares them with the
one ratio rule (:mod:`trtstudio.measure.ratio`, paired rounds). A backend that can run both has
``use_graph(on)`` (torch-cuda); one without it gets no variants section.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trtstudio.measure.ratio import NO_DIFFERENCE, Ratio, ratio_interval
from trtstudio.measure.trend import figure

EAGER, GRAPH = "eager", "cuda_graph"
LABELS = {EAGER: "eager", GRAPH: "CUDA graph"}
ROUNDS = 10
PER_ROUND = 30


@dataclass
class Variant:
    """One side: per-round medians of the latency, the enqueue (host launch) and GPU time means."""

    name: str
    round_medians: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    enqueue: list[float] = field(default_factory=list)
    gpu: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        """The median of every latency of this side (NaN before any)."""
        return float(np.median(self.latencies)) if self.latencies else math.nan

    def to_json(self) -> dict[str, Any]:
        def mean(v: list[float]) -> float | None:
            return figure(float(np.mean(v))) if v else None

        return {"label": LABELS[self.name], "count": len(self.latencies),
                "median_ms": figure(self.median),
                "enqueue_ms": mean(self.enqueue), "gpu_ms": mean(self.gpu),
                "round_medians_ms": [figure(v) for v in self.round_medians]}


def supports_variants(backend: Any) -> bool:
    """The backend can run the captured graph and the eager call alike (``use_graph``)."""
    return callable(getattr(backend, "use_graph", None)) and bool(getattr(backend, "graph_captured", False))


def _round(backend: Any, side: Variant, n: int) -> None:
    backend.use_graph(side.name == GRAPH)
    lat: list[float] = []
    for _ in range(n):
        t = backend.infer_once()
        lat.append(float(t.total_ms))
        if t.enqueue_ms is not None:
            side.enqueue.append(float(t.enqueue_ms))
        if t.compute_ms is not None:
            side.gpu.append(float(t.compute_ms))
    side.latencies.extend(lat)
    side.round_medians.append(float(np.median(lat)))


def graph_vs_eager(backend: Any, rounds: int = ROUNDS, per_round: int = PER_ROUND,
                   stop: Any = None) -> dict[str, Any] | None:
    """The ``variants`` section of a ``--cuda-graph`` run (None where the backend cannot run both,
    or ``rounds`` is 0): each side's median, enqueue and GPU time, the speed-up of the graph over
    eager with its interval over paired rounds, and the launch overhead the graph saves per
    inference. ``stop()`` true ends it early (what was measured is kept). The backend is left
    replaying its graph, as the run asked."""
    if rounds < 1 or per_round < 1 or not supports_variants(backend):
        return None
    eager, graph = Variant(EAGER), Variant(GRAPH)
    try:
        for r in range(rounds):
            if stop is not None and stop():
                break
            first, second = (eager, graph) if r % 2 == 0 else (graph, eager)
            _round(backend, first, per_round)
            _round(backend, second, per_round)
    finally:
        backend.use_graph(True)
    n = min(len(eager.round_medians), len(graph.round_medians))
    if n == 0:
        return None
    latency = ratio_interval(eager.round_medians[:n], graph.round_medians[:n], paired=True)  # graph / eager
    speedup = latency.inverse()
    e_med, g_med = eager.median, graph.median
    return {"rounds": n, "per_round": per_round, "order": "ABBA (eager first in even rounds)",
            EAGER: eager.to_json(), GRAPH: graph.to_json(), "speedup": speedup.to_json(),
            "launch_overhead_ms": figure(e_med - g_med),
            "verdict": verdict(speedup, e_med, g_med)}


def verdict(speedup: Ratio, eager_ms: float, graph_ms: float) -> str:
    """One line: how much faster the graph is, or that it makes no significant difference."""
    if not math.isfinite(speedup.value):
        return "no figures"
    if speedup.has_interval and not speedup.significant:
        return f"{NO_DIFFERENCE} ({eager_ms:.3f} -> {graph_ms:.3f} ms): launch overhead is not what limits this model"
    faster = "faster" if speedup.value >= 1 else "slower"
    return (f"the CUDA graph is {speedup.describe()} {faster} than eager ({eager_ms:.3f} -> {graph_ms:.3f} ms): "
            f"launching the work costs about {eager_ms - graph_ms:.3f} ms per inference")


def render_text(section: dict[str, Any]) -> list[str]:
    """The variants section as text lines (a table of the two sides, then the verdict)."""
    lines = [f"variants ({section['rounds']} paired rounds of {section['per_round']} inferences, ABBA)",
             f"  {'variant':<12}{'median ms':>12}{'enqueue ms':>12}{'GPU ms':>12}"]
    for key in (EAGER, GRAPH):
        side = section[key]

        def cell(v: Any) -> str:
            return f"{v:>12.4f}" if isinstance(v, (int, float)) else f"{'-':>12}"

        lines.append(f"  {side['label']:<12}{cell(side['median_ms'])}{cell(side['enqueue_ms'])}{cell(side['gpu_ms'])}")
    lines.append(f"  {section['verdict']}")
    return lines
