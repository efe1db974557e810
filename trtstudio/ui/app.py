"""Start the Qt application: the window, optional files to open, optional screenshot-and-exit."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication


GUI_SWITCH_INTERVAL_S = 0.0001


def _skip_feature_scan() -> None:
    """PySide6 hooks every later import to read the module's source (``inspect.getsource``) and see
    whether it opts in to ``from __feature__ import snake_case/true_property``; nothing in this
    application does, and the scan cost 0.2 s of every start (pyqtgraph alone is 150 modules).
    The check is private to shiboken's ``feature`` module: where it is not there, nothing changes."""
    feature = sys.modules.get("shibokensupport.feature")
    if feature is not None and callable(getattr(feature, "_mod_uses_pyside", None)):
        setattr(feature, "_mod_uses_pyside", lambda _module: False)  # noqa: B010 - a module without stubs


def _app() -> QApplication:
    from PySide6.QtWidgets import QApplication

    _skip_feature_scan()

    app = QApplication.instance()
    if not isinstance(app, QApplication):  # none yet (a bare QCoreApplication cannot show windows)
        app = QApplication(sys.argv[:1])
    # Workers load, lay out and analyse in Python threads. Each Qt call releases the GIL, and the
    # GUI thread then waits up to the switch interval (5 ms by default) to get it back from a busy
    # worker: a frame of a few hundred Qt calls took a second while a model loaded. At 0.1 ms the
    # longest stall while a 100k-node model loads fell from 1.8 s (5 ms) and 0.23-0.27 s (0.5 ms)
    # to 0.19-0.21 s (medians of 4 runs of benchmarks/graph_view.py); the workers lose a switch of
    # a few microseconds per 0.1 ms only while the GUI thread waits for the GIL.
    sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)
    app.setApplicationName("trtstudio")
    app.setOrganizationName("trtstudio")
    from importlib import resources

    from PySide6.QtGui import QIcon

    app.setWindowIcon(QIcon(str(resources.files("trtstudio.resources") / "icons" / "trtstudio.svg")))
    app.setDesktopFileName("trtstudio")
    return app  # pyqtgraph is configured where plots import it (trtstudio.ui.plots)


# Platforms that need no display server.
_HEADLESS_PLATFORMS = ("offscreen", "minimal", "minimalegl", "vnc", "linuxfb", "eglfs", "vkkhrdisplay")
_XCB_LIBS = ("xcb-cursor", "xcb-icccm", "xcb-keysyms", "xcb-image", "xcb-render-util", "xcb-shape", "xcb-randr",
             "xcb-xkb", "xkbcommon-x11")
OFFSCREEN_HINT = "or render without a display: QT_QPA_PLATFORM=offscreen trtstudio demo --screenshot out.png"


def debian_package(soname: str) -> str:
    """Debian/Ubuntu package of a shared library: libxcb-icccm.so.4 -> libxcb-icccm4, libxkbcommon-x11.so.0
    -> libxkbcommon-x11-0 (Debian policy: name + soversion, a hyphen between two digits)."""
    base, _, version = soname.partition(".so")
    version = version.lstrip(".").split(".")[0]
    base = base.lower()
    return base + ("-" if base[-1:].isdigit() and version else "") + version


def _qt_xcb_plugin() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("PySide6")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        p = Path(folder) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
        if p.is_file():
            return p
    return None


