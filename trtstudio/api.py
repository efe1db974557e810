"""trtstudio as a Python library: the public API, a thin face over the objects the CLI and the window use.

Where TREx's users worked (``EnginePlan(graph.json, profile.json)``, ``plan.df``, linters and
comparison plots in notebook cells)::

    import trtstudio as ts

    plan = ts.open_engine("A100/fp32", name="fp32")     # a folder, or the files of one engine
    plan.df                                             # pandas: one row per layer, TREx's columns beside ours
    plan.get_layers_by_type("Convolution")              # TREx's type: every convolution
    plan.summary()                                      # TREx's summary fields; plan.glance(): At a glance
    plan.time_by_type(), plan.time_by_precision()       # ms per inference, largest first
    plan.findings, plan.provenance
    plan.graph(color_by="precision"), plan.plot_layers(color_by="type"), plan.plot_timing()
    d = ts.diff(plan, ts.open_engine("A100/fp16"))      # trtstudio diff: aligned groups, verdict
    ts.compare(plan, "A100/fp16")                       # trtstudio compare
    ts.explain(ts.open_engine("A100/qat"), against=plan)
    r = ts.profile("model.onnx", iterations=200)        # samples as numpy, statistics
    ts.report(model="model.onnx", engine=plan, run=r).save("report.html")

Every object shows itself in Jupyter (``_repr_html_``) and draws its plots as SVG (``plot_*``
methods return an :class:`SVG`, shown inline and saved with ``.save(path)``), without a display
server. Nothing here computes what the core does not: ``open_engine`` reads with
``engine.load.load_engine`` and analyses with ``engine.analysis.analyze`` (what ``trtstudio layers``
runs), ``diff`` is ``diff.core.diff``, ``profile`` is ``profiling.session.run_profile``, ``report`` is
``report.model.build_report``. pandas is imported only by ``.df`` (the ``[notebook]`` extra).

Stability: the names in ``trtstudio.__all__`` follow semantic versioning (README, "Python API").
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas

    from trtstudio.diff.core import Diff as _CoreDiff
    from trtstudio.diff.explain import Explanation as _CoreExplanation
    from trtstudio.diff.sides import Side
    from trtstudio.engine.analysis import Analysis
    from trtstudio.graph.model import Model as _GraphModel

__all__ = ["SVG", "Comparison", "Diff", "EnginePlan", "EngineWarning", "Explanation", "ModelInfo", "ProfileResult",
           "ReportDoc", "Summary", "compare", "diff", "explain",
           "open_engine", "open_model", "profile", "report"]

_E = html.escape


class SVG:
    """An SVG picture: shown inline by Jupyter, ``.save(path)`` writes it, ``str()`` is its text.
    Its XML namespace is always declared (``report.plots.standalone``): without it an exported
    notebook (``jupyter nbconvert --to html``) shows a broken image."""

    def __init__(self, text: str) -> None:
        from trtstudio.report.plots import standalone

        self.text = standalone(text)

    def _repr_svg_(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the SVG to ``path`` as a standalone file (its XML namespace declared)."""
        p = Path(path)
        p.write_text(self.text, encoding="utf-8")
        return p


def _ms(v: Any) -> str:
    from trtstudio.fmt import sig

    return "-" if v is None else f"{sig(float(v))} ms"


