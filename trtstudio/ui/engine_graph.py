"""The engine's own graph in the window: its layers as nodes, the tensors between them as edges.

Engine files are often opened without their ONNX model (handed over, a proprietary model, a
session whose model is gone). The graph pane then draws the engine itself
(:func:`trtstudio.engine.layer_graph.layer_model`, laid out by ``graph.display.build_display`` in a
loader worker, as a model is) in ``GraphTabs.engine_view``, a view beside the model's in the first
tab; View > Engine graph switches between the two when both are open.

The layer model never becomes the workspace's model: nothing runs it, reports and sessions never
see it (``engine.layer_graph.is_layer_model``). Node ``i`` is layer ``i`` (``layer_graph`` keeps
layer order), so the table and this view select each other without a mapping, and each node is
coloured from its own layer's row of the analysis (``Analysis.columns``: precision, time, worst
finding) with numpy; layers with a finding (reformats, plugins, precision fallbacks, ...) are
outlined in red in every colouring.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QObject

from trtstudio.engine.overlay import layer_overlay
from trtstudio.graph.categories import CATEGORIES
from trtstudio.ui.graph_colors import IO_COLOR

FINDING_OUTLINE = ("red outline: a layer with a finding", "#e00000")


def build_engine_graph(engine: Any, path: str | None = None) -> tuple[Any, Any]:
    """The engine's layer model and its display graph (run in a worker: the layout grows with the
    engine)."""
    from trtstudio.engine.layer_graph import layer_model
    from trtstudio.graph.display import build_display

    model = layer_model(engine, path)
    display = build_display(model.graph)
    model.graph.search_columns()  # the search field's first keystroke
    return model, display


def engine_label(paths: list[str]) -> str:
    """A short name of an engine from its files: ``resnet.onnx`` for ``resnet.onnx.engine.graph.json``."""
    from trtstudio.engine.naming import stem  # the name every command gives an engine's files

    if not paths:
        return "engine"
    return stem(Path(paths[0].split(",")[0].rstrip("/")).name)


def layer_colors(dg: Any, per_layer: list[str] | np.ndarray) -> list[str]:
    """Colours of every display item of ``dg`` (a layer graph's display) from one colour per layer
    (node ``i`` is layer ``i``); graph inputs and outputs in the I/O colour."""
    out = np.full(dg.n, IO_COLOR, dtype=object)
    start = dg.display_index(0)
    out[start:start + len(per_layer)] = np.asarray(per_layer, dtype=object)
    return out.tolist()  # type: ignore[no-any-return]


def category_colors(dg: Any) -> tuple[list[str], list[tuple[str, str]]]:
    """The op-category colours of ``dg``'s items as an overlay (so the finding outline can be
    added to their legend)."""
    keys = list(CATEGORIES)
    palette = np.asarray([CATEGORIES[k][1] for k in keys] + [IO_COLOR], dtype=object)
    codes = dg.category_codes
    present = set(np.unique(codes[~dg.hidden]).tolist())
    return palette[codes].tolist(), [CATEGORIES[k] for i, k in enumerate(keys) if i in present]


class EngineGraph(QObject):
    """Builds and paints the open engine's layer graph in ``window.graphs.engine_view``.

    Built once per engine as read (``Workspace.engine``), when its diagnosis is in and no ONNX
    model is open, or when View > Engine graph asks for it; dropped when another engine opens."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.w = window
        self.view = window.graphs.engine_view
        self.model: Any = None  # the layer model (engine.layer_graph.layer_model)
        self.display: Any = None
        self._for: Any = None  # the Workspace.engine the graph was made from
        self._building: Any = None  # the engine a worker lays out now
        ev = window.workspace.events
        ev.connect("engine", self._on_engine)
        ev.connect("analysis", self._on_analysis)
        ev.connect("model", self._on_model)

    # ---- building ---------------------------------------------------------------------------------
    def available(self) -> bool:
        """An engine is open (its graph shown, or made on demand)."""
        return self.w.workspace.engine is not None

    def _on_engine(self, ws: Any) -> None:
        if ws.engine is not self._for:
            self.model = self.display = self._for = None
            self.view.set_display(None)
        self.w.graphs.update_engine_toggle()

    def _on_analysis(self, ws: Any) -> None:
        a = ws.analysis
        if a is None or a.pending:
            return
        if self.display is None and ws.model is None:  # engine files alone: their graph is the graph
            self.build()
        elif self.display is not None:
            self.w.paint_engine_graph()

    def _on_model(self, ws: Any) -> None:
        self.w.graphs.show_engine_graph(False)  # an ONNX model opened: its graph comes first

    def build(self, show: bool = False) -> None:
        """Lay out the open engine's graph in a loader worker (``show``: switch to it when done)."""
        ws = self.w.workspace
        engine = ws.engine
        if engine is None or engine is self._building:
            return
        if engine is self._for and self.display is not None:
            if show:
                self.w.graphs.show_engine_graph(True)
            return
        self._building = engine
        path = ws.engine_paths[0] if ws.engine_paths else None

        def done(result: tuple[Any, Any]) -> None:
            if self._building is engine:
                self._building = None
            if ws.engine is not engine:
                return  # another engine opened meanwhile
            self.model, self.display = result
            self._for = engine
            self.view.set_display(self.display)
            self.w.paint_engine_graph()
            if show or ws.model is None:
                self.w.graphs.show_engine_graph(True)
            self.w.graphs.update_engine_toggle()
            self.w.statusBar().showMessage(
                f"Engine graph: {len(self.model.graph.nodes)} layers, {len(self.model.graph.tensors)} tensors", 6000)

        def failed_or_done() -> None:
            if self._building is engine:
                self._building = None

        self.w.loader.work(f"Laying out the engine's graph ({len(engine.layers)} layers)...",
                           lambda: build_engine_graph(engine, path), done, name="engine-graph", after=failed_or_done)

    def adopt(self, model: Any, display: Any) -> None:
        """Take the open engine's graph laid out elsewhere (a comparison's worker)."""
        ws = self.w.workspace
        self.model, self.display, self._for = model, display, ws.engine
        self.view.set_display(display)
        self.w.paint_engine_graph()
        self.w.graphs.update_engine_toggle()

    # ---- painting ---------------------------------------------------------------------------------
    def paint(self, mode: str, change: Any = None) -> None:
        """Colour the layer graph by ``mode`` (the window's Colour by; ``change``: see
        :func:`paint_layers`) and outline layers with findings."""
        dg = self.display
        if dg is None:
            return
        paint_layers(self.view, dg, self.w.analysis, mode, change)

    def node_layer(self, display_index: int) -> int | None:
        """The layer drawn as display item ``display_index`` (None for a graph input/output)."""
        return None if self.display is None else self.display.node_index(display_index)


