"""Real ONNX models for the shape-plan, support-check and build tests (built with onnx.helper)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _w(name: str, shape: tuple[int, ...], seed: int = 0) -> onnx.TensorProto:
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name)


def _save(model: onnx.ModelProto, path: Path) -> Path:
    model.ir_version = 10

    onnx.save(model, str(path))
    return path


def detector(path: Path, imgsz: list[int] | None = None, batch: int | None = None) -> Path:
    """A detector-like graph: dynamic N/H/W, two strided convs, the coarse map upsampled and
    concatenated with the fine one (the Concat only lines up when H and W are multiples of 4)."""
    nodes = [
        helper.make_node("Conv", ["images", "w1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2], name="stem"),
        helper.make_node("Relu", ["c1"], ["r1"], name="act1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2], name="down"),
        helper.make_node("Resize", ["c2", "", "scales"], ["up"], mode="nearest", name="up"),
        helper.make_node("Concat", ["r1", "up"], ["cat"], axis=1, name="cat"),
        helper.make_node("Conv", ["cat", "w3"], ["out"], kernel_shape=[1, 1], name="head"),
    ]
    graph = helper.make_graph(
        nodes,
        "detector",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 3, "height", "width"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        [_w("w1", (4, 3, 3, 3)), _w("w2", (4, 4, 3, 3), 1), _w("w3", (2, 8, 1, 1), 2),
         numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="trtstudio-tests")
    if imgsz is not None:
        helper.set_model_props(model, {"imgsz": str(imgsz), **({"batch": str(batch)} if batch else {}),
                                       "task": "detect", "stride": "32"})
    return _save(model, path)


def shape_tensor_model(path: Path) -> Path:
    """``x`` [N, 12] is reshaped by the int64 input ``shape`` (a shape tensor for TensorRT)."""
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
        helper.make_node("Relu", ["r"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes,
        "shape_tensor",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 12]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def pinned_model(path: Path) -> Path:
    """Two inputs sharing the symbol 'seq'; ``feats`` [B, seq, ?] has its last dim pinned by a MatMul weight
    and ``flat`` [?] by a constant Reshape to 2x3x4."""
    nodes = [
        helper.make_node("MatMul", ["feats", "wm"], ["m"], name="proj"),
        helper.make_node("Reshape", ["flat", "target"], ["f"], name="to_3d"),
        helper.make_node("Add", ["tokens", "tokens"], ["t"], name="double"),
    ]
    graph = helper.make_graph(
        nodes,
        "pinned",
        [helper.make_tensor_value_info("feats", TensorProto.FLOAT, ["B", "seq", "d"]),
         helper.make_tensor_value_info("tokens", TensorProto.FLOAT, ["B", "seq"]),
         helper.make_tensor_value_info("flat", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("m", "f", "t")],
        [_w("wm", (16, 5)), numpy_helper.from_array(np.array([2, 3, 4], np.int64), "target")],
    )
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def unsupported_model(path: Path) -> Path:
    """Supported and unsupported nodes interleaved: an unnamed custom op, a named MaxPool with
    dilations 2 (TensorRT refuses), an unnamed Unique (the checker's reason is just 'false')."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu0"),
        helper.make_node("Foo", ["a"], ["b"], domain="my.domain"),
        helper.make_node("Relu", ["b"], ["c"], name="relu1"),
        helper.make_node("MaxPool", ["c"], ["d"], kernel_shape=[2, 2], dilations=[2, 2], name="pool"),
        helper.make_node("Sigmoid", ["d"], ["e"], name="sig"),
        helper.make_node("Flatten", ["e"], ["fl"], axis=0, name="flat"),
        helper.make_node("Unique", ["fl"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "unsupported",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("my.domain", 1)])
    model.ir_version = 10
    onnx.save(model, str(path))  # the checker rejects the unknown domain's op: saved unchecked
    return path


def probe_model(path: Path) -> Path:
    """``x`` ['h', 2] is the right operand of a MatMul with a constant [4, 64] (h must be 64: no static
    rule reads a right operand, running it tells), and ``sr`` an int64 scalar compared with 16000."""
    nodes = [
        helper.make_node("MatMul", ["w", "x"], ["y"], name="mix"),
        helper.make_node("Equal", ["sr", "k16"], ["is16k"], name="is_16k"),
        helper.make_node("Cast", ["is16k"], ["flag"], to=TensorProto.FLOAT, name="flag"),
    ]
    graph = helper.make_graph(
        nodes,
        "probe",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["h", 2]),
         helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None), helper.make_tensor_value_info("flag", TensorProto.FLOAT, None)],
        [_w("w", (4, 64)), numpy_helper.from_array(np.array(16000, np.int64), "k16")],
    )
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
