"""The window's layout by what is open: the graph gets the screen.

A dock with nothing to show collapses to one line that names the next step as buttons (the Engine
dock before an engine: Build engine, Open engine files); the Live profile dock is as wide as its
controls until a run is drawn, then as wide as its plots need (``settings.default_dock_widths``);
each dock has a minimum width; a layout restored from another screen is fitted to this one (a
1920x1080 layout reopened at 1280x720 left the graph 204x298 px and Properties 95 px); View > Reset
layout applies the layout of what is open now.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QRect, Qt
from PySide6.QtWidgets import QDockWidget, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget

from trtstudio.ui.settings import default_dock_widths

MODEL_DOCK_MIN_PX = 220  # Properties' values ("TiledPooling", "fp32 [32,64,...]") stay readable
PROFILE_DOCK_MIN_PX = 340  # the run controls: shapes table, backend, Start
ENGINE_DOCK_MIN_PX = 160  # the layer table's filters, header and a few rows
ENGINE_SHARE = 0.32  # of the window's height, once an engine is open
GRAPH_MIN_SHARE = 0.4  # a restored layout leaving the graph less of the width or height is refitted
QWIDGETSIZE_MAX = 16777215


class EmptyBar(QWidget):
    """One line: what the dock holds and is missing, then the next steps as buttons."""

    def __init__(self, text: str, steps: list[tuple[str, Any]]) -> None:
        super().__init__()
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 2, 6, 2)
        self.label = QLabel(text)
        self.label.setMinimumWidth(1)  # one line, cut where narrow (its whole text in the tooltip)
        self.label.setToolTip(text)
        row.addWidget(self.label, 1)
        self.buttons: dict[str, QPushButton] = {}
        for name, slot in steps:
            b = QPushButton(name)
            b.clicked.connect(lambda _checked=False, s=slot: s())
            row.addWidget(b)
            self.buttons[name] = b
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)


class DockLayout(QObject):
    """Sizes the docks of ``window`` (MainWindow) by what is open. ``engine_bar``: the Engine dock's
    line while no engine is open; ``run_shown``: a run is drawn in the Live profile panels."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.w = window
        self.run_shown = False
        self.engine_open = False
        w = window
        w.model_dock.setMinimumWidth(MODEL_DOCK_MIN_PX)
        w.profile_dock.setMinimumWidth(PROFILE_DOCK_MIN_PX)
        self.engine_bar = EmptyBar("Engine: no engine open. Build one from the model, or open the files "
                                   "TensorRT wrote (layer info, profile, build log).",
                                   [("Build engine", w.tools.open_build_dialog),
                                    ("Open engine files", w.open_engine_dialog)])
        self._collapse_engine()

    # ---- the Engine dock ---------------------------------------------------------------------
    def _collapse_engine(self) -> None:
        dock: QDockWidget = self.w.engine_dock
        dock.setTitleBarWidget(self.engine_bar)  # its content stays visible, 0 px high (hidden, the
        dock.setMinimumHeight(0)  # dock would take the bar's width only)
        dock.setMaximumHeight(self.engine_bar.sizeHint().height())

    def _expand_engine(self) -> None:
        dock: QDockWidget = self.w.engine_dock
        dock.setMaximumHeight(QWIDGETSIZE_MAX)
        dock.setTitleBarWidget(None)  # type: ignore[arg-type]  # None: the default title bar again
        self.engine_bar.setParent(None)  # a title bar widget replaced stays the dock's child otherwise
        dock.setMinimumHeight(ENGINE_DOCK_MIN_PX)
        self.w.resizeDocks([dock], [int(self.w.height() * ENGINE_SHARE)], Qt.Orientation.Vertical)

    def on_engine(self, open_: bool) -> None:
        """An engine was opened (or the one open closed): the Engine dock expands (collapses)."""
        if open_ == self.engine_open:
            return
        self.engine_open = open_
        if open_:
            self._expand_engine()
        else:
            self._collapse_engine()

    def on_analysis(self, ws: Any) -> None:
        self.on_engine(ws.engine is not None)

    def engine_collapsed(self) -> bool:
        return self.w.engine_dock.titleBarWidget() is self.engine_bar

    # ---- the side docks ----------------------------------------------------------------------
    def on_run_shown(self) -> None:
        """A run is drawn in the Live profile panels: the dock widens to what its plots need."""
        if self.run_shown:
            return
        self.run_shown = True
        self.apply_widths()

    def apply_widths(self) -> None:
        model, profile = default_dock_widths(self.w.width(), self.run_shown)
        self.w.resizeDocks([self.w.model_dock, self.w.profile_dock], [model, profile], Qt.Orientation.Horizontal)

    def apply(self) -> None:
        """The layout of what is open now (the first start, View > Reset layout)."""
        for dock in (self.w.model_dock, self.w.engine_dock, self.w.profile_dock):
            if dock.isFloating():
                dock.setFloating(False)
            dock.show()
        self.apply_widths()
        if self.engine_open:
            self.w.resizeDocks([self.w.engine_dock], [int(self.w.height() * ENGINE_SHARE)], Qt.Orientation.Vertical)

    def reset(self) -> None:
        """View > Reset layout: every dock back in its place, sized by what is open."""
        w = self.w
        for dock, area in ((w.model_dock, Qt.DockWidgetArea.LeftDockWidgetArea),
                           (w.engine_dock, Qt.DockWidgetArea.BottomDockWidgetArea),
                           (w.profile_dock, Qt.DockWidgetArea.RightDockWidgetArea)):
            dock.setFloating(False)
            w.addDockWidget(area, dock)
        self.apply()

    # ---- a restored layout on another screen ------------------------------------------------------
    def available(self) -> QRect | None:
        """The available geometry of the window's screen (None without one)."""
        screen = self.w.screen()
        return screen.availableGeometry() if screen is not None else None

    def fit_to_screen(self, available: QRect | None = None) -> bool:
        """Fit the window into ``available`` (the screen's available geometry by default) and, where the
        restored docks leave the graph less than :data:`GRAPH_MIN_SHARE` of the width or height,
        apply the layout of what is open. True when something changed."""
        w = self.w
        available = available or self.available()
        if available is None:
            return False
        changed = False
        if w.width() > available.width() or w.height() > available.height():
            w.resize(min(w.width(), available.width()), min(w.height(), available.height()))
            changed = True
        pane = w.centralWidget()
        if pane.width() < w.width() * GRAPH_MIN_SHARE or pane.height() < w.height() * GRAPH_MIN_SHARE or changed:
            self.apply()
            changed = True
        return changed


def graph_share(window: Any) -> float:
    """The graph pane's (the central widget's) share of the window's area."""
    pane = window.centralWidget()
    return pane.width() * pane.height() / max(1, window.width() * window.height())


__all__ = ["DockLayout", "EmptyBar", "graph_share"]
