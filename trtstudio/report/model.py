"""The Report model: what a stakeholder reads, as plain JSON-ready data (schema ``trtstudio.report/1``).

``build_report(model, engine, run, accuracy, graph_png, title)`` takes the objects the GUI and the
CLI hold (a graph Model or an ONNX path; an EngineInfo, engine files or a BuildResult; a RunResult,
a RunData or a ``profile --json`` document) and makes a :class:`~trtstudio.report.session.Session`
of them, then ``Report.from_session``: so a report built from live objects and one regenerated
from the saved session are the same (only ``generated`` differs).

Sections: environment, model summary, graph picture, build settings, engine summary, the layer
table (findings and hints per layer), the slowest layers, time by layer type and by precision,
latency statistics with over-time and histogram plot data, memory with the leak verdict, accuracy
(a dict from the precision tools) and warnings. Writers (``trtstudio.report.writers``) render it.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

import trtstudio.report.plots as plots
from trtstudio._version import __version__
from trtstudio.engine.model import EngineInfo, layer_ms
from trtstudio.engine.provenance import provenance
from trtstudio.jsonio import strict
from trtstudio.report.session import EngineRecord, Picture, RunData, Session, write_session

SCHEMA = "trtstudio.report/1"
TOP_N = 15
GRAPH_SVG_MAX_NODES = 1500
_SEVERITY_RANK = {"error": 3, "warning": 2, "info": 1}
_NOT_JSON = frozenset(("samples", "engine_info"))

# distribution names tried, in order, for each version shown
_DISTS: dict[str, tuple[str, ...]] = {
    "trtstudio": ("trtstudio",),
    "tensorrt": ("tensorrt", "tensorrt-cu13", "tensorrt-cu12", "tensorrt-cu11"),
    "tensorrt_rtx": ("tensorrt-rtx-cu13", "tensorrt-rtx-cu12", "tensorrt-rtx", "tensorrt_rtx"),
    "onnxruntime": ("onnxruntime", "onnxruntime-gpu", "onnxruntime-directml"),
    "onnx": ("onnx",),
    "numpy": ("numpy",),
    "pycuda": ("pycuda",),
    "cuda-python": ("cuda-python",),
}


def package_versions() -> dict[str, str | None]:
    """Installed versions via importlib.metadata (nothing is imported); None when not installed."""
    from importlib import metadata

    out: dict[str, str | None] = {}
    for key, names in _DISTS.items():
        out[key] = None
        for name in names:
            try:
                out[key] = metadata.version(name)
                break
            except metadata.PackageNotFoundError:
                continue
    if out["trtstudio"] is None:
        out["trtstudio"] = __version__
    return out


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_info() -> list[dict[str, Any]]:
    """Name, driver, CUDA driver version, memory and compute capability of each GPU via NVML ([] without;
    ``measure.devices.gpu_inventory``, figures NVML refuses left out)."""
    from trtstudio.measure.devices import gpu_inventory

    try:
        gpus = gpu_inventory()
    except Exception:  # noqa: BLE001 - no package, no driver, no GPU: a report without GPUs
        return []
    return [{k: v for k, v in g.items() if v is not None or k == "cuda_driver"} for g in gpus]


def collect_environment() -> dict[str, Any]:
    """OS, CPU, host memory, GPUs (NVML when present) and package versions of this machine."""
    env: dict[str, Any] = {
        "os": f"{platform.system()} {platform.release()}".strip(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu": _cpu_name(),
        "cpu_count": os.cpu_count(),
    }
    try:
        import psutil

        env["host_memory_bytes"] = int(psutil.virtual_memory().total)
    except Exception:  # noqa: BLE001
        pass
    env["gpus"] = gpu_info()
    env["versions"] = package_versions()
    return env


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


# ------------------------------------------------------------------------------------------------
# inputs -> session


def _load_model(model: Any) -> Any:
    if model is None or hasattr(model, "graph"):
        return model
    from trtstudio.graph.model import load_model

    return load_model(model)


def graph_svg(graph: Any, max_nodes: int = GRAPH_SVG_MAX_NODES) -> str | None:
    """A simple SVG of the top-level graph laid out by trtstudio.graph.layout (None when too large)."""
    n = len(graph.nodes)
    if n == 0 or n > max_nodes:
        return None
    src, dst, _ = graph.edges()
    from trtstudio.graph.categories import color

    colors = [color(node.op_type, node.domain) for node in graph.nodes]
    return plots.svg_graph(n, src, dst, [node.op_type for node in graph.nodes], colors)


def _engine(engine: Any) -> tuple[EngineInfo | None, list[str]]:
    if engine is None:
        return None, []
    if isinstance(engine, EngineInfo):
        return engine, list(engine.sources)
    if hasattr(engine, "log_text") and hasattr(engine, "ok"):  # backends.build.BuildResult
        info = engine.engine_info if hasattr(engine, "engine_info") else None  # inspector JSON, else the log
        if info is None:
            from trtstudio.engine.readers.rtx_log import read as read_log

            info = read_log(Path(engine.engine_path or "engine.plan").with_suffix(".build.log"), engine.log_text())
        for key, value in (getattr(engine, "settings", None) or {}).items():
            info.build_settings.setdefault(key, value)
        if engine.engine_bytes:
            info.memory.setdefault("engine_size", int(engine.engine_bytes))
        return info, [str(engine.engine_path)] if engine.engine_path else []
    from trtstudio.engine.load import load_engine

    paths = [Path(engine)] if isinstance(engine, (str, os.PathLike)) else [Path(p) for p in engine]
    info = load_engine(paths)
    for p in paths:
        pp = Path(p)
        if pp.suffix.lower() in (".engine", ".plan", ".trt") and pp.is_file():
            info.memory.setdefault("engine_size", pp.stat().st_size)
    return info, [str(p) for p in paths]


def _run(run: Any) -> RunData | None:
    if run is None or isinstance(run, RunData):
        return run
    if isinstance(run, dict):
        return RunData.from_profile_doc(run)
    if hasattr(run, "exact") and hasattr(run, "to_dict"):
        return RunData.from_result(run)
    raise TypeError(f"run must be a RunResult, RunData or profile document, not {type(run).__name__}")


def make_session(model: Any = None, engine: Any = None, run: Any = None, accuracy: dict[str, Any] | None = None,
                 graph_png: bytes | None = None, title: str | None = None) -> Session:
    """A Session from live objects (see ``build_report`` for what each argument accepts)."""
    m = _load_model(model)
    info, paths = _engine(engine)
    session = Session(title=title, created=now_iso(), environment=collect_environment(), accuracy=accuracy)
    if m is not None:
        session.model_path = str(m.path)
        session.model_summary = m.summary()
        session.warnings.extend(m.warnings)
    if graph_png:
        session.graph_picture = Picture("image/png", bytes(graph_png))
    elif m is not None:
        svg = graph_svg(m.graph)
        if svg:
            session.graph_picture = Picture("image/svg+xml", svg.encode("utf-8"))
    if info is not None:
        findings = info.findings
        unmapped = m is not None and info.layers and not any(lay.onnx_nodes for lay in info.layers)
        if unmapped or not findings:  # not analysed yet (a window's engine comes analysed)
            from trtstudio.engine.analysis import analyze

            analysis = analyze(info, m.graph if m is not None else None)
            info, findings = analysis.engine, analysis.findings
        if info.findings is not findings:  # analysis.engine is the analysis's own copy
            info = replace(info, findings=list(findings))
        session.engines.append(EngineRecord(paths, info))
        session.build_settings = dict(info.build_settings)
        from trtstudio.report.build_section import build_log_doc, section_json

        session.build = section_json(build_log_doc(engine, paths))
    rd = _run(run)
    if rd is not None:
        if rd.model is None and m is not None:
            rd.model = str(m.path)
        session.runs.append(rd)
    if m is not None:
        from trtstudio.report.excerpts import make_excerpts

        rec = session.engines[0] if session.engines else None
        rows = layer_rows(rec.info if rec else None, rd)
        if rd is not None and rd.layers and not any(r["time_ms"] for r in rows):
            rows = layer_rows(None, rd)  # an engine without a profile: the run's per-node times show the hot spots
        session.graph_excerpts = make_excerpts(m.graph, rows, [f.to_json() for f in rec.info.findings] if rec else [])
    return session


def save_session(path: str | os.PathLike[str], model: Any = None, engine: Any = None, run: Any = None,
                 accuracy: dict[str, Any] | None = None, graph_png: bytes | None = None,
                 title: str | None = None) -> Path:
    """Save a session from the same inputs as :func:`build_report`; returns the path."""
    return write_session(path, make_session(model, engine, run, accuracy, graph_png, title))


# ------------------------------------------------------------------------------------------------
# the report


def _clean(obj: Any) -> Any:
    """A strict-JSON copy of ``obj`` (:func:`trtstudio.jsonio.strict`, the one NaN cleaner)."""
    return strict(obj)[0]


def _precision_text(pin: str | None, pout: str | None, p: str | None) -> str | None:
    if pin and pout and pin != pout:
        return f"{pin}>{pout}"
    return p


def layer_rows(info: EngineInfo | None, run: RunData | None) -> list[dict[str, Any]]:
    """The layer table: engine layers (times from the engine's profile, else from the run's per-layer
    profile by name) or, without an engine, the run's per-layer profile rows."""
    run_rows = run.layers if run is not None else []
    rows: list[dict[str, Any]] = []
    if info is not None and info.layers:
        by_name = {str(r.get("name")): r for r in run_rows}
        per: dict[int, list[Any]] = {}
        for f in info.findings:
            if f.layer_index is not None:
                per.setdefault(f.layer_index, []).append(f)
        for lay in info.layers:
            ms = layer_ms(lay)
            provider = None
            if ms is None and lay.name in by_name:
                ms = float(by_name[lay.name].get("time_ms") or 0.0)
                provider = by_name[lay.name].get("provider")
            fs = per.get(lay.index, [])
            rows.append({
                "index": lay.index, "name": lay.name, "type": lay.type,
                "precision": _precision_text(lay.precision_in, lay.precision_out, lay.precision),
                "precision_in": lay.precision_in, "precision_out": lay.precision_out,
                "tactic": lay.tactic, "time_ms": ms,
                "percent": lay.time.percent if lay.time is not None else None,
                "onnx_nodes": list(lay.onnx_nodes), "provider": provider,
                "findings": sorted({f.kind for f in fs}),
                "severity": max((f.severity for f in fs), key=lambda s: _SEVERITY_RANK.get(s, 0), default=None),
                "hints": list(dict.fromkeys(f.hint for f in fs if f.hint)),
            })
    else:
        for i, r in enumerate(run_rows):
            rows.append({
                "index": i, "name": str(r.get("name", "")), "type": str(r.get("op_type") or r.get("type") or ""),
                "precision": None, "precision_in": None, "precision_out": None, "tactic": None,
                "time_ms": float(r["time_ms"]) if r.get("time_ms") is not None else None, "percent": None,
                "onnx_nodes": list(r.get("onnx_nodes") or []), "provider": r.get("provider"),
                "findings": ["cpu_fallback"] if r.get("fallback") else [],
                "severity": "warning" if r.get("fallback") else None,
                "hints": ["this node ran on the CPU although a GPU provider was asked for"] if r.get("fallback") else [],
            })
    total = sum(r["time_ms"] for r in rows if r["time_ms"] is not None)
    for r in rows:
        if r["percent"] is None and r["time_ms"] is not None and total > 0:
            r["percent"] = 100.0 * r["time_ms"] / total
    return rows


