"""The public Python API (trtstudio.api): parity with the CLI, notebook HTML, plots, import cost."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
import warnings
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
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
    expected = [{**flatten_layer(r), "layer_type": r["type"], "type": r["parameter_type"] or r["type"],
                 "time_per_inference_ms": _per_inference(r["time_ms"])} for r in doc["layers"]]
    assert set(expected[0]) <= set(df.columns) and len(df) == len(expected)
    for row, want in zip(df.to_dict("records"), expected, strict=True):
        assert all(_same(row[k], want[k]) for k in want), (row["name"], {k: (row[k], want[k]) for k in want
                                                                         if not _same(row[k], want[k])})
    assert plan.findings == doc["findings"]
    assert plan.layers == doc["layers"]
    # time by type, by TREx's type and by precision all add up to the layers' times per inference
    total = sum(v for v in (w["time_per_inference_ms"] for w in expected) if v is not None)
    for by in (plan.time_by_type(), plan.time_by_type(by="type"), plan.time_by_precision()):
        assert sum(by.values()) == pytest.approx(total)
    assert plan.df is df, "plan.df is built once"


def _per_inference(t: dict | None) -> float | None:
    """A layer's time per inference from its ``time_ms`` record: median, else average, else total/count."""
    if not t:
        return None
    for k in ("median", "average"):
        if t.get(k) is not None and not math.isnan(t[k]):
            return float(t[k])
    return t["total"] / t["count"] if t.get("total") is not None and t.get("count") else None


@needs_trex
def test_plan_summary_charts_provenance_and_html() -> None:
    plan = ts.open_engine(A100 / "fp32")
    assert plan.provenance["gpu"].startswith("NVIDIA A100") and plan.provenance["tensorrt"] == "not recorded"
    by_type = plan.time_by_type()
    assert list(by_type)[0] == "CaskConvolution" and list(by_type.values()) == sorted(by_type.values(), reverse=True)
    assert sum(by_type.values()) == pytest.approx(sum(r["time_average_ms"] or 0 for r in plan.df.to_dict("records")))
    assert plan.time_by_precision() == {"FP32": pytest.approx(sum(by_type.values()))}
    assert {"headline", "time_by_type", "top_layers"} <= set(plan.glance())
    for svg in (plan.plot_layers(), plan.plot_time_by_type(), plan.plot_time_by_precision(), plan.excerpt(0),
                plan.plot_memory(), plan.plot_macs(), plan.graph(), plan.plot_timing()):
        _parse_svg(svg.text)
    # ResNet-18 is 1.8 GMAC per 224x224 image; these engines run batch 32
    macs = plan.conv_macs()
    assert sum(r["macs"] for r in macs) / 32 == pytest.approx(1.81e9, rel=0.01)
    mem = plan.memory_by_layer()
    assert sum(r["activations"] for r in mem) == plan.engine.memory["layer_activations"]
    _check_html(plan._repr_html_())


SVG_NS = "{http://www.w3.org/2000/svg}"


def _parse_svg(text: str) -> ET.Element:
    """The SVG parsed as XML with namespaces, as a browser reads an exported notebook's image: its
    root must be an ``svg`` element of the SVG namespace (else nbconvert's HTML shows it broken)."""
    root = ET.fromstring(text)
    assert root.tag == f"{SVG_NS}svg", root.tag
    return root


