"""Serialized engines (.engine / .plan / .trt): deserialize with the TensorRT runtime and inspect.

Full TensorRT plans start with the magic ``ftrt`` and TensorRT-RTX plans with ``vtrt`` (the numbers
the runtimes print when the tags differ: 0x74727466 / 0x74727476), so the matching runtime is tried
first. Deserializing needs a GPU and the TensorRT version that built the engine; when either is
missing the user gets one line saying so and how to export the layer information instead (for a
TensorRT-RTX plan: ``trtstudio build --json`` / ``--save-log``; trtexec does not build those).
Beside a file that lists the engine's layers (a build document or log) a plan is not deserialized:
:func:`plan_header_info` reads what its header says (``engine.load``).
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any

from trtstudio.engine.model import EngineInfo, TensorDesc
from trtstudio.engine.readers import register
from trtstudio.engine.readers._common import info_from_layer_doc, parse_dtype
from trtstudio.errors import InputError

ENGINE_SUFFIXES = (".engine", ".plan", ".trt", ".trtengine")
_MAGIC = {b"ftrt": ("tensorrt", "tensorrt_rtx"), b"vtrt": ("tensorrt_rtx", "tensorrt")}
_NO_RUNTIME = (
    "a serialized engine needs the TensorRT runtime that built it; install tensorrt (pip install tensorrt, "
    "from NVIDIA's index) or tensorrt-rtx-cu13 for TensorRT-RTX engines, or export layer info with "
    "trtexec --loadEngine=... --profilingVerbosity=detailed --exportLayerInfo=layers.json"
)
# TensorRT-RTX plans: trtexec does not build them; trtstudio build's document and log list every layer
RTX_HINT = ("name the build's document or log instead (trtstudio build MODEL --backend rtx --json > NAME.build.json, "
            "or --save-log NAME.build.log; a folder holding it is read without deserializing the plan)")
_TRTEXEC_HINT = "export the layer information on the build machine with trtexec --exportLayerInfo"
_VERSION_PATTERNS = (
    re.compile(r"expecting library version (\S+?),? got (\S+?)[,.]? "),
    re.compile(r"Current Version: (\d+), Serialized Engine Version: (\d+)"),
    re.compile(r"incompatible serialization version \((\d+) != (\d+)\)"),
)


def _sniff(head: str, path: Path) -> bool:
    if head[:4] in ("ftrt", "vtrt"):
        return True
    return path.suffix.lower() in ENGINE_SUFFIXES and "\x00" in head[:4096]


def _logger(trt: Any) -> Any:
    class _Collect(trt.ILogger):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            trt.ILogger.__init__(self)
            self.messages: list[tuple[str, str]] = []

        def log(self, severity: Any, msg: str) -> None:
            self.messages.append((str(severity), msg))

    return _Collect()


def version_mismatch(messages: list[str]) -> str | None:
    """'engine version X, runtime version Y' from the runtime's deserialization errors, if it says so."""
    for msg in messages:
        if "ersion" not in msg:
            continue
        for rx in _VERSION_PATTERNS:
            m = rx.search(msg + " ")
            if m:
                a, b = m.groups()
                if rx is _VERSION_PATTERNS[0]:
                    return f"the engine was built with TensorRT {b} but this runtime is {a}"
                if rx is _VERSION_PATTERNS[1]:
                    return f"serialization version of the engine is {b}, this runtime expects {a}"
                return f"serialization tag of the engine is {a}, this runtime expects {b}"
    return None


def _io(engine: Any, trt: Any) -> list[TensorDesc]:
    out = []
    for i in range(int(getattr(engine, "num_io_tensors", 0))):
        name = engine.get_tensor_name(i)
        mode = engine.get_tensor_mode(name)
        out.append(TensorDesc(
            name=name,
            shape=list(engine.get_tensor_shape(name)),
            dtype=parse_dtype(str(engine.get_tensor_dtype(name)).rsplit(".", 1)[-1]),
            raw="Input" if mode == trt.TensorIOMode.INPUT else "Output",
        ))
    return out


