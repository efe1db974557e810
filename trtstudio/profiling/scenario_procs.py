"""The process runner of a contention scenario: each model in its own process, as a server runs
model instances (no shared interpreter lock, one CUDA context per process).

Children are started with the ``spawn`` method (no fork of a process that holds CUDA or thread
pools). Each opens its model with the scenario's opener (which must therefore be picklable: a
module-level function), then obeys the parent over a pipe: ``phase`` (warm up, say ``ready``), ``go``
(measure with the shared loop of ``scenario_lanes``) or ``abort``, and ``close``. A child streams its
live samples and timeline intervals to the parent every 50 ms and sends its exact latencies at the
end of a phase. Phase ends and stops travel through a shared array the loop reads without a lock. A
child that raises ends the phase with its error; one that dies is named with its exit code; either
way every other child stops and what was measured is kept.
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
import time
from collections.abc import Sequence
from dataclasses import asdict
from multiprocessing.connection import Connection, wait
from typing import Any

from trtstudio.profiling.scenario_common import (
    ModelSpec,
    Opener,
    ScenarioFailure,
    ScenarioState,
    device_key,
    error_info,
    failure_from,
)
from trtstudio.profiling.scenario_lanes import ContentionConfig, LaneResult, measure
from trtstudio.profiling.timeline import Timeline

_STOP, _ALL_DONE = 0, 1  # slots of the shared flags


# -- the child -------------------------------------------------------------------------------------
def child_main(conn: Connection, spec: ModelSpec, opener: Opener, flags: Any, done: Any) -> None:
    """Entry point of a model's process: open, then serve phases until ``close``."""
    try:
        backend = opener(spec)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which names the model
        conn.send(("failed", error_info(exc)))
        return
    conn.send(("loaded", {"backend": backend.name, "device": device_key(backend),
                          "notes": list(getattr(backend, "notes", []))}))
    notes: list[str] = []
    try:
        while True:
            msg = conn.recv()
            if msg[0] != "phase":
                break
            _child_phase(conn, backend, msg[1], flags, done)
    except (EOFError, OSError):
        pass  # the parent went away: close and leave
    finally:
        try:
            backend.close()
        except Exception as exc:  # noqa: BLE001 - closing must not hide what was measured
            notes.append(f"{backend.name}: close failed: {exc}")
        try:
            conn.send(("closed", notes))
        except OSError:
            pass


def _child_phase(conn: Connection, backend: Any, msg: dict[str, Any], flags: Any, done: Any) -> None:
    cfg = ContentionConfig(**msg["config"])
    t_origin = msg["t_origin"]
    lane = LaneResult("")
    try:
        for _ in range(cfg.warmup):
            if flags[_STOP]:
                break
            backend.infer_once()
    except Exception as exc:  # noqa: BLE001
        lane.failure = error_info(exc)
        conn.send(("end", _end(lane)))
        return
    conn.send(("ready", None))
    go = conn.recv()
    if go[0] != "go":
        conn.send(("end", _end(lane)))
        return
    lanes: int = go[1]
    rows: list[tuple[Any, ...]] = []

    def flush(intervals: list[Any]) -> None:
        conn.send(("samples", (rows[:], intervals[:])))
        rows.clear()

    def reached() -> None:
        with done.get_lock():
            done.value += 1
            if done.value >= lanes:
                flags[_ALL_DONE] = 1

    try:
        measure(backend, cfg, lane, lambda: flags[_STOP] or flags[_ALL_DONE], reached,
                lambda *r: rows.append(r), flush, t_origin, cfg.timeline, _time_offset(backend, t_origin))
    except Exception as exc:  # noqa: BLE001 - the phase ends for every lane, the error names this model
        lane.failure = error_info(exc)
        flags[_ALL_DONE] = 1
    if rows:
        flush([])
    conn.send(("end", _end(lane)))


def _time_offset(backend: Any, t_origin: float) -> float:
    """A CUDA backend times its stages from an event of its own: ms from the scenario's start to it."""
    if not (hasattr(backend, "set_time_origin") and getattr(backend, "cuda", False)):
        return 0.0
    backend.set_time_origin(backend.make_time_origin())  # recorded and waited for: now is its time
    return (time.perf_counter() - t_origin) * 1e3


def _end(lane: LaneResult) -> dict[str, Any]:
    lane.finish()
    return {"count": lane.count, "active_s": lane.active_s, "cpu_s": lane.cpu_s, "failure": lane.failure,
            "values": lane.values, "parts": lane.parts}


