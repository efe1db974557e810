"""trtstudio as a Python library: the public API, a thin face over the objects the CLI and the window use.

Where TREx's users worked (``EnginePlan(graph.json, profile.json)``, ``plan.df``, linters and
comparison plots in notebook cells)::

    import trtstudio as ts

    plan = ts.open_engine("A100/fp32")                  # a folder, or the files of one engine
    plan.df                                             # pandas: one row per layer (``layers --json`` fields)
    plan.summary()                                      # the At a glance figures
    plan.time_by_type(), plan.time_by_precision()       # ms per inference, largest first
    plan.findings, plan.provenance
    d = ts.diff(plan, ts.open_engine("A100/fp16"))      # trtstudio diff: aligned groups, verdict
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

__all__ = ["SVG", "Diff", "EnginePlan", "Explanation", "ModelInfo", "ProfileResult", "ReportDoc", "diff", "explain",
           "open_engine", "open_model", "profile", "report"]

_E = html.escape


class SVG:
    """An SVG picture: shown inline by Jupyter, ``.save(path)`` writes it, ``str()`` is its text."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_svg_(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the SVG to ``path`` as a standalone file (its XML namespace declared)."""
        from trtstudio.report.plots import standalone

        p = Path(path)
        p.write_text(self.text if "xmlns=" in self.text[:200] else standalone(self.text), encoding="utf-8")
        return p


def _ms(v: Any) -> str:
    from trtstudio.report.fmt import sig

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


def _engine_paths(paths: Sequence[str | os.PathLike[str]]) -> tuple[list[str], str | None]:
    """Files of one engine and its model, named as every command names them
    (``engine.naming.resolve``: a folder, FILE,FILE,..., a TREx prefix, files, an ``.onnx``)."""
    from trtstudio.engine.naming import NamingError, resolve

    named = resolve(paths)
    if named.session:
        raise NamingError(named.session, "open_engine reads engine files; a session's engine: "
                                         "trtstudio.report.load_session(path).engines[0].info", forms=False)
    return named.files, named.model


class EnginePlan:
    """One engine, read and analysed: TREx's ``EnginePlan`` (see the module docstring)."""

    def __init__(self, analysis: Analysis, paths: Sequence[str], model: Any = None) -> None:
        self.analysis = analysis
        self.paths = list(paths)
        self.model = model  # a graph.model.Model the layers were mapped to, or None

    @property
    def engine(self) -> Any:
        """The :class:`trtstudio.engine.model.EngineInfo` (layers mapped, findings set)."""
        return self.analysis.engine

    @property
    def name(self) -> str:
        """A label: the engine's folder or first file."""
        first = Path(self.paths[0]) if self.paths else Path("engine")
        return first.parent.name if len(self.paths) > 1 else first.name

    @property
    def layers(self) -> list[dict[str, Any]]:
        """One record per layer, as ``trtstudio layers --json`` prints them."""
        return [lay.to_json() for lay in self.engine.layers]

    @property
    def df(self) -> pandas.DataFrame:
        """A pandas DataFrame, one row per layer (:func:`flatten_layer` of each record), like TREx's
        ``plan.df``. Needs pandas (``pip install 'trtstudio[notebook]'``)."""
        try:
            import pandas as pd
        except ModuleNotFoundError:
            raise ModuleNotFoundError("EnginePlan.df needs pandas: pip install 'trtstudio[notebook]'",
                                      name="pandas") from None
        return pd.DataFrame([flatten_layer(r) for r in self.layers])

    @property
    def findings(self) -> list[dict[str, Any]]:
        """The diagnostics' findings (kind, severity, message, hint, layer, nodes)."""
        return [f.to_json() for f in self.analysis.findings]

    @property
    def provenance(self) -> dict[str, Any]:
        """The GPU and TensorRT the engine's own files record (``not recorded`` where silent)."""
        from trtstudio.engine.provenance import provenance

        return provenance(self.engine)

    def _columns(self) -> Any:
        cols = self.analysis.columns
        if cols is None:
            from trtstudio.engine.analysis import analyze

            graph = self.model.graph if self.model is not None else None
            self.analysis = analyze(self.engine, graph, columns=True)
            cols = self.analysis.columns
        return cols

    def time_by_type(self) -> dict[str, float]:
        """Time per inference (ms) by layer type, largest first (the window's chart)."""
        return dict(self._columns().time_by_type)

    def time_by_precision(self) -> dict[str, float]:
        """Time per inference (ms) by compute precision, largest first (the window's chart)."""
        return dict(self._columns().time_by_precision)

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
        return report(model=self.model, engine=self, run=run, title=title)

    def summary(self) -> dict[str, Any]:
        """The At a glance figures of its report (headline, where the time goes, what is wrong,
        verdicts, next steps)."""
        return self.report().report.summary  # type: ignore[no-any-return]

    def map_to(self, model: str | os.PathLike[str] | ModelInfo | Any) -> EnginePlan:
        """The same engine mapped to ``model`` (an ONNX path, :class:`ModelInfo` or graph Model):
        each layer's ONNX nodes, and the node-level findings."""
        from trtstudio.engine.analysis import analyze

        m = _graph_model(model)
        return EnginePlan(analyze(self.engine, m.graph, machine=self.paths), self.paths, m)

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

    def _layer(self, layer: int | str) -> Any:
        layers = self.engine.layers
        if isinstance(layer, int):
            return layers[layer]
        for lay in layers:
            if lay.name == layer:
                return lay
        raise KeyError(f"no layer named {layer!r}")

    # plots -----------------------------------------------------------------------------------
    def plot_layers(self, top: int | None = None) -> SVG:
        """Every layer's time per inference (``top``: the slowest only), in layer order."""
        from trtstudio.engine.layer_stats import layer_ms
        from trtstudio.report.plots import svg_bars

        rows = [(lay.name, ms) for lay in self.engine.layers if (ms := layer_ms(lay)) is not None]
        if top is not None:
            rows = sorted(rows, key=lambda r: -r[1])[:top]
        return SVG(svg_bars([n for n, _ in rows], [v for _, v in rows], "Time per layer", unit="ms"))

    def plot_time_by_type(self) -> SVG:
        """Time per inference by layer type."""
        from trtstudio.report.plots import svg_bars

        d = self.time_by_type()
        return SVG(svg_bars(list(d), list(d.values()), "Time by layer type", unit="ms"))

    def plot_time_by_precision(self) -> SVG:
        """Time per inference by compute precision."""
        from trtstudio.report.plots import svg_bars

        d = self.time_by_precision()
        return SVG(svg_bars(list(d), list(d.values()), "Time by precision", unit="ms"))

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

    def _repr_html_(self) -> str:
        eng = self.engine
        prov = self.provenance
        from trtstudio.engine.layer_stats import layer_ms

        timed = sorted(((lay, layer_ms(lay)) for lay in eng.layers), key=lambda r: -(r[1] or 0.0))[:10]
        rows = [(lay.index, lay.name, lay.type, lay.precision, _ms(ms), ", ".join(lay.onnx_nodes[:3]))
                for lay, ms in timed if ms is not None]
        counts: dict[str, int] = {}
        for f in self.analysis.findings:
            counts[f.severity] = counts.get(f.severity, 0) + 1
        head = (f"<b>{_E(self.name)}</b>: {len(eng.layers):,} layers on {_E(prov['gpu'])}, {_E(prov['tensorrt'])}; "
                f"findings: {_E(', '.join(f'{v} {k}' for k, v in sorted(counts.items())) or 'none')}")
        med = eng.latency_ms.get("median")
        if med is not None:
            head += f"; median {_E(_ms(med))} (trtexec)"
        return f"<div>{head}{_table(['#', 'layer', 'type', 'precision', 'time', 'ONNX nodes'], rows)}</div>"

    def __repr__(self) -> str:
        return f"<EnginePlan {self.name}: {len(self.engine.layers)} layers>"


