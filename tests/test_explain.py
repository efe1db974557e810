"""``trtstudio explain``: why INT8 is not faster, on TREx's QAT engines (A100 ResNet-18 series).

TREx's own walkthrough of these engines: the plain QAT export leaves Q/DQ layers unfused and
convolutions writing FP16/FP32 (the residual Adds had no Q/DQ), so INT8 is no faster than FP16;
QAT-residual adds Q/DQ on the residual inputs, QAT-residual-qgap also before the pooling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trtstudio.cli import main

A100 = (Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "trt-real" / "NVIDIA_TensorRT_trex"
        / "release-11.0" / "examples" / "pytorch" / "resnet" / "A100")
pytestmark = pytest.mark.skipif(not A100.is_dir(), reason=f"fixtures absent: {A100}")


def _explain(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["explain", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _layers(variant: str) -> list[dict]:
    return json.loads((A100 / variant / f"resnet-{variant}.onnx.engine.graph.json"
                       if variant != "qat" else A100 / "qat" / "resnet-qat.onnx.engine.graph.json").read_text())["Layers"]


def test_plain_qat_is_slower_than_fp16_and_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _explain(capsys, str(A100 / "qat"), "--against", str(A100 / "fp16"))
    p = doc["precision"]
    assert doc["schema"] == "trtstudio.explain/1"
    assert p["verdict"] == "slower" and p["text"].startswith("INT8 is 2 % slower than fp16")
    causes = {c["cause"]: c for c in p["causes"]}
    # every standalone Q/DQ layer of the file is named, with its profile time
    raw = _layers("qat")
    qdq = [lay["Name"] for lay in raw if lay["LayerType"] == "Reformat" and "QuantizeLinear" in lay["Name"]]
    assert sorted(causes["qdq_not_fused"]["layers"]) == sorted(qdq) and qdq
    # convolutions whose output format is not INT8 while they compute INT8
    wide = [lay["Name"] for lay in raw if lay["LayerType"] == "CaskConvolution" and "Int8" in lay["Inputs"][0]["Format/Datatype"]
            and "Int8" not in lay["Outputs"][0]["Format/Datatype"]]
    assert sorted(causes["conv_wide_output"]["layers"]) == sorted(wide) and wide
    assert causes["conv_wide_output"]["ms"] > 0
    # causes ordered by the time at stake
    assert [c["ms"] for c in p["causes"]] == sorted((c["ms"] for c in p["causes"]), reverse=True)
    # the suggestion names the INT8 model's nodes where INT8 lost to FP16, with the measured loss
    s = p["suggestion"]
    slower = causes["int8_slower"]
    assert s["estimated_gain_ms"] == pytest.approx(slower["ms"]) and slower["ms"] > 0
    assert s["layer_precisions"].startswith("--precisionConstraints=obey --layerPrecisions=")
    names = s["block_nodes"].split(",")
    assert all(n in " ".join(slower["layers"]) for n in names)
    assert not any(n.startswith(("Conv_0", "Gemm_48")) for n in names)  # the FP16 build's names are not the model's


@pytest.mark.parametrize("variant", ["qat-residual", "qat-residual-qgap"])
def test_residual_qdq_makes_int8_faster(variant: str, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _explain(capsys, str(A100 / variant), "--against", str(A100 / "fp16"))
    p = doc["precision"]
    assert p["verdict"] == "faster"
    causes = {c["cause"]: c for c in p["causes"]}
    qdq = [lay["Name"] for lay in _layers(variant) if lay["LayerType"] == "Reformat"
           and lay["Name"].startswith(("QuantizeLinear", "DequantizeLinear"))]
    assert sorted(causes["qdq_not_fused"]["layers"]) == sorted(qdq)
    assert len(qdq) < len([n for n in _explain(capsys, str(A100 / "qat"))["precision"]["causes"]
                           if n["cause"] == "qdq_not_fused"][0]["layers"])
    plain = _explain(capsys, str(A100 / "qat"))["precision"]
    wide_plain = {c["cause"]: c for c in plain["causes"]}["conv_wide_output"]["count"]
    assert causes["conv_wide_output"]["count"] < wide_plain


def test_alone_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _explain(capsys, str(A100 / "qat"))
    p = doc["precision"]
    assert p["verdict"] == "explained" and p["text"].startswith("21 of 21 convolutions/GEMMs run INT8")
    assert p["suggestion"]["layer_precisions"] is None and "--against" in p["suggestion"]["basis"]
    assert main(["explain", str(A100 / "qat"), "--against", str(A100 / "fp16")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("INT8 is 2 % slower") and "trtexec: --precisionConstraints=obey" in out


def test_an_engine_without_int8_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(A100 / "fp16")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no INT8 layer" in err[0] and "trtstudio diff" in err[0]
    import trtstudio as ts

    e = ts.explain(A100 / "fp16")
    assert e.core.verdict == "no INT8" and not e.causes
