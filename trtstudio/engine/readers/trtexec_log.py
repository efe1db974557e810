"""trtexec logs and the text logs of TensorRT Python scripts.

What a log may hold, all optional:

- the TensorRT version ("[TensorRT v101601]", "TensorRT version: 10.16.1"), build/inference options,
  device information, memory lines ("Created engine with size", "Total Activation Memory", ...);
- "=== Performance summary ===" (Throughput, Latency/Enqueue/H2D/GPU Compute/D2H statistics);
- the ``--dumpProfile`` table ("Time(ms) Avg.(ms) Median(ms) Time(%) Layer", or the 8.x order);
- ``--dumpLayerInfo`` layer information (ONELINE "Name: ..., LayerType: ..." lines, JSON, or names
  only) and "Bindings:";
- verbose build "Engine Layer Information:" lines "Layer(Type): name, Tactic: 0x..., in -> out";
- IProfiler callback output "Timing: 37.472us -> name" (averaged per layer).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from trtstudio.engine.model import EngineInfo, Layer, LayerTime, TensorDesc
from trtstudio.engine.readers import register
from trtstudio.engine.readers._common import (
    NAMES_ONLY_WARNING,
    PROFILE_ONLY,
    SUMMARY_PREFIX,
    assign_profiles,
    device_from_trtexec,
    guess_type,
    info_from_layer_doc,
    layer_from_dict,
    parse_dims,
    parse_dtype,
    tensor_from_dict,
    to_bytes,
    trt_version_from_tag,
)

_LOGLINE = re.compile(r"^\[(?:\d\d/\d\d/\d{4}-[\d:]+|[VIWEF]|TRT)\] ")
_PREFIX = re.compile(r"^(?:\[\d\d/\d\d/\d{4}-[\d:]+\] )?(?:\[TRT\] )?(?:\[([VIWEF])\] )?(?:\[TRT\] )?")
_TAG = re.compile(r"\[TensorRT v(\d+)\](?: \[(b\d+)\])?")
_SECTION = re.compile(r"^=== (.+?) ===\s*$")
_STAT = re.compile(r"(min|max|mean|median|percentile\((\d+(?:\.\d+)?)%\)) = ([-\d.eE+]+) ms")
_PROFILE_ROW_NEW = re.compile(r"^\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+(.+?)\s*$")
_PROFILE_ROW_OLD = re.compile(r"^\s*(.+?)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*$")
_VERBOSE_LAYER = re.compile(r"^Layer\(([^)]*)\): (.*), Tactic: (\S+), (.*)$")
_VERBOSE_TENSOR = re.compile(r"(.+?) \((\w+)\[([^\]]*)\]\)(?:, |$)")
_TIMING = re.compile(r"^Timing:\s*([\d.]+)\s*(us|ms) -> (.*)$")
_ONELINE_HEAD = re.compile(r"^Name: (.*?), LayerType: (.*?), Inputs: \[")
_ONELINE_TENSOR = re.compile(
    r"^Name: (.*?)(?:, Location: (\w+))?, Dimensions: \[([^\]]*)\], Format/Datatype: (.*?)\s*$"
)
_KEY_SPLIT = re.compile(r", (?=[A-Z][A-Za-z0-9/]*: )")
_MEMORY = (
    (re.compile(r"Created engine with size: ([\d.]+) (\w+)"), "engine_size"),
    (re.compile(r"Loaded engine size: ([\d.]+) (\w+)"), "engine_size_loaded"),
    (re.compile(r"Total Activation Memory: (\d+) (bytes)"), "activation"),
    (re.compile(r"Total Weights Memory: (\d+) (bytes)"), "weights"),
    (re.compile(r"Total Host Persistent Memory: (\d+) (bytes)"), "host_persistent"),
    (re.compile(r"Total Device Persistent Memory: (\d+) (bytes)"), "device_persistent"),
    (re.compile(r"Max Scratch Memory: (\d+) (bytes)"), "scratch"),
    (re.compile(r"device memory size: ([\d.]+) (\w+)"), "device_memory"),
)
_DEVICE_KEYS = frozenset((
    "Selected Device", "Selected Device ID", "Selected Device UUID", "Compute Capability", "SMs",
    "Device Global Memory", "Shared Memory per SM", "Memory Bus Width", "Application Compute Clock Rate",
    "Application Memory Clock Rate", "Compute Clock Rate", "Memory Clock Rate",
))
_SETTINGS_SECTIONS = {"Model Options": None, "Build Options": None, "System Options": "system_options",
                      "Inference Options": "inference_options", "Reporting Options": "reporting_options"}


def _pct(s: str) -> str:
    f = float(s)
    return str(int(f)) if f.is_integer() else s


def _sniff_trtexec(head: str, path: Path) -> bool:
    return "&&&& RUNNING TensorRT.trtexec" in head or "=== Model Options ===" in head


def _sniff_generic(head: str, path: Path) -> bool:
    return (
        "Engine Layer Information:" in head
        or "\nLayers:\nName: " in head
        or "] Layers:\n" in head
        or "=== Performance summary ===" in head
        or "Timing: " in head and " -> " in head
        or "[TensorRT v" in head
    )


def _split_top(s: str) -> list[str]:
    return _KEY_SPLIT.split(s)


def _bracket_end(s: str, start: int) -> int:
    """Index just past the bracket that closes the one at ``start``."""
    depth = 0
    for i in range(start, len(s)):
        c = s[i]
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(s)


def _oneline_tensors(block: str) -> list[TensorDesc]:
    out = []
    for part in re.findall(r"\{ (.*?) \}", block):
        m = _ONELINE_TENSOR.match(part)
        if not m:
            out.append(TensorDesc(name=part))
            continue
        out.append(tensor_from_dict({"Name": m.group(1), "Location": m.group(2),
                                     "Dimensions": parse_dims(m.group(3)), "Format/Datatype": m.group(4)}))
    return out


def _value(v: str) -> Any:
    v = v.strip()
    if v.startswith("{"):
        try:
            return json.loads(v)
        except ValueError:
            return v
    if v.startswith("[") and v.endswith("]") and "ONNX" not in v:
        return parse_dims(v)
    try:
        return int(v)
    except ValueError:
        return v


def parse_oneline(index: int, line: str) -> Layer:
    """A Layer from one ONELINE layer-information line ("Name: ..., LayerType: ..., Inputs: [...]...")."""
    m = _ONELINE_HEAD.match(line)
    if not m:
        return Layer(index=index, name=line.strip(), type=guess_type(line.strip()))
    name, ltype = m.group(1), m.group(2)
    i_start = m.end() - 1
    i_end = _bracket_end(line, i_start)
    inputs = _oneline_tensors(line[i_start:i_end])
    rest = line[i_end:]
    outputs: list[TensorDesc] = []
    if rest.startswith(", Outputs: ["):
        o_start = len(", Outputs: ")
        o_end = _bracket_end(rest, o_start)
        outputs = _oneline_tensors(rest[o_start:o_end])
        rest = rest[o_end:]
    metadata = None
    mi = rest.rfind(", Metadata:")
    if mi >= 0:
        metadata = rest[mi + len(", Metadata:"):].strip()
        rest = rest[:mi]
    d: dict[str, Any] = {"Name": name, "LayerType": ltype, "Metadata": metadata}
    for part in _split_top(rest.lstrip(", ")):
        if ": " in part:
            k, v = part.split(": ", 1)
            d[k.strip()] = _value(v)
        elif part.endswith(":"):
            d[part[:-1].strip()] = ""
    lay = layer_from_dict(index, d)
    lay.inputs, lay.outputs = inputs, outputs
    if lay.tactic_value is not None and not lay.tactic_value.startswith("0x"):
        lay.tactic_value = str(lay.tactic_value)
    return lay


def _verbose_tensors(s: str) -> list[TensorDesc]:
    out = []
    for m in _VERBOSE_TENSOR.finditer(s.strip()):
        out.append(TensorDesc(name=m.group(1), shape=parse_dims(m.group(3)), dtype=parse_dtype(m.group(2)),
                              raw=f"{m.group(2)}[{m.group(3)}]"))
    return out


def parse_verbose_layer(index: int, line: str) -> Layer | None:
    """A Layer from a verbose build line "Layer(CaskConvolution): name, Tactic: 0x..., a (Float[..]) -> b (..)"."""
    m = _VERBOSE_LAYER.match(line)
    if not m:
        return None
    ltype, name, tactic, io = m.groups()
    ins, _, outs = io.partition(" -> ")
    if ltype != "Reformat" and "Reformatting CopyNode" in name:
        attrs: dict[str, Any] = {"reformat": True}
    else:
        attrs = {}
    return Layer(index=index, name=name, type=ltype, inputs=_verbose_tensors(ins), outputs=_verbose_tensors(outs),
                 tactic_value=tactic, attrs=attrs)


class _Blocks:
    """Layer-information blocks found in a log, by kind."""

    def __init__(self) -> None:
        self.oneline: list[list[str]] = []
        self.names: list[list[str]] = []
        self.verbose: list[list[str]] = []
        self.json_docs: list[Any] = []
        self.bindings: list[list[str]] = []


def _parse_json_blocks(text: str, blocks: _Blocks) -> None:
    dec = json.JSONDecoder()
    for m in re.finditer(r'\{\s*"Layers"\s*:', text):
        try:
            doc, _ = dec.raw_decode(text, m.start())
        except ValueError:
            continue
        blocks.json_docs.append(doc)


_BLOCK_MODES = frozenset(("layers", "verbose", "bindings"))
# sections whose "Key: value" lines _LogState.section_line reads (elsewhere it reads memory lines only)
_LINE_SECTIONS = frozenset(("Performance summary", "Device Information", *_SETTINGS_SECTIONS))


class _LogState:
    """What :func:`read` gathers line by line: the EngineInfo being filled, the section the line is
    in, the block being collected (``mode``: "layers" | "verbose" | "bindings" | "profile") and the
    figures read so far. Each kind of line has its method; :func:`read`'s loop dispatches."""

    __slots__ = ("blocks", "cur", "device_kv", "errors", "failed", "info", "mode", "perf", "profile_iters",
                 "profile_order", "profile_rows", "section", "settings", "timings")

    def __init__(self) -> None:
        self.info = EngineInfo()
        self.blocks = _Blocks()
        self.section: str | None = None
        self.settings: dict[str, Any] = {}
        self.device_kv: dict[str, Any] = {}
        self.perf: dict[str, float] = {}
        self.profile_rows: list[tuple[str, float, float, float | None, float]] = []
        self.profile_iters: int | None = None
        self.profile_order: str | None = None
        self.timings: dict[str, list[float]] = {}
        self.errors: list[str] = []
        self.failed = False
        self.mode: str | None = None
        self.cur: list[str] = []

    def close(self) -> None:
        """End the block being collected (a layer listing, verbose layers or bindings)."""
        mode, cur = self.mode, self.cur
        if mode == "layers" and cur:
            if any(c.startswith("Name: ") for c in cur):
                self.blocks.oneline.append(cur)
            else:
                self.blocks.names.append(cur)
        elif mode == "verbose" and cur:
            self.blocks.verbose.append(cur)
        elif mode == "bindings" and cur:
            self.blocks.bindings.append(cur)
        self.mode, self.cur = None, []

    def in_block(self, raw: str) -> bool:
        """Whether ``raw`` belongs to the block being collected (then it is taken); a line that ends
        the block closes it and is read as any other line, except the "Bindings:" that follows a
        layer listing, which starts the bindings."""
        mode = self.mode
        stripped = raw.strip()
        if mode == "verbose":
            if raw.startswith("Layer("):
                self.cur.append(raw)
                return True
            self.close()
        elif mode == "layers":
            if stripped and not _LOGLINE.match(raw) and stripped != "Bindings:":
                self.cur.append(stripped)
                return True
            self.close()
            if stripped == "Bindings:":
                self.mode = "bindings"
                return True
        else:  # bindings
            if stripped and not _LOGLINE.match(raw):
                self.cur.append(stripped)
                return True
            self.close()
        return False

    def banner(self, msg: str) -> None:
        """A "&&&& RUNNING/PASSED/FAILED TensorRT.trtexec [TensorRT v...] # command" line."""
        t = _TAG.search(msg)
        if t:
            self.info.versions.setdefault("tensorrt", trt_version_from_tag(t.group(1)))
            if t.group(2):
                self.info.versions.setdefault("tensorrt_build", t.group(2))
        if msg.startswith("&&&& RUNNING") and "# " in msg:
            self.settings.setdefault("command", msg.split("# ", 1)[1].strip())
        if msg.startswith("&&&& FAILED"):
            self.failed = True

    def start_section(self, section: str) -> None:
        """A "=== Name ===" line: a profile table starts, or any other block ends."""
        self.section = section
        if section.startswith("Profile ("):
            self.mode = "profile"
            pm = re.search(r"\((\d+) iterations", section)
            self.profile_iters = int(pm.group(1)) if pm else None
        else:
            self.mode = None

    def profile_line(self, msg: str) -> bool:
        """A line of the --dumpProfile table; False (the table ended) for a line read as any other."""
        s = msg.strip()
        if not s:
            self.mode = None
            return True
        if s.startswith("Time(ms)"):
            self.profile_order = "new"
            return True
        if s.startswith("Layer ") and "Time" in s:
            self.profile_order = "old"
            return True
        order = self.profile_order
        r = None if order is None else (_PROFILE_ROW_NEW if order == "new" else _PROFILE_ROW_OLD).match(s)
        if r:  # "new": times then the name; "old" (8.x): the name then the times
            g = r.groups()
            name, (total, avg, median, pct) = (g[4], g[:4]) if order == "new" else (g[0], g[1:])
            self.profile_rows.append((name, float(total), float(avg), float(median), float(pct)))
            return True
        self.mode = None
        return False

    def block_start(self, msg: str) -> bool:
        """A line that starts a layer listing, verbose layers or bindings (it ends with ":")."""
        if msg.strip() == "Layers:" or msg == "Layers:":
            mode = "layers"
        elif msg.rstrip().endswith("Engine Layer Information:"):
            mode = "verbose"
        elif msg.strip() == "Bindings:":
            mode = "bindings"
        else:
            return False
        self.close()
        self.mode = mode
        return True

    def section_line(self, sev: str | None, msg: str) -> None:
        """A line of the performance summary, the options, the device information, or a memory line."""
        section = self.section
        if section == "Performance summary" and ": " in msg:
            self.perf_line(*msg.split(": ", 1))
            return
        if section in _SETTINGS_SECTIONS and sev == "I" and ": " in msg:
            sk, sv = msg.split(": ", 1)
            sub = _SETTINGS_SECTIONS[section]
            if sub is None:
                self.settings[sk.strip()] = sv.strip()
            else:
                self.settings.setdefault(sub, {})[sk.strip()] = sv.strip()
            return
        if section in _SETTINGS_SECTIONS and sev == "I" and msg.endswith(":"):
            if _SETTINGS_SECTIONS[section] is None:
                self.settings[msg[:-1].strip()] = ""
            return
        if section == "Device Information" and ": " in msg:
            dk, dv = msg.split(": ", 1)
            if dk.strip() in _DEVICE_KEYS:
                self.device_kv[dk.strip()] = dv.strip()
                return
        if "emory" in msg or "engine size" in msg or "engine with size" in msg:
            for rx, key in _MEMORY:
                mm = rx.search(msg)
                if mm:
                    b = to_bytes(mm.group(1), mm.group(2))
                    if b is not None:
                        self.info.memory[key] = b
                    break

    def perf_line(self, key: str, val: str) -> None:
        """A "Key: value" line of the performance summary."""
        key = key.strip()
        perf = self.perf
        if key == "Throughput":
            perf["throughput_qps"] = float(val.split()[0])
        elif key in SUMMARY_PREFIX:
            pre = SUMMARY_PREFIX[key]
            for st in _STAT.finditer(val):
                k = st.group(1) if st.group(2) is None else "p" + _pct(st.group(2))
                perf[pre + k] = float(st.group(3))
        elif key == "Total Host Walltime":
            perf["host_walltime_ms"] = float(val.split()[0]) * 1000.0
        elif key == "Total GPU Compute Time":
            perf["total_compute_ms"] = float(val.split()[0]) * 1000.0

    def finish(self, path: Path, text: str) -> EngineInfo:
        """The EngineInfo of what was read: layers, profile or timings, memory, latency, device, settings."""
        self.close()
        info, blocks = self.info, self.blocks
        if '"Layers"' in text:
            _parse_json_blocks(text, blocks)
        _fill_layers(path, info, blocks)
        if self.profile_rows:
            _attach_profile(info, self.profile_rows, self.profile_iters)
        if self.timings and not any(lay.time for lay in info.layers):
            _attach_timings(info, self.timings)
        if "engine_size" not in info.memory and "engine_size_loaded" in info.memory:
            info.memory["engine_size"] = info.memory["engine_size_loaded"]
        info.memory.pop("engine_size_loaded", None)
        info.latency_ms.update(self.perf)
        info.device.update(device_from_trtexec(self.device_kv))
        info.build_settings.update(self.settings)
        if self.failed:
            last = self.errors[-1] if self.errors else "see the log"
            info.warnings.append(f"trtexec FAILED: {last}")
        # Keep the lines diagnostics read (plugin creation, warnings, errors), not the whole verbose log.
        info.log.extend(line for line in text.split("\n")
                        if "plugin" in line.lower() or "[W]" in line or "[E]" in line or "ERROR" in line)
        return info


