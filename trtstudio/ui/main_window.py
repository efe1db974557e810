"""The main window: a view of one :class:`~trtstudio.workspace.Workspace`.

The graph is in the centre, the model summary/properties on the left, the engine's layers, charts,
findings and log below, the live profile on the right. Loading a model or engine files and the
engine analysis (:func:`trtstudio.engine.analysis.analyze`) run in workers; their results go into
the workspace, whose change events update the views. Reports and sessions are the
``SessionController``'s, search the ``SearchController``'s, settings ``AppSettings``', menus the
table in ``ui/actions.py``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QTabWidget,
    QToolBar,
    QWidget,
)

from trtstudio import __version__
from trtstudio.engine.overlay import MODES as OVERLAYS
from trtstudio.engine.overlay import error_overlay, overlay
from trtstudio.ui.actions import build_menus
from trtstudio.ui.document_loader import DocumentLoader
from trtstudio.ui.engine_dock import EngineTabs
from trtstudio.ui.graph_overlay import paint_overlay
from trtstudio.graph.display import DisplayGraph, build_display
from trtstudio.ui.graph_view import GraphView
from trtstudio.ui.properties_view import ModelPanel
from trtstudio.ui.search_controller import SearchController
from trtstudio.ui.session_controller import SessionController
from trtstudio.ui.settings import PROFILE_WIDE_PX, THEMES, AppSettings
from trtstudio.ui.turns import in_turns
from trtstudio.ui.window_tools import WindowTools
from trtstudio.workspace import Workspace

__all__ = ["OVERLAYS", "MainWindow", "wait_idle"]


class MainWindow(QMainWindow):
    sig_model_loaded = Signal(object)
    sig_engine_loaded = Signal(object)
    sig_error = Signal(str)
    sig_report_written = Signal(list)
    sig_session_saved = Signal(str)
    sig_session_loaded = Signal(object)
    sig_environment = Signal(list)

    def __init__(self, defer_plots: bool = False) -> None:
        """``defer_plots``: make the plot panels (live profile, engine charts: pyqtgraph, 0.3 s
        with its import) only once the model opened first is on screen (:meth:`start_plots`);
        ``trtstudio gui MODEL`` asks for it."""
        super().__init__()
        self.setWindowTitle(f"trtstudio {__version__}")
        self.resize(1600, 1000)
        self.setAcceptDrops(True)
        self.workspace = Workspace()
        self.prefs = AppSettings()
        self.last_error: str | None = None
        self.environment: list[dict[str, Any]] = []
        self.theme = "Light"
        self.build_dialog: Any = None
        self.precision_dialog: Any = None
        self.scenario_dialog: Any = None
        self.triton_dialog: Any = None
        self._boxes: list[QMessageBox] = []
        self._loading = 0
        self._syncing = False
        self._docks_sized = False
        self._plots = "deferred" if defer_plots else "built"  # deferred -> importing -> built
        # With defer_plots (a model opening at start-up), each dock's content waits behind a blank
        # page until the window has painted once, then comes a dock per event-loop turn: painted
        # together, beside the model's loader, the first frame of the window stalled it 60-130 ms.
        self._staged: list[QStackedWidget] | None = [] if defer_plots else None
        self._unstaging = False

        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.tabCloseRequested.connect(self.close_subgraph_tab)
        self.view = self._new_view()
        self.tabs.addTab(self.view, "Graph")
        self.tabs.tabBar().setTabButton(0, self.tabs.tabBar().ButtonPosition.RightSide, None)
        self.setCentralWidget(self.tabs)

        self.side_tabs = ModelPanel()
        self.summary, self.props = self.side_tabs.summary, self.side_tabs.props
        self.model_dock = self._dock("Model", "dock_model", self.side_tabs, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.engine_tabs = EngineTabs(defer_charts=defer_plots)
        self.layer_table = self.engine_tabs.layer_table
        self.findings_view, self.log_panel = self.engine_tabs.findings_view, self.engine_tabs.log_panel
        self.engine_tabs.sig_layers_selected.connect(self._on_table_layers_selected)
        self.engine_tabs.sig_finding_clicked.connect(self._on_engine_tabs_finding_clicked)
        self.engine_dock = self._dock("Engine", "dock_engine", self.engine_tabs, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.loader = DocumentLoader(self)
        self.tools = WindowTools(self)
        self.profile_panel: Any = None
        self.profile_dock = self._dock("Live profile", "dock_profile", self.tools.make_profile_holder(defer_plots),
                                       Qt.DockWidgetArea.RightDockWidgetArea)

        tb = QToolBar("Main")
        tb.setObjectName("toolbar_main")
        tb.setMovable(False)
        self.addToolBar(tb)
        self.sessions = SessionController(self)
        self.sessions.sig_report_written.connect(self.sig_report_written)
        self.sessions.sig_session_saved.connect(self.sig_session_saved)
        self.sessions.sig_session_loaded.connect(self.sig_session_loaded)
        self.recent_menu: Any = None
        named = build_menus(self, {"@recent": self._setup_recent_menu, "@docks": self._add_dock_toggles,
                                   "@themes": self._add_theme_menu})
        self.act_open, self.act_fold = named["open"], named["fold"]
        self.act_fold.setCheckable(True)
        self.act_fold.setChecked(self.view.folding_enabled)
        tb.addAction(self.act_open)
        tb.addSeparator()
        self.search_ctl = SearchController(tb, self.current_view)
        self.search, self.search_label = self.search_ctl.search, self.search_ctl.search_label
        self.search_ctl.sig_hit.connect(self._on_search_ctl_hit)
        self.tabs.currentChanged.connect(lambda _i: self.search_ctl.refresh())
        tb.addSeparator()
        tb.addWidget(QLabel(" Colour by: "))
        self.overlay = QComboBox()
        self.overlay.addItems(OVERLAYS)
        self.overlay.currentTextChanged.connect(self._apply_overlay)
        tb.addWidget(self.overlay)
        tb.addSeparator()
        tb.addAction("Fit", lambda: self.current_view().fit())

        self.status_label = QLabel()
        self.statusBar().addPermanentWidget(self.status_label)
        self.sig_error.connect(self.show_error)
        ev = self.workspace.events
        ev.connect("model", self._on_workspace_model)
        ev.connect("analysis", self._on_workspace_analysis)
        ev.connect("unsupported", self._on_workspace_unsupported)
        QTimer.singleShot(0, self.tools.show_environment)
        self.prefs.restore_window(self)
        self.set_theme(self.prefs.theme())
        if defer_plots:  # a load that takes very long does not keep the panels away for ever
            QTimer.singleShot(self.PLOTS_AT_THE_LATEST_MS, self, self.start_plots)

    # ---- construction -------------------------------------------------------------------
    def _dock(self, title: str, name: str, widget: Any, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        if self._staged is not None:  # behind a blank page until the first paint (see __init__)
            stack = QStackedWidget()  # sized as its largest page: the dock keeps its size when it flips
            stack.addWidget(QWidget())
            stack.addWidget(widget)
            self._staged.append(stack)
            widget = stack
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    STAGED_AT_THE_LATEST_MS = 500

    def _start_unstaging(self) -> None:
        """Show the docks' content a dock per turn (once; the first paint, or a timer, calls it)."""
        staged = self._staged
        if not staged or self._unstaging:
            return
        self._unstaging = True

        def flip() -> bool:
            staged.pop(0).setCurrentIndex(1)
            return bool(staged)

        in_turns(self, flip, lambda: None)

    def paintEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().paintEvent(event)
        if self._staged:
            self._start_unstaging()  # its first turn comes after this paint

    def _new_view(self) -> GraphView:
        v = GraphView()
        v.set_dark(self.theme == "Dark")
        v.sig_node_selected.connect(self._on_view_node_selected)
        v.sig_node_activated.connect(self._on_view_node_activated)
        return v

    def _setup_recent_menu(self, menu: Any) -> None:
        self.recent_menu = menu
        menu.aboutToShow.connect(lambda: self.prefs.fill_recent_menu(menu, self.open_path))

    def _add_dock_toggles(self, menu: Any) -> None:
        for dock in (self.model_dock, self.engine_dock, self.profile_dock):
            menu.addAction(dock.toggleViewAction())

    def _add_theme_menu(self, menu: Any) -> None:
        for name in THEMES:
            menu.addAction(name, lambda n=name: self.set_theme(n))

    # ---- the document -------------------------------------------------------------------
    @property
    def model(self) -> Any:
        return self.workspace.model

    @property
    def display(self) -> DisplayGraph | None:
        return self.workspace.display

    @property
    def analysis(self) -> Any:
        return self.workspace.analysis

    @property
    def engine(self) -> Any:
        """The open engine; once analysed, the analysis's copy (layers linked to ONNX nodes, findings)."""
        a = self.workspace.analysis
        return a.engine if a is not None else self.workspace.engine

    @property
    def mapping(self) -> Any:
        a = self.workspace.analysis
        return a.mapping if a is not None else None

    # ---- opening ------------------------------------------------------------------------
    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open model", self.prefs.last_dir(),
                                              "ONNX models (*.onnx);;PyTorch files (*.pt2 *.pt *.pth *.ts "
                                              "*.torchscript *.jit);;All files (*)")
        if path:
            self.open_path(path)

    def open_engine_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self, "Open engine files (layer info, profile, timing, logs, engine)", self.prefs.last_dir(),
            "TensorRT outputs (*.json *.log *.txt *.engine *.plan *.profile);;All files (*)")
        if paths:
            self.open_engine(paths)

    def open_path(self, path: str) -> None:
        """Open a file by its kind (:func:`trtstudio.filekinds.classify`)."""
        self.open_paths([str(path)])

    def open_paths(self, paths: list[str]) -> None:
        """Open files by kind (:func:`trtstudio.filekinds.classify`, as ``trtstudio gui`` does):
        sessions, the ONNX model (one), the engine's files together; a PyTorch file goes to the
        Live profile panel; a Triton sweep session is refused with what to do instead."""
        from trtstudio import filekinds as fk

        kinds = fk.split(paths)
        for p in kinds.get(fk.SESSION, []):
            self.open_session(p)
        models = kinds.get(fk.ONNX, [])
        if models:
            self.open_model(models[0])
        if len(models) > 1:
            self.sig_error.emit(f"{models[1]}: only one ONNX model can be opened at a time")
        if kinds.get(fk.ENGINE):
            self.open_engine(kinds[fk.ENGINE])
        for p in kinds.get(fk.TORCH, [])[:1]:
            if self.profile_panel is None:
                self.sig_error.emit(f"{p}: PyTorch files run in the Live profile panel, which is not ready yet")
            else:
                self.profile_panel.set_model(p)
                self.statusBar().showMessage(f"{Path(p).name}: PyTorch file, in the Live profile panel", 8000)
        for p in kinds.get(fk.TRITON, []):
            self.sig_error.emit(f"{p}: a Triton sweep session; compare it with `trtstudio compare`")

    def _on_workspace_model(self, ws: Workspace) -> None:
        model = ws.model
        self.view.set_display(ws.display)
        self.view.flagged = set()
        self.tabs.setTabText(0, Path(model.path).name)
        self.setWindowTitle(f"{Path(model.path).name} - trtstudio {__version__}")
        self.side_tabs.show_summary(self.loader.summary or model.summary())
        self.show_model_in_profile_panel(model)
        self._apply_overlay(self.overlay.currentText())
        if self._plots == "deferred":  # the graph is painted on the next turns; the plots follow it
            QTimer.singleShot(self.PLOTS_AFTER_MODEL_MS, self, self.start_plots)

    def show_model_in_profile_panel(self, model: Any) -> None:
        if self.profile_panel is not None:
            try:
                self.profile_panel.set_model(model.path, getattr(model, "proto", None))
            except Exception as exc:  # noqa: BLE001 - the model still opens
                self.statusBar().showMessage(f"profiling unavailable for this model: {exc}", 8000)

    @property
    def charts(self) -> Any:
        """The engine charts view (None until the plots are built, or where pyqtgraph cannot load)."""
        return self.engine_tabs.charts

    PLOTS_AFTER_MODEL_MS = 150
    PLOTS_AT_THE_LATEST_MS = 20000

    def plots_pending(self) -> bool:
        """The plot panels, or a dock's content, are still to come (see ``defer_plots``)."""
        return self._plots != "built" or (bool(self._staged) and self.isVisible())  # docks flip once it is shown

    PLOTS_LAYOUT_WAIT_S = 10.0

    def start_plots(self) -> None:
        """Import pyqtgraph in a worker thread (0.2 s of Python, which on this thread would stall
        the window), then, once the graph's layout has settled (a layout worker competing for the
        interpreter made the panels' 0.1 s of construction a 0.3 s stall), make the charts and the
        profile panel on two event-loop turns."""
        if self._plots != "deferred":
            return
        self._plots = "importing"
        thread = threading.Thread(target=_import_plot_modules, name="trtstudio-plots-import", daemon=True)
        thread.start()
        import time

        give_up = time.monotonic() + self.PLOTS_LAYOUT_WAIT_S

        def build() -> None:
            if thread.is_alive() or (not self.view.layout_settled.is_set() and time.monotonic() < give_up):
                QTimer.singleShot(20, self, build)  # with the window as context: dropped once it is gone
                return
            try:
                self.engine_tabs.add_charts()
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
        if live is None:
            try:
                self.tools.build_profile_panel(None)
            finally:  # a panel that failed must not keep wait_idle and the demo waiting for ever
                self._plots = "built"
            return
        try:
            live.setVisible(False)
            self.tools.build_profile_panel(live)
        except BaseException:
            self._plots = "built"
            self._drop_unplaced(live)
            raise
        panel = self.profile_panel
        if panel is None or panel.live is not live:  # no ProfilePanel took it (PySide6 parts missing)
            self._plots = "built"
            self._drop_unplaced(live)
            return
        steps = live.reveal_steps()

        def revealed() -> None:  # also after a step that failed (the panel is there, its plots as they are)
            self._plots = "built"  # first: nothing below may keep wait_idle and the demo waiting
            try:
                live.setVisible(True)
            except RuntimeError:  # its C++ side already gone with the panel
                pass

        in_turns(self, lambda: next(steps, False), revealed)

    @staticmethod
    def _drop_unplaced(live: Any) -> None:
        """``live`` when no panel took it: a widget without a parent, shown, would open as a window of its own."""
        if live.parent() is None:
            live.deleteLater()
        else:
            live.setVisible(True)

    def _on_workspace_analysis(self, ws: Workspace) -> None:
        self.engine_tabs.show_analysis(ws.analysis, ws.engine)
        if self.overlay.currentText() != "Op category":  # a support or error overlay stays until replaced
            self._apply_overlay(self.overlay.currentText())

    def mark_unsupported(self, items: list[dict[str, Any]]) -> None:
        """The nodes the TensorRT parser rejects: marked on the graph and taken into the analysis."""
        self.workspace.set_unsupported(items)

    def _on_workspace_unsupported(self, ws: Workspace) -> None:
        dg = ws.display
        if dg is not None:
            g = dg.graph
            self.view.flagged = {dg.display_index(g.node_by_name[u["node"]]) for u in ws.unsupported
                                 if u.get("node") in g.node_by_name}
            self.view.update()
            if self.view.flagged:
                self.statusBar().showMessage(
                    f"{len(ws.unsupported)} node(s) the TensorRT parser rejects are marked in red", 10000)
        self.loader.reanalyze()

    def open_model(self, path: str | os.PathLike[str]) -> None:
        """Open an ONNX model (loaded and analysed in workers; ``sig_model_loaded`` when shown)."""
        self.loader.open_model(path)

    def open_engine(self, paths: list[str]) -> None:
        """Read engine files and analyse them (``sig_engine_loaded`` when shown)."""
        self.loader.open_engine(paths)

    def set_engine(self, engine: Any, paths: list[str] | None = None, analysis: Any = None) -> None:
        self.loader.set_engine(engine, paths, analysis)

    # ---- selection & cross-linking ---------------------------------------------------
    def current_view(self) -> GraphView:
        w = self.tabs.currentWidget()
        return w if isinstance(w, GraphView) else self.view

    def _on_view_node_selected(self, display_index: int) -> None:
        sender = self.sender()
        view = sender if isinstance(sender, GraphView) else self.view
        if view.dg is None:
            return
        main = view is self.view
        self.side_tabs.show_properties(view.dg, display_index, self.analysis if main else None)
        ni = view.dg.node_index(display_index)
        if not main or self.analysis is None or ni is None:
            return
        sel = self.workspace.select_nodes([view.dg.graph.nodes[ni].name], source="graph")
        self._syncing = True
        try:
            self.engine_tabs.select_layers(sel.layers)
        finally:
            self._syncing = False

    def _on_table_layers_selected(self, layer_indices: list[int]) -> None:
        dg = self.display
        if self._syncing or self.analysis is None or dg is None:
            return
        sel = self.workspace.select_layers(layer_indices, source="table")
        model = self.workspace.model
        if sel.node_index is not None and model is not None and dg.graph is model.graph:
            idx = dg.display_indices_of(sel.node_index)
        else:
            idx = dg.display_indices(sel.nodes)
        self.tabs.setCurrentIndex(0)
        self.view.select(idx, center=True)
        if idx:
            self.side_tabs.show_properties(dg, idx[0], self.analysis)

    def select_layers(self, layer_indices: list[int]) -> None:
        """Select engine layers in the table and their ONNX nodes on the graph."""
        self.engine_tabs.select_layers(layer_indices)
        self._on_table_layers_selected(layer_indices)

    def _on_engine_tabs_finding_clicked(self, layer_index: int | None, nodes: list[str]) -> None:
        dg = self.display
        if layer_index is not None:
            self.select_layers([layer_index])
        elif nodes and dg is not None:
            g = dg.graph
            self.view.select([dg.display_index(g.node_by_name[n]) for n in nodes if n in g.node_by_name])

    def _on_search_ctl_hit(self, view: GraphView, target: int) -> None:
        self.side_tabs.show_properties(view.dg, target, self.analysis if view is self.view else None)

    def _on_view_node_activated(self, display_index: int) -> None:
        sender = self.sender()
        dg = (sender if isinstance(sender, GraphView) else self.view).dg
        ni = dg.node_index(display_index) if dg is not None else None
        if dg is not None and ni is not None:
            node = dg.graph.nodes[ni]
            for key, body in node.subgraphs.items():
                self.open_subgraph(body, f"{node.name}.{key}")

    def open_subgraph(self, body: Any, title: str) -> GraphView:
        for i in range(1, self.tabs.count()):
            if self.tabs.tabText(i) == title:
                self.tabs.setCurrentIndex(i)
                return self.tabs.widget(i)  # type: ignore[return-value]
        v = self._new_view()
        self.tabs.addTab(v, title)
        v.set_display(build_display(body))
        self.tabs.setCurrentWidget(v)
        return v

    def close_subgraph_tab(self, index: int) -> None:
        """Close the subgraph tab at ``index`` (the main graph, tab 0, stays)."""
        if index > 0:
            w = self.tabs.widget(index)
            self.tabs.removeTab(index)
            if w is not None:
                w.deleteLater()

    # ---- view actions ------------------------------------------------------------------------
    def fit_whole(self) -> None:
        self.current_view().fit(whole=True)

    def zoom_in(self) -> None:
        self.current_view().zoom_by(1.25)

    def zoom_out(self) -> None:
        self.current_view().zoom_by(0.8)

    def toggle_folding(self) -> None:
        """View > Fold constant subgraphs (on by default)."""
        self.view.set_folding(self.act_fold.isChecked())

    def _apply_overlay(self, name: str) -> None:
        a, dg = self.analysis, self.display
        if dg is None:
            return
        usable = a is not None and a.mapping is not None and a.model_path == str(self.model.path)
        paint_overlay(self.view, dg, overlay(a, dg.graph.nodes, name) if usable else None)

    def show_node_errors(self, errors: dict[str, float]) -> None:
        """Heat overlay: each node coloured by the relative error of its output against FP32 (darkest = worst)."""
        if self.display is not None:
            self.show_overlay(error_overlay(self.display.graph.nodes, errors))

    def show_overlay(self, ov: Any) -> None:
        """Paint an ``engine.overlay.Overlay`` (support check, errors) on the main graph."""
        paint_overlay(self.view, self.display, ov)

    # ---- dialogs -------------------------------------------------------------------------------
    # ---- reports and sessions (SessionController) --------------------------------------------
    def export_report(self, path: str) -> None:
        self.sessions.export_report(path)

    def save_session(self, path: str) -> None:
        self.sessions.save_session(path)

    def open_session(self, path: str) -> None:
        self.sessions.open_session(path)

    # ---- status, errors, environment ---------------------------------------------------------
    def busy(self, delta: int, message: str = "") -> None:
        """Count a piece of work in flight (``is_busy``) and show ``message`` while it runs."""
        self._loading = max(0, self._loading + delta)
        if message:
            self.statusBar().showMessage(message)
        elif self._loading == 0:
            self.statusBar().clearMessage()

    def is_busy(self) -> bool:
        return self._loading > 0

    def message_box(self, icon: QMessageBox.Icon, title: str, text: str, detail: str = "") -> QMessageBox:
        """A non-modal message box (deleted on close; the last few are kept referenced)."""
        box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Ok, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        if detail:
            box.setDetailedText(detail)
        box.setModal(False)
        box.show()
        self._boxes = [*self._boxes[-3:], box]
        return box

    def show_error(self, message: str) -> None:
        """One line, in a non-blocking dialog; nothing that was open is closed."""
        self.last_error = message
        self.statusBar().showMessage(f"error: {message}", 15000)
        self.message_box(QMessageBox.Icon.Critical, "trtstudio", message)
        if self._plots == "deferred":  # the model did not open: nothing to wait for
            QTimer.singleShot(0, self, self.start_plots)

    # ---- settings, recent files, theme ------------------------------------------------------
    def recent_files(self) -> list[str]:
        return self.prefs.recent_files()

    def set_theme(self, name: str) -> None:
        """System (follows the desktop's colour scheme), Light or Dark."""
        dark = self.prefs.apply_theme(name)
        self.theme = "Dark" if dark else "Light"
        for i in range(self.tabs.count()):
            w = self.tabs.widget(i)
            if isinstance(w, GraphView):
                w.set_dark(dark)

    def save_screenshot_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save screenshot", "trtstudio.png", "PNG (*.png)")
        if path:
            self.grab().save(path)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        self.open_paths([u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()])
        event.acceptProposedAction()

    def shutdown(self) -> None:
        """Stop and join every worker (profiling runs, builds, loads)."""
        if self.profile_panel is not None:
            self.profile_panel.shutdown()
        for dlg in (self.build_dialog, self.precision_dialog, self.scenario_dialog, self.triton_dialog):
            if dlg is not None:
                try:
                    dlg.close()
                except RuntimeError:  # already deleted
                    pass
        from trtstudio.ui import workers

        workers.shutdown_all(30000)

    def showEvent(self, event: Any) -> None:  # noqa: N802
        super().showEvent(event)
        if self._staged:  # a window that is never painted (minimised) still gets its docks
            QTimer.singleShot(self.STAGED_AT_THE_LATEST_MS, self, self._start_unstaging)
        if not self._docks_sized and not self.prefs.has_window_state():
            self._docks_sized = True
            self.apply_default_dock_sizes()

    def apply_default_dock_sizes(self) -> None:
        """The first start's dock sizes (see :func:`default_dock_widths`); the engine table gets a third of
        the height."""
        w, h = self.width(), self.height()
        self.resizeDocks([self.model_dock, self.profile_dock], list(default_dock_widths(w)), Qt.Orientation.Horizontal)
        self.resizeDocks([self.engine_dock], [int(h * 0.32)], Qt.Orientation.Vertical)

    def demo_highlight(self) -> None:
        """For the demo: select the engine layer that fused the most ONNX nodes and show it on the graph."""
        engine = self.engine
        if engine is None or self.analysis is None or self.display is None or not engine.layers:
            return
        best = max(range(len(engine.layers)), key=lambda i: len(engine.layers[i].onnx_nodes))
        if engine.layers[best].onnx_nodes:
            self.select_layers([best])

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        self.prefs.save_window(self)
        self.shutdown()
        super().closeEvent(event)


DOCK_SEPARATORS_PX = 24  # what the docks' separators and frames take of a window's width


def default_dock_widths(width: int) -> tuple[int, int]:
    """The widths of the model dock and the live profile dock in a window ``width`` wide, the graph
    having the rest (less the separators): the live profile as wide as its controls beside its plots
    need (the dock's frame and scroll bar added) while that leaves the graph a quarter of the window,
    else 40% of it (its controls above its plots) so that the graph keeps the room to be read."""
    model = int(width * 0.14)
    profile = PROFILE_WIDE_PX + 40
    if width - model - profile - DOCK_SEPARATORS_PX < width // 4:
        profile = int(width * 0.4)
    return model, profile


def wait_idle(window: MainWindow, app: Any, timeout_s: float = 120.0) -> None:
    """Process events until the window has no load in flight (for --screenshot and tests)."""
    import time

    deadline = time.monotonic() + timeout_s
    while (window.is_busy() or window.plots_pending()) and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)
    for _ in range(5):
        app.processEvents()


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
