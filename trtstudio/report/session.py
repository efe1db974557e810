"""Sessions: a ``.trtstudio`` file (JSON, schema ``trtstudio.session/1``) holding what a report is made of.

A session keeps the model path and its summary, the engines (their file paths and the EngineInfo
JSON, so it reopens without the files), the runs (statistics as computed at run time and the raw
latency samples, float32 + zlib + base64), the memory series, build settings, accuracy results, a
picture of the graph and the environment it was recorded in. ``Report.from_session`` regenerates
the same report from it (only the generation date differs).

``save_session`` writes atomically: JSON is streamed into a temporary file in the same folder,
which replaces the old session (``os.replace``) only once it is complete; on any failure the
temporary file is removed and the old session is left as it was. ``load_session`` raises
:class:`~trtstudio.errors.InputError` for a file that is not a readable session.
"""

from __future__ import annotations

import base64
import json
import os
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from trtstudio.engine.model import EngineInfo, Finding, Layer, LayerTime, TensorDesc
from trtstudio.errors import InputError
from trtstudio.fileio import atomic_write

SCHEMA = "trtstudio.session/1"
SUFFIX = ".trtstudio"


# ------------------------------------------------------------------------------------------------
# arrays


def encode_array(a: np.ndarray, dtype: str | None = None) -> dict[str, Any]:
    """A 1-D array as ``{"dtype", "n", "zlib_b64"}`` (little-endian bytes, zlib level 6, base64)."""
    arr = np.ascontiguousarray(np.asarray(a, dtype=dtype or np.asarray(a).dtype).ravel())
    dt = arr.dtype.newbyteorder("<")
    raw = arr.astype(dt, copy=False).tobytes()
    return {"dtype": str(np.dtype(arr.dtype).name), "n": int(arr.size),
            "zlib_b64": base64.b64encode(zlib.compress(raw, 6)).decode("ascii")}


def decode_array(doc: dict[str, Any]) -> np.ndarray:
    """Inverse of :func:`encode_array` (ValueError when the data does not match its header)."""
    dt = np.dtype(str(doc["dtype"])).newbyteorder("<")
    raw = zlib.decompress(base64.b64decode(doc["zlib_b64"], validate=True))
    arr = np.frombuffer(raw, dtype=dt)
    if arr.size != int(doc["n"]):
        raise ValueError(f"array holds {arr.size} values, header says {doc['n']}")
    return arr.astype(dt.newbyteorder("="))


# ------------------------------------------------------------------------------------------------
# records


@dataclass
class Picture:
    """An image of the graph: PNG bytes from the GUI, or SVG text the CLI drew."""

    mime: str  # "image/png" | "image/svg+xml"
    data: bytes

    def to_json(self) -> dict[str, Any]:
        return {"mime": self.mime, "base64": base64.b64encode(self.data).decode("ascii")}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Picture:
        mime = str(doc["mime"])
        if mime not in ("image/png", "image/svg+xml"):
            raise ValueError(f"unsupported picture type {mime!r}")
        return cls(mime, base64.b64decode(doc["base64"], validate=True))


