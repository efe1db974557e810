"""Overhead of trtstudio's profiling loop over a bare PyTorch loop doing the same work on the GPU.

One ``torch-cuda`` backend is opened; both sides run its module on its stream with its pinned host
buffers and device buffers. The bare loop times, per inference, the H2D copies, the module call and the
D2H copies up to a stream synchronisation with ``time.perf_counter``; trtstudio's side is the profiling
``Runner`` over the backend (CUDA events around each stage, the same synchronisation). Trials alternate
in ABBA order (pair k: bare first when k is even) so drift in clocks and caches hits both sides alike;
the figure is the median of the per-pair ratios trtstudio/bare with a bootstrap 95% interval.
Budget: median ratio <= 1.03.

    python benchmarks/torch_overhead.py MODEL.onnx [--pairs 40] [--n 200] [--cuda-graph]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

BUDGET_RATIO = 1.03


def bare_loop(backend: Any, n: int) -> float:
    """The median latency (ms) of ``n`` inferences done by hand: H2D, module (or graph replay), D2H, sync."""
    import torch

    s, dev, host, out = backend._stream, backend._dev_in, backend._host_in, backend._host_out
    graph, module = backend._graph, backend._module
    lat = np.empty(n)
    with torch.inference_mode(), torch.cuda.stream(s):
        for i in range(n):
            t0 = time.perf_counter()
            for d, h in zip(dev, host, strict=True):
                d.copy_(h, non_blocking=True)
            if graph is not None:
                graph.replay()
                outs = backend._graph_outs
            else:
                res = module(*dev)
                outs = list(res) if isinstance(res, (list, tuple)) else [res]
            for h, o in zip(out, outs, strict=True):
                h.copy_(o, non_blocking=True)
            s.synchronize()
            lat[i] = (time.perf_counter() - t0) * 1e3
    return float(np.median(lat))


def overhead(model: str, pairs: int = 40, n: int = 200, warmup: int = 20, cuda_graph: bool = False) -> dict[str, Any]:
    """ABBA pairs of trials: bare loop vs trtstudio's Runner on one torch-cuda backend."""
    from scenario import summarise

    from trtstudio.backends.base import open_backend
    from trtstudio.profiling.runner import RunConfig, Runner

    backend = open_backend("torch-cuda", model, cuda_graph=cuda_graph or None)
    backend.prepare_inputs({})

    def runner() -> float:
        r = Runner(backend, RunConfig(warmup=0, iterations=n)).run()
        if r.error is not None:
            raise r.error
        return float(r.latency()["median"])

    bare_loop(backend, warmup)
    runner()
    bare, ours = [], []
    for k in range(pairs):
        if k % 2 == 0:
            b, o = bare_loop(backend, n), runner()
        else:
            o, b = runner(), bare_loop(backend, n)
        bare.append(b)
        ours.append(o)
    shapes = {k: list(v) for k, v in backend.shapes.items()}
    backend.close()
    summary = summarise(bare, ours)
    ratio = float(np.median(np.array(ours) / np.array(bare)))
    return {"bench": "torch_loop_overhead", "model": Path(model).name, "cuda_graph": cuda_graph, "shapes": shapes,
            "pairs": pairs, "n_per_trial": n, "order": "ABBA (pair k: bare first when k is even)",
            "bare_median_ms": float(np.median(bare)), "trtstudio_median_ms": float(np.median(ours)),
            "median_ratio": ratio, "budget_ratio": BUDGET_RATIO, "within_budget": ratio <= BUDGET_RATIO,
            "summary": summary}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--pairs", type=int, default=40)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--cuda-graph", action="store_true")
    args = ap.parse_args()
    print(json.dumps(overhead(args.model, args.pairs, args.n, cuda_graph=args.cuda_graph), indent=2))


if __name__ == "__main__":
    main()
