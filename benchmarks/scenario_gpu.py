"""The GPU run of the scenarios (PyTorch backend on CUDA), writing one JSON document to $OUT.

Sections (each kept when a later one fails; the document is rewritten after each):
  env          torch, CUDA, GPUs (NVML), onnx2torch
  profile      the bundled sample through onnx2torch on CUDA, batch 1 and 32, pinned vs pageable,
               against ONNX Runtime on the CPU; per-layer top 5; outputs compared with ORT
  contention   2 and 4 models, each in its own process (dedicated streams) and as threads of one
               process (dedicated and shared streams): the sample at batch 1 and 32 (launch-bound) and
               an FP16 MLP exported with torch.export (GPU-bound, 64 MiB copies each way); slowdown
               causes with their evidence; timeline overlap; per-GPU sampler; Chrome trace of one run
  cycles       load/unload over a mix, with the largest-block probe: clean, cache released, leaking
  probe        the largest-block probe repeated, and on a heap fragmented on purpose
  coldstart    open and first inference per model
  oom          a model that asks for 512 GiB mid-scenario beside one that does not
  soak         the FP16 MLP (batch 16) paced at 1,000 inferences/s, RSS and NVML per window
  overhead     scenario runner vs plain runner on CUDA
  isolation    process runner vs thread runner on CUDA (the sample, batch 1), ABBA pairs
  devices      --device 0, a device that does not exist, the device list

    OUT=/tmp/out python benchmarks/scenario_gpu.py [--quick] [--only SECTION,...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
SAMPLE = str(ROOT / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx")
OUT = Path(os.environ.get("OUT", "/tmp/scenario_gpu_out"))
DOC: dict[str, Any] = {"schema": "trtstudio.scenario-gpu-run/1"}
T0 = time.perf_counter()


def save() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "scenario_gpu.json").write_text(json.dumps(DOC, indent=1, default=float))


def section(name: str, fn: Any, *args: Any) -> None:
    t = time.perf_counter()
    try:
        DOC[name] = fn(*args)
    except BaseException as exc:  # noqa: BLE001 - keep going, report the failure
        DOC[name] = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-3000:]}
    DOC.setdefault("section_s", {})[name] = time.perf_counter() - t
    save()
    print(f"[{time.perf_counter() - T0:7.1f}s] {name} done", flush=True)


def make_models(tmp: Path) -> dict[str, str]:
    import torch

    class MLP(torch.nn.Module):
        def __init__(self, width: int = 4096, depth: int = 8) -> None:
            super().__init__()
            self.layers = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.GELU())
                                                for _ in range(depth)])

        def forward(self, x: Any) -> Any:
            return self.layers(x)

    class Boom(torch.nn.Module):
        def forward(self, x: Any) -> Any:  # 2^20 copies of a 512 KiB input: 512 GiB
            return x.repeat(1 << 20, 1)

    batch = torch.export.Dim("batch", min=1, max=65536)
    mlp = MLP().half().eval()
    ep = torch.export.export(mlp, (torch.randn(16, 4096, dtype=torch.half),), dynamic_shapes={"x": {0: batch}})
    out = {"mlp": str(tmp / "mlp_fp16.pt2"), "boom": str(tmp / "boom.pt2")}
    torch.export.save(ep, out["mlp"])
    torch.export.save(torch.export.export(Boom().eval(), (torch.randn(64, 4096, dtype=torch.half),)), out["boom"])
    return out


def env() -> dict[str, Any]:
    import torch

    from trtstudio.profiling.scenario_devices import list_gpus

    out: dict[str, Any] = {"python": sys.version.split()[0], "torch": torch.__version__, "cuda": torch.version.cuda,
                           "cuda_available": torch.cuda.is_available(), "device_count": torch.cuda.device_count(),
                           "gpus": [g.to_dict() for g in list_gpus()]}
    try:
        import onnx2torch

        out["onnx2torch"] = getattr(onnx2torch, "__version__", "installed")
    except Exception as exc:  # noqa: BLE001
        out["onnx2torch"] = f"unusable: {exc}"
    return out


def _profile_one(name: str, path: str, shapes: dict[str, tuple[int, ...]], iterations: int, **options: Any) -> dict[str, Any]:
    from trtstudio.backends.base import open_backend
    from trtstudio.profiling.memory import MemoryMonitor, default_probes
    from trtstudio.profiling.runner import RunConfig, Runner

    t0 = time.perf_counter()
    b = open_backend(name, path, **options)
    open_s = time.perf_counter() - t0
    try:
        b.prepare_inputs(shapes)
        monitor = MemoryMonitor(default_probes(gpu=name != "ort", device=int(options.get("device") or 0)), interval_ms=100)
        r = Runner(b, RunConfig(warmup=30, iterations=iterations), monitor=monitor).run()
        d = r.to_dict()
        keep = {k: d[k] for k in ("latency_ms", "jitter_ms", "parts_ms", "cold_ms", "throughput", "warnings", "error")}
        keep["memory"] = {**b.memory(), **{k: v for k, v in d["memory"].items() if isinstance(v, dict)}}
        keep.update(open_s=open_s, notes=list(b.notes), shapes={k: list(v) for k, v in getattr(b, "shapes", {}).items()},
                    load_times=getattr(b, "load_times", {}))
        return keep
    finally:
        b.close()


def profile() -> dict[str, Any]:
    from trtstudio.backends.base import open_backend

    out: dict[str, Any] = {}
    for batch, n in ((1, 1000), (32, 500)):
        shapes: dict[str, tuple[int, ...]] = {"input": (batch, 3, 224, 224)}
        out[f"torch_cuda_b{batch}"] = _profile_one("torch-cuda", SAMPLE, shapes, n, device=0)
        out[f"ort_cpu_b{batch}"] = _profile_one("ort", SAMPLE, shapes, 200 if batch == 1 else 50)
    b32: dict[str, tuple[int, ...]] = {"input": (32, 3, 224, 224)}
    out["torch_cuda_b32_pageable"] = _profile_one("torch-cuda", SAMPLE, b32, 300, pinned=False)
    # the same input through both: outputs agree?
    t = open_backend("torch-cuda", SAMPLE)
    o = open_backend("ort", SAMPLE)
    try:
        x = np.random.default_rng(0).uniform(-1, 1, (4, 3, 224, 224)).astype(np.float32)
        t.prepare_inputs({}, {"input": x})
        t.infer_once()
        o.prepare_inputs({}, {"input": x})
        a, b = t.outputs()[0], o.run_outputs()[0]  # type: ignore[attr-defined]
        out["torch_vs_ort_max_abs_diff"] = float(np.max(np.abs(a - b)))
        out["torch_vs_ort_top1_agree"] = float(np.mean(a.argmax(1) == b.argmax(1)))
        layers = t.per_layer_profile(10)
        out["per_layer_top5"] = sorted(layers, key=lambda r: -r["time_ms"])[:5]
        out["per_layer_rows"] = len(layers)
    finally:
        t.close()
        o.close()
    return out


def contention(models: dict[str, str], quick: bool) -> dict[str, Any]:
    from trtstudio.profiling import scenario as sc
    from trtstudio.profiling.export import write_trace
    from trtstudio.profiling.timeline import chrome_trace

    out: dict[str, Any] = {}
    cases: list[tuple[str, str, dict[str, tuple[int, ...]], int, tuple[int, ...]]] = [
        ("sample_b1", SAMPLE, {"input": (1, 3, 224, 224)}, 300 if quick else 500, (2,)),  # the launch-bound case
        ("sample_b32", SAMPLE, {"input": (32, 3, 224, 224)}, 200 if quick else 300, (2, 4)),
        ("mlp_fp16_b8192", models["mlp"], {"x": (8192, 4096)}, 60 if quick else 100, (2, 4))]
    modes = (("process", "dedicated"), ("thread", "dedicated"), ("thread", "shared"))
    for label, path, shapes, iters, counts in cases:
        for n in counts:
            for isolation, streams in modes:
                spec = sc.ModelSpec(path, "torch-cuda", 0, shapes)
                cfg = sc.ContentionConfig(iterations=iters, warmup=10, streams=streams, isolation=isolation)
                t0 = time.perf_counter()
                r = sc.run_contention([spec] * n, cfg)
                d = r.to_json()
                out[f"{label}_x{n}_{isolation}_{streams}"] = {
                    "isolation": d["isolation"], "wall_s": time.perf_counter() - t0,
                    "models": [{"model": m["model"], "alone": _brief(m.get("alone")), "together": _brief(m.get("together")),
                                "together_processes": _brief(m.get("together_processes")),
                                "slowdown": m.get("slowdown")} for m in d["models"]],
                    "throughput": d.get("throughput"), "timeline": {k: v for k, v in d.get("timeline", {}).items() if k != "rows"},
                    "gpus": d.get("gpus"), "failure": d["failure"], "notes": d["notes"][:4],
                }
                if label.startswith("mlp") and n == 2 and streams == "dedicated" and r.timeline is not None:
                    write_trace(OUT / f"contention_mlp_x2_{isolation}.trace.json", chrome_trace(r.timeline, f"mlp x2 {isolation}"))
    return out


def _brief(s: dict[str, Any] | None) -> dict[str, Any] | None:
    if not s:
        return s
    keys = ("count", "median", "p99", "jitter_ms", "throughput_per_s", "h2d_ms", "compute_ms", "d2h_ms", "enqueue_ms",
            "cpu_ms_per_inference", "cores_used")
    return {k: s.get(k) for k in keys}


def cycles(models: dict[str, str]) -> dict[str, Any]:
    from trtstudio.profiling import scenario as sc

    mix = [sc.ModelSpec(SAMPLE, "torch-cuda", 0, {"input": (32, 3, 224, 224)}), sc.ModelSpec(models["mlp"], "torch-cuda", 0, {"x": (4096, 4096)})]
    out: dict[str, Any] = {}
    kept: list[Any] = []

    def leaky(spec: sc.ModelSpec) -> Any:
        b = sc.open_model(spec)
        kept.append((b._module, b._dev_in))  # type: ignore[attr-defined]  # weights and inputs stay on the GPU
        return b

    for name, cfg, opener in (("clean", sc.CyclesConfig(cycles=8, inferences=30), sc.open_model),
                              ("release_cache", sc.CyclesConfig(cycles=8, inferences=30, release_cache=True), sc.open_model),
                              ("leaking", sc.CyclesConfig(cycles=8, inferences=30, release_cache=True), leaky)):
        r = sc.run_cycles(mix, cfg, opener=opener)
        d = r.to_dict()
        out[name] = {"verdict": d["verdict"], "failure": d["failure"], "largest_block_probe_ms": d.get("largest_block_probe_ms"),
                     "cycles": [{k: c.get(k) for k in ("cycle", "gpu_used_bytes", "process_gpu_bytes", "cuda_free_bytes",
                                                      "largest_block_bytes", "host_rss_bytes", "torch")} for c in d["cycles"]]}
    kept.clear()
    return out


def probe() -> dict[str, Any]:
    import argparse as ap

    import torch
    from scenario import probe as run_probe

    torch.cuda.empty_cache()
    return run_probe(ap.Namespace(device=0, repeats=20))


def coldstart(models: dict[str, str]) -> dict[str, Any]:
    from trtstudio.profiling import scenario as sc

    r = sc.run_coldstart([sc.ModelSpec(SAMPLE, "torch-cuda", 0, {"input": (1, 3, 224, 224)}),
                          sc.ModelSpec(models["mlp"], "torch-cuda", 0, {"x": (64, 4096)}),
                          sc.ModelSpec(SAMPLE, "ort", None, {"input": (1, 3, 224, 224)})])
    return r.to_dict()


def oom(models: dict[str, str]) -> dict[str, Any]:
    import torch

    from trtstudio.backends.base import open_backend
    from trtstudio.profiling import scenario as sc

    specs = [sc.ModelSpec(models["mlp"], "torch-cuda", 0, {"x": (64, 4096)}, name="mlp"),
             sc.ModelSpec(models["boom"], "torch-cuda", 0, {}, name="boom")]

    def opener(spec: sc.ModelSpec) -> Any:  # the boom model's buffers are sized by a run: open it lazily
        if spec.name != "boom":
            return sc.open_model(spec)
        b = open_backend("torch-cuda", spec.path)
        b._host_in = [torch.randn(64, 4096, dtype=torch.half).pin_memory()]  # type: ignore[attr-defined]
        b._dev_in = [b._host_in[0].to("cuda")]  # type: ignore[attr-defined]
        b._host_out = [torch.empty(1, pin_memory=True)]  # type: ignore[attr-defined]
        return b

    # the opener is a closure (it patches the boom model's buffers): threads, which need no pickling
    r = sc.run_contention(specs, sc.ContentionConfig(iterations=50, warmup=0, isolation="thread", gil_check=False), opener=opener)
    after = open_backend("torch-cuda", models["mlp"])
    after.prepare_inputs({"x": (64, 4096)})
    ok_after = after.infer_once().total_ms
    after.close()
    d = r.to_dict()
    return {"failure": d["failure"], "models": [{"model": m["model"], "alone": _brief(m.get("alone"))} for m in d["models"]],
            "next_model_runs_after_oom_ms": ok_after}


def soak(models: dict[str, str], seconds: float) -> dict[str, Any]:
    from trtstudio.profiling import scenario as sc

    # the FP16 MLP at batch 16 runs well above 1,000/s on its own; the soak paces it at 1,000/s
    r = sc.run_soak(sc.ModelSpec(models["mlp"], "torch-cuda", 0, {"x": (16, 4096)}),
                    sc.SoakConfig(minutes=seconds / 60, window_s=5, rate_hz=1000))
    d = r.to_dict()
    w = d["windows"]
    t = np.array([x["t_end_s"] for x in w])
    rss = np.array([x["host_rss_bytes"] for x in w], float) / 2**20
    half = len(w) // 2
    return {"windows": [{k: x.get(k) for k in ("window", "t_end_s", "count", "median", "p99", "throughput_per_s",
                                                 "host_rss_bytes", "gpu_used_bytes")} for x in w],
            "drift": d.get("drift"), "memory": d.get("memory"), "failure": d["failure"],
            "rss_slope_mib_per_hour_second_half": float(np.polyfit(t[half:], rss[half:], 1)[0] * 3600) if len(w) - half > 2 else None,
            "inferences": d.get("inferences")}


def overhead(quick: bool) -> dict[str, Any]:
    import argparse as ap

    from scenario import overhead as run_overhead

    # short trials, many pairs: this launch-bound model's speed flips between states that last about a second
    return run_overhead(ap.Namespace(backend="torch-cuda", onnx="sample", batch=1, threads=None, n=50, pairs=300,
                                     seconds=60.0 if quick else 180.0, warmup=20, cpus="auto", gpu_sampling=True,
                                     control=False, main_thread=False, mlp=False, out=None))


def isolation(quick: bool) -> dict[str, Any]:
    import argparse as ap

    from scenario_isolation import bench_model, model_spec

    args = ap.Namespace(n=100, warmup=20, pairs=100, seconds=45.0 if quick else 120.0)
    return bench_model(model_spec("sample", "torch-cuda", None), args)


def devices(models: dict[str, str]) -> dict[str, Any]:
    from trtstudio.backends.base import open_backend
    from trtstudio.errors import BackendError
    from trtstudio.profiling.scenario_devices import GpuSampler, gpu_reading, list_gpus

    out: dict[str, Any] = {"gpus": [g.label() for g in list_gpus()], "reading_gpu0": gpu_reading(0)}
    b = open_backend("torch", models["mlp"], device=0)
    out["device_0"] = str(b.device)  # type: ignore[attr-defined]
    b.close()
    try:
        open_backend("torch-cuda", models["mlp"], device=len(list_gpus()))
        out["missing_device"] = "opened?!"
    except BackendError as exc:
        out["missing_device"] = str(exc)
    sampler = GpuSampler(interval_ms=50)
    sampler.start()
    time.sleep(0.5)
    sampler.stop()
    out["sampler_summary"] = sampler.summary()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--soak-seconds", type=float, default=60.0)
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    import tempfile

    tmp = Path(tempfile.mkdtemp())
    section("env", env)
    models = make_models(tmp)
    plan: list[tuple[Any, ...]] = [("profile", profile), ("contention", contention, models, args.quick), ("cycles", cycles, models),
            ("probe", probe), ("coldstart", coldstart, models), ("oom", oom, models), ("devices", devices, models),
            ("overhead", overhead, args.quick), ("isolation", isolation, args.quick), ("soak", soak, models, args.soak_seconds)]
    for name, fn, *fargs in plan:
        if only and name not in only:
            continue
        section(name, fn, *fargs)
    DOC["wall_s"] = time.perf_counter() - T0
    save()


if __name__ == "__main__":
    main()
