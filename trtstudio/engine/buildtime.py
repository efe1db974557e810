"""Where a TensorRT build spends its time: a build timeline (phases with start, duration and share),
tactic timing per layer, timing-cache hits and misses, and build memory, from a build log of any
TensorRT (trtexec, the Python logger, trtstudio's own build log) or recorded live from TensorRT's
progress monitor while trtstudio builds.

Two sources, one document (``trtstudio.buildlog/1``, :func:`read_build_log`):

* **A log** states durations, not a clock: ``Graph construction completed in``, ``Graph
  optimization time:``, ``Formats and tactics selection completed in`` (tactic timing, which
  holds the ``Subgraph compilation completed in`` of Myelin runners timed inside it), ``Subgraph
  compilation completed in`` after it (TensorRT-RTX compiles after tactic selection), ``[MS] Multi
  stream splitting completed in``, ``[BlockAssignment] ... took Xms`` and, per builder pass,
  ``Engine generation completed in`` (the pass's total). The phases of a pass are laid end to
  end in the order the log states them; what the log leaves unstated up to the pass's total is
  one row, ``not itemised by the log``, never spread over the others. A TensorRT 10.16 build that
  tries several backend strategies writes one pass each; ``total_seconds`` is the sum of the
  passes' own totals.
* **A trtstudio build** records each progress-monitor phase with :class:`PhaseRecorder` (start
  and end on ``time.perf_counter``); a phase's own time excludes its nested phases, and each
  TensorRT phase name maps to one of :data:`PHASES`.

Verbose logs also give, per layer (or fused region), the ``Timing Runner`` blocks: the tactics
tried with their times (ms), each runner's ``profiling completed in`` (the build time spent on it),
the ``Chose Runner Type`` line, and ``got cached result`` lines (timing-cache hits). Nothing here
imports Qt or TensorRT.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trtstudio.errors import InputError

SCHEMA = "trtstudio.buildlog/1"
UNSTATED = "not itemised by the log"
PHASES = ("parsing", "graph construction", "graph optimization", "layer fusion", "tactic timing",
          "kernel compilation", "weight transformation", "multi-stream splitting", "memory planning",
          "serialization", "builder (other)", UNSTATED)
TOP_LAYERS = 20
MIB = 1 << 20

# A log line's prefixes: [07/07/2026-02:11:00] [V] [TRT] / [TRT] [V] / [trtstudio] [I] / [VERBOSE]
_PREFIX = re.compile(
    r"^(?:\[(?:\d\d/\d\d/\d{4}-[\d:.]+|TRT|TRT-RTX|trtstudio|[A-Z]|VERBOSE|INFO|WARNING|ERROR|INTERNAL_ERROR)\] ?)+")
_NUM = r"([-+\d.eE]+|inf|nan)"
_RUNNER = re.compile(r"^-+ Timing Runner: (.*) \((\w+)(?:\[0x[0-9a-fA-F]+\])?\)\s*$")
_PROFILED = re.compile(r"^(.*) \((\w+)(?:\[0x[0-9a-fA-F]+\])?\) profiling completed in " + _NUM
                       + r" seconds\. Fastest Tactic: (\S+) Time: " + _NUM)
_TACTIC = re.compile(r"^(?:Tactic Name: (\S+) )?Tactic: (0x[0-9a-fA-F]+|-?\d+) (?:Time: )?" + _NUM + r"\s*$")
_FASTEST = re.compile(r"^Fastest Tactic: (0x[0-9a-fA-F]+|-?\d+) Time: " + _NUM)
_CHOSE = re.compile(r"^>+ Chose Runner Type: (\w+) Tactic: (\S+)")
_COSTS = re.compile(r"^=+ Computing costs for (.*)$")
_CACHED = re.compile(r"^(.*?) \[[^\]]*\] got cached result: (\w+), tactic (\S+), " + _NUM + " ms")
_PROFILE = re.compile(r" \[profile (\d+)\]")
_SECONDS = (
    (re.compile(r"^Graph construction completed in " + _NUM + " seconds"), "graph construction"),
    (re.compile(r"^Graph optimization time: " + _NUM + " seconds"), "graph optimization"),
    (re.compile(r"^Formats and tactics selection completed in " + _NUM + " seconds"), "tactic timing"),
    (re.compile(r"^Subgraph compilation completed in " + _NUM + " seconds"), "kernel compilation"),
    (re.compile(r"^\[MS\] Multi stream splitting completed in " + _NUM + " seconds"), "multi-stream splitting"),
)
_BLOCKS = re.compile(r"^\[BlockAssignment\] Algorithm \w+ took " + _NUM + "ms")
_PARSE = re.compile(r"^Finished parsing network model\. Parse time: " + _NUM)
_GENERATION = re.compile(r"^Engine generation completed in " + _NUM + " seconds")
_MEM_STATS = re.compile(r"^\[MemUsageStats\] Peak memory usage of TRT CPU/GPU memory allocators: CPU (\d+) MiB, GPU (\d+) MiB")
_MEM_NOW = re.compile(r"^\[MemUsageChange\].*now: CPU (-?\d+), GPU (-?\d+) \(MiB\)")
_CACHE_FACTS = (
    (re.compile(r"^Loaded (\d+) timing cache entries"), "loaded_entries"),
    (re.compile(r"^Serialized (\d+) timing cache entries"), "saved_entries"),
)
_STRATEGY = re.compile(r"^Building graph using backend strategy (\d+)")
_KEPT = re.compile(r"^Chose this engine with backend strategy (\d+)")
_SKIPPED = re.compile(r"^Skip backend strategy (\d+)")


def _num(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")


def _strip(line: str) -> str:
    m = _PREFIX.match(line)
    return (line[m.end():] if m else line).strip()


@dataclass
class RunnerTiming:
    """One ``Timing Runner`` block: a runner (CaskConvolution, Myelin...) timing a layer's tactics
    for one format combination."""

    runner: str
    tactics: list[tuple[str, str | None, float]] = field(default_factory=list)  # (tactic, name, ms)
    seconds: float | None = None  # "profiling completed in" (None: the log does not say)
    fastest: str | None = None
    fastest_ms: float | None = None
    chosen: bool = False


@dataclass
class LayerTiming:
    """Everything the builder timed for one layer or fused region (every format combination)."""

    name: str
    runners: list[RunnerTiming] = field(default_factory=list)
    cache_hits: int = 0
    profiles: set[int] = field(default_factory=set)
    choices: list[tuple[str, str]] = field(default_factory=list)  # (runner, tactic) per combination

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.runners if r.seconds is not None)

    def to_json(self) -> dict[str, Any]:
        timed = [(ms, tac, name, r.runner) for r in self.runners for tac, name, ms in r.tactics if ms == ms]
        timed.sort(key=lambda t: t[0])
        finite = [t for t in timed if t[0] != float("inf")]
        chosen = self.choices[-1] if self.choices else None
        best = finite[0] if finite else None
        runner_up = next((t for t in finite[1:] if best is not None and t[1] != best[1]), None)
        runner_seconds: dict[str, float] = {}
        for r in self.runners:
            runner_seconds[r.runner] = runner_seconds.get(r.runner, 0.0) + (r.seconds or 0.0)
        return {
            "name": self.name,
            "seconds": round(self.seconds, 6),
            "runners_timed": len(self.runners),
            "tactics_tried": sum(len(r.tactics) for r in self.runners),
            "cache_hits": self.cache_hits,
            "profiles": sorted(self.profiles),
            "chosen": {"runner": chosen[0], "tactic": chosen[1]} if chosen else None,
            "fastest": {"tactic": best[1], "name": best[2], "runner": best[3], "ms": best[0]} if best else None,
            "runner_up": ({"tactic": runner_up[1], "name": runner_up[2], "runner": runner_up[3], "ms": runner_up[0]}
                          if runner_up else None),
            "speedup_over_runner_up": (round(runner_up[0] / best[0], 4)
                                       if best and runner_up and best[0] > 0 else None),
            "seconds_by_runner": {k: round(v, 6) for k, v in runner_seconds.items()},
        }


@dataclass
class BuildPass:
    """One builder pass (one ``Engine generation completed in``): its stated phases in log order."""

    phases: list[tuple[str, float]] = field(default_factory=list)
    total: float | None = None
    strategy: int | None = None
    kept: bool | None = None
    inside_tactics: float = 0.0  # kernel compilation stated while tactic selection ran

    def stated(self) -> float:
        return sum(s for _, s in self.phases)


class _Reader:
    """One pass over the lines; state for the multi-line blocks."""

    def __init__(self) -> None:
        self.passes: list[BuildPass] = [BuildPass()]
        self.parse_seconds: float | None = None
        self.layers: dict[str, LayerTiming] = {}
        self.runner: RunnerTiming | None = None
        self.layer: LayerTiming | None = None
        self.hits = 0
        self.misses = 0
        self.cache: dict[str, Any] = {}
        self.alloc_cpu: int | None = None
        self.alloc_gpu: int | None = None
        self.now_cpu: int | None = None
        self.now_gpu: int | None = None
        self.combo = 0  # where the current format combination's runners start in self.layer.runners
        self.in_tactics = False
        self.pending_kernel = 0.0
        self.lines = 0

    def _layer(self, name: str) -> LayerTiming:
        m = _PROFILE.search(name)
        base = _PROFILE.sub("", name)
        lay = self.layers.get(base)
        if lay is None:
            lay = self.layers[base] = LayerTiming(base)
        if m:
            lay.profiles.add(int(m.group(1)))
        return lay

    def _phase(self, name: str, seconds: float) -> None:
        if seconds == seconds:
            self.passes[-1].phases.append((name, seconds))

    def line(self, raw: str) -> None:  # noqa: C901 - one dispatch over the line kinds, cheapest tests first
        self.lines += 1
        msg = _strip(raw)
        if not msg:
            return
        if "Time" in msg and msg.startswith("Tactic"):
            m = _TACTIC.match(msg)
            if m and self.runner is not None:
                self.runner.tactics.append((m.group(2), m.group(1), _num(m.group(3))))
            return
        if msg.startswith("---") and "Timing Runner:" in msg:
            m = _RUNNER.match(msg)
            if m:
                lay = self._layer(m.group(1))
                if lay is not self.layer:
                    self.layer, self.combo = lay, len(lay.runners)
                self.runner = RunnerTiming(m.group(2))
                lay.runners.append(self.runner)
                self.misses += 1
            return
        if "profiling completed in" in msg:
            m = _PROFILED.match(msg)
            if m:
                lay = self._layer(m.group(1))
                run = self.runner if self.runner is not None and self.runner.runner == m.group(2) else None
                if run is None or self.layer is not lay:
                    run = RunnerTiming(m.group(2))
                    lay.runners.append(run)
                run.seconds, run.fastest, run.fastest_ms = _num(m.group(3)), m.group(4), _num(m.group(5))
            return
        if msg.startswith(">") and "Chose Runner Type" in msg:
            m = _CHOSE.match(msg)
            if m and self.layer is not None:
                self.layer.choices.append((m.group(1), m.group(2)))
                for r in self.layer.runners[self.combo:]:  # the runners of this format combination
                    if r.runner == m.group(1) and r.fastest == m.group(2):
                        r.chosen = True
                self.combo = len(self.layer.runners)
            return
        if "got cached result" in msg:
            self.hits += 1
            m = _CACHED.match(msg)
            if m:
                lay = self._layer(m.group(1))
                lay.cache_hits += 1
            return
        if msg.startswith("Fastest Tactic:"):  # TensorRT 8.x: the fastest on a line of its own
            m = _FASTEST.match(msg)
            if m and self.runner is not None:
                self.runner.fastest, self.runner.fastest_ms = m.group(1), _num(m.group(2))
            return
        if msg.startswith("="):
            m = _COSTS.match(msg)
            if m:
                self.layer = self._layer(m.group(1))
                self.combo = len(self.layer.runners)
                self.runner = None
            return
        self._fact(msg)

    def _fact(self, msg: str) -> None:  # noqa: C901
        if msg.startswith("Applying generic optimizations") or msg.startswith("Constructing optimization profile"):
            return
        for rx, phase in _SECONDS:
            m = rx.match(msg)
            if m:
                seconds = _num(m.group(1))
                if phase == "tactic timing":
                    self.in_tactics = False
                    inside = self.pending_kernel
                    self.pending_kernel = 0.0
                    if inside:
                        self._phase("kernel compilation", inside)
                    self._phase(phase, seconds - inside)
                elif phase == "kernel compilation" and self.in_tactics:
                    self.pending_kernel += seconds
                else:
                    self._phase(phase, seconds)
                if phase == "graph optimization":
                    self.in_tactics = True
                return
        m = _BLOCKS.match(msg)
        if m:
            self._phase("memory planning", _num(m.group(1)) / 1000.0)
            return
        m = _GENERATION.match(msg)
        if m:
            p = self.passes[-1]
            p.total = _num(m.group(1))
            self.in_tactics = False
            self.passes.append(BuildPass())
            return
        m = _STRATEGY.match(msg)
        if m:
            self.passes[-1].strategy = int(m.group(1))
            return
        for rx, kept in ((_KEPT, True), (_SKIPPED, False)):
            m = rx.match(msg)
            if m:
                for p in reversed(self.passes):
                    if p.strategy == int(m.group(1)) and p.total is not None:
                        p.kept = kept
                        break
                return
        m = _PARSE.match(msg)
        if m:
            self.parse_seconds = _num(m.group(1))
            return
        if msg.startswith("[Mem"):
            m = _MEM_STATS.match(msg)
            if m:
                cpu, gpu = int(m.group(1)) * MIB, int(m.group(2)) * MIB
                self.alloc_cpu = max(self.alloc_cpu or 0, cpu)
                self.alloc_gpu = max(self.alloc_gpu or 0, gpu)
                return
            m = _MEM_NOW.match(msg)
            if m:
                cpu, gpu = int(m.group(1)) * MIB, int(m.group(2)) * MIB
                self.now_cpu = max(self.now_cpu or 0, cpu)
                self.now_gpu = max(self.now_gpu or 0, gpu)
            return
        if "timing cache" in msg or "Timing cache" in msg:
            for rx, key in _CACHE_FACTS:
                m = rx.match(msg)
                if m:
                    self.cache[key] = int(m.group(1))
                    return
            if msg.startswith("Global timing cache in use"):
                self.cache["kind"] = "global"
            elif msg.startswith("Local timing cache in use"):
                self.cache["kind"] = "local"
            elif "Could not read cache" in msg or "will create one" in msg:
                self.cache["file_read"] = False


def _timeline(passes: list[BuildPass], parse_seconds: float | None) -> list[dict[str, Any]]:
    """Rows ``{phase, start_s, seconds, share, pass}`` laid end to end (logs state durations)."""
    rows: list[dict[str, Any]] = []
    t = 0.0
    if parse_seconds is not None:
        rows.append({"phase": "parsing", "start_s": 0.0, "seconds": parse_seconds, "pass": None})
        t = parse_seconds
    done = [p for p in passes if p.total is not None]
    for i, p in enumerate(done, 1):
        for name, seconds in p.phases:
            rows.append({"phase": name, "start_s": t, "seconds": seconds, "pass": i if len(done) > 1 else None})
            t += seconds
        rest = (p.total or 0.0) - p.stated()
        if rest > 0:
            rows.append({"phase": UNSTATED, "start_s": t, "seconds": rest, "pass": i if len(done) > 1 else None})
            t += rest
    total = t or 1.0
    for r in rows:
        r["share"] = round(r["seconds"] / total, 4)
        r["start_s"] = round(r["start_s"], 6)
        r["seconds"] = round(r["seconds"], 6)
    return rows


def phase_totals(timeline: Iterable[dict[str, Any]]) -> dict[str, float]:
    """Seconds by phase name, in the order phases first appear."""
    out: dict[str, float] = {}
    for r in timeline:
        out[r["phase"]] = out.get(r["phase"], 0.0) + float(r["seconds"])
    return out


def _suggestions(layers: list[dict[str, Any]], n_profiles: int, cache_kind: str | None) -> list[dict[str, Any]]:
    """Per costly layer, the settings that cut its build time, each with its expected saving where
    the log lets it be computed (``saving_s`` None otherwise)."""
    out = []
    for lay in layers:
        tips: list[dict[str, Any]] = []
        if lay["seconds"] > 0:
            tips.append({"setting": "timing cache (--timingCacheFile / trtstudio build --timing-cache)",
                         "saving_s": lay["seconds"],
                         "why": "a rebuild that hits the cache skips timing this layer"
                                + (" (this build already used a global cache: it was a miss)" if cache_kind == "global" else "")})
        runners = lay["seconds_by_runner"]
        chosen = (lay["chosen"] or {}).get("runner")
        others = sum(s for r, s in runners.items() if r != chosen)
        if chosen and others > 0:
            tips.append({"setting": "--tacticSources (drop the runners not chosen)", "saving_s": round(others, 6),
                         "why": f"runners timed but not chosen: {', '.join(r for r in runners if r != chosen)}"})
        if len(lay["profiles"]) > 1 and n_profiles > 1:
            tips.append({"setting": "fewer optimization profiles",
                         "saving_s": round(lay["seconds"] * (len(lay["profiles"]) - 1) / len(lay["profiles"]), 6),
                         "why": f"timed once per profile ({len(lay['profiles'])} profiles; saving assumes equal time each)"})
        tips.append({"setting": "lower builder optimization level (--builderOptimizationLevel / --opt-level)",
                     "saving_s": None, "why": "fewer tactics timed; the log cannot say how many fewer"})
        out.append({"layer": lay["name"], "seconds": lay["seconds"], "settings": tips})
    return out


def analyse_lines(lines: Iterable[str], source: str = "") -> dict[str, Any]:
    """The ``trtstudio.buildlog/1`` document of a build log's lines (see the module doc)."""
    rd = _Reader()
    for line in lines:
        rd.line(line)
    passes = [p for p in rd.passes if p.total is not None]
    timeline = _timeline(rd.passes, rd.parse_seconds)
    layers = sorted((lay.to_json() for lay in rd.layers.values()), key=lambda d: -d["seconds"])
    n_profiles = max((len(lay["profiles"]) for lay in layers), default=0)
    totals = [p.total for p in passes if p.total is not None]
    tactic_rows = [{"layer": lay.name, "runner": r.runner, "tactic": tac, "name": name, "ms": ms,
                    "fastest": tac == r.fastest, "chosen": r.chosen and tac == r.fastest}
                   for lay in rd.layers.values() for r in lay.runners for tac, name, ms in r.tactics]
    aux = sum(s for p in passes for name, s in p.phases if name == "multi-stream splitting")
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "source": source,
        "lines": rd.lines,
        "total_seconds": round(sum(totals), 6) if totals else None,
        "total_source": "Engine generation completed in" if totals else None,
        "parse_seconds": rd.parse_seconds,
        "passes": [{"index": i, "total_seconds": p.total, "stated_seconds": round(p.stated(), 6),
                    "strategy": p.strategy, "kept": p.kept} for i, p in enumerate(passes, 1)],
        "timeline": timeline,
        "phases": {k: round(v, 6) for k, v in phase_totals(timeline).items()},
        "layers": layers,
        "tactics": tactic_rows,
        "cache": {"hits": rd.hits, "misses": rd.misses, **rd.cache},
        "memory": {"host_peak_bytes": rd.now_cpu, "gpu_peak_bytes": rd.now_gpu,
                   "source": "[MemUsageChange] now: (TensorRT's view of the process)" if rd.now_cpu is not None else None,
                   "allocator_cpu_peak_bytes": rd.alloc_cpu, "allocator_gpu_peak_bytes": rd.alloc_gpu},
        "top_layers": _suggestions(layers[:TOP_LAYERS], n_profiles, rd.cache.get("kind")),
        "global_settings": ([{"setting": "--maxAuxStreams=0", "saving_s": round(aux, 6),
                              "why": "multi-stream splitting stated by the log"}] if aux else []),
        "verbose": bool(rd.layers) or any(name != UNSTATED for r in timeline for name in [r["phase"]]),
        "warnings": [],
    }
    if not totals:
        doc["warnings"].append("the log states no 'Engine generation completed in': no total of its own")
    if not rd.layers:
        doc["warnings"].append("no Timing Runner blocks: not a verbose build log, or every tactic came from the cache")
    return doc


