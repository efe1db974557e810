"""``trtstudio build``: JSON document and exit codes (0 built, 1 build failed, 2 bad input)."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import pytest

from trtstudio.cli import main
from trtstudio.commands.build import parse_shapes, parse_size, profiles_from_args
from trtstudio.errors import InputError

HAS_RTX = importlib.util.find_spec("tensorrt_rtx") is not None
needs_rtx = pytest.mark.skipif(not HAS_RTX, reason="tensorrt_rtx is not installed")


def _tiny(tmp_path: Path) -> Path:
    from test_build_backend import tiny_model

    return tiny_model(tmp_path / "tiny.onnx")


def _custom(tmp_path: Path) -> Path:
    from test_build_backend import custom_op_model

    return custom_op_model(tmp_path / "custom.onnx")


def test_parse_size_and_shapes() -> None:
    assert parse_size("1G") == 1 << 30
    assert parse_size("512MiB") == 512 << 20
    assert parse_size("4096") == 4096
    with pytest.raises(InputError):
        parse_size("lots")
    assert parse_shapes("input:1x3x224x224,scope:0:2x5", "--shapes") == {
        "input": (1, 3, 224, 224),
        "scope:0": (2, 5),
    }
    with pytest.raises(InputError, match="NAME:"):
        parse_shapes("input=1x3", "--shapes")


def test_profiles_from_min_opt_max(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ns = argparse.Namespace(shapes=None, min_shapes="x:1x3", opt_shapes="x:4x3", max_shapes="x:16x3")
    assert profiles_from_args(ns) == [{"x": ((1, 3), (4, 3), (16, 3))}]
    ns = argparse.Namespace(shapes="x:2x3", min_shapes=None, opt_shapes=None, max_shapes=None)
    assert profiles_from_args(ns) == [{"x": ((2, 3), (2, 3), (2, 3))}]
    # the request's field errors, shown as the flags that set the field, before anything is built
    model = _tiny(tmp_path)
    assert main(["build", str(model), "--min-shapes", "x:1x3x16x16", "--opt-shapes", "x:4x3x16"]) == 2
    err = capsys.readouterr().err
    assert "--min-shapes" in err and "different ranks" in err and err.count("\n") == 1
    assert main(["build", str(model), "--min-shapes", "x:4x3x16x16", "--max-shapes", "x:2x3x16x16"]) == 2
    assert "need min <= opt <= max" in capsys.readouterr().err
    assert main(["build", str(model), "--target", "sm8x"]) == 2
    assert capsys.readouterr().err.startswith("error: --target: bad compute capability")
    assert main(["build", str(model), "--opt-level", "9"]) == 2
    assert "--opt-level" in capsys.readouterr().err


def test_one_shape_rule_everywhere() -> None:
    """Every command parses shapes with one rule: integers >= 0 joined by x (0 is a real size)."""
    from trtstudio.backends.base import parse_shapes as base_parse
    from trtstudio.backends.shapes import parse_dims

    for parse in (base_parse, lambda text: parse_shapes(text, "--shapes")):
        assert parse("x:0x3, 'scope:0':2x5") == {"x": (0, 3), "scope:0": (2, 5)}
        for bad in ("x:-1x3", "x:1xax3", "x:", "x:1x", "1x3"):
            with pytest.raises(InputError, match="--shapes"):
                parse(bad)
    assert parse_dims(" 1 x 3 x224X224 ") == (1, 3, 224, 224)
    with pytest.raises(InputError, match="integers >= 0 joined by 'x'"):
        parse_dims("1,3,224,224", "opt")


def test_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", str(tmp_path / "missing.onnx")]) == 2
    assert "missing.onnx: no such file" in capsys.readouterr().err
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x08\x01garbage that is not a model")
    assert main(["build", str(junk)]) == 2
    assert "not an ONNX model" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("tensorrt") is not None, reason="full TensorRT is installed")
def test_missing_backend_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", str(_tiny(tmp_path)), "--backend", "tensorrt"]) == 2
    assert "tensorrt" in capsys.readouterr().err


@pytest.mark.rtx
@needs_rtx
def test_build_json_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _tiny(tmp_path)
    out = tmp_path / "tiny.engine"
    log = tmp_path / "tiny.build.log"
    rc = main(
        ["build", str(model), "--backend", "rtx", "--target", "sm86", "-o", str(out), "--workspace", "256M",
         "--min-shapes", "x:1x3x16x16", "--opt-shapes", "x:2x3x16x16", "--max-shapes", "x:4x3x16x16",
         "--save-log", str(log), "--json"]
    )  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["ok"] is True and doc["error"] is None
    assert doc["schema"] == "trtstudio.build/1"
    assert doc["engine_path"] == str(out) and out.stat().st_size == doc["engine_bytes"] > 0
    assert doc["settings"]["profiles"] == [{"x": [[1, 3, 16, 16], [2, 3, 16, 16], [4, 3, 16, 16]]}]
    assert doc["settings"]["workspace_bytes"] == 256 << 20
    assert doc["layers"] and any("/stem/Conv" in lay["onnx_nodes"] for lay in doc["layers"])
    assert all({"name", "type", "precision", "inputs", "outputs"} <= set(lay) for lay in doc["layers"])
    assert doc["log"] and {"severity", "message"} <= set(doc["log"][0])
    assert log.read_text().startswith("# trtstudio.buildlog/1 ")

    # the document opens as the engine it built: the same layers as its saved log
    saved = tmp_path / "tiny.build.json"
    saved.write_text(json.dumps(doc))
    assert main(["layers", str(saved), "--json"]) == 0
    from_doc = json.loads(capsys.readouterr().out)
    assert main(["layers", str(log), "--json"]) == 0
    from_log = json.loads(capsys.readouterr().out)
    assert from_doc["formats"] == ["trtstudio-build"] and str(out) in from_doc["source"]
    assert from_doc["layers"] == from_log["layers"] and from_doc["engine"] == from_log["engine"]


@pytest.mark.rtx
@needs_rtx
def test_rejected_model_exits_1_with_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(
        ["build", str(_custom(tmp_path)), "--backend", "rtx", "-o", str(tmp_path / "c.engine"), "--json"]
    )
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1 and doc["ok"] is False
    assert doc["unsupported"][0]["node"] == "/acme/Frobnicate"
    assert doc["unsupported"][0]["op_type"] == "Frobnicate"
    assert "Frobnicate" in doc["error"] and doc["log"]
    assert not (tmp_path / "c.engine").exists()
    # its document is no engine: one line naming the build's error, exit 2
    saved = tmp_path / "c.json"
    saved.write_text(json.dumps(doc))
    assert main(["layers", str(saved)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {saved}: this build did not make an engine") and "Frobnicate" in err
    assert len(err.splitlines()) == 1


@pytest.mark.rtx
@needs_rtx
def test_bad_target_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", str(_tiny(tmp_path)), "--backend", "rtx", "--target", "sm90"]) == 2
    assert "SM90" in capsys.readouterr().err


def test_a_failed_build_document_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An exception's text in a build document's error may span lines: the reader's message does not."""
    doc = tmp_path / "failed.build.json"
    doc.write_text(json.dumps({"schema": "trtstudio.build/1", "ok": False, "error": "boom\nsecond line", "log": []}))
    assert main(["layers", str(doc)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "boom second line" in err and err.startswith(f"error: {doc}: ")
