"""The public Python API (trtstudio.api): parity with the CLI, notebook HTML, plots, import cost."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest

import trtstudio as ts
from trtstudio.api import flatten_layer
from trtstudio.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT.parent / "shared" / "fixtures" / "trt-real"
A100 = FIX / "NVIDIA_TensorRT_trex" / "release-11.0" / "examples" / "pytorch" / "resnet" / "A100"
SAMPLE = ROOT / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"
needs_trex = pytest.mark.skipif(not A100.is_dir(), reason=f"fixtures absent: {A100}")
pd = pytest.importorskip("pandas", reason="the [notebook] extra (pandas) is not installed")


def _engine_fixtures() -> list[list[Path]]:
    """Every layer-information file of the fixtures alone, and each TREx engine's folder."""
    if not FIX.is_dir():
        return []
    pats = ("*.graph*.json", "*engine_info*.json", "*exportLayerInfo*.log")
    files = sorted({p for pat in pats for p in FIX.rglob(pat)})
    folders = sorted({p.parent for p in FIX.rglob("*.engine.graph.json") if "examples" in str(p)})
    return [[p] for p in files] + [[d] for d in folders]


def _layers_json(capfd: pytest.CaptureFixture[str], paths: list[Path]) -> dict:
    args = [str(p) for p in paths]
    if len(paths) == 1 and paths[0].is_dir():
        args = [str(p) for p in sorted(paths[0].iterdir()) if p.suffix == ".json"]
    assert main(["layers", *args, "--json"]) == 0
    return json.loads(capfd.readouterr().out)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, float) and b is None or a is None and isinstance(b, float):
        return isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b)
    return a == b


@pytest.mark.parametrize("paths", _engine_fixtures(), ids=lambda ps: str(ps[0].relative_to(FIX))[-60:])
def test_df_equals_layers_json_on_every_fixture(paths: list[Path], capfd: pytest.CaptureFixture[str]) -> None:
    doc = _layers_json(capfd, paths)
    plan = ts.open_engine(*paths)
    df = plan.df
    expected = [flatten_layer(r) for r in doc["layers"]]
    assert list(df.columns) == list(expected[0]) and len(df) == len(expected)
    for row, want in zip(df.to_dict("records"), expected, strict=True):
        assert all(_same(row[k], want[k]) for k in want), (row["name"], {k: (row[k], want[k]) for k in want
                                                                         if not _same(row[k], want[k])})
    assert plan.findings == doc["findings"]
    assert plan.layers == doc["layers"]


@needs_trex
def test_plan_summary_charts_provenance_and_html() -> None:
    plan = ts.open_engine(A100 / "fp32")
    assert plan.provenance["gpu"].startswith("NVIDIA A100") and plan.provenance["tensorrt"] == "not recorded"
    by_type = plan.time_by_type()
    assert list(by_type)[0] == "CaskConvolution" and list(by_type.values()) == sorted(by_type.values(), reverse=True)
    assert sum(by_type.values()) == pytest.approx(sum(r["time_average_ms"] or 0 for r in plan.df.to_dict("records")))
    assert plan.time_by_precision() == {"FP32": pytest.approx(sum(by_type.values()))}
    s = plan.summary()
    assert {"headline", "time_by_type", "top_layers"} <= set(s)
    for svg in (plan.plot_layers(), plan.plot_time_by_type(), plan.plot_time_by_precision(), plan.excerpt(0),
                plan.plot_memory(), plan.plot_macs()):
        assert svg.text.startswith("<svg") and svg.text.endswith("</svg>")
    # ResNet-18 is 1.8 GMAC per 224x224 image; these engines run batch 32
    macs = plan.conv_macs()
    assert sum(r["macs"] for r in macs) / 32 == pytest.approx(1.81e9, rel=0.01)
    mem = plan.memory_by_layer()
    assert sum(r["activations"] for r in mem) == plan.engine.memory["layer_activations"]
    _check_html(plan._repr_html_())


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _check_html(page: str) -> str:
    p = _Collect()
    p.feed(page)
    p.close()
    text = " ".join(p.text)
    for bad in ("nan", "None", "NaN", "inf "):
        assert f" {bad} " not in f" {text} " and f">{bad}<" not in page, bad
    return text


