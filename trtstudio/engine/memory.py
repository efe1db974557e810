"""Where an engine's GPU memory goes, from whatever files describe it, and what a deployment will need.

:func:`engine_memory` reads one engine's files (named as every command names them,
``engine.naming.resolve``) and gives its memory by category (:data:`CATEGORIES`), each figure
with the line or field it came from; what no file says is ``not recorded`` (``bytes`` None),
never guessed:

``weights``
    "Total Weights Memory" of the engine that was kept, else the GPU that "[MemUsageChange]
    TensorRT-managed allocation in engine deserialization" took, else the layers' ``Weights`` and
    ``Bias`` (and ``Constant`` layers') counts times their type size. How much of it is streamable
    is not printed by TensorRT (``getStreamableWeightsSize`` needs the runtime): the figure says so.
``activations``
    "Total Activation Memory" (the device memory TensorRT allocates, tensors sharing blocks), with
    "[BlockAssignment] ... requiring B bytes" beside it; per optimization profile where the log
    builds several ("Constructing optimization profile number N"); the engine's figure is the
    largest, which a context allocates by default (``kSTATIC``).
``activations_naive``
    TREx's figure (``engine.summary.layer_memory``'s ``layer_activations``): every layer's inputs
    plus outputs, as if nothing were shared. Users read this one as the engine's need; it is not.
``device_persistent``, ``host_persistent``, ``scratch``
    "Total Device/Host Persistent Memory", "Max Scratch Memory" (TensorRT 8: "Total Scratch Memory").
``io``
    the engine's I/O tensors at their shapes (the first profile's max shapes where the files record
    them): the buffers the application allocates per context.
``cuda_context``
    "[MemUsageChange] Init CUDA: ... now: GPU N (MiB)": the GPU in use once CUDA was up, which
    holds this process's context (and anything else on that GPU then).
``libraries``
    the GPU that "[MemUsageChange] Init builder kernel library", "Init cuBLAS/cuBLASLt" and "Init
    cuDNN" took (the builder's kernel library is loaded only to build).
``builder_peak``
    "[MemUsageStats] Peak memory usage of TRT CPU/GPU memory allocators" (GPU; CPU in the note).
``engine_size``
    the plan file's size, else a build document's ``engine_bytes``, else "Created engine with size",
    else "Loaded engine size".
``other``
    TensorRT-managed allocations the log reports that none of the above holds.

The context's own device memory ("Created execution context with device memory size", "Allocated
device scratch memory of size") is ``context`` beside the categories. A log may hold several
builds (a script building three engines) and, within one, several candidate engines (TensorRT
10.16's backend strategies: "Building graph using backend strategy N", "Chose this engine with
backend strategy N"): the figures are those of the last build's kept engine, as the layer reader
reads the last listing.

Per layer (:func:`layer_rows`): each layer's output activation and weight bytes from the layer
information, and the host/device persistent and scratch bytes that a verbose log's "Layer: NAME
Host Persistent: .. Device Persistent: .. Scratch Memory: .." lines give. :func:`live_memory`:
the activation bytes alive along the layer order (a tensor from the layer that writes it to the
last layer that reads it), its peak and the tensors alive there.

:func:`predict` plans a deployment: K contexts of each engine in each of P processes on a GPU of
M bytes, with TensorRT's fixes and what each saves (see its docstring). :func:`memory_rows` puts
two engines' categories side by side (for diff and compare).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trtstudio.engine.model import EngineInfo, Layer, TensorDesc
from trtstudio.engine.summary import _constant_bytes, tensor_bytes
from trtstudio.errors import InputError

SCHEMA = "trtstudio.memory/1"
CATEGORIES = ("weights", "activations", "activations_naive", "device_persistent", "host_persistent", "scratch",
              "io", "cuda_context", "libraries", "builder_peak", "engine_size", "other")
NOT_RECORDED = "not recorded"
MIB = 1 << 20
# The kinds of memory line a log holds (what ``read_log`` returns per line)
LINE_KINDS = ("mem_usage_change", "totals", "block_assignment", "builder_peak", "engine_size", "context", "layer")

# Where no file records the CUDA context, the prediction assumes this (and says so)
DEFAULT_CUDA_CONTEXT_BYTES = 500 * MIB
CUDA_CONTEXT_BASIS = (
    "assumed 500 MiB per process: a CUDA 12+ context with lazy loading on a data-centre GPU (TensorRT 10.16 "
    "on an H100 PCIe logged 458 MiB in use after Init CUDA, NVIDIA/trt-samples-for-hackathon-cn "
    "cookbook/07-Tool/trtexec/result-01.log); not measured here")

_PREFIX = re.compile(r"^(?:\[\d\d/\d\d/\d{4}-[\d:]+\] )?(?:\[TRT\] )?(?:\[[VIWEF]\] )?(?:\[TRT\] )?")
_NUM = r"([+-]?\d+(?:\.\d+)?)"
_MEM_CHANGE = re.compile(r"\[MemUsageChange\] (.+?): CPU ([+-]?\d+), GPU ([+-]?\d+), now: CPU (-?\d+), GPU (-?\d+) "
                         r"\(MiB\)")
_TOTALS = re.compile(r"^(Total Host Persistent Memory|Total Device Persistent Memory|Max Scratch Memory|"
                     r"Total Scratch Memory|Total Activation Memory|Total Weights Memory): (\d+)(?: bytes)?\s*$")
_TOTAL_KEYS = {"Total Host Persistent Memory": "host_persistent", "Total Device Persistent Memory": "device_persistent",
               "Max Scratch Memory": "scratch", "Total Scratch Memory": "scratch",
               "Total Activation Memory": "activations", "Total Weights Memory": "weights"}
_BLOCKS = re.compile(r"^\[BlockAssignment\] Algorithm (\S+) took \S+ to assign (\d+) blocks to (\d+) nodes "
                     r"requiring (\d+) bytes")
_PEAK = re.compile(r"\[MemUsageStats\] Peak memory usage of TRT CPU/GPU memory allocators: CPU (\d+) MiB, "
                   r"GPU (\d+) MiB")
_CREATED = re.compile(r"^Created engine with size: " + _NUM + r" MiB")
_LOADED = re.compile(r"^Loaded engine size: " + _NUM + r" MiB")
_CONTEXT_SIZE = re.compile(r"^Created execution context with device memory size: " + _NUM + r" MiB")
_SCRATCH_ALLOC = re.compile(r"^Allocated (device scratch|activation device) memory of size (\d+)")
_RUNNER = re.compile(r"^Total per-runner (device|host) persistent memory is (\d+)")
_RUNNER_SCRATCH = re.compile(r"^- Runner scratch: (\d+) bytes")
_LAYER = re.compile(r"^Layer: (.*) Host Persistent: (\d+)(?: bytes)? Device Persistent: (\d+)(?: bytes)? "
                    r"Scratch Memory: (\d+)(?: bytes)?")
_PROFILE = re.compile(r"^Constructing optimization profile number (\d+)")
_STRATEGY_BUILD = re.compile(r"^Building graph using backend strategy (\d+)")
_STRATEGY_CHOSEN = re.compile(r"^(?:Use backend strategy (\d+) .*initial choice|Chose this engine with backend "
                              r"strategy (\d+))")
_MARKERS = ("emory", "MemUsage", "BlockAssignment", "engine size", "engine with size", "Persistent", "scratch",
            "backend strategy", "optimization profile number", "Engine generation completed")


@dataclass(slots=True)
class Line:
    """One memory line of a log: its kind (:data:`LINE_KINDS`), what it says (``key``), its bytes
    (MiB figures times 2**20), its 1-based line number and text (the log prefix removed)."""

    kind: str
    key: str
    number: int
    text: str
    bytes: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Candidate:
    """One engine a build made (TensorRT 10.16 may make several, one per backend strategy)."""

    strategy: int | None = None
    profiles: dict[int, dict[str, Line]] = field(default_factory=dict)
    layers: dict[int, list[Line]] = field(default_factory=dict)
    weights: Line | None = None
    runner: dict[str, Line] = field(default_factory=dict)
    done: bool = False
    profile: int = 0

    def has_figures(self) -> bool:
        return bool(self.profiles or self.weights)


@dataclass
class _Build:
    """One builder run of a log (or the load of an engine), with its candidates and runtime lines."""

    candidates: list[_Candidate] = field(default_factory=lambda: [_Candidate()])
    chosen: int | None = None
    cuda: Line | None = None
    libraries: list[Line] = field(default_factory=list)
    peak: Line | None = None
    created: Line | None = None
    runtime: dict[str, Line] = field(default_factory=dict)
    other: list[Line] = field(default_factory=list)

    def has_figures(self) -> bool:
        return any(c.has_figures() for c in self.candidates) or bool(self.runtime)

    def kept(self) -> _Candidate:
        """The candidate engine the build kept: the one of the strategy it chose, else the last with figures."""
        with_figures = [c for c in self.candidates if c.has_figures()]
        if self.chosen is not None:
            for c in reversed(with_figures):
                if c.strategy == self.chosen:
                    return c
        return with_figures[-1] if with_figures else self.candidates[-1]


@dataclass
class LogMemory:
    """What :func:`read_log` found: the builds of a log and every memory line, in order."""

    path: str
    builds: list[_Build]
    lines: list[Line]

    def last(self) -> _Build | None:
        with_figures = [b for b in self.builds if b.has_figures() or b.cuda or b.peak or b.created]
        return with_figures[-1] if with_figures else None


def _mib(value: str) -> int:
    return int(round(float(value) * MIB))


class _Reader:
    """The state :func:`read_log` keeps while it walks the lines."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.builds = [_Build()]
        self.lines: list[Line] = []

    @property
    def build(self) -> _Build:
        return self.builds[-1]

    @property
    def cand(self) -> _Candidate:
        return self.build.candidates[-1]

    def new_build(self) -> None:
        if self.build.has_figures() or self.build.peak or self.build.created:
            self.builds.append(_Build())

    def new_candidate(self, strategy: int | None) -> None:
        c = self.cand
        if c.has_figures() or c.done:
            self.build.candidates.append(_Candidate(strategy=strategy))
        else:
            c.strategy = strategy

    def add(self, kind: str, key: str, number: int, text: str, nbytes: int | None, **extra: Any) -> Line:
        line = Line(kind, key, number, text, nbytes, extra)
        self.lines.append(line)
        return line

    def runtime_or_runner(self, key: str, line: Line) -> None:
        """A context's figure: the runtime's once the engine was loaded, else the builder's own context."""
        if "loaded" in self.build.runtime or not self.cand.has_figures():
            self.build.runtime[key] = line
        else:
            self.cand.runner[key] = line

    def mem_change(self, number: int, msg: str, m: re.Match[str]) -> None:
        what, gpu_delta, gpu_now = m.group(1), int(m.group(3)), int(m.group(5))
        line = self.add("mem_usage_change", what, number, msg, gpu_delta * MIB, cpu_delta_mib=int(m.group(2)),
                        gpu_now_bytes=gpu_now * MIB, cpu_now_mib=int(m.group(4)))
        if what == "Init CUDA":
            self.new_build()
            self.build.cuda = line
        elif what == "Init builder kernel library":
            self.new_build()
            self.build.libraries.append(line)
        elif what.startswith(("Init cuBLAS", "Init cuDNN", "Init cublas", "Init cudnn")):
            self.build.libraries.append(line)
        elif what.endswith("engine deserialization"):
            self.build.runtime["deserialization"] = line
        elif what.endswith("IExecutionContext creation"):
            self.runtime_or_runner("context_creation", line)
        else:
            self.build.other.append(line)

    def totals(self, number: int, msg: str, m: re.Match[str]) -> None:
        key = _TOTAL_KEYS[m.group(1)]
        c = self.cand
        if c.done and c.has_figures():
            if self.build.chosen is not None or c.strategy is not None:
                self.new_candidate(None)
            else:
                self.builds.append(_Build())
            c = self.cand
        line = self.add("totals", key, number, msg, int(m.group(2)), profile=c.profile)
        if key == "weights":
            c.weights = line
        else:
            c.profiles.setdefault(c.profile, {})[key] = line

    def line(self, number: int, raw: str) -> None:
        msg = raw[_PREFIX.match(raw).end():].strip()  # type: ignore[union-attr]
        if "MemUsageChange" in msg:
            m = _MEM_CHANGE.search(msg)
            if m:
                self.mem_change(number, msg, m)
            return
        m = _TOTALS.match(msg)
        if m:
            self.totals(number, msg, m)
            return
        if msg.startswith("[BlockAssignment] Algorithm"):
            m = _BLOCKS.match(msg)
            if m:
                c = self.cand
                line = self.add("block_assignment", "activations", number, msg, int(m.group(4)), algorithm=m.group(1),
                                blocks=int(m.group(2)), nodes=int(m.group(3)), profile=c.profile)
                c.profiles.setdefault(c.profile, {})["block_assignment"] = line
            return
        if msg.startswith("Layer: "):
            m = _LAYER.match(msg)
            if m:
                c = self.cand
                c.layers.setdefault(c.profile, []).append(self.add(
                    "layer", m.group(1), number, msg, None, host_persistent=int(m.group(2)),
                    device_persistent=int(m.group(3)), scratch=int(m.group(4)), profile=c.profile))
            return
        m = _PEAK.search(msg)
        if m:
            self.build.peak = self.add("builder_peak", "builder_peak", number, msg, int(m.group(2)) * MIB,
                                       cpu_bytes=int(m.group(1)) * MIB)
            return
        if self.size_line(number, msg):
            return
        self.structure_line(msg)

    def size_line(self, number: int, msg: str) -> bool:
        """Engine sizes and a context's figures."""
        m = _CREATED.match(msg)
        if m:
            self.build.created = self.add("engine_size", "created", number, msg, _mib(m.group(1)))
            return True
        m = _LOADED.match(msg)
        if m:
            if "loaded" in self.build.runtime:  # the engine loaded again: its later context's figures count
                self.build.runtime = {k: v for k, v in self.build.runtime.items() if k == "deserialization"}
            self.build.runtime["loaded"] = self.add("engine_size", "loaded", number, msg, _mib(m.group(1)))
            return True
        m = _CONTEXT_SIZE.match(msg)
        if m:
            line = self.add("context", "context_device_memory", number, msg, _mib(m.group(1)))
            self.build.runtime["context_device_memory"] = line
            return True
        for rx, key in ((_SCRATCH_ALLOC, "scratch_allocated"), (_RUNNER, "per_runner"),
                        (_RUNNER_SCRATCH, "runner_scratch")):
            m = rx.match(msg)
            if m:
                if key == "per_runner":
                    key = f"per_runner_{m.group(1)}_persistent"
                self.runtime_or_runner(key, self.add("context", key, number, msg, int(m.group(m.lastindex or 1))))
                return True
        return False

    def structure_line(self, msg: str) -> None:
        """Where a profile, a candidate engine or a build starts and ends."""
        m = _PROFILE.match(msg)
        if m:
            self.cand.profile = int(m.group(1))
            return
        m = _STRATEGY_BUILD.match(msg)
        if m:
            self.new_candidate(int(m.group(1)))
            return
        m = _STRATEGY_CHOSEN.match(msg)
        if m:
            self.build.chosen = int(m.group(1) or m.group(2))
            return
        if msg.startswith("Engine generation completed"):
            self.cand.done = True


