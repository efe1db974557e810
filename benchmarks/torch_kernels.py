"""Kernel recording on torch-cuda (issue 40): per model, the median of a plain inference and of one
recorded by torch.profiler with trtstudio's per-node record_function ranges (ABBA rounds, budget
1.10x), and the share of kernel time attributed to ONNX nodes (budget >= 95 %), JSON lines.

    python benchmarks/torch_kernels.py --models DIR [--iterations 100] [--rounds 4]

Needs a CUDA GPU, torch, onnx2torch and onnxslim (the GPU machine: benchmarks/torch_gpu_run.sh's setup).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any


def _loop(backend: Any, torch: Any, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        backend._call(backend._dev_in)
        torch.cuda.synchronize(backend.device)
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def _recorded(backend: Any, torch: Any, n: int, cuda_only: bool = False) -> list[float]:
    from torch.profiler import ProfilerActivity, profile, record_function

    leaves = [(name, m) for name, m in backend._module.named_modules() if name and not list(m.children())]
    stack: list[Any] = []
    handles = []
    for name, mod in leaves:
        def pre(_m: Any, _i: Any, name: str = name) -> None:
            rf = record_function(f"trtstudio::{name}")
            rf.__enter__()
            stack.append(rf)

        def post(_m: Any, _i: Any, _o: Any) -> None:
            stack.pop().__exit__(None, None, None)
        handles += [mod.register_forward_pre_hook(pre), mod.register_forward_hook(post)]
    try:
        acts = [ProfilerActivity.CUDA] if cuda_only else [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        with profile(activities=acts) as prof:
            out = _loop(backend, torch, n)
        if cuda_only and not _CATS:
            import collections
            import tempfile

            with tempfile.TemporaryDirectory() as tmp:
                prof.export_chrome_trace(tmp + "/t.json")
                doc = json.load(open(tmp + "/t.json"))
            _CATS.update(collections.Counter(e.get("cat") for e in doc["traceEvents"] if e.get("ph") == "X"))
        return out
    finally:
        for h in handles:
            h.remove()


_CATS: dict[str, int] = {}


def bench(model: Path, iterations: int, rounds: int) -> dict[str, Any]:
    import torch

    from trtstudio.profiling.session import ProfileRequest, open_prepared

    backend = open_prepared(ProfileRequest(model=str(model), backend="torch-cuda"))
    try:
        _loop(backend, torch, 20)
        plain: list[float] = []
        recorded: list[float] = []
        cuda_only: list[float] = []
        for r in range(rounds):  # ABBA
            order = (plain, recorded, cuda_only) if r % 2 == 0 else (cuda_only, recorded, plain)
            for lst in order:
                lst += (_recorded(backend, torch, iterations) if lst is recorded else
                        _recorded(backend, torch, iterations, cuda_only=True) if lst is cuda_only
                        else _loop(backend, torch, iterations))
        rows = backend.per_layer_profile(iterations)
        cov = backend.kernel_coverage
        top = sorted(rows, key=lambda r: -r["time_ms"])[:3]
        return {"bench": "torch_kernels", "model": model.name, "plain_median_ms": statistics.median(plain),
                "recorded_median_ms": statistics.median(recorded),
                "ratio": statistics.median(recorded) / statistics.median(plain), "budget_ratio": 1.10,
                "cuda_only_ratio": statistics.median(cuda_only) / statistics.median(plain), "cuda_only_events": dict(_CATS),
                "coverage": cov["share"] if cov else None, "budget_coverage": 0.95,
                "kernels_per_inference": cov["kernels_per_inference"] if cov else None,
                "top_nodes": [{"nodes": r["onnx_nodes"], "ms": r["time_ms"],
                               "kernels": [k["name"][:60] for k in r.get("kernels", [])[:2]]} for r in top]}
    finally:
        backend.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", required=True, help="folder of .onnx models")
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    for model in sorted(Path(args.models).glob("*.onnx")):
        try:
            print(json.dumps(bench(model, args.iterations, args.rounds)), flush=True)
        except Exception as exc:  # noqa: BLE001 - one model's failure is reported, the others run
            print(json.dumps({"bench": "torch_kernels", "model": model.name, "error": f"{type(exc).__name__}: {exc}"}),
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