def _table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    head = "".join(f"<th style='text-align:left'>{_E(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_E('' if c is None else str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def flatten_layer(rec: dict[str, Any]) -> dict[str, Any]:
    """A ``layers --json`` layer record as one flat row (what :attr:`EnginePlan.df` holds): its
    ``time_ms`` dict becomes ``time_total_ms``, ``time_average_ms``, ``time_median_ms``,
    ``time_percent`` and ``time_count``; tensors stay lists of dicts."""
    row = {k: v for k, v in rec.items() if k != "time_ms"}
    t = rec.get("time_ms") or {}
    row.update(time_total_ms=t.get("total"), time_average_ms=t.get("average"), time_median_ms=t.get("median"),
               time_percent=t.get("percent"), time_count=t.get("count"))
    return row


def _engine_paths(paths: Sequence[str | os.PathLike[str]]) -> tuple[list[str], str | None, str]:
    """Files of one engine, its model and its label, named as every command names them
    (``engine.naming.resolve``: a folder, FILE,FILE,..., a TREx prefix, files, an ``.onnx``)."""
    from trtstudio.engine.naming import NamingError, resolve

    named = resolve(paths)
    if named.session:
        raise NamingError(named.session, "open_engine reads engine files; a session's engine: "
                                         "trtstudio.report.load_session(path).engines[0].info", forms=False)
    return named.files, named.model, named.label


# trtstudio's own column -> TREx's ``get_layers_by_type`` name, for the layer attributes TREx's
# notebooks plotted and grouped by (``trex/df_preprocessing.py``: convolution, pooling, reformat ...)
TREX_ATTRS = {
    "Kernel": "attr.kernel", "Stride": "attr.stride", "Groups": "attr.groups", "OutMaps": "attr.out_maps",
    "Dilation": "attr.dilation", "PaddingMode": "attr.padding_mode", "PrePadding": "attr.pre_padding",
    "PostPadding": "attr.post_padding", "HasBias": "attr.has_bias", "HasReLU": "attr.has_relu",
    "Activation": "attr.activation", "HasSparseWeights": "attr.has_sparse_weights",
    "PoolingType": "attr.pooling_type", "WindowSize": "attr.window_size",
}


def trex_type(lay: Any) -> str:
    """The type TREx grouped a layer by (its ``type`` column): the detailed record's
    ``ParameterType`` (Convolution, Reformat, Pooling, ...), else the layer type."""
    pt = lay.parameter_type
    return pt if isinstance(pt, str) and pt else str(lay.type)


def plan_rows(layers: Sequence[Any]) -> list[dict[str, Any]]:
    """The rows of :attr:`EnginePlan.df`: each layer's ``layers --json`` record flattened
    (:func:`flatten_layer`), with ``type`` as TREx had it (:func:`trex_type`; ours in ``layer_type``),
    ``time_per_inference_ms`` (``LayerTime.per_inference_ms``), TREx's byte columns (``weights_size``
    without bias, ``bias_size``, ``total_io_size_bytes``: the layer's input and output tensors,
    ``total_footprint_bytes``: weights + I/O) and the layer attributes of :data:`TREX_ATTRS`."""
    from trtstudio.engine.layer_stats import layer_ms
    from trtstudio.engine.summary import layer_memory

    rows = []
    for lay in layers:
        rec = flatten_layer(lay.to_json())
        row = {"index": rec.pop("index"), "name": rec.pop("name"), "type": trex_type(lay), "layer_type": rec.pop("type")}
        row.update(rec)
        row["time_per_inference_ms"] = layer_ms(lay)
        mem = layer_memory([lay])
        weights, io = mem.get("layer_weights", 0), mem.get("layer_activations", 0)
        row.update(weights_size=weights, bias_size=mem.get("layer_bias", 0), total_io_size_bytes=io,
                   total_footprint_bytes=weights + io)
        attrs = lay.attrs if lay.parameter_type else {}  # a names-only listing has none
        row.update({col: attrs.get(key) for key, col in TREX_ATTRS.items()})
        rows.append(row)
    return rows


def _cell(v: Any) -> Any:
    """A DataFrame cell for CSV/Excel: nested values (lists, dicts) as JSON text."""
    import json

    return json.dumps(v) if isinstance(v, (list, dict, tuple)) else v


class EngineWarning(UserWarning):
    """What an engine's files say is wrong with them together (e.g. a profile of another engine
    merged into its layers), raised by :func:`open_engine` as TREx warned."""


class EnginePlan:
    """One engine, read and analysed: TREx's ``EnginePlan`` (see the module docstring)."""

    def __init__(self, analysis: Analysis, paths: Sequence[str], model: Any = None, name: str | None = None) -> None:
        self.analysis = analysis
        self.paths = list(paths)
        self.model = model  # a graph.model.Model the layers were mapped to, or None
        self._name = name
        self._df: pandas.DataFrame | None = None

    @property
    def engine(self) -> Any:
        """The :class:`trtstudio.engine.model.EngineInfo` (layers mapped, findings set)."""
        return self.analysis.engine

    @property
    def name(self) -> str:
        """A label, settable (``plan.name = "fp16"``), as TREx's ``plan.name``; by default the
        engine's file stem (``resnet.onnx`` for ``resnet.onnx.engine.graph.json``) where its files
        share one, else their folder."""
        if self._name:
            return self._name
        from trtstudio.engine.naming import stem

        stems = {stem(Path(p).name) for p in self.paths}
        if len(stems) == 1:
            return stems.pop()
        return Path(self.paths[0]).parent.name if self.paths else "engine"

    @name.setter
    def name(self, value: str) -> None:
        self._name = str(value)

    @property
    def layers(self) -> list[dict[str, Any]]:
        """One record per layer, as ``trtstudio layers --json`` prints them."""
        return [lay.to_json() for lay in self.engine.layers]

    @property
    def df(self) -> pandas.DataFrame:
        """A pandas DataFrame, one row per layer (:func:`plan_rows`), like TREx's ``plan.df``. Built
        once: a column a notebook adds stays. Needs pandas (``pip install 'trtstudio[notebook]'``)."""
        if self._df is None:
            pd = _pandas("EnginePlan.df")
            self._df = pd.DataFrame(plan_rows(self.engine.layers))
        return self._df

    def get_layers_by_type(self, layer_type: str) -> pandas.DataFrame:
        """The rows of :attr:`df` whose ``type`` (TREx's: ``Convolution``, ``Reformat``, ``Pooling``,
        ...) is ``layer_type``, a copy; convolutions with ``macs`` and ``arithmetic_intensity``
        (FLOP per byte) from :meth:`conv_macs` where their geometry is known."""
        df = self.df
        rows = df[df["type"] == layer_type].copy()
        if layer_type == "Convolution":
            macs = {r["layer"]: r for r in self.conv_macs()}
            rows["macs"] = [macs[n]["macs"] if n in macs else None for n in rows["name"]]
            rows["arithmetic_intensity"] = [macs[n]["arithmetic_intensity"] if n in macs else None for n in rows["name"]]
        return rows

    def to_csv(self, path: str | os.PathLike[str]) -> Path:
        """Write :attr:`df` as CSV, lists and dicts (tensors, ONNX nodes, kernel sizes) as JSON cells."""
        p = Path(path)
        self.df.map(_cell).to_csv(p, index=False)
        return p

    def to_excel(self, path: str | os.PathLike[str], sheet: str = "layers") -> Path:
        """Write :attr:`df` as an Excel sheet (nested cells as JSON), the summary on a second sheet.
        Needs openpyxl (``pip install 'trtstudio[notebook]'``)."""
        try:
            import openpyxl  # noqa: F401
        except ModuleNotFoundError:
            raise ModuleNotFoundError("EnginePlan.to_excel needs openpyxl: pip install 'trtstudio[notebook]'",
                                      name="openpyxl") from None
        pd = _pandas("EnginePlan.to_excel")
        p = Path(path)
        with pd.ExcelWriter(p) as xl:
            self.df.map(_cell).to_excel(xl, sheet_name=sheet, index=False)
            pd.DataFrame([(k, _cell(v)) for k, v in self.summary().items()], columns=["field", "value"]).to_excel(
                xl, sheet_name="summary", index=False)
        return p

    @property
    def findings(self) -> list[dict[str, Any]]:
        """The diagnostics' findings (kind, severity, message, hint, layer, nodes)."""
        return [f.to_json() for f in self.analysis.findings]

    @property
    def warnings(self) -> list[str]:
        """What the reader said is missing or does not fit (``engine.warnings``)."""
        return list(self.engine.warnings)

    @property
    def provenance(self) -> dict[str, Any]:
        """The GPU and TensorRT the engine's own files record (``not recorded`` where silent)."""
        from trtstudio.engine.provenance import provenance

        return provenance(self.engine)

    def _grouped(self, key: Any) -> dict[str, float]:
        from trtstudio.engine.layer_stats import layer_ms

        out: dict[str, float] = {}
        for lay in self.engine.layers:
            ms = layer_ms(lay)
            if ms is not None:
                k = key(lay)
                out[k] = out.get(k, 0.0) + ms
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def time_by_type(self, by: str = "layer_type") -> dict[str, float]:
        """Time per inference (ms, ``LayerTime.per_inference_ms``) by layer type, largest first:
        ``by="layer_type"`` the engine's layer types (the window's chart: ``CaskConvolution``,
        ``CudaDepthwiseConvolution``, ...), ``by="type"`` TREx's grouping (``Convolution``, ...)."""
        if by not in ("layer_type", "type"):
            raise ValueError(f"by={by!r}: 'layer_type' (the engine's layer types) or 'type' (TREx's grouping)")
        return self._grouped(trex_type if by == "type" else (lambda lay: str(lay.type)))

    def time_by_precision(self) -> dict[str, float]:
        """Time per inference (ms) by compute precision, largest first (``unknown`` where the
        files give none)."""
        return self._grouped(lambda lay: lay.precision or "unknown")

    @property
    def per_inference_ms(self) -> float | None:
        """The sum of the layers' times per inference (ms); None where no layer is timed."""
        t = self._grouped(lambda lay: "")
        return t.get("")

    def node_times(self, run: Any = None) -> dict[str, float]:
        """Time per inference (ms) of each ONNX node, as the window's ``Time (ms)`` colouring paints it
        (:func:`trtstudio.engine.node_time.node_times`): the time of the layer the node ran in (a
        TensorRT profile, or an Nsight Systems export's TensorRT ranges), else a Kineto trace's
        per-node ranges, else ``run``'s per-layer rows (a dict with ``layers``, or the rows). Empty
        when nothing timed a node (map the engine to its model first: :meth:`map_to`)."""
        from trtstudio.engine.node_time import node_times

        rows = run.get("layers") if isinstance(run, dict) else run
        names = [n.name for n in self.model.graph.nodes] if self.model is not None else None
        got = node_times(analysis=self.analysis, rows=rows, node_names=names)
        return dict(got.ms) if got is not None else {}

    def report(self, run: Any = None, title: str | None = None) -> ReportDoc:
        """The report of this engine (with its model, and ``run`` when given)."""
        return report(model=self.model, engine=self, run=run, title=title or self.name)

    def summary(self) -> Summary:
        """TREx's engine summary (``summary_dict``, ``print_summary``) as one dict: ``name``,
        ``inputs``/``outputs`` (texts), ``layers`` (without the Constant/NoOp layers TREx dropped;
        ``layers_all`` with them), ``per_inference_ms`` (the layers' times per inference summed),
        ``average_time_ms`` (TREx's "Average time": the profile's averages summed), bytes of
        ``weights``, ``bias`` and ``activations`` (TREx's figures), ``device``, ``tensorrt``,
        ``cuda``, trtexec's ``latency_ms`` and ``throughput_qps``, the build's ``precision``, and
        the reader's ``warnings``. A key is left out where the files do not record it."""
        from trtstudio.engine.provenance import NOT_RECORDED
        from trtstudio.engine.summary import summary as engine_summary

        s = engine_summary(self.engine)
        prov = self.provenance
        lat = self.engine.latency_ms
        out: dict[str, Any] = {
            "name": self.name,
            "inputs": [e["text"] for e in s["inputs"]], "outputs": [e["text"] for e in s["outputs"]],
            "layers": s["layers"], "layers_all": s["layers_all"],
            "per_inference_ms": self.per_inference_ms, "average_time_ms": s["average_time_ms"],
            "weights": s.get("layer_weights"), "bias": s.get("layer_bias"), "activations": s.get("layer_activations"),
            "device": prov["gpu"], "tensorrt": prov["tensorrt"], "cuda": prov["cuda"],
            "latency_ms": {k: lat[k] for k in ("median", "mean", "p90", "p99", "min", "max") if k in lat} or None,
            "throughput_qps": lat.get("throughput_qps"),
            "precision": self.engine.build_settings.get("Precision"),
            "warnings": self.warnings or None,
        }
        return Summary({k: v for k, v in out.items() if v is not None and v != NOT_RECORDED})

    def glance(self) -> dict[str, Any]:
        """The At a glance figures of its report (headline, where the time goes, what is wrong,
        verdicts, next steps)."""
        return self.report().report.summary  # type: ignore[no-any-return]

    def map_to(self, model: str | os.PathLike[str] | ModelInfo | Any) -> EnginePlan:
        """The same engine mapped to ``model`` (an ONNX path, :class:`ModelInfo` or graph Model):
        each layer's ONNX nodes, and the node-level findings."""
        from trtstudio.engine.analysis import analyze

        m = _graph_model(model)
        return EnginePlan(analyze(self.engine, m.graph, machine=self.paths), self.paths, m, self._name)

    def excerpt(self, layer: int | str) -> SVG:
        """The layer's neighbourhood in its ONNX graph (or, without a model, in the engine's own
        graph) as SVG, grown as the reports' excerpts are (``report.excerpts``), its nodes outlined."""
        from trtstudio.report.excerpts import excerpt_svg, regions

        lay = self._layer(layer)
        if self.model is not None:
            graph, nodes = self.model.graph, list(lay.onnx_nodes)
        else:
            from trtstudio.engine.layer_graph import layer_graph

            graph = layer_graph(self.engine)
            nodes = [graph.nodes[self.engine.layers.index(lay)].name]
        found = regions(graph, [(nodes, lay.name)], [])
        if not found:
            raise ValueError(f"layer {lay.name!r} has no node in the graph to draw around")
        src, dst, _ = graph.edges()
        return SVG(excerpt_svg(graph, found[0], src, dst))

    def graph(self, color_by: str = "precision") -> SVG:
        """The whole engine graph (its layers as boxes, the tensors between them as edges; the
        engine's own graph, ``engine.layer_graph``) as SVG with a legend, as TREx's ``to_dot``
        drew it: ``color_by`` ``"precision"`` (the window's precision colours) or ``"type"``
        (TREx's layer grouping; ``"layer_type"``: the engine's layer types). A deep graph is cut
        into strips read left to right."""
        from trtstudio.engine.layer_graph import layer_graph
        from trtstudio.report.plots import svg_graph

        g = layer_graph(self.engine)
        src, dst, _ = g.edges()
        colors, legend = self._colors(color_by)
        titles = [f"{lay.name}\n{lay.type}, {lay.precision or 'unknown'}" for lay in self.engine.layers]
        return SVG(svg_graph(len(g.nodes), src, dst, [lay.name for lay in self.engine.layers], colors,
                             legend=legend, titles=titles, title=f"{self.name}: engine graph by {color_by}"))

    def _colors(self, color_by: str | None) -> tuple[list[str] | None, list[tuple[str, str]]]:
        """A colour per layer and the legend for ``color_by`` (precision, type, layer_type; None: none)."""
        from trtstudio.palette import FUSED_COLORS, precision_color

        layers = self.engine.layers
        if color_by is None:
            return None, []
        if color_by == "precision":
            keys = [lay.precision or "unknown" for lay in layers]
            return [precision_color(k) for k in keys], [(k, precision_color(k)) for k in dict.fromkeys(keys)]
        if color_by in ("type", "layer_type"):
            keys = [trex_type(lay) if color_by == "type" else str(lay.type) for lay in layers]
            order = {k: FUSED_COLORS[i % len(FUSED_COLORS)] for i, k in enumerate(dict.fromkeys(keys))}
            return [order[k] for k in keys], list(order.items())
        raise ValueError(f"color_by={color_by!r}: 'precision', 'type' (TREx's grouping) or 'layer_type'")

    def _layer(self, layer: int | str) -> Any:
        layers = self.engine.layers
        if isinstance(layer, int):
            return layers[layer]
        for lay in layers:
            if lay.name == layer:
                return lay
        raise KeyError(f"no layer named {layer!r}")

    # plots -----------------------------------------------------------------------------------
    def plot_layers(self, top: int | None = None, color_by: str | None = "precision") -> SVG:
        """Every layer's time per inference (``top``: the slowest only), in layer order, each bar
        coloured by ``color_by`` (``"precision"``, ``"type"``, ``"layer_type"`` or None) with a legend."""
        from trtstudio.engine.layer_stats import layer_ms
        from trtstudio.report.plots import svg_bars

        colors, legend = self._colors(color_by)
        rows = [(lay.name, ms, colors[i] if colors else "") for i, lay in enumerate(self.engine.layers)
                if (ms := layer_ms(lay)) is not None]
        if top is not None:
            rows = sorted(rows, key=lambda r: -r[1])[:top]
        used = {c for _, _, c in rows}
        return SVG(svg_bars([n for n, _, _ in rows], [v for _, v, _ in rows],
                            f"Time per layer (ms per inference){f', by {color_by}' if color_by else ''}", unit="ms",
                            colors=[c for _, _, c in rows] if colors else None,
                            legend=[(k, c) for k, c in legend if c in used] or None))

    def plot_timing(self) -> SVG:
        """Every timed inference's latency in run order (trtexec ``--exportTimes``: GPU compute,
        else host latency), with its median and p99, as TREx's notebooks plotted the timing JSON."""
        import trtstudio.report.plots as plots
        from trtstudio.diff.sides import engine_samples

        samples, metric = engine_samples(self.engine)
        what = {"gpu_compute": "GPU compute", "latency": "latency"}.get(metric, "latency")
        title = f"{self.name}: {what} per inference"
        if not samples.size:
            return SVG(plots.svg_envelope({"n": 0}, title + " (no --exportTimes file)"))
        hl = {f"median {plots.bar_text(float(np.median(samples)))} ms": float(np.median(samples)),
              f"p99 {plots.bar_text(float(np.percentile(samples, 99)))} ms": float(np.percentile(samples, 99))}
        return SVG(plots.svg_envelope(plots.envelope(samples), title, ylabel="ms", hlines=hl))

    def plot_time_by_type(self, by: str = "layer_type") -> SVG:
        """Time per inference by layer type (``by``: as :meth:`time_by_type`)."""
        from trtstudio.report.plots import svg_bars

        d = self.time_by_type(by)
        return SVG(svg_bars(list(d), list(d.values()), "Time by layer type (ms per inference)", unit="ms"))

    def plot_time_by_precision(self) -> SVG:
        """Time per inference by compute precision, each bar in its precision's colour."""
        from trtstudio.palette import precision_color
        from trtstudio.report.plots import svg_bars

        d = self.time_by_precision()
        return SVG(svg_bars(list(d), list(d.values()), "Time by precision (ms per inference)", unit="ms",
                            colors=[precision_color(k) for k in d]))

    @property
    def memory(self) -> dict[str, Any]:
        """Where the engine's GPU memory goes: the ``trtstudio memory --json`` document of this engine
        (``trtstudio.memory/1``: ``categories`` with each figure's source, ``layers``, ``live``)."""
        from trtstudio.engine.memory import memory_doc, memory_of

        return memory_doc([memory_of(self.engine, self.paths, self.name)])

    def memory_by_layer(self) -> list[dict[str, Any]]:
        """Each layer's weights (TREx's count x type size, bias included) and activations (its input
        and output tensors) in bytes (``engine.layer_stats``)."""
        from trtstudio.engine.layer_stats import memory_by_layer

        return memory_by_layer(self.engine.layers)

    def plot_memory(self, top: int = 25) -> SVG:
        """The ``top`` layers by weights + activations, both in MiB side by side."""
        from trtstudio.report.plots import svg_grouped_bars

        rows = sorted(self.memory_by_layer(), key=lambda r: -(r["weights"] + r["activations"]))[:top]
        return SVG(svg_grouped_bars([r["layer"] for r in rows],
                                    {"weights": [r["weights"] / 2**20 for r in rows],
                                     "activations": [r["activations"] / 2**20 for r in rows]},
                                    "Memory per layer (MiB)", unit="MiB"))

    def conv_macs(self) -> list[dict[str, Any]]:
        """Per convolution: multiply-accumulates per inference, bytes moved and arithmetic intensity
        (2 x MACs per byte), as ``engine.layer_stats.conv_macs`` computes them."""
        from trtstudio.engine.layer_stats import conv_macs

        return conv_macs(self.engine.layers)

    def plot_macs(self, top: int = 25) -> SVG:
        """The ``top`` convolutions by multiply-accumulates (GMAC per inference), with their
        arithmetic intensity (FLOP per byte) beside each bar."""
        from trtstudio.report.plots import svg_bars

        rows = sorted(self.conv_macs(), key=lambda r: -r["macs"])[:top]
        return SVG(svg_bars([r["layer"] for r in rows], [r["macs"] / 1e9 for r in rows], "Convolution GMAC per inference",
                            unit="GMAC", notes=[f"{r['arithmetic_intensity']:.0f} FLOP/B" if r["arithmetic_intensity"]
                                                else "" for r in rows]))

    def to_json(self) -> dict[str, Any]:
        """The ``trtstudio layers --json`` document of this engine."""
        return self.analysis.to_json()  # type: ignore[no-any-return]

    def _head(self) -> list[str]:
        """What is known of the engine, in words: layers, GPU, TensorRT, time per inference,
        trtexec's median (nothing said of what the files do not record)."""
        from trtstudio.engine.provenance import NOT_RECORDED

        eng, prov = self.engine, self.provenance
        parts = [f"{len(eng.layers):,} layers"]
        known = [v for v in (prov["gpu"], prov["tensorrt"]) if v != NOT_RECORDED]
        if known:
            parts[0] += " on " + ", ".join(known)
        total = self.per_inference_ms
        if total is not None:
            parts.append(f"layers {_ms(total)} per inference")
        med = eng.latency_ms.get("median")
        if med is not None:
            parts.append(f"median {_ms(med)} (trtexec)")
        return parts

    def _repr_html_(self) -> str:
        from trtstudio.engine.layer_stats import layer_ms

        eng = self.engine
        timed = sorted(((lay, layer_ms(lay)) for lay in eng.layers), key=lambda r: -(r[1] or 0.0))[:10]
        rows = [(lay.index, lay.name, lay.type, lay.precision, _ms(ms), ", ".join(lay.onnx_nodes[:3]))
                for lay, ms in timed if ms is not None]
        counts: dict[str, int] = {}
        for f in self.analysis.findings:
            counts[f.severity] = counts.get(f.severity, 0) + 1
        head = (f"<b>{_E(self.name)}</b>: {_E('; '.join(self._head()))}; "
                f"findings: {_E(', '.join(f'{v} {k}' for k, v in sorted(counts.items())) or 'none')}")
        warn = "".join(f"<li>warning: {_E(w)}</li>" for w in eng.warnings)
        return (f"<div>{head}{f'<ul>{warn}</ul>' if warn else ''}"
                f"{_table(['#', 'layer', 'type', 'precision', 'time per inference', 'ONNX nodes'], rows)}</div>")

    def __repr__(self) -> str:
        warn = f"; {len(self.engine.warnings)} warning(s): {self.engine.warnings[0]}" if self.engine.warnings else ""
        return f"<EnginePlan {self.name}: {'; '.join(self._head())}{warn}>"


class Summary(dict):  # type: ignore[type-arg]
    """:meth:`EnginePlan.summary`: a dict shown as a two-column table in Jupyter."""

    def _repr_html_(self) -> str:
        def text(k: str, v: Any) -> str:
            if isinstance(v, list):
                return "; ".join(map(str, v))
            if k in ("weights", "bias", "activations"):
                return f"{v / 2**20:.1f} MiB ({v:,} bytes)"
            if isinstance(v, dict):
                return ", ".join(f"{a} {_ms(b)}" for a, b in v.items())
            return _ms(v) if k.endswith("_ms") else str(v)

        return _table(["", ""], [(k, text(k, v)) for k, v in self.items()])


def _pandas(what: str) -> Any:
    try:
        import pandas as pd
    except ModuleNotFoundError:
        raise ModuleNotFoundError(f"{what} needs pandas: pip install 'trtstudio[notebook]'", name="pandas") from None
    return pd


def open_engine(*paths: str | os.PathLike[str], model: str | os.PathLike[str] | None = None,
                profile: int = 0, name: str | None = None) -> EnginePlan:
    """Read one engine's files (any the CLI reads, or a folder of them; an ``.onnx`` among them or
    beside them, or ``model``, maps its layers to nodes) and analyse it as ``trtstudio layers``.
    ``name`` labels it (diffs, plots; default :attr:`EnginePlan.name`). A profile that does not fit
    the layers (another engine's or build's) raises an :class:`EngineWarning`, as TREx warned."""
    import warnings

    from trtstudio.engine.analysis import analyze
    from trtstudio.engine.load import load_engine, require_layers

    files, found, label = _engine_paths(paths)
    engine = load_engine(files, profile=profile)
    require_layers(engine)
    m = _graph_model(model or found) if (model or found) else None
    if name is None and len(paths) == 1:  # one argument: its folder's name, or the engine's file stem
        from trtstudio.engine.naming import stem

        name = label or stem(Path(files[0]).name)
    plan = EnginePlan(analyze(engine, m.graph if m is not None else None, machine=files), files, m, name)
    for w in engine.warnings:
        if "profiled layer" in w:
            warnings.warn(f"{plan.name}: {w}", EngineWarning, stacklevel=2)
    return plan


@dataclass
class ModelInfo:
    """An ONNX model: its graph, inputs, outputs, parameters and summary (``trtstudio inspect``)."""

    model: _GraphModel

    @property
    def path(self) -> str:
        return str(self.model.path)

    @property
    def graph(self) -> Any:
        """The :class:`trtstudio.graph.model.Graph` (nodes, tensors, initializers)."""
        return self.model.graph

    def summary(self) -> dict[str, Any]:
        """What ``trtstudio inspect --json`` prints."""
        return self.model.summary()

    @property
    def inputs(self) -> list[dict[str, Any]]:
        return list(self.summary()["inputs"])

    @property
    def outputs(self) -> list[dict[str, Any]]:
        return list(self.summary()["outputs"])

    @property
    def parameters(self) -> Any:
        return self.summary().get("parameters")

    def shape_plan(self, shapes: dict[str, Sequence[int]] | None = None) -> dict[str, Any]:
        """The shapes ``build``/``profile`` would use (``shapes`` given, else the plan's guesses)."""
        from trtstudio.backends.shapes.planner import plan_shapes

        plan = plan_shapes(self.path, {k: tuple(int(d) for d in v) for k, v in (shapes or {}).items()})
        return plan.to_json()  # type: ignore[no-any-return]

    def _repr_html_(self) -> str:
        s = self.summary()
        rows = [(i.get("name"), i.get("dtype"), i.get("shape")) for i in s["inputs"]]
        return (f"<div><b>{_E(Path(self.path).name)}</b>: {s.get('nodes', 0):,} nodes"
                f"{_table(['input', 'dtype', 'shape'], rows)}</div>")


def _graph_model(model: Any) -> Any:
    if isinstance(model, ModelInfo):
        return model.model
    if isinstance(model, (str, os.PathLike)):
        from trtstudio.graph.model import load_model

        return load_model(model)
    return model


def open_model(path: str | os.PathLike[str]) -> ModelInfo:
    """Load an ONNX model (shapes inferred), as the window opens it (``graph.open``: loaded, then its
    shapes inferred, a big model's in a child process)."""
    from trtstudio.graph.open import infer_document_shapes, open_document

    return ModelInfo(infer_document_shapes(open_document(path, display=False, search=False)).model)


def _side(x: Any, name: str | None = None) -> Side:
    from trtstudio.diff.sides import Side, engine_samples, load_side

    if isinstance(x, EnginePlan):
        side = Side(name or x.name, x.engine, list(x.paths), str(x.model.path) if x.model is not None else None)
        side.samples, side.metric = engine_samples(x.engine)
        return side
    if isinstance(x, (list, tuple)):
        return load_side(",".join(os.fspath(p) for p in x), name=name)
    return load_side(os.fspath(x), name=name)


class Diff:
    """What changed between the base and each other build (``trtstudio diff``'s document): every
    pair (the base against each other side, in order) in :attr:`df`, :attr:`story` and the plots."""

    def __init__(self, core: _CoreDiff) -> None:
        self.core = core

    def to_json(self) -> dict[str, Any]:
        """The ``trtstudio.diff/1`` document."""
        return self.core.to_json()

    @property
    def pairs(self) -> list[dict[str, Any]]:
        return list(self.to_json()["diffs"])

    @property
    def story(self) -> list[str]:
        """Every pair's sentences, pair after pair (each pair's first names the other side)."""
        return [t for p in self.core.pairs for t in p.story]

    @property
    def df(self) -> pandas.DataFrame:
        """Every pair's groups, one row each: ``base`` and ``other`` (the sides' names), then the
        group's change, layers, times (ms per inference) and precisions."""
        pd = _pandas("Diff.df")
        return pd.DataFrame([{"base": p.base.name, "other": p.other.name, **g} for p in self.core.pairs for g in p.groups])

    def _pair(self, pair: int | str) -> Any:
        pairs = self.core.pairs
        if isinstance(pair, int):
            return pairs[pair]
        for p in pairs:
            if p.other.name == pair:
                return p
        raise KeyError(f"no side named {pair!r}; the others are {', '.join(p.other.name for p in pairs)}")

    def plot_deltas(self, top: int = 20, pair: int | str | None = None) -> SVG:
        """The groups whose time changed most (other - base, ms): gains left, losses right; one
        chart per pair stacked (``pair``: the index or name of the other side, only that one)."""
        from trtstudio.diff.render import delta_chart

        pairs = self.core.pairs if pair is None else [self._pair(pair)]
        return SVG(stack_svgs([delta_chart(p.to_json(), top) for p in pairs]))

    def _repr_html_(self) -> str:
        out = []
        for p in self.core.pairs:  # the story and totals: no document of every group made for them
            out.append(f"<h4>{_E(p.other.name)} vs {_E(p.base.name)}</h4>")
            out += [f"<p>{_E(t)}</p>" for t in p.story]
            out.append(_table(["change", "groups", "delta"],
                              [(k, v["groups"], _ms(v["delta_ms"])) for k, v in p.totals.items()]))
        return "<div>" + "".join(out) + "</div>"

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the diff as ``trtstudio diff -o`` does (.html, .pdf, .md, .json)."""
        from trtstudio.diff.render import write

        return Path(write(self.to_json(), os.fspath(path), []))


def stack_svgs(svgs: Sequence[str], gap: int = 8) -> str:
    """Several SVG pictures one under the other as one SVG (each keeps its own size)."""
    import re

    sizes = []
    for s in svgs:
        m = re.match(r'<svg[^>]*?\swidth="([\d.]+)"[^>]*?\sheight="([\d.]+)"', s)
        sizes.append((float(m.group(1)), float(m.group(2))) if m else (760.0, 230.0))
    width = max((w for w, _ in sizes), default=0.0)
    height = sum(h for _, h in sizes) + gap * max(len(svgs) - 1, 0)
    if len(svgs) == 1:
        return svgs[0]
    from trtstudio.report.plots import SVG_NS

    parts, y = [], 0.0
    for s, (_, h) in zip(svgs, sizes, strict=True):
        parts.append(s.replace("<svg ", f'<svg x="0" y="{y:.0f}" ', 1))
        y += h + gap
    return (f'<svg xmlns="{SVG_NS}" width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}">'
            + "".join(parts) + "</svg>")


def diff(base: Any, *others: Any, names: Sequence[str] | None = None) -> Diff:
    """``trtstudio diff``: each side an :class:`EnginePlan`, or named as every command names an
    engine (a folder, FILE,FILE,..., a TREx prefix, a file, a list of files, a session); ``names``:
    one per side (the base first), else each plan's :attr:`EnginePlan.name`. Sides that may not
    belong together (different models, GPUs, TensorRT, too few layers aligned) warn with
    :class:`trtstudio.MismatchWarning`, the text of the document's ``warnings``."""
    if not others:
        raise ValueError("diff needs a base and at least one other engine")
    if names is not None and (isinstance(names, str) or len(names) != 1 + len(others)):
        given = 1 if isinstance(names, str) else len(names)
        raise ValueError(f"names: {given} name(s) for {1 + len(others)} engines; give one per engine, the base first")
    from trtstudio.diff.core import diff as core_diff

    sides = [_side(x, names[i] if names else None) for i, x in enumerate((base, *others))]
    seen: set[str] = set()
    for i, s in enumerate(sides):
        if s.name in seen:
            s.name = f"{s.name} ({i + 1})"
        seen.add(s.name)
    from trtstudio.diff.mismatch import warn

    core = core_diff(sides[0], *sides[1:])
    warn([w for p in core.pairs for w in p.warnings])  # sides that may not belong together
    return Diff(core)


class Comparison:
    """Runs or engines compared (``trtstudio compare``'s document): median latency of each, its
    speed-up over the first with an interval, memory, the layer diff; ``.save(path)`` writes
    .html, .pdf or .json as ``trtstudio compare -o`` does."""

    def __init__(self, core: Any) -> None:
        self.core = core

    def to_json(self) -> dict[str, Any]:
        """The ``trtstudio.comparison/2`` document."""
        return self.core.to_json()  # type: ignore[no-any-return]

    @property
    def summary(self) -> list[dict[str, Any]]:
        """One row per input: name, median latency, speed-up over the first and its verdict."""
        return list(self.core.summary)

    @property
    def story(self) -> list[str]:
        return list(self.core.story)

    @property
    def warnings(self) -> list[str]:
        return list(self.core.warnings)

    @property
    def df(self) -> pandas.DataFrame:
        """:attr:`summary` as a DataFrame."""
        return _pandas("Comparison.df").DataFrame(self.summary)

    def save(self, path: str | os.PathLike[str]) -> list[Path]:
        from trtstudio.report.writers import write_comparison

        return list(write_comparison(self.core, Path(path)))

    def _repr_html_(self) -> str:
        from trtstudio.report.compare import speedup_text

        rows = [(s["name"], _ms(s.get("median_ms")), speedup_text(s), s.get("verdict_text") or "") for s in self.summary]
        story = "".join(f"<p>{_E(t)}</p>" for t in self.story)
        warn = "".join(f"<p>warning: {_E(w)}</p>" for w in self.warnings)
        return f"<div>{story}{warn}{_table(['input', 'median', 'speed-up', 'verdict'], rows)}</div>"


def compare(*items: Any, names: Sequence[str] | None = None, title: str | None = None) -> Comparison:
    """``trtstudio compare`` from Python: each item an :class:`EnginePlan` (trtexec's per-inference
    times in its files count as its run), a :class:`ReportDoc`, a ``.trtstudio`` session, or the
    files of an engine (as :func:`open_engine` takes them); the first is the baseline. ``names``:
    one per item, else each plan's name."""
    if len(items) < 2:
        raise ValueError("compare needs at least two inputs (engines, reports or sessions)")
    if names is not None and (isinstance(names, str) or len(names) != len(items)):
        given = 1 if isinstance(names, str) else len(names)
        raise ValueError(f"names: {given} name(s) for {len(items)} inputs; give one per input")
    from trtstudio.report.compare import compare as core_compare
    from trtstudio.report.model import Report, make_session

    reports, labels = [], []
    for x in items:
        if isinstance(x, ReportDoc):
            reports.append(x.report)
            labels.append(x.report.title)
            continue
        if isinstance(x, (str, os.PathLike)) and os.fspath(x).endswith(".trtstudio"):
            from trtstudio.report.session import load_session

            rep = Report.from_session(load_session(Path(x)))
            reports.append(rep)
            labels.append(rep.title)
            continue
        plan = x if isinstance(x, EnginePlan) else open_engine(*(x if isinstance(x, (list, tuple)) else [x]))
        session = make_session(model=plan.model, engine=plan.engine, title=plan.name)
        session.engines[0].paths = list(plan.paths)
        reports.append(Report.from_session(session))
        labels.append(plan.name)
    return Comparison(core_compare(reports, list(names) if names else labels, title))


class Explanation:
    """Why an INT8 engine is not faster (``trtstudio explain``'s document)."""

    def __init__(self, core: _CoreExplanation) -> None:
        self.core = core

    def to_json(self) -> dict[str, Any]:
        return self.core.to_json()

    @property
    def text(self) -> str:
        return self.core.text

    @property
    def causes(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.core.causes]

    @property
    def suggestion(self) -> dict[str, Any]:
        return dict(self.core.suggestion)

    def _repr_html_(self) -> str:
        rows = [(c["cause"], c["count"], _ms(c["ms"]), c["text"]) for c in self.causes]
        s = self.suggestion
        tail = f"<pre>{_E(s['layer_precisions'])}</pre>" if s.get("layer_precisions") else f"<p>{_E(s['basis'])}</p>"
        return f"<div><p><b>{_E(self.text)}</b></p>{_table(['cause', 'layers', 'time', 'why'], rows)}{tail}</div>"


def explain(plan: Any, against: Any = None) -> Explanation:
    """``trtstudio explain``: ``plan`` the INT8 engine, ``against`` an FP16/FP32 build of the model;
    a build that may not belong beside it warns with :class:`trtstudio.MismatchWarning`."""
    from trtstudio.diff.explain import explain as core_explain

    a = _side(plan)
    b = _side(against) if against is not None else None
    if b is not None and b.name == a.name:
        b.name = f"{b.name} (against)"
    from trtstudio.diff.mismatch import warn

    core = core_explain(a, b)
    warn(core.warnings)  # the engine and the build it is explained against may not belong together
    return Explanation(core)


class ProfileResult:
    """A finished profiling run: ``samples`` (ms per inference, numpy), ``stats`` (the
    ``trtstudio profile --json`` document's figures), plots and verdicts."""

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.doc: dict[str, Any] = outcome.to_dict()

    @property
    def samples(self) -> np.ndarray:
        """Latency of every inference in ms, in run order."""
        r = self.outcome.result
        return np.asarray(r.exact.values(), dtype=np.float64) if r is not None else np.zeros(0)

    @property
    def stats(self) -> dict[str, Any]:
        """Latency statistics (count, mean, median, p90, p99, ..., std, cov)."""
        return dict(self.doc.get("latency_ms") or {})

    @property
    def throughput(self) -> dict[str, Any]:
        return dict(self.doc.get("throughput") or {})

    @property
    def verdicts(self) -> dict[str, Any]:
        """The memory verdicts of the run (``memory.<key>.leak``)."""
        mem = self.doc.get("memory") or {}
        return {k: v["leak"] for k, v in mem.items() if isinstance(v, dict) and "leak" in v}

    def to_json(self) -> dict[str, Any]:
        """The ``trtstudio.profile/1`` document."""
        return dict(self.doc)

    def run_data(self) -> Any:
        return self.outcome.run_data()

    def plot_histogram(self) -> SVG:
        import trtstudio.report.plots as plots

        return SVG(plots.svg_histogram(plots.histogram(self.samples), "Latency histogram"))

    def plot_trace(self) -> SVG:
        """Every inference's latency in run order (min/max envelope past a few thousand)."""
        import trtstudio.report.plots as plots

        return SVG(plots.svg_envelope(plots.envelope(self.samples), "Latency per inference"))

    def _repr_html_(self) -> str:
        s = self.stats
        rows = [(k, _ms(s.get(k))) for k in ("median", "p90", "p99", "mean", "min", "max") if s.get(k) is not None]
        tp = self.throughput.get("inferences_per_s")
        head = (f"<b>{_E(Path(self.doc['model']).name)}</b> on {_E(str(self.doc['backend']))}: "
                f"{int(s.get('count') or 0):,} inferences" + (f", {tp:,.3g} inferences/s" if tp else ""))
        return f"<div>{head}{_table(['statistic', 'latency'], rows)}{self.plot_histogram().text}</div>"


def profile(model: str | os.PathLike[str], backend: str = "auto", iterations: int = 200, warmup: int = 10,
            shapes: dict[str, Sequence[int]] | None = None, duration_s: float | None = None,
            per_layer: bool = False, threads: int | None = None) -> ProfileResult:
    """``trtstudio profile``: run ``model`` (ONNX, PyTorch file or engine plan) on ``backend``
    (``auto``: as the CLI picks) and return its samples and statistics."""
    from trtstudio.backends.catalogue import default_backend
    from trtstudio.profiling.session import ProfileRequest, run_profile

    path = os.fspath(model)
    name = default_backend(path) if backend == "auto" else backend
    req = ProfileRequest(model=path, backend=name, shapes={k: tuple(int(d) for d in v) for k, v in (shapes or {}).items()},
                         warmup=warmup, iterations=None if duration_s else iterations, duration_s=duration_s,
                         per_layer=per_layer, threads=threads)
    req.validate()
    return ProfileResult(run_profile(req))


class ReportDoc:
    """A report (``trtstudio report``): ``.save(path)`` writes .html .pdf .json .csv .md."""

    def __init__(self, rep: Any) -> None:
        self.report = rep

    @property
    def summary(self) -> dict[str, Any]:
        """At a glance."""
        return dict(self.report.summary)

    def save(self, path: str | os.PathLike[str]) -> list[Path]:
        """Write the report; the format follows the extension."""
        from trtstudio.report.writers import write_report

        return list(write_report(self.report, Path(path)))

    def _repr_html_(self) -> str:
        from trtstudio.report.glance_html import glance_html
        from trtstudio.report.html import cards, summary_cards

        return f"<div>{glance_html(self.report.summary, cards(summary_cards(self.report)))}</div>"


def report(model: Any = None, engine: Any = None, run: Any = None, title: str | None = None) -> ReportDoc:
    """``trtstudio report`` from what the caller holds: ``model`` an ONNX path or :class:`ModelInfo`,
    ``engine`` an :class:`EnginePlan` or the engine's files, ``run`` a :class:`ProfileResult`."""
    from trtstudio.report.model import build_report

    if isinstance(model, ModelInfo):
        model = model.model
    if isinstance(engine, EnginePlan):
        engine = engine.engine
    elif isinstance(engine, (list, tuple)):
        engine = [os.fspath(p) for p in engine]
    if isinstance(run, ProfileResult):
        run = run.run_data()
    return ReportDoc(build_report(model=model, engine=engine, run=run, title=title))
