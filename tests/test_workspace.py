"""The Workspace document without Qt: events, runs that keep their own model, stale analyses,
selection through a real analysis, reports and sessions of the open model only."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx_models as models
import pytest
from conftest import SAMPLE
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from trtstudio.engine.analysis import analyze
from trtstudio.engine.load import load_engine
from trtstudio.graph.model import load_model
from trtstudio.profiling.runner import RunState
from trtstudio.profiling.session import ProfileRequest, RunRecord, run_profile
from trtstudio.report import build_report, load_session, save_session
from trtstudio.report.model import make_session
from trtstudio.report.session import RunData, write_session
from trtstudio.workspace import EVENTS, Events, RunEntry, Selection, Workspace

RTX_LOG = SAMPLE.with_name("mobilenetv2_035.rtx-sm86.build.log")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def two_models(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a" / "model_a.onnx", tmp_path / "b" / "model_b.onnx"
    a.parent.mkdir()
    b.parent.mkdir()
    onnx.save(models.conv_net(channels=8), a)
    onnx.save(models.conv_net(channels=4), b)
    return a, b


def open_model(ws: Workspace, path: Path) -> None:
    """What the window does when a model has loaded in its worker."""
    ws.set_model(load_model(path), sha256=sha(path))


def finished_run(ws: Workspace, path: Path, iterations: int = 20) -> RunEntry:
    """A real ONNX Runtime run of ``path`` listed in ``ws`` as the window lists one."""
    req = ProfileRequest(str(path), iterations=iterations, warmup=1)
    state = RunState()
    entry = ws.add_run(req, state)
    outcome = run_profile(req, state)
    ws.update_run(entry, status="finished", record=outcome.record, data=outcome.run_data())
    return entry


class Recorder:
    def __init__(self, ws: Workspace) -> None:
        self.seen: list[str] = []
        for name in EVENTS:
            ws.events.connect(name, lambda w, name=name: self.seen.append(name))


# -- events ---------------------------------------------------------------------------------------------


def test_events_connect_emit_disconnect() -> None:
    ev = Events(("a", "b"))
    got: list[tuple[str, int]] = []

    def on_a(x: int) -> None:
        got.append(("a", x))

    ev.connect("a", on_a)
    ev.connect("b", lambda x: got.append(("b", x)))
    ev.emit("a", 1)
    ev.emit("b", 2)
    ev.disconnect("a", on_a)
    ev.disconnect("a", on_a)  # twice: no error
    ev.emit("a", 3)
    assert got == [("a", 1), ("b", 2)]
    with pytest.raises(KeyError, match="unknown event 'c'"):
        ev.connect("c", on_a)


def test_each_change_emits_its_event(two_models: tuple[Path, Path]) -> None:
    a, _ = two_models
    ws = Workspace()
    rec = Recorder(ws)
    open_model(ws, a)
    ws.set_engine(load_engine([RTX_LOG]), [str(RTX_LOG)])
    ws.set_unsupported([{"node": "/conv1/Conv", "op_type": "Conv", "reason": "test"}])
    ws.set_accuracy({"fp16": {"max_abs": 0.01}})
    ws.select_nodes(["/conv1/Conv"])
    entry = ws.add_run(ProfileRequest(str(a)))
    ws.update_run(entry, status="running")
    assert rec.seen == ["model", "engine", "unsupported", "accuracy", "selection", "runs", "runs"]
    # a run that starts running is announced once, already running
    statuses: list[str] = []
    ws.events.connect("runs", lambda w: statuses.append(w.runs[-1].status))
    ws.add_run(ProfileRequest(str(a)), status="running")
    assert statuses == ["running"]


# -- runs keep their own model -------------------------------------------------------------------------------


def test_a_run_started_on_a_stays_as_after_b_opens_and_never_reaches_bs_report(two_models: tuple[Path, Path]) -> None:
    """The issue's scenario without Qt: model A runs in a worker, B is opened meanwhile."""
    a, b = two_models
    ws = Workspace()
    open_model(ws, a)
    req = ProfileRequest(str(a), iterations=None, duration_s=0.5, warmup=1)
    state = RunState()
    entry = ws.add_run(req, state)
    assert entry.model_sha256 == sha(a) and entry.active and entry.label() == "model_a.onnx (ort)"
    box: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: box.update(outcome=run_profile(req, state)))
    worker.start()
    ws.update_run(entry, status="running")
    open_model(ws, b)  # while A runs
    ws.disturb_runs("loaded model model_b.onnx")
    assert ws.runs == [entry] and entry.model == str(a) and ws.active_runs() == [entry]
    assert ws.runs_of_model() == [] and ws.last_run() is None
    worker.join(10)
    assert not worker.is_alive()
    outcome = box["outcome"]
    ws.update_run(entry, status="finished", record=outcome.record, data=outcome.run_data())
    assert not entry.active and entry.model_sha256 == sha(a)
    assert state.disturbances == ["loaded model model_b.onnx"]  # the run's host memory verdict knows
    assert "memory verdict of the host: loaded model model_b.onnx during the run" in outcome.to_dict()["warnings"]
    # B's report and session carry no run at all: A's latencies never appear under B's name
    inputs = ws.report_inputs()
    assert inputs["run"] is None and inputs["title"] == "model_b" and inputs["model"].path == str(b)
    doc = build_report(**inputs).to_json()
    assert doc["run"] is None and doc["model"]["path"] == str(b)
    # back on A, its run is reported with A
    open_model(ws, a)
    doc = build_report(**ws.report_inputs()).to_json()
    assert doc["model"]["path"] == doc["run"]["model"] == str(a)
    assert doc["run"]["samples"] == outcome.result.count > 0


