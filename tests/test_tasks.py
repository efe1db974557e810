"""The one task abstraction (trtstudio.tasks): cooperative stop, pause gate, typed events, and the
real tasks that use it (ONNX Runtime calibration, TensorRT-RTX builds, profiling runs). No Qt."""

from __future__ import annotations

import importlib.util
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx_models as models
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trtstudio.errors import BackendError, BuildError, FieldError, InputError
from trtstudio.tasks import Cancelled, TaskEvent, TaskState, error_text

HAS_RTX = importlib.util.find_spec("tensorrt_rtx") is not None


class Worker:
    """A plain thread running ``work(state)`` the way ui.workers runs a task: result or error kept."""

    def __init__(self, work: Any, state: TaskState) -> None:
        self.result: Any = None
        self.error: BaseException | None = None

        def main() -> None:
            try:
                self.result = work(state)
            except BaseException as exc:  # noqa: BLE001 - kept for the test to look at
                self.error = exc

        self.thread = threading.Thread(target=main, name="test-task")
        self.thread.start()

    def join(self) -> None:
        self.thread.join(10)
        assert not self.thread.is_alive()


def counting_task(state: TaskState, total: int = 1_000_000) -> int:
    """Counts, reporting progress and checking for a stop at every step; pauses where asked."""
    for step in range(total):
        state.wait_while_paused()
        state.check()
        state.progress("count", step=step, total=total)
        time.sleep(0.0005)
    return total


def test_request_stop_from_another_thread_raises_cancelled_in_the_task() -> None:
    events: list[Any] = []
    state = TaskState(on_event=events.append)
    w = Worker(counting_task, state)
    deadline = time.monotonic() + 5
    while len(events) < 5 and time.monotonic() < deadline:
        time.sleep(0.001)
    state.request_stop()
    w.join()
    assert isinstance(w.error, Cancelled) and w.result is None
    assert state.is_stop_requested()
    assert all(isinstance(e, TaskEvent) and e.kind == "progress" and e.phase == "count" for e in events)
    steps = [e.step for e in events]
    assert steps == list(range(len(steps))) and 5 <= len(steps) < 1_000_000


def test_a_task_that_finishes_is_not_cancelled() -> None:
    state = TaskState()
    w = Worker(lambda s: counting_task(s, total=20), state)
    w.join()
    assert w.error is None and w.result == 20
    state.check()  # no stop asked: no exception


def test_pause_holds_the_task_and_stop_wakes_it() -> None:
    events: list[TaskEvent] = []
    state = TaskState(on_event=events.append)
    w = Worker(counting_task, state)
    deadline = time.monotonic() + 5
    while not events and time.monotonic() < deadline:
        time.sleep(0.001)
    state.pause()
    assert state.is_paused()
    time.sleep(0.05)  # at most one step was under way when pause was asked
    held = len(events)
    time.sleep(0.15)
    assert len(events) == held  # no progress while paused
    state.resume()
    deadline = time.monotonic() + 5
    while len(events) <= held and time.monotonic() < deadline:
        time.sleep(0.001)
    assert len(events) > held and not state.is_paused()
    state.pause()
    time.sleep(0.05)
    state.request_stop()  # a paused task wakes up to end
    w.join()
    assert isinstance(w.error, Cancelled) and not state.is_paused()


def test_events_of_every_kind_reach_the_sink_in_order() -> None:
    seen: list[Any] = []
    state = TaskState(on_event=seen.append)
    state.progress("build", "parsing", 1, 4)
    state.log("warning", "weights are FP32")
    state.event("cold", cold_ms=3.5)
    state.set_progress({"phase": "legacy"})
    assert [getattr(e, "kind", None) for e in seen] == ["progress", "log", "cold", None]
    assert seen[0].fraction == 0.25 and seen[0].message == "parsing"
    assert seen[1].severity == "warning" and seen[1].message == "weights are FP32"
    assert seen[2].data == {"cold_ms": 3.5}
    assert seen[3] == {"phase": "legacy"}
    TaskState().progress("no sink")  # without a sink, events go nowhere and nothing fails


