"""Reader for verbose TensorRT-RTX and TensorRT build logs: the engine's layer listing and build facts.

Two listings are understood, wherever they sit in the log:

* TensorRT-RTX (and the inspector's ONELINE text) after a ``Layers:`` line, one layer per line::

      Name: /features/1/conv/0/0/Conv_myl0_3, LayerType: correlation, Inputs: [ { Name: x,
      Dimensions: [-1,16,112,112], ..., Datatype: Float, Format: (NHWC) Channel major format }],
      Constants: [...], Outputs: [...], TacticName: __myelin_CASK_STUB, StreamId: 0,
      Metadata: [ONNX Layer: /features/1/conv/0/0/Conv][ONNX Layer: /features/1/conv/0/2/Clip]

  followed by ``I/O Tensors:`` (engine inputs/outputs with their profile shapes). TensorRT-RTX 1.4
  prints ``Format/Datatype: Float`` (a data type, no format) and, instead of ``I/O Tensors:``, a
  ``Bindings:`` block of bare names: the I/O tensors are then taken from the layers that read and
  write those names, the profile shapes from trtstudio's header where it has them, and one reader
  warning says what the log lacks (formats, I/O tensors, profile shapes), so that nobody reads a
  missing format or shape as a change.
* Full TensorRT after ``Engine Layer Information:``::

      Layer(CaskConvolution): node_conv2d + node_relu, Tactic: 0xcf8ea142095f02d2, x (Float[-1,1,28,28]) -> relu (Float[-1,32,28,28])

Lines may carry logger prefixes (``[12/02/2026-14:00:00] [TRT] [V]``, ``[V] [TRT]``, ``[VERBOSE]``);
continuation lines of one multi-line record have none. When the log holds several builds, the last
listing is read. The first line written by :meth:`trtstudio.backends.build.BuildResult.log_text`
(``# trtstudio.buildlog/1 {json}``) gives versions and build settings.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from trtstudio.engine.buildlog import LOG_HEADER
from trtstudio.engine.model import EngineInfo, Layer, TensorDesc
from trtstudio.engine.readers._common import (
    assign_profiles,
    io_from_json,
    layer_from_dict,
    parse_dims,
    parse_dtype,
)
from trtstudio.engine.readers.trtexec_log import parse_verbose_layer
from trtstudio.errors import InputError

NAME = "rtx-log"
PATTERNS = ("*.build.log", "*.rtx.log", "*rtx*.log")
MAX_LOG_WARNINGS = 50

_PREFIX = re.compile(
    r"^(?:\[(?:\d\d/\d\d/\d{4}-[\d:.]+|TRT|TRT-RTX|trtstudio|[A-Z]|VERBOSE|INFO|WARNING|ERROR|INTERNAL_ERROR)\] ?)+"
)
_SEVERITY = re.compile(r"\[(V|I|W|E|F|VERBOSE|INFO|WARNING|ERROR|INTERNAL_ERROR)\]")
_KEY = re.compile(r"^([A-Za-z][A-Za-z0-9/ _-]{0,40}): ?(.*)$", re.S)
_METADATA = re.compile(r", Metadata:(?: (.*))?$")
_ONNX_LAYER = re.compile(r"\[ONNX Layer: (.*?)\](?=\[ONNX Layer: |$|\x1e|\x1f)")

_LIST_KEYS = frozenset(("Inputs", "Outputs", "Constants", "ProfileInfo"))
_FACTS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"Total Activation Memory: (\d+) bytes"), "memory", "device_memory"),
    (re.compile(r"Total Weights Memory: (\d+) bytes"), "memory", "weights"),
    (re.compile(r"Total Host Persistent Memory: (\d+) bytes"), "memory", "host_persistent"),
    (re.compile(r"Total Device Persistent Memory: (\d+) bytes"), "memory", "device_persistent"),
    (re.compile(r"Max Scratch Memory: (\d+) bytes"), "memory", "scratch"),
    (re.compile(r"Engine generation completed in ([\d.]+) seconds"), "build_settings", "build_seconds"),
    (re.compile(r"Number of target compute capabilities: (\d+)"), "build_settings", "num_targets"),
    (re.compile(r"^Input filename: +(.+)$"), "build_settings", "onnx_file"),
    (re.compile(r"^Opset version: +(\d+)"), "build_settings", "onnx_opset"),
    (re.compile(r"^Producer name: +(.+)$"), "build_settings", "onnx_producer"),
)


def sniff(head: str, path: Path) -> bool:
    """True for a trtstudio build log, a TensorRT-RTX log, or a build log of TensorRT's Python logger.

    trtexec logs (``&&&& RUNNING``, ``[I] [TRT]``) are left to the trtexec reader. A verbose build
    log prints its layer listing at the end, past the head, so the head's cues are the parser banner
    and the builder's own lines.
    """
    if head.startswith(LOG_HEADER):
        return True
    if "&&&& RUNNING" in head or "[I] [TRT]" in head or "[V] [TRT]" in head:
        return False
    if "tensorrt_rtx" in head or "TensorRT-RTX" in head:
        return True
    if any(ln.startswith("Name: ") and ", LayerType: " in ln for ln in head.split("\n")):
        return True
    return "[TRT] [V]" in head and any(cue in head for cue in _BUILD_CUES)


_BUILD_CUES = ("Input filename:", "Registering layer:", "Engine Layer Information:", "\nLayers:")


def _strip(line: str) -> tuple[str, str | None]:
    """(message, severity letter or None) of one log line."""
    m = _PREFIX.match(line)
    if not m:
        return line, None
    sev = _SEVERITY.search(m.group(0))
    return line[m.end() :], (sev.group(1)[0] if sev else None)


def _split_top(text: str) -> list[str]:
    """Split on ", " outside brackets, braces and parentheses."""
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "[{(":
            depth += 1
        elif c in "]})":
            depth = max(0, depth - 1)
        elif c == "," and depth == 0 and i + 1 < n and text[i + 1] == " ":
            parts.append(text[start:i])
            start = i + 2
            i += 1
        i += 1
    parts.append(text[start:])
    return parts


def _value(key: str, raw: str) -> Any:
    raw = raw.strip()
    if key in _LIST_KEYS or (raw.startswith("[") and "{" in raw):
        return [_record(m) for m in _braced(raw)]
    if key in ("Dimensions", "MinShape", "OptShape", "MaxShape", "Shape"):
        return parse_dims(raw)
    if key == "StreamId" and raw.lstrip("-").isdigit():
        return int(raw)
    if raw.startswith("{") and raw.endswith("}"):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw
    return raw


def _braced(text: str) -> list[str]:
    """The contents of each top-level ``{ ... }`` group in ``text``."""
    out: list[str] = []
    depth = 0
    start = -1
    for i, c in enumerate(text):
        if c == "{":
            if depth == 0:
                start = i + 1
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                out.append(text[start:i].strip())
    return out


def _record(text: str) -> dict[str, Any]:
    """``Key: value, Key: value`` (values may nest) -> dict; unkeyed pieces rejoin the value before."""
    rec: dict[str, Any] = {}
    raw: dict[str, str] = {}
    last: str | None = None
    for piece in _split_top(text):
        m = _KEY.match(piece)
        if m and (last is None or m.group(1) not in raw):
            last = m.group(1)
            raw[last] = m.group(2)
        elif last is not None:
            raw[last] += ", " + piece
    for k, v in raw.items():
        rec[k] = _value(k, v)
    return rec


def parse_oneline_layer(index: int, line: str) -> Layer:
    """A Layer from one ``Name: ..., LayerType: ..., Inputs: [...], ...`` line (TensorRT-RTX or ONELINE)."""
    meta = None
    m = _METADATA.search(line)
    if m:
        meta = (m.group(1) or "").strip()
        line = line[: m.start()]
    rec = _record(line)
    rec["Metadata"] = meta or None
    consts = rec.pop("Constants", None)
    lay = layer_from_dict(index, rec)
    if isinstance(consts, list) and consts:
        lay.attrs["constants"] = [
            {"name": c.get("Name"), "shape": c.get("Dimensions"), "dtype": parse_dtype(c.get("Datatype"))}
            for c in consts
            if isinstance(c, dict)
        ]
    return lay


def _map_metadata(layers: list[Layer]) -> None:
    """ONNX node names from ``[ONNX Layer: name]`` metadata (exact: confidence 1.0)."""
    for lay in layers:
        if not lay.metadata or lay.onnx_nodes:
            continue
        nodes = [n for n in _ONNX_LAYER.findall(lay.metadata) if n]
        if nodes:
            lay.onnx_nodes = list(dict.fromkeys(nodes))
            lay.mapping_confidence = 1.0


def _listings(lines: list[str]) -> tuple[list[list[str]], list[str], list[str]]:
    """(layer listings, lines of the last I/O Tensors block, names of the last Bindings block)."""
    listings: list[list[str]] = []
    io_lines: list[str] = []
    bindings: list[str] = []
    mode = ""
    for line in lines:
        msg, sev = _strip(line)
        if sev is not None or msg != line:
            mode = ""
        head = msg.strip()
        if head in ("Layers:", "Engine Layer Information:"):
            listings.append([])
            mode = "layers"
            continue
        if head == "I/O Tensors:":
            io_lines = []
            mode = "io"
            continue
        if head == "Bindings:" and sev is None:
            bindings = []
            mode = "bindings"
            continue
        if mode == "layers" and (msg.startswith("Name: ") or msg.startswith("Layer(")):
            listings[-1].append(msg)
        elif mode == "io" and head.startswith("Name: "):
            io_lines.append(head)
        elif mode == "bindings" and head and ": " not in head:
            bindings.append(head)
        elif head:
            mode = ""
    return [ls for ls in listings if ls], io_lines, bindings


def _io_from_layers(layers: list[Layer], names: list[str]) -> list[TensorDesc]:
    """The engine's I/O tensors named by a ``Bindings:`` block, described by the layers that read or
    write them (an output is written by a layer, an input only read); a name no layer lists keeps
    only its name."""
    written = {t.name for lay in layers for t in lay.outputs}
    found: dict[str, TensorDesc] = {}
    for lay in layers:
        for seen in (*lay.inputs, *lay.outputs):
            if seen.name in names and seen.name not in found:
                found[seen.name] = seen
    out = []
    for name in names:
        t: TensorDesc | None = found.get(name)
        mode = "Output" if name in written else "Input"
        out.append(TensorDesc(name, list(t.shape) if t is not None and t.shape is not None else None,
                              t.dtype if t is not None else None, None, mode if t is not None else None))
    return out


def _header_profile_shapes(info: EngineInfo) -> dict[str, dict[str, Any]]:
    """The first profile's shapes as trtstudio's build-log header recorded them (its settings)."""
    given = info.build_settings.get("profiles")
    first = given[0] if isinstance(given, list) and given and isinstance(given[0], dict) else {}
    return {str(k): dict(zip(("MinShape", "OptShape", "MaxShape"), v, strict=True))
            for k, v in first.items() if isinstance(v, list) and len(v) == 3}


def _missing_note(info: EngineInfo, bindings_only: bool) -> str | None:
    """One warning naming what this log does not record (None where it records it all)."""
    tensors = [t for lay in info.layers for t in (*lay.inputs, *lay.outputs)]
    lacks = []
    if any(t.dtype for t in tensors) and not any(t.format for t in tensors):
        lacks.append("no tensor formats (data types only)")
    if bindings_only:
        lacks.append("no I/O tensors (only the bindings' names; taken from the layers that read and write them)")
    dynamic = any(isinstance(d, int) and d < 0 for t in info.io_tensors for d in (t.shape or ()))
    if dynamic and "profile_shapes" not in info.build_settings:
        lacks.append("no profile shapes")
    if not lacks:
        return None
    module = info.versions.get("module")
    by = f" ({module} {info.versions.get(module, '')})".replace(" )", ")") if module else ""
    later = "; TensorRT-RTX 1.5 and later print them" if bindings_only else ""
    return f"this build log{by} records {', '.join(lacks)}: what it lacks is unknown, not a change{later}"


def _facts(info: EngineInfo, lines: list[str]) -> None:
    for line in lines:
        msg, sev = _strip(line)
        if sev in ("W", "E", "F") and len(info.warnings) < MAX_LOG_WARNINGS:
            info.warnings.append(f"builder {'warning' if sev == 'W' else 'error'}: {msg.strip()}")
        for pattern, where, key in _FACTS:
            m = pattern.search(msg.strip())
            if m:
                val: Any = m.group(1).strip()
                if where == "memory":
                    info.memory[key] = int(val)
                elif key == "build_seconds":
                    info.build_settings[key] = float(val)
                elif key in ("num_targets", "onnx_opset"):
                    info.build_settings[key] = int(val)
                else:
                    info.build_settings[key] = val


def _header(info: EngineInfo, first: str) -> None:
    if not first.startswith(LOG_HEADER):
        return
    try:
        doc = json.loads(first[len(LOG_HEADER) :])
    except json.JSONDecodeError:
        info.warnings.append("trtstudio build-log header is not valid JSON; versions unknown")
        return
    if isinstance(doc, dict):
        info.versions.update({str(k): str(v) for k, v in (doc.get("versions") or {}).items()})
        info.build_settings.update(doc.get("settings") or {})


def read(path: Path, text: str) -> EngineInfo:
    """EngineInfo from a verbose build log; InputError when the log has no layer listing."""
    # Not splitlines(): it also splits on \x1e/\x1f, which separate ONNX names in Metadata.
    lines = [ln.rstrip("\r") for ln in text.split("\n")]
    info = EngineInfo(formats=[NAME], sources=[str(path)])
    if lines:
        _header(info, lines[0])
    listings, io_lines, bindings = _listings(lines)
    if not listings:
        raise InputError(
            path,
            "no engine layer listing in this log: build with a verbose logger (trtstudio build, "
            "or trt.Logger.VERBOSE / trtexec --verbose) so the builder prints the engine's layers",
        )
    if len(listings) > 1:
        info.warnings.append(f"the log holds {len(listings)} engine builds; showing the last one")
    layers: list[Layer] = []
    for raw in listings[-1]:
        idx = len(layers)
        lay = parse_verbose_layer(idx, raw) if raw.startswith("Layer(") else parse_oneline_layer(idx, raw)
        if lay is not None:
            layers.append(lay)
    info.layers = layers
    assign_profiles(info)
    _map_metadata(layers)
    info.detailed = any(lay.inputs or lay.outputs for lay in layers)
    if io_lines:
        recs = [_record(ln) for ln in io_lines]
        info.io_tensors = io_from_json({"I/O Tensors": recs})
        shapes = {
            str(r.get("Name")): {k: p[k] for k in ("MinShape", "OptShape", "MaxShape") if k in p}
            for r in recs
            for p in (r.get("ProfileInfo") or [])[:1]
            if isinstance(p, dict) and "MinShape" in p
        }
        if shapes:
            info.build_settings["profile_shapes"] = shapes
    elif bindings:
        info.io_tensors = _io_from_layers(layers, bindings)
    if not info.build_settings.get("profile_shapes") and _header_profile_shapes(info):
        info.build_settings["profile_shapes"] = _header_profile_shapes(info)
    note = _missing_note(info, bool(bindings) and not io_lines)
    if note:
        info.warnings.append(note)
    _facts(info, lines)
    info.log = lines
    return info


try:
    from trtstudio.engine.readers import register

    register(NAME, patterns=PATTERNS, sniff=sniff, kind="log", priority=40)(read)
except ImportError:  # the registry is optional for this module
    pass