@dataclass
class RunData:
    """One profiling run as a report needs it: statistics computed at run time (``RunResult.to_dict``),
    the latencies in order (float32), the memory series and the per-layer profile rows."""

    name: str = "run"
    backend: str | None = None
    model: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    latency_ms: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    memory: dict[str, np.ndarray] = field(default_factory=dict)  # t_s, index, and one column per key
    layers: list[dict[str, Any]] = field(default_factory=list)
    shapes: dict[str, list[int]] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    # what the run ran (profiling.session.RunRecord.to_json: model, model_sha256, backend, shapes, settings)
    record: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_result(cls, result: Any, name: str = "run", backend: str | None = None, model: str | None = None,
                    layers: Iterable[dict[str, Any]] | None = None, shapes: dict[str, Any] | None = None,
                    extra_memory: dict[str, int] | None = None, record: dict[str, Any] | None = None) -> RunData:
        """From a :class:`trtstudio.profiling.runner.RunResult` (``layers``: the per-layer profile rows;
        ``extra_memory``: the backend's static memory figures, e.g. ``backend.memory()``; ``record``: what
        the run ran, from its :class:`~trtstudio.profiling.session.RunRecord`)."""
        stats = result.to_dict()
        if extra_memory:
            stats["memory"] = {**extra_memory, **stats.get("memory", {})}
        cfg = result.config
        memory = result.memory.snapshot() if result.memory is not None else {}
        return cls(
            name=name, backend=backend, model=None if model is None else str(model), stats=stats,
            latency_ms=np.asarray(result.exact.values(), dtype=np.float32),
            memory={k: np.asarray(v) for k, v in memory.items()} if memory and len(memory.get("t_s", [])) else {},
            layers=[dict(r) for r in (layers or [])],
            shapes={k: [int(d) for d in v] for k, v in (shapes or {}).items()},
            config={"warmup": cfg.warmup, "iterations": cfg.iterations, "duration_s": cfg.duration_s, "batch": cfg.batch},
            record=dict(record or {}),
        )

    @classmethod
    def from_profile_doc(cls, doc: dict[str, Any], name: str | None = None) -> RunData:
        """From a ``trtstudio profile --json`` document (no raw samples in it)."""
        keys = ("latency_ms", "jitter_ms", "longest_spike", "parts_ms", "cold_ms", "throughput", "memory", "warnings",
                "notes", "stopped", "error")
        return cls(name=name or str(doc.get("backend") or "run"), backend=doc.get("backend"), model=doc.get("model"),
                   stats={k: doc.get(k) for k in keys if k in doc}, layers=list(doc.get("layers") or []),
                   shapes=dict(doc.get("shapes") or {}))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "backend": self.backend, "model": self.model, "stats": self.stats,
            "samples": {"latency_ms": encode_array(self.latency_ms, "float32")},
            "memory": {k: encode_array(v) for k, v in sorted(self.memory.items())},
            "layers": self.layers, "shapes": self.shapes, "config": self.config, "record": self.record,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> RunData:
        return cls(
            name=str(doc.get("name") or "run"), backend=doc.get("backend"), model=doc.get("model"),
            stats=dict(doc.get("stats") or {}),
            latency_ms=decode_array(doc["samples"]["latency_ms"]).astype(np.float32),
            memory={k: decode_array(v) for k, v in (doc.get("memory") or {}).items()},
            layers=[dict(r) for r in doc.get("layers") or []], shapes=dict(doc.get("shapes") or {}),
            config=dict(doc.get("config") or {}), record=dict(doc.get("record") or {}),
        )


@dataclass
class EngineRecord:
    """One engine: the files it was read from and what was read (findings included)."""

    paths: list[str]
    info: EngineInfo

    def to_json(self) -> dict[str, Any]:
        # the per-inference series of --exportTimes (what a diff resamples) travel with the session,
        # as float32 arrays like a run's samples
        samples = {k: encode_array(np.asarray(v, dtype=np.float32), "float32") for k, v in self.info.samples_ms.items()}
        return {"paths": self.paths, "info": self.info.to_json(), **({"samples_ms": samples} if samples else {})}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> EngineRecord:
        info = engine_from_json(doc["info"])
        raw = doc.get("samples_ms")
        if isinstance(raw, dict):
            info.samples_ms = {str(k): decode_array(v).astype(np.float64).tolist() for k, v in raw.items()
                               if isinstance(v, dict)}
        return cls([str(p) for p in doc.get("paths") or []], info)


def _str(v: Any) -> str | None:
    """A text field read back: None stays None, anything else becomes text (a damaged session may hold
    a number or a list where a string belongs; the views call string methods on these)."""
    return None if v is None else str(v)


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _tensor(doc: dict[str, Any]) -> TensorDesc:
    shape = doc.get("shape")
    return TensorDesc(name=str(doc.get("name", "")), shape=shape if isinstance(shape, list) else None,
                      dtype=_str(doc.get("dtype")), format=_str(doc.get("format")))


