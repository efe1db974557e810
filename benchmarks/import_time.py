"""``import trtstudio`` time and what it loads (budget: under 0.3 s, no pandas, Qt or ONNX Runtime), JSON.

Each figure is the median of ``--runs`` fresh interpreters: ``import trtstudio`` alone, and the first
use of the API (``trtstudio.open_engine``, which loads ``trtstudio.api`` and numpy, not pandas).

    python benchmarks/import_time.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

HEAVY = ("numpy", "pandas", "PySide6", "pyqtgraph", "onnxruntime", "onnx", "tensorrt_rtx")
CODE = """
import sys, time
t = time.perf_counter()
import trtstudio
{extra}
dt = time.perf_counter() - t
import json
print(json.dumps({{"s": dt, "loaded": [m for m in {heavy!r} if m in sys.modules]}}))
"""


def measure(extra: str, runs: int) -> dict[str, object]:
    times, loaded = [], set()
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", CODE.format(extra=extra, heavy=HEAVY)], capture_output=True,
                             text=True, check=True).stdout
        doc = json.loads(out)
        times.append(doc["s"])
        loaded.update(doc["loaded"])
    return {"median_s": round(statistics.median(times), 4), "runs": [round(t, 4) for t in times],
            "heavy_loaded": sorted(loaded)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    plain = measure("", args.runs)
    print(json.dumps({"bench": "import_trtstudio", "budget_s": 0.3, **plain}), flush=True)
    api = measure("trtstudio.open_engine", args.runs)
    print(json.dumps({"bench": "import_trtstudio_api", **api}), flush=True)
    ok = plain["median_s"] < 0.3 and not plain["heavy_loaded"] and "pandas" not in api["heavy_loaded"]  # type: ignore[operator]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
