"""``trtstudio diff`` across TensorRT-RTX versions (issue 47), on real build logs of third-party models.

``tests/data/xversion/`` holds the logs of ``trtstudio build --backend rtx --target sm86`` by
TensorRT-RTX 1.4.0.76, 1.5.0.114, 1.6.1.120 and 1.7.1.116 (each in its own environment), cut to what
trtstudio reads (``make.py`` says how): rapidocr's PaddlePaddle orientation classifier (FP32 and FP16),
the onnx wheel's light ResNet-50 (IR 3) and silero-vad's ``op18_ifless`` export (an ``If`` with two
branches). The failure shapes the issue measured are kept as regressions; the folder ``build`` writes
is built here with the installed TensorRT-RTX."""

from __future__ import annotations

import importlib.util
import itertools
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from trtstudio.cli import main

DATA = Path(__file__).parent / "data" / "xversion"
HAS_RTX = importlib.util.find_spec("tensorrt_rtx") is not None
SAMPLE = Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"


def _log(model: str, version: str) -> str:
    return str(DATA / f"{model}-{version}.build.log")


def _pair(capsys: pytest.CaptureFixture[str], a: str, b: str, *more: str) -> dict:
    assert main(["diff", a, b, "--json", *more]) in (0, 3)
    return json.loads(capsys.readouterr().out)["diffs"][0]


def _raw_layers(path: str) -> dict[str, str]:
    """Each layer's line of a log, by name, as TensorRT-RTX printed it."""
    out = {}
    for line in Path(path).read_text().splitlines():
        m = re.match(r"Name: (.*?), LayerType: ", line)
        if m:
            out[m.group(1)] = line
    return out


def test_a_log_without_formats_makes_no_format_change(capsys: pytest.CaptureFixture[str]) -> None:
    """1.4's log records data types and no tensor format: ResNet-50 had 69 of 96 groups `format`."""
    old, new = _log("resnet50", "1.4.0.76"), _log("resnet50", "1.7.1.116")
    assert "Format:" not in "".join(_raw_layers(old).values()) and "Format:" in "".join(_raw_layers(new).values())
    pair = _pair(capsys, old, new)
    assert not [g for g in pair["groups"] if g["change"] == "format"]
    assert [n for n in pair["notes"] if "resnet50-1.4.0.76" in n and "records no tensor formats" in n]
    assert any("records no tensor formats" in s for s in pair["story"])
    # the classifier likewise, against every later version
    for v in ("1.5.0.114", "1.6.1.120", "1.7.1.116"):
        pair = _pair(capsys, _log("cls", "1.4.0.76"), _log("cls", v))
        assert "format" not in pair["totals"], v


def test_a_format_group_carries_both_formats_and_a_reason(capsys: pytest.CaptureFixture[str]) -> None:
    """Two logs that record formats (the classifier's and silero's first layers differ in layout: a
    pair of two models, used here for a real format change)."""
    a, b = _log("cls", "1.7.1.116"), _log("silero", "1.7.1.116")
    pair = _pair(capsys, a, b)
    groups = [g for g in pair["groups"] if g["change"] == "format" and g["base_layers"] and g["other_layers"]]
    assert groups
    raw_a, raw_b = _raw_layers(a), _raw_layers(b)
    for g in groups:
        assert g["reason"].startswith("tensor format: ")
        for side, raw in (("base", raw_a), ("other", raw_b)):
            for name, formats in zip(g[f"{side}_layers"], g[f"{side}_formats"], strict=True):
                # every format the group lists is printed in that layer's line of the log
                assert formats and all(f"Format: {f}" in raw[name] for f in formats)
        assert g["base_formats"] != g["other_formats"]
        # the reason names the first tensor whose format changed, with both formats (or that the
        # layers have other numbers of tensors)
        changed = [(x, y) for fb, fo in zip(g["base_formats"], g["other_formats"], strict=False)
                   for x, y in zip(fb, fo, strict=False) if x != y]
        if changed:
            assert f"{changed[0][0]} -> {changed[0][1]}" in g["reason"]
        else:
            assert re.search(r"\d+ -> \d+ (inputs|outputs)", g["reason"])


