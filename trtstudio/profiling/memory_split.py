"""Where a live run's GPU memory goes: the process's measured GPU memory split into categories that
sum to it, sample by sample, and which category grows (issue 49, item 4).

Qt-free; the live panels stack these categories under the measured curve, and the leak verdicts
(``profiling.leak.memory_verdicts``) name the category that grows. The inputs are a memory
monitor's ``snapshot()`` columns (bytes):

- ``process_gpu_bytes`` (NVML, this process): the measured total. Without it there is no split:
  the categories would have nothing to add up to, and a guessed total is not shown.
- torch-cuda (``torch_*_bytes``, from ``torch.cuda.memory_stats``: ``allocated_bytes.all.current``,
  ``reserved_bytes.all.current``, ``inactive_split_bytes.all.current``, and the segments of CUDA graph
  pools): *tensors* (allocated outside graph pools), *CUDA graph pools* (reserved by captured graphs),
  *inactive split* (freed blocks split by later allocations: fragmentation), *allocator cache* (the
  rest of what the allocator reserved and holds free), and *CUDA context & libraries* (the process
  less what the allocator reserved: the context, cuBLAS/cuDNN workspaces, kernels, other allocators).
- TensorRT (``context_device_bytes``: the execution context's device memory, activations and
  scratch; ``engine_file_bytes``: the plan, whose weights the engine holds on the device): *activations
  & scratch*, *engine (plan size)*, and *CUDA context & other* as the rest.
- any other backend: the process alone, as *not split*.

A category that would come out negative (readings taken a few ms apart) is clamped at zero and the
difference goes to the rest, so the categories always sum to the measured total.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

MIB = 1024.0 * 1024.0
PROCESS_KEY = "process_gpu_bytes"
REST = "CUDA context & libraries"


@dataclass(frozen=True)
class MemorySplit:
    """Categories (name -> bytes per sample, bottom of the stack first) that sum to ``total`` (the
    measured process GPU memory per sample); ``t_s`` and ``index`` (inference count) per sample;
    ``source`` names what the split was made from (``torch allocator``, ``TensorRT``, ``none``)."""

    t_s: np.ndarray
    index: np.ndarray
    total: np.ndarray
    categories: dict[str, np.ndarray]
    source: str

    def stacked(self) -> list[tuple[str, np.ndarray]]:
        """Each category's top in the stack (the running sum), bottom first: what a stacked chart draws."""
        out, top = [], np.zeros_like(self.total, dtype=np.float64)
        for name, v in self.categories.items():
            top = top + v
            out.append((name, top))
        return out

    def last(self) -> dict[str, int]:
        """Each category's bytes at the last sample."""
        return {k: int(v[-1]) for k, v in self.categories.items()} if self.total.size else {}


def torch_categories(stats: dict[str, np.ndarray], process: np.ndarray) -> dict[str, np.ndarray]:
    """The torch caching allocator's categories (bottom first) of ``process`` bytes, from the
    ``torch_*_bytes`` columns of ``stats`` (see the module docstring); ``{}`` without them."""
    if "torch_reserved_bytes" not in stats or "torch_allocated_bytes" not in stats:
        return {}
    f = np.float64
    reserved = np.asarray(stats["torch_reserved_bytes"], dtype=f)
    allocated = np.minimum(np.asarray(stats["torch_allocated_bytes"], dtype=f), reserved)
    zero = np.zeros_like(reserved)
    pool = np.minimum(np.asarray(stats.get("torch_graph_pool_bytes", zero), dtype=f), reserved)
    pool_alloc = np.minimum(np.asarray(stats.get("torch_graph_pool_allocated_bytes", zero), dtype=f), np.minimum(pool, allocated))
    tensors = allocated - pool_alloc
    split = np.clip(np.asarray(stats.get("torch_inactive_split_bytes", zero), dtype=f), 0.0, reserved - pool - tensors)
    cache = reserved - pool - tensors - split
    cats = {"tensors (allocated)": tensors, "CUDA graph pools": pool, "inactive split (fragmentation)": split,
            "allocator cache (free)": cache}
    return _fit(cats, process)


