"""Test doubles of backends, named as such: the real ONNX Runtime backend with a failure injected."""

from __future__ import annotations

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
    (a leak of the kind the memory verdict must catch); ``keep_bytes = 0`` keeps nothing."""

    keep_bytes = 256 * 1024

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.kept: list[bytearray] = []

    def infer_once(self) -> InferTiming:
        timing = super().infer_once()
        if self.keep_bytes:
            self.kept.append(bytearray(b"\x01") * self.keep_bytes)  # written, so resident
        return timing
