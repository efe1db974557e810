"""Opening a model or engine files and analysing the engine, in workers, into the window's Workspace.

The GUI thread only receives finished objects: the model with its display graph, summary and
content hash; the engine with its :class:`~trtstudio.engine.analysis.Analysis` (mapping, findings,
per-node figures, table columns). A model opens through the core's two stages
(``graph.open``: the model with its display graph, summary and hash, then its shapes), the window
showing it between them. An engine's files open in two stages: its table first (the
analysis ``pending``), its diagnosis from the same worker when ready. Shape inference of a big
model follows in a second worker. A result computed for something no longer open is dropped (the
workspace's tokens).
"""

from __future__ import annotations

import gc
import os
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer

from trtstudio.ui.workers import error_text, run_in_thread


def _diagnosed(partial: Any, model: Any, unsupported: list[dict[str, Any]], paths: list[str] | None) -> Any:
    """The analysis (``engine.analysis.analyze`` with the table's columns and, with the files the
    engine was read from, the engine-vs-this-machine findings) from its first part
    (``engine.analysis.mapped`` with the table's columns)."""
    from trtstudio.engine.analysis import diagnosed

    return diagnosed(partial, model, unsupported, machine=paths or None)


def _frozen_after(fn: Any) -> Any:
    """``fn()`` with the cyclic GC paused, then its objects frozen (see DocumentLoader.work): a
    collection started by a worker holds the GIL, so it stalls the GUI thread as much as one there."""
    from trtstudio.bigdocs.children import responsive_parsing
    from trtstudio.bigdocs.gcpause import gc_paused

    with gc_paused(), responsive_parsing():  # freezes what it made on the way out; big JSON in pieces
        return fn()


def judge_trace(engine: Any, paths: list[str], model: Any = None) -> None:
    """Put the verdict of the kernel file among ``paths`` (``engine.node_time.trace_verdict``: what it
    held, whose layers, which GPU, how much matched the engine's layers or the model's nodes) in
    ``engine.kernels["verdict"]``; nothing without one."""
    if not getattr(engine, "kernels", None):
        return
    from trtstudio.engine.node_time import is_kernel_trace, trace_verdict

    trace = next((p for p in paths if is_kernel_trace(p)), None)
    nodes = [n.name for n in model.graph.nodes] if model is not None and not engine.layers else []
    engine.kernels["verdict"] = trace_verdict(engine.kernels, trace, [lay.name for lay in engine.layers],
                                              engine.device, nodes)


MODEL_PATTERNS = ("*.onnx", "*.trtstudio", "*.pt2", "*.pt", "*.pth", "*.ts", "*.torchscript", "*.jit")


def engine_patterns() -> list[str]:
    """The file-name patterns of every engine file trtstudio reads (the engine readers' patterns,
    by extension: plans, layer JSON, profiles, logs, Nsight Systems exports, Kineto traces)."""
    from trtstudio.engine.readers import readers

    out: list[str] = []
    for r in readers():
        for pat in r.patterns:
            ext = pat.rsplit(".", 1)[-1] if "." in pat else ""
            glob = f"*.{ext}" if ext.isalnum() else pat
            if glob not in out:
                out.append(glob)
    return out


def engine_filters() -> str:
    """File > Open engine files' filters: every kind the engine readers take first (kernel traces
    included), then TensorRT outputs, kernel traces, all files."""
    every = engine_patterns()
    trt = [p for p in every if p != "*.sqlite"]
    return (f"Engine files and kernel traces ({' '.join(every)});;TensorRT outputs ({' '.join(trt)});;"
            "Kernel traces: Nsight Systems exports, Kineto traces (*.sqlite *.json);;All files (*)")


def open_filters() -> str:
    """File > Open's filters: everything the window opens by kind first (models, sessions, engine
    files, kernel traces), then each kind, then all files."""
    return (f"Everything trtstudio opens ({' '.join([*MODEL_PATTERNS, *engine_patterns()])});;"
            "Models and sessions (*.onnx *.trtstudio *.pt2 *.pt *.pth *.ts *.torchscript *.jit);;"
            "ONNX models (*.onnx);;trtstudio sessions (*.trtstudio);;"
            "PyTorch files (*.pt2 *.pt *.pth *.ts *.torchscript *.jit);;"
            f"Engine files and kernel traces ({' '.join(engine_patterns())});;All files (*)")