def engine_from_json(doc: dict[str, Any]) -> EngineInfo:
    """Rebuild an :class:`EngineInfo` from its ``to_json`` document (schema ``trtstudio.layers/1``)."""
    eng = doc.get("engine") or {}
    layers = []
    for d in doc.get("layers") or []:
        t = d.get("time_ms")
        count = t.get("count") if t else None
        layers.append(Layer(
            index=int(d["index"]), name=str(d["name"]), type=str(d.get("type") or "Unknown"),
            parameter_type=_str(d.get("parameter_type")),
            inputs=[_tensor(x) for x in d.get("inputs") or []], outputs=[_tensor(x) for x in d.get("outputs") or []],
            tactic=_str(d.get("tactic")), tactic_value=_str(d.get("tactic_value")), stream=d.get("stream") if isinstance(d.get("stream"), int) else None,
            onnx_nodes=[str(n) for n in d.get("onnx_nodes") or []],
            mapping_confidence=float(d.get("mapping_confidence") or 0.0), origin=_str(d.get("origin")),
            time=None if not t else LayerTime(_num(t.get("total")), _num(t.get("average")), _num(t.get("median")),
                                              _num(t.get("percent")), count if isinstance(count, int) else None),
        ))
    index_of = {lay.name: lay.index for lay in layers}
    findings = [
        Finding(kind=str(f["kind"]), severity=str(f["severity"]), message=str(f.get("message", "")),
                hint=str(f.get("hint") or ""), layer=f.get("layer"), layer_index=index_of.get(f.get("layer") or ""),
                nodes=list(f.get("nodes") or []))
        for f in doc.get("findings") or []
    ]
    return EngineInfo(
        layers=layers, io_tensors=[_tensor(x) for x in eng.get("io_tensors") or []],
        sources=list(doc.get("source") or []), formats=list(doc.get("formats") or []),
        versions=dict(eng.get("versions") or {}), device=dict(eng.get("device") or {}),
        memory=dict(eng.get("memory") or {}), build_settings=dict(eng.get("build_settings") or {}),
        latency_ms=dict(eng.get("latency_ms") or {}), detailed=bool(eng.get("detailed", True)),
        findings=findings, warnings=list(doc.get("warnings") or []),
    )


@dataclass
class Session:
    """Everything a report is made of (see the module docstring)."""

    title: str | None = None
    created: str = ""
    environment: dict[str, Any] = field(default_factory=dict)
    model_path: str | None = None
    model_summary: dict[str, Any] | None = None
    graph_picture: Picture | None = None
    graph_excerpts: dict[str, Any] | None = None  # report.excerpts.make_excerpts
    engines: list[EngineRecord] = field(default_factory=list)
    runs: list[RunData] = field(default_factory=list)
    build_settings: dict[str, Any] = field(default_factory=dict)
    accuracy: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    # sweeps and shape mixes (trtstudio.sweep/1, trtstudio.mix/1 documents: profiling.sweep, profiling.shape_mix)
    sweeps: list[dict[str, Any]] = field(default_factory=list)
    # the Live profile panel's run settings as saved (``ProfileRequest.settings()``: backend, shapes
    # as run, warmup, iterations or duration_s, threads, device, input_path, ...); None: not saved
    run_settings: dict[str, Any] | None = None
    # the build behind the engine (report.build_section.section_json of its build log or build
    # document): kept here so the report's Build section survives the log file; None: none read
    build: dict[str, Any] | None = None

    def restored_run_settings(self) -> dict[str, Any] | None:
        """The run settings to restore: those saved, else what the latest run of the session's model
        ran (its record's settings, with the shapes it ran); None when the session has neither."""
        if self.run_settings:
            return dict(self.run_settings)
        for run in reversed(self.runs):
            rec = run.record if isinstance(run.record, dict) else {}
            if run.model and self.model_path and os.path.basename(run.model) != os.path.basename(self.model_path):
                continue
            settings = dict(rec.get("settings") or {})
            if not settings and not rec:
                continue
            settings.setdefault("backend", rec.get("backend") or run.backend)
            shapes = rec.get("shapes") or run.shapes
            if shapes:
                settings["shapes"] = {str(k): [int(d) for d in v] for k, v in shapes.items()}
            return settings
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA, "title": self.title, "created": self.created, "environment": self.environment,
            "model": None if self.model_path is None and self.model_summary is None
            else {"path": self.model_path, "summary": self.model_summary},
            "graph_picture": self.graph_picture.to_json() if self.graph_picture else None,
            "graph_excerpts": self.graph_excerpts,
            "engines": [e.to_json() for e in self.engines], "runs": [r.to_json() for r in self.runs],
            "build_settings": self.build_settings, "accuracy": self.accuracy, "warnings": self.warnings,
            "sweeps": self.sweeps, "run_settings": self.run_settings, "build": self.build,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Session:
        model = doc.get("model") or {}
        pic = doc.get("graph_picture")
        return cls(
            title=doc.get("title"), created=str(doc.get("created") or ""), environment=dict(doc.get("environment") or {}),
            model_path=model.get("path"), model_summary=model.get("summary"),
            graph_picture=Picture.from_json(pic) if pic else None,
            graph_excerpts=doc.get("graph_excerpts") if isinstance(doc.get("graph_excerpts"), dict) else None,
            engines=[EngineRecord.from_json(e) for e in doc.get("engines") or []],
            runs=[RunData.from_json(r) for r in doc.get("runs") or []],
            build_settings=dict(doc.get("build_settings") or {}), accuracy=doc.get("accuracy"),
            warnings=[str(w) for w in doc.get("warnings") or []],
            sweeps=[d for d in doc.get("sweeps") or [] if isinstance(d, dict) and isinstance(d.get("schema"), str)],
            run_settings=doc.get("run_settings") or None,
            build=doc.get("build") if isinstance(doc.get("build"), dict) else None,
        )


