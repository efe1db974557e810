"""Cost of recording a build's timeline (issue 50 budget: <= 2 % of build time), printed as JSON.

ABBA pairs of TensorRT-RTX builds of third-party models (the onnx wheel's light zoo) with the
timeline and memory watch on (A) and off (B, ``record_timeline=False, measure_memory=False``), in
this process; pair k runs A first when k is even. Reports the median of the per-pair ratios A/B
with its spread, per model.

    python benchmarks/build_timeline.py --pairs 10 --models squeezenet,inception_v1
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path


def _build(model: Path, out: Path, record: bool) -> float:
    from trtstudio.backends.build import BuildOptions, build_engine

    t0 = time.perf_counter()
    res = build_engine(model, out, BuildOptions(backend="rtx", record_timeline=record, measure_memory=record))
    dt = time.perf_counter() - t0
    assert res.ok, res.error
    assert bool(res.timeline) == record
    return dt


def main() -> None:
    import onnx

    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--models", default="squeezenet,inception_v1,resnet50")
    args = ap.parse_args()
    light = Path(onnx.__file__).parent / "backend/test/data/light"
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            model = light / f"light_{name}.onnx"
            _build(model, Path(tmp) / "warm.engine", True)  # warm-up
            ratios, on, off = [], [], []
            for k in range(args.pairs):
                order = (True, False) if k % 2 == 0 else (False, True)
                t = {rec: _build(model, Path(tmp) / f"{rec}.engine", rec) for rec in order}
                on.append(t[True])
                off.append(t[False])
                ratios.append(t[True] / t[False])
            q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
            print(json.dumps({"model": name, "pairs": args.pairs, "order": "ABBA (A = recording on)",
                              "ratio_median": statistics.median(ratios), "ratio_q1": q[0], "ratio_q3": q[2],
                              "on_s_median": statistics.median(on), "off_s_median": statistics.median(off),
                              "budget_ratio": 1.02}))


if __name__ == "__main__":
    main()
