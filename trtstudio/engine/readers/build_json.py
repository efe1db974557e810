"""``trtstudio build --json`` documents (schema ``trtstudio.build/1``): the engine a build made.

The document carries the builder's whole log (``log``: severity, message, source per line) and the
versions and settings of the build; its engine is read back from that log by the ``rtx-log``
reader, as the window reads a build it ran itself from its log (``BuildResult.engine_info``;
a build that also exported the inspector's JSON, on a GPU, showed that, which the document does
not carry: its log's listing is read then). A failed build's document is refused with its error,
on one line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trtstudio.engine.buildlog import build_log_text, log_line
from trtstudio.engine.model import EngineInfo
from trtstudio.engine.readers import loads_json, register
from trtstudio.engine.readers.rtx_log import read as read_log
from trtstudio.errors import InputError

SCHEMA = "trtstudio.build/1"


def _sniff(head: str, path: Path) -> bool:
    top = head.lstrip()[:200]
    return top.startswith("{") and '"schema"' in top and f'"{SCHEMA}"' in top


def _lines(path: Path, records: Any) -> list[str]:
    if not isinstance(records, list):
        raise InputError(path, f"a {SCHEMA} document without its 'log' list")
    lines = []
    for rec in records:
        if not isinstance(rec, dict) or not isinstance(rec.get("message"), str):
            raise InputError(path, f"a {SCHEMA} log record is not {{'severity', 'message', 'source'}}: {str(rec)[:80]}")
        lines.append(log_line(str(rec.get("source") or "TRT"), str(rec.get("severity") or ""), rec["message"]))
    return lines


@register("trtstudio-build", patterns=("*.build.json",), sniff=_sniff, kind="layers", priority=30)
def read(path: Path, text: str) -> EngineInfo:
    """The engine of a ``trtstudio.build/1`` document, read from the build log it carries."""
    doc = loads_json(path, text)
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise InputError(path, f"not a {SCHEMA} document")
    if not doc.get("ok"):
        error = " ".join(str(doc.get("error") or "no error given").split())  # one line: an exception's text may have several
        raise InputError(path, f"this build did not make an engine: {error[:300]}")
    versions, settings = doc.get("versions"), doc.get("settings")
    versions = versions if isinstance(versions, dict) else {}
    settings = settings if isinstance(settings, dict) else {}
    info = read_log(path, build_log_text(versions, settings, _lines(path, doc.get("log"))))
    if isinstance(doc.get("engine_path"), str):
        info.sources.append(doc["engine_path"])
    info.formats = ["trtstudio-build"]
    return info
