"""Nsight Systems SQLite exports of a TensorRT run, made here with the real schema's tables and
columns (the subset the join reads, as `nsys export --type sqlite` 2026.2 writes them: NVTX_EVENTS
push/pop ranges with textId into StringIds and a TensorRT domain, CUPTI runtime calls and kernels
joined by correlationId), for the tests and for benchmarks/nsys.py's size budget. The real export in
../shared/fixtures/nsys-real is the truth for the join; this one is for scale and for TensorRT's
domain, which no public export has."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

SCHEMA = """
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue INTEGER, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
  shortName INTEGER, mangledName INTEGER, launchType INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER,
  blockX INTEGER, blockY INTEGER, blockZ INTEGER, graphNodeId INTEGER, graphId INTEGER);
"""


def write_trt_export(path: Path, layers: list[str], inferences: int, kernels_per_layer: int = 2,
                     outer: str | None = "ExecutionContext::enqueue", seed: int = 0, inner: bool = False
                     ) -> dict[str, float]:
    """An export of ``inferences`` runs of an engine whose layers are ``layers``: per inference an
    outer range (``outer``, domain TensorRT, as TensorRT's enqueue range) holding one range per
    layer, each launching ``kernels_per_layer`` kernels through a cudaLaunchKernel call inside it
    (``inner``: inside one more range per layer, ``NAME/launch``, which then owns the kernels).
    Kernel ``i`` of a layer launches a grid of ``64 * (i + 1)`` blocks of 128 threads.
    Returns each layer's total kernel time in ms (what the join must find)."""
    rng = np.random.default_rng(seed)
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    strings = {"TensorRT": 1, "cudaLaunchKernel": 2}
    for name in layers:
        strings.setdefault(name, len(strings) + 1)
    kernel_names = [f"sm86_xmma_fprop_kernel_{i}" for i in range(kernels_per_layer)]
    for k in kernel_names:
        strings.setdefault(k, len(strings) + 1)
    if outer:
        strings.setdefault(outer, len(strings) + 1)
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(i, v) for v, i in strings.items()])
    con.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2026.2.1.210')")
    con.execute("INSERT INTO NVTX_EVENTS (start, eventType, text, domainId, globalTid) VALUES (0, 75, 'TensorRT', 1, 7)")
    tid, t, corr = 7, 1000, 1
    nvtx, runtime, kern = [], [], []
    total = dict.fromkeys(layers, 0.0)
    for _ in range(inferences):
        start_outer = t
        t += 100
        for name in layers:
            r0 = t
            t += 50
            for ki, kname in enumerate(kernel_names):
                runtime.append((t, t + 20, 1, tid, corr, strings["cudaLaunchKernel"]))
                dur = int(rng.integers(1_000, 20_000))
                kern.append((t + 30, t + 30 + dur, 0, 1, 7, corr, strings[kname], strings[kname],
                             64 * (ki + 1), 1, 1, 128, 1, 1))
                total[name] += dur / 1e6
                corr += 1
                t += 40
            t += 10
            if inner:
                nvtx.append((r0 + 1, t - 1, 59, f"{name}/launch", tid, None, 1))
            nvtx.append((r0, t, 59, None, tid, strings[name], 1))
        t += 100
        if outer:
            nvtx.append((start_outer, t, 59, None, tid, strings[outer], 1))
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)", nvtx)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId) "
                    "VALUES (?, ?, ?, ?, ?, ?)", runtime)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
                    "demangledName, shortName, gridX, gridY, gridZ, blockX, blockY, blockZ) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", kern)
    con.commit()
    con.close()
    return total
