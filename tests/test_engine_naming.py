"""One rule for naming an engine's files (``engine.naming.resolve``): every form on every command
that takes an engine (layers, report, diff, explain, compare, gui) and in the API gives the same
layers, and every refusal is the same one line.

Real TREx fixtures, read by path (skipped when absent): ``A100/qat`` (one INT8 engine per folder) and
``tests/inputs`` (two INT8 engines in one folder, TREx prefixes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trtstudio.cli import main

TREX = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "trt-real" / "NVIDIA_TensorRT_trex"
A100_QAT = TREX / "release-11.0" / "examples" / "pytorch" / "resnet" / "A100" / "qat"
INPUTS = TREX / "release-11.0" / "tests" / "inputs"
pytestmark = pytest.mark.skipif(not INPUTS.is_dir() or not A100_QAT.is_dir(), reason=f"fixtures absent: {TREX}")

FORMS_TEXT = ("name one engine as a folder of its files, its files joined with commas (FILE,FILE,...), "
              "a TREx prefix (DIR/NAME.onnx.engine for NAME.onnx.engine.graph.json, ...), one file, "
              "a trtstudio build --json document or a .trtstudio session")

# (engine, its folder or None where the folder holds two engines, its TREx prefix)
ENGINES = {
    "A100 qat": (A100_QAT, A100_QAT / "resnet-qat.onnx.engine"),
    "mobilenet qat": (None, INPUTS / "mobilenet.qat.onnx.engine"),
    "mobilenet residuals qat": (None, INPUTS / "mobilenet_v2_residuals.qat.onnx.engine"),
}


def _files(prefix: Path) -> list[str]:
    return sorted(str(p) for p in prefix.parent.glob(prefix.name + ".*"))


def _forms(key: str, tmp_path: Path) -> dict[str, list[str]]:
    """Each form of naming the engine ``key``, as the arguments a command takes."""
    folder, prefix = ENGINES[key]
    files = _files(prefix)
    forms = {"prefix": [str(prefix)], "comma list": [",".join(files)], "files": files,
             "session": [str(_session(files, tmp_path))]}
    if folder is not None:
        forms["folder"] = [str(folder)]
    stray = tmp_path / "with-stray-files"  # the engine's files beside a README and notes: one engine still
    stray.mkdir()
    for f in files:
        (stray / Path(f).name).symlink_to(f)
    (stray / "README.md").write_text("# notes on this build\n")
    (stray / "notes.txt").write_text("built on the lab's A100, 2022\n")
    forms["folder with a README"] = [str(stray)]
    return forms


def _session(files: list[str], tmp_path: Path) -> Path:
    from trtstudio.report.model import make_session
    from trtstudio.report.session import write_session

    path = tmp_path / "engine.trtstudio"
    write_session(path, make_session(engine=files))
    return path


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    rc = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    return json.loads(captured.out)


def _base_layers(pair: dict[str, Any]) -> list[str]:
    """The base side's layer names, in layer order, from a diff pair's groups (a comparison's rows)."""
    named = {i: n for g in pair.get("groups", pair.get("rows")) for i, n in zip(g["base_index"], g["base_layers"], strict=True)}
    return [named[i] for i in sorted(named)]


def _layer_names(command: str, names: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    if command == "layers":
        return [r["name"] for r in _json(capsys, "layers", *names)["layers"]]
    if command == "report":
        args = names if len(names) == 1 else ["--engine", *names]
        return [r["name"] for r in _json(capsys, "report", *args)["layers"]]
    one = ",".join(names)  # diff, explain and compare take one argument per engine
    if command == "diff":
        return _base_layers(_json(capsys, "diff", one, one)["diffs"][0])
    if command == "explain":
        return _base_layers(_json(capsys, "explain", one, "--against", one)["diff"])
    if command == "compare":
        return _base_layers(_json(capsys, "compare", one, one)["layer_diffs"][0])
    raise AssertionError(command)


@pytest.mark.parametrize("key", list(ENGINES))
def test_every_form_on_every_command_gives_the_same_layers(key: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    import trtstudio as ts
    from trtstudio.engine.load import load_engine

    expected = [lay.name for lay in load_engine(_files(ENGINES[key][1])).layers]
    assert len(expected) > 30
    forms = _forms(key, tmp_path)
    for form, names in forms.items():
        if form == "files" or form == "session":  # one argument per engine: the comma list is the files form
            commands = ["layers", "report"] + (["diff", "explain", "compare"] if form == "session" else [])
        else:
            commands = ["layers", "report", "diff", "explain", "compare"]
        for command in commands:
            assert _layer_names(command, names, capsys) == expected, (form, command)
        if form != "session":  # open_engine reads engine files (a session's engine: load_session)
            plan = ts.open_engine(*names)
            assert [lay.name for lay in plan.engine.layers] == expected, form


@pytest.mark.parametrize("key", ["mobilenet qat"])
def test_the_window_opens_a_prefix(key: str, tmp_path: Path) -> None:
    """``trtstudio gui PREFIX --screenshot``: the window opens the engine the prefix names."""
    pytest.importorskip("PySide6")
    out = tmp_path / "gui.png"
    assert main(["gui", str(ENGINES[key][1]), "--screenshot", str(out), "--size", "900x600"]) == 0
    assert out.stat().st_size > 10_000


def test_a_folder_of_two_engines_is_refused_naming_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import trtstudio as ts

    line = (f"error: {INPUTS}: holds the files of 2 engines (mobilenet.qat.onnx.engine, "
            f"mobilenet_v2_residuals.qat.onnx.engine): name one, e.g. {INPUTS / 'mobilenet.qat.onnx.engine'}; "
            f"{FORMS_TEXT}\n")
    for argv in (["layers", str(INPUTS)], ["report", str(INPUTS), "--json"], ["report", "--engine", str(INPUTS), "--json"],
                 ["diff", str(INPUTS), str(A100_QAT)], ["explain", str(INPUTS)], ["compare", str(A100_QAT), str(INPUTS)],
                 ["gui", str(INPUTS), "--screenshot", str(tmp_path / "x.png")]):
        assert main(argv) == 2, argv
        captured = capsys.readouterr()
        assert captured.err == line and captured.out == "", argv
    with pytest.raises(ValueError) as err:
        ts.open_engine(INPUTS)
    assert f"error: {err.value}\n" == line
    # the name it suggests works
    assert len(ts.open_engine(INPUTS / "mobilenet.qat.onnx.engine").engine.layers) > 30


def test_a_name_that_matches_nothing_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import trtstudio as ts

    missing = INPUTS / "mobilenet.onnx.engine"  # no file, folder or prefix of that name
    line = f"error: {missing}: no such file, folder or prefix of engine files; {FORMS_TEXT}\n"
    for argv in (["layers", str(missing)], ["report", str(missing), "--json"], ["diff", str(A100_QAT), str(missing)],
                 ["explain", str(missing)], ["compare", str(A100_QAT), str(missing)]):
        assert main(argv) == 2, argv
        assert capsys.readouterr().err == line, argv
    with pytest.raises(FileNotFoundError) as err:
        ts.open_engine(missing)
    assert f"error: {err.value}\n" == line
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "README.md").write_text("nothing here yet\n")
    assert main(["layers", str(empty)]) == 2
    assert capsys.readouterr().err == (f"error: {empty}: no engine files in this folder (layer JSON, profile, "
                                       f"timings, logs); {FORMS_TEXT}\n")


def test_a_plan_beside_its_exports_names_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """TREx's layout keeps the plan (``NAME.onnx.engine``) beside its exports: naming the plan reads
    the exports, as TREx did (the plan alone needs the TensorRT that built it, and a GPU)."""
    from trtstudio.engine.naming import resolve

    files = _files(ENGINES["mobilenet qat"][1])
    for f in files:
        (tmp_path / Path(f).name).symlink_to(f)
    plan = tmp_path / "mobilenet.qat.onnx.engine"
    plan.write_bytes(b"ftrt" + bytes(64))
    named = resolve(str(plan))
    assert named.form == "prefix" and sorted(named.files) == sorted(str(tmp_path / Path(f).name) for f in files)
    assert [r["name"] for r in _json(capsys, "layers", str(plan))["layers"]] == \
        [r["name"] for r in _json(capsys, "layers", *files)["layers"]]
