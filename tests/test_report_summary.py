"""At a glance (report.summary): its figures agree with the analysis they sum up."""

from __future__ import annotations

import math

import pytest

from trtstudio.report.model import build_report
from trtstudio.report.summary import TOP_LAYERS, at_a_glance


@pytest.fixture
def resnet18_fp16(trt_real):
    d = trt_real / "fuzzylabs_edge-vision-power-estimation/desktop/torch_onnx_trtexec/results/resnet18"
    if not d.is_dir():
        pytest.skip("resnet18 fixture absent")
    return [str(d / "resnet18_fp16.graph.json"), str(d / "resnet18_fp16.profile.json")]


def test_top_layers_and_types_are_shares_of_the_profiled_time(resnet18_fp16):
    rep = build_report(engine=resnet18_fp16)
    s = at_a_glance(rep)
    timed = [r for r in rep.layers if r["time_ms"] is not None]
    total = sum(r["time_ms"] for r in timed)
    assert s["time_basis"] == "profile"
    top = s["top_layers"]
    assert len(top) == min(TOP_LAYERS, len(timed))
    slowest = sorted((r["time_ms"] for r in timed), reverse=True)[:TOP_LAYERS]
    assert [t["time_ms"] for t in top] == pytest.approx(slowest)
    for t in top:
        assert t["share"] == pytest.approx(t["time_ms"] / total)
    # types: each share is that type's time over the total, and they never exceed 1 together
    by_type = {}
    for r in timed:
        by_type[r["type"]] = by_type.get(r["type"], 0.0) + r["time_ms"]
    for t in s["time_by_type"]:
        assert t["share"] == pytest.approx(by_type[t["type"]] / total)
    assert sum(t["share"] for t in s["time_by_type"]) <= 1.0 + 1e-9


def test_findings_counts_match_the_analysis(resnet18_fp16):
    rep = build_report(engine=resnet18_fp16)
    f = at_a_glance(rep)["findings_by_severity"]
    for sev in ("error", "warning", "info"):
        assert f["counts"][sev] == sum(1 for x in rep.findings if x["severity"] == sev)
    assert sum(e["count"] for e in f["by_rule"]) == len(rep.findings)
    time_of = {r["index"]: r["time_ms"] for r in rep.layers}
    for e in f["by_rule"]:
        layers = {x["layer_index"] for x in rep.findings if x["kind"] == e["rule"] and x["layer_index"] is not None}
        if layers:
            assert e["time_ms"] == pytest.approx(sum(time_of[i] for i in layers))


def test_next_steps_are_ranked_by_estimated_gain_and_say_what_they_rest_on(resnet18_fp16):
    s = at_a_glance(build_report(engine=resnet18_fp16))
    gains = [st["estimated_gain_ms"] for st in s["next_steps"] if st["estimated_gain_ms"] is not None]
    assert gains == sorted(gains, reverse=True)
    assert all(st["basis"] for st in s["next_steps"])


def test_headline_of_a_real_run(sample_model):
    pytest.importorskip("onnxruntime")
    from trtstudio.profiling.session import ProfileRequest, run_profile

    out = run_profile(ProfileRequest(model=str(sample_model), backend="ort", iterations=30, warmup=3))
    rep = build_report(str(sample_model), run=out.run_data())
    h = at_a_glance(rep)["headline"]
    lat = rep.run["latency_ms"]
    assert h["median_ms"] == pytest.approx(lat["median"]) and h["p99_ms"] == pytest.approx(lat["p99"])
    assert h["shapes"] and math.isfinite(h["median_ms"])
    assert h["throughput"] == pytest.approx(rep.run["throughput"]["inferences_per_s"])
    assert "Median" in h["text"] and "ort" in h["text"]
    topics = [v["topic"] for v in at_a_glance(rep)["verdicts"]]
    assert "jitter" in topics


