"""The window's engine tools beyond the layer table: the Colour by of every graph (the engine
overlays, each layer's memory, per-node time from any source, a precision variant's error vs FP32 and its first diverging
node, a comparison's change), View > Engine graph, and kernel traces opened beside the open engine.
The MainWindow composes it with the controllers it paints and toggles: ``ui.engine_graph``
(``EngineGraph``), ``ui.compare_dock`` (``CompareController``, Engine > Compare with...) and
``ui.explain_panel`` (``ExplainController``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from trtstudio.engine.node_time import TIME_MODE, time_overlay
from trtstudio.engine.overlay import MEMORY_MODE, MODES, NO_MEMORY, error_overlay, overlay
from trtstudio.ui.compare_dock import CHANGE_MODES
from trtstudio.ui.graph_overlay import paint_overlay

if TYPE_CHECKING:
    from trtstudio.engine.node_time import NodeTimes

ACCURACY_MODE = "Error vs FP32"  # a precision sweep variant's localisation (precision.localize)
# Colour by: the engine overlays (with Memory: each layer's bytes, engine.overlay), per-node time
# from any source, a sweep variant's error per node
OVERLAYS = (*MODES, TIME_MODE, ACCURACY_MODE)

__all__ = ["ACCURACY_MODE", "OVERLAYS", "EngineTools"]


class EngineTools(QObject):
    """Colour by, the engine graph toggle and the precision views of ``window`` (the MainWindow, whose
    ``overlay`` combo box is the Colour by)."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.w = window

    # ---- opening ------------------------------------------------------------------------------
    def engine_files(self, paths: list[str]) -> list[str]:
        """The files to read for ``paths``: kernel traces alone (an Nsight Systems export, a Kineto
        trace) open beside the engine already open, replacing an earlier trace of it."""
        from trtstudio.engine.node_time import is_kernel_trace

        open_paths = self.w.workspace.engine_paths
        if open_paths and paths and all(is_kernel_trace(p) for p in paths):
            return [p for p in open_paths if not is_kernel_trace(p)] + list(paths)
        return paths

    # ---- View > Engine graph ----------------------------------------------------------------------
    def toggle_engine_graph(self) -> None:
        """View > Engine graph: the engine's own graph (laid out in a worker the first time) or the
        model's, in the first tab."""
        w = self.w
        on = w.act_engine_graph.isChecked()
        if on and w.engine_graph.display is None:
            w.graphs.update_engine_toggle()  # checked once it is shown
            w.engine_graph.build(show=True)
            return
        w.graphs.show_engine_graph(on)

    # ---- Colour by --------------------------------------------------------------------------------
    def set_change_modes(self, on: bool) -> None:
        """Add (and pick) or remove the Colour by modes of a comparison (``Change``, ``Change: time``)."""
        box = self.w.overlay
        have = [box.findText(m) >= 0 for m in CHANGE_MODES]
        if on:
            for m, there in zip(CHANGE_MODES, have, strict=True):
                if not there:
                    box.addItem(m)
            if box.currentText() == "Change":
                self.paint("Change")
            box.setCurrentText("Change")
            return
        current = box.currentText()
        for m in CHANGE_MODES:
            i = box.findText(m)
            if i >= 0:
                box.removeItem(i)
        if current in CHANGE_MODES:
            box.setCurrentText("Op category")
        else:
            self.paint(current)

    def apply_overlay(self) -> None:
        """Colour every graph by the Colour by chosen now."""
        self.paint(self.w.overlay.currentText())

    def paint_engine_graph(self) -> None:
        """Colour the engine's own graph by the Colour by chosen now."""
        w = self.w
        mode = w.overlay.currentText()
        change = w.compare.layer_change("base", mode)
        if mode == TIME_MODE and change is None:
            from trtstudio.engine.node_time import layer_time_colors

            engine = w.engine
            change = lambda: layer_time_colors(engine)  # noqa: E731 - each layer's time per inference
        w.engine_graph.paint(mode, change)

    def paint(self, name: str) -> None:
        """Colour every graph by Colour by ``name`` (the combo box's slot)."""
        w = self.w
        self.paint_engine_graph()
        w.compare.paint(name)
        a, dg, side = w.analysis, w.display, w.side_tabs
        if dg is None:
            return
        if name in CHANGE_MODES:
            paint_overlay(w.view, dg, w.compare.model_overlay(name))
            return
        if name == ACCURACY_MODE:
            from trtstudio.precision.localize import accuracy_overlay

            div = side.accuracy if side.measured_graph is dg.graph else None
            paint_overlay(w.view, dg, accuracy_overlay(dg.graph.nodes, div))
            if div is None:
                w.statusBar().showMessage("Error vs FP32: run Engine > Precision sweep and select a variant's row "
                                          "to see where its accuracy is lost", 10000)
            return
        if name == TIME_MODE:
            times = self.node_times()
            if side.measured_graph is not dg.graph:
                side.accuracy = None
            side.measured_graph, side.node_time = dg.graph, times
            paint_overlay(w.view, dg, time_overlay(dg.graph.nodes, times))
            if times is None:
                w.statusBar().showMessage("Time (ms): no per-node times yet: open a TensorRT profile, an Nsight "
                                          "Systems export or a Kineto trace, or profile with Per-layer", 10000)
            return
        usable = a is not None and a.mapping is not None and a.model_path == str(w.model.path)
        ov = overlay(a, dg.graph.nodes, name) if usable else None
        paint_overlay(w.view, dg, ov)
        if name == MEMORY_MODE and ov is not None and not any(label == NO_MEMORY for label, _ in ov.legend):
            w.statusBar().showMessage("Memory: no per-layer memory " + (
                "yet (it comes with the findings)" if a is not None and a.pending else
                "in the engine's files (layer information with tensor shapes, or a verbose build log)"), 10000)

    def node_times(self) -> NodeTimes | None:
        """Per-node time of the open model from whatever measured it (``engine.node_time.node_times``):
        the engine's analysis (a TensorRT profile, Nsight Systems layer ranges), its kernel table (a
        Kineto trace), else the latest run of the model with per-layer rows."""
        from trtstudio.engine.node_time import node_times

        w = self.w
        dg, a = w.display, w.analysis
        if dg is None:
            return None
        usable = a is not None and a.mapping is not None and a.model_path == str(w.model.path)
        rows = next((r.data.layers for r in reversed(w.workspace.runs_of_model())
                     if r.data is not None and not r.active and r.data.layers), None)
        return node_times(analysis=a if usable else None, engine=w.engine, rows=rows,
                          node_names=[n.name for n in dg.graph.nodes])

    # ---- workspace events -------------------------------------------------------------------------
    def on_analysis(self, ws: Any) -> None:
        self.w.engine_tabs.show_analysis(ws.analysis, ws.engine)
        self.on_selection(ws)  # the Kernels tab: the same selection in the new engine
        if self.w.overlay.currentText() != "Op category":  # a support or error overlay stays until replaced
            self.apply_overlay()

    def on_selection(self, ws: Any) -> None:
        from trtstudio.ui.kernels_tab import show_selection

        show_selection(self.w.engine_tabs.kernels_view, ws, self.w.engine)

    def on_runs(self, _ws: Any) -> None:
        if self.w.overlay.currentText() == TIME_MODE:
            self.apply_overlay()

    # ---- precision: error per node, localisation ----------------------------------------------------
    def show_node_errors(self, errors: dict[str, float]) -> None:
        """Heat overlay: each node coloured by the relative error of its output against FP32 (darkest = worst).
        With the precision sweep's variant at hand, its localisation: the first diverging node marked
        and centred, each node's tensor statistics in Properties, the report's section."""
        dg = self.w.display
        if dg is None:
            return
        dlg = self.w.precision_dialog
        result = getattr(dlg, "sweep_result", None) if dlg is not None else None
        variant = next((v for v in getattr(result, "variants", []) if v.node_errors == errors and errors), None)
        if variant is None:
            self.show_overlay(error_overlay(dg.graph.nodes, errors))
            return
        self.show_localization(variant.to_json())

    def show_localization(self, variant: dict[str, Any]) -> dict[str, Any] | None:
        """Draw one precision variant's localisation (``VariantResult.to_json``) on the model's graph
        (``precision.localize``): error as colour, the first diverging node marked and centred; a
        click on a node shows its tensor's statistics; the report gets the section. Returns the
        localisation (None without one)."""
        from trtstudio.precision.localize import divergence, divergence_section

        w = self.w
        dg, side = w.display, w.side_tabs
        div = divergence(variant)
        if dg is None or div is None:
            return None
        if side.measured_graph is not dg.graph:
            side.node_time = None
        side.measured_graph, side.accuracy = dg.graph, div
        if w.overlay.currentText() == ACCURACY_MODE:
            self.paint(ACCURACY_MODE)
        else:
            w.overlay.setCurrentText(ACCURACY_MODE)  # paints it
        first = (div.get("first") or {}).get("node") or (div.get("worst") or {}).get("node")
        if first in dg.graph.node_by_name:
            w.view.center_on([dg.display_index(dg.graph.node_by_name[first])])
        acc = dict(w.workspace.accuracy or {})
        acc[div["variant"]] = variant.get("accuracy") or {}
        acc["divergence"] = [s for s in [divergence_section(div, dg.graph)] if s is not None]
        w.workspace.set_accuracy(acc)
        return div

    def show_overlay(self, ov: Any) -> None:
        """Paint an ``engine.overlay.Overlay`` (support check, errors) on the main graph."""
        paint_overlay(self.w.view, self.w.display, ov)
