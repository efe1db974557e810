"""Reports: the Report model, its writers (HTML, JSON, CSV, PDF), sessions and comparisons.

Public API (what the GUI calls)::

    build_report(model=None, engine=None, run=None, accuracy=None, graph_png=None, title=None) -> Report
    write_report(report, path) -> list[Path]          # format by extension: .html .json .csv .pdf
    save_session(path, model=None, engine=None, run=None, accuracy=None, graph_png=None, title=None) -> Path
    load_session(path) -> Session                      # Report.from_session(session) regenerates the report

The names are looked up on first use (PEP 562): importing the package imports none of its modules,
so ``report.model`` -> ``report`` -> ``report.writers`` -> ``report.html`` -> ``report.compare`` ->
``report.model`` is no circle (every submodule's import runs this file first).

No Qt here, except ``trtstudio.report.pdf`` (documented there), imported only when a PDF is written.
"""

from __future__ import annotations

import sys as _sys
import types as _types
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trtstudio.report.model import Report, build_report, save_session
    from trtstudio.report.session import RunData, Session, load_session
    from trtstudio.report.writers import write_report

_HOME = {"Report": "model", "build_report": "model", "save_session": "model", "RunData": "session",
         "Session": "session", "load_session": "session", "write_report": "writers"}
__all__ = ["Report", "RunData", "Session", "build_report", "load_session", "save_session", "write_report"]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'trtstudio.report' has no attribute {name!r}")
    value = getattr(import_module(f"trtstudio.report.{home}"), name)
    globals()[name] = value
    return value


class _CallableModule(_types.ModuleType):
    """``trtstudio.report(model=..., engine=..., run=...)`` is the public API's function
    (:func:`trtstudio.api.report`) whether Python has bound the name to this package (once
    imported) or to the function."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return import_module("trtstudio.api").report(*args, **kwargs)  # on first use (PEP 562, as above)


_sys.modules[__name__].__class__ = _CallableModule
