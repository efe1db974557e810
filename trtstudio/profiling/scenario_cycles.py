"""Load/unload cycles, Qt-free: load, run K inferences, unload, M times over a mix of models; after each
cycle NVML used, CUDA free, the largest allocatable block and host RSS; a verdict: leak or
fragmentation (``scenario_memory.cycle_verdict``)."""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trtstudio.backends.base import Backend
from trtstudio.profiling.scenario_common import (
    ModelSpec,
    Opener,
    ScenarioFailure,
    ScenarioResult,
    ScenarioState,
    failure_of,
    open_model,
    unique_labels,
)
from trtstudio.profiling.scenario_memory import (
    DEFAULT_CAP,
    VerdictRules,
    cycle_verdict,
    malloc_trim,
    snapshot,
)


@dataclass
class CyclesConfig:
    """M cycles of load -> K inferences -> unload per model; the memory reading after each cycle
    (largest-block probe within ``probe_budget_ms``, up to ``probe_cap_bytes``); ``release_cache``
    empties torch's cache and its per-stream cuBLAS workspaces after each cycle."""

    cycles: int = 10
    inferences: int = 50
    probe: bool = True
    probe_budget_ms: float = 50.0
    probe_cap_bytes: int | None = DEFAULT_CAP  # the probe answers "a block of at least this size?"
    release_cache: bool = False
    device: int | None = None  # None: the GPU the first model ran on, if any
    rules: VerdictRules = field(default_factory=VerdictRules)


def gpu_of(backend: Backend, spec: ModelSpec) -> int | None:
    """The GPU index ``backend`` runs ``spec`` on, None on the CPU."""
    if getattr(backend, "cuda", False):
        return int(getattr(backend.device, "index", None) or 0)  # type: ignore[attr-defined]
    if spec.on_gpu():
        return spec.device or 0
    return None


def _torch_stats(device: int | None) -> dict[str, int]:
    torch = sys.modules.get("torch")
    if device is None or torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return {}
    from trtstudio.backends.torch_backend import torch_allocator_stats

    dev = torch.device("cuda", device)
    stats = torch_allocator_stats(torch, dev)
    # the largest block the caching allocator can hand out without asking CUDA for more
    inactive = [b["size"] for seg in torch.cuda.memory_snapshot() if seg.get("device") == device
                for b in seg.get("blocks", []) if b.get("state") == "inactive"]
    stats["torch_largest_inactive_block_bytes"] = int(max(inactive, default=0))
    return stats


def _release(release_cache: bool) -> None:
    gc.collect()
    malloc_trim()
    torch = sys.modules.get("torch")
    if release_cache and torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
        if clear is not None:  # PyTorch keeps a cuBLAS workspace per stream it has used (32 MiB each)
            clear()
        torch.cuda.empty_cache()


def run_cycles(
    specs: Sequence[ModelSpec],
    config: CyclesConfig | None = None,
    state: ScenarioState | None = None,
    opener: Opener = open_model,
    on_cycle: Callable[[dict[str, Any]], None] | None = None,
) -> ScenarioResult:
    """Cycle 0 is the reading before any load; cycles 1..M follow. See ``CyclesConfig``."""
    cfg = config or CyclesConfig()
    state = state or ScenarioState()
    labels = unique_labels(specs)
    result = ScenarioResult("cycles", models=[{"model": lb, "path": s.path, "backend": s.backend_name()}
                                              for s, lb in zip(specs, labels, strict=True)],
                            extra={"inferences": cfg.inferences})
    device = cfg.device if cfg.device is not None else next((s.device for s in specs if s.device is not None), None)
    if device is None and any(s.on_gpu() for s in specs):
        device = 0

    def record(cycle: int, per_model: dict[str, Any]) -> None:
        _release(cfg.release_cache)
        rec: dict[str, Any] = {"cycle": cycle, **snapshot(device, cfg.probe, cfg.probe_budget_ms, cfg.probe_cap_bytes)}
        torch_stats = _torch_stats(device)
        if torch_stats:
            rec["torch"] = torch_stats
        rec["models"] = per_model
        result.cycles.append(rec)
        state.cycles.append(rec)
        if on_cycle is not None:
            on_cycle(rec)

    record(0, {})
    for cycle in range(1, cfg.cycles + 1):
        state.status = {"cycle": cycle, "cycles": cfg.cycles}
        per_model: dict[str, Any] = {}
        for spec, label in zip(specs, labels, strict=True):
            if state.is_stop_requested():
                break
            state.phase = f"cycle {cycle}: {label}"
            row, result.failure, gpu = _one_cycle(spec, label, cycle, cfg.inferences, state, opener)
            device = gpu if device is None else device
            if row is not None:
                per_model[label] = row
            if result.failure is not None:
                break
        if per_model:
            record(cycle, per_model)
        if result.failure is not None:
            break
        if state.is_stop_requested():
            result.stopped = True
            break
    measured = [c for c in result.cycles if c["cycle"] > 0]
    result.verdict = cycle_verdict(measured, cfg.rules)
    result.extra["device"] = device
    probes = [c["largest_block_probe"]["elapsed_ms"] for c in result.cycles if "largest_block_probe" in c]
    if probes:
        result.extra["largest_block_probe_ms"] = {"median": float(np.median(probes)), "max": float(np.max(probes))}
    state.phase = "finished"
    return result


def _one_cycle(spec: ModelSpec, label: str, cycle: int, inferences: int, state: ScenarioState,
               opener: Opener) -> tuple[dict[str, Any] | None, ScenarioFailure | None, int | None]:
    """Load, run and unload one model once: (its figures or None, the failure or None, its GPU)."""
    perf = time.perf_counter
    t0 = perf()
    try:
        backend = opener(spec)
    except Exception as exc:  # noqa: BLE001
        return None, failure_of(exc, label, "load", cycle), None
    load_ms = (perf() - t0) * 1e3
    gpu = gpu_of(backend, spec)
    failure: ScenarioFailure | None = None
    lat: list[float] = []
    try:
        for _ in range(inferences):
            if state.is_stop_requested():
                break
            lat.append(backend.infer_once().total_ms)
    except Exception as exc:  # noqa: BLE001
        failure = failure_of(exc, label, "run", cycle)
    finally:
        t1 = perf()
        try:
            backend.close()
        except Exception as exc:  # noqa: BLE001
            failure = failure or failure_of(exc, label, "unload", cycle)
        del backend
    row = {
        "load_ms": load_ms, "first_ms": lat[0] if lat else None,
        "median_ms": float(np.median(lat[1:] if len(lat) > 1 else lat)) if lat else None,
        "inferences": len(lat), "unload_ms": (perf() - t1) * 1e3,
    }
    return row, failure, gpu
