"""Build timelines recorded live (backends.build + engine.buildtime.PhaseRecorder) on TensorRT-RTX
builds of third-party models: the onnx wheel's light model zoo. Cancel mid-phase keeps the partial
timeline and log."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import onnx
import pytest

from trtstudio.backends.build import BuildOptions, build_engine
from trtstudio.cli import main
from trtstudio.engine.buildtime import read_build_log

HAS_RTX = importlib.util.find_spec("tensorrt_rtx") is not None
LIGHT = Path(onnx.__file__).parent / "backend/test/data/light"
pytestmark = [pytest.mark.rtx, pytest.mark.skipif(not HAS_RTX, reason="tensorrt_rtx is not installed")]


def _model(name: str) -> Path:
    p = LIGHT / f"light_{name}.onnx"
    if not p.is_file():
        pytest.skip(f"{p} is not in this onnx wheel")
    return p


def test_build_records_timeline_and_memory(tmp_path: Path) -> None:
    res = build_engine(_model("squeezenet"), tmp_path / "s.engine", BuildOptions(backend="rtx"))
    assert res.ok
    tl = res.timeline
    phases = [r["phase"] for r in tl]
    assert phases[0] == "parsing" and "graph optimization" in phases and "tactic timing" in phases
    # rows are slices of one clock: in order, not overlapping, inside the build's own seconds
    for a, b in zip(tl, tl[1:], strict=False):
        assert b["start_s"] >= a["start_s"] + a["seconds"] - 3e-6  # each rounded to 1 µs
    assert tl[-1]["start_s"] + tl[-1]["seconds"] <= res.seconds + 1e-6
    # the phases cover most of the build (not recorded: configuring the builder, reading the built layers)
    assert 0.5 * res.seconds <= sum(r["seconds"] for r in tl) <= res.seconds + 1e-6
    assert sum(r["share"] for r in tl) == pytest.approx(1.0, abs=0.01)
    # the TensorRT phase names behind each row are kept
    assert any("Optimizing graph" in r["detail"] for r in tl)
    assert res.memory["host_peak_bytes"] > 50 << 20
    doc = res.to_json()
    assert doc["timeline"] == tl and doc["memory"] == res.memory


def test_cancel_mid_phase_keeps_partial_timeline_and_log(tmp_path: Path) -> None:
    seen: list[str] = []
    res = build_engine(_model("shufflenet"), tmp_path / "c.engine", BuildOptions(backend="rtx"),
                       progress=lambda p, s, t: seen.append(p), cancel=lambda: "Optimizing graph" in seen)
    assert res.cancelled and not res.ok
    phases = [r["phase"] for r in res.timeline]
    assert "graph optimization" in phases and "tactic timing" not in phases
    log = tmp_path / "partial.log"
    log.write_text(res.log_text())
    doc = read_build_log(log)
    assert doc["cancelled"] and doc["timeline"] == res.timeline
    assert not (tmp_path / "c.engine").exists()


def test_build_cli_json_text_and_saved_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model, log = _model("squeezenet"), tmp_path / "b.log"
    assert main(["build", str(model), "--backend", "rtx", "-o", str(tmp_path / "a.engine"), "--json",
                 "--save-log", str(log)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert all(set(r) >= {"phase", "start_s", "seconds"} for r in doc["timeline"]) and doc["timeline"]
    back = read_build_log(log)
    assert back["timeline"] == doc["timeline"]
    # the log's own statements are kept beside the recorded timeline
    assert back["total_seconds"] is not None and back["log_timeline"]
    assert main(["build", str(model), "--backend", "rtx", "-o", str(tmp_path / "b.engine")]) == 0
    cap = capsys.readouterr()
    assert "build phases" in cap.out and "graph optimization" in cap.out
    # stderr is not a terminal here: plain progress lines, one per phase started, no carriage returns
    assert "build:" in cap.err and "Optimizing graph" in cap.err and "\r" not in cap.err


def test_require_cache_hits_refused_on_rtx(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", str(_model("squeezenet")), "--backend", "rtx", "-o", str(tmp_path / "x.engine"),
                 "--require-cache-hits"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no timing cache" in err[0]
