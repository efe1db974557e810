"""``build --fp16/--bf16/--int8`` on TensorRT-RTX (strongly typed): the model is converted as
``trtstudio precision`` does, the converted model is built, and the text, the JSON and the build
document say so. Real TensorRT-RTX builds (on CPU for SM targets) of the bundled sample and of
third-party models shipped by PyPI packages (PaddleOCR's classifier in rapidocr, NudeNet's YOLOv8n)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import types
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from test_precision_recipe import _package_file  # a model shipped by an installed package, not imported

from trtstudio.backends.build_precision import converted_path, flag_step, flags_to_convert, strongly_typed
from trtstudio.backends.build_request import BuildRequest
from trtstudio.cli import main
from trtstudio.errors import FieldError

HAS_RTX = importlib.util.find_spec("tensorrt_rtx") is not None
needs_rtx = pytest.mark.skipif(not HAS_RTX, reason="tensorrt_rtx is not installed")
SAMPLE = Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"


def _build(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:
    rc = main(["build", *argv, "--json"])
    out, err = capsys.readouterr()
    return rc, json.loads(out), err


def _precisions(layers: list[dict]) -> Counter:
    return Counter(lay.get("precision") for lay in layers if lay.get("precision"))


class FullTensorRT10Double(types.SimpleNamespace):
    """Test double of full TensorRT 10's module: weakly typed, it has BuilderFlag.FP16/INT8/BF16."""

    __name__ = "tensorrt"


class StronglyTypedDouble(types.SimpleNamespace):
    """Test double of a strongly typed runtime's module (no precision builder flags)."""

    __name__ = "tensorrt_rtx"


def test_weakly_typed_runtime_keeps_the_builder_flags() -> None:
    trt10 = FullTensorRT10Double(BuilderFlag=types.SimpleNamespace(FP16=1, INT8=2, BF16=3, TF32=4))
    request = BuildRequest(model="m.onnx", fp16=True, int8=True, bf16=True)
    assert flags_to_convert(trt10, request) == []  # nothing converted, nothing refused (int8 without calib)
    step = flag_step(["fp16", "int8"], "m.onnx", "tensorrt")
    assert step is not None and step.how == "builder_flags" and step.built_model == "m.onnx"
    assert "builder flag" in step.summary() and flag_step([], "m.onnx", "tensorrt") is None


def test_strongly_typed_refusals_name_what_to_do() -> None:
    rtx = StronglyTypedDouble(BuilderFlag=types.SimpleNamespace(TF32=4))
    assert flags_to_convert(rtx, BuildRequest(model="m.onnx", fp16=True)) == ["fp16"]
    assert flags_to_convert(rtx, BuildRequest(model="m.onnx", int8=True, calib="calib")) == ["int8"]
    with pytest.raises(FieldError) as both:
        flags_to_convert(rtx, BuildRequest(model="m.onnx", fp16=True, bf16=True))
    assert both.value.field == "fp16" and "FP16 or BF16" in both.value.message
    with pytest.raises(FieldError) as mixed:
        flags_to_convert(rtx, BuildRequest(model="m.onnx", fp16=True, int8=True, calib="c"))
    assert mixed.value.field == "int8"
    with pytest.raises(FieldError) as int8:
        flags_to_convert(rtx, BuildRequest(model="m.onnx", int8=True))
    assert "--calib" in int8.value.message and "trtstudio precision" in int8.value.message


def test_converted_model_goes_beside_the_engine_never_over_the_source(tmp_path: Path) -> None:
    assert converted_path(tmp_path / "a.onnx", tmp_path / "out" / "a.engine", "fp16") == tmp_path / "out" / "a.fp16.onnx"
    assert converted_path(tmp_path / "a.onnx", tmp_path / "a.fp16.engine", "fp16") == tmp_path / "a.fp16.onnx"
    src = tmp_path / "a.fp16.onnx"
    assert converted_path(src, tmp_path / "a.fp16.engine", "fp16") == tmp_path / "a.fp16.built.onnx"


