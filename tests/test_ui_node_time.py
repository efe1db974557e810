"""Per-node time and kernels in the window (issue 40 item 4): the real MainWindow with the bundled
model and its TensorRT-RTX build log; a TensorRT-domain Nsight Systems export opened afterwards
alone goes beside the engine; Colour by ``Time (ms)`` paints the heat map with its ms legend; the
Kernels tab lists the selected layer's kernels. TREx's A100 engine with the real H100 export
(PyTorch ranges, no TensorRT ones) says what it lacks. Screenshots under $TRTSTUDIO_SHOTS."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

from trtstudio.engine.node_time import RAMP, TIME_MODE, node_times  # noqa: E402
from trtstudio.ui.main_window import MainWindow  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from nsys_synth import write_trt_export  # noqa: E402
from test_ui_engine_graph import A100, engine_files, shot  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample"
LOG = SAMPLE / "mobilenetv2_035.rtx-sm86.build.log"
REAL_NSYS = (Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "nsys-real" / "GindaChen_nsys-ai"
             / "h100_2gpu_1s.sqlite")


def _settled(window: MainWindow) -> bool:
    return not window.is_busy() and window.analysis is not None and not window.analysis.pending


def _select_layer(window: MainWindow, pos: int) -> None:
    table = window.engine_tabs.layer_table
    table.table.selectRow(next(r for r in range(table.model.rowCount()) if table.model.positions()[r] == pos))


def test_heat_map_and_kernels_from_an_export_opened_beside_the_engine(qtbot: Any, window: MainWindow,
                                                                       sample_model: Path, tmp_path: Path) -> None:
    with qtbot.waitSignal(window.sig_model_loaded, timeout=60000):
        window.open_model(str(sample_model))
    window.open_engine([str(LOG)])
    qtbot.waitUntil(lambda: _settled(window), timeout=60000)
    names = [lay.name for lay in window.engine.layers]
    export = tmp_path / "mobilenet.nsys.sqlite"
    totals = write_trt_export(export, names, inferences=3, kernels_per_layer=2)

    # Time (ms) before any time: untimed nodes pale, the status bar says where times come from
    window.overlay.setCurrentText(TIME_MODE)
    assert "no per-node times yet" in window.statusBar().currentMessage()

    # the export alone, as File > Open engine files or a drop gives it: opened beside the engine
    window.open_paths([str(export)])
    qtbot.waitUntil(lambda: _settled(window) and bool(window.engine.kernels), timeout=60000)
    assert window.workspace.engine_paths == [str(LOG), str(export)]
    assert len(window.engine.layers) == len(names)
    times = window.node_times()
    assert times is not None and times.source == "Nsight Systems"
    # the colouring follows the new analysis by itself (Colour by stays Time (ms))
    view, dg = window.view, window.display
    slow = max(times.ms, key=times.ms.__getitem__)
    assert view.fill_color(dg.display_index(dg.graph.node_by_name[slow])).name() == "#af2814"
    ramp = next((label, c) for label, c in view.legend if c.startswith(RAMP))
    assert f"{times.max_ms:.3g} ms" in ramp[0] and ramp[0].startswith("Nsight Systems")
    lay = window.engine.layers[[n for n in names].index(times.layers[slow])]
    assert times.ms[slow] == pytest.approx(totals[lay.name] / 3)
    shot(window, "time_heat_map.png", tmp_path)
    # a click on that node: its time in Properties, with the layer that timed it
    from test_ui_engine_graph import click_node

    click_node(qtbot, view, dg.display_index(dg.graph.node_by_name[slow]))
    props = window.side_tabs.props
    top = {props.topLevelItem(i).text(0): props.topLevelItem(i) for i in range(props.topLevelItemCount())}
    assert top["Time"].text(1) == f"{times.ms[slow]:.4g} ms per inference (Nsight Systems)"
    assert top["Time"].child(0).text(1).startswith(times.layers[slow])

    # the Kernels tab follows the selected layer: 2 kernels, grid/block, time per inference, share
    pos = names.index(lay.name)
    _select_layer(window, pos)
    tabs = window.engine_tabs
    tabs.setCurrentWidget(tabs.kernels_view)
    kv = tabs.kernels_view
    assert kv.table.rowCount() == 2 and lay.name in kv.title.text()
    cells = [[kv.table.item(r, c).text() for c in range(5)] for r in range(2)]
    assert {c[1] for c in cells} == {"grid 64x1x1 block 128x1x1", "grid 128x1x1 block 128x1x1"}
    assert sum(float(c[3]) for c in cells) == pytest.approx(totals[lay.name] / 3, abs=2e-4)
    assert sum(float(c[4].rstrip(" %")) for c in cells) == pytest.approx(100.0, abs=0.2)
    assert "sm86_xmma_fprop_kernel" in kv.copy_text()
    shot(window, "kernels_tab.png", tmp_path)

    # a graph click on a node selects its layer and the tab follows
    other = names.index(times.layers[min(times.ms, key=times.ms.__getitem__)])
    window.workspace.select_layers([other], source="graph")
    assert names[other] in kv.title.text() and kv.table.rowCount() == 2


def test_real_export_beside_trex_engine_says_what_it_lacks(qtbot: Any, window: MainWindow, trt_real: Path) -> None:
    if not REAL_NSYS.is_file():
        pytest.skip(f"fixture {REAL_NSYS} absent")
    files = engine_files(trt_real, "fp16")
    window.open_engine(files)
    qtbot.waitUntil(lambda: _settled(window), timeout=60000)
    # dropped on the window, as a user drags it from a file manager
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDropEvent

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(REAL_NSYS))])
    drop = QDropEvent(QPointF(200, 200), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    window.dropEvent(drop)
    qtbot.waitUntil(lambda: _settled(window) and bool(window.engine.kernels), timeout=60000)
    assert window.workspace.engine_paths == [*files, str(REAL_NSYS)]
    # PyTorch's aten:: ranges are no layer of this engine: its profile's times stay, no kernels per layer
    assert node_times(analysis=window.analysis) is None  # no ONNX nodes without the model
    assert window.engine.layers[3].time is not None
    _select_layer(window, 3)
    kv = window.engine_tabs.kernels_view
    assert kv.table.rowCount() == 0 and "no kernels recorded" in kv.title.text()


def test_trex_engine_kernels_from_a_tensorrt_export(qtbot: Any, window: MainWindow, trt_real: Path,
                                                    tmp_path: Path) -> None:
    files = engine_files(trt_real, "qat")
    graph = next(f for f in files if f.endswith(".graph.json"))
    import json

    names = [lay["Name"] for lay in json.loads(Path(graph).read_text())["Layers"]]
    export = tmp_path / "qat.sqlite"
    totals = write_trt_export(export, names, inferences=2, kernels_per_layer=3)
    window.open_engine([*files, str(export)])
    qtbot.waitUntil(lambda: _settled(window) and bool(window.engine.kernels), timeout=60000)
    pos = next(i for i, n in enumerate(names) if "Conv" in n)
    _select_layer(window, pos)
    kv = window.engine_tabs.kernels_view
    assert kv.table.rowCount() == 3
    assert sum(float(kv.table.item(r, 3).text()) for r in range(3)) == pytest.approx(totals[names[pos]] / 2, abs=3e-4)
    assert A100 in graph


def test_kineto_trace_beside_the_model_alone(qtbot: Any, window: MainWindow, sample_model: Path, tmp_path: Path) -> None:
    """A Kineto trace of the PyTorch path (record_function ranges named after the model's nodes,
    aten:: ops inside them) dropped on the window with only the model open: Time (ms) from it."""
    import json

    with qtbot.waitSignal(window.sig_model_loaded, timeout=60000):
        window.open_model(str(sample_model))
    nodes = [n.name for n in window.display.graph.nodes if n.op_type == "Conv"][:4]
    events: list[dict] = []
    t, corr, want = 100.0, 1, {}
    for _ in range(2):
        for k, node in enumerate(nodes):
            start = t
            events.append({"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": t + 1, "dur": 8})
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                           "ts": t + 2, "dur": 3, "args": {"correlation": corr}})
            dur = 10.0 * (k + 1)
            events.append({"ph": "X", "cat": "kernel", "name": f"implicit_gemm_{k}", "pid": 0, "tid": 7, "ts": t + 50,
                           "dur": dur, "args": {"correlation": corr, "device": 0, "grid": [k + 1, 1, 1],
                                                "block": [256, 1, 1]}})
            want[node] = want.get(node, 0.0) + dur / 1e3 / 2
            corr += 1
            t += 20
            events.append({"ph": "X", "cat": "user_annotation", "name": f"trtstudio::{node.strip('/')}", "pid": 1,
                           "tid": 1, "ts": start, "dur": t - start - 1})
    trace = tmp_path / "sample.pt.trace.json"
    trace.write_text(json.dumps({"schemaVersion": 1, "deviceProperties": [], "traceEvents": events}))
    window.open_paths([str(trace)])
    qtbot.waitUntil(lambda: not window.is_busy() and window.workspace.engine is not None
                    and bool(window.workspace.engine.kernels), timeout=60000)
    window.overlay.setCurrentText(TIME_MODE)
    times = window.node_times()
    assert times is not None and times.source == "Kineto trace"
    assert times.ms == pytest.approx(want)
    view, dg = window.view, window.display
    assert view.fill_color(dg.display_index(dg.graph.node_by_name[nodes[-1]])).name() == "#af2814"


def test_engine_graph_time_colouring(qtbot: Any, window: MainWindow, trt_real: Path, tmp_path: Path) -> None:
    """TREx's A100 FP16 engine alone (its profile times): Colour by Time (ms) on the engine's graph."""
    from test_ui_engine_graph import open_engine_graph

    open_engine_graph(qtbot, window, engine_files(trt_real, "fp16"))
    window.overlay.setCurrentText(TIME_MODE)
    view = window.graphs.engine_view
    g, engine = view.dg.graph, window.engine
    per = [lay.time.average_ms if lay.time is not None else None for lay in engine.layers]
    slow = max((k for k, t in enumerate(per) if t is not None), key=lambda k: per[k])
    di = g.node_by_name[g.nodes[slow].name] + view.dg.node_offset
    assert view.fill_color(di).name() == "#af2814"
    ramp = next(label for label, c in view.legend if c.startswith(RAMP))
    assert ramp.startswith("TensorRT profile") and f"{per[slow]:.3g} ms" in ramp
    shot(window, "engine_graph_time.png", tmp_path)
