"""Valid seed files, one per format trtstudio reads, written into a folder.

Everything is made here (real ONNX files through onnx.helper, inspector/profile/times JSON and a
trtexec log in the exact shapes TensorRT writes, a session through the real session writer) or taken
from the bundled sample, so the suite runs without ../shared.
"""

from __future__ import annotations

import json
from pathlib import Path

import onnx

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "trtstudio" / "resources" / "sample"
RTX_LOG = SAMPLE_DIR / "mobilenetv2_035.rtx-sm86.build.log"

LAYER_NAMES = ["/conv1/Conv + /relu/Relu", "/conv2/Conv + /add/Add", "/pool/GlobalAveragePool",
               "Reformatting CopyNode for Input Tensor 0 to /fc/Gemm", "/fc/Gemm"]


def _tensor(name: str, dims: list[int], fmt: str) -> dict:
    return {"Name": name, "Location": "Device", "Dimensions": dims, "Format/Datatype": fmt}


def inspector_doc() -> dict:
    """An IEngineInspector / --exportLayerInfo document (detailed, TensorRT 10 spelling)."""
    fp32, fp16 = "Row major linear FP32", "Channel major FP16 format where channel % 8 == 0"
    layers = []
    shapes = [[1, 8, 16, 16], [1, 8, 16, 16], [1, 8, 1, 1], [1, 8], [1, 10]]
    prev = "x"
    for i, name in enumerate(LAYER_NAMES):
        out = f"t{i}" if i < len(LAYER_NAMES) - 1 else "y"
        layers.append({
            "Name": name,
            "LayerType": "Reformat" if "Reformatting" in name else ("CaskConvolution" if "Conv" in name else "CaskGemm"),
            "Inputs": [_tensor(prev, shapes[max(i - 1, 0)], fp32)],
            "Outputs": [_tensor(out, shapes[i], fp16 if i % 2 else fp32)],
            "ParameterType": "Convolution" if "Conv" in name else "Pooling",
            "TacticName": "sm80_xmma_fprop_implicit_gemm_f16f16_f16f16_f16_nhwckrsc_nhwc_tilesize64x64x64",
            "TacticValue": f"0x{1000 + i:016x}",
            "StreamId": 0,
            "Metadata": "\x1e".join(f"[ONNX Layer: {n.strip()}]" for n in name.split(" + ")),
        })
        prev = out
    return {"Layers": layers, "Bindings": ["x", "y"]}


def profile_doc() -> list:
    """A trtexec --exportProfile document for the layers of :func:`inspector_doc`."""
    recs: list[dict] = [{"count": 100}]
    for i, name in enumerate(LAYER_NAMES):
        avg = 0.01 * (i + 1)
        recs.append({"name": name, "timeMs": avg * 100, "averageMs": avg, "medianMs": avg, "percentage": 100.0 * (i + 1) / 15})
    return recs


def times_doc() -> list:
    """A trtexec --exportTimes document."""
    out = []
    t = 0.0
    for i in range(20):
        lat = 0.05 + 0.001 * (i % 5)
        out.append({"startEnqMs": t, "endEnqMs": t + 0.01, "startComputeMs": t + 0.01, "endComputeMs": t + lat,
                    "latencyMs": lat, "computeMs": lat - 0.01, "h2dMs": 0.004, "d2hMs": 0.004})
        t += 0.1
    return out


TRTEXEC_LOG = """&&&& RUNNING TensorRT.trtexec [TensorRT v101601] [b11] # trtexec --onnx=model.onnx --dumpProfile
[07/07/2026-02:10:45] [I] === Model Options ===
[07/07/2026-02:10:45] [I] Format: ONNX
[07/07/2026-02:10:45] [I] === Device Information ===
[07/07/2026-02:10:45] [I] Selected Device: NVIDIA H100 PCIe
[07/07/2026-02:10:45] [I] Compute Capability: 9.0
[07/07/2026-02:10:45] [I] SMs: 114
[07/07/2026-02:10:45] [I] Device Global Memory: 81081 MiB
[07/07/2026-02:10:58] [I] === Performance summary ===
[07/07/2026-02:10:58] [I] Throughput: 15374.3 qps
[07/07/2026-02:10:58] [I] Latency: min = 0.0410156 ms, max = 0.14917 ms, mean = 0.0441053 ms, median = 0.0440674 ms, percentile(90%) = 0.0450439 ms, percentile(95%) = 0.0456543 ms, percentile(99%) = 0.0535889 ms
[07/07/2026-02:10:58] [I] GPU Compute Time: min = 0.0331421 ms, max = 0.140381 ms, mean = 0.0359588 ms, median = 0.0361328 ms, percentile(90%) = 0.0369873 ms, percentile(95%) = 0.0374756 ms, percentile(99%) = 0.0432129 ms
[07/07/2026-02:10:58] [I] Total Host Walltime: 3.00013 s
[07/07/2026-02:10:58] [I] Total GPU Compute Time: 1.6586 s
&&&& PASSED TensorRT.trtexec [TensorRT v101601] [b11] # trtexec --onnx=model.onnx --dumpProfile
"""


def write_engine_seeds(folder: Path) -> dict[str, Path]:
    """name -> path of each engine-side seed (layers JSON, profile, times, trtexec log, RTX log)."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "layers": (folder / "model.layers.json", json.dumps(inspector_doc(), indent=1)),
        "profile": (folder / "model.profile.json", json.dumps(profile_doc(), indent=1)),
        "times": (folder / "model.times.json", json.dumps(times_doc(), indent=1)),
        "trtexec": (folder / "trtexec.log", TRTEXEC_LOG),
    }
    out = {}
    for key, (path, text) in files.items():
        path.write_text(text, encoding="utf-8")
        out[key] = path
    rtx = folder / "model.rtx.build.log"
    rtx.write_bytes(RTX_LOG.read_bytes())
    out["rtx"] = rtx
    return out


def write_model(folder: Path, name: str = "model.onnx") -> Path:
    """The tests' conv_net as a real ONNX file."""
    from onnx_models import conv_net

    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    onnx.save(conv_net(batch=1), str(p))
    return p


def write_session(folder: Path, model: Path, layers: Path) -> tuple[Path, Path]:
    """(session, report JSON) written by the real writers from ``model`` and ``layers``."""
    from trtstudio.report.model import Report, make_session
    from trtstudio.report.session import write_session as write
    from trtstudio.report.writers import write_report

    session = make_session(model=str(model), engine=[str(layers)], title="seed")
    s = write(folder / "seed.trtstudio", session)
    (r,) = write_report(Report.from_session(session), str(folder / "seed.report.json"))
    return s, Path(r)


def write_world(folder: Path) -> dict[str, Path]:
    """Every seed in ``folder``: model, engine files (see :func:`write_engine_seeds`), session, report."""
    model = write_model(folder)
    files = write_engine_seeds(folder)
    session, report = write_session(folder, model, files["layers"])
    return {"dir": folder, "model": model, "session": session, "report": report, **files}
