"""engine.diagnose on real TensorRT outputs (positive cases) and hand-built engines (rules that must not fire),
and the ``trtstudio layers`` command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from trtstudio.cli import main
from trtstudio.engine.diagnose import TIME_INFO_SHARE, TIME_WARN_SHARE, by_time, diagnose, uses_tensor_cores
from trtstudio.engine.load import load_engine
from trtstudio.engine.model import EngineInfo, Finding, Layer, LayerTime, TensorDesc
from trtstudio.graph.model import load_model

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "trt-real"
SAMPLE = Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample"
needs_fixtures = pytest.mark.skipif(not FIXTURES.is_dir(), reason="real TensorRT fixtures not present")
A100 = FIXTURES / "NVIDIA_TensorRT_trex/release-11.0/examples/pytorch/resnet/A100"
FUZZY = FIXTURES / "fuzzylabs_edge-vision-power-estimation/desktop/torch_onnx_trtexec/results"
HACK = FIXTURES / "NVIDIA_trt-samples-for-hackathon-cn/HEAD/cookbook"


def kinds(findings: list[Finding], kind: str) -> list[Finding]:
    return [f for f in findings if f.kind == kind]


def _t(name: str, dtype: str | None, shape: list[int | str] | None = None, fmt: str | None = None) -> TensorDesc:
    return TensorDesc(name=name, dtype=dtype, shape=shape, format=fmt)


def _conv(name: str, src: str, dst: str, pin: str, pout: str, tactic: str | None, c: int = 64, k: int = 64,
          ms: float | None = None) -> Layer:
    return Layer(
        0, name, type="CaskConvolution", parameter_type="Convolution",
        inputs=[_t(src, pin, [1, c, 56, 56])], outputs=[_t(dst, pout, [1, k, 56, 56])], tactic=tactic,
        time=LayerTime(total_ms=ms, count=1) if ms is not None else None,
    )


def _reformat(name: str, src: str, dst: str, pin: str, pout: str, origin: str = "REFORMAT",
              ms: float | None = None) -> Layer:
    return Layer(
        0, name, type="Reformat", parameter_type="Reformat", origin=origin,
        inputs=[_t(src, pin, [1, 64, 56, 56])], outputs=[_t(dst, pout, [1, 64, 56, 56])],
        time=LayerTime(total_ms=ms, count=1) if ms is not None else None,
    )


def _engine(*layers: Layer, io: tuple[str, ...] = ()) -> EngineInfo:
    for i, lay in enumerate(layers):
        lay.index = i
    return EngineInfo(layers=list(layers), io_tensors=[TensorDesc(n) for n in io])


TC16 = "sm80_xmma_fprop_implicit_gemm_f16f16_f16f16_f16_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16"
SIMT16 = "sm70_xmma_gemm_as_conv1x1_f16f16_f16_f16_tn_n_simt_small_batch_bias_relu"


# --------------------------------------------------------------------------- real fixtures


@needs_fixtures
def test_mobilenet_v2_fp16_reformat_foreign_node_first_conv() -> None:
    eng = load_engine([FUZZY / "mobilenet_v2/mobilenet_v2_fp16.graph.json", FUZZY / "mobilenet_v2/mobilenet_v2_fp16.profile.json"])
    fs = diagnose(eng)
    ref = kinds(fs, "reformat")
    assert [f.layer_index for f in ref] == [0]
    assert "REFORMAT" in ref[0].message and "% of the time" in ref[0].message
    fn = kinds(fs, "foreign_node")
    assert len(fn) == 1 and "classifier.1.weight" in fn[0].message
    un = kinds(fs, "unaligned_channels")
    assert [(f.layer_index, f.severity) for f in un] == [(1, "info")]  # C=3 image input
    assert "multiple of 8" in un[0].hint and "expected" in un[0].hint
    assert not kinds(fs, "no_tensor_cores")  # sm80 tensor16x8x16 / depthwiseHMMA / gemv
    assert not kinds(fs, "names_only") and not kinds(fs, "plugin")
    shape = kinds(fs, "shape_ops")
    assert len(shape) == 1 and "2 of 57" in shape[0].message


@needs_fixtures
def test_trex_qat_int8_findings() -> None:
    doc = json.loads((A100 / "qat/resnet-qat.onnx.engine.graph.json").read_text())
    qdq_names = [rec["Name"] for rec in doc["Layers"] if rec.get("Origin") == "QDQ"]
    eng = load_engine([A100 / "qat/resnet-qat.onnx.engine.graph.json", A100 / "qat/resnet-qat.onnx.engine.profile.json"])
    fs = diagnose(eng)
    pf = kinds(fs, "precision_fallback")
    unfused = [f.layer for f in pf if "Q/DQ not fused" in f.message]
    # the quantize of the network's FP32 input (QuantizeLinear_2 reads input.1) is required, not unfused:
    # an info reformat at the boundary, with the I/O format that removes it (the layout it writes)
    assert qdq_names[0] == "QuantizeLinear_2" and doc["Layers"][0]["Inputs"][0]["Name"] == doc["Bindings"][0]
    assert unfused == qdq_names[1:]
    boundary = [f for f in kinds(fs, "reformat") if f.layer in qdq_names]
    assert [(f.layer, f.severity) for f in boundary] == [("QuantizeLinear_2", "info")]  # the others: no double report
    assert doc["Layers"][0]["Outputs"][0]["Format/Datatype"].startswith("Four wide channel vectorized")
    assert "--inputIOFormats=int8:chw4" in boundary[0].hint and "FP32 -> INT8" in boundary[0].message
    conv1 = [f for f in kinds(fs, "no_tensor_cores") if f.layer_index == 1]
    assert conv1 and "int8x4" in conv1[0].message
    requant = [f for f in pf if "re-quantized by" in f.message]
    # a re-quantized output is a warning, unless its layer holds under TIME_INFO_SHARE of the time
    shares = {f.layer_index: eng.layers[f.layer_index].time.percent for f in requant}
    assert requant and min(shares.values()) < TIME_INFO_SHARE <= max(shares.values())
    assert all(f.severity == ("info" if shares[f.layer_index] < TIME_INFO_SHARE else "warning") for f in requant)
    island = [f for f in pf if "FP32 island" in f.message]
    assert [f.layer for f in island] == ["MaxPool_12"]
    conv_reformat = [f for f in kinds(fs, "reformat") if f.layer == "Reformatting CopyNode for Output Tensor 0 to MaxPool_12"]
    assert conv_reformat and conv_reformat[0].severity == "warning" and "FP32 -> FP16" in conv_reformat[0].message


@needs_fixtures
def test_trex_qat_residual_variants_fuse_more() -> None:
    def unfused(variant: str, stem: str) -> int:
        eng = load_engine([A100 / variant / f"{stem}.onnx.engine.graph.json"])
        return len([f for f in diagnose(eng) if "Q/DQ not fused" in f.message])

    plain = unfused("qat", "resnet-qat")
    residual = unfused("qat-residual", "resnet-qat-residual")
    qgap = unfused("qat-residual-qgap", "resnet-qat-residual-qgap")
    assert plain > residual > qgap == 0
    # qgap's one Q/DQ layer left is the quantize of the network's FP32 input: required, said at info
    doc = json.loads((A100 / "qat-residual-qgap/resnet-qat-residual-qgap.onnx.engine.graph.json").read_text())
    qdq = [rec for rec in doc["Layers"] if rec.get("Origin") == "QDQ"]
    assert len(qdq) == 1 and qdq[0]["Inputs"][0]["Name"] in doc["Bindings"]
    eng = load_engine([A100 / "qat-residual-qgap/resnet-qat-residual-qgap.onnx.engine.graph.json"])
    assert [(f.layer, f.severity) for f in diagnose(eng) if f.layer == qdq[0]["Name"]] == [(qdq[0]["Name"], "info")]


@needs_fixtures
def test_trex_fp32_engine_is_quiet() -> None:
    eng = load_engine([A100 / "fp32/resnet.onnx.engine.graph.json", A100 / "fp32/resnet.onnx.engine.profile.json"])
    fs = diagnose(eng)
    assert not kinds(fs, "precision_fallback")
    assert not kinds(fs, "no_tensor_cores")
    # FP32 has no alignment rule but the first convolution's 3-channel image input (TF32 wants 4): info,
    # though it holds over TIME_WARN_SHARE of the time (expected where it is, not raised)
    doc = json.loads((A100 / "fp32/resnet.onnx.engine.graph.json").read_text())
    un = kinds(fs, "unaligned_channels")
    assert [(f.layer_index, f.severity) for f in un] == [(0, "info")]
    assert doc["Layers"][0]["Inputs"][0]["Dimensions"][1] == 3 and "C=3" in un[0].message
    assert eng.layers[0].time is not None and eng.layers[0].time.percent >= TIME_WARN_SHARE
    assert "expected" in un[0].hint and "4 channels" in un[0].hint
    assert all(f.severity != "error" for f in fs)
    # asking for FP16 turns the FP32 compute layers into fallbacks
    asked = [f for f in diagnose(eng, model_precision="fp16") if f.kind == "precision_fallback"]
    assert len(asked) >= 20 and all("asks for FP16" in f.message for f in asked)


@needs_fixtures
def test_old_mobilenet_qat_int8x4_kernels_lack_tensor_cores() -> None:
    eng = load_engine([FIXTURES / "NVIDIA_TensorRT_trex/older/tests/inputs/mobilenet.qat.onnx.engine.graph__added_in_26210e92.json"])
    ntc = kinds(diagnose(eng), "no_tensor_cores")
    assert ntc
    for f in ntc:
        tactic = eng.layers[f.layer_index].tactic  # type: ignore[index]
        assert tactic and uses_tensor_cores(tactic) is False


@needs_fixtures
def test_plugin_layers_and_plugin_log_lines() -> None:
    eng = load_engine([HACK / "05-Plugin/Tactic+TimingCache/log-main.py.log"])
    pl = kinds(diagnose(eng), "plugin")
    assert [f.layer for f in pl] == [lay.name for lay in eng.layers if lay.type == "PluginV3"]
    assert len(pl) == 2 and "PluginV3" in pl[0].message
    # hackathon result-08: the AddScalar plugin is only visible in the trtexec log lines
    path = HACK / "07-Tool/trtexec/result-08.log"
    eng = load_engine([path])
    assert any("plugin" in line.lower() for line in eng.log)  # the reader keeps the plugin lines
    pl = kinds(diagnose(eng), "plugin")
    assert len(pl) == 1 and "AddScalar" in pl[0].message and pl[0].layer is None


@needs_fixtures
def test_detr_names_only() -> None:
    eng = load_engine([FIXTURES / "farabimahmud_detr-logs-trtexec/detr-layer-info.json"])
    fs = diagnose(eng)
    no = kinds(fs, "names_only")
    assert len(no) == 1 and "--profilingVerbosity=detailed" in no[0].message
    assert kinds(fs, "foreign_node")
    assert len(kinds(fs, "reformat")) == sum(1 for lay in eng.layers if lay.name.startswith("Reformatting CopyNode"))
    assert not kinds(fs, "no_tensor_cores")  # no tactics in names-only info


@needs_fixtures
def test_dla_region() -> None:
    eng = load_engine([FIXTURES / "ismetdagli_HaX-CoNN/googlenet_dla_mark_at_67.profile"])
    fn = kinds(diagnose(eng), "foreign_node")
    assert fn and all(f.message.startswith("DLA region {") for f in fn)
    assert "DLA" in fn[0].hint


# --------------------------------------------------------------------------- hand-built, negative cases


def test_tensor_core_markers() -> None:
    assert uses_tensor_cores(TC16) is True
    assert uses_tensor_cores("ampere_h16816gemm_256x64_ldg8_relu_nn_v1") is True
    assert uses_tensor_cores("sm80_xmma_fprop_image_first_layer_f16f16_f32_f16_nhwckrsc_nhwc_hmma_k64c4r7s7") is True
    assert uses_tensor_cores("sm90_xmma_gemm_f16f16_f16f16_f16_tn_n_tilesize64x64x64_cgasize1x1x1_warpgroupsize1x1x1") is True
    assert uses_tensor_cores(SIMT16) is False
    assert uses_tensor_cores("volta_int8x4_icudnn_int8x4_128x64_relu_interior_nn_v1") is False
    assert uses_tensor_cores("sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize32x32x8_stage3_ffma") is False
    assert uses_tensor_cores("__myl_Add_0x40caea46") is None


def test_no_tensor_cores_only_for_low_precision_conv_gemm() -> None:
    eng = _engine(
        _conv("tc", "a", "b", "FP16", "FP16", TC16),
        _conv("simt", "b", "c", "FP16", "FP16", SIMT16),
        _conv("fp32", "c", "d", "FP32", "FP32", "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_ffma"),
        Layer(0, "gemv", type="gemm", inputs=[_t("d", "FP16", [1, 1280])], outputs=[_t("e", "FP16", [1, 1000])],
              tactic="sm50_xmma_cublas_gemvx_f16f16_f32_f32_tn_n_int32_unit_n_launch_param4x32x32"),
        _conv("notactic", "e", "f", "FP16", "FP16", None),
    )
    ntc = kinds(diagnose(eng), "no_tensor_cores")
    assert [f.layer for f in ntc] == ["simt"]


def test_unaligned_channels_rules() -> None:
    eng = _engine(
        _conv("ok16", "a", "b", "FP16", "FP16", TC16, c=64, k=128),
        _conv("bad16", "b", "c", "FP16", "FP16", TC16, c=60, k=128),
        _conv("int8_8", "c", "d", "INT8", "INT8", TC16, c=24, k=32),
        _conv("fp32", "d", "e", "FP32", "FP32", None, c=3, k=7),
        Layer(0, "mm", type="gemm", inputs=[_t("e", "FP16", [1, 77, 768])], outputs=[_t("f", "FP16", [1, 77, 1001])]),
    )
    un = {f.layer: f for f in kinds(diagnose(eng), "unaligned_channels")}
    assert set(un) == {"bad16", "int8_8", "mm"}
    assert "C=60" in un["bad16"].message and un["bad16"].severity == "warning"
    assert "C=24" in un["int8_8"].message and "16" in un["int8_8"].message
    assert "K=1001" in un["mm"].message and "C=" not in un["mm"].message


def test_fp32_island_fires_only_between_reduced_layers() -> None:
    island = _engine(
        _conv("c1", "x", "a", "FP16", "FP16", TC16),
        _reformat("r1", "a", "a32", "FP16", "FP32"),
        Layer(0, "pool", type="CaskPooling", parameter_type="Pooling",
              inputs=[_t("a32", "FP32")], outputs=[_t("p32", "FP32")]),
        _reformat("r2", "p32", "p16", "FP32", "FP16"),
        _conv("c2", "p16", "y", "FP16", "FP16", TC16),
        io=("x", "y"),
    )
    pf = kinds(diagnose(island), "precision_fallback")
    assert [f.layer for f in pf] == ["pool"] and "FP16" in pf[0].message
    # the same chain all in FP32 has no island, and no type-converting reformat
    plain = _engine(
        _conv("c1", "x", "a", "FP32", "FP32", None),
        Layer(0, "pool", type="CaskPooling", inputs=[_t("a", "FP32")], outputs=[_t("p", "FP32")]),
        _conv("c2", "p", "y", "FP32", "FP32", None),
        io=("x", "y"),
    )
    assert not kinds(diagnose(plain), "precision_fallback")
    ref = kinds(diagnose(island), "reformat")
    assert [f.severity for f in ref] == ["warning", "warning"]


def test_reformat_severity_by_time_share_and_boundary() -> None:
    eng = _engine(
        _reformat("in", "x", "x16", "FP32", "FP16", ms=0.1),
        _conv("c1", "x16", "a", "FP16", "FP16", TC16, ms=9.0),
        _reformat("same_cheap", "a", "b", "FP16", "FP16", ms=0.01),
        _conv("c2", "b", "c", "FP16", "FP16", TC16, ms=9.0),
        _reformat("same_costly", "c", "d", "FP16", "FP16", ms=1.0),
        _conv("c3", "d", "y", "FP16", "FP16", TC16, ms=1.0),
        io=("x", "y"),
    )
    ref = {f.layer: f for f in kinds(diagnose(eng), "reformat")}
    assert ref["in"].severity == "info" and "engine's input/output" in ref["in"].message
    assert ref["same_cheap"].severity == "info"
    assert ref["same_costly"].severity == "warning" and "% of the time" in ref["same_costly"].message
    noop = _engine(Layer(0, "Reformatting CopyNode for Input Tensor 0 to x", type="NoOp", attrs={"reformat": True}))
    assert not kinds(diagnose(noop), "reformat")


def test_int8_conv_float_output_severity() -> None:
    eng = _engine(
        _conv("q_in", "x", "a", "INT8", "FP16", TC16),
        _reformat("QuantizeLinear_9", "a", "a8", "FP16", "INT8", origin="QDQ"),
        _conv("last", "a8", "y", "INT8", "FP32", TC16),
        io=("x", "y"),
    )
    pf = {f.layer: f for f in kinds(diagnose(eng), "precision_fallback")}
    assert pf["q_in"].severity == "warning" and "QuantizeLinear_9" in pf["q_in"].message
    assert "last" not in pf  # its FP32 output is the network's output (a classifier's logits): nothing to fuse
    assert "Q/DQ not fused" in pf["QuantizeLinear_9"].message
    # the same float output read by another layer is the last INT8 layer of a region: info
    mid = _engine(
        _conv("last", "x", "a", "INT8", "FP32", TC16),
        Layer(0, "pool", type="CaskPooling", inputs=[_t("a", "FP32")], outputs=[_t("y", "FP32")]),
        io=("x", "y"),
    )
    assert [(f.layer, f.severity) for f in kinds(diagnose(mid), "precision_fallback")] == [("last", "info")]
    # an INT8 -> INT8 conv is what we want: no finding
    ok = _engine(_conv("good", "x", "y", "INT8", "INT8", TC16))
    assert not kinds(diagnose(ok), "precision_fallback")


def test_unsupported_and_names_only_and_clean_engine() -> None:
    eng = _engine(_conv("c", "x", "y", "FP16", "FP16", TC16), io=("x", "y"))
    assert diagnose(eng) == []  # nothing to say about a clean, detailed engine
    fs = diagnose(eng, unsupported=[{"node": "/roi/RoiAlign", "op_type": "RoiAlign", "reason": "no importer"}])
    (u,) = kinds(fs, "unsupported_node")
    assert u.severity == "error" and u.nodes == ["/roi/RoiAlign"] and "no importer" in u.message
    eng.detailed = False
    assert kinds(diagnose(eng), "names_only")
    assert not kinds(diagnose(eng), "plugin")


def test_shape_ops_share_and_graph_op_types(tmp_path: Path) -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 128])
    w = numpy_helper.from_array(np.ones((8, 8, 1, 1), np.float32), "w")
    shp = numpy_helper.from_array(np.array([1, -1], np.int64), "shp")
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
         helper.make_node("Reshape", ["c", "shp"], ["y"], name="flat")],
        "g", [x], [y], [w, shp],
    )
    p = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), p)
    model = load_model(p)
    eng = _engine(
        _conv("conv", "x", "c", "FP16", "FP16", TC16, c=8, k=8, ms=1.0),
        Layer(0, "flat", type="Unknown", inputs=[_t("c", "FP16")], outputs=[_t("y", "FP16")],
              time=LayerTime(total_ms=1.0, count=1)),
        io=("x", "y"),
    )
    fs = diagnose(eng, model)  # maps the layers first
    assert eng.layers[1].onnx_nodes == ["flat"]
    (s,) = kinds(fs, "shape_ops")
    assert "1 of 2" in s.message and "50.0 %" in s.message and s.severity == "warning"
    assert s.nodes == ["flat"]
    assert not kinds(diagnose(_engine(_conv("conv", "x", "c", "FP16", "FP16", TC16, c=8, k=8))), "shape_ops")


# --------------------------------------------------------------------------- CLI


@needs_fixtures
def test_layers_cli_json_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(A100 / "qat/resnet-qat.onnx.engine.graph.json"), str(A100 / "qat/resnet-qat.onnx.engine.profile.json")]
    assert main(["layers", *files, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "trtstudio.layers/1"
    assert len(doc["layers"]) == 37 and doc["findings"]
    assert {f["kind"] for f in doc["findings"]} >= {"precision_fallback", "reformat", "no_tensor_cores"}
    assert main(["layers", *files]) == 0
    out = capsys.readouterr().out
    assert "QuantizeLinear_2" in out and "FP32>INT8" in out and "hint:" in out and "findings:" in out
    assert main(["layers", *files, "--findings-only"]) == 0
    out = capsys.readouterr().out
    assert "CaskConvolution" not in out.split("findings:")[0]
    from trtstudio.commands import _emit

    assert _emit.ENDING.kept == []  # main in a process that goes on holds nothing (only the program, entry, does)


def test_layers_cli_with_onnx_maps_nodes(capsys: pytest.CaptureFixture[str]) -> None:
    log = SAMPLE / "mobilenetv2_035.rtx-sm86.build.log"
    assert main(["layers", str(log), "--onnx", str(SAMPLE / "mobilenetv2_035.onnx"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["mapping"]["mapped_nodes"] > 50
    assert any(lay["onnx_nodes"] and lay["mapping_confidence"] == 1.0 for lay in doc["layers"])


def test_layers_cli_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["layers", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err
    bad = tmp_path / "x.graph.json"
    bad.write_text('{"Layers": 5}')
    assert main(["layers", str(bad)]) == 2
    assert "x.graph.json" in capsys.readouterr().err
    notonnx = tmp_path / "m.onnx"
    notonnx.write_text("nope")
    assert main(["layers", str(SAMPLE / "mobilenetv2_035.rtx-sm86.build.log"), "--onnx", str(notonnx)]) == 2


def test_required_quantize_and_dequantize_at_the_engine_boundary_are_info_with_their_io_format() -> None:
    eng = _engine(
        _reformat("QuantizeLinear_in", "x", "x8", "FP32", "INT8", origin="QDQ", ms=30.0),  # reads the engine input
        _conv("c1", "x8", "a", "INT8", "INT8", TC16),
        _reformat("QuantizeLinear_mid", "a", "a2", "FP16", "INT8", origin="QDQ"),
        _conv("c2", "a2", "b", "INT8", "INT8", TC16),
        _reformat("DequantizeLinear_out", "b", "b32", "INT8", "FP32", origin="QDQ"),
        Layer(0, "squeeze", type="NoOp", inputs=[_t("b32", "FP32")], outputs=[_t("y", "FP32")]),  # then the output
        io=("x", "y"),
    )
    eng.layers[0].outputs[0].format = "Thirty-two wide channel vectorized row major Int8 format"
    fs = diagnose(eng)
    unfused = [f.layer for f in kinds(fs, "precision_fallback") if "Q/DQ not fused" in f.message]
    assert unfused == ["QuantizeLinear_mid"]
    boundary = {f.layer: f for f in kinds(fs, "reformat")}
    assert set(boundary) == {"QuantizeLinear_in", "DequantizeLinear_out"}
    # info whatever the time: the input quantize holds all of the profiled time
    assert [f.severity for f in boundary.values()] == ["info", "info"]
    assert "--inputIOFormats=int8:chw32" in boundary["QuantizeLinear_in"].hint
    assert "--outputIOFormats=int8:chw" in boundary["DequantizeLinear_out"].hint
    # without the engine's I/O named, the tensors no layer writes or reads are its I/O all the same
    eng.io_tensors = []
    assert [f.layer for f in kinds(diagnose(eng), "precision_fallback")] == ["QuantizeLinear_mid"]


def test_severity_follows_the_time_at_stake() -> None:
    # three unaligned convolutions (a warning by the rule) holding 90 %, 8.5 % and 1.5 % of the time
    eng = _engine(
        _conv("big", "x", "a", "FP16", "FP16", TC16, c=60, ms=90.0),
        _conv("mid", "a", "b", "FP16", "FP16", TC16, c=60, ms=8.5),
        _conv("small", "b", "y", "FP16", "FP16", TC16, c=60, ms=1.5),
        io=("x", "y"),
    )
    un = {f.layer: f.severity for f in kinds(diagnose(eng), "unaligned_channels")}
    assert un == {"big": "warning", "mid": "warning", "small": "info"}
    # an info finding (a cheap same-type reformat) on a layer holding 20 % of the time is raised
    hot = _engine(
        _conv("c1", "x", "a", "FP16", "FP16", TC16, ms=4.0),
        _reformat("hot", "a", "b", "FP16", "FP16", ms=1.0),
        _conv("c2", "b", "y", "FP16", "FP16", TC16, ms=0.0),
        io=("x", "y"),
    )
    (ref,) = kinds(diagnose(hot), "reformat")
    assert ref.layer == "hot" and ref.severity == "warning"
    # the thresholds: raised at TIME_WARN_SHARE, lowered under TIME_INFO_SHARE, errors and engine findings kept
    fs = [Finding("k", "info", "m", layer_index=0), Finding("k", "warning", "m", layer_index=1),
          Finding("k", "error", "m", layer_index=1), Finding("k", "warning", "m")]
    lays = _engine(Layer(0, "a", time=LayerTime(total_ms=TIME_WARN_SHARE, count=1)),
                   Layer(0, "b", time=LayerTime(total_ms=TIME_INFO_SHARE * 0.99, count=1)),
                   Layer(0, "c", time=LayerTime(total_ms=100.0 - TIME_WARN_SHARE - TIME_INFO_SHARE * 0.99, count=1)))
    assert [f.severity for f in by_time(fs, lays)] == ["warning", "info", "error", "warning"]
    # without a profile the rules' severities stand
    untimed = _engine(_conv("small", "x", "y", "FP16", "FP16", TC16, c=60))
    assert [f.severity for f in kinds(diagnose(untimed), "unaligned_channels")] == ["warning"]


@needs_fixtures
def test_a_model_that_is_not_the_engines_is_said_to_be_another(tmp_path: Path) -> None:
    from onnx_models import conv_net

    from trtstudio.engine.analysis import analyze
    from trtstudio.engine.summary import mapping_text

    model = tmp_path / "conv.onnx"
    onnx.save(conv_net(), str(model))
    path = A100 / "fp32/resnet.onnx.engine.graph.json"
    recs = json.loads(path.read_text())["Layers"]
    counted = sum(1 for r in recs if r["LayerType"] != "Reformat" and not r["Name"].startswith("Reformatting CopyNode"))
    a = analyze(load_engine([path]), load_model(model))
    (other,) = kinds(a.findings, "other_model")
    assert other.severity == "warning" and f"only 0 of {counted} " in other.message and "not the one" in other.message
    # an engine built from conv_net (its layers named after its nodes, one node folded): no such finding
    own = _engine(_conv("/conv1/Conv + /relu/Relu", "x", "r1", "FP16", "FP16", TC16),
                  _conv("/conv2/Conv + /add/Add", "r1", "a1", "FP16", "FP16", TC16),
                  Layer(0, "/pool/GlobalAveragePool", type="CaskPooling", inputs=[_t("a1", "FP16")],
                        outputs=[_t("p1", "FP16")]),
                  Layer(0, "/fc/Gemm", type="CaskGemm", inputs=[_t("p1", "FP16")], outputs=[_t("y", "FP16")]),
                  io=("x", "y"))
    b = analyze(own, load_model(model))
    assert not kinds(b.findings, "other_model")
    assert mapping_text(b.engine, b.mapping).endswith("1 nodes have no layer (folded or fused away)")
    text = mapping_text(a.engine, a.mapping)
    assert "probably not the one the engine was built from" in text and "folded" not in text
