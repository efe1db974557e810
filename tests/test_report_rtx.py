"""Reports and comparisons of real TensorRT-RTX builds: the sample as is (FP32) and with FP16 weights."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from test_report_model import check_html_self_contained

from trtstudio.report import build_report, load_session, save_session, write_report
from trtstudio.report.compare import compare
from trtstudio.report.model import Report
from trtstudio.report.writers import write_comparison

HAS_RTX = importlib.util.find_spec("tensorrt_rtx") is not None
pytestmark = [pytest.mark.rtx, pytest.mark.skipif(not HAS_RTX, reason="tensorrt_rtx is not installed")]


def to_fp16(src: Path, dst: Path) -> Path:
    """FP16 copy of a float model: float initializers cast to float16, a Cast to float16 after each float
    input and a Cast back to float32 before each output (graph I/O stays float32)."""
    model = onnx.load(str(src))
    g = model.graph
    for init in g.initializer:
        if init.data_type == TensorProto.FLOAT:
            arr = numpy_helper.to_array(init).astype(np.float16)
            init.CopyFrom(numpy_helper.from_array(arr, init.name))
    renames: dict[str, str] = {}
    casts_in = []
    for inp in g.input:
        if inp.type.tensor_type.elem_type == TensorProto.FLOAT:
            renames[inp.name] = inp.name + "_fp16"
            casts_in.append(helper.make_node("Cast", [inp.name], [renames[inp.name]], name=f"cast_in_{inp.name}",
                                             to=TensorProto.FLOAT16))
    casts_out = []
    for out in g.output:
        if out.type.tensor_type.elem_type == TensorProto.FLOAT:
            renames[out.name] = out.name + "_fp16"
            casts_out.append(helper.make_node("Cast", [renames[out.name]], [out.name], name=f"cast_out_{out.name}",
                                              to=TensorProto.FLOAT))
    for node in g.node:
        node.input[:] = [renames.get(n, n) if n in {i.name for i in g.input} else n for n in node.input]
        node.output[:] = [renames.get(n, n) for n in node.output]
    nodes = casts_in + list(g.node) + casts_out
    del g.node[:]
    g.node.extend(nodes)
    del g.value_info[:]
    onnx.checker.check_model(model)
    onnx.save(model, str(dst))
    return dst


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    from conftest import SAMPLE

    from trtstudio.backends.build import BuildOptions, build_engine

    if not SAMPLE.is_file():
        pytest.skip("sample model not generated")
    tmp = tmp_path_factory.mktemp("rtx")
    fp16 = to_fp16(SAMPLE, tmp / "mobilenetv2_035_fp16.onnx")
    out: dict[str, object] = {"fp32_model": SAMPLE, "fp16_model": fp16}
    for name, model in (("fp32", SAMPLE), ("fp16", fp16)):
        res = build_engine(model, tmp / f"{name}.engine", BuildOptions(backend="rtx", targets=["sm86"]))
        assert res.ok, res.error
        out[name] = res
    out["tmp"] = tmp
    return out


def test_rtx_fp32_vs_fp16_comparison_lines_up_layers_by_onnx_node(builds: dict) -> None:
    tmp: Path = builds["tmp"]
    r32 = build_report(model=builds["fp32_model"], engine=builds["fp32"], title="FP32")
    r16 = build_report(model=builds["fp16_model"], engine=builds["fp16"], title="FP16")
    assert {r["precision"] for r in r32.layers if r["precision"]} == {"FP32"}
    assert any(r["precision"] and "FP16" in r["precision"] for r in r16.layers)
    assert r32.engine["engine_size_bytes"] == builds["fp32"].engine_bytes
    assert r16.engine["engine_size_bytes"] < r32.engine["engine_size_bytes"]  # half the weights
    comp = compare([r32, r16], ["FP32", "FP16"])
    diff = comp.layer_diffs[0]
    rows = diff["rows"]
    convs = [n.name for n in onnx.load(str(builds["fp32_model"])).graph.node if n.op_type == "Conv"]
    # every convolution of the model is found on both sides, in one row, through its ONNX node
    for conv in convs:
        hits = [r for r in rows if conv in r["onnx_nodes"]]
        assert len(hits) == 1, conv
        assert hits[0]["base_layers"] and hits[0]["other_layers"], conv
    changed = [r for r in rows if r["change"] == "precision"]
    assert len(changed) >= len(convs) // 2
    assert all(r["base_precision"] == ["FP32"] and any("FP16" in p for p in r["other_precision"]) for r in changed
               if r["base_layers"] and r["other_layers"] and not any("cast" in n.lower() for n in r["other_layers"]))
    assert diff["summary"]["changes"]["precision"] == len(changed)
    assert any("cast_in_input" in r["onnx_nodes"] for r in rows if r["other_layers"])  # the inserted Cast shows on B's side
    sizes = {v["name"]: v["engine_size_ratio"] for v in comp.to_json()["variants"]}
    assert sizes["FP32"] == pytest.approx(1.0) and sizes["FP16"] < 0.9

    html = write_comparison(comp, tmp / "c.html")[0].read_text()
    check_html_self_contained(html)
    assert f"{diff['summary']['changes']['precision']} precision changes" in html
    doc = json.loads(write_comparison(comp, tmp / "c.json")[0].read_text())
    assert doc["layer_diffs"][0]["summary"]["changes"]["precision"] == len(changed)


def test_rtx_report_and_session_from_build_result(builds: dict) -> None:
    tmp: Path = builds["tmp"]
    rep = build_report(model=builds["fp16_model"], engine=builds["fp16"])
    assert rep.engine["files"] == [builds["fp16"].engine_path]
    assert rep.build["settings"]["targets"] == ["SM86"]
    mapped = {n for r in rep.layers for n in r["onnx_nodes"]}
    assert mapped and mapped <= {n.name for n in onnx.load(str(builds["fp16_model"])).graph.node}
    path = tmp / "fp16.trtstudio"
    save_session(path, model=builds["fp16_model"], engine=builds["fp16"])
    again = Report.from_session(load_session(path)).to_json()
    live = rep.to_json()
    again.pop("generated")
    live.pop("generated")
    assert again == live
    html = write_report(rep, tmp / "fp16.html")[0].read_text()
    check_html_self_contained(html)
    assert "FP16" in html