def analyse_text(text: str, source: str = "") -> dict[str, Any]:
    """The ``trtstudio.buildlog/1`` document of a build log's text (:func:`analyse_lines`).

    A trtstudio build log (``--save-log``, :meth:`BuildResult.log_text`) holds the timeline recorded
    live in its header: that timeline is used and the log's stated durations are kept under
    ``log_timeline``; the header's measured memory, versions and cancel flag join the document."""
    import json

    from trtstudio.engine.buildlog import LOG_HEADER

    lines = text.splitlines()
    doc = analyse_lines(lines, source)
    if lines and lines[0].startswith(LOG_HEADER):
        try:
            head = json.loads(lines[0][len(LOG_HEADER):])
        except ValueError:
            head = {}
        recorded = head.get("timeline")
        if recorded:
            doc["log_timeline"] = doc["timeline"]
            doc["timeline"] = recorded
            doc["phases"] = {k: round(v, 6) for k, v in phase_totals(recorded).items()}
            doc["recorded_seconds"] = head.get("seconds")
        if head.get("memory"):
            doc["memory"] = {**doc["memory"], **{k: v for k, v in head["memory"].items() if v is not None}}
        doc["versions"] = head.get("versions") or {}
        if head.get("cancelled"):
            doc["cancelled"] = True
            doc["warnings"].append("the build was cancelled: the timeline and log end where it stopped")
    return doc


