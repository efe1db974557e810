"""Engines with several optimization profiles: each profile's layers read (the inspector log of
NVIDIA's cookbook, a TensorRT-RTX build with two profiles made here), aligned side by side, and
``trtstudio layers --all-profiles``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from trtstudio.cli import main
from trtstudio.engine.load import load_engine, load_engine_profiles
from trtstudio.engine.multiprofile import align, layer_key, side_by_side

FIX = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "trt-real"
COOKBOOK = FIX / "NVIDIA_trt-samples-for-hackathon-cn" / "HEAD" / "cookbook" / "04-Feature"
INSPECTOR = COOKBOOK / "EngineInspector" / "log-main.py.log"
VERBOSITY = COOKBOOK / "ProfilingVerbosity" / "log-main.py.log"
needs_fixtures = pytest.mark.skipif(not INSPECTOR.exists(), reason="trt-real fixtures absent")
needs_rtx = pytest.mark.skipif(importlib.util.find_spec("tensorrt_rtx") is None, reason="tensorrt_rtx is not installed")


@needs_fixtures
@pytest.mark.parametrize("path", [INSPECTOR, VERBOSITY], ids=["inspector", "verbosity"])
def test_each_profile_is_read_once_and_equals_load_engine(path: Path) -> None:
    profiles = load_engine_profiles(path)
    assert len(profiles) == 2
    for k, engine in enumerate(profiles):
        alone = load_engine(path, profile=k)
        assert [lay.name for lay in engine.layers] == [lay.name for lay in alone.layers]
        assert [lay.index for lay in engine.layers] == list(range(len(engine.layers)))
    p0, p1 = ([lay.name for lay in e.layers] for e in profiles)
    assert not any("[profile" in n for n in p0)
    # every profile-1 layer is marked, or a Myelin helper of profile 1's Myelin graph
    graph1 = {n.rsplit("_myl", 1)[1].split("_")[0] for n in p1 if "[profile 1]" in n and "_myl" in n}
    assert all("[profile 1]" in n or n.rsplit("_myl", 1)[1].split("_")[0] in graph1 for n in p1)
    rows = align(profiles)
    assert all(None not in r for r in rows) and len(rows) == len(p0) == len(p1)
    assert all(layer_key(p0[a]) == layer_key(p1[b]) for a, b in rows)  # type: ignore[index]


@needs_fixtures
def test_layers_all_profiles_json_and_text(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["layers", str(INSPECTOR), "--all-profiles", "--json"]) == 0
    doc = json.loads(capfd.readouterr().out)
    assert [p["profile"] for p in doc["profiles"]] == [0, 1]
    one = load_engine(INSPECTOR, profile=1)
    assert doc["profiles"][1]["layers"] == len(one.layers)
    assert [r["name"] for r in doc["profiles"][1]["document"]["layers"]] == [lay.name for lay in one.layers]
    assert sum(doc["profiles"][1]["findings"].values()) == len(doc["profiles"][1]["document"]["findings"])
    assert len(doc["side_by_side"]) == len(one.layers)
    assert doc["side_by_side"][0]["profiles"][1]["name"].endswith("[profile 1]")
    assert main(["layers", str(INSPECTOR), "--all-profiles"]) == 0
    text = capfd.readouterr().out
    assert text.startswith("2 optimization profiles") and "layers side by side" in text and "profile 1: findings" in text
    assert main(["layers", str(INSPECTOR), "--all-profiles", "--profile", "1"]) == 2
    assert capfd.readouterr().err.startswith("error:")


def _dynamic_model(path: Path) -> Path:
    """Conv -> Relu -> Reshape -> MatMul over a dynamic batch."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((16, 3, 3, 3)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((16 * 32 * 32, 10)).astype(np.float32), "w2")
    shape = numpy_helper.from_array(np.array([-1, 16 * 32 * 32], dtype=np.int64), "shape")
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Reshape", ["r", "shape"], ["f"], name="flatten"),
             helper.make_node("MatMul", ["f", "w2"], ["y"], name="fc")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 32, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])], [w1, w2, shape])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.mark.rtx
@needs_rtx
def test_a_tensorrt_rtx_build_with_two_profiles(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Built here with two profiles (batch 1..4 and 8..32): its verbose log lists each profile's
    Myelin graph, whose helpers (``__myl_Move_myl1_1``) come before the first "[profile 1]" name."""
    from trtstudio.backends.build import BuildOptions, build_engine

    model = _dynamic_model(tmp_path / "dyn.onnx")
    small, large = ((1, 3, 32, 32), (2, 3, 32, 32), (4, 3, 32, 32)), ((8, 3, 32, 32), (16, 3, 32, 32), (32, 3, 32, 32))
    res = build_engine(model, tmp_path / "dyn.engine", BuildOptions(backend="rtx", profiles=[{"x": small}, {"x": large}]))
    assert res.ok, res.error
    log = tmp_path / "dyn.build.log"
    log.write_text(res.log_text())
    profiles = load_engine_profiles(log)
    assert len(profiles) == 2
    assert all("[profile" not in lay.name for lay in profiles[0].layers)
    # the helpers before profile 1's first marked layer belong to profile 1's graph, not profile 0
    graphs = [{lay.name.rsplit("_myl", 1)[1].split("_")[0] for lay in e.layers if "_myl" in lay.name} for e in profiles]
    assert len(graphs[0]) == len(graphs[1]) == 1 and graphs[0] != graphs[1]
    rows = side_by_side(profiles)
    assert len(rows) == len(profiles[0].layers) and all(r["differ"] != ["missing"] for r in rows)
    assert main(["layers", str(log), "--all-profiles", "--json"]) == 0
    doc = json.loads(capfd.readouterr().out)
    assert [p["shapes"]["x"]["max"] for p in doc["profiles"]] == [list(small[2]), list(large[2])]


@needs_fixtures
def test_rows_show_a_layer_one_profile_lacks_and_what_differs() -> None:
    """Profile 1 of the cookbook engine less one layer, another with a tactic of its own (as a
    profile of other shapes picks): the lacking side's cell is None, the other row says tactic."""
    import copy

    p0, p1 = load_engine_profiles(VERBOSITY)
    p1 = copy.copy(p1)
    gone = p1.layers[3]
    changed = p1.layers[1].shallow_copy()
    changed.tactic = "sm90_other_tactic"
    p1.layers = [p1.layers[0], changed, *p1.layers[2:3], *p1.layers[4:]]
    rows = side_by_side([p0, p1])
    assert len(rows) == len(p0.layers)
    lacking = [r for r in rows if r["profiles"][1] is None]
    assert [r["key"] for r in lacking] == [layer_key(gone.name)] and lacking[0]["differ"] == ["missing"]
    assert [r["differ"] for r in rows if r["profiles"][1] is not None and r["differ"]] == [["tactic"]]
