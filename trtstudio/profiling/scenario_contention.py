"""Contention, Qt-free: N models (or N copies of one) each run alone, then all at once; each in its
own process (``isolation='process'``, the default, as a server runs model instances) or as a thread
of this process (``'thread'``); on CUDA each on a dedicated stream, or (threads) all on one shared
stream per device; optionally with CPU work per inference standing in for pre/post-processing.

Reports each model's latency alone and together, the slowdown of median and p99, jitter and
throughput, and the slowdown's causes with their shares and evidence (``scenario_causes``). With
threads, the models also run together as processes, in rounds alternating with threads
(``gil_check``), to measure what the interpreter lock costs. A model that fails to load, raises, or whose process dies ends the scenario
cleanly: what was measured is kept and ``failure`` names the model and phase.
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from trtstudio.measure.devices import usable_cpus
from trtstudio.profiling.scenario_causes import CauseContext, explain
from trtstudio.profiling.scenario_common import (
    ModelSpec,
    Opener,
    ScenarioResult,
    ScenarioState,
    failure_from,
    open_model,
    ratio,
    stats_of,
    unique_labels,
)
from trtstudio.profiling.scenario_lanes import ContentionConfig, LaneResult, ThreadLanes, share_streams
from trtstudio.profiling.scenario_procs import ProcessLanes
from trtstudio.profiling.timeline import Timeline

__all__ = ["ContentionConfig", "run_contention", "share_streams"]


def run_contention(
    specs: Sequence[ModelSpec],
    config: ContentionConfig | None = None,
    state: ScenarioState | None = None,
    opener: Opener = open_model,
) -> ScenarioResult:
    """Each model alone (one after another), then all together; see the module docstring. With
    process isolation ``opener`` must be picklable (a module-level function)."""
    cfg = config or ContentionConfig()
    cfg.check()
    state = state or ScenarioState()
    labels = unique_labels(specs)
    result = ScenarioResult("contention", extra={"isolation": cfg.isolation, "streams": cfg.streams,
                                                 "iterations": cfg.iterations, "cpu_load_ms": cfg.cpu_load_ms})
    lanes: ThreadLanes | ProcessLanes = (ProcessLanes if cfg.isolation == "process" else ThreadLanes)(specs, labels, opener)
    sampler: Any = None
    try:
        result.failure = lanes.open(state)
        if result.failure is not None or state.is_stop_requested():
            result.stopped = result.failure is None
            return result
        per_model = [{"model": label, "path": s.path, **{k: m[k] for k in ("backend", "device")}}
                     for s, label, m in zip(specs, labels, lanes.models, strict=True)]
        for m, label in zip(lanes.models, labels, strict=True):
            result.notes.extend(f"{label}: {n}" for n in m["notes"])
        result.notes.extend(lanes.prepare(cfg.streams))
        timeline, rows = _timeline(cfg, lanes, labels)
        result.timeline = timeline
        sampler, sampler_t0 = _start_sampler(cfg, lanes, state)
        together = _run_phases(lanes, cfg, state, per_model, rows, timeline, result)
        if isinstance(lanes, ThreadLanes) and cfg.gil_check and len(specs) > 1 and result.failure is None and not result.stopped:
            _gil_check(lanes, opener, cfg, state, per_model, result)
        result.notes.extend(lanes.close())
        if sampler is not None:
            sampler.stop()
        gpus = _gpu_figures(per_model, timeline, sampler, sampler_t0, together)
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
        _finish(per_model, result, CauseContext(cfg.isolation, usable_cpus(), [s.options.get("threads") for s in specs], gpus, load))
        if sampler is not None:
            result.extra["gpus"] = sampler.summary()
        return result
    finally:
        if sampler is not None:
            sampler.stop()
        result.notes.extend(lanes.close())
        state.phase = "finished"


def _timeline(cfg: ContentionConfig, lanes: ThreadLanes | ProcessLanes,
              labels: Sequence[str]) -> tuple[Timeline | None, list[int | None]]:
    if not cfg.timeline:
        return None, [None] * len(labels)
    timeline = Timeline(cfg.timeline_capacity)
    rows: list[int | None] = []
    for m, label in zip(lanes.models, labels, strict=True):
        dev = m["device"]
        where = ("shared stream" if cfg.streams == "shared" else "stream") if dev != "cpu" else (
            "process" if cfg.isolation == "process" else "worker")
        rows.append(timeline.add_row(f"{label} ({where})", dev))
    return timeline, rows


def _start_sampler(cfg: ContentionConfig, lanes: ThreadLanes | ProcessLanes, state: ScenarioState) -> tuple[Any, float]:
    """The run's one GPU sampler (on ``state.gpu_sampler`` for a view to show), when a model runs on a GPU."""
    if not cfg.gpu_sampling or all(m["device"] == "cpu" for m in lanes.models):
        return None, 0.0
    from trtstudio.profiling.scenario_devices import GpuSampler

    sampler = GpuSampler(interval_ms=100)
    t0 = time.perf_counter()  # the sampler's time zero (its t_s are seconds from its creation)
    state.gpu_sampler = sampler.start()
    return sampler, t0


