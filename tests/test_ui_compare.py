"""Engine > Compare with... (issue 39 item 7): a second engine beside the open one, computed in a
worker on diff's core; the Compare dock (story, aligned groups sortable and filtered by change),
both engines' graphs side by side coloured by change with a legend, a row selecting its layers on
both sides and in the open engine's table. Real MainWindow, real TREx A100 engine files."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402
from test_ui_engine_graph import A100, click_node, engine_files, open_engine_graph, shot  # noqa: E402

from trtstudio.ui.main_window import MainWindow  # noqa: E402


def compared(qtbot: Any, window: MainWindow, paths: list[str]) -> Any:
    with qtbot.waitSignal(window.compare.sig_compared, timeout=60000) as blocker:
        window.compare.compare_with(paths)
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=30000)
    return blocker.args[0]


def test_compare_with_a_folder_fp32_against_qat_residual(qtbot: Any, window: MainWindow, trt_real: Path,
                                                         tmp_path: Path) -> None:
    from trtstudio.diff.core import diff_sides
    from trtstudio.diff.render import CHANGE_COLOURS
    from trtstudio.diff.sides import load_side
    from trtstudio.ui.compare_dock import COLUMNS, SORT_ROLE, TIME_COLOURS, group_colours

    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    other = trt_real / A100 / "qat-residual"
    c = compared(qtbot, window, [str(other)])
    pair = c.pair
    # the same groups as diff's core on the two folders (the command line's path)
    cli = diff_sides(load_side(str(trt_real / A100 / "fp32")), load_side(str(other)))
    assert [(g["change"], g["base_index"], g["other_index"]) for g in pair.groups] == \
        [(g["change"], g["base_index"], g["other_index"]) for g in cli.groups]
    assert pair.summary["verdict"] == cli.summary["verdict"] and pair.base.name == "fp32"
    assert pair.other.name == "qat-residual" and len(pair.base.samples) == len(cli.base.samples) > 1

    dock = window.compare.dock_widget
    assert window.compare.dock.isVisible()
    assert pair.story[0][:40] in dock.story.text().replace("&gt;", ">")
    model, proxy, table = dock.model, dock.proxy, dock.table
    assert model.rowCount() == proxy.rowCount() == len(pair.groups)
    # the change column in its colour
    for r, g in enumerate(pair.groups):
        bg = model.data(model.index(r, 0), Qt.ItemDataRole.BackgroundRole)
        assert bg is not None and bg.name() != "#ffffff"
        assert model.data(model.index(r, 0)) != ""
        assert g["change"] in CHANGE_COLOURS
    # sortable: by delta, smallest first, untimed last
    col = COLUMNS.index("Δ ms")
    table.sortByColumn(col, Qt.SortOrder.AscendingOrder)
    deltas = [proxy.index(r, col).data(SORT_ROLE) for r in range(proxy.rowCount())]
    timed = [d for d in deltas if not math.isnan(d)]
    assert timed == sorted(timed) and timed[0] == min(g["delta_ms"] for g in pair.groups if g["delta_ms"] is not None)
    assert all(math.isnan(d) for d in deltas[len(timed):])
    # filter by change
    dock.set_filter("precision")
    shown = [model.groups[proxy.mapToSource(proxy.index(r, 0)).row()]["change"] for r in range(proxy.rowCount())]
    assert shown and set(shown) == {"precision"} and len(shown) == sum(g["change"] == "precision" for g in pair.groups)

    # both graphs side by side, coloured by change, with the legend
    tab = window.compare.tab
    assert window.tabs.currentWidget() is tab and window.overlay.currentText() == "Change"
    bview, oview = tab.base_view, tab.other_view
    assert len(bview.dg.graph.nodes) == len(pair.base.engine.layers)
    assert len(oview.dg.graph.nodes) == len(pair.other.engine.layers)
    row = next(r for r, g in enumerate(pair.groups) if g["change"] == "precision" and len(g["base_index"]) == 1)
    g = pair.groups[row]
    b_di = bview.dg.display_index(g["base_index"][0])
    o_di = [oview.dg.display_index(i) for i in g["other_index"]]
    assert bview.fill_color(b_di).name() == CHANGE_COLOURS["precision"]
    assert all(oview.fill_color(d).name() == CHANGE_COLOURS["precision"] for d in o_di)
    assert ("precision changed", CHANGE_COLOURS["precision"]) in bview.legend
    # the open engine's own graph too
    eview = window.graphs.engine_view
    assert eview.fill_color(eview.dg.display_index(g["base_index"][0])).name() == CHANGE_COLOURS["precision"]
    window.overlay.setCurrentText("Change: time")
    colours, legend = group_colours(pair.groups, "Change: time")
    assert bview.fill_color(b_di).name() == colours[row] and colours[row] in TIME_COLOURS.values()
    best = min((r for r, x in enumerate(pair.groups) if x["delta_ms"] is not None and x["base_index"]),
               key=lambda r: pair.groups[r]["delta_ms"])
    assert bview.fill_color(bview.dg.display_index(pair.groups[best]["base_index"][0])).name() == TIME_COLOURS["much faster"]
    assert any(label == "much faster" for label, _ in bview.legend)

    # a row selects its layers on both sides and in the open engine's table
    dock.set_filter(None)
    table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
    table.selectRow(proxy.mapFromSource(model.index(row, 0)).row())
    assert window.engine_tabs.layer_table.selected_layers() == g["base_index"]
    assert bview.selected == {b_di} and oview.selected == set(o_di)
    assert eview.selected == {eview.dg.display_index(g["base_index"][0])}
    # and a node clicked on the other side selects its group's row
    other_row = next(r for r, x in enumerate(pair.groups) if x["other_index"] and x["base_index"] and r != row)
    click_node(qtbot, oview, oview.dg.display_index(pair.groups[other_row]["other_index"][0]))
    assert dock.selected_group() == other_row
    props = window.side_tabs.props
    other_layer = pair.other.engine.layers[pair.groups[other_row]["other_index"][0]]
    assert props.topLevelItem(0).text(1).endswith(other_layer.name)  # the other side's layer, in Properties
    assert window.engine_tabs.layer_table.selected_layers() == pair.groups[other_row]["base_index"]

    window.overlay.setCurrentText("Change")
    table.selectRow(proxy.mapFromSource(model.index(row, 0)).row())
    shot(window, "compare.png", tmp_path)

    # another engine opened: the comparison ends, the colourings go
    window.open_engine(engine_files(trt_real, "fp16"))
    qtbot.waitUntil(lambda: not window.is_busy() and window.compare.result is None, timeout=60000)
    assert not window.compare.dock.isVisible() and window.overlay.findText("Change") < 0
    assert window.tabs.count() == 1


def test_compare_with_files_names_the_sides_by_their_folders(qtbot: Any, window: MainWindow, trt_real: Path,
                                                             tmp_path: Path) -> None:
    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    c = compared(qtbot, window, engine_files(trt_real, "fp16"))
    pair = c.pair
    assert (pair.base.name, pair.other.name) == ("fp32", "fp16")
    assert pair.alignment["aligned_groups"] >= 20
    assert window.tabs.tabText(window.tabs.indexOf(window.compare.tab)) == "Compare: fp32 | fp16"
    shot(window.compare.tab, "compare_side_by_side.png", tmp_path)
    # closing the side-by-side tab ends the comparison
    window.graphs.close_subgraph_tab(window.tabs.indexOf(window.compare.tab))
    assert window.compare.result is None and window.overlay.findText("Change: time") < 0


def test_compare_errors_are_one_line(qtbot: Any, window: MainWindow, trt_real: Path, tmp_path: Path) -> None:
    errors: list[str] = []
    window.sig_error.connect(errors.append)
    window.compare.compare_with([str(tmp_path)])
    assert errors and errors[-1].startswith("open an engine first")
    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    empty = tmp_path / "empty"
    empty.mkdir()
    window.compare.compare_with([str(empty)])
    qtbot.waitUntil(lambda: not window.is_busy() and len(errors) >= 2, timeout=30000)
    assert "no engine files in this folder" in errors[-1] and "\n" not in errors[-1]
    assert window.compare.result is None and window.compare.dock is None


def _compare_with_own_session(qtbot: Any, window: MainWindow, trt_real: Path, tmp_path: Path) -> Any:
    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    session = tmp_path / "fp32-again.trtstudio"
    with qtbot.waitSignal(window.sig_session_saved, timeout=30000):
        window.save_session(str(session))
    return compared(qtbot, window, [str(session)]).pair


def test_compare_with_a_session_of_the_same_engine(qtbot: Any, window: MainWindow, trt_real: Path,
                                                   tmp_path: Path) -> None:
    pair = _compare_with_own_session(qtbot, window, trt_real, tmp_path)
    assert pair.other.name == "fp32-again" and len(pair.groups) == len(window.engine.layers)
    for g in pair.groups:  # every layer against itself
        assert g["base_layers"] == g["other_layers"] and g["base_precision"] == g["other_precision"]
    dock = window.compare.dock_widget
    changed = sum(g["change"] != "same" for g in pair.groups)
    assert dock.filter.itemText(1) == f"Changed ({changed})"
    dock.set_filter("same")
    assert dock.proxy.rowCount() == len(pair.groups) - changed > 0


def test_compare_with_a_session_of_the_same_engine_is_identical(qtbot: Any, window: MainWindow, trt_real: Path,
                                                                tmp_path: Path) -> None:
    pair = _compare_with_own_session(qtbot, window, trt_real, tmp_path)
    assert pair.build["verdict"] == "identical" and {g["change"] for g in pair.groups} == {"same"}


@pytest.mark.rtx
def test_compare_rtx_builds_colours_and_selects_the_onnx_nodes(qtbot: Any, window: MainWindow, sample_model: Path,
                                                               tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two real TensorRT-RTX builds of the bundled model (FP32, --fp16) with the model open: the
    model's graph is coloured by change and a row selects its ONNX nodes there."""
    import importlib.util
    import shutil

    if importlib.util.find_spec("tensorrt_rtx") is None:
        pytest.skip("tensorrt_rtx is not installed")
    from trtstudio.cli import main
    from trtstudio.diff.render import CHANGE_COLOURS

    src = tmp_path / sample_model.name
    shutil.copy(sample_model, src)
    docs = {}
    for flags, stem in (([], "fp32"), (["--fp16"], "fp16")):
        assert main(["build", str(src), "--backend", "rtx", "--target", "sm86", "-o", str(tmp_path / f"{stem}.engine"),
                     *flags, "--json"]) == 0
        docs[stem] = tmp_path / f"{stem}.build.json"
        docs[stem].write_text(capsys.readouterr().out)
    with qtbot.waitSignal(window.sig_model_loaded, timeout=60000):
        window.open_model(str(src))
    window.open_engine([str(docs["fp32"])])
    qtbot.waitUntil(lambda: not window.is_busy() and window.analysis is not None and not window.analysis.pending,
                    timeout=60000)
    c = compared(qtbot, window, [str(docs["fp16"])])
    pair = c.pair
    assert (pair.base.name, pair.other.name) == ("fp32", "fp16")
    assert not window.graphs.showing_engine_graph()  # the model's graph stays the graph
    view, dg = window.view, window.display
    row = next(r for r, g in enumerate(pair.groups) if g["change"] == "precision" and len(g["onnx_nodes"]) > 1)
    g = pair.groups[row]
    nodes = [dg.display_index(dg.graph.node_by_name[n]) for n in g["onnx_nodes"]]
    assert all(view.fill_color(d).name() == CHANGE_COLOURS["precision"] for d in nodes)
    assert ("precision changed", CHANGE_COLOURS["precision"]) in view.legend
    window.tabs.setCurrentIndex(0)
    dock = window.compare.dock_widget
    dock.table.selectRow(dock.proxy.mapFromSource(dock.model.index(row, 0)).row())
    assert view.selected == set(nodes)
    assert window.engine_tabs.layer_table.selected_layers() == g["base_index"]
    assert window.compare.tab.other_view.selected == {window.compare.tab.other_view.dg.display_index(i)
                                                      for i in g["other_index"]}
    shot(window, "compare_model.png", tmp_path)
