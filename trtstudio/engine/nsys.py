"""Kernels inside layers, from an Nsight Systems export (``nsys export --type sqlite``).

TensorRT marks every engine layer with an NVTX range (domain ``TensorRT``, the layer's name through
``textId`` into ``StringIds``); PyTorch marks its ops (``aten::conv2d, op_id = N``, names inline in
``text``). Nsight Systems records the ranges, the CUDA runtime calls and the kernels they launched,
but knows nothing of the model; this joins them, as the TensorRT maintainers tell users to do by hand
(TensorRT#2308, #4110):

    NVTX range on a thread  ->  CUDA runtime call inside it, same thread  ->  kernel, same correlationId

Each kernel is attributed to the **innermost** push/pop range open on the launching thread when
the launch call began (ranges on one thread nest: a sweep with a stack finds it), so a kernel is
counted once however deep the ranges nest. Per range name: its instances (``count``), the time of
its kernels (``ms``, and ``per_call_ms`` where a range repeats once an inference), and each kernel
name with its count and time. The ``TensorRT`` domain's ranges are engine layers: their times become
the engine's per-layer times (``EngineInfo.times``, as a profile's), and ``kernels.layers`` lists
each layer's kernels; a Myelin/ForeignNode layer is split into the kernels it ran.

What the file lacks is said (``notes``): no NVTX table (run ``nsys profile --trace=cuda,nvtx``); kernels
launched by a CUDA graph are one graph launch unless traced with ``--cuda-graph-trace=node``; with
CUDA graphs TensorRT's ranges exist only on the capturing pass; kernels without a runtime call
(trimmed capture windows) are counted as unattributed.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.errors import InputError

SQLITE_MAGIC = b"SQLite format 3\x00"
TENSORRT_DOMAIN = "TensorRT"
PUSH_POP = 59  # ENUM_NSYS_EVENT_TYPE: NvtxPushPopRange
START_END = 60  # NvtxStartEndRange (not nested on a thread: not used for attribution)
DOMAIN_CREATE = 75


@dataclass
class KernelTable:
    """The join's result (see the module docstring)."""

    ranges: list[dict[str, Any]] = field(default_factory=list)  # per range name, with its kernels
    total_ms: float = 0.0  # every kernel's time
    attributed_ms: float = 0.0  # kernels inside a range
    kernels: int = 0
    attributed: int = 0
    devices: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=dict)  # nsys version, schema
    # a Kineto trace's kernels by record_function annotation alone (the PyTorch backend's ONNX nodes),
    # where the ranges above went to the aten:: ops inside them
    annotations: list[dict[str, Any]] = field(default_factory=list)
    # the GPUs the file names ({id, name, compute_capability}; [] where it names none, as a Nsight
    # Systems export without TARGET_INFO_GPU) and the architectures its kernel names carry ("sm80")
    gpus: list[dict[str, Any]] = field(default_factory=list)
    archs: list[str] = field(default_factory=list)
    range_events: int = 0  # push/pop ranges (instances) in the file

    def to_json(self) -> dict[str, Any]:
        doc = {"total_ms": self.total_ms, "attributed_ms": self.attributed_ms, "kernels": self.kernels,
               "attributed_kernels": self.attributed, "devices": self.devices, "ranges": self.ranges,
               "notes": self.notes, "source": self.source}
        if self.annotations:
            doc["annotations"] = self.annotations
        for key in ("gpus", "archs", "range_events"):
            if getattr(self, key):
                doc[key] = getattr(self, key)
        return doc

    def layer_times(self) -> list[tuple[str, int, float]]:
        """``(layer name, instances, total ms)`` of the TensorRT domain's ranges."""
        return [(r["name"], r["count"], r["ms"]) for r in self.ranges if r["domain"] == TENSORRT_DOMAIN]


def _tables(con: sqlite3.Connection) -> set[str]:
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _cols(con: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in con.execute(f"PRAGMA table_info({table})")}


