"""Why a model is slower together than alone: the causes of a contention slowdown, each with its
share of the extra time and the evidence, from figures the scenario measured (pure, Qt-free).

The extra time per inference (median together - median alone) is handed out in this order, each
cause taking at most what is left:

- ``copy_engine``: the growth of H2D + D2H time (CUDA events), with the share of copy time that
  overlapped compute on the device (the timeline).
- ``gpu_busy``: the growth of kernel time (CUDA events) when the model is not launch-bound, with the
  GPU's busy share together (kernel time over wall time, and NVML utilisation).
- ``interpreter_lock`` (thread isolation): the same models together as threads and as processes,
  in alternating rounds (the scenario's ``gil_check``): log(threads / processes) of log(slowdown), a
  ratio of figures taken side by side, so a machine whose load changed since the phases weighs on
  neither.
- ``cpu_cores``: for a CPU model whose own CPU time was measured alone and together (process
  isolation, or the threads' interpreter lock check), the cores it got while it ran, alone and
  together: mean latency = CPU time per inference / cores received, so fewer cores explain
  log(cores alone / cores together) of log(mean slowdown) (that share of the median's extra time); the growth of CPU time per inference (caches,
  memory bandwidth) is left to ``other``. Otherwise (GPU models' host side) the cores each model keeps
  busy alone (CPU time per inference over median latency), summed, against the cores this process may
  use: the expected extra is alone x (demand/cores - 1). The evidence names the intra-op threads asked
  for and the machine's load average (other processes take cores too).
- ``enqueue_bound``: for a model whose host launch time is at least its GPU time, the rest of the
  host-side growth: the host sets the pace, so whatever slows the host slows the model.
- ``other``: what none of the measured causes explains (memory bandwidth, caches, scheduling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

NO_SLOWDOWN = 1.03  # a median ratio under this is reported as no slowdown
CAUSE_WORDS = {
    "copy_engine": "copies (the copy engines are shared)",
    "gpu_busy": "the GPU itself (the kernels share it)",
    "interpreter_lock": "sharing one Python process (the interpreter lock)",
    "cpu_cores": "CPU cores",
    "enqueue_bound": "kernel launches on the host",
    "other": "something the scenario does not measure",
}


@dataclass
class CauseContext:
    """What the causes need beyond each model's figures."""

    isolation: str
    cores: int  # CPU cores this process may use
    threads: list[int | None] = field(default_factory=list)  # per model: intra-op threads asked for
    gpus: dict[str, dict[str, float | None]] = field(default_factory=dict)  # per device: kernel_share, nvml_util_percent, copy_overlapped_share
    load_average: float | None = None  # the machine's 1-minute load average at the end of the run


def _f(d: dict[str, Any], key: str) -> float:
    v = d.get(key)
    return float(v) if v is not None else 0.0


def explain(models: list[dict[str, Any]], ctx: CauseContext) -> None:
    """Set ``slowdown.causes`` (ordered by share) and ``slowdown.summary`` on every model measured alone and together."""
    for m in models:
        s = m.get("slowdown")
        if s is None or s.get("median") is None:
            continue
        if s["median"] < NO_SLOWDOWN:
            s["causes"], s["summary"] = [], f"no slowdown beyond {NO_SLOWDOWN - 1:.0%}"
            continue
        s["causes"] = sorted(_causes(m, models, ctx), key=lambda c: -c["share"])
        top = s["causes"][0]
        s["summary"] = f"mostly {CAUSE_WORDS[top['cause']]} ({top['share']:.0%} of the extra time): {top['evidence']}"


