"""The precision sweep and the ``trtstudio precision`` command on a tiny real model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx_models import conv_net

from trtstudio.cli import main
from trtstudio.errors import InputError
from trtstudio.precision.state import PrecisionState
from trtstudio.precision.sweep import SweepOptions, VariantResult, parse_variants, recommend, run_sweep

pytest.importorskip("onnxruntime")


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    model = tmp_path / "conv.onnx"
    onnx.save(conv_net(), str(model))
    calib = tmp_path / "calib"
    calib.mkdir()
    rng = np.random.default_rng(0)
    np.save(calib / "batch.npy", rng.standard_normal((6, 3, 16, 16)).astype(np.float32))
    return model, calib


def test_sweep_table_and_progress(tiny, tmp_path) -> None:
    model, calib = tiny
    seen: list[str] = []
    state = PrecisionState(on_progress=lambda p: seen.append(p["phase"]))
    res = run_sweep(model, SweepOptions(variants=("fp16", "bf16", "int8"), calib=str(calib), out_dir=str(tmp_path / "out"),
                                        iterations=20, build_engines=False), state)
    assert [v.name for v in res.variants] == ["fp32", "fp16", "bf16", "int8"]
    assert {"reference", "build", "validate", "profile", "finished"} <= set(seen)
    fp32, fp16, bf16, int8 = res.variants
    assert all(v.error is None for v in res.variants)
    assert fp32.accuracy["max_abs"] == 0 and fp32.passed
    assert fp16.latency_ms and fp16.latency_ms["median"] > 0 and fp16.throughput and fp16.throughput > 0
    assert fp16.model_bytes and fp32.model_bytes and fp16.model_bytes < fp32.model_bytes
    assert bf16.latency_ms is None and any("emulated" in n for n in bf16.notes)
    assert 0 < fp16.accuracy["max_abs"] < bf16.accuracy["max_abs"]
    assert int8.accuracy["max_abs"] > fp16.accuracy["max_abs"]
    assert int8.node_errors and set(int8.node_errors) <= {n.name for n in conv_net().graph.node}
    assert (tmp_path / "out" / "conv.int8.minmax.calib.json").is_file()
    q = int8.to_json()["quantization"]  # how the INT8 model was made, beside its figures
    assert q["recipe"]["op_types"] == ["Conv", "ConvTranspose", "MatMul", "Gemm"] and q["method"] == "minmax"
    assert q["qdq_pairs"] > 0 and q["cache_reused"] is False and q["samples"] == 6 and "quantization" not in fp16.to_json()
    # each variant's speed-up over FP32 carries its 95 % interval and a verdict (issue 28: confidence)
    sp = fp16.speedup
    assert sp is not None and sp["low"] <= sp["value"] <= sp["high"] and sp["n_base"] == sp["n_other"] > 0
    assert fp16.speedup_verdict["verdict"] in ("faster", "slower", "no significant difference")
    assert fp32.speedup is None
    doc = res.to_json()
    assert doc["schema"] == "trtstudio.precision/1" and doc["recommendation"] == res.recommendation
    # the story first: a sentence per variant, from its verdict and its accuracy
    assert [line.split(" ", 1)[0] for line in doc["story"]] == ["fp16", "bf16", "int8"]
    assert ("fails the accuracy budget" in doc["story"][2]) == (int8.passed is False)
    import onnxruntime

    # the versions of what computed the figures; no TensorRT-RTX figure, so no TensorRT-RTX version
    assert doc["versions"]["onnxruntime"] == onnxruntime.__version__ and doc["versions"]["numpy"] == np.__version__
    assert doc["versions"]["onnx"] == onnx.__version__ and "tensorrt_rtx" not in doc["versions"]
    assert set(doc["computed_by"]["accuracy"]) <= set(doc["versions"]) and "engine" not in doc["computed_by"]


def test_recommendation_follows_the_data() -> None:
    def row(name: str, ms: float, passed: bool = True) -> VariantResult:
        return VariantResult(name, latency_ms={"median": ms}, passed=passed)

    text, best = recommend([row("fp32", 1.0), row("fp16", 1.3), row("int8", 0.5, passed=False)])
    assert best == "fp32" and "no passing variant beats FP32" in text and "fp16 1.300 ms" in text
    text, best = recommend([row("fp32", 1.0), row("fp16", 0.9), row("int8", 0.4)])
    assert best == "int8" and "2.50x" in text
    text, best = recommend([row("fp32", 1.0), row("int8", 0.4, passed=False)])
    assert best == "fp32" and "int8 failed validation" in text


def test_parse_variants_and_missing_calibration(tiny) -> None:
    assert parse_variants("int8, fp16") == ("fp32", "int8", "fp16")
    with pytest.raises(InputError, match="fp12"):
        parse_variants("fp12")
    with pytest.raises(InputError, match=r"calibration data.*'x'"):
        run_sweep(tiny[0], SweepOptions(variants=("int8",), build_engines=False))


def test_cli_json(tiny, tmp_path, capsys) -> None:
    model, calib = tiny
    rc = main(["precision", str(model), "--variants", "fp16,int8", "--calib", str(calib), "--calib-method",
               "minmax", "--iterations", "10", "--no-engines", "--out-dir", str(tmp_path / "o"), "--json"])
    out = capsys.readouterr().out
    assert rc == 0
    doc = json.loads(out)
    assert doc["schema"] == "trtstudio.precision/1"
    names = [v["name"] for v in doc["variants"]]
    assert names == ["fp32", "fp16", "int8"]
    for v in doc["variants"]:
        assert {"cosine", "max_abs", "mean_abs", "rel", "top1"} <= set(v["accuracy"])
        assert v["latency_ms"]["median"] > 0 and Path(v["model_path"]).is_file() and isinstance(v["passed"], bool)
    assert doc["recommendation"]


def test_cli_bad_calibration_data(tiny, tmp_path, capsys) -> None:
    model, _ = tiny
    bad = tmp_path / "bad"
    bad.mkdir()
    np.save(bad / "0.npy", np.zeros((1, 3, 8, 8), np.float32))
    rc = main(["precision", str(model), "--variants", "int8", "--calib", str(bad), "--no-engines"])
    err = capsys.readouterr().err
    assert rc == 2 and "input 'x' expects shape [N,3,16,16]" in err and err.startswith("error: ")


@pytest.mark.rtx
def test_sweep_with_rtx_engines(tiny, tmp_path) -> None:
    pytest.importorskip("tensorrt_rtx")
    model, calib = tiny
    res = run_sweep(model, SweepOptions(variants=("fp16", "int8"), calib=str(calib), out_dir=str(tmp_path / "e"),
                                        iterations=5, build_engines=True, localize=False))
    fp32, fp16, int8 = res.variants
    assert fp32.engine_bytes and fp16.engine_bytes and int8.engine_bytes
    assert "FP16" in fp16.layer_precisions and "INT8" in int8.layer_precisions
    assert "FP16" not in fp32.layer_precisions
    import tensorrt_rtx

    doc = res.to_json()  # the engine figures name the TensorRT-RTX that computed them
    assert doc["versions"]["tensorrt_rtx"] == tensorrt_rtx.__version__ and doc["computed_by"]["engine"] == ["tensorrt_rtx"]
