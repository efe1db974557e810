"""Start the Qt application: the window, optional files to open, optional screenshot-and-exit."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any


def _app() -> Any:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("trtstudio")
    app.setOrganizationName("trtstudio")
    from importlib import resources

    from PySide6.QtGui import QIcon

    app.setWindowIcon(QIcon(str(resources.files("trtstudio.resources") / "icons" / "trtstudio.svg")))
    app.setDesktopFileName("trtstudio")
    import pyqtgraph as pg

    pg.setConfigOptions(antialias=False, background="w", foreground="k")
    return app


def run_gui(model: str | None = None, engine_files: list[str] | None = None, *, screenshot: str | None = None,
            size: tuple[int, int] = (1600, 1000), demo: bool = False, profile_seconds: float = 0.0) -> int:
    """Open the main window; with ``screenshot`` render offscreen, save a PNG and exit."""
    if screenshot and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = _app()
    from trtstudio.ui.main_window import MainWindow, wait_idle

    win = MainWindow()
    win.resize(*size)
    errors: list[str] = []
    win.sig_error.connect(errors.append)
    if model:
        win.open_model(model)
    if engine_files:
        win.open_engine(engine_files)
    win.show()
    if demo and win.profile_panel is not None:
        from PySide6.QtCore import QTimer

        def _start() -> None:
            if win.is_busy():
                QTimer.singleShot(100, _start)
            else:
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
            win.view.fit()
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
