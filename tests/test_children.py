"""Work handed to child processes of this program (trtstudio.bigdocs.children): big JSON parsed in pieces
so the window's thread never waits long for the GIL. Real child processes, real files."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from trtstudio.bigdocs import children
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


@pytest.mark.parametrize("doc", [
    [{"count": 3}] + [{"name": f"layer {i}", "timeMs": i / 7, "averageMs": 1e-9 * i} for i in range(200)],
    {"Layers": [{"Name": f"n{i}", "Inputs": [{"Name": "x", "Dimensions": [1, i]}]} for i in range(100)],
     "Bindings": ["x", "y"], "short": [1, 2], "nested": {"a": [None, True, "\u00e9\u2603"]}},
    [],
])
@pytest.mark.parametrize("indent", [None, 2])
def test_pieces_cut_here_are_the_childs(tmp_path: Path, doc: object, indent: int | None) -> None:
    """The in-process cut gives the child's pieces: the same long lists left raw, the rest parsed."""
    f = tmp_path / "doc.json"
    f.write_text(json.dumps(doc, indent=indent))
    here, child = children.cut_here(f.read_bytes()), children.read_pieces(str(f), raw=True)

    def elements(runs: children.RawRuns) -> list[bytes]:
        return [bytes(x) for x in runs.lines()]

    if isinstance(child, dict):
        assert here.keys() == child.keys()
        assert {k for k, v in here.items() if isinstance(v, children.RawLines)} == {
            k for k, v in child.items() if isinstance(v, children.RawRuns)}
        assert all(elements(v) == [bytes(x) for x in here[k]] for k, v in child.items() if isinstance(v, children.RawRuns))
    else:  # the child's runs, cut, are the elements as the document wrote them
        assert isinstance(here, children.RawLines) and isinstance(child, children.RawRuns)
        assert elements(child) == [bytes(x) for x in here]
    assert children.parse_raw(here) == children.parse_raw(child) == orjson.loads(f.read_bytes())
    assert children.cut_here(f.read_text()) is not None  # text as well as bytes


@pytest.mark.parametrize("text", ['{"Layers": [1, 2,', '"just a string"', '{"x": NaN, "Layers": []}', '[NaN]'])
def test_what_cut_here_cannot_cut_is_none(text: str) -> None:
    assert children.cut_here(text) is None


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


def _cut(monkeypatch: pytest.MonkeyPatch, where: str) -> list[str]:
    """Big documents (over 1000 bytes here) parsed responsively, cut ``where`` ("here": in this
    process, "child": by a child process); returns the list of the cuts made, as "here"/"child"."""
    monkeypatch.setattr(children, "RESPONSIVE_MIN_BYTES", 1000)
    if where == "child":
        monkeypatch.setattr(children, "CUT_HERE_MAX_BYTES", 0)
    cuts: list[str] = []
    real_pieces, real_here = children.read_pieces, children.cut_here
    monkeypatch.setattr(children, "read_pieces", lambda p, raw=False, feed=None: cuts.append("child") or real_pieces(p, raw, feed))
    monkeypatch.setattr(children, "cut_here", lambda text: cuts.append("here") or real_here(text))
    return cuts


@pytest.mark.parametrize("where", ["here", "child"])
def test_a_responsive_reader_reads_the_same_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    f = tmp_path / "big.layers.json"
    f.write_text(json.dumps(_layers_doc(300), indent=2))  # pieces over several lines
    eager = load_engine([f])
    cuts = _cut(monkeypatch, where)
    with children.responsive_parsing():
        assert children.parsing_responsively()
        pieces = load_engine([f])
    assert not children.parsing_responsively()
    assert cuts == [where]  # each record's JSON, decoded by the reader's fast path
    assert pieces.to_json() == eager.to_json()
    assert pieces.layers == eager.layers and [lay.attrs for lay in pieces.layers] == [lay.attrs for lay in eager.layers]
    assert pieces.layers[0].attrs == {"Groups": 1}


