"""engine.mapping: layer <-> ONNX node map on hand-built ONNX models and real engine outputs."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from trtstudio.engine.load import load_engine
from trtstudio.engine.mapping import (
    CONF_CLEANED,
    CONF_IO,
    CONF_METADATA,
    CONF_NAME,
    CONF_REFORMAT,
    CONF_SPAN,
    CONF_TENSOR,
    map_layers,
    split_name,
)
from trtstudio.engine.model import EngineInfo, Layer, TensorDesc
from trtstudio.graph.model import load_model

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "trt-real"
SAMPLE = Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample"
needs_fixtures = pytest.mark.skipif(not FIXTURES.is_dir(), reason="real TensorRT fixtures not present")


def _chain_model(path: Path) -> Path:
    """input -> conv -> relu -> add(+bias) -> mul -> reshape -> matmul -> out; plus an unused Constant."""
    import numpy as np

    w = numpy_helper.from_array(np.ones((8, 3, 3, 3), np.float32), "conv.weight")
    b = numpy_helper.from_array(np.ones((1, 8, 1, 1), np.float32), "bias")
    s = numpy_helper.from_array(np.full((1, 8, 1, 1), 2.0, np.float32), "scale")
    shp = numpy_helper.from_array(np.array([1, -1], np.int64), "shape")
    fc = numpy_helper.from_array(np.ones((8 * 6 * 6, 4), np.float32), "fc.weight")
    nodes = [
        helper.make_node("Conv", ["input", "conv.weight"], ["conv_out"], name="/conv/Conv"),
        helper.make_node("Relu", ["conv_out"], ["relu_out"], name="/relu/Relu"),
        helper.make_node("Add", ["relu_out", "bias"], ["add_out"], name="/add/Add"),
        helper.make_node("Mul", ["add_out", "scale"], ["mul_out"], name="/mul/Mul"),
        helper.make_node("Reshape", ["mul_out", "shape"], ["flat"], name="/flatten/Reshape"),
        helper.make_node("MatMul", ["flat", "fc.weight"], ["output"], name="/fc/MatMul"),
        helper.make_node("Constant", [], ["unused"], name="/const/Constant",
                         value=numpy_helper.from_array(np.zeros(1, np.float32))),
    ]
    graph = helper.make_graph(
        nodes, "chain",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 4])],
        [w, b, s, shp, fc],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    p = path / "chain.onnx"
    onnx.save(model, p)
    return p


@pytest.fixture()
def graph(tmp_path: Path):  # type: ignore[no-untyped-def]
    return load_model(_chain_model(tmp_path)).graph


def _engine(*layers: Layer) -> EngineInfo:
    for i, lay in enumerate(layers):
        lay.index = i
    return EngineInfo(layers=list(layers))


def test_split_name_fusions() -> None:
    assert split_name("a + b + c") == [("name", "a"), ("name", "b"), ("name", "c")]
    assert split_name("PWN(PWN(/Sub), PWN(/Div))") == [("name", "/Sub"), ("name", "/Div")]
    assert split_name("PWN(a + b, PWN(c))") == [("name", "a"), ("name", "b"), ("name", "c")]
    assert split_name("x || y") == [("name", "x"), ("name", "y")]
    assert split_name("{ForeignNode[gemm2.bias + ONNXTRT_Broadcast_4...ONNXTRT_castHelper_9]}") == [
        ("span", "gemm2.bias + ONNXTRT_Broadcast_4...ONNXTRT_castHelper_9")
    ]
    # brackets protect a " + " inside a Torch-TensorRT part and an unnamed layer
    torch = "[CONVOLUTION]-[aten_ops.convolution.default]-[/conv1/convolution] + [RELU]-[aten_ops.relu.default]-[/relu/relu]"
    assert [t for _, t in split_name(torch)] == [
        "[CONVOLUTION]-[aten_ops.convolution.default]-[/conv1/convolution]",
        "[RELU]-[aten_ops.relu.default]-[/relu/relu]",
    ]
    assert split_name("fc.bias + (Unnamed Layer* 306) [Shuffle]") == [
        ("name", "fc.bias"), ("name", "(Unnamed Layer* 306) [Shuffle]")
    ]
    assert split_name("{conv1,relu1,pool1}") == [("name", "conv1"), ("name", "relu1"), ("name", "pool1")]


def test_metadata_wins_with_both_separators(graph) -> None:  # type: ignore[no-untyped-def]
    eng = _engine(
        Layer(0, "fused_whatever", metadata="[ONNX Layer: /conv/Conv]\x1e[ONNX Layer: /relu/Relu]"),
        Layer(0, "other", metadata="[ONNX Layer: /add/Add]\x1f[ONNX Layer: /mul/Mul]"),
        Layer(0, "rtx", metadata="[ONNX Layer: /flatten/Reshape][ONNX Layer: /fc/MatMul]"),
    )
    res = map_layers(eng, graph)
    assert eng.layers[0].onnx_nodes == ["/conv/Conv", "/relu/Relu"]
    assert eng.layers[1].onnx_nodes == ["/add/Add", "/mul/Mul"]
    assert eng.layers[2].onnx_nodes == ["/flatten/Reshape", "/fc/MatMul"]
    assert all(lay.mapping_confidence == CONF_METADATA for lay in eng.layers)
    assert res.node_layers["/relu/Relu"] == [0]
    assert res.unmapped_nodes == ["/const/Constant"]


def test_metadata_of_unknown_nodes_falls_back_to_name(graph) -> None:  # type: ignore[no-untyped-def]
    eng = _engine(Layer(0, "/conv/Conv + /relu/Relu", metadata="[ONNX Layer: /not/in/graph]"))
    map_layers(eng, graph)
    assert eng.layers[0].onnx_nodes == ["/conv/Conv", "/relu/Relu"]
    assert eng.layers[0].mapping_confidence == CONF_NAME


def test_name_heuristics(graph) -> None:  # type: ignore[no-untyped-def]
    eng = _engine(
        Layer(0, "/conv/Conv + /relu/Relu"),
        Layer(0, "PWN(PWN(/add/Add), /mul/Mul)"),
        Layer(0, "/add/Add || /mul/Mul"),
        Layer(0, "[CONVOLUTION]-[aten_ops.convolution.default]-[/conv/Conv]"),
        Layer(0, "/fc/MatMul [profile 1]"),
        Layer(0, "relu_out"),  # a tensor name -> its producer
        Layer(0, "/fc/MatMul_myl3_7"),
        Layer(0, "conv.weight + /conv/Conv"),  # weights are ignored, not "unresolved"
        Layer(0, "/conv/Conv + no_such_node"),
        Layer(0, "(Unnamed Layer* 12) [Shuffle]"),
    )
    res = map_layers(eng, graph)
    got = [(lay.onnx_nodes, lay.mapping_confidence) for lay in eng.layers]
    assert got[0] == (["/conv/Conv", "/relu/Relu"], CONF_NAME)
    assert got[1] == (["/add/Add", "/mul/Mul"], CONF_NAME)
    assert got[2] == (["/add/Add", "/mul/Mul"], CONF_NAME)
    assert got[3] == (["/conv/Conv"], CONF_CLEANED)
    assert got[4] == (["/fc/MatMul"], CONF_CLEANED)
    assert got[5] == (["/relu/Relu"], CONF_TENSOR)
    assert got[6] == (["/fc/MatMul"], CONF_CLEANED)
    assert got[7] == (["/conv/Conv"], CONF_NAME)
    assert got[8] == (["/conv/Conv"], pytest.approx(CONF_NAME / 2))
    assert got[9] == ([], 0.0)
    assert res.unmapped_layers == [9]
    assert sorted(res.node_layers["/conv/Conv"]) == [0, 3, 7, 8]


def test_foreign_node_span_and_reformat(graph) -> None:  # type: ignore[no-untyped-def]
    eng = _engine(
        Layer(0, "Reformatting CopyNode for Input Tensor 0 to /conv/Conv + /relu/Relu"),
        Layer(0, "{ForeignNode[/add/Add.../flatten/Reshape]}"),
        Layer(0, "{ForeignNode[fc.weight...(Unnamed Layer* 109) [ElementWise]]}"),  # weight -> first consumer
        Layer(0, "conv input reformatter 0"),
    )
    map_layers(eng, graph)
    assert eng.layers[0].onnx_nodes == ["/conv/Conv", "/relu/Relu"]
    assert eng.layers[0].mapping_confidence == CONF_REFORMAT
    assert eng.layers[1].onnx_nodes == ["/add/Add", "/mul/Mul", "/flatten/Reshape"]
    assert eng.layers[1].mapping_confidence == CONF_SPAN
    assert eng.layers[2].onnx_nodes == ["/fc/MatMul"]
    assert eng.layers[2].mapping_confidence == CONF_REFORMAT
    assert eng.layers[3].onnx_nodes == []  # "conv" is no node name here


def test_io_tensors_as_last_resort(graph) -> None:  # type: ignore[no-untyped-def]
    lay = Layer(0, "__myl_Fused_0", inputs=[TensorDesc("relu_out")], outputs=[TensorDesc("mul_out")])
    eng = _engine(lay)
    map_layers(eng, graph)
    assert lay.onnx_nodes == ["/mul/Mul"]
    assert lay.mapping_confidence == CONF_IO


def test_model_object_accepted(tmp_path: Path) -> None:
    model = load_model(_chain_model(tmp_path))
    eng = _engine(Layer(0, "/conv/Conv"))
    res = map_layers(eng, model)
    assert res.node_layers == {"/conv/Conv": [0]}
    assert len(res.unmapped_nodes) == 6


def test_sample_model_with_its_rtx_build_log() -> None:
    """The committed MobileNetV2 sample and the TensorRT-RTX SM86 build log of it: a real pair."""
    model = load_model(SAMPLE / "mobilenetv2_035.onnx")
    eng = load_engine([SAMPLE / "mobilenetv2_035.rtx-sm86.build.log"])
    res = map_layers(eng, model.graph)
    with_md = [lay for lay in eng.layers if lay.metadata]
    assert with_md, "the RTX log has layer metadata"
    assert all(lay.mapping_confidence == CONF_METADATA and lay.onnx_nodes for lay in with_md)
    convs = [n.name for n in model.graph.nodes if n.op_type == "Conv"]
    assert all(c in res.node_layers for c in convs)
    mapped = len(res.node_layers)
    assert mapped + len(res.unmapped_nodes) == len(model.graph.nodes)
    assert mapped >= 0.9 * len(model.graph.nodes)
    # node -> layer index agrees with layer -> node
    for name, idx in res.node_layers.items():
        assert all(name in eng.layers[i].onnx_nodes for i in idx)


@needs_fixtures
def test_real_fused_names_agree_with_metadata() -> None:
    """On real TensorRT 10.4 layer JSON, the parts of a fused name are among its Metadata entries."""
    paths = sorted(FIXTURES.glob("fuzzylabs_edge-vision-power-estimation/desktop/torch_onnx_trtexec/results/*/*.graph.json"))
    assert paths
    checked = 0
    for p in paths:
        for lay in load_engine([p]).layers:
            if not lay.metadata or lay.name.startswith(("Reformatting", "__myl")) or "_myl" in lay.name:
                continue
            md = {e[len("[ONNX Layer: "):-1] for e in lay.metadata.replace("\x1f", "\x1e").split("\x1e")}
            parts = {t for _, t in split_name(lay.name)}
            assert parts <= md, lay.name
            checked += 1
    assert checked > 50


class _StandIn:
    """A graph holding just the nodes named by a real engine's metadata, in the engine's order."""

    class N:
        def __init__(self, i: int, name: str) -> None:
            self.index, self.name, self.op_type = i, name, "Unknown"
            self.inputs: list[str] = []
            self.outputs: list[str] = [name + "_output_0"]

    def __init__(self, names: list[str]) -> None:
        self.nodes = [self.N(i, n) for i, n in enumerate(names)]
        self.node_by_name = {n: i for i, n in enumerate(names)}


@needs_fixtures
def test_real_engine_maps_through_names_when_metadata_is_absent() -> None:
    """Drop the Metadata of a real engine: the names alone still find the same nodes for fused layers."""
    p = FIXTURES / "fuzzylabs_edge-vision-power-estimation/desktop/torch_onnx_trtexec/results/resnet18/resnet18_fp16.graph.json"
    doc = json.loads(p.read_text())
    names: list[str] = []
    for rec in doc["Layers"]:
        for e in (rec.get("Metadata") or "").replace("\x1f", "\x1e").split("\x1e"):
            if e.startswith("[ONNX Layer: "):
                names.append(e[len("[ONNX Layer: "):-1])
    graph = _StandIn(list(dict.fromkeys(names)))
    with_md = load_engine([p])
    map_layers(with_md, graph)
    bare = load_engine([p])
    for lay in bare.layers:
        lay.metadata = None
    map_layers(bare, graph)
    same = 0
    for a, b in zip(with_md.layers, bare.layers, strict=True):
        if " + " in a.name and not a.name.startswith("Reformatting") and b.onnx_nodes:
            assert set(b.onnx_nodes) <= set(a.onnx_nodes)
            assert b.mapping_confidence < a.mapping_confidence
            same += 1
    assert same >= 10


def test_metadata_that_is_no_string_leaves_the_name_to_decide(graph) -> None:  # type: ignore[no-untyped-def]
    lay = Layer(0, "/mul/Mul", metadata=5)  # type: ignore[arg-type]  # what a damaged file may hold
    eng = _engine(lay)
    map_layers(eng, graph)
    assert lay.onnx_nodes == ["/mul/Mul"]


def test_metadata_entries_resolve_one_by_one_where_one_is_odd(graph) -> None:  # type: ignore[no-untyped-def]
    both = Layer(0, "x", metadata="[ONNX Layer: /mul/Mul]\x1e[ONNX Layer: /fc/MatMul]")
    odd = Layer(1, "y", metadata="[ONNX Layer: /mul/Mul]\x1e[ONNX Layer:  /fc/MatMul ]\x1e")  # spaces, a trailing separator
    eng = _engine(both, odd)
    map_layers(eng, graph)
    assert both.onnx_nodes == ["/mul/Mul", "/fc/MatMul"]
    assert odd.onnx_nodes == ["/mul/Mul", "/fc/MatMul"]