# An engine's first stage (its table) is shown, then the worker waits until the window has had
# FIRST_STAGE_PAINT_MS for it (the table, its charts, their first paint), at most FIRST_STAGE_WAIT_S.
FIRST_STAGE_PAINT_MS = 80
FIRST_STAGE_WAIT_S = 1.0

class DocumentLoader(QObject):
    """Loads into ``window.workspace`` (``window``: the MainWindow, for its busy count, status bar,
    tabs and signals). ``summary``: the summary of the model loaded last (made in the worker)."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.w = window
        self.summary: dict[str, Any] | None = None
        self.last_check: Any = None  # the last backends.support.CheckResult of the open model
        self.profile_shown = 0  # the optimization profile whose layers the engine dock shows
        self._profiles: tuple[tuple[tuple[str, ...], int], dict[str, Any]] | None = None  # (paths, model id), document

    def work(self, what: str, fn: Any, done: Any, name: str = "load", early: Any = None, after: Any = None) -> None:
        """Run ``fn()`` in a worker with the busy count held; ``done(result)`` on the GUI thread,
        errors as one line through ``sig_error``. With ``early``, ``fn(hand)`` may hand a first
        result before it ends: ``hand(value)`` calls ``early(value)`` on the GUI thread (before
        ``done``) while the worker goes on. ``after()``: on the GUI thread once the worker ended,
        whether it succeeded or not (the next piece of work to start)."""
        self.w.busy(+1, what)

        def handed(value: Any) -> None:
            try:
                early(value)
            except Exception as exc:  # noqa: BLE001 - as in finished
                self.w.sig_error.emit(f"{what.rstrip('.')}: {error_text(exc)}")

        def finished(result: Any) -> None:
            self.w.busy(-1)
            try:
                done(result)
                # A loaded model or engine is millions of long-lived objects without cycles. Moved to
                # the permanent generation, the cyclic collector's full passes on the GUI thread no
                # longer walk them (each pass took about a second with a 100k-node model open).
                gc.freeze()
            except Exception as exc:  # noqa: BLE001 - a view that cannot show a result must not take the window down
                self.w.sig_error.emit(f"{what.rstrip('.')}: {error_text(exc)}")
            if after is not None:
                after()

        def failed(exc: BaseException) -> None:
            self.w.busy(-1)
            self.w.sig_error.emit(error_text(exc))
            if after is not None:
                after()

        if early is None:
            run_in_thread(lambda _s: _frozen_after(fn), on_done=finished, on_error=failed, name=name)
        else:
            run_in_thread(lambda s: _frozen_after(lambda: fn(s.set_progress)), on_done=finished, on_error=failed,
                          on_progress=handed, name=name)

    def open_model(self, path: str | os.PathLike[str]) -> None:
        """Load the model, its display graph and summary in a worker; with an engine open, its
        analysis against the model follows in two stages (:meth:`reanalyze`) once the model shows."""
        path = os.fspath(path)
        self.w.prefs.remember(path)
        ws = self.w.workspace
        ws.disturb_runs(f"opened {Path(path).name} in this process")

        def work() -> Any:
            from trtstudio.graph.open import open_document

            # the display graph and the search columns (for the first keystroke in the search
            # field) made here, while the window has nothing to draw: in the shapes worker they ran
            # beside the first frame's work on the GUI thread
            return open_document(path)

        def done(opened: Any) -> None:
            model = opened.model
            self.w.graphs.close_subgraphs()
            self.summary = opened.summary
            ws.set_model(model, opened.display, opened.sha256)
            self.w.statusBar().showMessage(f"Opened {model.path}: {len(model.graph.nodes)} nodes", 5000)
            self.w.sig_model_loaded.emit(model)

            def shapes() -> None:
                from trtstudio.graph.open import infer_document_shapes

                self.work("Inferring shapes...", lambda: infer_document_shapes(opened), self._on_shapes_inferred,
                          name="shapes")

            if ws.engine is not None:
                # the table's mapping to this model, then its diagnosis; the shapes after them: each
                # worker running Python beside the others makes the window wait longer for the GIL
                # (four at once stalled it 107 ms opening a 50,000-layer session)
                self.reanalyze(after=shapes)
            else:
                shapes()

        self.work(f"Loading {Path(path).name}...", work, done)

    def _on_shapes_inferred(self, opened: Any) -> None:
        if opened.model is self.w.workspace.model:
            self.w.side_tabs.show_summary(opened.summary)
            self.w.view.update()

    def open_engine(self, paths: list[str], profile: int = 0) -> None:
        """Read engine files and analyse them against the open model, in one worker, in two stages:
        the engine with its table (``engine.analysis.mapped``: the layers, their ONNX nodes and
        times) is shown as soon as it is there, with the analysis ``pending``; the diagnosis
        (findings, severities) follows from the same worker and replaces it, unless something else
        was opened meanwhile (the workspace's token). ``profile``: the optimization profile whose
        layers are shown; an engine of several has its profiles side by side in the Profiles tab,
        made in another worker after the diagnosis (:meth:`show_profiles`)."""
        paths = [os.fspath(p) for p in paths]
        for p in paths:
            self.w.prefs.remember(p)
        ws = self.w.workspace
        model, unsupported, model_gen = ws.model, list(ws.unsupported), ws.token()[0]
        shown: list[tuple[int, int]] = []  # the token of the engine the first stage opened
        taken = threading.Event()  # the window has shown the first stage

        def work(hand: Any) -> tuple[Any, Any]:
            from trtstudio.engine.analysis import mapped
            from trtstudio.engine.load import load_engine

            engine = load_engine(paths, profile=profile)
            judge_trace(engine, paths, model)
            partial = mapped(engine, model, columns=True)
            hand((engine, partial))
            # The table's first paint calls into Python for each cell it draws, each call taking
            # the GIL again: beside the diagnosis those waits added up to a 70-90 ms stall
            taken.wait(FIRST_STAGE_WAIT_S)
            return engine, _diagnosed(partial, model, unsupported, paths)

        def first(result: tuple[Any, Any]) -> None:
            engine, partial = result
            try:
                shown.append(self.set_engine(engine, paths, partial if ws.token()[0] == model_gen else None))
            finally:  # the table, its charts and their first paint, on the next turns; then the diagnosis
                QTimer.singleShot(FIRST_STAGE_PAINT_MS, taken.set)
            for w in engine.warnings:
                self.w.statusBar().showMessage(f"warning: {w}", 10000)
            self.w.statusBar().showMessage(
                f"Engine: {len(engine.layers)} layers from {', '.join(engine.formats)}; diagnosing...")
            self.show_trace_verdict(engine)

        def done(result: tuple[Any, Any]) -> None:
            engine, analysis = result
            if shown and ws.engine is engine:  # its profiles after its diagnosis (a model's reanalysis may follow)
                self.show_profiles(engine, paths, profile)
            if not shown or ws.token()[0] != model_gen:
                return  # the first stage failed to show (its error went out), or another model came
            if not ws.set_analysis(analysis, shown[0]):
                return  # stale: another engine, or rejected nodes, since (their analysis follows)
            verdict = (engine.kernels or {}).get("verdict")
            self.w.statusBar().showMessage(verdict["text"] if verdict else
                                           f"Engine: {len(engine.layers)} layers from {', '.join(engine.formats)}",
                                           15000 if verdict else 6000)

        self.work(f"Reading {', '.join(Path(p).name for p in paths)}...", work, done, early=first)

    def show_trace_verdict(self, engine: Any) -> None:
        """A kernel file read with ``engine`` (an Nsight Systems export, a Kineto trace): its verdict
        in the status bar (the Kernels tab and the Log tab show it from the engine); opened without
        an engine's layers, the Kernels tab comes to the front with the file's ranges."""
        verdict = (getattr(engine, "kernels", None) or {}).get("verdict")
        if not verdict:
            return
        self.w.statusBar().showMessage(verdict["text"], 15000)
        tabs = self.w.engine_tabs
        if not engine.layers and tabs.kernels_view is not None:
            tabs.setCurrentWidget(tabs.kernels_view)

    def show_profiles(self, engine: Any, paths: list[str], shown: int = 0) -> None:
        """The Profiles tab for ``engine`` (read from ``paths``, showing profile ``shown``): each of
        its optimization profiles read, diagnosed and aligned in a worker
        (``engine.multiprofile``), for an engine of several; else the tab goes."""
        from trtstudio.engine.load import profile_count

        ws = self.w.workspace
        self.profile_shown = shown
        if engine is None or profile_count(engine) < 2 or not paths:
            self._profiles = None
            self.w.engine_tabs.show_profiles(None)
            return
        model, token = ws.model, ws.token()
        key = (tuple(paths), id(model))
        if self._profiles is not None and self._profiles[0] == key:  # another profile of the engine shown
            self.w.engine_tabs.show_profiles(self._profiles[1], shown, self._on_profile_chosen)
            return

        def work() -> dict[str, Any]:
            from trtstudio.engine.multiprofile import analyse_profiles, profiles_document

            return profiles_document(analyse_profiles(paths, model.graph if model is not None else None))

        def done(doc: dict[str, Any]) -> None:
            if ws.token() == token:
                self._profiles = (key, doc)
                self.w.engine_tabs.show_profiles(doc, shown, self._on_profile_chosen)

        self.work("Reading the engine's optimization profiles...", work, done, name="profiles")

    def _on_profile_chosen(self, profile: int) -> None:
        """The Profiles tab's choice: the engine opened again with ``profile``'s layers."""
        paths = list(self.w.workspace.engine_paths)
        if paths and profile != self.profile_shown:
            self.open_engine(paths, profile=profile)

    def set_engine(self, engine: Any, paths: list[str] | None = None, analysis: Any = None) -> tuple[int, int]:
        """Open ``engine`` (with its ``analysis`` when made for the open model, else analysed now in a
        worker); returns the workspace's token for it (``Workspace.set_engine``)."""
        if self._profiles is not None and self._profiles[0][0] != tuple(paths or []):
            self._profiles = None
            self.w.engine_tabs.show_profiles(None)  # another engine's profiles; this one's follow
        token = self.w.workspace.set_engine(engine, paths or [], analysis)
        if self.w.workspace.analysis is None:
            self.reanalyze()
        self.w.engine_dock.show()
        self.w.sig_engine_loaded.emit(engine)
        return token

    def reanalyze(self, after: Any = None) -> None:
        """Analyse the open engine against the open model again, in a worker, in the two stages of
        :meth:`open_engine`: the table with its layers' ONNX nodes (``engine.analysis.mapped``,
        ``pending``), then the diagnosis; stale results are dropped (the workspace's token).
        ``after()``: once it ended (or at once without an engine)."""
        ws = self.w.workspace
        engine, model, unsupported, token = ws.analysis_inputs()
        paths = list(ws.engine_paths)
        if engine is None:
            if after is not None:
                after()
            return
        taken = threading.Event()  # the window has shown the first stage

        def work(hand: Any) -> Any:
            from trtstudio.engine.analysis import mapped

            partial = mapped(engine, model, columns=True)
            hand(partial)
            taken.wait(FIRST_STAGE_WAIT_S)  # as in open_engine: the table's first paint, then the diagnosis
            return _diagnosed(partial, model, unsupported, paths)

        def first(partial: Any) -> None:
            try:
                ws.set_analysis(partial, token)
            finally:
                QTimer.singleShot(FIRST_STAGE_PAINT_MS, taken.set)

        self.work("Analysing the engine...", work, lambda a: ws.set_analysis(a, token), name="analysis", early=first,
                  after=after)

    def check_support(self) -> None:
        """Engine > Check TensorRT support: the parser's verdict per node, without building."""
        model = self.w.workspace.model
        if model is None:
            self.w.sig_error.emit("open an ONNX model first (File > Open)")
            return

        def work() -> tuple[Any, list[dict[str, Any]], Any]:
            from trtstudio.backends.support import check_support
            from trtstudio.engine.overlay import support_overlay

            r = check_support(model.path)
            names = [n.name for n in model.graph.nodes]
            items = [{**e, "node": names[e["index"]] if 0 <= e["index"] < len(names) else e["node"]}
                     for e in r.unsupported]
            return r, items, support_overlay(model.graph.nodes, r.node_states(model.graph))

        def done(result: tuple[Any, list[dict[str, Any]], Any]) -> None:
            r, items, ov = result
            if model is not self.w.workspace.model:
                return
            self.last_check = r
            self.w.mark_unsupported(items)
            self.w.show_overlay(ov)
            self.w.statusBar().showMessage(
                f"TensorRT support ({r.method}): " + ("every node is supported" if r.supported else
                                                     f"{len(items)} node(s) unsupported, marked in red"), 15000)

        self.work("Checking TensorRT support...", work, done, name="check")
