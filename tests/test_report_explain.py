"""The precision explainer's section in reports (issue 40 item 1's report part): a report of an
INT8 engine says why it is not faster (alone, or ``--against`` an FP16 build), in HTML, Markdown
and JSON, with the same sentence, causes and suggestion as ``trtstudio explain``. TREx's A100
ResNet-18 engines, by path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trtstudio.cli import main

A100 = (Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "trt-real" / "NVIDIA_TensorRT_trex"
        / "release-11.0" / "examples" / "pytorch" / "resnet" / "A100")
pytestmark = pytest.mark.skipif(not A100.is_dir(), reason=f"fixtures absent: {A100}")


def _files(variant: str) -> list[str]:
    return sorted(str(p) for p in (A100 / variant).iterdir() if p.is_file())


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_int8_report_against_fp16_says_what_explain_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    explained = _json(capsys, "explain", str(A100 / "qat"), "--against", str(A100 / "fp16"))["precision"]
    rep = _json(capsys, "report", "--engine", *_files("qat"), "--against", str(A100 / "fp16"))
    sec = rep["precision_explain"]
    assert sec["text"] == explained["text"] and sec["text"].startswith("INT8 is 2 % slower than fp16")
    assert [(c["cause"], c["layers"], c["ms"]) for c in sec["causes"]] == \
        [(c["cause"], c["layers"], c["ms"]) for c in explained["causes"]]
    assert sec["suggestion"] == explained["suggestion"] and sec["against"] == "fp16"
    html, md = tmp_path / "qat.html", tmp_path / "qat.md"
    assert main(["report", "--engine", *_files("qat"), "--against", str(A100 / "fp16"), "-o", str(html)]) == 0
    assert main(["report", "--engine", *_files("qat"), "--against", str(A100 / "fp16"), "-o", str(md)]) == 0
    h, m = html.read_text(), md.read_text()
    assert "INT8: why it is not faster" in h and "--layerPrecisions=" in h and "qdq_not_fused" in h
    assert "## INT8: why it is not faster" in m and f"**{sec['text']}**" in m
    assert sec["suggestion"]["layer_precisions"] in m
    # the section comes before the findings
    assert h.index("INT8: why it is not faster") < h.index(">Findings<")


def test_int8_report_alone_and_engines_without_int8(capsys: pytest.CaptureFixture[str]) -> None:
    alone = _json(capsys, "report", "--engine", *_files("qat-residual"))["precision_explain"]
    explained = _json(capsys, "explain", str(A100 / "qat-residual"))["precision"]
    assert alone["text"] == explained["text"] and alone["against"] is None
    assert alone["verdict"] == "explained" and "convolutions/GEMMs run INT8" in alone["text"]
    # an FP16 engine has no INT8 section; --against on it is a one-line error
    assert _json(capsys, "report", "--engine", *_files("fp16"))["precision_explain"] is None
    assert main(["report", "--engine", *_files("fp16"), "--against", str(A100 / "fp32"), "--json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no INT8 layer" in err[0]
