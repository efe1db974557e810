"""PDF reports and comparisons (QTextDocument + QPdfWriter, headless): the text holds the sections."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx_models import conv_net
from test_report_model import ort_run

from trtstudio.fmt import fmt_ms
from trtstudio.report import build_report, write_report
from trtstudio.report.compare import compare
from trtstudio.report.writers import write_comparison

pytestmark = pytest.mark.gui  # needs PySide6 (QtGui): skipped in the Qt-less core run


def _text(path: Path) -> tuple[str, int]:
    pypdf = pytest.importorskip("pypdf")
    reader = pypdf.PdfReader(str(path))
    return "\n".join(p.extract_text() for p in reader.pages), len(reader.pages)


def _squash(text: str) -> str:
    """Text without any whitespace (PDF text extraction splits words at kerning and line wraps), with
    typographic ligatures (fi, fl, ff: which ones a font draws depends on the installed fonts) unfolded."""
    import unicodedata

    return "".join(unicodedata.normalize("NFKC", text).split())


def test_pdf_report_has_sections_and_numbers(sample_model: Path, tmp_path: Path) -> None:
    pytest.importorskip("PySide6.QtGui")
    log = sample_model.with_name("mobilenetv2_035.rtx-sm86.build.log")
    rep = build_report(model=sample_model, engine=log, run=ort_run(sample_model, iterations=20),
                       accuracy={"top1_agreement": 0.998})
    out = tmp_path / "r.pdf"
    assert write_report(rep, out) == [out]
    assert out.read_bytes().startswith(b"%PDF")
    text, pages = _text(out)
    flat = _squash(text)
    assert pages >= 3
    for title in ("At a glance", "Environment", "Model", "Build settings", "Latency", "Memory", "Findings", "Layers",
                  "Accuracy", "Warnings"):
        assert _squash(title) in flat, title
    assert _squash(fmt_ms(rep.run["latency_ms"]["median"])) in flat
    assert "top1_agreement" in flat
    assert [p.name for p in tmp_path.iterdir()] == ["r.pdf"]  # no temp file left


def test_pdf_comparison(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("PySide6.QtGui")
    from trtstudio.report import writers

    model = tmp_path / "m.onnx"
    onnx.save(conv_net(batch=1), model)
    a = build_report(model=model, run=ort_run(model, iterations=20, threads=1))
    b = build_report(model=model, run=ort_run(model, iterations=20, threads=2))
    comp = compare([a, b], ["base", "other"])
    out = write_comparison(comp, tmp_path / "c.pdf")[0]
    flat = _squash(_text(out)[0])
    assert "Summary" in flat and _squash("Layer diff: other vs base") in flat and "speed-up" in flat
    assert "Thefirst" not in flat
    rows = len(comp.layer_diffs[0]["rows"])
    assert rows > 2
    monkeypatch.setattr(writers, "PDF_MAX_ROWS", 2)  # a big engine's diff: the first rows, and where the rest are
    flat = _squash(_text(write_comparison(comp, tmp_path / "c2.pdf")[0])[0])
    assert _squash(f"The first 2 of {rows:,} rows: the HTML and JSON comparisons list them all.") in flat


def test_pdf_lists_the_first_rows_of_a_big_engine_and_says_where_the_rest_are(
        trt_real: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Qt took over ten minutes (and 2 GB) to lay out the tables of a 50,000-layer engine: the PDF
    shows the first PDF_MAX_ROWS rows of the layer and finding tables and says so; the HTML keeps all."""
    pytest.importorskip("PySide6.QtGui")
    from trtstudio.report import writers

    folder = trt_real / "fuzzylabs_edge-vision-power-estimation/desktop/torch_onnx_trtexec/results/resnet18"
    if not folder.is_dir():
        pytest.skip("fixture absent")
    rep = build_report(engine=[folder / "resnet18_fp16.graph.json", folder / "resnet18_fp16.profile.json"])
    assert len(rep.layers) > 20 and len(rep.findings) > 3
    monkeypatch.setattr(writers, "PDF_MAX_ROWS", 3)
    out = tmp_path / "r.pdf"
    write_report(rep, out)
    flat = _squash(_text(out)[0])
    assert _squash(f"The first 3 of {len(rep.layers):,} layers: the HTML, CSV and JSON reports list them all.") in flat
    assert _squash(f"The first 3 of {len(rep.findings):,} findings: the HTML and JSON reports list them all.") in flat
    assert _squash(rep.layers[-1]["name"]) not in flat
    html = tmp_path / "r.html"
    write_report(rep, html)
    assert "The first" not in html.read_text() and rep.layers[-1]["name"] in html.read_text()
