"""The Engine dock's Summary tab (TREx's engine summary), the time-by-precision chart bucketed by
compute precision with its in -> out pairs, and two engines' graphs refused by the window without
losing the engine it shows. Real MainWindow, real loader, TREx's own engines."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

pytest.importorskip("PySide6")

from trtstudio.ui.main_window import MainWindow  # noqa: E402

TREX = "NVIDIA_TensorRT_trex/release-11.0"
MOBILENET = f"{TREX}/tests/inputs/mobilenet.qat.onnx.engine"
A100 = f"{TREX}/examples/pytorch/resnet/A100"


def _mobilenet(trt_real: Path) -> list[str]:
    files = [trt_real / f"{MOBILENET}.graph.json", trt_real / f"{MOBILENET}.profile.json"]
    if not all(f.is_file() for f in files):
        pytest.skip("TREx fixtures absent")
    return [str(f) for f in files]


def _open(qtbot, window: MainWindow, files: list[str]) -> None:
    window.open_engine(files)
    qtbot.waitUntil(lambda: not window.is_busy() and window.analysis is not None and not window.analysis.pending,
                    timeout=60000)
    qtbot.waitUntil(lambda: "Average time" in window.engine_tabs.summary_view.toPlainText(), timeout=5000)


def test_the_summary_tab_shows_trexs_summary(qtbot, window: MainWindow, trt_real: Path) -> None:
    from trtstudio.engine.summary import summary

    _open(qtbot, window, _mobilenet(trt_real))
    tabs = window.engine_tabs
    text = tabs.summary_view.toPlainText()
    s = summary(window.analysis.engine)
    # TREx's expected values for this engine (trt-engine-explorer tests/test_engine_plan.py)
    for expected in ("input1: [1, 3, 224, 224]xFP32 NCHW", "0.470 ms", "3.3 MB", "15.9 MB"):
        assert expected in text, text
    assert f"{s['layers']}" == "72" and "72 (73 with Constant/NoOp)" in text
    assert "GPU\nnot recorded" in text  # the graph JSON names no GPU
    tabs.setCurrentWidget(tabs.summary_view)
    window.engine_dock.raise_()
    qtbot.wait(50)
    assert window.grab().save("/tmp/engine_summary_tab.png")


def test_time_by_precision_is_by_compute_precision_with_the_pairs_as_detail(qtbot, window: MainWindow,
                                                                            trt_real: Path) -> None:
    _open(qtbot, window, _mobilenet(trt_real))
    engine = window.analysis.engine
    charts = window.engine_tabs.charts
    qtbot.waitUntil(lambda: charts is not None and bool(charts.parts("precision")), timeout=5000)
    bars = dict(charts.bars("precision"))
    int8 = sum(lay.time.per_inference_ms for lay in engine.layers if lay.time and lay.precision == "INT8")
    assert bars["INT8"] == pytest.approx(int8)  # INT8 convolutions with FP16/FP32 output count as INT8
    assert set(bars) == {lay.precision for lay in engine.layers if lay.time}
    pairs = dict(charts.parts("precision")["INT8"])
    conv_fp16 = sum(lay.time.per_inference_ms for lay in engine.layers
                    if lay.time and lay.precision_in == "INT8" and lay.precision_out == "FP16")
    assert pairs["INT8 -> FP16"] == pytest.approx(conv_fp16) and conv_fp16 > 0
    assert sum(pairs.values()) == pytest.approx(bars["INT8"])
    assert "INT8 -> FP16" in charts.by_precision.toolTip()


def test_two_engines_graphs_are_refused_and_the_open_engine_stays(qtbot, window: MainWindow, trt_real: Path) -> None:
    files = _mobilenet(trt_real)
    fp32, fp16 = trt_real / f"{A100}/fp32/resnet.onnx.engine.graph.json", trt_real / f"{A100}/fp16/resnet.onnx.engine.graph.json"
    _open(qtbot, window, files)
    shown = window.analysis
    errors: list[str] = []
    window.sig_error.connect(errors.append)
    window.open_engine([str(fp32), str(fp16)])
    qtbot.waitUntil(lambda: bool(errors) and not window.is_busy(), timeout=60000)
    (line,) = errors
    assert str(fp32) in line and str(fp16) in line and "another engine" in line and "\n" not in line
    assert window.analysis is shown and len(window.engine.layers) == 73  # the MobileNet engine stays


def test_a_profile_of_thousands_of_runs_shows_times_per_inference(qtbot, window: MainWindow, trt_real: Path) -> None:
    """TREx's tutorial engine was profiled 8,657 times: the footer, the charts and the table's
    time column say its time per inference (the profile's total over runs divided by its count,
    to the medians' few per cent), never the total over the runs (3,081 ms)."""
    import json
    import re

    from PySide6.QtCore import Qt

    from trtstudio.ui.layer_table import COLUMN

    stem = f"{TREX}/tests/inputs/mobilenet_v2_residuals.qat.onnx.engine"
    files = [trt_real / f"{stem}.graph.json", trt_real / f"{stem}.profile.json"]
    if not all(f.is_file() for f in files):
        pytest.skip("TREx fixtures absent")
    doc = json.loads(files[1].read_text())
    count, runs_total = doc[0]["count"], sum(r["timeMs"] for r in doc[1:])
    assert count > 1000
    per_inference = runs_total / count
    _open(qtbot, window, [str(f) for f in files])
    footer = window.layer_table.totals.text()
    shown = [float(x) for x in re.findall(r"([\d.]+) ms per inference", footer)]
    assert shown and all(v == pytest.approx(per_inference, rel=0.05) for v in shown), footer
    charts = window.engine_tabs.charts
    qtbot.waitUntil(lambda: charts is not None and bool(charts.bars("precision")), timeout=5000)
    for which in ("type", "precision"):
        assert sum(v for _, v in charts.bars(which)) == pytest.approx(per_inference, rel=0.05)
    assert "per inference" in charts.message.text() and f"{runs_total:.4g}" not in charts.message.text()
    model = window.layer_table.model
    assert model.headerData(COLUMN["ms"], Qt.Orientation.Horizontal) == "ms/inference"
    window.engine_dock.raise_()
    qtbot.wait(50)
    assert window.grab().save("/tmp/per_inference_footer.png")
