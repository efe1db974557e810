"""Folding of constant and shape-computation chains (no Qt), and the display graph built on it."""

from __future__ import annotations

from pathlib import Path

import graph_view_models as gm
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from trtstudio.graph.display import build_display, short_dim, short_shape
from trtstudio.graph.fold import FOLD_DEFAULT_MIN_NODES, fold_constants, no_folding
from trtstudio.graph.model import Graph, load_model


def _load(tmp_path: Path, model: onnx.ModelProto, name: str = "m.onnx") -> Graph:
    p = tmp_path / name
    onnx.save(model, str(p))
    return load_model(p).graph


def _ops(g: Graph, idx: np.ndarray) -> set[str]:
    return {g.nodes[int(i)].op_type for i in idx}


def test_densenet_constant_of_shape_chains_fold_into_their_consumers(tmp_path: Path) -> None:
    g = _load(tmp_path, gm.densenet_like(blocks=30))
    f = fold_constants(g)
    folded = np.flatnonzero(f.folded)
    assert _ops(g, folded) == {"ConstantOfShape", "Unsqueeze"}
    assert f.count == sum(n.op_type in ("ConstantOfShape", "Unsqueeze") for n in g.nodes) == 30 * 5
    assert _ops(g, f.host[folded]) == {"Conv", "Mul", "Add"}
    # each chain goes to the node that consumes it: cs{b} -> us{b} -> mul{b}
    for b in (0, 17, 29):
        assert f.host[g.node_by_name[f"cs{b}"]] == g.node_by_name[f"mul{b}"]
        assert f.host[g.node_by_name[f"us{b}"]] == g.node_by_name[f"mul{b}"]
        assert sorted(g.nodes[m].name for m in f.members(g.node_by_name[f"add{b}"])) == [f"cb{b}", f"ub{b}"]
    assert f.counts()[g.node_by_name["conv3"]] == 1


def test_shape_chain_folds_into_the_reshape_and_data_nodes_stay(tmp_path: Path) -> None:
    g = _load(tmp_path, gm.detector_like())
    f = fold_constants(g)
    name = {n.name: n.index for n in g.nodes}
    reshape = name["reshape_head"]
    for chain in ("shape", "gather_batch", "unsq_batch", "concat_shape", "Constant_rest", "Constant_i0"):
        assert f.host[name[chain]] == reshape, chain
    for data in ("conv_s1", "conv_s2", "resize", "concat_strides", "head_conv", "reshape_head", "sigmoid"):
        assert f.host[name[data]] == -1, data
    assert f.host[name["Constant_w1"]] == name["conv_s1"]
    assert f.host[name["Constant_scales"]] == name["resize"]


