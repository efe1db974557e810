"""Layer table, engine charts and log panel on a real trtexec fixture (resnet18 FP16 + its profile)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

RESNET = "fuzzylabs_edge-vision-power-estimation/desktop/torch_onnx_trtexec/results/resnet18"


@pytest.fixture
def resnet(trt_real: Path):
    from trtstudio.engine.diagnose import diagnose
    from trtstudio.engine.load import load_engine

    folder = trt_real / RESNET
    if not folder.is_dir():
        pytest.skip(f"fixture {RESNET} absent")
    engine = load_engine([folder / "resnet18_fp16.graph.json", folder / "resnet18_fp16.profile.json"])
    engine.findings = diagnose(engine)
    return engine


@pytest.fixture
def table(qtbot, resnet):
    from trtstudio.ui.layer_table import LayerTableView

    view = LayerTableView()
    qtbot.addWidget(view)
    view.resize(1300, 600)
    view.set_engine(resnet)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_models_pass_qtmodeltester(qtmodeltester, table):
    from PySide6.QtCore import Qt

    from trtstudio.ui.layer_table import COLUMN

    assert table.model.rowCount() == len(table.engine().layers) > 0
    qtmodeltester.check(table.model)
    # the model filters and sorts itself (there is no proxy): the tester watches both changes
    table.filter_edit.setText("conv")
    table.table.sortByColumn(COLUMN["name"], Qt.SortOrder.DescendingOrder)
    assert 0 < table.model.rowCount() < len(table.engine().layers)
    qtmodeltester.check(table.model)


def test_selection_follows_its_layers_through_filter_and_sort(table, resnet):
    """A selected layer stays selected when the filter keeps it and the rows are re-sorted; one the
    filter hides drops out of the selection (as a proxy model did it)."""
    from PySide6.QtCore import Qt

    from trtstudio.ui.layer_table import COLUMN

    convs = [lay.index for lay in resnet.layers if "conv" in lay.name.lower()]
    other = next(lay.index for lay in resnet.layers if "conv" not in " ".join(
        [lay.name, lay.type, lay.tactic or "", *lay.onnx_nodes]).lower())
    table.select_layers([convs[2], convs[5], other])
    assert sorted(table.selected_layers()) == sorted([convs[2], convs[5], other])
    table.filter_edit.setText("conv")
    assert sorted(table.selected_layers()) == sorted([convs[2], convs[5]])
    table.table.sortByColumn(COLUMN["name"], Qt.SortOrder.DescendingOrder)
    assert sorted(table.selected_layers()) == sorted([convs[2], convs[5]])
    positions = table.visible_positions()
    names = [resnet.layers[p].name.lower() for p in positions]
    assert names == sorted(names, reverse=True) and len(positions) == table.model.rowCount()
    table.filter_edit.setText("")
    assert table.model.rowCount() == len(resnet.layers)
    assert sorted(table.selected_layers()) == sorted([convs[2], convs[5]])
    every = [resnet.layers[p].name.lower() for p in table.visible_positions()]
    assert every == sorted(every, reverse=True)  # still sorted by name


def test_sort_by_time_descending_puts_the_slowest_layer_first(table, resnet):
    from PySide6.QtCore import Qt

    from trtstudio.ui.layer_table import COLUMN, LAYER_INDEX_ROLE, SORT_ROLE

    timed = [lay for lay in resnet.layers if lay.time and lay.time.total_ms is not None]
    slowest = max(timed, key=lambda lay: lay.time.total_ms)
    fastest = min(timed, key=lambda lay: lay.time.total_ms)
    table.table.sortByColumn(COLUMN["total_ms"], Qt.SortOrder.DescendingOrder)
    first = table.model.index(0, COLUMN["total_ms"])
    assert table.model.data(first, LAYER_INDEX_ROLE) == slowest.index
    assert table.model.data(first, SORT_ROLE) == pytest.approx(slowest.time.total_ms)
    keys = [table.model.data(table.model.index(r, COLUMN["total_ms"]), SORT_ROLE)
            for r in range(table.model.rowCount())]
    known = [k for k in keys if k is not None]
    assert known == sorted(known, reverse=True)  # numerically, not as text
    assert keys[: len(known)] == known  # layers without time last
    table.table.sortByColumn(COLUMN["total_ms"], Qt.SortOrder.AscendingOrder)
    assert table.model.data(table.model.index(0, 0), LAYER_INDEX_ROLE) == fastest.index
    # text columns sort too
    table.table.sortByColumn(COLUMN["name"], Qt.SortOrder.AscendingOrder)
    names = [table.model.index(r, COLUMN["name"]).data() for r in range(table.model.rowCount())]
    assert names == sorted(names, key=str.lower)
    # equal texts keep layer order both ways, as Python's sorted() does (from ranks kept after the
    # column's first sort)
    types = [lay.type.lower() for lay in resnet.layers]
    assert len(set(types)) < len(types)
    for order, reverse in ((Qt.SortOrder.DescendingOrder, True), (Qt.SortOrder.AscendingOrder, False),
                           (Qt.SortOrder.DescendingOrder, True)):
        table.table.horizontalHeader().setSortIndicator(COLUMN["type"], order)
        assert table.visible_positions() == sorted(range(len(types)), key=types.__getitem__, reverse=reverse)
    # and the tensor columns, whose cells are made when first read
    table.table.sortByColumn(COLUMN["out_shapes"], Qt.SortOrder.DescendingOrder)
    shapes = [table.model.index(r, COLUMN["out_shapes"]).data() for r in range(table.model.rowCount())]
    assert shapes == sorted(shapes, key=str.lower, reverse=True) and len(set(shapes)) > 1


def test_filters_text_type_precision_and_has_finding(table, resnet):
    from trtstudio.ui.layer_table import LAYER_INDEX_ROLE

    def shown() -> set[int]:
        return {table.model.index(r, 0).data(LAYER_INDEX_ROLE) for r in range(table.model.rowCount())}

    table.filter_edit.setText("layer3")
    expected = {lay.index for lay in resnet.layers
                if "layer3" in " ".join([lay.name, lay.type, lay.tactic or "", *lay.onnx_nodes]).lower()}
    assert expected and shown() == expected
    assert table.totals.text().startswith(f"{len(expected)} layers shown of {len(resnet.layers)}")
    table.filter_edit.setText("")
    assert len(shown()) == len(resnet.layers)

    table.finding_check.setChecked(True)
    with_finding = {f.layer_index for f in resnet.findings if f.layer_index is not None}
    assert with_finding and shown() == with_finding
    table.finding_check.setChecked(False)

    i = table.type_combo.findData("CaskPooling")
    assert i > 0
    table.type_combo.setCurrentIndex(i)
    assert shown() == {lay.index for lay in resnet.layers if lay.type == "CaskPooling"}
    table.type_combo.setCurrentIndex(0)
    assert table.precision_combo.findData("FP16") > 0


def test_totals_row_sums_time(table, resnet):
    total = resnet.total_time_ms
    assert total and f"{total:.4g} ms" in table.totals.text()
    assert "100.0 % of engine" in table.totals.text()


def test_findings_column_lists_kinds(table, resnet):
    from trtstudio.ui.layer_table import COLUMN

    f = next(f for f in resnet.findings if f.layer_index is not None)
    row = table.model.row_of_position(next(p for p, lay in enumerate(resnet.layers) if lay.index == f.layer_index))
    assert f.kind in table.model.index(row, COLUMN["findings"]).data()


def test_select_layers_does_not_emit_but_user_click_does(qtbot, table, resnet):
    from PySide6.QtCore import Qt

    from trtstudio.ui.layer_table import COLUMN

    wanted = [resnet.layers[3].index, resnet.layers[5].index]
    with qtbot.assertNotEmitted(table.sig_layers_selected):
        table.select_layers(wanted)
    assert sorted(table.selected_layers()) == sorted(wanted)

    target = table.model.index(7, COLUMN["name"])
    rect = table.table.visualRect(target)
    expected = table.model.index(7, 0).data(Qt.ItemDataRole.UserRole + 2)
    with qtbot.waitSignal(table.sig_layers_selected, timeout=2000) as blocker:
        qtbot.mouseClick(table.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [[expected]]


def test_banner_shows_engine_warnings(qtbot, resnet):
    from trtstudio.engine.model import EngineInfo
    from trtstudio.ui.layer_table import LayerTableView

    view = LayerTableView()
    qtbot.addWidget(view)
    view.set_engine(resnet)
    assert view.banner.isHidden()
    info = EngineInfo(layers=resnet.layers[:4], detailed=False,
                      warnings=["names-only layer info: rebuild with --profilingVerbosity=detailed"])
    view.set_engine(info)
    assert not view.banner.isHidden() and "names-only" in view.banner.text()
    assert view.model.rowCount() == 4


def test_screenshot_layer_table(table):
    from PySide6.QtCore import Qt

    from trtstudio.ui.layer_table import COLUMN

    table.table.sortByColumn(COLUMN["total_ms"], Qt.SortOrder.DescendingOrder)
    assert table.grab().save("/tmp/layer_table.png")


def test_charts_bars_sum_to_total_time(qtbot, resnet):
    from trtstudio.ui.engine_charts import EngineChartsView

    view = EngineChartsView()
    qtbot.addWidget(view)
    view.resize(900, 400)
    view.set_engine(resnet)
    total = resnet.total_time_ms
    by_type = view.bars("type")
    by_prec = view.bars("precision")
    assert sum(h for _, h in by_type) == pytest.approx(total)
    assert sum(h for _, h in by_prec) == pytest.approx(total)
    types = {lay.type for lay in resnet.layers if lay.time and lay.time.total_ms is not None}
    assert {name for name, _ in by_type} == types
    assert float(view.by_type.item.opts["width"].sum()) == pytest.approx(total)
    assert float(view.by_precision.item.opts["width"].sum()) == pytest.approx(total)
    heights = [h for _, h in by_type]
    assert heights == sorted(heights, reverse=True)
    view.show()
    qtbot.waitExposed(view)
    assert view.grab().save("/tmp/engine_charts.png")


def test_charts_without_times_say_so(qtbot, resnet):
    from trtstudio.engine.model import EngineInfo, Layer
    from trtstudio.ui.engine_charts import EngineChartsView

    view = EngineChartsView()
    qtbot.addWidget(view)
    view.set_engine(EngineInfo(layers=[Layer(index=i, name=lay.name, type=lay.type)
                                       for i, lay in enumerate(resnet.layers)]))
    assert view.bars("type") == []
    assert "no per-layer times" in view.message.text()


def test_log_panel_filters_by_severity_and_text(qtbot):
    from trtstudio.ui.log_panel import LogPanel

    panel = LogPanel()
    qtbot.addWidget(panel)
    panel.append("VERBOSE", "tactic 0x1 chosen")
    panel.append("INFO", "building engine")
    panel.append("WARNING", "weights truncated to FP16")
    panel.append("ERROR", "no kernel for node Foo")
    panel.flush()
    assert panel.line_count() == 4
    assert [s for s, _ in panel.visible_lines()] == ["INFO", "WARNING", "ERROR"]  # default: info and up
    assert "tactic" not in panel.text.toPlainText() and "[E] no kernel" in panel.text.toPlainText()
    panel.set_min_severity("VERBOSE")
    assert len(panel.visible_lines()) == 4 and "tactic" in panel.text.toPlainText()
    panel.set_min_severity("WARNING")
    assert [s for s, _ in panel.visible_lines()] == ["WARNING", "ERROR"]
    panel.set_min_severity("VERBOSE")
    panel.filter_edit.setText("engine")
    assert panel.visible_lines() == [("INFO", "building engine")]
    assert "building engine" in panel.text.toPlainText()
    assert "tactic" not in panel.text.toPlainText()
    panel.clear()
    assert panel.line_count() == 0 and panel.text.toPlainText() == ""


def test_selection_survives_sorting_and_filtered_rows_are_not_selected(qtbot, table, resnet):
    from PySide6.QtCore import Qt

    from trtstudio.ui.layer_table import COLUMN

    wanted = sorted(lay.index for lay in resnet.layers[2:6])
    table.select_layers(wanted)
    with qtbot.assertNotEmitted(table.sig_layers_selected):
        table.table.sortByColumn(COLUMN["total_ms"], Qt.SortOrder.DescendingOrder)
    assert sorted(table.selected_layers()) == wanted  # persistent indexes moved with their rows
    table.table.sortByColumn(COLUMN["name"], Qt.SortOrder.DescendingOrder)
    assert sorted(table.selected_layers()) == wanted
    pooling = [lay.index for lay in resnet.layers if lay.type == "CaskPooling"]
    table.type_combo.setCurrentIndex(table.type_combo.findData("CaskPooling"))
    table.select_layers(wanted + pooling)
    assert sorted(table.selected_layers()) == sorted(pooling)


def test_findings_tab_lists_and_links_the_analysis(qtbot, trt_real: Path) -> None:
    """The Findings tab shows every finding of a real engine's analysis (as rows of a model, not
    items); clicking one emits its layer and nodes; a second analysis replaces the rows."""
    from trtstudio.engine.analysis import analyze
    from trtstudio.engine.load import load_engine
    from trtstudio.ui.engine_dock import EngineTabs

    folder = trt_real / RESNET
    if not folder.is_dir():
        pytest.skip(f"fixture {RESNET} absent")
    engine = load_engine([folder / "resnet18_fp16.graph.json", folder / "resnet18_fp16.profile.json"])
    analysis = analyze(engine, columns=True)
    assert analysis.findings
    tabs = EngineTabs()
    qtbot.addWidget(tabs)
    tabs.show_analysis(analysis)
    qtbot.waitUntil(lambda: tabs.finding_count() == len(analysis.findings), timeout=5000)
    assert tabs.tabText(tabs.indexOf(tabs.findings_view)) == f"Findings ({len(analysis.findings)})"
    model = tabs.findings_model
    row = next(r for r in range(model.rowCount()) if model.finding(r).layer_index is not None)
    f = model.finding(row)
    assert [model.data(model.index(row, c)) for c in range(5)] == [f.severity, f.kind, f.layer or "", f.message,
                                                                    f.hint]
    with qtbot.waitSignal(tabs.sig_finding_clicked) as clicked:
        tabs.findings_view.clicked.emit(model.index(row, 3))
    assert clicked.args == [f.layer_index, list(f.nodes)]
    fewer = analyze(engine.__class__(layers=engine.layers[:5]), columns=True)
    assert len(fewer.findings) != len(analysis.findings)
    tabs.show_analysis(fewer)
    qtbot.waitUntil(lambda: tabs.finding_count() == len(fewer.findings), timeout=5000)


def test_many_findings_in_a_hidden_tab_are_sized_from_a_few_rows(qtbot, monkeypatch) -> None:
    """30,000 findings arriving while the Findings tab is not the one shown: the columns are sized
    from a sample of rows, not from every row (4 s of the GUI thread when they were), and the rows
    are all listed."""
    from trtstudio.engine.model import Finding
    from trtstudio.ui import engine_dock
    from trtstudio.ui.engine_dock import EngineTabs

    asked: list[int] = []
    data = engine_dock.FindingsModel.data

    def counting(self, index, role=0):  # type: ignore[no-untyped-def]
        asked.append(index.row())
        return data(self, index, role)

    monkeypatch.setattr(engine_dock.FindingsModel, "data", counting)
    findings = [Finding("precision_fallback", "warning", f"layer {i} runs in FP32", "a hint", f"layer {i}", i)
                for i in range(30_000)]
    tabs = EngineTabs()
    qtbot.addWidget(tabs)
    tabs.show()
    assert tabs.currentWidget() is not tabs.findings_view
    tabs._gen += 1
    tabs._show_findings(tabs._gen, findings)
    assert tabs.finding_count() == 30_000
    # sized from the texts of the first rows in one go: no call into the model per cell, each of
    # which waits for the GIL while a worker runs
    assert not asked, f"{len(set(asked))} rows asked to size 30,000"
    view = tabs.findings_view
    ours = [view.columnWidth(c) for c in range(4)]
    assert ours[3] > ours[0]  # sized: the message is wider
    for c in range(4):  # as Qt sizes them from the rows' data
        view.resizeColumnToContents(c)
    assert asked and len(set(asked)) <= 1000, f"{len(set(asked))} rows asked to size 30,000"
    assert all(abs(a - view.columnWidth(c)) <= 2 for c, a in enumerate(ours)), (ours, [view.columnWidth(c) for c in range(4)])


def _synthetic(n: int):  # type: ignore[no-untyped-def]
    from trtstudio.engine.model import EngineInfo, Layer

    return EngineInfo(layers=[Layer(index=i, name=f"l{i}_{'conv' if i % 2 else 'pool'}",
                                    type="Conv" if i % 2 else "Pool") for i in range(n)])


@pytest.fixture
def wide(qtbot):  # type: ignore[no-untyped-def]
    """300 layers, every other a conv: a whole-table selection is over Qt's 1000-cell mark, where
    its selection model keeps "the whole table" through a layout change."""
    from trtstudio.ui.layer_table import LayerTableView

    view = LayerTableView()
    qtbot.addWidget(view)
    view.resize(1300, 600)
    view.set_engine(_synthetic(300))
    view.show()
    qtbot.waitExposed(view)
    return view


def _select_all(view) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    view.table.setFocus()
    QTest.keyClick(view.table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)


def test_a_whole_table_selection_goes_through_a_filter_by_layer(wide) -> None:  # type: ignore[no-untyped-def]
    wide.filter_edit.setText("conv")
    _select_all(wide)
    convs = sorted(wide.selected_layers())
    assert len(convs) == 150
    wide.filter_edit.setText("")  # the hidden pools do not come back selected
    assert sorted(wide.selected_layers()) == convs
    _select_all(wide)
    wide.filter_edit.setText("conv")  # layer 0, the selection's first corner, is hidden: the rest stays
    assert sorted(wide.selected_layers()) == convs


@pytest.mark.parametrize("which", ["layers", "findings"])
def test_selecting_every_row_does_not_ask_the_model_per_cell(qtbot, monkeypatch, which) -> None:  # type: ignore[no-untyped-def]
    """Ctrl+A and the paint after it: the column header used to ask Qt whether each column was
    wholly selected, which walks every row through the model's rowCount (1.1 s of the GUI thread
    at 50,000 layers). The selection is rows, and is complete; the header shows no column as
    selected."""
    from trtstudio.engine.model import Finding
    from trtstudio.ui import engine_dock, layer_table

    model_class = layer_table.LayerTableModel if which == "layers" else engine_dock.FindingsModel
    calls: list[int] = []
    row_count = model_class.rowCount

    def counting(self, parent=None):  # type: ignore[no-untyped-def]
        calls.append(1)
        return row_count(self, parent) if parent is not None else row_count(self)

    monkeypatch.setattr(model_class, "rowCount", counting)  # before the model is made: Qt's calls come here
    rows = 3000
    if which == "layers":
        view = layer_table.LayerTableView()
        view.set_engine(_synthetic(rows))
        table = view.table
    else:
        view = engine_dock.EngineTabs()
        view._gen += 1
        view._show_findings(view._gen, [Finding("reformat", "info", f"m{i}", "h", f"l{i}", i) for i in range(rows)])
        view.setCurrentWidget(view.findings_view)
        table = view.findings_view
    qtbot.addWidget(view)
    view.resize(1200, 600)
    view.show()
    qtbot.waitExposed(view)
    calls.clear()
    _select_all_of(table)
    table.viewport().repaint()
    table.horizontalHeader().viewport().repaint()
    assert len(calls) < rows // 10, f"{len(calls)} rowCount calls for a selection of {rows} rows"
    if which == "layers":  # its selection is a mask: Qt's range store stays empty
        assert len(view.selected_layers()) == rows and not table.selectionModel().selection().count()
    else:
        assert len(table.selectionModel().selectedRows()) == rows  # (this asks per row)
    assert not table.horizontalHeader().selectionModel().hasSelection()


def _select_all_of(table) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    table.setFocus()
    QTest.keyClick(table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)


def test_the_graph_hears_when_the_filter_hides_selected_rows(qtbot, wide) -> None:  # type: ignore[no-untyped-def]
    wide.select_layers([1, 2])
    with qtbot.waitSignal(wide.sig_layers_selected, timeout=1000) as got:
        wide.filter_edit.setText("conv")
    assert got.args == [[1]]
    with qtbot.assertNotEmitted(wide.sig_layers_selected):
        wide.filter_edit.setText("")  # nothing left the selection


def test_the_current_row_moves_to_the_next_shown_layer(wide) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QItemSelectionModel

    from trtstudio.ui.layer_table import LAYER_INDEX_ROLE

    sm = wide.table.selectionModel()
    sm.setCurrentIndex(wide.model.index(50, 2), QItemSelectionModel.SelectionFlag.NoUpdate)
    wide.filter_edit.setText("conv")  # layer 50 is a pool: the next conv below it, 51, is current
    cur = wide.table.currentIndex()
    assert cur.column() == 2 and wide.model.data(cur, LAYER_INDEX_ROLE) == 51
    wide.filter_edit.setText("")
    assert wide.model.data(wide.table.currentIndex(), LAYER_INDEX_ROLE) == 51


def test_the_log_tab_shows_the_log_an_engine_was_read_from(qtbot, sample_model) -> None:  # type: ignore[no-untyped-def]
    """An engine opened from a TensorRT-RTX build log shows that log in the Log tab, each line at
    the severity of its tag; an engine a build in the window just made (its log already streamed
    there) leaves the tab alone."""
    from trtstudio.engine.analysis import analyze
    from trtstudio.engine.load import load_engine
    from trtstudio.ui.engine_dock import EngineTabs

    log = sample_model.with_name("mobilenetv2_035.rtx-sm86.build.log")
    engine = load_engine([log])
    assert len(engine.log) > 2000
    tabs = EngineTabs()
    qtbot.addWidget(tabs)
    tabs.log_panel.append("INFO", "an earlier line")
    tabs.show_analysis(analyze(engine, columns=True))
    qtbot.waitUntil(lambda: tabs.log_panel.line_count() == len(engine.log) + 1, timeout=5000)
    lines = tabs.log_panel.lines()
    assert lines[0] == ("INFO", f"trtstudio: the log of {log}") and ("INFO", "an earlier line") not in lines
    tagged = {s for s, m in lines[1:] if m.startswith("[TRT] [V]")}
    assert tagged == {"VERBOSE"} and any(s == "INFO" and m.startswith("[TRT] [I]") for s, m in lines)
    qtbot.waitUntil(lambda: "[TRT] [I]" in tabs.log_panel.text.toPlainText(), timeout=5000)  # info and up shown
    built = engine.__class__(layers=engine.layers, sources=["m.engine", "<build log>"], log=["[TRT] [I] built"])
    tabs.show_analysis(analyze(built, columns=True))
    qtbot.waitUntil(lambda: tabs.finding_count() == len(analyze(built).findings), timeout=5000)
    qtbot.wait(50)
    assert tabs.log_panel.line_count() == len(engine.log) + 1  # unchanged


def test_a_long_log_is_written_in_slices(qtbot) -> None:  # type: ignore[no-untyped-def]
    from trtstudio.ui.log_panel import FLUSH_LINES, LogPanel

    panel = LogPanel()
    qtbot.addWidget(panel)
    for i in range(FLUSH_LINES * 2 + 10):
        panel.append("INFO", f"line {i}")
    panel.flush()
    assert panel.text.document().blockCount() == FLUSH_LINES  # one slice now, the rest on later turns
    qtbot.waitUntil(lambda: panel.text.document().blockCount() == FLUSH_LINES * 2 + 10, timeout=5000)
    assert panel.text.toPlainText().endswith(f"line {FLUSH_LINES * 2 + 9}")


def test_untagged_log_lines_keep_their_blocks_severity_and_a_logless_engine_clears_the_tab(qtbot) -> None:  # type: ignore[no-untyped-def]
    from trtstudio.engine.model import EngineInfo, Layer
    from trtstudio.ui.engine_dock import EngineTabs

    tabs = EngineTabs()
    qtbot.addWidget(tabs)
    log = ["[12/04/2026-10:00:00] [I] [TRT] building", "[TRT] [V] Engine Layer Information:",
           "Layer(CaskConvolution): conv1, Tactic: 0x1", "[W] careful: a message with [E] inside",
           "[TRT] [E] failed"]
    tabs.show_log(EngineInfo(layers=[Layer(0, "conv1")], sources=["run.log"], log=log))
    qtbot.waitUntil(lambda: tabs.log_panel.line_count() == len(log) + 1, timeout=5000)  # added on later turns
    assert tabs.log_panel.lines()[1:] == [("INFO", log[0]), ("VERBOSE", log[1]), ("VERBOSE", log[2]),
                                          ("WARNING", log[3]), ("ERROR", log[4])]
    tabs.show_log(EngineInfo(layers=[Layer(0, "conv1")], sources=["layers.json"]))
    assert tabs.log_panel.lines() == [("INFO", "trtstudio: no log for layers.json")]
    tabs.log_panel.append("INFO", "streamed by a build")
    tabs.show_log(EngineInfo(layers=[Layer(0, "conv1")], sources=["m.engine", "<build log>"], log=["[I] x"]))
    tabs.show_log(EngineInfo(layers=[Layer(0, "conv1")], sources=["other.json"]))
    assert ("INFO", "streamed by a build") in tabs.log_panel.lines()  # a build's log stays


def test_selected_layers_counts_whole_rows_from_the_ranges(wide) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QItemSelection, QItemSelectionModel

    sm = wide.table.selectionModel()
    cells = QItemSelection(wide.model.index(1, 2), wide.model.index(2, 3))  # cells, not rows
    sm.select(cells, QItemSelectionModel.SelectionFlag.ClearAndSelect)
    assert wide.selected_layers() == []
    wide.filter_edit.setText("l1")
    assert wide.selected_layers() == []
    wide.filter_edit.setText("")
    _select_all(wide)
    assert wide.selected_layers() == list(range(300))


def test_a_keystroke_that_hides_nothing_more_is_no_layout_change(qtbot, wide) -> None:  # type: ignore[no-untyped-def]
    """Typing "l", then "l1": "l" keeps every row, so the table does not change (a layout change
    made Qt walk a whole-table selection cell by cell: 10 s at 300,000 layers)."""
    _select_all(wide)
    with qtbot.assertNotEmitted(wide.model.layoutChanged), qtbot.assertNotEmitted(wide.sig_layers_selected):
        wide.filter_edit.setText("l")
    assert wide.model.rowCount() == 300 and len(wide.selected_layers()) == 300
    assert wide.totals.text().startswith("300 layers shown of 300")
    with qtbot.waitSignal(wide.model.layoutChanged):
        wide.filter_edit.setText("l1")
    assert 0 < wide.model.rowCount() < 300 and len(wide.selected_layers()) == wide.model.rowCount()


def test_a_long_log_goes_in_by_slices_keeping_the_panels_tail(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A verbose build log of a big engine runs to millions of lines: the tab takes the last lines
    the panel keeps, a slice per event-loop turn (the first untagged one at its block's severity),
    and a log still going in stops when another engine's replaces it."""
    from trtstudio.engine.model import EngineInfo, Layer
    from trtstudio.ui import engine_dock, log_panel
    from trtstudio.ui.engine_dock import EngineTabs

    monkeypatch.setattr(log_panel, "MAX_LINES", 1001)
    monkeypatch.setattr(engine_dock, "LOG_SLICE", 100)
    tabs = EngineTabs()
    qtbot.addWidget(tabs)
    log = ["[TRT] [W] a warning block:"] + [f"untagged {i}" for i in range(2999)]
    tabs.show_log(EngineInfo(layers=[Layer(0, "a")], sources=["big.log"], log=log))
    assert tabs.log_panel.line_count() == 1  # the header now, the lines on later turns
    qtbot.waitUntil(lambda: tabs.log_panel.line_count() == 1001, timeout=5000)
    lines = tabs.log_panel.lines()
    assert lines[0] == ("INFO", "trtstudio: the log of big.log") and lines[1:] == [("WARNING", m) for m in log[-1000:]]
    tabs.show_log(EngineInfo(layers=[Layer(0, "a")], sources=["one.log"], log=["[I] one"] * 500))
    tabs.show_log(EngineInfo(layers=[Layer(0, "a")], sources=["two.log"], log=["[E] two"]))
    qtbot.wait(100)
    assert tabs.log_panel.lines() == [("INFO", "trtstudio: the log of two.log"), ("ERROR", "[E] two")]


