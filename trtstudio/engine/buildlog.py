"""The trtstudio build log's format, written by ``backends.build`` (a build's log, ``--save-log``,
the ``log`` of a ``trtstudio.build/1`` document read back) and read by ``engine.readers.rtx_log``:
a header line with the build's versions and settings as JSON, then each builder message as
TensorRT's own Python logger prints it. Light on purpose: the window imports ``backends.build``
on its GUI thread."""

from __future__ import annotations

import json
from typing import Any

LOG_HEADER = "# trtstudio.buildlog/1 "
SEVERITY_LETTER = {"INTERNAL_ERROR": "F", "ERROR": "E", "WARNING": "W", "INFO": "I", "VERBOSE": "V"}


def log_line(source: str, severity: str, message: str) -> str:
    """One builder message as TensorRT's own Python logger prints it: ``[TRT] [V] message``."""
    return f"[{source}] [{SEVERITY_LETTER.get(severity, '?')}] {message}"


def build_log_text(versions: dict[str, Any], settings: dict[str, Any], lines: list[str],
                   extra: dict[str, Any] | None = None) -> str:
    """A trtstudio build log: the header line with the versions and settings as JSON (which the
    rtx-log reader takes back), then the builder's lines. ``extra``: more header keys, e.g. the
    build's recorded ``timeline``, ``memory`` and ``seconds`` (which ``engine.buildtime`` reads back)."""
    head = LOG_HEADER + json.dumps({"versions": versions, "settings": settings, **(extra or {})}, sort_keys=True)
    return "\n".join([head, *lines]) + "\n"