def test_quantization_graph_outputs_and_unconsumed_constants_stay_shown(tmp_path: Path) -> None:
    w = numpy_helper.from_array(np.ones((4, 4), np.int8), "wq")
    sc = numpy_helper.from_array(np.asarray(0.1, np.float32), "sc")
    nodes = [
        helper.make_node("DequantizeLinear", ["wq", "sc"], ["w"], name="dq_w"),
        helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
        helper.make_node("Constant", [], ["k"], name="k_out",
                         value=numpy_helper.from_array(np.ones(4, np.float32), "k")),
        helper.make_node("Constant", [], ["u"], name="unused",
                         value=numpy_helper.from_array(np.ones(4, np.float32), "u")),
    ]
    graph = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4]),
                               helper.make_tensor_value_info("k", TensorProto.FLOAT, [4])], [w, sc])
    g = _load(tmp_path, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    f = fold_constants(g)
    assert f.count == 0  # DQ carries precision; k is a graph output; u has no consumer


def test_without_unfolds_the_whole_chain_of_a_hit(tmp_path: Path) -> None:
    g = _load(tmp_path, gm.detector_like())
    f = fold_constants(g)
    gather = g.node_by_name["gather_batch"]
    g2 = f.without([gather])
    shown_again = np.flatnonzero(f.folded & ~g2.folded)
    assert {g.nodes[i].name for i in shown_again} >= {"shape", "gather_batch", "unsq_batch", "concat_shape"}
    assert g2.host[g.node_by_name["Constant_w1"]] == g.node_by_name["conv_s1"]  # other chains stay folded
    assert f.without([]).count == f.count and no_folding(5).count == 0


def test_display_graph_hides_folded_items_at_their_host(tmp_path: Path) -> None:
    g = _load(tmp_path, gm.densenet_like(blocks=50))
    assert len(g.nodes) > FOLD_DEFAULT_MIN_NODES
    dg = build_display(g)  # folded by default at this size
    assert dg.folded_count == 50 * 5
    hidden = np.flatnonzero(dg.hidden)
    host = dg.placement.host[hidden]
    assert np.all(~dg.hidden[host])
    assert np.allclose(dg.lay.x[hidden], dg.lay.x[host]) and np.allclose(dg.lay.y[hidden], dg.lay.y[host])
    # no drawn edge touches a hidden item, and every edge between shown items is drawn
    assert not dg.hidden[dg.src].any() and not dg.hidden[dg.dst].any()
    shown_edges = ~dg.hidden[dg.all_src] & ~dg.hidden[dg.all_dst]
    assert len(dg.src) == int(shown_edges.sum()) == len(dg.lay.edge_offsets) - 1
    # the first layer holds the input only, not a row of constants
    top = dg.lay.y[~dg.hidden].min()
    assert [dg.labels[i] for i in np.flatnonzero((dg.lay.y == top) & ~dg.hidden)] == ["input"]
    unfolded = build_display(g, fold=False)
    assert unfolded.folded_count == 0 and len(unfolded.src) == len(unfolded.all_src)
    assert unfolded.lay.width > dg.lay.width  # the constants took room beside the data path
    dg.set_folding(False)
    assert dg.folded_count == 0 and len(dg.src) == len(dg.all_src)
    dg.set_folding(True)
    assert dg.folded_count == 250


def test_small_graphs_are_not_folded_by_default(tmp_path: Path) -> None:
    g = _load(tmp_path, gm.detector_like())
    assert build_display(g).folded_count == 0
    assert build_display(g, fold=True).folded_count == fold_constants(g).count > 0


def test_edge_labels_shorten_symbolic_shapes_and_keep_the_full_text(tmp_path: Path) -> None:
    long = "[p2o.DynamicDimension.0,3,p2o.DynamicDimension.1,p2o.DynamicDimension.2]"
    short = short_shape(long)
    assert len(short) <= 26 and ",3," in short and "p2o" not in short
    # the readable part of each generated name, numbered as the names are (the PP-OCRv4 edge)
    assert short_shape("[p2o.DynamicDimension.0,16,unk__2,unk__3]") == "[d0,16,?2,?3]"
    assert short_dim("p2o.DynamicDimension.1") == "d1" and short_dim("unk__12") == "?12"
    assert short_dim("batch") == "batch" and short_dim("sequence_length").startswith("sequence")
    assert len(short_dim("sequence_length")) <= 10 and short_dim("-1") == "-1"
    assert short_shape("[1,3,224,224]") == "[1,3,224,224]"
    assert len(short_shape("[" + ",".join(["batch"] * 40) + "]")) <= 26
    g = _load(tmp_path, gm.detector_like())
    dg = build_display(g)
    e = next(i for i in range(len(dg.src)) if dg.edge_tensor(i) == "images")
    assert dg.edge_label_full(e) == "[1,3,height,width]" and dg.edge_label(e) == "[1,3,height,width]"


def test_one_shape_label_per_tensor_leaving_a_node(tmp_path: Path) -> None:
    """A tensor read by two nodes (SiLU: Conv -> Sigmoid and Conv -> Mul) is labelled once, on its
    straightest edge: two labels began at one point and printed the same text over each other."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("Sigmoid", ["c"], ["s"], name="sig"),
             helper.make_node("Mul", ["c", "s"], ["y"], name="mul"),
             helper.make_node("Split", ["y"], ["y0", "y1"], name="split", axis=1, num_outputs=2),
             helper.make_node("Add", ["y0", "y1"], ["z"], name="add")]
    w = numpy_helper.from_array(np.ones((4, 3, 1, 1), np.float32), "w")
    graph = helper.make_graph(nodes, "silu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], initializer=[w])
    dg = build_display(_load(tmp_path, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])))
    by_tensor: dict[str, list[int]] = {}
    for e in range(len(dg.src)):
        by_tensor.setdefault(dg.edge_tensor(e), []).append(e)
    assert len(by_tensor["c"]) == 2
    for tensor, edges in by_tensor.items():  # Split's two outputs are two tensors: a label each
        assert sum(dg.edge_labelled(e) for e in edges) == 1, tensor
    off, pts = dg.lay.edge_offsets, dg.lay.edge_xy

    def dx(e: int) -> float:
        return abs(float(pts[off[e] + 1, 0] - pts[off[e], 0]))
    labelled = next(e for e in by_tensor["c"] if dg.edge_labelled(e))
    assert dx(labelled) == min(dx(e) for e in by_tensor["c"])
