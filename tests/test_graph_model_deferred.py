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


@pytest.mark.parametrize("make", [models.conv_net, models.with_subgraphs, models.custom_op])
def test_deferred_shapes_equal_eager(tmp_path: Path, make: Any) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(make(), path)
    eager = load_model(path)
    lazy = load_model(path, infer_shapes=False)
    before = _tensors(lazy.graph)
    tensor_objects = {name: id(t) for name, t in lazy.graph.tensors.items()}
    infer_shapes_later(lazy)
    assert _state(lazy) == _state(eager)
    # the Tensor objects views hold are the ones filled in
    assert all(id(lazy.graph.tensors[n]) == i for n, i in tensor_objects.items())
    if make is models.conv_net:  # intermediate shapes come only from inference
        assert before != _tensors(lazy.graph)
