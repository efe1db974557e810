"""One analysis of an engine against its ONNX model: mapping, findings, per-node figures, table.

:func:`analyze` is a pure function of its inputs (as TREx builds one ``EnginePlan`` and lints it):
it maps the engine's layers to the graph's nodes, runs every diagnostic rule, and derives what the
views need per ONNX node (the layers it became, the worst finding, the time it accounts for) and,
when asked, the layer table's columns. ``trtstudio layers``, the reports and the window all call
it; the window calls its two parts (:func:`mapped`, then :func:`diagnosed`) in the worker that
reads the engine, and shows the first (the table without findings, ``pending``) while the second
runs, so the GUI thread only receives finished :class:`Analysis` objects. The diagnosis also
adds TREx's layer sums to the engine's memory (``engine.summary.add_layer_memory``: the
``layer_*`` keys of ``Analysis.engine.memory``).

The engine given is not changed: the analysis holds a copy whose layers carry ``onnx_nodes``
(without a graph the copy shares the layers: nothing writes into them).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from itertools import chain, repeat
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from trtstudio.engine.diagnose import diagnose
from trtstudio.engine.mapping import MappingResult, map_layers
from trtstudio.engine.model import SEVERITY_RANK, EngineInfo, Finding

_ONNX_NODES = attrgetter("onnx_nodes")

if TYPE_CHECKING:
    import numpy as np

    from trtstudio.engine.table import LayerColumns

SCHEMA = "trtstudio.layers/1"


@dataclass
class Analysis:
    """What :func:`analyze` found.

    ``engine``: a copy of the engine whose layers carry ``onnx_nodes`` and whose ``findings`` are
    this analysis's; ``mapping``: None without a graph; ``node_layers``: ONNX node name -> positions
    in ``engine.layers``; ``node_severity``: node name -> worst finding severity; ``node_time_ms``:
    node name -> summed time per inference of its layers; ``columns``: the layer table (when asked);
    ``model_path``: the model it was computed against (None without one).
    """

    engine: EngineInfo
    findings: list[Finding] = field(default_factory=list)
    mapping: MappingResult | None = None
    node_layers: dict[str, list[int]] = field(default_factory=dict)
    node_severity: dict[str, str] = field(default_factory=dict)
    node_time_ms: dict[str, float] = field(default_factory=dict)
    columns: LayerColumns | None = None
    model_path: str | None = None
    unsupported: list[dict[str, Any]] = field(default_factory=list)
    layer_nodes: LayerNodes | None = field(default=None, compare=False, repr=False)  # with columns and a graph
    pending: bool = False  # mapped, not yet diagnosed (engine.analysis.mapped): no findings yet
    # TREx's engine summary (engine.summary.summary) with "mapping" (engine.summary.mapping_text)
    # where there is a model: made with the findings where the table is made (the window)
    summary: dict[str, Any] | None = field(default=None, compare=False)
    # the engine's memory (engine.memory.memory_of: categories with their sources, per-layer rows,
    # live activations) from the engine and the files it was read from: made with the findings
    # where the table is made (the window's Memory tab, memory columns and Colour by Memory)
    memory: Any = field(default=None, compare=False, repr=False)

    @property
    def total_time_ms(self) -> float | None:
        """The sum of the layers' times per inference (None without a profile)."""
        return self.engine.total_time_ms

    def severity_counts(self) -> dict[str, int]:
        """Findings per severity."""
        out: dict[str, int] = {}
        for f in self.findings:
            out[f.severity] = out.get(f.severity, 0) + 1
        return out

    def layers_of(self, node: str) -> list[int]:
        """Positions in ``engine.layers`` of the layers ONNX node ``node`` became ([] when folded)."""
        return self.node_layers.get(node, [])

    def nodes_of(self, positions: Iterable[int]) -> list[str]:
        """ONNX node names of the layers at ``positions`` (each once, in order)."""
        return self.nodes_and_indices_of(positions)[0]

    def nodes_and_indices_of(self, positions: Iterable[int]) -> tuple[list[str], np.ndarray | None]:
        """:meth:`nodes_of`, and the same nodes as indices into the graph's nodes where the
        analysis has :attr:`layer_nodes` (else None). A selection of every layer (Ctrl+A in the
        table) is 100,000s of names: gathered with numpy from ``layer_nodes`` where the analysis
        has it, else in C from the layers."""
        layers = self.engine.layers
        pos = positions if isinstance(positions, list) else list(positions)
        if pos and not (0 <= min(pos) and max(pos) < len(layers)):
            pos = [p for p in pos if 0 <= p < len(layers)]
        if self.layer_nodes is not None:
            index = self.layer_nodes.nodes_of(pos)
            return self.layer_nodes.names_of(index), index
        return list(dict.fromkeys(chain.from_iterable(map(_ONNX_NODES, map(layers.__getitem__, pos))))), None

    def layers_of_nodes(self, names: Iterable[str]) -> list[int]:
        """Positions of the layers these ONNX nodes became (each once, in the nodes' order)."""
        return list(dict.fromkeys(chain.from_iterable(map(self.node_layers.get, names, repeat(())))))

    def to_json(self) -> dict[str, Any]:
        """The ``trtstudio.layers/1`` document: the engine, its findings and (with a model) the mapping."""
        doc = self.engine.to_json()
        doc["findings"] = [f.to_json() for f in self.findings]
        if self.mapping is not None:
            doc["mapping"] = self.mapping.to_json()
            doc["mapping"]["model"] = self.model_path
        return doc


