"""Kernels per range from a Kineto / Chrome trace (``torch.profiler``'s ``export_chrome_trace``).

The same join as Nsight Systems' (:mod:`trtstudio.engine.nsys`), on the trace's complete events
(``"ph": "X"``, times in microseconds): a CPU range (``user_annotation`` from
``torch.profiler.record_function``, and ``cpu_op`` for ``aten::`` ops) on a thread, the CUDA runtime
call inside it on the same thread (``cuda_runtime``/``cuda_driver``, ``args.correlation``), the kernel
with the same correlation id (``kernel``). Each kernel goes to the innermost range of the kinds asked
for (``kinds``): trtstudio's PyTorch backend annotates each converted ONNX node's module and asks
for ``user_annotation`` alone, so a kernel is attributed to its ONNX node, not to the ``aten::`` op
inside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.engine.nsys import KernelTable, aggregate, innermost, kernel_archs, launch_text, range_name
from trtstudio.errors import InputError

RANGE_KINDS = ("user_annotation", "cpu_op")
RUNTIME_KINDS = ("cuda_runtime", "cuda_driver")


def looks_like_trace(head: str) -> bool:
    """Whether a JSON file's head is a Chrome trace with CUDA events (Kineto's)."""
    return '"traceEvents"' in head and any(k in head for k in ('"cuda_runtime"', '"kernel"', '"schemaVersion"',
                                                               '"deviceProperties"', '"user_annotation"'))


def read_trace(path: str | Path, kinds: tuple[str, ...] = RANGE_KINDS) -> KernelTable:
    """The kernel table of the trace at ``path``; InputError for a file that is not one."""
    events, doc = _read(path)
    table = trace_table(events, kinds, Path(path))
    table.gpus = device_gpus(doc)
    return table


def device_gpus(doc: Any) -> list[dict[str, Any]]:
    """The GPUs a trace's ``deviceProperties`` name: ``{id, name, compute_capability}``."""
    props = doc.get("deviceProperties") if isinstance(doc, dict) else None
    out = []
    for d in props if isinstance(props, list) else []:
        if isinstance(d, dict) and d.get("name"):
            major, minor = d.get("computeMajor"), d.get("computeMinor")
            cc = f"{major}.{minor}" if isinstance(major, int) and isinstance(minor, int) else None
            out.append({"id": d.get("id"), "name": str(d["name"]), "compute_capability": cc})
    return out


def read_events(path: str | Path) -> list[Any]:
    """The ``traceEvents`` of the Chrome trace at ``path``; InputError for a file that is not one."""
    return _read(path)[0]


def _read(path: str | Path) -> tuple[list[Any], Any]:
    from trtstudio.jsonio import read_json_file

    p = Path(path)
    doc = read_json_file(p, "Chrome trace")
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc if isinstance(doc, list) else None
    if not isinstance(events, list):
        raise InputError(p, 'not a Chrome trace: expected {"traceEvents": [...]}')
    return events, doc


@dataclass
class _Joined:
    """A trace's kernels with their launch calls, and its ranges of the kinds asked for."""

    kern: list[tuple[float, float, Any, str, int, str]]  # ts, dur (us), correlation, name, device, launch
    call_tid: np.ndarray  # per kernel: the launching thread's index, -1 where no launch call was found
    call_t: np.ndarray  # per kernel: the launch call's time in ns, -1 likewise
    tids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    names: list[str]
    doms: list[str]


