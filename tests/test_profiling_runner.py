"""Runner on real onnxruntime sessions: agreement with an independent timing, stop/pause, errors."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from trtstudio.backends.base import InferTiming
from trtstudio.backends.ort import OrtBackend
from trtstudio.profiling.runner import RunConfig, Runner, RunState


def matmul_model(path: Path, size: int = 128, depth: int = 3) -> Path:
    rng = np.random.default_rng(0)
    nodes, inits, prev = [], [], "x"
    for i in range(depth):
        inits.append(numpy_helper.from_array(rng.standard_normal((size, size)).astype(np.float32), f"w{i}"))
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"], name=f"/mm{i}/MatMul"))
        nodes.append(helper.make_node("Tanh", [f"m{i}"], [f"t{i}"], name=f"/tanh{i}/Tanh"))
        prev = f"t{i}"
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", size])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.save(model, path)
    return path


@pytest.fixture
def backend(tmp_path: Path) -> OrtBackend:
    b = OrtBackend()
    b.load(matmul_model(tmp_path / "m.onnx"), {"threads": 1})
    b.prepare_inputs({"x": (32, 128)})
    return b


def test_runner_agrees_with_independent_timing(backend: OrtBackend) -> None:
    session, outputs, feeds = backend._session, backend._outputs, backend._feeds
    mine, theirs = [], []
    for _ in range(3):  # interleaved trials
        lat = []
        for _ in range(200):
            t0 = time.perf_counter()
            session.run(outputs, feeds)
            lat.append((time.perf_counter() - t0) * 1e3)
        mine.append(float(np.median(lat)))
        result = Runner(backend, RunConfig(warmup=5, iterations=200)).run()
        assert result.count == 200 and result.error is None
        theirs.append(result.latency()["median"])
    a, b = float(np.median(mine)), float(np.median(theirs))
    assert abs(a - b) <= 0.3 * a + 0.02, (a, b)


def test_cold_kept_apart_and_throughput(backend: OrtBackend) -> None:
    result = Runner(backend, RunConfig(warmup=3, iterations=50, batch=32)).run()
    assert result.cold_ms is not None and result.cold_ms > 0
    assert result.count == 50 == result.samples.count
    tp = result.throughput()
    assert tp["samples_per_s"] == pytest.approx(32 * tp["inferences_per_s"])
    doc = result.to_dict()
    assert doc["latency_ms"]["count"] == 50 and doc["error"] is None


def test_duration_mode(backend: OrtBackend) -> None:
    result = Runner(backend, RunConfig(warmup=0, iterations=None, duration_s=0.3)).run()
    assert 0.3 <= result.active_s < 1.5
    assert result.count > 10


def test_pause_resume_stop(backend: OrtBackend) -> None:
    state = RunState()
    runner = Runner(backend, RunConfig(warmup=0, iterations=None), state=state)
    out: list = []
    thread = threading.Thread(target=lambda: out.append(runner.run()))
    thread.start()
    deadline = time.time() + 10
    while state.done < 20 and time.time() < deadline:
        time.sleep(0.01)
    state.pause()
    time.sleep(0.1)
    held = state.done
    time.sleep(0.3)
    assert state.done == held and state.phase == "paused"
    state.resume()
    while state.done < held + 20 and time.time() < deadline:
        time.sleep(0.01)
    assert state.done >= held + 20
    state.request_stop()
    thread.join(5)
    assert not thread.is_alive()
    result = out[0]
    assert result.stopped and result.error is None and result.count == state.done
    assert result.active_s < 10


class RaisesOnFifthCall(OrtBackend):
    """The real ORT backend, failing on its 5th inference."""

    calls = 0

    def infer_once(self) -> InferTiming:
        self.calls += 1
        if self.calls == 5:
            raise RuntimeError("device lost")
        return super().infer_once()


def test_backend_raising_mid_run_keeps_samples(tmp_path: Path) -> None:
    b = RaisesOnFifthCall()
    b.load(matmul_model(tmp_path / "m.onnx"), {})
    b.prepare_inputs({})
    result = Runner(b, RunConfig(warmup=0, iterations=100)).run()
    # call 1 is the cold inference, calls 2-4 are samples, call 5 raises
    assert result.count == 3
    assert result.samples.snapshot()["latency_ms"].size == 3
    assert result.error_text == "RuntimeError: device lost"
    assert any("device lost" in w for w in result.warnings())
    assert result.to_dict()["error"] == "RuntimeError: device lost"
