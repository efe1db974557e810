"""Scenarios on real ONNX Runtime sessions on the CPU: contention, load/unload cycles, soak, cold start,
faults (load failure in cycle 7, out of memory, a worker raising, a stop), and the CLI."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from test_profiling_runner import matmul_model

from trtstudio.backends.base import InferTiming
from trtstudio.cli import main
from trtstudio.profiling import scenario as sc
from trtstudio.profiling.scenario import ContentionConfig, CyclesConfig, ModelSpec, ScenarioState, SoakConfig


def weights_model(path: Path, mib: int = 16) -> Path:
    """One MatMul against ``mib`` MiB of weights: each loaded session holds them in host memory."""
    n = int(np.sqrt(mib * 2**20 / 4))
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((n, n)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


@pytest.fixture(scope="module")
def heavy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 2 ms per inference on two threads."""
    return matmul_model(tmp_path_factory.mktemp("m") / "heavy.onnx", size=1024, depth=4)


@pytest.fixture(scope="module")
def light(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return matmul_model(tmp_path_factory.mktemp("l") / "light.onnx", size=64, depth=2)


@pytest.fixture(scope="module")
def weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return weights_model(tmp_path_factory.mktemp("w") / "w16.onnx")


CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 2)


def heavy_spec(path: Path) -> ModelSpec:
    """Each session's thread pool wants every core of the machine: two of them must contend."""
    return ModelSpec(str(path), shapes={"x": (64, 1024)}, options={"threads": max(2, CORES)})


# -- contention ------------------------------------------------------------------------------------
def test_two_models_wanting_every_core_slow_each_other(heavy: Path) -> None:
    result = sc.run_contention([heavy_spec(heavy), heavy_spec(heavy)], ContentionConfig(iterations=40, warmup=3))
    doc = result.to_dict()
    assert doc["schema"] == "trtstudio.scenario/1" and doc["kind"] == "contention"
    assert result.failure is None and not result.stopped
    assert [m["model"] for m in doc["models"]] == ["heavy.onnx", "heavy.onnx #2"]
    for m in doc["models"]:
        alone, together, slow = m["alone"], m["together"], m["slowdown"]
        assert alone["count"] == 40 and together["count"] >= 40
        # the reported slowdown is the ratio of the reported medians and p99s
        assert slow["median"] == pytest.approx(together["median"] / alone["median"])
        assert slow["p99"] == pytest.approx(together["p99"] / alone["p99"])
        assert slow["throughput_kept"] == pytest.approx(together["throughput_per_s"] / alone["throughput_per_s"])
    # each session wants both cores: together they are slower than alone (by how much depends on
    # what else the machine runs: the figure is reported, not fixed here)
    assert np.mean([m["slowdown"]["median"] for m in doc["models"]]) > 1.0
    assert doc["throughput"]["together_per_s"] < doc["throughput"]["alone_sum_per_s"]


def test_timeline_rows_hold_every_measured_inference(light: Path, tmp_path: Path) -> None:
    state = ScenarioState()
    specs = [ModelSpec(str(light), shapes={"x": (4, 64)}), ModelSpec(str(light), shapes={"x": (4, 64)})]
    result = sc.run_contention(specs, ContentionConfig(iterations=50, warmup=2, isolation="thread", gil_check=False), state)
    assert result.timeline is not None
    summary = result.to_dict()["timeline"]
    counts = {m["model"]: m["alone"]["count"] + m["together"]["count"] for m in result.models}
    assert [r["intervals"] for r in summary["rows"]] == list(counts.values())
    assert all(r["device"] == "cpu" and r["host_ms"] > 0 for r in summary["rows"])
    assert summary["devices"] == {}  # no copies on the CPU
    # the live buffers a view reads hold the same samples
    assert {k: b.count for k, b in state.live.items()} == counts
    from trtstudio.profiling.timeline import chrome_trace

    trace = chrome_trace(result.timeline)
    x = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(x) == sum(counts.values()) and all(e["dur"] >= 0 for e in x)


def test_shared_streams_do_not_apply_to_cpu_backends(light: Path) -> None:
    specs = [ModelSpec(str(light), shapes={"x": (2, 64)})] * 2
    result = sc.run_contention(specs, ContentionConfig(iterations=10, warmup=0, streams="shared", alone=False,
                                                       isolation="thread", gil_check=False))
    assert result.failure is None
    assert sum("shared-stream mode does not apply" in n for n in result.notes) == 2


