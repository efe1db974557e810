"""The inspector and profile JSON of its usual shape, decoded in one C pass (msgspec).

The general readers (:func:`._common.info_from_layer_doc`, :mod:`.profile_json`) parse a document
into dicts and then build a Layer from each. Here msgspec decodes straight into structs: a
layer's tensors into :class:`~trtstudio.engine.model.TensorDesc` itself, its other fields into a
small struct that a Layer is then made from.

Keys beyond the ones Layer has fields for (a convolution's Kernel, Stride, Weights...) go to
``Layer.attrs``. Most documents that have them have them on every convolution, and nothing reads
them while an engine opens: such a document is decoded a second time into each record's raw
bytes, and :class:`~trtstudio.engine.model.SourcedLayer` parses them into ``attrs`` when someone
asks. A document without them (the first decode refuses unknown keys) needs neither.

Each function returns None where the document is not of that shape (a string where an object
was expected, a layer without a Name, a tensor key spelt another way, NaN literals, bad UTF-8...):
the caller then reads it the general way, which gives the same result or the error line for the
user. The result is the one the general reader gives, field for field (``tests/test_engine_fast.py``
and ``benchmarks/engine_identity.py`` compare them).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from trtstudio.engine.model import (
    DocRecord,
    DocRecords,
    EngineInfo,
    Layer,
    LayerTime,
    SourcedLayer,
    TensorDesc,
)
from trtstudio.engine.readers._common import (
    _format_info,
    assign_profiles,
    guess_type,
    io_from_json,
)

_UNSET: Any = msgspec.UNSET


class _Layer(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    Name: str
    LayerType: Any = None
    ParameterType: Any = None
    Inputs: list[TensorDesc] | None = None
    Outputs: list[TensorDesc] | None = None
    TacticName: Any = None
    TacticValue: Any = None
    StreamId: Any = None
    Metadata: Any = None
    Origin: Any = None


class _LayerWithMore(_Layer, forbid_unknown_fields=False, gc=False):
    """A record with keys beyond these (they stay in its raw bytes, but for Groups, which the
    rules read: see :meth:`~trtstudio.engine.model.Layer.groups`)."""

    Groups: Any = _UNSET
    Weights: Any = _UNSET  # a constant's {"Type", "Count"}: summed by engine.summary.layer_memory
    Bias: Any = _UNSET


class _Doc(msgspec.Struct, gc=False):
    Layers: list[_Layer]
    Bindings: Any = None
    IOTensors: Any = msgspec.field(default=None, name="I/O Tensors")


class _DocWithMore(_Doc, gc=False):
    Layers: list[_LayerWithMore]  # type: ignore[assignment]  # the same document, its layers allowed more keys


class _RawDoc(msgspec.Struct, gc=False):
    Layers: list[msgspec.Raw]


class _Timing(msgspec.Struct, gc=False):
    name: Any = _UNSET
    count: Any = _UNSET
    # numbers (ints become floats, as _common._num makes them); strings and booleans fall back
    timeMs: float | None = None
    averageMs: float | None = None
    medianMs: float | None = None
    percentage: float | None = None


_DOC = msgspec.json.Decoder(_Doc)
_DOC_WITH_MORE = msgspec.json.Decoder(_DocWithMore)
_RAW = msgspec.json.Decoder(_RawDoc)
_PROFILE = msgspec.json.Decoder(list[_Timing])
_LAYER = msgspec.json.Decoder(_Layer)
_LAYER_WITH_MORE = msgspec.json.Decoder(_LayerWithMore)
_LAYERS = msgspec.json.Decoder(list[_Layer])  # a run of records (children.RawRuns)
_LAYERS_WITH_MORE = msgspec.json.Decoder(list[_LayerWithMore])
_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_TIMING = msgspec.json.Decoder(_Timing)
_TIMINGS = msgspec.json.Decoder(list[_Timing])
_ANY = msgspec.json.Decoder()
_LAYER_KEY_UNKNOWN = re.compile(r"Object contains unknown field `.*` - at `\$\.Layers\[\d+\]`", re.S)
_RECORD_KEY_UNKNOWN = re.compile(r"Object contains unknown field `[^`]*`")  # of a record decoded on its own
_RUN_KEY_UNKNOWN = re.compile(r"Object contains unknown field `[^`]*` - at `\$\[\d+\]`")  # of one in a run
_FAILED = (msgspec.ValidationError, msgspec.DecodeError, UnicodeEncodeError, RecursionError)  # nested too deeply: general path


def use_fast_path(text: str | bytes) -> bool:
    """False where a big document must be parsed in pieces (the window's loader threads, see
    :func:`trtstudio.engine.readers.loads_json`): one decode of it would hold the GIL too long."""
    from trtstudio.bigdocs import children

    return len(text) < children.RESPONSIVE_MIN_BYTES or not children.parsing_responsively()


def read_or_parse(path: Path, text: str | bytes, whole: Callable[[str | bytes], EngineInfo | None],
                  in_pieces: Callable[..., EngineInfo | None],
                  feed: Callable[[], Any] | None = None) -> tuple[EngineInfo | None, Any]:
    """(info, None) where a fast reader read the document at ``path`` (``text``: its bytes),
    else (None, the parsed document) for the general reader.

    ``whole`` reads the document in one decode; a big document in the window's loader threads
    (:func:`use_fast_path` False) is read in pieces instead by ``in_pieces``: cut in this process
    up to ``children.CUT_HERE_MAX_BYTES`` (``children.cut_here``), by a child beyond
    (``children.read_pieces`` with ``raw``; ``feed`` makes what is fed the long list of its
    ``key`` as the child sends it, e.g. a :class:`LayerFeed`, and ``in_pieces`` is given it
    too). Where that steps aside, the same pieces are parsed;
    where the document cannot be cut, or orjson refuses a piece, it is parsed here in one go
    (malformed JSON as the user's error line)."""
    from trtstudio.bigdocs import children
    from trtstudio.engine.readers import as_text, loads_json

    if use_fast_path(text):
        info = whole(text)
        return (info, None) if info is not None else (None, loads_json(path, as_text(text)))
    fed = None
    if len(text) <= children.CUT_HERE_MAX_BYTES:
        doc = children.cut_here(text)
    else:
        fed = feed() if feed is not None else None
        doc = children.read_pieces(str(path), raw=True, feed={fed.key: fed} if fed is not None else None)
    if doc is None:  # what neither can cut (NaN literals, bad UTF-8, malformed...)
        return None, loads_json(path, as_text(text), pieces=False)
    info = in_pieces(doc) if fed is None else in_pieces(doc, fed)
    if info is not None:
        return info, None
    # a piece orjson refuses (one the in-process cut left unchecked): the whole document the
    # general way (its error line, or the standard library's reading of it)
    parsed = children.parse_raw_or_none(doc)
    return None, parsed if parsed is not None else loads_json(path, as_text(text), pieces=False)


def read_layer_doc(text: str | bytes) -> EngineInfo | None:
    """EngineInfo from a detailed inspector document (``{"Layers": [{...}, ...]}``), or None."""
    # msgspec reads an ASCII str in place (encoding it first would copy the whole document); lone
    # surrogates make it raise UnicodeEncodeError
    raws: DocRecords | None = None
    try:
        doc: _Doc = _DOC.decode(text)
    except msgspec.ValidationError as exc:
        if not _LAYER_KEY_UNKNOWN.fullmatch(str(exc)):
            return None
        try:
            doc = _DOC_WITH_MORE.decode(text)
        except _FAILED:
            return None
        # each record's raw JSON (for its keys beyond Layer's fields), cut when someone first reads
        # a layer's attrs: the text decoded once already decodes as raw records (DocRecords.get
        # cuts it on a fresh stack where the caller's depth leaves too little for its nesting)
        raws = DocRecords(text, _raw_layers)
    except _FAILED:
        return None
    return _info(doc.Layers, raws, doc.Bindings, doc.IOTensors)


def _raw_layers(text: str | bytes) -> list[msgspec.Raw]:
    return _RAW.decode(text).Layers


def read_layer_lines(doc: Any, fed: LayerFeed | None = None) -> EngineInfo | None:
    """:func:`read_layer_doc` of a document read in pieces (``children.cut_here``: its ``Layers``
    one record's JSON each, decoded here one by one, so that no call holds the GIL for long; or
    ``children.read_pieces`` with ``raw``: runs of records), or None. ``fed``: the
    :class:`LayerFeed` that the runs were fed to as they came: its layers, where it made one of
    each record (else the runs are cut into records, read as the in-process cut's)."""
    from trtstudio.bigdocs.children import RawLines, RawRuns, RawValue

    lines = doc.get("Layers") if type(doc) is dict else None
    if not isinstance(lines, (RawRuns, RawLines, RawValue)):
        return None
    try:
        bindings, io_tensors = _io_members(doc)
    except (*_FAILED, ValueError):  # ValueError: a long list's runs cut short (children.decode_runs)
        return None
    if isinstance(lines, RawRuns):
        if fed is not None and fed.ok and fed.runs == lines and len(fed.layers) == lines.n:
            try:
                return _info_of(fed.layers, bindings, io_tensors)
            except _FAILED:
                return None
        try:
            lines = lines.lines()
        except (*_FAILED, ValueError):
            return None
    if type(lines) is RawValue:  # a short list that children.cut_here left whole: its records, as the long ones
        try:
            lines = RawLines(_RAW_LIST.decode(lines.raw))
        except _FAILED:
            return None
    if not isinstance(lines, RawLines):
        return None
    raws: DocRecords | None = None
    # comprehensions, not map(): between two records the interpreter may hand the GIL to the window
    try:
        decode = _LAYER.decode
        recs: list[_Layer] = [decode(line) for line in lines]
    except msgspec.ValidationError as exc:
        if not _RECORD_KEY_UNKNOWN.fullmatch(str(exc)):
            return None
        try:
            decode = _LAYER_WITH_MORE.decode
            recs = [decode(line) for line in lines]
        except _FAILED:
            return None
        raws = DocRecords(None, raws=lines)
    except _FAILED:
        return None
    return _info(recs, raws, bindings, io_tensors)


def _io_members(doc: dict[str, Any]) -> tuple[Any, Any]:
    """The ``Bindings`` and ``I/O Tensors`` of a document read in pieces, every member but its
    ``Layers`` decoded by msgspec as the whole document's decode reads them (an integer beyond 64
    bits stays exact). A long list came in pieces too. Where msgspec refuses a member, this raises
    (a ValueError where a long list's runs are cut short): the general reader reads the document."""
    from trtstudio.bigdocs.children import RawLines, RawRuns, RawValue, decode_runs

    def value(v: Any) -> Any:
        if isinstance(v, RawLines):
            return [_ANY.decode(x) for x in v]
        if isinstance(v, RawRuns):
            return decode_runs(v, _ANY.decode, v.n)
        return _ANY.decode(v.raw) if type(v) is RawValue else v

    rest = {k: value(v) for k, v in doc.items() if k != "Layers"}
    return rest.get("Bindings"), rest.get("I/O Tensors")


def _info(recs: list[_Layer], raws: DocRecords | None, bindings: Any, io_tensors: Any) -> EngineInfo:
    """The EngineInfo of decoded layer records (``raws``: each record's JSON, for the keys beyond
    Layer's fields) and the document's engine I/O."""
    layers: list[Layer] = []
    _add_layers(recs, 0, raws, {}, layers)
    return _info_of(layers, bindings, io_tensors)


def _info_of(layers: list[Layer], bindings: Any, io_tensors: Any) -> EngineInfo:
    """The EngineInfo of ``layers`` (:func:`_add_layers`) and the document's engine I/O."""
    info = EngineInfo(io_tensors=io_from_json({"Bindings": bindings, "I/O Tensors": io_tensors}))
    info.finite = True  # msgspec decoded every number
    info.layers = layers
    assign_profiles(info)
    return info


def _add_layers(recs: list[_Layer], start: int, raws: DocRecords | None,
                formats: dict[str | None, tuple[str | None, str | None, str | None]], layers: list[Layer]) -> None:
    """Append the Layer of each decoded record to ``layers`` (``start``: the first one's index;
    ``formats``: each tensor format string's dtype, format and raw text, as found so far)."""
    append = layers.append
    cls = Layer if raws is None else SourcedLayer
    for i, r in enumerate(recs, start):
        name = r.Name
        ltype = r.LayerType
        tactic = r.TacticName
        tval = r.TacticValue
        stream = r.StreamId
        own: dict[str, Any] = {}
        if ltype is None:
            ltype = guess_type(name)
        elif ltype != "Reformat" and "Reformatting CopyNode" in name:
            own["reformat"] = True
        ins = r.Inputs
        outs = r.Outputs
        for tensors in (ins, outs):
            if tensors:
                for t in tensors:  # dtype and format from the format string, as tensor_from_dict does
                    fi = formats.get(t.format)
                    if fi is None:
                        fi = formats[t.format] = _format_info(t.format, None)
                    t.dtype, t.format, t.raw = fi
        lay = cls(
            i, name, ltype if type(ltype) is str else str(ltype), r.ParameterType, ins or [], outs or [],
            str(tactic) if tactic else None, str(tval) if tval not in (None, "") else None,
            stream if isinstance(stream, int) else None, r.Metadata, [], 0.0, r.Origin, None, own)
        if raws is not None:
            w, b = r.Weights, r.Bias  # type: ignore[attr-defined]  # a _LayerWithMore
            lay.source = DocRecord(raws, i, r.Groups,  # type: ignore[attr-defined]
                                   None if w is _UNSET and b is _UNSET else (w, b))
        append(lay)


class LayerFeed:
    """:func:`read_layer_lines`' work on the ``Layers`` records, done as a child sends them
    (``children.read_pieces``' ``feed``: called with each next run of records, a JSON list): each
    run decoded in one call and made into Layers while the child cuts and sends the next. The
    same decode as read_layer_lines': with the first record that has keys beyond Layer's fields,
    every record so far is decoded again as one that has (the layers become SourcedLayers, their
    records cut from the runs when someone first reads their attrs). ``ok`` False once a record is
    refused: read_layer_lines then reads the records itself (and steps aside as ever)."""

    key = "Layers"

    def __init__(self) -> None:
        self.ok = True
        self.runs: list[bytes] = []  # every run fed, in order
        self.layers: list[Layer] = []
        self.raws: DocRecords | None = None  # the records' JSON, once a record has more keys
        self._formats: dict[str | None, tuple[str | None, str | None, str | None]] = {}

    def __call__(self, run: bytes) -> None:
        if not self.ok:
            return
        self.runs.append(run)
        start = len(self.layers)
        try:
            recs: list[_Layer] = (_LAYERS if self.raws is None else _LAYERS_WITH_MORE).decode(run)  # type: ignore[assignment]
        except msgspec.ValidationError as exc:
            if self.raws is not None or not _RUN_KEY_UNKNOWN.fullmatch(str(exc)):
                self.ok = False
                return
            from trtstudio.bigdocs.children import decode_runs

            self.raws = DocRecords(self.runs, _cut_runs)
            self.layers = []
            start = 0
            try:
                recs = decode_runs(self.runs, _LAYERS_WITH_MORE.decode)
            except _FAILED:
                self.ok = False
                return
        except _FAILED:
            self.ok = False
            return
        _add_layers(recs, start, self.raws, self._formats, self.layers)


def _cut_runs(runs: list[bytes]) -> list[msgspec.Raw]:
    """Each record's JSON, from the runs a :class:`LayerFeed` was fed (every one of them: their
    count was checked when the feed's layers were taken)."""
    from trtstudio.bigdocs.children import decode_runs

    return decode_runs(runs, _RAW_LIST.decode)


def read_profile(text: str | bytes) -> EngineInfo | None:
    """The profile reader's EngineInfo from ``[{"count": N}, {"name", "timeMs", ...}, ...]``, or None."""
    try:
        recs = _PROFILE.decode(text)
    except _FAILED:
        return None
    return _profile_info(recs)


def read_profile_lines(doc: Any) -> EngineInfo | None:
    """:func:`read_profile` of a profile read in pieces (``children.read_pieces`` with ``raw``), or None."""
    from trtstudio.bigdocs.children import RawLines, RawRuns, decode_runs

    recs: list[_Timing]
    try:
        if isinstance(doc, RawRuns):  # a run of records in one call each
            recs = decode_runs(doc, _TIMINGS.decode, doc.n)
        elif isinstance(doc, RawLines):
            decode = _TIMING.decode
            recs = [decode(line) for line in doc]  # not map(): see read_layer_lines
        else:
            return None
    except (*_FAILED, ValueError):  # ValueError: runs cut short (children.decode_runs)
        return None
    return _profile_info(recs)


def _profile_info(recs: list[_Timing]) -> EngineInfo | None:
    count: int | None = None
    times: list[tuple[str, LayerTime]] = []
    append = times.append
    for rec in recs:
        name = rec.name
        if name is _UNSET:
            c = rec.count
            if c is not _UNSET and isinstance(c, (int, float)):
                count = int(c)
                continue
            return None  # the general reader says what is wrong
        if type(name) is not str:
            name = str(name)
        append((name, LayerTime(rec.timeMs, rec.averageMs, rec.medianMs, rec.percentage, count)))
    info = EngineInfo(detailed=False, times=times)
    info.finite = True  # msgspec decoded every number
    if count is not None:
        info.build_settings["profile_iterations"] = count
    return info


__all__ = ["LayerFeed", "read_layer_doc", "read_layer_lines", "read_or_parse", "read_profile", "read_profile_lines", "use_fast_path"]
