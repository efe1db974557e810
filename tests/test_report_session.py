"""Sessions: save, reload, regenerate the same report; atomic writes; bad files; the report, compare and
profile --session/--report commands; comparisons of real ONNX Runtime runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx_models import conv_net
from test_report_model import check_html_self_contained, ort_run

from trtstudio.cli import main
from trtstudio.errors import InputError
from trtstudio.report import Report, build_report, load_session, save_session, write_report
from trtstudio.report.compare import compare, layer_diff
from trtstudio.report.session import SCHEMA, decode_array, encode_array


@pytest.fixture
def small_model(tmp_path: Path) -> Path:
    path = tmp_path / "conv_net.onnx"
    onnx.save(conv_net(batch=1), path)
    return path


def _without_date(doc: dict) -> dict:
    doc = dict(doc)
    doc.pop("generated")
    return doc


def test_session_round_trip_regenerates_the_same_report(small_model: Path, tmp_path: Path, sample_model: Path) -> None:
    run = ort_run(small_model, iterations=40)
    log = sample_model.with_name("mobilenetv2_035.rtx-sm86.build.log")
    acc = {"max_abs_error": 0.5, "per_output": {"y": {"cosine": 0.999}}}
    live = build_report(model=small_model, engine=log, run=run, accuracy=acc, title="t")
    path = tmp_path / "s.trtstudio"
    save_session(path, model=small_model, engine=log, run=run, accuracy=acc, title="t")
    doc = json.loads(path.read_text())
    assert doc["schema"] == SCHEMA
    assert doc["runs"][0]["samples"]["latency_ms"]["n"] == 40
    assert doc["engines"][0]["info"]["schema"] == "trtstudio.layers/1" and doc["engines"][0]["paths"] == [str(log)]
    s = load_session(path)
    np.testing.assert_array_equal(s.runs[0].latency_ms, run.latency_ms.astype(np.float32))
    assert s.engines[0].info.layers[3].onnx_nodes == live.layers[3]["onnx_nodes"]
    a = Report.from_session(s).to_json()
    b = Report.from_session(load_session(path)).to_json()
    assert _without_date(a) == _without_date(b) == _without_date(live.to_json())
    # the engine file is not needed to reopen
    moved = tmp_path / "copy.trtstudio"
    moved.write_text(path.read_text())
    assert _without_date(Report.from_session(load_session(moved)).to_json())["layers"] == a["layers"]


def test_arrays_compress_and_round_trip() -> None:
    v = np.random.default_rng(0).random(100_000).astype(np.float32)
    enc = encode_array(v)
    assert len(enc["zlib_b64"]) < v.nbytes * 1.4
    np.testing.assert_array_equal(decode_array(enc), v)
    ints = np.arange(1000, dtype=np.int64) * 4096
    np.testing.assert_array_equal(decode_array(encode_array(ints)), ints)
    with pytest.raises(ValueError):
        decode_array({**enc, "n": 5})


def test_atomic_write_keeps_the_old_session_on_failure(small_model: Path, tmp_path: Path) -> None:
    path = tmp_path / "s.trtstudio"
    save_session(path, model=small_model)
    before = path.read_bytes()
    with pytest.raises(TypeError):
        save_session(path, model=small_model, accuracy={"bad": object()})  # not JSON-serializable mid-stream
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conv_net.onnx", "s.trtstudio"]  # no temp file left
    fresh = tmp_path / "new.trtstudio"
    with pytest.raises(TypeError):
        save_session(fresh, model=small_model, accuracy={"bad": complex(1, 2)})  # (a set is written as a list)
    assert not fresh.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conv_net.onnx", "s.trtstudio"]
    assert load_session(path).model_summary["nodes"] == 7


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "not JSON"),
        (b"\x89PNG garbage", "not JSON"),
        (b'{"schema": "trtstudio.report/1"}', "schema"),
        (b"[1, 2]", "schema"),
        (b'{"schema": "trtstudio.session/1", "runs": [{"samples": {"latency_ms": {"dtype": "float32", "n": 3, '
         b'"zlib_b64": "@@notbase64"}}}]}', "damaged session"),
        (b'{"schema": "trtstudio.session/1", "engines": [{"paths": [], "info": {"layers": [{"name": "x"}]}}]}',
         r"damaged session: Object missing required field `index` - at `\$\.engines\[0\]\.info\.layers\[0\]`"),
        (b'{"schema": "trtstudio.session/1", "engines": [{"paths": [], "info": []}]}',
         r"damaged session: Expected `object`, got `array` - at `\$\.engines\[0\]\.info`"),
        (b'{"schema": "trtstudio.session/1", "graph_picture": 5}', r"Expected `object \| null`, got `int` - at `\$\.graph_picture`"),
        (b'{"schema": "trtstudio.session/1", "runs": [{"name": "r"}]}', r"missing required field `samples` - at `\$\.runs\[0\]`"),
    ],
)
def test_bad_session_files_raise_input_error(tmp_path: Path, content: bytes, message: str) -> None:
    p = tmp_path / "bad.trtstudio"
    p.write_bytes(content)
    with pytest.raises(InputError, match=message) as info:
        load_session(p)
    assert str(p) in info.value.one_line() and "\n" not in info.value.one_line()
    with pytest.raises(InputError, match="no such session"):
        load_session(tmp_path / "missing.trtstudio")


def test_layer_diff_of_report_rows_stands_on_the_diff_core() -> None:
    """Report JSON inputs (layer rows, no engine object) are aligned by trtstudio.diff: groups through
    the ONNX nodes, one change label each (diff's names), times and deltas per group."""
    a = [
        {"index": 0, "name": "conv1 + relu", "onnx_nodes": ["conv1", "relu"], "precision": "FP32", "tactic": "k1", "time_ms": 1.0, "type": "Conv"},
        {"index": 1, "name": "conv2", "onnx_nodes": ["conv2"], "precision": "FP32", "tactic": "k2", "time_ms": 2.0, "type": "Conv"},
        {"index": 2, "name": "Reformat 1", "onnx_nodes": [], "precision": "FP32", "tactic": None, "time_ms": 0.1, "type": "Reformat"},
    ]
    b = [
        {"index": 0, "name": "conv1_myl", "onnx_nodes": ["conv1"], "precision": "FP16", "tactic": "k1h", "time_ms": 0.4, "type": "Conv"},
        {"index": 1, "name": "relu_myl", "onnx_nodes": ["relu"], "precision": "FP16", "tactic": "k3", "time_ms": 0.1, "type": "Act"},
        {"index": 2, "name": "conv2_myl", "onnx_nodes": ["conv2"], "precision": "FP32", "tactic": "k2", "time_ms": 2.5, "type": "Conv"},
        {"index": 3, "name": "cast", "onnx_nodes": ["cast_in"], "precision": "FP16", "tactic": None, "time_ms": 0.05, "type": "Cast"},
    ]
    d = layer_diff(Report("A", "now", layers=a), Report("B", "now", layers=b), "A", "B")
    rows = {tuple(r["base_layers"]) or tuple(r["other_layers"]): r for r in d["rows"]}
    first = rows[("conv1 + relu",)]
    assert first["other_layers"] == ["conv1_myl", "relu_myl"] and first["change"] == "fused"
    assert first["delta_ms"] == pytest.approx(-0.5) and first["matched_by"] == "nodes"
    second = rows[("conv2",)]
    assert second["change"] == "same" and second["delta_ms"] == pytest.approx(0.5)
    assert rows[("Reformat 1",)]["change"] == "format" and rows[("Reformat 1",)]["other_layers"] == []
    assert rows[("cast",)]["change"] == "only_other" and rows[("cast",)]["base_layers"] == []
    assert d["summary"]["changes"] == {"precision": 0, "tactic": 0, "format": 1, "fused": 1, "only_base": 0,
                                       "only_other": 1}
    assert d["unmatched"]["other"][0]["layer"] == "cast"


def test_compare_two_real_runs(small_model: Path, tmp_path: Path) -> None:
    fast = build_report(model=small_model, run=ort_run(small_model, iterations=50, threads=1, name="1 thread"))
    other = build_report(model=small_model, run=ort_run(small_model, iterations=50, threads=2, name="2 threads"),
                         accuracy={"max_abs_error": 0.0})
    comp = compare([fast, other], ["one", "two"])
    doc = comp.to_json()
    assert doc["schema"] == "trtstudio.comparison/2" and doc["baseline"] == "one"
    v0, v1 = doc["variants"]
    assert v0["speedup"]["median"] == pytest.approx(1.0)
    assert v1["speedup"]["median"] == pytest.approx(v0["latency_ms"]["median"] / v1["latency_ms"]["median"])
    diff = doc["layer_diffs"][0]
    assert diff["a"] == "one" and diff["b"] == "two"
    assert diff["summary"]["matched"] == len(fast.layers)  # same model, same ORT nodes
    from trtstudio.report.writers import write_comparison

    html = write_comparison(comp, tmp_path / "c.html")[0].read_text()
    check_html_self_contained(html)
    assert "Layer diff: two vs one" in html and f"{v1['speedup']['median']:.2f}x" in html
    j = json.loads(write_comparison(comp, tmp_path / "c.json")[0].read_text())
    assert j["summary"][1]["speedup_median"] == pytest.approx(v1["speedup"]["median"])
    with pytest.raises(ValueError):
        compare([fast])


def test_cli_profile_session_report_and_compare(small_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.trtstudio", tmp_path / "b.trtstudio"
    html = tmp_path / "a.html"
    assert main(["profile", str(small_model), "--iterations", "30", "--per-layer", "--session", str(a),
                 "--report", str(html)]) == 0
    assert main(["profile", str(small_model), "--iterations", "30", "--threads", "1", "--session", str(b)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {a}" in out and f"wrote {html}" in out
    text = html.read_text()
    check_html_self_contained(text)
    s = load_session(a)
    assert s.runs[0].latency_ms.size == 30 and s.runs[0].layers and s.model_summary["nodes"] == 7
    # the report command regenerates the same report as profile --report wrote (same session)
    rj = tmp_path / "a.json"
    assert main(["report", str(a), "-o", str(rj)]) == 0
    doc = json.loads(rj.read_text())
    from trtstudio.fmt import fmt_ms

    assert fmt_ms(doc["run"]["latency_ms"]["median"]) in text
    assert main(["report", str(a), "-o", str(tmp_path / "a.csv"), "--what", "samples"]) == 0
    assert (tmp_path / "a.csv").read_text().count("\n") == 31
    cj = tmp_path / "c.json"
    assert main(["compare", str(a), str(b), "-o", str(cj), "--names", "auto,1 thread"]) == 0
    cdoc = json.loads(cj.read_text())
    assert [v["name"] for v in cdoc["variants"]] == ["auto", "1 thread"]
    assert main(["compare", str(a), str(rj), "-o", str(tmp_path / "c2.html")]) == 0  # a report JSON as input too
    capsys.readouterr()
    # bad input: exit 2, one line naming the file
    bad = tmp_path / "bad.trtstudio"
    bad.write_text("nope")
    assert main(["report", str(bad), "-o", str(tmp_path / "x.html")]) == 2
    assert main(["report", str(a), "-o", str(tmp_path / "x.docx")]) == 2
    assert main(["compare", str(a), "-o", str(tmp_path / "x.html")]) == 2
    assert main(["report", "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert f"error: {bad}: not a trtstudio session" in err and "x.docx" in err


def test_cli_report_from_engine_and_onnx(sample_model: Path, tmp_path: Path) -> None:
    log = sample_model.with_name("mobilenetv2_035.rtx-sm86.build.log")
    out = tmp_path / "e.json"
    sess = tmp_path / "e.trtstudio"
    assert main(["report", "--engine", str(log), "--onnx", str(sample_model), "-o", str(out), "--save-session", str(sess)]) == 0
    doc = json.loads(out.read_text())
    assert doc["engine"]["layers"] > 40 and doc["model"]["nodes"] == 102 and doc["run"] is None
    again = Report.from_session(load_session(sess)).to_json()
    assert _without_date(again) == _without_date(doc)
    write_report(Report.from_json(doc), tmp_path / "again.html")


def test_cli_report_takes_the_model_and_engine_files_as_arguments(sample_model: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """`trtstudio report LOG --onnx MODEL` (and `report MODEL LOG`) writes the report `--engine LOG
    --onnx MODEL` writes, as `gui` and `layers` take files; one file that is no session says how
    to pass engine files, and a session is still read alone."""
    log = sample_model.with_name("mobilenetv2_035.rtx-sm86.build.log")
    docs = []
    for i, argv in enumerate(([str(log), "--onnx", str(sample_model)], [str(sample_model), str(log)],
                              ["--engine", str(log), "--onnx", str(sample_model)])):
        out = tmp_path / f"r{i}.json"
        assert main(["report", *argv, "-o", str(out)]) == 0
        docs.append(_without_date(json.loads(out.read_text())))
    assert docs[0] == docs[1] == docs[2] and docs[0]["engine"]["layers"] > 40 and docs[0]["model"]["nodes"] == 102
    out = tmp_path / "alone.json"  # one engine file alone, as `layers LOG` takes it
    assert main(["report", str(log), "-o", str(out)]) == 0
    alone = _without_date(json.loads(out.read_text()))
    assert alone["engine"] == docs[0]["engine"] and alone["model"] is None
    junk = tmp_path / "junk.txt"
    junk.write_text("neither\n")
    capsys.readouterr()
    assert main(["report", str(junk), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith(f"error: {junk}: neither a trtstudio session") and "engine file" in err
    sess = tmp_path / "s.trtstudio"
    assert main(["report", "--engine", str(log), "-o", str(tmp_path / "s.json"), "--save-session", str(sess)]) == 0
    assert main(["report", str(sess), str(log), "-o", str(tmp_path / "y.html")]) == 2
    assert "a session makes a report alone" in capsys.readouterr().err
    assert main(["report", str(sess), "-o", str(tmp_path / "z.json")]) == 0
    for field, empty in (("runs", {}), ("warnings", ""), ("environment", []), ("model", [])):  # read as none
        doc = json.loads(sess.read_text())
        doc[field] = empty
        (tmp_path / "empty.trtstudio").write_text(json.dumps(doc))
        assert load_session(tmp_path / "empty.trtstudio") is not None, field
    damaged = tmp_path / "damaged.json"  # a session by its schema, whatever its name: its own error, no engine guess
    doc = json.loads(sess.read_text())
    doc["runs"] = "many"
    damaged.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["report", str(damaged), "-o", str(tmp_path / "d.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: {damaged}: damaged session: runs is a JSON string, expected array", err
    doc["runs"] = [None]
    damaged.write_text(json.dumps(doc))
    assert main(["report", str(damaged), "-o", str(tmp_path / "d.html")]) == 2
    assert capsys.readouterr().err.strip().endswith("damaged session: runs[0] is a JSON null, expected an object")
