"""diff and explain say when two sides do not belong together (``diff.mismatch``): different models,
GPUs or TensorRT versions, or under half of the convolutions/GEMMs aligned; a warning first in the
text, ``warnings`` in the JSON, unreliable verdicts marked, the CI gate not judging them, and a
``trtstudio.MismatchWarning`` from the Python API.

Real TREx engines by path (skipped when absent): ResNet-18 (PyTorch) on an A100 in five builds,
ResNet-50 (TensorFlow) on an RTX 3090 in three."""

from __future__ import annotations

import itertools
import json
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from trtstudio.cli import main

TREX = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "trt-real" / "NVIDIA_TensorRT_trex"
A100 = TREX / "release-11.0" / "examples" / "pytorch" / "resnet" / "A100"
RTX3090 = TREX / "release-11.0" / "examples" / "tensorflow" / "resnet" / "RTX-3090"
pytestmark = pytest.mark.skipif(not A100.is_dir() or not RTX3090.is_dir(), reason=f"fixtures absent: {TREX}")

A100_BUILDS = ("fp32", "fp16", "qat", "qat-residual", "qat-residual-qgap")
RTX_BUILDS = ("fp32", "fp16", "qat")
SAME_MODEL = [(A100 / a, A100 / b) for a, b in itertools.combinations(A100_BUILDS, 2)] + \
             [(RTX3090 / a, RTX3090 / b) for a, b in itertools.combinations(RTX_BUILDS, 2)]
OTHER_MODEL = [(A100 / a, RTX3090 / b) for a in A100_BUILDS for b in RTX_BUILDS]


@cache
def _side(folder: Path) -> Any:
    from trtstudio.diff.sides import load_side

    return load_side(str(folder))


def _pair(a: Path, b: Path) -> Any:
    import copy

    from trtstudio.diff.core import diff_sides

    base, other = copy.copy(_side(a)), copy.copy(_side(b))
    base.name, other.name = f"{a.parent.name}/{a.name}", f"{b.parent.name}/{b.name}"
    return diff_sides(base, other)


@pytest.mark.parametrize(("a", "b"), SAME_MODEL, ids=[f"{a.name}-{b.name}" for a, b in SAME_MODEL])
def test_builds_of_one_model_on_one_gpu_do_not_warn(a: Path, b: Path) -> None:
    """Every pair of builds of one model (FP32, FP16, QAT variants) on one GPU: no warning, reliable."""
    for p in (_pair(a, b), _pair(b, a)):
        assert p.mismatch == {} and p.warnings == []
        assert p.summary["reliable"] is True and p.summary["unreliable_because"] is None
        assert not p.summary["text"].startswith("unreliable")


@pytest.mark.parametrize(("a", "b"), OTHER_MODEL, ids=[f"{a.name}-{b.name}" for a, b in OTHER_MODEL])
def test_resnet18_on_a100_against_resnet50_on_rtx3090_warns(a: Path, b: Path) -> None:
    """ResNet-18 on the A100 against ResNet-50 on the RTX 3090, both ways: different models (I/O and
    convolution counts as the files give them), different GPUs, under half of ResNet-50's
    convolutions aligned; the verdict unreliable."""
    from trtstudio.engine.provenance import gpu_of

    for p in (_pair(a, b), _pair(b, a)):
        cl = p.alignment["compute_layers"]
        small, large = sorted((cl["base"], cl["other"]))
        assert small < 0.8 * large  # the files' own counts (21 and 54 on these engines)
        assert set(p.mismatch) == {"model", "gpu", "alignment"}
        assert f"{small} against {large}" in p.mismatch["model"] or f"{large} against {small}" in p.mismatch["model"]
        assert gpu_of(p.base.engine) in p.mismatch["gpu"] and gpu_of(p.other.engine) in p.mismatch["gpu"]
        aligned = min(cl["base_aligned"], cl["other_aligned"])
        assert f"only {aligned} of {large} convolutions/GEMMs" in p.mismatch["alignment"]
        assert p.summary["reliable"] is False and p.summary["text"].startswith("unreliable: ")
        assert p.mismatch["model"] in p.summary["unreliable_because"]
        assert p.mismatch["alignment"] in p.summary["unreliable_because"]