def analyse_build_document(build: dict[str, Any], source: str = "") -> dict[str, Any]:
    """The ``trtstudio.buildlog/1`` document of a ``trtstudio build --json`` document
    (``trtstudio.build/1``): its log records read as the build log it would have saved, with the
    timeline, memory and seconds it recorded."""
    from trtstudio.engine.buildlog import build_log_text, log_line

    lines = [log_line(str(r.get("source") or "TRT"), str(r.get("severity") or "INFO"), str(r.get("message") or ""))
             for r in build.get("log") or [] if isinstance(r, dict)]
    extra = {k: build.get(k) for k in ("timeline", "memory", "seconds", "cancelled")}
    return analyse_text(build_log_text(dict(build.get("versions") or {}), dict(build.get("settings") or {}),
                                       lines, extra), source)


def states_a_build(doc: dict[str, Any]) -> bool:
    """Whether a build-log document says anything about a build (a total, timed layers, a
    recorded timeline or a stated phase)."""
    return bool(doc["lines"]) and (doc["total_seconds"] is not None or bool(doc["layers"]) or bool(doc.get("log_timeline"))
                                   or any(r["phase"] != UNSTATED for r in doc["timeline"]))


def read_build_log(path: str | Path) -> dict[str, Any]:
    """The ``trtstudio.buildlog/1`` document of a build log file (any TensorRT's wording;
    :func:`analyse_text`)."""
    p = Path(path)
    try:
        with p.open("r", encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        raise InputError(p, f"cannot read: {exc.strerror or exc}") from None
    if "\x00" in text[:4096]:
        raise InputError(p, "not a text log (binary data)")
    doc = analyse_text(text, str(p))
    if not states_a_build(doc):
        raise InputError(p, "not a TensorRT build log (no build phase, timing or 'Engine generation completed' line)")
    return doc


# ---- live recording (trtstudio's own builds) ----

def canonical_phase(name: str) -> str:
    """One of :data:`PHASES` for a TensorRT progress-monitor phase name."""
    n = name.lower()
    if "pars" in n:
        return "parsing"
    if "fusion" in n or "fusing" in n:
        return "layer fusion"
    # TensorRT-RTX compiles its Myelin subgraphs inside "Determining refit engines": its verbose log
    # states "Subgraph compilation completed in" within that phase, for most of its time
    if "subgraph" in n or "compil" in n or "myelin" in n or "kernel" in n or "refit engines" in n:
        return "kernel compilation"
    if "refit" in n or "weight" in n:
        return "weight transformation"
    if "serializ" in n:
        return "serialization"
    if "timing" in n or "tactic" in n or "cost" in n or "reformat" in n or "autotun" in n:
        return "tactic timing"
    if "clon" in n or "construct" in n:
        return "graph construction"
    if "optimiz" in n:
        return "graph optimization"
    if "stream" in n:
        return "multi-stream splitting"
    if "block" in n or "memory" in n:
        return "memory planning"
    return "builder (other)"


@dataclass
class _Open:
    name: str
    canonical: str
    start: float
    steps: int


class PhaseRecorder:
    """Records a build's phases as they happen (TensorRT's progress monitor, and trtstudio's own
    steps) on one clock, from any thread. A phase's own time excludes the phases nested in it; the
    timeline merges consecutive slices of one canonical phase. :meth:`snapshot` is what a live view
    polls: the phases so far, the open one with its elapsed time and, once it has reported steps,
    an estimate of what is left of it."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter, t0: float | None = None,
                 enabled: bool = True) -> None:
        self.enabled = enabled  # off: every call returns at once, the timeline stays empty
        self.clock = clock
        self.t0 = clock() if t0 is None else t0
        self._lock = threading.Lock()
        self._stack: list[_Open] = []
        self._slices: list[tuple[str, float, float, str]] = []  # (canonical, start, end, trt name)
        self._mark = 0.0
        self._progress: dict[str, tuple[int, int, float]] = {}  # phase -> (step, total, at)

    def _now(self) -> float:
        return self.clock() - self.t0

    def _cut(self, now: float) -> None:
        if self._stack and now > self._mark:
            top = self._stack[-1]
            self._slices.append((top.canonical, self._mark, now, top.name))
        self._mark = now

    def start(self, name: str, steps: int = 0, canonical: str | None = None) -> None:
        """A phase began (nested in the open one, if any)."""
        if not self.enabled:
            return
        with self._lock:
            now = self._now()
            self._cut(now)
            self._stack.append(_Open(name, canonical or canonical_phase(name), now, steps))
            self._progress[name] = (0, steps, now)

    def step(self, name: str, step: int, total: int) -> None:
        """A phase reported a step (``step`` done of ``total``)."""
        if not self.enabled:
            return
        with self._lock:
            self._progress[name] = (step, total, self._now())

    def finish(self, name: str) -> None:
        """A phase ended (and any phase opened inside it that did not say so)."""
        if not self.enabled:
            return
        with self._lock:
            if not any(o.name == name for o in self._stack):
                return
            now = self._now()
            self._cut(now)
            while self._stack:
                if self._stack.pop().name == name:
                    break

    def close(self) -> None:
        """End every open phase now (a build that finished, failed or was cancelled)."""
        with self._lock:
            now = self._now()
            self._cut(now)
            self._stack.clear()

    def timeline(self) -> list[dict[str, Any]]:
        """``[{phase, start_s, seconds, share, detail}]``: consecutive slices of one phase merged."""
        with self._lock:
            slices = list(self._slices)
            if self._stack:
                now = self._now()
                top = self._stack[-1]
                slices.append((top.canonical, self._mark, now, top.name))
        rows: list[dict[str, Any]] = []
        for canon, start, end, trt_name in slices:
            if rows and rows[-1]["phase"] == canon and abs(rows[-1]["_end"] - start) < 1e-9:
                rows[-1]["_end"] = end
                if trt_name not in rows[-1]["detail"]:
                    rows[-1]["detail"].append(trt_name)
            else:
                rows.append({"phase": canon, "_start": start, "_end": end, "detail": [trt_name]})
        total = sum(r["_end"] - r["_start"] for r in rows) or 1.0
        return [{"phase": r["phase"], "start_s": round(r["_start"], 6), "seconds": round(r["_end"] - r["_start"], 6),
                 "share": round((r["_end"] - r["_start"]) / total, 4), "detail": r["detail"]} for r in rows]

    def snapshot(self) -> dict[str, Any]:
        """For a live view: ``{elapsed_s, phases: {phase: seconds}, open: {name, phase, elapsed_s,
        step, total, left_s}}`` (``left_s`` None until the open phase has reported a step)."""
        rows = self.timeline()
        with self._lock:
            now = self._now()
            top = self._stack[-1] if self._stack else None
            prog = self._progress.get(top.name) if top else None
        opened = None
        if top is not None:
            step, total, _at = prog or (0, top.steps, now)
            elapsed = now - top.start
            left = elapsed * (total - step) / step if step > 0 and total >= step else None
            opened = {"name": top.name, "phase": top.canonical, "elapsed_s": round(elapsed, 4),
                      "step": step, "total": total, "left_s": round(left, 4) if left is not None else None}
        return {"elapsed_s": round(now, 4), "phases": phase_totals(rows), "open": opened}


class MemoryWatch:
    """Peak host RSS and GPU memory of this process over a build.

    Host: the kernel's own peak (``VmHWM``), reset at the start through ``/proc/self/clear_refs``
    where Linux allows it, else the process's lifetime peak (``ru_maxrss``, said so in ``host_source``).
    GPU: NVML's per-process used memory, sampled every ``interval_s`` where ``pynvml`` and a GPU are
    present (None with the reason otherwise: a TensorRT-RTX build for other GPUs needs none)."""

    def __init__(self, interval_s: float = 0.1) -> None:
        self.interval_s = interval_s
        self.host_source = "VmHWM since the build started"
        self.gpu_peak: int | None = None
        self.gpu_source = "no NVML here (pynvml or a GPU missing)"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._handles: list[Any] = []

    def start(self) -> MemoryWatch:
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
        except OSError:
            self.host_source = "process lifetime peak (ru_maxrss): the peak could not be reset"
        try:
            import pynvml

            pynvml.nvmlInit()
            self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
            if self._handles:
                self.gpu_source = "NVML per-process used memory, sampled"
                self._thread = threading.Thread(target=self._poll, name="build-gpu-memory", daemon=True)
                self._thread.start()
        except Exception:  # noqa: BLE001 - no NVML: the GPU peak stays None with its reason
            self._handles = []
        return self

    def _poll(self) -> None:
        import os

        import pynvml

        pid = os.getpid()
        while not self._stop.wait(self.interval_s):
            used = 0
            for h in self._handles:
                try:
                    procs = pynvml.nvmlDeviceGetComputeRunningProcesses(h)
                except Exception:  # noqa: BLE001
                    continue
                used += sum(int(p.usedGpuMemory or 0) for p in procs if p.pid == pid)
            self.gpu_peak = max(self.gpu_peak or 0, used)

    @staticmethod
    def host_peak() -> int | None:
        try:
            with open("/proc/self/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        try:
            import resource

            return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
        except (ImportError, OSError):
            return None

    def stop(self) -> dict[str, Any]:
        """``{host_peak_bytes, gpu_peak_bytes, host_source, gpu_source}`` measured by trtstudio."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        return {"host_peak_bytes": self.host_peak(), "gpu_peak_bytes": self.gpu_peak,
                "host_source": self.host_source, "gpu_source": self.gpu_source}


