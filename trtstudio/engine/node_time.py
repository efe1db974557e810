"""Per-node time from any source, as one ``{ONNX node name: ms}`` table (no Qt).

The window's ``Time (ms)`` colouring, the reports and the API (``EnginePlan.node_times``) all read
per-node time through :func:`node_times`, whatever measured it:

- an engine analysis (``Analysis.node_time_ms``): a TensorRT profile, ``trtexec --exportTimes``, or an
  Nsight Systems export whose ``TensorRT``-domain ranges became the layers' times. A node gets the time
  of the layer(s) it ran in, so every node of a fused or Myelin layer shows that layer's time
  (``shared``: the layer's node count);
- a kernel table (``EngineInfo.kernels``, from an Nsight Systems export or a Kineto trace) whose ranges
  are named after ONNX nodes, as the PyTorch backend's ``trtstudio::<module>`` annotations are: each
  node gets its range's kernel time per call;
- per-layer profile rows of a run (``profile --per-layer``: ONNX Runtime's per-node profile, the PyTorch
  backend's kernel rows), each row's ``time_ms`` on each of its ``onnx_nodes`` (ONNX Runtime fuses a
  Conv with its activation into one row, as TensorRT fuses them into one layer).

A node always shows the time of the unit it ran in (layer or row), so a hot fused region stands out
as a whole; ``NodeTimes.units()`` lists each unit once, for tables that must add up.

:func:`time_overlay` turns the table into graph colours with a continuous legend in ms.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trtstudio.engine.model import layer_ms

# Colour by mode of the window and the reports (beside engine.overlay.MODES)
TIME_MODE = "Time (ms)"
# A legend entry whose colour starts with this is a continuous ramp: "ramp:#low:#high" (graph_legend paints it)
RAMP = "ramp:"

SOURCES = ("TensorRT profile", "Nsight Systems", "Kineto trace", "PyTorch kernels", "ONNX Runtime profile",
           "profile")


@dataclass
class NodeTimes:
    """Time per ONNX node (ms per inference) and where it came from.

    ``shared[node]``: how many nodes share the time shown on ``node`` (the nodes of one fused layer,
    or of one profile row); ``layers[node]``: the layer or row name that timed it."""

    ms: dict[str, float]
    source: str
    total_ms: float | None = None  # the source's whole time per inference, where it has one
    shared: dict[str, int] = field(default_factory=dict)
    layers: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def top(self, n: int = 10) -> list[tuple[str, float]]:
        """The ``n`` slowest nodes, slowest first."""
        return sorted(self.ms.items(), key=lambda kv: -kv[1])[:n]

    def units(self) -> list[tuple[str, float, list[str]]]:
        """Each timed layer or row once: ``(name, ms, its nodes)``, slowest first (these add up)."""
        out: dict[str, tuple[float, list[str]]] = {}
        for node, t in self.ms.items():
            unit = self.layers.get(node, node)
            got = out.setdefault(unit, (t, []))
            got[1].append(node)
        return sorted(((u, t, nodes) for u, (t, nodes) in out.items()), key=lambda x: -x[1])

    @property
    def max_ms(self) -> float:
        """The largest node time (0 without any)."""
        return max(self.ms.values(), default=0.0)

    def summary(self, top: int = 25) -> dict[str, Any]:
        """A report's compact copy: ``{source, total_ms, nodes_timed, units: [{name, ms, nodes}]}``
        (the ``top`` slowest layers or rows, each once)."""
        return {"source": self.source, "total_ms": self.total_ms, "nodes_timed": len(self.ms),
                "units": [{"name": u, "ms": t, "nodes": nodes} for u, t, nodes in self.units()[:top]],
                "notes": list(self.notes)}

    def to_json(self) -> dict[str, Any]:
        """JSON-ready: ``{source, total_ms, nodes: {name: ms}, layers, shared, notes}``."""
        return {"source": self.source, "total_ms": self.total_ms, "nodes": dict(self.ms),
                "layers": dict(self.layers), "shared": dict(self.shared), "notes": list(self.notes)}


def _engine_source(engine: Any) -> str:
    kernels = getattr(engine, "kernels", None) or {}
    if any(r.get("domain") == "TensorRT" for r in kernels.get("ranges", [])):
        return "Nsight Systems"
    return "TensorRT profile"


def from_analysis(analysis: Any) -> NodeTimes | None:
    """Each mapped node's time per inference: the time of the layer(s) it ran in (``shared``: that
    layer's node count), from an engine analysis; None when no layer of a node is timed."""
    if analysis is None or not getattr(analysis, "node_layers", None):
        return None
    layers_ = analysis.engine.layers
    per = [layer_ms(lay) for lay in layers_]
    ms: dict[str, float] = {}
    shared: dict[str, int] = {}
    layers: dict[str, str] = {}
    for node, positions in analysis.node_layers.items():
        timed = [per[p] for p in positions if per[p] is not None]
        if not timed:
            continue
        ms[node] = float(sum(t for t in timed if t is not None))
        lay = layers_[positions[0]]
        layers[node] = lay.name
        shared[node] = max(1, len(lay.onnx_nodes))
    if not ms:
        return None
    known = [t for t in per if t is not None]
    return NodeTimes(ms, _engine_source(analysis.engine), float(sum(known)) if known else None, shared, layers)