class _RaisingOrt:
    """A real ORT backend that raises at its n-th inference (a worker fault)."""

    def __init__(self, inner: Any, at: int, exc: BaseException) -> None:
        self.inner, self.at, self.exc, self.n = inner, at, exc, 0
        self.name, self.notes = inner.name, []

    def infer_once(self) -> InferTiming:
        self.n += 1
        if self.n == self.at:
            raise self.exc
        return self.inner.infer_once()

    def close(self) -> None:
        self.inner.close()


def test_worker_raising_stops_cleanly_and_names_the_model(light: Path) -> None:
    def opener(spec: ModelSpec) -> Any:  # alone takes exactly 20 calls; the 5th call together raises
        b = sc.open_model(spec)
        return _RaisingOrt(b, 25, RuntimeError("kernel exploded")) if spec.name == "bad" else b

    specs = [ModelSpec(str(light), shapes={"x": (2, 64)}, name="good"),
             ModelSpec(str(light), shapes={"x": (2, 64)}, name="bad")]
    before = threading.active_count()
    result = sc.run_contention(specs, ContentionConfig(iterations=20, warmup=0, isolation="thread"), opener=opener)
    assert result.failure is not None
    assert result.failure.model == "bad" and result.failure.phase == "together"
    assert "kernel exploded" in result.failure.message
    good, bad = result.models
    assert good["alone"]["count"] == 20 and bad["alone"]["count"] == 20  # kept: measured before the fault
    assert bad["together"]["count"] == 4 and good["together"]["count"] >= 0
    assert threading.active_count() == before
    assert result.to_dict()["failure"]["model"] == "bad"


def test_out_of_memory_mid_scenario_is_named_oom(light: Path) -> None:
    class HostOom(_RaisingOrt):
        def infer_once(self) -> InferTiming:
            self.n += 1
            if self.n == self.at:
                np.empty(1 << 62, np.uint8)  # a real allocation failure
            return self.inner.infer_once()

    def opener(spec: ModelSpec) -> Any:
        return HostOom(sc.open_model(spec), 5, MemoryError())

    result = sc.run_contention([ModelSpec(str(light), shapes={"x": (2, 64)})],
                               ContentionConfig(iterations=20, warmup=0, isolation="thread"), opener=opener)
    assert result.failure is not None and result.failure.kind == "oom"
    assert "out of memory" in result.failure.one_line()


def test_stop_request_ends_all_workers_and_keeps_samples(heavy: Path) -> None:
    state = ScenarioState()
    timer = threading.Timer(0.6, state.request_stop)
    timer.start()
    t0 = time.perf_counter()
    result = sc.run_contention([heavy_spec(heavy), heavy_spec(heavy)],
                               ContentionConfig(iterations=100_000, warmup=1, isolation="thread"), state)
    timer.join()
    assert time.perf_counter() - t0 < 10
    assert result.stopped and result.failure is None
    assert result.models[0]["alone"]["count"] > 0


