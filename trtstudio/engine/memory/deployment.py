"""A deployment's GPU memory (:func:`predict`): K contexts of each engine in each of P processes on a
GPU of M bytes, each term with its source, and TensorRT's fixes with what each saves."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from trtstudio.engine.memory.categories import NOT_RECORDED, EngineMemory
from trtstudio.engine.memory.log import MIB

# Where no file records the CUDA context, the prediction assumes this (and says so)
DEFAULT_CUDA_CONTEXT_BYTES = 500 * MIB
CUDA_CONTEXT_BASIS = (
    "assumed 500 MiB per process: a CUDA 12+ context with lazy loading on a data-centre GPU (TensorRT 10.16 "
    "on an H100 PCIe logged 458 MiB in use after Init CUDA, NVIDIA/trt-samples-for-hackathon-cn "
    "cookbook/07-Tool/trtexec/result-01.log); not measured here")

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B|bytes)?\s*$", re.I)
_SIZE_UNITS = {"": 1, "b": 1, "bytes": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
               "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}


def parse_size(text: str) -> int:
    """``16GB`` (10**9 bytes each), ``16GiB`` (2**30), ``512MiB``, ``1000000`` (bytes); ValueError else."""
    m = _SIZE.match(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a size: give bytes or a number with KB, MB, GB, KiB, MiB or GiB")
    return int(float(m.group(1)) * _SIZE_UNITS[(m.group(2) or "").lower()])


def _term(what: str, nbytes: int | None, count: int, source: str, assumed: bool = False) -> dict[str, Any]:
    return {"what": what, "bytes": nbytes, "count": count, "total_bytes": (nbytes or 0) * count, "source": source,
            "assumed": assumed}


def _context_bytes(m: EngineMemory) -> tuple[int, str, bool]:
    """A context's device memory: the runtime's figure, else the activations TensorRT allocates."""
    if m.context.bytes is not None:
        return m.context.bytes, m.context.source, False
    act = m.categories["activations"]
    if act.bytes is not None:
        return act.bytes, act.source, False
    return 0, NOT_RECORDED + " (counted 0)", True


def _weights_bytes(m: EngineMemory) -> tuple[int, str, bool]:
    """The engine's weights on the GPU, else its plan size (an upper bound, marked assumed)."""
    w = m.categories["weights"]
    if w.bytes is not None:
        return w.bytes, w.source, False
    size = m.categories["engine_size"]
    if size.bytes is not None:
        return size.bytes, f"assumed: the engine's size ({size.source}), weights not recorded", True
    return 0, NOT_RECORDED + " (counted 0)", True


def _profile_activations(m: EngineMemory) -> list[int]:
    out = []
    for p in m.profiles:
        for c in p["categories"]:
            if c["name"] == "activations" and c["bytes"] is not None:
                out.append(int(c["bytes"]))
    return out