def test_a_sort_keeps_a_scattered_selection_by_layer(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Every other layer of 3,000 selected, then a sort: the same layers stay selected, the
    current row stays on its layer, nothing is emitted, and the layout change moves no persistent
    index per selected row (Qt's way took 0.6-0.9 s for 66,666 selected rows of 300,000)."""
    from PySide6.QtCore import QItemSelectionModel, Qt

    from trtstudio.ui.layer_table import COLUMN, LayerTableView

    view = LayerTableView()
    qtbot.addWidget(view)
    view.resize(1300, 600)
    view.set_engine(_synthetic(3000))
    view.show()
    wanted = list(range(0, 3000, 2))
    view.select_layers(wanted)
    sm = view.table.selectionModel()
    current_layer = view.model.layer_indices(view.model.positions()[[7]])[0]
    sm.setCurrentIndex(view.model.index(7, 0), QItemSelectionModel.SelectionFlag.NoUpdate)
    moved: list[int] = []
    change = view.model.changePersistentIndexList
    view.model.changePersistentIndexList = lambda old, new: moved.append(len(old)) or change(old, new)
    with qtbot.assertNotEmitted(view.sig_layers_selected):
        view.table.sortByColumn(COLUMN["name"], Qt.SortOrder.DescendingOrder)
    assert sorted(view.selected_layers()) == wanted
    assert view.model.positions()[0] != 0  # sorted: the rows moved
    row = view.table.currentIndex().row()
    assert view.model.layer_indices(view.model.positions()[[row]])[0] == current_layer
    assert moved and max(moved) < 10, moved


def test_a_selection_in_many_pieces_repaints_the_viewport_not_each_piece(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Qt unites a rectangle per selected piece into the region it repaints (0.16-0.3 s for 50,000
    pieces, to select them or to clear them); over REGION_RANGES_MAX pieces the table (the
    findings' RowsTable) repaints its viewport instead. A few pieces still repaint just their rows."""
    from PySide6.QtCore import QItemSelection, QItemSelectionModel
    from PySide6.QtGui import QStandardItemModel

    from trtstudio.ui.tables import REGION_RANGES_MAX, RowsTable

    table = RowsTable()
    qtbot.addWidget(table)
    model = QStandardItemModel(300, 4)
    table.setModel(model)
    table.resize(800, 600)
    table.show()
    sm = table.selectionModel()

    def rows(which: list[int]) -> QItemSelection:
        sel = QItemSelection()
        for r in which:
            sel.select(model.index(r, 0), model.index(r, 3))
        return sel

    sm.select(rows([3, 4]), QItemSelectionModel.SelectionFlag.ClearAndSelect)
    few = table.visualRegionForSelection(sm.selection()).boundingRect()
    row_h = table.rowHeight(3)
    assert 0 < few.height() <= 2 * row_h + 2
    many = rows(list(range(0, 2 * (REGION_RANGES_MAX + 10), 2)))
    assert many.count() == REGION_RANGES_MAX + 10
    assert table.visualRegionForSelection(many).boundingRect() == table.viewport().rect()


def _clicks_then_shift(qtbot, between, scattered: bool, first: int = 2) -> tuple[list[int], list[int]]:  # type: ignore[no-untyped-def]
    """Of 3,000 layers, those selected after: (every other from 20 on, over CARRIED_BY_QT_ROWS,
    when ``scattered``), a click on layer
    ``first`` (Ctrl+click with ``scattered``), a Ctrl+click on layer 5, ``between(view)`` (a sort or
    a filter), and a Shift+click on layer 7; and what Qt's own selection model gives: what was
    selected before the Shift+click and the shown rows from layer 5 to layer 7, in the order after
    ``between``."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from trtstudio.ui.layer_table import LayerTableView

    view = LayerTableView()
    qtbot.addWidget(view)
    view.resize(1300, 600)
    view.set_engine(_synthetic(3000))
    view.show()
    qtbot.waitExposed(view)
    table = view.table

    def click(layer: int, mods: Qt.KeyboardModifier) -> None:
        index = view.model.index(view.model.row_of_position(layer), 1)
        table.scrollTo(index)
        QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, mods, table.visualRect(index).center())

    ctrl = Qt.KeyboardModifier.ControlModifier
    if scattered:
        view.select_layers(list(range(20, 3000, 2)))
    click(first, ctrl if scattered else Qt.KeyboardModifier.NoModifier)
    click(5, ctrl)
    between(view)
    before = set(view.selected_layers())
    a, b = sorted((view.model.row_of_position(5), view.model.row_of_position(7)))
    spanned = view.model.layer_indices(view.model.positions()[a:b + 1]).tolist()
    click(7, Qt.KeyboardModifier.ShiftModifier)
    return sorted(view.selected_layers()), sorted(before | set(spanned))


@pytest.mark.parametrize("scattered", [False, True])
def test_a_shift_click_after_a_sort_adds_to_what_was_selected(qtbot, scattered: bool) -> None:  # type: ignore[no-untyped-def]
    """Rows selected before a sort stay selected through a Shift+click after it, as Qt's own
    selection model keeps them, with few rows selected or many."""
    from PySide6.QtCore import Qt

    from trtstudio.ui.layer_table import COLUMN

    def sort(view) -> None:  # type: ignore[no-untyped-def]
        view.table.sortByColumn(COLUMN["name"], Qt.SortOrder.DescendingOrder)

    ours, qts = _clicks_then_shift(qtbot, sort, scattered=scattered)
    assert ours == qts
    assert {2, 5, 7} <= set(ours) and (not scattered or set(range(20, 3000, 2)) <= set(ours))


def test_a_shift_click_after_a_filter_adds_to_what_was_selected(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The same through a filter change, which always carries the selection by layer: layer 3
    clicked, 5 Ctrl+clicked, the pooling layers filtered out (the even ones), then a Shift+click
    on layer 7 adds the shown rows from 5 to 7 and keeps 3 (it dropped 3 before)."""
    def convs(view) -> None:  # type: ignore[no-untyped-def]
        view.filter_edit.setText("conv")

    ours, qts = _clicks_then_shift(qtbot, convs, False, first=3)
    assert ours == qts == [3, 5, 7]


def _steps_of_selection(table, selected) -> list[list[int]]:  # type: ignore[no-untyped-def]
    """Clicks, Ctrl+clicks, Shift+clicks and Shift/Ctrl/plain arrows and Ctrl+A on ``table``; the
    rows ``selected()`` gives after each step."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    none, shift, ctrl = Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.ShiftModifier, Qt.KeyboardModifier.ControlModifier

    def click(row: int, mods: Qt.KeyboardModifier = none) -> None:
        QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, mods,
                         table.visualRect(table.model().index(row, 1)).center())

    def key(k: Qt.Key, mods: Qt.KeyboardModifier = none) -> None:
        QTest.keyClick(table, k, mods)

    table.setFocus()
    steps = [lambda: click(3), lambda: key(Qt.Key.Key_Down, shift), lambda: key(Qt.Key.Key_Down, shift),
             lambda: click(4, ctrl), lambda: key(Qt.Key.Key_Up, shift), lambda: click(9, ctrl),
             lambda: click(12, shift), lambda: click(10, ctrl), lambda: key(Qt.Key.Key_Down),
             lambda: key(Qt.Key.Key_Down, ctrl), lambda: key(Qt.Key.Key_Space, ctrl),
             lambda: key(Qt.Key.Key_A, ctrl), lambda: click(5, ctrl), lambda: click(8)]
    seen = []
    for step in steps:
        step()
        seen.append(sorted(selected()))
    return seen


def test_mouse_and_keys_select_as_qt_does_and_the_mask_is_painted(qtbot, wide) -> None:  # type: ignore[no-untyped-def]
    """The same clicks and keys select the same rows in the layer table (a mask) as in a table with
    Qt's own selection model; the graph hears each change; a selected row is painted in the
    palette's highlight colour from the mask (Qt's range store stays empty)."""
    from PySide6.QtGui import QPalette, QStandardItemModel
    from PySide6.QtWidgets import QAbstractItemView, QTableView

    plain = QTableView()
    qtbot.addWidget(plain)
    plain.setModel(QStandardItemModel(300, len(wide.model._text)))
    plain.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    plain.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    plain.resize(1300, 600)
    for c in range(plain.model().columnCount()):
        plain.setColumnWidth(c, wide.table.columnWidth(c))
    plain.show()
    qtbot.waitExposed(plain)
    qts = _steps_of_selection(plain, lambda: [i.row() for i in plain.selectionModel().selectedRows()])
    table = wide.table
    heard: list[list[int]] = []
    wide.sig_layers_selected.connect(lambda layers: heard.append(sorted(layers)))
    ours = _steps_of_selection(table, wide.selected_layers)
    assert ours == qts
    assert len({tuple(x) for x in ours}) > 8 and heard and heard[-1] == [8]
    assert not table.selectionModel().selection().count()
    highlight = table.palette().color(QPalette.ColorRole.Highlight)
    base = table.palette().color(QPalette.ColorRole.Base)
    wide.color_combo.setCurrentIndex(wide.color_combo.findData("none"))
    table.viewport().repaint()
    image = table.viewport().grab().toImage()

    def colour_at(row: int):  # type: ignore[no-untyped-def]
        r = table.visualRect(wide.model.index(row, 0))
        return image.pixelColor(r.left() + 2, r.center().y())

    assert colour_at(8) == highlight and colour_at(9) == base
    table.clearSelection()
    assert wide.selected_layers() == [] and heard[-1] == []


def test_text_ranks_order_as_python_orders_lower_case_strings() -> None:
    """The sort keys made with numpy over the texts' first 32 bytes (and Python within ties) rank
    as Python's own sort of the lower-case texts does: long shared prefixes, equal texts, accents,
    empty texts."""
    import random

    import numpy as np

    from trtstudio.ui.layer_table import text_rank

    rng = random.Random(7)
    stems = ["", "model/encoder/layers." * 3, "c12/MobileNet/", "Ünïcode/ß/"]
    texts = [rng.choice(stems) + "".join(rng.choice("aBc/_.0é") for _ in range(rng.randint(0, 12)))
             for _ in range(5000)]
    lower = sorted({t.lower() for t in texts})
    expected = np.array([lower.index(t.lower()) for t in texts])
    assert np.array_equal(text_rank(texts), expected)
    assert len(set(expected.tolist())) > 1000


def test_a_big_tables_first_text_sort_waits_for_its_keys_made_in_steps(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Above RANKED_IN_STEPS_ROWS the first sort by a text column makes its keys in steps between
    the events and sorts when they are made (the header shows the order at once); a sort by another
    column meanwhile wins."""
    from PySide6.QtCore import Qt

    from trtstudio.ui import layer_table
    from trtstudio.ui.layer_table import COLUMN, LayerTableView

    monkeypatch.setattr(layer_table, "RANKED_IN_STEPS_ROWS", 100)
    view = LayerTableView()
    qtbot.addWidget(view)
    view.set_engine(_synthetic(3000))
    view.table.sortByColumn(COLUMN["name"], Qt.SortOrder.DescendingOrder)
    assert view.model.sort_pending() and view.model.positions()[0] == 0
    qtbot.waitUntil(lambda: not view.model.sort_pending(), timeout=5000)
    names = [view.model.data(view.model.index(r, COLUMN["name"])) for r in range(3000)]
    assert names == sorted(names, reverse=True)
    view.table.sortByColumn(COLUMN["type"], Qt.SortOrder.AscendingOrder)
    view.table.sortByColumn(COLUMN["index"], Qt.SortOrder.DescendingOrder)
    qtbot.wait(300)
    assert not view.model.sort_pending() and view.model.positions()[0] == 2999


def _tied_engine(n: int):  # type: ignore[no-untyped-def]
    """``n`` layers whose names, types, output shapes and streams repeat (ties), differ in case
    only, share prefixes longer than 32 bytes, or are not ASCII; some streams unknown."""
    import random

    from trtstudio.engine.model import EngineInfo, Layer, TensorDesc

    rng = random.Random(32)
    stems = ["", "Reformatting CopyNode for Input Tensor 0 to /blk", "reformatting copynode for input tensor 0 to /BLK",
             "/encoder/layers.1/", "Ünïcode/ß/", "PWN(Mul, Sigmoid)"]
    layers = []
    for i in range(n):
        name = rng.choice(stems) + "".join(rng.choice("aBc/_.0é") for _ in range(rng.randint(0, 4)))
        shape: list[int | str] = [1, rng.choice([3, 8, 64]), rng.choice([7, 28])]
        layers.append(Layer(index=i, name=name, type=rng.choice(["Conv", "conv", "Pool", "Reformat", ""]),
                            outputs=[TensorDesc(name=f"t{i}", shape=shape)],
                            stream=rng.choice([None, 0, 1, 2])))
    return EngineInfo(layers=layers)


def test_a_big_tables_sort_in_steps_orders_as_pythons_sorted_and_keeps_the_selection(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A text column's first sort made in steps between the events (the table taken as big), then
    again from its kept keys, and a numeric column: in both directions the rows are the layers in
    the order of Python's stable ``sorted`` over the column (lower-case text; unknown numbers last;
    ties in layer order, descending too), the filter keeps its rows, and the selection, the current
    row and a persistent index follow their layers."""
    from PySide6.QtCore import QItemSelectionModel, QPersistentModelIndex, Qt

    from trtstudio.ui import layer_table
    from trtstudio.ui.layer_table import COLUMN, LayerTableView

    n = 3000
    monkeypatch.setattr(layer_table, "RANKED_IN_STEPS_ROWS", 100)
    monkeypatch.setattr(layer_table, "_CHUNK", 250)
    monkeypatch.setattr(layer_table, "RANK_TURN_S", 0.0)  # one step a turn
    steps_taken = []
    step = layer_table.LayerTableModel._rank_step
    monkeypatch.setattr(layer_table.LayerTableModel, "_rank_step", lambda self: steps_taken.append(1) or step(self))
    engine = _tied_engine(n)
    view = LayerTableView()
    qtbot.addWidget(view)
    view.resize(1300, 600)
    view.set_engine(engine)
    view.show()
    model = view.model
    view.filter_edit.setText("b")
    shown = {p for p in range(n) if "b" in model._haystack[p]}
    assert 0 < len(shown) < n and model.rowCount() == len(shown)
    wanted = [i for i in range(0, n, 3) if i in shown]
    view.select_layers(wanted)
    current_layer = int(model.positions()[5])
    view.table.selectionModel().setCurrentIndex(model.index(5, 2), QItemSelectionModel.SelectionFlag.NoUpdate)
    held = QPersistentModelIndex(model.index(11, 1))
    held_layer = int(model.positions()[11])

    def cell(key: str, p: int):  # type: ignore[no-untyped-def]
        return model._text[COLUMN[key]][p].lower()

    def stream(p: int) -> tuple[bool, float]:
        v = engine.layers[p].stream
        return (v is None, 0.0 if v is None else float(v))

    for key, order in [("name", Qt.SortOrder.AscendingOrder), ("name", Qt.SortOrder.DescendingOrder),
                       ("out_shapes", Qt.SortOrder.DescendingOrder), ("type", Qt.SortOrder.AscendingOrder),
                       ("stream", Qt.SortOrder.DescendingOrder), ("stream", Qt.SortOrder.AscendingOrder),
                       ("out_shapes", Qt.SortOrder.AscendingOrder), ("name", Qt.SortOrder.DescendingOrder)]:
        descending = order == Qt.SortOrder.DescendingOrder
        if key == "stream":  # unknown last both ways; equal values in layer order
            known = sorted((p for p in range(n) if not stream(p)[0]), key=lambda p: stream(p)[1], reverse=descending)
            expected = known + [p for p in range(n) if stream(p)[0]]
        else:
            expected = sorted(range(n), key=lambda p: cell(key, p), reverse=descending)  # noqa: B023
        before = len(steps_taken)
        view.table.horizontalHeader().setSortIndicator(COLUMN[key], order)
        qtbot.waitUntil(lambda: not model.sort_pending(), timeout=10_000)
        assert model.positions().tolist() == [p for p in expected if p in shown], (key, order)
        assert sorted(view.selected_layers()) == wanted
        assert [int(model.positions()[r]) for r in range(model.rowCount()) if model.selected[model.positions()[r]]] \
            == [p for p in expected if p in shown and p in set(wanted)]
        current = view.table.currentIndex()
        assert int(model.positions()[current.row()]) == current_layer and current.column() == 2
        assert held.isValid() and int(model.positions()[held.row()]) == held_layer and held.column() == 1
        if key in ("name", "out_shapes") and (key, descending) in (("name", False), ("out_shapes", True)):
            assert len(steps_taken) - before > 3  # a first sort: its keys made over several turns
    assert model.sort_pending() is False


def test_sort_order_orders_as_a_stable_argsort_with_unknowns_last() -> None:
    """``sort_order`` (a dense rank packed with the position, one plain sort) gives the rows that
    ``numpy.argsort(-keys if descending else keys, kind="stable")`` gives: ties (0.0 and -0.0 too)
    in position order both ways, NaN last both ways, infinities; and over text ranks."""
    import numpy as np

    from trtstudio.ui.layer_table import sort_order

    rng = np.random.default_rng(32)
    for n in (1, 2, 7, 1000, 5000):
        keys = np.round(rng.normal(size=n) * rng.choice([1.0, 1e300]), 1)
        pick = rng.random(n)
        keys[pick < 0.1] = np.nan
        keys[(pick > 0.1) & (pick < 0.2)] = -np.nan
        keys[(pick > 0.2) & (pick < 0.3)] = 0.0
        keys[(pick > 0.3) & (pick < 0.4)] = -0.0
        keys[(pick > 0.4) & (pick < 0.45)] = np.inf
        keys[(pick > 0.45) & (pick < 0.5)] = -np.inf
        ranks = np.unique(rng.integers(0, max(1, n // 4), n), return_inverse=True)[1].astype(np.int64)
        for descending in (False, True):
            assert sort_order(keys, descending).tolist() == \
                np.argsort(-keys if descending else keys, kind="stable").tolist()
            assert sort_order(ranks, descending, ranks=True).tolist() == \
                np.argsort(-ranks if descending else ranks, kind="stable").tolist()
    assert sort_order(np.array([2.0, np.nan, -0.0, 0.0, 2.0]), True).tolist() == [0, 4, 2, 3, 1]


def test_findings_landing_while_a_sort_by_them_is_made_in_steps_sort_by_the_new_ones(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A big table sorted by its Findings column before the diagnosis lands: the keys being made
    in steps are of the texts shown; the findings landing meanwhile (the same rows, new texts), the
    steps start over on the new texts and the rows come out ordered by them, the selection kept."""
    from PySide6.QtCore import Qt

    from trtstudio.engine.model import Finding
    from trtstudio.engine.table import base_columns, with_findings
    from trtstudio.ui import layer_table
    from trtstudio.ui.layer_table import COLUMN, LayerTableView

    monkeypatch.setattr(layer_table, "RANKED_IN_STEPS_ROWS", 100)
    monkeypatch.setattr(layer_table, "_CHUNK", 100)
    monkeypatch.setattr(layer_table, "RANK_TURN_S", 0.0)
    engine = _synthetic(2000)
    base = base_columns(engine)
    view = LayerTableView()
    qtbot.addWidget(view)
    view.set_engine(engine, base)
    view.select_layers([5, 6, 1999])
    view.table.sortByColumn(COLUMN["findings"], Qt.SortOrder.AscendingOrder)
    assert view.model.sort_pending()
    kinds = ["reformat", "plugin", "Fp32_island", "no_tensor_cores"]
    findings = [Finding(kind=kinds[i % 4], severity="warning", message="m", layer_index=i)
                for i in range(0, 2000, 3)]
    view.set_engine(engine, with_findings(base, engine, findings))  # the diagnosis lands
    assert view.model.sort_pending()
    qtbot.waitUntil(lambda: not view.model.sort_pending(), timeout=10_000)
    texts = [view.model.data(view.model.index(r, COLUMN["findings"])) for r in range(2000)]
    assert any(texts) and texts == sorted(texts, key=str.lower)
    shown = view.model.positions().tolist()
    assert shown == sorted(range(2000), key=lambda p: texts[shown.index(p)].lower())
    assert sorted(view.selected_layers()) == [5, 6, 1999]