def _group(rows: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    sums: dict[str, list[float]] = {}
    for r in rows:
        k = str(r.get(key) or "unknown")
        acc = sums.setdefault(k, [0.0, 0])
        acc[0] += r["time_ms"] or 0.0
        acc[1] += 1
    total = sum(v[0] for v in sums.values())
    out = [{"key": k, "time_ms": v[0], "layers": int(v[1]), "percent": 100.0 * v[0] / total if total > 0 else None}
           for k, v in sums.items()]
    return sorted(out, key=lambda d: (-d["time_ms"], -d["layers"], d["key"]))


def _leak_summary(memory: dict[str, Any]) -> dict[str, Any]:
    """The run's memory verdict: the worst of its series' (growing > inconclusive > stable), with
    that series' text and evidence (``measure.verdict.Verdict``; older documents say ``reason``)."""
    from trtstudio.measure.verdict import Verdict

    verdicts = {k: v["leak"] for k, v in memory.items() if isinstance(v, dict) and isinstance(v.get("leak"), dict)}
    if not verdicts:
        return {"verdict": "unknown", "reason": "no memory series", "by_key": {}}
    order = {"growing": 3, "inconclusive": 2, "unknown": 1, "stable": 0}
    worst_key = max(sorted(verdicts), key=lambda k: order.get(verdicts[k].get("verdict"), 1))
    worst = Verdict.from_json(verdicts[worst_key])
    return {"verdict": worst.verdict, "reason": f"{worst_key}: {worst.text}", "text": worst.text,
            "evidence": worst.evidence, "by_key": verdicts}


@dataclass
class Report:
    """A report's content; ``to_json`` is the ``trtstudio.report/1`` document (see the module docstring)."""

    title: str
    generated: str
    environment: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] | None = None
    graph_picture: dict[str, Any] | None = None  # {"mime", "base64"}
    graph_excerpts: dict[str, Any] | None = None  # report.excerpts.make_excerpts: overview + excerpts (SVG)
    build: dict[str, Any] = field(default_factory=dict)
    engine: dict[str, Any] | None = None
    layers: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    top_layers: list[dict[str, Any]] = field(default_factory=list)
    time_by_type: list[dict[str, Any]] = field(default_factory=list)
    time_by_precision: list[dict[str, Any]] = field(default_factory=list)
    run: dict[str, Any] | None = None
    plots: dict[str, Any] = field(default_factory=dict)
    memory: dict[str, Any] = field(default_factory=dict)
    # the engine's GPU memory by category (engine.memory, the trtstudio.memory/1 document), from its files
    engine_memory: dict[str, Any] | None = None
    leak: dict[str, Any] | None = None
    accuracy: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    summary: dict[str, Any] | None = None  # At a glance (report.summary.at_a_glance), first in every writer
    runs: list[dict[str, Any]] = field(default_factory=list)  # every run of the session, one row each
    # the run's per-node profile rows when the engine has no per-layer times (At a glance reads them)
    run_profile: list[dict[str, Any]] = field(default_factory=list)
    samples: np.ndarray | None = field(default=None, repr=False, compare=False)  # raw latencies (CSV), not in JSON
    # the engine the report was made of (compare aligns its layers through trtstudio.diff), not in JSON
    engine_info: EngineInfo | None = field(default=None, repr=False, compare=False)
    sweeps: list[dict[str, Any]] = field(default_factory=list)  # the session's sweeps and shape mixes (report.shapes)
    # per-node time as the window's Time (ms) colours it (engine.node_time.NodeTimes.summary), or None
    node_times: dict[str, Any] | None = None
    # an INT8 engine's precision explainer (report.precision_sections.explain_section), or None
    precision_explain: dict[str, Any] | None = None
    # per variant, where accuracy is lost (report.precision_sections.divergence_sections; kept in the
    # session's accuracy under "divergence")
    divergence: list[dict[str, Any]] = field(default_factory=list)
    # the Build section: where the engine's build spent its time (report.build_section), or None
    build_timeline: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The report as one JSON-ready document (without the raw samples and the engine object)."""
        doc = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _NOT_JSON}
        return _clean({"schema": SCHEMA, **doc})  # type: ignore[no-any-return]

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Report:
        """Inverse of ``to_json`` (for redrawing a saved report JSON)."""
        names = {f.name for f in fields(cls)} - _NOT_JSON
        return cls(**{k: v for k, v in doc.items() if k in names})

    @classmethod
    def from_session(cls, s: Session, generated: str | None = None) -> Report:
        """The report of a session (its first engine and first run); deterministic but for ``generated``.
        Made with the cyclic collector paused (``gcpause``): a row per layer, 50,000s of them."""
        from trtstudio.bigdocs.gcpause import gc_paused

        with gc_paused():
            return cls._from_session(s, generated)

    @classmethod
    def _from_session(cls, s: Session, generated: str | None = None) -> Report:
        rec = s.engines[0] if s.engines else None
        info = rec.info if rec else None
        run = s.runs[0] if s.runs else None
        accuracy = dict(s.accuracy) if isinstance(s.accuracy, dict) else s.accuracy
        divergence = accuracy.pop("divergence", None) if isinstance(accuracy, dict) else None
        rep = cls(title=_session_title(s, rec, run), generated=generated or now_iso(), environment=s.environment,
                  model=s.model_summary, graph_picture=s.graph_picture.to_json() if s.graph_picture else None,
                  graph_excerpts=s.graph_excerpts, accuracy=accuracy or None,
                  divergence=[d for d in divergence if isinstance(d, dict)] if isinstance(divergence, list) else [])
        warnings: list[str] = list(s.warnings)
        if info is not None:
            warnings += rep._add_engine(info, rec, s.build_settings)
        elif s.build_settings:
            rep.build = {"settings": s.build_settings}
        rep._add_layers(info, run)
        if run is not None:
            warnings += rep._add_run(run)
        rep.warnings = list(dict.fromkeys(warnings))
        from trtstudio.engine.node_time import node_times

        nt = node_times(engine=info, rows=run.layers if run is not None else None)
        rep.node_times = nt.summary() if nt is not None else None
        from trtstudio.report.summary import at_a_glance

        rep.runs = [run_row(r) for r in s.runs]
        rep.sweeps = [dict(d) for d in s.sweeps]
        rep.build_timeline = s.build if s.build is not None else _build_timeline(rec)
        rep.summary = at_a_glance(rep)
        return rep

    def _add_engine(self, info: EngineInfo, rec: EngineRecord | None, build_settings: dict[str, Any]) -> list[str]:
        """The Build and Engine sections, the engine's memory, layer charts, precision explainer and
        findings; returns the engine's warnings."""
        files = rec.paths if rec else []
        self.build = {"settings": {**build_settings, **info.build_settings}, "versions": info.versions,
                      "device": info.device, "memory": info.memory}
        self.engine = {
            "sources": info.sources, "formats": info.formats, "files": files,
            "layers": len(info.layers), "detailed": info.detailed,
            "io_tensors": [t.to_json() for t in info.io_tensors], "latency_ms": info.latency_ms,
            "total_layer_time_ms": info.total_time_ms,
            "engine_size_bytes": info.memory.get("engine_size"),
            # the engine's GPU and TensorRT from its own files, not this machine's
            "provenance": provenance(info),
        }
        self.engine_info = info
        self.engine_memory = _engine_memory(info, files, _engine_label(rec))
        self.plots.update(_layer_charts(info))
        from trtstudio.report.precision_sections import explain_section

        self.precision_explain = explain_section(info, files, name=_engine_label(rec))
        self.findings = [{**f.to_json(), "layer_index": f.layer_index} for f in info.findings]
        return list(info.warnings)

    def _add_layers(self, info: EngineInfo | None, run: RunData | None) -> None:
        """The layer table, the top layers, time by type and by precision; or, for an engine without
        a profile beside a run's per-node profile, where the run's time went."""
        rows = layer_rows(info, run)
        self.layers = rows
        timed = [r for r in rows if r["time_ms"] is not None]
        self.top_layers = [
            {k: r[k] for k in ("index", "name", "type", "precision", "time_ms", "percent", "findings")}
            for r in sorted(timed, key=lambda r: (-r["time_ms"], r["index"]))[:TOP_N]
        ]
        if timed:
            self.time_by_type = _group(timed, "type")
            if any(r["precision"] for r in timed):
                self.time_by_precision = _group(timed, "precision")
        elif info is not None and run is not None and run.layers:
            self.run_profile = [r for r in layer_rows(None, run) if r["time_ms"] is not None]

    def _add_run(self, run: RunData) -> list[str]:
        """The Run section, its samples, latency and memory plots, memory and leak verdict; returns
        the run's warnings."""
        st = run.stats
        self.run = {
            "name": run.name, "backend": run.backend, "model": run.model, "shapes": run.shapes, "config": run.config,
            **{k: st.get(k) for k in ("latency_ms", "jitter_ms", "longest_spike", "parts_ms", "cold_ms", "throughput",
                                      "stopped", "error", "notes")},
            "samples": int(run.latency_ms.size),
        }
        lat = run.latency_ms
        self.samples = lat
        if lat.size:
            lstats = st.get("latency_ms") or {}
            hl = {k: float(lstats[k]) for k in ("median", "p99") if lstats.get(k) is not None}
            self.plots["latency_over_time"] = {**plots.envelope(lat), "hlines": hl}
            self.plots["latency_histogram"] = plots.histogram(lat)
        mem = run.memory
        keys = {k: v for k, v in mem.items() if k not in ("t_s", "index") and np.asarray(v).size}
        if keys and "t_s" in mem:
            self.plots["memory"] = plots.series(mem["t_s"], keys, scale=1.0 / 2**20)
        self.memory = dict(st.get("memory") or {})
        self.leak = _leak_summary(self.memory)
        return [str(w) for w in st.get("warnings") or []]


