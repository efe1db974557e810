"""The report's Layer charts (every layer's time, memory per layer, convolution work) on TREx's
A100 engine, the same figures the Python API plots."""

from __future__ import annotations

from pathlib import Path

import pytest

from trtstudio.cli import main

A100 = (Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "trt-real" / "NVIDIA_TensorRT_trex"
        / "release-11.0" / "examples" / "pytorch" / "resnet" / "A100" / "fp32")


@pytest.mark.skipif(not A100.is_dir(), reason=f"fixtures absent: {A100}")
def test_layer_charts_in_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import trtstudio as ts
    from trtstudio.report.model import build_report

    files = sorted(str(p) for p in A100.glob("*.json"))
    rep = build_report(engine=files)
    plan = ts.open_engine(A100)
    lt = rep.plots["layer_times"]
    timed = [r for r in plan.layers if r["time_ms"]]
    assert lt["names"] == [r["name"] for r in timed] and len(lt["ms"]) == len(timed)
    assert rep.plots["conv_macs"][0]["macs"] == max(r["macs"] for r in plan.conv_macs())
    assert {r["layer"] for r in rep.plots["layer_memory"]} <= {r["name"] for r in plan.layers}
    out = tmp_path / "r.html"
    assert main(["report", "--engine", *files, "-o", str(out)]) == 0
    capsys.readouterr()
    page = out.read_text()
    assert "Layer charts: time, memory, convolution work" in page
    for name in ("Time per layer, all", "Memory per layer", "Convolution work, GMAC per inference"):
        assert name in page
