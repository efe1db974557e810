"""The build-log document for people (:func:`render_text`, :func:`render_timeline`)."""

from __future__ import annotations

from typing import Any

from trtstudio.engine.buildtime.timeline import phase_totals
from trtstudio.engine.memory.log import MIB


def seconds_text(s: float | None) -> str:
    """Seconds for people: ``1.234 s``, ``2.5 min`` from 100 s, ``-`` for None."""
    if s is None:
        return "-"
    return f"{s:.3f} s" if s < 100 else f"{s / 60:.1f} min"


def _mib(b: int | None) -> str:
    return "-" if b is None else f"{b / MIB:.0f} MiB"


def render_timeline(timeline: list[dict[str, Any]], width: int = 30) -> list[str]:
    """Lines ``phase  seconds  share  bar`` by phase (passes summed)."""
    totals = phase_totals(timeline)
    whole = sum(totals.values()) or 1.0
    lines = []
    for name, s in totals.items():
        bar = "#" * max(1 if s > 0 else 0, round(width * s / whole))
        lines.append(f"  {name:<26} {seconds_text(s):>11} {100 * s / whole:5.1f}%  {bar}")
    return lines


def render_text(doc: dict[str, Any]) -> str:
    """The build-log document for people: total, phases, cache, memory, the costly layers."""
    out = [f"{doc.get('source') or 'build log'}: {doc['lines']} lines"]
    if doc.get("total_seconds") is not None:
        n = len(doc.get("passes") or [])
        out.append(f"build took {seconds_text(doc['total_seconds'])} (Engine generation completed in"
                   + (f", {n} builder passes)" if n > 1 else ")"))
    if doc.get("timeline"):
        out.append("phases")
        out += render_timeline(doc["timeline"])
    c = doc.get("cache") or {}
    out.append(f"timing cache: {c.get('hits', 0)} hits, {c.get('misses', 0)} misses"
               + (f" ({c['kind']} cache)" if c.get("kind") else ""))
    m = doc.get("memory") or {}
    out.append(f"memory: host peak {_mib(m.get('host_peak_bytes'))}, GPU peak {_mib(m.get('gpu_peak_bytes'))}; "
               f"TensorRT allocators' peaks CPU {_mib(m.get('allocator_cpu_peak_bytes'))}, "
               f"GPU {_mib(m.get('allocator_gpu_peak_bytes'))}")
    top = doc.get("top_layers") or []
    if top:
        out.append(f"layers by build time (top {len(top)} of {len(doc.get('layers') or [])})")
        by_name = {lay["name"]: lay for lay in doc.get("layers") or []}
        for t in top:
            lay = by_name.get(t["layer"], {})
            sp = lay.get("speedup_over_runner_up")
            out.append(f"  {seconds_text(t['seconds']):>11}  {t['layer']}  ({lay.get('tactics_tried', 0)} tactics"
                       + (f"; chosen {sp:.2f}x faster than the runner-up" if sp else "") + ")")
            for s in t["settings"]:
                if s["saving_s"]:
                    out.append(f"      {s['setting']}: saves {seconds_text(s['saving_s'])}")
    for w in doc.get("warnings") or []:
        out.append(f"note: {w}")
    return "\n".join(out)