def read_log(path: str, text: str) -> LogMemory:
    """Every memory line of a TensorRT log (trtexec, the Python API's logger, TensorRT-RTX,
    ``--verbose`` or not, TensorRT 8.6 to 10.x wordings) and the builds it holds."""
    r = _Reader(path)
    markers = _MARKERS
    for number, raw in enumerate(text.split("\n"), 1):
        if any(mk in raw for mk in markers):
            r.line(number, raw.rstrip("\r"))
    return LogMemory(path, r.builds, r.lines)


# --- categories ---------------------------------------------------------------------------------


@dataclass
class Figure:
    """One category's bytes (None: not recorded) and where they came from; ``also``: other lines
    or fields that state the same quantity; ``note``: what the figure is not."""

    name: str
    bytes: int | None = None
    source: str = NOT_RECORDED
    note: str = ""
    also: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "bytes": self.bytes, "source": self.source}
        if self.note:
            d["note"] = self.note
        if self.also:
            d["also"] = self.also
        return d


def _source(path: str, line: Line) -> str:
    text = line.text if len(line.text) <= 160 else line.text[:157] + "..."
    return f"{path}:{line.number}: {text}"


def _from_line(name: str, path: str, line: Line | None, note: str = "") -> Figure:
    return Figure(name) if line is None else Figure(name, line.bytes, _source(path, line), note)