@pytest.mark.parametrize("where", ["here", "child"])
def test_pieces_a_fast_reader_refuses_are_read_the_general_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               where: str) -> None:
    """A record the fast path steps aside for (a tensor key spelt another way) is read from the same
    pieces by the general reader: one cut, the eager result."""
    doc = _layers_doc(300)
    doc["Layers"][5]["Inputs"][0]["DataType"] = "FP16"  # type: ignore[index]
    f = tmp_path / "odd.layers.json"
    f.write_text(json.dumps(doc))
    eager = load_engine([f])
    cuts = _cut(monkeypatch, where)
    with children.responsive_parsing():
        pieces = load_engine([f])
    assert cuts == [where]
    assert pieces.to_json() == eager.to_json()


@pytest.mark.parametrize(("where", "odd"), [
    *((w, o) for w in ("here", "child") for o in ("dup", "nan", "1e400")),
    # in one go msgspec keeps the exact integer; so do the pieces, cut by msgspec (the child
    # parsed the document with orjson, which reads it as a float, until the child cut it too)
    ("here", "huge"), ("child", "huge"),
])
def test_pieces_orjson_or_msgspec_refuse_read_as_in_one_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           where: str, odd: str) -> None:
    """A record with what the child's orjson refuses (an integer beyond 64 bits, NaN, a number
    beyond a double) or reads its own way (a key twice), left raw by the in-process cut: the
    result, or the error line, is the one reading the document in one go gives."""
    name = '"Name": "/blk7/conv"'
    record = {"huge": '"StreamId": 123456789012345678901234567890, ', "dup": '"Name": "first", ',
              "nan": '"StreamId": NaN, ', "1e400": '"Kernel": 1e400, '}[odd] + name
    text = json.dumps(_layers_doc(300))
    assert text.count(name) == 1
    text = text.replace(name, record)  # the 8th layer record only
    f = tmp_path / "odd.layers.json"
    f.write_text(text)
    try:
        eager: object = load_engine([f]).to_json()
    except InputError as exc:
        eager = exc.one_line()
    cuts = _cut(monkeypatch, where)
    with children.responsive_parsing():
        try:
            pieces: object = load_engine([f]).to_json()
        except InputError as exc:
            pieces = exc.one_line()
    assert pieces == eager
    assert cuts and set(cuts) == {where}  # cut where asked (what it could not read, read in one go)


@pytest.mark.parametrize(("where", "odd"), [
    *((w, o) for w in ("here", "child") for o in ("bad utf-8", "1e400")),
    ("here", "huge"), ("child", "huge"),
])
@pytest.mark.parametrize("bindings", [70, 5])  # a long list comes in pieces, a short one parsed
def test_odd_bindings_read_as_in_one_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, odd: str,
                                        bindings: int) -> None:
    """An engine I/O list with a name in bad UTF-8, a number beyond a double or an integer beyond
    64 bits: read in pieces as in one go (not a "damaged file" error)."""
    doc = _layers_doc(100)
    doc["Bindings"] = [f"io{i}" for i in range(bindings)]
    marker = '"io3"'
    value = {"bad utf-8": b'"io\xff3"', "1e400": b"1e400", "huge": b"123456789012345678901234567890"}[odd]
    text = json.dumps(doc).encode()
    assert text.count(marker.encode()) == 1
    f = tmp_path / "odd.layers.json"
    f.write_bytes(text.replace(marker.encode(), value))

    def read() -> object:
        try:
            e = load_engine([f])
            return e.to_json(), [lay.attrs for lay in e.layers]
        except InputError as exc:
            return exc.one_line()

    eager = read()
    cuts = _cut(monkeypatch, where)
    with children.responsive_parsing():
        assert read() == eager
    assert cuts and set(cuts) == {where}


