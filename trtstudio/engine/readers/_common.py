"""Shared pieces of the readers: data types from format strings, layers from inspector dicts."""

from __future__ import annotations

import math
import operator
import re
from itertools import compress, count, repeat
from pathlib import Path
from typing import Any

from trtstudio.engine.model import EngineInfo, Layer, LayerTime, SourcedLayer, TensorDesc
from trtstudio.errors import InputError

_LAYER_NAME = operator.attrgetter("name")

# Key in Layer.attrs marking a layer that was made from a profile record (no layer information).
PROFILE_ONLY = "profile_only"
# Key in Layer.attrs: the optimization profile a layer belongs to (from "[profile N]" names).
PROFILE = "profile"

NAMES_ONLY_WARNING = (
    "layer information has names only (built with ProfilingVerbosity LAYER_NAMES_ONLY): rebuild with "
    "--profilingVerbosity=detailed to see precision, formats and tactics"
)

_TOKEN_DTYPE = {
    "fp32": "FP32",
    "float": "FP32",
    "float32": "FP32",
    "kfloat": "FP32",
    "fp16": "FP16",
    "half": "FP16",
    "float16": "FP16",
    "khalf": "FP16",
    "bf16": "BF16",
    "bfloat16": "BF16",
    "kbf16": "BF16",
    "int8": "INT8",
    "kint8": "INT8",
    "fp8": "FP8",
    "e4m3": "FP8",
    "kfp8": "FP8",
    "int32": "INT32",
    "kint32": "INT32",
    "int64": "INT64",
    "kint64": "INT64",
    "bool": "BOOL",
    "kbool": "BOOL",
    "uint8": "UINT8",
    "kuint8": "UINT8",
    "fp4": "FP4",
    "e2m1": "FP4",
    "kfp4": "FP4",
    "int4": "INT4",
    "kint4": "INT4",
}
_SPLIT = re.compile(r"[^0-9a-z]+")
_DTYPE_CACHE: dict[str, str | None] = {}
_BARE_DTYPES = {"float", "half", "int8", "int32", "int64", "bool", "uint8", "bf16", "bfloat16", "fp8", "fp4",
                "int4", "float32", "float16", "fp32", "fp16"}


def parse_dtype(text: str | None) -> str | None:
    """Normalised data type of a TensorRT format/type string.

    "Row major linear FP32" -> FP32, "Channel major FP16 format where channel % 8 == 0" -> FP16,
    "Four wide channel vectorized row major Int8 format" -> INT8, "Half" -> FP16, "Float" -> FP32.
    None when no type is named.
    """
    if not text:
        return None
    try:
        return _DTYPE_CACHE[text]
    except KeyError:
        pass
    found = None
    for tok in _SPLIT.split(text.lower()):
        dt = _TOKEN_DTYPE.get(tok)
        if dt is not None:
            found = dt
            break
    if len(_DTYPE_CACHE) < 10000:
        _DTYPE_CACHE[text] = found
    return found


def _shape(dims: Any) -> list[int | str] | None:
    if dims is None:
        return None
    if isinstance(dims, list):
        return dims
    if isinstance(dims, str):
        return parse_dims(dims)
    return None


def parse_dims(text: str) -> list[int | str]:
    """'[-1,32:8,14,14]' or '1x3x224x224' or '(1, 3)' -> [-1, 32, 14, 14]; symbolic parts kept as str."""
    text = text.strip().strip("[]()")
    if not text:
        return []
    sep = "x" if ("x" in text and "," not in text) else ","
    out: list[int | str] = []
    for part in text.split(sep):
        part = part.strip()
        if not part:
            continue
        base = part.split(":", 1)[0]
        try:
            out.append(int(base))
        except ValueError:
            out.append(part)
    return out


# format/type string -> (dtype, format kept, raw); a few dozen distinct strings per engine
_FORMAT_INFO: dict[tuple[str | None, str | None], tuple[str | None, str | None, str | None]] = {}


def _format_info(fmt: str | None, typ: str | None) -> tuple[str | None, str | None, str | None]:
    key = (fmt, typ)
    try:
        return _FORMAT_INFO[key]
    except KeyError:
        pass
    dtype = parse_dtype(typ) if typ else None
    if dtype is None:
        dtype = parse_dtype(fmt)
    raw = fmt if fmt is not None else typ
    fmt_out = fmt if (fmt and fmt.lower() not in _BARE_DTYPES) else None
    info = (dtype, fmt_out, raw)
    if len(_FORMAT_INFO) < 10000:
        _FORMAT_INFO[key] = info
    return info


