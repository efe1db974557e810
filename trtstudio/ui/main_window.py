"""The main window: ONNX graph in the centre, model summary/properties, engine table, live profile."""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QFileDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QTabWidget,
    QTextBrowser,
    QToolBar,
    QTreeWidget,
    QTreeWidgetItem,
)

from trtstudio import __version__
from trtstudio.palette import heat as _heat
from trtstudio.ui.graph_scene import DisplayGraph, build_display
from trtstudio.ui.graph_view import GraphView

OVERLAYS = ("Op category", "Fused layer", "Precision", "Time share", "Finding")
PRECISION_COLORS = {"FP32": "#d62728", "TF32": "#ff7f0e", "FP16": "#2ca02c", "BF16": "#17becf", "INT8": "#1f77b4",
                    "FP8": "#9467bd", "INT32": "#8c564b", "INT64": "#8c564b", "BOOL": "#7f7f7f"}
SEVERITY_COLORS = {"error": "#d62728", "warning": "#ff9f1c", "info": "#4c9be8"}


def _fmt_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(n)


def run_background(fn: Any, on_done: Any, on_error: Any) -> Any:
    """Run ``fn()`` in a worker thread; ``on_done(result)`` / ``on_error(one_line)`` run on the GUI thread."""
    from trtstudio.ui.workers import error_text, run_in_thread

    return run_in_thread(lambda _state: fn(), on_done=on_done, on_error=lambda exc: on_error(error_text(exc)),
                         name="load")


