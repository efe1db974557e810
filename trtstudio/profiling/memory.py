"""Memory monitors: NVML (device used/total, this process), CUDA free/total (pycuda), host RSS (psutil).

Each probe is tried once at start; one that cannot work here (no GPU, module missing) is dropped
silently, so a sample holds only the keys that could be measured. Values are bytes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from trtstudio.errors import BackendError

Probe = Callable[[], dict[str, int]]


def host_probe() -> Probe:
    """Resident set size of this process (``host_rss_bytes``)."""
    import psutil

    proc = psutil.Process()
    return lambda: {"host_rss_bytes": int(proc.memory_info().rss)}


def nvml_probe(device: int = 0) -> Probe:
    """NVML device used/total and this process's GPU memory."""
    from trtstudio.backends.cuda import nvml_memory

    nvml_memory(device)  # raises here, at start, when NVML is missing
    return lambda: nvml_memory(device)


def cuda_probe() -> Probe:
    """CUDA free/total of the current context (``cuda_free_bytes``, ``cuda_total_bytes``)."""
    from trtstudio.backends.cuda import cuda_mem_info

    cuda_mem_info()
    def probe() -> dict[str, int]:
        free, total = cuda_mem_info()
        return {"cuda_free_bytes": free, "cuda_total_bytes": total}

    return probe


def default_probes(gpu: bool = True, device: int = 0) -> list[Probe]:
    """Every probe that works here; GPU ones only when ``gpu``."""
    makers: list[Callable[[], Probe]] = [host_probe]
    if gpu:
        makers += [lambda: nvml_probe(device), cuda_probe]
    probes = []
    for make in makers:
        try:
            probes.append(make())
        except (ImportError, BackendError, Exception):  # noqa: B014 - a missing monitor is silently absent
            continue
    return probes


@dataclass
class MemorySeries:
    """Memory samples of a run: time, inference index, and one column per key, bounded in length
    (every other sample is dropped when full, so the series spans the whole run)."""

    max_len: int = 20_000
    t_s: list[float] = field(default_factory=list)
    index: list[int] = field(default_factory=list)
    values: dict[str, list[int]] = field(default_factory=dict)

    def add(self, t: float, index: int, sample: dict[str, int]) -> None:
        """Append one sample; thin by two when ``max_len`` is reached."""
        n = len(self.t_s)
        for key, v in sample.items():
            self.values.setdefault(key, [0] * n).append(int(v))
        for col in self.values.values():
            if len(col) < n + 1:
                col.append(col[-1] if col else 0)
        self.t_s.append(t)
        self.index.append(index)
        if len(self.t_s) >= self.max_len:
            self.t_s, self.index = self.t_s[::2], self.index[::2]
            self.values = {k: v[::2] for k, v in self.values.items()}

    def arrays(self) -> dict[str, np.ndarray]:
        """Columns as arrays: ``t_s``, ``index`` and each memory key."""
        out = {"t_s": np.asarray(self.t_s, dtype=np.float64), "index": np.asarray(self.index, dtype=np.int64)}
        out.update({k: np.asarray(v, dtype=np.int64) for k, v in self.values.items()})
        return out

    def summary(self) -> dict[str, dict[str, int]]:
        """First, last and peak of each key."""
        return {k: {"first": v[0], "last": v[-1], "peak": max(v)} for k, v in self.values.items() if v}


class MemoryMonitor:
    """Samples the probes every ``interval_ms``: call ``maybe_sample`` from the run loop (cheap when
    not due), or ``start_thread`` for a small sampler thread of its own."""

    def __init__(self, probes: list[Probe] | None = None, interval_ms: float = 200.0) -> None:
        self.probes = default_probes() if probes is None else probes
        self.interval_s = interval_ms / 1e3
        self.series = MemorySeries()
        self._next = 0.0
        self._t0 = time.perf_counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.index = 0

    def sample(self) -> dict[str, int]:
        """One reading of every probe (a probe that fails mid-run is dropped)."""
        out: dict[str, int] = {}
        for probe in list(self.probes):
            try:
                out.update(probe())
            except Exception:  # noqa: BLE001 - monitors must never stop a run
                self.probes.remove(probe)
        return out

    def record(self, index: int) -> dict[str, int]:
        """Sample now and store it against inference ``index``."""
        sample = self.sample()
        with self._lock:
            self.series.add(time.perf_counter() - self._t0, index, sample)
        return sample

    def maybe_sample(self, now: float, index: int) -> None:
        """Record when ``interval_ms`` has passed since the last record (``now`` from perf_counter)."""
        if now >= self._next and self.probes:
            self._next = now + self.interval_s
            self.record(index)

    def start_thread(self) -> None:
        """Sample on a daemon thread until ``stop_thread``; ``index`` is read from ``self.index``."""
        if self._thread is not None:
            return
        self._stop.clear()

        def loop() -> None:
            while not self._stop.wait(self.interval_s):
                self.record(self.index)

        self._thread = threading.Thread(target=loop, name="trtstudio-memory", daemon=True)
        self._thread.start()

    def stop_thread(self) -> None:
        """Stop the sampler thread and wait for it."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=5)
            self._thread = None

    def snapshot(self) -> dict[str, np.ndarray]:
        """Copies of the series so far."""
        with self._lock:
            return self.series.arrays()
