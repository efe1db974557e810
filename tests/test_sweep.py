"""``profile --sweep``: steps over the batch or an input's shapes (tied dims following), the knee and
the latency budget on recorded samples, real ONNX Runtime sweeps of third-party models with dynamic
inputs (NudeNet's YOLOv8n: batch/height/width; PaddleOCR's recognizer from rapidocr: width, the
sequence axis of a CRNN), the CLI's JSON and errors, and sweeps in sessions and reports."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from test_precision_recipe import _package_file  # a model shipped by an installed package, not imported

from trtstudio.cli import main
from trtstudio.errors import FieldError
from trtstudio.profiling.runner import RunState
from trtstudio.profiling.session import ProfileRequest
from trtstudio.profiling.sweep import (
    StepResult,
    SweepStep,
    best_under_budget,
    knee,
    plan_sweep,
    run_sweep,
)

FAST = {"warmup": 1, "iterations": 4, "threads": 1}


def _nudenet() -> Path:
    return _package_file("nudenet", "320n.onnx")


def _tied_model(path: Path) -> Path:
    """Two inputs declared [batch, seq] (a text model's ids and mask) added together."""
    ids = helper.make_tensor_value_info("input_ids", TensorProto.FLOAT, ["batch", "seq"])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, ["batch", "seq"])
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq"])
    graph = helper.make_graph([helper.make_node("Add", ["input_ids", "attention_mask"], ["y"])], "tied", [ids, mask], [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


SPECS = [{"name": "input_ids", "dtype": "float32", "shape": ["batch", "seq"]},
         {"name": "attention_mask", "dtype": "float32", "shape": ["batch", "seq"]},
         {"name": "scale", "dtype": "float32", "shape": [1]}]
BASE = {"input_ids": (1, 128), "attention_mask": (1, 128), "scale": (1,)}


def test_batch_sweep_sets_every_dynamic_first_dim_and_keeps_the_rest() -> None:
    plan = plan_sweep(["batch=1,4,16"], SPECS, BASE)
    assert plan.axis == "batch" and [s.batch for s in plan.steps] == [1, 4, 16]
    assert plan.steps[2].shapes == {"input_ids": (16, 128), "attention_mask": (16, 128), "scale": (1,)}
    assert [s.size for s in plan.steps] == [1, 4, 16]
    assert plan.dynamic == ["input_ids", "attention_mask"]


def test_shape_sweep_moves_tied_dims_of_other_inputs() -> None:
    plan = plan_sweep(["input_ids=2x64,2x256"], SPECS, BASE)
    assert [s.shapes["attention_mask"] for s in plan.steps] == [(2, 64), (2, 256)]
    assert plan.swept == ["input_ids"] and plan.steps[1].size == 512


def test_two_sweeps_move_together_step_by_step() -> None:
    plan = plan_sweep(["batch=1,2", "input_ids=1x32,2x64"], SPECS, BASE)
    assert plan.steps[1].shapes["input_ids"] == (2, 64) and plan.steps[1].shapes["attention_mask"] == (2, 64)


@pytest.mark.parametrize(("texts", "specs", "words"), [
    (["batch=1,2"], [{"name": "x", "dtype": "float32", "shape": [1, 3]}], "no input has a dynamic first"),
    (["nope=1x2"], SPECS, "not an input of the model"),
    (["scale=2"], SPECS, "fixed at 1"),
    (["input_ids=1x2x3"], SPECS, "rank 2"),
    (["batch=1,2", "input_ids=1x2"], SPECS, "same number of steps"),
    (["batch=0"], SPECS, "1 or more"),
    (["batch"], SPECS, "NAME=V1,V2"),
    (["input_ids=1xa"], SPECS, "not a shape"),
])
def test_bad_sweeps_are_field_errors(texts: list[str], specs: list[dict], words: str) -> None:
    with pytest.raises(FieldError) as err:
        plan_sweep(texts, specs, {s["name"]: tuple(d if isinstance(d, int) else 1 for d in s["shape"]) for s in specs})
    assert err.value.field == "sweep" and words in err.value.message


def _recorded(batches: list[int], per_sample_ms: list[float], noise: float, n: int = 400, seed: int = 0) -> list[StepResult]:
    """Steps whose latencies are drawn around batch x per-sample time (what a run records)."""
    rng = np.random.default_rng(seed)
    out = []
    for b, ms in zip(batches, per_sample_ms, strict=True):
        lat = b * ms * (1.0 + noise * rng.standard_normal(n))
        out.append(StepResult(SweepStep(f"batch {b}", {"x": (b, 8)}, b, b), lat, active_s=float(lat.sum()) / 1e3))
    return out


def test_knee_is_where_throughput_stops_growing_beyond_its_interval() -> None:
    # per-sample time 10, 6, 5.9, 5.8 ms: batch 2 adds 1.67x, batch 4 adds 1.02x (below the 5% growth rule)
    steps = _recorded([1, 2, 4, 8], [10.0, 6.0, 5.9, 5.8], noise=0.02)
    k = knee(steps)
    assert k is not None and k["label"] == "batch 2" and not k["still_growing"]
    assert k["next_gain"]["value"] == pytest.approx(6.0 / 5.9, rel=0.02)


def test_knee_still_growing_and_noise_that_hides_growth() -> None:
    growing = knee(_recorded([1, 2, 4], [10.0, 7.0, 5.0], noise=0.02))
    assert growing is not None and growing["still_growing"] and growing["label"] == "batch 4"
    # an 8% gain measured with 60% noise on 30 samples: its interval reaches below 1.05, so no growth is claimed
    noisy = knee(_recorded([1, 2], [10.0, 9.26], noise=0.6, n=30, seed=3))
    assert noisy is not None and noisy["label"] == "batch 1" and noisy["next_gain"]["low"] < 1.05
    assert knee(_recorded([1], [10.0], noise=0.01)) is None


def test_best_under_budget_is_the_largest_step_within_p99() -> None:
    steps = _recorded([1, 2, 4, 8], [10.0, 6.0, 5.9, 5.8], noise=0.01)
    p99 = [float(np.percentile(s.latencies, 99)) for s in steps]
    got = best_under_budget(steps, budget_ms=(p99[2] + p99[3]) / 2)
    assert got is not None and got["label"] == "batch 4" and got["value_ms"] == pytest.approx(p99[2])
    none = best_under_budget(steps, budget_ms=p99[0] / 2)
    assert none is not None and none["index"] is None and "no step meets" in none["text"]
    assert best_under_budget(steps, None) is None


def test_yolov8_batch_sweep_on_onnxruntime_with_events_and_profiles() -> None:
    model = _nudenet()
    events: list = []
    state = RunState(events.append)
    out = run_sweep(ProfileRequest(str(model), **FAST), ["batch=1,2"], budget_ms=10_000.0, state=state)
    doc = out.to_dict()
    assert doc["schema"] == "trtstudio.sweep/1" and [r["batch"] for r in doc["sweep"]] == [1, 2]
    assert [r["shapes"]["images"][0] for r in doc["sweep"]] == [1, 2]
    for row in doc["sweep"]:
        assert row["count"] == FAST["iterations"] and row["error"] is None
        assert row["samples_per_s"] == pytest.approx(row["throughput"] * row["batch"])
        assert row["p99_ms"] >= row["median_ms"] > 0 and row["peak_memory_bytes"] > 0
    assert doc["best_under_budget"]["label"] == "batch 2" and doc["knee"] is not None
    prof = doc["profiles"]
    assert prof["inputs"] == ["images"] and prof["one"]["profiles"][0]["inputs"]["images"]["max"][0] == 2
    assert [e.kind for e in events if e.kind in ("sweep_plan", "step")] == ["sweep_plan", "step", "step"]
    assert [e.data["row"]["batch"] for e in events if e.kind == "step"] == [1, 2]


def test_stop_between_steps_keeps_the_finished_ones() -> None:
    model = _nudenet()
    state = RunState()
    out = run_sweep(ProfileRequest(str(model), **FAST), ["batch=1,2,4"], state=state,
                    on_step=lambda i, r: state.request_stop())
    doc = out.to_dict()
    assert len(doc["sweep"]) == 1 and doc["stopped"] and "stopped after 1 of 3" in doc["warnings"][-1]


def test_ocr_recognizer_width_sweep_latency_grows_with_width() -> None:
    model = _package_file("rapidocr_onnxruntime", "models/ch_PP-OCRv4_rec_infer.onnx")
    doc = run_sweep(ProfileRequest(str(model), **FAST), ["x=1x3x48x160,1x3x48x640"]).to_dict()
    rows = doc["sweep"]
    assert [r["shapes"]["x"][3] for r in rows] == [160, 640] and rows[0]["size"] < rows[1]["size"]
    assert rows[1]["median_ms"] > rows[0]["median_ms"]


def test_a_failing_step_keeps_its_error_and_the_sweep_goes_on(tmp_path: Path) -> None:
    model = _package_file("rapidocr_onnxruntime", "models/ch_PP-OCRv4_det_infer.onnx")
    # H/W of 0 cannot run a convolution: that step fails, the next one runs
    doc = run_sweep(ProfileRequest(str(model), **FAST), ["x=1x3x0x0,1x3x64x64"]).to_dict()
    assert doc["sweep"][0]["error"] and doc["sweep"][0]["count"] == 0
    assert doc["sweep"][1]["error"] is None and doc["sweep"][1]["count"] == FAST["iterations"]


def test_cli_sweep_json_session_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _tied_model(tmp_path / "tied.onnx")
    session, report = tmp_path / "s.trtstudio", tmp_path / "r.html"
    rc = main(["profile", str(model), "--sweep", "input_ids=1x16,1x64,1x256", "--iterations", "5", "--warmup", "1",
               "--latency-budget", "1000", "--session", str(session), "--report", str(report), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["swept_inputs"] == ["input_ids"]
    assert [r["shapes"]["attention_mask"] for r in doc["sweep"]] == [[1, 16], [1, 64], [1, 256]]
    saved = json.loads(session.read_text())["sweeps"][0]
    assert saved["schema"] == "trtstudio.sweep/1" and len(saved["sweep"]) == 3
    html = report.read_text()
    assert "Shapes: sweeps and mixes" in html and "Latency against the swept size" in html
    assert "--min-shapes" in html and "--minShapes=" in html
    # the session reopens into the same report section
    assert main(["report", str(session), "-o", str(tmp_path / "again.md")]) == 0
    assert "Shape sweep of input_ids" in (tmp_path / "again.md").read_text()


@pytest.mark.parametrize(("argv", "flag"), [
    (["--sweep", "nope=1x2"], "--sweep"),
    (["--latency-budget", "5"], "--latency-budget"),
    (["--sweep", "batch=1,2", "--per-layer"], "--per-layer"),
    (["--sweep", "batch=1,2", "--latency-budget", "-1"], "--latency-budget"),
])
def test_cli_errors_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                        flag: str) -> None:
    model = _tied_model(tmp_path / "tied.onnx")
    assert main(["profile", str(model), "--iterations", "2", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {flag}")


def test_compare_two_sweep_sessions_matches_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _tied_model(tmp_path / "tied.onnx")
    sessions = []
    for name in ("a", "b"):
        s = tmp_path / f"{name}.trtstudio"
        assert main(["profile", str(model), "--sweep", "batch=1,8", "--iterations", "5", "--warmup", "1",
                     "--shapes", "input_ids:1x32,attention_mask:1x32", "--session", str(s), "--json"]) == 0
        sessions.append(s)
    capsys.readouterr()
    html = tmp_path / "c.html"
    assert main(["compare", *map(str, sessions), "-o", str(html)]) == 0
    capsys.readouterr()
    assert main(["compare", *map(str, sessions), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    entry = doc["sweeps"][0]
    assert entry["kind"] == "sweep" and [r["label"] for r in entry["rows"]] == ["batch 1", "batch 8"]
    for r in entry["rows"]:
        assert r["speedup"] == pytest.approx(r["a_ms"] / r["b_ms"])
    assert "Sweeps and shape mixes" in html.read_text()


def test_a_shape_sweep_knee_counts_elements_per_second() -> None:
    """Image sizes: samples/s can only fall, so the knee is read in pixels (elements) per second."""
    rng = np.random.default_rng(0)
    steps = []
    for side, ns_per_elem in ((160, 100.0), (320, 60.0), (640, 59.0)):
        size = 3 * side * side
        lat = size * ns_per_elem / 1e6 * (1.0 + 0.01 * rng.standard_normal(300))
        steps.append(StepResult(SweepStep(f"x {side}", {"x": (1, 3, side, side)}, 1, size), lat,
                                active_s=float(lat.sum()) / 1e3))
    k = knee(steps, unit="elements")
    assert k is not None and k["label"] == "x 320" and k["unit"] == "elements"
    assert k["rate"] == pytest.approx(1e9 / 60.0, rel=0.02)
    assert knee(steps)["label"] == "x 160"  # in samples/s the larger images are only slower


def test_sweep_progress_within_a_step_and_time_left() -> None:
    """The Sweep tab's progress (issue 52 item 5): a step's share and the time left, by duration or
    by inferences."""
    from trtstudio.profiling.sweep import STEP_DURATION_S, sweep_progress

    assert 1.0 <= STEP_DURATION_S <= 10.0  # a few seconds a step
    # duration: 2 of 4 steps took 3.5 s each (3 s measured + 0.5 s loading and warm-up); the third is 1.75 s in
    p = sweep_progress(4, [3.5, 3.5], 1.75, duration_s=3.0)
    assert p["step_fraction"] == pytest.approx(0.5) and p["fraction"] == pytest.approx(2.5 / 4)
    assert p["left_s"] == pytest.approx(1.75 + 3.5)
    # iterations: 250 of 1000 inferences done in 5 s of the first step: 15 s more, then 3 steps at least as long
    p = sweep_progress(4, [], 5.0, done=250, iterations=1000)
    assert p["step_fraction"] == pytest.approx(0.25) and p["left_s"] == pytest.approx(15.0 + 3 * 20.0)
    # a later, slower step sets the pace of the ones after it
    p = sweep_progress(3, [10.0], 30.0, done=500, iterations=1000)
    assert p["left_s"] == pytest.approx(30.0 + 60.0)
    # warming up: no share of the step yet, and no estimate before any pace is known
    p = sweep_progress(4, [], 0.4, done=0, iterations=1000, measuring=False)
    assert p["step_fraction"] == 0.0 and p["left_s"] is None and p["fraction"] == 0.0
    # steps counted only (a precision sweep's variants): the finished ones set the pace
    p = sweep_progress(5, [10.0, 14.0], 4.0)
    assert p["step_fraction"] == 0.0 and p["left_s"] == pytest.approx(8.0 + 2 * 12.0)
    # the last step near its end never claims more than 99 % by time
    assert sweep_progress(2, [3.2], 9.0, duration_s=3.0)["step_fraction"] == pytest.approx(0.99)