def _session_title(s: Session, rec: EngineRecord | None, run: RunData | None) -> str:
    """A session's report title: its own, else named after its model, engine file or run."""
    return s.title or "trtstudio report: " + (
        Path(s.model_path).name if s.model_path else (Path(rec.paths[0]).name if rec and rec.paths else
                                                      (run.name if run else "untitled")))

def _build_timeline(rec: EngineRecord | None) -> dict[str, Any] | None:
    """The Build section of a session saved without one: from its engine's build log or build
    document where the file is still there."""
    if rec is None or not rec.paths:
        return None
    from trtstudio.errors import InputError
    from trtstudio.report.build_section import build_log_doc, section_json

    try:
        return section_json(build_log_doc(None, [p for p in rec.paths if os.path.isfile(p)]))
    except InputError:  # a file that cannot be read (permissions): no Build section, the report goes on
        return None


def _engine_label(rec: EngineRecord | None) -> str:
    """An engine's name in a report: its folder (several files) or its file."""
    if rec is None or not rec.paths:
        return "engine"
    first = Path(rec.paths[0])
    return first.parent.name if len(rec.paths) > 1 else first.name


LAYER_CHART_MAX_LAYERS = 5000  # above this many layers, the per-layer memory and MAC charts are left out
LAYER_TIMES_MAX_LAYERS = 500  # above this many, every layer's bar is the Python API's plot_layers(), not the report's


