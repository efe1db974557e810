"""At a glance: the first section of every report, what a stakeholder reads in a minute.

:func:`at_a_glance` reads a :class:`~trtstudio.report.model.Report` (the same analysis the window
shows: its layer rows, findings, run statistics, memory verdict and accuracy) and returns the
``summary`` object of the JSON report::

    {headline, time_by_type, top_layers, findings_by_severity, verdicts, next_steps}

- ``headline``: median and p99 latency, throughput, at which shapes, on which hardware and runtime,
  with ``text`` saying it in one sentence. Where the figures come from decides the hardware and
  runtime named: a run's are the machine's and backend's that ran it; an engine's own profile
  (trtexec's timings and throughput) names the GPU and TensorRT of the engine's files
  (``engine.provenance``: ``not recorded`` where they are silent), never the machine writing the
  report. Figures in sentences and tables have three significant digits (``fmt.sig``).
- ``time_by_type`` / ``top_layers``: where the time goes (the top layer types and the top 5 layers
  with their share and the ONNX nodes they came from); without any time, the layer mix by count.
- ``findings_by_severity``: counts per severity and per rule, with the time at stake where the
  profile tells it, and the nodes TensorRT rejected.
- ``verdicts``: ``[{topic, verdict, text, evidence}]`` for jitter, memory and each precision variant.
- ``next_steps``: ``[{action, estimated_gain_ms, basis}]`` ranked by estimated gain: blocking steps
  (rejected nodes) first, then by gain, steps without an estimate last. Every estimate names what it
  rests on; none is shown as a measurement.

Pure data in, pure data out: no Qt, no I/O. The writers render it.
"""

from __future__ import annotations

import math
from typing import Any

from trtstudio.fmt import fmt_ms3, fmt_sig

TOP_TYPES = 5
NO_PROFILE = "layer count (no profile)"  # the basis of "where the time goes" without any per-layer time
TOP_LAYERS = 5
_SEVERITIES = ("error", "warning", "info")
UNSTABLE_COV_PERCENT = 2.5  # measure.stats' threshold for "unstable"

# rule -> (action, fraction of the time at stake an estimate counts on, what the estimate rests on)
_STEP_FOR_RULE: dict[str, tuple[str, float | None, str]] = {
    "reformat": ("Remove reformat layers: give adjacent layers one precision and layout, or set the engine's "
                 "I/O formats to the model's", 1.0,
                 "the profiled time of the reformat layers; removing them saves at most that"),
    "precision_fallback": ("Move FP32 islands and unfused Q/DQ to the engine's precision (FP16/INT8 casts or "
                           "Q/DQ placement)", 0.5,
                           "half of the profiled time of the layers concerned: FP16/INT8 kernels take about "
                           "half the FP32 time on tensor-core GPUs (an estimate, not a measurement)"),
    "no_tensor_cores": ("Let convolutions and GEMMs use tensor cores (aligned channels, FP16/INT8 inputs)", 0.5,
                        "half of the profiled time of the layers on CUDA-core kernels (an estimate)"),
    "unaligned_channels": ("Pad channels to a multiple of 8 (FP16) or 16 (INT8)", 0.3,
                           "30 % of the profiled time of the unaligned layers: the padding tensor-core kernels "
                           "do (an estimate)"),
    "shape_ops": ("Fold shape computations into constants (static shapes, onnxsim/onnxslim)", 1.0,
                  "the profiled time of the shape layers; folding removes them"),
    "plugin": ("Replace plugins with native layers where TensorRT has them", None,
               "plugins block fusion; their gain depends on the layer that replaces them"),
    "cpu_fallback": ("Make the nodes that fell back to the CPU run on the GPU provider", 1.0,
                     "the profiled CPU time of those nodes; on the GPU they would take a fraction of it"),
}


def _d(x: Any) -> dict[str, Any]:
    """``x`` when it is a dict, else an empty one (a damaged session's field reads as absent)."""
    return x if isinstance(x, dict) else {}


