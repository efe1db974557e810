"""The main window: a view of one :class:`~trtstudio.workspace.Workspace`.

The graph is in the centre, the model summary/properties on the left, the engine's layers, charts,
findings and log below, the live profile on the right. Loading a model or engine files and the
engine analysis (:func:`trtstudio.engine.analysis.analyze`) run in workers; their results go into
the workspace, whose change events update the views. Reports and sessions are the
``SessionController``'s, search the ``SearchController``'s, Colour by, View > Engine graph and the
precision views ``EngineTools``', settings ``AppSettings``', menus the table in ``ui/actions.py``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QComboBox, QDockWidget, QFileDialog, QLabel, QMainWindow, QMessageBox, QToolBar

from trtstudio._version import __version__
from trtstudio.engine.layer_graph import is_layer_model
from trtstudio.ui.actions import build_menus
from trtstudio.ui.compare_dock import CompareController
from trtstudio.ui.dock_layout import DockLayout
from trtstudio.ui.document_loader import DocumentLoader, engine_filters, open_filters
from trtstudio.ui.engine_dock import EngineTabs
from trtstudio.ui.engine_graph import EngineGraph
from trtstudio.ui.engine_tools import OVERLAYS, EngineTools
from trtstudio.ui.graph_tabs import GraphTabs
from trtstudio.ui.graph_view import GraphView
from trtstudio.ui.panel_stager import PanelStager
from trtstudio.ui.properties_view import ModelPanel
from trtstudio.ui.search_controller import SearchController
from trtstudio.ui.session_controller import SessionController
from trtstudio.ui.settings import THEMES, AppSettings
from trtstudio.ui.window_tools import WindowTools
from trtstudio.workspace import Workspace

if TYPE_CHECKING:
    from trtstudio.engine.node_time import NodeTimes
    from trtstudio.graph.display import DisplayGraph

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
        self._init_state(defer_plots)
        self._build_docks(defer_plots)
        tb = QToolBar("Main")
        tb.setObjectName("toolbar_main")
        tb.setMovable(False)
        self.addToolBar(tb)
        self._build_sessions()
        self._build_menus()
        self._fill_toolbar(tb)
        self._connect_workspace()
        QTimer.singleShot(0, self.tools.show_environment)
        self.prefs.restore_window(self)
        self.set_theme(self.prefs.theme())

    # ---- construction -------------------------------------------------------------------
    def _init_state(self, defer_plots: bool) -> None:
        """The window's title and size, the workspace, the settings, the dialogs not yet opened."""
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
        self.upgrade_dialog: Any = None
        self.triton_dialog: Any = None
        self.triton_search_dialog: Any = None
        self._boxes: list[QMessageBox] = []
        self._loading = 0
        self._docks_sized = False
        self.stager = PanelStager(self, defer_plots)  # with defer_plots, docks and plots after the model

    def _build_docks(self, defer_plots: bool) -> None:
        """The graph tabs in the centre, the Model, Engine and Live profile docks, and the controllers
        that work on them (loader, engine graph, Compare, Explain, Colour by)."""
        self.graphs = GraphTabs(self)
        self.tabs, self.view = self.graphs.tabs, self.graphs.view
        self.setCentralWidget(self.tabs)

        self.side_tabs = ModelPanel()
        self.summary, self.props = self.side_tabs.summary, self.side_tabs.props
        self.model_dock = self._dock("Model", "dock_model", self.side_tabs, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.engine_tabs = EngineTabs(defer_charts=defer_plots)
        self.layer_table = self.engine_tabs.layer_table
        self.findings_view, self.log_panel = self.engine_tabs.findings_view, self.engine_tabs.log_panel
        self.engine_tabs.sig_layers_selected.connect(self.graphs.on_layers_selected)
        self.engine_tabs.sig_finding_clicked.connect(self.graphs.on_finding_clicked)
        if self.engine_tabs.kernels_view is not None:  # a range named after a layer selects it (issue 52 item 2)
            self.engine_tabs.kernels_view.sig_layer_chosen.connect(self.graphs.on_kernel_range_chosen)
        self.engine_dock = self._dock("Engine", "dock_engine", self.engine_tabs, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.loader = DocumentLoader(self)
        self.engine_graph = EngineGraph(self)  # the engine's own graph, in the first tab beside the model's
        self.compare = CompareController(self)  # Engine > Compare with...
        self.tools = WindowTools(self)
        from trtstudio.ui.explain_panel import ExplainController

        self.explain = ExplainController(self, self.engine_tabs.explain_view)  # Engine > Explain precision...
        self.engine_tools = EngineTools(self)  # Colour by, View > Engine graph, precision views
        self.profile_panel: Any = None
        self.profile_dock = self._dock("Live profile", "dock_profile", self.tools.make_profile_holder(defer_plots),
                                       Qt.DockWidgetArea.RightDockWidgetArea)
        self.docks = DockLayout(self)  # sizes by what is open; an empty Engine dock is one line

    def _build_sessions(self) -> None:
        """Reports and sessions (``SessionController``), its signals passed on as the window's."""
        self.sessions = SessionController(self)
        for rows in (getattr(self.engine_tabs.layer_table, "table", None), self.compare.dock_widget.table):
            if rows is not None:  # row menus' Export: a report of the rows' layers (issue 52 item 6)
                rows.export_layers = self.sessions.export_report_dialog
        self.sessions.sig_report_written.connect(self.sig_report_written)
        self.sessions.sig_session_saved.connect(self.sig_session_saved)
        self.sessions.sig_session_loaded.connect(self.sig_session_loaded)

    def _build_menus(self) -> None:
        """The menu bar (``ui/actions.py``) and the actions the toolbar shares with it."""
        self.recent_menu: Any = None
        named = build_menus(self, {"@recent": self._setup_recent_menu, "@docks": self._add_dock_toggles,
                                   "@themes": self._add_theme_menu})
        self.act_open, self.act_fold = named["open"], named["fold"]
        self.act_fold.setCheckable(True)
        self.act_fold.setChecked(self.view.folding_enabled)
        self.act_engine_graph = named["engine_graph"]
        self.act_engine_graph.setCheckable(True)
        self.act_engine_graph.setEnabled(False)
        self.act_engine_graph.setToolTip("Show the engine's own graph (its layers as nodes) or the ONNX model's")

    def _fill_toolbar(self, tb: QToolBar) -> None:
        """Open, search, Colour by, Fit and Engine graph."""
        tb.addAction(self.act_open)
        tb.addSeparator()
        self.search_ctl = SearchController(tb, self.current_view)
        self.search, self.search_label = self.search_ctl.search, self.search_ctl.search_label
        self.search_ctl.sig_hit.connect(self.graphs.on_search_hit)
        self.tabs.currentChanged.connect(lambda _i: self.search_ctl.refresh())
        tb.addSeparator()
        tb.addWidget(QLabel(" Colour by: "))
        self.overlay = QComboBox()
        self.overlay.addItems(OVERLAYS)
        self.overlay.currentTextChanged.connect(self.engine_tools.paint)
        tb.addWidget(self.overlay)
        tb.addSeparator()
        tb.addAction("Fit", lambda: self.current_view().fit())
        tb.addSeparator()
        tb.addAction(self.act_engine_graph)

    def _connect_workspace(self) -> None:
        """The status bar's label and errors; the workspace's change events to the views."""
        self.status_label = QLabel()
        self.statusBar().addPermanentWidget(self.status_label)
        self.sig_error.connect(self.show_error)
        ev = self.workspace.events
        ev.connect("model", self._on_workspace_model)
        ev.connect("analysis", self.engine_tools.on_analysis)
        ev.connect("analysis", self.docks.on_analysis)
        ev.connect("unsupported", self._on_workspace_unsupported)
        ev.connect("runs", self.engine_tools.on_runs)
        ev.connect("selection", self.engine_tools.on_selection)

    def _dock(self, title: str, name: str, widget: Any, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(self.stager.stage(widget))
        self.addDockWidget(area, dock)
        return dock

    def paintEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().paintEvent(event)
        self.stager.painted()

    def _setup_recent_menu(self, menu: Any) -> None:
        self.recent_menu = menu
        menu.aboutToShow.connect(lambda: self.prefs.fill_recent_menu(menu, self.open_path))

    def _add_dock_toggles(self, menu: Any) -> None:
        for dock in (self.model_dock, self.engine_dock, self.profile_dock):
            menu.addAction(dock.toggleViewAction())
        menu.addAction("&Reset layout", self.docks.reset)

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
        """File > Open: a model or a saved session (each opened by its kind, as a drop is)."""
        path, _ = QFileDialog.getOpenFileName(self, "Open model or session", self.prefs.last_dir(), open_filters())
        if path:
            self.open_path(path)

    def open_engine_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self, "Open engine files (layer info, profile, timing, logs, engine, kernel traces)", self.prefs.last_dir(),
            engine_filters())
        if paths:
            self.open_engine(paths)

    def open_path(self, path: str) -> None:
        """Open a file by its kind (:func:`trtstudio.filekinds.classify`)."""
        self.open_paths([str(path)])

    def open_paths(self, paths: list[str]) -> None:
        """Open files by kind (:func:`trtstudio.filekinds.classify`, as ``trtstudio gui`` does):
        sessions, the ONNX model (one), the engine's files together; a PyTorch file goes to the
        Live profile panel; a Triton sweep session is refused with what to do instead."""
        import trtstudio.filekinds as fk

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
            self.sig_error.emit(f"{p}: a Triton sweep session, which the window does not open; "
                               "Profile > Triton Inference Server runs a new sweep")

    def _on_workspace_model(self, ws: Workspace) -> None:
        model = ws.model
        self.view.set_display(ws.display)
        self.view.flagged = set()
        self.graphs.update_engine_toggle()
        self.setWindowTitle(f"{Path(model.path).name} - trtstudio {__version__}")
        self.side_tabs.show_summary(self.loader.summary or model.summary())
        self.show_model_in_profile_panel(model)
        self.engine_tools.apply_overlay()
        self.stager.model_shown()

    def show_model_in_profile_panel(self, model: Any) -> None:
        if is_layer_model(model):  # an engine's own graph: nothing to run
            return
        if self.profile_panel is not None:
            try:
                self.profile_panel.set_model(model.path, getattr(model, "proto", None))
            except Exception as exc:  # noqa: BLE001 - the model still opens
                self.statusBar().showMessage(f"profiling unavailable for this model: {exc}", 8000)

    @property
    def charts(self) -> Any:
        """The engine charts view (None until the plots are built, or where pyqtgraph cannot load)."""
        return self.engine_tabs.charts

    def plots_pending(self) -> bool:
        """The plot panels, or a dock's content, are still to come (see ``defer_plots``)."""
        return self.stager.pending()

    def start_plots(self) -> None:
        self.stager.start_plots()

    def mark_unsupported(self, items: list[dict[str, Any]]) -> None:
        """The nodes the TensorRT parser rejects: marked on the graph and taken into the analysis."""
        self.workspace.set_unsupported(items)

    def _on_workspace_unsupported(self, ws: Workspace) -> None:
        if self.graphs.mark_flagged(ws.unsupported):
            self.statusBar().showMessage(
                f"{len(ws.unsupported)} node(s) the TensorRT parser rejects are marked in red", 10000)
        self.loader.reanalyze()

    def open_model(self, path: str | os.PathLike[str]) -> None:
        """Open an ONNX model (loaded and analysed in workers; ``sig_model_loaded`` when shown)."""
        self.loader.open_model(path)

    def open_engine(self, paths: list[str]) -> None:
        """Read engine files and analyse them (``sig_engine_loaded`` when shown). Kernel traces alone
        (an Nsight Systems export, a Kineto trace) open beside the engine already open, replacing an
        earlier trace of it."""
        self.loader.open_engine(self.engine_tools.engine_files(paths))

    def set_engine(self, engine: Any, paths: list[str] | None = None, analysis: Any = None) -> None:
        self.loader.set_engine(engine, paths, analysis)

    # ---- selection & cross-linking (GraphTabs) ------------------------------------------------
    def current_view(self) -> GraphView:
        return self.graphs.current_view()

    def select_layers(self, layer_indices: list[int]) -> None:
        """Select engine layers in the table and their ONNX nodes on the graph."""
        self.graphs.select_layers(layer_indices)

    def open_subgraph(self, body: Any, title: str) -> GraphView:
        return self.graphs.open_subgraph(body, title)

    def close_subgraph_tab(self, index: int) -> None:
        self.graphs.close_subgraph_tab(index)

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

    # ---- Colour by, engine graph, precision views (EngineTools) --------------------------------------
    def toggle_engine_graph(self) -> None:
        self.engine_tools.toggle_engine_graph()

    def set_change_modes(self, on: bool) -> None:
        self.engine_tools.set_change_modes(on)

    def paint_engine_graph(self) -> None:
        self.engine_tools.paint_engine_graph()

    def node_times(self) -> NodeTimes | None:
        return self.engine_tools.node_times()

    def show_node_errors(self, errors: dict[str, float]) -> None:
        self.engine_tools.show_node_errors(errors)

    def show_overlay(self, ov: Any) -> None:
        self.engine_tools.show_overlay(ov)

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
        self.stager.failed()

    # ---- settings, recent files, theme ------------------------------------------------------
    def recent_files(self) -> list[str]:
        return self.prefs.recent_files()

    def set_theme(self, name: str) -> None:
        """System (follows the desktop's colour scheme), Light or Dark."""
        dark = self.prefs.apply_theme(name)
        self.theme = "Dark" if dark else "Light"
        for v in self.graphs.views():
            v.set_dark(dark)

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
        for dlg in (self.build_dialog, self.precision_dialog, self.scenario_dialog, self.triton_dialog,
                    self.upgrade_dialog, self.triton_search_dialog):
            if dlg is not None:
                try:
                    dlg.close()
                except RuntimeError:  # already deleted
                    pass
        from trtstudio.ui import workers

        workers.shutdown_all(30000)

    def showEvent(self, event: Any) -> None:  # noqa: N802
        super().showEvent(event)
        self.stager.shown()
        if not self._docks_sized:
            self._docks_sized = True
            if self.prefs.has_window_state():  # a layout saved on another screen is fitted to this one
                QTimer.singleShot(0, self, self.docks.fit_to_screen)
            else:
                self.apply_default_dock_sizes()
                QTimer.singleShot(0, self, self.apply_default_dock_sizes)  # once the docks' layout has settled

    def apply_default_dock_sizes(self) -> None:
        """The dock sizes of what is open (``DockLayout.apply``: the graph gets the screen)."""
        self.docks.apply()

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


def wait_idle(window: MainWindow, app: Any, timeout_s: float = 120.0) -> None:
    """Process events until the window has no load in flight (for --screenshot and tests)."""
    import time

    deadline = time.monotonic() + timeout_s
    while (window.is_busy() or window.plots_pending()) and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)
    for _ in range(5):
        app.processEvents()