@dataclass
class EngineMemory:
    """One engine's memory: categories, per-profile categories (several profiles), the context's
    device memory, per-layer rows, live activations and how many lines of each kind were read."""

    name: str
    files: list[str]
    categories: dict[str, Figure]
    profiles: list[dict[str, Any]] = field(default_factory=list)
    context: Figure = field(default_factory=lambda: Figure("context_device_memory"))
    layers: list[dict[str, Any]] = field(default_factory=list)
    live: dict[str, Any] | None = None
    line_kinds: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def bytes_of(self, name: str) -> int | None:
        return self.categories[name].bytes

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "files": self.files,
                "categories": [self.categories[n].to_json() for n in CATEGORIES],
                "profiles": self.profiles, "context": self.context.to_json(), "line_kinds": self.line_kinds,
                "layers": self.layers, "live": self.live, "warnings": self.warnings}


def _profile_figures(path: str, cand: _Candidate) -> dict[int, dict[str, Figure]]:
    out: dict[int, dict[str, Figure]] = {}
    for p, lines in sorted(cand.profiles.items()):
        figs = {k: _from_line(k, path, lines.get(k)) for k in ("activations", "device_persistent", "host_persistent",
                                                                  "scratch")}
        blocks = lines.get("block_assignment")
        if blocks is not None:
            act = figs["activations"]
            src = _source(path, blocks)
            what = f"block assignment: {blocks.extra['blocks']} blocks for {blocks.extra['nodes']} nodes"
            also: dict[str, Any] = {"bytes": blocks.bytes, "source": src, "what": what}
            if act.bytes is None:
                figs["activations"] = Figure("activations", blocks.bytes, src, what)
            else:
                act.also.append(also)
        out[p] = figs
    return out


