"""Persistent settings of the window: geometry and dock state, recent files, last folder, theme."""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMainWindow

RECENT_MAX = 12
PROFILE_WIDE_PX = 900  # from this width the profile panel has its controls beside its plots, above them when narrower
THEMES = ("System", "Light", "Dark")


class AppSettings:
    """QSettings("trtstudio", "trtstudio") behind named accessors."""

    def qsettings(self) -> QSettings:
        """The underlying store (a fresh handle each time, as Qt recommends)."""
        return QSettings("trtstudio", "trtstudio")

    # -- window ---------------------------------------------------------------------------------
    def restore_window(self, window: QMainWindow) -> bool:
        """Restore geometry and dock layout; False when none was saved."""
        st = self.qsettings()
        geo = st.value("window/geometry")
        if isinstance(geo, QByteArray) and not geo.isEmpty():
            window.restoreGeometry(geo)
        state = st.value("window/state")
        if isinstance(state, QByteArray) and not state.isEmpty():
            window.restoreState(state)
            return True
        return False

    def has_window_state(self) -> bool:
        """True when a dock layout was saved."""
        return self.qsettings().value("window/state") is not None

    def save_window(self, window: QMainWindow) -> None:
        """Keep geometry and dock layout for the next start."""
        st = self.qsettings()
        st.setValue("window/geometry", window.saveGeometry())
        st.setValue("window/state", window.saveState())
        st.sync()

    # -- files ----------------------------------------------------------------------------------
    def recent_files(self) -> list[str]:
        """Most recent first."""
        value: Any = self.qsettings().value("recent/files", [])
        items = [value] if isinstance(value, str) else list(value or [])
        return [str(v) for v in items if v]

    def remember(self, path: str) -> None:
        """Put ``path`` first in the recent files and make its folder the last one."""
        full = os.path.abspath(path)
        st = self.qsettings()
        st.setValue("recent/files", ([full] + [p for p in self.recent_files() if p != full])[:RECENT_MAX])
        st.setValue("recent/last_dir", os.path.dirname(full))

    def fill_recent_menu(self, menu: Any, open_path: Any) -> None:
        """Fill File > Open recent: one action per file, models and sessions alike (a session says
        so; disabled when gone), ``open_path(path)`` on click."""
        from trtstudio.filekinds import SESSION, classify

        menu.clear()
        files = self.recent_files()
        if not files:
            menu.addAction("(none)").setEnabled(False)
        for path in files:
            act = menu.addAction(f"{path}  (session)" if classify(path, sniff=False) == SESSION else path)
            act.setEnabled(os.path.exists(path))
            act.triggered.connect(lambda _=False, p=path: open_path(p))

    def last_dir(self) -> str:
        """The folder of the last file opened or saved ('' when none)."""
        return str(self.qsettings().value("recent/last_dir", "") or "")

    # -- theme ----------------------------------------------------------------------------------
    def theme(self) -> str:
        """The saved theme name (System, Light or Dark)."""
        name = str(self.qsettings().value("view/theme", "System"))
        return name if name in THEMES else "System"

    def apply_theme(self, name: str) -> bool:
        """Apply and save theme ``name``; True when the result is dark. System follows the desktop."""
        app: Any = QApplication.instance()
        dark = name == "Dark"
        if name == "System":
            scheme = getattr(QGuiApplication.styleHints(), "colorScheme", None)
            dark = scheme is not None and scheme() == Qt.ColorScheme.Dark
        self.qsettings().setValue("view/theme", name)
        if app is None:
            return dark
        from trtstudio.ui import theme

        theme.apply(app, dark)  # the palette (disabled group too) and the plots
        return dark


DOCK_SEPARATORS_PX = 24  # what the docks' separators and frames take of a window's width


PROFILE_CONTROLS_PX = 380  # the Live profile dock before a run: its controls (shapes, backend, Start) only
MODEL_DOCK_PX = 220  # the model dock's width at least (Properties' values stay readable)


def default_dock_widths(width: int, run_shown: bool = True) -> tuple[int, int]:
    """The widths of the model dock and the live profile dock in a window ``width`` wide, the graph
    having the rest (less the separators). Before a run is drawn (``run_shown`` False) the live profile
    is as wide as its controls. With a run, it is as wide as its controls beside its plots need (the
    dock's frame and scroll bar added) while that leaves the graph a quarter of the window, else the
    graph keeps 40% of it (the profile's controls above its plots) so that it can still be read."""
    model = max(MODEL_DOCK_PX, int(width * 0.14))
    if not run_shown:
        return model, PROFILE_CONTROLS_PX
    profile = PROFILE_WIDE_PX + 40
    if width - model - profile - DOCK_SEPARATORS_PX < width // 4:
        profile = max(PROFILE_CONTROLS_PX - 40, int(width * 0.6) - model - DOCK_SEPARATORS_PX)  # the graph 40 %
    return model, profile