def tensorrt_categories(stats: dict[str, np.ndarray], process: np.ndarray) -> dict[str, np.ndarray]:
    """TensorRT's categories (bottom first) of ``process`` bytes: the context's device memory and the
    plan's size; ``{}`` without ``context_device_bytes``."""
    if "context_device_bytes" not in stats:
        return {}
    f = np.float64
    cats = {"activations & scratch (context)": np.asarray(stats["context_device_bytes"], dtype=f)}
    if "engine_file_bytes" in stats:
        cats["engine (plan size)"] = np.asarray(stats["engine_file_bytes"], dtype=f) + 0 * process
    return _fit(cats, process)


def _fit(cats: dict[str, np.ndarray], process: np.ndarray) -> dict[str, np.ndarray]:
    """``cats`` clamped so that they never exceed ``process`` (the later ones give way first), with
    the rest of ``process`` as :data:`REST`, on top."""
    room = np.asarray(process, dtype=np.float64).copy()
    out: dict[str, np.ndarray] = {}
    for name, v in cats.items():
        v = np.clip(np.broadcast_to(v, room.shape), 0.0, room)
        out[name] = v
        room = room - v
    out[REST] = room
    return out


def memory_split(arrays: dict[str, np.ndarray]) -> MemorySplit | None:
    """The split of a monitor snapshot ``arrays`` (None without ``process_gpu_bytes`` or samples)."""
    process = arrays.get(PROCESS_KEY)
    if process is None or not np.asarray(process).size:
        return None
    total = np.asarray(process, dtype=np.float64)
    n = total.size
    t = np.asarray(arrays.get("t_s", np.arange(n)), dtype=np.float64)[:n]
    index = np.asarray(arrays.get("index", np.arange(n)), dtype=np.float64)[:n]
    for source, make in (("torch allocator", torch_categories), ("TensorRT", tensorrt_categories)):
        cats = make(arrays, total)
        if cats:
            return MemorySplit(t, index, total, cats, source)
    return MemorySplit(t, index, total, {"not split (no allocator figures from this backend)": total.copy()}, "none")


def growth_by_category(split: MemorySplit, warmup_fraction: float = 0.25, edge: float = 0.1) -> dict[str, float]:
    """Bytes each category grew over the run after warm-up (the first ``warmup_fraction`` of the
    inferences left out, as the leak verdict does): the median of its last ``edge`` of the later part
    less the median of its first ``edge`` (medians: one allocation that comes and goes does not count)."""
    x = split.index
    if x.size < 4:
        return {}
    cut = x.min() + warmup_fraction * (x.max() - x.min())
    later = np.flatnonzero(x >= cut)
    if later.size < 2:
        return {}
    k = max(1, int(round(edge * later.size)))
    first, last = later[:k], later[-k:]
    return {name: float(np.median(v[last]) - np.median(v[first])) for name, v in split.categories.items()}


def growing_category(split: MemorySplit | None, **kw: Any) -> dict[str, Any] | None:
    """The category that grew most after warm-up, with its share of the total's growth:
    ``{"category", "growth_bytes", "total_growth_bytes", "share", "by_category"}``; None when
    nothing grew (or there is no split)."""
    if split is None:
        return None
    growth = growth_by_category(split, **kw)
    if not growth:
        return None
    name, grew = max(growth.items(), key=lambda kv: kv[1])
    total = sum(growth.values())
    if grew <= 0:
        return None
    return {"category": name, "growth_bytes": grew, "total_growth_bytes": total,
            "share": grew / total if total > 0 else None, "by_category": growth, "source": split.source}


def growth_text(g: dict[str, Any]) -> str:
    """"the allocator cache (free) grows: +40.0 MiB of +42.0 MiB" for :func:`growing_category`'s answer."""
    return (f"the {g['category']} grows: {g['growth_bytes'] / MIB:+.1f} MiB of the process's "
            f"{g['total_growth_bytes'] / MIB:+.1f} MiB after warm-up")
