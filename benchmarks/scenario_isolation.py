"""What running a model in its own process costs: the contention scenario's process runner against its
thread runner, one model alone, in one run, printed as JSON lines. Budget: the process runner's median
<= the thread runner's + 2 % for each model.

Both runners hold the model open for the whole run (the thread runner in this process, the process
runner in its child) and run the same phase (``run_phase([i])``: warm-up, ``--n`` measured
inferences, the timeline on). Trials alternate in ABBA order (pair k runs thread-process when k is
even, process-thread when odd); each pair gives the ratio process median / thread median. The result
per model is the median ratio with a bootstrap 95 % interval and a verdict (``scenario.summarise``:
``met`` when the interval's upper bound is <= +2 %).

    python benchmarks/scenario_isolation.py [--models det,cls,yolo|FILE,...] [--backend ort]
        [--threads 1] [--n 100] [--pairs 40] [--warmup 10] [--seconds S]

Model names: ``det``/``cls``/``rec`` are rapidocr_onnxruntime's PaddleOCR models, ``yolo`` nudenet's
YOLOv8n (320n), ``sample`` the bundled mobilenetv2_035; anything else is a file.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _package_file(package: str, *parts: str) -> str:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"error: {package}: not installed (pip install {package})")
    return str(Path(list(spec.submodule_search_locations)[0], *parts))


NAMED = {
    "det": (("rapidocr_onnxruntime", "models", "ch_PP-OCRv4_det_infer.onnx"), {"x": (1, 3, 320, 320)}),
    "cls": (("rapidocr_onnxruntime", "models", "ch_ppocr_mobile_v2.0_cls_infer.onnx"), {"x": (1, 3, 48, 192)}),
    "rec": (("rapidocr_onnxruntime", "models", "ch_PP-OCRv4_rec_infer.onnx"), {"x": (1, 3, 48, 320)}),
    "yolo": (("nudenet", "320n.onnx"), {}),
}


def model_spec(name: str, backend: str, threads: int | None) -> Any:
    from trtstudio.profiling.scenario import ModelSpec

    options = {"threads": threads} if threads else {}
    if name in NAMED:
        parts, shapes = NAMED[name]
        return ModelSpec(_package_file(*parts), backend, None, dict(shapes), options, name=name)
    if name == "sample":
        return ModelSpec(str(ROOT / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"), backend, None,
                         {"input": (1, 3, 224, 224)}, options, name=name)
    return ModelSpec(name, backend, None, {}, options)


def bench_model(spec: Any, args: argparse.Namespace) -> dict[str, Any]:
    from scenario import summarise

    from trtstudio.profiling.scenario import ContentionConfig, ScenarioState
    from trtstudio.profiling.scenario_lanes import ThreadLanes
    from trtstudio.profiling.scenario_procs import ProcessLanes
    from trtstudio.profiling.timeline import Timeline

    cfg = ContentionConfig(iterations=args.n, warmup=args.warmup)
    runners = {"thread": ThreadLanes([spec], [spec.label()], _open), "process": ProcessLanes([spec], [spec.label()], _open)}
    medians: dict[str, list[float]] = {"thread": [], "process": []}
    try:
        for r in runners.values():
            failure = r.open(ScenarioState())
            if failure is not None:
                raise SystemExit(f"error: {failure.one_line()}")
            r.prepare("dedicated")  # threads: CUDA stage times from an origin event, as each child does
        t0 = time.perf_counter()
        for k in range(args.pairs):
            if args.seconds is not None and time.perf_counter() - t0 >= args.seconds:
                break
            for side in (("thread", "process") if k % 2 == 0 else ("process", "thread")):
                timeline = Timeline(4 * args.n)
                lane = runners[side].run_phase([0], cfg, ScenarioState(), timeline, [timeline.add_row("m")], time.perf_counter())[0]
                if lane.failure is not None:
                    raise SystemExit(f"error: {spec.label()}: {lane.failure[1]}")
                assert lane.count == args.n and lane.values is not None
                medians[side].append(float(sorted(lane.values)[args.n // 2]))
            _emit({"bench": "scenario_isolation_pair", "model": spec.label(), "pair": k,
                   "thread_median_ms": medians["thread"][-1], "process_median_ms": medians["process"][-1],
                   "ratio": medians["process"][-1] / medians["thread"][-1]})
    finally:
        for r in runners.values():
            r.close()
    return {"bench": "scenario_isolation", "model": spec.label(), "path": Path(spec.path).name, "backend": spec.backend_name(),
            "threads": spec.options.get("threads"), "shapes": {k: list(v) for k, v in spec.shapes.items()} or "model's own",
            **{k.replace("plain", "thread").replace("scenario", "process"): v
               for k, v in summarise(medians["thread"], medians["process"]).items()}}


def _open(spec: Any) -> Any:
    from trtstudio.profiling.scenario import open_model

    return open_model(spec)


def _emit(doc: dict[str, Any]) -> None:
    print(json.dumps(doc, default=float), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="det,cls,yolo")
    ap.add_argument("--backend", default="ort")
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads per model (0: the runtime's default)")
    ap.add_argument("--n", type=int, default=100, help="measured inferences per trial")
    ap.add_argument("--pairs", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--seconds", type=float, help="per model: start no pair after this many seconds")
    args = ap.parse_args()
    t0 = time.perf_counter()
    results = [bench_model(model_spec(m, args.backend, args.threads or None), args) for m in args.models.split(",") if m]
    _emit({"bench": "scenario_isolation_summary", "cpu_count": os.cpu_count(), "wall_s": time.perf_counter() - t0,
           "budget_percent": 2.0, "models": {r["model"]: {k: r[k] for k in ("overhead_percent", "overhead_ci95_percent",
                                                                            "verdict", "pairs", "thread_median_ms",
                                                                            "process_median_ms")} for r in results}})


if __name__ == "__main__":
    main()
