"""Readers of TensorRT outputs, checked against real files from public repositories.

Expected values are derived from the fixture files themselves (json.load, plain string handling) where
possible, so a reader bug cannot hide behind a copied constant.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

from trtstudio.engine.load import detect_format, load_engine, match_times
from trtstudio.engine.readers import find_reader, read_file
from trtstudio.engine.readers._common import base_name, parse_dtype, trt_version_from_tag
from trtstudio.errors import InputError

FIX = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "trt-real"
needs_fixtures = pytest.mark.skipif(not FIX.is_dir(), reason=f"fixtures absent: {FIX}")

TREX = FIX / "NVIDIA_TensorRT_trex"
A100 = TREX / "release-11.0/examples/pytorch/resnet/A100"
RTX3090 = TREX / "release-11.0/examples/tensorflow/resnet/RTX-3090"
HACK = FIX / "NVIDIA_trt-samples-for-hackathon-cn"
TRTEXEC = HACK / "HEAD/cookbook/07-Tool/trtexec"
FEATURE = HACK / "HEAD/cookbook/04-Feature"
POLY = HACK / "HEAD/cookbook/07-Tool/Polygraphy/Inspect"
FUZZY = FIX / "fuzzylabs_edge-vision-power-estimation"
HAX = FIX / "ismetdagli_HaX-CoNN"
DETR = FIX / "farabimahmud_detr-logs-trtexec"


def _graph_files() -> list[Path]:
    if not FIX.is_dir():
        return []
    pats = ("*.graph*.json", "*engine_info*.json", "*exportLayerInfo*.log")
    return sorted({p for pat in pats for p in FIX.rglob(pat)})


def _json(path: Path):  # type: ignore[no-untyped-def]
    return json.loads(path.read_text())


# --------------------------------------------------------------------------------------------- dtypes


@pytest.mark.parametrize(
    "text,dtype",
    [
        ("Row major linear FP32", "FP32"),
        ("Channel major FP16 format where channel % 8 == 0", "FP16"),
        ("Four wide channel vectorized row major Int8 format", "INT8"),
        ("Thirty-two wide channel vectorized row major Int8 format", "INT8"),
        ("Half", "FP16"),
        ("Float", "FP32"),
        ("Int8", "INT8"),
        ("Int32", "INT32"),
        ("Int64", "INT64"),
        ("Bool", "BOOL"),
        ("UInt8", "UINT8"),
        ("BFloat16", "BF16"),
        ("Row major linear BF16 format", "BF16"),
        ("FP8", "FP8"),
        ("FP4", "FP4"),
        ("Row major linear FP32 format (kLINEAR)", "FP32"),
        ("Unknown format", None),
        ("", None),
    ],
)
def test_parse_dtype(text: str, dtype: str | None) -> None:
    assert parse_dtype(text) == dtype


def test_version_tags_and_profile_names() -> None:
    assert trt_version_from_tag("101601") == "10.16.1"
    assert trt_version_from_tag("8600") == "8.6.0"
    assert trt_version_from_tag("8401") == "8.4.1"
    assert base_name("node_conv2d + node_relu [profile 1]") == "node_conv2d + node_relu"
    assert base_name("node_linear [profile 1]_myl15_1") == "node_linear_myl15_1"


# --------------------------------------------------------------------------- inspector JSON (all files)


@needs_fixtures
@pytest.mark.parametrize("path", _graph_files(), ids=lambda p: str(p.relative_to(FIX))[-60:])
def test_every_layer_json_fixture(path: Path) -> None:
    doc = _json(path)
    info = load_engine([path])
    assert detect_format(path) == "inspector-json"
    names = [x if isinstance(x, str) else x["Name"] for x in doc["Layers"]]
    assert [lay.name for lay in info.layers] == names
    if all(isinstance(x, str) for x in doc["Layers"]):
        assert info.detailed is False
        assert any("--profilingVerbosity=detailed" in w for w in info.warnings)
        return
    assert info.detailed is True
    want_reformat = sum(1 for x in doc["Layers"] if x.get("LayerType") == "Reformat")
    assert sum(1 for lay in info.layers if lay.type == "Reformat") == want_reformat
    for rec, lay in zip(doc["Layers"], info.layers, strict=True):
        assert lay.type == rec["LayerType"]
        assert lay.tactic_value == rec.get("TacticValue")
        assert lay.tactic == (rec.get("TacticName") or None)
        assert lay.origin == rec.get("Origin")
        assert lay.metadata == rec.get("Metadata")
        assert [t.name for t in lay.outputs] == [t["Name"] for t in rec["Outputs"]]
        if rec["Outputs"]:
            fmt = rec["Outputs"][0]["Format/Datatype"]
            # independent check: the type named in the first output's format string
            for token, dt in (("FP16", "FP16"), ("Half", "FP16"), ("Int8", "INT8"), ("FP32", "FP32"),
                              ("Float", "FP32"), ("Int32", "INT32"), ("Int64", "INT64")):
                if token in fmt:
                    assert lay.outputs[0].dtype == dt, fmt
                    break
    assert [t.name for t in info.io_tensors] == list(doc["Bindings"])


@needs_fixtures
def test_a100_fp16_known_layer() -> None:
    info = load_engine([A100 / "fp16/resnet.onnx.engine.graph.json"])
    conv = next(lay for lay in info.layers if lay.name == "Conv_0 + Relu_1")
    assert conv.type == "CaskConvolution"
    assert conv.precision == "FP16"
    assert conv.tactic_value == "0xe2222883a6602489"
    assert conv.tactic is not None and "hmma" in conv.tactic
    assert conv.inputs[0].shape == [32, 3, 224, 224]
    assert conv.inputs[0].format == "Channel major FP16 format where channel % 4 == 0"
    assert conv.attrs["Kernel"] == [7, 7]
    first = info.layers[0]
    assert first.type == "Reformat" and first.origin == "REFORMAT"
    assert first.precision_in == "FP32" and first.precision_out == "FP16"


@needs_fixtures
def test_qat_int8_and_qdq_origin() -> None:
    path = A100 / "qat/resnet-qat.onnx.engine.graph.json"
    doc = _json(path)
    info = load_engine([path])
    int8_want = sum(1 for x in doc["Layers"] if x["Outputs"] and "Int8" in x["Outputs"][0]["Format/Datatype"])
    assert int8_want > 0
    assert sum(1 for lay in info.layers if lay.precision_out == "INT8") == int8_want
    qdq_want = sum(1 for x in doc["Layers"] if x.get("Origin") == "QDQ")
    assert sum(1 for lay in info.layers if lay.origin == "QDQ") == qdq_want


def _qat_graphs() -> list[Path]:
    return sorted(p for p in TREX.rglob("*qat*.graph*.json")) if TREX.is_dir() else []


@needs_fixtures
@pytest.mark.parametrize("path", _qat_graphs(), ids=lambda p: str(p.relative_to(TREX)))
def test_fused_qdq_layers_compute_int8(path: Path) -> None:
    """Every fused Q/DQ layer of TREx's QAT engines (name with QuantizeLinear, or tf2onnx's
    QuantLinearNode, and first input INT8) reads INT8 as its compute precision in the JSON, the layer
    table and Layer.precision, whatever its output type; precision_in/precision_out stay the tensors'
    own (issue 28 item 2)."""
    from trtstudio.engine.table import layer_columns

    raw = _json(path)["Layers"]
    info = load_engine([path])
    doc = info.to_json()["layers"]
    cols = layer_columns(info)
    want = [i for i, x in enumerate(raw) if ("QuantizeLinear" in x["Name"] or "QuantLinearNode" in x["Name"])
            and x["Inputs"] and "Int8" in x["Inputs"][0]["Format/Datatype"]]
    assert want, "a QAT engine has fused Q/DQ layers"
    assert any("Int8" not in raw[i]["Outputs"][0]["Format/Datatype"] for i in want) or "qgap" in path.name
    for i in want:
        out = parse_dtype(raw[i]["Outputs"][0]["Format/Datatype"])
        assert (doc[i]["precision"], info.layers[i].precision, cols.precision[i]) == ("INT8",) * 3, raw[i]["Name"]
        assert (doc[i]["precision_in"], doc[i]["precision_out"]) == ("INT8", out)


@needs_fixtures
def test_trt82_graph_keeps_extra_keys() -> None:
    path = TREX / "older/tests/inputs/mobilenet.qat.onnx.engine.graph__added_in_26210e92.json"
    doc = _json(path)
    info = load_engine([path])
    idx = next(i for i, x in enumerate(doc["Layers"]) if "ConvolutionTacticIndex" in x)
    assert info.layers[idx].attrs["ConvolutionTacticIndex"] == doc["Layers"][idx]["ConvolutionTacticIndex"]


@needs_fixtures
def test_torch_tensorrt_names_and_metadata_separator() -> None:
    info = load_engine([FUZZY / "desktop/torch_trt/results/resnet18/trt_profiling/trt_engine_info.json"])
    assert any(lay.name.startswith("[CONVOLUTION]-[aten_ops.convolution.default]") for lay in info.layers)
    onnx = load_engine([FUZZY / "desktop/torch_onnx_trtexec/results/resnet18/resnet18_fp16.graph.json"])
    fused = [lay.metadata for lay in onnx.layers if lay.metadata and "\x1e" in lay.metadata]
    assert fused, "Metadata must stay raw with its \\x1e separators"
    assert {lay.type for lay in onnx.layers} >= {"kgen", "shape_call"}


@needs_fixtures
def test_reformat_copynode_noop_flagged() -> None:
    path = FUZZY / "desktop/torch_onnx_trtexec/results/resnet18/resnet18_fp16.graph.json"
    doc = _json(path)
    info = load_engine([path])
    want = [x["Name"] for x in doc["Layers"] if "Reformatting CopyNode" in x["Name"] and x["LayerType"] != "Reformat"]
    assert want
    got = [lay.name for lay in info.layers if lay.attrs.get("reformat")]
    assert got == want


# ------------------------------------------------------------------------------------------- profiles


@needs_fixtures
@pytest.mark.parametrize("variant", ["fp32", "fp16", "qat", "qat-residual", "qat-residual-qgap"])
def test_trex_graph_plus_profile_plus_timing(variant: str) -> None:
    folder = A100 / variant
    files = sorted(folder.glob("*.json"))
    info = load_engine(files)
    prof = _json(next(folder.glob("*.engine.profile.json")))
    recs = prof[1:]
    assert prof[0] == {"count": 1}
    assert info.total_time_ms == pytest.approx(sum(r["timeMs"] for r in recs))
    timed = {lay.name: lay.time for lay in info.layers if lay.time}
    assert len(timed) == len(recs)
    r = max(recs, key=lambda x: x["timeMs"])
    assert timed[r["name"]].average_ms == pytest.approx(r["averageMs"])
    assert timed[r["name"]].median_ms == pytest.approx(r["medianMs"])
    assert timed[r["name"]].count == 1
    assert not any("profile" in w and "match" in w for w in info.warnings)
    # timings: latency statistics from the per-inference records
    times = _json(next(folder.glob("*.timing.json")))
    lat = [t["latencyMs"] for t in times]
    assert info.latency_ms["count"] == len(lat)
    assert info.latency_ms["mean"] == pytest.approx(statistics.fmean(lat))
    assert info.latency_ms["median"] == pytest.approx(statistics.median(lat))
    assert info.latency_ms["max"] == pytest.approx(max(lat))
    assert info.latency_ms["compute_mean"] == pytest.approx(statistics.fmean(t["computeMs"] for t in times))
    # metadata
    build = _json(next(folder.glob("*.build.metadata.json")))
    assert info.build_settings["Precision"] == build["build_options"]["Precision"]
    assert info.device["name"] == "NVIDIA A100 80GB PCIe"
    assert info.device["compute_capability"] in ("8.0", "8")
    assert {"inspector-json", "trtexec-profile", "trtexec-times", "trex-metadata"} <= set(info.formats)


@needs_fixtures
def test_profile_metadata_summary() -> None:
    path = RTX3090 / "fp16/resnet.onnx.engine.profile.metadata.json"
    perf = _json(path)["performance_summary"]
    info = load_engine([path])
    lat = perf["Latency"]
    assert info.latency_ms["min"] == lat[0] and info.latency_ms["mean"] == lat[2]
    assert info.latency_ms["p99"] == lat[-1]
    assert info.latency_ms["throughput_qps"] == perf["Throughput"]


@needs_fixtures
def test_pycuda_device_metadata() -> None:
    path = A100 / "fp16/resnet.onnx.engine.metadata.json"
    rec = _json(path)[0]
    info = load_engine([path])
    assert detect_format(path) == "trex-metadata"
    assert info.device["name"] == rec["Name"]
    assert info.device["compute_capability"] == "{}.{}".format(*rec["ComputeCapability"])
    assert info.device["memory_bytes"] == rec["TotalMemory"]
    assert info.versions["cuda"] == ".".join(str(x) for x in rec["CUDA_VERSION"])


@needs_fixtures
def test_profile_without_median_trt82() -> None:
    path = TREX / "older/tests/inputs/mobilenet.qat.onnx.engine.profile__added_in_26210e92.json"
    doc = _json(path)
    graph = TREX / "older/tests/inputs/mobilenet.qat.onnx.engine.graph__added_in_26210e92.json"
    info = load_engine([graph, path])
    assert all(lay.time is None or lay.time.median_ms is None for lay in info.layers)
    assert info.total_time_ms == pytest.approx(sum(r.get("medianMs", r["averageMs"]) for r in doc[1:]))


@needs_fixtures
def test_profile_only_and_mismatch_warning() -> None:
    info = load_engine([A100 / "fp16/resnet.onnx.engine.profile.json"])
    assert info.detailed is False
    assert any("no layer information" in w for w in info.warnings)
    other = load_engine([A100 / "fp16/resnet.onnx.engine.graph.json", RTX3090 / "fp16/resnet.onnx.engine.profile.json"])
    warn = [w for w in other.warnings if "profiled layer names match" in w]
    assert warn and re.search(r"only \d+ of \d+", warn[0])


@needs_fixtures
def test_names_only_detr_with_profile() -> None:
    layers = _json(DETR / "detr-layer-info.json")["Layers"]
    prof = _json(DETR / "detr-profile.json")
    info = load_engine([DETR / "detr-layer-info.json", DETR / "detr-profile.json"])
    assert len(info.layers) == len(layers) == 840
    assert info.detailed is False
    assert any("--profilingVerbosity=detailed" in w for w in info.warnings)
    assert info.total_time_ms == pytest.approx(sum(r.get("medianMs", r["averageMs"]) for r in prof[1:]))
    assert all(lay.time is not None and lay.time.count == prof[0]["count"] for lay in info.layers)
    assert sum(1 for lay in info.layers if lay.type == "Reformat") == sum(
        1 for n in layers if "Reformatting CopyNode" in n
    )


@needs_fixtures
def test_names_only_trainstation() -> None:
    folder = TREX / "older/src/notebooks"
    info = load_engine([folder / "layer_info__added_in_8e449266.json", folder / "profile__added_in_8e449266.json"])
    ts = [lay for lay in info.layers if lay.name.startswith("[trainStation")]
    assert ts and all(lay.type == "TrainStation" and lay.time is not None for lay in ts)


@needs_fixtures
@pytest.mark.parametrize("name", sorted(p.name for p in HAX.glob("*.profile")) if HAX.is_dir() else [])
def test_haxconn_legacy_profiles(name: str) -> None:
    path = HAX / name
    doc = _json(path)
    info = load_engine([path])
    assert detect_format(path) == "trtexec-profile"
    assert len(info.layers) == len(doc) - 1
    assert info.total_time_ms == pytest.approx(sum(r.get("medianMs", r["averageMs"]) for r in doc[1:]))
    n_reformat = sum(1 for r in doc[1:] if "reformatter" in r["name"])
    assert sum(1 for lay in info.layers if lay.type == "Reformat") == n_reformat
    n_dla = sum(1 for r in doc[1:] if r["name"].startswith("{") and r["name"].endswith("}"))
    assert sum(1 for lay in info.layers if lay.type == "DLA") == n_dla
    if "dla" in name:
        assert n_dla > 0
        assert any(lay.type == "DLATransfer" for lay in info.layers)


# ----------------------------------------------------------------------------------------------- logs


@needs_fixtures
def test_trtexec_1016_performance_summary() -> None:
    path = TRTEXEC / "result-01.log"
    text = path.read_text()
    info = load_engine([path])
    assert detect_format(path) == "trtexec-log"
    assert info.versions["tensorrt"] == "10.16.1"
    line = next(ln for ln in text.splitlines() if "] Latency: min = " in ln)
    nums = [float(x) for x in re.findall(r"= ([\d.]+) ms", line)]
    assert info.latency_ms["min"] == nums[0] and info.latency_ms["max"] == nums[1]
    assert info.latency_ms["mean"] == nums[2] and info.latency_ms["median"] == nums[3]
    assert info.latency_ms["p90"] == nums[4] and info.latency_ms["p99"] == nums[6]
    assert info.latency_ms["throughput_qps"] == 15374.3
    assert info.latency_ms["compute_mean"] == 0.0359588
    assert info.latency_ms["host_walltime_ms"] == pytest.approx(3000.13)
    assert info.device["name"] == "NVIDIA H100 PCIe" and info.device["compute_capability"] == "9.0"
    assert info.memory["engine_size"] == round(12.5744 * 2**20)
    assert info.memory["weights"] == 13100672 and info.memory["activation"] == 125440
    assert info.build_settings["Precision"] == "FP32"
    assert info.build_settings["command"].startswith("trtexec --onnx=")


@needs_fixtures
def test_trtexec_dump_layer_info_oneline_matches_json_export() -> None:
    info = load_engine([TRTEXEC / "result-04.log"])
    doc = _json(TRTEXEC / "model-trained-exportLayerInfo.log")
    assert [lay.name for lay in info.layers] == [x["Name"] for x in doc["Layers"]]
    assert [lay.type for lay in info.layers] == [x["LayerType"] for x in doc["Layers"]]
    assert [lay.metadata for lay in info.layers] == [x["Metadata"] for x in doc["Layers"]]
    conv = info.layers[0]
    assert conv.precision == "FP32" and conv.inputs[0].shape == [1, 1, 28, 28]
    assert conv.tactic is not None and conv.tactic.startswith("sm80_xmma_fprop")
    assert conv.attrs["Kernel"] == [5, 5] and conv.stream == 0
    assert info.layers[-1].precision_out == "INT64"
    assert [t.name for t in info.io_tensors] == ["x", "y", "z"]


@needs_fixtures
def test_trtexec_dump_profile_table() -> None:
    path = TRTEXEC / "result-05.log"
    rows = []
    for ln in path.read_text().splitlines():
        parts = ln.split("[I] ", 1)[-1].split(None, 4)
        if len(parts) == 5 and re.fullmatch(r"[\d.]+", parts[0]) and parts[4] != "Total":
            rows.append((parts[4], float(parts[0]), float(parts[1]), float(parts[2])))
    info = load_engine([path])
    assert len(info.layers) == len(rows) == 15
    assert info.total_time_ms == pytest.approx(sum(r[3] for r in rows))  # the medians: per inference
    assert [lay.name for lay in info.layers] == [r[0] for r in rows]
    assert info.layers[3].type == "Reformat"
    assert info.layers[0].time is not None and info.layers[0].time.count == 18362


@needs_fixtures
def test_trtexec_verbose_engine_layer_information() -> None:
    path = TRTEXEC / "result-02.log"
    lines = [ln for ln in path.read_text().split("\n") if ln.startswith("Layer(")]
    info = load_engine([path])
    assert len(info.layers) == len(lines) == 6
    assert [lay.type for lay in info.layers] == [ln[6:ln.index(")")] for ln in lines]
    ref = info.layers[2]
    assert ref.type == "Reformat" and ref.precision_in == "FP32" and ref.precision_out == "FP16"
    assert info.layers[1].tactic_value == "0xdd39499496c9cc38"
    assert info.layers[5].outputs[1].dtype == "INT64"
    assert info.build_settings["Precision"] == "FP32+FP16"


@needs_fixtures
def test_trt86_names_only_log() -> None:
    path = HACK / "history/result-04__trt8.6.0__32c8646c.log"
    info = load_engine([path])
    assert info.versions["tensorrt"] == "8.6.0"
    assert info.detailed is False and len(info.layers) == 15
    assert info.layers[-1].name == "(Unnamed Layer* 32) [Shuffle]"
    assert info.device["name"] == "NVIDIA GeForce RTX 3090"


@needs_fixtures
def test_failed_trtexec_log() -> None:
    info = load_engine([HACK / "history/result-08__trt10.16.0__fe360943.log"])
    assert info.versions["tensorrt"] == "10.16.0"
    assert any("FAILED" in w for w in info.warnings)


@needs_fixtures
def test_two_optimization_profiles() -> None:
    path = FEATURE / "ProfilingVerbosity/log-main.py.log"
    info = load_engine([path])
    assert len(info.layers) == 13
    assert not any("[profile 1]" in lay.name for lay in info.layers)
    assert any("2 optimization profiles" in w for w in info.warnings)
    one = load_engine([path], profile=1)
    assert len(one.layers) == 13 and all("[profile 1]" in lay.name or lay.name.startswith("__my")
                                         for lay in one.layers)
    with pytest.raises(InputError):
        load_engine([path], profile=5)


@needs_fixtures
def test_iprofiler_timing_log() -> None:
    path = FEATURE / "Profiler/log-main.py.log"
    vals = [float(m.group(1)) for m in re.finditer(r"Timing:\s+([\d.]+)us -> node_conv2d \+ node_relu\n",
                                                   path.read_text())]
    info = load_engine([path])
    conv = next(lay for lay in info.layers if lay.name == "node_conv2d + node_relu")
    assert conv.time is not None and conv.time.count == len(vals) == 3
    assert conv.time.average_ms == pytest.approx(sum(vals) / len(vals) / 1000.0)


@needs_fixtures
def test_polygraphy_engine_inspect() -> None:
    path = POLY / "result-03.log"
    text = path.read_text()
    info = load_engine([path])
    assert len(info.layers) == len(re.findall(r"^\s+Layer \d+\s+\|", text, re.M)) == 10
    assert info.layers[0].name == "node_conv2d + node_relu" and info.layers[0].type == "CaskConvolution"
    assert info.layers[0].tactic_value == "0x5b8bf1b8028629d9"
    assert info.layers[5].tactic is not None and info.layers[5].tactic.startswith("sm80_xmma_gemm")
    assert info.layers[9].precision_out == "INT64"
    assert info.memory["device_memory"] == 2007040
    assert info.versions["tensorrt"] == "10.16.2.5"
    assert [t.name for t in info.io_tensors] == ["x", "y", "z"]
    net = load_engine([POLY / "result-02.log"])
    assert not net.layers and any("network" in w for w in net.warnings)


@needs_fixtures
def test_layer_dump_sections() -> None:
    path = FIX / "Eternal-Raiden-Ying_i-vit-srtp/layer_info.txt"
    text = path.read_text()
    info = load_engine([path])
    assert detect_format(path) == "layer-dump"
    assert len(info.layers) == text.count("--- Layer ")
    gemm = next(lay for lay in info.layers if lay.type == "gemm")
    assert gemm.precision_in == "INT8" and gemm.metadata is not None and "\x1f" in gemm.metadata
    assert gemm.tactic is not None and "i8i8" in gemm.tactic


@needs_fixtures
def test_log_and_layer_json_merge() -> None:
    info = load_engine([TRTEXEC / "model-trained-exportLayerInfo.log", TRTEXEC / "result-01.log"])
    assert len(info.layers) == 9 and info.detailed
    assert info.versions["tensorrt"] == "10.16.1" and info.latency_ms["mean"] == 0.0441053
    assert info.formats[:2] == ["inspector-json", "trtexec-log"]


# ------------------------------------------------------------------------------ synthetic / bad input


def _write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data)
    return p


def test_io_tensors_trt11(tmp_path: Path) -> None:
    doc = {
        "Layers": [{"Name": "conv", "LayerType": "CaskConvolution", "Inputs": [], "Outputs": []}],
        "I/O Tensors": [
            {"Name": "input_0", "IOMode": "Input", "DataType": "Float", "Dimensions": [1, 3, 224, 224],
             "Location": "Device", "IsShapeInferenceIO": False,
             "ProfileInfo": [{"MinShape": [1, 3, 224, 224], "Format": "Row major linear FP32 format (kLINEAR)"}]},
            {"Name": "output_0", "IOMode": "Output", "DataType": "Half", "Dimensions": [1, 1000]},
        ],
    }
    info = load_engine([_write(tmp_path, "e.graph.json", json.dumps(doc))])
    assert [(t.name, t.dtype, t.shape) for t in info.io_tensors] == [
        ("input_0", "FP32", [1, 3, 224, 224]), ("output_0", "FP16", [1, 1000])]
    assert info.io_tensors[0].format == "Row major linear FP32 format (kLINEAR)"


def test_profile_suffix_matching(tmp_path: Path) -> None:
    layers = {"Layers": [{"Name": n, "LayerType": "CaskConvolution", "Inputs": [], "Outputs": []}
                         for n in ("a", "b + c", "d")], "Bindings": []}
    prof = [{"count": 5}] + [{"name": f"{n} [profile 0]", "timeMs": t, "averageMs": t / 5, "percentage": 10}
                             for n, t in (("a", 1.0), ("b + c", 2.0), ("d", 3.0))]
    info = load_engine([_write(tmp_path, "x.graph.json", json.dumps(layers)),
                        _write(tmp_path, "x.profile.json", json.dumps(prof))])
    assert [lay.time.total_ms if lay.time else None for lay in info.layers] == [1.0, 2.0, 3.0]
    assert not info.warnings


def test_match_times_reports_unmatched() -> None:
    from trtstudio.engine.model import Layer, LayerTime

    layers = [Layer(index=0, name="x")]
    timed = [("x", LayerTime(total_ms=1)), ("y", LayerTime())]
    assert match_times(layers, timed) == (1, ["y"])


@pytest.mark.parametrize(
    "name,data,needle",
    [
        ("t.graph.json", '{"Layers": [{"Name": "a", "LayerType": "X"}', "truncated JSON at line 1"),
        ("m.graph.json", '{"Layers": [\n{"Name": "a",, }]}', "malformed JSON at line 2, column"),
        ("c.profile.json", '[{"count": 1},\n  {"name": "conv', "truncated JSON at line 2, column 12: a string starts here and "
                                                           "runs to the end of the file"),
        ("u.graph.json", '{"Stuff": 1}', "unknown layer schema: expected"),
        ("notes.md", "hello world\n", "not a known TensorRT output"),
        ("v.json", '{"Layers": 3}', "unknown layer schema"),
        ("w.json", '{"Layers": [{"NoName": 1}]}', "unknown layer schema"),
        ("e.json", "", "empty file"),
        ("s.json", "   \n\n", "empty file"),
        ("g.bin", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary data"),
        ("p.profile.json", '[{"count": 1}, {"timeMs": 1}]', 'has no "name"'),
        ("d.txt", "--- Layer 0 ---\n{\"Name\": \"a\"\n--- Layer 1 ---\n{}", "layer 0"),
        ("x.timing.json", '[{"startComputeMs": 1}]', "unknown timing schema"),
    ],
)
def test_bad_input(tmp_path: Path, name: str, data: str | bytes, needle: str) -> None:
    p = _write(tmp_path, name, data)
    with pytest.raises(InputError) as ei:
        load_engine([p])
    assert needle in str(ei.value)
    assert str(p) in str(ei.value)
    assert "\n" not in str(ei.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_engine([tmp_path / "nope.json"])
    with pytest.raises(InputError, match="directory"):
        detect_format(tmp_path)


def test_engine_without_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    real = importlib.import_module

    def fake(name: str, *a: object, **k: object):  # type: ignore[no-untyped-def]
        if name in ("tensorrt", "tensorrt_rtx"):
            raise ImportError(name)
        return real(name, *a, **k)  # type: ignore[arg-type]

    p = _write(tmp_path, "model.engine", b"ftrt" + bytes(64))
    assert find_reader(p).name == "engine-plan"
    monkeypatch.setattr(importlib, "import_module", fake)
    with pytest.raises(InputError, match="needs the TensorRT runtime that built it") as ei:
        read_file(p)
    assert "--exportLayerInfo" in str(ei.value)


@pytest.mark.rtx
def test_engine_wrong_runtime_names_versions(tmp_path: Path) -> None:
    trt = pytest.importorskip("tensorrt_rtx")
    import importlib.util

    if importlib.util.find_spec("tensorrt") is not None:
        pytest.skip("full TensorRT installed: it would be tried first")
    p = _write(tmp_path, "model.plan", b"ftrt" + bytes(256))
    with pytest.raises(InputError) as ei:
        load_engine([p])
    msg = str(ei.value)
    assert "cannot deserialize" in msg and f"tensorrt_rtx {trt.__version__}" in msg
    assert re.search(r"serialization tag of the engine is \d+, this runtime expects \d+", msg)


def test_version_mismatch_messages() -> None:
    from trtstudio.engine.readers.engine_file import version_mismatch

    trt10 = ("IRuntime::deserializeCudaEngine: Error Code 6: API Usage Error (The engine plan file is not "
             "compatible with this version of TensorRT, expecting library version 10.4.0.26 got 10.1.0.27, "
             "please rebuild.)")
    assert version_mismatch([trt10]) == "the engine was built with TensorRT 10.1.0.27 but this runtime is 10.4.0.26"
    trt8 = ("1: [stdArchiveReader.cpp::StdArchiveReader::40] Error Code 1: Serialization (Serialization assertion "
            "stdVersionRead == serializationVersion failed.Version tag does not match. Note: Current Version: 213, "
            "Serialized Engine Version: 232)")
    assert version_mismatch([trt8]) == "serialization version of the engine is 232, this runtime expects 213"
    assert version_mismatch(["Loaded engine size: 0 MiB"]) is None


@pytest.mark.rtx
def test_rtx_built_engine_is_recognised(tmp_path: Path) -> None:
    trt = pytest.importorskip("tensorrt_rtx")
    import numpy as np

    logger = trt.Logger(trt.Logger.ERROR)
    builder = trt.Builder(logger)
    net = builder.create_network(0)
    x = net.add_input("x", trt.float32, (1, 4))
    w = net.add_constant((1, 4), trt.Weights(np.ones((1, 4), np.float32)))
    net.mark_output(net.add_elementwise(x, w.get_output(0), trt.ElementWiseOperation.SUM).get_output(0))
    cfg = builder.create_builder_config()
    cfg.profiling_verbosity = trt.ProfilingVerbosity.DETAILED
    plan = builder.build_serialized_network(net, cfg)
    assert plan is not None
    p = _write(tmp_path, "tiny.bin", bytes(plan))  # no engine suffix: the magic alone identifies it
    assert p.read_bytes()[:4] == b"vtrt"
    assert detect_format(p) == "engine-plan"
    try:
        info = load_engine([p])
    except InputError as exc:  # no GPU here: the message must say why, in one line
        assert "tensorrt_rtx" in str(exc) and "\n" not in str(exc)
    else:  # on a machine with a supported GPU the inspector JSON is read
        assert info.layers and info.versions["tensorrt_rtx"] == trt.__version__


def test_log_with_json_layer_info(tmp_path: Path) -> None:
    doc = {"Layers": [{"Name": "conv + relu", "LayerType": "CaskConvolution",
                       "Inputs": [{"Name": "x", "Dimensions": [1, 3], "Format/Datatype": "Half"}],
                       "Outputs": [{"Name": "y", "Dimensions": [1, 3], "Format/Datatype": "Half"}],
                       "TacticName": "sm90_xmma", "Metadata": "[ONNX Layer: conv]\x1e[ONNX Layer: relu]"}],
           "Bindings": ["x", "y"]}
    text = ("&&&& RUNNING TensorRT.trtexec [TensorRT v101000] # trtexec --loadEngine=a.plan --dumpLayerInfo\n"
            "[01/01/2026-00:00:00] [I] Layer Information:\n" + json.dumps(doc, indent=2) + "\n"
            "&&&& PASSED TensorRT.trtexec [TensorRT v101000] # trtexec --loadEngine=a.plan --dumpLayerInfo\n")
    info = load_engine([_write(tmp_path, "run.log", text)])
    assert info.versions["tensorrt"] == "10.10.0"
    assert [lay.name for lay in info.layers] == ["conv + relu"]
    assert info.layers[0].precision == "FP16" and info.layers[0].metadata == doc["Layers"][0]["Metadata"]
    assert [t.name for t in info.io_tensors] == ["x", "y"]