def _l(x: Any) -> list[Any]:
    """``x`` when it is a list, else an empty one."""
    return x if isinstance(x, list) else []


def _num(x: Any) -> float | None:
    """A finite float, else None (NaN, None, text)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _fmt_ms(ms: float | None) -> str:
    return fmt_ms3(ms)


def _hardware(rep: Any) -> str:
    """Where a run ran: its remote target, else the GPUs (else the CPU) of the session's machine."""
    target = _d(_d(_d(rep.run).get("config")).get("remote")).get("target")
    if target:
        return str(target)
    env = _d(rep.environment)
    gpus = [str(g["name"]) for g in _l(env.get("gpus")) if isinstance(g, dict) and g.get("name")]
    if gpus:
        return str(gpus[0]) + (f" (+{len(gpus) - 1})" if len(gpus) > 1 else "")
    return str(env.get("cpu") or "unknown hardware")


def engine_provenance(rep: Any) -> dict[str, Any] | None:
    """The engine's GPU and TensorRT from its own files (``engine.provenance``): the report's stored
    ``engine.provenance``, else worked out from its build section (reports written before it was
    stored); None without an engine."""
    eng = _d(rep.engine)
    if not eng and not _d(rep.build).get("device") and not _d(rep.build).get("versions"):
        return None
    stored = _d(eng.get("provenance"))
    if stored.get("gpu") and stored.get("tensorrt"):
        return stored
    from trtstudio.engine.model import EngineInfo
    from trtstudio.engine.provenance import provenance

    build = _d(rep.build)
    info = EngineInfo(versions={str(k): str(v) for k, v in _d(build.get("versions")).items() if v},
                      device=_d(build.get("device")), build_settings=_d(build.get("settings")),
                      sources=[str(x) for x in _l(eng.get("sources"))])
    return provenance(info)


def _runtime(rep: Any) -> str | None:
    run = _d(rep.run)
    versions = _d(_d(rep.build).get("versions")) | _d(_d(rep.environment).get("versions"))
    backend = run.get("backend")
    if backend:
        runtime = {"ort": "onnxruntime", "ort-cuda": "onnxruntime", "ort-trt": "onnxruntime",
                   "tensorrt": "tensorrt", "rtx": "tensorrt_rtx", "torch": "torch",
                   "torch-cuda": "torch"}.get(str(backend), str(backend))
        version = versions.get(runtime)
        return f"{backend} ({runtime} {version})" if isinstance(version, str) else str(backend)
    for key in ("tensorrt", "tensorrt_rtx"):
        if versions.get(key):
            return f"{key} {versions[key]}"
    return None


def _shapes_text(shapes: Any) -> str | None:
    if not isinstance(shapes, dict) or not shapes:
        return None
    return ", ".join(f"{k} {'x'.join(str(d) for d in v)}" for k, v in shapes.items() if isinstance(v, list | tuple)) or None