def tensor_from_dict(d: Any) -> TensorDesc:
    """A TensorDesc from an inspector Inputs/Outputs entry (any TensorRT 8.2-11 spelling)."""
    if type(d) is not dict:
        if isinstance(d, str):
            return TensorDesc(d)
        if not isinstance(d, dict):
            return TensorDesc(str(d))
    get = d.get
    fmt = get("Format/Datatype")
    if fmt is None:
        fmt = get("Format")
    typ = get("Type") or get("DataType") or get("Datatype")
    if (fmt is not None and type(fmt) is not str) or (typ is not None and type(typ) is not str):
        fmt = None if fmt is None else str(fmt)
        typ = None if typ is None else str(typ)
    dtype, fmt_out, raw = _format_info(fmt, typ)
    dims = get("Dimensions")
    if dims is None:
        dims = get("Shape")
    name = get("Name", "")
    loc = get("Location")
    return TensorDesc(
        name if type(name) is str else str(name),
        dims if type(dims) is list else _shape(dims),
        dtype,
        fmt_out,
        raw,
        loc if loc is None or type(loc) is str else str(loc),
    )


_KNOWN_KEYS = SourcedLayer.known


def layer_from_dict(index: int, d: dict[str, Any]) -> Layer:
    """A Layer from one detailed inspector record; unknown keys go to ``attrs`` untouched."""
    get = d.get
    name = get("Name")
    if name is None:
        raise ValueError("layer record without a Name")
    if type(name) is not str:
        name = str(name)
    ltype = get("LayerType")
    ins = get("Inputs") or ()
    outs = get("Outputs") or ()
    tactic = get("TacticName")
    tval = get("TacticValue")
    stream = get("StreamId")
    attrs = {} if d.keys() <= _KNOWN_KEYS else {k: v for k, v in d.items() if k not in _KNOWN_KEYS}
    if ltype is None:
        ltype = guess_type(name)
    elif ltype != "Reformat" and "Reformatting CopyNode" in name:
        attrs["reformat"] = True
    return Layer(
        index,
        name,
        ltype if type(ltype) is str else str(ltype),
        get("ParameterType"),
        [tensor_from_dict(t) for t in ins],
        [tensor_from_dict(t) for t in outs],
        str(tactic) if tactic else None,
        str(tval) if tval not in (None, "") else None,
        stream if isinstance(stream, int) else None,
        get("Metadata"),
        [],
        0.0,
        get("Origin"),
        None,
        attrs,
    )


def guess_type(name: str) -> str:
    """A layer type from its name alone (names-only info, profiles, logs)."""
    if "Reformatting CopyNode" in name or " reformatter " in name or name.endswith(" reformatter"):
        return "Reformat"
    if name.startswith("{ForeignNode[") or "{ForeignNode[" in name:
        return "Myelin"
    if name.startswith("{") and name.endswith("}"):
        return "DLA"  # a DLA subgraph in TensorRT 7/8 profiles: {conv1,relu1,...}
    if name.startswith("data to nvm") or name.startswith("data from nvm") or name.endswith(" nvm"):
        return "DLATransfer"
    if name.startswith("[trainStation"):
        return "TrainStation"
    if name.startswith("PWN("):
        return "PointWise"
    return "Unknown"


_PROFILE_RE = re.compile(r" ?\[profile \d+\]")
_PROFILE_NUM_RE = re.compile(r"\[profile (\d+)\]")


def base_name(name: str) -> str:
    """The name without TensorRT's "[profile N]" markers (which may sit mid-name in Myelin layers)."""
    if "[profile " not in name:
        return name.strip()
    return _PROFILE_RE.sub("", name).strip()


_MYELIN_GRAPH_RE = re.compile(r"_myl(\d+)_\d+$")  # a Myelin layer's graph: "fc_myl1_4", "__mye225_0_myl1_0"


def marked_profile(lay: Layer) -> int | None:
    """The profile that ``lay``'s name, else one of its tensors' names, marks ("[profile N]")."""
    for name in (lay.name, *(t.name for t in lay.inputs), *(t.name for t in lay.outputs)):
        if name and "[profile " in name:
            m = _PROFILE_NUM_RE.search(name)
            if m:
                return int(m.group(1))
    return None


