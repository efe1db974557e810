"""Parameter counts with weights outside initializers: Constant nodes (paddle2onnx, PaddleOCR) and
ConstantOfShape (ONNX's light test models), in the summary, ``inspect``, the Model page and reports."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from trtstudio.graph.model import load_model
from trtstudio.graph.params import MIN_WEIGHT_ELEMENTS, WEIGHT_OPS, count_parameters


def _const(name: str, arr: np.ndarray) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], name=f"const_{name}", value=numpy_helper.from_array(arr, name))


def _mixed_model() -> tuple[onnx.ModelProto, dict[str, int]]:
    """x -> Conv(W, B in Constants) -> Mul(scalar Constant) -> Add(288-element Constant) -> Conv(W made
    by ConstantOfShape from an initializer shape) -> Add(ConstantOfShape of Shape(...): a run-time
    mask) -> Reshape(shape Constant) -> MatMul(initializer). Returns the model and the elements each
    source must count, from the arrays themselves."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)  # 8 < MIN_WEIGHT_ELEMENTS, but a Conv input
    half = np.array(0.5, dtype=np.float32)  # a scalar argument
    bias = rng.standard_normal((1, 8, 6, 6)).astype(np.float32)
    shape2 = np.array([4, 8, 1, 1], dtype=np.int64)  # initializer: the shape of Conv 2's weights
    flat = np.array([1, -1], dtype=np.int64)  # Reshape's shape: an argument
    w3 = rng.standard_normal((144, 5)).astype(np.float32)
    nodes = [
        _const("w", w), _const("b", b), _const("half", half), _const("bias", bias), _const("flat", flat),
        helper.make_node("Conv", ["x", "w", "b"], ["c1"]),
        helper.make_node("Mul", ["c1", "half"], ["m"]),
        helper.make_node("Add", ["m", "bias"], ["a"]),
        helper.make_node("ConstantOfShape", ["shape2"], ["w2"],
                         value=numpy_helper.from_array(np.array([0.01], dtype=np.float32))),
        helper.make_node("Conv", ["a", "w2"], ["c2"]),
        helper.make_node("Shape", ["c2"], ["s"]),
        helper.make_node("ConstantOfShape", ["s"], ["mask"]),
        helper.make_node("Add", ["c2", "mask"], ["a2"]),
        helper.make_node("Reshape", ["a2", "flat"], ["r"]),
        helper.make_node("MatMul", ["r", "w3"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "mixed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
        [numpy_helper.from_array(shape2, "shape2"), numpy_helper.from_array(w3, "w3")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    want = {"initializer": shape2.size + w3.size, "Constant": w.size + b.size + bias.size,
            "ConstantOfShape": int(np.prod(shape2))}
    return model, want


def test_weights_in_constants_counted_arguments_not(tmp_path: Path) -> None:
    model, want = _mixed_model()
    path = tmp_path / "mixed.onnx"
    onnx.save(model, path)
    s = load_model(path).summary()
    src = s["parameter_sources"]
    assert {k: v["parameters"] for k, v in src.items()} == want
    assert {k: v["tensors"] for k, v in src.items()} == {"initializer": 2, "Constant": 3, "ConstantOfShape": 1}
    assert src["initializer"]["bytes"] == 4 * 8 + 4 * 144 * 5  # int64 shape + float32 weights
    assert s["parameters"] == sum(want.values())
    assert s["parameter_bytes"] == sum(v["bytes"] for v in src.values())
    assert s["parameters_in_constants"] == want["Constant"] + want["ConstantOfShape"]
    count = count_parameters(load_model(path, infer_shapes=False))  # no shape inference: the same
    assert count.to_json() == src
    assert count.float_parameters == s["parameters"] - 4  # all but the int64 shape
    assert count.bytes_with_floats_of(2) == 32 + 2 * count.float_parameters  # FP16: floats halve
    out = subprocess.run([sys.executable, "-m", "trtstudio", "inspect", str(path)], capture_output=True, text=True,
                         check=True).stdout
    assert (f"parameters: {s['parameters']:,} = {want['initializer']:,} in 2 initializers + {want['Constant']:,} "
            f"in 3 Constant nodes + {want['ConstantOfShape']:,} made by 1 ConstantOfShape nodes") in out


def _site_file(package: str, rel: str) -> Path | None:
    """A data file of an installed package, found without importing it (rapidocr imports cv2)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / rel
    return path if path.is_file() else None


def _paddleocr_det() -> Path | None:
    return (_site_file("rapidocr_onnxruntime", "models/ch_PP-OCRv4_det_infer.onnx")
            or _site_file("rapidocr", "models/ch_PP-OCRv4_det_infer.onnx"))


@pytest.mark.skipif(_paddleocr_det() is None, reason="rapidocr_onnxruntime / rapidocr (PaddleOCR's ONNX) not installed")
def test_paddleocr_detector_weights_in_constant_nodes(tmp_path: Path) -> None:
    """paddle2onnx stores PaddleOCR's weights in Constant nodes: no initializer at all. The count is
    the file's weights: Conv/BN/ConvTranspose inputs and the one big Add bias, nearly the whole file."""
    path = _paddleocr_det()
    assert path is not None
    proto = onnx.load(path)
    assert not proto.graph.initializer
    users: dict[str, list[str]] = {}
    for n in proto.graph.node:
        for x in n.input:
            users.setdefault(x, []).append(n.op_type)
    sizes = [(int(numpy_helper.to_array(n.attribute[0].t).size), users.get(n.output[0], []))
             for n in proto.graph.node if n.op_type == "Constant"]
    want = [k for k, ops in sizes if k >= MIN_WEIGHT_ELEMENTS or any(op in WEIGHT_OPS for op in ops)]
    s = load_model(path).summary()
    assert s["parameters"] == s["parameters_in_constants"] == sum(want) > 1_000_000
    assert s["parameter_sources"]["Constant"]["tensors"] == len(want)
    assert 0.95 * path.stat().st_size < s["parameter_bytes"] < path.stat().st_size  # the weights are the file
    doc = json.loads(subprocess.run([sys.executable, "-m", "trtstudio", "inspect", str(path), "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    assert doc["parameters"] == sum(want) and doc["initializers"] == 0


def test_onnx_light_resnet50_weights_made_by_constant_of_shape() -> None:
    """ONNX's light ResNet-50 keeps each weight's shape in an initializer and makes the weight with
    ConstantOfShape: 25.6 M parameters (ResNet-50 with its batch-norm statistics), not the 2,194
    numbers of the shapes."""
    path = _site_file("onnx", "backend/test/data/light/light_resnet50.onnx")
    if path is None:
        pytest.skip("this onnx wheel has no light test models")
    proto = onnx.load(path)
    inits = {i.name: numpy_helper.to_array(i) for i in proto.graph.initializer}
    made = [math.prod(inits[n.input[0]].tolist()) for n in proto.graph.node if n.op_type == "ConstantOfShape"]
    s = load_model(path).summary()
    assert s["parameter_sources"]["ConstantOfShape"] == {"tensors": len(made), "parameters": sum(made),
                                                         "bytes": 4 * sum(made)}
    assert s["parameters"] == sum(made) + sum(a.size for a in inits.values())
    assert 25_500_000 < s["parameters"] < 25_700_000


@pytest.mark.gui
def test_report_and_model_page_say_where_the_weights_are(tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    from trtstudio.report import build_report, write_report
    from trtstudio.ui.properties_view import ModelPanel

    model, want = _mixed_model()
    path = tmp_path / "mixed.onnx"
    onnx.save(model, path)
    rep = build_report(model=path)
    html = write_report(rep, tmp_path / "r.html")[0].read_text(encoding="utf-8")
    total = sum(want.values())
    assert f"{total:,} = " in html and f"{want['Constant']:,} in 3 Constant nodes" in html
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.show_summary(load_model(path).summary())
    assert f"{total:,} = {want['initializer']:,} in 2 initializers" in panel.summary.toPlainText()
