"""One backend catalogue and one file-kind rule, and the one way commands print: what the command
line, the environment report and the backends derive from them, on real files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fuzz import harness

from trtstudio import filekinds
from trtstudio.backends import catalogue


def test_every_backend_runtime_is_described_once() -> None:
    assert {b.runtime for b in catalogue.CATALOGUE.values()} == set(catalogue.RUNTIMES)
    assert catalogue.choices() == ("auto", *catalogue.CATALOGUE)
    assert catalogue.gpu_backends() == {"ort-cuda", "ort-trt", "tensorrt", "rtx", "torch-cuda"}


def test_the_command_lines_backend_choices_are_the_catalogue() -> None:
    from trtstudio.backends.base import BACKENDS
    from trtstudio.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    profile = sub.choices["profile"]  # type: ignore[index]
    backend = next(a for a in profile._actions if a.dest == "backend")
    assert tuple(backend.choices) == catalogue.choices()
    assert {k: v[3] for k, v in BACKENDS.items()} == {k: b.pip for k, b in catalogue.CATALOGUE.items()}


def test_open_backend_refuses_a_name_outside_the_catalogue(tmp_path: Path) -> None:
    from trtstudio.backends.base import open_backend
    from trtstudio.errors import InputError

    with pytest.raises(InputError) as exc:
        open_backend("onnxruntime", tmp_path / "m.onnx")
    assert all(name in str(exc.value) for name in catalogue.CATALOGUE)


@pytest.mark.parametrize(("name", "kind", "auto"), [
    ("m.onnx", filekinds.ONNX, "ort"), ("M.ONNX", filekinds.ONNX, "ort"), ("m.pt2", filekinds.TORCH, "torch"),
    ("m.torchscript", filekinds.TORCH, "torch"), ("m.plan", filekinds.ENGINE, "tensorrt"),
    ("layers.json", filekinds.ENGINE, "tensorrt"), ("s.trtstudio", filekinds.SESSION, "tensorrt")])
def test_kinds_and_what_auto_picks(tmp_path: Path, name: str, kind: str, auto: str) -> None:
    assert filekinds.classify(tmp_path / name) == kind
    assert catalogue.default_backend(str(tmp_path / name)) == auto
    assert catalogue.resolve("auto", name) == catalogue.resolve(None, name) == auto
    assert catalogue.resolve("ort-cuda", name) == "ort-cuda"


def test_a_triton_session_is_told_from_other_json_by_its_schema(tmp_path: Path) -> None:
    triton, layers = tmp_path / "sweep.json", tmp_path / "layers.json"
    triton.write_text(json.dumps({"schema": filekinds.TRITON_SCHEMA, "steps": []}))
    layers.write_text(json.dumps({"Layers": []}))
    assert filekinds.classify(triton) == filekinds.TRITON and filekinds.classify(layers) == filekinds.ENGINE
    assert filekinds.classify(triton, sniff=False) == filekinds.ENGINE  # the suffix alone


def test_model_and_engines_as_gui_and_report_take_them(tmp_path: Path) -> None:
    from trtstudio.errors import InputError

    assert filekinds.model_and_engines(["a.onnx", "l.json", "p.log"]) == ("a.onnx", ["l.json", "p.log"])
    assert filekinds.model_and_engines([]) == (None, [])
    with pytest.raises(InputError) as second:
        filekinds.model_and_engines(["a.onnx", "b.onnx"])
    assert second.value.path == "b.onnx" and "one ONNX model" in second.value.message
    with pytest.raises(InputError) as torch:
        filekinds.model_and_engines(["a.onnx", "n.pt2"], {filekinds.TORCH: "use profile"})
    assert torch.value.path == "n.pt2" and torch.value.message == "use profile"


def test_gui_and_report_refuse_what_they_cannot_open_in_one_line(tmp_path: Path) -> None:
    pt2, sess = tmp_path / "net.pt2", tmp_path / "s.trtstudio"
    pt2.write_bytes(b"PK\x03\x04")
    sess.write_text("{}")
    o = harness.run_main(["gui", str(pt2), "--screenshot", str(tmp_path / "x.png")])
    assert o.rc == 2 and o.err.count("\n") == 1 and f"error: {pt2}: is a PyTorch file" in o.err, o
    o = harness.run_main(["report", str(sess), str(pt2), "--json"])
    assert o.rc == 2 and f"error: {sess}: a session makes a report alone" in o.err, o


def test_emit_prints_strict_json_and_fails_with_the_error(capsys: pytest.CaptureFixture[str]) -> None:
    from trtstudio.commands._emit import emit

    doc = {"schema": "s/1", "x": math.nan, "p": Path("/tmp/a"), "error": None}
    assert emit(doc, True, written=[Path("out.html")]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out, parse_constant=pytest.fail) == {"schema": "s/1", "x": None, "p": "/tmp/a",
                                                           "error": None, "written": ["out.html"]}
    assert "1 non-finite number" in err
    assert emit({"error": "it broke"}, False, lambda d: "text", where="m.onnx") == 1
    out, err = capsys.readouterr()
    assert out == "text\n" and err == "error: m.onnx: it broke\n"
    assert emit({}, False, written=["r.html"]) == 0
    assert capsys.readouterr().out == "wrote r.html\n"


def test_inspect_json_is_the_documents_strict_json(tmp_path: Path) -> None:
    import onnx
    import onnx_models

    model, proto = tmp_path / "m.onnx", onnx_models.conv_net()
    onnx.save(proto, str(model))
    o = harness.run_main(["inspect", str(model), "--json"])
    doc = harness.check(o, json_out=True)
    assert o.rc == 0 and isinstance(doc, dict) and doc["nodes"] == len(proto.graph.node) and doc["schema"] == "trtstudio.model/1"


def test_the_environment_lists_each_backend_as_the_catalogue_says() -> None:
    from trtstudio.environment import backend_items, check_environment

    rows = {r["backend"]: r for r in backend_items()}
    assert list(rows) == list(catalogue.CATALOGUE)
    for name, row in rows.items():
        why = catalogue.unavailable_reason(name)
        assert (row["status"] == "ok") == (why is None), row
        if row["status"] == "missing":
            assert row["fix"] == catalogue.CATALOGUE[name].pip
    names = [it["name"] for it in check_environment()]
    assert all(r.module in names for r in catalogue.RUNTIMES.values())  # torch's row too
