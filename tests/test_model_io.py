"""One view of a model's inputs (backends.model_io): the planner, the support check, ONNX Runtime's
backend, triton-config and the Live profile panel read the same names, dtypes and dims."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from trtstudio.backends.model_io import UNKNOWN_DIM, OnnxModel, onnx_model, read_onnx
from trtstudio.errors import InputError


def odd_dims_model(path: Path) -> Path:
    """Inputs with every kind of dim: fixed, fixed 0, named, unnamed, negative (read as unnamed);
    an int64 and a bool input; a weight also listed among the graph inputs."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, None, 0])
    x.type.tensor_type.shape.dim[2].Clear()  # neither value nor name
    n = helper.make_tensor_value_info("n", TensorProto.INT64, ["batch"])
    flag = helper.make_tensor_value_info("flag", TensorProto.BOOL, [])
    neg = helper.make_tensor_value_info("neg", TensorProto.FLOAT, [1, 2])
    neg.type.tensor_type.shape.dim[0].dim_value = -1
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [1])
    nodes = [helper.make_node("Identity", ["x"], ["y"]), helper.make_node("Identity", ["n"], ["m"]),
             helper.make_node("Not", ["flag"], ["nf"]), helper.make_node("Mul", ["neg", "w"], ["z"])]
    outs = [helper.make_tensor_value_info(o, t, None) for o, t in
            (("y", TensorProto.FLOAT), ("m", TensorProto.INT64), ("nf", TensorProto.BOOL), ("z", TensorProto.FLOAT))]
    graph = helper.make_graph(nodes, "odd", [x, n, flag, neg, w], outs,
                              [numpy_helper.from_array(np.ones(1, np.float32), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.save(model, str(path))
    return path


WANT = {"x": ("float32", ("batch", 3, UNKNOWN_DIM, 0)), "n": ("int64", ("batch",)), "flag": ("bool", ()),
        "neg": ("float32", (UNKNOWN_DIM, 2))}


def test_the_view(tmp_path: Path) -> None:
    model = read_onnx(odd_dims_model(tmp_path / "odd.onnx"))
    assert {t.name: (t.dtype, t.dims) for t in model.inputs} == WANT  # the weight "w" is no input
    assert [t.onnx_type for t in model.inputs] == ["FLOAT", "INT64", "BOOL", "FLOAT"]
    assert model.inputs[0].fixed_dims() == [-1, 3, -1, 0] and model.inputs[0].dynamic
    assert [t.name for t in model.outputs] == ["y", "m", "nf", "z"]
    assert onnx_model(model) is model and onnx_model(model.proto).inputs == model.inputs
    assert OnnxModel(model.proto).name is None and model.name == str(tmp_path / "odd.onnx")
    for bad, why in ((tmp_path / "none.onnx", "no such file"), (tmp_path / "empty.onnx", "empty file")):
        if why == "empty file":
            bad.write_bytes(b"")
        with pytest.raises(InputError, match=why):
            read_onnx(bad)


def test_every_reader_sees_the_same_inputs(tmp_path: Path) -> None:
    from trtstudio.backends.shapes import plan_shapes
    from trtstudio.backends.support import _GraphIndex
    from trtstudio.commands.triton_config import _io

    path = odd_dims_model(tmp_path / "odd.onnx")
    plan = plan_shapes(path)
    assert {i.name: (i.dtype, tuple(i.declared)) for i in plan.inputs} == WANT
    assert plan.get("x").sources[3] == "model" and plan.get("x").opt[3] == 0  # type: ignore[union-attr]
    assert _GraphIndex(read_onnx(path)).bad_inputs() == []
    inputs, outputs = _io(str(path))
    assert [(i["name"], i["dims"]) for i in inputs] == [("x", [-1, 3, -1, 0]), ("n", [-1]), ("flag", []),
                                                       ("neg", [-1, 2])]
    assert [o["data_type"] for o in outputs] == ["TYPE_FP32", "TYPE_INT64", "TYPE_BOOL", "TYPE_FP32"]
    if importlib.util.find_spec("onnxruntime") is not None:
        from trtstudio.backends.base import open_backend

        backend = open_backend("ort", path)
        try:
            assert {s["name"]: (s["dtype"], tuple(s["shape"])) for s in backend.input_specs()} == WANT
        finally:
            backend.close()


@pytest.mark.gui
def test_the_profile_panel_reads_the_same_view(tmp_path: Path) -> None:
    from trtstudio.ui.profile_inputs import read_model_inputs

    path = odd_dims_model(tmp_path / "odd.onnx")
    assert {s["name"]: (s["dtype"], tuple(s["shape"])) for s in read_model_inputs(str(path))} == WANT
    assert read_model_inputs(str(path), onnx.load(str(path))) == read_model_inputs(str(path))