def predict(engines: Sequence[EngineMemory], contexts: int = 1, instances: int = 1,
            gpu_memory: int | None = None) -> dict[str, Any]:
    """The GPU memory that ``instances`` processes need, each holding every engine once with
    ``contexts`` execution contexts of each: per process one CUDA context (the files' Init CUDA
    figure, else :data:`DEFAULT_CUDA_CONTEXT_BYTES`, marked assumed) and the runtime libraries the
    files record (cuBLAS/cuDNN; the builder's kernel library is not loaded to run), per engine its
    weights once (they are shared by its contexts), per context its device memory (the runtime's
    "device memory size", else the activations: TensorRT's kSTATIC strategy allocates the largest
    profile's), its device-persistent memory and its I/O buffers.

    ``fixes``: what TensorRT offers, each with ``saves_bytes`` over the whole deployment:
    contexts sharing one device-memory block (``createExecutionContext(kUSER_MANAGED)`` /
    ``createExecutionContextWithoutDeviceMemory`` + ``setDeviceMemoryV2``; contexts that never run at
    the same time in a process need only the largest), ``kON_PROFILE_CHANGE`` (a context holds the
    profile it runs, not the largest: saved down to the smallest profile), fewer profiles (dropping
    the largest leaves the next), and a weight-streaming budget (``setWeightStreamingBudgetV2``, an
    engine built with ``kWEIGHT_STREAMING``: up to the weights, the amount still missing when it
    does not fit)."""
    contexts, instances = int(contexts), int(instances)
    terms = []
    cuda = next((m.categories["cuda_context"] for m in engines if m.categories["cuda_context"].bytes is not None), None)
    if cuda is not None:
        terms.append(_term("CUDA context (per process)", cuda.bytes, instances, cuda.source))
    else:
        terms.append(_term("CUDA context (per process)", DEFAULT_CUDA_CONTEXT_BYTES, instances, CUDA_CONTEXT_BASIS,
                           assumed=True))
    ctx_sizes = []
    for m in engines:
        lib = m.categories["libraries"]
        if lib.bytes is not None and "builder's kernel library" not in lib.note:
            terms.append(_term(f"{m.name}: libraries (per process)", lib.bytes, instances, lib.source))
        w, wsrc, wa = _weights_bytes(m)
        terms.append(_term(f"{m.name}: weights (once per engine per process)", w, instances, wsrc, wa))
        c, csrc, ca = _context_bytes(m)
        ctx_sizes.append(c)
        terms.append(_term(f"{m.name}: context device memory (per context)", c, instances * contexts, csrc, ca))
        for name in ("device_persistent", "io"):
            f = m.categories[name]
            if f.bytes:
                terms.append(_term(f"{m.name}: {name} (per context)", f.bytes, instances * contexts, f.source))
    total = sum(t["total_bytes"] for t in terms)
    fixes = _fixes(engines, ctx_sizes, contexts, instances, total, gpu_memory)
    out: dict[str, Any] = {"contexts": contexts, "instances": instances, "total_bytes": total,
                           "gpu_memory_bytes": gpu_memory, "fits": None if gpu_memory is None else total <= gpu_memory,
                           "terms": terms, "assumed": [t["what"] for t in terms if t["assumed"]], "fixes": fixes}
    if gpu_memory is not None:
        per_process = total // instances if instances else total
        out["spare_bytes"] = gpu_memory - total
        out["max_instances"] = int(gpu_memory // per_process) if per_process else None
    return out


def _fixes(engines: Sequence[EngineMemory], ctx_sizes: list[int], contexts: int, instances: int, total: int,
           gpu_memory: int | None) -> list[dict[str, Any]]:
    fixes = []
    n_ctx = contexts * len(engines)
    if n_ctx > 1 and ctx_sizes:
        saves = instances * (contexts * sum(ctx_sizes) - max(ctx_sizes))
        fixes.append({"fix": "shared device memory between contexts", "saves_bytes": saves,
                      "how": "createExecutionContext(ExecutionContextAllocationStrategy::kUSER_MANAGED) (or "
                             "createExecutionContextWithoutDeviceMemory) and setDeviceMemoryV2 with one block of "
                             "the largest getDeviceMemorySizeV2, for contexts that never run at the same time"})
    on_change = fewer = 0
    for m in engines:
        acts = sorted(_profile_activations(m))
        if len(acts) > 1:
            on_change += instances * contexts * (acts[-1] - acts[0])
            fewer += instances * contexts * (acts[-1] - acts[-2])
    if on_change:
        fixes.append({"fix": "kON_PROFILE_CHANGE allocation", "saves_bytes": on_change,
                      "how": "IRuntimeConfig.setExecutionContextAllocationStrategy(kON_PROFILE_CHANGE): a context "
                             "holds the profile it runs (saving shown for the smallest), not the largest"})
    if fewer:
        fixes.append({"fix": "fewer profiles", "saves_bytes": fewer,
                      "how": "build without the profile that needs the most activation memory"})
    weights = instances * sum(_weights_bytes(m)[0] for m in engines)
    if weights:
        need = weights if gpu_memory is None or total <= gpu_memory else min(weights, total - gpu_memory)
        fixes.append({"fix": "weight-streaming budget", "saves_bytes": need,
                      "how": "build with BuilderFlag::kWEIGHT_STREAMING (strongly typed), then "
                             "ICudaEngine::setWeightStreamingBudgetV2(weights - saved): streamable weights are "
                             "not recorded in these files, so the saving is bounded by all the weights"})
    return fixes
