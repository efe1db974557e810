"""The Model tab's summary page (ui.properties_view)."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

pytestmark = pytest.mark.gui


def test_long_symbolic_dims_are_shortened_on_the_model_tab(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Exporters name output sizes with nested expressions (NudeNet's YOLOv8: a dozen floor()s
    deep); the page keeps each such dimension's ends instead of wrapping it over a dozen lines."""
    pytest.importorskip("PySide6")
    from trtstudio.graph.model import load_model
    from trtstudio.ui.properties_view import DIM_TEXT_MAX, ModelPanel, dim_text

    long = "floor(floor(floor(height/2 - 1/2)/2 - 1/2)/2) + 1"
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, long])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3, long])])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.show_summary(load_model(path).summary())
    text = panel.summary.toPlainText()
    short = dim_text(long)
    assert len(short) <= DIM_TEXT_MAX and short.startswith("floor(") and short.endswith("/2) + 1")
    assert long not in text and text.count(f"[batch, 3, {short}]") == 2
    assert dim_text("batch") == "batch" and dim_text(224) == "224"


@pytest.mark.parametrize(("nodes", "listed"), [(300, 150), (25_000, 50)])
def test_a_kv_cache_model_lists_every_input_a_huge_model_the_first(qtbot, nodes: int, listed: int) -> None:  # type: ignore[no-untyped-def]
    """A decoder with a KV cache has 50-200 inputs: the page lists them all. A model of over
    BIG_MODEL_NODES nodes lists the first 50 and says how many more (its page is laid out while its
    workers run, and each row then costs the GUI thread)."""
    pytest.importorskip("PySide6")
    from trtstudio.ui.properties_view import BIG_MODEL_NODES, MAX_IO_ROWS_BIG, ModelPanel

    assert MAX_IO_ROWS_BIG == 50 and 300 < BIG_MODEL_NODES < 25_000
    inputs = [{"name": f"past_key_values.{i}.key", "dtype": "float16", "shape": ["batch", 8, "past", 64]}
              for i in range(150)]
    summary = {"path": "decoder.onnx", "ir_version": 9, "opsets": {"": 17}, "producer": "x", "nodes": nodes,
               "nodes_total": nodes, "parameters": 0, "parameter_bytes": 0, "inputs": inputs,
               "outputs": inputs[:1], "op_counts": {"MatMul": nodes}, "subgraphs": [], "warnings": []}
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.show_summary(summary)
    text = panel.summary.toPlainText()
    assert text.count("past_key_values.") == listed + 1  # and the one output
    assert (f"... {150 - listed:,} more" in text) == (listed < 150)


def test_a_model_that_is_not_the_engines_says_so_instead_of_folded(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """TREx's A100 ResNet engine beside a small conv net: no layer maps, so a node without a layer
    is not 'folded or removed' but the sign of another model, in Properties and in the legend."""
    pytest.importorskip("PySide6")
    import sys

    from trtstudio.engine.analysis import analyze
    from trtstudio.engine.load import load_engine
    from trtstudio.engine.overlay import NO_LAYER_OTHER_MODEL, overlay
    from trtstudio.graph.display import build_display
    from trtstudio.graph.model import load_model
    from trtstudio.ui.properties_view import ModelPanel

    graph_json = (Path(__file__).resolve().parents[2] / "shared/fixtures/trt-real/NVIDIA_TensorRT_trex/release-11.0"
                  / "examples/pytorch/resnet/A100/fp32/resnet.onnx.engine.graph.json")
    if not graph_json.is_file():
        pytest.skip("TREx fixtures absent")
    sys.path.insert(0, str(Path(__file__).parent))
    from onnx_models import conv_net

    path = tmp_path / "conv.onnx"
    onnx.save(conv_net(), str(path))
    model = load_model(path)
    analysis = analyze(load_engine([graph_json]), model, columns=True)
    dg = build_display(model.graph)
    panel = ModelPanel()
    qtbot.addWidget(panel)
    node_item = next(i for i in range(dg.n) if dg.node_index(i) is not None)
    panel.show_properties(dg, node_item, analysis)
    rows = {panel.props.topLevelItem(i).text(0): panel.props.topLevelItem(i).text(1)
            for i in range(panel.props.topLevelItemCount())}
    assert rows["Engine layers"] == "none (the model is probably not the engine's)"
    ov = overlay(analysis, model.graph.nodes, "Precision")
    assert ov is not None and all(ov.folded) and ov.legend[-1][0] == NO_LAYER_OTHER_MODEL


def test_names_wrap_between_their_parts_and_values_keep_both_ends(qtbot) -> None:
    """A long file or tensor name wraps at its separators, never inside a word; a value too long
    for the Properties column keeps both ends, whole in its tooltip (issue 52)."""
    from PySide6.QtCore import Qt

    from trtstudio.ui.properties_view import ZWSP, ModelPanel, breakable

    assert breakable("ch_PP-OCRv4_det_infer.onnx") == f"ch_{ZWSP}PP-{ZWSP}OCRv4_{ZWSP}det_{ZWSP}infer.{ZWSP}onnx"
    assert breakable("Conv2d").replace(ZWSP, "") == "Conv2d" and ZWSP not in breakable("Conv2d")
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.resize(220, 400)
    panel.show()
    qtbot.waitExposed(panel)
    assert panel.props.textElideMode() == Qt.TextElideMode.ElideMiddle
    assert panel.props.columnWidth(0) <= 0.4 * panel.props.viewport().width() + 1