def test_report_picks_the_latest_run_of_the_open_model(two_models: tuple[Path, Path]) -> None:
    a, b = two_models
    ws = Workspace()
    open_model(ws, a)
    first_a = finished_run(ws, a)
    run_b = finished_run(ws, b)  # a run of B while A is open (e.g. from a script): listed, not A's
    assert run_b.model_sha256 == sha(b) and ws.belongs(first_a) and not ws.belongs(run_b)
    second_a = finished_run(ws, a, iterations=7)
    assert ws.runs_of_model() == [first_a, second_a] and ws.last_run() is second_a
    assert ws.report_inputs()["run"] is second_a.data
    open_model(ws, b)
    assert ws.last_run() is run_b and ws.report_inputs()["run"].model == str(b)
    failed = ws.add_run(ProfileRequest(str(b)))
    ws.update_run(failed, status="failed", error="no GPU")
    assert ws.last_run() is run_b  # a run without data is never the one reported


def test_content_decides_when_the_file_changed(two_models: tuple[Path, Path]) -> None:
    a, _ = two_models
    ws = Workspace()
    open_model(ws, a)
    entry = finished_run(ws, a)
    onnx.save(models.conv_net(channels=6), a)  # same path, other model
    open_model(ws, a)
    assert not ws.belongs(entry) and ws.report_inputs()["run"] is None
    assert ws.belongs(entry, str(a))  # by path alone (no hash given) it is the same file
    assert not entry.record.same_model(str(a), sha(a))


def test_with_no_model_open_the_report_takes_the_runs_own_model(two_models: tuple[Path, Path]) -> None:
    a, _ = two_models
    ws = Workspace()
    assert ws.is_empty() and ws.report_inputs()["run"] is None
    entry = finished_run(ws, a)
    assert ws.runs_of_model() == [entry] and not ws.is_empty()
    inputs = ws.report_inputs()
    assert inputs["model"] == str(a) and inputs["title"] == "model_a" and inputs["graph_png"] is None
    doc = build_report(**inputs).to_json()
    assert doc["model"]["path"] == doc["run"]["model"] == str(a)


# -- engine, analysis and selection ---------------------------------------------------------------------------


