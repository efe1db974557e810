"""The readers' fast path (msgspec, :mod:`trtstudio.engine.readers._fast`) gives what the general
path gives, or steps aside: on every real TensorRT output in ../shared/fixtures/trt-real, on
generated documents (hypothesis), and for the lazily parsed ``attrs`` of a SourcedLayer."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trtstudio import jsonio
from trtstudio.bigdocs import children
from trtstudio.engine.model import Layer, SourcedLayer, count_non_finite_layers
from trtstudio.engine.readers import _fast, profile_json, read_file
from trtstudio.engine.readers._common import info_from_layer_doc
from trtstudio.errors import InputError
from trtstudio.jsonio import count_non_finite

FIX = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "trt-real"


def _json_files(kind: str) -> list[Path]:
    if not FIX.is_dir():
        return []
    out = []
    for p in sorted(FIX.rglob("*.json")):
        try:
            doc = json.loads(p.read_text(errors="replace"))
        except ValueError:
            continue
        if kind == "layers" and isinstance(doc, dict) and isinstance(doc.get("Layers"), list):
            out.append(p)
        elif kind == "profile" and isinstance(doc, list) and doc and isinstance(doc[0], dict) and "count" in doc[0]:
            out.append(p)
    return out


def _general(text: str) -> Any:
    try:
        return info_from_layer_doc(Path("x.json"), jsonio.loads(text))
    except (InputError, TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
        return exc


def _same_info(fast: Any, general: Any) -> None:
    assert not isinstance(general, Exception), f"the general path refused what the fast path read: {general}"
    assert len(fast.layers) == len(general.layers)
    for a, b in zip(fast.layers, general.layers, strict=True):
        assert a == b
        assert list(a.attrs) == list(b.attrs)  # the same keys in the same order
    assert fast.io_tensors == general.io_tensors
    assert fast.build_settings == general.build_settings
    assert fast.detailed == general.detailed and fast.warnings == general.warnings


LAYER_FILES = _json_files("layers")
PROFILE_FILES = _json_files("profile")


def _read_fast_where_possible(files: list[Path], fast_read: Any, check: Any) -> int:
    """Read each file by the fast path; ``check(path, text, result)`` where it did; how many did."""
    n = 0
    for p in files:
        text = p.read_text(errors="replace")
        fast = fast_read(text)
        if fast is not None:
            n += 1
            check(p, text, fast)
    return n


@pytest.mark.skipif(not LAYER_FILES, reason="../shared/fixtures/trt-real not present")
def test_real_layer_documents_read_the_same_by_both_paths() -> None:
    n = _read_fast_where_possible(LAYER_FILES, _fast.read_layer_doc, lambda p, text, fast: _same_info(fast, _general(text)))
    # the detailed documents (all but names-only ones) take the fast path; the fixtures hold 25
    assert n >= len(LAYER_FILES) // 2, f"only {n} of {len(LAYER_FILES)} read fast"


def _same_profile(path: Path, text: str, fast: Any) -> None:
    general = profile_json.read_general(path, text)
    assert fast.times == general.times and fast.layers == general.layers == []
    assert fast.build_settings == general.build_settings


@pytest.mark.skipif(not PROFILE_FILES, reason="../shared/fixtures/trt-real not present")
def test_real_profiles_read_the_same_by_both_paths() -> None:
    assert _read_fast_where_possible(PROFILE_FILES, _fast.read_profile, _same_profile) == len(PROFILE_FILES)


CONV = {
    "Name": "conv1 + relu1", "LayerType": "CaskConvolution", "ParameterType": "Convolution",
    "Inputs": [{"Name": "x", "Location": "Device", "Dimensions": [1, 3, 224, 224],
                "Format/Datatype": "Row major linear FP32"}],
    "Outputs": [{"Name": "y", "Location": "Device", "Dimensions": [1, 64, 112, 112],
                 "Format/Datatype": "Channel major FP16 format where channel % 8 == 0"}],
    "Kernel": [7, 7], "Groups": 1, "Weights": {"Type": "Half", "Count": 9408},
    "TacticName": "sm80_xmma_fprop_implicit_gemm", "TacticValue": "0x1", "StreamId": 0,
    "Metadata": "[ONNX Layer: conv1]\x1e[ONNX Layer: relu1]",
}


def test_extra_keys_are_parsed_into_attrs_when_first_read() -> None:
    cp = {"Name": "Reformatting CopyNode for Input Tensor 0 to conv2", "LayerType": "NoOp", "Inputs": [],
          "Outputs": []}
    text = json.dumps({"Layers": [CONV, cp], "Bindings": ["x", "y"]})
    info = _fast.read_layer_doc(text)
    assert info is not None
    conv, copy_node = info.layers
    assert isinstance(conv, SourcedLayer) and conv.source is not None
    assert conv.own_attrs() == {} and conv.source is not None  # reading our own keys parses nothing
    assert copy_node.own_attrs() == {"reformat": True}
    assert conv.attrs == {"Kernel": [7, 7], "Groups": 1, "Weights": {"Type": "Half", "Count": 9408}}
    assert conv.source is None  # parsed once
    assert conv.inputs[0].dtype == "FP32" and conv.outputs[0].dtype == "FP16"
    assert conv.inputs[0].location == "Device"
    assert [t.name for t in info.io_tensors] == ["x", "y"]
    _same_info(info, _general(text))


def test_groups_are_read_without_cutting_the_records_and_the_records_cut_once() -> None:
    depthwise = {**CONV, "Name": "dw", "Groups": 64}
    plain = {k: v for k, v in CONV.items() if k != "Groups"} | {"Name": "no groups"}
    info = _fast.read_layer_doc(json.dumps({"Layers": [CONV, depthwise, plain]}))
    assert info is not None
    conv, dw, nog = info.layers
    records = conv.source.records
    assert dw.source.records is records and records._raws is None  # nothing cut yet
    assert (conv.groups(), dw.groups(), nog.groups()) == (1, 64, None)
    assert records._raws is None and conv.source is not None  # Groups came with the first decode
    assert dw.attrs["Groups"] == 64 and records._raws is not None and len(records._raws) == 3  # one cut
    assert dw.source is None and conv.source is not None and nog.attrs == {"Kernel": [7, 7], "Weights": CONV["Weights"]}
    assert [lay.groups() for lay in info.layers] == [1, 64, None]  # from attrs once parsed
    twin = conv.shallow_copy()
    assert twin.groups() == 1 and twin.attrs == conv.attrs == {"Kernel": [7, 7], "Groups": 1,
                                                               "Weights": CONV["Weights"]}


def test_groups_beyond_64_bits_are_what_attrs_says_and_the_findings_do_not_depend_on_reading_attrs() -> None:
    from trtstudio.engine.diagnose import diagnose

    g = 2**64  # msgspec keeps it exact, orjson (which parses the record) reads a float
    conv = {"Name": "dw", "LayerType": "CaskConvolution", "ParameterType": "Convolution",
            "Inputs": [{"Name": "x", "Dimensions": [1, g, 8, 8], "Format/Datatype": "Channel major FP16 format"}],
            "Outputs": [{"Name": "y", "Dimensions": [1, g, 8, 8], "Format/Datatype": "Channel major FP16 format"}],
            "TacticName": "maxwell_scudnn_128x64_relu_small_nn_v1", "Groups": g, "Kernel": [3, 3]}
    text = json.dumps({"Layers": [conv, {**conv, "Name": "small", "Groups": -(2**63)}]})
    cold, warm = _fast.read_layer_doc(text), _fast.read_layer_doc(text)
    assert cold is not None and warm is not None
    assert [lay.attrs["Groups"] for lay in warm.layers] == [float(g), -(2**63)]  # parsed first
    for lay, parsed in zip(cold.layers, warm.layers, strict=True):
        assert lay.groups() == parsed.groups() == parsed.attrs["Groups"]
        assert type(lay.groups()) is type(parsed.attrs["Groups"])
    assert [(f.kind, f.layer) for f in diagnose(cold)] == [(f.kind, f.layer) for f in diagnose(warm)]


def test_records_cut_deep_in_a_stack_as_at_the_read() -> None:
    n = 900  # nesting that decodes at the read's depth, not 200 frames deeper (msgspec counts from the caller)
    info = _fast.read_layer_doc('{"Layers": [{"Name": "c", "Kernel": %s}]}' % ("[" * n + "]" * n))
    assert info is not None
    lay = info.layers[0]

    def at_depth(k: int) -> Any:
        return at_depth(k - 1) if k else lay.attrs

    kernel = at_depth(200)["Kernel"]
    for _ in range(n - 1):
        kernel = kernel[0]
    assert kernel == [] and lay.source is None


def test_copies_share_attrs_and_pickles_are_plain_layers() -> None:
    info = _fast.read_layer_doc(json.dumps({"Layers": [CONV]}))
    assert info is not None
    lay = info.layers[0]
    twin = lay.shallow_copy()
    assert isinstance(twin, SourcedLayer)
    twin.own_attrs()["profile"] = 2  # what assign_profiles writes
    assert lay.attrs["profile"] == 2 and list(lay.attrs) == ["Kernel", "Groups", "Weights", "profile"]
    assert twin.attrs == lay.attrs
    for other in (pickle.loads(pickle.dumps(lay)), copy.copy(lay), copy.deepcopy(lay)):
        assert type(other) is Layer
        assert other == lay and lay == other
    changed = copy.copy(lay)
    changed.name = "other"
    assert changed != lay


def test_a_document_without_extra_keys_makes_plain_layers() -> None:
    rec = {k: v for k, v in CONV.items() if k not in ("Kernel", "Groups", "Weights")}
    info = _fast.read_layer_doc(json.dumps({"Layers": [rec]}))
    assert info is not None and type(info.layers[0]) is Layer and info.layers[0].attrs == {}


@pytest.mark.parametrize("doc", [
    {"Layers": ["conv1", "relu1"]},  # names only
    {"Layers": [{"LayerType": "Convolution"}]},  # no Name
    {"Layers": [{"Name": 3}]},  # a Name that is not a string
    {"Layers": [{"Name": "a", "Inputs": [{"Name": "x", "Type": "Half"}]}]},  # another tensor spelling
    {"Layers": [{"Name": "a", "Inputs": ["x"]}]},  # tensors by name
    {"Layers": [{"Name": "a", "Inputs": [{"Name": "x", "Dimensions": [1.5]}]}]},
    {"Layers": {"Name": "a"}},
    [],
])
def test_other_shapes_step_aside(doc: Any) -> None:
    text = json.dumps(doc)
    assert _fast.read_layer_doc(text) is None


def test_nan_literals_and_bad_profiles_step_aside() -> None:
    assert _fast.read_layer_doc('{"Layers": [{"Name": "a", "Inputs": [], "X": NaN}]}') is None
    assert _fast.read_profile('[{"count": 5}, {"name": "a", "timeMs": NaN}]') is None
    assert _fast.read_profile('[{"count": 5}, {"timeMs": 1.0}]') is None
    assert _fast.read_profile('[{"count": 5}, "a"]') is None


def test_the_window_parses_big_documents_in_pieces_not_fast(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    path = tmp_path / "e.layers.json"
    path.write_text(json.dumps({"Layers": [CONV] * 50}))
    calls: list[int] = []
    real = _fast.read_layer_doc
    monkeypatch.setattr(_fast, "read_layer_doc", lambda text: calls.append(1) or real(text))
    read_file(path)
    assert calls == [1]
    monkeypatch.setattr(children, "RESPONSIVE_MIN_BYTES", 100)
    with children.responsive_parsing():
        info = read_file(path).info
    assert calls == [1]  # the pieces path read it
    assert len(info.layers) == 50 and info.layers[0].attrs["Kernel"] == [7, 7]


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
# Integers stay within 64 bits: beyond that orjson (the general path) reads a float, msgspec the exact int.
_value = st.one_of(st.none(), st.booleans(), st.integers(-5, 2**63 - 1), st.floats(allow_nan=False, allow_infinity=False),
                   _text, st.lists(st.integers(-1, 64), max_size=4))
_tensor = st.one_of(
    _text,
    st.dictionaries(st.sampled_from(["Name", "Dimensions", "Format/Datatype", "Location", "Format", "Type",
                                     "DataType", "Shape", "Other"]),
                    st.one_of(_value, st.sampled_from(["Row major linear FP32", "Half", "Int8", "Channel major FP16"])),
                    max_size=5),
)
_layer = st.one_of(
    _text,
    st.fixed_dictionaries(
        {"Name": st.one_of(_text, st.sampled_from(["Reformatting CopyNode for x", "PWN(a, b)", "{ForeignNode[a...b]}",
                                                    "conv [profile 1]"]))},
        optional={"LayerType": st.one_of(st.none(), _text, st.sampled_from(["Reformat", "CaskConvolution"])),
                  "ParameterType": _value, "Inputs": st.one_of(st.none(), st.lists(_tensor, max_size=3)),
                  "Outputs": st.lists(_tensor, max_size=3), "TacticName": _value, "TacticValue": _value,
                  "StreamId": _value, "Metadata": _value, "Origin": _value, "Kernel": _value, "Groups": _value},
    ),
)


_good_tensor = st.fixed_dictionaries(
    {"Name": _text},
    optional={"Dimensions": st.lists(st.integers(-1, 64), max_size=4), "Location": st.sampled_from(["Device", "Host"]),
              "Format/Datatype": st.sampled_from(["Row major linear FP32", "Channel major FP16 format", "Int8"])},
)
_good_layer = st.fixed_dictionaries(
    {"Name": st.one_of(_text, st.sampled_from(["Reformatting CopyNode for x", "PWN(a, b)", "conv [profile 1]"]))},
    optional={"LayerType": st.sampled_from(["Reformat", "CaskConvolution", "NoOp"]), "ParameterType": _value,
              "Inputs": st.lists(_good_tensor, max_size=3), "Outputs": st.lists(_good_tensor, max_size=3),
              "TacticName": _value, "TacticValue": _value, "StreamId": _value, "Metadata": _value,
              "Kernel": _value, "Groups": _value},
)
# a document: layers of the usual shape, with at most one odd layer somewhere
_document = st.builds(
    lambda layers, odd, at, bindings: {"Layers": layers[:at] + odd + layers[at:], **bindings},
    st.lists(_good_layer, max_size=5),
    st.one_of(st.just([]), st.lists(_layer, max_size=1)),
    st.integers(0, 5),
    st.one_of(st.just({}), st.fixed_dictionaries({"Bindings": st.lists(_text, max_size=3)})),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_document)
def test_generated_documents_read_the_same_or_step_aside(doc: dict[str, Any]) -> None:
    text = json.dumps(doc)
    fast = _fast.read_layer_doc(text)
    if fast is not None:
        _same_info(fast, _general(text))
        # what the layers command then leaves uncounted: msgspec refused every NaN and infinity
        assert fast.finite and count_non_finite_layers(fast.layers) == 0
        assert count_non_finite([lay.to_json() for lay in fast.layers]) == 0


_number = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-5, 2**63 - 1))
_timing = st.one_of(_number, _value)
_named = st.fixed_dictionaries({"name": st.one_of(_text, _value)},
                               optional={"timeMs": _number, "averageMs": _number, "medianMs": _number,
                                         "percentage": _number, "other": _value})
# a profile: a count and named records, with at most one odd record (or odd value) somewhere
_profile = st.builds(
    lambda count, recs, odd, at: ([{"count": count}] if count is not None else []) + recs[:at] + odd + recs[at:],
    st.one_of(st.none(), _timing),
    st.lists(_named, max_size=6),
    st.one_of(st.just([]), st.lists(st.one_of(_value, st.fixed_dictionaries({"timeMs": _timing}),
                                              st.fixed_dictionaries({"name": _text, "medianMs": _timing})),
                                    max_size=1)),
    st.integers(0, 6),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_profile)
def test_generated_profiles_read_the_same_or_step_aside(doc: list[Any]) -> None:
    text = json.dumps(doc)
    fast = _fast.read_profile(text)
    if fast is not None:
        _same_profile(Path("p.profile.json"), text, fast)
        assert fast.finite and count_non_finite([t.to_json() for _, t in fast.times]) == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=3), max_size=8, unique=True), st.lists(st.booleans(), max_size=8))
def test_profiles_in_layer_order_match_as_by_name(names: list[str], timed_flags: list[bool]) -> None:
    """match_times' shortcut for a profile listing the layers' own unique names in order gives what
    matching each name gives."""
    from trtstudio.engine.load import _match_by_name, match_times
    from trtstudio.engine.model import LayerTime

    def engine() -> tuple[list[Layer], list[tuple[str, LayerTime | None]]]:
        layers = [Layer(i, n) for i, n in enumerate(names)]
        timed = [(n, LayerTime(float(i)) if i < len(timed_flags) and timed_flags[i] else None)
                 for i, n in enumerate(names)]
        return layers, timed

    a_layers, a_timed = engine()
    b_layers, b_timed = engine()
    assert match_times(a_layers, a_timed) == _match_by_name(b_layers, b_timed)
    assert [lay.time for lay in a_layers] == [lay.time for lay in b_layers]


def test_copies_read_from_several_threads_all_see_the_whole_record() -> None:
    import threading

    info = _fast.read_layer_doc(json.dumps({"Layers": [CONV] * 200}))
    assert info is not None
    copies = [[lay.shallow_copy() for lay in info.layers] for _ in range(4)]
    seen: list[bool] = []
    barrier = threading.Barrier(4)

    def read(layers: list[Layer]) -> None:
        barrier.wait()
        seen.extend(lay.attrs.get("Groups") == 1 and list(lay.attrs)[:3] == ["Kernel", "Groups", "Weights"]
                    for lay in layers)

    threads = [threading.Thread(target=read, args=(c,)) for c in copies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 800 and all(seen)
    assert all(lay.source is None for lay in info.layers) or all(lay.attrs["Groups"] == 1 for lay in info.layers)
