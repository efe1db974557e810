"""TREx side files: ``*.build.metadata.json``, ``*.profile.metadata.json`` and ``*.metadata.json``.

build metadata: model_options / build_options (/ device_information) from the trtexec build log;
profile metadata: performance_summary / inference_options / device_information of the profiling run;
metadata: a list with the pycuda device attributes of the GPU (Name, ComputeCapability, TotalMemory...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trtstudio.engine.model import EngineInfo
from trtstudio.engine.readers import loads_json, register
from trtstudio.engine.readers._common import device_from_trtexec, summary_from_metadata
from trtstudio.errors import InputError

_KEYS = ('"model_options"', '"build_options"', '"performance_summary"', '"inference_options"',
         '"device_information"')


def _sniff(head: str, path: Path) -> bool:
    s = head.lstrip()
    if s.startswith("{"):
        top = s[:200]
        return any(k in top for k in _KEYS)
    if s.startswith("["):
        return '"ComputeCapability"' in s[:400] and '"Name"' in s[:100]
    return False


def _device_attrs(rec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if rec.get("Name"):
        out["name"] = str(rec["Name"])
    cc = rec.get("ComputeCapability")
    if isinstance(cc, list) and len(cc) == 2:
        out["compute_capability"] = f"{cc[0]}.{cc[1]}"
    if isinstance(rec.get("TotalMemory"), int):
        out["memory_bytes"] = rec["TotalMemory"]
    if isinstance(rec.get("MULTIPROCESSOR_COUNT"), int):
        out["sms"] = rec["MULTIPROCESSOR_COUNT"]
    cuda = rec.get("CUDA_VERSION")
    if isinstance(cuda, list):
        out["cuda"] = ".".join(str(x) for x in cuda)
    out["attributes"] = {k: v for k, v in rec.items() if k.isupper()}
    return out


@register(
    "trex-metadata",
    patterns=("*.build.metadata.json", "*.profile.metadata.json", "*.metadata.json", "*metadata*.json"),
    sniff=_sniff,
    kind="metadata",
)
def read(path: Path, text: str) -> EngineInfo:
    """Read TREx build/profile/device metadata into versions, device, build_settings, latency_ms."""
    doc = loads_json(path, text)
    info = EngineInfo()
    if isinstance(doc, list):
        recs = [r for r in doc if isinstance(r, dict)]
        if not recs or "Name" not in recs[0]:
            raise InputError(path, "unknown metadata schema: expected a list of device objects with a Name")
        info.device = _device_attrs(recs[0])
        if len(recs) > 1:
            info.device["count"] = len(recs)
        cuda = info.device.get("cuda")
        if cuda:
            info.versions["cuda"] = cuda
        return info
    if not isinstance(doc, dict) or not any(k.strip('"') in doc for k in _KEYS):
        raise InputError(
            path, "unknown metadata schema: expected model_options/build_options or performance_summary"
        )
    settings: dict[str, Any] = {}
    for key in ("model_options", "build_options"):
        sect = doc.get(key)
        if isinstance(sect, dict):
            settings.update(sect)
    inf = doc.get("inference_options")
    if isinstance(inf, dict):
        settings["inference_options"] = inf
    info.build_settings = settings
    perf = doc.get("performance_summary")
    if isinstance(perf, dict):
        info.latency_ms = summary_from_metadata(perf)
    dev = doc.get("device_information")
    if isinstance(dev, dict):
        info.device = device_from_trtexec(dev)
    for k in ("TensorRT version", "trt_version", "tensorrt_version"):
        v = doc.get(k) or settings.get(k)
        if v:
            info.versions["tensorrt"] = str(v)
            break
    return info
