"""``trtstudio.diff.prefetch``: the helper process a big diff starts for what each side gives alone
(each side's layer graph, the pair's sample figures and memory rows). Its results must be the ones
this process works out, must not be used for files that changed after it read them, and the diff
must come out the same where the helper fails or is never started.

The sides are TREx's real engines (``../shared/fixtures/trt-real``, skipped when absent), copied
where a test changes a file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trtstudio.cli import main
from trtstudio.diff import prefetch
from trtstudio.diff.core import diff
from trtstudio.diff.sides import load_side
from trtstudio.measure import devices

TREX = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "trt-real" / "NVIDIA_TensorRT_trex"
A100 = TREX / "release-11.0" / "examples" / "pytorch" / "resnet" / "A100"
pytestmark = pytest.mark.skipif(not A100.is_dir(), reason=f"fixtures absent: {A100}")


def _doc(base: str, other: str) -> dict:
    sides = [load_side(base), load_side(other)]
    return diff(sides[0], sides[1]).to_json()


def _with_helper(base: str, other: str) -> tuple[dict, prefetch.Prefetch]:
    helper = prefetch.start([base, other], [None, None], None)
    assert helper is not None
    try:
        sides = [load_side(base), load_side(other)]
        return diff(sides[0], sides[1], prefetch=helper).to_json(), helper
    finally:
        helper.close()


@pytest.mark.parametrize("other", ["fp16", "qat"])
def test_what_the_helper_sends_is_what_is_worked_out_here(other: str, monkeypatch: pytest.MonkeyPatch) -> None:
    base, oth = str(A100 / "fp32"), str(A100 / other)
    expected = _doc(base, oth)
    monkeypatch.setenv(prefetch.ENV, "wait")  # the helper's results are the ones used
    got, helper = _with_helper(base, oth)
    sent = set(helper._got)
    assert {("side", 0), ("side", 1), ("orientation", 0), ("orientation", 1), ("graph", 0), ("graph", 1),
            ("memory", 0), ("memory", 1), ("figures", 1)} <= sent
    assert got == expected
    assert got["diffs"][0]["memory"], "the pair's memory rows, of the helper's figures"


def test_a_side_whose_files_changed_after_the_helper_read_them_is_worked_out_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "fp32"
    other = tmp_path / "fp16"
    shutil.copytree(A100 / "fp32", base)
    shutil.copytree(A100 / "fp16", other)
    monkeypatch.setenv(prefetch.ENV, "wait")
    helper = prefetch.start([str(base), str(other)], [None, None], None)
    assert helper is not None
    try:
        ask = helper.for_pair(1, ([], []))
        assert ask("memory", 1) is None  # other files than the helper read: nothing of its is used
        helper._get(("memory", 1))  # the helper has read both sides and sent everything
        graph = next(other.glob("*.graph.json"))
        doc = json.loads(graph.read_text())
        doc["Layers"] = doc["Layers"][:-1]  # the other engine rewritten: one layer fewer
        time.sleep(0.01)
        graph.write_text(json.dumps(doc))
        sides = [load_side(str(base)), load_side(str(other))]
        paths = (sides[0].paths, sides[1].paths)
        ask = helper.for_pair(1, paths)
        assert ask("figures") is None
        assert ask("graph", 1) is None and ask("orientation", 1) is None and ask("memory", 1) is None
        assert None not in (ask("graph", 0), ask("orientation", 0), ask("memory", 0))  # the base is as the helper read it
        got = diff(sides[0], sides[1], prefetch=helper).to_json()
    finally:
        helper.close()
    monkeypatch.setenv(prefetch.ENV, "0")
    assert got == _doc(str(base), str(other))


def test_a_helper_that_fails_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    base, other = str(A100 / "fp32"), str(A100 / "qat")
    expected = _doc(base, other)
    monkeypatch.setenv(prefetch.ENV, "wait")
    monkeypatch.setattr(sys, "executable", shutil.which("false") or "/bin/false")  # it ends at once, having sent nothing
    got, helper = _with_helper(base, other)
    assert helper._got == {}
    assert got == expected


def test_started_only_where_it_can_pay(monkeypatch: pytest.MonkeyPatch) -> None:
    small = [str(A100 / "fp32"), str(A100 / "fp16")]  # a few MB: the helper's start-up would be most of it
    monkeypatch.delenv(prefetch.ENV, raising=False)
    assert prefetch.start(small, [None, None], None) is None
    monkeypatch.setenv(prefetch.ENV, "0")
    assert prefetch.start(small, [None, None], None) is None
    monkeypatch.setattr(prefetch, "MIN_BYTES", 1)
    monkeypatch.delenv(prefetch.ENV)
    monkeypatch.setattr(devices, "spare_cpus", lambda: 0)
    assert prefetch.start(small, [None, None], None) is None  # no idle processor: it would only compete
    monkeypatch.setattr(devices, "spare_cpus", lambda: 1)
    helper = prefetch.start(small, [None, None], None)
    assert helper is not None
    helper.close()
    monkeypatch.setattr(prefetch, "MIN_BYTES", 10**12)
    assert prefetch.start(["no/such/side", small[1]], [None, None], None) is None  # this process says what is wrong


@pytest.mark.skipif(not Path("/proc/loadavg").exists(), reason="the tasks runnable now are Linux's /proc/loadavg")
def test_idle_processors_are_counted_without_the_busy_ones() -> None:
    """A processor running something (a CPU hog) is not idle: a helper there would take the command's time."""
    idle = devices.spare_cpus()
    assert 0 <= idle < devices.usable_cpus()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(devices.usable_cpus())]
    try:
        time.sleep(0.3)
        assert devices.spare_cpus() == 0
    finally:
        for h in hogs:
            h.kill()
            h.wait()