def _engine_memory(info: EngineInfo, files: list[str], name: str) -> dict[str, Any] | None:
    """The engine's memory by category from its files (``engine.memory``), None where they record
    none of it. A saved session's files that are gone since are left out (the engine's own record stays)."""
    from trtstudio.engine.memory import memory_doc, memory_of
    from trtstudio.errors import InputError

    try:
        doc = memory_doc([memory_of(info, [f for f in files if os.path.isfile(f)], name)])
    except InputError:  # a file of the engine that cannot be read: its own figures only (the report goes on)
        doc = memory_doc([memory_of(info, [], name)])
    return doc if any(c["bytes"] is not None for c in doc.get("categories", [])) else None


def _layer_charts(info: EngineInfo) -> dict[str, Any]:
    """Data of the Layers section's charts (``engine.layer_stats``, what the Python API plots): each
    layer's time in layer order, the layers holding the most memory, the convolutions doing the most
    work with their arithmetic intensity. Left out above ``LAYER_CHART_MAX_LAYERS`` layers."""
    from trtstudio.engine.layer_stats import conv_macs, memory_by_layer

    layers = info.layers
    if not layers or len(layers) > LAYER_CHART_MAX_LAYERS:
        return {}
    out: dict[str, Any] = {}
    times = [(lay.name, ms) for lay in layers if (ms := layer_ms(lay)) is not None]
    if times and len(times) <= LAYER_TIMES_MAX_LAYERS:
        out["layer_times"] = {"names": [n for n, _ in times], "ms": [v for _, v in times]}
    if info.detailed:
        mem = sorted(memory_by_layer(layers), key=lambda r: -(r["weights"] + r["activations"]))[:25]
        if any(r["weights"] or r["activations"] for r in mem):
            out["layer_memory"] = mem
        macs = sorted(conv_macs(layers), key=lambda r: -r["macs"])[:25]
        if macs:
            out["conv_macs"] = macs
    return out


