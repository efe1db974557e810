from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx_models as models
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trtstudio.errors import InputError
from trtstudio.graph.model import load_model


def _save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save(model, str(path))
    return path


def test_conv_net_summary(tmp_path: Path) -> None:
    m = load_model(_save(models.conv_net(), tmp_path / "c.onnx"))
    s = m.summary()
    assert s["nodes"] == 7
    assert s["op_counts"] == {"Conv": 2, "Add": 1, "Flatten": 1, "Gemm": 1, "GlobalAveragePool": 1, "Relu": 1}
    assert [t["name"] for t in s["inputs"]] == ["x"]  # initializers are not inputs
    assert s["inputs"][0]["shape"] == ["N", 3, 16, 16]
    expected = sum(int(np.prod(i.dims)) for i in models.conv_net().graph.initializer)
    assert s["parameters"] == expected and s["parameter_bytes"] == 4 * expected
    # shape inference kept the symbolic batch dim on an intermediate tensor
    assert m.graph.tensors["r1"].shape == ["N", 8, 16, 16]
    src, dst, names = m.graph.edges()
    assert len(src) == len(dst) == len(names) == 7  # 6 chain edges + the residual
    assert all(s_ < d_ for s_, d_ in zip(src, dst, strict=True))


def test_loaded_model_is_frozen_out_of_the_collectors_way(tmp_path: Path) -> None:
    """The model's objects go to the permanent generation (a later full collection would walk
    them all: 0.25 s at 100,000 nodes); the collector is left as it was."""
    import gc

    path = _save(models.conv_net(), tmp_path / "c.onnx")
    was = gc.isenabled()
    gc.enable()
    try:
        gc.unfreeze()
        m = load_model(path)
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
        frozen = gc.get_freeze_count()
        gc.unfreeze()
        gc.disable()
        load_model(path)
        assert not gc.isenabled() and gc.get_freeze_count() == 0  # disabled: nothing frozen, nothing enabled
        gc.enable()
        bad = tmp_path / "bad.onnx"
        bad.write_bytes(b"\x08\x07" + b"\xff" * 50)
        with pytest.raises(InputError):
            load_model(bad)
        assert gc.isenabled() and gc.get_freeze_count() == 0  # a failed load freezes nothing
    finally:
        gc.unfreeze()
        (gc.enable if was else gc.disable)()
    assert m.graph.nodes and frozen >= len(m.graph.nodes)


def test_subgraphs_and_implicit_inputs(tmp_path: Path) -> None:
    m = load_model(_save(models.with_subgraphs(), tmp_path / "s.onnx"))
    subs = {g["owner"]: g["nodes"] for g in m.summary()["subgraphs"]}
    assert subs == {"branch.then_branch": 1, "branch.else_branch": 1, "loop.body": 2}
    branch = m.graph.node_by_name["branch"]
    assert m.graph.implicit_inputs[branch] == ["h"]  # both branches read the outer tensor h
    src, dst, _ = m.graph.edges()
    assert (m.graph.node_by_name["relu"], branch) in set(zip(src.tolist(), dst.tolist(), strict=True))


def test_external_data_and_stats(tmp_path: Path) -> None:
    path = models.save_external(models.conv_net(), tmp_path / "ext.onnx")
    m = load_model(path)
    stats = m.graph.initializer_stats("w1")
    ref = onnx.numpy_helper.to_array(models.conv_net().graph.initializer[0])
    assert stats is not None and stats["max"] == pytest.approx(float(ref.max()))
    (tmp_path / "ext.onnx.data").unlink()
    with pytest.raises(InputError, match="external data file 'ext.onnx.data'"):
        load_model(path)


def test_custom_domain(tmp_path: Path) -> None:
    s = load_model(_save(models.custom_op(), tmp_path / "c.onnx")).summary()
    assert s["custom_domains"] == ["com.acme"]
    assert s["op_counts"]["com.acme::Frobnicate"] == 1


@pytest.mark.parametrize(
    "content, message",
    [(b"", "empty file"), (b"hello world", "not an ONNX model"), (b'{"a": 1}', "not an ONNX model")],
)
def test_bad_files(tmp_path: Path, content: bytes, message: str) -> None:
    p = tmp_path / "bad.onnx"
    p.write_bytes(content)
    with pytest.raises(InputError, match=message) as info:
        load_model(p)
    assert str(p) in info.value.one_line()