def _join(events: list[Any], kinds: tuple[str, ...]) -> _Joined:
    threads: dict[tuple[Any, Any], int] = {}
    calls: dict[Any, tuple[int, float]] = {}
    kern: list[tuple[float, float, Any, str, int, str]] = []
    r_tid: list[int] = []
    r_start: list[float] = []
    r_end: list[float] = []
    names: list[str] = []
    doms: list[str] = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat, ts, dur = e.get("cat"), e.get("ts"), e.get("dur")
        if not isinstance(ts, (int, float)) or not isinstance(dur, (int, float)):
            continue
        raw = e.get("args")
        args: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if cat == "kernel":
            dev = args.get("device")
            kern.append((float(ts), float(dur), args.get("correlation"), str(e.get("name", "?")),
                         int(dev) if isinstance(dev, int) else 0, launch_text(args.get("grid"), args.get("block"))))
            continue
        tid = threads.setdefault((e.get("pid"), e.get("tid")), len(threads))
        if cat in RUNTIME_KINDS and args.get("correlation") is not None:
            calls[args["correlation"]] = (tid, float(ts))
        elif cat in kinds:
            r_tid.append(tid)
            r_start.append(float(ts))
            r_end.append(float(ts) + float(dur))
            names.append(range_name(str(e.get("name", "?"))))
            doms.append(str(cat))
    call = [calls.get(k[2]) for k in kern]
    return _Joined(
        kern,
        np.asarray([c[0] if c else -1 for c in call], dtype=np.int64),
        # microseconds as integer nanoseconds: the sweep compares them exactly
        np.asarray([round(c[1] * 1e3) if c else -1 for c in call], dtype=np.int64),
        np.asarray(r_tid, dtype=np.int64), np.round(np.asarray(r_start) * 1e3).astype(np.int64),
        np.round(np.asarray(r_end) * 1e3).astype(np.int64), names, doms)


def kernel_sequence(events: list[Any], kinds: tuple[str, ...] = ("user_annotation",)) -> list[tuple[str, str | None]]:
    """The trace's kernels by start time, each as (name, the innermost range of ``kinds`` open when
    it was launched, or None): the order a single-stream run's kernels repeat in, which
    :mod:`trtstudio.backends.cupti_trace` puts untraced inferences' kernels on nodes by."""
    j = _join(events, kinds)
    if not j.kern:
        return []
    owner = innermost(j.tids, j.starts, j.ends, j.call_tid, j.call_t) if j.names else np.full(len(j.kern), -1)
    order = sorted(range(len(j.kern)), key=lambda i: j.kern[i][0])
    return [(j.kern[i][3], j.names[int(owner[i])] if owner[i] >= 0 else None) for i in order]


def trace_table(events: list[Any], kinds: tuple[str, ...] = RANGE_KINDS, where: Any = None) -> KernelTable:
    """The kernel table of a trace's events (see the module docstring)."""
    j = _join(events, kinds)
    kern, call_tid, call_t, names, doms = j.kern, j.call_tid, j.call_t, j.names, j.doms
    out = KernelTable()
    if not kern:
        out.notes.append("no CUDA kernels in this trace: profile with activities=[ProfilerActivity.CPU, "
                         "ProfilerActivity.CUDA]")
        return out
    dur_ms = np.asarray([k[1] for k in kern]) / 1e3
    out.kernels = len(kern)
    out.total_ms = float(dur_ms.sum())
    out.devices = sorted({k[4] for k in kern})
    out.archs = kernel_archs([k[3] for k in kern])
    missing = int((call_t < 0).sum())
    if missing:
        out.notes.append(f"{missing} kernels have no launch call in the trace: left unattributed")
    if not names:
        out.notes.append(f"no {' or '.join(kinds)} ranges in this trace")
        return out
    tids, starts, ends = j.tids, j.starts, j.ends
    kname, launch = [k[3] for k in kern], [k[5] for k in kern]
    out.range_events = len(names)
    aggregate(out, names, doms, innermost(tids, starts, ends, call_tid, call_t), dur_ms, kname, launch)
    user = np.asarray([d == "user_annotation" for d in doms])
    if user.any() and not user.all():  # the annotations' own table (ONNX nodes on the PyTorch path)
        keep = np.flatnonzero(user)
        ann = KernelTable()
        owner = innermost(tids[keep], starts[keep], ends[keep], call_tid, call_t)
        aggregate(ann, [names[i] for i in keep], ["user_annotation"] * len(keep), owner, dur_ms, kname, launch)
        out.annotations = ann.ranges
    return out