@given(st.integers(-10, 10_000) | st.none(), st.integers(-5, 10_000) | st.none())
def test_event_fraction_is_a_share_or_none(step: int | None, total: int | None) -> None:
    f = TaskEvent("progress", step=step, total=total).fraction
    if step is None or not total:
        assert f is None
    else:
        assert f is not None and 0.0 <= f <= 1.0
        if 0 <= step <= total:
            assert f == pytest.approx(step / total)


def test_error_text_is_one_line_without_a_traceback() -> None:
    assert error_text(InputError("m.onnx", "not a protobuf")) == "m.onnx: not a protobuf"
    assert error_text(FieldError("shapes", "input 'x': 3 dims, the model has 4")) == \
        "shapes: input 'x': 3 dims, the model has 4"
    assert error_text(BackendError("onnxruntime is not installed\npip install onnxruntime")) == \
        "onnxruntime is not installed"
    assert error_text(BuildError()) == "BuildError"
    assert error_text(ZeroDivisionError("division by zero")) == "ZeroDivisionError: division by zero"
    assert error_text(Cancelled()) == "Cancelled"


# -- real tasks ---------------------------------------------------------------------------------------------


def test_calibration_is_cancelled_through_its_state(tmp_path: Path) -> None:
    """ONNX Runtime calibration (a real precision task) stops when its TaskState is asked to."""
    from trtstudio.precision.quantize import calibrate
    from trtstudio.precision.state import PrecisionState

    path = tmp_path / "conv.onnx"
    onnx.save(models.conv_net(batch=1), path)
    rng = np.random.default_rng(0)
    samples = [{"x": rng.standard_normal((1, 3, 16, 16)).astype(np.float32)} for _ in range(12)]
    reports: list[dict[str, Any]] = []
    events: list[TaskEvent] = []

    def stop_after_three(report: dict[str, Any]) -> None:
        reports.append(report)
        if report["step"] >= 3:
            state.request_stop()

    state = PrecisionState(on_progress=stop_after_three)
    state.on_event = events.append
    with pytest.raises(Cancelled):
        calibrate(path, samples, "minmax", state=state)
    assert [r["step"] for r in reports] == [1, 2, 3]  # the reader gave no sample after the stop
    assert [(e.kind, e.step, e.total) for e in events] == [("progress", i, 12) for i in (1, 2, 3)]
    full = calibrate(path, samples, "minmax", state=PrecisionState())  # the same task, not stopped
    assert full and all(lo <= hi for lo, hi in full.values())


def test_profiling_run_stopped_before_it_measures(tmp_path: Path) -> None:
    """A profiling run whose RunState is stopped up front ends at once, marked stopped, samples empty."""
    from trtstudio.profiling.runner import RunState
    from trtstudio.profiling.session import ProfileRequest, run_profile

    path = tmp_path / "conv.onnx"
    onnx.save(models.conv_net(batch=1), path)
    events: list[TaskEvent] = []
    state = RunState(on_event=events.append)
    state.request_stop()
    outcome = run_profile(ProfileRequest(str(path), iterations=10_000, warmup=50), state)
    assert outcome.result.stopped and outcome.result.count == 0
    assert state.phase == "finished"
    assert [e.kind for e in events] == ["loaded", "cold"]


@pytest.mark.rtx
@pytest.mark.skipif(not HAS_RTX, reason="tensorrt_rtx is not installed")
def test_build_callbacks_carry_progress_logs_and_cancel_into_a_real_build(tmp_path: Path) -> None:
    from conftest import SAMPLE

    from trtstudio.backends.build import BuildOptions, build_engine

    events: list[TaskEvent] = []
    state = TaskState()

    def sink(event: TaskEvent) -> None:
        events.append(event)
        if sum(e.kind == "progress" for e in events) >= 3:
            state.request_stop()

    state.on_event = sink
    out = tmp_path / "sample.engine"
    res = build_engine(SAMPLE, out, BuildOptions(backend="rtx"), **state.build_callbacks())
    assert not res.ok and res.cancelled and not out.exists()
    progress = [e for e in events if e.kind == "progress"]
    assert len(progress) >= 3 and all(e.phase for e in progress)
    assert all(e.severity and e.message for e in events if e.kind == "log")