def test_a_bias_add_folded_into_the_fc_is_fused(capsys: pytest.CaptureFixture[str]) -> None:
    """1.7 folds the classifier's bias Add into its FC (`gemm MatMul@0` -> `runtime_fusion __myl_FcAdd`)."""
    old, new = _log("cls", "1.6.1.120"), _log("cls", "1.7.1.116")
    raw_old, raw_new = _raw_layers(old), _raw_layers(new)
    fc_old = next(n for n, line in raw_old.items() if "LayerType: gemm" in line)
    fc_new = next(n for n in raw_new if n.startswith("__myl_FcAdd"))
    assert "LayerType: runtime_fusion" in raw_new[fc_new]
    pair = _pair(capsys, old, new)
    g = next(g for g in pair["groups"] if fc_old in g["base_layers"])
    assert fc_new in g["other_layers"] and g["change"] == "fused"
    assert "gemm -> runtime_fusion" in g["reason"]
    assert "fused differently" in pair["story"][0]


def test_a_layer_split_off_joins_its_group_and_absorbed_layers_too(capsys: pytest.CaptureFixture[str]) -> None:
    """1.4 -> 1.7: `__myl_MoveMean` becomes `__myl_Tran` + `__myl_Mean` (the transpose has no ONNX
    node); FP16 1.5 -> 1.7: one layer covering Conv@4 and Mul@1 becomes two."""
    pair = _pair(capsys, _log("cls", "1.4.0.76"), _log("cls", "1.7.1.116"))
    g = next(g for g in pair["groups"] if any(n.startswith("__myl_MoveMean") for n in g["base_layers"]))
    assert g["change"] == "fused" and [n.split("_myl0")[0] for n in g["other_layers"]] == ["__myl_Tran", "__myl_Mean"]
    assert not pair["unmatched"]["base"] and not pair["unmatched"]["other"]
    pair = _pair(capsys, _log("cls-fp16", "1.5.0.114"), _log("cls-fp16", "1.7.1.116"))
    split = [g for g in pair["groups"] if g["change"] == "fused" and len(g["base_layers"]) != len(g["other_layers"])]
    assert split and {"Conv@4", "Mul@1"} <= set(split[0]["onnx_nodes"])


def test_branches_of_an_if_align_layer_by_layer(capsys: pytest.CaptureFixture[str]) -> None:
    """Every layer inside silero's If names the If beside its own node: they once collapsed into a
    handful of groups, one `same` group holding both branches."""
    a, b = _log("silero", "1.6.1.120"), _log("silero", "1.7.1.116")
    n_layers = len(_raw_layers(a))
    pair = _pair(capsys, a, b)
    assert len(pair["groups"]) == n_layers
    assert all(len(g["base_layers"]) == 1 and len(g["other_layers"]) == 1 for g in pair["groups"])
    # a then-branch layer lines up with the then-branch layer, not the else-branch's
    for g in pair["groups"]:
        for branch in ("then", "else"):
            assert (f"^{branch}^" in g["base_layers"][0]) == (f"^{branch}^" in g["other_layers"][0])


def test_myelin_fusions_count_as_convolutions(capsys: pytest.CaptureFixture[str]) -> None:
    """ResNet-50's 53 convolutions are `runtime_fusion` layers (`__myl_CorrMulAddRelu...`): once "aligned 1/1"."""
    path = _log("resnet50", "1.7.1.116")
    raw = _raw_layers(path)
    convs = [n for n, line in raw.items() if n.startswith("__myl_Corr") or "LayerType: gemm" in line]
    assert len(convs) == 54  # 53 convolutions and the FC
    pair = _pair(capsys, _log("resnet50", "1.4.0.76"), path)
    cl = pair["alignment"]["compute_layers"]
    assert cl == {"base": 54, "other": 54, "base_aligned": 54, "other_aligned": 54}
    assert main(["diff", _log("resnet50", "1.4.0.76"), path]) == 0
    assert "convolutions/GEMMs aligned 54/54 (base), 54/54 (other)" in capsys.readouterr().out


def test_the_build_verdict_names_the_versions_first(capsys: pytest.CaptureFixture[str]) -> None:
    pair = _pair(capsys, _log("cls", "1.6.1.120"), _log("cls", "1.7.1.116"))
    build = pair["build"]
    assert build["verdict"] == "different versions"
    assert build["text"].startswith("built by different TensorRT-RTX versions (1.6.1.120 -> 1.7.1.116)")
    text = json.dumps(pair)
    assert "nondeterministic" not in text and "timing cache" not in text
    # identical listings from two versions: the same layers, not the same engine
    pair = _pair(capsys, _log("silero", "1.6.1.120"), _log("silero", "1.7.1.116"))
    assert set(pair["totals"]) == {"same"}
    assert "the same layers" in pair["build"]["text"] and "same engine" not in json.dumps(pair)


