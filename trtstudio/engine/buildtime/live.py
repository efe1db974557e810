"""Recording a build as it runs (trtstudio's own builds): its phases from TensorRT's progress monitor
(:class:`PhaseRecorder`) and the process's peak memory (:class:`MemoryWatch`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trtstudio.engine.buildtime.timeline import canonical_phase, phase_totals


@dataclass
class _Open:
    name: str
    canonical: str
    start: float
    steps: int


class PhaseRecorder:
    """Records a build's phases as they happen (TensorRT's progress monitor, and trtstudio's own
    steps) on one clock, from any thread. A phase's own time excludes the phases nested in it; the
    timeline merges consecutive slices of one canonical phase. :meth:`snapshot` is what a live view
    polls: the phases so far, the open one with its elapsed time and, once it has reported steps,
    an estimate of what is left of it."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter, t0: float | None = None,
                 enabled: bool = True) -> None:
        self.enabled = enabled  # off: every call returns at once, the timeline stays empty
        self.clock = clock
        self.t0 = clock() if t0 is None else t0
        self._lock = threading.Lock()
        self._stack: list[_Open] = []
        self._slices: list[tuple[str, float, float, str]] = []  # (canonical, start, end, trt name)
        self._mark = 0.0
        self._progress: dict[str, tuple[int, int, float]] = {}  # phase -> (step, total, at)

    def _now(self) -> float:
        return self.clock() - self.t0

    def _cut(self, now: float) -> None:
        if self._stack and now > self._mark:
            top = self._stack[-1]
            self._slices.append((top.canonical, self._mark, now, top.name))
        self._mark = now

    def start(self, name: str, steps: int = 0, canonical: str | None = None) -> None:
        """A phase began (nested in the open one, if any)."""
        if not self.enabled:
            return
        with self._lock:
            now = self._now()
            self._cut(now)
            self._stack.append(_Open(name, canonical or canonical_phase(name), now, steps))
            self._progress[name] = (0, steps, now)

    def step(self, name: str, step: int, total: int) -> None:
        """A phase reported a step (``step`` done of ``total``)."""
        if not self.enabled:
            return
        with self._lock:
            self._progress[name] = (step, total, self._now())

    def finish(self, name: str) -> None:
        """A phase ended (and any phase opened inside it that did not say so)."""
        if not self.enabled:
            return
        with self._lock:
            if not any(o.name == name for o in self._stack):
                return
            now = self._now()
            self._cut(now)
            while self._stack:
                if self._stack.pop().name == name:
                    break

    def close(self) -> None:
        """End every open phase now (a build that finished, failed or was cancelled)."""
        with self._lock:
            now = self._now()
            self._cut(now)
            self._stack.clear()

    def timeline(self) -> list[dict[str, Any]]:
        """``[{phase, start_s, seconds, share, detail}]``: consecutive slices of one phase merged."""
        with self._lock:
            slices = list(self._slices)
            if self._stack:
                now = self._now()
                top = self._stack[-1]
                slices.append((top.canonical, self._mark, now, top.name))
        rows: list[dict[str, Any]] = []
        for canon, start, end, trt_name in slices:
            if rows and rows[-1]["phase"] == canon and abs(rows[-1]["_end"] - start) < 1e-9:
                rows[-1]["_end"] = end
                if trt_name not in rows[-1]["detail"]:
                    rows[-1]["detail"].append(trt_name)
            else:
                rows.append({"phase": canon, "_start": start, "_end": end, "detail": [trt_name]})
        total = sum(r["_end"] - r["_start"] for r in rows) or 1.0
        return [{"phase": r["phase"], "start_s": round(r["_start"], 6), "seconds": round(r["_end"] - r["_start"], 6),
                 "share": round((r["_end"] - r["_start"]) / total, 4), "detail": r["detail"]} for r in rows]

    def snapshot(self) -> dict[str, Any]:
        """For a live view: ``{elapsed_s, phases: {phase: seconds}, open: {name, phase, elapsed_s,
        step, total, left_s}}`` (``left_s`` None until the open phase has reported a step)."""
        rows = self.timeline()
        with self._lock:
            now = self._now()
            top = self._stack[-1] if self._stack else None
            prog = self._progress.get(top.name) if top else None
        opened = None
        if top is not None:
            step, total, _at = prog or (0, top.steps, now)
            elapsed = now - top.start
            left = elapsed * (total - step) / step if step > 0 and total >= step else None
            opened = {"name": top.name, "phase": top.canonical, "elapsed_s": round(elapsed, 4),
                      "step": step, "total": total, "left_s": round(left, 4) if left is not None else None}
        return {"elapsed_s": round(now, 4), "phases": phase_totals(rows), "open": opened}


class MemoryWatch:
    """Peak host RSS and GPU memory of this process over a build.

    Host: the kernel's own peak (``VmHWM``), reset at the start through ``/proc/self/clear_refs``
    where Linux allows it, else the process's lifetime peak (``ru_maxrss``, said so in ``host_source``).
    GPU: NVML's per-process used memory, sampled every ``interval_s`` where ``pynvml`` and a GPU are
    present (None with the reason otherwise: a TensorRT-RTX build for other GPUs needs none)."""

    def __init__(self, interval_s: float = 0.1) -> None:
        self.interval_s = interval_s
        self.host_source = "VmHWM since the build started"
        self.gpu_peak: int | None = None
        self.gpu_source = "no NVML here (pynvml or a GPU missing)"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._handles: list[Any] = []

    def start(self) -> MemoryWatch:
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
        except OSError:
            self.host_source = "process lifetime peak (ru_maxrss): the peak could not be reset"
        try:
            import pynvml

            pynvml.nvmlInit()
            self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
            if self._handles:
                self.gpu_source = "NVML per-process used memory, sampled"
                self._thread = threading.Thread(target=self._poll, name="build-gpu-memory", daemon=True)
                self._thread.start()
        except Exception:  # noqa: BLE001 - no NVML: the GPU peak stays None with its reason
            self._handles = []
        return self

    def _poll(self) -> None:
        import os

        import pynvml

        pid = os.getpid()
        while not self._stop.wait(self.interval_s):
            used = 0
            for h in self._handles:
                try:
                    procs = pynvml.nvmlDeviceGetComputeRunningProcesses(h)
                except Exception:  # noqa: BLE001
                    continue
                used += sum(int(p.usedGpuMemory or 0) for p in procs if p.pid == pid)
            self.gpu_peak = max(self.gpu_peak or 0, used)

    @staticmethod
    def host_peak() -> int | None:
        try:
            with open("/proc/self/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        try:
            import resource

            return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
        except (ImportError, OSError):
            return None

    def stop(self) -> dict[str, Any]:
        """``{host_peak_bytes, gpu_peak_bytes, host_source, gpu_source}`` measured by trtstudio."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        return {"host_peak_bytes": self.host_peak(), "gpu_peak_bytes": self.gpu_peak,
                "host_source": self.host_source, "gpu_source": self.gpu_source}