def missing_xcb_libraries() -> list[str]:
    """Shared libraries Qt's xcb platform plugin needs and this system lacks (sonames), from ``ldd``
    on the plugin; without ldd, the usual suspects through ``ctypes.util.find_library``."""
    import shutil
    import subprocess

    plugin = _qt_xcb_plugin()
    ldd = shutil.which("ldd")
    if plugin is not None and ldd:
        try:
            out = subprocess.run([ldd, str(plugin)], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            out = None
        if out is not None:
            missing = [ln.split("=>")[0].strip() for ln in out.splitlines() if "not found" in ln]
            return list(dict.fromkeys(missing))
    from ctypes.util import find_library

    return [f"lib{n}.so" for n in _XCB_LIBS if find_library(n) is None]


def platform_problem(env: dict[str, str] | None = None) -> str | None:
    """Why Qt could not open a window here (one line with the fix), or None when it should start.

    Checked before the QApplication exists: Qt aborts the process (SIGABRT) when no platform plugin
    loads, so this is the only place a headless or half-installed machine can get a readable answer.
    """
    if not sys.platform.startswith("linux"):
        return None
    env = dict(os.environ) if env is None else env
    wanted = [x.split(":")[0].strip().lower() for x in env.get("QT_QPA_PLATFORM", "").split(";") if x.strip()]
    if any(w in _HEADLESS_PLATFORMS for w in wanted):
        return None
    display, wayland = env.get("DISPLAY", ""), env.get("WAYLAND_DISPLAY", "")
    if wanted and all(w.startswith("wayland") for w in wanted):
        return None if wayland else ("QT_QPA_PLATFORM asks for wayland but WAYLAND_DISPLAY is not set; "
                                     f"run inside a Wayland session, {OFFSCREEN_HINT}")
    if not wanted and wayland:
        return None
    if not display:
        return ("no display: DISPLAY and WAYLAND_DISPLAY are not set (a headless machine, or ssh without -X); "
                f"run on a desktop, use ssh -X, start a virtual display (xvfb-run trtstudio demo), {OFFSCREEN_HINT}")
    if display.startswith(":"):
        num = display[1:].split(".")[0]
        if num.isdigit() and not Path(f"/tmp/.X11-unix/X{num}").exists():
            return (f"cannot connect to X display {display}: no X server listens there (/tmp/.X11-unix/X{num} "
                    f"is missing); start one (xvfb-run trtstudio demo), {OFFSCREEN_HINT}")
    missing = missing_xcb_libraries()
    if missing:
        pkgs = " ".join(dict.fromkeys(debian_package(m) for m in missing))
        return (f"Qt's xcb platform plugin cannot load: missing system libraries {', '.join(missing)}; on "
                f"Debian/Ubuntu: sudo apt-get install {pkgs} ({OFFSCREEN_HINT.removeprefix('or ')})")
    return None


def run_gui(model: str | None = None, engine_files: list[str] | None = None, *, screenshot: str | None = None,
            size: tuple[int, int] = (1600, 1000), demo: bool = False, profile_seconds: float = 0.0,
            session: str | None = None) -> int:
    """Open the main window (on ``session``, a .trtstudio file, when given); with ``screenshot``
    render offscreen, save a PNG and exit."""
    if screenshot and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    problem = None if QApplication.instance() else platform_problem()
    if problem:
        from trtstudio.errors import InputError

        raise InputError(None, problem)
    app = _app()
    from trtstudio.ui.main_window import MainWindow, wait_idle

    # With a model to open, the plot panels wait until it is on screen (pyqtgraph and the panels
    # took 0.3 s of the GUI thread before the load could start, and 0.7 s of the first frame).
    win = MainWindow(defer_plots=bool(model or session))
    win.resize(*size)
    errors: list[str] = []
    win.sig_error.connect(errors.append)
    if model:
        win.open_model(model)
    if engine_files:
        win.open_engine(engine_files)
    if session:
        win.open_session(session)
    win.show()
    if demo:
        from PySide6.QtCore import QTimer

        def _start() -> None:
            if win.is_busy() or win.plots_pending():
                QTimer.singleShot(100, _start)
            elif win.profile_panel is not None:
                win.demo_highlight()
                win.profile_panel.start()

        QTimer.singleShot(200, _start)
    if screenshot:
        wait_idle(win, app)
        win.resize(*size)
        app.processEvents()
        win.apply_default_dock_sizes()
        if demo and profile_seconds > 0:
            import time

            end = time.monotonic() + profile_seconds
            while time.monotonic() < end:
                app.processEvents()
                time.sleep(0.01)
        if demo:
            win.demo_highlight()
        else:
            app.processEvents()  # the dock sizes above, applied: the graph fits the pane it has
            win.current_view().fit()
        app.processEvents()
        img = win.grab()
        Path(screenshot).parent.mkdir(parents=True, exist_ok=True)
        ok = img.save(screenshot)
        win.close()
        app.processEvents()
        for e in errors:
            print(f"error: {e}", file=sys.stderr)
        if not ok:
            print(f"error: {screenshot}: could not write PNG", file=sys.stderr)
            return 2
        return 2 if errors else 0
    return int(app.exec())