def _largest(name: str, per_profile: dict[int, dict[str, Figure]]) -> Figure:
    """A category's engine figure over its profiles: the largest (kSTATIC allocates the largest)."""
    known = [(figs[name], p) for p, figs in per_profile.items() if figs[name].bytes is not None]
    if not known:
        return Figure(name)
    fig, p = max(known, key=lambda fp: fp[0].bytes or 0)
    note = fig.note
    if len(per_profile) > 1:
        note = (note + "; " if note else "") + f"the largest of {len(per_profile)} profiles (profile {p})"
    return Figure(name, fig.bytes, fig.source, note, list(fig.also))


def _library_figure(path: str, libs: list[Line]) -> Figure:
    if not libs:
        return Figure("libraries")
    total = sum(max(line.bytes or 0, 0) for line in libs)
    builder = any(line.key == "Init builder kernel library" for line in libs)
    note = "GPU each init added (a negative change counts 0)"
    if builder:
        note += "; the builder's kernel library is loaded only while building"
    return Figure("libraries", total, "; ".join(_source(path, line) for line in libs), note)


def log_figures(log: LogMemory) -> tuple[dict[str, Figure], dict[int, dict[str, Figure]], Figure, list[Line]]:
    """The categories a log gives (its last build, the engine it kept), per profile, the context's
    device memory and the kept engine's per-layer lines (its first profile)."""
    path = log.path
    figs = {n: Figure(n) for n in CATEGORIES}
    build = log.last()
    if build is None:
        return figs, {}, Figure("context_device_memory"), []
    cand = build.kept()
    per_profile = _profile_figures(path, cand)
    for name in ("activations", "device_persistent", "host_persistent", "scratch"):
        figs[name] = _largest(name, per_profile)
    streamable = "how much is streamable is not printed (getStreamableWeightsSize at runtime)"
    if cand.weights is not None:
        figs["weights"] = _from_line("weights", path, cand.weights, streamable)
    elif "deserialization" in build.runtime:
        figs["weights"] = _from_line("weights", path, build.runtime["deserialization"],
                                     "GPU the engine took when deserialized (MiB resolution); " + streamable)
    cuda = [b.cuda for b in log.builds[:log.builds.index(build) + 1] if b.cuda is not None]
    if cuda:  # one per process: an earlier build's where this one's builder found CUDA up
        line = cuda[-1]
        figs["cuda_context"] = Figure("cuda_context", line.extra["gpu_now_bytes"], _source(path, line),
                                      "GPU in use once CUDA was up: this process's context and anything else "
                                      "on that GPU then")
    figs["libraries"] = _library_figure(path, build.libraries)
    if build.peak is not None:
        figs["builder_peak"] = _from_line("builder_peak", path, build.peak,
                                          f"CPU {build.peak.extra['cpu_bytes'] // MIB} MiB")
    size = build.created or build.runtime.get("loaded")
    if size is not None:
        figs["engine_size"] = _from_line("engine_size", path, size)
        if build.created is not None and "loaded" in build.runtime:
            loaded = build.runtime["loaded"]
            figs["engine_size"].also.append({"bytes": loaded.bytes, "source": _source(path, loaded)})
    if build.other:
        figs["other"] = Figure("other", sum(max(line.bytes or 0, 0) for line in build.other),
                               "; ".join(_source(path, line) for line in build.other),
                               "GPU the other TensorRT-managed allocations added")
    ctx = Figure("context_device_memory")
    for key in ("context_device_memory", "scratch_allocated"):
        if key in build.runtime:
            ctx = _from_line("context_device_memory", path, build.runtime[key])
            break
    return figs, per_profile, ctx, cand.layers.get(0, [])


# --- layers ---------------------------------------------------------------------------------------


def _weight_bytes(lay: Layer) -> int | None:
    w, b = lay.constants()
    total = None
    for v in (w, b):
        n = _constant_bytes(v)
        if n is not None:
            total = (total or 0) + n
    return None if total is None else int(math.ceil(total))


def _out_bytes(tensors: Iterable[TensorDesc]) -> int | None:
    sized = [s for s in map(tensor_bytes, tensors) if s is not None]
    return int(math.ceil(sum(sized))) if sized else None


def layer_rows(layers: Sequence[Layer], log_layers: Sequence[Line] = (), source: str = "") -> list[dict[str, Any]]:
    """Per layer: ``activation_bytes`` (its outputs), ``weight_bytes`` (Weights + Bias), and where a
    verbose log gives them, ``host_persistent``, ``device_persistent`` and ``scratch`` (its
    workspace). Layers the log lists that the layer information lacks follow as rows of their own."""
    by_name = {line.key: line for line in log_layers}
    rows = []
    seen = set()
    for lay in layers:
        row: dict[str, Any] = {"index": lay.index, "name": lay.name, "activation_bytes": _out_bytes(lay.outputs),
                               "weight_bytes": _weight_bytes(lay)}
        line = by_name.get(lay.name)
        if line is not None:
            seen.add(lay.name)
            row.update({k: line.extra[k] for k in ("host_persistent", "device_persistent", "scratch")})
            row["source"] = f"{source}:{line.number}"
        rows.append(row)
    for line in log_layers:
        if line.key not in seen:
            rows.append({"index": None, "name": line.key, "activation_bytes": None, "weight_bytes": None,
                         **{k: line.extra[k] for k in ("host_persistent", "device_persistent", "scratch")},
                         "source": f"{source}:{line.number}"})
    return rows