@pytest.mark.parametrize("where", ["here", "child"])
def test_a_responsive_reader_still_names_the_fault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    f = tmp_path / "cut.layers.json"
    f.write_text(json.dumps(_layers_doc(300))[:-40])
    with pytest.raises(InputError) as eager:
        load_engine([f])
    cuts = _cut(monkeypatch, where)
    with children.responsive_parsing(), pytest.raises(InputError) as err:
        load_engine([f])
    assert err.value.one_line() == eager.value.one_line()
    assert "JSON at line 1, column" in err.value.one_line()
    assert cuts and set(cuts) == {where}


@pytest.mark.parametrize("where", ["here", "child"])
def test_trex_fixture_in_pieces(monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """A real TREx engine description and profile read in pieces give the same engine."""
    stem = FIXTURE / "release-11.0/tests/inputs/mobilenet.qat.onnx.engine"
    files = [Path(f"{stem}.graph.json"), Path(f"{stem}.profile.json")]
    if not all(p.is_file() for p in files):
        pytest.skip("../shared/fixtures/trt-real is not here")
    eager = load_engine(files)
    cuts = _cut(monkeypatch, where)
    monkeypatch.setattr(children, "RESPONSIVE_MIN_BYTES", 1)
    with children.responsive_parsing():
        assert load_engine(files).to_json() == eager.to_json()
    assert cuts and set(cuts) == {where}


@pytest.mark.parametrize("where", ["here", "child"])
def test_an_engine_with_many_bindings_reads_the_same_in_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               where: str) -> None:
    """A long I/O list (an LLM engine's KV-cache inputs) comes in pieces too: parsed, not taken as bytes."""
    doc = _layers_doc(300)
    doc["Bindings"] = [f"past_key_values.{i}" for i in range(200)]
    f = tmp_path / "kv.layers.json"
    f.write_text(json.dumps(doc))
    eager = load_engine([f])
    cuts = _cut(monkeypatch, where)
    with children.responsive_parsing():
        pieces = load_engine([f])
    assert [t.name for t in pieces.io_tensors] == [t.name for t in eager.io_tensors] == doc["Bindings"]
    assert pieces.to_json() == eager.to_json()
    assert cuts and set(cuts) == {where}