def assign_profiles(info: EngineInfo) -> int:
    """Tag ``info.layers`` with their optimization profile and, when there are several, note how
    many in ``build_settings["optimization_profiles"]``; returns how many profiles the engine has.

    Layers of profile N>0 follow those of profile 0 and carry "[profile N]" in their names, except
    some Myelin helper layers (``__mye258_0_myl15_0``, ``__myl_Move_myl1_1``) that carry none: they
    take the profile that their tensors' names mark (``x [profile 1]``), else that of the other
    layers of their Myelin graph (``_myl1_``: a TensorRT-RTX build lists a graph's helpers before
    its first marked layer), else that of the layers before them.
    """
    layers = info.layers
    # most engines have one profile: no name says "[profile ", found in C without a loop here
    first = next(compress(count(), map(operator.contains, map(_LAYER_NAME, layers), repeat("[profile "))), None)
    if first is None:
        return 1
    marked = [marked_profile(lay) for lay in layers]
    graphs: dict[str, int] = {}  # Myelin graph id -> the profile its marked layers name
    graph_of: list[str | None] = []
    for lay, p in zip(layers, marked, strict=True):
        m = _MYELIN_GRAPH_RE.search(lay.name)
        graph_of.append(m.group(1) if m else None)
        if m and p is not None:
            graphs[m.group(1)] = max(graphs.get(m.group(1), 0), p)
    current = 0
    seen = 0
    for lay, p, g in zip(layers, marked, graph_of, strict=True):
        if p is None and g is not None and g in graphs:
            p = graphs[g]
        if p is not None:
            current = p
        if current:
            lay.own_attrs()[PROFILE] = current
        seen = max(seen, current)
    if seen:
        info.build_settings["optimization_profiles"] = seen + 1
    return seen + 1


def layers_from_times(times: list[tuple[str, LayerTime]]) -> list[Layer]:
    """Profile-only layers (``attrs["profile_only"]``) from a profile's ``EngineInfo.times``."""
    return [Layer(i, name, guess_type(name), None, [], [], None, None, None, None, [], 0.0, None, t,
                  {PROFILE_ONLY: True}) for i, (name, t) in enumerate(times)]


def layers_from_names(names: list[Any]) -> list[Layer]:
    """Layers from a LAYER_NAMES_ONLY list."""
    return [Layer(index=i, name=str(n), type=guess_type(str(n))) for i, n in enumerate(names)]


def io_from_json(doc: dict[str, Any]) -> list[TensorDesc]:
    """Engine I/O tensors from "Bindings" (<=10.x, names) or "I/O Tensors" (11.x, objects)."""
    out: list[TensorDesc] = []
    for b in doc.get("Bindings") or ():
        out.append(TensorDesc(name=str(b)) if not isinstance(b, dict) else tensor_from_dict(b))
    for t in doc.get("I/O Tensors") or ():
        if not isinstance(t, dict):
            out.append(TensorDesc(name=str(t)))
            continue
        desc = tensor_from_dict(t)
        prof = t.get("ProfileInfo")
        if isinstance(prof, list) and prof and isinstance(prof[0], dict):
            desc.format = prof[0].get("Format") or desc.format
        desc.raw = t.get("IOMode") or desc.raw  # "Input" / "Output"
        out.append(desc)
    return out


def info_from_layer_doc(path: Path, doc: Any, consume: bool = False) -> EngineInfo:
    """EngineInfo from an inspector document: {"Layers": [...], "Bindings"|"I/O Tensors": [...]}.

    ``consume``: drop each layer record from ``doc`` once read, so that the parsed document is
    freed record by record instead of in one deallocation (0.1-0.2 s holding the GIL at 50,000
    layers)."""
    if not isinstance(doc, dict) or "Layers" not in doc:
        raise InputError(
            path,
            'unknown layer schema: expected a JSON object with "Layers" (trtexec --exportLayerInfo or '
            "IEngineInspector.get_engine_information(JSON))",
        )
    raw_layers = doc["Layers"]
    if not isinstance(raw_layers, list):
        raise InputError(path, 'unknown layer schema: expected "Layers" to be a list')
    info = EngineInfo(io_tensors=io_from_json(doc))
    if raw_layers and all(isinstance(x, str) for x in raw_layers):
        info.layers = layers_from_names(raw_layers)
        info.detailed = False
        info.warnings.append(NAMES_ONLY_WARNING)
    else:
        layers = []
        for i, rec in enumerate(raw_layers):
            if isinstance(rec, str):
                layers.append(Layer(index=i, name=rec, type=guess_type(rec)))
                continue
            if not isinstance(rec, dict) or "Name" not in rec:
                raise InputError(
                    path, f"unknown layer schema: expected layer {i} to be an object with a Name or a string"
                )
            layers.append(layer_from_dict(i, rec))
            if consume:
                raw_layers[i] = None
        info.layers = layers
    assign_profiles(info)
    return info


