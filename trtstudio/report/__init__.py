"""Reports: the Report model, its writers (HTML, JSON, CSV, PDF), sessions and comparisons.

Public API (what the GUI calls)::

    build_report(model=None, engine=None, run=None, accuracy=None, graph_png=None, title=None) -> Report
    write_report(report, path) -> list[Path]          # format by extension: .html .json .csv .pdf
    save_session(path, model=None, engine=None, run=None, accuracy=None, graph_png=None, title=None) -> Path
    load_session(path) -> Session                      # Report.from_session(session) regenerates the report

No Qt here, except ``trtstudio.report.pdf`` (documented there), imported only when a PDF is written.
"""

from __future__ import annotations

from trtstudio.report.model import Report, build_report, save_session
from trtstudio.report.session import RunData, Session, load_session
from trtstudio.report.writers import write_report

__all__ = ["Report", "RunData", "Session", "build_report", "load_session", "save_session", "write_report"]
