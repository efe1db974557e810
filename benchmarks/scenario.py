"""Budgets of the scenario runner, printed as JSON lines.

overhead: one model through the scenario runner (contention with one model, timeline on) against the
  plain profile runner (profiling/runner.py) on the same open backend: paired trials in ABBA order,
  the plain runner on a worker thread as the scenario runs each model (and, for reference, on the
  main thread); the overhead is the median of the per-trial ratios with a bootstrap 95 % interval.
  Budget: <= 2 %. Verdict: met (interval within 2 %), not met (interval above), undecided.
probe:    the largest-block probe (cudaMalloc bisection, capped at 8 GiB) on a GPU, repeated; budget
  <= 50 ms; three uncapped probes for comparison. Also on a heap fragmented on purpose (every other
  1 GiB block of a row freed) to see what the probe finds.

    python benchmarks/scenario.py overhead [--backend ort|torch|torch-cuda] [--onnx sample|FILE | --mlp] [--batch B]
                                           [--n 100] [--trials 150]
    python benchmarks/scenario.py probe [--repeats 20] [--device 0]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SAMPLE = ROOT / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"
BUDGET_PERCENT = 2.0


def _emit(doc: dict[str, Any]) -> None:
    print(json.dumps(doc, default=float), flush=True)


class _Borrowed:
    """The open backend lent to the scenario: its close() is left to the benchmark."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.name, self.notes = inner.name, []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def close(self) -> None:
        pass


def bootstrap_median_ci(values: list[float], resamples: int = 10000, seed: int = 0) -> tuple[float, float]:
    """95 % bootstrap confidence interval of the median of ``values``."""
    v = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    meds = np.median(v[rng.integers(0, len(v), size=(resamples, len(v)))], axis=1)
    lo, hi = np.percentile(meds, [2.5, 97.5])
    return float(lo), float(hi)


def verdict(ci: tuple[float, float], budget_percent: float) -> str:
    """met: the whole interval within the budget; not met: the whole interval beyond it."""
    if ci[1] <= budget_percent:
        return "met"
    if ci[0] > budget_percent:
        return "not met"
    return "undecided"