def from_layers(engine: Any) -> NodeTimes | None:
    """Per-node time from an engine's own layers (``Layer.onnx_nodes``, as a report or a session
    keeps them, without an analysis); None when no layer with ONNX nodes is timed."""
    ms: dict[str, float] = {}
    shared: dict[str, int] = {}
    layers: dict[str, str] = {}
    known: list[float] = []
    for lay in getattr(engine, "layers", None) or []:
        t = layer_ms(lay)
        if t is None:
            continue
        known.append(t)
        for node in lay.onnx_nodes:
            ms[node] = ms.get(node, 0.0) + t
            shared.setdefault(node, max(1, len(lay.onnx_nodes)))
            layers.setdefault(node, lay.name)
    if not ms:
        return None
    return NodeTimes(ms, _engine_source(engine), float(sum(known)), shared, layers)


def _module_key(node: str) -> str:
    """The module path onnx2torch gives a node (``.`` -> ``/``, no leading ``/``)."""
    return node.replace(".", "/").strip("/")


def from_kernels(kernels: dict[str, Any] | None, node_names: Iterable[str],
                 source: str = "Kineto trace") -> NodeTimes | None:
    """Kernel time per call of each range named after an ONNX node (``NAME``, ``trtstudio::NAME``, or
    the node's onnx2torch module path); None when no range names a node of ``node_names``."""
    if not kernels or not (kernels.get("ranges") or kernels.get("annotations")):
        return None
    names = list(node_names)
    by_key: dict[str, str] = {}
    for n in names:
        by_key.setdefault(n, n)
        by_key.setdefault(_module_key(n), n)
    ms: dict[str, float] = {}
    layers: dict[str, str] = {}
    ranges = kernels.get("annotations") or kernels["ranges"]  # a Kineto trace's record_function ranges first
    for r in ranges:
        rn = str(r.get("name", ""))
        key = rn.split("::", 1)[1] if rn.startswith("trtstudio::") else rn
        node = by_key.get(key) or by_key.get(key.strip("/"))
        if node is None:
            continue
        per = r.get("per_call_ms")
        t = float(per if per is not None else r.get("ms", 0.0))
        ms[node] = ms.get(node, 0.0) + t
        layers[node] = rn
    if not ms:
        return None
    calls = max((int(r.get("count") or 1) for r in ranges if r.get("name") in layers.values()), default=1)
    total = kernels.get("total_ms")
    note = [] if calls <= 1 else [f"ranges repeat {calls} times: times are per call"]
    return NodeTimes(ms, source, None if total is None else float(total) / calls, dict.fromkeys(ms, 1), layers, note)


def from_rows(rows: Sequence[dict[str, Any]] | None, source: str | None = None) -> NodeTimes | None:
    """Per-node time from per-layer profile rows: each node of a row's ``onnx_nodes`` shows the
    row's ``time_ms`` (``shared``: the row's node count), as a fused engine layer's nodes do;
    None without a timed row that names a node."""
    if not rows:
        return None
    ms: dict[str, float] = {}
    shared: dict[str, int] = {}
    layers: dict[str, str] = {}
    total = 0.0
    kernels = False
    for row in rows:
        t = row.get("time_ms")
        if t is None:
            continue
        total += float(t)
        kernels = kernels or row.get("timing") == "kernels"
        nodes = [n for n in row.get("onnx_nodes") or [] if n]
        for n in nodes:
            ms[n] = ms.get(n, 0.0) + float(t)
            shared[n] = len(nodes)
            layers[n] = str(row.get("name", n))
    if not ms:
        return None
    if source is None:
        source = "PyTorch kernels" if kernels else "ONNX Runtime profile" if any(
            "ExecutionProvider" in str(r.get("provider", "")) for r in rows) else "profile"
    return NodeTimes(ms, source, total, shared, layers)


