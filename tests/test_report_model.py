"""Reports from real ONNX Runtime runs: model, HTML (self-contained, images decode, same numbers as the
JSON), JSON, CSV, plot data."""

from __future__ import annotations

import base64
import csv
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx_models import conv_net

from trtstudio.backends.ort import OrtBackend
from trtstudio.errors import InputError
from trtstudio.fmt import fmt_ms
from trtstudio.profiling.memory import MemoryMonitor, default_probes
from trtstudio.profiling.runner import RunConfig, Runner
from trtstudio.report import RunData, build_report, plots, write_report
from trtstudio.report.model import SCHEMA, Report
from trtstudio.report.writers import REPORT_WRITERS

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def ort_run(model_path: Path, iterations: int = 60, per_layer: bool = True, threads: int | None = None,
            name: str = "ort") -> RunData:
    """A real ONNX Runtime run of ``model_path`` (memory sampled, per-layer profile)."""
    backend = OrtBackend()
    backend.load(model_path, {"threads": threads})
    try:
        backend.prepare_inputs({}, None)
        monitor = MemoryMonitor(default_probes(gpu=False), interval_ms=1)
        result = Runner(backend, RunConfig(warmup=3, iterations=iterations), monitor=monitor).run()
        assert result.error is None, result.error_text
        layers = backend.per_layer_profile(3) if per_layer else []
        return RunData.from_result(result, name=name, backend="ort", model=str(model_path), layers=layers,
                                   extra_memory=backend.memory())
    finally:
        backend.close()


@pytest.fixture
def small_model(tmp_path: Path) -> Path:
    path = tmp_path / "conv_net.onnx"
    onnx.save(conv_net(batch=1), path)
    return path


def section_titles(html: str) -> list[str]:
    """The <h2> titles of a report page."""
    return re.findall(r"<h2[^>]*>(.*?)</h2>", html)


def check_html_self_contained(text: str) -> int:
    """No external URL anywhere, every embedded image decodes; returns the number of images checked."""
    assert not re.search(r"https?://", text), re.search(r".{40}https?://.{40}", text)
    for src in re.findall(r"""src\s*=\s*["']?([^"' >]+)""", text):
        assert src.startswith("data:"), src
    assert "<link" not in text and "@import" not in text and "url(http" not in text
    n = 0
    for svg in re.findall(r"<svg\b.*?</svg>", text, flags=re.S):
        ET.fromstring(svg)  # raises on malformed SVG
        n += 1
    for b64 in re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", text):
        assert base64.b64decode(b64, validate=True).startswith(PNG_SIGNATURE)
        n += 1
    return n


def test_report_from_ort_run_of_small_model(small_model: Path, tmp_path: Path) -> None:
    run = ort_run(small_model)
    rep = build_report(model=small_model, run=run, accuracy={"max_abs_error": 0.0125, "cosine": 0.99991})
    doc = rep.to_json()
    assert doc["schema"] == SCHEMA
    lat = doc["run"]["latency_ms"]
    assert lat["count"] == 60 == run.latency_ms.size
    assert lat["min"] <= lat["median"] <= lat["p99"] <= lat["max"]
    # ORT per-layer rows make the layer table, mapped to the ONNX nodes of the model
    names = {n.name for n in onnx.load(str(small_model)).graph.node}
    assert doc["layers"] and all(set(r["onnx_nodes"]) <= names for r in doc["layers"])
    assert any(r["onnx_nodes"] for r in doc["layers"])
    assert sum(r["percent"] for r in doc["layers"] if r["percent"] is not None) == pytest.approx(100.0)
    top = [r["time_ms"] for r in doc["top_layers"]]
    assert top == sorted(top, reverse=True)
    assert sum(g["layers"] for g in doc["time_by_type"]) == sum(1 for r in doc["layers"] if r["time_ms"] is not None)
    assert doc["model"]["nodes"] == 7 and doc["graph_picture"]["mime"] == "image/svg+xml"
    assert doc["plots"]["latency_histogram"]["n"] == 60
    assert sum(doc["plots"]["latency_histogram"]["counts"]) + doc["plots"]["latency_histogram"]["over"] == 60
    assert "host_rss_bytes" in doc["plots"]["memory"]["lines"]
    assert doc["leak"]["verdict"] in ("stable", "growing", "inconclusive")
    assert doc["environment"]["versions"]["onnxruntime"] and doc["environment"]["versions"]["onnx"] == onnx.__version__
    json.dumps(doc, allow_nan=False)  # strict JSON

    html_path, json_path = tmp_path / "r.html", tmp_path / "r.json"
    assert write_report(rep, html_path) == [html_path]
    write_report(rep, json_path)
    text = html_path.read_text(encoding="utf-8")
    assert check_html_self_contained(text) >= 4  # graph, over time, histogram, memory, ...
    saved = json.loads(json_path.read_text())
    # the HTML shows the JSON's numbers, formatted the same way
    for key in ("median", "p99", "mean"):
        assert fmt_ms(saved["run"]["latency_ms"][key]) in text
    assert fmt_ms(saved["top_layers"][0]["time_ms"]) in text
    assert {"At a glance", "Environment (the machine that wrote this report)", "Model", "Latency", "Memory", "Slowest layers", "Layers", "Accuracy",
            "Warnings"} <= set(section_titles(text))
    assert "max_abs_error" in text and "0.012500" in text


