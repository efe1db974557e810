"""Reading an engine's files when one is big (cut by a child process, read in a thread of its own):
a small file beside it that fails raises at once, the big read given up (its child killed). Real
child processes, real files."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import psutil
import pytest
from test_children import _layers_doc

from trtstudio.bigdocs import children
from trtstudio.engine import load
from trtstudio.engine.load import load_engine
from trtstudio.engine.readers import _fast, read_file
from trtstudio.errors import InputError

HANG_GUARD_S = 60  # only so that a broken build fails instead of hanging: no assertion on time


def _files(tmp_path: Path) -> tuple[Path, Path]:
    """A layer document of 5,000 records (about 2 MB: more than the child's first run and a pipe's
    buffer, so the child is still writing while the parent holds its first run) and a truncated
    profile beside it."""
    big = tmp_path / "big.graph.json"
    big.write_text(json.dumps(_layers_doc(5000)))
    small = tmp_path / "big.profile.json"
    small.write_text('[{"count": 10}, {"name": "/blk0/conv", "timeMs": 1.5, "averageMs": 0.1')
    return big, small


def _big_files_by_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(children, "RESPONSIVE_MIN_BYTES", 1000)
    monkeypatch.setattr(children, "CUT_HERE_MAX_BYTES", 1000)


def _children_started(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[bytes]]:
    """The list of the child processes that reads start from now on (as they start)."""
    procs: list[subprocess.Popen[bytes]] = []
    real_output = children._child_output

    @contextlib.contextmanager
    def recorded(flag: str, path: str) -> Iterator[subprocess.Popen[bytes] | None]:
        with real_output(flag, path) as proc:
            if proc is not None:
                procs.append(proc)
            yield proc

    monkeypatch.setattr(children, "_child_output", recorded)
    return procs


@pytest.mark.parametrize("big_first", [True, False])
def test_a_small_file_that_fails_raises_while_the_big_one_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capfd: pytest.CaptureFixture[str],
                                                                  big_first: bool) -> None:
    """The big read is held at its first run (the child alive, writing the rest) until the error
    has come: the error is the small file's one line, the child killed and reaped, and the big
    read's thread ends on its own once let go, printing nothing."""
    big, small = _files(tmp_path)
    with pytest.raises(InputError) as plain:
        read_file(small)
    assert "truncated JSON" in str(plain.value) and "\n" not in str(plain.value)
    _big_files_by_child(monkeypatch)

    procs = _children_started(monkeypatch)
    first_run, let_go = threading.Event(), threading.Event()
    held: list[bool] = []

    class HeldFeed(_fast.LayerFeed):
        def __call__(self, run: bytes) -> None:
            if not first_run.is_set():
                first_run.set()
                held.append(let_go.wait(HANG_GUARD_S))  # True: let go by the test, after the error
            super().__call__(run)

    monkeypatch.setattr(_fast, "LayerFeed", HeldFeed)
    real_read = load.read_file

    def read_small_once_the_child_sends(p: str | Path) -> Any:
        if Path(p) == small:
            assert first_run.wait(HANG_GUARD_S)
        return real_read(p)

    monkeypatch.setattr(load, "read_file", read_small_once_the_child_sends)
    hooks: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", hooks.append)
    paths = [big, small] if big_first else [small, big]
    try:
        with children.responsive_parsing(), pytest.raises(InputError) as err:
            load_engine(paths)
        assert not let_go.is_set() and held == []  # the big read still held: not waited for
        assert str(err.value) == str(plain.value)
        assert len(procs) == 1
        proc = procs[0]
        assert proc.returncode == -signal.SIGKILL  # killed while it wrote, and reaped
        assert not psutil.pid_exists(proc.pid)
    finally:
        let_go.set()
    readers = [t for t in threading.enumerate() if t.name.startswith("trtstudio-read")]
    for t in readers:
        t.join(HANG_GUARD_S)
    assert held == [True] and not any(t.is_alive() for t in readers)
    assert hooks == [] and "Traceback" not in capfd.readouterr().err


def test_big_and_small_files_that_read_give_the_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same files, the profile whole (of the first 1,000 layers): the engine as read in one
    go, the child gone."""
    big, _ = _files(tmp_path)
    profile = tmp_path / "big.profile.json"
    profile.write_text(json.dumps([{"count": 10}] + [{"name": f"/blk{i}/conv", "timeMs": i / 3, "averageMs": 0.1}
                                                     for i in range(1000)]))
    eager = load_engine([big, profile])
    _big_files_by_child(monkeypatch)
    monkeypatch.setattr(children, "CUT_HERE_MAX_BYTES", profile.stat().st_size + 1)  # the profile read here
    assert big.stat().st_size > children.CUT_HERE_MAX_BYTES
    procs = _children_started(monkeypatch)
    with children.responsive_parsing():
        pieces = load_engine([big, profile])
    assert len(procs) == 1 and procs[0].returncode == 0
    assert pieces.to_json() == eager.to_json()
    assert pieces.layers[7].time is not None and pieces.layers[7].time.total_ms == pytest.approx(7 / 3)


def test_a_big_file_that_fails_is_the_error_where_the_small_ones_read(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Every small file reads; the big one is truncated: its error (read the general way), as in one go."""
    big = tmp_path / "big.graph.json"
    big.write_text(json.dumps(_layers_doc(3000))[:-50])
    profile = tmp_path / "p.profile.json"
    profile.write_text(json.dumps([{"count": 1}, {"name": "/blk0/conv", "timeMs": 1.0}]))
    with pytest.raises(InputError) as plain:
        load_engine([profile, big])
    _big_files_by_child(monkeypatch)
    with children.responsive_parsing(), pytest.raises(InputError) as err:
        load_engine([profile, big])
    assert str(err.value) == str(plain.value) and "JSON at line 1" in str(err.value)


def test_reads_given_up_raise_abandoned_and_start_no_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "doc.json"
    f.write_bytes(orjson.dumps(_layers_doc(100)))
    started: list[object] = []
    real_popen = subprocess.Popen
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a) or real_popen(*a, **k))
    abandon = children.Abandon()
    with abandon.watching():
        assert children.read_pieces(str(f)) == orjson.loads(f.read_bytes())  # not given up: read
        abandon.now()
        with pytest.raises(children.Abandoned):
            children.read_pieces(str(f), raw=True)
        with pytest.raises(children.Abandoned):
            children.load_json_tree(str(f))
    assert len(started) == 1
    assert children.read_pieces(str(f)) == orjson.loads(f.read_bytes())  # another thread's reads, or after
