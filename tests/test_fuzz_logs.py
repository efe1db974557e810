"""Fuzz: trtexec and TensorRT-RTX build logs: numbers replaced by 1e400/10**400/nan/-0, lines
deleted or duplicated, byte mutations, a 1-byte log and a log of invalid UTF-8 (which must not be
read as "0 layers, exit 0")."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from fuzz import LONG, harness, mutate, seeds

pytestmark = pytest.mark.timeout(600)

NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
HOSTILE_NUMBERS = ["1e400", str(10**400), "nan", "inf", "-0", "-1", "99999999999999999999999", "0x7f", ""]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("logs")
    files = seeds.write_engine_seeds(d)
    return {"dir": d, **files}


def _argv(kind: str, f: Path, world: dict[str, Path]) -> list[str]:
    if kind == "trtexec":  # a summary log goes with layer information
        return ["layers", str(world["layers"]), str(f), "--json"]
    return ["layers", str(f), "--json"]


def _case(world: dict[str, Path], kind: str, data: str | bytes) -> harness.Outcome:
    f = world["dir"] / f"case-{kind}.log"
    if isinstance(data, str):
        f.write_text(data, encoding="utf-8")
    else:
        f.write_bytes(data)
    o = harness.run_main(_argv(kind, f, world))
    harness.check(o, file=f if o.rc else None, json_out=True)
    return o


@pytest.mark.parametrize("kind", ["trtexec", "rtx"])
def test_seed_log_is_read(world: dict[str, Path], kind: str) -> None:
    o = harness.run_main(_argv(kind, world[kind], world))
    doc = harness.check(o, json_out=True)
    assert o.rc == 0 and doc["layers"]  # type: ignore[index]
    if kind == "trtexec":
        assert doc["engine"]["latency_ms"]["median"] == pytest.approx(0.0440674)  # type: ignore[index]


@pytest.mark.parametrize("kind", ["trtexec", "rtx"])
def test_numbers(world: dict[str, Path], kind: str) -> None:
    text = world[kind].read_text()
    spans = [m.span() for m in NUMBER.finditer(text)]
    rng = random.Random(kind)
    picks = rng.sample(spans, min(len(spans), 400 if LONG else 60))
    for a, b in picks:
        for value in (HOSTILE_NUMBERS if LONG else [rng.choice(HOSTILE_NUMBERS), "1e400"]):
            _case(world, kind, text[:a] + value + text[b:])


@pytest.mark.parametrize("kind", ["trtexec", "rtx"])
def test_lines(world: dict[str, Path], kind: str) -> None:
    lines = world[kind].read_text().splitlines(keepends=True)
    rng = random.Random(kind + "lines")
    for _ in range(200 if LONG else 12):
        i = rng.randrange(len(lines))
        op = rng.randrange(3)
        mutated = (lines[:i] + lines[i + 1:] if op == 0 else lines[:i] + [lines[i]] * 3 + lines[i + 1:]
                   if op == 1 else lines[:i] + [lines[i][: len(lines[i]) // 2]] + lines[i + 1:])
        _case(world, kind, "".join(mutated))


@pytest.mark.parametrize("kind", ["trtexec", "rtx"])
def test_bytes(world: dict[str, Path], kind: str) -> None:
    data = world[kind].read_bytes()
    for _tag, buf in mutate.byte_mutations(data, random.Random(kind), 200 if LONG else 40):
        _case(world, kind, buf)


@pytest.mark.parametrize("content", [b"x", b"\n", b"\xff\xfe\xfa" * 40, "é".encode("latin-1") * 100,
                                     b"[TensorRT] nothing to see\n" * 3])
def test_garbage_log_is_an_error_naming_the_flags(world: dict[str, Path], content: bytes) -> None:
    f = world["dir"] / "garbage.log"
    f.write_bytes(content)
    o = harness.run_main(["layers", str(f)])
    harness.check(o, file=f, allow_ok=False)
    assert o.rc == 2


def test_empty_profile_list_is_an_error(world: dict[str, Path]) -> None:
    f = world["dir"] / "empty.profile.json"
    f.write_text("[]")
    o = harness.run_main(["layers", str(f)])
    harness.check(o, file=f, allow_ok=False)
    assert "--exportProfile" in o.err and "--exportLayerInfo" in o.err
