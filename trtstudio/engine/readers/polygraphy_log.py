"""``polygraphy inspect model engine.plan`` output: "---- N Layer(s) ----" with one block per layer.

::

    Layer 0    | node_conv2d + node_relu [Op: CaskConvolution]
        {x [dtype=float32, shape=(-1, 1, 28, 28), Format: Float]}
         -> {relu [dtype=float32, shape=(-1, 32, 28, 28), Format: Float]}
        ---- Attributes ----
        Origin = Unknown
        Tactic = 0x5b8bf1b8028629d9

Also the engine's I/O tensors, "Device Memory: N bytes" and module versions. Logs of other
``polygraphy`` subcommands (inspect data/tactics/capability) carry no engine layers; reading them
gives an EngineInfo with versions and a warning.
"""

from __future__ import annotations

import re
from pathlib import Path

from trtstudio.engine.model import EngineInfo, Layer, TensorDesc
from trtstudio.engine.readers import register
from trtstudio.engine.readers._common import assign_profiles, guess_type, parse_dims, parse_dtype

_LAYER = re.compile(r"^\s*Layer (\d+)\s*\| (.*) \[Op: ([^\]]*)\]\s*$")
_TENSOR = re.compile(r"([^{},]+?) \[dtype=(\w+), shape=\(([^)]*)\)(?:, Format: ([^\]]*))?\]")
_MODULE = re.compile(r"Loaded Module: (\w+) \| Version: (\S+)")
_IO = re.compile(r"^\s*\{?\s*([^{}\[]+?) \[dtype=(\w+), shape=\(([^)]*)\)\]")


def _sniff(head: str, path: Path) -> bool:
    return "Loaded Module: polygraphy" in head or "==== TensorRT Engine ====" in head or (
        head.startswith("[I] ") and "polygraphy" in head
    )


def _tensors(s: str) -> list[TensorDesc]:
    return [
        TensorDesc(name=m.group(1).strip(), shape=parse_dims(m.group(3)),
                   dtype=parse_dtype(m.group(2)) or parse_dtype(m.group(4)),
                   format=m.group(4) if m.group(4) and parse_dtype(m.group(4)) != m.group(4) else None,
                   raw=m.group(4))
        for m in _TENSOR.finditer(s)
    ]


@register("polygraphy-log", patterns=("result-*.log",), sniff=_sniff, kind="log", priority=55)
def read(path: Path, text: str) -> EngineInfo:
    """Read a Polygraphy inspect log; layers only when it inspected an engine."""
    info = _header(text)
    lines = [ln.rstrip("\r") for ln in text.split("\n")]  # not splitlines(): keeps \x1e inside lines
    layers: list[Layer] = []
    in_layers = False
    io_kind: str | None = None
    cur: Layer | None = None
    buf: list[str] = []

    def flush() -> None:
        nonlocal buf
        if cur is not None and buf:
            joined = " ".join(x.strip() for x in buf)
            ins, _, outs = joined.partition("->")
            cur.inputs, cur.outputs = _tensors(ins), _tensors(outs)
        buf = []

    in_attrs = False
    in_engine = False
    for line in lines:
        s = line.strip()
        if s.startswith("==== ") or "] ==== " in s:
            in_engine = "==== TensorRT Engine ====" in s
            in_layers, io_kind = False, None
            continue
        if not in_engine:
            continue
        if s.startswith("---- ") and s.endswith(" ----"):
            if "Layer(s)" in s:
                in_layers, io_kind = True, None
            elif "Engine Input(s)" in s:
                io_kind = "Input"
            elif "Engine Output(s)" in s:
                io_kind = "Output"
            elif s == "---- Attributes ----" and cur is not None:
                flush()
                in_attrs = True
            else:
                io_kind = None
            continue
        if io_kind and not in_layers:
            iom = _IO.match(line)
            if iom:
                info.io_tensors.append(TensorDesc(name=iom.group(1).strip(), shape=parse_dims(iom.group(3)),
                                                  dtype=parse_dtype(iom.group(2)), raw=io_kind))
            continue
        if not in_layers:
            continue
        lm = _LAYER.match(line)
        if lm:
            flush()
            in_attrs = False
            cur = Layer(index=len(layers), name=lm.group(2).strip(), type=lm.group(3).strip())
            if cur.type in ("", "Unknown"):
                cur.type = guess_type(cur.name)
            layers.append(cur)
            continue
        if cur is None:
            continue
        if in_attrs:
            _attribute(cur, s)
        elif s:
            buf.append(s)
    flush()
    _finish(info, layers, text)
    return info


def _header(text: str) -> EngineInfo:
    """An EngineInfo with the log's module versions and the engine's device memory."""
    info = EngineInfo()
    for m in _MODULE.finditer(text[:20000]):
        info.versions.setdefault(m.group(1), m.group(2))
    mem = re.search(r"Device Memory: (\d+) bytes", text)
    if mem:
        info.memory["device_memory"] = int(mem.group(1))
    return info


def _attribute(cur: Layer, s: str) -> None:
    """One stripped line of a layer's "---- Attributes ----" block: Origin, Tactic or another attribute."""
    if " = " in s:
        k, v = s.split(" = ", 1)
    elif s.endswith(" ="):
        k, v = s[:-2], ""
    else:
        return
    k, v = k.strip(), v.strip()
    if k == "Origin":
        cur.origin = None if v in ("", "Unknown") else v
    elif k == "Tactic":
        if v.startswith("0x"):
            cur.tactic_value = v
        elif v:
            cur.tactic = v
    else:
        cur.attrs[k] = v


def _finish(info: EngineInfo, layers: list[Layer], text: str) -> None:
    """Set the layers (with their profiles), or say why the log has none."""
    if layers:
        info.layers = layers
        assign_profiles(info)
    elif "==== TensorRT Network ====" in text:
        info.warnings.append(
            "Polygraphy log of a TensorRT network (before the builder fused layers), not of an engine: "
            "run polygraphy inspect model on the engine plan to list engine layers"
        )
    else:
        info.warnings.append("Polygraphy log without engine layers (inspect an engine plan to list them)")
