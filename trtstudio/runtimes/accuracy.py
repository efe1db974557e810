"""Accuracy and latency of each runtime's engine against ONNX Runtime's FP32 outputs, where it can run.

Whether an engine can run here is :func:`trtstudio.engine.compat.compare_engine` with the runtime's
own version (not this process's) and this machine's GPUs: an ``error`` finding (no NVIDIA GPU, a
TensorRT-RTX engine on SM90, a target the GPU is not) is the reason shown, and nothing runs. Where it
can, the runtime's Python runs it (:mod:`trtstudio.runtimes.engine_run`) on inputs made here from the
build's shape plan (opt shapes, seeded), and its outputs are compared with ONNX Runtime's on the same
inputs (:func:`trtstudio.precision.validate.compare_arrays`).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.runtimes.manage import child_env, source_shim

RUNS = 50  # timed inferences per engine (after 10 warm-up)


def _machine_for(module: str | None, version: str | None, here: Any) -> Any:
    from trtstudio.engine.compat import Machine

    return Machine(runtimes={module: version} if module and version else {}, gpus=here.gpus, driver=here.driver,
                   cuda_driver=here.cuda_driver, probed=here.probed)


def _inputs(doc: dict[str, Any]) -> dict[str, np.ndarray]:
    from trtstudio.backends.inputs import random_array

    rng = np.random.default_rng(0)
    plan = doc.get("shape_plan") or {}
    return {i["name"]: random_array(i.get("dtype") or "float32", tuple(i["opt"]), rng) for i in plan.get("inputs") or []}


def _reference(model: str, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    import onnxruntime as ort

    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds), strict=True))


def check_accuracy(model: str, columns: list[Any], build_args: list[str]) -> list[str]:
    """Fill each built column's ``accuracy`` (and ``latency`` where it ran); notes for the result."""
    from trtstudio.engine.compat import compare_engine, this_machine

    here = this_machine(probe_gpu=True)
    runnable = []
    for col in columns:
        if not col.ok:
            col.accuracy = {"ran": False, "reason": "not built", "text": "-"}
            continue
        rt = col.runtime
        findings = compare_engine(col.side.engine, col.doc.get("engine_path"), _machine_for(rt.module, rt.version, here))
        errors = [f["message"] for f in findings if f["severity"] == "error"]
        if errors:
            col.accuracy = {"ran": False, "reason": errors[0], "text": f"not run: {errors[0]}"}
        else:
            runnable.append(col)
    if not runnable:
        return []
    feeds = _inputs(runnable[0].doc)
    try:
        ref = _reference(model, feeds)
    except Exception as exc:  # noqa: BLE001 - no reference: say so on every column
        for col in runnable:
            col.accuracy = {"ran": False, "reason": f"no ONNX Runtime reference: {exc}", "text": "not run: no reference"}
        return [f"ONNX Runtime could not run {Path(model).name} for the reference: {exc}"]
    for col in runnable:
        _run_column(col, feeds, ref)
    return []


def _run_column(col: Any, feeds: dict[str, np.ndarray], ref: dict[str, np.ndarray]) -> None:
    from trtstudio.precision.validate import compare_arrays

    with tempfile.TemporaryDirectory(prefix="trtstudio-run-") as tmp:
        src, dst = Path(tmp) / "inputs.npz", Path(tmp) / "outputs.npz"
        np.savez(src, **feeds)  # type: ignore[arg-type]
        cmd = [col.runtime.python, "-m", "trtstudio.runtimes.engine_run", col.doc["engine_path"],
               col.runtime.module or "tensorrt", str(src), str(dst), str(RUNS)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=child_env(source_shim()), check=False)
        if proc.returncode != 0 or not dst.is_file():
            last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            col.accuracy = {"ran": False, "reason": last, "text": f"run failed: {last}"}
            return
        col.latency = json.loads(proc.stdout)
        with np.load(dst) as outs:
            metrics = [compare_arrays(n, ref[n], outs[n]).to_json() for n in ref if n in outs.files]
    worst = max(metrics, key=lambda m: m["rel"], default=None)
    text = (f"worst output {worst['name']}: rel. error {worst['rel']:.2e}, cosine {worst['cosine']:.6f}"
            if worst else "no output in common")
    col.accuracy = {"ran": True, "outputs": metrics, "text": text}
