"""CUDA kernels recorded by CUPTI's activity API alone, and put on the ONNX nodes by launch order.

``torch.profiler`` attributes each kernel to the ``record_function`` range open when it was launched,
which needs CUPTI's runtime-API tracing and a Python hook around every module: on an eager model
bound by the CPU launching its kernels that doubles the inference time (``benchmarks/torch_kernels.md``).
Kernel activity alone (``CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL``, through NVIDIA's ``cupti-python``)
costs next to nothing on the CPU; what it lacks is the module that launched each kernel. That comes
from a short traced pass: one stream runs an inference's kernels in the order they were launched,
so the traced pass's sequence (kernel name, node) is the key to every recorded inference
(:func:`align_by_order`, :func:`table_by_order`). The recorder keeps only what the join needs.

Nothing here imports torch; ``cupti`` is imported by :class:`KernelRecorder` alone.
"""

from __future__ import annotations

import bisect
import ctypes
import ctypes.util
import functools
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trtstudio.engine.nsys import KernelTable, aggregate, launch_text

BUFFER_BYTES = 32 * 1024 * 1024  # about 150,000 kernel records: no buffer completes inside a timed pass


def available() -> bool:
    """Whether ``cupti-python`` can be imported (CUDA machines with ``pip install cupti-python``)."""
    try:
        import cupti.cupti  # noqa: F401
    except Exception:  # noqa: BLE001 - ImportError, or the library failing to find libcupti
        return False
    return True


def ticks_per_ns(start: tuple[int, int], end: tuple[int, int]) -> float:
    """CUPTI's timestamps per nanosecond, from (``cupti.get_timestamp()``, ``time.perf_counter_ns()``)
    taken at both ends of a recording: 1 on CUPTI's own clock, the TSC's rate (2.1 on the lent H100's
    host) once torch.profiler has run in the process, as Kineto registers a timestamp callback that
    returns TSC ticks and stays registered. Within 1 % of 1 counts as 1; a window under a
    millisecond is too short to tell and counts as 1 too."""
    dt = end[1] - start[1]
    if dt < 1_000_000:
        return 1.0
    scale = (end[0] - start[0]) / dt
    return 1.0 if abs(scale - 1.0) < 0.01 or scale <= 0 else scale


@dataclass
class Kernel:
    """One kernel execution as CUPTI recorded it (times in ns)."""

    start: int
    end: int
    name: str  # as CUPTI gives it: mangled for C++ kernels
    stream: int
    grid: tuple[int, int, int]
    block: tuple[int, int, int]


@dataclass
class KernelRecorder:
    """``with KernelRecorder() as rec: ...`` records every kernel that ran inside the block (the
    block's end flushes CUPTI's buffers); ``rec.kernels`` by start time."""

    kernels: list[Kernel] = field(default_factory=list)  # times in ns from the block's start (ticks_per_ns)
    _raw: list[tuple[Any, ...]] = field(default_factory=list)

    def __enter__(self) -> KernelRecorder:
        from cupti import cupti

        self._cupti = cupti
        self._raw.clear()
        # registered on every entry: torch.profiler (Kineto) registers its own between our passes
        cupti.activity_register_callbacks(self._requested, self._completed)
        cupti.activity_enable(cupti.ActivityKind.CONCURRENT_KERNEL)
        self._clock0 = (cupti.get_timestamp(), time.perf_counter_ns())
        return self

    def __exit__(self, *exc: Any) -> None:
        cupti = self._cupti
        cupti.activity_disable(cupti.ActivityKind.CONCURRENT_KERNEL)
        clock1 = (cupti.get_timestamp(), time.perf_counter_ns())
        cupti.activity_flush_all(1)
        c0, scale = self._clock0[0], ticks_per_ns(self._clock0, clock1)
        self.kernels = [Kernel(round((r[0] - c0) / scale), round((r[1] - c0) / scale), *r[2:])
                        for r in sorted(self._raw)]
        self._raw.clear()

    @staticmethod
    def _requested() -> tuple[int, int]:
        return BUFFER_BYTES, 0

    def _completed(self, activities: list[Any]) -> None:
        # CUPTI's thread, after the timed pass (the buffer holds the whole of it)
        kind = self._cupti.ActivityKind.CONCURRENT_KERNEL
        for a in activities:
            if a.kind == kind:
                self._raw.append((a.start, a.end, a.name, a.stream_id, (a.grid_x, a.grid_y, a.grid_z),
                                  (a.block_x, a.block_y, a.block_z)))


