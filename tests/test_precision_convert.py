"""FP16/BF16 conversion: real onnx.helper models and the sample model, run in onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_models import conv_net

from trtstudio.errors import InputError
from trtstudio.precision.convert import bfloat16_bits_to_float, convert_float, to_bfloat16_bits
from trtstudio.precision.data import model_inputs, random_samples
from trtstudio.precision.validate import localize, open_session, validate

ort = pytest.importorskip("onnxruntime")


def _types(model: onnx.ModelProto) -> dict[str, int]:
    m = onnx.shape_inference.infer_shapes(model)
    out = {vi.name: vi.type.tensor_type.elem_type for vi in (*m.graph.value_info, *m.graph.output, *m.graph.input)}
    out.update({i.name: i.data_type for i in m.graph.initializer})
    return out


def test_fp16_conv_net_keeps_fp32_io_and_converts_weights() -> None:
    res = convert_float(conv_net(), "fp16")
    m = res.model
    onnx.checker.check_model(m, full_check=True)
    assert m.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT
    assert m.graph.output[0].type.tensor_type.elem_type == TensorProto.FLOAT
    types = _types(m)
    assert all(types[i.name] == TensorProto.FLOAT16 for i in m.graph.initializer)
    assert types["c1"] == TensorProto.FLOAT16 and types["a1"] == TensorProto.FLOAT16
    casts = [n for n in m.graph.node if n.op_type == "Cast"]
    assert len(casts) == res.casts == 2  # input -> fp16, logits -> fp32
    # every original tensor keeps its name (and meaning) in the variant
    assert {"c1", "r1", "c2", "a1", "p1", "f1", "y"} <= set(res.name_map)


def test_fp16_error_is_real_but_small(tmp_path) -> None:
    ref = conv_net()
    res = convert_float(ref, "fp16")
    specs = model_inputs(ref)
    samples = random_samples(specs, 4, seed=1, default_dim=2)
    v = validate(ref, res.model, samples, specs, "fp16")
    acc = v.accuracy()
    assert v.passed, v.reasons
    assert acc["cosine"] > 0.9999
    assert 0 < acc["max_abs"] < 0.05  # FP16 is not FP32: some error must show


def test_block_list_keeps_node_fp32_with_casts() -> None:
    res = convert_float(conv_net(), "fp16", block_ops=["Gemm"], block_nodes=["/conv2/Conv"])
    types = _types(res.model)
    assert res.fp32_nodes == {"/fc/Gemm": "block list (op type)", "/conv2/Conv": "block list (node)"}
    assert types["c2"] == TensorProto.FLOAT and types["y"] == TensorProto.FLOAT
    assert types["w2"] == TensorProto.FLOAT and types["fc_w"] == TensorProto.FLOAT
    gemm = next(n for n in res.model.graph.node if n.name == "/fc/Gemm")
    assert gemm.input[0].endswith("__fp32")  # fed through a Cast back to FP32
    assert types["c1"] == TensorProto.FLOAT16
    with pytest.raises(InputError, match="nope"):
        convert_float(conv_net(), "fp16", block_nodes=["nope"])


def _resize_range_model() -> onnx.ModelProto:
    """Conv -> Resize(scales float) -> Add(Range over a shape-derived float) : rules that stay FP32."""
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w"),
        numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
        numpy_helper.from_array(np.array([0.0], np.float32), "start"),
        numpy_helper.from_array(np.array([1.0], np.float32), "delta"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Resize", ["c", "", "scales"], ["up"], name="resize", mode="nearest"),
        helper.make_node("Shape", ["up"], ["shp"], name="shape", start=3),
        helper.make_node("Cast", ["shp"], ["shp_f"], name="shape_cast", to=TensorProto.FLOAT),
        helper.make_node("Squeeze", ["shp_f"], ["limit"], name="squeeze"),
        helper.make_node("Squeeze", ["start"], ["start0"], name="sq_start"),
        helper.make_node("Squeeze", ["delta"], ["delta0"], name="sq_delta"),
        helper.make_node("Range", ["start0", "limit", "delta0"], ["ramp"], name="range"),
        helper.make_node("Add", ["up", "ramp"], ["y"], name="add"),
    ]
    g = helper.make_graph(nodes, "rr", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def test_resize_scales_range_and_shape_math_stay_fp32() -> None:
    ref = _resize_range_model()
    res = convert_float(ref, "fp16")
    onnx.checker.check_model(res.model, full_check=True)
    types = _types(res.model)
    assert res.fp32_nodes["range"] == "always FP32"
    assert res.fp32_nodes["shape_cast"] == "shape computation"
    assert types["scales"] == TensorProto.FLOAT  # Resize's scales input is float-only
    assert types["c"] == TensorProto.FLOAT16 and types["up"] == TensorProto.FLOAT16
    assert types["shp_f"] == TensorProto.FLOAT and types["ramp"] == TensorProto.FLOAT
    x = {"x": np.random.default_rng(2).standard_normal((1, 3, 4, 4)).astype(np.float32)}
    y0 = open_session(ref).run(None, x)[0]
    y1 = open_session(res.model).run(None, x)[0]
    assert y1.dtype == np.float32 and y1.shape == y0.shape
    np.testing.assert_allclose(y1, y0, rtol=0, atol=0.05)


def test_constant_nodes_and_value_info_follow() -> None:
    nodes = [
        helper.make_node("Constant", [], ["k"], name="const", value=numpy_helper.from_array(np.full((1, 4), 1e5, np.float32))),
        helper.make_node("Mul", ["x", "k"], ["y"], name="mul"),
    ]
    g = helper.make_graph(nodes, "c", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])])
    g.value_info.append(helper.make_tensor_value_info("k", TensorProto.FLOAT, [1, 4]))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    res = convert_float(m, "fp16")
    const = next(n for n in res.model.graph.node if n.op_type == "Constant")
    assert const.attribute[0].t.data_type == TensorProto.FLOAT16
    assert res.clipped_values == 4 and any("clipped" in n for n in res.notes)
    vi = {v.name: v for v in res.model.graph.value_info}
    assert vi["k"].type.tensor_type.elem_type == TensorProto.FLOAT16


def test_bf16_rounding_and_emulated_validation() -> None:
    x = np.array([1.0, 1.00390625, 3.14159, -2.5e-3, 65504.0 * 4], np.float32)
    back = bfloat16_bits_to_float(to_bfloat16_bits(x))
    assert np.all(np.abs(back - x) <= np.abs(x) * 2**-8)
    assert back[0] == 1.0 and back[3] != x[3]
    ref = conv_net()
    specs = model_inputs(ref)
    samples = random_samples(specs, 3, seed=4, default_dim=2)
    res16 = convert_float(ref, "fp16")
    resbf = convert_float(ref, "bf16")
    assert any(i.data_type == TensorProto.BFLOAT16 for i in resbf.model.graph.initializer)
    vb = validate(ref, resbf.model, samples, specs, "bf16")
    vh = validate(ref, res16.model, samples, specs, "fp16")
    assert any("emulated" in n for n in vb.notes)
    assert vb.accuracy()["max_abs"] > vh.accuracy()["max_abs"]  # 8-bit mantissa vs 11


def test_sample_model_fp16_localisation(sample_model) -> None:
    res = convert_float(sample_model, "fp16")
    specs = model_inputs(sample_model)
    samples = random_samples(specs, 2, seed=0)
    loc = localize(sample_model, res.model, samples, specs, res.name_map, precision="fp16")
    nodes = {n.name for n in onnx.load(str(sample_model)).graph.node}
    assert not loc.skipped
    assert set(loc.node_errors) <= nodes and len(loc.node_errors) > 90
    rels = [t.rel for t in loc.tensors]
    assert rels[0] < rels[-1]  # error accumulates from the first layers to the logits
    assert all(r > 0 for r in rels[1:])


def test_unknown_dtype_and_bad_file(tmp_path) -> None:
    with pytest.raises(InputError, match="precision must be"):
        convert_float(conv_net(), "fp12")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not onnx")
    with pytest.raises(InputError, match="bad.onnx"):
        convert_float(bad, "fp16")


def _attention() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    d = 16
    inits = [numpy_helper.from_array(rng.standard_normal((d, d)).astype(np.float32), "wq"),
             numpy_helper.from_array(np.ones(d, np.float32), "g"), numpy_helper.from_array(np.zeros(d, np.float32), "b"),
             numpy_helper.from_array(np.array([0.25], np.float32), "scale")]
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["ln"], name="ln", axis=-1),
             helper.make_node("MatMul", ["ln", "wq"], ["q"], name="mm"),
             helper.make_node("Transpose", ["q"], ["qt"], name="tr", perm=[0, 2, 1]),
             helper.make_node("MatMul", ["q", "qt"], ["s"], name="mm2"),
             helper.make_node("Mul", ["s", "scale"], ["ss"], name="mul"),
             helper.make_node("Softmax", ["ss"], ["p"], name="sm", axis=-1),
             helper.make_node("MatMul", ["p", "q"], ["y"], name="mm3")]
    g = helper.make_graph(nodes, "attn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 8, d])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 8, d])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def test_layernorm_softmax_fp16_and_fp32_reductions() -> None:
    ref = _attention()
    specs = model_inputs(ref)
    samples = random_samples(specs, 4, seed=0, default_dim=2)
    plain = convert_float(ref, "fp16")
    assert plain.fp32_nodes == {}  # LayerNormalization-17 takes float16 (its Mean/InvStdDev type U is unused)
    kept = convert_float(ref, "fp16", fp32_reductions=True)
    assert kept.fp32_nodes == {"ln": "reduction kept FP32", "sm": "reduction kept FP32"}
    assert kept.casts > plain.casts
    e_plain = validate(ref, plain.model, samples, specs, "fp16").accuracy()["max_abs"]
    e_kept = validate(ref, kept.model, samples, specs, "fp16").accuracy()["max_abs"]
    assert 0 < e_kept < e_plain


def _onnx_light(name: str):
    """A model of the onnx wheel's light zoo (IR 3: every initializer is also listed as a graph input)."""
    from pathlib import Path

    path = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"{name}.onnx"
    if not path.is_file():
        pytest.skip(f"this onnx wheel has no {path.name}")
    return path


