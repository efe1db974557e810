"""Reports and sessions of the window's Workspace: export, save and open, each in a worker.

What a report or session holds comes from :meth:`trtstudio.workspace.Workspace.report_inputs`: the
open model and the latest run *of that model* (a run of another model is never written under it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QIODevice, QObject, QTimer, Signal
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

    def _inputs(self) -> dict[str, Any]:
        """``Workspace.report_inputs`` with the model's graph as PNG; an engine's own graph
        (``is_layer_model``) is never taken as the model of a report or session."""
        from trtstudio.engine.layer_graph import is_layer_model

        inputs = self.w.workspace.report_inputs(self._graph_png())
        if is_layer_model(inputs.get("model")):
            inputs["model"] = inputs["graph_png"] = None
        return inputs

    def _graph_png(self) -> bytes | None:
        if self.w.workspace.display is None:
            return None
        buf = QBuffer()
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        self.w.view.grab().save(buf, "PNG")
        return bytes(buf.data().data())

    # -- report ---------------------------------------------------------------------------------
    def export_report_dialog(self, layers: list[int] | None = None) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self.w, "Export report", os.path.join(self.w.prefs.last_dir(), "trtstudio-report.html"),
            "HTML (*.html);;PDF (*.pdf);;JSON (*.json);;CSV (*.csv)")
        if path:
            self.export_report(path, layers)

    def export_report(self, path: str, layers: list[int] | None = None) -> None:
        """Write the report (format by extension) in a worker; ``sig_report_written`` when done.
        ``layers``: a report of these engine layers only (a row menu's Export)."""
        ws = self.w.workspace
        if ws.is_empty():
            self.w.sig_error.emit("nothing to report yet: open a model or engine files, or run a profile")
            return
        inputs = self._inputs()
        mine = ws.runs_of_model()
        others = [r for r in ws.runs if r.data is not None and r not in mine]
        if others:
            self.w.statusBar().showMessage(
                f"{len(others)} run(s) of other models are not in this report (each report is about one model)", 10000)

        sweeps = list(ws.sweeps_of_model())

        def work() -> list[str]:
            from trtstudio.report.model import build_report
            from trtstudio.report.writers import write_report

            rep = build_report(**inputs)
            rep.sweeps = [dict(d) for d in sweeps]  # the Sweep tab's sweeps and mixes: the Shapes section
            if layers is not None:
                from trtstudio.report.model import selection_report

                rep = selection_report(rep, layers)
            return [str(p) for p in write_report(rep, path)]

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
        """Model, engine files, run and statistics, and the sweeps and shape mixes of the model (the
        Sweep tab's), to one .trtstudio file (atomic write), in a worker."""
        inputs = self._inputs()
        sweeps = list(self.w.workspace.sweeps_of_model())
        run_settings = self.run_settings()

        def work() -> str:
            from trtstudio.report.model import make_session
            from trtstudio.report.session import write_session

            session = make_session(**inputs)
            session.sweeps = [dict(d) for d in sweeps]
            session.run_settings = run_settings
            return str(write_session(path, session))

        def done(p: str) -> None:
            self.w.prefs.remember(p)
            self.w.statusBar().showMessage(f"Session saved: {p}", 8000)
            self.sig_session_saved.emit(p)

        self.w.loader.work(f"Saving {Path(path).name}...", work, done)

    def run_settings(self) -> dict[str, Any] | None:
        """The run settings a saved session keeps: the Live profile panel's (backend, run shapes,
        warm-up, iterations...) for the open model, else those an opened session brought."""
        panel = self.w.profile_panel
        ws = self.w.workspace
        model = getattr(ws.model, "path", None)
        got = panel.run_settings() if panel is not None else None
        if got is not None and (model is None or os.path.basename(str(got.get("model"))) == os.path.basename(str(model))):
            return got
        return dict(ws.run_settings) if ws.run_settings else None

    def _restore_run_settings(self, settings: dict[str, Any], tries: int) -> None:
        """Give a session's run settings to the Live profile panel once it is made (its run shapes
        follow when the model's inputs are read)."""
        panel = _panel_ready(self.w, self, tries, lambda: self._restore_run_settings(settings, tries + 1))
        if panel:
            panel.apply_run_settings(settings)

    def open_session_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.w, "Open session", self.w.prefs.last_dir(),
                                              "trtstudio sessions (*.trtstudio)")
        if path:
            self.open_session(path)

    def open_session(self, path: str) -> None:
        """Restore a session into the workspace: its engine and runs, then its model (when the file
        is still there)."""
        def work() -> Any:
            from trtstudio.report.session import load_session

            return load_session(path)

        def done(session: Any) -> None:
            self.session = session
            model_path = self.w.workspace.apply_session(session)
            if self.w.workspace.run_settings:  # before the model opens: its inputs take the saved shapes
                self._restore_run_settings(self.w.workspace.run_settings, 0)
            found = find_session_model(path, model_path) if model_path else None
            missing = f"session model {model_path} is missing" if model_path and not found else ""
            if found:
                self.w.open_model(found)
            else:
                self.w.start_plots()  # no model to wait for: the panels come now
                self.w.loader.reanalyze()  # the engine's table and findings without a model (else after it)
                if missing:
                    self.w.statusBar().showMessage(f"{missing}; engine and run restored", 10000)
            self.w.prefs.remember(path)  # after its model: the session goes first in Open recent
            saved = [r for r in session.runs if r.latency_ms.size]
            if saved:
                self.w.busy(+1)  # until the run is drawn (a --screenshot waits for it)
                self._show_saved_run(saved[-1], f"{Path(path).name}: " + (f"{missing}; " if missing else ""), 0)
            self._show_engine_profiles()
            if session.sweeps:
                self.w.busy(+1)  # until they are in the Sweep tab
                self._show_saved_sweeps(list(session.sweeps), 0)
            self.sig_session_loaded.emit(session)

        self.w.loader.work(f"Opening {Path(path).name}...", work, done)

    def _show_engine_profiles(self) -> None:
        """A session's engine of several optimization profiles: its Profiles tab, from its files
        where they are all still there (the session keeps one profile's layers)."""
        from trtstudio.engine.load import profile_count, shown_profile

        ws = self.w.workspace
        paths = list(ws.engine_paths)
        if ws.engine is None or profile_count(ws.engine) < 2:
            self.w.loader.show_profiles(ws.engine, [])  # another engine's tab goes
        elif paths and all(os.path.isfile(p) for p in paths):
            self.w.loader.show_profiles(ws.engine, paths, shown_profile(ws.engine))
        else:
            self.w.statusBar().showMessage(
                f"the session's engine has {profile_count(ws.engine)} optimization profiles; its files are not "
                "all here to show them side by side", 10000)

    def _show_saved_sweeps(self, docs: list[dict[str, Any]], tries: int) -> None:
        """Put a session's sweeps and shape mixes in the Sweep tab once the panel is made (the
        last one shown); holds one busy count until then."""
        panel = _panel_ready(self.w, self, tries, lambda: self._show_saved_sweeps(docs, tries + 1))
        if panel is None:
            return
        self.w.busy(-1)
        if panel is False or getattr(panel, "sweep_tab", None) is None:
            return  # no panel here: the sweeps stay in the workspace, its sessions and reports
        panel.sweep_tab.add_results(docs)

    def _show_saved_run(self, run: Any, source: str, tries: int) -> None:
        """Draw a session's run in the Live profile panels once they are made: its latencies in
        order (on a time axis of their running sum: a run's inferences follow each other) and its
        whole-run statistics, as when the run ended. Holds one busy count until then; ``source``
        starts the status line that says so."""
        panel = _panel_ready(self.w, self, tries, lambda: self._show_saved_run(run, source, tries + 1))
        if panel is None:
            return
        self.w.busy(-1)  # (panel False: no Live profile panel here, or it never came: the run stays in reports)
        if panel is False:
            return
        if panel.is_running():  # a run started meanwhile: it keeps the panels
            return
        from trtstudio.profiling.samples import SampleBuffer

        lat = run.latency_ms.astype("float64")
        buf = SampleBuffer()  # the live run's ring: its last 100,000 samples are drawn, as during a run
        start = max(0, lat.size - buf.capacity)
        for t, ms in zip(lat.cumsum()[start:] / 1e3, lat[start:], strict=True):
            buf.append(float(t), float(ms))
        panel.live.attach(buf)
        panel.live.finish(run.stats or None)
        self.w.statusBar().showMessage(
            f"{source}saved run {run.name!r} ({run.backend or '?'}, {lat.size} inferences) in Live profile", 10000)


def _panel_ready(w: Any, owner: QObject, tries: int, again: Any) -> Any:
    """The Live profile panel once made; None after scheduling ``again()`` while it is still to
    come (the plot panels follow the model), or for good (``False``) where it never comes."""
    panel = w.profile_panel
    if panel is None or w.plots_pending():
        if tries < 1200 and not (panel is None and w.stager.state == "built"):
            QTimer.singleShot(50, owner, again)
            return None
        return False
    return panel


def find_session_model(session_path: str, model_path: str) -> str | None:
    """The session's model file: its path as recorded (absolute, or relative to the folder the
    window runs in), else beside the session file under that relative path or that name (a session
    and its model moved or sent together). None when none of them is there."""
    folder = Path(session_path).resolve().parent
    for cand in (Path(model_path), folder / model_path, folder / Path(model_path).name):
        if cand.is_file():
            return str(cand)
    return None