# ------------------------------------------------------------------------------------------------
# files


def write_session(path: str | os.PathLike[str], session: Session) -> Path:
    """Write ``session`` to ``path`` atomically (see the module docstring): strict JSON indented by
    two (``bigdocs.children.encode_document``: orjson, 1 s for a 50,000-layer session where the standard
    library's indented encoder took 5 s; NaN and infinities as null, with one warning line)."""
    from trtstudio.bigdocs.children import encode_document
    from trtstudio.bigdocs.gcpause import gc_paused
    from trtstudio.jsonio import warn_non_finite

    with gc_paused(freeze=False):  # the document is millions of small objects, dropped once written
        data, non_finite = encode_document(session.to_json())
    warn_non_finite(non_finite, os.fspath(path))
    return atomic_write(path, lambda fh: fh.write(data), mode="wb")


class NotASession(InputError):
    """A file :func:`load_session` cannot take for a session at all (not JSON, another schema), as
    opposed to a session that is damaged; ``why`` says what it is instead."""

    def __init__(self, path: str | os.PathLike[str], why: str) -> None:
        self.why = why
        super().__init__(path, f"not a trtstudio session ({why})")


def load_session(path: str | os.PathLike[str]) -> Session:
    """Read a ``.trtstudio`` file; InputError (naming the file) when it is not a readable session.
    With the cyclic collector paused (``gcpause``): a 50,000-layer session is millions of objects,
    and the collector's passes over them took longer than the parse (1.05 -> 0.43 s per 64 MB)."""
    from trtstudio.bigdocs.gcpause import gc_paused

    with gc_paused():
        return _load_session(path)


