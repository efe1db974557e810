"""The document of a trtstudio window, without Qt: model, engine + analysis, runs, accuracy, selection.

In the spirit of napari's ``ViewerModel``: one object holds what the user has open, and views
subscribe to its change events (``workspace.events.connect("model", callback)``). Nothing here
draws or runs anything: loading, analysis and profiling happen in workers, and their results are
handed to the workspace, which rejects stale ones (an analysis computed for an engine or model no
longer open).

The selection is one for every view (graph, layer table, compare table, findings, search): views
call :meth:`Workspace.select_layers` / :meth:`Workspace.select_nodes` / :meth:`Workspace.clear_selection`
and highlight their part on the ``selection`` event. Each non-empty selection is kept in
:class:`SelectionHistory`, which :meth:`Workspace.selection_back` and :meth:`Workspace.selection_forward`
walk (the window's Alt+Left / Alt+Right); a selection made while one is replayed is not recorded.

Runs carry the model they ran (:class:`~trtstudio.profiling.session.RunRecord`: path, content
hash, backend, shapes, settings). Opening another model never relabels a run: the run stays listed
under its own model, and a report or session of this workspace includes only the runs of the model
it is about (:meth:`Workspace.report_inputs`), so one model's latencies never appear under another
model's name.

Events (callbacks get the workspace): ``model``, ``engine``, ``analysis``, ``unsupported``,
``runs``, ``selection``, ``accuracy``, ``sweeps`` (a sweep's or shape mix's document added: the
Sweep tab's, a session's; saved with the runs of their model). An engine's analysis may come in two steps (the window
shows the table of a big engine before its diagnosis): first one with ``pending`` set (mapping,
per-node layers and times, the table without findings), then the whole one, each through
:meth:`Workspace.set_analysis` with the token of the engine it was made for.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from trtstudio.bigdocs.release import release_later
from trtstudio.engine.analysis import Analysis
from trtstudio.engine.model import EngineInfo

EVENTS = ("model", "engine", "analysis", "unsupported", "runs", "selection", "accuracy", "sweeps")


class Events:
    """Named change events: ``connect(name, callback)``, ``disconnect``, ``emit(name, *args)``.
    Callbacks run synchronously in the emitting thread (the GUI thread in the window)."""

    def __init__(self, names: Iterable[str]) -> None:
        self._callbacks: dict[str, list[Callable[..., Any]]] = {n: [] for n in names}

    def connect(self, name: str, callback: Callable[..., Any]) -> None:
        """Call ``callback(*args)`` on each ``emit(name, *args)``."""
        if name not in self._callbacks:
            raise KeyError(f"unknown event {name!r}; one of {', '.join(self._callbacks)}")
        self._callbacks[name].append(callback)

    def disconnect(self, name: str, callback: Callable[..., Any]) -> None:
        """Stop calling ``callback`` for ``name``."""
        if callback in self._callbacks.get(name, []):
            self._callbacks[name].remove(callback)

    def emit(self, name: str, *args: Any) -> None:
        """Call every callback of ``name``."""
        for cb in list(self._callbacks[name]):
            cb(*args)


@dataclass
class RunEntry:
    """One profiling run of the workspace: what it runs (``request``; ``record`` once loaded), its
    ``status`` (starting, running, finished, stopped, failed), its result as report ``RunData``
    once it ended, and the error line of a failed run."""

    model: str
    backend: str
    request: Any = None  # profiling.session.ProfileRequest
    record: Any = None  # profiling.session.RunRecord (set when the backend has loaded)
    status: str = "starting"
    data: Any = None  # report.session.RunData once finished
    error: str | None = None
    model_sha256: str | None = None
    state: Any = None  # profiling.runner.RunState while it runs

    @property
    def active(self) -> bool:
        """True while the run has not ended."""
        return self.status in ("starting", "running")

    def label(self) -> str:
        """``model.onnx (backend)``."""
        return f"{os.path.basename(self.model)} ({self.backend})"


@dataclass
class Selection:
    """Selected engine layers (positions in ``engine.layers``) and ONNX nodes (names)."""

    layers: list[int] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    source: str = ""  # "graph", "table", "finding", "search", ...
    # the nodes as indices into the open model's graph.nodes, where the analysis has them
    # (Analysis.layer_nodes): a view need not look 100,000s of names up again
    node_index: Any = field(default=None, compare=False, repr=False)


def _same(a: Selection, b: Selection) -> bool:
    return a.layers == b.layers and a.nodes == b.nodes


class SelectionHistory:
    """The selections made, oldest first, and where back/forward stand (as a browser's history):
    a new selection after going back drops the ones ahead. At most ``limit`` are kept."""

    def __init__(self, limit: int = 100) -> None:
        self.items: list[Selection] = []
        self.pos = -1
        self.limit = limit

    def clear(self) -> None:
        self.items, self.pos = [], -1

    def push(self, sel: Selection) -> None:
        """Record ``sel`` (an empty one, or the one recorded last again, is not recorded)."""
        if not sel.layers and not sel.nodes:
            return
        if 0 <= self.pos and _same(self.items[self.pos], sel):
            return
        del self.items[self.pos + 1:]
        self.items.append(sel)
        if len(self.items) > self.limit:
            del self.items[0]
        self.pos = len(self.items) - 1

    def back(self, current: Selection) -> Selection | None:
        """The selection before ``current`` (the last recorded one when ``current`` is not it, e.g.
        after Esc cleared it), or None at the start."""
        if self.pos < 0:
            return None
        if not _same(self.items[self.pos], current):
            return self.items[self.pos]
        if self.pos == 0:
            return None
        self.pos -= 1
        return self.items[self.pos]

    def forward(self) -> Selection | None:
        """The selection after the one back went to, or None at the end."""
        if self.pos + 1 >= len(self.items):
            return None
        self.pos += 1
        return self.items[self.pos]

    def can_go_back(self, current: Selection) -> bool:
        return self.pos > 0 or (self.pos == 0 and not _same(self.items[0], current))

    def can_go_forward(self) -> bool:
        return self.pos + 1 < len(self.items)


class Workspace:
    """The open model (and its display graph), the engine with its analysis, runs, accuracy and
    the selection. See the module docstring for the events."""

    def __init__(self) -> None:
        self.events = Events(EVENTS)
        self.model: Any = None  # graph.model.Model
        self.display: Any = None  # what the graph view draws (graph.display.DisplayGraph)
        self.model_sha256: str | None = None
        self.engine: EngineInfo | None = None  # as read
        self.engine_paths: list[str] = []
        self.analysis: Analysis | None = None
        self.unsupported: list[dict[str, Any]] = []
        self.runs: list[RunEntry] = []
        self.accuracy: dict[str, Any] | None = None
        self.sweeps: list[dict[str, Any]] = []  # trtstudio.sweep/1 and trtstudio.mix/1 documents, in order
        # the run settings an opened session brought (ProfileRequest.settings() vocabulary: backend,
        # shapes, warmup, iterations...), for the Live profile panel to take; None: none
        self.run_settings: dict[str, Any] | None = None
        self.selection = Selection()
        self.history = SelectionHistory()
        self._replaying = False
        self._model_gen = 0
        self._engine_gen = 0

    # -- model ----------------------------------------------------------------------------------
    @property
    def model_path(self) -> str | None:
        """Path of the open model, or None."""
        return None if self.model is None else str(self.model.path)

    def set_model(self, model: Any, display: Any = None, sha256: str | None = None) -> None:
        """Open ``model`` (a ``graph.model.Model``). Runs stay as they are (each knows its model); the
        analysis becomes stale (the window recomputes it for the new graph); the parser's rejected
        nodes of the old model are dropped."""
        release_later(self.model if self.model is not model else None,
                      self.display if self.display is not display else None, self.analysis)
        self.model, self.display, self.model_sha256 = model, display, sha256
        self._model_gen += 1
        self.analysis = None  # it was made for the previous graph: the caller supplies the new one
        self.unsupported = []
        self.selection = Selection()
        self.history.clear()
        self.events.emit("model", self)

    # -- engine and analysis ----------------------------------------------------------------------
    def set_engine(self, engine: EngineInfo | None, paths: Iterable[str] = (),
                   analysis: Analysis | None = None) -> tuple[int, int]:
        """Open ``engine`` (read from ``paths``), with its ``analysis`` when the loader made one for
        the model open now (a ``pending`` one: the rest of it follows through :meth:`set_analysis`
        with the token returned). Returns the token of what is open with this engine, taken before
        the events go out (a view that opens something else on hearing of it changes the token)."""
        release_later(self.engine if self.engine is not engine else None, self.analysis)
        self.engine = engine
        self.engine_paths = [str(p) for p in paths]
        self._engine_gen += 1
        token = self.token()
        self.analysis = None
        self.selection = Selection()
        self.history.clear()
        self.events.emit("engine", self)
        if analysis is not None:
            self.set_analysis(analysis, token)
        return token

    def token(self) -> tuple[int, int]:
        """Identifies what is open now (model and engine generations): an analysis started for one
        token is accepted only while the token still holds."""
        return (self._model_gen, self._engine_gen)

    def analysis_inputs(self) -> tuple[EngineInfo | None, Any, list[dict[str, Any]], tuple[int, int]]:
        """What an analysis of the open engine needs: engine, model, rejected nodes, token."""
        return self.engine, self.model, list(self.unsupported), self.token()

    def set_analysis(self, analysis: Analysis | None, token: tuple[int, int]) -> bool:
        """Accept ``analysis`` if it was computed for what is open now (``token``); False when stale."""
        if token != self.token():
            return False
        if self.analysis is not analysis:
            release_later(self.analysis)
        self.analysis = analysis
        self.events.emit("analysis", self)
        return True

    def set_unsupported(self, items: Iterable[dict[str, Any]]) -> None:
        """The nodes the TensorRT parser rejects (from a build or a support check) for the open model."""
        self.unsupported = [dict(u) for u in items]
        self._engine_gen += 1  # the analysis must take them into account: recompute
        self.events.emit("unsupported", self)

    # -- runs -----------------------------------------------------------------------------------
    def add_run(self, request: Any, state: Any = None, status: str | None = None) -> RunEntry:
        """A run of ``request`` (a ProfileRequest) starts (``status``: its first status, e.g.
        "running"); returns its entry. The views hear of it once."""
        entry = RunEntry(model=str(request.model), backend=str(request.backend), request=request, state=state)
        if status is not None:
            entry.status = status
        if self.model_path is not None and os.path.abspath(entry.model) == os.path.abspath(self.model_path):
            entry.model_sha256 = self.model_sha256
        self.runs.append(entry)
        self.events.emit("runs", self)
        return entry

    def update_run(self, entry: RunEntry, **changes: Any) -> None:
        """Change fields of ``entry`` (status, record, data, error) and tell the views."""
        for key, value in changes.items():
            setattr(entry, key, value)
        if entry.record is not None and getattr(entry.record, "model_sha256", None):
            entry.model_sha256 = entry.record.model_sha256
        self.events.emit("runs", self)

    def active_runs(self) -> list[RunEntry]:
        """Runs that have not ended."""
        return [r for r in self.runs if r.active]

    def belongs(self, entry: RunEntry, path: str | None = None, sha256: str | None = None) -> bool:
        """True when ``entry`` ran the model at ``path`` (default: the open model; the content hash
        decides when both are known)."""
        if path is None:
            path, sha256 = self.model_path, self.model_sha256
        if path is None:
            return False
        if entry.model_sha256 and sha256:
            return entry.model_sha256 == sha256
        return os.path.abspath(entry.model) == os.path.abspath(path)

    def runs_of_model(self) -> list[RunEntry]:
        """The runs of the open model (all runs when no model is open)."""
        if self.model is None:
            return list(self.runs)
        return [r for r in self.runs if self.belongs(r)]

    def last_run(self) -> RunEntry | None:
        """The latest ended run with data that belongs to the open model (any model when none is open)."""
        for entry in reversed(self.runs_of_model()):
            if entry.data is not None and not entry.active:
                return entry
        return None

    def add_sweep(self, doc: dict[str, Any] | None) -> None:
        """A finished sweep's or shape mix's document (None: one that could not start, ignored)."""
        if doc is None:
            return
        self.sweeps.append(doc)
        self.events.emit("sweeps", self)

    def sweeps_of_model(self) -> list[dict[str, Any]]:
        """The sweeps and mixes of the open model (by content hash where both are known, else by
        path); all of them when no model is open."""
        if self.model_path is None:
            return list(self.sweeps)
        out = []
        for doc in self.sweeps:
            sha = doc.get("model_sha256")
            if sha and self.model_sha256:
                if sha == self.model_sha256:
                    out.append(doc)
            elif os.path.abspath(str(doc.get("model", ""))) == os.path.abspath(self.model_path):
                out.append(doc)
        return out

    def disturb_runs(self, what: str) -> None:
        """Tell every active run that ``what`` happened in this process (its host memory verdict
        cannot tell a leak from that work)."""
        for entry in self.active_runs():
            if entry.state is not None and hasattr(entry.state, "note_disturbance"):
                entry.state.note_disturbance(what)

    # -- accuracy and selection ---------------------------------------------------------------------
    def set_accuracy(self, accuracy: dict[str, Any] | None) -> None:
        """Accuracy results (precision sweep) of the open model."""
        self.accuracy = accuracy
        self.events.emit("accuracy", self)

    def select_layers(self, positions: Iterable[int], source: str = "table") -> Selection:
        """Select engine layers; their ONNX nodes (through the analysis) are selected with them."""
        pos = list(map(int, positions))
        nodes, index = self.analysis.nodes_and_indices_of(pos) if self.analysis is not None else ([], None)
        return self._set_selection(Selection(pos, nodes, source, index))

    def select_nodes(self, names: Iterable[str], source: str = "graph") -> Selection:
        """Select ONNX nodes; the layers they became are selected with them."""
        names = list(dict.fromkeys(names))
        layers: list[int] = []
        if self.analysis is not None:
            layers = self.analysis.layers_of_nodes(names)
        return self._set_selection(Selection(layers, names, source))

    def clear_selection(self, source: str = "") -> Selection:
        """Select nothing (Esc); the history keeps what was selected, so back returns to it."""
        return self._set_selection(Selection(source=source))

    def _set_selection(self, sel: Selection) -> Selection:
        self.selection = sel
        if not self._replaying:
            self.history.push(sel)
        self.events.emit("selection", self)
        return sel

    @contextmanager
    def replaying(self) -> Iterator[None]:
        """Selections made inside are not recorded in the history (the views restoring one)."""
        was, self._replaying = self._replaying, True
        try:
            yield
        finally:
            self._replaying = was

    def selection_back(self) -> Selection | None:
        """The selection to go back to (see :meth:`SelectionHistory.back`); the caller makes it
        inside :meth:`replaying`."""
        return self.history.back(self.selection)

    def selection_forward(self) -> Selection | None:
        """The selection to go forward to, or None."""
        return self.history.forward()

    # -- reports and sessions ---------------------------------------------------------------------
    def is_empty(self) -> bool:
        """Nothing to report: no model, no engine, no run."""
        return self.model is None and self.engine is None and self.last_run() is None

    def report_inputs(self, graph_png: bytes | None = None) -> dict[str, Any]:
        """Keyword arguments of ``report.build_report`` / ``save_session`` for this workspace.

        The report is about the open model; its run is the latest run *of that model*. With no model
        open, it is about the latest run and the model that run ran (never another one)."""
        entry = self.last_run()
        model: Any = self.model
        if model is None and entry is not None and entry.model.lower().endswith(".onnx") and os.path.exists(entry.model):
            model = entry.model
        engine: Any = self.analysis.engine if self.analysis is not None else self.engine
        title = None
        if self.model is not None:
            title = os.path.splitext(os.path.basename(self.model_path or ""))[0]
        elif entry is not None:
            title = os.path.splitext(os.path.basename(entry.model))[0]
        return {"model": model, "engine": engine, "run": entry.data if entry is not None else None,
                "accuracy": self.accuracy, "graph_png": graph_png if self.model is not None else None,
                "title": title}

    def apply_session(self, session: Any) -> str | None:
        """Take a loaded ``report.session.Session``: its engine, its runs (as ended runs under their
        own models) and accuracy. Returns the session's model path for the caller to open (None
        when the session has none)."""
        from trtstudio.profiling.session import RunRecord

        if session.engines:
            rec = session.engines[0]
            self.set_engine(rec.info, rec.paths)
        for rd in session.runs:
            model = rd.model or session.model_path or ""
            record = RunRecord.from_json(rd.record)
            entry = RunEntry(model=model, backend=str(rd.backend or "?"), record=record, status="finished", data=rd,
                             model_sha256=record.model_sha256 if record is not None else None)
            self.runs.append(entry)
        self.events.emit("runs", self)
        self.set_accuracy(session.accuracy)
        if session.sweeps:
            self.sweeps.extend(session.sweeps)
            self.events.emit("sweeps", self)
        restored = getattr(session, "restored_run_settings", None)
        self.run_settings = restored() if restored is not None else None
        return session.model_path
