"""Work handed to child processes of this program (trtstudio.children): big JSON parsed in pieces
so the window's thread never waits long for the GIL. Real child processes, real files."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from trtstudio import children
from trtstudio.engine.load import load_engine
from trtstudio.errors import InputError

FIXTURE = Path(__file__).resolve().parent.parent.parent / "shared/fixtures/trt-real/NVIDIA_TensorRT_trex"


@pytest.mark.parametrize("doc", [
    [{"count": 3}] + [{"name": f"layer {i}", "timeMs": i / 7, "averageMs": 1e-9 * i} for i in range(200)],
    {"Layers": [{"Name": f"n{i}", "Inputs": [{"Name": "x", "Dimensions": [1, i]}]} for i in range(100)],
     "Bindings": ["x", "y"], "short": [1, 2], "nested": {"a": [None, True, "\u00e9\u2603"]}},
    "just a string",
    [],
])
def test_pieces_equal_one_parse(tmp_path: Path, doc: object) -> None:
    f = tmp_path / "doc.json"
    f.write_bytes(orjson.dumps(doc))
    assert children.load_json_in_pieces(str(f)) == orjson.loads(f.read_bytes())


@pytest.mark.parametrize("text", ['{"Layers": [1, 2,', '[NaN, 1]', '{"x": 1e400}'])
def test_what_orjson_refuses_comes_back_as_none(tmp_path: Path, text: str) -> None:
    """Truncated JSON, NaN literals, numbers beyond a double: the child says no (the reader then
    parses in-process and reports the exact problem, or the standard library's reading)."""
    f = tmp_path / "bad.json"
    f.write_text(text)
    assert children.load_json_in_pieces(str(f)) is None


def _layers_doc(n: int) -> dict[str, object]:
    return {"Layers": [{"Name": f"/blk{i}/conv", "LayerType": "CaskConvolution", "ParameterType": "Convolution",
                        "Inputs": [{"Name": f"t{i}", "Dimensions": [1, 64, 8, 8],
                                    "Format/Datatype": "Channel major FP16 format where channel % 8 == 0"}],
                        "Outputs": [{"Name": f"t{i + 1}", "Dimensions": [1, 64, 8, 8],
                                     "Format/Datatype": "Row major linear FP32"}],
                        "TacticName": "sm80_xmma_fprop_implicit_gemm", "Groups": 1} for i in range(n)],
            "Bindings": ["t0", f"t{n}"]}


def test_a_responsive_reader_reads_the_same_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "big.layers.json"
    f.write_text(json.dumps(_layers_doc(300)))
    eager = load_engine([f])
    monkeypatch.setattr(children, "RESPONSIVE_MIN_BYTES", 1000)
    calls: list[tuple[str, bool]] = []
    real = children.read_pieces
    monkeypatch.setattr(children, "read_pieces", lambda p, raw=False: calls.append((p, raw)) or real(p, raw))
    with children.responsive_parsing():
        assert children.parsing_responsively()
        pieces = load_engine([f])
    assert not children.parsing_responsively()
    assert calls == [(str(f), True)]  # each record's JSON, decoded by the reader's fast path
    assert pieces.to_json() == eager.to_json()
    assert pieces.layers == eager.layers and [lay.attrs for lay in pieces.layers] == [lay.attrs for lay in eager.layers]
    assert pieces.layers[0].attrs == {"Groups": 1}


def test_pieces_a_fast_reader_refuses_are_read_the_general_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record the fast path steps aside for (a tensor key spelt another way) is read from the same
    pieces by the general reader: one child, the eager result."""
    doc = _layers_doc(300)
    doc["Layers"][5]["Inputs"][0]["DataType"] = "FP16"  # type: ignore[index]
    f = tmp_path / "odd.layers.json"
    f.write_text(json.dumps(doc))
    eager = load_engine([f])
    monkeypatch.setattr(children, "RESPONSIVE_MIN_BYTES", 1000)
    calls: list[str] = []
    real = children.read_pieces
    monkeypatch.setattr(children, "read_pieces", lambda p, raw=False: calls.append(p) or real(p, raw))
    with children.responsive_parsing():
        pieces = load_engine([f])
    assert calls == [str(f)]
    assert pieces.to_json() == eager.to_json()


def test_a_responsive_reader_still_names_the_fault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "cut.layers.json"
    f.write_text(json.dumps(_layers_doc(300))[:-40])
    with pytest.raises(InputError) as eager:
        load_engine([f])
    monkeypatch.setattr(children, "RESPONSIVE_MIN_BYTES", 1000)
    with children.responsive_parsing(), pytest.raises(InputError) as err:
        load_engine([f])
    assert err.value.one_line() == eager.value.one_line()
    assert "JSON at line 1, column" in err.value.one_line()


def test_trex_fixture_in_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real TREx engine description and profile read in pieces give the same engine."""
    stem = FIXTURE / "release-11.0/tests/inputs/mobilenet.qat.onnx.engine"
    files = [Path(f"{stem}.graph.json"), Path(f"{stem}.profile.json")]
    if not all(p.is_file() for p in files):
        pytest.skip("../shared/fixtures/trt-real is not here")
    eager = load_engine(files)
    monkeypatch.setattr(children, "RESPONSIVE_MIN_BYTES", 1)
    with children.responsive_parsing():
        assert load_engine(files).to_json() == eager.to_json()


def test_an_engine_with_many_bindings_reads_the_same_in_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long I/O list (an LLM engine's KV-cache inputs) comes in pieces too: parsed, not taken as bytes."""
    doc = _layers_doc(300)
    doc["Bindings"] = [f"past_key_values.{i}" for i in range(200)]
    f = tmp_path / "kv.layers.json"
    f.write_text(json.dumps(doc))
    eager = load_engine([f])
    monkeypatch.setattr(children, "RESPONSIVE_MIN_BYTES", 1000)
    with children.responsive_parsing():
        pieces = load_engine([f])
    assert [t.name for t in pieces.io_tensors] == [t.name for t in eager.io_tensors] == doc["Bindings"]
    assert pieces.to_json() == eager.to_json()
