"""A scenario document (``trtstudio.scenario/1``) as text for people: the CLI prints it without
``--json`` and the scenario dialog shows it. Works on the document alone, so a saved one reads the same."""

from __future__ import annotations

from typing import Any


def _mib(n: Any) -> str:
    return "-" if n is None else f"{n / 2**20:,.0f} MiB"


def _ms(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}"


def top_cause_text(model: dict[str, Any]) -> str | None:
    """'a.onnx: 1.84x slower together, mostly CPU cores (62% of the extra time): ...' for one
    contention model; None where no slowdown was measured."""
    s = model.get("slowdown") or {}
    if s.get("median") is None:
        return None
    if not s.get("causes"):
        return f"{model['model']}: {s['median']:.2f}x together, {s.get('summary') or 'no measurable slowdown'}"
    return f"{model['model']}: {s['median']:.2f}x slower together, {s['summary']}"


def _contention(doc: dict[str, Any]) -> list[str]:
    lines = [f"isolation {doc.get('isolation', 'thread')}   streams {doc.get('streams')}   iterations {doc.get('iterations')}"
             f"   cpu load {doc.get('cpu_load_ms')} ms",
             f"{'model':<28}{'device':<10}{'alone p50':>11}{'p99':>9}{'together p50':>14}{'p99':>9}{'slowdown p50':>14}{'p99':>7}"]
    for m in doc["models"]:
        a, t, s = m.get("alone", {}), m.get("together", {}), m.get("slowdown", {})
        sd = (f"{s['median']:>13.2f}x{s['p99']:>6.2f}x" if s.get("median") and s.get("p99") else f"{'-':>14}{'-':>7}")
        lines.append(f"{m['model'][:27]:<28}{m.get('device', '-'):<10}{_ms(a.get('median')):>11}{_ms(a.get('p99')):>9}"
                     f"{_ms(t.get('median')):>14}{_ms(t.get('p99')):>9}{sd}")
    tp = doc.get("throughput", {})
    lines.append(f"throughput: alone (sum) {tp.get('alone_sum_per_s', 0):.1f}/s, together {tp.get('together_per_s', 0):.1f}/s")
    for dev, v in doc.get("timeline", {}).get("devices", {}).items():
        lines.append(f"{dev}: {v['copy_overlapped_share']:.0%} of copy time overlapped compute")
    why = [t for t in (top_cause_text(m) for m in doc["models"]) if t]
    if why:
        lines.append("why:")
        lines.extend(f"  {t}" for t in why)
    return lines


def _cycles(doc: dict[str, Any]) -> list[str]:
    lines = [f"{'cycle':>5}{'GPU used':>14}{'CUDA free':>14}{'largest block':>15}{'host RSS':>12}"]
    for c in doc["cycles"]:
        lines.append(f"{c['cycle']:>5}{_mib(c.get('gpu_used_bytes')):>14}{_mib(c.get('cuda_free_bytes')):>14}"
                     f"{_mib(c.get('largest_block_bytes')):>15}{_mib(c.get('host_rss_bytes')):>12}")
    v = doc.get("verdict") or {}
    lines.append(f"verdict: {v.get('verdict')}: {v.get('reason')}")
    return lines


def _soak(doc: dict[str, Any]) -> list[str]:
    lines = [f"{'window':>6}{'t (s)':>9}{'count':>9}{'p50 ms':>10}{'p99 ms':>10}{'RSS':>12}"]
    for w in doc["windows"]:
        lines.append(f"{w['window']:>6}{w['t_end_s']:>9.1f}{w['count']:>9}{_ms(w['median']):>10}{_ms(w['p99']):>10}"
                     f"{_mib(w.get('host_rss_bytes')):>12}")
    d = doc.get("drift") or {}
    if d:
        lines.append(f"drift: median x{d.get('median_ratio') or 0:.3f}, p99 x{d.get('p99_ratio') or 0:.3f} (last vs first window)")
    for key, m in (doc.get("memory") or {}).items():
        lines.append(f"memory {key}: {m['slope_mib_per_hour']:+.1f} MiB/hour ({m['leak']['verdict']})")
    return lines


def _coldstart(doc: dict[str, Any]) -> list[str]:
    lines = [f"{'model':<28}{'open ms':>10}{'first ms':>10}{'second ms':>11}{'file':>12}"]
    for m in doc["models"]:
        lines.append(f"{m['model'][:27]:<28}{m['open_ms']:>10.1f}{_ms(m.get('first_ms')):>10}{_ms(m.get('second_ms')):>11}"
                     f"{_mib(m['file_bytes']):>12}")
    return lines


_KINDS = {"contention": _contention, "cycles": _cycles, "soak": _soak, "coldstart": _coldstart}


def render_text(doc: dict[str, Any]) -> str:
    """The scenario as a readable summary."""
    lines = [f"scenario {doc['kind']}", *_KINDS[doc["kind"]](doc)]
    for note in doc.get("notes", []):
        lines.append(f"note: {note}")
    if doc.get("stopped"):
        lines.append("stopped before the end; the figures above are what was measured")
    return "\n".join(lines)
