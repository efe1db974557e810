"""The engine's own graph (engine.layer_graph): layers as nodes, tensors as edges, on real engines."""

from __future__ import annotations

from pathlib import Path

import pytest

from trtstudio.engine.analysis import analyze
from trtstudio.engine.layer_graph import is_layer_model, layer_model
from trtstudio.engine.load import load_engine
from trtstudio.graph.categories import category
from trtstudio.graph.display import build_display

A100 = (Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "trt-real" / "NVIDIA_TensorRT_trex"
        / "release-11.0" / "examples" / "pytorch" / "resnet" / "A100")


@pytest.mark.skipif(not A100.is_dir(), reason=f"fixtures absent: {A100}")
@pytest.mark.parametrize("variant", ["fp32", "qat-residual"])
def test_layer_graph_of_trex_engines(variant: str) -> None:
    engine = load_engine(sorted((A100 / variant).glob("*.json")))
    model = layer_model(engine)
    g = model.graph
    assert is_layer_model(model) and [n.onnx_name for n in g.nodes] == [lay.name for lay in engine.layers]
    assert g.inputs == ["input.1"] and len(g.outputs) == 1
    # every tensor a layer writes and another reads is an edge between their nodes
    src, dst, names = g.edges()
    expected = {(i, j) for i, a in enumerate(engine.layers) for j, b in enumerate(engine.layers)
                if {t.name for t in a.outputs} & {t.name for t in b.inputs}}
    assert set(zip(src.tolist(), dst.tolist(), strict=True)) == expected
    # shapes and precisions on the edges, formats kept
    t = g.tensors[engine.layers[0].outputs[0].name]
    assert t.shape == engine.layers[0].outputs[0].shape and t.dtype == (engine.layers[0].outputs[0].dtype or "").lower()
    assert g.formats[t.name] == engine.layers[0].outputs[0].format  # type: ignore[attr-defined]
    # drawn like an ONNX graph, convolutions as compute, reformats apart
    dg = build_display(g)
    assert len(dg.kind) == len(g.nodes) + len(g.inputs) + len(g.outputs)
    assert category("CaskConvolution") == "compute" and category("Reformat") == "reformat"
    # each layer maps to its own node, so the table and the graph select each other
    mapped = analyze(engine, model).engine.layers
    assert [lay.onnx_nodes for lay in mapped] == [[n.name] for n in g.nodes]
