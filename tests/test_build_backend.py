"""Engine builds with TensorRT-RTX (real builds on the CPU-only machine) and the build options."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from trtstudio.backends.build import BuildOptions, build_engine, normalize_target, parse_onnx
from trtstudio.engine.readers.rtx_log import read as read_log
from trtstudio.errors import BackendError, InputError

HAS_RTX = importlib.util.find_spec("tensorrt_rtx") is not None
HAS_TRT = importlib.util.find_spec("tensorrt") is not None
needs_rtx = pytest.mark.skipif(not HAS_RTX, reason="tensorrt_rtx is not installed")
SAMPLE = Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"


def tiny_model(path: Path, dims: list[int | str] | None = None) -> Path:
    """Conv -> Relu -> GlobalAveragePool -> Flatten -> Gemm, dynamic batch (input ``dims``: n,3,16,16)."""
    rng = np.random.default_rng(1)
    inits = [
        numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "conv.weight"),
        numpy_helper.from_array(np.zeros(8, np.float32), "conv.bias"),
        numpy_helper.from_array(rng.standard_normal((10, 8)).astype(np.float32), "fc.weight"),
        numpy_helper.from_array(np.zeros(10, np.float32), "fc.bias"),
    ]
    nodes = [
        helper.make_node(
            "Conv", ["x", "conv.weight", "conv.bias"], ["c"], name="/stem/Conv", pads=[1, 1, 1, 1]
        ),
        helper.make_node("Relu", ["c"], ["r"], name="/stem/Relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["p"], name="/pool/GlobalAveragePool"),
        helper.make_node("Flatten", ["p"], ["f"], name="/Flatten"),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["y"], name="/fc/Gemm", transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims or ["n", 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 10])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
    return path


def custom_op_model(path: Path) -> Path:
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="/pre/Relu"),
        helper.make_node("Frobnicate", ["a"], ["y"], name="/acme/Frobnicate", domain="com.acme"),
    ]
    graph = helper.make_graph(
        nodes,
        "custom",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.acme", 1)]
    )
    onnx.save(model, str(path))
    return path


@pytest.mark.parametrize(
    ("text", "want"),
    [("sm86", "SM86"), ("SM120", "SM120"), ("8.6", "SM86"), ("12.0", "SM120"), ("75", "SM75")],
)
def test_normalize_target(text: str, want: str) -> None:
    assert normalize_target(text) == want


def test_bad_inputs_raise_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        build_engine(tmp_path / "missing.onnx", tmp_path / "o.engine")
    junk = tmp_path / "junk.onnx"
    junk.write_text("this is not protobuf\n")
    with pytest.raises(InputError, match="not an ONNX model"):
        build_engine(junk, tmp_path / "o.engine")
    with pytest.raises(InputError, match="unknown backend"):
        build_engine(tiny_model(tmp_path / "t.onnx"), None, BuildOptions(backend="cuda"))
    with pytest.raises(InputError, match="compute capability"):
        normalize_target("hopper")


@pytest.mark.skipif(HAS_TRT, reason="full TensorRT is installed here")
def test_missing_tensorrt_is_backend_error(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="pip install"):
        build_engine(tiny_model(tmp_path / "t.onnx"), None, BuildOptions(backend="tensorrt"))


@pytest.mark.rtx
@needs_rtx
def test_tiny_build_writes_engine_and_log(tmp_path: Path) -> None:
    model = tiny_model(tmp_path / "tiny.onnx")
    out = tmp_path / "sub" / "tiny.engine"
    steps: list[tuple[str, int, int]] = []
    streamed: list[tuple[str, str]] = []
    res = build_engine(
        model,
        out,
        BuildOptions(backend="rtx", targets=["sm86"]),
        progress=lambda p, s, n: steps.append((p, s, n)),
        log=lambda sev, msg: streamed.append((sev, msg)),
    )
    print(f"tiny sm86 build: {res.seconds:.2f} s")
    assert res.ok, res.error
    assert out.is_file() and out.stat().st_size == res.engine_bytes > 0
    assert res.versions["backend"] == "rtx" and res.versions["tensorrt_rtx"]
    assert res.settings["targets"] == ["SM86"]
    # dynamic batch "n" -> default profile min 1, opt 1, max 8
    assert res.settings["profiles"] == [{"x": [[1, 3, 16, 16], [1, 3, 16, 16], [8, 3, 16, 16]]}]
    assert steps and any(total > 0 for _, _, total in steps)
    assert len(streamed) == sum(1 for r in res.log if r.source == "TRT") > 0
    assert any(r.severity == "VERBOSE" for r in res.log)
    info = read_log(Path("tiny.build.log"), res.log_text())
    nodes = {n for lay in info.layers for n in lay.onnx_nodes}
    assert info.layers and {"/stem/Conv", "/fc/Gemm"} <= nodes
    assert {t.name for t in info.io_tensors} == {"x", "y"}


def test_only_dimensions_named_question_mark_twice_are_renamed(tmp_path: Path) -> None:
    from trtstudio.backends.build import placeholder_dims_apart

    assert placeholder_dims_apart(tiny_model(tmp_path / "one.onnx", [1, 3, "?", 16])) == (None, None)
    assert placeholder_dims_apart(tiny_model(tmp_path / "named.onnx", [1, 3, "h", "h"])) == (None, None)
    path = tiny_model(tmp_path / "two.onnx", ["n", 3, "?", "?"])
    data, note = placeholder_dims_apart(path)
    assert data is not None and note is not None and "x[2], x[3]" in note
    dims = [d.dim_param for d in onnx.load_from_string(data).graph.input[0].type.tensor_type.shape.dim]
    assert dims[0] == "n" and len({dims[2], dims[3]}) == 2 and "?" not in dims
    assert [d.dim_param for d in onnx.load(str(path)).graph.input[0].type.tensor_type.shape.dim][2:] == ["?", "?"]
    # a name the model already uses is not taken (an input y of size "x_dim2" stays its own)
    proto = onnx.load(str(path))
    proto.graph.input.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, ["x_dim2"]))
    onnx.save(proto, str(tmp_path / "taken.onnx"))
    data, _ = placeholder_dims_apart(tmp_path / "taken.onnx")
    assert data is not None
    ins = onnx.load_from_string(data).graph.input
    x_dims = [d.dim_param for d in ins[0].type.tensor_type.shape.dim]
    assert ins[1].type.tensor_type.shape.dim[0].dim_param == "x_dim2" and "x_dim2" not in x_dims
    assert len(set(x_dims[2:])) == 2 and "?" not in x_dims


@pytest.mark.rtx
@needs_rtx
def test_dimensions_all_named_question_mark_build_apart(tmp_path: Path) -> None:
    """Paddle2ONNX names every unknown dimension '?' (PP-OCR's models): TensorRT's parser holds
    dimensions of one name equal, so a 16x32 image could not be built until they were renamed."""
    model = tiny_model(tmp_path / "q.onnx", [1, 3, "?", "?"])
    shape = (1, 3, 16, 32)
    res = build_engine(model, tmp_path / "q.engine",
                       BuildOptions(backend="rtx", targets=["sm86"], profiles=[{"x": (shape, shape, shape)}]))
    assert res.ok, res.error
    assert res.settings["profiles"] == [{"x": [list(shape)] * 3}]
    assert any("x[2], x[3]" in w for w in res.warnings)


@pytest.mark.rtx
@needs_rtx
def test_sample_build_for_two_targets(tmp_path: Path) -> None:
    res = build_engine(SAMPLE, tmp_path / "m.engine", BuildOptions(backend="rtx", targets=["sm86", "sm120"]))
    print(f"sample sm86+sm120 build: {res.seconds:.2f} s")
    assert res.ok, res.error
    assert res.engine_bytes and res.engine_bytes > 1_000_000  # the 2 MB of weights are inside
    assert res.settings["targets"] == ["SM86", "SM120"]
    info = read_log(Path("m.build.log"), res.log_text())
    assert info.build_settings["num_targets"] == 2
    onnx_names = {n.name for n in onnx.load(str(SAMPLE)).graph.node}
    mapped = {n for lay in info.layers for n in lay.onnx_nodes}
    assert mapped <= onnx_names
    assert len(mapped) >= 0.9 * len(onnx_names)


@pytest.mark.rtx
@needs_rtx
def test_parser_rejects_custom_op(tmp_path: Path) -> None:
    model = custom_op_model(tmp_path / "custom.onnx")
    bad = parse_onnx(model, "rtx")
    assert [(u["node"], u["op_type"]) for u in bad] == [("/acme/Frobnicate", "Frobnicate")]
    assert bad[0]["reason"]
    out = tmp_path / "custom.engine"
    res = build_engine(model, out, BuildOptions(backend="rtx"))
    assert not res.ok and not out.exists()
    assert res.unsupported[0]["node"] == "/acme/Frobnicate"
    assert "/acme/Frobnicate" in (res.error or "")
    assert parse_onnx(tiny_model(tmp_path / "t.onnx"), "rtx") == []


@pytest.mark.rtx
@needs_rtx
def test_cancel_stops_the_build(tmp_path: Path) -> None:
    polls = []

    def cancel() -> bool:
        polls.append(1)
        return len(polls) > 3

    out = tmp_path / "c.engine"
    res = build_engine(SAMPLE, out, BuildOptions(backend="rtx"), cancel=cancel)
    assert not res.ok and res.cancelled
    assert "cancel" in (res.error or "").lower()
    assert not out.exists()
    assert len(polls) >= 4


@pytest.mark.rtx
@needs_rtx
def test_build_failure_reports_error(tmp_path: Path) -> None:
    """TensorRT-RTX cannot compile an FP32 GEMM for Turing: a real build failure, not an exception."""
    res = build_engine(SAMPLE, tmp_path / "t.engine", BuildOptions(backend="rtx", targets=["sm75"]))
    assert not res.ok and not res.cancelled
    assert res.error and "SM75" in res.error
    # the same model given FP16 (fp16=True converts it, TensorRT-RTX being strongly typed) builds for Turing
    fp16 = build_engine(SAMPLE, tmp_path / "t16.engine", BuildOptions(backend="rtx", targets=["sm75"], fp16=True))
    assert fp16.ok and fp16.precision is not None and fp16.precision.how == "converted", fp16.error


@pytest.mark.rtx
@needs_rtx
@pytest.mark.parametrize("case", ["plain", "question_marks", "rejected"])
def test_a_build_reads_the_onnx_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    """The shape plan, the '?' renaming, the parser's diagnoses and the failure hints share one read
    of the model (onnx.load counted through a spy that calls the real one); TensorRT parses it once."""
    from trtstudio.backends import trt_parser
    from trtstudio.backends.model_io import read_onnx
    from trtstudio.backends.support import check_support

    model = {"plain": lambda: tiny_model(tmp_path / "t.onnx"),
             "question_marks": lambda: tiny_model(tmp_path / "q.onnx", [1, 3, "?", "?"]),
             "rejected": lambda: custom_op_model(tmp_path / "c.onnx")}[case]()
    real_load, real_parser = onnx.load, trt_parser.create_parser
    loads: list[str] = []
    parses: list[object] = []
    monkeypatch.setattr(onnx, "load", lambda f, *a, **k: loads.append(str(f)) or real_load(f, *a, **k))
    monkeypatch.setattr(trt_parser, "create_parser", lambda *a, **k: parses.append(a) or real_parser(*a, **k))
    verdicts: list[list[dict[str, object]]] = []
    res = build_engine(model, tmp_path / "m.engine", BuildOptions(backend="rtx"), parsed=verdicts.append)
    assert loads == [str(model)] and len(parses) == 1
    assert verdicts == [res.unsupported] and res.ok == (case != "rejected")
    if case == "question_marks":
        assert any("x[2], x[3]" in w for w in res.warnings)
        # the renaming left the one read as it was: the plan and the diagnoses see the model's own names
        assert [i.declared for i in res.shape_plan.inputs] == [[1, 3, "?", "?"]]
    if case == "rejected":
        assert res.unsupported[0]["node"] == "/acme/Frobnicate"
    loads.clear()
    check_support(model, "rtx")
    assert loads == [str(model)]
    loads.clear()
    assert read_onnx(model).inputs[0].name == "x" and loads == [str(model)]
