"""Third-party ONNX models from PyPI packages on the torch backends, against ONNX Runtime on the CPU.

Per model, with no flags (shapes from the shape plan, as ``trtstudio profile M --backend torch-cuda``):
the shapes and where they came from, the conversion (folded or not, load-time breakdown), outputs
against ORT on the CPU on the same inputs (cosine and max abs difference per output), and the latency
of a profile run; on CUDA also the same run with ``cuda_graph`` (a separate variant: launch overhead).
Then cold starts of the first model in fresh processes (read, fold, convert, to device, first
inference) and, on CUDA, the ABBA loop-overhead comparison (benchmarks/torch_overhead.py).

    python benchmarks/torch_gpu_models.py --models DIR --collect      # copy them from installed packages
    OUT=/tmp/out python benchmarks/torch_gpu_models.py --models DIR [--iterations 300] [--only a,b]

DIR holds the files named in MODELS (``--collect`` copies them from pip-installed nudenet,
rapidocr_onnxruntime, magika, onnx and silero-vad); missing ones are listed as such. One JSON document, rewritten after each section, goes to $OUT/torch_gpu_models.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
OUT = Path(os.environ.get("OUT", "/tmp/torch_gpu_models_out"))
DOC: dict[str, Any] = {"schema": "trtstudio.torch-gpu-models/1"}

# file -> (package it ships in, what it is)
MODELS = {
    "yolov8n_320n.onnx": ("nudenet 3.4.2 (nudenet/320n.onnx)", "YOLOv8n detector, dynamic batch/height/width"),
    "ch_PP-OCRv4_det_infer.onnx": ("rapidocr_onnxruntime 1.4.4", "PaddleOCR v4 text detector (paddle2onnx)"),
    "ch_ppocr_mobile_v2.0_cls_infer.onnx": ("rapidocr_onnxruntime 1.4.4", "PaddleOCR direction classifier"),
    "ch_PP-OCRv4_rec_infer.onnx": ("rapidocr_onnxruntime 1.4.4", "PaddleOCR v4 recognizer (SVTR, sequence out)"),
    "magika.onnx": ("magika 1.0.3 (models/standard_v3_3/model.onnx)", "Keras-exported file-type classifier"),
    "light_resnet50.onnx": ("onnx 1.23 (backend/test/data/light)", "ONNX's ResNet-50 test model, ConstantOfShape weights"),
    "silero_vad_16k_sequence.onnx": ("silero-vad 6.2.3 (data/)", "Silero VAD sequence model (LSTM)"),
    "silero_vad.onnx": ("silero-vad 6.2.3 (data/)", "Silero VAD main model (If on the sample rate)"),
}
# where each file lies inside its installed package (``--collect DIR`` copies them there)
SOURCES = {
    "yolov8n_320n.onnx": ("nudenet", "320n.onnx"),
    "ch_PP-OCRv4_det_infer.onnx": ("rapidocr_onnxruntime", "models/ch_PP-OCRv4_det_infer.onnx"),
    "ch_ppocr_mobile_v2.0_cls_infer.onnx": ("rapidocr_onnxruntime", "models/ch_ppocr_mobile_v2.0_cls_infer.onnx"),
    "ch_PP-OCRv4_rec_infer.onnx": ("rapidocr_onnxruntime", "models/ch_PP-OCRv4_rec_infer.onnx"),
    "magika.onnx": ("magika", "models/standard_v3_3/model.onnx"),
    "light_resnet50.onnx": ("onnx", "backend/test/data/light/light_resnet50.onnx"),
    "silero_vad_16k_sequence.onnx": ("silero_vad", "data/silero_vad_16k_sequence.onnx"),
    "silero_vad.onnx": ("silero_vad", "data/silero_vad.onnx"),
}
# Models the shape plan cannot size: ONNX Runtime fails on the planned shapes too (the recognizer's height
# must be 48; the plan guesses 256). These are given as --shapes would give them, and reported as such.
SHAPES = {"ch_PP-OCRv4_rec_infer.onnx": {"x": (1, 3, 48, 320)}}


def save() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "torch_gpu_models.json").write_text(json.dumps(DOC, indent=2, default=float) + "\n")


def section(name: str, fn: Any, *args: Any) -> None:
    t0 = time.perf_counter()
    try:
        DOC[name] = fn(*args)
    except Exception as exc:  # noqa: BLE001 - a section's failure is recorded, the next one runs
        DOC[name] = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-3000:]}
    DOC.setdefault("section_s", {})[name] = time.perf_counter() - t0
    save()
    print(f"[{name}] {time.perf_counter() - t0:.1f} s", flush=True)


def env() -> dict[str, Any]:
    import onnx
    import onnxruntime
    import torch

    out: dict[str, Any] = {"torch": torch.__version__, "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__,
                           "python": sys.version.split()[0], "cuda": torch.cuda.is_available()}
    if torch.cuda.is_available():
        out["gpu"] = torch.cuda.get_device_name(0)
    for mod in ("onnx2torch", "onnxslim"):
        try:
            from importlib.metadata import version

            out[mod] = version(mod)
        except Exception as exc:  # noqa: BLE001
            out[mod] = f"missing: {exc}"
    return out


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    x, y = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    nx, ny = np.linalg.norm(x), np.linalg.norm(y)
    if nx == 0 and ny == 0:
        return 1.0
    return float(x @ y / (nx * ny)) if nx and ny else 0.0


def compare(path: str, backend: str) -> dict[str, Any]:
    """ORT on the CPU and the torch backend on the same planned shapes and the same inputs."""
    from trtstudio.backends.base import open_backend

    shapes = SHAPES.get(Path(path).name, {})
    ort = open_backend("ort", path)
    ort.prepare_inputs(dict(shapes))
    feeds = dict(ort._feeds)  # type: ignore[attr-defined]
    ref = ort.run_outputs()  # type: ignore[attr-defined]
    plan = ort.shape_plan  # type: ignore[attr-defined]
    ort.close()
    t = open_backend(backend, path)
    try:
        t.prepare_inputs(dict(shapes), feeds)
        t.infer_once()
        got = t.outputs()  # type: ignore[attr-defined]
        out = {"device": str(t.device), "shapes": {k: list(v) for k, v in t.shapes.items()},  # type: ignore[attr-defined]
               "plan_same_as_ort": (t.shape_plan.to_json() if t.shape_plan else None) == (plan.to_json() if plan else None),  # type: ignore[attr-defined]
               "load_times_ms": dict(t.load_times), "notes": list(t.notes)}  # type: ignore[attr-defined]
    finally:
        t.close()
    outputs = []
    for i, (r, g) in enumerate(zip(ref, got, strict=False)):
        r, g = np.asarray(r), np.asarray(g)
        row: dict[str, Any] = {"index": i, "shape": list(r.shape), "torch_shape": list(g.shape), "dtype": str(r.dtype)}
        if r.shape == g.shape and r.dtype.kind == "f":
            row.update(cosine=cosine(r, g), max_abs=float(np.max(np.abs(r.astype(np.float64) - g))) if r.size else 0.0)
        elif r.shape == g.shape:
            row["equal_fraction"] = float(np.mean(r == g)) if r.size else 1.0
        outputs.append(row)
    out["outputs"] = outputs
    out["outputs_count"] = [len(ref), len(got)]
    coss = [o["cosine"] for o in outputs if "cosine" in o]
    out["min_cosine"] = min(coss) if coss else None
    out["equal"] = len(ref) == len(got) and all(o.get("cosine", 1.0) >= 0.9999 and o.get("equal_fraction", 1.0) == 1.0
                                                  and o["shape"] == o["torch_shape"] for o in outputs)
    return out


def latency(path: str, backend: str, iterations: int, cuda_graph: bool = False) -> dict[str, Any]:
    from trtstudio.profiling.session import ProfileRequest, run_profile

    doc = run_profile(ProfileRequest(model=path, backend=backend, iterations=iterations, warmup=20,
                                     shapes=dict(SHAPES.get(Path(path).name, {})), cuda_graph=cuda_graph)).to_dict()
    lat = doc.get("latency_ms", {})
    return {"median_ms": lat.get("median"), "p99_ms": lat.get("p99"), "count": lat.get("count"),
            "parts_ms": doc.get("parts_ms"), "shapes": doc.get("shapes"), "error": doc.get("error"),
            "shape_plan_in_json": doc.get("shape_plan") is not None, "notes": doc.get("notes", [])[:6]}


def one_model(path: str, backend: str, iterations: int, cuda: bool) -> dict[str, Any]:
    from trtstudio.errors import BackendError, InputError

    row: dict[str, Any] = {"package": MODELS.get(Path(path).name, ("?", "?"))[0],
                           "what": MODELS.get(Path(path).name, ("?", "?"))[1],
                           "file_bytes": Path(path).stat().st_size,
                           "shapes_given": {k: list(v) for k, v in SHAPES.get(Path(path).name, {}).items()} or None}
    try:
        row["check"] = compare(path, backend)
    except (BackendError, InputError) as exc:
        row["refused"] = str(exc)
        return row
    row["profile"] = _guarded(latency, path, backend, iterations)
    if cuda:
        row["profile_cuda_graph"] = _guarded(latency, path, backend, iterations, True)
    return row


def _guarded(fn: Any, *args: Any) -> dict[str, Any]:
    try:
        return dict(fn(*args))
    except Exception as exc:  # noqa: BLE001
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}


def models(folder: str, only: list[str], iterations: int) -> dict[str, Any]:
    import torch

    cuda = torch.cuda.is_available()
    backend = "torch-cuda" if cuda else "torch"
    out: dict[str, Any] = {"backend": backend}
    for name in MODELS:
        if only and not any(o in name for o in only):
            continue
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            out[name] = {"missing": path}
            continue
        out[name] = one_model(path, backend, iterations, cuda)
        DOC["models"] = out
        save()
        print(f"  {name}: {json.dumps(_brief(out[name]))}", flush=True)
    return out


def _brief(row: dict[str, Any]) -> dict[str, Any]:
    c = row.get("check", {})
    return {"refused": row.get("refused"), "shapes": c.get("shapes"), "min_cosine": c.get("min_cosine"),
            "equal": c.get("equal"), "median_ms": row.get("profile", {}).get("median_ms"),
            "graph_median_ms": row.get("profile_cuda_graph", {}).get("median_ms")}


_COLD = """
import json, sys, time
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
from trtstudio.backends.base import open_backend
b = open_backend(sys.argv[1], sys.argv[2])
b.prepare_inputs({})
t2 = time.perf_counter()
print(json.dumps({"import_torch_ms": (t1 - t0) * 1e3, "open_and_first_inference_ms": (t2 - t1) * 1e3,
                  **b.load_times}))
