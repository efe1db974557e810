"""Budgets of the scenario runner, printed as JSON lines.

overhead: one model through the scenario runner (contention with one model, timeline on) against the
  plain profile runner (profiling/runner.py) on the same open backend, interleaved trials in the
  same run; budget: scenario median latency <= plain median + 2 %.
probe:    the largest-block probe (cudaMalloc bisection, capped at 8 GiB) on a GPU, repeated; budget
  <= 50 ms; three uncapped probes for comparison. Also on a heap fragmented on purpose (every other
  1 GiB block of a row freed) to see what the probe finds.

    python benchmarks/scenario.py overhead [--backend ort|torch|torch-cuda] [--onnx sample|FILE] [--n 2000] [--trials 7]
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


def overhead(args: argparse.Namespace) -> dict[str, Any]:
    from trtstudio.backends.base import open_backend
    from trtstudio.profiling import scenario as sc
    from trtstudio.profiling.runner import RunConfig, Runner

    model = str(SAMPLE) if args.onnx == "sample" else args.onnx
    if model is None:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from profiling import make_model  # the profiling benchmark's MatMul model

        model = os.path.join(tempfile.mkdtemp(), "m.onnx")
        make_model(model, 256)
    options: dict[str, Any] = {"threads": args.threads} if args.backend == "ort" and args.threads else {}
    backend = open_backend(args.backend, model, **options)
    shapes = {"input": (args.batch, 3, 224, 224)} if args.onnx == "sample" else {}
    backend.prepare_inputs(shapes)
    borrowed = _Borrowed(backend)
    plain_m, scen_m, thread_m = [], [], []

    def plain_run() -> float:
        return float(Runner(backend, RunConfig(warmup=20, iterations=args.n)).run().latency()["median"])

    def plain_in_thread() -> float:  # the runner on a worker thread, as the window runs it
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

    for trial in range(args.trials):
        order = [plain_run, plain_in_thread, scenario_run]
        if trial % 2:
            order.reverse()  # ABC CBA: drift (clocks, caches) falls on both sides
        got = {f.__name__: f() for f in order}
        plain_m.append(got["plain_run"])
        thread_m.append(got["plain_in_thread"])
        scen_m.append(got["scenario_run"])
        _emit({"bench": "scenario_overhead_trial", "trial": trial, "plain_median_ms": got["plain_run"],
               "plain_thread_median_ms": got["plain_in_thread"], "scenario_median_ms": got["scenario_run"]})
    backend.close()
    p, pt, q = float(np.median(plain_m)), float(np.median(thread_m)), float(np.median(scen_m))
    pct, pct_t = (q - p) / p * 100.0, (q - pt) / pt * 100.0
    return {"bench": "scenario_overhead", "backend": args.backend, "model": Path(model).name, "n": args.n,
            "trials": args.trials, "plain_median_ms": p, "plain_thread_median_ms": pt, "scenario_median_ms": q,
            "overhead_percent": pct, "overhead_vs_thread_percent": pct_t, "budget_percent": 2.0,
            "within_budget": max(pct, pct_t) <= 2.0}


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
    o.add_argument("--n", type=int, default=2000)
    o.add_argument("--trials", type=int, default=7)
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
