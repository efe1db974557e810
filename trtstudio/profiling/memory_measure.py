"""``trtstudio memory MODEL --measure``: what N processes serving one model take on the GPU, predicted
and then measured (issue 49, item 5), on torch-cuda.

The prediction comes from two measured parts that do not depend on how many processes run:

- the **CUDA context and libraries** of one process: a probe process that initialises CUDA and
  cuBLAS/cuDNN through torch (a small matmul and a convolution) and holds nothing else; its GPU
  memory (NVML) less what torch's allocator reserved is what every process pays before its model;
- the **model's own memory** in one process: the allocator's reservation (weights, activations,
  cached blocks) and whatever else the process holds beyond the probe (kernels loaded for the
  model, workspaces), from one process that loaded the model and ran it.

N processes are then predicted to take N x (context + model), and measured: N child processes each
load the model and run it, hold it, and report; the GPU's used memory over its baseline (NVML) with
all N alive is the measurement, beside the sum of the processes' own figures where NVML lists them
(in a container it may not). Each child is a whole ``python -m trtstudio.profiling.memory_measure
--child`` process, as a deployment's replicas are.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

SCHEMA = "trtstudio.memory-measure/1"
SETTLE_S = 0.5  # after the last child reports, before the device is read (NVML's figures lag a little)
WARM_INFERENCES = 5


def _nvml_device(device: int) -> dict[str, int]:
    from trtstudio.measure.devices import nvml_memory

    return nvml_memory(device)


def _process_bytes(device: int) -> int | None:
    return _nvml_device(device).get("process_gpu_bytes")


def _probe_main(device: int) -> dict[str, Any]:
    """A process with CUDA, cuBLAS and cuDNN initialised and no model: what every process pays."""
    import torch

    dev = torch.device(f"cuda:{device}")
    torch.cuda.set_device(dev)
    a = torch.ones((64, 64), device=dev)
    (a @ a).sum().item()  # cuBLAS
    x = torch.ones((1, 3, 16, 16), device=dev)
    torch.nn.functional.conv2d(x, torch.ones((4, 3, 3, 3), device=dev)).sum().item()  # cuDNN
    torch.cuda.synchronize(dev)
    reserved = int(torch.cuda.memory_reserved(dev))
    return {"pid": os.getpid(), "process_gpu_bytes": _process_bytes(device), "torch_reserved_bytes": reserved}


def _child_main(model: str, backend: str, device: int) -> dict[str, Any]:
    """Load ``model`` on ``backend``, run it, report its memory (the process then waits on stdin)."""
    from trtstudio.profiling.session import ProfileRequest, open_prepared

    b = open_prepared(ProfileRequest(model=model, backend=backend, device=device, variant_rounds=0))
    for _ in range(WARM_INFERENCES):
        b.infer_once()
    out: dict[str, Any] = {"pid": os.getpid(), "process_gpu_bytes": _process_bytes(device)}
    out.update({k: v for k, v in b.memory().items() if k.startswith("torch_")})
    out["_backend"] = b  # kept alive by the caller, not printed
    return out


@dataclass
class _Child:
    proc: subprocess.Popen[str]
    report: dict[str, Any] = field(default_factory=dict)


def _spawn(args: list[str], env: dict[str, str]) -> _Child:
    cmd = [sys.executable, "-m", "trtstudio.profiling.memory_measure", *args]
    return _Child(subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, env=env))


def _read_report(child: _Child, timeout_s: float) -> dict[str, Any]:
    from trtstudio.errors import BackendError

    assert child.proc.stdout is not None
    deadline = time.monotonic() + timeout_s
    line = ""
    while time.monotonic() < deadline:
        line = child.proc.stdout.readline()
        if line.startswith("{") or not line:
            break
    if not line.startswith("{"):
        err = ""
        try:
            child.proc.wait(timeout=10)  # it closed its output: its last words are on stderr
            err = child.proc.stderr.read() if child.proc.stderr is not None else ""
        except subprocess.TimeoutExpired:
            pass
        raise BackendError(f"a measuring process failed: {(err.strip().splitlines() or ['no report'])[-1]}")
    child.report = json.loads(line)
    return child.report


def _release(children: list[_Child]) -> None:
    for c in children:
        try:
            if c.proc.stdin is not None:
                c.proc.stdin.write("exit\n")
                c.proc.stdin.flush()
        except OSError:
            pass
    for c in children:
        try:
            c.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            c.proc.kill()
            c.proc.wait()


def _hold(args: list[str], count: int, device: int, timeout_s: float) -> tuple[list[dict[str, Any]], int]:
    """Start ``count`` children of ``args``, wait until each has reported, read the device's used
    bytes with all of them alive, release them. Returns their reports and the device's used bytes."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    children = [_spawn(args, env) for _ in range(count)]
    try:
        reports = [_read_report(c, timeout_s) for c in children]
        time.sleep(SETTLE_S)
        used = _nvml_device(device)["gpu_used_bytes"]
    finally:
        _release(children)
    return reports, used


