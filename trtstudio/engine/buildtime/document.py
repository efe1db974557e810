"""The ``trtstudio.buildlog/1`` document of a build log (:func:`read_build_log`, :func:`analyse_text`,
:func:`analyse_lines`) or of a ``trtstudio build --json`` document (:func:`analyse_build_document`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trtstudio.engine.buildtime.advice import TOP_LAYERS, global_settings, suggestions
from trtstudio.engine.buildtime.log import LogReader
from trtstudio.engine.buildtime.timeline import UNSTATED, lay_end_to_end, phase_totals
from trtstudio.errors import InputError

SCHEMA = "trtstudio.buildlog/1"


def analyse_lines(lines: Iterable[str], source: str = "") -> dict[str, Any]:
    """The ``trtstudio.buildlog/1`` document of a build log's lines (see the module doc)."""
    rd = LogReader(source)
    for line in lines:
        rd.line(line)
    passes = [p for p in rd.passes if p.total is not None]
    timeline = lay_end_to_end(rd.passes, rd.parse_seconds)
    layers = sorted((lay.to_json() for lay in rd.layers.values()), key=lambda d: -d["seconds"])
    n_profiles = max((len(lay["profiles"]) for lay in layers), default=0)
    totals = [p.total for p in passes if p.total is not None]
    tactic_rows = [{"layer": lay.name, "runner": r.runner, "tactic": tac, "name": name, "ms": ms,
                    "fastest": tac == r.fastest, "chosen": r.chosen and tac == r.fastest}
                   for lay in rd.layers.values() for r in lay.runners for tac, name, ms in r.tactics]
    peaks = rd.memory.result().peaks()
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
        "memory": {"host_peak_bytes": peaks["cpu_now"], "gpu_peak_bytes": peaks["gpu_now"],
                   "source": ("[MemUsageChange] now: (TensorRT's view of the process)"
                              if peaks["cpu_now"] is not None else None),
                   "allocator_cpu_peak_bytes": peaks["allocator_cpu"], "allocator_gpu_peak_bytes": peaks["allocator_gpu"]},
        "top_layers": suggestions(layers[:TOP_LAYERS], n_profiles, rd.cache.get("kind")),
        "global_settings": global_settings(passes),
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