def headline(rep: Any) -> dict[str, Any]:
    """Median/p99 latency, throughput, shapes, hardware and runtime, and one sentence saying them."""
    run = _d(rep.run)
    lat = _d(run.get("latency_ms"))
    source = "run"
    if not lat and isinstance(_d(rep.engine).get("latency_ms"), dict):
        lat, source = rep.engine["latency_ms"], "engine profile"
    median = _num(lat.get("median"))
    p99 = _num(lat.get("p99"))
    tp = run.get("throughput")
    throughput = _num(tp.get("inferences_per_s") if isinstance(tp, dict) else tp)
    if source == "engine profile":  # trtexec's throughput, in the engine's own metadata
        throughput = _num(lat.get("throughput_qps"))
    shapes = run.get("shapes") if isinstance(run.get("shapes"), dict) and run.get("shapes") else None
    prov = engine_provenance(rep)
    from_engine = source == "engine profile" or (median is None and prov is not None)
    hardware = str(prov["gpu"]) if from_engine and prov else _hardware(rep)
    runtime = str(prov["tensorrt"]) if from_engine and prov else _runtime(rep)
    out = {"median_ms": median, "p99_ms": p99, "throughput": throughput, "shapes": shapes,
           "batch": _batch(shapes), "hardware": hardware, "runtime": runtime,
           "samples": run.get("samples") if isinstance(run.get("samples"), int) else _count(lat),
           "source": source if (median is not None) else None,
           "provenance": "the engine's files" if from_engine else "the run"}
    if prov is not None:
        out["engine_provenance"] = {k: prov.get(k) for k in ("gpu", "tensorrt", "cuda")}
    if median is None:
        layers = len(_l(rep.layers))
        built = f" ({_engine_where(hardware, str(runtime))})" if prov is not None else ""
        out["text"] = (f"No latency measured; the engine has {layers:,} layers{built}." if layers
                       else "No latency measured and no engine: nothing to sum up yet.")
        return out
    parts = [f"Median {_fmt_ms(median)}, p99 {_fmt_ms(p99)}"]
    if throughput is not None:
        parts.append(f"{fmt_sig(throughput)} inferences/s")
    where: list[str | None]
    if from_engine:
        where = [f"(trtexec, from the engine's files) {_engine_where(hardware, str(runtime))}"]
    else:
        where = [f"at {_shapes_text(shapes)}" if _shapes_text(shapes) else None, f"on {hardware}",
                 f"with {runtime}" if runtime else None]
    out["text"] = ", ".join(parts) + " " + " ".join(w for w in where if w) + "."
    return out


def _count(lat: dict[str, Any]) -> int | None:
    n = _num(lat.get("count"))
    return int(n) if n is not None else None


def _engine_where(gpu: str, runtime: str) -> str:
    """'on NVIDIA A100 80GB PCIe (SM 8.0), TensorRT version not recorded': the engine's files' words."""
    from trtstudio.engine.provenance import NOT_RECORDED

    g = f"on {gpu}" if gpu != NOT_RECORDED else "GPU not recorded"
    r = f"with {runtime}" if runtime != NOT_RECORDED else "TensorRT version not recorded"
    return f"{g}, {r}"


def _batch(shapes: Any) -> int | None:
    if not isinstance(shapes, dict) or not shapes:
        return None
    firsts = {int(v[0]) for v in shapes.values() if isinstance(v, list | tuple) and v and type(v[0]) is int}
    return firsts.pop() if len(firsts) == 1 else None


def where_time_goes(rep: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """(time_by_type top entries, top layers, basis): shares of the profiled time, else the layer mix."""
    rows = [r for r in _l(rep.layers) if isinstance(r, dict)]
    timed = [r for r in rows if _num(r.get("time_ms")) is not None]
    total = sum(float(r["time_ms"]) for r in timed)
    run_rows = [r for r in _l(getattr(rep, "run_profile", None)) if isinstance(r, dict) and _num(r.get("time_ms"))]
    if not timed and run_rows:  # the engine has no profile; the run's per-node profile says where its time went
        return _by_type_of(run_rows, f"{_d(rep.run).get('backend') or 'the run'}'s per-node profile "
                                     "(not the engine's time)")
    if timed and total > 0:
        groups = [g for g in _l(rep.time_by_type) if isinstance(g, dict) and _num(g.get("time_ms")) is not None]
        by_type = [{"type": str(g.get("key")), "time_ms": float(g["time_ms"]), "share": float(g["time_ms"]) / total,
                    "layers": g.get("layers")} for g in groups[:TOP_TYPES]]
        top = sorted(timed, key=lambda r: -float(r["time_ms"]))[:TOP_LAYERS]
        layers = [{"index": r.get("index"), "name": str(r.get("name")), "type": str(r.get("type")),
                   "precision": r.get("precision"), "time_ms": float(r["time_ms"]), "share": float(r["time_ms"]) / total,
                   "onnx_nodes": [str(n) for n in _l(r.get("onnx_nodes"))]} for r in top]
        return by_type, layers, "profile"
    counts: dict[str, int] = {}
    for r in rows:
        counts[str(r.get("type") or "unknown")] = counts.get(str(r.get("type") or "unknown"), 0) + 1
    n = sum(counts.values())
    mix = [{"type": k, "time_ms": None, "share": v / n, "layers": v}
           for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_TYPES]]
    return mix, [], NO_PROFILE