def _baseline(device: int) -> int:
    time.sleep(SETTLE_S)
    return _nvml_device(device)["gpu_used_bytes"]


def measure(model: str, backend: str = "torch-cuda", instances: tuple[int, ...] = (1, 2, 4), device: int = 0,
            timeout_s: float = 300.0) -> dict[str, Any]:
    """Predict and measure ``instances`` processes of ``model`` on ``backend`` (see the module
    docstring): ``{schema, model, backend, device, baseline_bytes, context: {...}, model_bytes,
    per_process_bytes, rows: [{instances, predicted_bytes, measured_bytes, processes_bytes, error}]}``
    (``error``: measured over predicted less one)."""
    from trtstudio.errors import BackendError, InputError

    if backend != "torch-cuda":
        raise InputError("--backend", f"memory --measure runs torch-cuda models (TensorRT engines need the TensorRT "
                                      f"runtime that built them on a GPU it supports), not '{backend}'")
    try:
        base = _baseline(device)
    except BackendError as exc:
        raise BackendError(f"memory --measure needs a GPU with NVML: {exc}") from exc
    probe, used = _hold(["--probe", "--device", str(device)], 1, device, timeout_s)
    ctx_device = used - base
    ctx_proc = probe[0].get("process_gpu_bytes")
    context = (ctx_proc if ctx_proc is not None else ctx_device) - int(probe[0].get("torch_reserved_bytes") or 0)
    one, used1 = _hold(["--child", model, "--backend", backend, "--device", str(device)], 1, device, timeout_s)
    own = one[0].get("process_gpu_bytes")
    one_total = int(own) if own is not None else used1 - base
    model_bytes = one_total - context
    rows = []
    for n in instances:
        predicted = n * (context + model_bytes)
        reports, used_n = (one, used1) if n == 1 else _hold(
            ["--child", model, "--backend", backend, "--device", str(device)], n, device, timeout_s)
        measured = used_n - base
        procs = [int(r["process_gpu_bytes"]) for r in reports if r.get("process_gpu_bytes") is not None]
        rows.append({"instances": n, "predicted_bytes": predicted, "measured_bytes": measured,
                     "processes_bytes": sum(procs) if len(procs) == len(reports) else None,
                     "per_process_torch_reserved_bytes": [r.get("torch_reserved_bytes") for r in reports],
                     "error": measured / predicted - 1 if predicted else None})
    return {"schema": SCHEMA, "model": model, "backend": backend, "device": device, "baseline_bytes": base,
            "context": {"bytes": context, "source": "a probe process: CUDA, cuBLAS and cuDNN initialised by torch, "
                                                    "its GPU memory (NVML) less torch's reservation"},
            "model_bytes": model_bytes, "model_torch_reserved_bytes": one[0].get("torch_reserved_bytes"),
            "per_process_bytes": context + model_bytes, "rows": rows}


def render_text(doc: dict[str, Any]) -> str:
    """The measurement as text: the two parts, then predicted against measured per process count."""
    mib = 2 ** 20
    lines = [f"{doc['model']} on {doc['backend']} (GPU {doc['device']}): per process "
             f"{doc['per_process_bytes'] / mib:.0f} MiB = CUDA context and libraries {doc['context']['bytes'] / mib:.0f} MiB"
             f" + the model {doc['model_bytes'] / mib:.0f} MiB (torch reserved "
             f"{(doc.get('model_torch_reserved_bytes') or 0) / mib:.0f} MiB)",
             f"  {'processes':>9}  {'predicted':>12}  {'measured':>12}  {'error':>7}"]
    for r in doc["rows"]:
        err = f"{100 * r['error']:+.1f} %" if r["error"] is not None else "-"
        lines.append(f"  {r['instances']:>9}  {r['predicted_bytes'] / mib:>8.0f} MiB  {r['measured_bytes'] / mib:>8.0f} MiB"
                     f"  {err:>7}")
    return "\n".join(lines)


def _main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m trtstudio.profiling.memory_measure")
    ap.add_argument("--probe", action="store_true")
    ap.add_argument("--child", metavar="MODEL")
    ap.add_argument("--backend", default="torch-cuda")
    ap.add_argument("--device", type=int, default=0)
    args = ap.parse_args(argv)
    held = _probe_main(args.device) if args.probe else _child_main(args.child, args.backend, args.device)
    print(json.dumps({k: v for k, v in held.items() if not k.startswith("_")}), flush=True)
    sys.stdin.readline()  # hold everything until the parent has read the device
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