def live_memory(layers: Sequence[Layer], io_outputs: Iterable[str] = (), alive_top: int = 20) -> dict[str, Any] | None:
    """Activation bytes alive at each layer (layer order, no sharing): a tensor lives from the layer
    that writes it (an engine input from the first) to the last layer that reads it (an engine
    output, or a tensor nobody reads, to the end). ``bytes`` per layer, ``peak_bytes``,
    ``peak_index``/``peak_layer``, ``alive_at_peak`` (the largest ``alive_top`` tensors, bytes),
    ``unsized`` (tensors of unknown shape or type, left out). None without layers."""
    import numpy as np

    n = len(layers)
    if not n:
        return None
    start: dict[str, int] = {}
    end: dict[str, int] = {}
    size: dict[str, float] = {}
    for i, lay in enumerate(layers):
        for t in lay.inputs:
            name = t.name
            if name not in start:
                start[name] = 0
                size[name] = tensor_bytes(t) or -1.0
            end[name] = i
        for t in lay.outputs:
            name = t.name
            if name not in start:
                start[name] = i
                size[name] = tensor_bytes(t) or -1.0
            end.setdefault(name, i)
    for name in io_outputs:
        if name in end:
            end[name] = n - 1
    read = {t.name for lay in layers for t in lay.inputs}
    for name in start:
        if name not in read:
            end[name] = n - 1
    names = [k for k in start if size[k] >= 0]
    unsized = len(start) - len(names)
    delta = np.zeros(n + 1)
    s = np.fromiter((start[k] for k in names), dtype=np.int64, count=len(names))
    e = np.fromiter((end[k] for k in names), dtype=np.int64, count=len(names))
    b = np.fromiter((size[k] for k in names), dtype=float, count=len(names))
    np.add.at(delta, s, b)
    np.add.at(delta, e + 1, -b)
    alive = np.cumsum(delta[:n])
    peak = int(np.argmax(alive)) if n else 0
    at_peak = [(names[j], int(b[j])) for j in np.nonzero((s <= peak) & (e >= peak))[0]]
    at_peak.sort(key=lambda kv: -kv[1])
    return {"bytes": [int(round(v)) for v in alive.tolist()], "peak_bytes": int(round(float(alive[peak]))),
            "peak_index": peak, "peak_layer": layers[peak].name,
            "alive_at_peak": [{"tensor": k, "bytes": v} for k, v in at_peak[:alive_top]],
            "alive_count": len(at_peak), "unsized": unsized}


# --- files ----------------------------------------------------------------------------------------


def _io_figure(info: EngineInfo, label: str) -> Figure:
    """The I/O buffers at the first profile's max shapes (where recorded), else the tensors' shapes."""
    tensors = info.io_tensors
    if not tensors:
        return Figure("io")
    shapes = info.build_settings.get("profile_shapes")
    shapes = shapes if isinstance(shapes, dict) else {}
    total = 0.0
    maxed = 0
    for t in tensors:
        given = shapes.get(t.name)
        if isinstance(given, dict) and isinstance(given.get("MaxShape"), list):
            t = TensorDesc(t.name, given["MaxShape"], t.dtype, t.format)
            maxed += 1
        b = tensor_bytes(t)
        if b is None:
            return Figure("io", None, NOT_RECORDED, f"{t.name}: shape or type not known "
                                                    f"({t.shape}, {t.dtype}); no profile max shape recorded")
        total += b
    what = f"{len(tensors)} I/O tensors of {label}"
    what += f", {maxed} at the first profile's max shape" if maxed else " at their shapes"
    return Figure("io", int(math.ceil(total)), what)


def _naive_figure(info: EngineInfo, label: str) -> tuple[Figure, Figure | None]:
    """TREx's activation sum, and the layers' weights where no log gave them."""
    from trtstudio.engine.summary import layer_memory

    if not info.layers or not info.detailed:
        return Figure("activations_naive"), None
    # the sums an analysis added already (engine.summary.add_layer_memory: the window's diagnosis), else made here
    mem = info.memory if "layer_activations" in info.memory else layer_memory(info.layers)
    where = f"{label}: {len(info.layers)} layers"
    naive = Figure("activations_naive")
    if "layer_activations" in mem:
        naive = Figure("activations_naive", mem["layer_activations"],
                       f"{where}, every layer's inputs + outputs (engine.summary.layer_memory, TREx's figure)",
                       "no memory shared between tensors: not what TensorRT allocates")
    keys = [k for k in ("layer_weights", "layer_bias", "layer_constants") if k in mem]
    weights = None
    if keys:
        weights = Figure("weights", sum(mem[k] for k in keys), f"{where}, Weights/Bias counts x type size "
                         f"({', '.join(keys)})", "from the layer information: regions that list no weights "
                         "(Myelin) are missing")
    return naive, weights


def _text_of(path: Path) -> str | None:
    """A file's text where it is a text log (not a JSON document, not binary); None otherwise."""
    from trtstudio.engine.readers import is_binary, read_head

    head = read_head(path)
    if is_binary(head) or head.lstrip()[:1] == b"{":
        return None
    return path.read_bytes().decode("utf-8", errors="replace")


