"""Parser diagnoses and ``trtstudio check`` against real TensorRT-RTX parses and builds."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
import shape_models as sm
from onnx import TensorProto, helper, numpy_helper

from trtstudio.backends.build import BuildOptions, build_engine, parse_onnx
from trtstudio.backends.support import RawError, check_support, diagnose, explain, partitions_of
from trtstudio.cli import main

needs_rtx = pytest.mark.skipif(importlib.util.find_spec("tensorrt_rtx") is None, reason="tensorrt_rtx is not installed")
pytestmark = [pytest.mark.rtx, needs_rtx]


def _single(path: Path, node: onnx.NodeProto, inputs: list[onnx.ValueInfoProto], inits: list[onnx.TensorProto]) -> Path:
    graph = helper.make_graph([node], "one", inputs, [helper.make_tensor_value_info(node.output[0], TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 10
    onnx.save(model, str(path))
    return path


def test_build_rejects_each_node_once_with_words(tmp_path: Path) -> None:
    model = sm.unsupported_model(tmp_path / "u.onnx")
    res = build_engine(model, None, BuildOptions(backend="rtx"))
    assert not res.ok
    got = {u["node"]: u for u in res.unsupported}
    assert set(got) == {"#1 Foo", "pool", "#6 Unique"}  # the parser reports pool twice
    assert got["#1 Foo"]["domain"] == "my.domain" and "no importer" in got["#1 Foo"]["reason"]
    assert "dilations" in got["pool"]["reason"]
    assert got["#6 Unique"]["reason"].startswith("Unique is not supported by tensorrt_rtx")
    for u in res.unsupported:
        assert u["reason"] not in ("", "false") and u["hint"]
        assert "None" not in u["node"]
    assert "#1 Foo" in (res.error or "") and "pool (MaxPool)" in (res.error or "")


def test_check_covers_every_node_a_build_rejects(tmp_path: Path) -> None:
    model = sm.unsupported_model(tmp_path / "u.onnx")
    rejected = {u["index"] for u in build_engine(model, None, BuildOptions(backend="rtx")).unsupported}
    result = check_support(model, "rtx")
    assert not result.supported
    assert rejected and rejected <= {e["index"] for e in result.unsupported}
    parts = [(p["supported"], p["range"]) for p in result.partitions]
    assert parts == [(True, [0, 0]), (False, [1, 1]), (True, [2, 2]), (False, [3, 3]), (True, [4, 5]), (False, [6, 6])]
    assert result.counts()["Relu"] == {"total": 2, "unsupported": 0}
    assert result.counts()["MaxPool"] == {"total": 1, "unsupported": 1}
    states = result.node_states()
    assert states["pool"]["state"] == "unsupported" and states["relu1"]["state"] == "supported"
    assert states["sig"]["boundary"] and states["flat"]["boundary"] and states["sig"]["partition"] == 4


def test_check_cli_json_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = sm.unsupported_model(tmp_path / "u.onnx")
    assert main(["check", str(bad), "--backend", "rtx", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "trtstudio.check/1" and doc["supported"] is False
    assert {"node", "index", "op_type", "domain", "reason", "hint"} <= set(doc["unsupported"][0])
    assert all({"supported", "nodes"} <= set(p) for p in doc["partitions"])
    good = sm.detector(tmp_path / "d.onnx")
    assert main(["check", str(good), "--backend", "rtx"]) == 0
    out = capsys.readouterr().out
    assert "supported: all 6 nodes" in out and "--shapes images:" in out
    assert main(["check", str(tmp_path / "missing.onnx")]) == 2


@pytest.mark.parametrize(
    ("case", "want"),
    [
        ("antialias", "antialias=1 is not supported"),
        ("conv_integer", "ConvInteger is not supported by tensorrt_rtx"),
        ("uint64", "input 'x' has dtype UINT64"),
        ("fnuz", "FLOAT8E4M3FNUZ"),
    ],
)
def test_reasons_in_words(tmp_path: Path, case: str, want: str) -> None:
    V = helper.make_tensor_value_info
    if case == "antialias":
        model = _single(tmp_path / "m.onnx", helper.make_node("Resize", ["x", "", "s"], ["y"], mode="cubic", antialias=1),
                        [V("x", TensorProto.FLOAT, [1, 3, 8, 8])], [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")])
    elif case == "conv_integer":
        model = _single(tmp_path / "m.onnx", helper.make_node("ConvInteger", ["x", "w"], ["y"]),
                        [V("x", TensorProto.UINT8, [1, 3, 8, 8])], [numpy_helper.from_array(np.ones((4, 3, 3, 3), np.uint8), "w")])
    elif case == "uint64":
        model = _single(tmp_path / "m.onnx", helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT),
                        [V("x", TensorProto.UINT64, [4])], [])
    else:
        q = helper.make_node("QuantizeLinear", ["x", "sc", "zp"], ["y"])
        graph = helper.make_graph(
            [q, helper.make_node("DequantizeLinear", ["y", "sc", "zp"], ["z"], name="dq")], "fnuz",
            [V("x", TensorProto.FLOAT, [2, 4])], [V("z", TensorProto.FLOAT, None)],
            [numpy_helper.from_array(np.array(1.0, np.float32), "sc"), helper.make_tensor("zp", TensorProto.FLOAT8E4M3FNUZ, [], [0])])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
        m.ir_version = 10
        model = tmp_path / "m.onnx"
        onnx.save(m, str(model))
    bad = parse_onnx(model, "rtx")
    assert bad and any(want in u["reason"] for u in bad), bad
    assert all(u["node"] and u["reason"] != "false" for u in bad)
    if case == "fnuz":
        assert {u["node"] for u in bad} == {"#0 QuantizeLinear", "dq"}  # both read the FNUZ zero point


def test_explain_maps_bare_false_and_plugins() -> None:
    reason, hint = explain(RawError("UNSUPPORTED_NODE", "false", 3, "", "Unique", "checkUnique"), "Unique", "", "tensorrt_rtx", "1.7")
    assert reason == "Unique is not supported by tensorrt_rtx 1.7" and "onnx-graphsurgeon" in hint
    reason, _ = explain(RawError("INVALID_NODE", 'creator && "Plugin not found"', 1, "", "Foo", "checkFallbackPluginImporter"),
                        "Foo", "com.acme", "tensorrt_rtx", "1.7")
    assert "com.acme::Foo" in reason


def test_diagnose_merges_duplicates_and_names_unnamed(tmp_path: Path) -> None:
    proto = onnx.load(str(sm.unsupported_model(tmp_path / "u.onnx")))
    err = RawError("UNSUPPORTED_NODE", '(dilations[i] == 1) && "no dilations"', 3, "pool", "MaxPool", "poolingCheckHelper")
    unnamed = RawError("UNSUPPORTED_NODE", "false", 6, "", "Unique", "checkUnique")
    out = diagnose([err, err, unnamed], proto, "tensorrt_rtx", "1.7")
    assert [e["node"] for e in out] == ["pool", "#6 Unique"] and len(out[0]["detail"]) == 1
    assert partitions_of(["a", "b", "c"], {1}) == [
        {"supported": True, "nodes": ["a"], "range": [0, 0]},
        {"supported": False, "nodes": ["b"], "range": [1, 1]},
        {"supported": True, "nodes": ["c"], "range": [2, 2]},
    ]


def test_node_states_follow_the_graph_view_names(tmp_path: Path) -> None:
    from trtstudio.graph.model import load_model

    model = sm.unsupported_model(tmp_path / "u.onnx")
    result = check_support(model, "rtx")
    graph = load_model(model).graph
    states = result.node_states(graph)
    assert set(states) == {n.name for n in graph.nodes}
    unnamed_custom = graph.nodes[1].name  # the graph view names it after its op and index
    assert states[unnamed_custom]["state"] == "unsupported" and "no importer" in states[unnamed_custom]["reason"]
    assert result.states_by_index()[2]["state"] == "supported"
