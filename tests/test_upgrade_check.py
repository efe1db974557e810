"""``trtstudio upgrade-check`` and ``trtstudio runtimes``: real builds of third-party ONNX files by three
TensorRT-RTX versions, each in its own environment (two installed by ``runtimes add`` into a cache,
the test environment's own as ``here``), read back and diffed here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.onnx_models import custom_op
from tests.rtx_runtimes import CACHE, Unavailable, runtimes
from trtstudio.cli import main
from trtstudio.engine.compat import read_plan_header

pytestmark = [pytest.mark.rtx, pytest.mark.slow]


def _package_file(module: str, *parts: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        pytest.skip(f"{module} is not installed")
    path = Path(spec.origin).parent.joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"{path} is not there")
    return path


CLS = ("rapidocr_onnxruntime", "models", "ch_ppocr_mobile_v2.0_cls_infer.onnx")  # a MobileNet-style classifier
RESNET50 = ("onnx", "backend", "test", "data", "light", "light_resnet50.onnx")  # IR 3: initializers are inputs


@pytest.fixture(scope="module")
def managed() -> list[str]:
    pytest.importorskip("tensorrt_rtx")
    try:
        return runtimes()
    except Unavailable as exc:
        pytest.skip(str(exc))


def _check(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    rc = main(["upgrade-check", *args, "--runtimes-root", str(CACHE), "--json"])
    out = capsys.readouterr().out
    return rc, json.loads(out) if out.strip() else {}


@pytest.fixture(scope="module")
def cls_check(managed: list[str], tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict, Path]:
    out = tmp_path_factory.mktemp("upgrade")
    model = _package_file(*CLS)
    # a module fixture cannot take capsys: the program itself, once for the tests below
    proc = subprocess.run([sys.executable, "-m", "trtstudio", "upgrade-check", str(model), "--runtime", managed[0],
                           "--runtime", managed[1], "--runtime", "here", "--runtimes-root", str(CACHE), "--out", str(out),
                           "--fail-on", "build,precision", "--json"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    return proc.returncode, json.loads(proc.stdout), out


def test_each_runtime_builds_with_its_own_version(cls_check: tuple[int, dict, Path], managed: list[str]) -> None:
    rc, doc, out = cls_check
    from importlib import metadata

    from trtstudio.runtimes.manage import resolve

    assert doc["schema"] == "trtstudio.upgrade/1" and rc == 0, doc.get("regressions")
    wanted = [resolve(m, str(CACHE)).version for m in managed] + [metadata.version("tensorrt_rtx_cu13")]
    cols = doc["runtimes"]
    assert [c["runtime"]["version"] for c in cols] == wanted
    for col, version in zip(cols, wanted, strict=True):
        assert col["ok"] and col["error"] is None
        assert col["versions"]["tensorrt_rtx"] == version  # the child's own runtime built it
        header = read_plan_header(col["engine_path"])  # the plan names the version that wrote it
        assert header is not None and version.startswith(header["version"])
        assert Path(col["engine_path"]).parent.parent == out and Path(col["build_document"]).is_file()
        assert col["engine_bytes"] == Path(col["engine_path"]).stat().st_size
        mix = col["precision"]
        assert mix["basis"] == "layers" and abs(sum(mix["shares"].values()) - 100.0) < 1e-6
        assert sum(mix["layers"].values()) <= col["layers"]
        assert col["memory"]["device_memory"] > 0


def test_consecutive_runtimes_are_diffed(cls_check: tuple[int, dict, Path]) -> None:
    from trtstudio.diff.core import diff_sides
    from trtstudio.diff.sides import load_side

    _, doc, _ = cls_check
    names = [c["name"] for c in doc["runtimes"]]
    assert [(d["base"], d["other"]) for d in doc["diffs"]] == list(zip(names, names[1:], strict=False))
    model = str(_package_file(*CLS))
    for d, (a, b) in zip(doc["diffs"], zip(doc["runtimes"], doc["runtimes"][1:], strict=False), strict=True):
        pair = diff_sides(load_side(a["build_document"], model, a["name"]), load_side(b["build_document"], model, b["name"]))
        assert d["groups"] == len(pair.groups) and d["story"] == pair.story
        assert d["changed_groups"] == sum(1 for g in pair.groups if g["change"] != "same")


def test_accuracy_says_why_the_engines_cannot_run_here(cls_check: tuple[int, dict, Path]) -> None:
    from trtstudio.engine.compat import this_machine

    _, doc, _ = cls_check
    if this_machine().gpus:
        pytest.skip("a GPU is here: the engines may run")
    for col in doc["runtimes"]:
        assert col["accuracy"]["ran"] is False and "no NVIDIA GPU" in col["accuracy"]["reason"]
        assert col["latency"] is None
    slower = main(["upgrade-check", "x", "--runtime", "here", "--fail-on", "slower"])  # a bad model: exit 2
    assert slower == 2


def test_gates_follow_the_figures(cls_check: tuple[int, dict, Path], managed: list[str],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    _, doc, _ = cls_check
    gates = {(g["gate"], g["runtime"]): g for g in doc["gates"]}
    base = doc["runtimes"][0]
    for col in doc["runtimes"][1:]:
        assert not gates[("build", col["name"])]["failed"]
        drop = (base["precision"]["reduced_percent"] or 0) - (col["precision"]["reduced_percent"] or 0)
        assert gates[("precision", col["name"])]["failed"] == (drop > 1.0)
    # size:0 fails exactly where an engine is larger than the first runtime's
    model = str(_package_file(*CLS))
    rc, sized = _check([model, "--runtime", managed[0], "--runtime", "here", "--fail-on", "size:0,slower:5"], capsys)
    grew = sized["runtimes"][1]["engine_bytes"] > sized["runtimes"][0]["engine_bytes"]
    assert rc == (1 if grew else 0) and bool(sized["regressions"]) == grew
    slower = [g for g in sized["gates"] if g["gate"] == "slower"][0]
    assert slower["checked"] is False and not slower["failed"] and "did not run here" in slower["text"]


def test_a_rejected_node_is_named_in_words(managed: list[str], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    import onnx

    model = tmp_path / "custom.onnx"
    onnx.save(custom_op(), str(model))
    rc, doc = _check([str(model), "--runtime", managed[0], "--runtime", "here", "--fail-on", "build"], capsys)
    assert rc == 0  # failing in both is no regression
    for col in doc["runtimes"]:
        assert not col["ok"] and col["failing_node"].startswith("frob (Frobnicate): ")  # the node, its op, why
        assert "Frobnicate" in col["failing_node"].split(": ", 1)[1]  # each version's own words why
        assert col["error"] == col["failing_node"]
    assert doc["diffs"] == [] and all(g["text"].endswith("fails as the first") for g in doc["gates"])


def test_ir3_fp16_builds_or_says_why_per_runtime(managed: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    model = str(_package_file(*RESNET50))
    rc, doc = _check([model, "--runtime", managed[1], "--runtime", "here", "--fp16"], capsys)
    assert rc == 0 and doc["build_flags"] == ["--fp16"]
    for col in doc["runtimes"]:
        assert col["ok"] or col["error"], col  # a failure says why, never an empty cell
        if col["ok"]:
            assert col["versions"]["tensorrt_rtx"] == col["runtime"]["version"]


def test_bad_runtimes_and_gates_are_one_line_exit_2(managed: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    model = str(_package_file(*CLS))
    assert main(["upgrade-check", model, "--runtime", "tensorrt-rtx==0.0.1", "--runtimes-root", str(CACHE)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: tensorrt-rtx==0.0.1: no such runtime") and managed[0] in err[0]
    assert main(["upgrade-check", model, "--runtime", "here", "--fail-on", "faster"]) == 2
    assert "choose from build, precision" in capsys.readouterr().err
    assert main(["runtimes", "remove", "nosuch", "--root", str(CACHE)]) == 2


def test_runtimes_list_and_resolve(managed: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from trtstudio.runtimes.manage import resolve

    assert main(["runtimes", "list", "--root", str(CACHE), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    listed = {r["name"]: r for r in doc["runtimes"]}
    for name in managed:
        row = listed[name]
        probed = resolve(row["prefix"])  # the folder as --runtime takes it: the same environment
        assert probed.managed and probed.name == name and probed.version == row["version"]
        assert row["module"] == "tensorrt_rtx" and row["problem"] is None and probed.trtstudio
        assert resolve(f"tensorrt-rtx=={row['version']}", str(CACHE)).prefix == row["prefix"]


def test_environment_warns_where_a_runtime_cannot_load_the_engine(cls_check: tuple[int, dict, Path],
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _, doc, _ = cls_check
    newest = doc["runtimes"][-1]  # built by this environment's tensorrt_rtx
    rc = main(["environment", "--no-gpu", "--json", "--runtimes-root", str(CACHE), "--engine", newest["engine_path"]])
    items = {i["name"]: i for i in json.loads(capsys.readouterr().out)["items"] if "runtime" in i}
    assert rc in (0, 1)
    here = items["runtime here: tensorrt_rtx"]
    assert here["status"] == "ok" and here["version"] == newest["runtime"]["version"]
    for col in doc["runtimes"][:-1]:
        item = items[f"runtime {col['runtime']['name']}"]
        built = read_plan_header(newest["engine_path"])["version"]
        assert item["status"] == "warning" and any(f"TensorRT-RTX {built}" in w and col["runtime"]["version"] in w
                                                   for w in item["warnings"])
