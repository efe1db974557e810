"""``trtstudio diff``: alignment on TREx's real engines, time verdicts, provenance, the CI gate.

The TREx engines are read from ``../shared/fixtures/trt-real`` by path (skipped when absent); the
TensorRT-RTX pair is built here from the bundled model and its FP16 conversion."""

from __future__ import annotations

import importlib.util
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from trtstudio.cli import main

TREX = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "trt-real" / "NVIDIA_TensorRT_trex"
A100 = TREX / "release-11.0" / "examples" / "pytorch" / "resnet" / "A100"
RTX3090 = TREX / "release-11.0" / "examples" / "tensorflow" / "resnet" / "RTX-3090"
needs_trex = pytest.mark.skipif(not A100.is_dir(), reason=f"fixtures absent: {A100}")
HAS_RTX = importlib.util.find_spec("tensorrt_rtx") is not None
SAMPLE = Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"


def _diff(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    rc = main(["diff", *args, "--json"])
    return rc, json.loads(capsys.readouterr().out)


def _mobilenet(folder: Path, stem: str) -> str:
    return ",".join(str(p) for p in sorted(folder.glob(f"{stem}.onnx.engine.*")))


PAIRS = [
    ("A100 fp32 vs fp16", str(A100 / "fp32"), str(A100 / "fp16")),
    ("A100 fp32 vs qat", str(A100 / "fp32"), str(A100 / "qat")),
    ("A100 fp32 vs qat-residual", str(A100 / "fp32"), str(A100 / "qat-residual")),
    ("A100 fp32 vs qat-residual-qgap", str(A100 / "fp32"), str(A100 / "qat-residual-qgap")),
    ("RTX 3090 fp32 vs qat", str(RTX3090 / "fp32"), str(RTX3090 / "qat")),
    ("MobileNet QAT, two TensorRT versions", _mobilenet(TREX / "older" / "tests" / "inputs", "mobilenet.qat"),
     _mobilenet(TREX / "release-11.0" / "tests" / "inputs", "mobilenet.qat")),
]


@needs_trex
@pytest.mark.parametrize(("what", "base", "other"), PAIRS, ids=[p[0] for p in PAIRS])
def test_convolutions_align_on_trex_engines(what: str, base: str, other: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = _diff(capsys, base, other)
    assert rc == 0 and doc["schema"] == "trtstudio.diff/1"
    pair = doc["diffs"][0]
    cl = pair["alignment"]["compute_layers"]
    assert cl["base"] > 0 and cl["base_aligned"] / cl["base"] >= 0.9, (what, cl)
    assert cl["other_aligned"] / cl["other"] >= 0.9, (what, cl)
    # every layer of both engines is in exactly one group
    for side in ("base", "other"):
        idx = sorted(i for g in pair["groups"] for i in g[f"{side}_index"])
        assert idx == list(range(len(idx))), side
    # an unmatched layer says why
    for side in ("base", "other"):
        assert all(u["reason"] for u in pair["unmatched"][side])


@needs_trex
def test_qat_residual_aligns_by_structure_and_finds_the_fused_pool(capsys: pytest.CaptureFixture[str]) -> None:
    """The QAT export renumbers every node: no name is shared, the topology aligns them."""
    rc, doc = _diff(capsys, str(A100 / "fp32"), str(A100 / "qat-residual"))
    pair = doc["diffs"][0]
    by_base = {g["base_layers"][0]: g for g in pair["groups"] if g["base_layers"]}
    fused = by_base["Conv_0 + Relu_1"]
    assert fused["change"] == "fused" and fused["base_layers"] == ["Conv_0 + Relu_1", "MaxPool_2"]
    assert fused["other_layers"][0].startswith("conv1.weight + QuantizeLinear_7 + Conv_9 + MaxPool_12")
    # the block's second convolution (3x3, no residual in fp32) lines up with its QAT twin, not the next block's
    assert by_base["Conv_15"]["other_layers"][0].startswith("layer2.0.conv2.weight")
    assert by_base["Conv_26"]["other_layers"][0].startswith("layer3.0.conv2.weight")
    assert by_base["Conv_15"]["change"] == "precision"
    assert by_base["Conv_15"]["base_precision"] == ["FP32"] and by_base["Conv_15"]["other_precision"] == ["INT8"]
    # Q/DQ layers the export added are format changes, added, with their time
    qdq = [g for g in pair["groups"] if g["other_layers"] == ["QuantizeLinear_2"]][0]
    assert qdq["change"] == "format" and not qdq["base_layers"] and qdq["delta_ms"] == pytest.approx(qdq["other_ms"])
    assert "Q/DQ layer added" in qdq["reason"]


@needs_trex
def test_time_verdict_interval_provenance_and_story(capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = _diff(capsys, str(A100 / "fp32"), str(A100 / "fp16"))
    pair = doc["diffs"][0]
    s = pair["summary"]
    timing = json.loads((A100 / "fp32" / "resnet.onnx.engine.timing.json").read_text())
    import numpy as np

    assert s["metric"] == "gpu_compute" and s["base_samples"] == len(timing)
    assert s["base_median_ms"] == pytest.approx(float(np.median([r["computeMs"] for r in timing])))
    low, high = s["interval"]
    assert low <= s["ratio"] <= high < 1.0 and s["verdict"] == "faster"
    assert s["throughput"]["base"] == pytest.approx(499.294)
    # provenance from the engines' own files: the A100 of their metadata; no TensorRT version in them
    for side in ("base", "other"):
        prov = pair["provenance"][side]
        assert prov["gpu"].startswith("NVIDIA A100 80GB PCIe") and prov["tensorrt"] == "not recorded"
        assert "tensorrt_rtx" not in json.dumps(prov)
    story = pair["story"][0]
    assert story.startswith("fp16 cuts") and "GPU time" in story and "NVIDIA A100 80GB PCIe" in story
    assert "26 groups changed precision" in story and "Conv_0 + Relu_1" in story
    totals = pair["totals"]
    assert totals["precision"]["groups"] == 26
    assert totals["format"]["removed"] == sum(1 for g in pair["groups"] if g["change"] == "format" and not g["other_layers"])
    assert pair["build"]["verdict"] == "different builds"


@needs_trex
def test_the_same_engine_twice_is_identical(capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = _diff(capsys, str(A100 / "qat"), str(A100 / "qat"))
    pair = doc["diffs"][0]
    assert {g["change"] for g in pair["groups"]} == {"same"}
    assert pair["build"]["verdict"] == "identical"
    assert pair["summary"]["verdict"] == "no significant difference"
    assert doc["diffs"][0]["other"]["name"] != doc["diffs"][0]["base"]["name"]  # names made unique


@needs_trex
def test_gate_exit_codes_junit_and_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junit, md = tmp_path / "diff.xml", tmp_path / "diff.md"
    # fp32 after fp16 is 2.3x slower: the gate fails, naming the slowest groups
    rc = main(["diff", str(A100 / "fp16"), str(A100 / "fp32"), "--fail-if-slower", "5", "--junit", str(junit),
               "--markdown", str(md)])
    out = capsys.readouterr().out
    assert rc == 1 and "FAIL: fp32 is slower than fp16 by more than 5 %" in out and "slowest groups:" in out
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuite" and int(suite.get("tests")) == 2 and int(suite.get("failures")) == 1
    failure = suite.find("testcase/failure")
    assert failure is not None and "Conv_0 + Relu_1" in failure.get("message")
    text = md.read_text()
    assert text.startswith("# trtstudio diff") and "| fp32 vs fp16 |" in text and "FAIL" in text
    # the other way round it passes
    assert main(["diff", str(A100 / "fp32"), str(A100 / "fp16"), "--fail-if-slower", "5"]) == 0
    capsys.readouterr()
    # without per-inference timings there is no interval: inconclusive (3)
    no_times = ",".join(str(p) for p in sorted((A100 / "fp16").glob("*.json")) if "timing" not in p.name)
    rc = main(["diff", str(A100 / "fp32"), no_times, "--fail-if-slower", "5", "--junit", str(junit)])
    out = capsys.readouterr().out
    assert rc == 3 and "inconclusive" in out
    # both test cases skipped: no median and no p99 without timings (neither passes as "None -> None ms")
    suite = ET.parse(junit).getroot()
    assert int(suite.get("skipped")) == 2 and suite.findall("testcase/system-out") == []
    assert "no p99 latency" in suite.findall("testcase/skipped")[1].get("message")


@needs_trex
def test_outputs_html_md_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outs = [tmp_path / f"d.{s}" for s in ("html", "md", "json")]
    args = ["diff", str(A100 / "fp32"), str(A100 / "qat")]
    for o in outs:
        args += ["-o", str(o)]
    assert main(args) == 0
    capsys.readouterr()
    page = outs[0].read_text()
    assert "<h2>qat vs fp32</h2>" in page and "conv1.weight + QuantizeLinear_7 + Conv_9" in page
    assert json.loads(outs[2].read_text())["schema"] == "trtstudio.diff/1"
    assert "## qat vs fp32" in outs[1].read_text()


def test_bad_sides_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(tmp_path / "missing"), str(tmp_path / "also")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["diff", str(empty), str(empty)]) == 2
    assert "no engine files" in capsys.readouterr().err
    assert main(["diff", "a", "b", "-o", str(tmp_path / "x.docx")]) == 2
    assert "unknown output type" in capsys.readouterr().err


@needs_trex
def test_a_folder_of_two_engines_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(TREX / "release-11.0" / "tests" / "inputs"), str(A100 / "fp32")]) == 2
    err = capsys.readouterr().err
    assert "2 engines" in err and "mobilenet.qat.onnx" in err and "commas" in err


def _third_party(package: str, rel: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / rel
    return path if path.is_file() else None


RTX_MODELS = [("bundled MobileNetV2", SAMPLE),
              ("PaddleOCR cls (rapidocr)", _third_party("rapidocr_onnxruntime", "models/ch_ppocr_mobile_v2.0_cls_infer.onnx")),
              ("NudeNet YOLOv8n", _third_party("nudenet", "320n.onnx"))]


@pytest.mark.rtx
@pytest.mark.skipif(not HAS_RTX, reason="tensorrt_rtx is not installed")
@pytest.mark.parametrize(("what", "model"), RTX_MODELS, ids=[m[0] for m in RTX_MODELS])
def test_rtx_builds_at_two_precisions(what: str, model: Path | None, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Two real TensorRT-RTX builds of one model, FP32 and ``--fp16`` (the model converted to FP16):
    their build documents diff by the ONNX node names the build logs carry; FP16 shows as precision
    changes; the same document twice is one identical build."""
    if model is None:
        pytest.skip(f"{what}: its package is not installed")
    src = tmp_path / model.name
    shutil.copy(model, src)
    docs = []
    for flags, stem in (([], "fp32"), (["--fp16"], "fp16")):
        rc = main(["build", str(src), "--backend", "rtx", "--target", "sm86", "-o", str(tmp_path / f"{stem}.engine"),
                   *flags, "--json"])
        assert rc == 0
        doc_path = tmp_path / f"{stem}.build.json"
        doc_path.write_text(capsys.readouterr().out)
        docs.append(doc_path)
    rc, doc = _diff(capsys, str(docs[0]), str(docs[1]))
    assert rc == 0
    pair = doc["diffs"][0]
    assert pair["base"]["name"] == "fp32" and pair["other"]["name"] == "fp16"
    assert pair["alignment"]["matched_by"].get("nodes", 0) > 0
    cl = pair["alignment"]["compute_layers"]
    assert cl["base"] > 0 and cl["base_aligned"] / cl["base"] >= 0.9, cl
    groups = pair["groups"]
    prec = [g for g in groups if g["change"] == "precision"]
    assert len(prec) >= 0.5 * len(groups)
    assert all("FP16" in g["other_precision"] and "FP16" not in g["base_precision"] for g in prec)
    assert pair["provenance"]["base"]["tensorrt"].startswith("TensorRT-RTX")
    assert pair["summary"]["verdict"] == "inconclusive"  # a build has no per-inference timings
    # the plain build again, with the same flags: one model, one build
    rc = main(["build", str(src), "--backend", "rtx", "--target", "sm86", "-o", str(tmp_path / "again.engine"), "--json"])
    again = tmp_path / "again.build.json"
    again.write_text(capsys.readouterr().out)
    rc, doc = _diff(capsys, str(docs[0]), str(again))
    build = doc["diffs"][0]["build"]
    assert build["same_model"] and build["same_options"]
    assert build["verdict"] in ("identical", "nondeterministic build")
    assert (build["verdict"] == "identical") == (not build["differences"])


def test_non_finite_count_agrees_with_the_general_walk() -> None:
    from trtstudio.diff.core import count_non_finite_doc
    from trtstudio.jsonio import count_non_finite

    doc = {"schema": "trtstudio.diff/1", "diffs": [{"summary": {"ratio": float("nan"), "x": [float("inf")]},
                                                    "groups": [{"base_ms": float("nan"), "other_ms": 1.0, "delta_ms": None,
                                                                "base_layers": ["a"]}],
                                                    "unmatched": {"base": [], "other": []}}]}
    assert count_non_finite_doc(doc) == count_non_finite(doc) == 3
    # the groups' times summed in one pass where every one is finite; +inf and -inf (their sum has none)
    # and a sum beyond floats counted one by one
    rows = doc["diffs"][0]["groups"]
    for times, expected in (([1.0, 2.0, None], 0), ([float("inf"), float("-inf"), 1.0], 2), ([1e308, 1e308, None], 0)):
        rows[0].update(zip(("base_ms", "other_ms", "delta_ms"), times, strict=True))
        assert count_non_finite_doc(doc) == count_non_finite(doc) == 2 + expected, times


@needs_trex
def test_same_command_two_engines_is_a_nondeterministic_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same trtexec command run twice (TensorRT#4730): the second run's files are the first's
    with one convolution's kernel and its time changed, as another tactic choice leaves them."""
    second = tmp_path / "run2"
    shutil.copytree(A100 / "fp32", second)
    graph = second / "resnet.onnx.engine.graph.json"
    doc = json.loads(graph.read_text())
    conv = next(lay for lay in doc["Layers"] if lay["Name"] == "Conv_15")
    conv["TacticName"] = "sm80_xmma_fprop_implicit_gemm_other_tactic"
    conv["TacticValue"] = "0x1234"
    graph.write_text(json.dumps(doc))
    rc, out = _diff(capsys, str(A100 / "fp32"), str(second))
    build = out["diffs"][0]["build"]
    assert build["same_model"] and build["same_options"]
    assert build["verdict"] == "nondeterministic build"
    assert build["differences"] == [{"change": "tactic", "base_layers": ["Conv_15"], "other_layers": ["Conv_15"]}]
    assert "timing cache" in build["text"]


@needs_trex
def test_a_session_of_engine_files_is_a_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A session saved from an engine's files keeps its --exportTimes series: diffed against the
    other build it gives what the folder gives."""
    from trtstudio.report.model import save_session

    session = tmp_path / "fp32.trtstudio"
    save_session(session, engine=sorted(str(p) for p in (A100 / "fp32").glob("*.json")))
    _, from_folder = _diff(capsys, str(A100 / "fp32"), str(A100 / "fp16"))
    _, from_session = _diff(capsys, str(session), str(A100 / "fp16"))
    a, b = from_folder["diffs"][0], from_session["diffs"][0]
    assert b["summary"]["base_samples"] == a["summary"]["base_samples"] > 0
    assert b["summary"]["base_median_ms"] == pytest.approx(a["summary"]["base_median_ms"], rel=1e-6)
    assert b["summary"]["verdict"] == a["summary"]["verdict"] == "faster"
    assert [g["change"] for g in b["groups"]] == [g["change"] for g in a["groups"]]


HACK = TREX.parent / "NVIDIA_trt-samples-for-hackathon-cn" / "history"


@pytest.mark.skipif(not HACK.is_dir(), reason=f"fixtures absent: {HACK}")
def test_two_tensorrt_versions_two_exporters_align_by_op_names(capsys: pytest.CaptureFixture[str]) -> None:
    """The cookbook's CNN built by TensorRT 8.6 (network API names, a names-only listing) and by
    10.16 (ONNX node names, Myelin): no shared name, no types on one side; the op each name speaks
    of pairs them in order, and what the names-only side does not record is not called a change."""
    old, new = HACK / "result-04__trt8.6.0__32c8646c.log", HACK / "result-04__trt10.16.0__fe360943.log"
    rc, doc = _diff(capsys, str(old), str(new))
    pair = doc["diffs"][0]
    by_base = {g["base_layers"][0]: g for g in pair["groups"] if g["base_layers"] and g["other_layers"]}
    assert by_base["Conv-1 + ReLU-2"]["other_layers"] == ["node_conv2d + node_relu"]
    assert by_base["MaxPool-3"]["other_layers"] == ["node_max_pool2d"]
    assert by_base["Conv-4 + ReLU-5"]["other_layers"] == ["node_conv2d_1 + node_relu_1"]
    assert by_base["MaxPool-6"]["other_layers"] == ["node_max_pool2d_1"]
    # 10.16's Myelin splits the softmax/argmax tail in two: the layer of no ONNX node joins that group
    tail = by_base.pop("Softmax-14 + ArgMax-15")
    assert tail["change"] == "fused" and tail["other_layers"] == ["__myl_DivMulMaxr_myl4_3", "__myl_CastReshCast_myl4_4"]
    assert all(g["matched_by"] == "op names" and g["change"] == "same" for g in by_base.values())
    prov = pair["provenance"]
    assert prov["base"]["tensorrt"] == "TensorRT 8.6.0" and prov["other"]["tensorrt"] == "TensorRT 10.16.0"
