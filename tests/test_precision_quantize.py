"""INT8 Q/DQ variants calibrated with onnxruntime, the calibration cache, FP8 gating, TensorRT-RTX."""

from __future__ import annotations

import json
import types

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from onnx_models import conv_net

from trtstudio.errors import BackendError, InputError
from trtstudio.precision.convert import convert_float, save_model
from trtstudio.precision.data import model_inputs, random_samples
from trtstudio.precision.quantize import (
    CALIB_SCHEMA,
    QuantizeOptions,
    fp8_available,
    legacy_int8_supported,
    make_legacy_calibrator,
    quantize_model,
)
from trtstudio.precision.validate import validate

pytest.importorskip("onnxruntime")


@pytest.fixture
def conv_path(tmp_path):
    p = tmp_path / "conv.onnx"
    onnx.save(conv_net(), str(p))
    return p


def test_int8_qdq_symmetric_and_worse_than_fp16(conv_path, tmp_path) -> None:
    specs = model_inputs(conv_path)
    calib = random_samples(specs, 8, seed=1)
    val = random_samples(specs, 6, seed=2)
    res = quantize_model(conv_path, tmp_path / "q.onnx", calib, QuantizeOptions(method="minmax"))
    m = onnx.load(res.model_path)
    q_nodes = [n for n in m.graph.node if n.op_type == "QuantizeLinear"]
    assert res.qdq_pairs == len(q_nodes) > 0
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    for n in q_nodes:  # symmetric: zero point 0, int8
        zp = inits[n.input[2]]
        assert zp.dtype == np.int8 and not zp.any()
    weight_scale = next(inits[n.input[1]] for n in m.graph.node
                        if n.op_type == "DequantizeLinear" and n.input[0].startswith("w1"))
    assert weight_scale.shape == (8,)  # per-channel weights
    fp16 = convert_float(conv_path, "fp16")
    v8 = validate(conv_path, res.model_path, val, specs, "int8")
    v16 = validate(conv_path, fp16.model, val, specs, "fp16")
    assert v8.passed, v8.reasons
    assert v8.accuracy()["max_abs"] > v16.accuracy()["max_abs"] > 0
    assert v8.accuracy()["cosine"] < v16.accuracy()["cosine"]


def test_broken_variant_fails_validation(conv_path, tmp_path) -> None:
    m = onnx.load(str(conv_path))
    for init in m.graph.initializer:
        if init.name == "w2":
            init.CopyFrom(numpy_helper.from_array(np.zeros_like(numpy_helper.to_array(init)), "w2"))
    broken = save_model(m, tmp_path / "broken.onnx")
    specs = model_inputs(conv_path)
    v = validate(conv_path, broken, random_samples(specs, 6, seed=3), specs, "int8")
    assert not v.passed
    assert any("cosine" in r or "top-1" in r for r in v.reasons)


def test_calibration_cache_written_and_reused(conv_path, tmp_path) -> None:
    specs = model_inputs(conv_path)
    calib = random_samples(specs, 6, seed=5)
    cache = tmp_path / "calib.json"
    first = quantize_model(conv_path, tmp_path / "a.onnx", calib, QuantizeOptions(method="percentile", cache_path=str(cache)))
    doc = json.loads(cache.read_text())
    assert doc["schema"] == CALIB_SCHEMA and doc["method"] == "percentile" and doc["samples"] == 6
    assert not first.cache_reused and len(doc["ranges"]) == first.ranges > 0
    # no samples at all: the cache alone must do, and give the same model
    second = quantize_model(conv_path, tmp_path / "b.onnx", None, QuantizeOptions(method="percentile", cache_path=str(cache)))
    assert second.cache_reused
    a, b = onnx.load(str(tmp_path / "a.onnx")), onnx.load(str(tmp_path / "b.onnx"))
    assert [numpy_helper.to_array(i).tolist() for i in a.graph.initializer] == \
           [numpy_helper.to_array(i).tolist() for i in b.graph.initializer]
    # another method: recalibrates
    third = quantize_model(conv_path, tmp_path / "c.onnx", calib, QuantizeOptions(method="entropy", cache_path=str(cache)))
    assert not third.cache_reused and any("recalibrating" in n for n in third.notes)
    with pytest.raises(InputError, match="needs samples"):
        quantize_model(conv_path, tmp_path / "d.onnx", None, QuantizeOptions(method="minmax"))


def test_sample_model_int8_error_larger_than_fp16(sample_model, tmp_path) -> None:
    specs = model_inputs(sample_model)
    calib = random_samples(specs, 4, seed=1)
    val = random_samples(specs, 4, seed=9)
    q = quantize_model(sample_model, tmp_path / "m.int8.onnx", calib, QuantizeOptions(method="entropy"))
    assert q.qdq_pairs > 50
    v8 = validate(sample_model, q.model_path, val, specs, "int8")
    v16 = validate(sample_model, convert_float(sample_model, "fp16").model, val, specs, "fp16")
    a8, a16 = v8.accuracy(), v16.accuracy()
    assert v16.passed and a16["cosine"] > 0.9999
    assert a8["rel"] > 3 * a16["rel"]
    assert 0.9 < a8["cosine"] < a16["cosine"]