def _build_doc_log(path: Path) -> tuple[str | None, int | None]:
    """A ``trtstudio.build/1`` document's log as text, and its ``engine_bytes``."""
    import json

    from trtstudio.engine.buildlog import build_log_text, log_line
    from trtstudio.engine.readers import read_head

    if b'"trtstudio.build/1"' not in read_head(path)[:400]:  # the schema comes first; a layer JSON is not read twice
        return None, None
    try:
        doc = json.loads(path.read_text(errors="replace"))
    except ValueError:
        return None, None
    if not isinstance(doc, dict) or doc.get("schema") != "trtstudio.build/1":
        return None, None
    lines = [log_line(str(r.get("source") or "TRT"), str(r.get("severity") or ""), str(r.get("message")))
             for r in doc.get("log") or [] if isinstance(r, dict)]
    size = doc.get("engine_bytes")
    return build_log_text({}, {}, lines), size if isinstance(size, int) else None


def engine_memory(names: Sequence[str] | str, name: str | None = None) -> EngineMemory:
    """The memory of the one engine ``names`` name (``engine.naming.resolve``: a folder, FILE,FILE,
    a TREx prefix, a file, a build document, a session)."""
    from trtstudio.engine.naming import resolve

    named = resolve(names)
    if named.session:
        from trtstudio.report.session import load_session

        s = load_session(named.session)
        if not s.engines:
            raise InputError(named.session, "this session holds no engine")
        rec = s.engines[0]
        return memory_of(rec.info, [p for p in rec.paths if Path(p).is_file()], name or named.label,
                         session=named.session)
    from trtstudio.engine.load import load_engine

    try:
        info: EngineInfo | None = load_engine(named.files)
    except InputError as exc:  # a plan this machine cannot deserialize, a log of memory lines only
        rest = [f for f in named.files if Path(f).suffix.lower() not in _PLAN_SUFFIXES]
        try:
            info = load_engine(rest) if rest and len(rest) < len(named.files) else None
        except InputError:
            info = None
        out = memory_of(info, named.files, name or named.label)
        if not any(f.bytes is not None for f in out.categories.values()):
            raise
        if len(rest) < len(named.files):
            out.warnings.insert(0, f"the plan's layers were not read ({exc.one_line()[:200]}): its size only")
        return out
    return memory_of(info, named.files, name or named.label)


def memory_of(info: EngineInfo | None, files: Sequence[str], name: str, session: str | None = None,
              per_layer: bool = True) -> EngineMemory:
    """An engine's memory from its EngineInfo (layers, I/O, the readers' figures) and its files
    (logs read line by line here, a plan's size, a build document's log and ``engine_bytes``).
    ``per_layer=False``: the categories only, without the per-layer rows and the live activations
    (what diff and compare show)."""
    figs = {n: Figure(n) for n in CATEGORIES}
    per_profile: dict[int, dict[str, Figure]] = {}
    ctx = Figure("context_device_memory")
    log_layers: list[Line] = []
    log_source = ""
    kinds = dict.fromkeys(LINE_KINDS, 0)
    warnings: list[str] = []
    plan_size: Figure | None = None
    for f in files:
        p = Path(f)
        text, doc_size = None, None
        if p.suffix.lower() in _PLAN_SUFFIXES:
            plan_size = Figure("engine_size", p.stat().st_size, f"{f}: the plan file's size")
            continue
        if p.suffix.lower() == ".json":
            text, doc_size = _build_doc_log(p)
            if doc_size is not None:
                plan_size = Figure("engine_size", doc_size, f"{f}: engine_bytes")
        else:
            text = _text_of(p)
        if not text:
            continue
        log = read_log(f"{f}#log" if doc_size is not None else f, text)
        if doc_size is not None:  # numbered as the document's log records (the text has a header line first)
            for line in log.lines:
                line.number -= 1
        for line in log.lines:
            kinds[line.kind] += 1
        if not log.lines:
            continue
        builds = [b for b in log.builds if b.has_figures()]
        if len(builds) > 1:
            warnings.append(f"{f}: the log holds {len(builds)} engine builds; the figures are the last one's")
        lf, lp, lc, ll = log_figures(log)
        for n, fig in lf.items():
            if fig.bytes is not None and figs[n].bytes is None:
                figs[n] = fig
        per_profile = per_profile or lp
        ctx = ctx if ctx.bytes is not None else lc
        if ll and not log_layers:
            log_layers, log_source = ll, f
    label = session or (files[0] if len(files) == 1 else name)
    if info is not None:
        _fill_from_info(figs, info, label, session)
    if plan_size is not None:
        old = figs["engine_size"]
        if old.bytes is not None:
            plan_size.also.append({"bytes": old.bytes, "source": old.source})
        figs["engine_size"] = plan_size
    if not per_layer:
        rows, live = [], None
    elif info is not None and info.layers:
        rows = layer_rows(info.layers, log_layers, log_source)
        outputs = [t.name for t in info.io_tensors]
        live = live_memory(info.layers, outputs)
    else:
        rows = layer_rows([], log_layers, log_source)
        live = None
    dm = info.memory.get("device_memory") if info is not None else None
    if ctx.bytes is None and isinstance(dm, int):
        ctx = Figure("context_device_memory", dm, f"{session or label}: engine.memory['device_memory']")
    profiles = []
    if len(per_profile) > 1:
        profiles = [{"profile": p, "categories": [f.to_json() for f in pf.values()]} for p, pf in per_profile.items()]
    if info is not None:
        warnings += [w for w in info.warnings if w not in warnings]
    return EngineMemory(name, list(files) or ([session] if session else []), figs, profiles, ctx, rows, live,
                        kinds, warnings)


_PLAN_SUFFIXES = (".engine", ".plan", ".trt", ".trtengine")
_INFO_KEYS = {"weights": "weights", "activation": "activations", "host_persistent": "host_persistent",
              "device_persistent": "device_persistent", "scratch": "scratch", "engine_size": "engine_size"}


def _fill_from_info(figs: dict[str, Figure], info: EngineInfo, label: str, session: str | None) -> None:
    """Categories no log gave, from what the readers kept (``EngineInfo.memory``) and the layers."""
    where = f"{session}: the session's engine.memory" if session else "engine.memory (the readers' figures)"
    for key, name in _INFO_KEYS.items():
        v = info.memory.get(key)
        if figs[name].bytes is None and isinstance(v, int):
            figs[name] = Figure(name, v, f"{where}[{key!r}]")
    if figs["io"].bytes is None:
        figs["io"] = _io_figure(info, label)
    naive, weights = _naive_figure(info, label)
    figs["activations_naive"] = naive
    if figs["weights"].bytes is None and weights is not None:
        figs["weights"] = weights