def node_times(*, analysis: Any = None, engine: Any = None, rows: Sequence[dict[str, Any]] | None = None,
               node_names: Iterable[str] | None = None, prefer: str | None = None) -> NodeTimes | None:
    """Per-node time from the first source that has it: the engine analysis (TensorRT profile or
    Nsight Systems layer ranges), the engine's kernel table (ranges named after nodes: a Kineto trace
    or an export of the PyTorch path), then a run's per-layer rows. ``prefer``: a source of
    :data:`SOURCES` tried first (``"profile"`` = the rows). None when no source has per-node times."""
    eng = engine if engine is not None else getattr(analysis, "engine", None)
    names = list(node_names) if node_names is not None else list(getattr(analysis, "node_layers", {}) or {})

    def kern() -> NodeTimes | None:
        k = getattr(eng, "kernels", None)
        src = "Nsight Systems" if k and (k.get("source") or {}).get("nsys") else "Kineto trace"
        return from_kernels(k, names, src) if names else None

    def own() -> NodeTimes | None:
        return from_analysis(analysis) if analysis is not None else from_layers(eng)

    tries = [("engine", own), ("kernels", kern), ("rows", lambda: from_rows(rows))]
    if prefer in ("profile", "ONNX Runtime profile", "PyTorch kernels"):
        tries.sort(key=lambda t: t[0] != "rows")
    elif prefer in ("Kineto trace",):
        tries.sort(key=lambda t: t[0] != "kernels")
    for _, get in tries:
        got = get()
        if got is not None:
            return got
    return None


def ramp_legend(max_ms: float, source: str) -> tuple[str, str]:
    """The continuous legend entry: 0 to ``max_ms`` on the heat scale."""
    from trtstudio.palette import heat

    return (f"{source}: 0 - {fmt_ms(max_ms)} ms per inference", f"{RAMP}{heat(0.0)}:{heat(1.0)}")


def fmt_ms(v: float) -> str:
    """A time in ms with three significant digits (``0.0123``, ``1.23``, ``123``)."""
    return f"{v:.3g}" if v < 1000 else f"{v:.0f}"


def time_overlay(nodes: Sequence[Any], times: NodeTimes | None) -> Any:
    """Nodes (objects with ``name``) coloured by their time on a linear heat scale from 0 to the
    slowest node, with a continuous legend in ms; untimed nodes pale. None without times."""
    from trtstudio.engine.overlay import Overlay
    from trtstudio.palette import UNMEASURED_COLOR, heat_colors

    if times is None or not times.ms:
        return None
    import numpy as np

    top = times.max_ms or 1.0
    vals = np.fromiter((times.ms.get(n.name, np.nan) for n in nodes), dtype=np.float64, count=len(nodes))
    timed = ~np.isnan(vals)
    colors = np.full(len(nodes), UNMEASURED_COLOR, dtype=object)
    if timed.any():
        colors[timed] = np.asarray(heat_colors(vals[timed] / top), dtype=object)
    legend = [ramp_legend(top, times.source), ("not timed", UNMEASURED_COLOR)]
    return Overlay(colors.tolist(), [False] * len(nodes), legend)


def is_kernel_trace(path: str) -> bool:
    """Whether ``path`` is a kernel trace (an Nsight Systems SQLite export or a Kineto/Chrome trace)
    rather than an engine's own file: it opens beside the engine already open."""
    import os
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False  # never read a pipe or device here
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    if head.startswith(b"SQLite format 3\x00"):
        return True
    if os.path.splitext(path)[1].lower() == ".json" or path.endswith(".json.gz"):
        from trtstudio.engine.kineto import looks_like_trace

        return looks_like_trace(head.decode("utf-8", "replace"))
    return False


# -- what a kernel file held, against the engine it was opened beside ------------------------------

def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f} %" if whole > 0 else "0 %"


def _cc_number(cc: Any) -> int | None:
    try:
        major, minor = str(cc).split(".")[:2]
        return int(major) * 10 + int(minor)
    except (TypeError, ValueError):
        return None