@pytest.mark.rtx
@needs_rtx
def test_fp16_on_rtx_builds_the_converted_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import onnx

    plain_rc, plain, _ = _build(capsys, str(SAMPLE), "--target", "sm86", "-o", str(tmp_path / "m32.engine"))
    rc, doc, err = _build(capsys, str(SAMPLE), "--fp16", "--target", "sm86", "-o", str(tmp_path / "m.engine"))
    assert plain_rc == 0 and rc == 0 and doc["ok"], doc["error"]
    assert "ignored" not in err and not any("fp16" in w and "ignored" in w for w in doc["warnings"])
    p = doc["precision"]
    built = tmp_path / "m.fp16.onnx"
    assert p["how"] == "converted" and p["precision"] == "fp16" and p["runtime"] == "tensorrt_rtx"
    assert p["source_model"] == str(SAMPLE) and p["built_model"] == str(built) and doc["model"] == str(SAMPLE)
    assert p["details"]["low_nodes"] > 50 and p["details"]["converted_initializers"] > 50
    weights = onnx.load(str(built)).graph.initializer
    assert Counter(w.data_type for w in weights)[onnx.TensorProto.FLOAT16] > 50  # the file built is FP16
    assert doc["settings"]["precision"] == "fp16" and doc["settings"]["built_model"] == str(built)
    # its layers read FP16 where the plain build's read FP32
    assert _precisions(plain["layers"]).most_common(1)[0][0] == "FP32" and "FP16" not in _precisions(plain["layers"])
    counts = _precisions(doc["layers"])
    assert counts["FP16"] >= 0.9 * sum(counts.values()), counts
    # the saved build document opens (layers) with the same FP16 layers and the precision in its settings
    saved = tmp_path / "m.build.json"
    saved.write_text(json.dumps(doc))
    assert main(["layers", str(saved), "--json"]) == 0
    opened = json.loads(capsys.readouterr().out)
    assert _precisions(opened["layers"]) == counts
    settings = opened["engine"]["build_settings"]
    assert settings["precision"] == "fp16" and settings["built_model"] == str(built) and settings["precision_by"] == "converted"
    # the text output says what was built
    assert main(["build", str(SAMPLE), "--fp16", "--target", "sm86", "-o", str(tmp_path / "t.engine")]) == 0
    text = capsys.readouterr().out
    assert "converted to FP16 as trtstudio precision does" in text and str(tmp_path / "t.fp16.onnx") in text
    assert sum(" FP16 " in line for line in text.splitlines()) >= 0.9 * sum(counts.values())


@pytest.mark.rtx
@needs_rtx
@pytest.mark.parametrize("flag", ["fp16", "bf16"])
def test_paddleocr_classifier_in_half_precision(tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str) -> None:
    model = _package_file("rapidocr_onnxruntime", "models/ch_ppocr_mobile_v2.0_cls_infer.onnx")
    rc, doc, _ = _build(capsys, str(model), f"--{flag}", "--target", "sm86", "--shapes", "x:1x3x48x192",
                        "-o", str(tmp_path / "cls.engine"))
    assert rc == 0 and doc["ok"], doc["error"]
    assert doc["precision"]["built_model"] == str(tmp_path / f"cls.{flag}.onnx")
    counts = _precisions(doc["layers"])
    assert counts[flag.upper()] >= 0.9 * sum(counts.values()), counts


@pytest.mark.rtx
@needs_rtx
def test_yolo_islands_kept_fp32_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _package_file("nudenet", "320n.onnx")
    rc, doc, _ = _build(capsys, str(model), "--fp16", "--target", "sm86", "-o", str(tmp_path / "y.engine"))
    assert rc == 0 and doc["ok"], doc["error"]
    islands = doc["precision"]["fp32_islands"]
    assert any(r == "always FP32" and "Range" in n for n, r in islands.items()), islands
    assert doc["settings"]["fp32_islands"] == len(islands) > 0
    counts = _precisions(doc["layers"])
    assert counts["FP16"] > counts["FP32"], counts
    assert main(["build", str(model), "--fp16", "--target", "sm86", "-o", str(tmp_path / "t.engine")]) == 0
    text = capsys.readouterr().out
    first = next(iter(islands))
    assert f"kept FP32: {first} ({islands[first]})" in text and f"{len(islands)} kept FP32" in text