b.close()
"""


def coldstart(path: str, runs: int) -> dict[str, Any]:
    """Fresh processes: nothing imported or cached by an earlier load."""
    import torch

    backend = "torch-cuda" if torch.cuda.is_available() else "torch"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    rows = []
    for _ in range(runs):
        p = subprocess.run([sys.executable, "-c", _COLD, backend, path], capture_output=True, text=True, env=env,
                           timeout=300, check=False)
        line = (p.stdout.strip().splitlines() or [""])[-1]
        rows.append(json.loads(line) if p.returncode == 0 else {"error": p.stderr.strip()[-800:]})
    good = [r for r in rows if "error" not in r]
    keys = sorted({k for r in good for k in r})
    return {"model": Path(path).name, "backend": backend, "runs": rows,
            "median": {k: float(np.median([r[k] for r in good if k in r])) for k in keys}}


def overhead(path: str, pairs: int) -> dict[str, Any]:
    from torch_overhead import overhead as run

    # eager: short trials, many pairs (the launch-bound loop's speed drifts over seconds); graph: steady
    return {"eager": run(path, pairs=pairs, n=50), "cuda_graph": run(path, pairs=max(4, pairs // 4), n=200, cuda_graph=True)}


def collect(folder: str) -> None:
    """Copy the models from the installed packages (found without importing them: nudenet imports cv2)."""
    import importlib.util
    import shutil

    os.makedirs(folder, exist_ok=True)
    for name, (package, rel) in SOURCES.items():
        spec = importlib.util.find_spec(package)
        where = list(spec.submodule_search_locations or []) if spec else []
        src = next((os.path.join(w, rel) for w in where if os.path.exists(os.path.join(w, rel))), None)
        print(f"{name}: {src or f'not found (pip install {package})'}")
        if src:
            shutil.copyfile(src, os.path.join(folder, name))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", required=True)
    ap.add_argument("--collect", action="store_true", help="copy the models from installed packages into --models")
    ap.add_argument("--only", default="")
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--pairs", type=int, default=30)
    ap.add_argument("--sections", default="env,models,coldstart,overhead")
    args = ap.parse_args()
    if args.collect:
        collect(args.models)
        return
    only = [o for o in args.only.split(",") if o]
    wanted = set(args.sections.split(","))
    first = os.path.join(args.models, next(iter(MODELS)))
    if "env" in wanted:
        section("env", env)
    if "models" in wanted:
        section("models", models, args.models, only, args.iterations)
    if "coldstart" in wanted:
        section("coldstart", coldstart, first, args.cold_runs)
    if "overhead" in wanted and DOC.get("env", {}).get("cuda"):
        section("overhead", overhead, first, args.pairs)
    print(json.dumps({k: _brief(v) for k, v in DOC.get("models", {}).items() if isinstance(v, dict) and k.endswith(".onnx")},
                     indent=1))


if __name__ == "__main__":
    main()
