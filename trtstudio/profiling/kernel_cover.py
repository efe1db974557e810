"""What a per-layer run's recorded kernels say about the inference: how much of it the GPU was busy,
whether the model is bound by launching its kernels, and what recording them cost.

``profile --per-layer`` on torch-cuda puts each CUDA kernel on its ONNX node; the kernels' summed
time per inference against the timed run's median says how much of the inference the GPU spent
computing. Under half, the rest is the host launching kernels (and Python between them): the
model is launch-bound, and replaying a captured CUDA graph (``--cuda-graph``) is what removes that
cost; where the run compared the graph with eager (its ``variants`` section) the measured effect
is quoted, else the flag is named as the way to measure it. Recording is a pass of its own, after
the timed run: ``recorded_vs_run`` is its median over the timed run's, what recording cost.
"""

from __future__ import annotations

from typing import Any

LAUNCH_BOUND_SHARE = 0.5  # kernels covering less of the inference than this: launch-bound
RECORDING_BUDGET = 1.10  # the recorded pass's median over the timed run's that counts as free


def summarise(rec: dict[str, Any], run_median_ms: float | None, variants: dict[str, Any] | None = None,
              cuda_graph: bool = False) -> dict[str, Any]:
    """``rec`` (a backend's ``kernel_coverage``) with ``recorded_vs_run``, ``gpu_busy_share``
    (kernel time per inference over the run's median), ``bound`` (``launch`` below
    :data:`LAUNCH_BOUND_SHARE`, else ``gpu``; None without figures) and ``text`` (one or two
    sentences). ``variants``: the run's graph-against-eager section, quoted where it measured one;
    ``cuda_graph``: the run replayed a graph already."""
    out = dict(rec)
    recorded = out.get("recorded_median_ms")
    if recorded and run_median_ms:
        out["recorded_vs_run"] = recorded / run_median_ms
    kernels = out.get("total_ms")
    lines: list[str] = []
    out["gpu_busy_share"] = out["bound"] = None
    if kernels and run_median_ms:
        share = min(kernels / run_median_ms, 1.0)
        out["gpu_busy_share"] = share
        out["bound"] = "launch" if share < LAUNCH_BOUND_SHARE else "gpu"
        head = (f"GPU kernels cover {100 * share:.0f} % of the inference ({kernels:.3g} of {run_median_ms:.3g} ms "
                f"per inference)")
        if kernels > run_median_ms:  # the recorded kernels ran longer than the timed inference took
            head = (f"GPU kernels fill the inference (their recorded time, {kernels:.3g} ms, exceeds the timed run's "
                    f"median, {run_median_ms:.3g} ms: recording slowed them)")
        if out["bound"] == "gpu":
            lines.append(f"{head}: the GPU's work sets the latency; the slowest nodes below are where time goes.")
        else:
            idle = f"the GPU waits {100 * (1 - share):.0f} % of the time for the host to launch kernels"
            graph = (variants or {}).get("verdict") if variants else None
            if graph:
                fix = f"--cuda-graph measured: {graph}"
            elif cuda_graph:
                fix = "the run already replays a CUDA graph: what remains is between inferences (copies, synchronisation)"
            else:
                fix = "replaying a captured CUDA graph removes launch cost: run with --cuda-graph to measure it"
            lines.append(f"{head}: launch-bound, {idle}; {fix}.")
    ratio = out.get("recorded_vs_run")
    if ratio:
        cost = (f"recording kernels ({out.get('recorder') or 'recorder'}) ran at {ratio:.2f}x the timed run's median"
                + ((" (within the 1.10x budget)" if ratio >= 0.9 else
                    " (below 1: the timed run itself was noisy; see its CoV)") if ratio <= RECORDING_BUDGET else
                   ": the latency figures above are the timed run's, the per-node times are the kernels' own durations"))
        lines.append(cost)
    out["text"] = " ".join(lines) if lines else None
    return out


def render_text(rec: dict[str, Any]) -> list[str]:
    """The kernel-recording section of ``profile --per-layer`` as text lines."""
    lines = []
    share = rec.get("share")
    head = f"kernels: recorded by {rec.get('recorder') or '?'}"
    if rec.get("kernels_per_inference") is not None:
        head += f", {rec['kernels_per_inference']:.0f} per inference"
    if share is not None:
        head += f", {100 * share:.1f} % of kernel time on ONNX nodes"
    lines.append(head)
    if rec.get("text"):
        lines.append(f"  {rec['text']}")
    return lines