@pytest.mark.rtx
@needs_rtx
def test_int8_without_calibration_data_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["build", str(SAMPLE), "--int8", "--target", "sm86", "-o", str(tmp_path / "m.engine")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert err[0].startswith("error: --int8: ") and "--calib" in err[0] and "trtstudio precision" in err[0]
    assert not list(tmp_path.iterdir())  # nothing converted, nothing built


@pytest.mark.rtx
@needs_rtx
def test_int8_with_calibration_data_is_quantized(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calib = tmp_path / "calib"
    calib.mkdir()
    rng = np.random.default_rng(0)
    for i in range(4):
        np.save(calib / f"s{i}.npy", rng.random((1, 3, 224, 224), dtype=np.float32))
    rc, doc, _ = _build(capsys, str(SAMPLE), "--int8", "--calib", str(calib), "--target", "sm86",
                        "-o", str(tmp_path / "q.engine"))
    assert rc == 0 and doc["ok"], doc["error"]
    p = doc["precision"]
    assert p["how"] == "quantized" and p["details"]["qdq_pairs"] > 0 and p["details"]["samples"] == 4
    assert Path(p["built_model"]).is_file()
    assert _precisions(doc["layers"])["INT8"] > 10


def test_tensorrt_rtx_is_strongly_typed_in_every_version() -> None:
    # TensorRT-RTX 1.4 still has BuilderFlag.FP16, and its builder refuses it ("condition:
    # !config.getFlag(BuilderFlag::kFP16)"): the module, not the attribute, says it is strongly typed
    rtx14 = StronglyTypedDouble(BuilderFlag=types.SimpleNamespace(FP16=1, INT8=2, BF16=3, TF32=4))
    assert strongly_typed(rtx14) and flags_to_convert(rtx14, BuildRequest(model="m.onnx", fp16=True)) == ["fp16"]
    assert not strongly_typed(FullTensorRT10Double(BuilderFlag=types.SimpleNamespace(FP16=1, TF32=4)))
    assert strongly_typed(FullTensorRT10Double(BuilderFlag=types.SimpleNamespace(TF32=4)))  # TensorRT 11
    if HAS_RTX:
        import tensorrt_rtx

        assert strongly_typed(tensorrt_rtx)


def _light(name: str) -> Path:
    import onnx

    path = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"{name}.onnx"
    if not path.is_file():
        pytest.skip(f"this onnx wheel has no {path.name}")
    return path


@pytest.mark.rtx
@needs_rtx
@pytest.mark.parametrize("name", ["light_resnet50", "light_vgg19"])
def test_ir3_light_zoo_builds_in_fp16(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    # issue 47: exit 2 "fp16 conversion produced an invalid model", and --json printed nothing
    rc, doc, err = _build(capsys, str(_light(name)), "--fp16", "--target", "sm86", "-o", str(tmp_path / "m.engine"))
    assert rc == 0 and doc["ok"] and doc["schema"] == "trtstudio.build/1", (doc["error"], err)
    counts = _precisions(doc["layers"])
    assert counts["FP16"] >= 0.9 * sum(counts.values()), counts
    assert doc["precision"]["layers"]["FP16"] == counts["FP16"] == doc["precision"]["layers_in_precision"]
    assert not any("no layer" in w for w in doc["warnings"])


@pytest.mark.rtx
@needs_rtx
def test_a_converter_failure_is_an_internal_error_with_its_document(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import trtstudio.precision.convert as convert

    # the converter as it was before the IR-3 fix (initializer inputs left FP32): its own check fails
    monkeypatch.setattr(convert, "_declare_initializer_inputs", lambda graph: None)
    model = str(_light("light_vgg19"))
    rc, doc, err = _build(capsys, model, "--fp16", "--target", "sm86", "-o", str(tmp_path / "m.engine"))
    assert rc == 1 and doc["schema"] == "trtstudio.build/1" and doc["ok"] is False
    assert doc["error"].startswith("internal error: the FP16 conversion of ") and "trtstudio bug" in doc["error"]
    assert err.strip().splitlines()[-1] == f"error: {doc['error']}"
    assert not (tmp_path / "m.engine").exists()
    rc = main(["build", model, "--fp16", "--target", "sm86", "-o", str(tmp_path / "t.engine")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and err[-1].startswith("error: internal error:"), err  # not exit 2 "bad input"


@pytest.mark.rtx
@needs_rtx
def test_silero_if_builds_in_fp16_inside_the_branches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _package_file("silero_vad", "data/silero_vad_op18_ifless.onnx")
    rc, doc, err = _build(capsys, str(model), "--fp16", "--target", "sm86", "--require-precision",
                          "-o", str(tmp_path / "s.engine"))
    assert rc == 0 and doc["ok"], (doc["error"], err)
    assert doc["precision"]["details"]["control_flow"] == ["node_cond__1"]
    in_branch = [lay for lay in doc["layers"] if any("(then_branch)" in n for n in lay["onnx_nodes"])]
    assert in_branch and Counter(lay["precision"] for lay in in_branch)["FP16"] >= len(in_branch) // 2
    assert not any("no layer" in w for w in doc["warnings"])


@pytest.mark.rtx
@needs_rtx
def test_an_fp16_build_with_no_fp16_layer_warns_and_can_fail(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # the exact shape of issue 47 / rf-detr#1453: the converter as it was (an If kept FP32 whole)
    # built silero's export all FP32, exit 0, no warning
    import functools

    import trtstudio.precision.convert as convert

    monkeypatch.setattr(convert, "convert_float", functools.partial(convert.convert_float, block_ops=["If"]))
    model = str(_package_file("silero_vad", "data/silero_vad_op18_ifless.onnx"))
    rc, doc, _ = _build(capsys, model, "--fp16", "--target", "sm86", "-o", str(tmp_path / "s.engine"))
    assert rc == 0 and doc["ok"] and "FP16" not in _precisions(doc["layers"])
    warning = next(w for w in doc["warnings"] if w.startswith("no layer of the built engine runs in FP16"))
    assert doc["precision"]["layers_in_precision"] == 0 and "--require-precision" in warning
    assert main(["build", model, "--fp16", "--target", "sm86", "-o", str(tmp_path / "t.engine")]) == 0
    captured = capsys.readouterr()
    assert "warning: no layer of the built engine runs in FP16 (" in captured.err
    assert "layers in FP16: 0 of " in captured.out and "1 node(s) kept FP32" in warning
    rc, doc, err = _build(capsys, model, "--fp16", "--target", "sm86", "--require-precision",
                          "-o", str(tmp_path / "r.engine"))
    assert rc == 1 and doc["schema"] == "trtstudio.build/1" and doc["error"].endswith("(--require-precision)")
    assert err.strip().splitlines()[-1] == f"error: {doc['error']}"


@pytest.mark.rtx
@pytest.mark.parametrize("version", ["1.4.0.76", "1.5.0.114"])
def test_fp16_builds_on_older_tensorrt_rtx_releases(tmp_path: Path, version: str) -> None:
    """Older TensorRT-RTX releases, each in an environment of its own made by the product's
    ``runtimes add`` into the tests' cache (tests/rtx_runtimes.py); skipped, naming why, where they
    are missing and the index is unreachable."""
    from tests.rtx_runtimes import Unavailable, installed

    try:
        (runtime,) = installed((version,))
    except Unavailable as exc:
        pytest.skip(str(exc))
    python = Path(runtime.python)
    repo = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [str(python), "-m", "trtstudio", "build", str(_light("light_vgg19")), "--fp16", "--target", "sm86",
         "--json", "-o", str(tmp_path / "v.engine")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(repo), "QT_QPA_PLATFORM": "offscreen"})
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and doc["ok"], (doc["error"], proc.stderr[-2000:])
    assert doc["versions"]["tensorrt_rtx"] == version and doc["precision"]["how"] == "converted"
    counts = _precisions(doc["layers"])
    assert counts["FP16"] >= 0.9 * sum(counts.values()), counts
    notes = [w for w in doc["warnings"] if w.startswith("this build log")]
    assert (len(notes) == 1 and "no tensor formats" in notes[0]) if version.startswith("1.4.") else not notes
