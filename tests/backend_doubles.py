"""Test doubles of backends, named as such: the real ONNX Runtime backend with a failure injected."""

from __future__ import annotations

import mmap
from typing import Any

from trtstudio.backends.base import InferTiming
from trtstudio.backends.ort import OrtBackend
from trtstudio.errors import BackendError


class FailingOrtBackend(OrtBackend):
    """Test double: the real ORT backend that raises a BackendError on its ``fail_at``-th inference
    (cold and warm-up inferences count) and remembers being closed."""

    fail_at = 200

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.calls = 0
        self.closed = False

    def infer_once(self) -> InferTiming:
        self.calls += 1
        if self.calls >= self.fail_at:
            raise BackendError("simulated device loss (test double)")
        return super().infer_once()

    def close(self) -> None:
        self.closed = True
        super().close()


def failing_factory(name: str, path: str, cls: type[FailingOrtBackend] = FailingOrtBackend,
                    made: list[FailingOrtBackend] | None = None, **options: Any) -> FailingOrtBackend:
    """A ``backend_factory`` that opens ``cls`` (appended to ``made`` when given)."""
    b = cls(name=name)
    if made is not None:
        made.append(b)
    b.load(path, {k: v for k, v in options.items() if v is not None})
    return b


class LeakingOrtBackend(OrtBackend):
    """Test double: the real ORT backend that keeps ``keep_bytes`` of written memory per inference
    (a leak of the kind the memory verdict must catch); ``keep_bytes = 0`` keeps nothing.

    Each block is a mapping of its own, every page written (so resident): pages new to the
    process, which a leak of an earlier run in the same process, freed to the C heap but not
    given back, cannot have left behind (a heap block would reuse them, and the resident size would
    not grow)."""

    keep_bytes = 256 * 1024

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.kept: list[mmap.mmap] = []

    def infer_once(self) -> InferTiming:
        timing = super().infer_once()
        if self.keep_bytes:
            block = mmap.mmap(-1, self.keep_bytes)
            for at in range(0, self.keep_bytes, mmap.PAGESIZE):
                block[at] = 1
            self.kept.append(block)
        return timing
