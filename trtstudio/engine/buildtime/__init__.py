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

Build memory comes from the log's ``[MemUsageChange]`` (the process, as TensorRT saw it) and
``[MemUsageStats]`` (its allocators' peaks) lines, read by ``engine.memory``'s one reader of them
(:meth:`~trtstudio.engine.memory.log.LogMemory.peaks`), or measured while trtstudio builds
(:class:`MemoryWatch`).

Modules
-------

:mod:`.log` walks the log's lines once (passes, phases, Timing Runner blocks, the timing cache);
:mod:`.timeline` lays the phases end to end (:data:`PHASES`, :func:`phase_totals`,
:func:`canonical_phase`); :mod:`.advice` the settings that cut build time; :mod:`.document` the
``trtstudio.buildlog/1`` document (:func:`read_build_log`, :func:`analyse_text`); :mod:`.live`
records trtstudio's own builds (:class:`PhaseRecorder`, :class:`MemoryWatch`); :mod:`.text` the text
``trtstudio build-log`` prints; :mod:`.compare` two builds' phases side by side (:func:`compare_rows`,
:func:`build_time_rows` for diff and compare); :mod:`.cache` timing-cache files.

Light to import: the build dialog and ``backends.build`` import this package, which loads a module of
its own only when one of its names is first used (PEP 562), never on import.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trtstudio.engine.buildtime.advice import TOP_LAYERS
    from trtstudio.engine.buildtime.cache import CACHE_SCHEMA, diff_timing_caches, timing_cache_entries
    from trtstudio.engine.buildtime.compare import build_log_of, build_time_rows, compare_rows, render_compare
    from trtstudio.engine.buildtime.document import (
        SCHEMA,
        analyse_build_document,
        analyse_lines,
        analyse_text,
        read_build_log,
        states_a_build,
    )
    from trtstudio.engine.buildtime.live import MemoryWatch, PhaseRecorder
    from trtstudio.engine.buildtime.log import BuildPass, LayerTiming, RunnerTiming
    from trtstudio.engine.buildtime.text import render_text, render_timeline
    from trtstudio.engine.buildtime.timeline import PHASES, UNSTATED, canonical_phase, phase_totals
    from trtstudio.engine.memory.log import MIB

__all__ = [
    "CACHE_SCHEMA", "MIB", "PHASES", "SCHEMA", "TOP_LAYERS", "UNSTATED", "BuildPass", "LayerTiming", "MemoryWatch",
    "PhaseRecorder", "RunnerTiming", "analyse_build_document", "analyse_lines", "analyse_text", "build_log_of",
    "build_time_rows", "canonical_phase", "compare_rows", "diff_timing_caches", "phase_totals", "read_build_log",
    "render_compare", "render_text", "render_timeline", "states_a_build", "timing_cache_entries",
]
_HOME = {  # each name of __all__ -> the module that defines it (MIB: engine.memory's, the one of the package)
    "TOP_LAYERS": "advice",
    **dict.fromkeys(("CACHE_SCHEMA", "diff_timing_caches", "timing_cache_entries"), "cache"),
    **dict.fromkeys(("build_log_of", "build_time_rows", "compare_rows", "render_compare"), "compare"),
    **dict.fromkeys(("SCHEMA", "analyse_build_document", "analyse_lines", "analyse_text", "read_build_log",
                     "states_a_build"), "document"),
    "MemoryWatch": "live", "PhaseRecorder": "live",
    **dict.fromkeys(("BuildPass", "LayerTiming", "RunnerTiming"), "log"),
    "render_text": "text", "render_timeline": "text",
    **dict.fromkeys(("PHASES", "UNSTATED", "canonical_phase", "phase_totals"), "timeline"),
    "MIB": "trtstudio.engine.memory.log",
}


def __getattr__(name: str) -> Any:
    """A name of ``__all__``, from its module, loaded on first use (PEP 562) and kept here."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    home = _HOME[name]
    value = globals()[name] = getattr(import_module(home if "." in home else f"{__name__}.{home}"), name)
    return value
