"""Fuzz: every command on files that are not what they claim: empty, a directory, a named pipe, a
character device, a 2 GB sparse file, invalid UTF-8, a missing file, an unreadable file.

Non-regular files must be refused before anything reads them (a pipe would block forever), so the
pipe and unreadable cases run in a child process with a timeout (the unreadable one as user nobody).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fuzz import harness, seeds

pytestmark = pytest.mark.timeout(120)

NOBODY = 65534


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("special")
    d.chmod(0o755)
    return seeds.write_world(d)


# Each command as argv around the file under test ({F}), with the other inputs valid.
def commands(w: dict[str, Path], out: Path) -> dict[str, list[str]]:
    cmds = {
        "inspect": ["inspect", "{F}", "--json"],
        "layers": ["layers", "{F}", "--json"],
        "layers-onnx": ["layers", str(w["layers"]), "--onnx", "{F}"],
        "report-session": ["report", "{F}", "-o", str(out / "r.html")],
        "report-engine": ["report", "--engine", "{F}", "--json"],
        "report-onnx": ["report", "--onnx", "{F}", "--json"],
        "compare": ["compare", str(w["session"]), "{F}", "--json"],
        "diff": ["diff", str(w["layers"]), "{F}", "--json"],
        "explain": ["explain", "{F}", "--json"],
        "profile": ["profile", "{F}", "--backend", "ort", "--iterations", "2", "--warmup", "0"],
        "profile-input": ["profile", str(w["model"]), "--backend", "ort", "--iterations", "2", "--input", "{F}"],
        "build": ["build", "{F}", "--backend", "rtx", "-o", str(out / "x.engine")],
        "precision": ["precision", "{F}", "--no-engines", "--iterations", "1", "--variants", "fp16"],
        "gui": ["gui", "{F}", "--screenshot", str(out / "shot.png")],
    }
    from trtstudio.cli import COMMANDS

    if "check" in COMMANDS:
        cmds["check"] = ["check", "{F}"]
    return cmds


def _fill(argv: list[str], f: Path | str) -> list[str]:
    return [str(f) if a == "{F}" else a for a in argv]


def _makers(w: dict[str, Path]) -> dict[str, Callable[[Path], Path | str]]:
    def empty(d: Path) -> Path:
        p = d / "empty.onnx"
        p.write_bytes(b"")
        return p

    def folder(d: Path) -> Path:
        p = d / "folder.onnx"
        p.mkdir(exist_ok=True)
        return p

    def device(d: Path) -> str:
        return "/dev/zero"

    def sparse(d: Path) -> Path:
        p = d / "sparse.onnx"
        p.write_bytes(w["model"].read_bytes())
        os.truncate(p, 2 * 1024**3)
        return p

    def sparse_json(d: Path) -> Path:
        p = d / "sparse.json"
        p.write_bytes(w["layers"].read_bytes())
        os.truncate(p, 2 * 1024**3)
        return p

    def bad_utf8(d: Path) -> Path:
        p = d / "latin1.json"
        p.write_bytes(b"\xff\xfe{\"Layers\": [\xe9\xe8]}\n" * 3)
        return p

    def missing(d: Path) -> Path:
        return d / "missing.onnx"

    return {"empty": empty, "directory": folder, "dev-zero": device, "sparse-2g": sparse,
            "sparse-2g-json": sparse_json, "invalid-utf8": bad_utf8, "missing": missing}


KINDS = ("empty", "directory", "dev-zero", "sparse-2g", "sparse-2g-json", "invalid-utf8", "missing")
NAMES = ("inspect", "layers", "layers-onnx", "report-session", "report-engine", "report-onnx", "compare", "diff",
         "explain", "profile", "profile-input", "build", "precision", "gui", "check")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", NAMES)
def test_special_file_in_process(world: dict[str, Path], tmp_path: Path, name: str, kind: str) -> None:
    cmds = commands(world, tmp_path)
    if name not in cmds:
        pytest.skip(f"no {name} command on this branch")
    if name in ("gui",) and kind in ("invalid-utf8",):
        pytest.skip("the window reports engine-file content errors itself (covered by the UI tests)")
    f = _makers(world)[kind](tmp_path)
    o = harness.run_main(_fill(cmds[name], f))
    allow_ok = kind == "directory" and name == "profile-input"  # a folder of .npy is valid input data
    harness.check(o, file=None if allow_ok else f, allow_ok=allow_ok)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
@pytest.mark.parametrize("name", ["inspect", "layers", "layers-onnx", "report-session", "report-engine", "compare",
                                  "diff", "explain", "profile", "build", "precision", "gui", "check"])
def test_named_pipe_is_refused_before_reading(world: dict[str, Path], tmp_path: Path, name: str) -> None:
    cmds = commands(world, tmp_path)
    if name not in cmds:
        pytest.skip(f"no {name} command on this branch")
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    o = harness.run_sub(_fill(cmds[name], fifo), timeout=60)
    harness.check(o, file=fifo, allow_ok=False)
    assert "named pipe" in o.err


def _reachable_by_others(path: Path) -> bool:
    """True when user nobody can reach ``path`` (every folder above it searchable, the file readable)."""
    path = path.resolve()
    for p in [path, *path.parents]:
        mode = p.stat().st_mode
        if not mode & (stat.S_IXOTH if p.is_dir() else stat.S_IROTH):
            return False
    return True


@pytest.mark.skipif(sys.platform == "win32" or not hasattr(os, "seteuid"), reason="POSIX permissions")
@pytest.mark.parametrize("what", ["model", "session", "layers", "report"])
def test_unreadable_file(world: dict[str, Path], what: str) -> None:
    """As a non-root user: root reads everything, so the suite drops to nobody, in a child process
    when nobody can reach this interpreter, else in process with a temporary effective uid."""
    import shutil
    import tempfile

    # pytest's own temporary folders are private (0700): nobody needs a folder it can enter
    tmp = Path(tempfile.mkdtemp(prefix="trtstudio-fuzz-perm-"))
    try:
        tmp.chmod(0o755)
        if not _reachable_by_others(tmp):
            pytest.skip(f"{tmp} is not reachable by other users")
        _unreadable_case(world, tmp, what)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _unreadable_case(world: dict[str, Path], tmp_path: Path, what: str) -> None:
    src = world[what]
    f = tmp_path / ("locked" + "".join(src.suffixes))
    f.write_bytes(src.read_bytes())
    f.chmod(0)
    other = tmp_path / "other.trtstudio"
    other.write_bytes(world["session"].read_bytes())
    other.chmod(0o644)
    argv = {"model": ["inspect", str(f)], "session": ["report", str(f), "--json"],
            "layers": ["layers", str(f)], "report": ["compare", str(other), str(f), "--json"]}[what]
    if os.geteuid() != 0:
        o = harness.run_sub(argv, timeout=60)
    elif _reachable_by_others(Path(sys.executable)) and _reachable_by_others(harness.REPO / "trtstudio" / "cli.py"):
        o = harness.run_sub(argv, timeout=60, user=NOBODY, cwd="/")
    else:
        # import every module the command needs as root first (the interpreter's own library may be
        # out of nobody's reach): the same command on a readable copy
        harness.run_main(["inspect", str(world["model"])])
        harness.run_main([str(src) if a == str(f) else a for a in argv])
        os.setegid(NOBODY)
        os.seteuid(NOBODY)
        try:
            o = harness.run_main(argv)
        finally:
            os.seteuid(0)
            os.setegid(0)
    harness.check(o, file=f, allow_ok=False)
    assert "permission denied" in o.err
