"""How every command ends: its one document on standard output, as strict JSON
(:func:`trtstudio.jsonio.write_json`: NaN/Infinity as null with one warning) or as text, and its
error on standard error. Commands parse flags, build a request, run it in the core and call
:func:`emit`; none writes JSON any other way."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any


def emit(doc: dict[str, Any], as_json: bool, render_text: Callable[[dict[str, Any]], str] | None = None,
         write_json: Callable[[dict[str, Any]], None] | None = None, where: str = "", *,
         indent: int | None = 2, written: Iterable[Any] | None = None, non_finite: int | None = None) -> int:
    """Print ``doc`` and return the exit status: 1 with ``error: [where: ]...`` on stderr when
    ``doc["error"]`` is set (the figures measured before the failure are still printed), else 0.

    ``as_json``: strict JSON indented by ``indent`` (None: compact); ``non_finite``: how many
    NaN/infinities the document holds, where the caller counted them cheaper than a walk. Else
    ``render_text(doc)`` (nothing printed for None or ""). ``written``: files the command wrote,
    added to the document as ``"written"`` (the text lists them as ``wrote PATH`` after it).
    ``write_json`` is for a caller with a writer of its own (triton's, until it drops it)."""
    files = [str(p) for p in written] if written is not None else None
    if files is not None:
        doc["written"] = files
    if as_json:
        if write_json is not None:
            write_json(doc)
        else:
            from trtstudio.jsonio import write_json as _write

            _write(doc, indent=indent, non_finite=non_finite)
    else:
        text = render_text(doc) if render_text is not None else ""
        lines = [text] if text else []
        lines += [f"wrote {p}" for p in files or () if f"wrote {p}" not in text]
        if lines:
            print("\n".join(lines))
    if doc.get("error"):
        print(f"error: {where + ': ' if where else ''}{doc['error']}", file=sys.stderr)
        return 1
    return 0


class _Ending:
    """How the process ends once a command returns (read by :func:`trtstudio.cli.entry`)."""

    def __init__(self) -> None:
        self.skip_teardown = False
        self.in_entry = False  # running as the program (cli.entry), which ends the process after main
        self.kept: list[Any] = []


ENDING = _Ending()


def skip_teardown() -> None:
    """Called by a command that holds much in memory (``layers`` on a big engine): once it returns,
    :func:`trtstudio.cli.entry` ends the process without freeing it object by object (0.2 s at
    50,000 layers)."""
    ENDING.skip_teardown = True


def keep(*objs: Any) -> None:
    """Hold ``objs`` until the process ends (after :func:`skip_teardown`, in the program that
    :func:`trtstudio.cli.entry` runs): a command's locals would otherwise be freed object by object
    when it returns (1.2 s for a 300,000-layer engine's document). Anywhere else (``main`` called in
    a process that goes on, as the tests do) this does nothing."""
    if ENDING.skip_teardown and ENDING.in_entry:
        ENDING.kept.extend(objs)
