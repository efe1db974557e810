"""What recording kernels costs on torch-cuda, measured the way ``trtstudio profile --per-layer``
reports it (issue 48 item 8): for each model, ``--runs`` whole processes of

    trtstudio profile MODEL --backend torch-cuda --per-layer --iterations N --json

and the median of their ``kernel_recording.recorded_vs_run`` (the recorded pass's median over the
timed run's; budget 1.10x), with the share of the inference the kernels cover and the verdict
(launch-bound below half). Launch-bound models get one ``--cuda-graph`` run too, whose variants
section measures what replaying the graph saves. JSON lines, then a summary line.

    python benchmarks/torch_recording.py --models DIR [--runs 3] [--iterations 300]

Needs a CUDA GPU, torch, onnx2torch, onnxslim and (for the CUPTI recorder) cupti-python.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def _profile(model: Path, iterations: int, graph: bool = False) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "trtstudio", "profile", str(model), "--backend", "torch-cuda", "--per-layer",
           "--iterations", str(iterations), "--json"] + (["--cuda-graph", "--variant-rounds", "10"] if graph else [])
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1], "wall_s": wall}
    doc = json.loads(p.stdout)
    rec = doc.get("kernel_recording") or {}
    warned = [ln for ln in p.stderr.splitlines() if "Warning" in ln]
    return {"wall_s": wall, "median_ms": doc["latency_ms"]["median"], "recorder": rec.get("recorder"),
            "recorded_vs_run": rec.get("recorded_vs_run"), "gpu_busy_share": rec.get("gpu_busy_share"),
            "bound": rec.get("bound"), "share": rec.get("share"), "text": rec.get("text"),
            "variants": (doc.get("variants") or {}).get("verdict"), "terminal_warnings": len(warned),
            "op_types": sum(1 for r in doc.get("layers", []) if r.get("op_type"))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=Path, required=True, help="a folder of .onnx files")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=300)
    args = ap.parse_args()
    ratios = []
    for model in sorted(args.models.glob("*.onnx")):
        runs = [_profile(model, args.iterations) for _ in range(args.runs)]
        ok = [r for r in runs if "error" not in r and r["recorded_vs_run"]]
        row: dict[str, Any] = {"model": model.name, "runs": len(ok)}
        if ok:
            med = statistics.median(r["recorded_vs_run"] for r in ok)
            ratios.append(med)
            row.update(recorded_vs_run_median=med, recorded_vs_run=[r["recorded_vs_run"] for r in ok],
                       median_ms=statistics.median(r["median_ms"] for r in ok), recorder=ok[0]["recorder"],
                       gpu_busy_share=statistics.median(r["gpu_busy_share"] or 0 for r in ok), bound=ok[-1]["bound"],
                       text=ok[-1]["text"], terminal_warnings=sum(r["terminal_warnings"] for r in ok),
                       op_types=ok[-1]["op_types"])
            if ok[-1]["bound"] == "launch":
                g = _profile(model, args.iterations, graph=True)
                row["cuda_graph"] = {k: g.get(k) for k in ("median_ms", "recorded_vs_run", "variants", "text", "error")}
        else:
            row["errors"] = [r.get("error") for r in runs]
        print(json.dumps(row), flush=True)
    if ratios:
        print(json.dumps({"summary": True, "models": len(ratios), "recorded_vs_run_min": min(ratios),
                          "recorded_vs_run_median": statistics.median(ratios), "recorded_vs_run_max": max(ratios),
                          "within_1.10": sum(r <= 1.10 for r in ratios)}), flush=True)


if __name__ == "__main__":
    main()