def _run_phases(lanes: ThreadLanes | ProcessLanes, cfg: ContentionConfig, state: ScenarioState,
                per_model: list[dict[str, Any]], rows: list[int | None], timeline: Timeline | None,
                result: ScenarioResult) -> tuple[float, float] | None:
    """Alone phases, then together; the together phase's (start, end) perf_counter times."""
    n, labels = len(per_model), lanes.labels
    phases = [(f"alone {labels[i]}", [i]) for i in range(n)] if cfg.alone else []
    phases.append(("together", list(range(n))))
    t_origin, window = time.perf_counter(), None
    for phase, idx in phases:
        if state.is_stop_requested():
            result.stopped = True
            break
        state.phase = phase
        state.status = {"phase": phase, "models": [labels[i] for i in idx]}
        t0 = time.perf_counter()
        done = lanes.run_phase(idx, cfg, state, timeline, rows, t_origin)
        key = "together" if phase == "together" else "alone"
        if key == "together":
            window = (t0, time.perf_counter())
        for i, lane in zip(idx, done, strict=True):
            per_model[i][key] = stats_of(lane.values if lane.values is not None else np.zeros(0), lane.active_s,
                                         lane.parts, lane.cpu_s)
            per_model[i].setdefault("_values", {})[key] = lane.values  # for the slowdown's interval
        failed = next((lane for lane in done if lane.failure is not None), None)
        if failed is not None:
            result.failure = failure_from(failed.failure, failed.label, phase)  # type: ignore[arg-type]
            break
        if state.is_stop_requested():
            result.stopped = True
            break
    return window


GIL_ROUNDS = 4  # ABBA pairs of (threads together, processes together) in the interpreter lock check


