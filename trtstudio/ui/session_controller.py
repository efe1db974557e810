"""Reports and sessions of the window's Workspace: export, save and open, each in a worker.

What a report or session holds comes from :meth:`trtstudio.workspace.Workspace.report_inputs`: the
open model and the latest run *of that model* (a run of another model is never written under it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QIODevice, QObject, Signal
from PySide6.QtWidgets import QFileDialog


class SessionController(QObject):
    """File > Export report / Save session / Open session for ``window`` (a MainWindow: its
    ``workspace``, ``view``, ``prefs``, ``loader``, ``open_model``, ``sig_error``, status bar).
    Signals: ``sig_report_written(list)``, ``sig_session_saved(str)``, ``sig_session_loaded(object)``."""

    sig_report_written = Signal(list)
    sig_session_saved = Signal(str)
    sig_session_loaded = Signal(object)

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.w = window
        self.session: Any = None  # the last session opened

    def _graph_png(self) -> bytes | None:
        if self.w.workspace.display is None:
            return None
        buf = QBuffer()
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        self.w.view.grab().save(buf, "PNG")
        return bytes(buf.data().data())

    # -- report ---------------------------------------------------------------------------------
    def export_report_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self.w, "Export report", os.path.join(self.w.prefs.last_dir(), "trtstudio-report.html"),
            "HTML (*.html);;PDF (*.pdf);;JSON (*.json);;CSV (*.csv)")
        if path:
            self.export_report(path)

    def export_report(self, path: str) -> None:
        """Write the report (format by extension) in a worker; ``sig_report_written`` when done."""
        ws = self.w.workspace
        if ws.is_empty():
            self.w.sig_error.emit("nothing to report yet: open a model or engine files, or run a profile")
            return
        inputs = ws.report_inputs(self._graph_png())
        mine = ws.runs_of_model()
        others = [r for r in ws.runs if r.data is not None and r not in mine]
        if others:
            self.w.statusBar().showMessage(
                f"{len(others)} run(s) of other models are not in this report (each report is about one model)", 10000)

        def work() -> list[str]:
            from trtstudio.report import build_report, write_report

            return [str(p) for p in write_report(build_report(**inputs), path)]

        def done(paths: list[str]) -> None:
            self.w.statusBar().showMessage(f"Report written: {', '.join(paths)}", 10000)
            self.sig_report_written.emit(paths)

        self.w.loader.work(f"Writing {Path(path).name}...", work, done)

    # -- sessions -------------------------------------------------------------------------------
    def save_session_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.w, "Save session",
                                              os.path.join(self.w.prefs.last_dir(), "session.trtstudio"),
                                              "trtstudio sessions (*.trtstudio)")
        if path:
            from trtstudio.filekinds import SESSION, SESSION_SUFFIX, classify

            self.save_session(path if classify(path, sniff=False) == SESSION else path + SESSION_SUFFIX)

    def save_session(self, path: str) -> None:
        """Model, engine files, run and statistics to one .trtstudio file (atomic write), in a worker."""
        inputs = self.w.workspace.report_inputs(self._graph_png())

        def work() -> str:
            from trtstudio.report import save_session

            return str(save_session(path, **inputs))

        def done(p: str) -> None:
            self.w.prefs.remember(p)
            self.w.statusBar().showMessage(f"Session saved: {p}", 8000)
            self.sig_session_saved.emit(p)

        self.w.loader.work(f"Saving {Path(path).name}...", work, done)

    def open_session_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.w, "Open session", self.w.prefs.last_dir(),
                                              "trtstudio sessions (*.trtstudio)")
        if path:
            self.open_session(path)

    def open_session(self, path: str) -> None:
        """Restore a session into the workspace: its engine and runs, then its model (when the file
        is still there)."""
        def work() -> Any:
            from trtstudio.report import load_session

            return load_session(path)

        def done(session: Any) -> None:
            self.w.prefs.remember(path)
            self.session = session
            model_path = self.w.workspace.apply_session(session)
            if model_path and os.path.exists(model_path):
                self.w.open_model(model_path)
            elif model_path:
                self.w.statusBar().showMessage(
                    f"session model {model_path} is missing; engine and run restored", 10000)
            self.sig_session_loaded.emit(session)

        self.w.loader.work(f"Opening {Path(path).name}...", work, done)
