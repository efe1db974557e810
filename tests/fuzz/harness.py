"""Run the CLI on a fuzzed file and check the outcome contract of issue 13.

Every case ends in exit 0 with correct output, or exit 2 with exactly one stderr line
``error: FILE: what is wrong``: no traceback, no hang, no other exit code.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Outcome:
    argv: list[str]
    rc: int
    out: str
    err: str

    def __str__(self) -> str:
        return f"trtstudio {' '.join(self.argv)} -> exit {self.rc}\nstdout: {self.out[-800:]}\nstderr: {self.err[-1500:]}"


def run_main(argv: Sequence[str]) -> Outcome:
    """``trtstudio.cli.main(argv)`` in this process, stdout and stderr captured (the fast path)."""
    from trtstudio.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as exc:  # argparse
            rc = int(exc.code or 0)
        except BaseException as exc:  # noqa: BLE001 - an escaped exception is the failure we look for
            import traceback

            traceback.print_exc(file=err)
            rc = -1000 - (1 if isinstance(exc, Exception) else 0)
    return Outcome(list(argv), rc, out.getvalue(), err.getvalue())


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env.pop("TRTSTUDIO_DEBUG", None)
    env.update(extra)
    return env


def run_sub(argv: Sequence[str], timeout: float = 60, env: dict[str, str] | None = None,
            user: int | None = None, cwd: str | None = None) -> Outcome:
    """``python -m trtstudio.cli argv`` in a child with a timeout (hangs fail, never block the suite).

    ``user``: a uid to switch to before exec (to test unreadable files while the suite runs as root).
    """
    pre = None
    if user is not None:
        def pre() -> None:  # type: ignore[misc]
            os.setgid(user)
            os.setuid(user)
    try:
        proc = subprocess.run([sys.executable, "-m", "trtstudio.cli", *argv], capture_output=True, text=True,
                              timeout=timeout, env=env or child_env(), preexec_fn=pre, cwd=cwd or str(REPO),
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"trtstudio {' '.join(argv)} hung (no exit within {timeout} s)") from exc
    return Outcome(list(argv), proc.returncode, proc.stdout, proc.stderr)


_ERROR_LINE = re.compile(r"^error: (?P<file>[^:]+(?::(?!\s)[^:]*)*): (?P<what>\S.*)$")


def reject_constant(name: str) -> None:
    raise ValueError(f"non-standard JSON constant {name}")


def strict_loads(text: str) -> object:
    """JSON as JavaScript's JSON.parse reads it: NaN/Infinity refused."""
    return json.loads(text, parse_constant=reject_constant)


def check(o: Outcome, *, file: str | os.PathLike[str] | None = None, json_out: bool = False,
          allow_ok: bool = True, allow_run_failure: bool = False) -> object | None:
    """Assert the contract; returns the parsed --json document on exit 0 (strictly parsed)."""
    assert "Traceback" not in o.err and "Traceback" not in o.out, str(o)
    assert "internal error" not in o.err, str(o)
    allowed = {0, 2} | ({1} if allow_run_failure else set())
    if not allow_ok:
        allowed.discard(0)
    assert o.rc in allowed, str(o)
    if o.rc == 0:
        if json_out:
            try:
                doc = strict_loads(o.out)
            except ValueError as exc:
                raise AssertionError(f"--json output is not strict JSON: {exc}\n{o}") from None
            assert isinstance(doc, dict) and str(doc.get("schema", "")).startswith("trtstudio."), str(o)
            return doc
        return None
    lines = [ln for ln in o.err.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error: ")]
    assert len(errors) == 1, f"expected exactly one error line\n{o}"
    if o.rc == 2:
        assert len(lines) == 1, f"exit 2 must print exactly one line on stderr\n{o}"
    if file is not None:
        assert errors[0].startswith(f"error: {os.fspath(file)}: "), f"error line must name {file}\n{o}"
        assert len(errors[0]) > len(f"error: {os.fspath(file)}: ") + 3, str(o)
    return None
