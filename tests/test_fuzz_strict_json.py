"""Strict JSON everywhere: NaN/Infinity/1e400/10**400 in the inputs never reach an output as bare
NaN/Infinity (JavaScript's JSON.parse and jq refuse them); they become null and a warning says so."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fuzz import harness, seeds
from hypothesis import given
from hypothesis import strategies as st

from trtstudio import jsonio


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("strict")
    return seeds.write_world(d)


def test_strict_replaces_and_counts() -> None:
    doc = {"a": math.nan, "b": [math.inf, -math.inf, 1.5, np.float32("nan"), np.arange(2)], 3: (np.int64(4),)}
    clean, n = jsonio.strict(doc)
    assert n == 4
    assert clean == {"a": None, "b": [None, None, 1.5, None, [0, 1]], "3": [4]}
    text = jsonio.dumps_text(doc, warn=False)
    assert harness.strict_loads(text) == clean
    with pytest.raises(ValueError):
        jsonio.loads_strict('{"x": NaN}')


def _hostile_profile(world: dict[str, Path]) -> Path:
    text = world["profile"].read_text()
    doc = json.loads(text)
    raw = json.dumps(doc, indent=1)
    for i, value in enumerate(["NaN", "Infinity", "1e400", str(10**400), "-Infinity"]):
        raw = raw.replace(json.dumps(doc[i + 1]["averageMs"]), value, 1)
    f = world["dir"] / "hostile.profile.json"
    f.write_text(raw)
    return f


def test_layers_json_is_strict_with_a_warning(world: dict[str, Path]) -> None:
    f = _hostile_profile(world)
    o = harness.run_main(["layers", str(world["layers"]), str(f), "--json"])
    doc = harness.check(o, json_out=True)
    assert o.rc == 0 and isinstance(doc, dict)
    assert "non-finite" in o.err and "written as null" in o.err
    averages = [lay["time_ms"]["average"] for lay in doc["layers"] if lay.get("time_ms")]
    assert averages.count(None) == 5
    from trtstudio.engine.load import load_engine

    # the profile was read the general way: its numbers are counted, not taken as finite
    assert not load_engine([world["layers"], f]).finite and load_engine([world["layers"], world["profile"]]).finite
    # files that give no layers or layer times (--exportTimes, a trtexec log's summary) do not matter
    both = load_engine([world["layers"], world["profile"], world["times"], world["trtexec"]])
    assert both.finite and both.latency_ms and any(lay.time for lay in both.layers)
    assert not load_engine([f]).finite  # an engine known from a general-path profile alone


def test_report_session_and_json_files_are_strict(world: dict[str, Path], tmp_path: Path) -> None:
    f = _hostile_profile(world)
    out, sess = tmp_path / "r.json", tmp_path / "s.trtstudio"
    o = harness.run_main(["report", "--engine", str(world["layers"]), str(f), "--onnx", str(world["model"]),
                          "-o", str(out), "--save-session", str(sess), "--json"])
    harness.check(o, json_out=True)
    assert o.rc == 0
    for p in (out, sess):
        harness.strict_loads(p.read_text())
    # and the session reads back into the same strict report
    o2 = harness.run_main(["report", str(sess), "--json"])
    harness.check(o2, json_out=True)


def test_session_with_infinity_and_deep_nesting(world: dict[str, Path], tmp_path: Path) -> None:
    doc = json.loads(world["session"].read_text())
    doc["engines"][0]["info"]["layers"][0]["index"] = "__INF__"
    f = tmp_path / "inf.trtstudio"
    f.write_text(json.dumps(doc).replace('"__INF__"', "Infinity"))
    harness.check(harness.run_main(["report", str(f), "--json"]), file=f, json_out=True)
    deep = tmp_path / "deep.trtstudio"
    deep.write_text('{"schema": "trtstudio.session/1", "runs": ' + "[" * 100_000 + "]" * 100_000 + "}")
    o = harness.run_main(["report", str(deep), "--json"])
    harness.check(o, file=deep, allow_ok=False)


def test_inspect_and_profile_json_are_strict(world: dict[str, Path]) -> None:
    harness.check(harness.run_main(["inspect", str(world["model"]), "--json"]), json_out=True)
    o = harness.run_main(["profile", str(world["model"]), "--backend", "ort", "--iterations", "5", "--warmup", "1",
                          "--json"])
    doc = harness.check(o, json_out=True)
    assert o.rc == 0 and doc["latency_ms"]["median"] > 0  # type: ignore[index]


def test_layer_doc_count_equals_the_generic_count() -> None:
    """The layers command counts non-finite numbers by walking each layer's known fields; on any
    engine (hostile times and shapes included) it finds exactly what the generic walk finds."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from trtstudio.engine.model import (
        EngineInfo,
        Layer,
        LayerTime,
        TensorDesc,
        count_non_finite_doc,
        count_non_finite_layers,
    )
    from trtstudio.jsonio import count_non_finite

    num = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5))
    anyf = st.floats(allow_nan=True, allow_infinity=True)
    dim = st.one_of(st.integers(-1, 64), st.text(max_size=3), anyf, st.lists(anyf, max_size=2))  # a list: damaged
    raw = st.one_of(st.none(), st.text(max_size=3), anyf, st.lists(st.one_of(anyf, st.text(max_size=2)), max_size=2))
    tensor = st.builds(TensorDesc, st.text(max_size=4), st.one_of(st.none(), st.lists(dim, max_size=4)))
    layer = st.builds(
        Layer, st.integers(0, 9), st.text(max_size=5), parameter_type=raw, origin=raw,
        inputs=st.lists(tensor, max_size=2), outputs=st.lists(tensor, max_size=2), mapping_confidence=anyf,
        time=st.one_of(st.none(), st.builds(LayerTime, num, num, num, num)))

    @settings(max_examples=200, deadline=None)
    @given(st.lists(layer, max_size=6), st.dictionaries(st.text(max_size=3), num, max_size=3))
    def check(layers: list[Layer], latency: dict[str, float]) -> None:
        doc = EngineInfo(layers=layers, latency_ms=latency).to_json()
        assert count_non_finite_doc(doc) == count_non_finite(doc)
        assert count_non_finite_layers(layers) == count_non_finite(doc["layers"])

    check()


