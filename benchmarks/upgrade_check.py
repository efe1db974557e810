"""What ``trtstudio upgrade-check`` costs beyond the builds themselves.

Budget (issue 47): one model across three installed runtimes costs no more than the three builds plus
10 %. Runs the whole command as a user does (``python -m trtstudio upgrade-check MODEL --runtime ...
--json``, a fresh process each round) and prints JSON: per round the command's wall time, the sum of the
builds' own times (each ``trtstudio.build/1`` document's ``seconds``), each child's wall time, and the
ratio wall / builds; then medians with their spread.

    python benchmarks/upgrade_check.py [--model M.onnx] [--runtime A --runtime B --runtime C]
        [--runtimes-root DIR] [--rounds 5] [--jobs N] [-- build flags]

Defaults: onnx's light-zoo ResNet-50 (from the installed onnx wheel), the managed runtimes of the
tests' cache (``~/.cache/trtstudio-test-runtimes``, 1.5.0.114 and 1.6.1.120) and ``here``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _default_model() -> str:
    import onnx

    return str(Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_resnet50.onnx")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model")
    ap.add_argument("--runtime", action="append")
    ap.add_argument("--runtimes-root", default=str(Path.home() / ".cache" / "trtstudio-test-runtimes"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("build_flags", nargs="*")
    args = ap.parse_args()
    model = args.model or _default_model()
    rts = args.runtime or ["tensorrt-rtx==1.5.0.114", "tensorrt-rtx==1.6.1.120", "here"]
    cmd = [sys.executable, "-m", "trtstudio", "upgrade-check", model, *(a for r in rts for a in ("--runtime", r)),
           "--runtimes-root", args.runtimes_root, "--jobs", str(args.jobs), "--json", *args.build_flags]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rounds = []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        wall = time.perf_counter() - t0
        if proc.returncode not in (0, 1):
            print(json.dumps({"error": proc.stderr.strip().splitlines()[-1:] or proc.returncode}))
            return 1
        doc = json.loads(proc.stdout)
        builds = sum(c["seconds"] or 0.0 for c in doc["runtimes"])
        rounds.append({"wall_s": wall, "command_wall_s": doc["wall_s"], "builds_s": builds,
                       "ratio": wall / builds if builds else None,
                       "children_wall_s": [c["wall_s"] for c in doc["runtimes"]],
                       "built": [c["ok"] for c in doc["runtimes"]]})
    ratios = [r["ratio"] for r in rounds if r["ratio"]]
    print(json.dumps({
        "benchmark": "upgrade_check", "model": model, "runtimes": rts, "jobs": args.jobs or "one per runtime",
        "cpus": os.cpu_count(), "budget_ratio": 1.10, "rounds": rounds,
        "median_wall_s": statistics.median(r["wall_s"] for r in rounds),
        "median_builds_s": statistics.median(r["builds_s"] for r in rounds),
        "median_ratio": statistics.median(ratios) if ratios else None,
        "ratio_range": [min(ratios), max(ratios)] if ratios else None,
    }, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