def test_truncated_cyclic_and_ir(tmp_path: Path) -> None:
    good = _save(models.conv_net(), tmp_path / "g.onnx").read_bytes()
    (tmp_path / "t.onnx").write_bytes(good[: len(good) // 3])
    with pytest.raises(InputError, match="truncated|corrupt"):
        load_model(tmp_path / "t.onnx")
    with pytest.raises(InputError, match="cyclic"):
        load_model(_save(models.cyclic(), tmp_path / "cyc.onnx"))
    m = models.conv_net()
    m.ir_version = 99
    with pytest.raises(InputError, match="unsupported IR version 99"):
        load_model(_save(m, tmp_path / "ir.onnx"))


def test_inspect_cli_json_and_errors(tmp_path: Path) -> None:
    p = _save(models.conv_net(), tmp_path / "c.onnx")
    out = subprocess.run([sys.executable, "-m", "trtstudio", "inspect", str(p), "--json"],
                         capture_output=True, text=True, check=True)
    doc = json.loads(out.stdout)
    assert doc["schema"] == "trtstudio.model/1" and doc["nodes"] == 7
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00\x01garbage")
    res = subprocess.run([sys.executable, "-m", "trtstudio", "inspect", str(bad)], capture_output=True, text=True)
    assert res.returncode == 2
    assert res.stderr.strip().startswith(f"error: {bad}:") and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_version_is_fast_and_light() -> None:
    code = ("import sys, trtstudio.cli as c\n"
            "try:\n    c.main(['--version'])\nexcept SystemExit: pass\n"
            "print(sorted(m for m in ('onnx', 'PySide6', 'numpy', 'onnxruntime') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith("[]")


def _dangling_by_sets(graph: Any) -> list[str]:
    """Node inputs that no node, graph input or initializer provides, the plain way (sets over all graphs)."""
    defined: set[str] = set()
    used: set[str] = set()
    for g in graph.walk():
        defined.update(g.inputs, g.initializers)
        defined.update(t.name for t in g.tensors.values() if t.kind in ("input", "initializer"))
        for n in g.nodes:
            defined.update(n.outputs)
            used.update(n.inputs)
    return sorted(used - defined)


def test_dangling_inputs_from_the_tensor_table_match_the_plain_way(tmp_path: Path) -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from onnx import TensorProto, helper

    from trtstudio.graph.model import load_model

    names = st.sampled_from(["x", "w", "y", "ghost0", "ghost1", "t0", "t1", "t2"])

    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.tuples(st.lists(names, min_size=1, max_size=2), names), min_size=1, max_size=6),
           names, st.booleans())
    def check(wiring: list[tuple[list[str], str]], output: str, with_init: bool) -> None:
        nodes = [helper.make_node("Add" if len(ins) == 2 else "Relu", ins, [out], name=f"n{i}")
                 for i, (ins, out) in enumerate(wiring)]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                                  [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)],
                                  initializer=[helper.make_tensor("w", TensorProto.FLOAT, [1], [1.0])] if with_init
                                  else [])
        path = tmp_path / "d.onnx"
        onnx.save(helper.make_model(graph), str(path))
        try:
            model = load_model(path, infer_shapes=False)
        except InputError:
            return  # two nodes writing one tensor, a cycle: refused before any check
        said = [w for w in model.warnings if "dangling" in w]
        expected = _dangling_by_sets(model.graph)
        assert bool(said) == bool(expected)
        if expected:
            assert said[0].startswith(f"{len(expected)} node input(s)")
            assert all(repr(t) in said[0] for t in expected[:5])

    check()


def _find_one_by_one(graph: Any, text: str) -> list[int]:
    """What Graph.find returns, node by node (the search as first written)."""
    q = text.strip().lower()
    if not q:
        return []
    return [n.index for n in graph.nodes
            if q in n.name.lower() or q == n.op_type.lower() or q in n.qualified_op.lower()
            or any(q in t.lower() for t in n.inputs) or any(q in t.lower() for t in n.outputs)]


@pytest.fixture(scope="module")
def sample_graph() -> Any:
    from conftest import SAMPLE

    if not SAMPLE.is_file():
        pytest.skip("sample model not generated")
    return load_model(str(SAMPLE), infer_shapes=False).graph


@given(st.data())
def test_search_finds_what_a_node_by_node_search_finds(sample_graph: Any, data: Any) -> None:
    """Graph.find (columns made once, tested in C) against the node-by-node search, for pieces of
    the model's own names, op types and tensors in any case, and random text."""
    node = data.draw(st.sampled_from(sample_graph.nodes))
    source = data.draw(st.sampled_from([node.name, node.op_type, node.qualified_op, *node.inputs, *node.outputs]))
    start = data.draw(st.integers(0, max(0, len(source) - 1)))
    piece = source[start:start + data.draw(st.integers(1, 12))]
    text = data.draw(st.sampled_from([piece, piece.upper(), f"  {piece} ", data.draw(st.text(max_size=4))]))
    assert sample_graph.find(text) == _find_one_by_one(sample_graph, text)


def test_search_of_an_op_type_and_of_nothing(sample_graph: Any) -> None:
    convs = sample_graph.find("conv")
    assert convs and all("conv" in (n := sample_graph.nodes[i]).op_type.lower() or "conv" in n.name.lower()
                         or any("conv" in t.lower() for t in n.inputs + n.outputs) for i in convs)
    assert sample_graph.find("   ") == [] and sample_graph.find("\x00") == _find_one_by_one(sample_graph, "\x00")
