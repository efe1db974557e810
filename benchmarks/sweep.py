"""Sweep overhead: a sweep step's median against a separate ``profile`` at that step's shape.

ABBA pairs: each pair runs the sweep (A), a separate profile at the compared step's shape (B), B
again, then A again; a pair's figure per side is the mean of its two medians, so drift during a
pair cancels. The ratio sweep / separate is taken over the pairs as paired rounds
(``measure.ratio.ratio_interval(paired=True)``). Budget: the ratio within 1.02x.
Prints JSON lines: one per pair, then the summary.

    python benchmarks/sweep.py [--pairs 6] [--n 400] [--steps 1,4,16] [--compare 4] [--onnx MODEL]
      [--input NAME] [--backend ort] [--threads 1]

Default model: a synthetic MatMul chain with a dynamic batch (``benchmarks/profiling.py``'s, batch
dynamic). ``--onnx`` takes a model whose first input has a dynamic first dim (e.g. NudeNet's
320n.onnx).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from trtstudio.measure.ratio import ratio_interval
from trtstudio.profiling.session import ProfileRequest, run_profile
from trtstudio.profiling.sweep import run_sweep


def make_model(path: str, size: int = 256, depth: int = 4) -> None:
    """MatMul + Relu chain over [batch, size] (batch dynamic)."""
    rng = np.random.default_rng(0)
    nodes, inits, prev = [], [], "x"
    for i in range(depth):
        inits.append(numpy_helper.from_array(rng.standard_normal((size, size)).astype(np.float32) / size**0.5, f"w{i}"))
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"], name=f"/mm{i}/MatMul"))
        nodes.append(helper.make_node("Relu", [f"m{i}"], [f"r{i}"], name=f"/relu{i}/Relu"))
        prev = f"r{i}"
    graph = helper.make_graph(nodes, "bench", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", size])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, ["batch", size])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.save(model, path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=6)
    ap.add_argument("--n", type=int, default=400, help="measured inferences per step and per profile")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--steps", default="1,4,16", help="the sweep's batch sizes")
    ap.add_argument("--compare", type=int, default=4, help="the step compared with a separate profile")
    ap.add_argument("--onnx")
    ap.add_argument("--backend", default="ort")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    steps = [int(s) for s in args.steps.split(",")]
    if args.compare not in steps:
        raise SystemExit(f"--compare {args.compare} is not one of the steps {steps}")
    with tempfile.TemporaryDirectory() as tmp:
        path = args.onnx or os.path.join(tmp, "bench.onnx")
        if not args.onnx:
            make_model(path)
        common = {"backend": args.backend, "warmup": args.warmup, "iterations": args.n, "threads": args.threads}
        sweep_req = ProfileRequest(model=path, **common)  # type: ignore[arg-type]
        k = steps.index(args.compare)

        def sweep_median() -> tuple[float, dict[str, tuple[int, ...]]]:
            out = run_sweep(sweep_req, [f"batch={args.steps}"])
            res = out.results[k]
            return float(np.median(res.latencies)), res.step.shapes

        _, shapes = sweep_median()  # warm-up, and the compared step's exact shapes
        single_req = ProfileRequest(model=path, shapes=shapes, **common)  # type: ignore[arg-type]

        def single_median() -> float:
            outcome = run_profile(single_req)
            return float(outcome.result.latency()["median"])

        a_pairs, b_pairs = [], []
        for pair in range(args.pairs):
            a1 = sweep_median()[0]
            b1 = single_median()
            b2 = single_median()
            a2 = sweep_median()[0]
            a_pairs.append((a1 + a2) / 2)
            b_pairs.append((b1 + b2) / 2)
            print(json.dumps({"bench": "sweep_overhead_pair", "pair": pair, "sweep_step_median_ms": [a1, a2],
                              "separate_profile_median_ms": [b1, b2], "ratio": a_pairs[-1] / b_pairs[-1]}), flush=True)
        r = ratio_interval(b_pairs, a_pairs, statistic="median", paired=True)
        print(json.dumps({
            "bench": "sweep_overhead", "model": Path(path).name if args.onnx else "synthetic MatMul chain 256x4",
            "backend": args.backend, "threads": args.threads, "cpu_count": os.cpu_count(), "steps": steps,
            "compared_step": {k2: list(v) for k2, v in shapes.items()}, "n": args.n, "pairs": args.pairs,
            "sweep_step_median_ms": float(np.median(a_pairs)), "separate_profile_median_ms": float(np.median(b_pairs)),
            "ratio": r.to_json(), "budget_x": 1.02, "within_budget": bool(r.value <= 1.02),
            "interval_within_budget": bool(r.has_interval and r.high <= 1.02),
        }))


if __name__ == "__main__":
    main()
