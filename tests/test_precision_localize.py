"""Where accuracy is lost (issue 40 item 5), without Qt: ``trtstudio precision``'s per-tensor
localisation (FP32 and the variant both run with ONNX Runtime, intermediate tensors made outputs) on
a third-party model (rapidocr's PaddleOCR direction classifier) and the bundled sample; the view of
it (``precision.localize``: first diverging node, nodes adding the most error, tensor statistics,
the overlay) and the report's section (``trtstudio report --precision``: sentence, table, excerpt)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from trtstudio.cli import main
from trtstudio.graph.model import load_model
from trtstudio.precision.localize import FIRST_COLOR, accuracy_overlay, divergence, divergence_section

pytest.importorskip("onnxruntime")

PADDLE_CLS = None
try:
    import rapidocr_onnxruntime

    PADDLE_CLS = Path(rapidocr_onnxruntime.__file__).parent / "models" / "ch_ppocr_mobile_v2.0_cls_infer.onnx"
except ImportError:
    pass
SAMPLE = Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"


@pytest.fixture(scope="module")
def paddle_doc(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, Path]:
    if PADDLE_CLS is None or not PADDLE_CLS.is_file():
        pytest.skip("rapidocr_onnxruntime's PaddleOCR classifier is not installed")
    tmp = tmp_path_factory.mktemp("paddle")
    calib = tmp / "calib"
    calib.mkdir()
    rng = np.random.default_rng(0)
    for i in range(4):
        np.save(calib / f"x_{i}.npy", rng.uniform(-1, 1, (1, 3, 48, 192)).astype(np.float32))
    out = tmp / "precision.json"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["precision", str(PADDLE_CLS), "--variants", "fp16,int8", "--calib", str(calib), "--shapes",
                   "x:1x3x48x192", "--iterations", "6", "--rounds", "1", "--no-engines", "--out-dir", str(tmp / "out"),
                   "--json"])
    assert rc == 0
    out.write_text(buf.getvalue())
    return PADDLE_CLS, json.loads(buf.getvalue()), out


def _variant(doc: dict, name: str) -> dict:
    return next(v for v in doc["variants"] if v["name"] == name)


def test_first_diverging_node_is_the_first_tensor_over_threshold(paddle_doc: tuple[Path, dict, Path]) -> None:
    model, doc, _ = paddle_doc
    int8 = _variant(doc, "int8")
    tensors, thr = int8["tensors"], int8["localize_threshold"]
    assert tensors and thr == 0.1
    first_row = next(t for t in tensors if t["rel"] > thr)  # topological order
    div = divergence(int8)
    assert div is not None and div["first"]["node"] == first_row["node"] == int8["first_over"]["node"]
    assert div["threshold"] == thr
    # every node's statistics are its worst output tensor's
    for t in tensors:
        assert div["nodes"][t["node"]]["rel"] >= t["rel"]
    # the nodes adding the most error, largest first; what a node adds = its error less what it received
    g = [s["growth"] for s in div["growth"]]
    assert g == sorted(g, reverse=True) and all(s["growth"] == pytest.approx(s["rel"] - s["input_rel"]) for s in div["growth"])
    # a tensor the quantized model fused away (a Conv folded with its BatchNormalization) passes on the
    # error above it: the BatchNormalization after such a Conv receives a measured error, not 0
    bns = [t for t in tensors if t["op_type"] == "BatchNormalization"]
    assert sum(t["input_rel"] > 0 for t in bns) >= len(bns) - 1
    # the overlay: the first node in its own colour, the worst node darkest, a continuous legend
    graph = load_model(model).graph
    ov = accuracy_overlay(graph.nodes, div)
    names = [n.name for n in graph.nodes]
    assert ov.colors[names.index(div["first"]["node"])] == FIRST_COLOR
    worst = div["worst"]["node"]
    if worst != div["first"]["node"]:
        assert ov.colors[names.index(worst)] == "#af2814"
    assert ov.legend[0][1].startswith("ramp:") and any(div["first"]["node"] in label for label, _ in ov.legend)
    # the report's excerpt: the graph around the first node, each node's error in its tooltip
    sec = divergence_section(div, graph)
    assert sec["svg"].startswith("<svg ") and div["first"]["node"] in sec["nodes"]
    assert f"relative error {div['nodes'][div['first']['node']]['rel']:.3g}" in sec["svg"]
    from trtstudio.palette import heat

    worst_rel = max(s["rel"] for s in div["nodes"].values())
    assert f'fill="{heat(div["first"]["rel"] / worst_rel)}" fill-opacity="0.9"' in sec["svg"]  # error as colour


def test_report_section_from_precision_results(paddle_doc: tuple[Path, dict, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    model, doc, path = paddle_doc
    first = _variant(doc, "int8")["first_over"]["node"]
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    assert main(["report", "--onnx", str(model), "--precision", str(path), "-o", str(html)]) == 0
    assert main(["report", "--onnx", str(model), "--precision", str(path), "-o", str(md)]) == 0
    text = html.read_text()
    assert "Where accuracy is lost" in text and f"error first passes the threshold at {first}" in text
    assert text.count("<svg") >= 1 and "divergence" in text
    m = md.read_text()
    assert "## Where accuracy is lost" in m and f"| {first} (first over threshold) |" in m
    assert m.index("### int8") < m.index("### fp16")  # the variant with a first diverging node first
    # the accuracy figures of each variant are in the Accuracy table, the localisation is not flattened there
    capsys.readouterr()
    assert main(["report", "--onnx", str(model), "--precision", str(path), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert set(rep["accuracy"]) == {"fp32", "fp16", "int8"} and rep["divergence"][0]["first"]["node"] == first
    # not a precision document: one line, exit 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "trtstudio.report/1"}')
    assert main(["report", "--onnx", str(model), "--precision", str(bad), "-o", str(html)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a trtstudio precision --json document" in err[0]


def test_fp16_on_the_bundled_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not SAMPLE.is_file():
        pytest.skip("sample model not generated")
    assert main(["precision", str(SAMPLE), "--variants", "fp16", "--iterations", "4", "--rounds", "1",
                 "--no-engines", "--out-dir", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    fp16 = _variant(doc, "fp16")
    div = divergence(fp16)
    assert div is not None and len(div["nodes"]) > 50
    graph = load_model(SAMPLE).graph
    assert set(div["nodes"]) <= {n.name for n in graph.nodes}
    worst = max(fp16["tensors"], key=lambda t: t["rel"])
    assert div["worst"]["node"] == worst["node"] and div["worst"]["rel"] == pytest.approx(worst["rel"])
    if fp16["first_over"] is None:
        assert "no tensor passes the threshold" in div["text"]
        assert FIRST_COLOR not in accuracy_overlay(graph.nodes, div).colors
    sec = divergence_section(div, graph)  # around the first diverging node, or the worst when none passes
    anchor = fp16["first_over"]["node"] if fp16["first_over"] else worst["node"]
    assert sec["svg"] and anchor in sec["nodes"]


def test_a_damaged_section_in_a_session_renders(tmp_path: Path) -> None:
    """A session is data: a divergence section with wrong types gives empty cells and no picture,
    never a traceback, in every writer."""
    from trtstudio.report.model import Report
    from trtstudio.report.writers import write_report

    rep = Report.from_json({"title": "t", "generated": "now", "divergence": [
        {"variant": "int8", "text": "<b>x</b>", "first": {"node": "n", "rel": "NaN?", "cosine": None},
         "growth": [3, {"node": "m", "rel": [1], "growth": 0.5}], "svg": "<svg onload='alert(1)'></svg>"},
        {"variant": "fp16", "first": "not a dict", "growth": "nope"}]})
    for suffix in ("html", "md", "json"):
        out = tmp_path / f"r.{suffix}"
        write_report(rep, str(out))
        text = out.read_text()
        assert "Where accuracy is lost" in text or suffix == "json"
        assert "alert(1)" not in text or suffix == "json"
    assert "&lt;b&gt;x&lt;/b&gt;" in (tmp_path / "r.html").read_text()