@register("trtexec-log", patterns=("*.log", "*.txt"), sniff=_sniff_trtexec, kind="log", priority=60)
def read(path: Path, text: str) -> EngineInfo:
    """Read everything a trtexec (or TensorRT Python) log says about one engine."""
    st = _LogState()
    # The loop tests what each line is and calls a method only for the kinds it reads: a verbose
    # log is 100,000s of lines of none of them.
    # Not str.splitlines(): it also splits at \x1e, the separator inside Metadata values.
    for raw in text.split("\n"):
        raw = raw.rstrip("\r")
        if st.mode in _BLOCK_MODES and st.in_block(raw):
            continue
        m = _PREFIX.match(raw)
        sev = m.group(1) if m else None
        msg = raw[m.end():] if m else raw
        if sev == "E":
            st.errors.append(msg.strip())
        if msg.startswith("&&&& "):
            st.banner(msg)
            continue
        if msg.startswith("TensorRT version: "):
            st.info.versions["tensorrt"] = msg.split(": ", 1)[1].strip()
            continue
        sm = _SECTION.match(msg)
        if sm:
            st.start_section(sm.group(1))
            continue
        if st.mode == "profile" and st.profile_line(msg):
            continue
        if msg.rstrip().endswith(":") and st.block_start(msg):
            continue
        if msg.startswith("Timing:"):
            tm = _TIMING.match(msg.strip())
            if tm:
                v = float(tm.group(1)) / (1000.0 if tm.group(2) == "us" else 1.0)
                st.timings.setdefault(tm.group(3).strip(), []).append(v)
            continue
        if st.section in _LINE_SECTIONS or "emory" in msg or "engine size" in msg or "engine with size" in msg:
            st.section_line(sev, msg)
    return st.finish(path, text)