def test_an_analysis_for_what_is_no_longer_open_is_refused(two_models: tuple[Path, Path]) -> None:
    a, b = two_models
    ws = Workspace()
    open_model(ws, a)
    engine = load_engine([RTX_LOG])
    ws.set_engine(engine, [str(RTX_LOG)])
    assert ws.analysis is None and ws.engine_paths == [str(RTX_LOG)]
    engine_in, model_in, unsupported, token = ws.analysis_inputs()
    assert engine_in is engine and model_in is ws.model and unsupported == []
    assert engine_in is not None
    result = analyze(engine_in, model_in, unsupported)
    open_model(ws, b)  # the worker was still computing when B opened
    assert not ws.set_analysis(result, token) and ws.analysis is None
    token = ws.token()
    ws.set_unsupported([{"node": "/conv1/Conv", "op_type": "Conv", "reason": "rejected"}])
    assert not ws.set_analysis(result, token)  # the parser's verdict came in meanwhile
    engine_in, model_in, unsupported, token = ws.analysis_inputs()
    assert unsupported == [{"node": "/conv1/Conv", "op_type": "Conv", "reason": "rejected"}]
    assert engine_in is not None and ws.set_analysis(analyze(engine_in, model_in, unsupported), token) and ws.analysis is not None
    assert ws.report_inputs()["engine"] is ws.analysis.engine  # the analysed copy, with its findings
    open_model(ws, a)
    assert ws.unsupported == []  # the old model's rejected nodes go with it


def test_set_engine_with_its_analysis_and_selection_both_ways() -> None:
    ws = Workspace()
    ws.set_model(load_model(SAMPLE), sha256=sha(SAMPLE))
    engine = load_engine([RTX_LOG])
    ws.set_engine(engine, [str(RTX_LOG)], analysis=analyze(engine, ws.model))
    an = ws.analysis
    assert an is not None and an.model_path == str(SAMPLE)
    conv = next(n.name for n in ws.model.graph.nodes if n.op_type == "Conv")
    sel = ws.select_nodes([conv, conv], source="graph")
    assert sel.nodes == [conv] and sel.layers == an.layers_of(conv) != [] and sel.source == "graph"
    assert all(conv in an.engine.layers[p].onnx_nodes for p in sel.layers)
    back = ws.select_layers(sel.layers, source="table")
    assert conv in back.nodes and back.layers == sel.layers and ws.selection is back
    assert ws.select_layers([10_000]).nodes == []  # out of range: nothing
    ws.set_engine(None)
    assert ws.analysis is None and ws.selection == Selection()
    assert ws.select_nodes([conv]).layers == []  # no analysis: the node alone


# -- sessions --------------------------------------------------------------------------------------------------