# --- deployment -----------------------------------------------------------------------------------


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B|bytes)?\s*$", re.I)
_SIZE_UNITS = {"": 1, "b": 1, "bytes": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
               "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}


def parse_size(text: str) -> int:
    """``16GB`` (10**9 bytes each), ``16GiB`` (2**30), ``512MiB``, ``1000000`` (bytes); ValueError else."""
    m = _SIZE.match(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a size: give bytes or a number with KB, MB, GB, KiB, MiB or GiB")
    return int(float(m.group(1)) * _SIZE_UNITS[(m.group(2) or "").lower()])


def _term(what: str, nbytes: int | None, count: int, source: str, assumed: bool = False) -> dict[str, Any]:
    return {"what": what, "bytes": nbytes, "count": count, "total_bytes": (nbytes or 0) * count, "source": source,
            "assumed": assumed}


def _context_bytes(m: EngineMemory) -> tuple[int, str, bool]:
    """A context's device memory: the runtime's figure, else the activations TensorRT allocates."""
    if m.context.bytes is not None:
        return m.context.bytes, m.context.source, False
    act = m.categories["activations"]
    if act.bytes is not None:
        return act.bytes, act.source, False
    return 0, NOT_RECORDED + " (counted 0)", True


def _weights_bytes(m: EngineMemory) -> tuple[int, str, bool]:
    """The engine's weights on the GPU, else its plan size (an upper bound, marked assumed)."""
    w = m.categories["weights"]
    if w.bytes is not None:
        return w.bytes, w.source, False
    size = m.categories["engine_size"]
    if size.bytes is not None:
        return size.bytes, f"assumed: the engine's size ({size.source}), weights not recorded", True
    return 0, NOT_RECORDED + " (counted 0)", True


def _profile_activations(m: EngineMemory) -> list[int]:
    out = []
    for p in m.profiles:
        for c in p["categories"]:
            if c["name"] == "activations" and c["bytes"] is not None:
                out.append(int(c["bytes"]))
    return out


def predict(engines: Sequence[EngineMemory], contexts: int = 1, instances: int = 1,
            gpu_memory: int | None = None) -> dict[str, Any]:
    """The GPU memory that ``instances`` processes need, each holding every engine once with
    ``contexts`` execution contexts of each: per process one CUDA context (the files' Init CUDA
    figure, else :data:`DEFAULT_CUDA_CONTEXT_BYTES`, marked assumed) and the runtime libraries the
    files record (cuBLAS/cuDNN; the builder's kernel library is not loaded to run), per engine its
    weights once (they are shared by its contexts), per context its device memory (the runtime's
    "device memory size", else the activations: TensorRT's kSTATIC strategy allocates the largest
    profile's), its device-persistent memory and its I/O buffers.

    ``fixes``: what TensorRT offers, each with ``saves_bytes`` over the whole deployment:
    contexts sharing one device-memory block (``createExecutionContext(kUSER_MANAGED)`` /
    ``createExecutionContextWithoutDeviceMemory`` + ``setDeviceMemoryV2``; contexts that never run at
    the same time in a process need only the largest), ``kON_PROFILE_CHANGE`` (a context holds the
    profile it runs, not the largest: saved down to the smallest profile), fewer profiles (dropping
    the largest leaves the next), and a weight-streaming budget (``setWeightStreamingBudgetV2``, an
    engine built with ``kWEIGHT_STREAMING``: up to the weights, the amount still missing when it
    does not fit)."""
    contexts, instances = int(contexts), int(instances)
    terms = []
    cuda = next((m.categories["cuda_context"] for m in engines if m.categories["cuda_context"].bytes is not None), None)
    if cuda is not None:
        terms.append(_term("CUDA context (per process)", cuda.bytes, instances, cuda.source))
    else:
        terms.append(_term("CUDA context (per process)", DEFAULT_CUDA_CONTEXT_BYTES, instances, CUDA_CONTEXT_BASIS,
                           assumed=True))
    ctx_sizes = []
    for m in engines:
        lib = m.categories["libraries"]
        if lib.bytes is not None and "builder's kernel library" not in lib.note:
            terms.append(_term(f"{m.name}: libraries (per process)", lib.bytes, instances, lib.source))
        w, wsrc, wa = _weights_bytes(m)
        terms.append(_term(f"{m.name}: weights (once per engine per process)", w, instances, wsrc, wa))
        c, csrc, ca = _context_bytes(m)
        ctx_sizes.append(c)
        terms.append(_term(f"{m.name}: context device memory (per context)", c, instances * contexts, csrc, ca))
        for name in ("device_persistent", "io"):
            f = m.categories[name]
            if f.bytes:
                terms.append(_term(f"{m.name}: {name} (per context)", f.bytes, instances * contexts, f.source))
    total = sum(t["total_bytes"] for t in terms)
    fixes = _fixes(engines, ctx_sizes, contexts, instances, total, gpu_memory)
    out: dict[str, Any] = {"contexts": contexts, "instances": instances, "total_bytes": total,
                           "gpu_memory_bytes": gpu_memory, "fits": None if gpu_memory is None else total <= gpu_memory,
                           "terms": terms, "assumed": [t["what"] for t in terms if t["assumed"]], "fixes": fixes}
    if gpu_memory is not None:
        per_process = total // instances if instances else total
        out["spare_bytes"] = gpu_memory - total
        out["max_instances"] = int(gpu_memory // per_process) if per_process else None
    return out


def _fixes(engines: Sequence[EngineMemory], ctx_sizes: list[int], contexts: int, instances: int, total: int,
           gpu_memory: int | None) -> list[dict[str, Any]]:
    fixes = []
    n_ctx = contexts * len(engines)
    if n_ctx > 1 and ctx_sizes:
        saves = instances * (contexts * sum(ctx_sizes) - max(ctx_sizes))
        fixes.append({"fix": "shared device memory between contexts", "saves_bytes": saves,
                      "how": "createExecutionContext(ExecutionContextAllocationStrategy::kUSER_MANAGED) (or "
                             "createExecutionContextWithoutDeviceMemory) and setDeviceMemoryV2 with one block of "
                             "the largest getDeviceMemorySizeV2, for contexts that never run at the same time"})
    on_change = fewer = 0
    for m in engines:
        acts = sorted(_profile_activations(m))
        if len(acts) > 1:
            on_change += instances * contexts * (acts[-1] - acts[0])
            fewer += instances * contexts * (acts[-1] - acts[-2])
    if on_change:
        fixes.append({"fix": "kON_PROFILE_CHANGE allocation", "saves_bytes": on_change,
                      "how": "IRuntimeConfig.setExecutionContextAllocationStrategy(kON_PROFILE_CHANGE): a context "
                             "holds the profile it runs (saving shown for the smallest), not the largest"})
    if fewer:
        fixes.append({"fix": "fewer profiles", "saves_bytes": fewer,
                      "how": "build without the profile that needs the most activation memory"})
    weights = instances * sum(_weights_bytes(m)[0] for m in engines)
    if weights:
        need = weights if gpu_memory is None or total <= gpu_memory else min(weights, total - gpu_memory)
        fixes.append({"fix": "weight-streaming budget", "saves_bytes": need,
                      "how": "build with BuilderFlag::kWEIGHT_STREAMING (strongly typed), then "
                             "ICudaEngine::setWeightStreamingBudgetV2(weights - saved): streamable weights are "
                             "not recorded in these files, so the saving is bounded by all the weights"})
    return fixes


def _fmt(n: int | None) -> str:
    if n is None:
        return NOT_RECORDED
    if abs(n) >= MIB:
        return f"{n / MIB:,.1f} MiB"
    return f"{n:,} B"


def memory_doc(engines: Sequence[EngineMemory], prediction: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``trtstudio.memory/1`` document: one engine's categories at the top level (and each
    engine's under ``engines``), the prediction where asked."""
    doc: dict[str, Any] = {"schema": SCHEMA, **engines[0].to_json()} if len(engines) == 1 else {"schema": SCHEMA}
    doc["engines"] = [m.to_json() for m in engines] if len(engines) > 1 else []
    doc["prediction"] = prediction
    return doc


def short_source(source: str) -> str:
    """A source for people: the file's name, not its folders."""
    head, sep, rest = source.partition(": ")
    return f"{Path(head).name}{sep}{rest}" if sep and "/" in head else source  # "2 I/O tensors ..." is no path


def _engine_text(e: dict[str, Any]) -> list[str]:
    out = [f"{e['name']}:"]
    width = max(len(c["name"]) for c in e["categories"])
    for c in e["categories"]:
        note = f" ({c['note']})" if c.get("note") else ""
        src = short_source(c["source"]) + note if c["bytes"] is not None else ""
        out.append(f"  {c['name']:<{width}}  {_fmt(c['bytes']):>14}  {src}")
    ctx = e["context"]
    out.append(f"  {'context':<{width}}  {_fmt(ctx['bytes']):>14}  {short_source(ctx['source']) if ctx['bytes'] is not None else ''}")
    for p in e.get("profiles") or []:
        act = next((c for c in p["categories"] if c["name"] == "activations"), None)
        if act is not None:
            out.append(f"  profile {p['profile']}: activations {_fmt(act['bytes'])}")
    live = e.get("live")
    if live and live.get("peak_bytes"):
        out.append(f"  live activations peak {_fmt(live['peak_bytes'])} at layer {live['peak_index']} "
                   f"({live['peak_layer']}), {live['alive_count']} tensors alive")
    out += [f"  warning: {w}" for w in e.get("warnings") or []]
    return out


def render_text(doc: dict[str, Any]) -> str:
    """The text ``trtstudio memory`` prints."""
    engines = doc["engines"] or [doc]
    lines = []
    for e in engines:
        lines += _engine_text(e)
    p = doc.get("prediction")
    if p:
        lines.append(f"prediction: {p['instances']} process(es) x {p['contexts']} context(s) of each engine: "
                     f"{_fmt(p['total_bytes'])}")
        for t in p["terms"]:
            lines.append(f"  {t['what']}: {_fmt(t['bytes'])} x {t['count']} = {_fmt(t['total_bytes'])}"
                         f"{' (assumed)' if t['assumed'] else ''}")
        if p["gpu_memory_bytes"] is not None:
            spare = p["spare_bytes"]
            verdict = (f"fits in {_fmt(p['gpu_memory_bytes'])} with {_fmt(spare)} to spare" if p["fits"] else
                       f"does not fit in {_fmt(p['gpu_memory_bytes'])}: {_fmt(-spare)} over")
            lines.append(f"  {verdict}; {p['max_instances']} process(es) would fit")
        for f in p["fixes"]:
            lines.append(f"  fix: {f['fix']} saves {_fmt(f['saves_bytes'])}: {f['how']}")
    return "\n".join(lines)


def memory_rows(a: EngineMemory, b: EngineMemory) -> list[dict[str, Any]]:
    """Two engines' categories side by side (for ``diff`` and ``compare``): name, each side's bytes
    and source, and the change (None where a side did not record it)."""
    rows = []
    for n in CATEGORIES:
        fa, fb = a.categories[n], b.categories[n]
        change = None if fa.bytes is None or fb.bytes is None else fb.bytes - fa.bytes
        rows.append({"name": n, "a_bytes": fa.bytes, "b_bytes": fb.bytes, "change_bytes": change,
                     "a_source": fa.source, "b_source": fb.source})
    return rows
