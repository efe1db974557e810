"""load_model(path, infer_shapes=False) + infer_shapes_later(model) equals load_model(path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import onnx
import onnx_models as models
import pytest

from trtstudio.graph.model import Graph, Model, infer_shapes_later, load_model


def _tensors(graph: Graph) -> list[Any]:
    out: list[Any] = [[t.to_json() | {"kind": t.kind, "producer": t.producer, "consumers": t.consumers}
                       for t in graph.tensors.values()]]
    for node in graph.nodes:
        for key, body in node.subgraphs.items():
            out.append([node.name, key, _tensors(body)])
    return out


def _state(model: Model) -> Any:
    return model.summary(), _tensors(model.graph), model.warnings


@pytest.mark.parametrize("isolated", [False, True], ids=["in-process", "child-process"])
@pytest.mark.parametrize("make", [models.conv_net, models.with_subgraphs, models.custom_op])
def test_deferred_shapes_equal_eager(tmp_path: Path, make: Any, isolated: bool) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(make(), path)
    eager = load_model(path)
    lazy = load_model(path, infer_shapes=False)
    before = _tensors(lazy.graph)
    tensor_objects = {name: id(t) for name, t in lazy.graph.tensors.items()}
    infer_shapes_later(lazy, isolated=isolated)
    assert _state(lazy) == _state(eager)
    # the Tensor objects views hold are the ones filled in
    assert all(id(lazy.graph.tensors[n]) == i for n, i in tensor_objects.items())
    if make is models.conv_net:  # intermediate shapes come only from inference
        assert before != _tensors(lazy.graph)


def test_isolated_inference_failure_is_a_warning(tmp_path: Path) -> None:
    """The child cannot read the file any more (it was replaced by garbage after the load): the
    model keeps what it had and says why in one warning line."""
    path = tmp_path / "m.onnx"
    onnx.save(models.conv_net(), path)
    lazy = load_model(path, infer_shapes=False)
    before = _tensors(lazy.graph)
    path.write_bytes(b"\x08\x07garbage" * 10)
    added = infer_shapes_later(lazy, isolated=True)
    assert len(added) == 1 and added[0].startswith("shape inference failed") and str(path) in added[0]
    assert _tensors(lazy.graph) == before and lazy.warnings[-1] == added[0]


def test_the_window_infers_a_model_of_heavy_weights_in_a_child(tmp_path: Path) -> None:
    """A model of few nodes but many megabytes of weights (as ddddocr's 54 MB, 102 nodes): the
    window infers its shapes in a child process, since ONNX's inference copies the weights in and
    out holding the GIL (280 ms there); a light model is inferred in process. Both get the shapes."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from trtstudio.fileio import file_stamp
    from trtstudio.graph.open import ISOLATED_INFERENCE_BYTES, OpenedModel, infer_document_shapes

    def _infer_shapes(model: Any, stamp: Any = None) -> None:  # as the window's loader calls it
        infer_document_shapes(OpenedModel(model, None, {}, None, stamp))

    def model(out_channels: int) -> onnx.ModelProto:
        w = numpy_helper.from_array(np.ones((out_channels, 1000, 1, 1), dtype=np.float32), "w")
        nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"), helper.make_node("Relu", ["c"], ["y"])]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1000, 4, 4])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
        return helper.make_model(graph)

    heavy_channels = ISOLATED_INFERENCE_BYTES // 4000 + 100
    for channels, isolated in ((8, False), (heavy_channels, True)):
        path = tmp_path / f"m{channels}.onnx"
        onnx.save(model(channels), path)
        assert (path.stat().st_size > ISOLATED_INFERENCE_BYTES) is isolated
        lazy = load_model(path, infer_shapes=False)
        _infer_shapes(lazy)
        assert lazy.graph.tensors["c"].shape == [1, channels, 4, 4]
        # the in-process inference keeps its protobuf (with value_info); the child's table leaves the file's own
        assert (len(lazy.proto.graph.value_info) == 0) is isolated
    # the heavy model's file replaced after it was opened: the child would read the other model
    path = tmp_path / "replaced.onnx"
    onnx.save(model(heavy_channels), path)
    stamp = file_stamp(path)
    lazy = load_model(path, infer_shapes=False)
    onnx.save(model(heavy_channels + 1), path)
    _infer_shapes(lazy, stamp)
    assert lazy.graph.tensors["c"].shape is None and "changed since it was opened" in lazy.warnings[-1]
