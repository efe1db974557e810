"""Device choice per model, and per-GPU memory and utilisation over time for the scenario panels.

The GPUs themselves and their readings come from ``measure.devices`` (NVML, else torch's view;
without either the list is empty and every model runs where its backend runs on the CPU). The
sampler keeps a bounded series per GPU for the per-GPU panels.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from trtstudio.errors import InputError
from trtstudio.measure.devices import GpuInfo, gpu_reading, list_gpus

__all__ = ["GpuInfo", "GpuSampler", "gpu_reading", "list_gpus", "parse_devices"]


def parse_devices(text: str | None, count: int, default: int | None = None) -> list[int | None]:
    """Device per model from ``--devices 0,1,...`` (one per model, or one for all; 'cpu' for none);
    without it every model gets ``default``."""
    if not text:
        return [default] * count
    items = [t.strip() for t in text.split(",") if t.strip()]
    try:
        devices = [None if t.lower() == "cpu" else int(t) for t in items]
    except ValueError:
        raise InputError("--devices", f"'{text}' is not a list of GPU indices (e.g. 0,1 or cpu)") from None
    if any(d is not None and d < 0 for d in devices):
        raise InputError("--devices", "GPU indices must be 0 or more")
    if len(devices) == 1:
        return devices * count
    if len(devices) != count:
        raise InputError("--devices", f"{len(devices)} devices for {count} models; give one per model or one for all")
    return devices


class GpuSampler:
    """Samples every GPU's memory and utilisation every ``interval_ms`` on a daemon thread; bounded
    series per GPU (every other sample dropped when ``max_len`` is reached). ``read(index)`` defaults
    to NVML's ``gpu_reading``."""

    FIELDS = ("used_bytes", "total_bytes", "util_percent", "mem_util_percent")

    def __init__(self, gpus: list[GpuInfo] | None = None, interval_ms: float = 250.0, max_len: int = 4096,
                 read: Callable[[int], dict[str, float]] | None = None) -> None:
        self.gpus = list_gpus() if gpus is None else list(gpus)
        self.interval_s = interval_ms / 1e3
        self.max_len = max_len
        self._read = read or gpu_reading
        self._t0 = time.perf_counter()
        self._lock = threading.Lock()
        self._n = 0
        self._t = np.zeros(max_len)
        self._data = np.full((len(self.gpus), len(self.FIELDS), max_len), np.nan)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> None:
        """Read every GPU once and append."""
        rows = np.full((len(self.gpus), len(self.FIELDS)), np.nan)
        for g, gpu in enumerate(self.gpus):
            try:
                got = self._read(gpu.index)
            except Exception:  # noqa: BLE001 - a monitor never stops a run
                got = {}
            for f, name in enumerate(self.FIELDS):
                if name in got:
                    rows[g, f] = got[name]
        with self._lock:
            if self._n == self.max_len:
                half = self.max_len // 2
                self._t[:half] = self._t[0::2][:half]
                self._data[:, :, :half] = self._data[:, :, 0::2][:, :, :half]
                self._n = half
            self._t[self._n] = time.perf_counter() - self._t0
            self._data[:, :, self._n] = rows
            self._n += 1

    def snapshot(self) -> dict[int, dict[str, np.ndarray]]:
        """Per GPU index: ``t_s`` and one array per field, copies."""
        with self._lock:
            n = self._n
            return {gpu.index: {"t_s": self._t[:n].copy(), **{f: self._data[g, i, :n].copy()
                                                               for i, f in enumerate(self.FIELDS)}}
                    for g, gpu in enumerate(self.gpus)}

    def summary(self) -> list[dict[str, Any]]:
        """Per GPU: peak used bytes and mean utilisation over the samples."""
        out = []
        for index, s in self.snapshot().items():
            used, util = s["used_bytes"], s["util_percent"]
            out.append({
                "gpu": index,
                "peak_used_bytes": int(np.nanmax(used)) if np.isfinite(used).any() else None,
                "mean_util_percent": float(np.nanmean(util)) if np.isfinite(util).any() else None,
                "samples": int(used.size),
            })
        return out

    def start(self) -> GpuSampler:
        """Sample on a daemon thread until ``stop``."""
        if self._thread is None and self.gpus:
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="trtstudio-gpus", daemon=True)
            self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval_s)

    def stop(self) -> None:
        """Stop the thread and wait for it."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=5)
            self._thread = None
