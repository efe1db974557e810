"""pytest-qt tests of the main window on real ONNX models."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnx_models as models
import pytest

pytestmark = pytest.mark.gui

pytest.importorskip("PySide6")

from PySide6.QtCore import QPointF, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from trtstudio.ui.main_window import MainWindow  # noqa: E402


def _open(qtbot, win: MainWindow, path: Path) -> None:
    with qtbot.waitSignal(win.sig_model_loaded, timeout=60000):
        win.open_model(str(path))


def _props(win: MainWindow) -> dict[str, str]:
    out = {}
    for i in range(win.props.topLevelItemCount()):
        item = win.props.topLevelItem(i)
        out[item.text(0)] = item.text(1)
    return out


def test_open_search_select_properties(qtbot, window: MainWindow, tmp_path: Path) -> None:
    p = tmp_path / "c.onnx"
    onnx.save(models.conv_net(), str(p))
    _open(qtbot, window, p)
    assert window.display is not None and window.display.n == 7 + 2  # nodes + input + output
    assert "7 (7 with subgraphs)" in window.summary.toPlainText()
    window.search.setText("Conv")
    assert window.search_label.text() == "2 matches"
    window.search_ctl.find_next()
    assert window.search_label.text() == "1 of 2"
    first = window.view.current
    window.search_ctl.find_next()
    assert window.view.current != first
    props = _props(window)
    assert props["Op type"] == "Conv"
    assert props["Name"] == "/conv2/Conv"
    # initializer details (shape, bytes, stats) are in the Inputs section
    inputs = window.props.findItems("Inputs", Qt.MatchFlag.MatchExactly)[0]
    w2 = [inputs.child(i) for i in range(inputs.childCount()) if inputs.child(i).text(0) == "w2"][0]
    assert "[8,8,3,3]" in w2.text(1) and "initializer" in w2.text(1)
    assert any(w2.child(i).text(1) == "2.2 KiB" or "KiB" in w2.child(i).text(1) for i in range(w2.childCount()))
    # tensor search finds consumers and producer of r1
    window.search.setText("r1")
    assert window.search_label.text() == "3 matches"


def test_click_selects_node(qtbot, window: MainWindow, tmp_path: Path) -> None:
    p = tmp_path / "c.onnx"
    onnx.save(models.conv_net(), str(p))
    _open(qtbot, window, p)
    view = window.view
    gi = window.model.graph.node_by_name["/relu/Relu"]
    di = window.display.display_index(gi)
    view.select([di], center=True)
    qtbot.wait(10)
    lay = window.display.lay
    pos = QPointF((lay.x[di] - view.offset.x()) * view.scale, (lay.y[di] - view.offset.y()) * view.scale)
    view.select([], center=False)
    with qtbot.waitSignal(view.sig_node_selected, timeout=2000) as blocker:
        qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=pos.toPoint())
    assert blocker.args == [di]
    assert _props(window)["Op type"] == "Relu"


def test_subgraph_opens_in_tab(qtbot, window: MainWindow, tmp_path: Path) -> None:
    p = tmp_path / "s.onnx"
    onnx.save(models.with_subgraphs(), str(p))
    _open(qtbot, window, p)
    di = window.display.display_index(window.model.graph.node_by_name["loop"])
    window.view.sig_node_activated.emit(di)
    assert window.tabs.count() == 2 and window.tabs.tabText(1) == "loop.body"
    body_view = window.tabs.widget(1)
    assert sorted(body_view.dg.labels[i] for i in range(body_view.dg.n) if body_view.dg.kind[i] == 1) == \
        ["Add", "Identity"]


def test_bad_file_keeps_open_model(qtbot, window: MainWindow, tmp_path: Path) -> None:
    p = tmp_path / "c.onnx"
    onnx.save(models.conv_net(), str(p))
    _open(qtbot, window, p)
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(p.read_bytes()[:200])
    with qtbot.waitSignal(window.sig_error, timeout=30000) as blocker:
        window.open_model(str(bad))
    assert str(bad) in blocker.args[0] and "\n" not in blocker.args[0]
    assert window.model.path == str(p)  # what was open is still open
    assert window.display.n == 9


def test_engine_links_to_graph(qtbot, window: MainWindow, sample_model: Path) -> None:
    log = sample_model.with_name("mobilenetv2_035.rtx-sm86.build.log")
    if not log.exists():
        pytest.skip("demo engine log absent")
    _open(qtbot, window, sample_model)
    with qtbot.waitSignal(window.sig_engine_loaded, timeout=60000):
        window.open_engine([str(log)])
    assert window.mapping is not None
    engine = window.engine
    li = next(i for i, lay in enumerate(engine.layers) if lay.onnx_nodes)
    window.select_layers([li])
    selected_names = {window.display.graph.nodes[window.display.node_index(d)].name for d in window.view.selected}
    assert selected_names == set(engine.layers[li].onnx_nodes)
    # every row of the table (Ctrl+A): the nodes come as graph indices from the analysis
    table = window.engine_tabs.layer_table.table
    table.setFocus()
    QTest.keyClick(table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert window.workspace.selection.node_index is not None
    selected_names = {window.display.graph.nodes[window.display.node_index(d)].name for d in window.view.selected}
    assert selected_names == {n for lay in engine.layers for n in lay.onnx_nodes} and len(selected_names) > 50
    window.overlay.setCurrentText("Precision")
    assert window.view.folded is not None
    assert len(window.view.legend) >= 2


def test_screenshot_cli_not_blank(tmp_path: Path) -> None:
    p = tmp_path / "c.onnx"
    onnx.save(models.conv_net(), str(p))
    out = tmp_path / "shot.png"
    res = subprocess.run([sys.executable, "-m", "trtstudio", "gui", str(p), "--screenshot", str(out)],
                         capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert res.returncode == 0, res.stderr
    from PySide6.QtGui import QImage

    img = QImage(str(out))
    assert (img.width(), img.height()) == (1600, 1000)
    ptr = img.convertToFormat(QImage.Format.Format_RGB32).constBits()
    arr = np.frombuffer(ptr, np.uint8).reshape(1000, 1600, 4)
    assert len(np.unique(arr.reshape(-1, 4)[::97], axis=0)) > 20  # many colours: nodes, text, widgets


def test_screenshot_cli_bad_model(tmp_path: Path) -> None:
    bad = tmp_path / "x.onnx"
    bad.write_text("not a model")
    res = subprocess.run([sys.executable, "-m", "trtstudio", "gui", str(bad), "--screenshot", str(tmp_path / "o.png")],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and res.stderr.startswith(f"error: {bad}:")


def test_settings_recent_files_and_theme(qtbot, tmp_path: Path) -> None:
    p = tmp_path / "c.onnx"
    onnx.save(models.conv_net(), str(p))
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    _open(qtbot, win, p)
    assert win.recent_files()[0] == str(p.resolve())
    win.set_theme("Dark")
    assert win.theme == "Dark" and win.view.dark
    win.resize(900, 790)
    saved = win.size()
    win.close()
    again = MainWindow()
    qtbot.addWidget(again)
    assert again.theme == "Dark"  # remembered
    # geometry restored rather than the 1600x1000 default (the offscreen screen clamps it to 800x800)
    assert again.size() != win.size() or saved == again.size()
    assert again.size().width() < 1600 and not again.prefs.qsettings().value("window/geometry").isEmpty()
    assert not again.prefs.qsettings().value("window/state").isEmpty()
    again.recent_menu.aboutToShow.emit()  # as when the user opens File > Open recent
    assert [a.text() for a in again.recent_menu.actions()][0] == str(p.resolve())
    again.set_theme("Light")
    again.close()


@pytest.mark.rtx
def test_parser_rejections_marked_on_graph(qtbot, window: MainWindow, tmp_path: Path) -> None:
    pytest.importorskip("tensorrt_rtx")
    from trtstudio.backends.build import parse_onnx

    p = tmp_path / "custom.onnx"
    onnx.save(models.custom_op(), str(p))
    _open(qtbot, window, p)
    rejected = parse_onnx(str(p), "rtx")  # the real TensorRT-RTX ONNX parser
    assert [u["node"] for u in rejected] == ["frob"]
    window.mark_unsupported(rejected)
    frob = window.display.display_index(window.model.graph.node_by_name["frob"])
    assert window.view.flagged == {frob}


def test_precision_heat_overlay(qtbot, window: MainWindow, tmp_path: Path) -> None:
    p = tmp_path / "c.onnx"
    onnx.save(models.conv_net(), str(p))
    _open(qtbot, window, p)
    window.show_node_errors({"/conv1/Conv": 0.001, "/fc/Gemm": 0.01})
    g = window.model.graph
    fill = window.view.fill_color
    worst = fill(window.display.display_index(g.node_by_name["/fc/Gemm"]))
    mild = fill(window.display.display_index(g.node_by_name["/conv1/Conv"]))
    assert worst.lightness() < mild.lightness()  # worse error = darker
    window.tools.open_precision_dialog()
    assert window.precision_dialog.isVisible()


def test_export_report_and_session_roundtrip(qtbot, window: MainWindow, sample_model: Path, tmp_path: Path) -> None:
    import json

    log = sample_model.with_name("mobilenetv2_035.rtx-sm86.build.log")
    _open(qtbot, window, sample_model)
    with qtbot.waitSignal(window.sig_engine_loaded, timeout=60000):
        window.open_engine([str(log)])
    html_path = tmp_path / "r.html"
    with qtbot.waitSignal(window.sig_report_written, timeout=60000):
        window.export_report(str(html_path))
    text = html_path.read_text()
    assert "mobilenetv2_035" in text and "http://" not in text and "https://" not in text
    with qtbot.waitSignal(window.sig_report_written, timeout=60000):
        window.export_report(str(tmp_path / "a.json"))
    sess = tmp_path / "s.trtstudio"
    with qtbot.waitSignal(window.sig_session_saved, timeout=60000):
        window.save_session(str(sess))
    other = MainWindow()
    qtbot.addWidget(other)
    with qtbot.waitSignal(other.sig_model_loaded, timeout=60000):
        other.open_session(str(sess))
    assert len(other.engine.layers) == len(window.engine.layers) == 56
    assert other.model.path == str(sample_model)
    with qtbot.waitSignal(other.sig_report_written, timeout=60000):
        other.export_report(str(tmp_path / "b.json"))
    a = json.loads((tmp_path / "a.json").read_text())
    b = json.loads((tmp_path / "b.json").read_text())
    assert a["schema"] == b["schema"] == "trtstudio.report/1"
    assert [r["name"] for r in a["layers"]] == [r["name"] for r in b["layers"]]
    other.shutdown()


def test_status_bar_names_backends_and_gpu(qtbot, window: MainWindow) -> None:
    if not window.environment:
        with qtbot.waitSignal(window.sig_environment, timeout=60000):
            pass
    text = window.status_label.text()
    assert "backends:" in text and "GPU:" in text
    assert ("onnxruntime" in text) == any(i["name"] == "onnxruntime" and i["status"] == "ok"
                                          for i in window.environment)


@pytest.mark.rtx
def test_check_support_paints_the_graph(qtbot, window: MainWindow, tmp_path: Path) -> None:
    """Engine > Check TensorRT support (the real TensorRT-RTX parser): the rejected node is flagged
    and coloured unsupported, the others supported, before any build."""
    pytest.importorskip("tensorrt_rtx")
    from trtstudio.engine.overlay import SUPPORT_COLORS

    p = tmp_path / "custom.onnx"
    onnx.save(models.custom_op(), str(p))
    _open(qtbot, window, p)
    window.loader.check_support()
    qtbot.waitUntil(lambda: window.loader.last_check is not None and not window.is_busy(), timeout=60000)
    g, dg = window.model.graph, window.display
    frob = dg.display_index(g.node_by_name["frob"])
    assert window.view.flagged == {frob}
    assert [u["node"] for u in window.workspace.unsupported] == ["frob"]
    assert window.view.legend and window.view.legend[0][0] == "supported by TensorRT"
    states = window.loader.last_check.node_states(g)
    assert states["frob"]["state"] == "unsupported"
    for node in g.nodes:
        color = window.view.fill_color(dg.display_index(node.index)).name()
        if states[node.name]["state"] == "supported":
            assert color == SUPPORT_COLORS["supported"], node.name
        else:
            assert color in (SUPPORT_COLORS["unsupported"], SUPPORT_COLORS["boundary"]), node.name


@pytest.mark.rtx
def test_support_overlay_survives_the_reanalysis_it_starts(qtbot, window: MainWindow, sample_model: Path) -> None:
    """With an engine open, the support check's rejections start a new engine analysis; the support
    colours stay on the graph when it arrives."""
    pytest.importorskip("tensorrt_rtx")
    log = sample_model.with_name("mobilenetv2_035.rtx-sm86.build.log")
    _open(qtbot, window, sample_model)
    with qtbot.waitSignal(window.sig_engine_loaded, timeout=60000):
        window.open_engine([str(log)])
    qtbot.waitUntil(lambda: window.analysis is not None and not window.is_busy(), timeout=60000)
    before = window.analysis
    window.loader.check_support()
    qtbot.waitUntil(lambda: window.loader.last_check is not None and window.analysis is not before
                    and not window.is_busy(), timeout=60000)
    assert window.view.legend and window.view.legend[0][0] == "supported by TensorRT"


def _deferred_window(qtbot) -> MainWindow:  # type: ignore[no-untyped-def]
    win = MainWindow(defer_plots=True)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    return win


def test_plots_follow_the_model_on_screen(qtbot, sample_model: Path) -> None:
    """``trtstudio gui M``: the plot panels are made once the model is shown, and show it and the
    engine opened before them."""
    log = sample_model.with_name("mobilenetv2_035.rtx-sm86.build.log")
    win = _deferred_window(qtbot)
    try:
        assert win.plots_pending() and win.profile_panel is None and win.charts is None
        _open(qtbot, win, sample_model)
        if log.exists():
            with qtbot.waitSignal(win.sig_engine_loaded, timeout=60000):
                win.open_engine([str(log)])
        qtbot.waitUntil(lambda: not win.plots_pending(), timeout=30000)
        panel = win.profile_panel
        assert panel is not None and panel._model == str(sample_model)
        # its live plots were made a plot per event-loop turn, and completely
        from trtstudio.ui.live_panels import LivePanels

        whole = LivePanels()
        assert not panel.live.build_step() and set(panel.live.curves) == set(whole.curves)
        assert list(panel.live.toggles) == list(whole.toggles)
        # put on screen a plot per turn, and at the end all of them (each as its toggle says)
        assert panel.live.isVisible() and all(
            w.isVisible() == panel.live._shown(w) for w in panel.live._group_of)
        whole.deleteLater()
        assert win.engine_tabs.indexOf(win.charts) == 1  # after the layer table, as when made at once
        holder = win.tools.profile_holder
        assert holder.count() == 1 and holder.widget(0) is panel  # the placeholder is gone
        if log.exists():
            assert win.charts._engine is win.engine  # the engine shown before the charts existed
    finally:
        win.shutdown()


def test_plots_come_when_the_model_does_not_open(qtbot, tmp_path: Path) -> None:
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"\x08\x07" + b"\xff" * 50)
    win = _deferred_window(qtbot)
    try:
        with qtbot.waitSignal(win.sig_error, timeout=30000):
            win.open_model(str(bad))
        qtbot.waitUntil(lambda: not win.plots_pending(), timeout=30000)
        assert win.profile_panel is not None and win.charts is not None
    finally:
        win.shutdown()


def test_docks_of_a_deferred_window_come_after_its_first_paint(qtbot) -> None:
    """``trtstudio gui M``: the docks' content waits behind a blank page until the window has
    painted once, then comes a dock per turn, each dock keeping its size."""
    from PySide6.QtWidgets import QStackedWidget

    win = MainWindow(defer_plots=True)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    try:
        stacks = [d.widget() for d in (win.model_dock, win.engine_dock, win.profile_dock)]
        assert all(isinstance(s, QStackedWidget) and s.currentIndex() == 0 for s in stacks)
        assert win.plots_pending()
        win._docks_sized = True  # as with a saved layout: the first start's sizing is another test's
        win.show()
        sizes = [(d.width(), d.height()) for d in (win.model_dock, win.engine_dock, win.profile_dock)]
        qtbot.waitUntil(lambda: all(s.currentIndex() == 1 for s in stacks), timeout=5000)
        assert stacks[0].currentWidget() is win.side_tabs and stacks[1].currentWidget() is win.engine_tabs
        assert win.layer_table.isVisible()
        assert [(d.width(), d.height()) for d in (win.model_dock, win.engine_dock, win.profile_dock)] == sizes
        plain = MainWindow()  # not deferred: the content goes straight into the docks
        qtbot.addWidget(plain)
        assert plain.engine_dock.widget() is plain.engine_tabs
    finally:
        win.shutdown()


@pytest.mark.parametrize(("size", "wide"), [((1600, 1000), True), ((1580, 1000), True), ((1920, 1080), True),
                                             ((1400, 900), False), ((1500, 900), False)])
def test_first_start_leaves_the_graph_room_beside_the_live_profile(qtbot, monkeypatch, size: tuple[int, int],
                                                                   wide: bool) -> None:
    """With no saved layout, the live profile is as wide as its controls until a run is drawn; then
    the graph keeps at least a quarter of the window's width, and the live profile keeps its
    controls beside its plots where the window leaves room for both, and stacks them (leaving the
    graph 40%) where it does not."""
    from trtstudio.profiling.samples import SampleBuffer
    from trtstudio.ui.settings import PROFILE_CONTROLS_PX, PROFILE_WIDE_PX, AppSettings, default_dock_widths

    for width in range(1000, 3000, 40):
        model, profile = default_dock_widths(width)
        graph = width - model - profile
        assert graph >= width // 4, width
        assert profile > PROFILE_WIDE_PX or graph >= width * 0.4, width
        assert default_dock_widths(width, run_shown=False)[1] == PROFILE_CONTROLS_PX
    # as at a first start, whatever layout another test's window (or the developer's own, where Qt
    # keeps settings outside XDG_CONFIG_HOME) saved: nothing is removed from the settings
    monkeypatch.setattr(AppSettings, "has_window_state", lambda self: False)
    monkeypatch.setattr(AppSettings, "restore_window", lambda self, window: False)
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(*size)
    try:
        win.show()
        qtbot.waitExposed(win)
        qtbot.waitUntil(lambda: win.profile_panel is not None, timeout=10000)
        panel = win.profile_panel
        assert panel is not None
        qtbot.waitUntil(lambda: panel._split.orientation() == Qt.Orientation.Vertical, timeout=5000)
        qtbot.waitUntil(lambda: win.profile_dock.width() <= PROFILE_CONTROLS_PX + 10, timeout=5000)  # no run yet
        panel.live.attach(SampleBuffer(100))  # a run drawn: the dock widens to its plots
        panel.live.finish(None)
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        qtbot.waitUntil(lambda: panel._split.orientation() == orientation, timeout=5000)
        assert win.view.width() >= size[0] // 4
        assert (panel.width() >= PROFILE_WIDE_PX) == wide
    finally:
        win.shutdown()


def test_docks_come_without_a_paint_and_a_hidden_window_waits_for_none(qtbot) -> None:
    """A shown window that is never painted (occluded, another workspace) still gets its docks'
    content; a deferred window never shown does not keep wait_idle waiting for them."""
    from PySide6.QtWidgets import QMainWindow, QStackedWidget

    class Unpainted(MainWindow):
        def paintEvent(self, event) -> None:  # noqa: N802, ANN001 - no first paint starts the flips
            QMainWindow.paintEvent(self, event)

    hidden = MainWindow(defer_plots=True)
    qtbot.addWidget(hidden)
    hidden.stager.state = "built"  # the plot panels aside: only the docks are asked about here
    assert hidden.stager.staged and not hidden.plots_pending()
    win = Unpainted(defer_plots=True)
    qtbot.addWidget(win)
    try:
        win.show()
        stacks = [d.widget() for d in (win.model_dock, win.engine_dock, win.profile_dock)]
        assert all(isinstance(s, QStackedWidget) for s in stacks)
        qtbot.wait(100)
        assert all(s.currentIndex() == 0 for s in stacks)  # no paint: the fallback timer has not come yet
        qtbot.waitUntil(lambda: all(s.currentIndex() == 1 for s in stacks), timeout=5000)
    finally:
        win.shutdown()
        hidden.shutdown()


def test_live_plots_no_panel_takes_are_not_left_as_a_window(qtbot, sample_model: Path, monkeypatch) -> None:
    """Without the ProfilePanel (its import fails), the plots made for it must not open as a
    window of their own, and the window stops waiting for them."""
    from PySide6.QtWidgets import QApplication

    monkeypatch.setitem(sys.modules, "trtstudio.ui.profile_panel", None)  # import fails
    win = _deferred_window(qtbot)
    try:
        _open(qtbot, win, sample_model)
        qtbot.waitUntil(lambda: not win.plots_pending(), timeout=30000)
        qtbot.wait(50)
        assert win.profile_panel is None
        shown = [w for w in QApplication.topLevelWidgets() if w.isVisible()]
        assert shown == [win]
    finally:
        win.shutdown()


def test_live_panels_made_in_steps_are_the_panels_made_at_once(qtbot) -> None:
    from trtstudio.ui.live_panels import LivePanels

    whole = LivePanels()
    stepped = LivePanels(in_steps=True)
    qtbot.addWidget(whole)
    qtbot.addWidget(stepped)
    steps = 0
    while stepped.build_step():
        steps += 1
    assert steps >= 5  # a plot per step, not all in one
    assert not stepped.build_step()  # and done stays done
    assert set(stepped.curves) == set(whole.curves) and list(stepped.toggles) == list(whole.toggles)
    assert stepped._grid.count() == whole._grid.count()


def test_live_panels_revealed_a_plot_per_step_end_as_placed(qtbot) -> None:
    """The window puts the pre-made panels on screen a plot per turn; a group unticked meanwhile
    stays hidden."""
    from trtstudio.profiling.samples import SampleBuffer
    from trtstudio.ui.live_panels import LivePanels

    live = LivePanels()
    qtbot.addWidget(live)
    live.show()
    assert not any(w.isVisible() for w in live._group_of) and live.empty_bar.isVisible()  # no run yet: one line
    from trtstudio.profiling.memory import MemoryMonitor

    monitor = MemoryMonitor()
    monitor.record(0)  # host RSS at least: the memory row has a plot to show
    live.attach(SampleBuffer(100), monitor)
    live.finish(None)
    placed = {w: w.isVisible() for w in live._group_of}
    assert placed[live.host_mem_plot] and placed[live.latency_plot] and not live.empty_bar.isVisible()
    assert all(v == live._shown(w) for w, v in placed.items())
    live.hide()
    steps = live.reveal_steps()
    assert next(steps) and live.isVisible()
    assert not any(w.isVisible() for w in live._group_of)  # the panel first, its plots after
    shown_per_step = [sum(w.isVisible() for w in live._group_of)]
    live.toggles["Memory"].setChecked(False)  # unticked while the plots come
    for _ in steps:
        shown_per_step.append(sum(w.isVisible() for w in live._group_of))
    shown_per_step.append(sum(w.isVisible() for w in live._group_of))
    assert shown_per_step == sorted(shown_per_step) and len(shown_per_step) >= 5
    assert not live.gpu_mem_plot.isVisible() and not live.host_mem_plot.isVisible()
    assert live.latency_plot.isVisible() and live.hist_plot.isVisible()


def _drop(window: MainWindow, paths: list[Path]) -> None:
    from PySide6.QtCore import QMimeData, QUrl
    from PySide6.QtGui import QDropEvent

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)


def test_a_drop_opens_each_file_by_its_kind(qtbot, window: MainWindow, tmp_path: Path) -> None:
    """A drop goes through filekinds.classify, as `trtstudio gui` does: the model opens, a second
    model and a Triton sweep session are refused in one line each, naming the file."""
    from trtstudio.filekinds import TRITON_SCHEMA

    model, second = tmp_path / "c.onnx", tmp_path / "d.onnx"
    onnx.save(models.conv_net(), str(model))
    onnx.save(models.conv_net(), str(second))
    triton = tmp_path / "sweep.json"
    triton.write_text(f'{{"schema": "{TRITON_SCHEMA}", "steps": []}}')
    errors: list[str] = []
    window.sig_error.connect(errors.append)
    with qtbot.waitSignal(window.sig_model_loaded, timeout=60000):
        _drop(window, [model, second, triton])
    assert window.model.path == str(model)
    assert any(str(second) in e and "one ONNX model" in e for e in errors), errors
    assert any(str(triton) in e and "Triton" in e for e in errors), errors
    assert all("\n" not in e for e in errors)


def test_a_pytorch_file_goes_to_the_live_profile_panel(qtbot, window: MainWindow, tmp_path: Path) -> None:
    """File > Open of a .pt2 does not try to read it as an engine: the Live profile panel shows it
    and offers the PyTorch backends, with the backend `trtstudio profile` picks on auto."""
    from trtstudio.backends.catalogue import default_backend

    qtbot.waitUntil(lambda: window.profile_panel is not None, timeout=60000)
    pt2 = tmp_path / "net.pt2"
    pt2.write_bytes(b"PK\x03\x04 not a real archive")  # the choice is made before the file is read
    errors: list[str] = []
    window.sig_error.connect(errors.append)
    window.open_path(str(pt2))
    panel = window.profile_panel
    assert panel._model == str(pt2)
    assert panel.backend_combo.currentData() == default_backend(str(pt2)) == "torch"
    assert window.engine is None and not errors


# -- a session is the app's own document ---------------------------------------------------------
@pytest.fixture
def saved_session(sample_model: Path, tmp_path: Path) -> Path:
    """A session as `trtstudio profile --session` writes it (a real ONNX Runtime run of the sample),
    its model beside it under a relative path (both moved together since)."""
    pytest.importorskip("onnxruntime")
    import shutil

    folder = tmp_path / "shared-run"
    folder.mkdir()
    shutil.copy(sample_model, folder / "model.onnx")
    res = subprocess.run([sys.executable, "-m", "trtstudio", "profile", "model.onnx", "--backend", "ort",
                          "--iterations", "150", "--session", "run.trtstudio"], capture_output=True, text=True,
                         cwd=folder, timeout=300, env={**__import__("os").environ,
                                                       "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert res.returncode == 0, res.stderr
    return folder / "run.trtstudio"


def _saved_run_drawn(win: MainWindow, n: int) -> bool:
    panel = win.profile_panel
    return (panel is not None and panel.live.samples is not None and panel.live.samples.count == n
            and panel.live.stat_labels["count"].text() == str(n))


def test_a_session_opens_from_a_drop_file_open_and_recent_files(qtbot, window: MainWindow, saved_session: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Dropped on the window, a session brings its model (found beside it), its run drawn in the
    Live profile panels with the saved statistics, and goes first in File > Open recent; File > Open
    offers sessions and opens one; a recent session opens in a new window."""
    from trtstudio.report import load_session

    saved = load_session(saved_session).runs[-1]
    errors: list[str] = []
    window.sig_error.connect(errors.append)
    with qtbot.waitSignal(window.sig_session_loaded, timeout=60000), \
            qtbot.waitSignal(window.sig_model_loaded, timeout=60000):
        _drop(window, [saved_session])
    assert window.model.path == str(saved_session.parent / "model.onnx") and errors == []
    qtbot.waitUntil(lambda: _saved_run_drawn(window, 150), timeout=60000)
    assert window.profile_panel.live.statistics()["latency_ms"]["median"] == saved.stats["latency_ms"]["median"]
    snap = window.profile_panel.live.samples.snapshot()
    assert np.allclose(snap["latency_ms"], saved.latency_ms.astype(np.float64))
    run = window.workspace.runs[-1]
    assert run.status == "finished" and run.data.latency_ms.size == 150
    assert window.recent_files()[0] == str(saved_session.resolve())
    window.recent_menu.aboutToShow.emit()
    first = window.recent_menu.actions()[0]
    assert first.text() == f"{saved_session.resolve()}  (session)" and first.isEnabled()

    from trtstudio.ui import main_window as mw

    asked: list[str] = []

    def chosen(_parent, _title, _folder, filters):  # the user picks the session in File > Open's dialog
        asked.append(filters)
        return str(saved_session), ""

    monkeypatch.setattr(mw.QFileDialog, "getOpenFileName", chosen)
    other = MainWindow()
    qtbot.addWidget(other)
    other.show()
    with qtbot.waitSignal(other.sig_session_loaded, timeout=60000), qtbot.waitSignal(other.sig_model_loaded, timeout=60000):
        other.act_open.trigger()
    assert "*.trtstudio" in asked[0].split(";;")[0] and "trtstudio sessions (*.trtstudio)" in asked[0]
    qtbot.waitUntil(lambda: _saved_run_drawn(other, 150), timeout=60000)
    other.shutdown()

    again = MainWindow()
    qtbot.addWidget(again)
    again.show()
    again.recent_menu.aboutToShow.emit()
    with qtbot.waitSignal(again.sig_session_loaded, timeout=60000):
        again.recent_menu.actions()[0].trigger()
    assert again.sessions.session is not None and len(again.workspace.runs) == 1
    again.shutdown()


