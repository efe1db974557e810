"""Exports of a run: raw samples (CSV, .npy) and a Chrome-trace / Perfetto JSON timeline."""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from trtstudio.profiling.samples import COLUMNS

SAMPLES_DTYPE = np.dtype([(c, np.float64) for c in COLUMNS])


def write_samples_csv(path: str | os.PathLike[str], snapshot: dict[str, np.ndarray]) -> int:
    """Write samples (a ``SampleBuffer.snapshot``) as CSV with a header; empty cells for missing parts.
    Returns the number of rows."""
    cols = [snapshot[c] for c in COLUMNS]
    n = len(cols[0]) if cols else 0
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for i in range(n):
            w.writerow(["" if np.isnan(c[i]) else repr(float(c[i])) for c in cols])
    return n


def write_samples_npy(path: str | os.PathLike[str], snapshot: dict[str, np.ndarray]) -> int:
    """Write samples as one structured array (fields ``COLUMNS``) to .npy. Returns the number of rows."""
    n = len(snapshot[COLUMNS[0]])
    arr = np.empty(n, dtype=SAMPLES_DTYPE)
    for c in COLUMNS:
        arr[c] = snapshot[c]
    np.save(path, arr, allow_pickle=False)
    return n


def chrome_trace(
    snapshot: dict[str, np.ndarray],
    memory: dict[str, np.ndarray] | None = None,
    layers: Sequence[Mapping[str, Any]] | None = None,
    name: str = "trtstudio run",
) -> dict[str, Any]:
    """A Chrome-trace document (open in chrome://tracing or ui.perfetto.dev): one complete event per
    inference on thread 1, its H2D / compute / D2H parts on thread 2, memory counters, and the
    per-layer profile laid out once on thread 3. Times in microseconds from the run's start."""
    events: list[dict[str, Any]] = [
        {"ph": "M", "pid": 1, "tid": 0, "name": "process_name", "args": {"name": name}},
        {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "inference"}},
        {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "stages"}},
    ]
    t_end = snapshot["t_s"] * 1e6
    lat = snapshot["latency_ms"] * 1e3
    parts = [(p, snapshot[f"{p}_ms"] * 1e3) for p in ("h2d", "compute", "d2h")]
    for i in range(len(t_end)):
        start = float(t_end[i] - lat[i])
        events.append({"ph": "X", "pid": 1, "tid": 1, "name": "infer", "ts": start, "dur": float(lat[i]), "args": {"i": i}})
        ts = start
        for pname, values in parts:
            v = float(values[i])
            if np.isnan(v):
                continue
            events.append({"ph": "X", "pid": 1, "tid": 2, "name": pname, "ts": ts, "dur": v})
            ts += v
    if memory:
        t = memory.get("t_s", np.empty(0))
        for key, values in memory.items():
            if key in ("t_s", "index"):
                continue
            for k in range(len(values)):
                events.append(
                    {"ph": "C", "pid": 1, "name": key, "ts": float(t[k] * 1e6), "args": {"MiB": float(values[k]) / 2**20}}
                )
    if layers:
        events.append({"ph": "M", "pid": 1, "tid": 3, "name": "thread_name", "args": {"name": "layers (median)"}})
        ts = 0.0
        for layer in layers:
            dur = float(layer["time_ms"]) * 1e3
            events.append(
                {
                    "ph": "X", "pid": 1, "tid": 3, "name": layer["name"], "ts": ts, "dur": dur,
                    "args": {"onnx_nodes": layer.get("onnx_nodes", []), "provider": layer.get("provider", "")},
                }
            )
            ts += dur
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": {"schema": "trtstudio.trace/1"}}


def write_trace(path: str | os.PathLike[str], trace: dict[str, Any]) -> None:
    """Write a ``chrome_trace`` document as strict JSON (NaN/Infinity as null, with a warning)."""
    from trtstudio.jsonio import count_non_finite, dumps, warn_non_finite

    with open(path, "wb") as f:
        f.write(dumps(trace, check_finite=False))
    warn_non_finite(count_non_finite(trace), os.fspath(path))