def test_load_failure_names_the_model(light: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    result = sc.run_contention([ModelSpec(str(light)), ModelSpec(str(bad))], ContentionConfig(iterations=5, isolation="thread"))
    assert result.failure is not None and result.failure.model == "bad.onnx" and result.failure.phase == "load"


# -- cycles ----------------------------------------------------------------------------------------
def test_cycles_tell_a_leaking_model_from_a_clean_one(weights: Path) -> None:
    kept: list[Any] = []

    def leaky(spec: ModelSpec) -> Any:  # keeps every ORT session alive: 16 MiB of weights per cycle
        b = sc.open_model(spec)
        kept.append(b._session)  # type: ignore[attr-defined]
        return b

    clean = sc.run_cycles([ModelSpec(str(weights))], CyclesConfig(cycles=8, inferences=3))
    leak = sc.run_cycles([ModelSpec(str(weights))], CyclesConfig(cycles=8, inferences=3), opener=leaky)
    kept.clear()
    assert [c["cycle"] for c in clean.cycles] == list(range(9))
    assert all("host_rss_bytes" in c for c in clean.cycles)
    assert clean.verdict is not None and clean.verdict["verdict"] == "stable", clean.verdict
    assert leak.verdict is not None and leak.verdict["verdict"] == "leak", leak.verdict
    assert leak.verdict["used_slope_bytes_per_cycle"] > 8 * 2**20  # about the 16 MiB kept per cycle
    doc = leak.to_dict()
    assert doc["verdict"]["verdict"] == "leak" and doc["cycles"][3]["models"]["w16.onnx"]["inferences"] == 3


def test_load_failure_in_cycle_7_keeps_six_cycles(weights: Path, tmp_path: Path) -> None:
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    calls = {"n": 0}

    def opener(spec: ModelSpec) -> Any:
        calls["n"] += 1
        if calls["n"] == 7:
            spec = ModelSpec(str(bad), name=spec.label())
        return sc.open_model(spec)

    result = sc.run_cycles([ModelSpec(str(weights))], CyclesConfig(cycles=10, inferences=2), opener=opener)
    f = result.failure
    assert f is not None and f.cycle == 7 and f.model == "w16.onnx" and f.phase == "load" and f.kind == "load"
    assert [c["cycle"] for c in result.cycles] == [0, 1, 2, 3, 4, 5, 6]
    assert "cycle 7" in f.one_line()


def test_cycles_stop_keeps_what_was_measured(weights: Path) -> None:
    state = ScenarioState()

    def on_cycle(rec: dict[str, Any]) -> None:
        if rec["cycle"] == 2:
            state.request_stop()

    result = sc.run_cycles([ModelSpec(str(weights))], CyclesConfig(cycles=10, inferences=2), state, on_cycle=on_cycle)
    assert result.stopped and [c["cycle"] for c in result.cycles] == [0, 1, 2]
    assert result.verdict is not None and result.verdict["verdict"] == "inconclusive"  # 2 cycles after the first


def test_scenario_status_does_not_shadow_progress_events(weights: Path) -> None:
    events: list[Any] = []
    state = ScenarioState()
    state.on_event = events.append
    result = sc.run_cycles([ModelSpec(str(weights))], CyclesConfig(cycles=2, inferences=1), state)
    assert result.failure is None and state.status == {"cycle": 2, "cycles": 2}
    state.progress("after", step=1, total=2)  # the TaskState event method, not the status dict
    assert events[-1].kind == "progress" and events[-1].phase == "after" and events[-1].fraction == 0.5


# -- soak and cold start ---------------------------------------------------------------------------
def test_soak_windows_drift_and_bounded_windows(light: Path) -> None:
    state = ScenarioState()
    cfg = SoakConfig(minutes=1.5 / 60, window_s=0.25, max_windows=4, window_cap=64, rate_hz=400)
    result = sc.run_soak(ModelSpec(str(light), shapes={"x": (2, 64)}), cfg, state)
    doc = result.to_dict()
    assert result.failure is None and doc["kind"] == "soak"
    assert 2 <= len(doc["windows"]) <= 5  # thinned: at most max_windows (+1 before thinning)
    assert doc["windows"][0]["window"] == 0
    w = doc["windows"][-1]
    assert w["count"] > 64  # more than the per-window cap: a reservoir kept the percentiles
    assert 0 < w["median"] <= w["p99"]
    assert 100 < w["throughput_per_s"] < 500  # paced at 400/s
    assert doc["drift"]["median_ratio"] == pytest.approx(doc["windows"][-1]["median"] / doc["windows"][0]["median"])
    assert "host_rss_bytes" in doc["memory"]


def test_coldstart_times_open_and_first_inference(light: Path, weights: Path) -> None:
    result = sc.run_coldstart([ModelSpec(str(light), shapes={"x": (2, 64)}), ModelSpec(str(weights))])
    by = {m["model"]: m for m in result.models}
    assert by["w16.onnx"]["file_bytes"] > 16 * 2**20 and by["w16.onnx"]["open_ms"] > 0
    assert all(m["first_ms"] > 0 and m["second_ms"] > 0 for m in result.models)


# -- CLI -------------------------------------------------------------------------------------------
def test_cli_contention_json(light: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "t.json"
    rc = main(["scenario", "contention", str(light), str(light), "--shapes", "x:2x64", "--iterations", "20",
               "--warmup", "1", "--trace", str(trace), "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "trtstudio.scenario/1" and doc["kind"] == "contention" and doc["streams"] == "dedicated"
    m = doc["models"][0]
    assert set(m) >= {"model", "alone", "together", "slowdown"}
    assert set(m["alone"]) >= {"median", "p99", "jitter_ms", "throughput_per_s"}
    assert json.loads(trace.read_text())["otherData"]["schema"] == "trtstudio.trace/1"


def test_cli_cycles_and_soak_json(weights: Path, light: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", "cycles", str(weights), "--cycles", "3", "--inferences", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "cycles" and len(doc["cycles"]) == 4 and "verdict" in doc
    assert set(doc["cycles"][1]) >= {"cycle", "host_rss_bytes"}
    assert main(["scenario", "soak", str(light), "--shapes", "x:2x64", "--minutes", "0.01", "--window", "0.2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "soak" and doc["windows"]


def test_cli_bad_input_is_one_line_exit_2(tmp_path: Path, light: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", "contention", str(tmp_path / "missing.onnx")]) == 2
    assert capsys.readouterr().err.strip() == f"error: {tmp_path / 'missing.onnx'}: no such file"
    assert main(["scenario", "contention", str(light), "--devices", "0,1,2"]) == 2
    assert "--devices" in capsys.readouterr().err
    assert main(["scenario", "cycles", str(light), "--cycles", "0"]) == 2


def test_cli_failure_exits_1_and_names_model(tmp_path: Path, weights: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"nope")
    assert main(["scenario", "coldstart", str(weights), str(bad)]) == 1
    captured = capsys.readouterr()
    assert "w16.onnx" in captured.out and "model bad.onnx failed during load" in captured.err


def test_cli_contention_says_why_in_text_and_json(heavy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["scenario", "contention", str(heavy), str(heavy), "--shapes", "x:64x1024", "--threads", str(max(2, CORES)),
            "--iterations", "30", "--warmup", "2"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "isolation process" in text and "why:" in text
    why = text.split("why:\n")[1].splitlines()
    assert why[0].startswith("  heavy.onnx: ") and why[1].startswith("  heavy.onnx #2: ")
    assert all("slower together, mostly" in w or "no slowdown" in w for w in why[:2])
    assert main([*args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["isolation"] == "process"
    for m in doc["models"]:
        causes = m["slowdown"].get("causes", [])
        assert all(set(c) == {"cause", "share", "evidence"} for c in causes)
        assert [c["share"] for c in causes] == sorted((c["share"] for c in causes), reverse=True)


@pytest.mark.parametrize("name", ["m.onnx", "m.pt2", "m.ts", "m.engine", "m.plan"])
def test_auto_picks_the_catalogues_backend(name: str) -> None:
    from trtstudio.backends.catalogue import default_backend

    # the one rule `trtstudio profile` also follows: the same file picks the same backend everywhere
    assert ModelSpec(name).backend_name() == default_backend(name)
    assert ModelSpec(name, backend="ort").backend_name() == "ort"


def test_request_errors_name_their_fields(light: Path, tmp_path: Path) -> None:
    from trtstudio.errors import FieldError, InputError

    def field_of(**kw: Any) -> str:
        with pytest.raises(FieldError) as info:
            sc.ScenarioRequest(**{"kind": "contention", "models": [str(light)], **kw}).validate()
        return info.value.field

    assert field_of(iterations=0) == "iterations" and field_of(warmup=-1) == "warmup"
    assert field_of(isolation="fiber") == "isolation" and field_of(backend="onnx") == "backend"
    assert field_of(streams="shared", isolation="process") == "streams"
    assert field_of(devices=[0, 1, 2]) == "devices" and field_of(kind="soak", models=[str(light)] * 2) == "models"
    with pytest.raises(InputError, match="no such file"):
        sc.ScenarioRequest("coldstart", [str(tmp_path / "gone.onnx")]).validate()
    ok = sc.ScenarioRequest("contention", [str(light)], copies=2, devices=[None, None], threads=1)
    ok.validate()
    assert [(s.path, s.device, s.options) for s in ok.specs()] == [(str(light), None, {"threads": 1})] * 2
