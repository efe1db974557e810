"""Every memory line of a TensorRT log, read once: :func:`read_log` (a whole text),
:class:`LogReader` (line by line, for a reader that walks the log for other reasons:
``engine.buildtime``).

A log may hold several builds (a script building three engines; each starts at ``Init CUDA`` or
``Init builder kernel library``) and, within one, several candidate engines (TensorRT 10.16's
backend strategies: "Building graph using backend strategy N", "Chose this engine with backend
strategy N") and profiles ("Constructing optimization profile number N"): :class:`LogMemory` keeps
them apart, and :meth:`LogMemory.peaks` gives the highest figures of the whole log.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MIB = 1 << 20
# The kinds of memory line a log holds (what ``read_log`` returns per line)
LINE_KINDS = ("mem_usage_change", "totals", "block_assignment", "builder_peak", "engine_size", "context", "layer")

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
class Candidate:
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
class Build:
    """One builder run of a log (or the load of an engine), with its candidates and runtime lines."""

    candidates: list[Candidate] = field(default_factory=lambda: [Candidate()])
    chosen: int | None = None
    cuda: Line | None = None
    libraries: list[Line] = field(default_factory=list)
    peak: Line | None = None
    created: Line | None = None
    runtime: dict[str, Line] = field(default_factory=dict)
    other: list[Line] = field(default_factory=list)

    def has_figures(self) -> bool:
        return any(c.has_figures() for c in self.candidates) or bool(self.runtime)

    def kept(self) -> Candidate:
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
    builds: list[Build]
    lines: list[Line]

    def last(self) -> Build | None:
        with_figures = [b for b in self.builds if b.has_figures() or b.cuda or b.peak or b.created]
        return with_figures[-1] if with_figures else None

    def peaks(self) -> dict[str, int | None]:
        """The highest figures of the whole log (every build), bytes, None where no line states them:
        ``cpu_now``/``gpu_now``, what TensorRT saw the process use after each ``[MemUsageChange]``;
        ``allocator_cpu``/``allocator_gpu``, its allocators' peaks (``[MemUsageStats]``). A figure
        below 0 counts 0."""
        changes = [line for line in self.lines if line.kind == "mem_usage_change"]
        stats = [line for line in self.lines if line.kind == "builder_peak"]

        def highest(values: list[int]) -> int | None:
            return max(0, *values) if values else None

        return {"cpu_now": highest([line.extra["cpu_now_mib"] * MIB for line in changes]),
                "gpu_now": highest([line.extra["gpu_now_bytes"] for line in changes]),
                "allocator_cpu": highest([line.extra["cpu_bytes"] for line in stats]),
                "allocator_gpu": highest([line.bytes or 0 for line in stats])}


def _mib(value: str) -> int:
    return int(round(float(value) * MIB))


class LogReader:
    """Reads a log's memory lines one at a time (:meth:`line`: any line, a memory line or not) and
    keeps the builds they belong to; :meth:`result` is what they said. :func:`read_log` walks a
    whole text with it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.builds = [Build()]
        self.lines: list[Line] = []

    def result(self) -> LogMemory:
        """What the lines read so far said."""
        return LogMemory(self.path, self.builds, self.lines)

    @property
    def build(self) -> Build:
        return self.builds[-1]

    @property
    def cand(self) -> Candidate:
        return self.build.candidates[-1]

    def new_build(self) -> None:
        if self.build.has_figures() or self.build.peak or self.build.created:
            self.builds.append(Build())

    def new_candidate(self, strategy: int | None) -> None:
        c = self.cand
        if c.has_figures() or c.done:
            self.build.candidates.append(Candidate(strategy=strategy))
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
                self.builds.append(Build())
            c = self.cand
        line = self.add("totals", key, number, msg, int(m.group(2)), profile=c.profile)
        if key == "weights":
            c.weights = line
        else:
            c.profiles.setdefault(c.profile, {})[key] = line

    def line(self, number: int, raw: str) -> None:
        """One line of the log: its 1-based number and its text without the line end."""
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
    r = LogReader(path)
    markers = _MARKERS
    for number, raw in enumerate(text.split("\n"), 1):
        if any(mk in raw for mk in markers):
            r.line(number, raw.rstrip("\r"))
    return r.result()
