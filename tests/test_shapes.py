"""The shape plan: sources in order, warnings that name the flag, shape tensors; used by ORT runs and
real TensorRT-RTX builds."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import shape_models as sm

from trtstudio.backends.base import open_backend
from trtstudio.backends.build import BuildOptions, build_engine
from trtstudio.backends.shapes import DEFAULT_SPATIAL, looks_like_shape_error, plan_shapes
from trtstudio.cli import main
from trtstudio.errors import InputError

needs_rtx = pytest.mark.skipif(importlib.util.find_spec("tensorrt_rtx") is None, reason="tensorrt_rtx is not installed")
needs_ort = pytest.mark.skipif(importlib.util.find_spec("onnxruntime") is None, reason="onnxruntime is not installed")


def test_detector_defaults_warn_with_the_flag(tmp_path: Path) -> None:
    plan = plan_shapes(sm.detector(tmp_path / "det.onnx"))
    images = plan.get("images")
    assert images is not None
    assert images.opt == (1, 3, DEFAULT_SPATIAL, DEFAULT_SPATIAL) and images.max[0] > 1
    assert images.sources == ["default", "model", "default", "default"]
    assert len(plan.warnings) == 1
    w = plan.warnings[0]
    assert "'images'" in w and "height=256" in w and "width=256" in w and "--shapes images:1x3x256x256" in w
    assert plan.flag() == "images:1x3x256x256"
    doc = plan.to_json()
    assert doc["schema"] == "trtstudio.shapeplan/1" and doc["inputs"][0]["sources"][2] == "default"


def test_metadata_imgsz_and_batch(tmp_path: Path) -> None:
    plan = plan_shapes(sm.detector(tmp_path / "det.onnx", imgsz=[320, 288], batch=2))
    images = plan.get("images")
    assert images is not None and images.opt == (2, 3, 320, 288) and images.min == images.max == images.opt
    assert images.sources == ["metadata batch", "model", "metadata imgsz", "metadata imgsz"]
    assert plan.warnings == [] and plan.notes == []
    assert "metadata imgsz" in plan.render_text()


def test_user_shapes_win_and_are_checked(tmp_path: Path) -> None:
    model = sm.detector(tmp_path / "det.onnx", imgsz=[320, 320])
    plan = plan_shapes(model, {"images": (1, 3, 64, 96)})
    assert plan.get("images").opt == (1, 3, 64, 96)  # type: ignore[union-attr]
    ranged = plan_shapes(model, {"images": ((1, 3, 32, 32), (2, 3, 64, 64), (4, 3, 128, 128))}, user_source="--min/opt/max-shapes")
    ins = ranged.get("images")
    assert ins is not None and (ins.min, ins.opt, ins.max) == ((1, 3, 32, 32), (2, 3, 64, 64), (4, 3, 128, 128))
    with pytest.raises(InputError, match="fixed at"):
        plan_shapes(model, {"images": (1, 4, 64, 64)})
    with pytest.raises(InputError, match="rank"):
        plan_shapes(model, {"images": (1, 3, 64)})
    with pytest.raises(InputError, match="unknown input 'nope'"):
        plan_shapes(model, {"nope": (1,)})


def test_graph_pins_and_shared_symbols(tmp_path: Path) -> None:
    model = sm.pinned_model(tmp_path / "pin.onnx")
    plan = plan_shapes(model)
    feats, tokens, flat = plan.get("feats"), plan.get("tokens"), plan.get("flat")
    assert feats and tokens and flat
    assert feats.opt[2] == 16 and feats.sources[2].startswith("graph: MatMul 'proj'")
    assert flat.opt == (24,) and "Reshape 'to_3d'" in flat.sources[0]
    given = plan_shapes(model, {"feats": (2, 7, 16)})
    tokens = given.get("tokens")
    assert tokens is not None and tokens.opt == (2, 7)
    assert tokens.sources == ["same dim 'B' as input 'feats'", "same dim 'seq' as input 'feats'"]


def test_data_shapes_come_before_metadata(tmp_path: Path) -> None:
    model = sm.detector(tmp_path / "det.onnx", imgsz=[320, 320])
    plan = plan_shapes(model, data={"images": np.zeros((1, 3, 64, 32), np.float32)}, data_source="x.npz")
    assert plan.get("images").opt == (1, 3, 64, 32)  # type: ignore[union-attr]
    assert plan.get("images").sources[2] == "x.npz"  # type: ignore[union-attr]


def test_shape_tensor_values(tmp_path: Path) -> None:
    model = sm.shape_tensor_model(tmp_path / "st.onnx")
    plan = plan_shapes(model)
    st = plan.get("shape")
    assert st is not None and st.shape_tensor and st.values is not None
    assert any("'shape' is a shape tensor" in w and "--shapes shape:" in w for w in plan.warnings)
    given = plan_shapes(model, {"shape": (2, 3, 2), "x": (1, 12)})  # trtexec style: the values
    st = given.get("shape")
    assert st is not None and st.values == ((2, 3, 2),) * 3 and st.opt == (3,)
    with pytest.raises(InputError, match="takes 3 values"):
        plan_shapes(model, {"shape": (2, 6)})


def test_shape_error_words() -> None:
    assert looks_like_shape_error("IConcatenationLayer cat: axis 2 dimensions must be equal for concatenation")
    assert looks_like_shape_error("Non concat axis dimensions must match: Axis 2 has mismatched dimensions")
    assert not looks_like_shape_error("out of host memory")


@needs_ort
def test_ort_run_uses_the_plan(tmp_path: Path) -> None:
    det = sm.detector(tmp_path / "det.onnx")
    b = open_backend("ort", det, threads=1)
    try:
        b.prepare_inputs({})
        assert b.shapes["images"] == (1, 3, DEFAULT_SPATIAL, DEFAULT_SPATIAL)  # type: ignore[attr-defined]
        assert any("--shapes images:" in n for n in b.notes)
        b.infer_once()  # 1x3x1x1 (the old fill) fails in the Concat; the plan's size runs
    finally:
        b.close()
    b = open_backend("ort", sm.shape_tensor_model(tmp_path / "st.onnx"), threads=1)
    try:
        b.prepare_inputs({})
        b.infer_once()  # random int64 values would not reshape; the plan's values do
    finally:
        b.close()


@needs_ort
def test_profile_shape_failure_names_the_dims(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    det = sm.detector(tmp_path / "det.onnx")
    assert main(["profile", str(det), "--backend", "ort", "--iterations", "3", "--shapes", "images:1x3x30x30"]) == 1
    err = capsys.readouterr().err
    assert "shape problem" in err and "images 1x3x30x30" in err and "--shapes" in err


def test_profile_prints_and_returns_the_shape_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`profile` says where each size of a dynamic input came from, in JSON and in text."""
    det = sm.detector(tmp_path / "det.onnx", imgsz=[64, 64])
    assert main(["profile", str(det), "--backend", "ort", "--iterations", "3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (images,) = [i for i in doc["shape_plan"]["inputs"] if i["name"] == "images"]
    assert images["opt"][2:] == [64, 64] and doc["shapes"]["images"] == images["opt"]
    assert any("metadata" in src for src in images["sources"])
    assert main(["profile", str(det), "--backend", "ort", "--iterations", "3"]) == 0
    out = capsys.readouterr().out
    assert "shape plan" in out and "metadata" in out


@pytest.mark.rtx
@needs_rtx
def test_rtx_build_uses_metadata_and_defaults(tmp_path: Path) -> None:
    res = build_engine(sm.detector(tmp_path / "m.onnx", imgsz=[64, 64]), None, BuildOptions(backend="rtx"))
    assert res.ok, res.error
    assert res.settings["profiles"] == [{"images": [[1, 3, 64, 64], [1, 3, 64, 64], [8, 3, 64, 64]]}]  # batch: default range
    res = build_engine(sm.detector(tmp_path / "d.onnx"), None, BuildOptions(backend="rtx"))
    assert res.ok, res.error  # min 1x3x1x1 (the old default) cannot build: the Concat does not line up
    assert res.settings["profiles"][0]["images"][1] == [1, 3, DEFAULT_SPATIAL, DEFAULT_SPATIAL]
    assert any("--shapes images:" in w for w in res.warnings)


@pytest.mark.rtx
@needs_rtx
def test_rtx_build_of_shape_tensor_input(tmp_path: Path) -> None:
    model = sm.shape_tensor_model(tmp_path / "st.onnx")
    res = build_engine(model, None, BuildOptions(backend="rtx", profiles=[{"x": ((2, 12),) * 3, "shape": ((2, 3, 4),) * 3}]))
    assert res.ok, res.error
    assert res.settings["profiles"][0]["shape"] == {"values": [[2, 3, 4]] * 3}
    res = build_engine(model, None, BuildOptions(backend="rtx"))
    assert res.ok, res.error  # "no optimization profile has been defined" without set_shape_input


@pytest.mark.rtx
@needs_rtx
def test_rtx_build_shape_failure_suggests_shapes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    det = sm.detector(tmp_path / "d.onnx")
    code = main(["build", str(det), "--backend", "rtx", "--shapes", "images:1x3x30x30", "--json", "-o", str(tmp_path / "d.engine")])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and not doc["ok"]
    assert "shape problem" in doc["error"] and "images 1x3x30x30" in doc["error"]
    assert doc["shape_plan"]["inputs"][0]["sources"][2] == "--shapes"
    assert main(["build", str(det), "--backend", "rtx", "-o", str(tmp_path / "d.engine")]) == 0
    out = capsys.readouterr().out
    assert "input shapes" in out and "images" in out and "default" in out


@needs_ort
def test_precision_sweep_plans_dynamic_hw(tmp_path: Path) -> None:
    from trtstudio.precision.sweep import SweepOptions, run_sweep

    det = sm.detector(tmp_path / "det.onnx")
    opts = SweepOptions(variants=("fp16",), build_engines=False, iterations=2, rounds=1, warmup=1, localize=False,
                        out_dir=str(tmp_path / "p"))
    res = run_sweep(det, opts)  # H/W filled with 1 fail in the Concat; the plan's size runs
    assert all(v.error is None for v in res.variants), [v.error for v in res.variants]
    assert any("--shapes images:" in n for n in res.notes)


@needs_ort
def test_probe_finds_a_size_that_runs_and_scalars_get_compared_values(tmp_path: Path) -> None:
    model = sm.probe_model(tmp_path / "p.onnx")
    guessed = plan_shapes(model)
    x = guessed.get("x")
    assert x is not None and x.opt == (512, 2) and x.sources[0] == "default"
    probed = plan_shapes(model, probe=True)
    x, sr = probed.get("x"), probed.get("sr")
    assert x is not None and x.opt == (64, 2) and x.sources[0].startswith("probe")
    assert any("ran with onnxruntime at 64x2" in w and "--shapes x:64x2" in w for w in probed.warnings)
    assert sr is not None and sr.values == ((16000,),) * 3 and "Equal 'is_16k'" in str(sr.values_source)
    assert probed.flag() == "x:64x2,sr:16000"
    user = plan_shapes(model, {"sr": (8000,)})
    assert user.get("sr").values == ((8000,),) * 3  # type: ignore[union-attr]
    b = open_backend("ort", model, threads=1)
    try:
        b.prepare_inputs({})
        b.infer_once()
    finally:
        b.close()


def test_plan_json_round_trip_and_control_flow_hint(tmp_path: Path) -> None:
    from onnx_models import with_subgraphs

    from trtstudio.backends.shapes import ShapePlan
    from trtstudio.backends.support import control_flow_hint

    plan = plan_shapes(sm.shape_tensor_model(tmp_path / "st.onnx"), {"x": (2, 12)})
    again = ShapePlan.from_json(json.loads(json.dumps(plan.to_json())))
    assert again.render_text() == plan.render_text() and again.flag() == plan.flag()
    import onnx

    flow = tmp_path / "flow.onnx"
    onnx.save(with_subgraphs(), str(flow))
    assert "control-flow node(s)" in (control_flow_hint(flow, "Error Code 2: Internal Error (x)") or "")
    assert control_flow_hint(flow, "out of memory") is None
    assert control_flow_hint(sm.detector(tmp_path / "d.onnx"), "Internal Error") is None


def test_metadata_values_and_the_shape_text_rule() -> None:
    """Metadata sizes as exporters write them, and shape text under the one rule (D >= 0, x-joined)."""
    from trtstudio.backends.shapes.text import metadata_ints, parse_dims, shape_text

    assert metadata_ints("[640, 480]") == [640, 480] and metadata_ints("640") == [640]
    assert metadata_ints("(1, 3, 640, 640)") == [1, 3, 640, 640] and metadata_ints("640, 640") == [640, 640]
    assert metadata_ints("640x480") == [640, 480] and metadata_ints(" 320 X 320 ") == [320, 320]
    for junk in ("True", "abc", "[]", "[640.0]", "exported", "1x-3"):
        assert metadata_ints(junk) is None
    assert parse_dims(shape_text((1, 3, 0, 7))) == (1, 3, 0, 7) and shape_text(()) == "scalar"