def test_session_round_trip_keeps_each_run_under_its_model(two_models: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = two_models
    ws = Workspace()
    open_model(ws, a)
    engine = load_engine([RTX_LOG])
    ws.set_engine(engine, [str(RTX_LOG)])
    finished_run(ws, b)  # not A's: stays out of A's session
    run_a = finished_run(ws, a, iterations=11)
    ws.set_accuracy({"fp16": {"max_abs_error": 0.02}})
    path = save_session(tmp_path / "a.trtstudio", **ws.report_inputs())
    session = load_session(path)
    assert session.model_path == str(a) and [r.model for r in session.runs] == [str(a)]
    fresh = Workspace()
    rec = Recorder(fresh)
    assert fresh.apply_session(session) == str(a)
    assert rec.seen == ["engine", "runs", "accuracy"]
    (entry,) = fresh.runs
    assert entry.model == str(a) and entry.status == "finished" and not entry.active
    assert entry.record.model_sha256 == run_a.record.model_sha256 == sha(a)
    assert entry.data.latency_ms.size == 11 and fresh.accuracy == {"fp16": {"max_abs_error": 0.02}}
    assert fresh.engine is not None and len(fresh.engine.layers) == len(engine.layers)
    open_model(fresh, a)  # the caller opens the session's model
    assert fresh.last_run() is entry
    open_model(fresh, b)
    assert fresh.last_run() is None


def test_session_runs_without_a_full_record_still_load(two_models: tuple[Path, Path], tmp_path: Path) -> None:
    """A session whose run records lack fields (older or hand-edited files) loads; the run keeps its model."""
    a, _ = two_models
    rd = RunData(name="old run", backend="ort", model=str(a), latency_ms=np.ones(5, np.float32),
                 record={"model": str(a), "backend": "ort", "shapes": {"x": [1, 3, 16, 16]}, "later_field": 1})
    path = write_session(tmp_path / "old.trtstudio", make_session(model=str(a), run=rd))
    ws = Workspace()
    assert ws.apply_session(load_session(path)) == str(a)
    (entry,) = ws.runs
    assert entry.model == str(a) and entry.backend == "ort" and entry.model_sha256 is None
    assert entry.record is not None and entry.record.shapes == {"x": [1, 3, 16, 16]}
    open_model(ws, a)
    assert ws.last_run() is entry  # by path: no hash was recorded


# -- whatever the order of events, a report holds only a run of its own model ---------------------------------


class WorkspaceMachine(RuleBasedStateMachine):
    """Models opened, runs started and ended, files rewritten, in any order: the run a report takes
    is always the latest ended run of exactly the model (path and content) open now."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="trtstudio-ws-"))
        self.paths = [self.dir / f"m{i}.onnx" for i in range(3)]
        self.versions = [0, 0, 0]
        for i, p in enumerate(self.paths):
            onnx.save(models.conv_net(channels=2 + i), p)
        self.shas = [sha(p) for p in self.paths]
        self.ws = Workspace()
        self.started: dict[int, tuple[str, str]] = {}  # id(entry) -> (model path, sha at start)

    @rule(i=st.integers(0, 2))
    def open_model(self, i: int) -> None:
        self.ws.set_model(load_model(self.paths[i], infer_shapes=False), sha256=self.shas[i])

    @rule()
    def close_model(self) -> None:
        self.ws.set_model(None)

    @rule(i=st.integers(0, 2))
    def start_run(self, i: int) -> None:
        entry = self.ws.add_run(ProfileRequest(str(self.paths[i])))
        self.started[id(entry)] = (str(self.paths[i]), self.shas[i])

    @precondition(lambda self: bool(self.ws.active_runs()))
    @rule(k=st.integers(0, 10), failed=st.booleans())
    def end_run(self, k: int, failed: bool) -> None:
        entry = self.ws.active_runs()[k % len(self.ws.active_runs())]
        path, digest = self.started[id(entry)]
        if failed:
            self.ws.update_run(entry, status="failed", error="backend failed")
            return
        data = RunData(name=entry.label(), backend="ort", model=path, latency_ms=np.ones(3, np.float32),
                       record={"model": path, "model_sha256": digest, "backend": "ort"})
        self.ws.update_run(entry, status="finished", data=data, record=RunRecord.from_json(data.record))

    @rule(i=st.integers(0, 2))
    def rewrite_file(self, i: int) -> None:
        self.versions[i] += 1
        onnx.save(models.conv_net(channels=2 + i, batch=self.versions[i]), self.paths[i])
        self.shas[i] = sha(self.paths[i])

    @invariant()
    def runs_keep_their_model(self) -> None:
        for entry in self.ws.runs:
            assert entry.model == self.started[id(entry)][0]

    @invariant()
    def report_takes_a_run_of_the_open_model_only(self) -> None:
        entry = self.ws.last_run()
        run = self.ws.report_inputs()["run"]
        assert run is (entry.data if entry is not None else None)
        ended = [e for e in self.ws.runs if e.data is not None]
        if self.ws.model is None:
            expected = ended[-1] if ended else None
        else:
            own = [e for e in ended if self.started[id(e)] == (self.ws.model_path, self.ws.model_sha256)]
            expected = own[-1] if own else None
        assert entry is expected
        if run is not None and self.ws.model is not None:
            assert run.model == self.ws.model_path and run.record["model_sha256"] == self.ws.model_sha256

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


TestWorkspaceMachine = WorkspaceMachine.TestCase
TestWorkspaceMachine.settings = settings(max_examples=100, stateful_step_count=30, deadline=None)