def test_fp8_gated_by_target(conv_path, tmp_path) -> None:
    assert "SM 89" in (fp8_available("sm86") or "")
    assert fp8_available(None) is not None
    assert fp8_available("sm89") is None  # this onnx has FLOAT8E4M3FN
    with pytest.raises(InputError, match="SM 89"):
        quantize_model(conv_path, tmp_path / "f.onnx", [], QuantizeOptions(precision="fp8", target="sm86"))


def test_fp8_qdq_on_sm89(conv_path, tmp_path) -> None:
    specs = model_inputs(conv_path)
    calib, val = random_samples(specs, 4, seed=1), random_samples(specs, 4, seed=2)
    res = quantize_model(conv_path, tmp_path / "f8.onnx", calib, QuantizeOptions(precision="fp8", target="sm89",
                                                                                  method="minmax"))
    m = onnx.load(res.model_path)
    assert max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx")) >= 19
    fp8 = [i for i in m.graph.initializer if i.data_type == onnx.TensorProto.FLOAT8E4M3FN]
    assert len(fp8) > res.qdq_pairs  # zero points and the three weights
    v8 = validate(conv_path, res.model_path, val, specs, "fp8")
    v16 = validate(conv_path, convert_float(conv_path, "fp16").model, val, specs, "fp16")
    assert any("unfused" in n for n in v8.notes)
    assert v8.accuracy()["rel"] > 5 * v16.accuracy()["rel"]  # 3 mantissa bits vs 10
    assert v8.accuracy()["cosine"] > 0.98


def test_legacy_calibrator_only_on_tensorrt10() -> None:
    rtx_like = types.SimpleNamespace(__name__="tensorrt_rtx", BuilderFlag=types.SimpleNamespace(FP16=1))
    assert not legacy_int8_supported(rtx_like)
    with pytest.raises(BackendError, match="strongly typed"):
        make_legacy_calibrator(rtx_like, [], "cache.bin")

    class FakeCalib:  # TensorRT 10's base class stands in; the device copy is injected
        def __init__(self) -> None:
            pass

    trt10 = types.SimpleNamespace(BuilderFlag=types.SimpleNamespace(INT8=2), IInt8EntropyCalibrator2=FakeCalib)
    samples = [{"x": np.ones((2, 3), np.float32)}, {"x": np.zeros((2, 3), np.float32)}]
    copied: list[float] = []
    cal = make_legacy_calibrator(trt10, samples, "unused.cache", to_device=lambda n, a: copied.append(float(a.sum())) or 1234)
    assert cal.get_batch_size() == 2
    assert cal.get_batch(["x"]) == [1234] and cal.get_batch(["x"]) == [1234] and cal.get_batch(["x"]) is None
    assert copied == [6.0, 0.0]


@pytest.mark.rtx
def test_rtx_build_of_qdq_model_shows_int8(conv_path, tmp_path) -> None:
    pytest.importorskip("tensorrt_rtx")
    from trtstudio.backends.build import BuildOptions, build_engine
    from trtstudio.engine.readers import rtx_log

    specs = model_inputs(conv_path)
    q = quantize_model(conv_path, tmp_path / "q.onnx", random_samples(specs, 4, seed=1), QuantizeOptions(method="minmax"))
    res = build_engine(q.model_path, tmp_path / "q.engine", BuildOptions(backend="rtx", targets=["sm86"]))
    assert res.ok, res.error
    info = rtx_log.read(tmp_path / "q.build.log", res.log_text())
    precisions = [layer.precision for layer in info.layers]
    assert "INT8" in precisions, precisions
    assert res.engine_bytes and (tmp_path / "q.engine").stat().st_size == res.engine_bytes


@pytest.mark.rtx
def test_rtx_fp8_needs_sm89(conv_path, tmp_path) -> None:
    pytest.importorskip("tensorrt_rtx")
    from trtstudio.backends.build import BuildOptions, build_engine
    from trtstudio.engine.readers import rtx_log

    specs = model_inputs(conv_path)
    q = quantize_model(conv_path, tmp_path / "f8.onnx", random_samples(specs, 4, seed=1),
                       QuantizeOptions(precision="fp8", target="sm89", method="minmax"))
    ok = build_engine(q.model_path, tmp_path / "f8.engine", BuildOptions(backend="rtx", targets=["sm89"]))
    assert ok.ok, ok.error
    assert "FP8" in [layer.precision for layer in rtx_log.read(tmp_path / "f8.log", ok.log_text()).layers]
    bad = build_engine(q.model_path, None, BuildOptions(backend="rtx", targets=["sm86"]))
    assert not bad.ok and "fp8" in (bad.error or "").lower()
