"""TrtBackend against test doubles of the TensorRT module and of the CUDA helpers (no GPU here).

``FakeTrtModule_test_double`` imitates the documented TensorRT Python API surface TrtBackend uses
(Runtime.deserialize_cuda_engine, ICudaEngine I/O-tensor queries and profiles, IExecutionContext
set_input_shape / set_tensor_address / execute_async_v3 / profiler, the engine inspector);
``FakeCuda_test_double`` keeps "device" buffers in host memory. The engine computes y = 2 * x.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from trtstudio.backends.tensorrt import TrtBackend, onnx_nodes_from_layer
from trtstudio.errors import InputError

LAYERS = [("conv1 + relu1", "[ONNX Layer: /conv1/Conv]\x1e[ONNX Layer: /relu1/Relu]"), ("fc", "[ONNX Layer: /fc/Gemm]")]


class FakeCuda_test_double:
    """Host-memory stand-in for trtstudio.backends.cuda: buffers, streams and events."""

    registry: dict[int, np.ndarray] = {}

    class CudaContext:
        def __init__(self, device: int = 0) -> None:
            self.pushes = 0

        def push(self) -> None:
            self.pushes += 1

        def pop(self) -> None:
            self.pushes -= 1

    class _Buf:
        def __init__(self, nbytes: int) -> None:
            self.mem = np.zeros(nbytes, dtype=np.uint8)
            FakeCuda_test_double.registry[id(self)] = self.mem
            self.freed = False

        def __int__(self) -> int:
            return id(self)

        def free(self) -> None:
            self.freed = True

    class _Stream:
        handle = 0

        def synchronize(self) -> None:
            pass

    class _Event:
        def __init__(self) -> None:
            self.t = 0.0

        def record(self, stream: Any) -> None:
            self.t = time.perf_counter()

        def synchronize(self) -> None:
            pass

        def time_since(self, other: Any) -> float:
            return (self.t - other.t) * 1e3

    @staticmethod
    def pinned_empty(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        return np.empty(shape, dtype)

    @classmethod
    def device_alloc(cls, nbytes: int) -> Any:
        return cls._Buf(max(1, nbytes))

    @classmethod
    def new_stream(cls) -> Any:
        return cls._Stream()

    @classmethod
    def new_event(cls) -> Any:
        return cls._Event()

    @staticmethod
    def htod_async(dev: Any, host: np.ndarray, stream: Any) -> None:
        dev.mem[: host.nbytes] = host.reshape(-1).view(np.uint8)

    @staticmethod
    def dtoh_async(host: np.ndarray, dev: Any, stream: Any) -> None:
        host.reshape(-1).view(np.uint8)[:] = dev.mem[: host.nbytes]


def host_compute(ctx: FakeContext, stream: int) -> None:
    """y = 2 * x on the double's host-side 'device' memory."""
    reg = FakeCuda_test_double.registry
    x = reg[ctx.addresses["x"]].view(np.float32)
    n = int(np.prod(ctx.shapes["x"]))
    reg[ctx.addresses["y"]].view(np.float32)[:n] = 2.0 * x[:n]


class FakeContext:
    def __init__(self, engine: FakeEngine) -> None:
        self.engine = engine
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.addresses: dict[str, int] = {}
        self.profiler: Any = None
        self.executed = 0

    def set_input_shape(self, name: str, shape: tuple[int, ...]) -> bool:
        mn, _, mx = self.engine.profile
        if not all(lo <= d <= hi for d, lo, hi in zip(shape, mn, mx, strict=True)):
            return False
        self.shapes[name] = tuple(shape)
        return True

    def get_tensor_shape(self, name: str) -> tuple[int, ...]:
        return self.shapes["x"]  # y has x's shape

    def set_tensor_address(self, name: str, address: int) -> bool:
        self.addresses[name] = address
        return True

    def execute_async_v3(self, stream: int) -> bool:
        self.engine.compute(self, stream)
        self.executed += 1
        if self.profiler is not None:
            for i, (name, _) in enumerate(LAYERS):
                self.profiler.report_layer_time(name, 0.1 * (i + 1) + 0.001 * self.executed)
        return True


class FakeInspector:
    execution_context: Any = None

    def get_layer_information(self, i: int, fmt: Any) -> str:
        return json.dumps({"Name": LAYERS[i][0], "Metadata": LAYERS[i][1]})


class FakeEngine:
    num_io_tensors = 2
    num_layers = len(LAYERS)
    device_memory_size_v2 = 12345
    profile = ((1, 4), (2, 4), (8, 4))

    def __init__(self, compute: Any) -> None:
        self.compute = compute

    def get_tensor_name(self, i: int) -> str:
        return ["x", "y"][i]

    def get_tensor_mode(self, name: str) -> str:
        return "INPUT" if name == "x" else "OUTPUT"

    def get_tensor_dtype(self, name: str) -> str:
        return "FLOAT"

    def get_tensor_shape(self, name: str) -> tuple[int, ...]:
        return (-1, 4)

    def get_tensor_profile_shape(self, name: str, index: int) -> list[tuple[int, ...]]:
        return list(self.profile)

    def create_execution_context(self) -> FakeContext:
        return FakeContext(self)

    def create_engine_inspector(self) -> FakeInspector:
        return FakeInspector()


