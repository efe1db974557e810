"""A verdict: one answer to one question about a run, with the figures that decided it.

Leak and growth verdicts use it now; contention causes, accuracy passes and reports take the same
object, so the window, the CLI and every report show one answer in the same words. A verdict that
could flip with noise says ``inconclusive`` and, in its text, what would settle it; one with
nothing measured to decide on says ``unknown``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

INCONCLUSIVE = "inconclusive"  # measured, but too little or too noisy to decide: the text says what would
UNKNOWN = "unknown"  # nothing was measured that could decide (no series, no reading)


@dataclass(frozen=True)
class Verdict:
    """``topic`` (what was asked, e.g. "memory growth (host RSS)"), ``verdict`` (one word, e.g.
    "growing", "stable", "inconclusive"), ``text`` (one sentence a user reads) and ``evidence``
    (the figures behind it: slope, interval, points, windows excluded, ...)."""

    topic: str
    verdict: str
    text: str
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def conclusive(self) -> bool:
        """False for ``inconclusive``."""
        return self.verdict != INCONCLUSIVE

    def to_json(self) -> dict[str, Any]:
        """{"topic", "verdict", "text", "evidence"} (the evidence is built with None for a figure
        that could not be computed: see ``measure.trend.figure``)."""
        return {"topic": self.topic, "verdict": self.verdict, "text": self.text, "evidence": dict(self.evidence)}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Verdict:
        """The verdict of ``to_json`` (older documents: ``reason`` for ``text``, no topic)."""
        return cls(str(doc.get("topic") or ""), str(doc.get("verdict") or INCONCLUSIVE),
                   str(doc.get("text") or doc.get("reason") or ""), dict(doc.get("evidence") or {}))
