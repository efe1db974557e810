"""Memory monitors: NVML (device used/total, this process), CUDA free/total (pycuda), host RSS (psutil).

Each probe is tried once at start; one that cannot work here (no GPU, module missing) is dropped
silently, so a sample holds only the keys that could be measured. Values are bytes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

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
    from trtstudio.measure.devices import nvml_memory

    nvml_memory(device)  # raises here, at start, when NVML is missing
    return lambda: nvml_memory(device)


def cuda_probe() -> Probe:
    """CUDA free/total of the current context (``cuda_free_bytes``, ``cuda_total_bytes``)."""
    from trtstudio.measure.devices import cuda_mem_info

    if cuda_mem_info() is None:
        raise BackendError("no CUDA context current here")

    def probe() -> dict[str, int]:
        got = cuda_mem_info()
        if got is None:
            raise BackendError("the CUDA context went away")
        return {"cuda_free_bytes": got[0], "cuda_total_bytes": got[1]}

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


# What a backend's ``memory()`` says that changes during a run or splits the process's GPU memory
# (``profiling.memory_split``): sampled with the monitors.
LIVE_BACKEND_KEYS = ("context_device_bytes", "engine_file_bytes", "torch_allocated_bytes", "torch_reserved_bytes",
                     "torch_inactive_split_bytes", "torch_graph_pool_bytes", "torch_graph_pool_allocated_bytes")


def backend_probe(backend: Any) -> Probe | None:
    """A probe of ``backend.memory()``'s :data:`LIVE_BACKEND_KEYS` (the TensorRT context's device
    memory, torch's allocator statistics); None when it reports none of them."""
    if not any(k in LIVE_BACKEND_KEYS for k in backend.memory()):
        return None
    return lambda: {k: int(v) for k, v in backend.memory().items() if k in LIVE_BACKEND_KEYS}


def _written(n: int, dtype: Any) -> np.ndarray:
    """A zeroed array whose pages are all touched now (``np.zeros`` leaves them to first use)."""
    a = np.empty(n, dtype=dtype)
    a.fill(0)
    return a


class MemorySeries:
    """Memory samples of a run: time, inference index, and one column per key, bounded in length
    (every other sample is dropped when full, so the series spans the whole run).

    The columns are numpy arrays written in full when made (a new key's column too), so recording
    a sample allocates nothing: a series that grew with the run would itself raise the host RSS it
    measures, by more per inference the slower each inference runs (a loaded machine)."""

    def __init__(self, max_len: int = 20_000) -> None:
        self.max_len = max_len
        self._n = 0
        self._t = _written(max_len, np.float64)
        self._index = _written(max_len, np.int64)
        self._values: dict[str, np.ndarray] = {}

    def add(self, t: float, index: int, sample: dict[str, int]) -> None:
        """Append one sample (a key missing from it repeats its last value); thin by two when
        ``max_len`` is reached."""
        n = self._n
        for key, v in sample.items():
            col = self._values.get(key)
            if col is None:
                col = self._values[key] = _written(self.max_len, np.int64)
            col[n] = int(v)
        for key, col in self._values.items():
            if key not in sample:
                col[n] = col[n - 1] if n else 0
        self._t[n], self._index[n] = t, index
        self._n = n + 1
        if self._n >= self.max_len:
            keep = (self._n + 1) // 2
            for a in (self._t, self._index, *self._values.values()):
                a[:keep] = a[: self._n : 2]
            self._n = keep

    def arrays(self) -> dict[str, np.ndarray]:
        """Columns as arrays (copies): ``t_s``, ``index`` and each memory key."""
        n = self._n
        out = {"t_s": self._t[:n].copy(), "index": self._index[:n].copy()}
        out.update({k: v[:n].copy() for k, v in self._values.items()})
        return out

    def summary(self) -> dict[str, dict[str, int]]:
        """First, last and peak of each key."""
        n = self._n
        if not n:
            return {}
        return {k: {"first": int(v[0]), "last": int(v[n - 1]), "peak": int(v[:n].max())} for k, v in self._values.items()}


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