def test_gui_opens_a_session_from_the_command_line(saved_session: Path, tmp_path: Path) -> None:
    """`trtstudio gui run.trtstudio` (what the desktop file runs for a double-clicked session);
    files that cannot go with it are one line each."""
    shot = tmp_path / "session.png"
    res = subprocess.run([sys.executable, "-m", "trtstudio", "gui", str(saved_session), "--screenshot", str(shot),
                          "--size", "1600x1000"], capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr
    assert shot.stat().st_size > 20_000
    from PySide6.QtGui import QImage

    assert QImage(str(shot)).size().width() == 1600
    bad = tmp_path / "broken.trtstudio"
    bad.write_text('{"schema": "trtstudio.layers/1"}')
    other = tmp_path / "other.trtstudio"
    other.write_text("{}")
    for argv, blamed in (([str(bad), "--screenshot", str(tmp_path / "x.png")], bad),
                         ([str(saved_session), str(other)], other),
                         ([str(saved_session), str(saved_session.parent / "model.onnx")], saved_session.parent / "model.onnx")):
        r = subprocess.run([sys.executable, "-m", "trtstudio", "gui", *argv], capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and r.stderr.startswith(f"error: {blamed}:") and r.stderr.count("\n") == 1, r.stderr


def test_a_session_without_its_model_still_shows_its_run(qtbot, saved_session: Path, tmp_path: Path) -> None:
    """The session sent alone: the window says the model is missing and draws the saved run all the
    same (the plot panels come without a model to wait for)."""
    import shutil

    alone = tmp_path / "alone" / "run.trtstudio"
    alone.parent.mkdir()
    shutil.copy(saved_session, alone)
    win = MainWindow(defer_plots=True)  # as `trtstudio gui FILE` makes it
    qtbot.addWidget(win)
    win.show()
    errors: list[str] = []
    win.sig_error.connect(errors.append)
    with qtbot.waitSignal(win.sig_session_loaded, timeout=60000):
        win.open_session(str(alone))
    assert win.model is None
    qtbot.waitUntil(lambda: _saved_run_drawn(win, 150), timeout=60000)
    status = win.statusBar().currentMessage()
    assert "session model model.onnx is missing" in status and "saved run" in status and errors == []
    win.shutdown()


def test_a_session_whose_model_is_gone_still_shows_its_engine(qtbot, window: MainWindow, sample_model: Path,
                                                             tmp_path: Path) -> None:
    """Model and RTX build log opened, saved as a session, the model deleted: the session's engine
    is analysed without it and its table shows every layer."""
    import shutil

    model = tmp_path / "gone.onnx"
    shutil.copy(sample_model, model)
    _open(qtbot, window, model)
    with qtbot.waitSignal(window.sig_engine_loaded, timeout=60000):
        window.open_engine([str(sample_model.with_name("mobilenetv2_035.rtx-sm86.build.log"))])
    sess = tmp_path / "engine.trtstudio"
    with qtbot.waitSignal(window.sig_session_saved, timeout=60000):
        window.save_session(str(sess))
    model.unlink()
    other = MainWindow()
    qtbot.addWidget(other)
    other.show()
    with qtbot.waitSignal(other.sig_session_loaded, timeout=60000):
        other.open_path(str(sess))
    table = other.engine_tabs.layer_table
    qtbot.waitUntil(lambda: table.model.rowCount() == 56, timeout=60000)
    assert other.model is None and len(other.engine.layers) == 56
    other.shutdown()