def _silero(name: str):
    from test_precision_recipe import _package_file

    return _package_file("silero_vad", f"data/{name}.onnx")


def _run(model, feeds: dict) -> list[np.ndarray]:
    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)


@pytest.mark.parametrize("name", ["light_resnet50", "light_vgg19"])
def test_ir3_initializers_listed_as_inputs_convert_as_initializers(name: str) -> None:
    # issue 47: the light zoo's IR-3 files were refused by the converter's own check ("Inferred elem
    # type differs from existing elem type: (10) vs (1)"): the inputs listing the weights stayed FP32
    path = _onnx_light(name)
    src = onnx.load(str(path))
    assert src.ir_version == 3 and {i.name for i in src.graph.initializer} < {i.name for i in src.graph.input}
    res = convert_float(path, "fp16")
    m = res.model
    onnx.checker.check_model(m, full_check=True)
    inits = {i.name: i.data_type for i in m.graph.initializer}
    listed = {i.name: i.type.tensor_type.elem_type for i in m.graph.input}
    assert set(inits) <= set(listed)  # still IR 3: every initializer a graph input
    assert all(listed[n] == t for n, t in inits.items())  # with its initializer's type
    assert sum(t == TensorProto.FLOAT16 for t in inits.values()) > 0
    real = [i for i in src.graph.input if i.name not in inits]
    assert [(i.name, i.type.tensor_type.elem_type) for i in m.graph.input if i.name not in inits] == \
        [(i.name, TensorProto.FLOAT) for i in real]  # the image input stays FP32
    x = np.random.default_rng(0).random((1, 3, 224, 224), dtype=np.float32)
    ref, low = _run(path, {real[0].name: x})[0], _run(m, {real[0].name: x})[0]
    assert low.dtype == np.float32 and np.isfinite(low).all()
    assert np.abs(low - ref).max() <= 0.02 * max(1.0, float(np.abs(ref).max()))


