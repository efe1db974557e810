"""A soak's own memory: RSS growth of a shortened soak at 1,000 inferences/s, extrapolated to an hour
(budget <= 50 MiB/hour). Prints the windows' RSS, the least-squares slope over the second half of the
run (the first half holds the allocator's warm-up), and the extrapolation with its caveat.
    python benchmarks/scenario_soak.py [--seconds 120] [--rate 1000] [--backend ort] [--onnx FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--window", type=float, default=5.0)
    ap.add_argument("--backend", default="ort")
    ap.add_argument("--onnx", help="model file (default: a small MatMul model)")
    ap.add_argument("--shapes", default="")
    args = ap.parse_args()
    from trtstudio.backends.base import parse_shapes
    from trtstudio.profiling import scenario as sc

    model = args.onnx
    if model is None:
        from profiling import make_model

        model = os.path.join(tempfile.mkdtemp(), "m.onnx")
        make_model(model, 64)
    spec = sc.ModelSpec(model, args.backend, shapes=parse_shapes(args.shapes))
    result = sc.run_soak(spec, sc.SoakConfig(minutes=args.seconds / 60, window_s=args.window, rate_hz=args.rate))
    w = result.windows
    t = np.array([x["t_end_s"] for x in w])
    rss = np.array([x["host_rss_bytes"] for x in w], dtype=np.float64) / 2**20
    half = len(w) // 2
    slope_all = float(np.polyfit(t, rss, 1)[0]) * 3600 if len(w) > 2 else float("nan")
    slope_late = float(np.polyfit(t[half:], rss[half:], 1)[0]) * 3600 if len(w) - half > 2 else float("nan")
    rate = result.extra["inferences"] / (t[-1] if len(t) else 1)
    print(json.dumps({
        "bench": "soak_rss", "backend": args.backend, "model": Path(model).name, "seconds": args.seconds,
        "achieved_inferences_per_s": rate, "windows": len(w), "rss_mib": [round(float(x), 2) for x in rss],
        "growth_mib_total": float(rss[-1] - rss[0]) if len(rss) else None,
        "slope_mib_per_hour_all": slope_all, "slope_mib_per_hour_second_half": slope_late,
        "budget_mib_per_hour": 50.0, "within_budget": slope_late <= 50.0,
        "caveat": f"extrapolated linearly from {args.seconds:.0f} s; the second half excludes warm-up; "
                  "RSS is read after malloc_trim each window",
        "failure": None if result.failure is None else result.failure.to_dict(),
    }), flush=True)


if __name__ == "__main__":
    main()