def test_hostile_layer_names_are_escaped(tmp_path: Path) -> None:
    evil = '<script>alert("x")</script> & <b>'
    doc = {"Layers": [{"Name": evil, "LayerType": "CaskConvolution", "Inputs": [], "Outputs": []}], "Bindings": []}
    f = tmp_path / "evil.graph.json"
    f.write_text(json.dumps(doc))
    prof = tmp_path / "evil.profile.json"
    prof.write_text(json.dumps([{"count": 1}, {"name": evil, "timeMs": 1.0, "averageMs": 1.0, "percentage": 100.0}]))
    plan = ts.open_engine(f, prof)
    page = plan._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page
    text = _check_html(page)
    assert evil in text  # shown as text, whole


@needs_trex
def test_diff_explain_and_saving(tmp_path: Path) -> None:
    fp32 = ts.open_engine(A100 / "fp32")
    d = ts.diff(fp32, A100 / "fp16", A100 / "qat-residual")
    assert [p["other"]["name"] for p in d.pairs] == ["fp16", "qat-residual"]
    assert d.story[0].startswith("fp16 cuts") and set(d.df["change"]) >= {"precision"}
    assert d.plot_deltas().text.startswith("<svg")
    _check_html(d._repr_html_())
    out = d.save(tmp_path / "d.json")
    assert json.loads(out.read_text())["schema"] == "trtstudio.diff/1"
    e = ts.explain(A100 / "qat", against=A100 / "fp16")
    assert e.text.startswith("INT8 is") and e.causes and e.suggestion["block_nodes"]
    _check_html(e._repr_html_())


def test_profile_and_report_on_a_real_run(tmp_path: Path) -> None:
    r = ts.profile(SAMPLE, iterations=30, warmup=2)
    assert r.samples.shape == (30,) and r.stats["median"] == pytest.approx(float(pd.Series(r.samples).median()), rel=1e-3)
    assert r.plot_histogram().text.startswith("<svg") and r.plot_trace().text.startswith("<svg")
    _check_html(r._repr_html_())
    m = ts.open_model(SAMPLE)
    assert m.inputs[0]["name"] == "input"
    rep = ts.report(model=m, run=r)
    written = rep.save(tmp_path / "r.html")
    assert written and written[0].read_text().count("At a glance") >= 1
    _check_html(rep._repr_html_())


def test_import_is_light() -> None:
    """``import trtstudio`` (and reading __all__) imports no numpy, pandas, Qt or ONNX Runtime."""
    code = textwrap.dedent("""
        import sys, trtstudio
        trtstudio.__all__
        heavy = [m for m in ("numpy", "pandas", "PySide6", "onnxruntime", "onnx", "trtstudio.api") if m in sys.modules]
        print(",".join(heavy))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_public_names_and_typing(tmp_path: Path) -> None:
    """Every public name resolves, and a script that uses only them type-checks (mypy)."""
    for name in ts.__all__:
        assert getattr(ts, name) is not None
    assert (ROOT / "trtstudio" / "py.typed").is_file()
    script = tmp_path / "use_api.py"
    script.write_text(textwrap.dedent("""
        import trtstudio as ts

        def slowest(folder: str) -> str:
            plan: ts.EnginePlan = ts.open_engine(folder)
            by_type: dict[str, float] = plan.time_by_type()
            d: ts.Diff = ts.diff(plan, folder)
            return max(by_type, key=by_type.__getitem__) + d.story[0]
    """))
    mypy = pytest.importorskip("mypy.api")
    stdout, stderr, rc = mypy.run([str(script), "--strict", "--ignore-missing-imports", "--no-incremental"])
    assert rc == 0, stdout + stderr
