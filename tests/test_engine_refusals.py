"""Files that describe something else than the command asks for, refused in one line: two engines'
layer listings given as one engine (load_engine, so `layers`, `report` and the window all refuse),
and an engine's records (timings, profiles, layer JSON) given to `profile` as a model to run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trtstudio.cli import main
from trtstudio.engine.load import load_engine
from trtstudio.errors import InputError

FIX = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "trt-real"
A100 = FIX / "NVIDIA_TensorRT_trex/release-11.0/examples/pytorch/resnet/A100"
HACKATHON = FIX / "NVIDIA_trt-samples-for-hackathon-cn/HEAD/cookbook/07-Tool/trtexec"
needs_fixtures = pytest.mark.skipif(not A100.is_dir(), reason="real TensorRT fixtures not present")

FP32 = A100 / "fp32/resnet.onnx.engine.graph.json"
FP16 = A100 / "fp16/resnet.onnx.engine.graph.json"
QAT = A100 / "qat/resnet-qat.onnx.engine.graph.json"


@needs_fixtures
@pytest.mark.parametrize("pair", [(FP32, FP16), (FP16, QAT), (QAT, FP32)])
def test_two_engines_graphs_are_refused_naming_both(pair: tuple[Path, Path]) -> None:
    with pytest.raises(InputError) as err:
        load_engine(list(pair))
    line = err.value.one_line()
    assert str(pair[0]) in line and str(pair[1]) in line and "another engine" in line
    assert f"trtstudio diff {pair[0]} {pair[1]}" in line and "\n" not in line


@needs_fixtures
def test_the_same_engine_s_files_still_merge(tmp_path: Path) -> None:
    copy = tmp_path / "again.graph.json"
    shutil.copy(FP16, copy)  # the same listing twice, and with its profile
    eng = load_engine([FP16, copy, A100 / "fp16/resnet.onnx.engine.profile.json"])
    assert eng.layers and all(lay.time is not None for lay in eng.layers)
    # a trtexec log's layer listing beside the JSON exported by the same run
    log, exported = HACKATHON / "result-04.log", HACKATHON / "model-trained-exportLayerInfo.log"
    assert len(load_engine([log, exported]).layers) == len(load_engine([exported]).layers)


@needs_fixtures
def test_layers_and_report_refuse_two_engines_with_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["layers", str(FP32), str(FP16)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(("error: " + str(FP16) + ": ", "error: " + str(FP32) + ": ")) and len(err.splitlines()) == 1
    assert str(FP32) in err and str(FP16) in err
    assert main(["report", str(QAT), str(FP16), "-o", str(tmp_path / "r.html")]) == 2
    assert "another engine" in capsys.readouterr().err and not (tmp_path / "r.html").exists()


@needs_fixtures
@pytest.mark.parametrize(("name", "what"), [("resnet.onnx.engine.timing.json", "per-inference times (--exportTimes)"),
                                            ("resnet.onnx.engine.profile.json", "per-layer profile"),
                                            ("resnet.onnx.engine.graph.json", "layer information")])
def test_profile_says_what_an_engine_record_is_and_which_command_reads_it(
        capsys: pytest.CaptureFixture[str], name: str, what: str) -> None:
    path = A100 / "fp32" / name
    assert main(["profile", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}: is ") and what in err and len(err.splitlines()) == 1
    assert f"trtstudio layers {name}" in err and f"trtstudio report {name}" in err
    assert "needs the Python module" not in err
