"""The Sweep tab's charts (``ui.sweep_tab``): a sweep's median and p99 latency and its samples/s
against the swept size (y from 0), with the p99 budget and the knee as lines; a shape mix's
per-shape latencies against the shape's row of the table, its count-weighted median as a line."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtWidgets import QVBoxLayout, QWidget

from trtstudio.ui.plots import pg

MEDIAN_PEN = pg.mkPen("#1f77b4", width=2)
P99_PEN = pg.mkPen("#ff7f0e", width=1.5)


def _line(angle: int, colour: str, style: Any, label: str, position: float) -> pg.InfiniteLine:
    line = pg.InfiniteLine(angle=angle, pen=pg.mkPen(colour, style=style), label=label,
                           labelOpts={"position": position, "color": colour})
    line.setVisible(False)
    return line


class SweepCharts(QWidget):
    """Latency (``latency_plot``: ``median_curve``, ``p99_curve``, ``budget_line``, ``mix_line``) over
    throughput (``tp_plot``: ``tp_curve``, ``knee_line``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        pcol = QVBoxLayout(self)
        pcol.setContentsMargins(0, 0, 0, 0)
        pen_style = pg.QtCore.Qt.PenStyle
        self.latency_plot = self._plot("Latency against the swept size", "ms")
        self.median_curve = self.latency_plot.plot([], [], pen=MEDIAN_PEN, symbol="o",
                                                   symbolSize=6, symbolBrush="#1f77b4", name="median")
        self.p99_curve = self.latency_plot.plot([], [], pen=P99_PEN, symbol="t",
                                                symbolSize=6, symbolBrush="#ff7f0e", name="p99")
        self.budget_line = _line(0, "#c22f2f", pen_style.DashLine, "p99 budget", 0.9)
        self.latency_plot.addItem(self.budget_line, ignoreBounds=True)
        self.mix_line = _line(0, "#1f77b4", pen_style.DotLine, "mix median", 0.1)
        self.latency_plot.addItem(self.mix_line, ignoreBounds=True)
        self.tp_plot = self._plot("Throughput against the swept size", "samples/s")
        self.tp_curve = self.tp_plot.plot([], [], pen=pg.mkPen("#2a9d3c", width=2), symbol="o", symbolSize=6,
                                          symbolBrush="#2a9d3c", name="samples/s")
        self.knee_line = _line(90, "#7b52ab", pen_style.DashLine, "knee", 0.9)
        self.tp_plot.addItem(self.knee_line, ignoreBounds=True)
        # samples/s climbs to the right: its legend at the bottom right, clear of the knee's label at the
        # top (at the top left it covered the label of a knee at a small batch)
        self.tp_plot.getPlotItem().legend.setOffset((-6, -6))
        pcol.addWidget(self.latency_plot)
        pcol.addWidget(self.tp_plot)

    @staticmethod
    def _plot(title: str, unit: str) -> pg.PlotWidget:
        w = pg.PlotWidget()
        w.setBackground("w")
        item = w.getPlotItem()
        item.setTitle(title, size="9pt")
        item.setLabel("left", unit)
        item.getAxis("left").enableAutoSIPrefix(False)
        item.showGrid(x=True, y=True, alpha=0.2)
        item.addLegend(offset=(6, 6))
        item.setMenuEnabled(False)
        w.setMinimumHeight(140)
        return w

    def set_mix(self, mix: bool) -> None:
        """Charts for a shape mix (latency per shape only) or for a sweep."""
        self.tp_plot.setVisible(not mix)
        title = "Latency per shape of the mix (table row)" if mix else "Latency against the swept size"
        self.latency_plot.getPlotItem().setTitle(title, size="9pt")

    def draw_sweep(self, rows: list[dict[str, Any]], axis: str, budget: float) -> None:
        """One point per finished step (``rows``) against its size, labelled ``axis``; ``budget``
        (0: none) as a line."""
        self.mix_line.setVisible(False)
        ok = [r for r in rows if r.get("median_ms") is not None]
        x = np.asarray([float(r["size"]) for r in ok])
        self.latency_plot.getPlotItem().getAxis("bottom").setTicks(None)
        self.median_curve.setData(x, np.asarray([r["median_ms"] for r in ok]), pen=MEDIAN_PEN)
        self.p99_curve.setData(x, np.asarray([r["p99_ms"] for r in ok]), pen=P99_PEN)
        self.tp_curve.setData(x, np.asarray([r["samples_per_s"] for r in ok]))
        self.budget_line.setVisible(bool(budget))
        if budget:
            self.budget_line.setValue(budget)
        tops = {self.latency_plot: max((r["p99_ms"] for r in ok), default=0.0),
                self.tp_plot: max((r["samples_per_s"] for r in ok), default=0.0)}
        if budget and budget <= 2 * tops[self.latency_plot]:
            tops[self.latency_plot] = max(tops[self.latency_plot], budget)  # a budget near the data is shown
        for p, top in tops.items():  # y from 0: a flat throughput looks flat, not like a zigzag of noise
            item = p.getPlotItem()
            item.setLabel("bottom", axis)
            item.getAxis("bottom").enableAutoSIPrefix(False)
            if x.size:
                span = float(x.max() - x.min()) or 1.0
                item.getViewBox().setRange(xRange=(float(x.min()) - 0.05 * span, float(x.max()) + 0.05 * span),
                                           yRange=(0.0, (top or 1.0) * 1.15), padding=0)

    def draw_mix(self, mix: dict[str, Any]) -> None:
        """A mix document's ``mix`` part: each shape's latencies at its row, the weighted median as a line."""
        self.mix_line.setVisible(False)
        ok = [(k + 1, r) for k, r in enumerate(mix["shapes"]) if r.get("median_ms") is not None]
        x = np.asarray([float(k) for k, _ in ok])
        # the shapes are categories: points, no lines between them; a tick per row
        self.median_curve.setData(x, np.asarray([r["median_ms"] for _, r in ok]), pen=None)
        self.p99_curve.setData(x, np.asarray([r["p99_ms"] for _, r in ok]), pen=None)
        self.latency_plot.getPlotItem().getAxis("bottom").setTicks([[(float(k), str(k)) for k, _ in ok]])
        self.tp_curve.setData([], [])
        self.budget_line.setVisible(False)
        weighted = mix.get("median_ms")
        if weighted is not None:
            self.mix_line.setValue(weighted)
            self.mix_line.setVisible(True)
        item = self.latency_plot.getPlotItem()
        item.setLabel("bottom", "shape (row of the table)")
        if x.size:
            top = max(r["p99_ms"] for _, r in ok)
            item.getViewBox().setRange(xRange=(0.5, float(x.max()) + 0.5), yRange=(0.0, (top or 1.0) * 1.15), padding=0)
