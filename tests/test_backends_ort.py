"""OrtBackend, inputs and the profile command on real onnxruntime sessions over onnx.helper models."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from trtstudio.backends.base import open_backend, parse_shapes
from trtstudio.cli import main
from trtstudio.errors import BackendError, InputError

SAMPLE = Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"


def conv_model(path: Path) -> Path:
    """Conv -> BatchNormalization -> Relu -> GlobalAveragePool -> Flatten -> MatMul -> Add (fusable parts)."""
    rng = np.random.default_rng(0)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    inits = [numpy_helper.from_array(a, n) for n, a in {
        "W": f(8, 3, 3, 3), "B": f(8), "g": np.abs(f(8)) + 0.5, "b": f(8), "mu": f(8), "var": np.abs(f(8)) + 0.5,
        "M": f(8, 10), "A": f(10)}.items()]
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["c"], name="/conv/Conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "g", "b", "mu", "var"], ["bn"], name="/bn/BatchNormalization"),
        helper.make_node("Relu", ["bn"], ["r"], name="/relu/Relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["p"], name="/pool/GlobalAveragePool"),
        helper.make_node("Flatten", ["p"], ["fl"], name="/flatten/Flatten"),
        helper.make_node("MatMul", ["fl", "M"], ["m"], name="/fc/MatMul"),
        helper.make_node("Add", ["m", "A"], ["y"], name="/fc/Add"),
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.save(model, path)
    return path


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return conv_model(tmp_path / "conv.onnx")


def node_names(path: Path) -> list[str]:
    return [n.name for n in onnx.load(str(path)).graph.node]


def test_specs_and_dynamic_default_note(model: Path) -> None:
    b = open_backend("ort", model, threads=1)
    assert b.input_specs() == [{"name": "x", "dtype": "float32", "shape": ["N", 3, 16, 16]}]
    b.prepare_inputs({})
    assert b.shapes == {"x": (1, 3, 16, 16)}
    assert any("dynamic dims" in n and "--shapes x:1x3x16x16" in n for n in b.notes)
    assert b.infer_once().total_ms > 0


def test_shape_errors(model: Path) -> None:
    b = open_backend("ort", model)
    with pytest.raises(InputError, match="fixed"):
        b.prepare_inputs({"x": (1, 4, 16, 16)})
    with pytest.raises(InputError, match="rank 4"):
        b.prepare_inputs({"x": (1, 3)})
    with pytest.raises(InputError, match="unknown input"):
        b.prepare_inputs({"nope": (1,)})
    with pytest.raises(InputError, match="NAME:DxDxD"):
        parse_shapes("1x3")
    assert parse_shapes("a:1x3,b:2") == {"a": (1, 3), "b": (2,)}


def test_input_file_sets_data_and_shape(model: Path, tmp_path: Path) -> None:
    from trtstudio.backends.inputs import load_input_file

    x = np.random.default_rng(5).standard_normal((2, 3, 16, 16)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    b = open_backend("ort", model)
    b.prepare_inputs({}, load_input_file(tmp_path / "in.npz", ["x"]))
    assert b.shapes == {"x": (2, 3, 16, 16)}
    import onnxruntime as ort

    want = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(b.run_outputs()[0], want, rtol=1e-5, atol=1e-5)
    np.savez(tmp_path / "bad.npz", y=x)
    with pytest.raises(InputError, match="no data for input"):
        b.prepare_inputs({}, load_input_file(tmp_path / "bad.npz", ["x"]))
    np.save(tmp_path / "f64.npy", x.astype(np.float64) + 1e-9)
    with pytest.raises(InputError, match="must be float32"):
        b.prepare_inputs({}, load_input_file(tmp_path / "f64.npy", ["x"]))


def test_missing_provider_names_pip(model: Path) -> None:
    import onnxruntime as ort

    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("this onnxruntime has CUDA")
    with pytest.raises(BackendError, match="pip install onnxruntime-gpu"):
        open_backend("ort-cuda", model)


def test_bad_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(InputError):
        open_backend("ort", bad)
    with pytest.raises(InputError, match="no such file"):
        open_backend("ort", tmp_path / "missing.onnx")
    with pytest.raises(InputError, match="unknown backend"):
        open_backend("tvm", bad)


def _check_layers(rows: list[dict], names: list[str]) -> None:
    claimed = [n for r in rows for n in r["onnx_nodes"]]
    assert set(claimed) <= set(names)
    assert sorted(claimed) == sorted(names), "every ONNX node in exactly one row"
    assert all(r["time_ms"] >= 0 and r["provider"] == "CPUExecutionProvider" and not r["fallback"] for r in rows)


def test_per_layer_maps_fused_nodes_to_model_names(model: Path) -> None:
    b = open_backend("ort", model, threads=1)
    b.prepare_inputs({"x": (2, 3, 16, 16)})
    rows = b.per_layer_profile(5)
    _check_layers(rows, node_names(model))
    conv_row = next(r for r in rows if "/conv/Conv" in r["onnx_nodes"])
    # ORT folds the BatchNormalization into the Conv and fuses the Relu: one row for all three
    assert {"/bn/BatchNormalization", "/relu/Relu"} <= set(conv_row["onnx_nodes"])


def test_per_layer_unoptimized_names_equal_node_names(model: Path) -> None:
    b = open_backend("ort", model, threads=1, optimization="disable")
    b.prepare_inputs({})
    rows = b.per_layer_profile(3)
    assert [r["name"] for r in rows] == node_names(model)
    assert all(r["onnx_nodes"] == [r["name"]] for r in rows)


@pytest.mark.skipif(not SAMPLE.exists(), reason="sample model not present")
def test_per_layer_on_sample_mobilenet() -> None:
    b = open_backend("ort", SAMPLE, threads=2)
    b.prepare_inputs({})
    _check_layers(b.per_layer_profile(2), node_names(SAMPLE))


def test_profile_command_json_and_exports(model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv_path, trace, npy = tmp_path / "s.csv", tmp_path / "t.json", tmp_path / "s.npy"
    rc = main(["profile", str(model), "--iterations", "40", "--warmup", "2", "--threads", "1", "--per-layer",
               "--shapes", "x:2x3x16x16", "--samples-csv", str(csv_path), "--samples-npy", str(npy),
               "--trace", str(trace), "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "trtstudio.profile/1" and doc["backend"] == "ort"
    assert doc["shapes"] == {"x": [2, 3, 16, 16]}
    assert doc["latency_ms"]["count"] == 40 and doc["cold_ms"] > 0
    assert doc["throughput"]["samples_per_s"] == pytest.approx(2 * doc["throughput"]["inferences_per_s"])
    assert {"name", "onnx_nodes", "provider", "time_ms"} <= set(doc["layers"][0])
    assert len(csv_path.read_text().splitlines()) == 41
    assert np.load(npy).shape == (40,)
    assert sum(e.get("name") == "infer" for e in json.loads(trace.read_text())["traceEvents"]) == 40


def test_profile_command_text_and_bad_input(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", str(model), "--iterations", "20"]) == 0
    out = capsys.readouterr().out
    assert "median" in out and "throughput" in out and "note: input 'x' has dynamic dims" in out
    assert main(["profile", str(model), "--shapes", "x:1x4x16x16"]) == 2
    assert "error: --shapes: input 'x' is fixed" in capsys.readouterr().err


def test_profile_events_fallback_and_compiled_ep_rows(model: Path) -> None:
    """Events shaped as ORT writes them for a TensorRT-EP session: one compiled node plus CPU nodes."""
    from trtstudio.backends.ort import parse_ort_profile

    def ev(name: str, op: str, provider: str, dur: float) -> dict:
        return {"cat": "Node", "name": f"{name}_kernel_time", "dur": dur, "args": {"op_name": op, "provider": provider}}

    trt = "TensorrtExecutionProvider_TRTKernel_graph_g_123_0_0"
    events = [ev(trt, "TRTKernel", "TensorrtExecutionProvider", d) for d in (900, 100, 120, 110)]
    events += [ev("/fc/Add", "Add", "CPUExecutionProvider", d) for d in (50, 5, 6, 7)]
    events.append({"cat": "Session", "name": "model_run", "dur": 1})
    rows = parse_ort_profile(events, onnx.load(str(model)), None, ["TensorrtExecutionProvider", "CPUExecutionProvider"])
    by = {r["name"]: r for r in rows}
    assert by[trt]["time_ms"] == pytest.approx(0.110)  # first run dropped, median of the rest
    assert by["/fc/Add"]["fallback"] is True and by[trt]["fallback"] is False
    assert by[trt]["onnx_nodes"] == [n for n in node_names(model) if n != "/fc/Add"]
