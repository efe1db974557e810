"""The engine dock's Profiles tab: an engine of two optimization profiles (NVIDIA's cookbook
inspector log) shows both profiles' layer tables side by side, and picking profile 1 shows its
layers in the Layers tab."""

from __future__ import annotations

from pathlib import Path

import pytest

FIX = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "trt-real"
INSPECTOR = FIX / "NVIDIA_trt-samples-for-hackathon-cn" / "HEAD" / "cookbook" / "04-Feature" / "EngineInspector" / "log-main.py.log"


@pytest.mark.skipif(not INSPECTOR.exists(), reason="trt-real fixtures absent")
def test_profiles_side_by_side_and_the_profile_shown(qtbot, qtmodeltester, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from trtstudio.engine.load import load_engine

    tabs = window.engine_tabs
    with qtbot.waitSignal(window.sig_engine_loaded, timeout=60000):
        window.open_engine([str(INSPECTOR)])
    qtbot.waitUntil(lambda: tabs.profiles_view is not None and tabs.indexOf(tabs.profiles_view) >= 0, timeout=60000)
    view = tabs.profiles_view
    assert tabs.tabText(tabs.indexOf(view)) == "Profiles (2)"
    p0, p1 = (load_engine(INSPECTOR, profile=k) for k in (0, 1))
    left, right = view.left.model, view.right.model
    assert left.rowCount() == right.rowCount() == len(p0.layers) == len(p1.layers)
    assert [left.text(r, 1) for r in range(left.rowCount())] == [lay.name for lay in p0.layers]
    assert [right.text(r, 1) for r in range(right.rowCount())] == [lay.name for lay in p1.layers]
    assert "profile 1" in view.figures.text() and "13 layers" in view.figures.text()
    qtmodeltester.check(left)
    # only the rows whose sides differ (as the core's side_by_side says)
    differing = sum(1 for r in view.doc["side_by_side"] if r["differ"])
    view.only_differ.setChecked(True)
    assert left.rowCount() == right.rowCount() == differing == view.differing_rows()
    view.only_differ.setChecked(False)
    # the right side can show profile 0 too: then nothing differs
    view.right.pick.setCurrentIndex(0)
    assert view.differing_rows() == 0 and right.text(0, 1) == p0.layers[0].name
    view.right.pick.setCurrentIndex(1)
    # the two sides scroll together
    view.left.table.verticalScrollBar().setValue(view.left.table.verticalScrollBar().maximum())
    assert view.right.table.verticalScrollBar().value() == view.left.table.verticalScrollBar().value()
    tabs.setCurrentWidget(view)
    window.engine_dock.raise_()
    qtbot.wait(50)
    window.grab().save(str(tmp_path / "profiles.png"))
    # the Layers tab shows profile 1 once picked
    with qtbot.waitSignal(window.sig_engine_loaded, timeout=60000):
        view.shown.activated.emit(1)
    qtbot.waitUntil(lambda: window.workspace.analysis is not None and not window.workspace.analysis.pending,
                    timeout=60000)
    assert [lay.name for lay in window.workspace.engine.layers] == [lay.name for lay in p1.layers]
    assert tabs.indexOf(view) >= 0 and view.shown.currentIndex() == 1  # the tab stays, made once


@pytest.mark.skipif(not INSPECTOR.exists(), reason="trt-real fixtures absent")
def test_a_session_of_profile_1_shows_its_profiles(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A session keeps the layers of the profile shown (1 here); opened, the Profiles tab comes back
    from the engine's files, saying the Layers tab shows profile 1."""
    from trtstudio.engine.load import load_engine
    from trtstudio.report.model import make_session
    from trtstudio.report.session import write_session

    path = write_session(tmp_path / "p1.trtstudio", make_session(engine=load_engine(INSPECTOR, profile=1)))
    with qtbot.waitSignal(window.sessions.sig_session_loaded, timeout=60000):
        window.sessions.open_session(str(path))
    tabs = window.engine_tabs
    qtbot.waitUntil(lambda: tabs.profiles_view is not None and tabs.indexOf(tabs.profiles_view) >= 0, timeout=60000)
    assert tabs.profiles_view.shown.currentIndex() == 1
    assert window.workspace.engine.layers[0].name.endswith("[profile 1]")