def _session_like(layers: int) -> dict:
    """A document nested as a session is (its layers two levels down), over PIECE_BYTES."""
    return {"schema": "s/1", "title": None, "model": {"graph": {"nodes": 3}},
            "engines": [{"paths": ["a.json"], "info": {
                "engine": {"device": "x"},
                "layers": [{"index": i, "name": f"/blk{i}/conv", "inputs": [{"name": "x", "shape": [1, 3, i]}],
                            "time_ms": {"total": i / 7, "count": None}, "note": "\u00e9\u2603"} for i in range(layers)],
                "findings": [{"kind": "k", "layer": f"/blk{i}/conv"} for i in range(layers // 3)]}}],
            "runs": [], "big": "x" * (children.PIECE_BYTES + 10), "empty": {}, "nested": [[[]]]}


def _headers(stream: bytes) -> list[list]:
    """The header lines of a write_json_tree stream, each piece's bytes skipped."""
    heads, at = [], 0
    while at < len(stream):
        end = stream.index(b"\n", at)
        head = orjson.loads(stream[at:end])
        heads.append(head)
        at = end + 1
        if head[0] in ("v", "x", "m"):
            at += head[-1] + 1
    return heads


@pytest.mark.parametrize("indent", [None, 1])
def test_a_tree_in_pieces_equals_one_parse(tmp_path: Path, indent: int | None) -> None:
    """A document nested deeper than read_pieces cuts comes back as one orjson parse gives it; the
    child cut it down to the layer records (none of its values is a big object or list)."""
    import io

    doc = _session_like(12_000)
    f = tmp_path / "doc.json"
    f.write_text(json.dumps(doc, indent=indent))
    assert f.stat().st_size > 2 * children.PIECE_BYTES
    assert children.load_json_tree(str(f)) == orjson.loads(f.read_bytes()) == doc
    out = io.BytesIO()
    assert children.write_json_tree(str(f), out) == 0
    heads = _headers(out.getvalue())
    assert ["a", "layers"] in heads and ["a", "engines"] in heads and ["o", "info"] in heads
    assert [h[1] for h in heads if h[0] == "v"] == ["big"]  # the long string: a value
    pieces = [h[1] for h in heads if h[0] in ("x", "m")]
    assert len(pieces) < 12_000 // 100 and max(pieces) < 2 * children.PIECE_BYTES  # records go in batches


@pytest.mark.parametrize("doc", [
    [i / 7 for i in range(300_000)],  # a long list of small values: a few pieces, not 300,000
    {f"k{i}": [i, str(i)] for i in range(100_000)},
    {"a": 1, "long": [{"x": i} for i in range(120_000)], "b": {"c": "d" * 200}, "z": []},
])
def test_long_lists_and_objects_of_small_members_go_in_batches(tmp_path: Path, doc: object) -> None:
    f = tmp_path / "doc.json"
    f.write_bytes(orjson.dumps(doc))
    assert f.stat().st_size > children.PIECE_BYTES
    got = children.load_json_tree(str(f))
    assert got == doc and (not isinstance(doc, dict) or list(got) == list(doc))  # the members' order too


def test_a_key_twice_keeps_the_last_value_in_the_first_place(tmp_path: Path) -> None:
    """As one orjson parse of the whole document gives it."""
    f = tmp_path / "doc.json"
    records = b",".join(b'{"x": %d}' % i for i in range(80_000))
    f.write_bytes(b'{"a": 1, "big": [' + records + b'], "a": 2, "z": {"q": 1, "q": 3}, "big": [' + records + b']}')
    assert f.stat().st_size > children.PIECE_BYTES
    got = children.load_json_tree(str(f))
    want = orjson.loads(f.read_bytes())
    assert got == want and list(got) == list(want) == ["a", "big", "z"]


@pytest.mark.parametrize("damage", ["truncated", "nan", "bad utf-8", "1e400", "small"])
def test_a_tree_that_cannot_be_cut_or_parsed_is_none(tmp_path: Path, damage: str) -> None:
    """Where the child cannot cut the document or orjson refuses a piece, None: the caller then
    parses it in one go, which says what is wrong. A document under PIECE_BYTES is one value."""
    data = json.dumps(_session_like(12_000), ensure_ascii=False).encode()
    assert "\u2603".encode() in data
    data = {"truncated": data[: len(data) // 2], "nan": data.replace(b'"count": null', b'"count": NaN', 1),
            "bad utf-8": data.replace("\u2603".encode(), b"\xff\xfe", 1),
            "1e400": data.replace(b'"count": null', b'"count": 1e400', 1), "small": b'{"a": [1, 2]}'}[damage]
    f = tmp_path / "doc.json"
    f.write_bytes(data)
    got = children.load_json_tree(str(f))
    assert got == ({"a": [1, 2]} if damage == "small" else None)


def test_a_big_session_opened_in_the_window_reads_as_on_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window's loader (responsive parsing) reads a session in pieces; what it reads equals the
    command line's one parse."""
    from trtstudio.engine.model import EngineInfo, Layer
    from trtstudio.report.model import make_session
    from trtstudio.report.session import load_session, write_session

    engine = EngineInfo(layers=[Layer(index=i, name=f"/blk{i}/conv", type="Convolution", onnx_nodes=[f"/blk{i}/conv"])
                                for i in range(8000)])
    path = write_session(tmp_path / "big.trtstudio", make_session(None, engine, None, None, None, "t"))
    assert path.stat().st_size > children.PIECE_BYTES
    once = load_session(path).to_json()
    calls: list[tuple[str, bool]] = []
    tree = children.load_json_tree

    def recorded(p: str) -> object:
        doc = tree(p)
        calls.append((p, doc is not None))
        return doc

    monkeypatch.setattr(children, "load_json_tree", recorded)
    monkeypatch.setattr(children, "RESPONSIVE_MIN_BYTES", 0)
    with children.responsive_parsing():
        pieces = load_session(path).to_json()
    assert calls == [(str(path), True)]  # read in pieces, not by the fallback
    assert pieces == once


@pytest.mark.parametrize("extra_at", [None, 0, 1900])
def test_layers_fed_run_by_run_read_as_in_one_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 extra_at: int | None) -> None:
    """The child's runs, decoded as they come (_fast.LayerFeed): the eager result, also where the
    first record with keys beyond Layer's fields comes in a later run (every layer then sourced)."""
    from trtstudio.engine.readers import _fast

    doc = _layers_doc(2000)
    for rec in doc["Layers"]:  # type: ignore[union-attr]
        del rec["Groups"]
    if extra_at is not None:
        doc["Layers"][extra_at]["Kernel"] = [3, 3]  # type: ignore[index]
    f = tmp_path / "big.layers.json"
    f.write_text(json.dumps(doc))
    eager = load_engine([f])
    feeds: list[_fast.LayerFeed] = []
    real = _fast.LayerFeed
    monkeypatch.setattr(_fast, "LayerFeed", lambda: feeds.append(real()) or feeds[-1])
    _cut(monkeypatch, "child")
    with children.responsive_parsing():
        pieces = load_engine([f])
    assert len(feeds) == 1 and feeds[0].ok and len(feeds[0].runs) > 1 and pieces.layers is feeds[0].layers
    assert pieces.to_json() == eager.to_json()
    assert [type(lay) for lay in pieces.layers] == [type(lay) for lay in eager.layers]
    assert [lay.attrs for lay in pieces.layers] == [lay.attrs for lay in eager.layers]


def _runs(items: list[object], per_run: int) -> children.RawRuns:
    runs = children.RawRuns(orjson.dumps(items[i:i + per_run]) for i in range(0, len(items), per_run))
    runs.n = len(items)
    return runs


def test_decode_runs_joins_and_counts() -> None:
    items = [{"name": f"l{i}", "timeMs": i / 4} for i in range(10)]
    runs = _runs(items, 3)
    assert len(runs) == 4
    assert children.decode_runs(runs, orjson.loads, 10) == items
    assert children.decode_runs(runs, orjson.loads) == items  # no count to check
    into: list[object] = ["before"]
    assert children.decode_runs(runs[:1], orjson.loads, 3, into) is into and into == ["before", *items[:3]]
    assert [bytes(x) for x in runs.lines()] == [orjson.dumps(x) for x in items]
    with pytest.raises(ValueError, match=r"^10 elements where the child said 11$"):
        children.decode_runs(runs, orjson.loads, 11)
    with pytest.raises(orjson.JSONDecodeError):  # garbage passes through as the decoder raises it
        children.decode_runs([b"[1,2", *runs], orjson.loads, 10)


def test_runs_cut_short_step_aside_in_every_reader() -> None:
    """One run missing (a child cut off): each reader of runs says None, none returns a short list."""
    from trtstudio.engine.readers import _fast

    items = [{"name": f"l{i}", "timeMs": i / 4} for i in range(10)]
    short = _runs(items, 3)
    short.pop()
    with pytest.raises(ValueError, match=r"^9 elements where the child said 10$"):
        short.lines()
    assert children.parse_raw_or_none(short) is None
    assert children.parse_raw_or_none({"Layers": short}) is None
    assert _fast.read_profile_lines(short) is None
    layers = _runs(_layers_doc(10)["Layers"], 3)
    doc = {"Layers": layers, "Bindings": children.RawValue(b'["t0", "t10"]')}
    assert _fast.read_layer_lines(doc) is not None  # whole: read
    layers.pop()
    assert _fast.read_layer_lines(doc) is None
    names = _runs([f"t{i}" for i in range(10)], 4)
    names.pop()
    whole = {"Layers": _runs(_layers_doc(10)["Layers"], 3), "Bindings": names}
    assert _fast.read_layer_lines(whole) is None  # another long list cut short