def _copy_engine(engine: EngineInfo, layers: bool = True) -> EngineInfo:
    """A copy that mapping may write into: the EngineInfo and (``layers``) each Layer shallow-copied
    (their tensors and times are shared, never written by the analysis); without ``layers`` the
    copy's list holds the same Layer objects (for an analysis that writes into none)."""
    out = copy.copy(engine)
    # copy.copy's reduce protocol: 10x slower than shallow_copy
    out.layers = [lay.shallow_copy() for lay in engine.layers] if layers else list(engine.layers)
    out.findings = []
    return out


class LayerNodes:
    """Each layer's ONNX nodes as indices into the graph's nodes, in one array (``index``) cut at
    ``offsets`` (layer ``p``'s are ``index[offsets[p]:offsets[p + 1]]``), with the graph's node
    names (``names``): what a big selection gathers with numpy instead of a dict lookup per name."""

    __slots__ = ("index", "names", "offsets")

    def __init__(self, offsets: np.ndarray, index: np.ndarray, names: list[str]) -> None:
        self.offsets, self.index, self.names = offsets, index, names

    @classmethod
    def of(cls, engine: EngineInfo, graph: Any) -> LayerNodes | None:
        """The layers' ``onnx_nodes`` looked up in ``graph`` (a trtstudio Graph); None where a
        name is not one of its nodes, or the graph has no ``node_by_name``."""
        import numpy as np

        nbn = getattr(graph, "node_by_name", None)
        if not isinstance(nbn, dict):
            return None
        lists = list(map(_ONNX_NODES, engine.layers))
        found = list(map(nbn.get, chain.from_iterable(lists)))
        if None in found:
            return None
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, lists), dtype=np.int64, count=len(lists)), out=offsets[1:])
        names = list(nbn) if len(nbn) == len(graph.nodes) else [n.name for n in graph.nodes]
        return cls(offsets, np.asarray(found, dtype=np.int64), names)

    def nodes_of(self, positions: np.ndarray | list[int]) -> np.ndarray:
        """The node indices of the layers at ``positions`` (valid ones), each once, in the order
        they first appear."""
        import numpy as np

        pos = np.asarray(positions, dtype=np.int64)
        starts = self.offsets[pos]
        counts = self.offsets[pos + 1] - starts
        total = int(counts.sum())
        if not total:
            return np.empty(0, dtype=np.int64)
        # index positions of every layer's run, run after run: start + 0, 1, ... count - 1
        run_start = np.repeat(starts - (np.cumsum(counts) - counts), counts)
        flat = self.index[run_start + np.arange(total, dtype=np.int64)]
        uniq, first = np.unique(flat, return_index=True)
        return uniq[np.argsort(first, kind="stable")]  # type: ignore[no-any-return]

    def names_of(self, nodes: np.ndarray) -> list[str]:
        return list(map(self.names.__getitem__, nodes.tolist()))


