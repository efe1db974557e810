"""Cross-version ``trtstudio diff`` of two ~100-layer TensorRT-RTX builds (budget: under 1 s), JSON lines.

The sides are real build logs in ``tests/data/xversion/`` (the light zoo's ResNet-50, 97 layers,
built by TensorRT-RTX 1.4.0.76 and 1.7.1.116; the PaddleOCR classifier, 77-78 layers, 1.4 -> 1.7 and
1.6 -> 1.7). Measured as the user meets it: a whole ``python -m trtstudio diff A B --json`` process
(start, imports, reads, alignment, verdict, JSON), per repeat, with the median and spread, and the
diff alone in this process.

    python benchmarks/diff_xversion.py --repeat 5
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
DATA = ROOT / "tests" / "data" / "xversion"
PAIRS = (("resnet50-1.4.0.76", "resnet50-1.7.1.116"), ("cls-1.4.0.76", "cls-1.7.1.116"),
         ("cls-1.6.1.120", "cls-1.7.1.116"))
BUDGET_S = 1.0


def _in_process(a: Path, b: Path) -> float:
    from trtstudio.diff.core import diff_sides
    from trtstudio.diff.sides import load_side

    t0 = time.perf_counter()
    diff_sides(load_side(str(a)), load_side(str(b))).to_json()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for base, other in PAIRS:
        a, b = DATA / f"{base}.build.log", DATA / f"{other}.build.log"
        walls = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            run = subprocess.run([sys.executable, "-m", "trtstudio", "diff", str(a), str(b), "--json"],
                                 capture_output=True, text=True, env=env, check=False)
            walls.append(time.perf_counter() - t0)
            if run.returncode != 0:
                raise SystemExit(f"diff failed ({run.returncode}): {run.stderr.strip()}")
        pair = json.loads(run.stdout)["diffs"][0]
        inner = [_in_process(a, b) for _ in range(args.repeat)]
        med = statistics.median(walls)
        print(json.dumps({
            "schema": "trtstudio.bench/1", "bench": "diff_xversion", "base": base, "other": other,
            "layers": [len(set(i for g in pair["groups"] for i in g["base_index"])),
                       len(set(i for g in pair["groups"] for i in g["other_index"]))],
            "groups": len(pair["groups"]), "changes": {k: v["groups"] for k, v in pair["totals"].items()},
            "process_s": walls, "process_median_s": med, "process_spread_s": max(walls) - min(walls),
            "diff_in_process_median_s": statistics.median(inner), "budget_s": BUDGET_S, "within_budget": med < BUDGET_S,
        }), flush=True)


if __name__ == "__main__":
    main()
