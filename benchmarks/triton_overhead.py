"""trtstudio's Triton load generator against a bare tritonclient loop, on the same server in one run.

    python benchmarks/triton_overhead.py [--url HOST:PORT] [--concurrency 4] [--seconds 5] [--trials 3]

Without ``--url`` it starts the tests' real Triton server (tests/triton_server.py: PyTriton in its
own venv) and serves the ``identity`` model, where the client's own cost matters most. Trials
alternate bare / trtstudio / trtstudio / bare... Prints one JSON line: throughput of each, the
ratio (budget >= 0.90, issue 14), and the consistency check of each trtstudio step (server request
count == client's, client p50 >= server compute p50).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


async def bare(url: str, model: str, concurrency: int, seconds: float) -> float:
    """Inferences/s of ``concurrency`` coroutines calling tritonclient.http.aio in a loop."""
    import tritonclient.http.aio as aio

    client = aio.InferenceServerClient(url, conn_limit=concurrency + 4)
    x = np.ones((1, 16), np.float32)
    inp = aio.InferInput("INPUT0", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    count = 0
    stop = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal count
        while time.perf_counter() < stop:
            await client.infer(model, [inp])
            count += 1

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - t0
    await client.close()
    return count / elapsed


def ours(url: str, model: str, concurrency: int, seconds: float) -> dict[str, float]:
    from trtstudio.triton.sweep import SweepSettings, run_sweep

    settings = SweepSettings(concurrency=[concurrency], window_s=seconds / 5, duration_s=seconds, max_windows=5)
    step = run_sweep(url, model, settings, metrics=None).steps[0]
    return {"throughput": step["throughput"], "requests": step["requests"], "server_requests": step["server_requests"],
            "p50_us": step["latency_ms"]["p50"] * 1000, "server_compute_p50_us": step["server_compute_p50_us"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url")
    ap.add_argument("--model", default="identity")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--trials", type=int, default=3)
    args = ap.parse_args()
    server = None
    url = args.url
    if url is None:
        from triton_server import Server

        server = Server(Path(tempfile.mkdtemp()))
        url = f"127.0.0.1:{server.http}"
    try:
        bare_tp: list[float] = []
        our: list[dict[str, float]] = []
        for t in range(args.trials):
            order = ("bare", "ours") if t % 2 == 0 else ("ours", "bare")
            for which in order:
                if which == "bare":
                    bare_tp.append(asyncio.run(bare(url, args.model, args.concurrency, args.seconds)))
                else:
                    our.append(ours(url, args.model, args.concurrency, args.seconds))
        b, o = statistics.median(bare_tp), statistics.median(s["throughput"] for s in our)
        print(json.dumps({
            "bench": "triton_overhead", "model": args.model, "concurrency": args.concurrency, "seconds": args.seconds,
            "bare_inferences_per_s": round(b, 1), "trtstudio_inferences_per_s": round(o, 1), "ratio": round(o / b, 3),
            "budget_ratio": 0.9, "ok": o / b >= 0.9,
            "trials": {"bare": [round(v, 1) for v in bare_tp], "trtstudio": [round(s["throughput"], 1) for s in our]},
            "counts_equal": all(s["requests"] == s["server_requests"] for s in our),
            "client_p50_ge_server_compute_p50": all(s["p50_us"] >= s["server_compute_p50_us"] for s in our),
        }))
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