def _rank(severity: str) -> int:
    return _SEVERITIES.index(severity) if severity in _SEVERITIES else len(_SEVERITIES)


def _by_type_of(rows: list[dict[str, Any]], basis: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """Time by type and the slowest rows of profile ``rows`` (each with time_ms, type, onnx_nodes)."""
    total = sum(float(r["time_ms"]) for r in rows) or 1.0
    sums: dict[str, list[float]] = {}
    for r in rows:
        acc = sums.setdefault(str(r.get("type") or "unknown"), [0.0, 0])
        acc[0] += float(r["time_ms"])
        acc[1] += 1
    by_type = [{"type": k, "time_ms": v[0], "share": v[0] / total, "layers": int(v[1])}
               for k, v in sorted(sums.items(), key=lambda kv: -kv[1][0])[:TOP_TYPES]]
    top = sorted(rows, key=lambda r: -float(r["time_ms"]))[:TOP_LAYERS]
    layers = [{"index": r.get("index"), "name": str(r.get("name")), "type": str(r.get("type")),
               "precision": r.get("precision"), "time_ms": float(r["time_ms"]), "share": float(r["time_ms"]) / total,
               "onnx_nodes": [str(n) for n in _l(r.get("onnx_nodes")) if n]} for r in top]
    return by_type, layers, basis


def findings_by_severity(rep: Any) -> dict[str, Any]:
    """Counts per severity and per rule, the time at stake per rule, and the rejected nodes."""
    rows = [r for r in _l(rep.layers) if isinstance(r, dict)]
    time_of = {r.get("index"): _num(r.get("time_ms")) for r in rows}
    total = sum(t for t in time_of.values() if t is not None)
    counts = dict.fromkeys(_SEVERITIES, 0)
    rules: dict[str, dict[str, Any]] = {}
    rejected: list[str] = []
    items = [f for f in _l(rep.findings) if isinstance(f, dict)]
    if not items:  # a run without an engine: its CPU fallbacks live on the layer rows
        items = [{"kind": k, "severity": r.get("severity") or "info", "layer_index": r.get("index")}
                 for r in rows for k in _l(r.get("findings"))]
    for f in items:
        sev = str(f.get("severity") or "info")
        counts[sev] = counts.get(sev, 0) + 1
        kind = str(f.get("kind") or "other")
        entry = rules.setdefault(kind, {"rule": kind, "severity": sev, "count": 0, "layers": set()})
        entry["count"] += 1
        if _rank(sev) < _rank(entry["severity"]):
            entry["severity"] = sev
        if isinstance(f.get("layer_index"), int):
            entry["layers"].add(f["layer_index"])
        if kind == "unsupported_node":
            rejected.extend(str(n) for n in _l(f.get("nodes")) if n)
    by_rule = []
    for entry in rules.values():
        times = [time_of.get(i) for i in entry.pop("layers")]
        known = [t for t in times if t is not None]
        at_stake = sum(known) if known else None
        entry["time_ms"] = at_stake
        entry["share"] = at_stake / total if at_stake is not None and total > 0 else None
        by_rule.append(entry)
    by_rule.sort(key=lambda e: (_rank(e["severity"]), -(e["time_ms"] or 0.0), e["rule"]))
    return {"counts": counts, "by_rule": by_rule, "rejected_nodes": list(dict.fromkeys(rejected))}


def _verdict(topic: str, verdict: str, text: str, **evidence: Any) -> dict[str, Any]:
    from trtstudio.measure.verdict import Verdict

    return Verdict(topic, verdict, text, evidence).to_json()


def verdicts(rep: Any) -> list[dict[str, Any]]:
    """Jitter, memory and accuracy verdicts in words, each with the figures it rests on."""
    out: list[dict[str, Any]] = []
    run = _d(rep.run)
    lat = _d(run.get("latency_ms"))
    cov = _num(lat.get("cov"))
    if cov is not None:
        stable = cov <= UNSTABLE_COV_PERCENT
        jitter = _num(run.get("jitter_ms"))
        out.append(_verdict(
            "jitter", "stable" if stable else "unstable",
            (f"Latency is steady: coefficient of variation {cov:.1f} % over {run.get('samples')} inferences."
             if stable else
             f"Latency varies: coefficient of variation {cov:.1f} % (over {UNSTABLE_COV_PERCENT} %), "
             f"p99 - p50 = {_fmt_ms(jitter)}; lock clocks or close other work before comparing."),
            cov_percent=cov, jitter_ms=jitter, samples=run.get("samples"), limit_percent=UNSTABLE_COV_PERCENT))
    leak = _d(rep.leak)
    if leak.get("verdict") and leak.get("verdict") != "unknown":
        word = str(leak["verdict"])
        text = str(leak.get("text") or leak.get("reason") or "")
        out.append(_verdict("memory", word, text or f"Memory is {word}.", **_d(leak.get("evidence"))))
    out.extend(_accuracy_verdicts(rep.accuracy))
    return out


def _accuracy_verdicts(acc: Any) -> list[dict[str, Any]]:
    if not isinstance(acc, dict):
        return []
    out = []
    for v in _l(acc.get("variants")):
        if not isinstance(v, dict) or not isinstance(v.get("passed"), bool):
            continue
        a = _d(v.get("accuracy"))
        cos = _num(a.get("cosine") if not isinstance(a.get("cosine"), dict) else a["cosine"].get("min"))
        word = "pass" if v["passed"] else "fail"
        why = "; ".join(str(r) for r in _l(v.get("reasons"))) if not v["passed"] else ""
        text = (f"{v.get('name')}: {'within' if v['passed'] else 'outside'} the accuracy budget"
                + (f" (cosine {cos:.5f})" if cos is not None else "") + (f": {why}" if why else "") + ".")
        out.append(_verdict(f"accuracy {v.get('name')}", word, text, cosine=cos, reasons=_l(v.get("reasons"))))
    return out


def next_steps(rep: Any, findings: dict[str, Any]) -> list[dict[str, Any]]:
    """Actions ranked by estimated gain, each with what the estimate rests on."""
    steps: list[dict[str, Any]] = []
    if findings["rejected_nodes"]:
        n = len(findings["rejected_nodes"])
        steps.append({"action": f"Make the {n} node{'s' * (n != 1)} TensorRT rejects buildable (decompose the op, "
                                "fold constants, or add a plugin)", "estimated_gain_ms": None,
                      "basis": "blocking: the engine cannot take the model as it is", "blocking": True})
    for e in findings["by_rule"]:
        rule = _STEP_FOR_RULE.get(e["rule"])
        if rule is None:
            continue
        action, fraction, basis = rule
        gain = e["time_ms"] * fraction if fraction is not None and e["time_ms"] is not None else None
        steps.append({"action": action, "estimated_gain_ms": gain,
                      "basis": basis if gain is not None else "no profiled time for these layers: " + basis,
                      "rule": e["rule"], "layers": e["count"]})
    if not _l(rep.layers) and _d(rep.run):
        steps.append({"action": "Build a TensorRT engine of this model and profile it beside this run",
                      "estimated_gain_ms": None, "basis": "no engine analysed: where the time goes is not known"})
    steps.sort(key=lambda s: (not s.get("blocking", False), s["estimated_gain_ms"] is None,
                              -(s["estimated_gain_ms"] or 0.0)))
    return steps


def at_a_glance(rep: Any) -> dict[str, Any]:
    """The ``summary`` object of a report (see the module docstring)."""
    by_type, top, basis = where_time_goes(rep)
    findings = findings_by_severity(rep)
    return {"headline": headline(rep), "time_by_type": by_type, "top_layers": top, "time_basis": basis,
            "timed": basis != NO_PROFILE,
            "findings_by_severity": findings, "verdicts": verdicts(rep), "next_steps": next_steps(rep, findings)}
