"""Overhead of the profiling runner against a bare loop over the same ORT session, and bounded memory.

Interleaved trials: each trial times N ``session.run`` calls in a bare loop, then N inferences through
``Runner`` on the same session. Prints JSON lines: per-trial medians, then a summary with the median
latency of each, the wall time per inference of each, and the overhead in percent (budget <= 2%).
    python benchmarks/profiling.py [--trials 7] [--n 2000] [--onnx MODEL | --size 256]
``--onnx sample`` runs on the bundled sample model (the issue's reference case).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from trtstudio.backends.ort import OrtBackend
from trtstudio.profiling.runner import RunConfig, Runner


def make_model(path: str, size: int, depth: int = 4) -> None:
    rng = np.random.default_rng(0)
    nodes, inits, prev = [], [], "x"
    for i in range(depth):
        w = numpy_helper.from_array(rng.standard_normal((size, size)).astype(np.float32) / size**0.5, f"w{i}")
        inits.append(w)
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"], name=f"/mm{i}/MatMul"))
        nodes.append(helper.make_node("Relu", [f"m{i}"], [f"r{i}"], name=f"/relu{i}/Relu"))
        prev = f"r{i}"
    graph = helper.make_graph(
        nodes, "bench", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, size])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [64, size])], inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.save(model, path)


def bare_loop(backend: OrtBackend, n: int) -> tuple[np.ndarray, float]:
    session, outputs, feeds = backend._session, backend._outputs, backend._feeds
    lat = np.empty(n)
    perf = time.perf_counter
    t0 = perf()
    for i in range(n):
        a = perf()
        session.run(outputs, feeds)
        lat[i] = (perf() - a) * 1e3
    return lat, (perf() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--onnx", help="model to run (default: a synthetic MatMul chain; 'sample' = the bundled sample)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.onnx == "sample":
            from importlib import resources

            path = str(resources.files("trtstudio.resources") / "sample" / "mobilenetv2_035.onnx")
        elif args.onnx:
            path = args.onnx
        else:
            path = os.path.join(tmp, "bench.onnx")
            make_model(path, args.size)
        backend = OrtBackend()
        backend.load(path, {"threads": args.threads})
        backend.prepare_inputs({})  # dynamic dims default to 1
        bare_loop(backend, 200)  # warm-up
        bare_med, run_med, bare_wall, run_wall = [], [], [], []
        for trial in range(args.trials):
            lat, wall = bare_loop(backend, args.n)
            result = Runner(backend, RunConfig(warmup=0, iterations=args.n)).run()
            bare_med.append(float(np.median(lat)))
            run_med.append(float(result.latency()["median"]))
            bare_wall.append(wall * 1e3)
            run_wall.append(result.active_s / result.count * 1e3)
            print(json.dumps({"bench": "runner_overhead_trial", "trial": trial, "bare_median_ms": bare_med[-1],
                              "runner_median_ms": run_med[-1], "bare_wall_ms": bare_wall[-1], "runner_wall_ms": run_wall[-1]}))
        b, r = float(np.median(bare_med)), float(np.median(run_med))
        bw, rw = float(np.median(bare_wall)), float(np.median(run_wall))
        print(json.dumps({
            "bench": "runner_overhead", "n": args.n, "trials": args.trials, "cpu_count": os.cpu_count(),
            "bare_median_ms": b, "runner_median_ms": r, "latency_overhead_pct": 100 * (r - b) / b,
            "bare_wall_per_inference_ms": bw, "runner_wall_per_inference_ms": rw,
            "wall_overhead_pct": 100 * (rw - bw) / bw, "budget_pct": 2.0,
        }))
        # bounded memory: a small ring and a small exact cap over many more samples
        ring, cap, n = 1000, 5000, 20_000
        runner = Runner(backend, RunConfig(warmup=0, iterations=n, ring_capacity=ring, exact_cap=cap))
        before = runner.samples.nbytes
        result = runner.run()
        print(json.dumps({
            "bench": "runner_memory", "iterations": result.count, "ring_capacity": ring,
            "ring_bytes_before": before, "ring_bytes_after": result.samples.nbytes,
            "exact_cap": cap, "exact_values_held": int(result.exact.values().size), "exact": result.exact.exact,
            "note": result.exact.note(),
        }))
        backend.close()


if __name__ == "__main__":
    main()
