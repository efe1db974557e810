"""The Live profile's statistics strip: count, mean, percentiles, spread, spikes, cold first
inference and rates of a run, as caption/value cells in rows of 8 (4 in a narrow dock), with the
scope of the figures (the live window, or the whole run) below."""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel

from trtstudio.profiling.live import fmt_ms, fmt_rate

STAT_CELLS = (
    ("count", "count"),
    ("mean", "mean"),
    ("median", "median"),
    ("p90", "p90"),
    ("p95", "p95"),
    ("p99", "p99"),
    ("p999", "p99.9"),
    ("min", "min"),
    ("max", "max"),
    ("std", "std"),
    ("cov", "CoV"),
    ("jitter_ms", "jitter p99-p50"),
    ("spike", "longest spike"),
    ("cold", "cold first"),
    ("ips", "inferences/s"),
    ("sps", "samples/s"),
)
WIDE_PX = 760  # from this width of the panel, 8 cells a row


class StatsStrip(QFrame):
    """``stat_labels``: the value label of each cell by key; ``scope_label``: what the figures cover."""

    def __init__(self) -> None:
        super().__init__()
        self.setFrameShape(QFrame.Shape.StyledPanel)
        grid = QGridLayout(self)
        grid.setContentsMargins(6, 4, 6, 4)
        grid.setHorizontalSpacing(14)
        grid.setVerticalSpacing(0)
        self._grid = grid
        self._cells: list[tuple[QLabel, QLabel]] = []
        self._per_row = 0
        self.stat_labels: dict[str, QLabel] = {}
        for key, caption in STAT_CELLS:
            cap = QLabel(caption)
            cap.setStyleSheet("color: #666; font-size: 8pt;")
            val = QLabel("-")
            val.setStyleSheet("font-weight: bold;")
            val.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            if key == "cold":
                val.setToolTip("the first inference after loading, timed apart from the measured ones")
            if key == "spike":  # "longest spike 2 (242.3 ms)" beside "max 187.0 ms" read as a contradiction
                cap.setText("longest spike (n, total)")
                val.setToolTip("the longest run of back-to-back spike inferences (above p99 or 2x the median): "
                               "how many, and their latencies added up, so it can exceed max, which is one "
                               "inference's latency")
            self._cells.append((cap, val))
            self.stat_labels[key] = val
        self.scope_label = QLabel("")
        self.scope_label.setStyleSheet("color: #666; font-size: 8pt;")
        self.scope_label.setWordWrap(True)
        self.lay_out(8)

    def lay_out(self, per_row: int) -> None:
        """Cells in rows of ``per_row`` (8 when wide, 4 in a narrow dock)."""
        if per_row == self._per_row:
            return
        self._per_row = per_row
        g = self._grid
        for w in (*(w for pair in self._cells for w in pair), self.scope_label):
            g.removeWidget(w)
        for i, (cap, val) in enumerate(self._cells):
            r, c = divmod(i, per_row)
            g.addWidget(cap, 2 * r, c)
            g.addWidget(val, 2 * r + 1, c)
        rows = -(-len(self._cells) // per_row)
        g.addWidget(self.scope_label, 2 * rows, 0, 1, per_row)

    def fit_width(self, width: int) -> None:
        self.lay_out(8 if width >= WIDE_PX else 4)

    def clear(self) -> None:
        for lab in self.stat_labels.values():
            lab.setText("-")
        self.scope_label.setText("")

    def show_stats(self, stats: dict[str, Any], ips: float | None, sps: float | None, cold_ms: float | None) -> None:
        lab = self.stat_labels
        lab["count"].setText(f"{int(stats.get('count') or 0):,}")
        for key in ("mean", "median", "p90", "p95", "p99", "p999", "min", "max", "std", "jitter_ms"):
            lab[key].setText(fmt_ms(stats.get(key)))
        cov = stats.get("cov")
        lab["cov"].setText("-" if cov is None or not math.isfinite(cov) else f"{cov:.2f} %")
        spike = stats.get("longest_spike") or {}
        n = int(spike.get("samples", 0) or 0)
        lab["spike"].setText(f"{n} ({fmt_ms(spike.get('duration_ms'))})" if n else "none")
        lab["ips"].setText(fmt_rate(ips))
        lab["sps"].setText(fmt_rate(sps))
        lab["cold"].setText(fmt_ms(cold_ms))


__all__ = ["STAT_CELLS", "StatsStrip"]
