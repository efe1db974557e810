"""Honest layer precision on TREx's QAT engines, and engine vs this machine."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import shape_models as sm

from trtstudio.engine.compat import Machine, compare_engine, engine_facts, machine_findings, read_plan_header
from trtstudio.engine.load import load_engine
from trtstudio.engine.model import EngineInfo, Layer, TensorDesc

needs_rtx = pytest.mark.skipif(importlib.util.find_spec("tensorrt_rtx") is None, reason="tensorrt_rtx is not installed")


def test_precision_is_the_input_type() -> None:
    lay = Layer(0, "conv", "Convolution", inputs=[TensorDesc("x", dtype="INT8")], outputs=[TensorDesc("y", dtype="FP16")])
    assert (lay.precision, lay.precision_in, lay.precision_out) == ("INT8", "INT8", "FP16")
    assert Layer(1, "c", outputs=[TensorDesc("y", dtype="FP32")]).precision == "FP32"
    assert Layer(2, "n").precision is None


def test_trex_qat_convolutions_read_int8(trt_real: Path) -> None:
    graphs = sorted((trt_real / "NVIDIA_TensorRT_trex").rglob("*.graph*.json"))
    int8_conv_wider_out = 0
    for g in graphs:
        for lay in load_engine([g]).layers:
            if (lay.parameter_type or lay.type) == "Convolution" and lay.precision_in == "INT8":
                assert lay.precision == "INT8", (g.name, lay.name)
                int8_conv_wider_out += lay.precision_out in ("FP16", "FP32")
    assert int8_conv_wider_out == 55


def _info(**kw: object) -> EngineInfo:
    info = EngineInfo()
    for k, v in kw.items():
        setattr(info, k, v)
    return info


def test_version_and_gpu_mismatch() -> None:
    info = _info(versions={"tensorrt": "10.16.1"}, device={"name": "NVIDIA H100 PCIe", "compute_capability": "9.0"},
                 build_settings={"Version Compatible": "Disabled"})
    here = Machine(runtimes={"tensorrt": "10.13.0"}, gpus=[{"name": "RTX 4090", "compute_capability": "8.9"}], probed=True)
    found = compare_engine(info, machine=here)
    text = " | ".join(f["message"] for f in found)
    assert "built with TensorRT 10.16.1, this machine has TensorRT 10.13.0" in text
    assert "built for SM90 on NVIDIA H100 PCIe, this GPU is RTX 4090 (SM89)" in text
    assert all(f["severity"] == "error" for f in found)
    assert any("--hardwareCompatibilityLevel" in f["hint"] for f in found)


def test_version_compatible_and_ampere_plus() -> None:
    info = _info(versions={"tensorrt": "10.8.0"}, device={"compute_capability": "8.0"},
                 build_settings={"Version Compatible": "Enabled", "hardwareCompatibilityLevel": "ampere+"})
    here = Machine(runtimes={"tensorrt": "10.16.1"}, gpus=[{"name": "L40S", "compute_capability": "8.9"}], probed=True)
    facts = engine_facts(info)
    assert facts["version_compatible"] is True and facts["hardware_compat"] == "ampere_plus"
    found = compare_engine(info, machine=here)
    assert [f["severity"] for f in found] == ["info", "info"]
    assert "lean runtime is embedded" in found[0]["message"] and "engine_host_code_allowed" in found[0]["hint"]
    assert "AMPERE_PLUS" in found[1]["message"]


def test_no_runtime_no_gpu(trt_real: Path) -> None:
    log = trt_real / "NVIDIA_trt-samples-for-hackathon-cn/HEAD/cookbook/07-Tool/trtexec/result-01.log"
    info = load_engine([log])
    findings = machine_findings(info, [str(log)], Machine(runtimes={"tensorrt_rtx": "1.7.1"}, probed=True))
    assert [f.kind for f in findings] == ["engine_vs_machine"] * 2
    assert "no TensorRT runtime" in findings[0].message and "10.16.1" in findings[0].hint
    assert "no NVIDIA GPU" in findings[1].message and findings[1].severity == "info"
    assert compare_engine(EngineInfo(), machine=Machine()) == []


@pytest.mark.rtx
@needs_rtx
def test_rtx_plan_header_names_version_and_targets(tmp_path: Path) -> None:
    from trtstudio.backends.build import BuildOptions, build_engine

    model = sm.detector(tmp_path / "d.onnx", imgsz=[32, 32], batch=1)
    res = build_engine(model, tmp_path / "d.engine", BuildOptions(backend="rtx", targets=["sm86", "sm120"]))
    assert res.ok, res.error
    head = read_plan_header(tmp_path / "d.engine")
    import tensorrt_rtx

    assert head is not None and head["kind"] == "tensorrt_rtx" and head["targets"] == ["8.6", "12.0"]
    assert tensorrt_rtx.__version__.startswith(head["version"])
    ada = Machine(runtimes={"tensorrt_rtx": tensorrt_rtx.__version__}, gpus=[{"name": "RTX 4090", "compute_capability": "8.9"}],
                  probed=True)
    found = compare_engine(plan_path=tmp_path / "d.engine", machine=ada)
    assert len(found) == 1 and "built for SM86, SM120" in found[0]["message"] and "--target sm89" in found[0]["hint"]
    hopper = Machine(runtimes=ada.runtimes, gpus=[{"name": "H200", "compute_capability": "9.0"}], probed=True)
    assert "cannot run on SM90" in compare_engine(plan_path=tmp_path / "d.engine", machine=hopper)[0]["message"]
    assert read_plan_header(model) is None
