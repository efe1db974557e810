"""The ``trtstudio.memory/1`` document (:func:`memory_doc`) and the text ``trtstudio memory`` prints
(:func:`render_text`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trtstudio.engine.memory.categories import NOT_RECORDED, EngineMemory
from trtstudio.engine.memory.log import MIB

SCHEMA = "trtstudio.memory/1"


def _fmt(n: int | None) -> str:
    if n is None:
        return NOT_RECORDED
    if abs(n) >= MIB:
        return f"{n / MIB:,.1f} MiB"
    return f"{n:,} B"


def memory_doc(engines: Sequence[EngineMemory], prediction: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``trtstudio.memory/1`` document: one engine's categories at the top level (and each
    engine's under ``engines``), the prediction where asked."""
    doc: dict[str, Any] = {"schema": SCHEMA, **engines[0].to_json()} if len(engines) == 1 else {"schema": SCHEMA}
    doc["engines"] = [m.to_json() for m in engines] if len(engines) > 1 else []
    doc["prediction"] = prediction
    return doc


def short_source(source: str) -> str:
    """A source for people: the file's name, not its folders."""
    head, sep, rest = source.partition(": ")
    return f"{Path(head).name}{sep}{rest}" if sep and "/" in head else source  # "2 I/O tensors ..." is no path


def _engine_text(e: dict[str, Any]) -> list[str]:
    out = [f"{e['name']}:"]
    width = max(len(c["name"]) for c in e["categories"])
    for c in e["categories"]:
        note = f" ({c['note']})" if c.get("note") else ""
        src = short_source(c["source"]) + note if c["bytes"] is not None else ""
        out.append(f"  {c['name']:<{width}}  {_fmt(c['bytes']):>14}  {src}")
    ctx = e["context"]
    out.append(f"  {'context':<{width}}  {_fmt(ctx['bytes']):>14}  {short_source(ctx['source']) if ctx['bytes'] is not None else ''}")
    for p in e.get("profiles") or []:
        act = next((c for c in p["categories"] if c["name"] == "activations"), None)
        if act is not None:
            out.append(f"  profile {p['profile']}: activations {_fmt(act['bytes'])}")
    live = e.get("live")
    if live and live.get("peak_bytes"):
        out.append(f"  live activations peak {_fmt(live['peak_bytes'])} at layer {live['peak_index']} "
                   f"({live['peak_layer']}), {live['alive_count']} tensors alive")
    out += [f"  warning: {w}" for w in e.get("warnings") or []]
    return out


def render_text(doc: dict[str, Any]) -> str:
    """The text ``trtstudio memory`` prints."""
    engines = doc["engines"] or [doc]
    lines = []
    for e in engines:
        lines += _engine_text(e)
    p = doc.get("prediction")
    if p:
        lines.append(f"prediction: {p['instances']} process(es) x {p['contexts']} context(s) of each engine: "
                     f"{_fmt(p['total_bytes'])}")
        for t in p["terms"]:
            lines.append(f"  {t['what']}: {_fmt(t['bytes'])} x {t['count']} = {_fmt(t['total_bytes'])}"
                         f"{' (assumed)' if t['assumed'] else ''}")
        if p["gpu_memory_bytes"] is not None:
            spare = p["spare_bytes"]
            verdict = (f"fits in {_fmt(p['gpu_memory_bytes'])} with {_fmt(spare)} to spare" if p["fits"] else
                       f"does not fit in {_fmt(p['gpu_memory_bytes'])}: {_fmt(-spare)} over")
            lines.append(f"  {verdict}; {p['max_instances']} process(es) would fit")
        for f in p["fixes"]:
            lines.append(f"  fix: {f['fix']} saves {_fmt(f['saves_bytes'])}: {f['how']}")
    return "\n".join(lines)