def test_graph_excerpts_show_the_hot_nodes_readably(sample_model):
    import re

    from trtstudio.graph.model import load_model
    from trtstudio.report.excerpts import MAX_NODES, make_excerpts

    m = load_model(str(sample_model))
    names = [n.name for n in m.graph.nodes if n.op_type == "Conv"]
    rows = [{"name": f"L{i}", "type": "Convolution", "time_ms": t, "onnx_nodes": [names[i]]}
            for i, t in ((3, 5.0), (20, 1.0), (40, 0.5))]
    findings = [{"severity": "warning", "nodes": [names[-1]], "message": "reformat"}]
    doc = make_excerpts(m.graph, rows, findings)
    assert doc is not None and len(doc["excerpts"]) == 4
    shown = [set(e["nodes"]) for e in doc["excerpts"]]
    for e, seed in zip(doc["excerpts"], [names[3], names[20], names[40], names[-1]], strict=True):
        assert seed in e["nodes"] and len(e["nodes"]) <= MAX_NODES
        sizes = [float(x) for x in re.findall(r'font-size="([\d.]+)"', e["svg"])]
        assert sizes and min(sizes) >= 9  # readable at 100 % zoom
        assert 'stroke-width="2.6"' in e["svg"]  # the seed is marked
    for a in range(len(shown)):  # excerpts do not repeat each other's nodes
        for b in range(a + 1, len(shown)):
            assert not shown[a] & shown[b]
    assert doc["overview"].count("fill-opacity=\"0.55\"") == len(doc["excerpts"])
    assert doc["excerpts"][0]["span"][0] <= [n.name for n in m.graph.nodes].index(names[3])


def test_no_none_or_nan_text_in_reports_of_sparse_engine_files(trt_real, tmp_path):
    """A names-only engine listing (DETR INT8, TensorRT 10) leaves most cells unknown: they read as
    an en dash, never None or nan."""
    import html as html_mod
    import re

    from trtstudio.report.writers import write_report

    d = trt_real / "farabimahmud_detr-logs-trtexec"
    if not d.is_dir():
        pytest.skip("DETR fixture absent")
    rep = build_report(engine=[str(d / "detr-layer-info.json"), str(d / "detr-profile.json")])
    out = tmp_path / "r.html"
    write_report(rep, out)
    text = html_mod.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<svg.*?</svg>", "", out.read_text(), flags=re.S)))
    assert not re.search(r"\b(None|nan|NaN|null)\b", text)
    assert "\u2013" in text


