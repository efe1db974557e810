"""The answer of a Triton config search (Qt-free): the best variant per constraint with its gain over
the default, the Pareto front of throughput vs latency (and GPU memory), why each other variant lost,
the headline sentence and the text (``trtstudio.tritonsearch/1``, made from a
:class:`~trtstudio.triton.search.Search`, also mid-way for live views)."""

from __future__ import annotations

import math
import time
from dataclasses import asdict
from typing import Any

from trtstudio.triton.search_figures import Constraints, best_point, feasible, score

SEARCH_SCHEMA = "trtstudio.tritonsearch/1"


def pareto(points: list[tuple[str, float, float, float | None]]) -> list[str]:
    """Keys of the points no other point beats: (key, throughput, latency, memory or None); a point
    is beaten by one with throughput >= and latency <= (and memory <= where both have one), better in one."""
    front = []
    for k, tp, lat, mem in points:
        beaten = False
        for k2, tp2, lat2, mem2 in points:
            if k2 == k:
                continue
            mem_ok = mem is None or mem2 is None or mem2 <= mem
            if tp2 >= tp and lat2 <= lat and mem_ok and (tp2 > tp or lat2 < lat or (mem is not None and mem2 is not None and mem2 < mem)):
                beaten = True
                break
        if not beaten:
            front.append(k)
    return front


def representative(entry: dict[str, Any], c: Constraints) -> dict[str, Any] | None:
    """The point a variant is drawn at: its best step within the constraints, else its lowest-latency step."""
    b = best_point(entry, c)
    if b is not None:
        return b
    steps = [p for p in entry.get("steps") or [] if p["requests"] > 0 and math.isfinite(p.get(f"p{c.percentile}", math.nan))]
    return min(steps, key=lambda p: p[f"p{c.percentile}"]) if steps else None


def why_lost(entry: dict[str, Any], winner: dict[str, Any] | None, c: Constraints) -> tuple[str, str]:
    """(cause, sentence): why ``entry`` is not the answer: ``rejected``, ``error``, ``memory``,
    ``queue`` (requests waited longer than they computed) or ``compute``."""
    pct = f"p{c.percentile}"
    if entry.get("error") and not entry.get("steps"):
        return ("rejected" if str(entry["error"]).startswith("rejected") else "error"), str(entry["error"])
    mem = entry.get("gpu_memory_bytes")
    if c.gpu_memory_bytes is not None and mem is not None and mem > c.gpu_memory_bytes:
        return "memory", f"GPU memory {mem / 2**20:.0f} MiB > {c.gpu_memory_bytes / 2**20:.0f} MiB"
    best = best_point(entry, c)
    steps = entry.get("steps") or []
    over = [p for p in steps if not feasible(p, c) and p["requests"] > 0]
    at = over[0] if over else (best or (steps[-1] if steps else None))
    if at is None:
        return "error", str(entry.get("error") or "no step measured")
    cause = "queue" if at["queue_us"] > at["compute_us"] else "compute"
    where = (f"at concurrency {at['concurrency']} requests waited {at['queue_us'] / 1e3:.2f} ms in the queue "
             f"against {at['compute_us'] / 1e3:.2f} ms of compute")
    if best is None:
        if c.min_throughput is not None and steps and any(feasible(p, c) for p in steps):
            top = max((p for p in steps if feasible(p, c)), key=lambda p: p["throughput"])
            return cause, f"{top['throughput']:.1f} infer/s < {c.min_throughput:g} required; {where}"
        return cause, f"{pct} {at[pct]:.2f} ms > {c.latency_ms:g} ms already at concurrency {at['concurrency']}; {where}"
    wtp = (best_point(winner, c) or {}).get("throughput") if winner else None
    gap = f"{best['throughput']:.1f} infer/s" + (f" ({(best['throughput'] / wtp - 1) * 100:+.0f} % against the winner)" if wtp else "")
    limit = f"{pct} {at[pct]:.2f} ms over budget next; " if over and c.latency_ms is not None else ""
    return cause, f"{gap}; {limit}{where}"


