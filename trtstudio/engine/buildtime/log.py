"""One pass over a build log's lines (:class:`LogReader`): the builder passes and the phases each
states, the ``Timing Runner`` blocks per layer (:class:`LayerTiming`, :class:`RunnerTiming`), the
timing-cache facts; the memory lines go to the one reader of them, ``engine.memory.log``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from trtstudio.engine.memory.log import LogReader as MemoryLines

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


class LogReader:
    """One pass over the lines; state for the multi-line blocks. ``memory``: the log's memory lines,
    read by ``engine.memory``'s own reader (:meth:`~trtstudio.engine.memory.log.LogMemory.peaks`)."""

    def __init__(self, source: str = "") -> None:
        self.passes: list[BuildPass] = [BuildPass()]
        self.parse_seconds: float | None = None
        self.layers: dict[str, LayerTiming] = {}
        self.runner: RunnerTiming | None = None
        self.layer: LayerTiming | None = None
        self.hits = 0
        self.misses = 0
        self.cache: dict[str, Any] = {}
        self.memory = MemoryLines(source)
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
        self._fact(msg, raw)

    def _fact(self, msg: str, raw: str) -> None:  # noqa: C901
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
            self.memory.line(self.lines, raw.rstrip("\r"))
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
