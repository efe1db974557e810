"""The window's centre: the model's graph and its subgraphs in tabs, and the cross-links between a
graph, the engine's layer table, the findings, the search and the properties view.

A node selected on the main graph selects its engine layers in the table (through
``Workspace.select_nodes``); layers selected in the table select their nodes on the graph
(``Workspace.select_layers``); a finding selects its layer or nodes; double-clicking a node with
subgraphs (If, Loop, Scan) opens each in a tab of its own.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QTabWidget

from trtstudio.graph.display import build_display
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
        self.tabs.addTab(self.view, "Graph")
        self.tabs.tabBar().setTabButton(0, self.tabs.tabBar().ButtonPosition.RightSide, None)

    def new_view(self) -> GraphView:
        v = GraphView()
        v.set_dark(self.w.theme == "Dark")
        v.sig_node_selected.connect(lambda i, v=v: self.on_node_selected(v, i))
        v.sig_node_activated.connect(lambda i, v=v: self.on_node_activated(v, i))
        return v

    def views(self) -> list[GraphView]:
        return [w for w in (self.tabs.widget(i) for i in range(self.tabs.count())) if isinstance(w, GraphView)]

    def current_view(self) -> GraphView:
        w = self.tabs.currentWidget()
        return w if isinstance(w, GraphView) else self.view

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
        """Close the subgraph tab at ``index`` (the main graph, tab 0, stays)."""
        if index > 0:
            w = self.tabs.widget(index)
            self.tabs.removeTab(index)
            if w is not None:
                w.deleteLater()

    def close_subgraphs(self) -> None:
        while self.tabs.count() > 1:  # nested tabs of the previous model
            self.close_subgraph_tab(1)

    # ---- cross-links -----------------------------------------------------------------------------
    def on_node_selected(self, view: GraphView, display_index: int) -> None:
        if view.dg is None:
            return
        w = self.w
        main = view is self.view
        w.side_tabs.show_properties(view.dg, display_index, w.analysis if main else None)
        ni = view.dg.node_index(display_index)
        if not main or w.analysis is None or ni is None:
            return
        sel = w.workspace.select_nodes([view.dg.graph.nodes[ni].name], source="graph")
        self._syncing = True
        try:
            w.engine_tabs.select_layers(sel.layers)
        finally:
            self._syncing = False

    def on_layers_selected(self, layer_indices: list[int]) -> None:
        w = self.w
        dg = w.display
        if self._syncing or w.analysis is None or dg is None:
            return
        sel = w.workspace.select_layers(layer_indices, source="table")
        model = w.workspace.model
        if sel.node_index is not None and model is not None and dg.graph is model.graph:
            idx = dg.display_indices_of(sel.node_index)
        else:
            idx = dg.display_indices(sel.nodes)
        self.tabs.setCurrentIndex(0)
        self.view.select(idx, center=True)
        if idx:
            w.side_tabs.show_properties(dg, idx[0], w.analysis)

    def select_layers(self, layer_indices: list[int]) -> None:
        """Select engine layers in the table and their ONNX nodes on the graph."""
        self.w.engine_tabs.select_layers(layer_indices)
        self.on_layers_selected(layer_indices)

    def on_finding_clicked(self, layer_index: int | None, nodes: list[str]) -> None:
        dg = self.w.display
        if layer_index is not None:
            self.select_layers([layer_index])
        elif nodes and dg is not None:
            g = dg.graph
            self.view.select([dg.display_index(g.node_by_name[n]) for n in nodes if n in g.node_by_name])

    def on_search_hit(self, view: GraphView, target: int) -> None:
        self.w.side_tabs.show_properties(view.dg, target, self.w.analysis if view is self.view else None)

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
