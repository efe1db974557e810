"""Contention with each model in its own process (the default isolation), on real ONNX Runtime
sessions: samples come back, a child that raises or dies ends the scenario naming the model and
keeps what was measured, a stop ends every child; and the causes of a slowdown, on measured and on
synthetic figures."""

from __future__ import annotations

import os
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_profiling_runner import matmul_model

from trtstudio.backends.base import InferTiming
from trtstudio.profiling import scenario as sc
from trtstudio.profiling import scenario_contention as sc_contention
from trtstudio.profiling.scenario import ContentionConfig, ModelSpec, ScenarioState
from trtstudio.profiling.scenario_causes import CauseContext, explain


@pytest.fixture(scope="module")
def light(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return matmul_model(tmp_path_factory.mktemp("p") / "light.onnx", size=64, depth=2)


class _Faulty:
    """A real ORT backend whose n-th inference raises, or ends its process (a crash)."""

    def __init__(self, inner: Any, at: int, how: str) -> None:
        self.inner, self.at, self.how, self.n = inner, at, how, 0
        self.name, self.notes = inner.name, []

    def infer_once(self) -> InferTiming:
        self.n += 1
        if self.n == self.at:
            if self.how == "die":
                os._exit(3)
            raise RuntimeError("kernel exploded")
        return self.inner.infer_once()  # type: ignore[no-any-return]

    def close(self) -> None:
        self.inner.close()


def faulty_opener(spec: ModelSpec, at: int, how: str) -> Any:
    """Module level, so a child process can unpickle it: the model named 'bad' is faulty."""
    b = sc.open_model(spec)
    return _Faulty(b, at, how) if spec.name == "bad" else b


def two(light: Path) -> list[ModelSpec]:
    return [ModelSpec(str(light), shapes={"x": (2, 64)}, name="good"), ModelSpec(str(light), shapes={"x": (2, 64)}, name="bad")]


def test_processes_measure_like_threads(light: Path) -> None:
    state = ScenarioState()
    result = sc.run_contention([ModelSpec(str(light), shapes={"x": (2, 64)})] * 2,
                               ContentionConfig(iterations=60, warmup=2), state)
    doc = result.to_json()
    assert result.failure is None and doc["isolation"] == "process"
    for m in doc["models"]:
        assert m["alone"]["count"] == 60 and m["together"]["count"] >= 60 and m["device"] == "cpu"
        assert m["alone"]["cpu_ms_per_inference"] > 0  # each process's own CPU time
        assert m["slowdown"]["median"] == pytest.approx(m["together"]["median"] / m["alone"]["median"])
    # the live buffers got every sample the children streamed, the timeline every interval
    counts = {m["model"]: m["alone"]["count"] + m["together"]["count"] for m in doc["models"]}
    assert {k: b.count for k, b in state.live.items()} == counts
    assert [r["intervals"] for r in doc["timeline"]["rows"]] == list(counts.values())
    assert all(r["row"].endswith("(process)") for r in doc["timeline"]["rows"])


def test_a_child_that_raises_names_its_model_and_keeps_the_rest(light: Path) -> None:
    before = threading.active_count()
    result = sc.run_contention(two(light), ContentionConfig(iterations=20, warmup=0), opener=partial(faulty_opener, at=25, how="raise"))
    f = result.failure
    assert f is not None and f.model == "bad" and f.phase == "together" and "kernel exploded" in f.message
    good, bad = result.models
    assert good["alone"]["count"] == 20 and bad["alone"]["count"] == 20  # measured before the fault
    assert bad["together"]["count"] == 4
    assert threading.active_count() == before
    import multiprocessing

    assert multiprocessing.active_children() == []


def test_a_child_that_dies_names_its_model_and_exit_code(light: Path) -> None:
    result = sc.run_contention(two(light), ContentionConfig(iterations=20, warmup=0), opener=partial(faulty_opener, at=30, how="die"))
    f = result.failure
    assert f is not None and f.model == "bad" and f.phase == "together"
    assert f.message == "the process running the model ended (exit code 3)"
    assert result.models[0]["alone"]["count"] == 20  # the other model's figures are kept


def test_stop_ends_every_child(light: Path) -> None:
    state = ScenarioState()
    stopped_at: list[float] = []

    def stop_once_measuring() -> None:  # the children take a while to start on a busy machine
        deadline = time.perf_counter() + 120
        while time.perf_counter() < deadline and not any(b.count > 100 for b in list(state.live.values())):
            time.sleep(0.05)
        stopped_at.append(time.perf_counter())
        state.request_stop()

    timer = threading.Thread(target=stop_once_measuring)
    timer.start()
    result = sc.run_contention([ModelSpec(str(light), shapes={"x": (2, 64)})] * 2,
                               ContentionConfig(iterations=10_000_000, warmup=1), state)
    timer.join()
    assert time.perf_counter() - stopped_at[0] < 15  # the children stopped and closed soon after
    assert result.stopped and result.failure is None
    assert result.models[0]["alone"]["count"] > 0


def test_a_load_failure_in_a_child_names_the_model(light: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    result = sc.run_contention([ModelSpec(str(light)), ModelSpec(str(bad))], ContentionConfig(iterations=5))
    assert result.failure is not None and result.failure.model == "bad.onnx" and result.failure.phase == "load"
    assert "onnxruntime cannot load the model" in result.failure.message


def test_threads_measure_the_interpreter_lock_against_processes(light: Path) -> None:
    state = ScenarioState()
    result = sc.run_contention([ModelSpec(str(light), shapes={"x": (2, 64)})] * 2,
                               ContentionConfig(iterations=40, warmup=2, isolation="thread"), state)
    assert result.failure is None and result.to_json()["isolation"] == "thread"
    for m in result.models:
        check = m["interpreter_lock_check"]  # the same models together as threads and as processes, in rounds
        assert check["rounds"] == sc_contention.GIL_ROUNDS
        assert check["processes"] is m["together_processes"]
        for side in ("threads", "processes"):  # each round ran 40 // rounds = 10 inferences per model at least
            assert check[side]["count"] >= 10 * check["rounds"] and check[side]["median"] > 0
        lock = [c for c in m["slowdown"].get("causes", []) if c["cause"] == "interpreter_lock"]
        for c in lock:  # where the lock explains time, its evidence holds both medians
            assert (f"median {check['threads']['median']:.3f} ms as threads vs {check['processes']['median']:.3f} ms "
                    "as processes") in c["evidence"]
        # the check's samples stay out of the live view: it shows the scenario's phases
        assert state.live[m["model"]].count == m["alone"]["count"] + m["together"]["count"]


# -- causes on synthetic figures -------------------------------------------------------------------
def _model(name: str, alone: dict[str, float], together: dict[str, float], device: str = "cuda:0", **extra: Any) -> dict[str, Any]:
    m = {"model": name, "device": device, "alone": alone, "together": together, **extra}
    m["slowdown"] = {"median": together["median"] / alone["median"]}
    return m


def test_launch_bound_threads_blame_the_interpreter_lock() -> None:
    # the H200 case: two YOLOv8n copies as threads, 2.1x slower, enqueue = GPU time, GPU 20% busy
    alone = {"median": 2.0, "compute_ms": 1.6, "enqueue_ms": 1.6, "h2d_ms": 0.1, "d2h_ms": 0.05,
             "cpu_ms_per_inference": 1.9}
    together = {"median": 4.2, "compute_ms": 3.7, "enqueue_ms": 3.7, "h2d_ms": 0.12, "d2h_ms": 0.06}
    check = {"rounds": 4, "threads": {"median": 4.2}, "processes": {"median": 2.3}}
    models = [_model(f"y{i}", dict(alone), dict(together), interpreter_lock_check=check) for i in range(2)]
    explain(models, CauseContext("thread", 16, [None, None], {"cuda:0": {"kernel_share": 0.4, "nvml_util_percent": 20.0}}))
    # the rest of the host-side growth: the host sets the pace (launches), GPU 20% busy
    enqueue = [c for c in models[0]["slowdown"]["causes"] if c["cause"] == "enqueue_bound"]
    assert enqueue and "the host sets the pace; GPU busy 20% (NVML)" in enqueue[0]["evidence"]
    causes = models[0]["slowdown"]["causes"]
    assert causes[0]["cause"] == "interpreter_lock"
    assert causes[0]["share"] == pytest.approx(np.log(4.2 / 2.3) / np.log(4.2 / 2.0))
    assert [c["cause"] for c in causes] == sorted((c["cause"] for c in causes), key=lambda k: -{c["cause"]: c["share"] for c in causes}[k])
    assert sum(c["share"] for c in causes) == pytest.approx(1.0)
    assert "gpu_busy" not in [c["cause"] for c in causes]  # launch-bound: kernel time grew because the host was late
    assert models[0]["slowdown"]["summary"].startswith(
        "mostly sharing one Python process (the interpreter lock) (81% of the extra time)")


def test_a_saturated_gpu_is_blamed_on_the_gpu() -> None:
    alone = {"median": 10.0, "compute_ms": 9.0, "enqueue_ms": 0.3, "h2d_ms": 0.4, "d2h_ms": 0.4, "cpu_ms_per_inference": 0.5}
    together = {"median": 19.5, "compute_ms": 17.8, "enqueue_ms": 0.3, "h2d_ms": 0.8, "d2h_ms": 0.7}
    models = [_model(f"m{i}", dict(alone), dict(together)) for i in range(2)]
    explain(models, CauseContext("process", 16, [], {"cuda:0": {"kernel_share": 1.8, "nvml_util_percent": 99.0,
                                                                 "copy_overlapped_share": 0.6}}))
    causes = {c["cause"]: c for c in models[0]["slowdown"]["causes"]}
    assert list(causes)[0] == "gpu_busy" and causes["gpu_busy"]["share"] == pytest.approx(8.8 / 9.5)
    assert causes["copy_engine"]["share"] == pytest.approx(0.7 / 9.5)
    assert "NVML 99%" in causes["gpu_busy"]["evidence"] and "60% of copy time overlapped" in causes["copy_engine"]["evidence"]


def test_cpu_models_wanting_more_cores_than_there_are() -> None:
    # estimated: without each model's own CPU time together, the cores they keep busy alone are summed
    alone = {"median": 1.0, "cpu_ms_per_inference": 1.9}
    models = [_model(f"c{i}", dict(alone), {"median": 1.9}, device="cpu") for i in range(2)]
    explain(models, CauseContext("process", 2, [2, 2]))
    top = models[0]["slowdown"]["causes"][0]
    assert top["cause"] == "cpu_cores" and top["share"] == pytest.approx(0.9 / 0.9)
    assert "2 models, intra-op threads 2 + 2 keep 3.8 cores busy, 2 available" in top["evidence"]
    # measured (processes): mean latency = CPU per inference / cores received; here the cores halve
    # (2x) and the CPU time per inference grows 1.08x: log 2 / log 2.16 of the extra time is CPU cores
    a = {"median": 73.0, "mean": 75.0, "cpu_ms_per_inference": 24.0, "cores_used": 0.32}
    t = {"median": 158.0, "mean": 162.0, "cpu_ms_per_inference": 25.92, "cores_used": 0.16}
    measured = [_model(f"d{i}", dict(a), dict(t), device="cpu") for i in range(2)]
    explain(measured, CauseContext("process", 2, [1, 1], load_average=9.6))
    causes = {c["cause"]: c for c in measured[0]["slowdown"]["causes"]}
    assert causes["cpu_cores"]["share"] == pytest.approx(np.log(2.0) / np.log(162 / 75))
    assert causes["other"]["share"] == pytest.approx(1 - causes["cpu_cores"]["share"])
    assert causes["cpu_cores"]["evidence"] == ("while it ran it got 0.32 cores alone and 0.16 together: 2 models, intra-op "
                                               "threads 1 + 1, on 2 cores; load average 9.6: other processes want cores too")
    assert "CPU time per inference 24.00 -> 25.92 ms" in causes["other"]["evidence"]
    steady = [_model("s", {"median": 1.0}, {"median": 1.01}, device="cpu")]
    explain(steady, CauseContext("process", 2))
    assert steady[0]["slowdown"]["causes"] == [] and steady[0]["slowdown"]["summary"].startswith("no slowdown")


def test_a_lock_check_taken_under_other_load_is_read_as_a_ratio() -> None:
    # the check ran when the machine was quieter than during the phases: its medians are below alone
    check = {"rounds": 4, "threads": {"median": 40.5}, "processes": {"median": 39.5}}
    m = _model("d", {"median": 104.0}, {"median": 188.0}, device="cpu", interpreter_lock_check=check)
    explain([m], CauseContext("thread", 2))
    lock = next(c for c in m["slowdown"]["causes"] if c["cause"] == "interpreter_lock")
    assert lock["share"] == pytest.approx(np.log(40.5 / 39.5) / np.log(188 / 104))  # about 4 %, not all of it