# ---- text, comparison ----

def _secs(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s:.3f} s" if s < 100 else f"{s / 60:.1f} min"


def _mib(b: int | None) -> str:
    return "-" if b is None else f"{b / MIB:.0f} MiB"


def render_timeline(timeline: list[dict[str, Any]], width: int = 30) -> list[str]:
    """Lines ``phase  seconds  share  bar`` by phase (passes summed)."""
    totals = phase_totals(timeline)
    whole = sum(totals.values()) or 1.0
    lines = []
    for name, s in totals.items():
        bar = "#" * max(1 if s > 0 else 0, round(width * s / whole))
        lines.append(f"  {name:<26} {_secs(s):>11} {100 * s / whole:5.1f}%  {bar}")
    return lines


def render_text(doc: dict[str, Any]) -> str:
    """The build-log document for people: total, phases, cache, memory, the costly layers."""
    out = [f"{doc.get('source') or 'build log'}: {doc['lines']} lines"]
    if doc.get("total_seconds") is not None:
        n = len(doc.get("passes") or [])
        out.append(f"build took {_secs(doc['total_seconds'])} (Engine generation completed in"
                   + (f", {n} builder passes)" if n > 1 else ")"))
    if doc.get("timeline"):
        out.append("phases")
        out += render_timeline(doc["timeline"])
    c = doc.get("cache") or {}
    out.append(f"timing cache: {c.get('hits', 0)} hits, {c.get('misses', 0)} misses"
               + (f" ({c['kind']} cache)" if c.get("kind") else ""))
    m = doc.get("memory") or {}
    out.append(f"memory: host peak {_mib(m.get('host_peak_bytes'))}, GPU peak {_mib(m.get('gpu_peak_bytes'))}; "
               f"TensorRT allocators' peaks CPU {_mib(m.get('allocator_cpu_peak_bytes'))}, "
               f"GPU {_mib(m.get('allocator_gpu_peak_bytes'))}")
    top = doc.get("top_layers") or []
    if top:
        out.append(f"layers by build time (top {len(top)} of {len(doc.get('layers') or [])})")
        by_name = {lay["name"]: lay for lay in doc.get("layers") or []}
        for t in top:
            lay = by_name.get(t["layer"], {})
            sp = lay.get("speedup_over_runner_up")
            out.append(f"  {_secs(t['seconds']):>11}  {t['layer']}  ({lay.get('tactics_tried', 0)} tactics"
                       + (f"; chosen {sp:.2f}x faster than the runner-up" if sp else "") + ")")
            for s in t["settings"]:
                if s["saving_s"]:
                    out.append(f"      {s['setting']}: saves {_secs(s['saving_s'])}")
    for w in doc.get("warnings") or []:
        out.append(f"note: {w}")
    return "\n".join(out)


