"""First start without a display: one line naming the cause and the fix, exit 2, never Qt's abort."""

from __future__ import annotations

import sys

import pytest
from fuzz import harness

pytestmark = [pytest.mark.gui,  # the children start Qt: skipped in the Qt-less core run
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11/Wayland checks are Linux's"),
              pytest.mark.timeout(120)]


def _env(**extra: str) -> dict[str, str]:
    env = harness.child_env()
    for k in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        env.pop(k, None)
    env.update(extra)
    return env


@pytest.mark.parametrize("argv", [["demo"], ["gui"], ["gui", "{model}"]])
def test_no_display_is_one_line_not_an_abort(argv: list[str], sample_model) -> None:  # type: ignore[no-untyped-def]
    argv = [str(sample_model) if a == "{model}" else a for a in argv]
    o = harness.run_sub(argv, timeout=90, env=_env())
    harness.check(o, allow_ok=False)
    assert o.rc == 2, str(o)
    assert "no display" in o.err and "QT_QPA_PLATFORM=offscreen" in o.err and "--screenshot" in o.err


def test_display_without_x_server(tmp_path) -> None:  # type: ignore[no-untyped-def]
    o = harness.run_sub(["demo"], timeout=90, env=_env(DISPLAY=":737"))
    harness.check(o, allow_ok=False)
    assert "X display :737" in o.err and "xvfb-run" in o.err


def test_wayland_asked_without_wayland() -> None:
    o = harness.run_sub(["demo"], timeout=90, env=_env(QT_QPA_PLATFORM="wayland"))
    harness.check(o, allow_ok=False)
    assert "WAYLAND_DISPLAY" in o.err


def test_screenshot_without_display_renders_offscreen(tmp_path) -> None:  # type: ignore[no-untyped-def]
    shot = tmp_path / "shot.png"
    o = harness.run_sub(["demo", "--screenshot", str(shot), "--no-profile", "--size", "800x500"], timeout=120,
                        env=_env())
    harness.check(o)
    assert o.rc == 0 and shot.stat().st_size > 1000


def test_missing_xcb_libraries_name_debian_packages() -> None:
    """What the probe says on a machine with a (remote) display: the real ldd answer of this machine."""
    from trtstudio.ui.app import debian_package, missing_xcb_libraries, platform_problem

    assert debian_package("libxcb-icccm.so.4") == "libxcb-icccm4"
    assert debian_package("libxkbcommon-x11.so.0") == "libxkbcommon-x11-0"
    assert debian_package("libX11-xcb.so.1") == "libx11-xcb1"
    assert debian_package("libdbus-1.so.3") == "libdbus-1-3"
    missing = missing_xcb_libraries()
    problem = platform_problem({"DISPLAY": "remotehost:0"})
    if missing:
        assert problem is not None and "apt-get install" in problem
        for soname in missing:
            assert soname in problem and debian_package(soname) in problem
    else:
        assert problem is None
    assert platform_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    assert platform_problem({"WAYLAND_DISPLAY": "wayland-0"}) is None