def test_diff_warns_first_in_text_json_and_gate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a, b = str(A100 / "fp32"), str(RTX3090 / "fp32")
    assert main(["diff", a, b, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    pair = doc["diffs"][0]
    assert doc["warnings"] == pair["warnings"] == list(pair["mismatch"].values()) and len(doc["warnings"]) == 3
    assert pair["summary"]["reliable"] is False
    # text: the warnings are the first lines
    assert main(["diff", a, b]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [f"warning: {w}" for w in doc["warnings"]]
    # the CI gate does not judge it, and says why (exit 3 whatever the threshold)
    for pct in ("5", "1000"):
        assert main(["diff", a, b, "--fail-if-slower", pct, "--json", "--junit", str(tmp_path / "j.xml"),
                     "--markdown", str(tmp_path / "d.md")]) == 3
        gate = json.loads(capsys.readouterr().out)["gate"]["results"][0]
        assert gate["exit"] == 3 and "not gated, the sides do not belong together" in gate["text"]
    assert 'skipped="1"' in (tmp_path / "j.xml").read_text()
    md = (tmp_path / "d.md").read_text()
    assert md.index("**warning:**") < md.index("| other vs base")
    # HTML: the warning above the story
    assert main(["diff", a, b, "-o", str(tmp_path / "d.html")]) == 0
    capsys.readouterr()
    page = (tmp_path / "d.html").read_text()
    assert page.index("class='warning'") < page.index("class='story'")


def test_diff_of_one_model_has_no_warnings_and_gates(capsys: pytest.CaptureFixture[str]) -> None:
    a, b = str(A100 / "fp32"), str(A100 / "fp16")
    rc = main(["diff", a, b, "--json", "--fail-if-slower", "5"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["warnings"] == [] and doc["diffs"][0]["summary"]["reliable"] is True
    assert rc == 0 and doc["gate"]["results"][0]["text"].startswith("pass: ")
    assert main(["diff", a, b]) == 0
    assert not capsys.readouterr().out.startswith("warning")


def test_explain_against_another_model_warns_and_is_unreliable(capsys: pytest.CaptureFixture[str]) -> None:
    """The case of the issue: TREx's A100 ResNet-18 QAT explained against the RTX 3090 ResNet-50
    FP16 build said "INT8 is 78 % faster" and suggested --layerPrecisions with no warning."""
    assert main(["explain", str(A100 / "qat"), "--against", str(RTX3090 / "fp16"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["warnings"] == doc["diff"]["warnings"] and len(doc["warnings"]) == 3
    assert any("different models" in w for w in doc["warnings"])
    p = doc["precision"]
    assert p["reliable"] is False and p["text"].startswith("unreliable: ") and p["unreliable_because"]
    assert p["suggestion"]["basis"].startswith("unreliable: ")
    assert main(["explain", str(A100 / "qat"), "--against", str(RTX3090 / "fp16")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == [*(f"warning: {w}" for w in doc["warnings"]), p["text"]]


def test_explain_of_qat_against_its_fp16_build_does_not_warn(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(A100 / "qat"), "--against", str(A100 / "fp16"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["warnings"] == [] and doc["precision"]["reliable"] is True
    assert not doc["precision"]["text"].startswith("unreliable")


def test_python_api_warns_with_mismatch_warning() -> None:
    import trtstudio as ts

    assert issubclass(ts.MismatchWarning, UserWarning)
    with pytest.warns(ts.MismatchWarning) as record:
        d = ts.diff(str(A100 / "fp32"), str(RTX3090 / "fp32"))
    assert [str(w.message) for w in record] == d.to_json()["warnings"] and len(record) == 3
    assert all(w.filename == __file__ for w in record)  # pointing at the caller's line
    with pytest.warns(ts.MismatchWarning) as record:
        e = ts.explain(str(A100 / "qat"), against=str(RTX3090 / "fp16"))
    assert [str(w.message) for w in record] == e.to_json()["warnings"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ts.MismatchWarning)
        ts.diff(str(A100 / "fp16"), str(A100 / "qat"))
        ts.explain(str(A100 / "qat"), against=str(A100 / "fp16"))
