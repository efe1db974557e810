"""Fuzz: the JSON inputs (layer information, --exportProfile, --exportTimes, sessions, report JSON)
mutated at the field level (deleted keys, wrong types, 10**400, 1e400, NaN/Infinity, nesting
100,000 deep) and at the byte level, through the commands that read them (layers, report, compare).

Hypothesis picks the (path, value) pairs with a fixed seed (``derandomize``), so CI runs the same
cases every time; ``TRTSTUDIO_FUZZ_LONG=1`` explores many more.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from fuzz import EXAMPLES, LONG, harness, mutate, seeds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.timeout(600)

SETTINGS = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("json")
    return seeds.write_world(d)


def _docs(world: dict[str, Path]) -> dict[str, object]:
    return {k: json.loads(world[k].read_text()) for k in ("layers", "profile", "times", "session", "report")}


def _argv(kind: str, f: Path, world: dict[str, Path]) -> tuple[list[str], bool]:
    """The command that reads a file of ``kind``, and whether it prints --json."""
    if kind == "layers":
        return ["layers", str(f), "--json"], True
    if kind in ("profile", "times"):
        return ["layers", str(world["layers"]), str(f), "--json"], True
    if kind == "session":
        return ["report", str(f), "--json"], True
    return ["compare", str(world["session"]), str(f), "--json"], True


def _run_case(world: dict[str, Path], kind: str, text: str | bytes, tag: str) -> harness.Outcome:
    src = world[kind]
    f = world["dir"] / f"case-{kind}{''.join(src.suffixes)}"
    if isinstance(text, str):
        f.write_text(text, encoding="utf-8", errors="surrogatepass")
    else:
        f.write_bytes(text)
    argv, json_out = _argv(kind, f, world)
    o = harness.run_main(argv)
    harness.check(o, file=f if o.rc else None, json_out=json_out)
    return o


KINDS = ("layers", "profile", "times", "session", "report")


@pytest.mark.parametrize("kind", KINDS)
def test_seed_is_read(world: dict[str, Path], kind: str) -> None:
    """The unmutated seeds are valid: exit 0 and strict JSON (the mutations start from good files)."""
    argv, _ = _argv(kind, world[kind], world)
    o = harness.run_main(argv)
    doc = harness.check(o, json_out=True)
    assert o.rc == 0 and isinstance(doc, dict)
    if kind == "layers":
        assert [lay["name"] for lay in doc["layers"]] == seeds.LAYER_NAMES
    if kind == "profile":
        assert sum(1 for lay in doc["layers"] if lay.get("time_ms")) == len(seeds.LAYER_NAMES)


@pytest.mark.parametrize("kind", KINDS)
def test_field_values(world: dict[str, Path], kind: str) -> None:
    """Every field replaced by every hostile value class (wrong type, huge, non-finite)."""
    doc = _docs(world)[kind]
    paths = mutate.paths(doc, limit=150 if LONG else 60)
    rng = random.Random(13)
    values = mutate.RAW_VALUES
    cases = [(p, v) for p in paths for v in (values if LONG else rng.sample(values, 3))]
    for path, raw in cases:
        _run_case(world, kind, mutate.replace_raw(doc, path, raw), f"{path}={raw[:20]}")


@pytest.mark.parametrize("kind", KINDS)
def test_deleted_keys(world: dict[str, Path], kind: str) -> None:
    doc = _docs(world)[kind]
    for path in mutate.paths(doc, limit=400 if LONG else 40):
        _run_case(world, kind, mutate.delete_key(doc, path), f"del {path}")


@pytest.mark.parametrize("kind", KINDS)
def test_deep_nesting(world: dict[str, Path], kind: str) -> None:
    doc = _docs(world)[kind]
    _run_case(world, kind, mutate.deep_nesting("list"), "deep list")
    _run_case(world, kind, mutate.deep_nesting("dict"), "deep dict")
    for path in mutate.paths(doc, limit=3):
        _run_case(world, kind, mutate.nest_at(doc, path), f"deep at {path}")


@pytest.mark.parametrize("kind", KINDS)
def test_bytes(world: dict[str, Path], kind: str) -> None:
    data = world[kind].read_bytes()
    for tag, buf in mutate.byte_mutations(data, random.Random(kind), 200 if LONG else 40):
        _run_case(world, kind, buf, tag)


@pytest.mark.parametrize("kind", KINDS)
def test_hypothesis_multi_field(world: dict[str, Path], kind: str) -> None:
    """Several fields at once, chosen by hypothesis (fixed seed)."""
    doc = _docs(world)[kind]
    paths = mutate.paths(doc, limit=200)

    @SETTINGS
    @given(st.lists(st.tuples(st.sampled_from(paths), st.sampled_from(mutate.RAW_VALUES)), min_size=1, max_size=4))
    def prop(edits: list[tuple[tuple, str]]) -> None:
        d = json.loads(json.dumps(doc))
        marks = {}
        for i, (path, raw) in enumerate(edits):
            try:
                node = d
                for k in path[:-1]:
                    node = node[k]
                node[path[-1]] = f"\x00M{i}\x00"
                marks[f"\x00M{i}\x00"] = raw
            except (KeyError, IndexError, TypeError):
                continue  # an earlier edit replaced a parent
        text = json.dumps(d, indent=1)
        for m, raw in marks.items():
            text = text.replace(json.dumps(m), raw)
        _run_case(world, kind, text, "multi")

    prop()
