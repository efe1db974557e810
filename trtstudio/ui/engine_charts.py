"""Where the engine's time goes: bar charts of per-layer time summed by layer type and by precision."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from trtstudio.engine.model import EngineInfo
from trtstudio.engine.table import LayerColumns, precision_pairs, time_by
from trtstudio.palette import OTHER_PRECISION_COLOR, PRECISION_COLORS
from trtstudio.ui.plots import pg

TYPE_COLOR = "#6a9fd4"


class _BarChart(pg.PlotWidget):
    """One horizontal bar chart with category labels on the left axis."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setBackground("w")
        self.setTitle(title, color="#333", size="10pt")
        self.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.showGrid(x=True, y=False, alpha=0.3)
        self.setLabel("bottom", "time (ms)", color="#333")
        self.getAxis("bottom").enableAutoSIPrefix(False)
        for axis in ("left", "bottom"):
            self.getAxis(axis).setTextPen("#333")
            self.getAxis(axis).setPen("#888")
        self.item: pg.BarGraphItem | None = None
        self.data: list[tuple[str, float]] = []
        self.details: dict[str, list[tuple[str, float]]] = {}
        self._labels: list[pg.TextItem] = []

    def set_bars(self, data: list[tuple[str, float]], colors: list[str], total: float,
                 details: dict[str, list[tuple[str, float]]] | None = None) -> None:
        """One bar per ``(label, ms)`` of ``data``; ``details``: per label, its parts (the in -> out
        precision pairs of a compute precision), named beside its bar and listed in the tooltip."""
        self.clear()
        self._labels = []
        self.data = data
        self.details = details or {}
        self.setToolTip(_details_tip(data, self.details))
        if not data:
            self.item = None
            return
        n = len(data)
        y = np.arange(n, dtype=float)[::-1]  # largest on top
        widths = np.array([v for _, v in data], dtype=float)
        self.item = pg.BarGraphItem(x0=0, y=y, height=0.7, width=widths,
                                    brushes=[pg.mkBrush(c) for c in colors], pen=pg.mkPen("#555", width=0.5))
        self.addItem(self.item)
        left = self.getAxis("left")
        left.setTicks([[(float(yy), name) for yy, (name, _) in zip(y, data, strict=True)]])
        metrics = QFontMetrics(left.style.get("tickFont") or self.font())
        left.setWidth(min(260, max(metrics.horizontalAdvance(name) for name, _ in data) + 16))
        vmax = float(widths.max()) if n else 1.0
        for yy, (name, v) in zip(y, data, strict=True):
            pct = v / total * 100.0 if total > 0 else 0.0
            parts = [p for p in self.details.get(name, []) if p[1] > 0]
            more = ("\n" + ", ".join(f"{p} {t:.4g}" for p, t in parts[:PARTS_SHOWN])
                    + (", ..." if len(parts) > PARTS_SHOWN else "")) if len(parts) > 1 else ""
            label = pg.TextItem(f"{v:.4g} ms  {pct:.1f} %{more}", color="#222", anchor=(0, 0.5))
            label.setPos(float(v), float(yy))
            self.addItem(label)
            self._labels.append(label)
        self.setXRange(0, vmax * (2.4 if self.details else 1.6), padding=0)  # room for the labels (and parts)
        self.setYRange(-0.6, n - 0.4, padding=0)


PARTS_SHOWN = 2  # parts of a bar named beside it (the tooltip lists them all)


def _details_tip(data: list[tuple[str, float]], details: dict[str, list[tuple[str, float]]]) -> str:
    """The tooltip of a chart whose bars have parts: each bar's parts, in ms."""
    lines = []
    for name, v in data:
        parts = details.get(name)
        if parts:
            lines.append(f"{name}: {v:.4g} ms")
            lines += [f"    {p}: {t:.4g} ms" for p, t in parts]
    return "\n".join(lines)


class EngineChartsView(QWidget):
    """Two bar charts: total layer time by layer type and by precision (needs a profile)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._engine: EngineInfo | None = None
        self.message = QLabel("Load an engine with per-layer times (a profile) to see where the time goes.")
        self.message.setWordWrap(True)
        self.by_type = _BarChart("Time by layer type")
        self.by_precision = _BarChart("Time by compute precision")
        charts = QHBoxLayout()
        charts.addWidget(self.by_type, 3)
        charts.addWidget(self.by_precision, 2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.message)
        lay.addLayout(charts, 1)

    def set_engine(self, engine: EngineInfo | None, columns: LayerColumns | None = None) -> None:
        """Show the time split of ``engine`` (clears the charts when it has no per-layer times);
        ``columns``: the analysis's table columns, whose split was computed off the GUI thread."""
        self._engine = engine
        if columns is not None and engine is not None:
            times = columns.num["ms"]
            total = float(np.nansum(times)) if len(times) else 0.0
        else:
            total = (engine.total_time_ms if engine else None) or 0.0
        if columns is not None:
            by_type, by_prec = columns.time_by_type, columns.time_by_precision
            pairs = columns.time_by_precision_pairs  # made with the findings: none yet while they are pending
        else:
            by_type, by_prec = time_by(engine, "type"), time_by(engine, "precision")
            lays = engine.layers if engine else []
            pairs = precision_pairs([lay.precision_in for lay in lays], [lay.precision_out for lay in lays],
                                    [lay.time.per_inference_ms if lay.time else None for lay in lays]) if by_prec else {}
        self.by_type.set_bars(by_type, [TYPE_COLOR] * len(by_type), total)
        self.by_precision.set_bars(
            by_prec, [PRECISION_COLORS.get(name, OTHER_PRECISION_COLOR) for name, _ in by_prec], total, pairs)
        if engine is None:
            self.message.setText("No engine loaded.")
        elif not by_type:
            self.message.setText("This engine has no per-layer times: load a profile "
                                 "(trtexec --dumpProfile --exportProfile=profile.json) with its layer information.")
        else:
            n = int((~np.isnan(columns.num["ms"])).sum()) if columns is not None else sum(
                1 for lay in engine.layers if lay.time and lay.time.per_inference_ms is not None)
            self.message.setText(f"Per-layer time of {n} layers: {total:.4g} ms per inference "
                                 f"(each layer's median, else its average, over the profiled runs).")
        self.message.setVisible(True)

    def parts(self, which: str = "precision") -> dict[str, list[tuple[str, float]]]:
        """The parts of the bars shown (the in -> out precision pairs of each compute precision)."""
        chart = self.by_type if which == "type" else self.by_precision
        return dict(chart.details)

    def bars(self, which: str) -> list[tuple[str, float]]:
        """The bars shown as (label, ms): ``which`` is ``"type"`` or ``"precision"``."""
        chart = self.by_type if which == "type" else self.by_precision
        return list(chart.data)

    def engine(self) -> EngineInfo | None:
        """The engine shown, or None."""
        return self._engine
