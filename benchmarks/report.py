"""Time a report of a 5,000-layer engine with a 1,000,000-sample run: build, HTML, JSON, CSV, session.

    python benchmarks/report.py [--layers 5000] [--samples 1000000] [--pdf]

The engine has layers of several types and precisions with times, tactics, ONNX nodes and a
finding on every 20th layer; the run has 1,000,000 latencies (gamma-distributed with spikes), a
memory series of 5,000 points and a 5,000-row per-layer profile. Budget: build + write <= 5 s for
HTML and for JSON (each). Prints JSON lines (one per measurement).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from trtstudio.engine.model import EngineInfo, Finding, Layer, LayerTime, TensorDesc
from trtstudio.report.model import Report, make_session
from trtstudio.report.session import RunData, load_session, write_session
from trtstudio.report.writers import write_report

BUDGET_S = 5.0
TYPES = ("Convolution", "Reformat", "PointWise", "Shuffle", "Myelin", "Pooling", "Gemm")
PRECISIONS = ("FP16", "FP16", "FP32", "INT8")


def synth_engine(n: int) -> EngineInfo:
    """A synthetic ``n``-layer engine with times, findings and ONNX nodes."""
    rng = np.random.default_rng(0)
    times = rng.gamma(2.0, 0.01, n)
    layers = []
    for i in range(n):
        p = PRECISIONS[i % len(PRECISIONS)]
        layers.append(Layer(
            index=i, name=f"/block{i // 6}/layer{i}/Conv + /block{i // 6}/layer{i}/Relu", type=TYPES[i % len(TYPES)],
            inputs=[TensorDesc(f"t{i}", [1, 64, 56, 56], p, "Channel major")],
            outputs=[TensorDesc(f"t{i + 1}", [1, 64, 56, 56], p, "Channel major")],
            tactic=f"sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_nhwckrsc_nhwc_tilesize128x128x32_{i % 13}",
            onnx_nodes=[f"/block{i // 6}/layer{i}/Conv", f"/block{i // 6}/layer{i}/Relu"], mapping_confidence=1.0,
            time=LayerTime(total_ms=float(times[i]) * 100, average_ms=float(times[i]), count=100),
        ))
    findings = [Finding("reformat", "warning", f"layer {i} converts FP32 to FP16", "align precisions", layers[i].name, i)
                for i in range(0, n, 20)]
    return EngineInfo(layers=layers, sources=["synthetic.json"], formats=["synthetic"], findings=findings,
                      memory={"device_memory": 123 << 20, "weights": 45 << 20, "engine_size": 60 << 20},
                      build_settings={"targets": ["SM86"], "opt_level": 3}, versions={"tensorrt": "10.x"})


def synth_run(samples: int, layers: int) -> RunData:
    """A synthetic run of ``samples`` inferences."""
    rng = np.random.default_rng(1)
    lat = rng.gamma(9.0, 0.1, samples).astype(np.float32)
    lat[rng.integers(0, samples, samples // 1000)] *= 5
    p = np.percentile(lat, [50, 90, 95, 99, 99.9])
    stats = {
        "latency_ms": {"count": samples, "mean": float(lat.mean()), "median": float(p[0]), "p90": float(p[1]),
                       "p95": float(p[2]), "p99": float(p[3]), "p999": float(p[4]), "min": float(lat.min()),
                       "max": float(lat.max()), "std": float(lat.std()), "cov": float(lat.std() / lat.mean() * 100)},
        "throughput": {"inferences_per_s": 1000 / float(lat.mean()), "samples_per_s": 1000 / float(lat.mean())},
        "memory": {"gpu_used_bytes": {"first": 1 << 30, "last": 1 << 30, "peak": 1 << 30,
                                      "leak": {"verdict": "stable", "reason": "flat", "slope_mib_per_1k": 0.0}}},
        "warnings": [],
    }
    t = np.linspace(0, 900, 5000)
    memory = {"t_s": t, "index": np.linspace(0, samples, 5000).astype(np.int64),
              "gpu_used_bytes": ((1 << 30) + rng.integers(0, 1 << 20, 5000)).astype(np.int64)}
    rows = [{"name": f"node{i}", "onnx_nodes": [f"node{i}"], "provider": "CUDA", "time_ms": 0.01} for i in range(layers)]
    return RunData(name="bench", backend="tensorrt", stats=stats, latency_ms=lat, memory=memory, layers=rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=5000)
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--pdf", action="store_true", help="also time the PDF (needs PySide6)")
    args = ap.parse_args()
    engine = synth_engine(args.layers)
    run = synth_run(args.samples, args.layers)
    t0 = time.perf_counter()
    session = make_session(engine=engine, run=run, title="benchmark")
    t_session = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        fmts = ["html", "json", "csv"] + (["pdf"] if args.pdf else [])
        for fmt in fmts:
            t0 = time.perf_counter()
            rep = Report.from_session(session)
            t_build = time.perf_counter() - t0
            out = write_report(rep, d / f"r.{fmt}")
            total = time.perf_counter() - t0
            size = sum(p.stat().st_size for p in out)
            print(json.dumps({"bench": f"report_{fmt}", "layers": args.layers, "samples": args.samples,
                              "build_s": round(t_build, 3), "build_and_write_s": round(total, 3), "bytes": size,
                              "budget_s": BUDGET_S if fmt in ("html", "json") else None,
                              "ok": total <= BUDGET_S if fmt in ("html", "json") else None}))
        t0 = time.perf_counter()
        write_session(d / "s.trtstudio", session)
        t_save = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = load_session(d / "s.trtstudio")
        t_load = time.perf_counter() - t0
        assert again.runs[0].latency_ms.size == args.samples
        print(json.dumps({"bench": "session", "make_s": round(t_session, 3), "save_s": round(t_save, 3),
                          "load_s": round(t_load, 3), "bytes": (d / "s.trtstudio").stat().st_size}))


if __name__ == "__main__":
    main()