def test_the_command_ends_its_helper_also_when_a_side_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"Layers": [')
    started: list[prefetch.Prefetch] = []
    real = prefetch.start

    def start(*args: object) -> prefetch.Prefetch | None:
        got = real(*args)  # type: ignore[arg-type]
        if got is not None:
            started.append(got)
        return got

    monkeypatch.setenv(prefetch.ENV, "1")
    monkeypatch.setattr(prefetch, "start", start)
    assert main(["diff", str(A100 / "fp32"), str(bad), "--json"]) == 2
    assert "error:" in capsys.readouterr().err
    assert len(started) == 1 and started[0]._proc.poll() is not None  # ended and reaped


def test_the_helper_is_a_command_line_of_its_own(tmp_path: Path) -> None:
    """What the command starts: ``python -m trtstudio.cli --_diff-prefetch REQUEST``, its results
    pickled on standard output, nothing on standard error."""
    from trtstudio.bigdocs.children import command

    request = json.dumps({"specs": [str(A100 / "fp32"), str(A100 / "fp16")], "models": [None, None], "names": None})
    proc = subprocess.run(command(prefetch.FLAG, request), capture_output=True, timeout=120, check=False)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    import io
    import pickle

    out = io.BytesIO(proc.stdout)
    keys = []
    while out.tell() < len(proc.stdout):
        keys.append(pickle.load(out)[0])
    assert keys == [("side", 0), ("orientation", 0), ("graph", 0), ("side", 1), ("orientation", 1), ("graph", 1),
                    ("figures", 1), ("working",), ("memory", 0), ("working",), ("memory", 1)]


def test_sides_of_one_name_are_named_as_the_command_names_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Two folders of one name: the second side is "fp32 (2)" in the helper too (its memory rows
    say whose figure is whose)."""
    copy = tmp_path / "fp32"
    shutil.copytree(A100 / "fp32", copy)
    monkeypatch.setenv(prefetch.ENV, "0")
    assert main(["diff", str(A100 / "fp32"), str(copy), "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    monkeypatch.setenv(prefetch.ENV, "wait")
    assert main(["diff", str(A100 / "fp32"), str(copy), "--json"]) == 0
    helped = json.loads(capsys.readouterr().out)
    assert helped == alone
    assert any("fp32 (2)" in row["other_source"] for row in helped["diffs"][0]["memory"].values())