register("tensorrt-log", patterns=(), sniff=_sniff_generic, kind="log", priority=90)(read)


def _fill_layers(path: Path, info: EngineInfo, blocks: _Blocks) -> None:
    chosen: list[Layer] = []
    n_blocks = 0
    if blocks.json_docs:
        doc = blocks.json_docs[-1]
        sub = info_from_layer_doc(path, doc)
        chosen, n_blocks = sub.layers, len(blocks.json_docs)
        info.io_tensors = sub.io_tensors
        info.detailed = sub.detailed
        info.warnings.extend(sub.warnings)
    elif blocks.oneline:
        chosen = [parse_oneline(i, ln) for i, ln in enumerate(blocks.oneline[-1])]
        n_blocks = len(blocks.oneline)
    elif blocks.verbose:
        chosen = [lay for i, ln in enumerate(blocks.verbose[-1]) if (lay := parse_verbose_layer(i, ln))]
        n_blocks = len(blocks.verbose)
        info.warnings.append(
            "layers read from the verbose build log (Engine Layer Information): no tactic names or metadata; "
            "export layer info with --exportLayerInfo --profilingVerbosity=detailed for more"
        )
    elif blocks.names:
        chosen = [Layer(index=i, name=n, type=guess_type(n)) for i, n in enumerate(blocks.names[-1])]
        n_blocks = len(blocks.names)
        info.detailed = False
        info.warnings.append(NAMES_ONLY_WARNING)
    if not chosen:
        return
    if n_blocks > 1:
        info.warnings.append(f"the log holds {n_blocks} layer listings (several engines); read the last one")
    for i, lay in enumerate(chosen):
        lay.index = i
    info.layers = chosen
    assign_profiles(info)
    if blocks.bindings and not info.io_tensors:
        info.io_tensors = [TensorDesc(name=b) for b in blocks.bindings[-1]]


