"""``trtexec --exportTimes`` JSON: one record per inference with start/end times and latencyMs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trtstudio.engine.model import EngineInfo
from trtstudio.engine.readers import loads_json, register
from trtstudio.errors import InputError


def _sniff(head: str, path: Path) -> bool:
    s = head.lstrip()
    if not s.startswith("["):
        return False
    first = s[:600]
    return "latencyMs" in first or "startComputeMs" in first or "startEnqMs" in first


def percentile(sorted_vals: list[float], q: float) -> float:
    """Linear-interpolated percentile (0-100) of an already sorted list."""
    n = len(sorted_vals)
    if n == 1:
        return sorted_vals[0]
    pos = (n - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, n - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def stats(values: list[float], prefix: str = "") -> dict[str, float]:
    """count/mean/median/p90/p95/p99/min/max of ``values`` (milliseconds), keys with ``prefix``."""
    if not values:
        return {}
    v = sorted(values)
    n = len(v)
    return {
        prefix + "count": float(n),
        prefix + "mean": sum(v) / n,
        prefix + "median": percentile(v, 50),
        prefix + "p90": percentile(v, 90),
        prefix + "p95": percentile(v, 95),
        prefix + "p99": percentile(v, 99),
        prefix + "min": v[0],
        prefix + "max": v[-1],
    }


def _col(recs: list[dict[str, Any]], key: str) -> list[float]:
    return [float(r[key]) for r in recs if isinstance(r.get(key), (int, float))]


@register("trtexec-times", patterns=("*.timing.json", "*times*.json"), sniff=_sniff, kind="times")
def read(path: Path, text: str) -> EngineInfo:
    """Read per-inference timings into EngineInfo.latency_ms (host latency and GPU compute)."""
    doc = loads_json(path, text)
    if not isinstance(doc, list) or not all(isinstance(r, dict) for r in doc):
        raise InputError(path, "unknown timing schema: expected a JSON list of per-inference objects")
    if not doc:
        raise InputError(path, "no timing records")
    if not any("latencyMs" in r or "computeMs" in r for r in doc[:10]):
        raise InputError(path, 'unknown timing schema: expected records with "latencyMs" and "computeMs"')
    out: dict[str, float] = {}
    out.update(stats(_col(doc, "latencyMs")))
    out.update(stats(_col(doc, "computeMs"), "compute_"))
    out.update(stats(_col(doc, "h2dMs"), "h2d_"))
    out.update(stats(_col(doc, "d2hMs"), "d2h_"))
    s_key = "startEnqMs" if "startEnqMs" in doc[0] else "startEnqueueMs"
    e_key = "endEnqMs" if "endEnqMs" in doc[0] else "endEnqueueMs"
    enq = [float(r[e_key]) - float(r[s_key]) for r in doc if s_key in r and e_key in r]
    out.update(stats(enq, "enqueue_"))
    series = {k: v for k, v in (("latency", _col(doc, "latencyMs")), ("compute", _col(doc, "computeMs"))) if v}
    return EngineInfo(latency_ms=out, samples_ms=series)