def run_row(run: RunData) -> dict[str, Any]:
    """One run in a report's Runs table: name, backend, where it ran, median, p99, throughput."""
    def d(x: Any) -> dict[str, Any]:
        return x if isinstance(x, dict) else {}

    st = d(run.stats)
    lat, tp, remote = d(st.get("latency_ms")), d(st.get("throughput")), d(d(run.config).get("remote"))
    return {"name": run.name, "backend": run.backend, "model": run.model, "samples": int(run.latency_ms.size),
            "median_ms": lat.get("median"), "p99_ms": lat.get("p99"),
            "throughput": tp.get("inferences_per_s"),
            "where": remote.get("target") or "this machine", "shapes": run.shapes}


def build_report(model: Any = None, engine: Any = None, run: Any = None, accuracy: dict[str, Any] | None = None,
                 graph_png: bytes | None = None, title: str | None = None) -> Report:
    """Build a report from what the caller holds.

    ``model``: a ``trtstudio.graph`` Model or an ONNX path. ``engine``: an EngineInfo, an engine
    file path or list of files of one engine (``engine.load.load_engine``), or a
    ``backends.build.BuildResult``. ``run``: a ``profiling.runner.RunResult``, a
    :class:`~trtstudio.report.session.RunData` (``RunData.from_result(result, name=..., layers=...)``
    to name it and add a per-layer profile) or a ``trtstudio profile --json`` document.
    ``accuracy``: a JSON-ready dict. ``graph_png``: a PNG of the graph view (without it the report
    draws a simple SVG of the graph when the model has at most 1,500 nodes).
    """
    return Report.from_session(make_session(model, engine, run, accuracy, graph_png, title))