def _gpu_text(k: dict[str, Any]) -> str:
    gpus = [g for g in k.get("gpus") or [] if isinstance(g, dict) and g.get("name")]
    devices = list(k.get("devices") or [])
    if gpus:
        named = sorted({f"{g['name']}" + (f" ({g['compute_capability']})" if g.get("compute_capability") else "")
                        for g in gpus})
        return f"on {len(gpus)} GPU{'s' if len(gpus) > 1 else ''}: {', '.join(named)}"
    where = (f"on GPU {devices[0]}" if len(devices) == 1 else
             f"on {len(devices)} GPUs (devices {', '.join(map(str, devices))})" if devices else "on no recorded GPU")
    archs = list(k.get("archs") or [])
    return f"{where}, their model not named in the file" + (f" ({'/'.join(archs)} kernels)" if archs else "")


def _gpu_note(k: dict[str, Any], device: dict[str, Any]) -> str | None:
    """How the file's GPU compares with the engine's (None where nothing can be said)."""
    name, cc = device.get("name"), device.get("compute_capability")
    if not name and not cc:
        return None
    gpus = [g for g in k.get("gpus") or [] if isinstance(g, dict) and g.get("name")]
    engine_gpu = f"{name or 'GPU'}" + (f" ({cc})" if cc else "")
    if gpus:
        if name and all(str(g["name"]) != str(name) for g in gpus):
            return f"another GPU than the engine's {engine_gpu}"
        return f"the engine's GPU ({engine_gpu})"
    archs = [int(a[2:]) for a in k.get("archs") or [] if a[2:].isdigit()]
    have = _cc_number(cc)
    if archs and have is not None and max(archs) > have:
        return f"its sm{max(archs)} kernels cannot have run on the engine's {engine_gpu}"
    return f"whether it ran on the engine's {engine_gpu} is not recorded"


def trace_verdict(kernels: dict[str, Any], file: str | None = None, layer_names: Iterable[str] = (),
                  device: dict[str, Any] | None = None, node_names: Iterable[str] = ()) -> dict[str, Any]:
    """What a kernel file (an Nsight Systems export, a Kineto trace: ``EngineInfo.kernels``) held,
    against the engine it was opened beside (``layer_names``, ``device``) and the model (``node_names``):
    ``{file, source, kernels, total_ms, holds, ranges, layers, matched_layers, matched_ms, nodes,
    matched_nodes, gpu, gpu_note, text}``; ``text`` is the one line the window and the log show."""
    k = kernels or {}
    fname = Path(file).name if file else "the kernel file"
    source = ("Nsight Systems export" if (k.get("source") or {}).get("nsys") or str(file or "").endswith(".sqlite")
              else "Kineto trace")
    ranges = [r for r in k.get("ranges") or [] if isinstance(r, dict)]
    total = float(k.get("total_ms") or 0.0)
    trt = [r for r in ranges if r.get("domain") == "TensorRT"]
    aten = [r for r in ranges if str(r.get("name", "")).startswith("aten::")]
    ann = [r for r in k.get("annotations") or [] if isinstance(r, dict)] or [
        r for r in ranges if str(r.get("name", "")).startswith("trtstudio::")]
    top = max(ranges, key=lambda r: float(r.get("ms") or 0.0), default=None)
    if trt:
        holds = f"TensorRT layer ranges ({len(trt)} layers)"
    elif ann:
        holds = f"PyTorch ranges named after ONNX nodes ({len(ann)})"
    elif aten:
        best = max(aten, key=lambda r: float(r.get("ms") or 0.0))
        holds = (f"PyTorch op ranges, not TensorRT layers ({len(aten)} ops; {best['name']} "
                 f"{_pct(float(best.get('ms') or 0.0), total)} of the kernel time)")
    elif top is not None:
        holds = f"{len(ranges)} NVTX ranges of its own ({top.get('name')} first)"
    else:
        holds = "kernels only, no ranges"
    layers = set(layer_names)
    matched = [r for r in ranges if r.get("name") in layers]
    matched_ms = float(sum(float(r.get("ms") or 0.0) for r in matched))
    nodes = list(node_names)
    matched_nodes = 0
    if nodes:
        timed = from_kernels(k, nodes)
        matched_nodes = len(timed.ms) if timed is not None else 0
    if layers:
        match = (f"{len({r['name'] for r in matched})} of {len(layers)} engine layers matched "
                 f"({_pct(matched_ms, total)} of its kernel time)")
        if not matched:
            match = f"none of the engine's {len(layers)} layers matched: their times stay as the engine's files give them"
    elif matched_nodes:
        match = f"{matched_nodes} of {len(nodes)} model nodes timed from it"
    else:
        match = "no engine layers to match: its ranges are listed in the Kernels tab"
    note = _gpu_note(k, device or {})
    text = (f"{fname}: {source}, {int(k.get('kernels') or 0):,} kernels ({total:.3g} ms) {_gpu_text(k)}; "
            f"{holds}; {match}" + (f"; {note}" if note else "") + ".")
    return {"file": file, "source": source, "kernels": int(k.get("kernels") or 0), "total_ms": total,
            "holds": holds, "ranges": len(ranges), "layers": len(layers), "matched_layers": len(matched),
            "matched_ms": matched_ms, "nodes": len(nodes), "matched_nodes": matched_nodes,
            "gpu": _gpu_text(k), "gpu_note": note, "text": text}