def compare_rows(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Build time by phase side by side for two builds: ``[{phase, a_s, b_s, delta_s}]`` in the
    order phases appear (A's, then B's own), then ``total``. ``a``/``b``: documents with a
    ``timeline`` (a ``trtstudio.build/1`` or ``trtstudio.buildlog/1``); empty when neither has one."""
    ta = phase_totals((a or {}).get("timeline") or [])
    tb = phase_totals((b or {}).get("timeline") or [])
    if not ta and not tb:
        return []
    rows = []
    for name in dict.fromkeys([*ta, *tb]):
        x, y = ta.get(name), tb.get(name)
        rows.append({"phase": name, "a_s": x, "b_s": y,
                     "delta_s": round(y - x, 6) if x is not None and y is not None else None})

    def total(d: dict[str, Any] | None, t: dict[str, float]) -> float | None:
        if not d:
            return None
        own = d.get("total_seconds", d.get("seconds"))
        return float(own) if own is not None else (sum(t.values()) if t else None)

    x, y = total(a, ta), total(b, tb)
    rows.append({"phase": "total", "a_s": x, "b_s": y,
                 "delta_s": round(y - x, 6) if x is not None and y is not None else None})
    return rows


def render_compare(rows: list[dict[str, Any]], names: tuple[str, str] = ("A", "B")) -> list[str]:
    """Text lines of :func:`compare_rows`."""
    if not rows:
        return []
    out = [f"build time by phase: {'':<14} {names[0][:12]:>12} {names[1][:12]:>12} {'change':>10}"]
    for r in rows:
        d = r["delta_s"]
        out.append(f"  {r['phase']:<33} {_secs(r['a_s']):>12} {_secs(r['b_s']):>12} "
                   + (f"{d:+10.3f}" if d is not None else f"{'-':>10}"))
    return out


# ---- timing-cache files (full TensorRT's editable timing cache) ----

CACHE_SCHEMA = "trtstudio.timingcache/1"


def timing_cache_entries(path: str | Path, trt: Any) -> dict[str, Any]:
    """A timing-cache file's entries ``{key: {tactic, ms}}`` through TensorRT's documented API:
    ``IBuilderConfig.create_timing_cache(data)`` -> ``ITimingCache``, ``queryKeys()``, ``query(key)``
    -> ``TimingCacheValue(tacticHash, timingMSec)`` (TensorRT 10.x). ``trt``: the imported module.
    TensorRT-RTX keeps no timing cache (its ITimingCache calls are no-ops): refused with the reason."""
    p = Path(path)
    if getattr(trt, "__name__", "") == "tensorrt_rtx":
        raise InputError(p, "TensorRT-RTX keeps no timing cache (its timing-cache calls are no-ops); "
                            "it writes a runtime cache when engines run instead")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(p, f"cannot read: {exc.strerror or exc}") from None
    logger = trt.Logger(trt.Logger.ERROR)
    config = trt.Builder(logger).create_builder_config()
    cache = config.create_timing_cache(data)
    if cache is None or not hasattr(cache, "queryKeys"):
        raise InputError(p, f"not a timing cache this {getattr(trt, '__name__', 'TensorRT')} can read "
                            "(an editable timing cache needs TensorRT 10)")
    entries: dict[str, dict[str, Any]] = {}
    for key in cache.queryKeys():
        value = cache.query(key)
        ms = float(value.timingMSec)
        entries[str(key)] = {"tactic": f"0x{int(value.tacticHash):016x}", "ms": ms if ms == ms and ms >= 0 else None}
    return {"schema": CACHE_SCHEMA, "source": str(p), "bytes": len(data), "entries": entries}


def diff_timing_caches(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Which keys two timing caches share, which only one has, and which changed tactic."""
    ea, eb = a["entries"], b["entries"]
    changed = [{"key": k, "a": ea[k], "b": eb[k]} for k in ea if k in eb and ea[k]["tactic"] != eb[k]["tactic"]]
    return {"schema": CACHE_SCHEMA, "a": a["source"], "b": b["source"],
            "only_a": sorted(set(ea) - set(eb)), "only_b": sorted(set(eb) - set(ea)),
            "same": sum(1 for k in ea if k in eb and ea[k]["tactic"] == eb[k]["tactic"]),
            "changed_tactic": changed}


def build_log_of(paths: Iterable[str]) -> dict[str, Any] | None:
    """The ``trtstudio.buildlog/1`` document of the first build log among a side's files (a log that
    states a build: ``Engine generation completed in``, Timing Runner blocks or trtstudio's header),
    or None where none of them is one."""
    from trtstudio.engine.buildlog import LOG_HEADER

    for p in paths:
        path = Path(p)
        if path.suffix.lower() not in (".log", ".txt") or not path.is_file():
            continue
        try:
            with path.open("r", encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        if text.startswith(LOG_HEADER) or "Engine generation completed in" in text or "Timing Runner:" in text:
            try:
                return read_build_log(path)
            except InputError:
                continue
    return None


def build_time_rows(base_paths: Iterable[str], other_paths: Iterable[str]) -> list[dict[str, Any]]:
    """Build time by phase of two sides' build logs side by side (:func:`compare_rows`); empty
    unless both sides have a build log."""
    a, b = build_log_of(base_paths), build_log_of(other_paths)
    return compare_rows(a, b) if a is not None and b is not None else []
