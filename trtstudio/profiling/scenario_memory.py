"""Memory between load/unload cycles: the largest block that can still be allocated, snapshots, and the
verdict that tells a leak from fragmentation.

The largest block is found by bisection with real allocate-and-free calls (``cudaMalloc``/``cudaFree``
through cuda-python, else pycuda), not from the allocator's bookkeeping: free memory can be plenty
while no single block of the size a model asks for is left. The probe stops at its time budget and
then reports a lower bound with the bracket it reached.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from trtstudio.measure.devices import cuda_mem_info, nvml_used
from trtstudio.measure.trend import fit_trend
from trtstudio.measure.verdict import INCONCLUSIVE, UNKNOWN, Verdict

MIB = 1 << 20
TryAlloc = Callable[[int], bool]


@dataclass(frozen=True)
class BlockProbe:
    """Result of ``largest_block``: ``largest_bytes`` could be allocated, ``failed_bytes`` could not
    (the bracket is exact to ``granularity`` when ``exact``); ``steps`` allocations in ``elapsed_ms``."""

    largest_bytes: int
    failed_bytes: int
    steps: int
    elapsed_ms: float
    exact: bool

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return asdict(self)


DEFAULT_CAP = 8 << 30


def largest_block(
    try_alloc: TryAlloc, upper: int, granularity: int = 2 * MIB, budget_ms: float = 50.0, cap: int | None = None
) -> BlockProbe:
    """Bisection between 0 (known to fit) and ``upper`` + 1 (the free bytes; more cannot fit).

    ``try_alloc(n)`` allocates ``n`` bytes, frees them at once and says whether it worked. The first
    try is ``upper`` itself (rounded down to ``granularity``), which settles an unfragmented heap in
    one step. Stops when the bracket is narrower than ``granularity`` or ``budget_ms`` is spent.

    ``cap`` bounds the question to "is there a block of up to ``cap`` bytes": a cudaMalloc costs time
    in proportion to its size (about 2 ms per GiB on an H200, 200 ms for 100 GiB), so on a large GPU
    the uncapped probe cannot fit a 50 ms budget. A result equal to the cap means "at least the cap".
    """
    t0 = time.perf_counter()
    g = max(1, int(granularity))
    if cap is not None:
        upper = min(int(upper), int(cap))
    lo, hi = 0, int(upper) // g * g + g  # lo fits, hi does not
    steps = 0
    guess = hi - g
    while hi - lo > g:
        if steps and (time.perf_counter() - t0) * 1e3 >= budget_ms:
            break
        if guess <= lo or guess >= hi:
            guess = (lo + hi) // 2 // g * g
            if guess <= lo:
                break
        steps += 1
        if try_alloc(guess):
            lo = guess
        else:
            hi = guess
        guess = (lo + hi) // 2 // g * g
    return BlockProbe(lo, hi, steps, (time.perf_counter() - t0) * 1e3, hi - lo <= g)


# -- real allocators -------------------------------------------------------------------------------
def cuda_try_alloc(device: int = 0) -> TryAlloc | None:
    """``try_alloc`` over cudaMalloc/cudaFree on ``device`` (cuda-python, else pycuda); None when neither
    works here. A failed cudaMalloc's error is cleared at once, so that the runtime's sticky last error
    does not surface later in another library (PyTorch checks it after its kernel launches)."""
    try:
        from cuda.bindings import runtime as rt
    except ImportError:
        try:
            from cuda import cudart as rt  # cuda-python before 12.8
        except ImportError:
            rt = None
    if rt is not None:
        ok = rt.cudaError_t.cudaSuccess
        try:
            if rt.cudaSetDevice(device)[0] != ok:
                return None
        except Exception:  # noqa: BLE001 - a driver that cannot start
            return None

        def try_alloc_rt(n: int) -> bool:
            rt.cudaSetDevice(device)  # the caller's thread may not have this device current
            err, ptr = rt.cudaMalloc(n)
            if err != ok:
                rt.cudaGetLastError()
                return False
            rt.cudaFree(ptr)
            return True

        return try_alloc_rt
    try:
        import pycuda.driver as drv

        drv.init()
        if device >= drv.Device.count():
            return None
    except Exception:  # noqa: BLE001 - pycuda missing or no driver
        return None

    def try_alloc_pycuda(n: int) -> bool:
        try:
            drv.mem_alloc(n).free()
            return True
        except drv.MemoryError:
            return False

    return try_alloc_pycuda


_TRIM: Any = None


def malloc_trim() -> None:
    """Give freed heap pages back to the OS (glibc's ``malloc_trim``; nothing elsewhere), so that RSS
    shows memory held rather than memory the C allocator keeps cached after a model was unloaded."""
    global _TRIM
    if _TRIM is None:
        try:
            import ctypes

            _TRIM = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _TRIM = False
    if _TRIM:
        _TRIM(0)


def host_rss(trim: bool = False) -> int:
    """Resident set size of this process (after ``malloc_trim`` when ``trim``)."""
    import psutil

    if trim:
        malloc_trim()
    return int(psutil.Process().memory_info().rss)


def snapshot(device: int | None, probe: bool = True, budget_ms: float = 50.0, cap: int | None = DEFAULT_CAP) -> dict[str, Any]:
    """One cycle's reading: host RSS always; on a GPU, NVML used, CUDA free and the largest block (up to
    ``cap``; see ``largest_block``). Keys that cannot be measured here are absent."""
    out: dict[str, Any] = {"host_rss_bytes": host_rss()}
    if device is None:
        return out
    out.update(nvml_used(device))
    info = cuda_mem_info(device)
    if info is not None:
        out["cuda_free_bytes"], out["cuda_total_bytes"] = info
        if probe:
            try_alloc = cuda_try_alloc(device)
            if try_alloc is not None:
                res = largest_block(try_alloc, info[0], budget_ms=budget_ms, cap=cap)
                out["largest_block_bytes"] = res.largest_bytes
                out["largest_block_probe"] = {**res.to_dict(), "cap_bytes": cap}
    return out


# -- verdict ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class VerdictRules:
    """Thresholds of ``cycle_verdict``. ``used`` must grow by more than ``leak_min_bytes`` over the
    cycles, still growing in their second half (a quarter of that), with a slope ``t_min`` standard errors above zero; fragmentation needs free memory steady
    (within ``free_steady_bytes`` or ``free_steady_share`` of the first reading) while the largest
    block shrinks by more than ``frag_min_bytes`` and ``frag_min_share``."""

    leak_min_bytes: int = 8 * MIB
    t_min: float = 3.0
    free_steady_bytes: int = 64 * MIB
    free_steady_share: float = 0.02
    frag_min_bytes: int = 64 * MIB
    frag_min_share: float = 0.05
    skip_first: int = 1  # the first cycle warms allocators and lazy state up
    min_cycles: int = 4


def _grows(y: np.ndarray, min_total: float, t_min: float) -> tuple[bool, float, float]:
    tr = fit_trend(np.arange(y.size), y, autocorrelated=False)  # one reading per cycle: independent
    slope, err = tr.slope, tr.stderr
    total = slope * (y.size - 1)
    significant = slope > t_min * err if err > 0 else slope > 0
    return bool(total > min_total and significant), slope, total


def cycle_verdict(cycles: Sequence[dict[str, Any]], rules: VerdictRules | None = None) -> dict[str, Any]:
    """Leak, fragmentation, stable or unknown, from per-cycle readings (see ``VerdictRules``): a
    ``measure.verdict.Verdict``'s JSON (topic, verdict, text, evidence) that also keeps its figures
    and ``reason`` flat, as documents written before the Verdict type have them."""
    doc = _cycle_verdict(cycles, rules)
    evidence = {k: v for k, v in doc.items() if k not in ("verdict", "reason")}
    return {**doc, **Verdict("memory across load/unload cycles", doc["verdict"], doc["reason"], evidence).to_json()}


def _cycle_verdict(cycles: Sequence[dict[str, Any]], rules: VerdictRules | None) -> dict[str, Any]:
    """The figures and verdict of ``cycle_verdict``.

    The memory in use is NVML's ``gpu_used_bytes`` when measured, else ``host_rss_bytes``; free memory
    is ``cuda_free_bytes`` and the largest block ``largest_block_bytes``. A leak is named before
    fragmentation when both hold (used memory that grows also shrinks free memory).
    """
    r = rules or VerdictRules()
    rows = list(cycles)[r.skip_first:]
    if len(rows) < r.min_cycles:
        return {"verdict": INCONCLUSIVE, "reason": f"{len(rows)} cycles after the first; {r.min_cycles} needed: run "
                                                  f"{r.min_cycles + r.skip_first} cycles or more"}
    used_key = next((k for k in ("gpu_used_bytes", "host_rss_bytes") if all(k in c for c in rows)), None)
    if used_key is None:
        return {"verdict": UNKNOWN, "reason": "no memory reading present in every cycle"}
    used = np.array([c[used_key] for c in rows], dtype=np.float64)
    leak, used_slope, used_total = _grows(used, r.leak_min_bytes, r.t_min)
    half = used[used.size // 2:]
    if leak and half[-1] - half[0] < r.leak_min_bytes / 4:  # a step that levelled off: a cache filled, not a leak
        leak = False
    out: dict[str, Any] = {"series": used_key, "used_slope_bytes_per_cycle": used_slope, "used_growth_bytes": used_total}
    frag, frag_reason = False, ""
    if all("cuda_free_bytes" in c and "largest_block_bytes" in c for c in rows):
        free = np.array([c["cuda_free_bytes"] for c in rows], dtype=np.float64)
        big = np.array([c["largest_block_bytes"] for c in rows], dtype=np.float64)
        free_change = float(free[-1] - free[0])
        shrink, _, _ = _grows(-big, r.frag_min_bytes, r.t_min)
        big_change = float(big[-1] - big[0])
        steady = abs(free_change) <= max(r.free_steady_bytes, r.free_steady_share * free[0])
        frag = steady and shrink and -big_change > r.frag_min_share * big[0]
        out.update(free_change_bytes=free_change, largest_block_change_bytes=big_change)
        frag_reason = (
            f"free memory steady ({free_change / MIB:+.0f} MiB) while the largest allocatable block shrank "
            f"{-big_change / MIB:.0f} MiB ({-big_change / big[0]:.0%})" if big[0] > 0 else ""
        )
    if leak:
        out.update(verdict="leak", reason=f"{used_key} grows {used_slope / MIB:.1f} MiB per cycle "
                                          f"({used_total / MIB:.0f} MiB over {len(rows)} cycles)")
        if frag:
            out["also"] = "fragmentation: " + frag_reason
    elif frag:
        out.update(verdict="fragmentation", reason=frag_reason)
    else:
        out.update(verdict="stable", reason=f"{used_key} changes {used_total / MIB:+.1f} MiB over {len(rows)} cycles"
                                            + ("; the largest block holds" if "largest_block_change_bytes" in out else ""))
    return out