def test_findings_count_equals_the_generic_count() -> None:
    """Findings' NaN/infinite numbers, counted by their fields' types, are those the generic walk
    finds in their JSON, numbers where text or an index belongs included."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from trtstudio.engine.model import Finding, count_non_finite_findings
    from trtstudio.jsonio import count_non_finite

    value = st.one_of(st.none(), st.text(max_size=3), st.integers(-5, 5),
                      st.floats(allow_nan=True, allow_infinity=True))
    finding = st.builds(Finding, st.text(max_size=4), value, value, value, layer=value, layer_index=value,
                        nodes=st.lists(st.one_of(value, st.lists(value, max_size=2)), max_size=3))

    @settings(max_examples=300, deadline=None)
    @given(st.lists(finding, max_size=6))
    def check(findings: list[Finding]) -> None:
        assert count_non_finite_findings(findings) == count_non_finite([f.to_json() for f in findings])

    check()


def test_what_orjson_cannot_encode_is_still_compact_json() -> None:
    """An integer beyond 64 bits or a lone surrogate (from a damaged file) sends the document to
    the standard library: the output is compact as orjson's is (no spaces after separators),
    indented only when asked, and strict JSON."""
    from trtstudio.jsonio import dumps

    doc = {"a": 2**70, "b": [1, "x\udcff", float("nan")], "c": {"d": "é"}}
    out = dumps(doc, check_finite=False)
    assert out == b'{"a":1180591620717411303424,"b":[1,"x\\udcff",null],"c":{"d":"\\u00e9"}}\n'
    assert json.loads(out) == {"a": 2**70, "b": [1, "x\udcff", None], "c": {"d": "é"}}
    assert dumps(doc, indent=3, check_finite=False).startswith(b'{\n   "a": 1180591620717411303424,\n')


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5),
    max_leaves=30)


@given(_JSONISH)
def test_a_document_encodes_the_same_in_the_window_as_on_the_command_line(doc: Any) -> None:
    """encode_document: orjson on the command line; in a responsive thread (the window's workers)
    the standard library, which lets the window's thread in. The same strict JSON document either
    way, with the same count of NaN/infinities written as null."""
    from trtstudio.bigdocs.children import encode_document, responsive_parsing
    from trtstudio.jsonio import count_non_finite

    fast, n_fast = encode_document({"doc": doc})
    with responsive_parsing():
        slow, n_slow = encode_document({"doc": doc})
    assert json.loads(fast, parse_constant=_refuse) == json.loads(slow, parse_constant=_refuse)
    assert n_fast == n_slow == count_non_finite(doc)


def test_numpy_non_finite_values_are_counted_on_the_command_line_as_in_the_window() -> None:
    from trtstudio.bigdocs.children import encode_document, responsive_parsing

    doc = {"a": np.float64("nan"), "b": [np.float32("inf")], "c": np.array([1.0, np.nan]), "d": np.array([1, 2])}
    fast, n_fast = encode_document(doc)
    with responsive_parsing():
        slow, n_slow = encode_document(doc)
    assert n_fast == n_slow == 3 and json.loads(fast) == json.loads(slow) == {"a": None, "b": [None], "c": [1.0, None],
                                                                              "d": [1, 2]}


def _refuse(name: str) -> Any:
    raise AssertionError(f"{name} in strict JSON")
