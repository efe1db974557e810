"""The phases of a build (:data:`PHASES`): a log's stated durations laid end to end
(:func:`lay_end_to_end`), seconds by phase (:func:`phase_totals`), and the phase a TensorRT
progress-monitor name stands for (:func:`canonical_phase`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from trtstudio.engine.buildtime.log import BuildPass

UNSTATED = "not itemised by the log"
PHASES = ("parsing", "graph construction", "graph optimization", "layer fusion", "tactic timing",
          "kernel compilation", "weight transformation", "multi-stream splitting", "memory planning",
          "serialization", "builder (other)", UNSTATED)


def lay_end_to_end(passes: list[BuildPass], parse_seconds: float | None) -> list[dict[str, Any]]:
    """Rows ``{phase, start_s, seconds, share, pass}`` laid end to end (logs state durations)."""
    rows: list[dict[str, Any]] = []
    t = 0.0
    if parse_seconds is not None:
        rows.append({"phase": "parsing", "start_s": 0.0, "seconds": parse_seconds, "pass": None})
        t = parse_seconds
    done = [p for p in passes if p.total is not None]
    for i, p in enumerate(done, 1):
        for name, seconds in p.phases:
            rows.append({"phase": name, "start_s": t, "seconds": seconds, "pass": i if len(done) > 1 else None})
            t += seconds
        rest = (p.total or 0.0) - p.stated()
        if rest > 0:
            rows.append({"phase": UNSTATED, "start_s": t, "seconds": rest, "pass": i if len(done) > 1 else None})
            t += rest
    total = t or 1.0
    for r in rows:
        r["share"] = round(r["seconds"] / total, 4)
        r["start_s"] = round(r["start_s"], 6)
        r["seconds"] = round(r["seconds"], 6)
    return rows


def phase_totals(timeline: Iterable[dict[str, Any]]) -> dict[str, float]:
    """Seconds by phase name, in the order phases first appear."""
    out: dict[str, float] = {}
    for r in timeline:
        out[r["phase"]] = out.get(r["phase"], 0.0) + float(r["seconds"])
    return out


# The words of a TensorRT progress-monitor phase name -> its phase, the first that matches; TensorRT-RTX
# compiles its Myelin subgraphs inside "Determining refit engines" (its verbose log states "Subgraph
# compilation completed in" within that phase, for most of its time): kernel compilation
_PHASE_WORDS = (
    (("pars",), "parsing"),
    (("fusion", "fusing"), "layer fusion"),
    (("subgraph", "compil", "myelin", "kernel", "refit engines"), "kernel compilation"),
    (("refit", "weight"), "weight transformation"),
    (("serializ",), "serialization"),
    (("timing", "tactic", "cost", "reformat", "autotun"), "tactic timing"),
    (("clon", "construct"), "graph construction"),
    (("optimiz",), "graph optimization"),
    (("stream",), "multi-stream splitting"),
    (("block", "memory"), "memory planning"),
)


def canonical_phase(name: str) -> str:
    """One of :data:`PHASES` for a TensorRT progress-monitor phase name."""
    n = name.lower()
    return next((phase for words, phase in _PHASE_WORDS if any(w in n for w in words)), "builder (other)")