@pytest.mark.parametrize("name", ["silero_vad_op18_ifless", "silero_vad"])
def test_if_branches_are_converted_inside(name: str) -> None:
    # issue 47 / rf-detr#1453: an If was kept FP32 whole, so silero's whole network stayed FP32
    path = _silero(name)
    res = convert_float(path, "fp16")
    m = res.model
    onnx.checker.check_model(m, full_check=True)
    top_ifs = [n.name for n in onnx.load(str(path)).graph.node if n.op_type == "If"]
    assert res.control_flow[: len(top_ifs)] == top_ifs
    assert not any("subgraph" in why for why in res.fp32_nodes.values())

    def branch_convs(graph) -> list:
        out = []
        for node in graph.node:
            for a in node.attribute:
                if a.type == a.GRAPH:
                    out += [n for n in a.g.node if n.op_type == "Conv"] + branch_convs(a.g)
        return out

    inferred = onnx.shape_inference.infer_shapes(m)
    types = {i.name: i.data_type for i in inferred.graph.initializer}

    def collect(graph) -> None:
        for vi in graph.value_info:
            types[vi.name] = vi.type.tensor_type.elem_type
        for node in graph.node:
            for a in node.attribute:
                if a.type == a.GRAPH:
                    collect(a.g)

    collect(inferred.graph)
    convs = branch_convs(m.graph)
    assert convs and all(types.get(c.input[1]) == TensorProto.FLOAT16 for c in convs)  # weights FP16 inside
    assert [o.type.tensor_type.elem_type for o in m.graph.output] == [TensorProto.FLOAT] * len(m.graph.output)
    rng = np.random.default_rng(0)
    feeds = {"input": (0.1 * rng.standard_normal((1, 512))).astype(np.float32),
             "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(16000, np.int64)}
    ref, low = _run(path, feeds), _run(m, feeds)
    for a, b in zip(ref, low, strict=True):
        assert b.dtype == np.float32 and 0 < np.abs(a - b).max() < 0.02  # FP16 inside: close, not equal
