"""Time reading a 50,000-layer detailed inspector JSON (plus a matching --exportProfile).

Prints JSON lines: {"bench": "engine_read", "layers", "bytes", "read_seconds", ...}. Budget: reading
stays under ~1 s so that read + diagnose + map fit in 2 s.

    python benchmarks/engine_read.py [--layers 50000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

FORMATS = (
    "Row major linear FP32",
    "Channel major FP16 format where channel % 8 == 0",
    "Thirty-two wide channel vectorized row major Int8 format",
    "Half",
    "Float",
)


def make_layers(n: int) -> dict:  # type: ignore[type-arg]
    """A realistic detailed inspector document of ``n`` layers (conv, reformat, kgen mixes)."""
    layers = []
    prev = "input"
    for i in range(n):
        kind = i % 5
        out = f"/block{i // 5}/act_{i}_output_0"
        fin, fout = FORMATS[i % 3], FORMATS[(i + 1) % 3]
        tin = {"Name": prev, "Location": "Device", "Dimensions": [32, 64, 56, 56], "Format/Datatype": fin}
        tout = {"Name": out, "Location": "Device", "Dimensions": [32, 64, 56, 56], "Format/Datatype": fout}
        if kind == 0:
            rec = {
                "Name": f"Reformatting CopyNode for Input Tensor 0 to /block{i // 5}/conv/Conv",
                "LayerType": "Reformat", "Inputs": [tin], "Outputs": [tout], "ParameterType": "Reformat",
                "Origin": "REFORMAT", "TacticValue": "0x0000000000000000", "StreamId": 0, "Metadata": "",
            }
        elif kind in (1, 2):
            rec = {
                "Name": f"/block{i // 5}/conv{i}/Conv + /block{i // 5}/relu{i}/Relu", "LayerType": "CaskConvolution",
                "Inputs": [tin], "Outputs": [tout], "ParameterType": "Convolution", "Kernel": [3, 3],
                "PaddingMode": "kEXPLICIT_ROUND_DOWN", "PrePadding": [1, 1], "PostPadding": [1, 1],
                "Stride": [1, 1], "Dilation": [1, 1], "OutMaps": 64, "Groups": 1,
                "Weights": {"Type": "Half", "Count": 36864}, "Bias": {"Type": "Half", "Count": 64},
                "HasBias": 1, "HasReLU": 1, "HasSparseWeights": 0, "Activation": "RELU",
                "TacticName": "sm80_xmma_fprop_implicit_gemm_f16f16_f16f16_f16_nhwckrsc_nhwc_tilesize128x128x32",
                "TacticValue": f"0x{i * 2654435761 % (1 << 64):016x}", "StreamId": 0,
                "Metadata": f"[ONNX Layer: /block{i // 5}/conv{i}/Conv]\x1e[ONNX Layer: /block{i // 5}/relu{i}/Relu]",
            }
        else:
            rec = {
                "Name": f"__myl_AddMulSum_myl{i}_{i % 7}", "LayerType": "kgen",
                "Inputs": [{"Name": prev, "Dimensions": [32, 200704], "Format/Datatype": "Half"}],
                "Outputs": [{"Name": out, "Dimensions": [32, 200704], "Format/Datatype": "Half"}],
                "TacticName": f"__myl_AddMulSum_0x{i:032x}", "StreamId": 0,
                "Metadata": f"[ONNX Layer: /block{i // 5}/add{i}]\x1f[ONNX Layer: /block{i // 5}/mul{i}]",
            }
        layers.append(rec)
        prev = out
    return {"Layers": layers, "Bindings": ["input", prev]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=50000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from trtstudio.engine.load import load_engine
    from trtstudio.engine.readers import read_file

    with tempfile.TemporaryDirectory() as tmp:
        doc = make_layers(args.layers)
        graph = Path(tmp) / "big.engine.graph.json"
        graph.write_text(json.dumps(doc, indent=1))
        prof = [{"count": 100}] + [
            {"name": rec["Name"], "timeMs": 0.5, "averageMs": 0.005, "medianMs": 0.005, "percentage": 0.002}
            for rec in doc["Layers"]
        ]
        profile = Path(tmp) / "big.engine.profile.json"
        profile.write_text(json.dumps(prof))
        del doc, prof

        best_read = best_load = float("inf")
        n = 0
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            res = read_file(graph)
            best_read = min(best_read, time.perf_counter() - t0)
            n = len(res.info.layers)
            del res
            t0 = time.perf_counter()
            info = load_engine([graph, profile])
            best_load = min(best_load, time.perf_counter() - t0)
            assert len(info.layers) == n and info.total_time_ms is not None
            del info
        print(json.dumps({
            "bench": "engine_read",
            "layers": n,
            "bytes": graph.stat().st_size,
            "read_seconds": round(best_read, 4),
            "read_plus_profile_seconds": round(best_load, 4),
            "budget_seconds": 1.0,
            "ok": best_read <= 1.0,
        }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
