"""The rtx_log reader on the committed TensorRT-RTX demo log and on real TensorRT logs (fixtures)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import onnx
import pytest

from trtstudio.engine.readers import rtx_log
from trtstudio.errors import InputError

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample"
DEMO_LOG = SAMPLE_DIR / "mobilenetv2_035.rtx-sm86.build.log"
FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "trt-real"
COOKBOOK = FIXTURES / "NVIDIA_trt-samples-for-hackathon-cn" / "HEAD" / "cookbook"


def _read(path: Path) -> rtx_log.EngineInfo:
    text = path.read_text(encoding="utf-8", errors="replace")
    return rtx_log.read(path, text)


def test_demo_log_layers_map_to_sample_nodes() -> None:
    info = _read(DEMO_LOG)
    onnx_nodes = {n.name for n in onnx.load(str(SAMPLE_DIR / "mobilenetv2_035.onnx")).graph.node}
    assert len(info.layers) > 20
    assert [lay.index for lay in info.layers] == list(range(len(info.layers)))
    mapped = {n for lay in info.layers for n in lay.onnx_nodes}
    assert mapped <= onnx_nodes
    assert len(mapped) >= 0.9 * len(onnx_nodes)  # Flatten may vanish into the Gemm without metadata
    conv = next(lay for lay in info.layers if lay.name.startswith("/features/1/conv/0/0/Conv"))
    assert conv.type == "correlation" and conv.mapping_confidence == 1.0
    assert conv.inputs[0].dtype == "FP32" and conv.inputs[0].shape[1:] == [16, 112, 112]
    assert conv.outputs and conv.outputs[0].format and "Channel major" in conv.outputs[0].format
    assert conv.tactic
    assert conv.attrs["constants"] and conv.attrs["constants"][0]["shape"][0] > 0


def test_demo_log_engine_facts() -> None:
    info = _read(DEMO_LOG)
    assert info.versions["backend"] == "rtx" and info.versions["tensorrt_rtx"]
    assert info.build_settings["targets"] == ["SM86"]
    assert info.build_settings["onnx_opset"] == 17
    assert info.memory["weights"] > 1_000_000 and info.memory["device_memory"] > 0
    io = {t.name: t for t in info.io_tensors}
    assert set(io) == {"input", "logits"}
    assert io["input"].shape == [-1, 3, 224, 224] and io["input"].dtype == "FP32"
    assert info.build_settings["profile_shapes"]["input"]["MaxShape"][0] == 8
    assert info.detailed
    assert rtx_log.sniff(DEMO_LOG.read_text()[:65536], DEMO_LOG)


def test_log_without_listing_is_input_error(tmp_path: Path) -> None:
    p = tmp_path / "short.build.log"
    p.write_text("[TRT] [I] Input filename:   m.onnx\n[TRT] [W] something odd\n")
    with pytest.raises(InputError, match="no engine layer listing"):
        rtx_log.read(p, p.read_text())


def test_prefixed_lines_and_last_build_wins(tmp_path: Path) -> None:
    """A log with two builds through the stock logger (timestamps, [TRT] [V]); the second one is read."""
    lines = DEMO_LOG.read_text().split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.endswith("Layers:"))
    listing = [ln for ln in lines[start + 1 :] if ln.startswith("Name: ")]
    first = "\n".join(
        ["[12/02/2026-14:00:00] [TRT] [V] Layers:", listing[0], "[12/02/2026-14:00:00] [TRT] [I] done"]
    )
    second = "\n".join(["[12/02/2026-14:00:01] [TRT] [V] Layers:", *listing[:5]])
    p = tmp_path / "two.log"
    p.write_text(first + "\n" + second + "\n")
    info = rtx_log.read(p, p.read_text())
    assert [lay.name for lay in info.layers] == [ln.split(",", 1)[0][len("Name: ") :] for ln in listing[:5]]
    assert any("2 engine builds" in w for w in info.warnings)


@pytest.mark.skipif(not COOKBOOK.is_dir(), reason="shared TensorRT fixtures are absent")
def test_tensorrt_inspector_oneline_log() -> None:
    info = _read(COOKBOOK / "04-Feature" / "EngineInspector" / "log-main.py.log")
    conv = info.layers[0]
    assert conv.type == "CaskConvolution" and conv.parameter_type == "Convolution"
    assert conv.tactic and conv.tactic.startswith("sm")
    assert conv.onnx_nodes == ["node_conv2d", "node_relu"]  # \x1e-separated metadata
    reformat = next(lay for lay in info.layers if lay.type == "Reformat")
    assert reformat.precision_in == "FP32" and reformat.precision_out == "FP16"
    assert info.build_settings["optimization_profiles"] == 2


@pytest.mark.skipif(not COOKBOOK.is_dir(), reason="shared TensorRT fixtures are absent")
def test_tensorrt_engine_layer_information_log() -> None:
    trtexec_log = COOKBOOK / "07-Tool" / "trtexec" / "result-02.log"
    info = _read(trtexec_log)
    types = {lay.type for lay in info.layers}
    assert {"CaskPooling", "Myelin", "Reformat"} <= types
    myelin = [lay for lay in info.layers if lay.type == "Myelin"][-1]
    assert [t.name for t in myelin.outputs] == ["y", "z"] and myelin.outputs[1].dtype == "INT64"
    reformat = next(lay for lay in info.layers if lay.type == "Reformat")
    assert reformat.outputs[0].dtype == "FP16" and reformat.outputs[0].shape == [-1, 32, 14, 14]
    assert info.memory["weights"] > 0
    # the trtexec reader owns trtexec logs; this reader only reads them when asked by name
    assert not rtx_log.sniff(trtexec_log.read_text(errors="replace")[:65536], trtexec_log)


RTX_LOGS = Path(__file__).resolve().parent / "data" / "rtx_logs"  # our own 1.4/1.5 builds (README.md there)


def test_rtx_1_4_log_fills_io_tensors_from_its_bindings_and_says_what_it_lacks() -> None:
    old = _read(RTX_LOGS / "light_vgg19.fp16.rtx1.4.build.log")
    new = _read(RTX_LOGS / "light_vgg19.fp16.rtx1.5.build.log")
    assert old.versions["tensorrt_rtx"] == "1.4.0.76" and new.versions["tensorrt_rtx"] == "1.5.0.114"
    # 1.5 records the I/O tensors; 1.4 names them only: the layers give the same names, shapes and types
    assert new.io_tensors and all(t.format for t in new.io_tensors)
    assert [(t.name, t.shape, t.dtype, t.raw) for t in old.io_tensors] == \
        [(t.name, t.shape, t.dtype, t.raw) for t in new.io_tensors]
    assert all(t.format is None for t in old.io_tensors)  # unknown, not invented
    notes = [w for w in old.warnings if w.startswith("this build log")]
    assert len(notes) == 1 and "tensorrt_rtx 1.4.0.76" in notes[0]
    assert "no tensor formats" in notes[0] and "no I/O tensors" in notes[0] and "no profile shapes" not in notes[0]
    assert not any(w.startswith("this build log") for w in new.warnings)
    assert Counter(lay.precision for lay in old.layers) == Counter(lay.precision for lay in new.layers)


def test_rtx_1_4_log_of_dynamic_shapes_takes_the_profile_from_the_header(tmp_path: Path) -> None:
    path = RTX_LOGS / "silero_vad_op18_ifless.fp16.rtx1.4.build.log"
    info = _read(path)
    header = json.loads(path.read_text(encoding="utf-8").split("\n", 1)[0].split(" ", 2)[2])
    given = header["settings"]["profiles"][0]
    assert info.build_settings["profile_shapes"] == {
        k: dict(zip(("MinShape", "OptShape", "MaxShape"), v, strict=True)) for k, v in given.items()}
    io = {t.name: t for t in info.io_tensors}
    assert set(io) == {"input", "sr", "state", "output", "stateN"}
    assert io["input"].raw == "Input" and io["output"].raw == "Output" and -1 in io["input"].shape
    # the same log without trtstudio's header: the missing profile shapes are said, once
    bare = tmp_path / "bare.build.log"
    bare.write_text(path.read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    notes = [w for w in _read(bare).warnings if w.startswith("this build log")]
    assert len(notes) == 1 and "no profile shapes" in notes[0]