def make_fake_trt(compute: Any = host_compute) -> Any:
    """A FakeTrtModule_test_double whose engines run ``compute(context, stream)``."""

    class FakeTrtModule_test_double:
        class Logger:
            WARNING = 2

            def __init__(self, level: int) -> None:
                self.level = level

        class TensorIOMode:
            INPUT = "INPUT"
            OUTPUT = "OUTPUT"

        class LayerInformationFormat:
            JSON = "JSON"

        class IProfiler:
            def __init__(self) -> None:
                pass

        class Runtime:
            def __init__(self, logger: Any) -> None:
                pass

            def deserialize_cuda_engine(self, data: bytes) -> FakeEngine | None:
                return FakeEngine(compute) if data.startswith(b"FAKEPLAN") else None

        @staticmethod
        def nptype(dt: str) -> type:
            return {"FLOAT": np.float32}[dt]

    return FakeTrtModule_test_double


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    p = tmp_path / "model.plan"
    p.write_bytes(b"FAKEPLAN")
    return p


def open_fake(plan: Path, cuda: Any = FakeCuda_test_double, compute: Any = host_compute, **options: Any) -> TrtBackend:
    b = TrtBackend(trt_module=make_fake_trt(compute), cuda_api=cuda)
    b.load(plan, options)
    return b


def test_specs_default_shape_is_profile_opt(plan: Path) -> None:
    b = open_fake(plan)
    assert b.input_specs() == [{"name": "x", "dtype": "float32", "shape": [-1, 4]}]
    b.prepare_inputs({})
    assert b.shapes == {"x": (2, 4)}
    assert any("opt shape 2x4" in n for n in b.notes)


def test_infer_computes_and_times_stages(plan: Path) -> None:
    b = open_fake(plan)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    b.prepare_inputs({}, {"x": x})
    t = b.infer_once()
    np.testing.assert_array_equal(b.output("y"), 2 * x)
    assert t.h2d_ms is not None and t.compute_ms is not None and t.d2h_ms is not None
    assert t.total_ms >= t.h2d_ms + t.compute_ms + t.d2h_ms - 1e-6
    mem = b.memory()
    assert mem["context_device_bytes"] == 12345 and mem["io_device_bytes"] == 2 * x.nbytes
    b.close()


def test_shape_outside_profile_names_input_and_range(plan: Path) -> None:
    b = open_fake(plan)
    with pytest.raises(InputError, match=r"input 'x' shape 9x4 is outside the optimization profile \(min 1x4, max 8x4\)"):
        b.prepare_inputs({"x": (9, 4)})
    with pytest.raises(InputError, match="fixed"):
        b.prepare_inputs({"x": (2, 5)})


def test_bad_plan_is_input_error(tmp_path: Path) -> None:
    p = tmp_path / "bad.plan"
    p.write_bytes(b"not an engine")
    with pytest.raises(InputError, match="cannot deserialize"):
        TrtBackend(trt_module=make_fake_trt(), cuda_api=FakeCuda_test_double).load(p, {})


def test_per_layer_profile_medians_and_onnx_nodes(plan: Path) -> None:
    b = open_fake(plan)
    b.prepare_inputs({"x": (4, 4)})
    rows = b.per_layer_profile(5)
    by = {r["name"]: r for r in rows}
    # the double reports 0.1*(i+1) + 0.001*k for runs k = 1..5: median at k = 3
    assert by["conv1 + relu1"]["time_ms"] == pytest.approx(0.103)
    assert by["fc"]["time_ms"] == pytest.approx(0.203)
    assert by["conv1 + relu1"]["onnx_nodes"] == ["/conv1/Conv", "/relu1/Relu"]
    assert by["fc"]["provider"] == "TensorRT"


def test_runner_over_fake_engine_records_stage_parts(plan: Path) -> None:
    from trtstudio.profiling.runner import RunConfig, Runner

    b = open_fake(plan)
    b.prepare_inputs({"x": (8, 4)})
    result = Runner(b, RunConfig(warmup=2, iterations=50)).run()
    assert result.count == 50 and result.error is None
    parts = result.exact.part_means()
    assert set(parts) == {"h2d_ms", "compute_ms", "d2h_ms", "enqueue_ms"}
    assert all(v is not None and v >= 0 for v in parts.values())


def test_cuda_graph_without_capture_support_runs_uncaptured(plan: Path) -> None:
    b = open_fake(plan, cuda_graph=True)  # the host double has no capture_graph
    x = np.ones((2, 4), np.float32)
    b.prepare_inputs({}, {"x": x})
    assert any("CUDA graph asked for" in n for n in b.notes)
    b.infer_once()
    np.testing.assert_array_equal(b.output("y"), 2 * x)


def test_layer_name_fallbacks() -> None:
    assert onnx_nodes_from_layer("/a/Conv + /a/Relu", None) == ["/a/Conv", "/a/Relu"]
    assert onnx_nodes_from_layer("PWN(/b/Mul, /b/Add)", "") == ["/b/Mul", "/b/Add"]
    assert onnx_nodes_from_layer("{ForeignNode[/x/MatMul.../x/Softmax]}", None) == ["/x/MatMul", "/x/Softmax"]
    assert onnx_nodes_from_layer("anything", "[ONNX Layer: n1]\x1f[ONNX Layer: n2]") == ["n1", "n2"]
