"""One view of per-node time (issue 40 item 4), without Qt: ``engine.node_time`` turns an engine
analysis (a TensorRT-domain Nsight Systems export beside the bundled model's TensorRT-RTX build log),
a Kineto trace of the PyTorch path, and a real ONNX Runtime per-layer profile into ``{node: ms}``;
the Kernels tab's rows (grid/block from the export), the time overlay, and the API's node_times."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from trtstudio.engine.analysis import analyze
from trtstudio.engine.load import load_engine
from trtstudio.engine.node_time import (
    RAMP,
    from_kernels,
    from_rows,
    layer_kernels,
    node_times,
    row_kernels,
    time_overlay,
)
from trtstudio.graph.model import load_model

sys.path.insert(0, str(Path(__file__).parent))
from nsys_synth import write_trt_export  # noqa: E402
from test_nsys import _trace_events  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample"
MODEL = SAMPLE / "mobilenetv2_035.onnx"
LOG = SAMPLE / "mobilenetv2_035.rtx-sm86.build.log"
pytestmark = pytest.mark.skipif(not MODEL.is_file() or not LOG.is_file(), reason="sample model not generated")


def _engine_with_export(tmp_path: Path, inferences: int = 4) -> tuple[object, dict[str, float], Path]:
    names = [lay.name for lay in load_engine([LOG]).layers]
    export = tmp_path / "run.sqlite"
    totals = write_trt_export(export, names, inferences=inferences, kernels_per_layer=3)
    return load_engine([LOG, export]), totals, export


def test_nsys_layer_ranges_become_node_times(tmp_path: Path) -> None:
    engine, totals, _ = _engine_with_export(tmp_path)
    model = load_model(MODEL)
    a = analyze(engine, model.graph)
    t = node_times(analysis=a)
    assert t is not None and t.source == "Nsight Systems"
    # every node of a layer shows that layer's kernel time per inference (4 inferences in the file)
    checked = 0
    for lay in engine.layers:
        for node in lay.onnx_nodes:
            if node in a.node_layers and len(a.node_layers[node]) == 1:
                assert t.ms[node] == pytest.approx(totals[lay.name] / 4)
                assert t.layers[node] == lay.name and t.shared[node] == len(lay.onnx_nodes)
                checked += 1
    assert checked > 20
    # each layer once: the units add up to the engine's time per inference
    assert sum(u[1] for u in t.units()) <= t.total_ms + 1e-9
    assert t.total_ms == pytest.approx(sum(totals.values()) / 4)
    # the overlay: the slowest node darkest, untimed pale, a continuous legend in ms
    ov = time_overlay(model.graph.nodes, t)
    slow = max(t.ms, key=t.ms.__getitem__)
    names = [n.name for n in model.graph.nodes]
    assert ov.colors[names.index(slow)] == "#af2814"
    assert ov.legend[0][1].startswith(RAMP) and f"{t.max_ms:.3g} ms" in ov.legend[0][0]


def test_kernels_of_a_layer_carry_grid_block_and_share(tmp_path: Path) -> None:
    engine, totals, _ = _engine_with_export(tmp_path)
    pos = 5
    k = layer_kernels(engine, pos)
    assert k is not None and k.owner == engine.layers[pos].name and k.source == "Nsight Systems"
    assert len(k.rows) == 3 and k.ms == pytest.approx(totals[k.owner] / 4)
    assert sum(r["ms"] for r in k.rows) == pytest.approx(k.ms)
    assert sum(r["share"] for r in k.rows) == pytest.approx(1.0)
    assert all(r["count"] == pytest.approx(1.0) for r in k.rows)  # one launch of each per inference
    launches = {r["name"]: r["launch"] for r in k.rows}
    assert launches["sm86_xmma_fprop_kernel_1"] == "grid 128x1x1 block 128x1x1"
    assert layer_kernels(load_engine([LOG]), pos) is None  # no kernel table without the export


def test_kineto_annotations_are_node_times(tmp_path: Path) -> None:
    """A trace of the PyTorch path opened as engine files: aten:: ops take the ranges, the
    record_function annotations (the ONNX nodes) keep their own table for per-node time."""
    events, want = _trace_events()
    path = tmp_path / "run.pt.trace.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    engine = load_engine([path])
    assert {r["name"] for r in engine.kernels["ranges"]} == {"aten::conv2d", "aten::relu"}
    t = from_kernels(engine.kernels, ["/conv1/Conv", "/relu/Relu", "/other"])
    assert t is not None and t.source == "Kineto trace"
    assert t.ms.keys() == want.keys()
    assert all(t.ms[n] == pytest.approx(ms / 3) for n, ms in want.items())  # 3 inferences in the trace
    assert node_times(engine=engine, node_names=["/conv1/Conv", "/relu/Relu"]).ms == t.ms


def test_onnx_runtime_profile_rows(capsys: pytest.CaptureFixture[str]) -> None:
    from trtstudio.cli import main

    assert main(["profile", str(MODEL), "--per-layer", "--iterations", "10", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["layers"]
    t = from_rows(rows)
    assert t is not None and t.source == "ONNX Runtime profile"
    timed = [r for r in rows if r.get("onnx_nodes") and r.get("time_ms") is not None]
    assert timed
    for r in timed:
        for n in r["onnx_nodes"]:
            assert t.ms[n] >= r["time_ms"] - 1e-12
    assert t.total_ms == pytest.approx(sum(r["time_ms"] for r in rows if r.get("time_ms") is not None))
    model_nodes = {n.name for n in load_model(MODEL).graph.nodes}
    assert set(t.ms) <= model_nodes and len(t.ms) > len(model_nodes) // 2
    # the engine wins when both exist; prefer="profile" picks the run
    assert node_times(rows=rows, prefer="profile").source == "ONNX Runtime profile"


def test_pytorch_kernel_rows() -> None:
    rows = [{"name": "conv1", "onnx_nodes": ["/conv1/Conv"], "time_ms": 0.3, "timing": "kernels",
             "kernels": [{"name": "implicit_gemm", "count": 1.0, "ms": 0.2}, {"name": "bias_add", "count": 2.0, "ms": 0.1}]},
            {"name": "relu", "onnx_nodes": ["/relu/Relu"], "time_ms": 0.05, "timing": "kernels", "kernels": []}]
    t = from_rows(rows)
    assert t is not None and t.source == "PyTorch kernels" and t.ms == {"/conv1/Conv": 0.3, "/relu/Relu": 0.05}
    k = row_kernels(rows, "/conv1/Conv")
    assert k is not None and [r["name"] for r in k.rows] == ["implicit_gemm", "bias_add"]
    assert k.rows[0]["share"] == pytest.approx(2 / 3) and k.rows[1]["count"] == 2.0
    assert row_kernels(rows, "/relu/Relu") is None  # no kernels recorded for it


def test_api_node_times(tmp_path: Path) -> None:
    import trtstudio.api as ts

    _, totals, export = _engine_with_export(tmp_path, inferences=2)
    plan = ts.open_engine(LOG, export, model=MODEL)
    got = plan.node_times()
    lay = next(lay for lay in plan.engine.layers if len(lay.onnx_nodes) == 2)
    assert got[lay.onnx_nodes[0]] == pytest.approx(totals[lay.name] / 2)
    assert ts.open_engine(LOG).node_times() == {}  # nothing timed it


def test_report_carries_the_same_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A report's node_times is node_times' summary: from the engine's layers (an Nsight Systems
    export beside the build log), and from a run's per-layer rows (a session of a real profile)."""
    from trtstudio.cli import main

    _, totals, export = _engine_with_export(tmp_path, inferences=2)
    capsys.readouterr()
    assert main(["report", str(MODEL), str(LOG), str(export), "--json"]) == 0
    nt = json.loads(capsys.readouterr().out)["node_times"]
    assert nt["source"] == "Nsight Systems" and nt["total_ms"] == pytest.approx(sum(totals.values()) / 2)
    assert [u["ms"] for u in nt["units"]] == sorted((u["ms"] for u in nt["units"]), reverse=True)
    assert all(u["ms"] == pytest.approx(totals[u["name"]] / 2) for u in nt["units"])
    html = tmp_path / "r.html"
    assert main(["report", str(MODEL), str(LOG), str(export), "-o", str(html)]) == 0
    assert "Per-node time from the Nsight Systems" in html.read_text()
    session = tmp_path / "run.trtstudio"
    assert main(["profile", str(MODEL), "--per-layer", "--iterations", "10", "--session", str(session)]) == 0
    capsys.readouterr()
    assert main(["report", str(session), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    from trtstudio.report.session import load_session

    rows = load_session(session).runs[0].layers
    assert rep["node_times"] == json.loads(json.dumps(from_rows(rows).summary()))
    assert rep["node_times"]["source"] == "ONNX Runtime profile"


REAL_NSYS = (Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "nsys-real" / "GindaChen_nsys-ai"
             / "h100_2gpu_1s.sqlite")


@pytest.mark.skipif(not REAL_NSYS.is_file(), reason=f"fixture {REAL_NSYS} absent")
def test_real_export_kernels_carry_their_launch_shape() -> None:
    """The real H100 export's kernels keep the grid/block their launches used most (CUPTI's
    gridX..blockZ), as the Kernels tab shows them."""
    import sqlite3

    from trtstudio.engine.nsys import read_kernels

    table = read_kernels(REAL_NSYS)
    con = sqlite3.connect(f"file:{REAL_NSYS}?mode=ro&immutable=1", uri=True)
    names = dict(con.execute("SELECT id, value FROM StringIds"))
    shapes: dict[str, set[str]] = {}
    for sid, gx, gy, gz, bx, by, bz in con.execute(
            "SELECT shortName, gridX, gridY, gridZ, blockX, blockY, blockZ FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        shapes.setdefault(names[sid], set()).add(f"grid {gx}x{gy}x{gz} block {bx}x{by}x{bz}")
    con.close()
    kernels = [k for r in table.ranges for k in r["kernels"]]
    assert kernels and all(k["launch"] in shapes[k["name"]] for k in kernels)