def open_engine(*paths: str | os.PathLike[str], model: str | os.PathLike[str] | None = None,
                profile: int = 0) -> EnginePlan:
    """Read one engine's files (any the CLI reads, or a folder of them; an ``.onnx`` among them or
    beside them, or ``model``, maps its layers to nodes) and analyse it as ``trtstudio layers``."""
    from trtstudio.engine.analysis import analyze
    from trtstudio.engine.load import load_engine, require_layers

    files, found = _engine_paths(paths)
    engine = load_engine(files, profile=profile)
    require_layers(engine)
    m = _graph_model(model or found) if (model or found) else None
    return EnginePlan(analyze(engine, m.graph if m is not None else None, machine=files), files, m)


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
    """What changed between the base and each other build (``trtstudio diff``'s document)."""

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
        """The first pair's sentences."""
        return list(self.core.pairs[0].story)

    @property
    def df(self) -> pandas.DataFrame:
        """The first pair's groups, one row each (change, layers, times, precisions)."""
        import pandas as pd

        return pd.DataFrame(self.core.pairs[0].groups)

    def plot_deltas(self, top: int = 20) -> SVG:
        """The groups whose time changed most (other - base, ms): gains left, losses right."""
        from trtstudio.diff.render import delta_chart

        return SVG(delta_chart(self.core.pairs[0].to_json(), top))

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


def diff(base: Any, *others: Any, names: Sequence[str] | None = None) -> Diff:
    """``trtstudio diff``: each side an :class:`EnginePlan`, or named as every command names an
    engine (a folder, FILE,FILE,..., a TREx prefix, a file, a list of files, a session). Sides that
    may not belong together (different models, GPUs, TensorRT, too few layers aligned) warn with
    :class:`trtstudio.MismatchWarning`, the text of the document's ``warnings``."""
    if not others:
        raise ValueError("diff needs a base and at least one other engine")
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
        from trtstudio.report import plots

        return SVG(plots.svg_histogram(plots.histogram(self.samples), "Latency histogram"))

    def plot_trace(self) -> SVG:
        """Every inference's latency in run order (min/max envelope past a few thousand)."""
        from trtstudio.report import plots

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
