"""ONNX models shaped like the real exports that made the graph view unreadable (built with onnx.helper).

- ``densenet_like``: every weight is the output of a ``ConstantOfShape`` and every BN-style scale a
  ``ConstantOfShape -> Unsqueeze`` chain (as onnx-caffe2's DenseNet-121 export does): unfolded,
  the first screen is a fan of edges from those nodes.
- ``detector_like``: dynamic H/W, two strides concatenated, a head whose ``Reshape`` takes its shape
  from ``Shape -> Gather -> Unsqueeze -> Concat`` and ``Constant`` nodes everywhere (a PP-OCR-like det).
- ``wide_top``: many parallel branches right under the input, wider than any window at a readable zoom.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _i64(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, np.int64), name)


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
           inits: list[onnx.TensorProto], name: str) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def densenet_like(blocks: int = 60, channels: int = 4) -> onnx.ModelProto:
    """``blocks`` of Conv(weight from ConstantOfShape) -> Mul(scale from ConstantOfShape->Unsqueeze)
    -> Add(bias likewise) -> Relu, with a dense Concat of earlier outputs every 4 blocks."""
    nodes: list[onnx.NodeProto] = []
    inits = [_i64("wshape", [channels, channels, 3, 3]), _i64("sshape", [channels]), _i64("axes", [1, 2])]
    x = "input"
    for b in range(blocks):
        w, s, s3, bias, bias3 = (f"w{b}", f"s{b}", f"s3_{b}", f"bias{b}", f"bias3_{b}")
        nodes += [
            helper.make_node("ConstantOfShape", ["wshape"], [w], name=f"cw{b}",
                             value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.01])),
            helper.make_node("Conv", [x, w], [f"c{b}"], name=f"conv{b}", pads=[1, 1, 1, 1]),
            helper.make_node("ConstantOfShape", ["sshape"], [s], name=f"cs{b}",
                             value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
            helper.make_node("Unsqueeze", [s, "axes"], [s3], name=f"us{b}"),
            helper.make_node("Mul", [f"c{b}", s3], [f"m{b}"], name=f"mul{b}"),
            helper.make_node("ConstantOfShape", ["sshape"], [bias], name=f"cb{b}",
                             value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.0])),
            helper.make_node("Unsqueeze", [bias, "axes"], [bias3], name=f"ub{b}"),
            helper.make_node("Add", [f"m{b}", bias3], [f"a{b}"], name=f"add{b}"),
            helper.make_node("Relu", [f"a{b}"], [f"r{b}"], name=f"relu{b}"),
        ]
        x = f"r{b}"
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["output"], name="gap"))
    return _model(nodes, [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, channels, 16, 16])],
                  [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, channels, 1, 1])], inits,
                  "densenet_like")


def detector_like() -> onnx.ModelProto:
    """Dynamic H/W; stride-1 and stride-2 branches (the second resized back) concatenated; a head that
    reshapes through a Shape->Gather->Unsqueeze->Concat chain; weights from Constant nodes."""
    nodes: list[onnx.NodeProto] = []
    rng = np.random.default_rng(0)

    def const(name: str, arr: np.ndarray) -> str:
        nodes.append(helper.make_node("Constant", [], [name], name=f"Constant_{name}",
                                      value=numpy_helper.from_array(arr, name)))
        return name

    w1 = const("w1", rng.standard_normal((8, 3, 3, 3)).astype(np.float32))
    nodes.append(helper.make_node("Conv", ["images", w1], ["f1"], name="conv_s1", pads=[1, 1, 1, 1]))
    w2 = const("w2", rng.standard_normal((8, 3, 3, 3)).astype(np.float32))
    nodes.append(helper.make_node("Conv", ["images", w2], ["f2"], name="conv_s2", pads=[1, 1, 1, 1],
                                  strides=[2, 2]))
    scales = const("scales", np.asarray([1, 1, 2, 2], np.float32))
    nodes.append(helper.make_node("Resize", ["f2", "", scales], ["f2up"], name="resize", mode="nearest"))
    nodes.append(helper.make_node("Concat", ["f1", "f2up"], ["cat"], name="concat_strides", axis=1))
    w3 = const("w3", rng.standard_normal((4, 16, 1, 1)).astype(np.float32))
    nodes.append(helper.make_node("Conv", ["cat", w3], ["head"], name="head_conv"))
    nodes.append(helper.make_node("Shape", ["head"], ["hshape"], name="shape"))
    i0 = const("i0", np.asarray(0, np.int64))
    nodes.append(helper.make_node("Gather", ["hshape", i0], ["batch"], name="gather_batch", axis=0))
    ax = const("ax0", np.asarray([0], np.int64))
    nodes.append(helper.make_node("Unsqueeze", ["batch", ax], ["batch1"], name="unsq_batch"))
    rest = const("rest", np.asarray([4, -1], np.int64))
    nodes.append(helper.make_node("Concat", ["batch1", rest], ["newshape"], name="concat_shape", axis=0))
    nodes.append(helper.make_node("Reshape", ["head", "newshape"], ["flat"], name="reshape_head"))
    nodes.append(helper.make_node("Sigmoid", ["flat"], ["scores"], name="sigmoid"))
    return _model(nodes, [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, "height", "width"])],
                  [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 4, "anchors"])], [],
                  "detector_like")


def wide_top(branches: int = 24, depth: int = 12) -> onnx.ModelProto:
    """``branches`` parallel Relu->Sigmoid->... chains of ``depth`` nodes under the input, summed at the end."""
    nodes: list[onnx.NodeProto] = []
    ends = []
    ops = ["Relu", "Sigmoid", "Tanh", "Abs"]
    for b in range(branches):
        x = "input"
        for d in range(depth):
            out = f"b{b}_{d}"
            nodes.append(helper.make_node(ops[d % len(ops)], [x], [out], name=f"branch{b}/{ops[d % len(ops)]}_{d}"))
            x = out
        ends.append(x)
    nodes.append(helper.make_node("Sum", ends, ["output"], name="sum"))
    return _model(nodes, [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 8])],
                  [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 8])], [], "wide_top")