# -- kernels of one layer or node (the layer table's Kernels tab) ---------------------------------

@dataclass
class LayerKernels:
    """The kernels one layer (or one profile row) ran, per inference: ``rows`` of ``{name, launch,
    count, ms, share}`` (share of the layer's kernel time), slowest first."""

    owner: str
    source: str
    ms: float
    rows: list[dict[str, Any]]


def _per_call(kernels: list[dict[str, Any]], calls: float) -> list[dict[str, Any]]:
    calls = calls or 1.0
    total = sum(float(k.get("ms", 0.0)) for k in kernels)
    out = [{"name": str(k.get("name", "?")), "launch": str(k.get("launch", "")),
            "count": float(k.get("count", 0)) / calls, "ms": float(k.get("ms", 0.0)) / calls,
            "share": float(k.get("ms", 0.0)) / total if total else None} for k in kernels]
    return sorted(out, key=lambda k: -k["ms"])


def layer_kernels(engine: Any, position: int) -> LayerKernels | None:
    """The kernels of ``engine.layers[position]`` from the engine's kernel table (an Nsight Systems
    export's TensorRT range of that name, or a trace range named as the layer); None when the table
    has no range for it."""
    kt = getattr(engine, "kernels", None) or {}
    if not kt.get("ranges") or not 0 <= position < len(engine.layers):
        return None
    name = engine.layers[position].name
    hits = [r for r in kt["ranges"] if r.get("name") == name]
    if not hits:
        return None
    r = next((h for h in hits if h.get("domain") == "TensorRT"), hits[0])
    calls = float(r.get("count") or 1)
    src = "Nsight Systems" if (kt.get("source") or {}).get("nsys") or r.get("domain") == "TensorRT" else "Kineto trace"
    return LayerKernels(name, src, float(r.get("ms", 0.0)) / calls, _per_call(r.get("kernels") or [], calls))


def row_kernels(rows: Sequence[dict[str, Any]] | None, node: str) -> LayerKernels | None:
    """The kernels of the profile row (the PyTorch path's ``timing: "kernels"`` rows, already per
    inference) that ran ONNX node ``node``; None without one."""
    for row in rows or []:
        if row.get("kernels") and node in (row.get("onnx_nodes") or []):
            return LayerKernels(str(row.get("name", node)), "PyTorch kernels", float(row.get("time_ms") or 0.0),
                                _per_call(row["kernels"], 1.0))
    return None


def layer_time_colors(engine: Any) -> tuple[list[str], list[tuple[str, str]]] | None:
    """The engine graph's ``Time (ms)`` colouring: one heat colour per layer (time per inference,
    0 to the slowest layer), untimed layers pale, and the continuous legend; None without times."""
    from trtstudio.palette import UNMEASURED_COLOR, heat_colors

    per = [layer_ms(lay) for lay in getattr(engine, "layers", None) or []]
    timed = [t for t in per if t is not None]
    if not timed:
        return None
    top = max(timed) or 1.0
    heat = iter(heat_colors([t / top for t in timed]))
    colors = [next(heat) if t is not None else UNMEASURED_COLOR for t in per]
    return colors, [ramp_legend(top, _engine_source(engine)), ("not timed", UNMEASURED_COLOR)]