def test_junit_skips_a_metric_with_no_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Build logs carry no per-inference timings: once "p99 None -> None ms" passed."""
    junit = tmp_path / "d.xml"
    rc = main(["diff", _log("cls", "1.6.1.120"), _log("cls", "1.7.1.116"), "--fail-if-slower", "5", "--junit", str(junit)])
    capsys.readouterr()
    assert rc == 3
    suite = ET.parse(junit).getroot()
    cases = suite.findall("testcase")
    assert len(cases) == 2 and int(suite.get("skipped")) == 2 and int(suite.get("failures")) == 0
    assert all(c.find("skipped") is not None for c in cases)
    assert "None" not in junit.read_text()


def test_the_story_names_layers_with_no_counterpart(capsys: pytest.CaptureFixture[str]) -> None:
    hack = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "trt-real" / \
        "NVIDIA_trt-samples-for-hackathon-cn" / "history"
    if not hack.is_dir():
        pytest.skip(f"fixtures absent: {hack}")
    pair = _pair(capsys, str(hack / "result-04__trt8.6.0__32c8646c.log"), str(hack / "result-04__trt10.16.0__fe360943.log"))
    only = [g for g in pair["groups"] if g["change"] == "only_base"]
    assert only
    first = pair["story"][0]
    assert f"{len(only)} layers only in result-04__trt8.6.0__32c8646c" in first
    assert only[0]["base_layers"][0] in first


LOGS = sorted(str(p) for p in DATA.glob("*.build.log"))


@pytest.mark.parametrize(("a", "b"), [(a, b) for a, b in itertools.combinations(LOGS, 2) if
                                      Path(a).name.split("-1.")[0] == Path(b).name.split("-1.")[0]],
                         ids=lambda p: Path(p).name.removesuffix(".build.log"))
def test_every_cross_version_pair_mirrors(a: str, b: str, capsys: pytest.CaptureFixture[str]) -> None:
    """diff(A, B) holds the groups of diff(B, A), their changes mirrored; every layer in one group."""
    ab, ba = _pair(capsys, a, b), _pair(capsys, b, a)
    swap = {"only_base": "only_other", "only_other": "only_base"}
    fwd = sorted((tuple(g["base_layers"]), tuple(g["other_layers"]), g["change"]) for g in ab["groups"])
    back = sorted((tuple(g["other_layers"]), tuple(g["base_layers"]), swap.get(g["change"], g["change"])) for g in ba["groups"])
    assert fwd == back
    for side in ("base", "other"):
        idx = sorted(i for g in ab["groups"] for i in g[f"{side}_index"])
        assert idx == list(range(len(idx)))
    assert ab["build"]["verdict"] == "different versions"


@pytest.mark.skipif(not HAS_RTX, reason="tensorrt_rtx not installed")
def test_the_folder_build_writes_is_a_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`build -o DIR/model.engine --json > DIR/build.json --save-log DIR/build.log`: the folder is a
    side on a machine without a GPU (its plan is read by its header, never deserialized)."""
    out = tmp_path / "built"
    out.mkdir()
    rc = main(["build", str(SAMPLE), "--backend", "rtx", "--target", "sm86", "-o", str(out / "model.engine"),
               "--json", "--save-log", str(out / "build.log")])
    doc = capsys.readouterr().out
    assert rc == 0
    (out / "build.json").write_text(doc)
    (out / "notes.txt").write_text("built for the lab's RTX 3090, see the wiki\n")  # a stray file: no engine
    assert main(["layers", str(out), "--json"]) == 0
    layers = json.loads(capsys.readouterr().out)
    n = len(json.loads(doc)["layers"])
    assert len(layers["layers"]) == n
    pair = _pair(capsys, str(out), _log("cls", "1.6.1.120"))
    assert pair["base"]["files"] and any(f.endswith("model.engine") for f in pair["base"]["files"])
    assert pair["build"]["text"].startswith("built by different TensorRT-RTX versions (")
    # the plan alone: it cannot be deserialized here, and the hint names build's document and log, not trtexec
    rc = main(["layers", str(out / "model.engine")])
    err = capsys.readouterr().err.strip().splitlines()
    if rc == 0:
        pytest.skip("this machine deserializes TensorRT-RTX plans (a GPU): the hint is not shown")
    assert rc == 2 and len(err) == 1
    assert "--json" in err[0] and "--save-log" in err[0] and "trtexec" not in err[0]
    # a plan beside another version's log is not taken for that log's engine
    other = tmp_path / "mixed"
    other.mkdir()
    (other / "model.engine").write_bytes((out / "model.engine").read_bytes())
    (other / "build.log").write_text(Path(_log("cls", "1.6.1.120")).read_text())
    assert main(["layers", str(other)]) == 2
    assert "holds the files of 2 engines" in capsys.readouterr().err
