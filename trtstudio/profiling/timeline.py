"""Timeline of a scenario: intervals (H2D, compute, D2H, host work) per row (one stream, or one worker
on the CPU), in ms from a common start, with the share of copy time that overlapped compute.

GPU intervals come from CUDA event times against one origin event per device (``stage_marks`` of the
torch backend); CPU intervals from ``perf_counter`` against the scenario's start. Storage is a fixed
set of numpy columns: the newest ``capacity`` intervals are kept, older ones are counted as dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

KINDS = ("h2d", "compute", "d2h", "host")
H2D, COMPUTE, D2H, HOST = range(4)


class Timeline:
    """Intervals appended by worker threads, read as column copies by views and exporters."""

    def __init__(self, capacity: int = 500_000) -> None:
        if capacity <= 0:
            raise ValueError("capacity must be positive")
        self.capacity = int(capacity)
        self._row = np.zeros(self.capacity, np.int32)
        self._kind = np.zeros(self.capacity, np.int8)
        self._start = np.zeros(self.capacity, np.float64)
        self._end = np.zeros(self.capacity, np.float64)
        self._seq = np.zeros(self.capacity, np.int64)
        self.count = 0  # appended since creation, dropped ones included
        self.rows: list[str] = []
        self.groups: list[str] = []  # per row: the device it ran on ("cuda:0", "cpu")
        self._lock = threading.Lock()

    def add_row(self, name: str, group: str = "cpu") -> int:
        """Register a row (a stream or a CPU worker) and return its index."""
        with self._lock:
            self.rows.append(name)
            self.groups.append(group)
            return len(self.rows) - 1

    def add(self, row: int, kind: int, start_ms: float, end_ms: float, seq: int = 0) -> None:
        """Append one interval."""
        with self._lock:
            i = self.count % self.capacity
            self._row[i], self._kind[i], self._start[i], self._end[i], self._seq[i] = row, kind, start_ms, end_ms, seq
            self.count += 1

    def add_stages(self, row: int, marks: Sequence[float], seq: int = 0) -> None:
        """Append H2D, compute and D2H of one inference from its four event times (ms)."""
        m0, m1, m2, m3 = marks
        with self._lock:
            for kind, a, b in ((H2D, m0, m1), (COMPUTE, m1, m2), (D2H, m2, m3)):
                i = self.count % self.capacity
                self._row[i], self._kind[i], self._start[i], self._end[i], self._seq[i] = row, kind, a, b, seq
                self.count += 1

    def add_many(self, row: int, intervals: Sequence[tuple[int, float, float, int]]) -> None:
        """Append a batch of one row's ``(kind, start_ms, end_ms, seq)`` intervals under one lock (a
        worker gathers its intervals and hands them over a few times a second, not one by one)."""
        n = len(intervals)
        if n == 0:
            return
        cols = np.asarray(intervals, dtype=np.float64)
        with self._lock:
            idx = (self.count + np.arange(max(0, n - self.capacity), n)) % self.capacity
            keep = cols[-idx.size:]
            self._row[idx] = row
            self._kind[idx] = keep[:, 0]
            self._start[idx] = keep[:, 1]
            self._end[idx] = keep[:, 2]
            self._seq[idx] = keep[:, 3]
            self.count += n

    @property
    def dropped(self) -> int:
        """Intervals overwritten because more than ``capacity`` were added."""
        return max(0, self.count - self.capacity)

    def arrays(self) -> dict[str, np.ndarray]:
        """Copies of the kept intervals, oldest first: ``row``, ``kind``, ``start``, ``end``, ``seq``."""
        with self._lock:
            n = min(self.count, self.capacity)
            if self.count <= self.capacity:
                idx = np.arange(n)
            else:
                head = self.count % self.capacity
                idx = np.concatenate((np.arange(head, self.capacity), np.arange(head)))
            return {
                "row": self._row[idx], "kind": self._kind[idx], "start": self._start[idx],
                "end": self._end[idx], "seq": self._seq[idx],
            }

    def summary(self) -> dict[str, Any]:
        """Busy time per row and kind, and per device the share of copy time overlapped with compute."""
        a = self.arrays()
        rows = []
        for r, name in enumerate(self.rows):
            sel = a["row"] == r
            dur = a["end"][sel] - a["start"][sel]
            kinds = a["kind"][sel]
            rows.append({
                "row": name, "device": self.groups[r], "intervals": int(sel.sum()),
                **{f"{k}_ms": float(dur[kinds == i].sum()) for i, k in enumerate(KINDS) if (kinds == i).any()},
            })
        devices = {}
        for group in dict.fromkeys(self.groups):
            in_group = np.isin(a["row"], [r for r, g in enumerate(self.groups) if g == group])
            copy = in_group & ((a["kind"] == H2D) | (a["kind"] == D2H))
            comp = in_group & (a["kind"] == COMPUTE)
            if not copy.any():
                continue
            devices[group] = {
                "copy_ms": float((a["end"][copy] - a["start"][copy]).sum()),
                "compute_ms": float((a["end"][comp] - a["start"][comp]).sum()),
                "copy_overlapped_share": overlap_share(a["start"][copy], a["end"][copy], a["start"][comp], a["end"][comp]),
            }
        return {"intervals": min(self.count, self.capacity), "dropped": self.dropped, "rows": rows, "devices": devices}


def union(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge intervals into sorted, disjoint ones."""
    if starts.size == 0:
        return starts.copy(), ends.copy()
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    run_end = np.maximum.accumulate(e)
    new = np.empty(s.size, bool)
    new[0] = True
    new[1:] = s[1:] > run_end[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:], s.size) - 1
    return s[first], run_end[last]