def gain(best: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """Throughput gain of ``best`` over ``base`` (%), its interval from the two throughput intervals,
    and a verdict that says ``inconclusive`` when the interval holds 0."""
    g = (best["throughput"] / base["throughput"] - 1) * 100 if base["throughput"] > 0 else math.nan
    bi, di = best.get("throughput_ci"), base.get("throughput_ci")
    ci = None
    if bi and di and di[0] > 0:
        ci = [(bi[0] / di[1] - 1) * 100, (bi[1] / di[0] - 1) * 100]
    verdict = "better" if ci and ci[0] > 0 else "inconclusive" if ci is None or ci[0] <= 0 <= ci[1] else "worse"
    if ci is None and math.isfinite(g):
        verdict = "inconclusive"
    return {"percent": g, "interval": ci, "verdict": verdict}


CONSTRAINT_SETS = (("all constraints", ("latency_ms", "gpu_memory_bytes", "min_throughput")),
                   ("latency budget only", ("latency_ms",)), ("GPU memory only", ("gpu_memory_bytes",)),
                   ("no constraint", ()))


def answer(search: Any) -> dict[str, Any]:
    """The ``trtstudio.tritonsearch/1`` document of a search (also mid-way, for live views)."""
    req, c = search.request, search.request.constraints
    variants = search.variants
    default = next((v for v in variants if v["role"] == "default"), None)
    best: list[dict[str, Any]] = []
    seen = set()
    for label, keys in CONSTRAINT_SETS:
        if keys and all(getattr(c, k) is None for k in keys):
            continue
        sub = Constraints(**{k: getattr(c, k) for k in ("latency_ms", "gpu_memory_bytes", "min_throughput") if k in keys},
                          percentile=c.percentile)
        if sub.text() in seen:
            continue
        seen.add(sub.text())
        cand = [(score(v, sub), v) for v in variants]
        top = max(cand, key=lambda t: t[0], default=(0.0, None))
        row: dict[str, Any] = {"constraint": label, "text": sub.text(), "variant": None}
        if top[1] is not None and top[0] > 0:
            bp = best_point(top[1], sub) or {}
            row |= {"variant": top[1]["key"], "describe": top[1]["describe"], "concurrency": bp.get("concurrency"),
                    "throughput": bp.get("throughput"), "throughput_ci": bp.get("throughput_ci"),
                    f"p{c.percentile}": bp.get(f"p{c.percentile}"), "latency_ci": bp.get("latency_ci")}
            dp = best_point(default, sub) if default else None
            if dp:
                row["gain"] = gain(bp, dp)
        best.append(row)
    winner_key = best[0]["variant"] if best else None
    winner = search.by_key.get(winner_key) if winner_key else None
    pts = []
    for v in variants:
        r = representative(v, c)
        if r is not None:
            pts.append((v["key"], float(r["throughput"]), float(r[f"p{c.percentile}"]), v.get("gpu_memory_bytes")))
    front = pareto(pts)
    rows = []
    for v in variants:
        r = representative(v, c)
        row = {k: v[k] for k in ("key", "name", "role", "describe", "variant", "steps", "error", "early_stop",
                                 "gpu_memory_bytes", "order") if k in v}
        row |= {"load_s": v.get("load_s"), "sweep_s": v.get("sweep_s"), "sweep": v.get("sweep"),
                "point": r, "feasible": best_point(v, c) is not None, "front": v["key"] in front}
        if v["key"] != winner_key:
            row["lost"], row["lost_text"] = why_lost(v, winner, c)
        rows.append(row)
    elapsed = (search.finished or time.perf_counter()) - search.started
    doc: dict[str, Any] = {
        "schema": SEARCH_SCHEMA, "model": {"name": req.source.name, "origin": req.source.origin, "kind": req.source.kind,
                                           "default_config": req.source.config},
        "server": search.server | {"url": search.url}, "mode": req.settings.mode, "settings": req.settings.to_json(),
        "constraints": asdict(c) | {"text": c.text()}, "connection": req.connection.recorded(),
        "variants": rows, "default": default["key"] if default else None, "winner": winner_key, "best": best,
        "front": front, "measured": len(variants), "duration_s": elapsed, "error": search.error,
        "stopped": search.stopped, "notes": list(search.notes), "out": search.out}
    doc["headline"] = headline(doc)
    return doc


def headline(doc: dict[str, Any]) -> str:
    """One sentence: the best config and its gain over the default, as Model Analyzer's summary opens."""
    best = (doc.get("best") or [{}])[0]
    c = doc.get("constraints") or {}
    pct = f"p{c.get('percentile', 99)}"
    if not best.get("variant"):
        return f"No variant of {doc['model']['name']} meets {c.get('text')} ({doc.get('measured', 0)} measured)."
    g = best.get("gain")
    lat = best.get(pct)
    text = (f"{best['describe']} serves {doc['model']['name']} at {best['throughput']:.1f} infer/s"
            f" ({pct} {lat:.2f} ms, concurrency {best['concurrency']})")
    if g and math.isfinite(g["percent"]):
        ci = g.get("interval")
        ci_text = f" [{ci[0]:+.0f}, {ci[1]:+.0f}] %" if ci else ""
        text += f": {g['percent']:+.0f} %{ci_text} throughput against the default config at {c.get('text')}"
        text += f" ({g['verdict']})"
    elif best["variant"] == doc.get("default"):
        text += f": the default config is the best at {c.get('text')}"
    elif doc.get("default"):
        text += f": the default config has no step within {c.get('text')}"
    return text + "."


def _fmt_ci(ci: Any, spec: str = ".1f") -> str:
    return f"[{ci[0]:{spec}}, {ci[1]:{spec}}]" if ci else "[-]"


def render_text(doc: dict[str, Any]) -> str:
    """The headline, the best variant per constraint, the variants (front marked *, why each lost), the
    written entry and its confirmation (the CLI's text output)."""
    c = doc.get("constraints") or {}
    pct = f"p{c.get('percentile', 99)}"
    lines = [doc.get("headline", ""), "",
             f"server {doc['server'].get('url')} ({'launched by trtstudio' if doc['server'].get('launched') else 'given'}); "
             f"{doc['mode']} search, {doc['measured']} variant(s) in {doc['duration_s']:.1f} s; constraints: {c.get('text')}", ""]
    for b in doc.get("best") or []:
        if b.get("variant"):
            g = b.get("gain") or {}
            gtxt = f"  {g['percent']:+.1f} % {_fmt_ci(g.get('interval'), '+.1f')} vs default ({g['verdict']})" if g else ""
            lines.append(f"best ({b['text']}): {b['variant']}  {b['throughput']:.1f} {_fmt_ci(b.get('throughput_ci'))} infer/s, "
                         f"{pct} {b[pct]:.2f} {_fmt_ci(b.get('latency_ci'), '.2f')} ms{gtxt}")
        else:
            lines.append(f"best ({b['text']}): none")
    lines += ["", f"  {'variant':<24} {'infer/s':>9} {pct + ' ms':>9} {'conc':>5}  why not the answer"]
    for v in doc.get("variants") or []:
        p = v.get("point") or {}
        mark = "*" if v.get("front") else " "
        tag = " (default)" if v.get("role") == "default" else " (winner)" if v["key"] == doc.get("winner") else ""
        tp = f"{p['throughput']:>9.1f}" if p else f"{'-':>9}"
        lat = f"{p[pct]:>9.2f}" if p else f"{'-':>9}"
        conc = f"{p['concurrency']:>5}" if p else f"{'-':>5}"
        why = f"{v['lost']}: {v['lost_text']}" if v.get("lost") else ""
        lines.append(f"{mark} {v['key'] + tag:<24} {tp} {lat} {conc}  {why}")
    lines.append("(* on the Pareto front of throughput vs " + pct + ")")
    out = doc.get("out")
    if out:
        lines.append("")
        if out.get("path"):
            lines.append(f"wrote {out['path']} ({out.get('variant')})")
            conf = out.get("confirm") or {}
            if conf.get("loaded") and conf.get("throughput") is not None:
                lines.append(f"confirmed: loaded again ({conf.get('how')}); concurrency {conf['concurrency']}: "
                             f"{conf['throughput']:.1f} infer/s, {pct} {conf.get(pct, math.nan):.2f} ms"
                             f" ({'within' if conf.get('within_budget') else 'NOT within'} the constraints)")
            if conf.get("error"):
                lines.append(f"confirmation failed: {conf['error']}")
        else:
            lines.append(str(out.get("error")))
    lines += [f"note: {n}" for n in doc.get("notes") or []]
    if doc.get("error"):
        lines.append(f"stopped early: {doc['error']} (the variants above were measured before)")
    return "\n".join(lines)