def read_engine_file(path: str | Path) -> EngineInfo:
    """Deserialize an engine plan and read its inspector JSON (needs tensorrt or tensorrt_rtx and a GPU)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(p, f"cannot read: {exc.strerror or exc}") from None
    if not data:
        raise InputError(p, "empty file")
    order = _MAGIC.get(data[:4], ("tensorrt", "tensorrt_rtx"))
    problems: list[str] = []
    tried_any = False
    for modname in order:
        try:
            trt = importlib.import_module(modname)
        except ImportError:
            continue
        tried_any = True
        logger = _logger(trt)
        try:
            runtime = trt.Runtime(logger)
            engine = runtime.deserialize_cuda_engine(data)
        except Exception as exc:  # the bindings raise on some failures instead of returning None
            engine = None
            logger.messages.append(("ERROR", str(exc)))
        version = getattr(trt, "__version__", "?")
        if engine is None:
            errs = [m for _sev, m in logger.messages]
            why = version_mismatch(errs)
            last = next((m for m in reversed(errs) if "rror" in m), "deserialize_cuda_engine returned None")
            if why is None and "cuda" in last.lower():
                why = ("no usable CUDA GPU or driver here (deserializing an engine needs one); "
                       + (RTX_HINT if data[:4] == b"vtrt" else _TRTEXEC_HINT))
            problems.append(f"{modname} {version}: {why or last.splitlines()[0]}")
            continue
        inspector = engine.create_engine_inspector()
        doc = json.loads(inspector.get_engine_information(trt.LayerInformationFormat.JSON))
        info = info_from_layer_doc(p, doc)
        info.versions["tensorrt_rtx" if modname == "tensorrt_rtx" else "tensorrt"] = version
        info.memory["engine_size"] = len(data)
        size = getattr(engine, "device_memory_size_v2", None)
        if size is None:
            size = getattr(engine, "device_memory_size", None)
        if isinstance(size, int):
            info.memory["device_memory"] = size
        io = _io(engine, trt)
        if io and not any(t.dtype for t in info.io_tensors):
            info.io_tensors = io
        return info
    if not tried_any:
        raise InputError(p, _NO_RUNTIME if data[:4] != b"vtrt" else
                         "a serialized TensorRT-RTX engine needs tensorrt-rtx-cu13 and a GPU to deserialize; " + RTX_HINT)
    from trtstudio.engine.compat import compare_engine, plan_summary  # the plan header vs this machine

    header = [f["message"] for f in compare_engine(plan_path=p)
              if f["severity"] == "error" and "no NVIDIA GPU" not in f["message"]]
    raise InputError(p, f"cannot deserialize {plan_summary(p) or 'the engine'}: " + "; ".join(problems + header))


def plan_header_info(path: str | Path) -> EngineInfo:
    """What a plan's header says, without deserializing it: the runtime (and a TensorRT-RTX plan's
    version and targets) and the file's size (``memory["engine_size"]``)."""
    from trtstudio.engine.compat import read_plan_header

    p = Path(path)
    info = EngineInfo(sources=[str(p)], formats=["engine-plan (header)"])
    head = read_plan_header(p) or {}
    if head.get("version"):
        info.build_settings["plan_version"] = head["version"]
    if head.get("targets"):
        info.build_settings["plan_targets"] = ["SM" + c.replace(".", "") for c in head["targets"]]
    try:
        info.memory["engine_size"] = p.stat().st_size
    except OSError:
        pass
    return info


@register("engine-plan", patterns=tuple("*" + s for s in ENGINE_SUFFIXES), sniff=_sniff, kind="engine",
          binary=True, priority=0)
def read(path: Path, text: str) -> EngineInfo:
    """Registry entry: see :func:`read_engine_file`."""
    return read_engine_file(path)