def read_kernels(path: str | Path) -> KernelTable:
    """The kernel table of the export at ``path``; InputError for a file that is not one."""
    p = Path(path)
    try:
        con = sqlite3.connect(f"file:{p}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error as exc:
        raise InputError(p, f"cannot open as SQLite: {exc}") from None
    try:
        return _read(con, p)
    except sqlite3.DatabaseError as exc:
        raise InputError(p, f"damaged Nsight Systems export: {exc}") from None
    finally:
        con.close()


def _names(con: sqlite3.Connection) -> dict[int, str]:
    return {int(i): str(v) for i, v in con.execute("SELECT id, value FROM StringIds")}


def _read(con: sqlite3.Connection, p: Path) -> KernelTable:
    tables = _tables(con)
    out = KernelTable()
    if "META_DATA_EXPORT" in tables:
        meta = dict(con.execute("SELECT name, value FROM META_DATA_EXPORT").fetchall())
        out.source = {"nsys": meta.get("EXPORT_PRODUCT_VERSION"), "schema": meta.get("EXPORT_SCHEMA_VERSION")}
    if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables:
        if not tables & {"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME", "StringIds"}:
            raise InputError(p, "not an Nsight Systems export (no CUPTI or NVTX tables): "
                                "nsys export --type sqlite REPORT.nsys-rep")
        out.notes.append("no CUDA kernels in this export: profile with nsys profile --trace=cuda,nvtx")
        return out
    strings = _names(con) if "StringIds" in tables else {}
    kcols = _cols(con, "CUPTI_ACTIVITY_KIND_KERNEL")
    name_col = "shortName" if "shortName" in kcols else "demangledName"
    graph_col = "graphNodeId" if "graphNodeId" in kcols else "NULL"
    dims = ("gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ")
    launch_cols = ", ".join(f"k.{c}" if c in kcols else "NULL" for c in dims)
    has_runtime = "CUPTI_ACTIVITY_KIND_RUNTIME" in tables
    join = ("LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId" if has_runtime else "")
    rows = con.execute(
        f"SELECT k.start, k.end, k.{name_col}, k.deviceId, {graph_col}, "
        f"{'r.globalTid, r.start' if has_runtime else 'NULL, NULL'}, {launch_cols} "
        f"FROM CUPTI_ACTIVITY_KIND_KERNEL k {join}").fetchall()
    if not rows:
        out.notes.append("the export holds no kernels")
        return out
    arr = np.asarray([(r[0], r[1], r[2] if isinstance(r[2], int) else -1, r[3] or 0, r[4] is not None,
                       r[5] if r[5] is not None else -1, r[6] if r[6] is not None else -1) for r in rows],
                     dtype=np.int64)
    dur_ms = (arr[:, 1] - arr[:, 0]) / 1e6
    out.kernels = int(len(arr))
    out.total_ms = float(dur_ms.sum())
    out.devices = sorted({int(d) for d in arr[:, 3]})
    out.gpus = _gpus(con, tables)
    kname = [strings.get(int(i), f"kernel#{i}") if i >= 0 else "?" for i in arr[:, 2]]
    out.archs = kernel_archs(kname)
    if arr[:, 4].any():
        out.notes.append(f"{int(arr[:, 4].sum())} kernels ran inside CUDA graphs traced node by node")
    if not has_runtime:
        out.notes.append("no CUDA runtime calls in this export (--trace=cuda): kernels cannot be put in ranges")
    elif (arr[:, 5] < 0).any():
        out.notes.append(f"{int((arr[:, 5] < 0).sum())} kernels have no launch call in the export (a trimmed "
                         "capture window): left unattributed")
    if "NVTX_EVENTS" not in tables:
        out.notes.append("no NVTX table: profile with nsys profile --trace=cuda,nvtx (TensorRT and PyTorch mark "
                         "layers and ops with NVTX ranges)")
        return out
    ranges, domains = _ranges(con, strings)
    out.range_events = len(ranges["start"])
    if not len(ranges["start"]):
        out.notes.append("no NVTX push/pop ranges in this export")
        return out
    owner = _innermost(ranges, arr[:, 5], arr[:, 6])
    texts: dict[tuple[Any, ...], str] = {}  # one string per distinct launch shape (100,000s of kernels, few shapes)
    launch = [texts.get(r[7:13]) or texts.setdefault(r[7:13], launch_text(r[7:10], r[10:13])) for r in rows]
    _aggregate(out, ranges, domains, owner, dur_ms, kname, launch)
    if any(r["domain"] == TENSORRT_DOMAIN for r in out.ranges) and not arr[:, 4].any():
        graph_launches = [n for n in set(kname) if "graph" in n.lower()]
        if graph_launches:
            out.notes.append("TensorRT ran as a CUDA graph: trace with --cuda-graph-trace=node to see its kernels")
    return out


def _gpus(con: sqlite3.Connection, tables: set[str]) -> list[dict[str, Any]]:
    """The GPUs an export names (``TARGET_INFO_GPU``: id, name, compute capability), [] without the table."""
    if "TARGET_INFO_GPU" not in tables:
        return []
    cols = _cols(con, "TARGET_INFO_GPU")
    if "name" not in cols:
        return []
    pick = ", ".join(c if c in cols else "NULL" for c in ("id", "name", "computeMajor", "computeMinor"))
    out: dict[Any, dict[str, Any]] = {}
    for gid, name, major, minor in con.execute(f"SELECT {pick} FROM TARGET_INFO_GPU"):
        cc = f"{major}.{minor}" if isinstance(major, int) and isinstance(minor, int) else None
        out.setdefault(gid, {"id": gid, "name": str(name), "compute_capability": cc})
    return list(out.values())


_ARCH = re.compile(r"(?:^|_)sm_?(\d{2,3})(?=_|$)")


def kernel_archs(names: list[str]) -> list[str]:
    """The architectures kernel names carry (cuBLAS/TensorRT ``sm80_xmma_...``, ``..._sm90_...``), as
    ``smNN``, oldest first: a GPU that ran an ``smNN`` kernel has compute capability NN/10 or newer."""
    found: set[int] = set()
    for n in set(names):
        found.update(int(m) for m in _ARCH.findall(n[:200]))
    return [f"sm{a}" for a in sorted(found)]


def _ranges(con: sqlite3.Connection, strings: dict[int, str]) -> tuple[dict[str, Any], dict[int, str]]:
    cols = _cols(con, "NVTX_EVENTS")
    text_id = "textId" if "textId" in cols else "NULL"
    domains = {int(d): str(t) for d, t in con.execute(
        f"SELECT domainId, text FROM NVTX_EVENTS WHERE eventType = {DOMAIN_CREATE} AND text IS NOT NULL")}
    rows = con.execute(f"SELECT start, end, globalTid, text, {text_id}, domainId FROM NVTX_EVENTS "
                       f"WHERE eventType = {PUSH_POP} AND end IS NOT NULL AND end >= start").fetchall()
    names = [r[3] if r[3] is not None else strings.get(int(r[4]), "?") if r[4] is not None else "?" for r in rows]
    return {"start": np.asarray([r[0] for r in rows], dtype=np.int64),
            "end": np.asarray([r[1] for r in rows], dtype=np.int64),
            "tid": np.asarray([r[2] or 0 for r in rows], dtype=np.int64),
            "name": names, "domain": [int(r[5] or 0) for r in rows]}, domains


def _innermost(ranges: dict[str, Any], call_tid: np.ndarray, call_t: np.ndarray) -> np.ndarray:
    return innermost(ranges["tid"], ranges["start"], ranges["end"], call_tid, call_t)


def innermost(r_tid: np.ndarray, r_start: np.ndarray, r_end: np.ndarray, call_tid: np.ndarray,
              call_t: np.ndarray) -> np.ndarray:
    """For each launch call (thread, time; time < 0: none), the index of the innermost range open
    on that thread at that time, or -1. Ranges on a thread nest (push/pop): per thread, ranges by
    start (the longer first) and calls by time, swept with a stack."""
    owner = np.full(len(call_t), -1, dtype=np.int64)
    valid = call_t >= 0
    for tid in np.unique(call_tid[valid]):
        calls = np.flatnonzero(valid & (call_tid == tid))
        calls = calls[np.argsort(call_t[calls], kind="stable")]
        mine = np.flatnonzero(r_tid == tid)
        if not len(mine):
            continue
        mine = mine[np.lexsort((-r_end[mine], r_start[mine]))]  # by start, the longer (outer) first
        starts, ends = r_start[mine].tolist(), r_end[mine].tolist()
        stack: list[int] = []
        j, n = 0, len(mine)
        for c, t in zip(calls.tolist(), call_t[calls].tolist(), strict=True):
            while j < n and starts[j] <= t:
                while stack and ends[stack[-1]] < starts[j]:
                    stack.pop()
                stack.append(j)
                j += 1
            while stack and ends[stack[-1]] < t:
                stack.pop()
            if stack:
                owner[c] = mine[stack[-1]]
    return owner


def launch_text(grid: Any, block: Any) -> str:
    """``grid 512x1x1 block 256x1x1`` from a kernel's launch dimensions; "" where they are unknown."""
    if not grid or not block or any(not isinstance(v, int) for v in (*grid, *block)):
        return ""
    return f"grid {'x'.join(map(str, grid))} block {'x'.join(map(str, block))}"


def aggregate(out: KernelTable, names: list[str], domains: list[str], owner: np.ndarray, dur_ms: np.ndarray,
              kname: list[str], launch: list[str] | None = None) -> None:
    """Fill ``out``'s ranges from each kernel's ``owner`` range (index into ``names``/``domains``);
    ``launch``: each kernel's grid/block text (:func:`launch_text`), kept per kernel name as the one
    its launches used most."""
    count: dict[tuple[str, str], int] = {}
    for key in zip(names, domains, strict=True):
        count[key] = count.get(key, 0) + 1
    per: dict[tuple[str, str], dict[str, list[float]]] = {}
    launches: dict[tuple[str, str, str], dict[str, int]] = {}
    hit = owner >= 0
    for k in np.flatnonzero(hit).tolist():
        r = int(owner[k])
        per.setdefault((names[r], domains[r]), {}).setdefault(kname[k], []).append(float(dur_ms[k]))
        if launch is not None and launch[k]:
            seen = launches.setdefault((names[r], domains[r], kname[k]), {})
            seen[launch[k]] = seen.get(launch[k], 0) + 1
    out.attributed = int(hit.sum())
    out.attributed_ms = float(dur_ms[hit].sum())
    for key, ks in per.items():
        items: list[dict[str, Any]] = sorted(({"name": n, "count": len(v), "ms": float(sum(v))} for n, v in ks.items()),
                                             key=lambda x: -float(x["ms"]))
        for it in items:
            used = launches.get((*key, it["name"]))
            if used:
                it["launch"] = max(used, key=used.__getitem__)
        ms = float(sum(float(x["ms"]) for x in items))
        calls = count.get(key, 1)
        out.ranges.append({"name": key[0], "domain": key[1], "count": calls, "ms": ms, "per_call_ms": ms / calls,
                           "kernels": items})
    out.ranges.sort(key=lambda r: -r["ms"])


_PYTORCH_SUFFIX = re.compile(r",\s*(op_id|seq|sizes|input_op_ids)\s*=.*$")


def range_name(text: str) -> str:
    """A range's name without PyTorch's per-call suffixes (``aten::mm, op_id = 318133`` -> ``aten::mm``),
    so the calls of one op add up."""
    return _PYTORCH_SUFFIX.sub("", text) if "=" in text else text


def _aggregate(out: KernelTable, ranges: dict[str, Any], domains: dict[int, str], owner: np.ndarray,
               dur_ms: np.ndarray, kname: list[str], launch: list[str] | None = None) -> None:
    names = [range_name(n) for n in ranges["name"]]
    doms = [domains.get(d, "default" if d == 0 else f"domain {d}") for d in ranges["domain"]]
    aggregate(out, names, doms, owner, dur_ms, kname, launch)


def is_nsys_export(head: bytes) -> bool:
    """Whether a file's first bytes are an SQLite database (an ``nsys export --type sqlite``)."""
    return head.startswith(SQLITE_MAGIC)

