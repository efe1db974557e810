"""Two builds' time by phase side by side (:func:`compare_rows`, :func:`render_compare`), and from two
sides' files, as diff and compare show it (:func:`build_time_rows`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trtstudio.engine.buildtime.document import read_build_log
from trtstudio.engine.buildtime.text import seconds_text
from trtstudio.engine.buildtime.timeline import phase_totals
from trtstudio.errors import InputError


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
        out.append(f"  {r['phase']:<33} {seconds_text(r['a_s']):>12} {seconds_text(r['b_s']):>12} "
                   + (f"{d:+10.3f}" if d is not None else f"{'-':>10}"))
    return out


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