def selection_report(rep: Report, layers: Iterable[int]) -> Report:
    """``rep`` restricted to the engine layers ``layers`` (a selection in the window): their rows,
    findings, the slowest of them and their time by type and precision; At a glance made again
    from what is kept, the title and warnings saying what it covers."""
    keep = {int(i) for i in layers}
    rows = [r for r in rep.layers if r["index"] in keep]
    timed = [r for r in rows if r["time_ms"] is not None]
    out = replace(rep, title=f"{rep.title} ({len(rows)} selected layer{'s' if len(rows) != 1 else ''})",
                  layers=rows, findings=[f for f in rep.findings if f.get("layer_index") in keep],
                  top_layers=[{k: r[k] for k in ("index", "name", "type", "precision", "time_ms", "percent", "findings")}
                              for r in sorted(timed, key=lambda r: (-r["time_ms"], r["index"]))[:TOP_N]],
                  time_by_type=_group(timed, "type") if timed else [],
                  time_by_precision=_group(timed, "precision") if any(r["precision"] for r in timed) else [],
                  warnings=[f"this report covers {len(rows)} selected layers of {len(rep.layers)}", *rep.warnings])
    out.plots = {k: v for k, v in rep.plots.items() if k not in ("layer_times", "layer_memory", "conv_macs")}
    from trtstudio.report.summary import at_a_glance

    out.summary = at_a_glance(out)
    return out


def reports_from(items: Iterable[Session]) -> list[Report]:
    """Reports of several sessions (for comparisons)."""
    return [Report.from_session(s) for s in items]
