"""An engine's memory by category (:data:`CATEGORIES`): each :class:`Figure` with the line or field it
came from (``not recorded`` where no file says), one engine's whole record (:class:`EngineMemory`),
and two engines' categories side by side (:func:`memory_rows`, for diff and compare)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CATEGORIES = ("weights", "activations", "activations_naive", "device_persistent", "host_persistent", "scratch",
              "io", "cuda_context", "libraries", "builder_peak", "engine_size", "other")
NOT_RECORDED = "not recorded"


@dataclass
class Figure:
    """One category's bytes (None: not recorded) and where they came from; ``also``: other lines
    or fields that state the same quantity; ``note``: what the figure is not."""

    name: str
    bytes: int | None = None
    source: str = NOT_RECORDED
    note: str = ""
    also: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "bytes": self.bytes, "source": self.source}
        if self.note:
            d["note"] = self.note
        if self.also:
            d["also"] = self.also
        return d


@dataclass
class EngineMemory:
    """One engine's memory: categories, per-profile categories (several profiles), the context's
    device memory, per-layer rows, live activations and how many lines of each kind were read."""

    name: str
    files: list[str]
    categories: dict[str, Figure]
    profiles: list[dict[str, Any]] = field(default_factory=list)
    context: Figure = field(default_factory=lambda: Figure("context_device_memory"))
    layers: list[dict[str, Any]] = field(default_factory=list)
    live: dict[str, Any] | None = None
    line_kinds: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def bytes_of(self, name: str) -> int | None:
        return self.categories[name].bytes

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "files": self.files,
                "categories": [self.categories[n].to_json() for n in CATEGORIES],
                "profiles": self.profiles, "context": self.context.to_json(), "line_kinds": self.line_kinds,
                "layers": self.layers, "live": self.live, "warnings": self.warnings}


def memory_rows(a: EngineMemory, b: EngineMemory) -> list[dict[str, Any]]:
    """Two engines' categories side by side (for ``diff`` and ``compare``): name, each side's bytes
    and source, and the change (None where a side did not record it)."""
    rows = []
    for n in CATEGORIES:
        fa, fb = a.categories[n], b.categories[n]
        change = None if fa.bytes is None or fb.bytes is None else fb.bytes - fa.bytes
        rows.append({"name": n, "a_bytes": fa.bytes, "b_bytes": fb.bytes, "change_bytes": change,
                     "a_source": fa.source, "b_source": fb.source})
    return rows