def show_layer_properties(panel: Any, dg: Any, display_index: int, analysis: Any) -> None:
    """The Properties tab of ``panel`` (the window's ModelPanel) for item ``display_index`` of a
    layer graph: the layer's type, precisions, kernel, time, ONNX nodes, findings and tensors (with
    their formats), from ``analysis`` when it is the open engine's; a graph input/output as usual."""
    from PySide6.QtWidgets import QTreeWidgetItem

    from trtstudio.engine.table import format_text

    layer_index = dg.node_index(display_index) if dg is not None else None
    engine = getattr(analysis, "engine", None)
    if layer_index is None or engine is None or len(engine.layers) != len(dg.graph.nodes):
        panel.show_properties(dg, display_index, None)
        return
    lay = engine.layers[layer_index]
    props = panel.props
    props.clear()

    def add(parent: Any, key: str, value: Any = "") -> Any:
        item = QTreeWidgetItem(parent, [key, str(value)])
        item.setToolTip(1, str(value))
        return item

    add(props, "Layer", f"#{layer_index} {lay.name}")
    add(props, "Type", lay.type + (f" ({lay.parameter_type})" if lay.parameter_type else ""))
    add(props, "Precision", lay.precision or "-")
    if lay.tactic:
        add(props, "Tactic / kernel", lay.tactic)
    t = lay.time
    ms = t.per_inference_ms if t is not None else None
    if t is not None and ms is not None:
        share = f", {t.percent:.3g} % of the engine" if t.percent is not None else ""
        add(props, "Time", f"{ms:.4g} ms per inference{share}")
    nodes = add(props, "ONNX nodes", len(lay.onnx_nodes) if lay.onnx_nodes else "none named")
    for n in lay.onnx_nodes[:50]:
        add(nodes, n)
    found = [f for f in analysis.findings if f.layer_index == layer_index]
    if found:
        fi = add(props, "Findings", len(found))
        for f in found:
            add(fi, f"{f.severity}: {f.kind}", f.message)
    for key, tensors in (("Inputs", lay.inputs), ("Outputs", lay.outputs)):
        ti = add(props, key, len(tensors))
        for td in tensors:
            add(ti, td.name, f"{format_text(td)} {'x'.join(map(str, td.shape)) if td.shape else ''}".strip())
    props.expandAll()
    panel.setCurrentWidget(props)


def paint_layers(view: Any, dg: Any, analysis: Any, mode: str, change: Any = None) -> None:
    """Paint ``view`` (drawing ``dg``, a layer graph) by ``mode``: an overlay of ``layer_overlay``,
    ``change`` (a function giving per-layer colours and a legend, for a comparison's modes) or the
    op categories; layers with a finding in ``analysis`` are outlined (``view.flagged``)."""
    n = len(dg.graph.nodes)
    got = change() if change is not None else layer_overlay(analysis, n, mode) if mode != "Op category" else None
    if got is None:
        colors, legend = category_colors(dg)
    else:
        colors, legend = layer_colors(dg, got[0]), list(got[1])
    cols = getattr(analysis, "columns", None)
    flagged: set[int] = set()
    if cols is not None and len(cols) == n:
        flagged = set((np.flatnonzero(cols.severity > 0) + dg.display_index(0)).tolist())
        if flagged:
            legend.append(FINDING_OUTLINE)
    view.flagged = flagged
    view.set_overlay(colors, legend, None)


__all__ = ["EngineGraph", "build_engine_graph", "category_colors", "engine_label", "layer_colors", "layer_overlay",
           "paint_layers", "show_layer_properties"]
