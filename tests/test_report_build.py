"""The report's Build section (report.build_section, JSON build_timeline, HTML, Markdown): from the
verbose and plain build logs of the real fixtures, figures checked against the logs' own lines, and
from a real TensorRT-RTX build of the onnx wheel's light model zoo (its build --json document, its
saved log, the BuildResult itself and a session that keeps the section after the log is gone)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import onnx
import pytest

from trtstudio.cli import main
from trtstudio.engine.buildtime import UNSTATED, read_build_log
from trtstudio.report.model import Report, build_report
from trtstudio.report.session import load_session

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "trt-real"
HACKATHON = FIXTURES / "NVIDIA_trt-samples-for-hackathon-cn"
TRTEXEC = HACKATHON / "HEAD" / "cookbook" / "07-Tool" / "trtexec" / "result-02.log"
LIGHT = Path(onnx.__file__).parent / "backend/test/data/light"
HAS_RTX = importlib.util.find_spec("tensorrt_rtx") is not None
_GEN = re.compile(r"Engine generation completed in ([\d.eE+-]+) seconds")


def _report(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    assert main(["report", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def _plain_logs() -> list[Path]:
    if not (HACKATHON / "history").is_dir():
        return []
    return [p for p in sorted((HACKATHON / "history").glob("*.log")) if "Engine generation completed in" in p.read_text()]


@pytest.mark.skipif(not TRTEXEC.is_file(), reason="real TensorRT fixtures (../shared/fixtures/trt-real) are absent")
def test_verbose_trtexec_log_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = TRTEXEC.read_text(errors="replace")
    doc = _report([str(TRTEXEC)], capsys)
    sec = doc["build_timeline"]
    assert sec["schema"] == "trtstudio.report.build/1"
    # the log's own figures: its passes' totals, its cache lines, its Timing Runner blocks
    assert sec["total_seconds"] == pytest.approx(sum(float(x) for x in _GEN.findall(text)), rel=1e-6)
    assert sec["cache"]["hits"] == text.count("got cached result") and sec["cache"]["misses"] == text.count("Timing Runner:")
    # the same core as build-log: the timeline and the top 20 layers as it reads them
    full = read_build_log(TRTEXEC)
    assert sec["timeline"] == full["timeline"] and [t["layer"] for t in sec["top_layers"]] == \
        [t["layer"] for t in full["top_layers"]]
    assert len(sec["top_layers"]) == min(20, len(full["layers"])) == 20
    assert sec["layers_timed"] == len(full["layers"])
    top = sec["top_layers"][0]
    assert top["seconds"] == max(lay["seconds"] for lay in full["layers"]) and top["tactics_tried"] >= 1
    assert any(s["saving_s"] for s in top["settings"])
    # the memory peaks the log states
    assert sec["memory"]["allocator_gpu_peak_bytes"] == full["memory"]["allocator_gpu_peak_bytes"]
    # HTML: a section with the two charts and a row per timeline row; Markdown likewise
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    assert main(["report", str(TRTEXEC), "-o", str(html)]) == 0 and main(["report", str(TRTEXEC), "-o", str(md)]) == 0
    page = html.read_text()
    part = page[page.index('<section id="build-timeline">'):]
    part = part[:part.index("</section>")]
    assert "Build time by phase" in part and 'aria-label="Build timeline"' in part
    assert part.count("<title>") == len(sec["timeline"])  # one strip segment per row
    assert top["layer"].replace("&", "&amp;") in part
    mdt = md.read_text()
    build_md = mdt[mdt.index("## Build"):]
    assert f"{sec['cache']['hits']} hits, {sec['cache']['misses']} misses" in build_md
    assert sum(1 for line in build_md.splitlines() if line.startswith("| ") and "(pass " in line) == \
        sum(1 for r in sec["timeline"] if r["pass"])


@pytest.mark.skipif(not _plain_logs(), reason="real TensorRT fixtures are absent")
@pytest.mark.parametrize("path", _plain_logs(), ids=lambda p: p.name)
def test_plain_logs_say_how_much_they_itemise(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sec = _report([str(path)], capsys)["build_timeline"]
    text = path.read_text(errors="replace")
    assert sec["total_seconds"] == pytest.approx(sum(float(x) for x in _GEN.findall(text)), abs=1e-6)
    unstated = sum(r["seconds"] for r in sec["timeline"] if r["phase"] == UNSTATED)
    from trtstudio.report.build_section import headline

    if unstated > 0.5 * sec["timeline_seconds"]:
        assert "the log itemises" in headline(sec)
    assert not sec["top_layers"] and sec["warnings"]


def test_report_without_a_build_has_no_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = FIXTURES / "NVIDIA_TensorRT_trex/release-11.0/examples/pytorch/resnet/A100/fp32"
    if not folder.is_dir():
        pytest.skip(f"fixture {folder} absent")
    graph = next(folder.glob("*.graph.json"))  # TREx's layer JSON: no build log beside it
    doc = _report([str(graph)], capsys)
    assert doc["build_timeline"] is None and doc["engine"]["layers"] > 0
    html = tmp_path / "r.html"
    assert main(["report", str(graph), "-o", str(html)]) == 0
    assert 'id="build-timeline"' not in html.read_text()


@pytest.mark.rtx
@pytest.mark.skipif(not HAS_RTX, reason="tensorrt_rtx is not installed")
def test_rtx_build_report_from_document_log_result_and_session(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    model = LIGHT / "light_squeezenet.onnx"
    if not model.is_file():
        pytest.skip(f"{model} is not in this onnx wheel")
    log, build_json = tmp_path / "sq.build.log", tmp_path / "build.json"
    assert main(["build", str(model), "--backend", "rtx", "-o", str(tmp_path / "sq.engine"), "--json",
                 "--save-log", str(log)]) == 0
    build = json.loads(capsys.readouterr().out)
    build_json.write_text(json.dumps(build))
    from_doc = _report([str(build_json)], capsys)["build_timeline"]
    from_log = _report([str(log)], capsys)["build_timeline"]
    for sec in (from_doc, from_log):
        # the timeline trtstudio recorded, its whole seconds and measured host peak, TensorRT's own total beside
        assert sec["timeline"] == build["timeline"]
        assert sec["recorded_seconds"] == build["seconds"]
        assert sec["memory"]["host_peak_bytes"] == build["memory"]["host_peak_bytes"]
        assert sec["total_seconds"] is not None and sec["log_timeline"]
        assert sec["versions"]["module"] == "tensorrt_rtx"
    from trtstudio.report.build_section import build_markdown, headline
    from trtstudio.report.markdown import md_table

    assert "TensorRT-RTX keeps no timing cache" in headline(from_doc)
    assert any("TensorRT-RTX keeps no timing cache" in line for line in build_markdown(from_doc, md_table))
    assert f"{build['seconds'] * 1000:.1f} ms (recorded by trtstudio" in headline(from_doc)
    # a BuildResult handed to build_report, as the Python API and the window hold it
    from trtstudio.backends.build import BuildOptions, build_engine

    res = build_engine(model, tmp_path / "again.engine", BuildOptions(backend="rtx"))
    rep = build_report(engine=res)
    assert rep.build_timeline is not None and rep.build_timeline["timeline"] == res.timeline
    # a session keeps the section after the build's files are gone
    session = tmp_path / "s.trtstudio"
    assert main(["report", str(build_json), "--onnx", str(model), "-o", str(tmp_path / "r.md"),
                 "--save-session", str(session)]) == 0
    capsys.readouterr()
    saved = load_session(session)
    assert saved.build is not None and saved.build["timeline"] == build["timeline"]
    build_json.unlink()
    log.unlink()
    again = Report.from_session(load_session(session))
    assert again.build_timeline == saved.build
    assert "## Build" in (tmp_path / "r.md").read_text()
