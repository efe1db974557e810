"""The window's centre: the model's graph and its subgraphs in tabs, and the cross-links between a
graph, the engine's layer table, the findings, the search and the properties view.

A node selected on the main graph selects its engine layers in the table (through
``Workspace.select_nodes``); layers selected in the table select their nodes on the graph
(``Workspace.select_layers``); a finding selects its layer or nodes; double-clicking a node with
subgraphs (If, Loop, Scan) opens each in a tab of its own. A search hit selects as a click on it
would, in every view. Esc clears the selection everywhere (:meth:`GraphTabs.clear_selection`);
Alt+Left / Alt+Right go back and forward through the workspace's selection history
(:meth:`GraphTabs.back`, :meth:`GraphTabs.forward`), restored in every view.

The first tab holds two views: the model's graph (``view``) and the engine's own graph
(``engine_view``, layers as nodes: ``ui.engine_graph``), one shown at a time (View > Engine graph).
Node ``i`` of the engine graph is layer ``i``: it selects its row in the table, and the table's rows
select their nodes there as on the model's graph.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QStackedWidget, QTabWidget

from trtstudio.graph.display import build_display
from trtstudio.ui.engine_graph import engine_label, show_layer_properties
from trtstudio.ui.graph_view import GraphView


class GraphTabs(QObject):
    """The tabs (``tabs``, the main ``view`` first) and the cross-linking of ``window`` (the MainWindow)."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.w = window
        self._syncing = False
        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.tabCloseRequested.connect(self.close_subgraph_tab)
        self.view = self.new_view()
        self.engine_view = self.new_view()
        self.stack = QStackedWidget()  # the model's graph or the engine's, in the first tab
        self.stack.addWidget(self.view)
        self.stack.addWidget(self.engine_view)
        self.tabs.addTab(self.stack, "Graph")
        self.tabs.tabBar().setTabButton(0, self.tabs.tabBar().ButtonPosition.RightSide, None)

    def new_view(self) -> GraphView:
        v = GraphView()
        v.set_dark(self.w.theme == "Dark")
        v.sig_node_selected.connect(lambda i, v=v: self.on_node_selected(v, i))
        v.sig_node_activated.connect(lambda i, v=v: self.on_node_activated(v, i))
        return v

    def views(self) -> list[GraphView]:
        """Every graph view of the tabs (the model's and the engine's first, comparison views too)."""
        return [self.view, self.engine_view] + [v for v in self.tabs.findChildren(GraphView)
                                                if v is not self.view and v is not self.engine_view]

    def current_view(self) -> GraphView:
        w = self.tabs.currentWidget()
        if w is self.stack:
            return self.stack.currentWidget()  # type: ignore[return-value]
        if hasattr(w, "current_view"):  # a comparison's side-by-side views
            return w.current_view()  # type: ignore[no-any-return]
        return w if isinstance(w, GraphView) else self.view

    # ---- the model's graph or the engine's --------------------------------------------------------
    def showing_engine_graph(self) -> bool:
        """The first tab shows the engine's own graph (not the model's)."""
        return self.stack.currentWidget() is self.engine_view

    def show_engine_graph(self, on: bool) -> None:
        """Show the engine's graph (``on``) or the model's in the first tab, and bring that tab up
        when it is the engine's."""
        self.stack.setCurrentWidget(self.engine_view if on else self.view)
        if on:
            self.tabs.setCurrentIndex(0)
        self.update_engine_toggle()
        search = getattr(self.w, "search_ctl", None)
        if search is not None:  # the search field's matches, in the graph shown now
            search.refresh()

    def update_engine_toggle(self) -> None:
        """The toggle's state and the first tab's title follow what is open and shown."""
        w = self.w
        on = self.showing_engine_graph()
        act = getattr(w, "act_engine_graph", None)
        if act is not None:
            act.blockSignals(True)
            act.setChecked(on)
            act.setEnabled(w.workspace.engine is not None)
            act.blockSignals(False)
        if on:
            self.tabs.setTabText(0, f"Engine: {engine_label(w.workspace.engine_paths)}")
        else:
            self.tabs.setTabText(0, Path(w.model.path).name if w.model is not None else "Graph")

    # ---- subgraphs -------------------------------------------------------------------------------
    def on_node_activated(self, view: GraphView, display_index: int) -> None:
        dg = view.dg
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
        v = self.new_view()
        self.tabs.addTab(v, title)
        v.set_display(build_display(body))
        self.tabs.setCurrentWidget(v)
        return v

    def close_subgraph_tab(self, index: int) -> None:
        """Close the tab at ``index``: a subgraph's, or a comparison's (the main graph, tab 0, stays)."""
        if index > 0:
            w = self.tabs.widget(index)
            self.tabs.removeTab(index)
            if w is not None:
                if hasattr(w, "on_close"):  # a comparison's views: the comparison closes with them
                    w.on_close()
                w.deleteLater()

    def close_subgraphs(self) -> None:
        """Close the tabs of the previous model's subgraphs (a comparison's tab stays)."""
        for i in reversed(range(1, self.tabs.count())):
            if isinstance(self.tabs.widget(i), GraphView):
                self.close_subgraph_tab(i)

    # ---- cross-links -----------------------------------------------------------------------------
    def on_node_selected(self, view: GraphView, display_index: int) -> None:
        if view.dg is None:
            return
        w = self.w
        if view is self.engine_view:
            self._on_layer_node_selected(display_index)
            return
        main = view is self.view
        w.side_tabs.show_properties(view.dg, display_index, w.analysis if main else None)
        if display_index < 0:  # a click on the background: nothing selected
            if main:
                w.workspace.clear_selection(source="graph")
                self._quiet_table([])
            return
        ni = view.dg.node_index(display_index)
        if not main or ni is None:
            return
        sel = w.workspace.select_nodes([view.dg.graph.nodes[ni].name], source="graph")
        if w.analysis is not None:
            self._quiet_table(sel.layers)

    def _quiet_table(self, layers: list[int]) -> None:
        """Select ``layers`` in the table without its signal coming back here."""
        w = self.w
        self._syncing = True
        try:
            w.engine_tabs.select_layers(layers)
        finally:
            self._syncing = False

    def _on_layer_node_selected(self, display_index: int) -> None:
        """A node of the engine's graph: its layer in the table, its ONNX nodes on the model's graph."""
        w, edg = self.w, self.engine_view.dg
        if display_index < 0:
            w.side_tabs.show_properties(None, -1)
            w.workspace.clear_selection(source="engine graph")
            self._quiet_table([])
            self.view.select([], center=False)
            return
        show_layer_properties(w.side_tabs, edg, display_index, w.analysis)
        layer = edg.node_index(display_index) if edg is not None else None
        if w.analysis is None or layer is None:
            return
        sel = w.workspace.select_layers([layer], source="engine graph")
        self._quiet_table(sel.layers)
        self.select_model_nodes(sel, center=False)

    def layer_display_indices(self, dg: object, layer_indices: list[int]) -> list[int]:
        """The display indices of these layers on a layer graph ``dg`` (node ``i`` is layer ``i``)."""
        if dg is None:
            return []
        pos = np.asarray(layer_indices, dtype=np.int64)
        pos = pos[(pos >= 0) & (pos < len(dg.graph.nodes))]  # type: ignore[attr-defined]
        return dg.display_indices_of(pos)  # type: ignore[attr-defined,no-any-return]

    def select_model_nodes(self, sel: Any, center: bool) -> list[int]:
        """Select the ONNX nodes of ``sel`` (a ``workspace.Selection``) on the model's graph."""
        w, dg = self.w, self.w.display
        if dg is None:
            return []
        model = w.workspace.model
        if sel.node_index is not None and model is not None and dg.graph is model.graph:
            idx = dg.display_indices_of(sel.node_index)
        else:
            idx = dg.display_indices(sel.nodes)
        self.view.select(idx, center=center)
        return idx  # type: ignore[no-any-return]

    def on_layers_selected(self, layer_indices: list[int], source: str = "table") -> None:
        w = self.w
        if self._syncing or w.analysis is None:
            return
        sel = w.workspace.select_layers(layer_indices, source=source)
        engine_shown = self.showing_engine_graph()
        eidx = self.layer_display_indices(self.engine_view.dg, sel.layers)
        if self.engine_view.dg is not None:
            self.engine_view.select(eidx, center=engine_shown)
        idx = self.select_model_nodes(sel, center=not engine_shown)
        if w.display is None and self.engine_view.dg is None:
            return
        self.tabs.setCurrentIndex(0)
        if engine_shown and eidx:
            show_layer_properties(w.side_tabs, self.engine_view.dg, eidx[0], w.analysis)
        elif idx:
            w.side_tabs.show_properties(w.display, idx[0], w.analysis)

    def select_layers(self, layer_indices: list[int], source: str = "table") -> None:
        """Select engine layers in the table and their ONNX nodes on the graph (``source``: the
        view the selection came from, as the workspace's history records it)."""
        self.w.engine_tabs.select_layers(layer_indices)
        self.on_layers_selected(layer_indices, source)

    def on_kernel_range_chosen(self, layer: int) -> None:
        """A range of the Kernels tab named after an engine layer: that layer selected everywhere,
        recorded as the Kernels tab's, the tab staying in front."""
        tabs = self.w.engine_tabs
        kv = getattr(tabs, "kernels_view", None)
        self.select_layers([layer], source="kernels")
        if kv is not None:
            tabs.setCurrentWidget(kv)

    def on_finding_clicked(self, layer_index: int | None, nodes: list[str]) -> None:
        dg = self.w.display
        if layer_index is not None:
            self.select_layers([layer_index])
        elif nodes and dg is not None:
            g = dg.graph
            self.view.select([dg.display_index(g.node_by_name[n]) for n in nodes if n in g.node_by_name])

    def on_search_hit(self, view: GraphView, target: int) -> None:
        """A search match selected in ``view``: as a click on it (its layer in the table, Properties
        of the engine layer on the engine's graph, the group's row in a comparison)."""
        view.sig_node_selected.emit(target)

    # ---- Esc, back and forward ------------------------------------------------------------------
    def clear_selection(self) -> None:
        """Esc: nothing selected in any view (graphs, the layer table, the Compare table)."""
        w = self.w
        for v in self.views():
            v.select([], center=False)
        w.side_tabs.show_properties(None, -1)
        self._quiet_table([])
        compare = getattr(w, "compare", None)
        if compare is not None:
            compare.dock_widget.clear_selection()
        kv = getattr(w.engine_tabs, "kernels_view", None)
        if kv is not None:
            kv.clear_rows()
        w.workspace.clear_selection(source="esc")

    def back(self) -> bool:
        """Alt+Left: the selection before this one, in every view (False: none before)."""
        return self.show_selection(self.w.workspace.selection_back())

    def forward(self) -> bool:
        """Alt+Right: the selection back went from (False: none)."""
        return self.show_selection(self.w.workspace.selection_forward())

    def show_selection(self, sel: Any) -> bool:
        """Select ``sel`` (a ``workspace.Selection`` from the history) in every view, unrecorded."""
        w = self.w
        if sel is None:
            return False
        with w.workspace.replaying():
            if sel.layers and w.analysis is not None:
                self.select_layers(list(sel.layers), source=sel.source)
                kv = getattr(w.engine_tabs, "kernels_view", None)
                if sel.source == "kernels" and kv is not None:  # back to a Kernels tab choice: that tab in front
                    w.engine_tabs.setCurrentWidget(kv)
            elif sel.nodes and w.display is not None:
                dg = w.display
                w.workspace.select_nodes(sel.nodes, source=sel.source)
                idx = dg.display_indices(sel.nodes)
                self.tabs.setCurrentIndex(0)
                self.show_engine_graph(False)
                self.view.select(idx, center=True)
                if idx:
                    w.side_tabs.show_properties(dg, idx[0], w.analysis)
            else:
                return False
        return True

    def mark_flagged(self, unsupported: list[dict[str, Any]]) -> int:
        """Mark the nodes the TensorRT parser rejects on the main graph; how many were found."""
        dg = self.w.display
        if dg is None:
            return 0
        g = dg.graph
        self.view.flagged = {dg.display_index(g.node_by_name[u["node"]]) for u in unsupported
                             if u.get("node") in g.node_by_name}
        self.view.update()
        return len(self.view.flagged)


__all__ = ["GraphTabs"]
