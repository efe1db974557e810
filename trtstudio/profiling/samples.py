"""Sample storage for a run: a fixed-size ring buffer for live panels and an exact whole-run store.

The runner's thread appends; the GUI thread takes ``snapshot`` copies on a timer. Both sides take the
same lock, held only for a row write or an array copy. Missing timing parts are stored as NaN.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

COLUMNS = ("t_s", "latency_ms", "h2d_ms", "compute_ms", "d2h_ms")
DEFAULT_EXACT_CAP = 10_000_000  # latencies kept for exact percentiles (float64: 80 MB at the cap)


class SampleBuffer:
    """Preallocated ring buffer of the last ``capacity`` samples (columns: ``COLUMNS``)."""

    def __init__(self, capacity: int = 100_000) -> None:
        if capacity <= 0:
            raise ValueError("capacity must be positive")
        self.capacity = int(capacity)
        self._data = np.full((self.capacity, len(COLUMNS)), np.nan, dtype=np.float64)
        self._count = 0
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        """Samples appended since creation (also those overwritten)."""
        return self._count

    @property
    def nbytes(self) -> int:
        """Bytes held by the buffer: fixed at creation."""
        return int(self._data.nbytes)

    def append(
        self, t: float, latency: float, h2d: float | None = None, compute: float | None = None, d2h: float | None = None
    ) -> None:
        """Add one sample; parts that are None become NaN."""
        nan = np.nan
        with self._lock:
            self._data[self._count % self.capacity] = (
                t,
                latency,
                nan if h2d is None else h2d,
                nan if compute is None else compute,
                nan if d2h is None else d2h,
            )
            self._count += 1

    def snapshot(self, last_n: int | None = None) -> dict[str, np.ndarray]:
        """Copies of the last ``last_n`` samples (all held when None), oldest first, by column name."""
        with self._lock:
            held = min(self._count, self.capacity)
            n = held if last_n is None else max(0, min(int(last_n), held))
            end = self._count % self.capacity
            start = end - n
            if start >= 0:
                block = self._data[start:end].copy()
            else:
                block = np.concatenate((self._data[start:], self._data[:end]))
        return {name: block[:, i].copy() for i, name in enumerate(COLUMNS)}

    def clear(self) -> None:
        """Forget every sample (the memory stays allocated)."""
        with self._lock:
            self._count = 0
            self._data.fill(np.nan)


@dataclass
class ExactStore:
    """All latencies of a run, for exact percentiles, up to ``cap`` values; beyond the cap a uniform
    reservoir of ``cap`` values (Algorithm R) with a note. Count, mean, min and max stay exact, as do
    the means of the timing parts."""

    cap: int = DEFAULT_EXACT_CAP
    seed: int = 0
    count: int = 0
    _values: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.float64))
    _sum: float = 0.0
    _min: float = float("inf")
    _max: float = float("-inf")
    _part_sums: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0, 0.0])
    _part_counts: list[int] = field(default_factory=lambda: [0, 0, 0, 0])

    def __post_init__(self) -> None:
        self._rng = np.random.default_rng(self.seed)
        self._lock = threading.Lock()

    def add(
        self,
        latency: float,
        h2d: float | None = None,
        compute: float | None = None,
        d2h: float | None = None,
        enqueue: float | None = None,
    ) -> None:
        """Record one sample (the hot path of a run: kept short)."""
        with self._lock:
            i = self.count
            if i < self._values.shape[0]:
                self._values[i] = latency
            elif i < self.cap:
                grown = np.empty(min(self.cap, max(1024, 2 * self._values.shape[0])), dtype=np.float64)
                grown[:i] = self._values[:i]
                grown[i] = latency
                self._values = grown
            else:
                if i == self.cap:  # from here on min/max are tracked apart from the reservoir
                    self._min, self._max = float(self._values.min()), float(self._values.max())
                self._min = min(self._min, latency)
                self._max = max(self._max, latency)
                j = int(self._rng.integers(0, i + 1))
                if j < self.cap:
                    self._values[j] = latency
            self.count = i + 1
            self._sum += latency
            if h2d is not None:
                self._part_sums[0] += h2d
                self._part_counts[0] += 1
            if compute is not None:
                self._part_sums[1] += compute
                self._part_counts[1] += 1
            if d2h is not None:
                self._part_sums[2] += d2h
                self._part_counts[2] += 1
            if enqueue is not None:
                self._part_sums[3] += enqueue
                self._part_counts[3] += 1

    @property
    def exact(self) -> bool:
        """True while every latency is kept."""
        return self.count <= self.cap

    def values(self) -> np.ndarray:
        """A copy of the kept latencies (all of them, in order, while ``exact``)."""
        with self._lock:
            return self._values[: min(self.count, self.cap)].copy()

    def part_means(self) -> dict[str, float | None]:
        """Mean h2d / compute / d2h / enqueue in ms over the samples that had them (None: never reported)."""
        with self._lock:
            return {
                name: (s / c if c else None)
                for name, s, c in zip(("h2d_ms", "compute_ms", "d2h_ms", "enqueue_ms"), self._part_sums, self._part_counts, strict=True)
            }

    def totals(self) -> dict[str, float]:
        """Exact count, mean, min, max over every sample, even past the cap."""
        with self._lock:
            n = self.count
            if n == 0:
                return {"count": 0.0, "mean": float("nan"), "min": float("nan"), "max": float("nan")}
            if n <= self.cap:
                lo, hi = float(self._values[:n].min()), float(self._values[:n].max())
            else:
                lo, hi = self._min, self._max
            return {"count": float(n), "mean": self._sum / n, "min": lo, "max": hi}

    def note(self) -> str | None:
        """Why percentiles are approximate, when they are."""
        if self.exact:
            return None
        return (
            f"{self.count} samples exceed the exact-statistics cap of {self.cap}: percentiles come from a uniform "
            f"reservoir of {self.cap}; count, mean, min and max are exact"
        )