class MainWindow(QMainWindow):
    sig_model_loaded = Signal(object)
    sig_engine_loaded = Signal(object)
    sig_error = Signal(str)
    sig_report_written = Signal(list)
    sig_session_saved = Signal(str)
    sig_session_loaded = Signal(object)
    sig_environment = Signal(list)

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle(f"trtstudio {__version__}")
        self.resize(1600, 1000)
        self.setAcceptDrops(True)
        self.model: Any = None
        self.display: DisplayGraph | None = None
        self.engine: Any = None
        self.mapping: Any = None
        self.last_error: str | None = None
        self._loading = 0
        self._search_hits: list[int] = []
        self._search_pos = -1
        self._syncing = False

        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.tabCloseRequested.connect(self._on_tab_close)
        self.view = GraphView()
        self.view.sig_node_selected.connect(self._on_view_node_selected)
        self.view.sig_node_activated.connect(self._on_view_node_activated)
        self.tabs.addTab(self.view, "Graph")
        self.tabs.tabBar().setTabButton(0, self.tabs.tabBar().ButtonPosition.RightSide, None)
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.setCentralWidget(self.tabs)

        # model dock: summary + properties
        self.summary = QTextBrowser()
        self.summary.setOpenExternalLinks(False)
        self.props = QTreeWidget()
        self.props.setHeaderLabels(["Property", "Value"])
        self.props.setColumnWidth(0, 150)
        self.props.setAlternatingRowColors(True)
        side = QTabWidget()
        side.addTab(self.props, "Properties")
        side.addTab(self.summary, "Model")
        self.side_tabs = side
        dock = QDockWidget("Model", self)
        dock.setObjectName("dock_model")
        dock.setWidget(side)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
        self.model_dock = dock

        self._make_engine_dock()
        self._make_profile_dock()
        self._make_actions()
        self.status_label = QLabel()
        self.statusBar().addPermanentWidget(self.status_label)
        QTimer.singleShot(0, self._show_environment)
        self.sig_error.connect(self._show_error)
        self._restore_settings()

    # ---- docks ------------------------------------------------------------------------
    def _make_engine_dock(self) -> None:
        self.engine_tabs = QTabWidget()
        self.layer_table = None
        self.charts = None
        self.log_panel = None
        try:
            from trtstudio.ui.layer_table import LayerTableView

            self.layer_table = LayerTableView()
            self.layer_table.sig_layers_selected.connect(self._on_table_layers_selected)
            self.engine_tabs.addTab(self.layer_table, "Layers")
        except ImportError:
            self.engine_tabs.addTab(QLabel("layer table unavailable"), "Layers")
        try:
            from trtstudio.ui.engine_charts import EngineChartsView

            self.charts = EngineChartsView()
            self.engine_tabs.addTab(self.charts, "Time by type / precision")
        except ImportError:
            pass
        self.findings_view = QTreeWidget()
        self.findings_view.setHeaderLabels(["Severity", "Kind", "Layer", "Message", "Hint"])
        self.findings_view.itemClicked.connect(self._on_finding_clicked)
        self.engine_tabs.addTab(self.findings_view, "Findings")
        try:
            from trtstudio.ui.log_panel import LogPanel

            self.log_panel = LogPanel()
            self.engine_tabs.addTab(self.log_panel, "Log")
        except ImportError:
            pass
        dock = QDockWidget("Engine", self)
        dock.setObjectName("dock_engine")
        dock.setWidget(self.engine_tabs)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        self.engine_dock = dock

    def _make_profile_dock(self) -> None:
        self.profile_panel = None
        self.live_panels = None
        holder = QTabWidget()
        try:
            from trtstudio.ui.profile_panel import ProfilePanel

            self.profile_panel = ProfilePanel()
            holder.addTab(self.profile_panel, "Profile")
            if hasattr(self.profile_panel, "sig_layer_times"):
                self.profile_panel.sig_layer_times.connect(self._on_layer_times)
        except ImportError:
            holder.addTab(QLabel("live profiling unavailable"), "Profile")
        dock = QDockWidget("Live profile", self)
        dock.setObjectName("dock_profile")
        scroll = QScrollArea()  # the panels' minimum size must not push the window beyond the screen
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        holder.setMinimumSize(520, 560)
        scroll.setWidget(holder)
        dock.setWidget(scroll)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self.profile_dock = dock

    def _make_actions(self) -> None:
        mb = self.menuBar()
        file_menu = mb.addMenu("&File")
        self.act_open = self._action(file_menu, "&Open model...", QKeySequence.StandardKey.Open, self.open_dialog)
        self._action(file_menu, "Open &engine files...", "Ctrl+E", self.open_engine_dialog)
        self.recent_menu = file_menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file_menu.addSeparator()
        self._action(file_menu, "Open sess&ion...", None, self.open_session_dialog)
        self._action(file_menu, "Sa&ve session...", QKeySequence.StandardKey.Save, self.save_session_dialog)
        self._action(file_menu, "E&xport report...", "Ctrl+Shift+E", self.export_report_dialog)
        self._action(file_menu, "Save &screenshot...", "Ctrl+Shift+S", self._save_screenshot_dialog)
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", QKeySequence.StandardKey.Quit, self.close)
        view_menu = mb.addMenu("&View")
        self._action(view_menu, "&Fit", "F", self._fit_current)
        self._action(view_menu, "Fit &whole graph", "Shift+F", lambda: self._current_view().fit(whole=True))
        self._action(view_menu, "Zoom &in", QKeySequence.StandardKey.ZoomIn, lambda: self._current_view().zoom_by(1.25))
        self._action(view_menu, "Zoom &out", QKeySequence.StandardKey.ZoomOut, lambda: self._current_view().zoom_by(0.8))
        self._action(view_menu, "F&ind", QKeySequence.StandardKey.Find, self._focus_search)
        view_menu.addSeparator()
        for dock in (self.model_dock, self.engine_dock, self.profile_dock):
            view_menu.addAction(dock.toggleViewAction())
        engine_menu = mb.addMenu("&Engine")
        self._action(engine_menu, "&Build engine...", "Ctrl+B", self.open_build_dialog)
        self._action(engine_menu, "&Precision sweep (FP16/BF16/INT8)...", "Ctrl+Shift+P", self.open_precision_dialog)
        prof = mb.addMenu("&Profile")
        self._action(prof, "&Start", "F5", self._start_profile)
        self._action(prof, "S&top", "Shift+F5", self._stop_profile)
        theme = view_menu.addMenu("&Theme")
        for name in ("System", "Light", "Dark"):
            theme.addAction(name, lambda n=name: self.set_theme(n))
        help_menu = mb.addMenu("&Help")
        self._action(help_menu, "Check &environment...", None, self._check_environment)
        self._action(help_menu, "&About", None, self._about)

        tb = QToolBar("Main")
        tb.setObjectName("toolbar_main")
        tb.setMovable(False)
        self.addToolBar(tb)
        tb.addAction(self.act_open)
        tb.addSeparator()
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find node, op type or tensor (Enter = next)")
        self.search.setClearButtonEnabled(True)
        self.search.setFixedWidth(320)
        self.search.returnPressed.connect(self.find_next)
        self.search.textChanged.connect(self._on_search_changed)
        tb.addWidget(self.search)
        tb.addAction("◀", self.find_previous).setToolTip("Previous match (Shift+F3)")
        tb.addAction("▶", self.find_next).setToolTip("Next match (F3)")
        self._action(None, "Next match", "F3", self.find_next)
        self._action(None, "Previous match", "Shift+F3", self.find_previous)
        self.search_label = QLabel("")
        self.search_label.setMinimumWidth(90)
        tb.addWidget(self.search_label)
        tb.addSeparator()
        tb.addWidget(QLabel(" Colour by: "))
        self.overlay = QComboBox()
        self.overlay.addItems(OVERLAYS)
        self.overlay.currentTextChanged.connect(self._apply_overlay)
        tb.addWidget(self.overlay)
        tb.addSeparator()
        tb.addAction("Fit", self._fit_current)

    def _action(self, menu: Any, text: str, shortcut: Any, slot: Any) -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        act.triggered.connect(slot)
        if menu is not None:
            menu.addAction(act)
        else:
            self.addAction(act)
        return act

    # ---- opening ----------------------------------------------------------------------
    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open ONNX model", self._last_dir(),
                                              "ONNX models (*.onnx);;All files (*)")
        if path:
            self.open_path(path)

    def open_engine_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self, "Open engine files (layer info, profile, timing, logs, engine)", self._last_dir(),
            "TensorRT outputs (*.json *.log *.txt *.engine *.plan *.profile);;All files (*)")
        if paths:
            self.open_engine(paths)

    def open_path(self, path: str) -> None:
        """Open a file by kind: .onnx -> model, anything else -> engine files."""
        if str(path).lower().endswith(".onnx"):
            self.open_model(path)
        elif str(path).lower().endswith(".trtstudio"):
            self.open_session(path)
        else:
            self.open_engine([path])

    def open_model(self, path: str | os.PathLike[str]) -> None:
        path = os.fspath(path)
        self._remember(path)
        self._busy(+1, f"Loading {Path(path).name}...")

        def work() -> tuple[Any, DisplayGraph]:
            from trtstudio.graph.model import load_model

            model = load_model(path)
            return model, build_display(model.graph)

        run_background(work, self._on_model_loaded, self._on_load_failed)

    def _on_model_loaded(self, result: tuple[Any, DisplayGraph]) -> None:
        self._busy(-1)
        model, display = result
        # close nested tabs of the previous model
        while self.tabs.count() > 1:
            w = self.tabs.widget(1)
            self.tabs.removeTab(1)
            w.deleteLater()
        self.model = model
        self.display = display
        self.unsupported = []
        self.view.set_display(display)
        self.tabs.setTabText(0, Path(model.path).name)
        self.setWindowTitle(f"{Path(model.path).name} - trtstudio {__version__}")
        self._fill_summary()
        self.props.clear()
        self.side_tabs.setCurrentWidget(self.summary)
        if self.profile_panel is not None and hasattr(self.profile_panel, "set_model"):
            try:
                self.profile_panel.set_model(model.path)
            except Exception as exc:  # noqa: BLE001 - the model still opens
                self.statusBar().showMessage(f"profiling unavailable for this model: {exc}", 8000)
        self._remap()
        self.statusBar().showMessage(
            f"Opened {model.path}: {len(model.graph.nodes)} nodes", 5000)
        self.sig_model_loaded.emit(model)

    def _on_load_failed(self, message: str) -> None:
        self._busy(-1)
        self.sig_error.emit(message)

    def open_engine(self, paths: list[str]) -> None:
        paths = [os.fspath(p) for p in paths]
        for p in paths:
            self._remember(p)
        self._busy(+1, f"Reading {', '.join(Path(p).name for p in paths)}...")

        def work() -> Any:
            from trtstudio.engine.load import load_engine

            return load_engine(paths)

        run_background(work, self._on_engine_loaded, self._on_load_failed)

    def set_engine(self, engine: Any) -> None:
        self.engine = engine
        self._remap()
        self.engine_dock.show()
        self.sig_engine_loaded.emit(engine)

    def _on_engine_loaded(self, engine: Any) -> None:
        self._busy(-1)
        self.set_engine(engine)
        for w in engine.warnings:
            self.statusBar().showMessage(f"warning: {w}", 10000)
        self.statusBar().showMessage(f"Engine: {len(engine.layers)} layers from {', '.join(engine.formats)}", 6000)

    def _remap(self) -> None:
        """(Re)link engine layers and ONNX nodes, run diagnostics, refresh table/overlay."""
        engine = self.engine
        if engine is None:
            return
        self.mapping = None
        if self.model is not None:
            try:
                from trtstudio.engine.mapping import map_layers

                self.mapping = map_layers(engine, self.model.graph)
            except Exception as exc:  # noqa: BLE001
                self.statusBar().showMessage(f"mapping failed: {exc}", 8000)
        try:
            from trtstudio.engine.diagnose import diagnose

            unsupported = getattr(engine, "unsupported", None)
            engine.findings = diagnose(engine, self.model.graph if self.model else None, unsupported)
        except ImportError:
            pass
        except Exception as exc:  # noqa: BLE001
            self.statusBar().showMessage(f"diagnostics failed: {exc}", 8000)
        if self.layer_table is not None:
            self.layer_table.set_engine(engine)
        if self.charts is not None:
            self.charts.set_engine(engine)
        self._fill_findings()
        self._apply_overlay(self.overlay.currentText())

    def _fill_findings(self) -> None:
        self.findings_view.clear()
        if self.engine is None:
            return
        for f in self.engine.findings:
            item = QTreeWidgetItem([f.severity, f.kind, f.layer or "", f.message, f.hint])
            item.setData(0, Qt.ItemDataRole.UserRole, (f.layer_index, list(f.nodes)))
            item.setForeground(0, _qcolor(SEVERITY_COLORS.get(f.severity, "#333")))
            self.findings_view.addTopLevelItem(item)
        for c in range(4):
            self.findings_view.resizeColumnToContents(c)
        self.engine_tabs.setTabText(self.engine_tabs.indexOf(self.findings_view),
                                    f"Findings ({len(self.engine.findings)})")

    # ---- summary & properties ----------------------------------------------------------
    def _fill_summary(self) -> None:
        s = self.model.summary()

        def io_rows(items: list[dict]) -> str:
            return "".join(
                f"<tr><td>{html.escape(t['name'])}</td><td>{t['dtype']}</td>"
                f"<td>[{html.escape(', '.join(str(d) for d in (t['shape'] or ['?'])))}]</td></tr>" for t in items)

        ops = "".join(f"<tr><td>{html.escape(k)}</td><td align=right>{v}</td></tr>" for k, v in s["op_counts"].items())
        subs = "".join(f"<li>{html.escape(g['owner'])}: {g['nodes']} nodes</li>" for g in s["subgraphs"])
        warn = "".join(f"<p style='color:#b00'>{html.escape(w)}</p>" for w in s["warnings"])
        self.summary.setHtml(
            f"<h3>{html.escape(Path(s['path']).name)}</h3>{warn}"
            f"<table cellspacing=2>"
            f"<tr><td><b>IR version</b></td><td>{s['ir_version']}</td></tr>"
            f"<tr><td><b>Opsets</b></td><td>{html.escape(', '.join(f'{k} {v}' for k, v in s['opsets'].items()))}</td></tr>"
            f"<tr><td><b>Producer</b></td><td>{html.escape(s['producer'] or '-')}</td></tr>"
            f"<tr><td><b>Nodes</b></td><td>{s['nodes']} ({s['nodes_total']} with subgraphs)</td></tr>"
            f"<tr><td><b>Parameters</b></td><td>{s['parameters']:,} ({_fmt_bytes(s['parameter_bytes'])})</td></tr>"
            f"</table><h4>Inputs</h4><table>{io_rows(s['inputs'])}</table>"
            f"<h4>Outputs</h4><table>{io_rows(s['outputs'])}</table>"
            + (f"<h4>Subgraphs</h4><ul>{subs}</ul>" if subs else "")
            + f"<h4>Operators</h4><table>{ops}</table>")

    def show_properties(self, dg: DisplayGraph, display_index: int) -> None:
        self.props.clear()
        if display_index < 0:
            return
        graph = dg.graph
        ni = dg.node_index(display_index)

        def add(parent: Any, key: str, value: Any = "") -> QTreeWidgetItem:
            item = QTreeWidgetItem([key, str(value)])
            item.setToolTip(1, str(value))
            if isinstance(parent, QTreeWidget):
                parent.addTopLevelItem(item)
            else:
                parent.addChild(item)
            return item

        def tensor_rows(parent: QTreeWidgetItem, names: list[str]) -> None:
            for tname in names:
                t = graph.tensors.get(tname)
                if t is None:
                    add(parent, tname, "(outer scope)")
                    continue
                item = add(parent, tname, f"{t.dtype} {t.shape_text()}"
                           + (" initializer" if t.kind == "initializer" else ""))
                if t.kind == "initializer":
                    add(item, "bytes", _fmt_bytes(t.nbytes))
                    stats = graph.initializer_stats(tname)
                    if stats:
                        add(item, "min / max / mean",
                            f"{stats['min']:.4g} / {stats['max']:.4g} / {stats['mean']:.4g}")

        if ni is None:
            tname = str(dg.ref[display_index])
            t = graph.tensors[tname]
            add(self.props, "Graph " + ("input" if dg.kind[display_index] == 0 else "output"), tname)
            add(self.props, "dtype", t.dtype)
            add(self.props, "shape", t.shape_text())
        else:
            node = graph.nodes[ni]
            add(self.props, "Name", node.onnx_name or f"(unnamed) {node.name}")
            add(self.props, "Op type", node.op_type)
            add(self.props, "Domain", node.domain or "ai.onnx")
            attrs = node.attributes()
            if attrs:
                a = add(self.props, "Attributes", len(attrs))
                for k, v in attrs.items():
                    add(a, k, v)
            tensor_rows(add(self.props, "Inputs", len(node.inputs)), node.inputs)
            tensor_rows(add(self.props, "Outputs", len(node.outputs)), node.outputs)
            if node.subgraphs:
                s = add(self.props, "Subgraphs", "double-click the node to open")
                for k, g in node.subgraphs.items():
                    add(s, k, f"{g.name}: {len(g.nodes)} nodes")
            if self.mapping is not None and dg.graph is self.model.graph and self.engine is not None:
                layers = self.mapping.node_layers.get(node.name, [])
                lay_item = add(self.props, "Engine layers", len(layers) if layers else "none (folded or removed)")
                for li in layers[:50]:
                    layer = self.engine.layers[li]
                    add(lay_item, layer.name, f"{layer.type} {layer.precision or ''}")
        self.props.expandAll()
        self.side_tabs.setCurrentWidget(self.props)

    # ---- selection & cross-linking ---------------------------------------------------
    def _current_view(self) -> GraphView:
        w = self.tabs.currentWidget()
        return w if isinstance(w, GraphView) else self.view

    def _on_view_node_selected(self, display_index: int) -> None:
        view = self.sender() if isinstance(self.sender(), GraphView) else self.view
        if view.dg is None:
            return
        self.show_properties(view.dg, display_index)
        if view is not self.view or self.mapping is None or self.layer_table is None:
            return
        ni = view.dg.node_index(display_index)
        layers = self.mapping.node_layers.get(view.dg.graph.nodes[ni].name, []) if ni is not None else []
        self._syncing = True
        try:
            self.layer_table.select_layers(layers)
        finally:
            self._syncing = False

    def _on_table_layers_selected(self, layer_indices: list[int]) -> None:
        if self._syncing or self.engine is None or self.display is None:
            return
        graph = self.display.graph
        names = {n for li in layer_indices if 0 <= li < len(self.engine.layers)
                 for n in self.engine.layers[li].onnx_nodes}
        idx = [self.display.display_index(graph.node_by_name[n]) for n in names if n in graph.node_by_name]
        self.tabs.setCurrentIndex(0)
        self.view.select(sorted(idx), center=True)
        if idx:
            self.show_properties(self.display, sorted(idx)[0])

    def _on_finding_clicked(self, item: QTreeWidgetItem) -> None:
        layer_index, nodes = item.data(0, Qt.ItemDataRole.UserRole)
        if layer_index is not None and self.layer_table is not None:
            self.layer_table.select_layers([layer_index])
            self._on_table_layers_selected([layer_index])
        elif nodes and self.display is not None:
            g = self.display.graph
            self.view.select([self.display.display_index(g.node_by_name[n]) for n in nodes if n in g.node_by_name])

    def _on_view_node_activated(self, display_index: int) -> None:
        view = self.sender() if isinstance(self.sender(), GraphView) else self.view
        dg = view.dg
        ni = dg.node_index(display_index) if dg else None
        if ni is None:
            return
        node = dg.graph.nodes[ni]
        for key, body in node.subgraphs.items():
            self.open_subgraph(body, f"{node.name}.{key}")

    def open_subgraph(self, body: Any, title: str) -> GraphView:
        for i in range(1, self.tabs.count()):
            if self.tabs.tabText(i) == title:
                self.tabs.setCurrentIndex(i)
                return self.tabs.widget(i)
        v = GraphView()
        v.set_dark(getattr(self, "theme", "Light") == "Dark")
        v.sig_node_selected.connect(self._on_view_node_selected)
        v.sig_node_activated.connect(self._on_view_node_activated)
        self.tabs.addTab(v, title)
        v.set_display(build_display(body))
        self.tabs.setCurrentWidget(v)
        return v

    def _on_tab_close(self, index: int) -> None:
        if index > 0:
            w = self.tabs.widget(index)
            self.tabs.removeTab(index)
            w.deleteLater()

    def _on_tab_changed(self, _index: int) -> None:
        self._on_search_changed(self.search.text())

    # ---- search --------------------------------------------------------------------------
    def _on_search_changed(self, text: str) -> None:
        view = self._current_view()
        if view.dg is None:
            return
        hits = view.dg.graph.find(text) if text.strip() else []
        self._search_hits = [view.dg.display_index(i) for i in hits]
        self._search_pos = -1
        view.highlight = set(self._search_hits)
        view.update()
        self.search_label.setText(f"{len(hits)} matches" if text.strip() else "")

    def find_next(self, step: int = 1) -> None:
        if not self._search_hits:
            self._on_search_changed(self.search.text())
        if not self._search_hits:
            return
        self._search_pos = (self._search_pos + step) % len(self._search_hits)
        target = self._search_hits[self._search_pos]
        view = self._current_view()
        view.select([target], center=True)
        self.show_properties(view.dg, target)
        self.search_label.setText(f"{self._search_pos + 1} of {len(self._search_hits)}")

    def find_previous(self) -> None:
        self.find_next(-1)

    def _focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    # ---- overlays -------------------------------------------------------------------------
    def _apply_overlay(self, name: str) -> None:
        dg = self.display
        if dg is None:
            return
        if name == "Op category" or self.engine is None or self.mapping is None:
            self.view.set_overlay(None)
            return
        import numpy as np

        engine = self.engine
        n = dg.n
        colors = ["#e8e8e8"] * n
        folded = np.zeros(n, bool)
        legend: list[tuple[str, str]] = []
        node_layers = self.mapping.node_layers
        nodes = dg.graph.nodes
        total = engine.total_time_ms or 0.0
        sev_rank = {"error": 3, "warning": 2, "info": 1}
        node_finding: dict[str, str] = {}
        for f in engine.findings:
            names = list(f.nodes)
            if f.layer_index is not None and 0 <= f.layer_index < len(engine.layers):
                names += engine.layers[f.layer_index].onnx_nodes
            for nm in names:
                if sev_rank.get(f.severity, 0) > sev_rank.get(node_finding.get(nm, ""), 0):
                    node_finding[nm] = f.severity
        palette = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                   "#9c755f", "#bab0ac"]
        for node in nodes:
            di = dg.display_index(node.index)
            layers = node_layers.get(node.name, [])
            if not layers:
                folded[di] = True
                colors[di] = "#cfcfcf"
                continue
            lay = engine.layers[layers[0]]
            if name == "Fused layer":
                colors[di] = palette[layers[0] % len(palette)]
            elif name == "Precision":
                colors[di] = PRECISION_COLORS.get(lay.precision or "", "#999999")
            elif name == "Time share":
                t = sum((engine.layers[li].time.total_ms or 0.0) for li in layers if engine.layers[li].time)
                share = (t / total) if total else 0.0
                colors[di] = _heat(min(1.0, share * 10))
            elif name == "Finding":
                colors[di] = SEVERITY_COLORS.get(node_finding.get(node.name, ""), "#a8d5a2")
        if name == "Precision":
            used = {engine.layers[li].precision for ls in node_layers.values() for li in ls}
            legend = [(p, c) for p, c in PRECISION_COLORS.items() if p in used]
        elif name == "Time share":
            legend = [(">= 10% of engine time", _heat(1.0)), ("5%", _heat(0.5)), ("< 1%", _heat(0.05))]
        elif name == "Finding":
            legend = [("error", SEVERITY_COLORS["error"]), ("warning", SEVERITY_COLORS["warning"]),
                      ("info", SEVERITY_COLORS["info"]), ("no finding", "#a8d5a2")]
        elif name == "Fused layer":
            legend = [("colour = engine layer", palette[0])]
        legend.append(("no engine layer (folded)", "#cfcfcf"))
        self.view.set_overlay(colors, legend, folded)

    def _on_layer_times(self, layers: Any) -> None:
        self.statusBar().showMessage(f"per-layer profile: {len(layers)} entries", 5000)

    # ---- build / profile ---------------------------------------------------------------------
    def open_build_dialog(self) -> None:
        if self.model is None:
            self.sig_error.emit("open an ONNX model first (File > Open)")
            return
        try:
            from trtstudio.ui.build_dialog import BuildDialog
        except ImportError as exc:
            self.sig_error.emit(f"build dialog unavailable: {exc}")
            return
        dlg = BuildDialog(self.model.path, self, log_panel=self.log_panel)
        dlg.sig_built.connect(self._on_built)
        dlg.sig_unsupported.connect(self.mark_unsupported)
        dlg.show()
        self.build_dialog = dlg

    def open_precision_dialog(self) -> None:
        if self.model is None:
            self.sig_error.emit("open an ONNX model first (File > Open)")
            return
        from trtstudio.ui.precision_dialog import PrecisionSweepDialog

        dlg = PrecisionSweepDialog(self.model.path, self)
        dlg.sig_node_errors.connect(self.show_node_errors)
        dlg.show()
        self.precision_dialog = dlg

    def show_node_errors(self, errors: dict[str, float]) -> None:
        """Heat overlay: each node coloured by the relative error of its output against FP32 (darkest = worst)."""
        dg = self.display
        if dg is None or not errors:
            self.view.set_overlay(None)
            return
        worst = max((v for v in errors.values() if v == v), default=0.0) or 1.0
        colors = ["#e8e8e8"] * dg.n
        for node in dg.graph.nodes:
            if node.name in errors:
                colors[dg.display_index(node.index)] = _heat(float(errors[node.name]) / worst)
        legend = [(f"rel. error {worst:.3g} (worst)", _heat(1.0)), (f"{worst / 2:.3g}", _heat(0.5)),
                  ("~0", _heat(0.0)), ("not measured", "#e8e8e8")]
        self.view.set_overlay(colors, legend)

    def mark_unsupported(self, items: list[dict[str, Any]]) -> None:
        """Mark the nodes the TensorRT parser rejects on the graph (red dashed border) and keep them for diagnose."""
        self.unsupported = list(items)
        if self.display is None:
            return
        g = self.display.graph
        idx = [self.display.display_index(g.node_by_name[u["node"]]) for u in items
               if u.get("node") in g.node_by_name]
        self.view.flagged = set(idx)
        self.view.update()
        if idx:
            self.statusBar().showMessage(f"{len(items)} node(s) the TensorRT parser rejects are marked in red", 10000)
        if self.engine is not None:
            self.engine.unsupported = self.unsupported
            self._remap()

    def _on_built(self, result: Any) -> None:
        engine = getattr(result, "engine_info", None) or (result if hasattr(result, "layers") else None)
        if engine is not None:
            engine.unsupported = getattr(self, "unsupported", [])
            self.set_engine(engine)

    def _start_profile(self) -> None:
        if self.profile_panel is not None:
            self.profile_dock.show()
            self.profile_panel.start()

    def _stop_profile(self) -> None:
        if self.profile_panel is not None:
            self.profile_panel.stop()

    # ---- misc ---------------------------------------------------------------------------------
    def _fit_current(self) -> None:
        self._current_view().fit()

    def _busy(self, delta: int, message: str = "") -> None:
        self._loading = max(0, self._loading + delta)
        if message:
            self.statusBar().showMessage(message)
        elif self._loading == 0:
            self.statusBar().clearMessage()

    def is_busy(self) -> bool:
        return self._loading > 0

    def _show_error(self, message: str) -> None:
        """One line, in a non-blocking dialog; nothing that was open is closed."""
        self.last_error = message
        self.statusBar().showMessage(f"error: {message}", 15000)
        box = QMessageBox(QMessageBox.Icon.Critical, "trtstudio", message, QMessageBox.StandardButton.Ok, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setModal(False)
        box.show()
        self._error_box = box

    def _show_environment(self) -> None:
        """Status bar: which backends and GPU are usable. Probed once in a worker (NVML, libcuda, ORT)."""
        self.status_label.setText("checking backends and GPU...")
        self.environment: list[dict[str, Any]] = []

        def work() -> list[dict[str, Any]]:
            from trtstudio.environment import check_environment

            return check_environment(probe_gpu=True)

        run_background(work, self._on_environment, lambda msg: self.status_label.setText(f"environment: {msg}"))

    def _on_environment(self, items: list[dict[str, Any]]) -> None:
        self.environment = items
        by = {it["name"]: it for it in items}
        have = [n for n in ("onnxruntime", "tensorrt", "tensorrt_rtx", "pycuda") if by.get(n, {}).get("status") == "ok"]
        driver = by.get("NVIDIA driver", {})
        gpu = driver.get("detail") if driver.get("status") == "ok" else "no GPU"
        self.status_label.setText(f"backends: {', '.join(have) or 'none'} | GPU: {gpu}")
        self.sig_environment.emit(items)

    # ---- reports and sessions ------------------------------------------------------------------
    def last_run(self) -> Any:
        """The last finished profiling run as report RunData (samples included), else None."""
        outcome = getattr(self.profile_panel, "last_outcome", None) if self.profile_panel is not None else None
        if outcome is not None and outcome.result is not None:
            from trtstudio.report.session import RunData

            return RunData.from_result(outcome.result, name=outcome.request.backend, backend=outcome.request.backend,
                                       model=outcome.request.model, layers=outcome.layers,
                                       shapes={k: list(v) for k, v in outcome.shapes.items()},
                                       extra_memory=outcome.backend_memory)
        return getattr(self, "session_run", None)

    def _report_inputs(self) -> dict[str, Any]:
        png = None
        if self.display is not None:
            from PySide6.QtCore import QBuffer, QIODevice

            buf = QBuffer()
            buf.open(QIODevice.OpenModeFlag.WriteOnly)
            self.view.grab().save(buf, "PNG")
            png = bytes(buf.data())
        return {"model": self.model, "engine": self.engine, "run": self.last_run(),
                "accuracy": getattr(self, "session_accuracy", None), "graph_png": png,
                "title": Path(self.model.path).stem if self.model is not None else None}

    def export_report_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export report", os.path.join(self._last_dir(), "trtstudio-report.html"),
            "HTML (*.html);;PDF (*.pdf);;JSON (*.json);;CSV (*.csv)")
        if path:
            self.export_report(path)

    def export_report(self, path: str) -> None:
        """Write the report (format by extension) in a worker; ``sig_report_written`` when done."""
        if self.model is None and self.engine is None and self.last_run() is None:
            self.sig_error.emit("nothing to report yet: open a model or engine files, or run a profile")
            return
        inputs = self._report_inputs()
        self._busy(+1, f"Writing {Path(path).name}...")

        def work() -> list[str]:
            from trtstudio.report import build_report, write_report

            return [str(p) for p in write_report(build_report(**inputs), path)]

        def done(paths: list[str]) -> None:
            self._busy(-1)
            self.statusBar().showMessage(f"Report written: {', '.join(paths)}", 10000)
            self.sig_report_written.emit(paths)

        run_background(work, done, self._on_load_failed)

    def save_session_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save session", os.path.join(self._last_dir(), "session.trtstudio"),
                                              "trtstudio sessions (*.trtstudio)")
        if path:
            self.save_session(path if path.endswith(".trtstudio") else path + ".trtstudio")

    def save_session(self, path: str) -> None:
        """Model, engine files, run and statistics to one .trtstudio file (atomic write), in a worker."""
        inputs = self._report_inputs()
        self._busy(+1, f"Saving {Path(path).name}...")

        def work() -> str:
            from trtstudio.report import save_session

            return str(save_session(path, **inputs))

        def done(p: str) -> None:
            self._busy(-1)
            self._remember(p)
            self.statusBar().showMessage(f"Session saved: {p}", 8000)
            self.sig_session_saved.emit(p)

        run_background(work, done, self._on_load_failed)

    def open_session_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open session", self._last_dir(), "trtstudio sessions (*.trtstudio)")
        if path:
            self.open_session(path)

    def open_session(self, path: str) -> None:
        """Restore a session: its model (when the file is still there), its engine and its run."""
        self._busy(+1, f"Opening {Path(path).name}...")

        def work() -> Any:
            from trtstudio.report import load_session

            return load_session(path)

        def done(session: Any) -> None:
            self._busy(-1)
            self._remember(path)
            self.session = session
            self.session_run = session.runs[0] if session.runs else None
            self.session_accuracy = session.accuracy
            if session.engines:
                self.set_engine(session.engines[0].info)
            if session.model_path and os.path.exists(session.model_path):
                self.open_model(session.model_path)
            elif session.model_path:
                self.statusBar().showMessage(f"session model {session.model_path} is missing; engine and run restored",
                                             10000)
            self.sig_session_loaded.emit(session)

        run_background(work, done, self._on_load_failed)

    # ---- settings, recent files, theme ------------------------------------------------------
    def settings(self) -> QSettings:
        return QSettings("trtstudio", "trtstudio")

    def _restore_settings(self) -> None:
        st = self.settings()
        geo = st.value("window/geometry")
        if isinstance(geo, QByteArray) and not geo.isEmpty():
            self.restoreGeometry(geo)
        state = st.value("window/state")
        if isinstance(state, QByteArray) and not state.isEmpty():
            self.restoreState(state)
        self.set_theme(str(st.value("view/theme", "System")))

    def _save_settings(self) -> None:
        st = self.settings()
        st.setValue("window/geometry", self.saveGeometry())
        st.setValue("window/state", self.saveState())
        st.sync()

    def recent_files(self) -> list[str]:
        value = self.settings().value("recent/files", [])
        items = [value] if isinstance(value, str) else list(value or [])
        return [str(v) for v in items if v]

    def _remember(self, path: str) -> None:
        full = os.path.abspath(path)
        st = self.settings()
        recent = [full] + [p for p in self.recent_files() if p != full]
        st.setValue("recent/files", recent[:12])
        st.setValue("recent/last_dir", os.path.dirname(full))

    def _last_dir(self) -> str:
        return str(self.settings().value("recent/last_dir", "") or "")

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        if not files:
            self.recent_menu.addAction("(none)").setEnabled(False)
        for path in files:
            act = self.recent_menu.addAction(path)
            act.setEnabled(os.path.exists(path))
            act.triggered.connect(lambda _=False, p=path: self.open_path(p))

    def set_theme(self, name: str) -> None:
        """System (follows the desktop's colour scheme), Light or Dark."""
        from PySide6.QtGui import QGuiApplication, QPalette
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance()
        if app is None:
            return
        dark = name == "Dark"
        if name == "System":
            hints = QGuiApplication.styleHints()
            scheme = getattr(hints, "colorScheme", None)
            dark = scheme is not None and scheme() == Qt.ColorScheme.Dark
        self.settings().setValue("view/theme", name)
        if dark:
            pal = QPalette()
            for role, col in ((QPalette.ColorRole.Window, "#2b2b2b"), (QPalette.ColorRole.WindowText, "#e6e6e6"),
                              (QPalette.ColorRole.Base, "#1f1f1f"), (QPalette.ColorRole.AlternateBase, "#292929"),
                              (QPalette.ColorRole.Text, "#e6e6e6"), (QPalette.ColorRole.Button, "#353535"),
                              (QPalette.ColorRole.ButtonText, "#e6e6e6"), (QPalette.ColorRole.Highlight, "#3d7bd9"),
                              (QPalette.ColorRole.HighlightedText, "#ffffff"), (QPalette.ColorRole.ToolTipBase, "#333"),
                              (QPalette.ColorRole.ToolTipText, "#eee")):
                pal.setColor(role, _qcolor(col))
            app.setPalette(pal)
        else:
            app.setPalette(app.style().standardPalette())
        self.theme = "Dark" if dark else "Light"
        for i in range(self.tabs.count()):
            w = self.tabs.widget(i)
            if isinstance(w, GraphView):
                w.set_dark(dark)

    def _check_environment(self) -> None:
        try:
            from trtstudio.environment import check_environment
        except ImportError:
            self.sig_error.emit("environment check unavailable")
            return
        rows = check_environment(probe_gpu=True)
        lines = []
        for r in rows:
            mark = {"ok": "OK", "missing": "MISSING", "warning": "WARN"}.get(r.get("status", ""), r.get("status", ""))
            line = f"{mark:8} {r.get('name')}: {r.get('version') or ''} {r.get('detail') or ''}".rstrip()
            if r.get("status") != "ok" and r.get("fix"):
                line += f"\n         fix: {r['fix']}"
            lines.append(line)
        box = QMessageBox(QMessageBox.Icon.Information, "Check environment", "What trtstudio can use on this machine:",
                          QMessageBox.StandardButton.Ok, self)
        box.setDetailedText("\n".join(lines))
        box.setInformativeText("\n".join(ln.split("\n")[0] for ln in lines))
        box.setModal(False)
        box.show()
        self._env_box = box

    def _about(self) -> None:
        rows = "".join(f"<tr><td>{html.escape(str(it['name']))}</td><td>{html.escape(str(it.get('version') or '-'))}"
                       f"</td><td>{html.escape(str(it.get('detail') or ''))}</td></tr>"
                       for it in getattr(self, "environment", []))
        QMessageBox.about(self, "About trtstudio",
                          f"<h3>trtstudio {__version__}</h3><p>Open desktop profiler for NVIDIA TensorRT: the ONNX "
                          f"graph, the engine's layers and live runs together.</p>"
                          f"<table cellspacing=4>{rows}</table>"
                          "<p>Help &gt; Check environment says how to install what is missing.</p>")

    def _save_screenshot_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save screenshot", "trtstudio.png", "PNG (*.png)")
        if path:
            self.grab().save(path)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        models = [p for p in paths if p.lower().endswith(".onnx")]
        for p in paths:
            if p.lower().endswith(".trtstudio"):
                self.open_session(p)
        others = [p for p in paths if not p.lower().endswith((".onnx", ".trtstudio"))]
        if models:
            self.open_model(models[0])
        if others:
            self.open_engine(others)
        event.acceptProposedAction()

    def shutdown(self) -> None:
        """Stop and join every worker (profiling runs, builds, loads)."""
        if self.profile_panel is not None and hasattr(self.profile_panel, "shutdown"):
            self.profile_panel.shutdown()
        for attr in ("build_dialog", "precision_dialog"):
            dlg = getattr(self, attr, None)
            if dlg is not None:
                try:
                    dlg.close()
                except RuntimeError:  # already deleted
                    pass
        from trtstudio.ui import workers

        workers.shutdown_all(30000)

    def showEvent(self, event: Any) -> None:  # noqa: N802
        super().showEvent(event)
        if not getattr(self, "_docks_sized", False) and self.settings().value("window/state") is None:
            self._docks_sized = True
            self.apply_default_dock_sizes()

    def apply_default_dock_sizes(self) -> None:
        w, h = self.width(), self.height()
        self.resizeDocks([self.model_dock, self.profile_dock], [int(w * 0.16), int(w * 0.6)],
                         Qt.Orientation.Horizontal)
        self.resizeDocks([self.engine_dock], [int(h * 0.32)], Qt.Orientation.Vertical)

    def demo_highlight(self) -> None:
        """For the demo: select the engine layer that fused the most ONNX nodes and show it on the graph."""
        if self.engine is None or self.layer_table is None or self.display is None:
            return
        best = max(range(len(self.engine.layers)), key=lambda i: len(self.engine.layers[i].onnx_nodes), default=None)
        if best is None or not self.engine.layers[best].onnx_nodes:
            return
        self.layer_table.select_layers([best])
        self._on_table_layers_selected([best])

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        self._save_settings()
        self.shutdown()
        super().closeEvent(event)


def _qcolor(hex_: str) -> Any:
    from PySide6.QtGui import QColor

    return QColor(hex_)


def wait_idle(window: MainWindow, app: Any, timeout_s: float = 120.0) -> None:
    """Process events until the window has no load in flight (for --screenshot and tests)."""
    import time

    deadline = time.monotonic() + timeout_s
    while window.is_busy() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)
    for _ in range(5):
        app.processEvents()

