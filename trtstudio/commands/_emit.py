"""The end of a command that produced one document: JSON or text on stdout, the error on stderr."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def emit(doc: dict[str, Any], as_json: bool, render_text: Callable[[dict[str, Any]], str],
         write_json: Callable[[dict[str, Any]], None], where: str = "") -> int:
    """Print ``doc`` (``write_json`` or ``render_text``); exit 1 with ``error: [where: ]...`` when
    ``doc["error"]`` is set (the figures measured before the failure are still printed), else 0."""
    if as_json:
        write_json(doc)
    else:
        print(render_text(doc))
    if doc.get("error"):
        print(f"error: {where + ': ' if where else ''}{doc['error']}", file=sys.stderr)
        return 1
    return 0