@functools.cache
def _demangler() -> tuple[Any, Any] | None:
    """libstdc++'s ``__cxa_demangle`` and libc's ``free``, or None where either is missing."""
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("stdc++") or "libstdc++.so.6")
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn, free = lib.__cxa_demangle, libc.free
    except (OSError, AttributeError, TypeError):
        return None
    fn.restype = ctypes.c_void_p
    fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    free.argtypes = [ctypes.c_void_p]
    return fn, free


@functools.lru_cache(maxsize=65536)
def demangle(name: str) -> str:
    """The C++ name of a mangled kernel symbol (``_Z...``), as torch.profiler and Nsight show it;
    the name itself where it is not mangled or libstdc++'s demangler is not there."""
    lib = _demangler() if name.startswith("_Z") else None
    if lib is None:
        return name
    fn, free = lib
    status = ctypes.c_int(0)
    ptr = fn(name.encode(), None, None, ctypes.byref(status))
    if not ptr:
        return name
    try:
        return ctypes.string_at(ptr).decode(errors="replace") if status.value == 0 else name
    finally:
        free(ptr)


def align_by_order(expected: list[str], seen: list[str]) -> tuple[list[int], int]:
    """For each name in ``seen`` (the kernels of many inferences, in start order), its position in
    ``expected`` (one inference's kernel names, in launch order), or -1; and how many were found
    where the walk expected them. The walk goes round ``expected`` cyclically; a kernel that is not
    the next one expected resumes the walk at the next position with its name (a kernel skipped or
    added in one inference costs that inference, not the ones after it); a name ``expected`` lacks
    is left out."""
    m = len(expected)
    where: dict[str, list[int]] = {}
    for i, name in enumerate(expected):
        where.setdefault(name, []).append(i)
    out: list[int] = []
    p = in_order = 0
    for name in seen:
        if m and expected[p] == name:
            out.append(p)
            in_order += 1
            p = (p + 1) % m
            continue
        spots = where.get(name)
        if not spots:
            out.append(-1)
            continue
        k = bisect.bisect_left(spots, p)
        q = spots[k] if k < len(spots) else spots[0]
        out.append(q)
        p = (q + 1) % m
    return out, in_order


def table_by_order(expected: list[tuple[str, str | None]], kernels: list[Kernel]) -> tuple[KernelTable, float | None]:
    """The kernel table of recorded ``kernels`` (by start time, many inferences) put on the ranges of
    one traced inference's ``expected`` sequence (kernel name, innermost range or None, in launch
    order: :func:`trtstudio.engine.kineto.kernel_sequence`), as :func:`trtstudio.engine.kineto.trace_table`
    makes it from a traced run; and the share of kernels found where the launch order put them."""
    names = [demangle(k.name) for k in kernels]
    pos, in_order = align_by_order([name for name, _ in expected], names)
    ranges = sorted({r for _, r in expected if r is not None})
    index = {r: i for i, r in enumerate(ranges)}
    slot = np.asarray([index[r] if r is not None else -1 for _, r in expected] or [-1], dtype=np.int64)
    at = np.asarray(pos, dtype=np.int64)
    owner = np.where(at >= 0, slot[np.maximum(at, 0)], -1)
    dur_ms = np.asarray([(k.end - k.start) / 1e6 for k in kernels], dtype=np.float64)
    table = KernelTable(kernels=len(kernels), total_ms=float(dur_ms.sum()))
    aggregate(table, ranges, ["user_annotation"] * len(ranges), owner, dur_ms, names,
              [launch_text(k.grid, k.block) for k in kernels])
    return table, (in_order / len(names) if names else None)
