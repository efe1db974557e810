"""The figures of a Triton config search's variants (Qt-free): the constraints (``--latency-budget
p99=20ms``, ``--gpu-memory``, ``--min-throughput``), a sweep step's point with its intervals, whether
it meets the constraints, a variant's best point and its score (:mod:`trtstudio.triton.search`
measures, :mod:`trtstudio.triton.search_answer` ranks)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from trtstudio.errors import InputError


@dataclass
class Constraints:
    """``latency_ms`` at ``percentile`` (``--latency-budget p99=20ms``), GPU memory (bytes) and a
    minimum throughput (inferences/s); None: not constrained."""

    latency_ms: float | None = None
    percentile: int = 99
    gpu_memory_bytes: float | None = None
    min_throughput: float | None = None

    def text(self) -> str:
        parts = [f"p{self.percentile} <= {self.latency_ms:g} ms"] if self.latency_ms is not None else []
        parts += [f"GPU memory <= {self.gpu_memory_bytes / 2**20:.0f} MiB"] if self.gpu_memory_bytes is not None else []
        parts += [f">= {self.min_throughput:g} infer/s"] if self.min_throughput is not None else []
        return ", ".join(parts) or "no constraint"


def parse_budget(text: str) -> tuple[int, float]:
    """``p99=20ms``, ``p95=5``, ``20ms`` or ``20`` -> (percentile, ms); InputError naming --latency-budget."""
    m = re.fullmatch(r"\s*(?:p(50|90|95|99)\s*=\s*)?([0-9.]+)\s*(ms|s|us)?\s*", text.lower())
    if not m:
        raise InputError("--latency-budget", f"{text!r} is not pNN=VALUEms (e.g. p99=20ms)")
    value = float(m.group(2)) * {"ms": 1.0, "s": 1e3, "us": 1e-3, None: 1.0}[m.group(3)]
    if not value > 0:
        raise InputError("--latency-budget", "must be positive")
    return int(m.group(1) or 99), value


def parse_bytes(text: str, what: str = "--gpu-memory") -> float:
    """``4GiB``, ``512MiB``, ``2e9`` (bytes) -> bytes; InputError naming ``what``."""
    m = re.fullmatch(r"\s*([0-9.eE+]+)\s*(b|kb|kib|mb|mib|gb|gib)?\s*", text.lower())
    scale = {None: 1, "b": 1, "kb": 1e3, "kib": 2**10, "mb": 1e6, "mib": 2**20, "gb": 1e9, "gib": 2**30}
    try:
        value = float(m.group(1)) * scale[m.group(2)] if m else math.nan
    except ValueError:
        value = math.nan
    if not value > 0:
        raise InputError(what, f"{text!r} is not a size (e.g. 4GiB, 512MiB)")
    return value


# -- figures of a variant ----------------------------------------------------------------------

_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)  # Student t, 97.5 %, df 1..10


def t_interval(values: list[float]) -> list[float] | None:
    """95 % Student-t interval of the mean of ``values`` (None for fewer than two)."""
    v = np.asarray([x for x in values if math.isfinite(x)], dtype=float)
    if v.size < 2:
        return None
    t = _T975[v.size - 2] if v.size - 1 <= len(_T975) else 1.96
    half = float(t * v.std(ddof=1) / math.sqrt(v.size))
    return [float(v.mean() - half), float(v.mean() + half)]


def percentile_interval(lat_ms: np.ndarray, pct: int) -> list[float] | None:
    """95 % interval of the ``pct`` percentile of ``lat_ms`` (in time order): the project's block
    bootstrap (``profiling.sweep.statistic_interval``); None where it has none."""
    from trtstudio.profiling.sweep import statistic_interval

    lat = np.asarray(lat_ms, dtype=float)
    if lat.size < 20:
        return None
    lo, hi = statistic_interval(lat, f"p{pct}")
    return None if lo is None or hi is None else [float(lo), float(hi)]


def step_point(step: dict[str, Any], pct: int) -> dict[str, Any]:
    """What the search keeps of one sweep step: concurrency, throughput and its interval, the
    percentile and its interval, queue and compute per request (µs)."""
    from trtstudio.triton.sweep import step_figures

    f = step_figures(step)
    lat = step.get("latency_ms") or {}
    p = lat.get(f"p{pct}")
    return {"concurrency": f["value"], "requests": f["requests"], "throughput": f["throughput"],
            "throughput_ci": step.get("throughput_ci"), "p50": f["p50"], "p99": f["p99"], f"p{pct}": math.nan if p is None else float(p),
            "latency_ci": step.get("latency_ci"), "queue_us": f["queue_us"], "compute_us": f["compute_us"],
            "stable": f["stable"], "error": step.get("error")}


def feasible(point: dict[str, Any], c: Constraints) -> bool:
    lat = point.get(f"p{c.percentile}")
    return (point["requests"] > 0 and not point.get("error")
            and (c.latency_ms is None or (lat is not None and math.isfinite(lat) and lat <= c.latency_ms)))


def best_point(entry: dict[str, Any], c: Constraints) -> dict[str, Any] | None:
    """The variant's highest-throughput step within the constraints (None when none is)."""
    if entry.get("error") and not entry.get("steps"):
        return None
    mem = entry.get("gpu_memory_bytes")
    if c.gpu_memory_bytes is not None and mem is not None and mem > c.gpu_memory_bytes:
        return None
    ok = [p for p in entry.get("steps") or [] if feasible(p, c)]
    if not ok:
        return None
    best = max(ok, key=lambda p: p["throughput"])
    if c.min_throughput is not None and best["throughput"] < c.min_throughput:
        return None
    return best


def score(entry: dict[str, Any] | None, c: Constraints) -> float:
    b = best_point(entry, c) if entry else None
    return float(b["throughput"]) if b else 0.0


# -- loading variants --------------------------------------------------------------------------