def _causes(m: dict[str, Any], models: list[dict[str, Any]], ctx: CauseContext) -> list[dict[str, Any]]:
    a, t = m["alone"], m["together"]
    delta = _f(t, "median") - _f(a, "median")
    found: list[tuple[str, float, str]] = []
    rest = delta

    def claim(cause: str, ms: float, evidence: str) -> None:
        nonlocal rest
        ms = max(0.0, min(ms, rest))
        if ms > 0:
            found.append((cause, ms, evidence))
            rest -= ms

    gpu = ctx.gpus.get(m.get("device", "cpu"), {})
    on_gpu = m.get("device", "cpu") != "cpu" and a.get("compute_ms") is not None and t.get("compute_ms") is not None
    host_bound = on_gpu and (_f(a, "enqueue_ms") >= 0.9 * _f(a, "compute_ms") or _f(t, "enqueue_ms") >= 0.9 * _f(t, "compute_ms"))
    if on_gpu:
        copy_a, copy_t = _f(a, "h2d_ms") + _f(a, "d2h_ms"), _f(t, "h2d_ms") + _f(t, "d2h_ms")
        overlap = gpu.get("copy_overlapped_share")
        claim("copy_engine", copy_t - copy_a, f"H2D+D2H {copy_a:.3f} -> {copy_t:.3f} ms per inference"
              + (f"; {overlap:.0%} of copy time overlapped compute" if overlap is not None else ""))
        if not host_bound:
            claim("gpu_busy", _f(t, "compute_ms") - _f(a, "compute_ms"), _gpu_evidence(a, t, gpu))
    check = m.get("interpreter_lock_check") if ctx.isolation == "thread" else None
    if check:
        th, pr = _f(check["threads"], "median"), _f(check["processes"], "median")
        slow = _f(t, "median") / _f(a, "median")
        if th > pr > 0 and slow > 1.0:  # threads / processes, in the same rounds: its log share of the slowdown
            claim("interpreter_lock", delta * min(1.0, math.log(th / pr) / math.log(slow)),
                  f"together, median {th:.3f} ms as threads vs {pr:.3f} ms as processes "
                  f"({check['rounds']} alternating rounds of each)")
    cpu = _cpu_cores(m, models, ctx, on_gpu)
    if cpu is not None:
        claim("cpu_cores", *cpu)
    if host_bound:
        claim("enqueue_bound", rest, f"host launch {_f(a, 'enqueue_ms'):.3f} ms vs GPU {_f(a, 'compute_ms'):.3f} ms alone, "
              f"{_f(t, 'enqueue_ms'):.3f} vs {_f(t, 'compute_ms'):.3f} ms together: the host sets the pace"
              + (f"; GPU busy {gpu['nvml_util_percent']:.0f}% (NVML)" if gpu.get("nvml_util_percent") is not None else ""))
    procs = t if ctx.isolation == "process" else m.get("together_processes") or {}
    work = (f"; CPU time per inference {_f(a, 'cpu_ms_per_inference'):.2f} -> {_f(procs, 'cpu_ms_per_inference'):.2f} ms"
            if a.get("cpu_ms_per_inference") and procs.get("cpu_ms_per_inference") else "")
    claim("other", rest, "not explained by copies, kernels, the interpreter lock, CPU cores or launches "
          f"(memory bandwidth, caches, scheduling){work}")
    return [{"cause": c, "share": ms / delta, "evidence": e} for c, ms, e in found]


def _cores_busy(alone: dict[str, Any]) -> float:
    """Cores a model keeps busy while it runs: CPU ms per inference over its median latency."""
    return _f(alone, "cpu_ms_per_inference") / _f(alone, "median") if _f(alone, "median") > 0 else 0.0


def _gpu_evidence(a: dict[str, Any], t: dict[str, Any], gpu: dict[str, float | None]) -> str:
    text = f"kernel time {_f(a, 'compute_ms'):.3f} -> {_f(t, 'compute_ms'):.3f} ms per inference"
    if gpu.get("kernel_share") is not None:
        text += f"; GPU busy {gpu['kernel_share']:.0%} of wall time together (kernel time / wall)"
    if gpu.get("nvml_util_percent") is not None:
        text += f", NVML {gpu['nvml_util_percent']:.0f}%"
    return text


def _cpu_cores(m: dict[str, Any], models: list[dict[str, Any]], ctx: CauseContext,
               on_gpu: bool) -> tuple[float, str] | None:
    """(ms, evidence) of the CPU cores cause, or None where it does not apply.

    A CPU model whose process ran only it, alone and together (processes, or the interpreter lock
    check of threads), is measured: its latency is its CPU time per inference over the cores it got
    while it ran, so the fewer cores it got together explain log(cores alone / cores together) of
    log(slowdown). Otherwise the cores the models keep busy alone are summed against the cores here."""
    a = m["alone"]
    procs = m["together"] if ctx.isolation == "process" else m.get("together_processes") or {}
    threads = _threads_text(ctx)
    if not on_gpu and _f(a, "cores_used") > 0 and _f(procs, "cores_used") > 0:
        # mean latency = CPU time per inference / cores received, exactly (both from one phase's totals)
        slow, fewer = _f(procs, "mean") / _f(a, "mean"), _f(a, "cores_used") / _f(procs, "cores_used")
        if slow <= 1.0 or fewer <= 1.0:
            return None
        ms = (_f(procs, "median") - _f(a, "median")) * min(1.0, math.log(fewer) / math.log(slow))
        return ms, (f"while it ran it got {_f(a, 'cores_used'):.2f} cores alone and {_f(procs, 'cores_used'):.2f} together: "
                    f"{len(models)} models{threads}, on {ctx.cores} cores{_load_text(ctx)}")
    demand = sum(_cores_busy(x["alone"]) for x in models if x.get("alone"))
    if demand <= ctx.cores or a.get("cpu_ms_per_inference") is None:
        return None
    return _f(a, "median") * (demand / ctx.cores - 1.0), (
        f"{len(models)} models{threads} keep {demand:.1f} cores busy, {ctx.cores} available{_load_text(ctx)}; alone this "
        f"one used {_f(a, 'cpu_ms_per_inference'):.2f} ms CPU per {_f(a, 'median'):.2f} ms inference ({_cores_busy(a):.1f} cores)")


def _threads_text(ctx: CauseContext) -> str:
    asked = [t for t in ctx.threads if t]
    if asked and len(asked) == len(ctx.threads):
        return f", intra-op threads {' + '.join(map(str, ctx.threads))}"
    return ", intra-op threads: the runtime's default (one per core)" if not asked else ""


def _load_text(ctx: CauseContext) -> str:
    return f"; load average {ctx.load_average:.1f}: other processes want cores too" if ctx.load_average else ""
