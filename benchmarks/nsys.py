"""Kernels attributed to NVTX ranges (trtstudio.engine.nsys) in an export of 100,000 kernels and
200,000 ranges (budget: 2 s on the 2-core machine), JSON lines.

The export is generated with the real schema's tables (tests/nsys_synth.py: a TensorRT engine of
100 layers run 1,000 times, each layer range holding a launch range, one kernel each); the real
export in ../shared/fixtures/nsys-real is timed too, for what a real file costs.

    python benchmarks/nsys.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from nsys_synth import write_trt_export  # noqa: E402

REAL = ROOT.parent / "shared" / "fixtures" / "nsys-real" / "GindaChen_nsys-ai" / "h100_2gpu_1s.sqlite"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from trtstudio.engine.nsys import read_kernels

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.sqlite"
        write_trt_export(path, [f"layer_{i}" for i in range(100)], inferences=1000, kernels_per_layer=1, inner=True)
        import sqlite3

        con = sqlite3.connect(path)
        in_file = con.execute("SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 59").fetchone()[0]
        con.close()
        for i in range(args.repeat):
            t0 = time.perf_counter()
            table = read_kernels(path)
            dt = time.perf_counter() - t0
            print(json.dumps({"bench": "nsys_attribution", "repeat": i, "kernels": table.kernels,
                              "ranges_in_file": in_file, "attributed": table.attributed,
                              "seconds": round(dt, 3), "budget_s": 2.0}), flush=True)
    if REAL.is_file():
        t0 = time.perf_counter()
        table = read_kernels(REAL)
        print(json.dumps({"bench": "nsys_real", "kernels": table.kernels, "seconds": round(time.perf_counter() - t0, 3)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
