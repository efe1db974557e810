"""``trtstudio compare`` on engine files, standing on ``trtstudio diff``'s core (issue 39 item 1).

TREx's A100 ResNet-18 engines (``../shared/fixtures/trt-real``, by path, skipped when absent): a
folder of one engine's files or its files joined with commas is an input; trtexec's per-inference
times in them count as a run; the layer diff is ``diff``'s groups; provenance from the files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from trtstudio.cli import main

A100 = (Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "trt-real" / "NVIDIA_TensorRT_trex"
        / "release-11.0" / "examples" / "pytorch" / "resnet" / "A100")
pytestmark = pytest.mark.skipif(not A100.is_dir(), reason=f"fixtures absent: {A100}")


def _compare(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    rc = main(["compare", *args, "--json"])
    return rc, json.loads(capsys.readouterr().out)


def test_compare_engine_folders_aligns_qat_residual_and_times_from_trtexec(capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = _compare(capsys, str(A100 / "fp32"), str(A100 / "fp16"), str(A100 / "qat-residual"))
    assert rc == 0 and doc["schema"] == "trtstudio.comparison/2"
    assert [v["name"] for v in doc["variants"]] == ["fp32", "fp16", "qat-residual"]
    # the same groups as trtstudio diff (one core): fp32 vs qat-residual aligns its convolutions (was 0 groups)
    rc_d = main(["diff", str(A100 / "fp32"), str(A100 / "fp16"), str(A100 / "qat-residual"), "--json"])
    d = json.loads(capsys.readouterr().out)
    assert rc_d == 0
    for ld, pair in zip(doc["layer_diffs"], d["diffs"], strict=True):
        assert [(g["change"], g["base_layers"], g["other_layers"]) for g in ld["rows"]] == \
            [(g["change"], g["base_layers"], g["other_layers"]) for g in pair["groups"]]
        cl = ld["summary"]["alignment"]["compute_layers"]
        assert cl["base"] == 21 and cl["base_aligned"] == cl["base"] and cl["other_aligned"] == cl["other"]
        assert set(ld["summary"]["changes"]) == {"precision", "tactic", "format", "fused", "only_base", "only_other"}
        assert ld["summary"]["changes"]["precision"] == sum(1 for g in pair["groups"] if g["change"] == "precision")
    qat = doc["layer_diffs"][1]
    assert qat["summary"]["matched"] >= 21
    # precision changes name the layers (TREx engines have no onnx_nodes without a model)
    pcs = qat["summary"]["precision_changes"]
    assert pcs and all(not p.startswith(":") and " -> " in p for p in pcs)
    assert any(p.startswith("Conv_3 + Relu_4") and p.endswith("FP32 -> INT8") for p in pcs)
    # trtexec's per-inference GPU compute times are each side's run: the speed-up has its interval
    for v, folder in zip(doc["variants"], ("fp32", "fp16", "qat-residual"), strict=True):
        stem = "resnet" if folder in ("fp32", "fp16") else f"resnet-{folder}"
        times = json.loads((A100 / folder / f"{stem}.onnx.engine.timing.json").read_text())
        compute = np.array([t["computeMs"] for t in times])
        assert v["latency_ms"]["count"] == len(compute)
        assert v["latency_ms"]["median"] == pytest.approx(float(np.median(compute)))
        assert v["timing"].startswith("GPU compute time") and v["backend"] == "trtexec"
        assert v["provenance"]["gpu"].startswith("NVIDIA A100") and v["provenance"]["tensorrt"] == "not recorded"
        assert v["throughput"]["inferences_per_s"] > 0
    s16, sq = doc["summary"][1], doc["summary"][2]
    assert s16["verdict"] == "faster" and sq["verdict"] == "faster"
    assert s16["speedup_low"] <= s16["speedup_median"] <= s16["speedup_high"]
    assert s16["speedup_median"] == pytest.approx(doc["variants"][0]["latency_ms"]["median"]
                                                  / doc["variants"][1]["latency_ms"]["median"])
    assert not any("no run" in w for w in doc["warnings"])


def test_compare_takes_a_comma_list_and_writes_html_with_provenance(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    fp32 = ",".join(str(p) for p in sorted((A100 / "fp32").glob("*.json")))
    out = tmp_path / "c.html"
    rc = main(["compare", fp32, str(A100 / "qat"), "--names", "fp32,qat", "-o", str(out)])
    text = capsys.readouterr().out
    assert rc == 0 and "NVIDIA A100 80GB PCIe (SM 8.0), TensorRT not recorded" in text
    html = out.read_text()
    summary = html.split('id="summary"', 1)[1].split("</section>", 1)[0]
    assert "engine GPU, TensorRT (its files)" in summary and "TensorRT not recorded" in summary
    assert "21 of 21 convolutions/GEMMs of fp32 aligned" in summary
    assert "Layer diff: qat vs fp32" in html


def test_compare_refuses_a_missing_input_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["compare", str(A100 / "fp32"), str(tmp_path / "nothing"), "--json"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and err.startswith("error: ") and "no such file, folder or prefix of engine files" in err


def test_report_json_inputs_align_by_their_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Report JSON inputs keep no engine object: their layers are rebuilt from the rows (both sides
    alike, also beside engine files), and still line up fp32 with qat-residual."""
    outs = []
    for folder in ("fp32", "qat-residual"):
        out = tmp_path / f"{folder}.json"
        assert main(["report", "--engine", *map(str, sorted((A100 / folder).glob("*.json"))), "-o", str(out)]) == 0
        outs.append(str(out))
    capsys.readouterr()
    rc, doc = _compare(capsys, *outs)
    assert rc == 0
    cl = doc["layer_diffs"][0]["summary"]["alignment"]["compute_layers"]
    assert cl["base_aligned"] == cl["base"] == 21 and cl["other_aligned"] == 21
    rc, doc = _compare(capsys, str(A100 / "fp32"), outs[0])  # one engine, as files and as its report
    changes = doc["layer_diffs"][0]["summary"]["changes"]
    assert rc == 0 and not any(changes.values()), changes
    assert doc["layer_diffs"][0]["summary"]["matched"] == 32