def overlap_share(copy_s: np.ndarray, copy_e: np.ndarray, comp_s: np.ndarray, comp_e: np.ndarray) -> float:
    """Share (0..1) of the total copy time that lies inside the union of the compute intervals."""
    total = float((copy_e - copy_s).sum())
    if total <= 0 or comp_s.size == 0:
        return 0.0
    us, ue = union(comp_s, comp_e)
    cum = np.concatenate(([0.0], np.cumsum(ue - us)))

    def covered(x: np.ndarray) -> np.ndarray:  # union length in (-inf, x]
        k = np.searchsorted(us, x, side="right")  # intervals starting at or before x
        inside = np.where(k > 0, np.minimum(x, ue[np.maximum(k - 1, 0)]) - us[np.maximum(k - 1, 0)], 0.0)
        return cum[np.maximum(k - 1, 0)] * (k > 0) + np.maximum(inside, 0.0)

    return float((covered(copy_e) - covered(copy_s)).sum() / total)


def chrome_trace(timeline: Timeline, name: str = "trtstudio scenario") -> dict[str, Any]:
    """A Chrome-trace / Perfetto document: one process per device, one thread per row, one complete
    event per interval (times in microseconds)."""
    a = timeline.arrays()
    groups = list(dict.fromkeys(timeline.groups))
    pid_of = {g: i + 1 for i, g in enumerate(groups)}
    events: list[dict[str, Any]] = []
    for g, pid in pid_of.items():
        events.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": f"{name}: {g}"}})
    for r, row in enumerate(timeline.rows):
        events.append({"ph": "M", "pid": pid_of[timeline.groups[r]], "tid": r + 1, "name": "thread_name", "args": {"name": row}})
    pids = np.array([pid_of[g] for g in timeline.groups], dtype=np.int64)
    row_pid = pids[a["row"]] if len(pids) else np.zeros(0, np.int64)
    ts = a["start"] * 1e3
    dur = (a["end"] - a["start"]) * 1e3
    for i in range(a["row"].size):
        events.append({
            "ph": "X", "pid": int(row_pid[i]), "tid": int(a["row"][i]) + 1, "name": KINDS[int(a["kind"][i])],
            "ts": float(ts[i]), "dur": float(dur[i]), "args": {"i": int(a["seq"][i])},
        })
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": {"schema": "trtstudio.trace/1",
                                                                          "dropped_intervals": timeline.dropped}}