def analyze(
    engine: EngineInfo,
    graph: Any = None,
    unsupported: Iterable[dict[str, Any]] | None = None,
    model_precision: str | None = None,
    columns: bool = False,
    machine: Iterable[str] | None = None,
    hand_over: bool = False,
) -> Analysis:
    """Map ``engine`` to ``graph`` (a Model or Graph; None: keep the layers' own ``onnx_nodes``),
    run the diagnostics (``unsupported``: the parser's rejected nodes; ``model_precision``: what
    the model is meant to run in) and derive the per-node figures; ``columns`` also computes the
    layer table's cells; ``machine`` (the files the engine was read from) adds the findings of
    :func:`trtstudio.engine.compat.machine_findings` (can this machine run it: runtime, GPU, driver).
    Pure: ``engine`` is not changed, unless ``hand_over``: the caller will not use it again, and the
    analysis writes into it instead of a copy (a command that prints and exits).

    :func:`mapped` and :func:`diagnosed` in one: the window calls them one after the other, and
    shows the first's table while the second runs."""
    from trtstudio.bigdocs.gcpause import gc_paused

    with gc_paused():  # tens of thousands of small objects and no cycles (see gc_paused)
        return _diagnosed(_mapped(engine, graph, columns, hand_over), graph, unsupported, model_precision, machine)


def mapped(engine: EngineInfo, graph: Any = None, columns: bool = False) -> Analysis:
    """The first part of :func:`analyze`: the mapping, the per-node layers and times and (with
    ``columns``) the table without findings, as an Analysis with ``pending`` set (no findings,
    no node severities). :func:`diagnosed` completes it."""
    from trtstudio.bigdocs.gcpause import gc_paused

    with gc_paused():
        return _mapped(engine, graph, columns, False)


def diagnosed(partial: Analysis, graph: Any = None, unsupported: Iterable[dict[str, Any]] | None = None,
              model_precision: str | None = None, machine: Iterable[str] | None = None) -> Analysis:
    """:func:`analyze`'s result from ``partial`` (:func:`mapped` of the same engine and ``graph``):
    a new Analysis with the findings, node severities and the table's findings columns. ``partial``
    is not changed (the window may be showing it); the two share the layers and the other columns."""
    from trtstudio.bigdocs.gcpause import gc_paused

    with gc_paused():
        return _diagnosed(partial, graph, unsupported, model_precision, machine)


def _graph_of(graph: Any) -> Any:
    return graph.graph if graph is not None and not hasattr(graph, "nodes") and hasattr(graph, "graph") else graph


def _mapped(engine: EngineInfo, graph: Any, columns: bool, hand_over: bool) -> Analysis:
    model_path = getattr(graph, "path", None)
    g = _graph_of(graph)
    # without a graph nothing writes into the layers (mapping does; diagnose and the columns only
    # read): they are shared with ``engine``, not copied (0.17 s at 300,000 layers)
    eng = engine if hand_over else _copy_engine(engine, layers=g is not None)
    eng.findings = []
    mapping = map_layers(eng, g) if g is not None else None
    node_layers: dict[str, list[int]] = {}
    if mapping is not None:
        node_layers = mapping.node_layers
    else:
        for pos, lay in enumerate(eng.layers):
            for n in lay.onnx_nodes:
                node_layers.setdefault(n, []).append(pos)
    node_time: dict[str, float] = {}
    for name, positions in node_layers.items():
        t = 0.0
        timed = False
        for p in positions:
            lt = eng.layers[p].time
            ms = lt.per_inference_ms if lt is not None else None
            if ms is not None:
                t += ms
                timed = True
        if timed:
            node_time[name] = t
    return Analysis(
        engine=eng, mapping=mapping, node_layers=node_layers, node_time_ms=node_time,
        columns=_base_columns(eng) if columns else None,
        model_path=None if model_path is None else str(model_path),
        layer_nodes=LayerNodes.of(eng, g) if columns and g is not None else None, pending=True,
    )