def _gil_check(threads: ThreadLanes, opener: Opener, cfg: ContentionConfig, state: ScenarioState,
               per_model: list[dict[str, Any]], result: ScenarioResult) -> None:
    """The models together as threads and, opened once more each in its own process, together as
    processes, in ABBA rounds (so a machine whose load changes meanwhile weighs on both alike):
    ``together_processes`` and ``interpreter_lock_check`` (the medians of both sides) per model. On a
    GPU both copies of each model are loaded meanwhile."""
    try:
        pickle.dumps(opener)
    except Exception:  # noqa: BLE001 - a closure or lambda cannot go to a process
        result.notes.append("the interpreter lock was not measured: the scenario's opener cannot be sent to a process")
        return
    if cfg.streams == "shared":
        result.notes.append("the interpreter lock is measured against processes on streams of their own: "
                            "it includes what sharing one stream costs")
    procs = ProcessLanes(threads.specs, threads.labels, opener)
    state.phase = "interpreter lock check: the models together as threads and as processes"
    n = len(per_model)
    sides: dict[str, list[list[LaneResult]]] = {"thread": [], "process": []}
    try:
        failure = procs.open(state)
        if failure is not None:
            result.notes.append(f"the interpreter lock was not measured: {failure.one_line()}")
            return
        each = replace(cfg, timeline=False, iterations=max(10, cfg.iterations // GIL_ROUNDS))
        for k in range(GIL_ROUNDS):
            for side in (("thread", "process") if k % 2 == 0 else ("process", "thread")):
                if state.is_stop_requested():
                    return
                runner: ThreadLanes | ProcessLanes = threads if side == "thread" else procs
                done = runner.run_phase(list(range(n)), each, state, None, [None] * n, time.perf_counter(), live=False)
                if any(lane.failure is not None for lane in done):
                    result.notes.append("the interpreter lock was not measured: a model failed during the check")
                    return
                sides[side].append(done)
    finally:
        result.notes.extend(procs.close())
    for i, m in enumerate(per_model):
        m["together_processes"] = _pooled([r[i] for r in sides["process"]])
        m["interpreter_lock_check"] = {"rounds": GIL_ROUNDS, "threads": _pooled([r[i] for r in sides["thread"]]),
                                       "processes": m["together_processes"]}


def _pooled(lanes: list[LaneResult]) -> dict[str, Any]:
    """One phase's statistics over the lanes of several rounds of one model."""
    values = np.concatenate([lane.values for lane in lanes if lane.values is not None])
    active = sum(lane.active_s for lane in lanes)
    cpu = [lane.cpu_s for lane in lanes]
    parts = {k: float(np.mean([lane.parts[k] for lane in lanes])) if all(lane.parts.get(k) is not None for lane in lanes)
             else None for k in lanes[0].parts}
    return stats_of(values, active, parts, None if None in cpu else sum(c for c in cpu if c is not None))


def _gpu_figures(per_model: list[dict[str, Any]], timeline: Timeline | None, sampler: Any, sampler_t0: float,
                 window: tuple[float, float] | None) -> dict[str, dict[str, float | None]]:
    """Per device in use: kernel time over wall time together, NVML utilisation together, copy overlap."""
    overlap = timeline.summary()["devices"] if timeline is not None else {}
    util = _nvml_util(sampler, sampler_t0, window) if sampler is not None and window is not None else {}
    out: dict[str, dict[str, float | None]] = {}
    for dev in {m["device"] for m in per_model if m["device"] != "cpu"}:
        together = [m["together"] for m in per_model if m["device"] == dev and m.get("together")]
        wall = max((t["count"] / t["throughput_per_s"] for t in together if t.get("throughput_per_s")), default=0.0)
        kernel_s = sum(t.get("compute_ms", 0.0) * t["count"] / 1e3 for t in together if t.get("compute_ms") is not None)
        index = int(dev.split(":")[1]) if ":" in dev else 0
        out[dev] = {"kernel_share": kernel_s / wall if wall > 0 and kernel_s > 0 else None,
                    "nvml_util_percent": util.get(index),
                    "copy_overlapped_share": overlap.get(dev, {}).get("copy_overlapped_share")}
    return out


def _nvml_util(sampler: Any, t0: float, window: tuple[float, float]) -> dict[int, float]:
    out = {}
    for index, s in sampler.snapshot().items():
        t, u = s["t_s"] + t0, s["util_percent"]
        sel = (t >= window[0]) & (t <= window[1]) & np.isfinite(u)
        if sel.any():
            out[index] = float(u[sel].mean())
    return out


def _finish(per_model: list[dict[str, Any]], result: ScenarioResult, ctx: CauseContext) -> None:
    for m in per_model:
        values = m.pop("_values", {})
        if "alone" in m and "together" in m:
            m["slowdown"] = _slowdown(m["alone"], m["together"])
            m["slowdown"].update(_slowdown_interval(str(m.get("model", "model")), values.get("alone"), values.get("together")))
    explain(per_model, ctx)
    result.models = per_model
    result.extra["throughput"] = _totals(per_model)


def _slowdown(alone: dict[str, Any], together: dict[str, Any]) -> dict[str, Any]:
    """Together / alone for median and p99 latency (> 1: slower together), jitter change, and the
    throughput kept (together / alone)."""
    return {
        "median": ratio(alone.get("median"), together.get("median")),
        "p99": ratio(alone.get("p99"), together.get("p99")),
        "jitter_ms_change": (together["jitter_ms"] - alone["jitter_ms"])
        if together.get("jitter_ms") is not None and alone.get("jitter_ms") is not None else None,
        "throughput_kept": ratio(alone.get("throughput_per_s"), together.get("throughput_per_s")),
    }


INTERVAL_MAX_SAMPLES = 100_000  # more are thinned evenly: the bootstrap's cost grows with them


def _slowdown_interval(label: str, alone: Any, together: Any) -> dict[str, Any]:
    """The median slowdown's 95 % interval (``measure.ratio.ratio_interval``: together / alone, a
    block bootstrap over both phases' latencies) and its verdict (``slower`` or ``no significant
    difference``; ``inconclusive`` without samples)."""
    from trtstudio.measure.ratio import NO_DIFFERENCE, ratio_interval
    from trtstudio.measure.verdict import INCONCLUSIVE, Verdict

    def thin(v: Any) -> np.ndarray:
        a = np.asarray(v if v is not None else [], dtype=np.float64)
        return a[:: max(1, a.size // INTERVAL_MAX_SAMPLES)]

    r = ratio_interval(thin(alone), thin(together), "median")
    topic = f"slowdown of {label} together"
    if not r.has_interval:
        verdict = Verdict(topic, INCONCLUSIVE, f"{label}: too few latencies to put an interval on the slowdown")
    elif not r.significant:
        verdict = Verdict(topic, NO_DIFFERENCE, f"{label}: {NO_DIFFERENCE} alone and together ({r.describe()})")
    else:
        word = "slower" if r.value > 1 else "faster"
        verdict = Verdict(topic, word, f"{label} is {r.describe()} {word} together than alone (median)")
    return {"median_interval": r.to_json(), "verdict": verdict.to_json()}


def _totals(models: list[dict[str, Any]]) -> dict[str, float]:
    alone = sum(m["alone"]["throughput_per_s"] for m in models if "alone" in m)
    together = sum(m["together"]["throughput_per_s"] for m in models if "together" in m)
    return {"alone_sum_per_s": alone, "together_per_s": together}
