"""Shape-mix replay: 10,000 requests over 20 shapes with no re-allocation per request after each
shape's first (buffers kept per shape), counted three ways:

- ``prepare_calls``: calls of the backend's ``prepare_inputs`` (each makes new input arrays);
- ``input_arrays_made``: arrays made by ``backends.inputs.random_array`` (where input buffers come from);
- ``buffers_per_shape``: distinct input arrays (by identity) a request of each shape ran on.

The budget holds when the first two equal the number of shapes (inputs per shape times shapes for
the second) and every shape ran on one buffer. Also times the replay (wall per request) and prints
the mix's weighted median and p99. Prints one JSON document.

    python benchmarks/shape_mix.py [--requests 10000] [--seed 0] [--threads 1]

The model: a MatMul chain over x [batch, seq, 64] (batch and seq dynamic); the 20 shapes are
batch 1, 2, 4, 8 by seq 16, 32, 64, 128, 256, with Zipf-like counts (the small ones common).
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

import trtstudio.backends.inputs as inputs_mod
from trtstudio.backends.base import open_backend
from trtstudio.profiling.shape_mix import MixEntry, replay, request_order, summary


def make_model(path: str, width: int = 64, depth: int = 3) -> None:
    rng = np.random.default_rng(0)
    nodes, inits, prev = [], [], "x"
    for i in range(depth):
        inits.append(numpy_helper.from_array(rng.standard_normal((width, width)).astype(np.float32) / width**0.5, f"w{i}"))
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"]))
        nodes.append(helper.make_node("Relu", [f"m{i}"], [f"r{i}"]))
        prev = f"r{i}"
    graph = helper.make_graph(nodes, "mix", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", width])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, ["batch", "seq", width])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.save(model, path)


def mix(requests: int) -> list[MixEntry]:
    shapes = [(b, s, 64) for b in (1, 2, 4, 8) for s in (16, 32, 64, 128, 256)]
    weights = 1.0 / np.arange(1, len(shapes) + 1) ** 0.8
    counts = np.floor(weights / weights.sum() * requests).astype(int)
    counts[0] += requests - int(counts.sum())
    return [MixEntry({"x": s}, int(c)) for s, c in zip(shapes, counts, strict=True)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    made = [0]
    real_random = inputs_mod.random_array

    def counted(*a, **kw):  # type: ignore[no-untyped-def]
        made[0] += 1
        return real_random(*a, **kw)

    inputs_mod.random_array = counted  # build_feeds looks it up in its module at each call
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mix.onnx")
        make_model(path)
        backend = open_backend("ort", path, threads=args.threads)
        entries = mix(args.requests)
        order = request_order(entries, args.seed)
        prepares = [0]
        real_prepare = backend.prepare_inputs

        def prepare(shapes, data=None):  # type: ignore[no-untyped-def]
            prepares[0] += 1
            return real_prepare(shapes, data)

        backend.prepare_inputs = prepare  # type: ignore[method-assign]
        buffers: dict[tuple[int, ...], set[int]] = {}
        real_infer = backend.infer_once

        def infer():  # type: ignore[no-untyped-def]
            feed = backend._feeds["x"]  # the array this request runs on
            buffers.setdefault(tuple(feed.shape), set()).add(id(feed))
            return real_infer()

        backend.infer_once = infer  # type: ignore[method-assign]
        made[0] = 0
        t0 = time.perf_counter()
        stats, slots = replay(backend, entries, order)
        wall = time.perf_counter() - t0
        backend.close()
    s = summary(stats)
    n_shapes = len(entries)
    doc = {
        "bench": "shape_mix_allocations", "requests": int(order.size), "shapes": n_shapes, "seed": args.seed,
        "prepare_calls": prepares[0], "input_arrays_made": made[0], "slot_allocations": slots.allocations,
        "switches": slots.switches, "buffers_per_shape_max": max(len(v) for v in buffers.values()),
        "kept_per_shape": slots.can_keep,
        "weighted_median_ms": s["median_ms"], "weighted_p99_ms": s["p99_ms"], "replan_ms_total": s["replan_ms_total"],
        "wall_s": wall, "wall_per_request_ms": wall / order.size * 1e3, "cpu_count": os.cpu_count(),
        "within_budget": prepares[0] == n_shapes and made[0] == n_shapes and all(len(v) == 1 for v in buffers.values()),
    }
    print(json.dumps(doc))


if __name__ == "__main__":
    main()
