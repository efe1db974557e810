"""Small real ONNX models built with onnx.helper for the tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _init(name: str, arr: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(arr, name)


def conv_net(batch: int | str = "N", channels: int = 8) -> onnx.ModelProto:
    """Conv -> Relu -> Conv -> Add(residual) -> GlobalAveragePool -> Flatten -> Gemm."""
    rng = np.random.default_rng(0)
    c = channels
    inits = [
        _init("w1", rng.standard_normal((c, 3, 3, 3)).astype(np.float32)),
        _init("b1", np.zeros(c, np.float32)),
        _init("w2", rng.standard_normal((c, c, 3, 3)).astype(np.float32) * 0.1),
        _init("fc_w", rng.standard_normal((10, c)).astype(np.float32)),
        _init("fc_b", np.zeros(10, np.float32)),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="/conv1/Conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="/relu/Relu"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="/conv2/Conv", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["a1"], name="/add/Add"),
        helper.make_node("GlobalAveragePool", ["a1"], ["p1"], name="/pool/GlobalAveragePool"),
        helper.make_node("Flatten", ["p1"], ["f1"], name="/flatten/Flatten"),
        helper.make_node("Gemm", ["f1", "fc_w", "fc_b"], ["y"], name="/fc/Gemm", transB=1),
    ]
    graph = helper.make_graph(
        nodes, "conv_net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 10])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def with_subgraphs() -> onnx.ModelProto:
    """An If whose branches read an outer tensor, and a Loop with a body."""
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["h", "h"], ["t_out"], name="then_mul")], "then_body", [],
        [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [2])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["h"], ["e_out"], name="else_neg")], "else_body", [],
        [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [2])])
    body = helper.make_graph(
        [helper.make_node("Add", ["v_in", "one"], ["v_out"], name="loop_add"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="loop_cond")],
        "loop_body",
        [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [2])],
        [_init("one", np.ones(2, np.float32))])
    nodes = [
        helper.make_node("Relu", ["x"], ["h"], name="relu"),
        helper.make_node("ReduceSum", ["h"], ["s"], name="sum", keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"], name="gt"),
        helper.make_node("If", ["c"], ["b"], name="branch", then_branch=then_g, else_branch=else_g),
        helper.make_node("Loop", ["trip", "true", "b"], ["y"], name="loop", body=body),
    ]
    graph = helper.make_graph(
        nodes, "with_subgraphs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [_init("zero", np.zeros((), np.float32)), _init("trip", np.array(3, np.int64)),
         _init("true", np.array(True))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def custom_op() -> onnx.ModelProto:
    nodes = [
        helper.make_node("Relu", ["x"], ["h"], name="relu"),
        helper.make_node("Frobnicate", ["h"], ["y"], name="frob", domain="com.acme", strength=3),
    ]
    graph = helper.make_graph(
        nodes, "custom",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.acme", 1)])
    model.ir_version = 8
    return model


def cyclic() -> onnx.ModelProto:
    nodes = [
        helper.make_node("Add", ["x", "b"], ["a"], name="first"),
        helper.make_node("Relu", ["a"], ["b"], name="second"),
    ]
    graph = helper.make_graph(
        nodes, "cyclic", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def save_external(model: onnx.ModelProto, path: Path) -> Path:
    """Save with every initializer in one external file beside the model."""
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=path.name + ".data", size_threshold=0)
    return path