# -- the parent ------------------------------------------------------------------------------------
class ProcessLanes:
    """One process per model; the same phases as ``ThreadLanes``."""

    isolation = "process"

    def __init__(self, specs: Sequence[ModelSpec], labels: Sequence[str], opener: Opener) -> None:
        self.specs, self.labels, self.opener = list(specs), list(labels), opener
        self._ctx = mp.get_context("spawn")
        self._flags = self._ctx.RawArray("b", 2)
        self._done = self._ctx.Value("i", 0)
        self._procs: list[Any] = []
        self._conns: list[Connection] = []
        self.models: list[dict[str, Any]] = []

    def open(self, state: ScenarioState) -> ScenarioFailure | None:
        """Start a process per model (all at once) and wait until each has opened its model. ValueError
        when the opener cannot be sent to a process (a closure: run such a scenario with threads)."""
        try:
            pickle.dumps(self.opener)
        except Exception as exc:  # noqa: BLE001 - pickle raises several types
            raise ValueError(f"each model runs in its own process, so the opener must be a module-level "
                             f"function; {exc} (use isolation 'thread')") from None
        state.phase = f"load {len(self.specs)} model(s) in their processes"
        for spec in self.specs:
            parent, child = self._ctx.Pipe()
            p = self._ctx.Process(target=child_main, args=(child, spec, self.opener, self._flags, self._done),
                                  name="trtstudio-scenario-model", daemon=True)
            p.start()
            child.close()
            self._procs.append(p)
            self._conns.append(parent)
        failure = None
        for i, label in enumerate(self.labels):
            msg = self._recv(i)
            if msg is None:
                return failure or failure_from(self._died_info(i), label, "load")
            if msg[0] == "failed":
                failure = failure or failure_from(msg[1], label, "load")
            else:
                self.models.append(msg[1])
        return failure

    def _recv(self, i: int) -> Any:
        """The next message of child ``i`` (waiting for it); None when it died first."""
        conn, proc = self._conns[i], self._procs[i]
        while True:
            try:
                if conn.poll(0.2):
                    return conn.recv()
            except (EOFError, OSError):
                return None
            if not proc.is_alive() and not conn.poll(0):
                return None

    def _died_info(self, i: int) -> tuple[str, str, bool]:
        proc = self._procs[i]
        proc.join(timeout=1.0)
        return "", f"the process running the model ended (exit code {proc.exitcode})", False

    def prepare(self, streams: str) -> list[str]:
        """Nothing to share between processes (``ContentionConfig.check`` refuses shared streams)."""
        return []

    def run_phase(self, idx: Sequence[int], cfg: ContentionConfig, state: ScenarioState, timeline: Timeline | None,
                  rows: Sequence[int | None], t_origin: float, live: bool = True) -> list[LaneResult]:
        """Run the lanes ``idx`` at once, each in its process; their results in order. The samples the
        children stream go to the state's live buffers (unless not ``live``) and to ``timeline``."""
        self._flags[_STOP] = self._flags[_ALL_DONE] = 0
        self._done.value = 0
        lanes = {i: LaneResult(self.labels[i]) for i in idx}
        for i in idx:
            self._conns[i].send(("phase", {"config": asdict(cfg), "t_origin": t_origin}))
        sink = _Sink(state if live else None, timeline, rows, self.labels)
        ready = self._gather(list(idx), "ready", lanes, sink, state)
        go = ("go", len(idx)) if len(ready) == len(idx) else ("abort", None)
        for i in ready:
            self._conns[i].send(go)
        self._gather(ready, "end", lanes, sink, state)
        return [lanes[i] for i in idx]

    def _gather(self, waiting: list[int], until: str, lanes: dict[int, LaneResult], sink: _Sink,
                state: ScenarioState) -> list[int]:
        """Read every child in ``waiting`` until it says ``until`` (or ended); the ones that said it."""
        left, said = set(waiting), []
        while left:
            if state.is_stop_requested():
                self._flags[_STOP] = 1
            objs: dict[Any, int] = {}
            for i in left:
                objs[self._conns[i]] = objs[self._procs[i].sentinel] = i
            for obj in wait(list(objs), timeout=0.2):
                i = objs[obj]
                if i not in left:
                    continue
                msg = self._take(i)
                if msg is None:
                    if not self._procs[i].is_alive():  # died: what it sent is kept; every other lane stops
                        lanes[i].failure = self._died_info(i)
                        self._flags[_ALL_DONE] = 1
                        left.discard(i)
                elif msg[0] == "samples":
                    sink.add(i, *msg[1])
                elif msg[0] == "end":
                    _fill(lanes[i], msg[1])
                    left.discard(i)
                elif msg[0] == until:
                    said.append(i)
                    left.discard(i)
        return said

    def _take(self, i: int) -> Any:
        """Child ``i``'s next message if one is there, else None (also at the end of its pipe)."""
        conn = self._conns[i]
        try:
            return conn.recv() if conn.poll(0) else None
        except (EOFError, OSError):
            return None

    def close(self) -> list[str]:
        """Ask every child to close its model and end; notes on closes that failed."""
        notes: list[str] = []
        for conn, proc in zip(self._conns, self._procs, strict=True):
            try:
                if proc.is_alive():
                    conn.send(("close", None))
            except OSError:
                pass
        for i, (conn, proc) in enumerate(zip(self._conns, self._procs, strict=True)):
            deadline = time.monotonic() + 10.0
            while proc.is_alive() and time.monotonic() < deadline:
                try:
                    if conn.poll(0.2):
                        msg = conn.recv()
                        if msg[0] == "closed":
                            notes.extend(f"{self.labels[i]}: {n}" for n in msg[1])
                except (EOFError, OSError):
                    break
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5.0)
                notes.append(f"{self.labels[i]}: its process did not end within 10 s and was terminated")
            conn.close()
        self._procs, self._conns = [], []
        return notes


class _Sink:
    """Where a child's streamed samples go: the live buffer a view reads, and the timeline."""

    def __init__(self, state: ScenarioState | None, timeline: Timeline | None, rows: Sequence[int | None],
                 labels: Sequence[str]) -> None:
        self.state, self.timeline, self.rows, self.labels = state, timeline, rows, labels

    def add(self, i: int, samples: list[tuple[Any, ...]], intervals: list[tuple[int, float, float, int]]) -> None:
        if self.state is not None:
            append = self.state.buffer(self.labels[i]).append
            for r in samples:
                append(*r)
        row = self.rows[i]
        if intervals and self.timeline is not None and row is not None:
            self.timeline.add_many(row, intervals)


def _fill(lane: LaneResult, end: dict[str, Any]) -> None:
    lane.count, lane.active_s, lane.cpu_s = end["count"], end["active_s"], end["cpu_s"]
    lane.values, lane.parts = end["values"], end["parts"]
    if end["failure"] is not None:
        lane.failure = tuple(end["failure"])  # type: ignore[assignment]