def _attach_profile(info: EngineInfo, rows: list[tuple[str, float, float, float | None, float]],
                    iters: int | None) -> None:
    rows = [r for r in rows if r[0] != "Total"]
    times = {
        name: LayerTime(total_ms=t, average_ms=a, median_ms=med, percent=p, count=iters)
        for name, t, a, med, p in rows
    }
    if info.layers:
        # Several layers may share a name only across profiles; the table covers the profile that ran.
        matched = 0
        for lay in info.layers:
            lt = times.get(lay.name)
            if lt is not None:
                lay.time = lt
                matched += 1
        if matched >= len(rows) / 2:
            return
        # Mostly different names (a layer listing of another build): keep the table as its own layers.
        info.warnings.append(
            f"the --dumpProfile table matches {matched} of {len(rows)} layer names in the log's layer information"
        )
    info.layers = [
        Layer(index=i, name=name, type=guess_type(name), time=times[name], attrs={PROFILE_ONLY: True})
        for i, (name, *_rest) in enumerate(rows)
    ]
    info.detailed = False


def _attach_timings(info: EngineInfo, timings: dict[str, list[float]]) -> None:
    times = {
        name: LayerTime(total_ms=sum(v), average_ms=sum(v) / len(v), median_ms=sorted(v)[len(v) // 2],
                        count=len(v))
        for name, v in timings.items()
    }
    total = sum(t.average_ms or 0.0 for t in times.values()) or 1.0
    for t in times.values():
        t.percent = 100.0 * (t.average_ms or 0.0) / total
    if info.layers:
        for lay in info.layers:
            lay.time = times.get(lay.name, lay.time)
        return
    info.layers = [
        Layer(index=i, name=name, type=guess_type(name), time=t, attrs={PROFILE_ONLY: True})
        for i, (name, t) in enumerate(times.items())
    ]
    info.detailed = False