def _mlp_model(tmp: str) -> str:
    """The FP16 MLP of benchmarks/scenario_gpu.py as a torch.export program (GPU-bound, not launch-bound)."""
    import torch

    class MLP(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = torch.nn.Linear(4096, 4096)
            self.b = torch.nn.Linear(4096, 4096)

        def forward(self, x: Any) -> Any:
            return self.b(torch.relu(self.a(x)))

    batch = torch.export.Dim("batch", min=1, max=65536)
    ep = torch.export.export(MLP().half().eval(), (torch.randn(16, 4096, dtype=torch.half),),
                             dynamic_shapes={"x": {0: batch}})
    path = os.path.join(tmp, "mlp_fp16.pt2")
    torch.export.save(ep, path)
    return path


def overhead(args: argparse.Namespace) -> dict[str, Any]:
    """Paired, interleaved trials: each trial runs the plain runner on a worker thread (as the window
    runs it, and as the scenario runs each model) and the scenario runner, in ABBA order, on the same
    open backend; the overhead is the median over trials of (scenario / plain - 1), with a bootstrap
    95 % interval. The plain runner on the main thread (as the CLI runs it) is measured in each trial
    too and reported beside it."""
    from trtstudio.backends.base import open_backend
    from trtstudio.profiling import scenario as sc
    from trtstudio.profiling.runner import RunConfig, Runner

    if args.mlp:
        model = _mlp_model(tempfile.mkdtemp())
        shapes: dict[str, Any] = {"x": (args.batch, 4096)}
    elif args.onnx == "sample":
        model, shapes = str(SAMPLE), {"input": (args.batch, 3, 224, 224)}
    elif args.onnx:
        model, shapes = args.onnx, {}
    else:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from profiling import make_model  # the profiling benchmark's MatMul model

        model, shapes = os.path.join(tempfile.mkdtemp(), "m.onnx"), {}
        make_model(model, 256)
    options: dict[str, Any] = {"threads": args.threads} if args.backend == "ort" and args.threads else {}
    backend = open_backend(args.backend, model, **options)
    backend.prepare_inputs(shapes)
    borrowed = _Borrowed(backend)

    def plain_run() -> float:
        return float(Runner(backend, RunConfig(warmup=20, iterations=args.n)).run().latency()["median"])

    def plain_in_thread() -> float:
        box: list[float] = []
        t = threading.Thread(target=lambda: box.append(plain_run()))
        t.start()
        t.join()
        return box[0]

    def scenario_run() -> float:
        s = sc.run_contention([sc.ModelSpec(model, args.backend)],
                              sc.ContentionConfig(iterations=args.n, warmup=20, alone=False, gpu_sampling=False),
                              opener=lambda spec: borrowed)
        if hasattr(backend, "set_time_origin"):  # the plain runner's trials must not pay for the timeline
            backend.set_time_origin(None)
        return float(s.models[0]["together"]["median"])

    over_thread: list[float] = []  # percent, per trial
    over_main: list[float] = []
    medians: dict[str, list[float]] = {"plain_thread": [], "scenario": [], "plain_main": []}
    for trial in range(args.trials):
        if trial % 2 == 0:  # ABBA: A B | B A | A B ...
            t, q = plain_in_thread(), scenario_run()
        else:
            q, t = scenario_run(), plain_in_thread()
        m = plain_run()
        medians["plain_thread"].append(t)
        medians["scenario"].append(q)
        medians["plain_main"].append(m)
        over_thread.append((q / t - 1.0) * 100.0)
        over_main.append((q / m - 1.0) * 100.0)
        _emit({"bench": "scenario_overhead_trial", "trial": trial, "plain_thread_median_ms": t,
               "scenario_median_ms": q, "plain_main_median_ms": m})
    backend.close()
    ci_t, ci_m = bootstrap_median_ci(over_thread), bootstrap_median_ci(over_main)
    return {
        "bench": "scenario_overhead", "backend": args.backend, "model": Path(model).name, "batch": args.batch,
        "n": args.n, "trials": args.trials, "design": "paired ABBA trials on one open backend",
        "median_ms": {k: float(np.median(v)) for k, v in medians.items()},
        "overhead_percent": float(np.median(over_thread)), "overhead_ci95_percent": ci_t,
        "overhead_vs_main_thread_percent": float(np.median(over_main)), "overhead_vs_main_thread_ci95_percent": ci_m,
        "budget_percent": BUDGET_PERCENT, "verdict": verdict(ci_t, BUDGET_PERCENT),
        "verdict_vs_main_thread": verdict(ci_m, BUDGET_PERCENT),
    }


def probe(args: argparse.Namespace) -> dict[str, Any]:
    from trtstudio.profiling.scenario_memory import cuda_mem_info, cuda_try_alloc, largest_block

    try_alloc = cuda_try_alloc(args.device)
    info = cuda_mem_info(args.device)
    if try_alloc is None or info is None:
        return {"bench": "largest_block_probe", "skipped": "no CUDA device with cuda-python or pycuda here"}
    from trtstudio.profiling.scenario_memory import DEFAULT_CAP

    times, results = [], []
    for _ in range(args.repeats):
        free, _total = cuda_mem_info(args.device) or info
        r = largest_block(try_alloc, free, cap=DEFAULT_CAP)
        times.append(r.elapsed_ms)
        results.append(r)
    uncapped = [largest_block(try_alloc, (cuda_mem_info(args.device) or info)[0], budget_ms=5000) for _ in range(3)]
    out: dict[str, Any] = {
        "bench": "largest_block_probe", "device": args.device, "free_bytes": info[0], "total_bytes": info[1],
        "cap_bytes": DEFAULT_CAP, "median_ms": float(np.median(times)), "max_ms": float(np.max(times)),
        "steps_median": float(np.median([r.steps for r in results])), "largest_bytes": results[-1].largest_bytes,
        "exact": all(r.exact for r in results), "budget_ms": 50.0, "within_budget": float(np.max(times)) <= 50.0,
        "uncapped": [r.to_dict() for r in uncapped],
    }
    # fragment on purpose: a row of 1 GiB blocks with every other one freed
    from cuda.bindings import runtime as rt

    blocks = []
    free0 = info[0]
    n = min(64, int(free0 // (1 << 30)) - 4)
    for _ in range(n):
        err, ptr = rt.cudaMalloc(1 << 30)
        if err != rt.cudaError_t.cudaSuccess:
            rt.cudaGetLastError()
            break
        blocks.append(ptr)
    for ptr in blocks[0::2]:
        rt.cudaFree(ptr)
    free1, _ = cuda_mem_info(args.device) or info
    t = []
    for _ in range(5):
        r = largest_block(try_alloc, free1, cap=DEFAULT_CAP)
        t.append(r.elapsed_ms)
    whole = largest_block(try_alloc, free1, budget_ms=5000)
    for ptr in blocks[1::2]:
        rt.cudaFree(ptr)
    out["fragmented"] = {"blocks_of_1gib": len(blocks), "held_bytes": len(blocks[1::2]) << 30, "free_bytes": free1,
                         "largest_bytes": r.largest_bytes, "largest_over_free": r.largest_bytes / free1,
                         "median_ms": float(np.median(t)), "steps": r.steps, "uncapped": whole.to_dict()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    o = sub.add_parser("overhead")
    o.add_argument("--backend", default="ort")
    o.add_argument("--onnx", help="'sample' or an .onnx/.pt2 file (default: a MatMul model)")
    o.add_argument("--batch", type=int, default=1)
    o.add_argument("--threads", type=int, default=1)
    o.add_argument("--mlp", action="store_true", help="the FP16 MLP (torch.export; needs torch) instead of --onnx")
    # Short runs, many of them: launch-bound models switch between speed regimes every few seconds
    # (run medians of 2.0 or 3.5 ms on the H200); short adjacent runs fall in the same regime.
    o.add_argument("--n", type=int, default=100, help="inferences per run")
    o.add_argument("--trials", type=int, default=150, help="paired trials")
    p = sub.add_parser("probe")
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--device", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    doc = overhead(args) if args.what == "overhead" else probe(args)
    doc["wall_s"] = time.perf_counter() - t0
    _emit(doc)


if __name__ == "__main__":
    main()