def layer_time(rec: dict[str, Any], count: int | None) -> LayerTime:
    """LayerTime from one --exportProfile record."""
    get = rec.get
    return LayerTime(_num(get("timeMs")), _num(get("averageMs")), _num(get("medianMs")), _num(get("percentage")),
                     count)


def _num(v: Any) -> float | None:
    t = type(v)
    if t is float:
        return v  # type: ignore[no-any-return]
    if v is None:
        return None
    if t is int:
        if abs(v) > 2**1023:
            return math.inf if v > 0 else -math.inf  # 10**400 reads as 1e400 does; JSON output writes null
        return float(v)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def to_float(v: Any) -> float | None:
    """A float from a number or numeric string, else None."""
    return _num(v)


_UNITS = {"b": 1, "bytes": 1, "byte": 1, "kib": 1024, "kb": 1024, "mib": 1024**2, "mb": 1024**2,
          "gib": 1024**3, "gb": 1024**3}


def to_bytes(value: str | float, unit: str) -> int | None:
    """12.5 MiB -> bytes."""
    mult = _UNITS.get(unit.strip().lower())
    f = _num(value)
    if mult is None or f is None or not math.isfinite(f * mult):
        return None
    return int(round(f * mult))


def trt_version_from_tag(tag: str) -> str:
    """'101601' (from "[TensorRT v101601]") -> '10.16.1'; '8600' -> '8.6.0'."""
    n = int(tag)
    if n >= 100000:
        return f"{n // 10000}.{(n // 100) % 100}.{n % 100}"
    return f"{n // 1000}.{(n // 100) % 10}.{n % 100}"


SUMMARY_ORDER_7 = ("min", "max", "mean", "median", "p90", "p95", "p99")
SUMMARY_ORDER_5 = ("min", "max", "mean", "median", "p99")
SUMMARY_PREFIX = {
    "Latency": "",
    "Enqueue Time": "enqueue_",
    "H2D Latency": "h2d_",
    "GPU Compute Time": "compute_",
    "D2H Latency": "d2h_",
}


def summary_from_metadata(perf: dict[str, Any]) -> dict[str, float]:
    """latency_ms keys from a TREx ``performance_summary`` dict (lists of min,max,mean,median,pcts)."""
    out: dict[str, float] = {}
    for key, prefix in SUMMARY_PREFIX.items():
        vals = perf.get(key)
        if not isinstance(vals, list):
            continue
        order = SUMMARY_ORDER_7 if len(vals) >= 7 else SUMMARY_ORDER_5
        for k, v in zip(order, vals, strict=False):
            f = _num(v)
            if f is not None:
                out[prefix + k] = f
    thr = _num(perf.get("Throughput"))
    if thr is not None:
        out["throughput_qps"] = thr
    wall = _num(perf.get("Total Host Walltime"))
    if wall is not None:
        out["host_walltime_ms"] = wall * 1000.0
    tot = _num(perf.get("Total GPU Compute Time"))
    if tot is not None:
        out["total_compute_ms"] = tot * 1000.0
    return out


def device_from_trtexec(d: dict[str, Any]) -> dict[str, Any]:
    """device dict from trtexec "Device Information" key/values (log lines or TREx metadata)."""
    out: dict[str, Any] = {}
    name = d.get("Selected Device")
    if name:
        out["name"] = str(name)
    cc = d.get("Compute Capability")
    if cc not in (None, ""):
        out["compute_capability"] = str(cc)
    sms = _num(d.get("SMs"))
    if sms is not None:
        out["sms"] = int(sms)
    mem = d.get("Device Global Memory")
    if isinstance(mem, str):
        parts = mem.split()
        if len(parts) == 2:
            b = to_bytes(parts[0], parts[1])
            if b is not None:
                out["memory_bytes"] = b
    uuid = d.get("Selected Device UUID")
    if uuid:
        out["uuid"] = str(uuid)
    return out