def _load_session(path: str | os.PathLike[str]) -> Session:
    from trtstudio.fileio import check_input, tail_is_binary

    if not os.path.exists(path):
        raise InputError(path, "no such session file")
    p = check_input(path, what="a .trtstudio session file")
    if tail_is_binary(p):
        raise NotASession(p, "ends in binary data: truncated or corrupt")
    from trtstudio.bigdocs.children import RESPONSIVE_MIN_BYTES, load_json_tree, parsing_responsively
    from trtstudio.jsonio import loads

    try:
        doc = None
        if parsing_responsively() and os.path.getsize(p) >= RESPONSIVE_MIN_BYTES:
            doc = load_json_tree(str(p))  # the window's loader: parsed in pieces, no long hold of the GIL
        if doc is None:
            with open(p, "rb") as fh:
                text = fh.read().decode("utf-8")  # strictly: a file that is not UTF-8 is no session
            doc = loads(text)  # orjson, else the standard library (NaN literals, ...)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotASession(p, f"not JSON: {exc}") from None
    except RecursionError:
        raise NotASession(p, "JSON nested too deeply") from None
    except OSError as exc:
        raise InputError(p, f"cannot read: {exc.strerror or exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise NotASession(p, f"schema {got!r}, expected {SCHEMA!r}")
    try:
        session = Session.from_json(doc)
        _check_types(session)
        return session
    except _WrongType as exc:
        raise InputError(p, f"damaged session: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError, RecursionError, zlib.error) as exc:
        # where, when a field or record is of the wrong kind: asked only now, so that nothing
        # from_json takes (an empty string for an empty list...) is refused
        where = _wrong_field(doc) or _where_damaged(doc)
        raise InputError(p, f"damaged session: {where or f'{type(exc).__name__}: {exc}'}") from None


class _WrongType(ValueError):
    """A field of a session document with a value of the wrong type (the message names both)."""


_DOC_FIELDS: dict[str, tuple[type, ...]] = {  # the session document's own fields that from_json walks into
    "runs": (list, type(None)), "engines": (list, type(None)), "warnings": (list, type(None)),
    "model": (dict, type(None)), "environment": (dict, type(None)), "build_settings": (dict, type(None)),
}


def _wrong_field(doc: dict[str, Any]) -> str | None:
    """A top-level field, or a run or engine record, that holds something (``from_json`` reads an
    empty value as none) other than the list or object the format has there; None if none does."""
    for name, types in _DOC_FIELDS.items():
        value = doc.get(name)
        if value and not isinstance(value, types):
            return f"{name} is a JSON {_json_type(value)}, expected {_json_type(types[0]())}"
    for name in ("runs", "engines"):
        items = doc.get(name)
        for i, item in enumerate(items if isinstance(items, list) else ()):
            if not isinstance(item, dict):
                return f"{name}[{i}] is a JSON {_json_type(item)}, expected an object"
    return None


def _where_damaged(doc: dict[str, Any]) -> str | None:
    """Where a session document that ``from_json`` failed on departs from the records it walks
    (msgspec's message, with the JSON path: "Expected `object`, got `array` - at
    `$.engines[0].info`"), or None where their shape is right (then a value is wrong). Asked only
    after a failure: what the shape does not hold (a number as text...) ``from_json`` may take."""
    def empty_as_null(d: Any, keys: tuple[str, ...]) -> Any:  # from_json reads these as `d.get(k) or []`
        return {k: (v or None) if k in keys else v for k, v in d.items()} if isinstance(d, dict) else d

    shaped = empty_as_null(doc, ("model", "graph_picture", "engines", "runs", "environment", "build_settings",
                                 "warnings"))
    if isinstance(shaped.get("engines"), list):
        shaped["engines"] = [empty_as_null(e, ("paths",)) for e in shaped["engines"]]
        for e in shaped["engines"]:
            if isinstance(e, dict) and "info" in e:
                e["info"] = empty_as_null(e["info"], ("engine", "layers", "findings", "source", "formats", "warnings"))
    try:
        msgspec.convert(shaped, _DocShape, strict=False)
    except msgspec.ValidationError as exc:
        return str(exc)
    except Exception:  # noqa: BLE001 - the message is only better than the generic one; never worse
        return None
    return None


_Obj = dict[str, Any]


class _PictureShape(msgspec.Struct):
    mime: str
    base64: str


class _SamplesShape(msgspec.Struct):
    latency_ms: Any


class _RunShape(msgspec.Struct):
    samples: _SamplesShape


class _LayerShape(msgspec.Struct):
    index: Any
    name: Any


class _FindingShape(msgspec.Struct):
    kind: Any
    severity: Any


class _EngineDocShape(msgspec.Struct):
    engine: _Obj | None = None
    layers: list[_LayerShape] | None = None
    findings: list[_FindingShape] | None = None
    source: list[Any] | None = None
    formats: list[Any] | None = None
    warnings: list[Any] | None = None


class _EngineShape(msgspec.Struct):
    info: _EngineDocShape
    paths: list[Any] | None = None


class _DocShape(msgspec.Struct):
    model: _Obj | None = None
    graph_picture: _PictureShape | None = None
    engines: list[_EngineShape] | None = None
    runs: list[_RunShape] | None = None
    environment: _Obj | None = None
    build_settings: _Obj | None = None
    warnings: list[Any] | None = None


def _json_type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number",
            type(None): "null"}.get(type(value), type(value).__name__)


def _check_types(session: Session) -> None:
    """:class:`_WrongType` for fields of the wrong type, which ``from_json`` copies as they are and the window
    and the report writers would trip over later (far from the file that caused it)."""
    expect: dict[str, tuple[type, ...]] = {
        "title": (str, type(None)), "model_path": (str, type(None)), "model_summary": (dict, type(None)),
        "accuracy": (dict, type(None)), "build_settings": (dict,), "environment": (dict,),
        "run_settings": (dict, type(None)),
    }
    for name, types in expect.items():
        value = getattr(session, name)
        if not isinstance(value, types):
            raise _WrongType(f"{name} is a JSON {_json_type(value)}")
    for run in session.runs:
        for name, types in (("stats", (dict,)), ("shapes", (dict,)), ("config", (dict,)),
                            ("backend", (str, type(None))), ("model", (str, type(None)))):
            value = getattr(run, name)
            if not isinstance(value, types):
                raise _WrongType(f"run {run.name!r}: {name} is a JSON {_json_type(value)}")
