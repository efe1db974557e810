"""The window's first seconds (``trtstudio gui MODEL``): the docks' content and the plot panels come
after the model is on screen, a piece per event-loop turn.

Each dock's content waits behind a blank page until the window has painted once, then comes a
dock per turn: painted together, beside the model's loader, the first frame stalled the window
60-130 ms. pyqtgraph (0.2 s of Python with its import) is imported in a worker thread, then the
engine charts and the profile panel's plots are made a plot per turn, and put on screen a part per
turn. The controller of ``MainWindow(defer_plots=True)``; without deferring it only says "built".
"""

from __future__ import annotations

import threading
import time
from typing import Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QStackedWidget, QWidget

from trtstudio.ui.turns import in_turns


class PanelStager(QObject):
    """``state``: deferred -> importing -> built. ``staged``: the dock stacks still showing their
    blank page (None when not deferring)."""

    STAGED_AT_THE_LATEST_MS = 500
    PLOTS_AFTER_MODEL_MS = 150
    PLOTS_AT_THE_LATEST_MS = 20000
    PLOTS_LAYOUT_WAIT_S = 10.0

    def __init__(self, window: Any, defer: bool) -> None:
        super().__init__(window)
        self.w = window
        self.state = "deferred" if defer else "built"
        self.staged: list[QStackedWidget] | None = [] if defer else None
        self._unstaging = False
        if defer:  # a load that takes very long does not keep the panels away for ever
            QTimer.singleShot(self.PLOTS_AT_THE_LATEST_MS, self, self.start_plots)

    # ---- the docks ---------------------------------------------------------------------------
    def stage(self, widget: QWidget) -> QWidget:
        """What a dock shows: ``widget``, or (deferring) a stack with a blank page first."""
        if self.staged is None:
            return widget
        stack = QStackedWidget()  # sized as its largest page: the dock keeps its size when it flips
        stack.addWidget(QWidget())
        stack.addWidget(widget)
        self.staged.append(stack)
        return stack

    def start_unstaging(self) -> None:
        """Show the docks' content a dock per turn (once; the first paint, or a timer, calls it)."""
        staged = self.staged
        if not staged or self._unstaging:
            return
        self._unstaging = True

        def flip() -> bool:
            staged.pop(0).setCurrentIndex(1)
            return bool(staged)

        in_turns(self, flip, lambda: None)

    def painted(self) -> None:
        if self.staged:
            self.start_unstaging()  # its first turn comes after this paint

    def shown(self) -> None:
        if self.staged:  # a window that is never painted (minimised) still gets its docks
            QTimer.singleShot(self.STAGED_AT_THE_LATEST_MS, self, self.start_unstaging)

    # ---- the plot panels ---------------------------------------------------------------------
    def pending(self) -> bool:
        """The plot panels, or a dock's content, are still to come."""
        return self.state != "built" or (bool(self.staged) and self.w.isVisible())  # docks flip once it is shown

    def model_shown(self) -> None:
        if self.state == "deferred":  # the graph is painted on the next turns; the plots follow it
            QTimer.singleShot(self.PLOTS_AFTER_MODEL_MS, self, self.start_plots)

    def failed(self) -> None:
        if self.state == "deferred":  # the model did not open: nothing to wait for
            QTimer.singleShot(0, self, self.start_plots)

    def start_plots(self) -> None:
        """Import pyqtgraph in a worker thread (on this thread it would stall the window), then, once
        the graph's layout has settled (a layout worker competing for the interpreter made the
        panels' 0.1 s of construction a 0.3 s stall), make the charts and the profile panel on two
        event-loop turns."""
        if self.state != "deferred":
            return
        self.state = "importing"
        thread = threading.Thread(target=_import_plot_modules, name="trtstudio-plots-import", daemon=True)
        thread.start()
        give_up = time.monotonic() + self.PLOTS_LAYOUT_WAIT_S

        def build() -> None:
            if thread.is_alive() or (not self.w.view.layout_settled.is_set() and time.monotonic() < give_up):
                QTimer.singleShot(20, self, build)  # dropped once the window is gone
                return
            try:
                self.w.engine_tabs.add_charts()
            finally:  # whatever happens there, the profile panel still comes (and the state moves on)
                QTimer.singleShot(0, self, self._build_live_panels)

        QTimer.singleShot(20, self, build)

    def _build_live_panels(self) -> None:
        """The profile panel's six plots, one per event-loop turn (all at once: a 0.1-0.2 s stall),
        then the panel around them."""
        try:
            from trtstudio.ui.live_panels import LivePanels

            live = LivePanels(in_steps=True)
        except Exception:  # noqa: BLE001 - no pyqtgraph, or a panel that cannot be made: the tools say so
            self._build_profile_panel(None)
            return

        failed = False

        def step() -> bool:
            nonlocal failed
            try:
                return live.build_step()
            except Exception:  # noqa: BLE001 - the panel makes its own plots then (or says why not)
                failed = True
                return False

        in_turns(self, step, lambda: self._build_profile_panel(None if failed else live))

    def _build_profile_panel(self, live: Any) -> None:
        """The panel around ``live`` (its plots made already), put on screen a part per turn: the
        first paint of the controls and of six plots together stalled the window 60-100 ms."""
        tools = self.w.tools
        if live is None:
            try:
                tools.build_profile_panel(None)
            finally:  # a panel that failed must not keep wait_idle and the demo waiting for ever
                self.state = "built"
            return
        try:
            live.setVisible(False)
            tools.build_profile_panel(live)
        except BaseException:
            self.state = "built"
            _drop_unplaced(live)
            raise
        panel = self.w.profile_panel
        if panel is None or panel.live is not live:  # no ProfilePanel took it (PySide6 parts missing)
            self.state = "built"
            _drop_unplaced(live)
            return
        steps = live.reveal_steps()

        def revealed() -> None:  # also after a step that failed (the panel is there, its plots as they are)
            self.state = "built"  # first: nothing below may keep wait_idle and the demo waiting
            try:
                live.setVisible(True)
            except RuntimeError:  # its C++ side already gone with the panel
                pass

        in_turns(self, lambda: next(steps, False), revealed)


def _drop_unplaced(live: Any) -> None:
    """``live`` when no panel took it: a widget without a parent, shown, would open as a window of its own."""
    if live.parent() is None:
        live.deleteLater()
    else:
        live.setVisible(True)


def _import_plot_modules() -> None:
    """What the plot panels import (pyqtgraph first), in a worker thread: the GUI thread then
    finds the modules loaded."""
    import importlib

    for name in ("trtstudio.ui.plots", "trtstudio.ui.engine_charts", "trtstudio.ui.live_panels",
                 "trtstudio.ui.profile_panel"):
        try:
            importlib.import_module(name)
        except ImportError:
            return  # the builders say "unavailable" themselves


__all__ = ["PanelStager"]