def _diagnosed(partial: Analysis, graph: Any, unsupported: Iterable[dict[str, Any]] | None,
               model_precision: str | None, machine: Iterable[str] | None) -> Analysis:
    g = _graph_of(graph)
    if partial.columns is not None and hasattr(partial.columns.haystack, "made"):
        partial.columns.haystack.made()  # first: a filter typed while the rules run needs it, off the GUI thread
    eng = copy.copy(partial.engine)  # the partial's engine keeps its (empty) findings
    from trtstudio.engine.summary import add_layer_memory

    add_layer_memory(eng)  # TREx's weights and activations: a new memory dict (0.4 s at 300,000 layers, here)
    unsupported_list = [dict(u) for u in (unsupported or ())]
    files = None if machine is None else [str(f) for f in machine]
    findings = diagnose(eng, g, unsupported_list, model_precision=model_precision, mapped=partial.mapping is not None)
    if files is not None:
        from trtstudio.engine.compat import machine_findings

        findings += machine_findings(eng, files)
    eng.findings = findings
    node_severity: dict[str, str] = {}
    for f in findings:
        names = list(f.nodes)
        if f.layer_index is not None and 0 <= f.layer_index < len(eng.layers):
            names += eng.layers[f.layer_index].onnx_nodes
        rank = SEVERITY_RANK.get(f.severity, 0)
        for nm in names:
            if rank > SEVERITY_RANK.get(node_severity.get(nm, ""), 0):
                node_severity[nm] = f.severity
    cols = partial.columns
    if cols is not None:
        from trtstudio.engine.table import with_findings

        cols = with_findings(cols, eng, findings)
    summary = memory = None
    if cols is not None:  # the window's analysis: its summary and memory made here, off the GUI thread
        from trtstudio.engine.summary import mapping_text
        from trtstudio.engine.summary import summary as engine_summary

        summary = engine_summary(eng)
        if partial.mapping is not None:
            summary["mapping"] = mapping_text(eng, partial.mapping)
        memory = engine_memory_of(eng, files or [])
        if memory is not None:
            from trtstudio.engine.table import with_memory

            cols = with_memory(cols, memory.layers, memory_log(memory))
    return replace(partial, engine=eng, findings=findings, node_severity=node_severity, columns=cols,
                   unsupported=unsupported_list, pending=False, summary=summary, memory=memory)


def engine_memory_of(engine: EngineInfo, files: list[str]) -> Any:
    """``engine.memory.memory_of`` of an analysed engine and the files it was read from (those
    still there): its categories, per-layer rows and live activations; None where its files
    cannot be read again (the diagnosis stands without it)."""
    import os
    from pathlib import Path

    from trtstudio.engine.memory import memory_of
    from trtstudio.errors import InputError

    there = [f for f in files if Path(f).is_file()]
    names = [Path(f).name for f in there] or [Path(str(s)).name for s in engine.sources[:1]] or ["engine"]
    common = os.path.commonprefix(names).rstrip("._-") if len(names) > 1 else names[0]
    name = common if len(common) >= 3 else names[0]  # a TREx prefix: resnet.onnx.engine
    try:
        return memory_of(engine, there, name)
    except (InputError, OSError, ValueError):
        return None


def memory_log(memory: Any) -> str:
    """The file an engine's per-layer memory lines came from ("" without any)."""
    return next((str(r["source"]).rsplit(":", 1)[0] for r in memory.layers if r.get("source")), "")


def _base_columns(engine: EngineInfo) -> LayerColumns:
    from trtstudio.engine.table import base_columns  # numpy: imported where the table is wanted

    return base_columns(engine)
