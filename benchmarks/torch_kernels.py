"""Kernel recording on torch-cuda (issue 40): per model and mode (eager, CUDA graph), the median of the
plain timed run (``infer_once``) against the median of the pass ``per_layer_profile`` records kernels in
(ABBA rounds, budget 1.10x), and the share of kernel time attributed to ONNX nodes (budget >= 95 %),
JSON lines.

    python benchmarks/torch_kernels.py --models DIR [--iterations 200] [--rounds 4] [--hw-trace]

With cupti-python installed the recorded pass is CUPTI kernel activity alone, put on nodes by the
launch order of one traced inference; each model also gets one torch.profiler pass
(``TRTSTUDIO_TORCH_PROFILER_KERNELS=1``) to check the two put the same time on the same nodes.
Needs a CUDA GPU, torch, onnx2torch and onnxslim (the GPU machine: benchmarks/torch_gpu_run.sh's setup).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path
from typing import Any


def _plain(backend: Any, n: int) -> float:
    return statistics.median(backend.infer_once().total_ms for _ in range(n))


def _by_node(rows: list[dict[str, Any]]) -> dict[str, float]:
    return {r["name"]: r["time_ms"] for r in rows}


def bench(model: Path, graph: bool, iterations: int, rounds: int) -> dict[str, Any]:
    from trtstudio.profiling.session import ProfileRequest, open_prepared

    backend = open_prepared(ProfileRequest(model=str(model), backend="torch-cuda", cuda_graph=graph,
                                           variant_rounds=0))
    try:
        _plain(backend, 30)
        backend.kernel_profile(5)  # the tracer's first start (Kineto, CUPTI) out of the rounds
        plain: list[float] = []
        recorded: list[float] = []
        rows: list[dict[str, Any]] = []
        for r in range(rounds):  # ABBA
            for which in ("plain", "recorded") if r % 2 == 0 else ("recorded", "plain"):
                if which == "plain":
                    plain.append(_plain(backend, iterations))
                else:
                    rows = backend.kernel_profile(iterations)
                    recorded.append(backend.kernel_coverage["recorded_median_ms"] or float("nan"))
        cov = dict(backend.kernel_coverage or {})
        os.environ["TRTSTUDIO_TORCH_PROFILER_KERNELS"] = "1"
        try:
            traced = _by_node(backend.kernel_profile(20))
        finally:
            del os.environ["TRTSTUDIO_TORCH_PROFILER_KERNELS"]
        mine = _by_node(rows)
        top = sorted(mine, key=lambda k: -mine[k])[:5]
        return {"bench": "torch_kernels", "model": model.name, "mode": "cuda_graph" if graph else "eager",
                "recorder": cov.get("recorder"), "plain_median_ms": statistics.median(plain),
                "recorded_median_ms": statistics.median(recorded),
                "ratio": statistics.median(recorded) / statistics.median(plain), "budget_ratio": 1.10,
                "coverage": cov.get("share"), "in_launch_order": cov.get("in_launch_order"),
                "budget_coverage": 0.95, "kernels_per_inference": cov.get("kernels_per_inference"),
                "kernel_ms_per_inference": cov.get("total_ms"),
                "nodes_ms_recorded": sum(mine.values()), "nodes_ms_traced": sum(traced.values()),
                "top_nodes": [{"node": k, "recorded_ms": mine[k], "traced_ms": traced.get(k)} for k in top]}
    finally:
        backend.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", required=True, help="folder of .onnx models")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--hw-trace", action="store_true", help="ask CUPTI for hardware kernel timestamps first")
    args = ap.parse_args()
    if args.hw_trace:
        try:
            from cupti import cupti

            cupti.activity_enable_hw_trace(1)
            print(json.dumps({"bench": "torch_kernels", "hw_trace": True}), flush=True)
        except Exception as exc:  # noqa: BLE001 - reported, the run goes on without it
            print(json.dumps({"bench": "torch_kernels", "hw_trace": f"{type(exc).__name__}: {exc}"}), flush=True)
    for model in sorted(Path(args.models).glob("*.onnx")):
        for graph in (False, True):
            try:
                print(json.dumps(bench(model, graph, args.iterations, args.rounds)), flush=True)
            except Exception as exc:  # noqa: BLE001 - one model's failure is reported, the others run
                print(json.dumps({"bench": "torch_kernels", "model": model.name, "mode": graph,
                                  "error": f"{type(exc).__name__}: {exc}"[:400]}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
