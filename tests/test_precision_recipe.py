"""The INT8 recipe TensorRT takes: BN folded, Q/DQ only on Conv/ConvTranspose/MatMul/Gemm inputs and
weights, the calibration cache keyed on model, method, recipe and data; on built and third-party models."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from trtstudio.cli import main
from trtstudio.precision.data import model_inputs, random_samples
from trtstudio.precision.quantize import CALIB_SCHEMA, QuantizeOptions, quantize_model
from trtstudio.precision.recipe import BASE_OPS, small_convs
from trtstudio.precision.validate import validate

pytest.importorskip("onnxruntime")


def bn_net(opset: int = 11) -> onnx.ModelProto:
    """Conv-BN-Relu, Conv-BN + residual Add, a Conv of 8 channels, GlobalAveragePool, Gemm (transB=0),
    Softmax: the shape of the small classifiers the recipe is for."""
    rng = np.random.default_rng(0)

    def init(name: str, arr: np.ndarray) -> onnx.TensorProto:
        return numpy_helper.from_array(arr.astype(np.float32), name)

    def bn(prefix: str, c: int) -> list[onnx.TensorProto]:
        return [init(f"{prefix}_s", rng.uniform(0.5, 2.0, c)), init(f"{prefix}_b", rng.normal(0, 0.2, c)),
                init(f"{prefix}_m", rng.normal(0, 0.2, c)), init(f"{prefix}_v", rng.uniform(0.5, 2.0, c))]

    inits = [init("w1", rng.normal(0, 0.3, (16, 3, 3, 3))), *bn("bn1", 16),
             init("w2", rng.normal(0, 0.1, (16, 16, 3, 3))), *bn("bn2", 16),
             init("w3", rng.normal(0, 0.2, (8, 16, 1, 1))), init("w4", rng.normal(0, 0.3, (8, 8, 1, 1))),
             init("fc_w", rng.normal(0, 0.5, (8, 10))), init("fc_b", np.zeros(10))]
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn1_s", "bn1_b", "bn1_m", "bn1_v"], ["n1"], name="bn1"),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c2", "bn2_s", "bn2_b", "bn2_m", "bn2_v"], ["n2"], name="bn2"),
        helper.make_node("Add", ["n2", "r1"], ["a1"], name="add"),
        helper.make_node("Conv", ["a1", "w3"], ["c3"], name="conv3"),
        helper.make_node("Relu", ["c3"], ["r3"], name="relu3"),
        helper.make_node("Conv", ["r3", "w4"], ["c4"], name="conv4_small"),
        helper.make_node("GlobalAveragePool", ["c4"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["logits"], name="fc"),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(nodes, "bn_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="tests")
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model


@pytest.fixture
def bn_path(tmp_path: Path) -> Path:
    p = tmp_path / "bn_net.onnx"
    onnx.save(bn_net(), str(p))
    return p


def _consumers(model: onnx.ModelProto) -> dict[str, list[onnx.NodeProto]]:
    out: dict[str, list[onnx.NodeProto]] = {}
    for n in model.graph.node:
        for t in n.input:
            out.setdefault(t, []).append(n)
    return out


def _qdq_readers(model: onnx.ModelProto) -> set[str]:
    """The op types each quantized tensor was quantized for: of its readers, those in the recipe
    (every DequantizeLinear output is read by at least one of them)."""
    consumers = _consumers(model)
    out: set[str] = set()
    for n in model.graph.node:
        if n.op_type == "DequantizeLinear":
            kinds = {c.op_type for c in consumers[n.output[0]]}
            assert kinds & set(BASE_OPS), (n.name, kinds)
            out |= kinds & set(BASE_OPS)
    return out


def test_recipe_folds_bn_and_quantizes_only_conv_and_gemm_inputs(bn_path: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    specs = model_inputs(bn_path)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    res = quantize_model(bn_path, tmp_path / "q.onnx", random_samples(specs, 8, seed=1), QuantizeOptions(method="minmax"))
    assert list(cwd.iterdir()) == []  # onnxruntime's pre-processing leaves nothing in the working directory
    m = onnx.load(res.model_path)
    ops = [n.op_type for n in m.graph.node]
    assert "BatchNormalization" not in ops  # folded into the Convs before calibration
    assert any("2 BatchNormalization folded" in n for n in res.notes), res.notes
    assert max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx")) >= 13  # per-channel DQ needs 13
    dq = [n for n in m.graph.node if n.op_type == "DequantizeLinear"]
    assert _qdq_readers(m) == {"Conv", "Gemm"}
    # the residual Add reads the quantized tensor it shares with conv2 (as ModelOpt places it, so that
    # TensorRT fuses the Add into the Conv), and its other input stays float
    add = next(n for n in m.graph.node if n.op_type == "Add")
    assert sum(i.endswith("DequantizeLinear_Output") for i in add.input) == 1
    # conv1..3 and fc: a Q/DQ pair on the activation and a DequantizeLinear of the INT8 weight each;
    # the 8-channel conv4 stays float (no INT8 kernel)
    assert res.qdq_pairs == 4 and len(dq) == 8 and set(res.float_convs) == {"conv4_small"}
    small = next(n for n in m.graph.node if n.name == "conv4_small")
    assert all(i in {t.name for t in m.graph.initializer} or not i.endswith("DequantizeLinear_Output")
               for i in small.input)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    for n in dq:
        assert not inits[n.input[2]].any()  # symmetric
    gemm = next(n for n in m.graph.node if n.op_type == "Gemm")
    w_dq = next(n for n in dq if n.output[0] == gemm.input[1])
    assert inits[w_dq.input[1]].shape == (10,)  # per output channel: axis 1 of a transB=0 weight
    assert next(a.i for a in w_dq.attribute if a.name == "axis") == 1
    assert gemm.input[2] in inits and inits[gemm.input[2]].dtype == np.float32  # the bias stays float
    val = random_samples(specs, 8, seed=2)
    v = validate(bn_path, res.model_path, val, specs, "int8")
    assert v.accuracy()["cosine"] > 0.98, v.accuracy()


def test_extra_ops_and_small_convs_widen_the_recipe(bn_path: Path, tmp_path: Path) -> None:
    specs = model_inputs(bn_path)
    calib = random_samples(specs, 4, seed=1)
    res = quantize_model(bn_path, tmp_path / "q.onnx", calib,
                         QuantizeOptions(method="minmax", extra_ops=("Add",), keep_small_convs_float=False))
    m = onnx.load(res.model_path)
    add = next(n for n in m.graph.node if n.op_type == "Add")
    assert all(i.endswith("DequantizeLinear_Output") for i in add.input) and res.float_convs == {}
    assert res.recipe["op_types"] == [*BASE_OPS, "Add"] and res.qdq_pairs == 6  # + the Add's other input, conv4


def test_small_conv_rule_follows_modelopt() -> None:
    m = bn_net()
    assert small_convs(m) == {"conv4_small": "8 input / 8 output channels, group 1, kernel [1, 1]"}
    # FP8 has no exceptions for under 16 channels (conv1 reads 3, conv3 writes 8)
    assert set(small_convs(m, "fp8")) == {"conv1", "conv3", "conv4_small"}


def test_calibration_cache_keyed_on_data_method_and_recipe(bn_path: Path, tmp_path: Path) -> None:
    specs = model_inputs(bn_path)
    data_a, data_b = random_samples(specs, 4, seed=1), random_samples(specs, 4, seed=7)
    cache = tmp_path / "calib.json"

    def run(name: str, samples: list | None, **kw: object):
        return quantize_model(bn_path, tmp_path / f"{name}.onnx", samples,
                              QuantizeOptions(method=str(kw.pop("method", "minmax")), cache_path=str(cache), **kw))  # type: ignore[arg-type]

    first = run("a", data_a)
    doc = json.loads(cache.read_text())
    assert doc["schema"] == CALIB_SCHEMA and doc["key"]["recipe"]["op_types"] == list(BASE_OPS)
    assert not first.cache_reused and doc["key"]["data_sha256"]
    again = run("a2", [dict(s) for s in data_a])  # equal data, other arrays: reused, same model
    assert again.cache_reused
    assert onnx.load(str(tmp_path / "a.onnx")).SerializeToString() == onnx.load(str(tmp_path / "a2.onnx")).SerializeToString()
    other = run("b", data_b)  # other data: never reused
    assert not other.cache_reused and any("other data" in n for n in other.notes), other.notes
    assert json.loads(cache.read_text())["key"]["data_sha256"] != doc["key"]["data_sha256"]
    recipe = run("c", data_b, extra_ops=("Add",))
    assert not recipe.cache_reused and any("another recipe" in n for n in recipe.notes)
    method = run("d", data_b, extra_ops=("Add",), method="percentile")
    assert not method.cache_reused and any("another method" in n for n in method.notes)
    # a keyless cache of the former schema is never reused
    cache.write_text(json.dumps({"schema": "trtstudio.calibcache/1", "method": "minmax", "ranges": {"x": [-1, 1]}}))
    old = run("e", data_a)
    assert not old.cache_reused and any("older cache" in n for n in old.notes)


def test_cli_rejects_unknown_int8_op(bn_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["precision", str(bn_path), "--variants", "int8", "--calib", str(tmp_path), "--int8-ops", "Add,Addd"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "Addd" in err[0] and "--int8-ops" in err[0], err


# Third-party models shipped by PyPI packages, found without importing the package (its own
# dependencies are not needed). (package, path in the package, input shape, sample low, high, dtype)
THIRD_PARTY = {
    "paddleocr-cls": ("rapidocr_onnxruntime", "models/ch_ppocr_mobile_v2.0_cls_infer.onnx", (1, 3, 48, 192), -1.0, 1.0, "float32"),
    "magika": ("magika", "models/standard_v3_3/model.onnx", (1, 2048), 0, 257, "int32"),
    "nudenet-yolov8n": ("nudenet", "320n.onnx", (1, 3, 160, 160), 0.0, 1.0, "float32"),
}
METHOD = {"paddleocr-cls": "entropy", "magika": "entropy", "nudenet-yolov8n": "minmax"}  # minmax: faster


def _package_file(package: str, rel: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{package} is not installed (pip install {package}): its model is not here to test")
    path = Path(next(iter(spec.submodule_search_locations))) / rel
    if not path.is_file():
        pytest.skip(f"{package} has no {rel} in this version")
    return path


def _uniform(name: str, shape: tuple[int, ...], lo: float, hi: float, dtype: str, count: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    if dtype == "int32":
        return [{name: rng.integers(int(lo), int(hi), size=shape).astype(np.int32)} for _ in range(count)]
    return [{name: rng.uniform(lo, hi, size=shape).astype(np.float32)} for _ in range(count)]


@pytest.mark.parametrize("which", sorted(THIRD_PARTY))
def test_recipe_on_third_party_models(which: str, tmp_path: Path) -> None:
    """The budget's protocol, smaller: random-uniform calibration and other validation samples,
    INT8 cosine against FP32 >= 0.98 (the budget run uses 32 and 16; see the README)."""
    package, rel, shape, lo, hi, dtype = THIRD_PARTY[which]
    model = _package_file(package, rel)
    specs = [dict(s, shape=list(shape)) for s in model_inputs(model)]
    name = specs[0]["name"]
    calib = _uniform(name, shape, lo, hi, dtype, 8, seed=1)
    val = _uniform(name, shape, lo, hi, dtype, 4, seed=2)
    res = quantize_model(model, tmp_path / "q.onnx", calib, QuantizeOptions(method=METHOD[which]))
    q = onnx.load(res.model_path)
    assert res.qdq_pairs > 0 and _qdq_readers(q)
    assert "BatchNormalization" not in {n.op_type for n in q.graph.node}
    v = validate(model, res.model_path, val, specs, "int8")
    assert v.accuracy()["cosine"] >= 0.98, (which, v.accuracy())


@pytest.mark.rtx
def test_rtx_builds_the_quantized_paddleocr_classifier(tmp_path: Path) -> None:
    pytest.importorskip("tensorrt_rtx")
    from trtstudio.backends.build import BuildOptions, build_engine
    from trtstudio.engine.readers import rtx_log

    package, rel, shape, lo, hi, dtype = THIRD_PARTY["paddleocr-cls"]
    model = _package_file(package, rel)
    calib = _uniform("x", shape, lo, hi, dtype, 4, seed=1)
    q = quantize_model(model, tmp_path / "q.onnx", calib, QuantizeOptions(method="minmax"))
    res = build_engine(q.model_path, tmp_path / "q.engine",
                       BuildOptions(backend="rtx", targets=["sm86"], profiles=[{"x": (shape, shape, shape)}]))
    assert res.ok, res.error
    precisions = [layer.precision for layer in rtx_log.read(tmp_path / "q.build.log", res.log_text()).layers]
    assert precisions.count("INT8") >= 40, precisions


def test_fast_entropy_threshold_equals_onnxruntimes() -> None:
    from onnxruntime.quantization.calibrate import HistogramCollector

    from trtstudio.precision.entropy import entropy_threshold

    rng = np.random.default_rng(0)
    for k, relu in ((1, False), (3, True)):
        data = np.concatenate([rng.standard_normal(5000) * k, rng.standard_normal(20) * 15]).astype(np.float32)
        data = np.maximum(data, 0) if relu else data
        top = float(np.abs(data).max())
        hist, edges = np.histogram(data, 512, range=(-top, top))
        histogram = (hist, edges, data.min(), data.max())
        ort = HistogramCollector("entropy", True, 512, 128, None, None).get_entropy_threshold(histogram, 128)
        ours = entropy_threshold(histogram, 128)
        assert (float(ours[0]), float(ours[1])) == (float(ort[0]), float(ort[1]))
        assert ours[1] < top  # the outliers are clipped


def test_cosine_of_small_outputs_against_themselves_is_one() -> None:
    """A background-only detection map (values ~1e-5) compared with itself: cosine 1, not 0.9999."""
    from trtstudio.precision.validate import compare_arrays

    rng = np.random.default_rng(0)
    ref = (rng.random((4, 1, 32, 32)) * 1e-5).astype(np.float32)
    same = compare_arrays("y", ref, ref.copy())
    assert same.cosine == pytest.approx(1.0, abs=1e-12) and same.cosine_min == pytest.approx(1.0, abs=1e-12)
    other = compare_arrays("y", ref, ref[::-1].copy())
    assert other.cosine < 0.9


def attention_net() -> onnx.ModelProto:
    """One self-attention head: q, k, v and output projections (MatMul with weights) around the
    attention core MatMul(q, k^T) -> Mul(scale) -> Softmax -> MatMul(., v)."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(0, 0.3, (16, 16)).astype(np.float32), n) for n in ("wq", "wk", "wv", "wo")]
    inits.append(numpy_helper.from_array(np.array(0.25, np.float32), "scale"))
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"], name="q_proj"),
        helper.make_node("MatMul", ["x", "wk"], ["k"], name="k_proj"),
        helper.make_node("MatMul", ["x", "wv"], ["v"], name="v_proj"),
        helper.make_node("Transpose", ["k"], ["kt"], name="kt", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
        helper.make_node("Mul", ["s", "scale"], ["ss"], name="scaled"),
        helper.make_node("Softmax", ["ss"], ["a"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["a", "v"], ["o"], name="context"),
        helper.make_node("MatMul", ["o", "wo"], ["y"], name="o_proj"),
    ]
    graph = helper.make_graph(nodes, "attention", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 6, 16])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="tests")
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model


def test_attention_core_stays_float(tmp_path: Path) -> None:
    path = tmp_path / "attention.onnx"
    onnx.save(attention_net(), str(path))
    specs = model_inputs(path)
    res = quantize_model(path, tmp_path / "q.onnx", random_samples(specs, 4, seed=1), QuantizeOptions(method="minmax"))
    assert set(res.float_matmuls) == {"scores", "context"}
    m = onnx.load(res.model_path)
    quantized = {n.name for n in m.graph.node if n.op_type == "MatMul"
                 and any(i.endswith("DequantizeLinear_Output") for i in n.input)}
    assert quantized == {"q_proj", "k_proj", "v_proj", "o_proj"}
    wide = quantize_model(path, tmp_path / "w.onnx", random_samples(specs, 4, seed=1),
                          QuantizeOptions(method="minmax", keep_attention_float=False))
    assert wide.float_matmuls == {} and wide.qdq_pairs > res.qdq_pairs
