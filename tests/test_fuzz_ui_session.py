"""Fuzz: File > Open session in the window with damaged sessions and non-regular files: each ends in
the session shown or one error line in a non-blocking dialog; no exception escapes into Qt."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from fuzz import LONG, mutate, seeds  # noqa: E402

from trtstudio.ui.main_window import MainWindow  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return seeds.write_world(tmp_path_factory.mktemp("ui"))


def _cases(world: dict[str, Path], tmp: Path) -> list[Path]:
    doc = json.loads(world["session"].read_text())
    rng = random.Random(7)
    out: list[Path] = []
    paths = mutate.paths(doc, limit=300)
    picks = paths if LONG else rng.sample(paths, 30)
    for i, p in enumerate(picks):
        f = tmp / f"case{i}.trtstudio"
        f.write_text(mutate.replace_raw(doc, p, rng.choice(mutate.RAW_VALUES)) if i % 3 else mutate.delete_key(doc, p))
        out.append(f)
    deep = tmp / "deep.trtstudio"
    deep.write_text(mutate.deep_nesting("list"))
    empty = tmp / "empty.trtstudio"
    empty.write_bytes(b"")
    folder = tmp / "folder.trtstudio"
    folder.mkdir()
    out += [deep, empty, folder]
    if hasattr(os, "mkfifo"):
        fifo = tmp / "pipe.trtstudio"
        os.mkfifo(fifo)
        out.append(fifo)
    return out


def test_open_damaged_sessions(qtbot, world: dict[str, Path], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    win = MainWindow()
    qtbot.addWidget(win)
    try:
        outcomes: dict[str, int] = {"loaded": 0, "error": 0}
        for f in [world["session"], *_cases(world, tmp_path)]:
            got: list[str] = []
            win.sig_session_loaded.connect(lambda _s, got=got: got.append("loaded"))
            win.sig_error.connect(lambda msg, got=got: got.append("error:" + msg))
            win.open_session(str(f))
            qtbot.waitUntil(lambda got=got: bool(got), timeout=30000)
            qtbot.waitUntil(lambda: not win.is_busy(), timeout=30000)
            win.sig_session_loaded.disconnect()
            win.sig_error.disconnect()
            win.sig_error.connect(win.show_error)
            if got[0].startswith("error:"):
                msg = got[0][len("error:"):]
                assert "\n" not in msg and str(f) in msg and "Traceback" not in msg, msg
                outcomes["error"] += 1
            else:
                outcomes["loaded"] += 1
        assert outcomes["loaded"] >= 1 and outcomes["error"] >= 4, outcomes
    finally:
        win.shutdown()