def test_one_report_from_model_engine_and_runs_and_a_foreign_run_refused(sample_model, tmp_path, capsys):
    pytest.importorskip("onnxruntime")
    import onnx
    import onnx_models

    from trtstudio.cli import main

    log = sample_model.with_name("mobilenetv2_035.rtx-sm86.build.log")
    runs = []
    for k, iters in enumerate((30, 20)):
        s = tmp_path / f"run{k}.trtstudio"
        assert main(["profile", str(sample_model), "--backend", "ort", "--iterations", str(iters), "--session", str(s)]) == 0
        runs.append(s)
    capsys.readouterr()
    out = tmp_path / "r.md"
    assert main(["report", str(sample_model), str(log), "--run", str(runs[0]), "--run", str(runs[1]), "-o", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# ") and "## At a glance" in text and "## Runs" in text
    assert "None" not in text and "nan" not in text
    assert main(["report", str(sample_model), str(log), "--run", str(runs[0]), "--run", str(runs[1]),
                 "-o", str(tmp_path / "r.json")]) == 0
    import json

    doc = json.loads((tmp_path / "r.json").read_text())
    assert [r["samples"] for r in doc["runs"]] == [30, 20] and doc["engine"]["layers"] > 0
    assert doc["summary"]["headline"]["median_ms"] == pytest.approx(doc["run"]["latency_ms"]["median"])
    other = tmp_path / "other.onnx"
    onnx.save(onnx_models.conv_net(batch=1), str(other))
    capsys.readouterr()
    assert main(["report", str(other), "--run", str(runs[0]), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(runs[0]) in err and err.count("sha256") == 2


def test_comparison_tells_the_story_first(sample_model, tmp_path):
    pytest.importorskip("onnxruntime")
    from trtstudio.profiling.session import ProfileRequest, run_profile
    from trtstudio.report.compare import compare
    from trtstudio.report.model import build_report

    reps = []
    for k in range(2):
        out = run_profile(ProfileRequest(model=str(sample_model), backend="ort", iterations=200, warmup=5))
        reps.append(build_report(run=out.run_data(f"run{k}")))
    comp = compare(reps, ["a", "b"])
    verdict = comp.variants[1]["verdict"]["verdict"]
    sentence = comp.story[0]
    expected = {"faster": "cuts the median", "slower": "raises the median",
                "no significant difference": "no significant difference"}[verdict]
    assert sentence.startswith("b ") and expected in sentence and "against a" in sentence
    dist = comp.charts["latency"]
    assert set(dist["series"]) == {"a", "b"}
    for shares in dist["series"].values():
        assert sum(shares) == pytest.approx(1.0, abs=1e-3) and len(shares) == len(dist["edges"]) - 1
    from trtstudio.report.html import render_comparison

    html, _ = render_comparison(comp)
    assert html.index(sentence.split(" (")[0]) < html.index("<table")  # the story before the tables


@pytest.fixture
def a100(trt_real):
    d = trt_real / "NVIDIA_TensorRT_trex/release-11.0/examples/pytorch/resnet/A100"
    if not d.is_dir():
        pytest.skip("TREx A100 fixture absent")
    return d


def test_an_engines_headline_names_its_own_gpu_and_runtime_and_trtexec_throughput(a100, tmp_path):
    """Issue 43 item 5: an A100 engine read here says where its figures come from (its own files),
    not this machine's GPU or runtime; trtexec's throughput from its metadata is in the headline."""
    import json

    from trtstudio.engine.load import load_engine
    from trtstudio.engine.provenance import provenance
    from trtstudio.report.model import collect_environment
    from trtstudio.report.writers import write_report

    files = sorted(str(p) for p in (a100 / "fp32").glob("*.json"))
    rep = build_report(engine=files)
    h = at_a_glance(rep)["headline"]
    info = load_engine(files)
    prov = provenance(info)
    assert h["source"] == "engine profile" and h["provenance"] == "the engine's files"
    assert h["hardware"] == prov["gpu"] and "A100" in h["hardware"]
    assert h["runtime"] == prov["tensorrt"] == "not recorded"  # the files name no TensorRT version
    assert h["throughput"] == pytest.approx(info.latency_ms["throughput_qps"])
    here = collect_environment()["versions"]
    for name in ("tensorrt_rtx", "tensorrt"):
        if here.get(name):
            assert here[name] not in h["text"]  # never this machine's runtime
    assert "TensorRT version not recorded" in h["text"] and "A100" in h["text"]
    assert f"{info.latency_ms['throughput_qps']:.0f} inferences/s" in h["text"]
    # three significant digits in the sentence
    assert f"Median {info.latency_ms['median']:.3g} ms" in h["text"]
    # the JSON keeps full precision and the provenance; a report JSON written before it was stored agrees
    out = tmp_path / "r.json"
    write_report(rep, out)
    doc = json.loads(out.read_text())
    assert doc["summary"]["headline"]["median_ms"] == info.latency_ms["median"]
    assert doc["engine"]["provenance"]["gpu"] == prov["gpu"]
    from trtstudio.report.model import Report

    del doc["engine"]["provenance"]
    assert at_a_glance(Report.from_json(doc))["headline"]["hardware"] == prov["gpu"]


def test_at_a_glance_has_three_significant_digits_and_the_detail_keeps_full_precision(a100):
    """Issue 43 item 6: '1.99 ms', not '1.9907 ms', in At a glance (cards, sentence, tables); the
    Latency/Layers sections and the JSON keep every digit; the Environment says whose it is."""
    import re

    from trtstudio.fmt import fmt_ms, sig
    from trtstudio.report.html import render_report
    from trtstudio.report.markdown import render_markdown

    rep = build_report(engine=sorted(str(p) for p in (a100 / "fp32").glob("*.json")))
    html, _ = render_report(rep)
    glance = html.split('id="summary"', 1)[1].split("<section", 1)[0]
    s = at_a_glance(rep)
    med = rep.engine["latency_ms"]["median"]
    assert f"{sig(med)} ms" in glance and fmt_ms(med) not in glance
    for t in s["top_layers"]:
        assert f"{sig(t['time_ms'])} ms" in glance
    # no figure in At a glance carries more than three significant digits (shares are percentages)
    for num in re.findall(r"(\d+\.\d+) ms", glance):
        assert len(num.replace(".", "").lstrip("0")) <= 3, num
    for num in re.findall(r"(\d[\d,.]*) inferences/s", glance):
        assert len(num.replace(",", "").replace(".", "").lstrip("0")) <= 3, num
    layers = html.split('id="layers"', 1)[1]
    assert fmt_ms(rep.layers[0]["time_ms"]) in layers  # the detail: four decimals
    md = render_markdown(rep).split("## ", 2)[1]
    assert f"{sig(s['top_layers'][0]['time_ms'])} ms" in md
    env = html.split('id="environment"', 1)[1].split("</section>", 1)[0]
    assert "the machine that wrote this report" in env and "A100" not in env
    build = html.split('id="build"', 1)[1].split("</section>", 1)[0]
    assert "Engine provenance" in build and "A100" in build