def _bars(root: ET.Element) -> list[tuple[str, float]]:
    """The (fill, width) of each bar of an ``svg_bars`` picture (its rects of height 13)."""
    return [(r.get("fill", ""), float(r.get("width", 0))) for r in root.iter(f"{SVG_NS}rect") if r.get("height") == "13"]


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
    # every pair, not the first only: its rows, its sentences, its chart
    assert list(d.df.groupby("other", sort=False).size().index) == ["fp16", "qat-residual"]
    assert len(d.df) == sum(len(p["groups"]) for p in d.pairs)
    assert any(t.startswith("qat-residual cuts") for t in d.story)
    titles = "".join(_parse_svg(d.plot_deltas().text).itertext())
    assert "fp16 vs fp32" in titles and "qat-residual vs fp32" in titles
    assert "fp16 vs" not in "".join(_parse_svg(d.plot_deltas(pair="qat-residual").text).itertext())
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
            c: ts.Comparison = ts.compare(plan, folder, names=["a", "b"])
            return max(by_type, key=by_type.__getitem__) + d.story[0] + c.story[0]
    """))
    mypy = pytest.importorskip("mypy.api")
    stdout, stderr, rc = mypy.run([str(script), "--strict", "--ignore-missing-imports", "--no-incremental"])
    assert rc == 0, stdout + stderr


TREX_INPUTS = FIX / "NVIDIA_TensorRT_trex" / "release-11.0" / "tests" / "inputs"
needs_trex_inputs = pytest.mark.skipif(not TREX_INPUTS.is_dir(), reason=f"fixtures absent: {TREX_INPUTS}")
SUFFIXES = (".graph.json", ".profile.json", ".profile.metadata.json", ".build.metadata.json", ".timing.json")


def _trex_engine(stem: str, name: str | None = None) -> ts.EnginePlan:
    prefix = TREX_INPUTS / f"{stem}.onnx.engine"
    return ts.open_engine(*[f"{prefix}{s}" for s in SUFFIXES], name=name)


@needs_trex_inputs
@pytest.mark.parametrize("stem", ["mobilenet.qat", "mobilenet_v2_residuals.qat"])
def test_trex_engines_as_trex_counted_them(stem: str) -> None:
    """Layer and convolution counts, per-inference and average totals, weights: TREx's figures,
    computed here from the JSON files themselves."""
    prefix = TREX_INPUTS / f"{stem}.onnx.engine"
    graph = json.loads(Path(f"{prefix}.graph.json").read_text())["Layers"]
    prof = json.loads(Path(f"{prefix}.profile.json").read_text())
    count, rows = prof[0]["count"], prof[1:]
    plan = _trex_engine(stem)
    s = plan.summary()
    assert s["layers"] == sum(lay["LayerType"] not in ("Constant", "NoOp") for lay in graph)
    assert s["layers_all"] == len(graph) == len(plan.df)
    convs = plan.get_layers_by_type("Convolution")
    assert len(convs) == sum(lay.get("ParameterType") == "Convolution" for lay in graph)
    assert convs["macs"].notna().all() and (convs["arithmetic_intensity"] > 0).all()
    # per inference, never the total over the profile's runs: sum(timeMs) / count
    per_inference = sum(r["timeMs"] for r in rows) / count
    assert s["per_inference_ms"] == pytest.approx(per_inference, rel=0.01)
    assert s["average_time_ms"] == pytest.approx(sum(r["averageMs"] for r in rows))
    assert sum(plan.time_by_type(by="type").values()) == pytest.approx(s["per_inference_ms"])
    assert plan.df["time_per_inference_ms"].sum() == pytest.approx(s["per_inference_ms"])
    assert s["device"].startswith("NVIDIA TITAN RTX") and "tensorrt" not in s
    for text in (repr(plan), plan._repr_html_()):
        assert "not recorded" not in text and "TITAN RTX" in text
    _check_html(plan.summary()._repr_html_())
    timing = json.loads(Path(f"{prefix}.timing.json").read_text())
    plot = _parse_svg(plan.plot_timing().text)
    assert "GPU compute per inference" in "".join(plot.itertext()) and len(timing) > 1000


@needs_trex_inputs
def test_names_the_dataframe_and_exports(tmp_path: Path) -> None:
    a, b = _trex_engine("mobilenet.qat"), _trex_engine("mobilenet_v2_residuals.qat", name="v2 residuals")
    assert (a.name, b.name) == ("mobilenet.qat.onnx", "v2 residuals")
    a.name = "v1"
    d = ts.diff(a, b)
    assert d.story[0].startswith("v2 residuals") and set(d.df["other"]) == {"v2 residuals"}
    assert ts.diff(a, b, names=["A", "B"]).story[0].startswith("B ")
    for names in (["A"], ["A", "B", "C"], "AB"):
        with pytest.raises(ValueError, match="one per engine"):
            ts.diff(a, b, names=names)
    # plan.df is built once: a column added in a notebook stays
    a.df["mine"] = a.df["time_per_inference_ms"] * 2
    assert "mine" in a.df.columns
    conv = a.df[a.df["type"] == "Convolution"].iloc[0]
    assert isinstance(conv["attr.kernel"], list) and conv["attr.groups"] >= 1 and conv["weights_size"] > 0
    assert conv["total_footprint_bytes"] == conv["weights_size"] + conv["total_io_size_bytes"]
    # CSV and Excel: nested cells as JSON
    back = pd.read_csv(a.to_csv(tmp_path / "a.csv"))
    assert len(back) == len(a.df) and json.loads(back["inputs"][1]) == a.df["inputs"][1]
    pytest.importorskip("openpyxl", reason="the [notebook] extra (openpyxl) is not installed")
    xl = pd.read_excel(a.to_excel(tmp_path / "a.xlsx"), sheet_name=None)
    assert list(xl) == ["layers", "summary"] and len(xl["layers"]) == len(a.df)
    assert json.loads(xl["layers"]["attr.kernel"][conv.name]) == conv["attr.kernel"]
    assert dict(zip(xl["summary"]["field"], xl["summary"]["value"], strict=True))["layers"] == a.summary()["layers"]


@needs_trex_inputs
def test_a_profile_of_another_engine_warns() -> None:
    with pytest.warns(ts.EngineWarning, match="another engine"):
        plan = ts.open_engine(TREX_INPUTS / "mobilenet.qat.onnx.engine.graph.json",
                              TREX_INPUTS / "mobilenet_v2_residuals.qat.onnx.engine.profile.json")
    assert "another engine" in repr(plan) and "warning: " in _check_html(plan._repr_html_())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _trex_engine("mobilenet.qat")  # its own profile: no warning


@needs_trex_inputs
def test_graph_and_layer_plots_colour_by_precision_and_type() -> None:
    plan = _trex_engine("mobilenet_v2_residuals.qat")
    from trtstudio.palette import precision_color

    for color_by in ("precision", "type"):
        root = _parse_svg(plan.graph(color_by=color_by).text)
        boxes = [r for r in root.iter(f"{SVG_NS}rect") if r.find(f"{SVG_NS}title") is not None]
        assert len(boxes) == len(plan.engine.layers)
        text = "".join(root.itertext())
        keys = set(plan.df["precision"] if color_by == "precision" else plan.df["type"])
        assert all(k in text for k in keys)
        if color_by == "precision":
            assert [b.get("fill") for b in boxes] == [precision_color(p) for p in plan.df["precision"]]
        else:  # one colour per TREx type
            fills = {}
            for b, t in zip(boxes, plan.df["type"], strict=True):
                fills.setdefault(t, set()).add(b.get("fill"))
            assert all(len(f) == 1 for f in fills.values()) and len({f.pop() for f in fills.values()}) == len(fills)
    bars = _bars(_parse_svg(plan.plot_layers(color_by="precision").text))
    timed = plan.df[plan.df["time_per_inference_ms"].notna()]
    assert [f for f, _ in bars] == [precision_color(p) for p in timed["precision"]]
    widths = [w for _, w in bars]
    assert widths.index(max(widths)) == int(timed["time_per_inference_ms"].to_numpy().argmax())
    with pytest.raises(ValueError, match="color_by"):
        plan.graph(color_by="colour")


@needs_trex
def test_compare_engines_from_python() -> None:
    fp32, fp16 = ts.open_engine(A100 / "fp32"), ts.open_engine(A100 / "fp16")
    c = ts.compare(fp32, fp16, A100 / "qat")
    assert [s["name"] for s in c.summary] == ["fp32", "fp16", "qat"]
    samples = {p.name: np.median(p.engine.samples_ms["compute"]) for p in (fp32, fp16)}
    assert c.summary[1]["median_ms"] == pytest.approx(samples["fp16"])
    assert c.story[0].startswith("fp16 cuts the median")
    _check_html(c._repr_html_())
    with pytest.raises(ValueError, match="one per input"):
        ts.compare(fp32, fp16, names=["a"])