def test_report_from_sample_model_with_engine_log(sample_model: Path, tmp_path: Path) -> None:
    log = sample_model.with_name("mobilenetv2_035.rtx-sm86.build.log")
    run = ort_run(sample_model, iterations=20, per_layer=False)
    rep = build_report(model=sample_model, engine=log, run=run, title="MobileNetV2 0.35")
    doc = rep.to_json()
    assert doc["title"] == "MobileNetV2 0.35"
    assert doc["engine"]["layers"] == len(doc["layers"]) > 40
    assert doc["build"]["settings"]["targets"] == ["SM86"]
    assert doc["build"]["memory"]["weights"] > 1_000_000
    # layers carry ONNX nodes of the model (from the log's metadata) and findings with hints
    names = {n.name for n in onnx.load(str(sample_model)).graph.node}
    mapped = {n for r in doc["layers"] for n in r["onnx_nodes"]}
    assert mapped <= names and len(mapped) > 0.8 * len(names)
    assert doc["findings"] and all(f["message"] for f in doc["findings"])
    assert {r["precision"] for r in doc["layers"] if r["precision"]} == {"FP32"}
    out = write_report(rep, tmp_path / "m.csv")
    assert [p.name for p in out] == ["m.csv", "m.samples.csv"]
    with open(out[0], newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(doc["layers"]) and rows[2]["onnx_nodes"] == ";".join(doc["layers"][2]["onnx_nodes"])
    samples = np.loadtxt(out[1], delimiter=",", skiprows=1)
    assert samples.shape == (20, 2)
    np.testing.assert_allclose(samples[:, 1], run.latency_ms, rtol=1e-6)
    only = write_report(rep, tmp_path / "only.csv", what="samples")
    assert only[0].read_text().startswith("index,latency_ms\n")


def test_engine_only_report_has_no_run_sections(sample_model: Path, tmp_path: Path) -> None:
    log = sample_model.with_name("mobilenetv2_035.rtx-sm86.build.log")
    rep = build_report(engine=[log])
    assert rep.run is None and rep.samples is None and rep.plots == {}
    text = (write_report(rep, tmp_path / "e.html"))[0].read_text()
    assert "Latency" not in section_titles(text) and "Layers" in section_titles(text)
    check_html_self_contained(text)
    with pytest.raises(InputError, match="no latency samples"):
        write_report(rep, tmp_path / "e.csv", what="samples")


def test_graph_png_is_embedded_and_decodes(small_model: Path, tmp_path: Path) -> None:
    import zlib

    # a real 2x2 PNG made by hand (signature, IHDR, IDAT, IEND)
    def chunk(kind: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    png = PNG_SIGNATURE + chunk(b"IHDR", (2).to_bytes(4, "big") * 2 + b"\x08\x02\x00\x00\x00") + \
        chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    rep = build_report(model=small_model, graph_png=png)
    assert rep.graph_picture is not None and rep.graph_picture["mime"] == "image/png"
    text = write_report(rep, tmp_path / "g.html")[0].read_text()
    assert "data:image/png;base64," in text
    assert check_html_self_contained(text) >= 1


def test_envelope_of_a_million_samples() -> None:
    rng = np.random.default_rng(1)
    y = rng.gamma(4.0, 0.25, 1_000_000)
    y[123_456] = 50.0  # one spike must survive downsampling
    env = plots.envelope(y, columns=2000)
    assert env["n"] == 1_000_000 and len(env["x"]) == len(env["lo"]) == len(env["hi"]) == 2000
    assert max(env["hi"]) == pytest.approx(50.0) and min(env["lo"]) == pytest.approx(y.min(), abs=1e-6)
    assert all(lo <= m <= hi for lo, m, hi in zip(env["lo"], env["mean"], env["hi"], strict=True))
    svg = plots.svg_envelope(env, "t")
    ET.fromstring(svg)
    assert len(svg) < 200_000
    short = plots.envelope(np.arange(10.0))
    assert short["lo"] == short["hi"] == list(np.arange(10.0))


def test_histogram_and_ticks() -> None:
    v = np.r_[np.linspace(1.0, 2.0, 1000), [100.0]]
    h = plots.histogram(v, bins=20)
    assert sum(h["counts"]) + h["over"] == v.size and h["over"] >= 1
    assert h["edges"][-1] < 100.0
    ticks = plots.nice_ticks(0.13, 0.91)
    assert ticks[0] >= 0.13 and ticks[-1] <= 0.91 and len(ticks) >= 3


def test_writer_registry_by_extension(tmp_path: Path) -> None:
    assert {"html", "json", "csv", "pdf"} <= set(REPORT_WRITERS.names())
    assert REPORT_WRITERS.for_path("x.HTM").name == "html"
    with pytest.raises(InputError, match="unknown report format"):
        write_report(Report(title="t", generated="now"), tmp_path / "r.docx")
    with pytest.raises(InputError, match="folder does not exist"):
        write_report(Report(title="t", generated="now"), tmp_path / "missing" / "r.html")


def test_report_json_redraws(small_model: Path) -> None:
    rep = build_report(model=small_model, run=ort_run(small_model, iterations=10, per_layer=False))
    again = Report.from_json(json.loads(json.dumps(rep.to_json())))
    assert again.to_json() == rep.to_json()
