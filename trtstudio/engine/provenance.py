"""Where an engine's figures come from: the GPU and TensorRT its own files name.

The machine that reads the files (or writes a report about them) is not the machine that built or
ran the engine: an engine's GPU comes from its device metadata or log (``EngineInfo.device``), its
TensorRT from its log, plan header or metadata (``EngineInfo.versions``), and each is
``not recorded`` where the files are silent, never this machine's runtime.
"""

from __future__ import annotations

from typing import Any

from trtstudio.engine.model import EngineInfo

NOT_RECORDED = "not recorded"


def runtime_of(engine: EngineInfo) -> str:
    """'TensorRT 10.4.0', 'TensorRT-RTX 1.2.0.54', or ``not recorded``."""
    v = engine.versions
    if v.get("tensorrt_rtx"):
        return f"TensorRT-RTX {v['tensorrt_rtx']}"
    if v.get("tensorrt"):
        return f"TensorRT {v['tensorrt']}"
    return NOT_RECORDED


def gpu_of(engine: EngineInfo) -> str:
    """The GPU the engine's files name (with its compute capability), or ``not recorded``; a
    TensorRT-RTX plan built ahead of time names its target architectures instead."""
    d = engine.device
    name = d.get("name")
    cc = d.get("compute_capability")
    if name:
        return f"{name} (SM {cc})" if cc else str(name)
    if cc:
        return f"compute capability {cc}"
    targets = engine.build_settings.get("targets") or engine.build_settings.get("target")
    if targets:
        return f"built for {', '.join(map(str, targets)) if isinstance(targets, list) else targets}"
    return NOT_RECORDED


def provenance(engine: EngineInfo) -> dict[str, Any]:
    """``{gpu, tensorrt, cuda, source, text}``: what the engine's own files say about where it was
    built and run (``source``: the files), ``not recorded`` where they are silent."""
    gpu, runtime = gpu_of(engine), runtime_of(engine)
    cuda = engine.versions.get("cuda") or engine.device.get("cuda")
    return {
        "gpu": gpu, "tensorrt": runtime, "cuda": str(cuda) if cuda else NOT_RECORDED,
        "source": list(engine.sources),
        "text": f"{gpu if gpu != NOT_RECORDED else 'GPU not recorded'}, "
                f"{runtime if runtime != NOT_RECORDED else 'TensorRT version not recorded'}",
    }
