"""TritonLivePanels: the live plots of a Triton sweep, as for local runs.

Client latency of every request with rolling p50/p99 bands and spikes, a latency histogram,
throughput over time, the server-side breakdown per measurement window stacked (queue,
compute input/infer/output, and client/network = client mean minus the server's request time),
the GPU figures the server's /metrics gave per step, and the latency-throughput curve of the
finished steps. The maths is Qt-free (``trtstudio.profiling.live``, ``trtstudio.triton.sweep``);
these widgets only call setData/setText.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QVBoxLayout, QWidget

from trtstudio.triton.live import TritonLive
from trtstudio.triton.sweep import gpu_figures
from trtstudio.ui.plots import pg

PART_COLOURS = ("#d62728", "#8c564b", "#2ca02c", "#bcbd22", "#7f7f7f")
PART_LABELS = ("queue", "compute input", "compute infer", "compute output", "client/network")
GPU_COLOURS = ("#2ca02c", "#1f77b4", "#ff7f0e", "#9467bd")
NO_GPU = "no GPU metrics from this server"
BREAKDOWN_TITLE = "Time per request (stacked, per window)"
BREAKDOWN_TITLES = {"statistics": BREAKDOWN_TITLE, "metrics": "Time per request (from /metrics counters)",
                    None: "Time per request: no server breakdown"}


def _plot(title: str, left: str, bottom: str) -> pg.PlotWidget:
    p = pg.PlotWidget(title=title)
    p.setLabel("left", left)
    p.setLabel("bottom", bottom)
    p.showGrid(x=True, y=True, alpha=0.2)
    return p


class TritonLivePanels(QWidget):
    """Six plots in a grid; ``add_window``/``add_step`` feed them, ``clear`` empties them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.latency_plot = _plot("Client latency: p50-p99 band, spikes", "ms", "s")
        self.latency_plot.addLegend(offset=(-5, 5), brush=pg.mkBrush(0, 0, 0, 170), labelTextSize="8pt")
        self.sample_curve = self.latency_plot.plot(pen=pg.mkPen("#9ecae1", width=1), name="requests")
        self.p50_curve = self.latency_plot.plot(pen=pg.mkPen("#1f77b4", width=2), name="p50")
        self.p99_curve = self.latency_plot.plot(pen=pg.mkPen("#ff7f0e", width=2), name="p99")
        self.band = pg.FillBetweenItem(self.p50_curve, self.p99_curve, brush=pg.mkBrush(255, 127, 14, 50))
        self.latency_plot.addItem(self.band)
        self.spikes = pg.ScatterPlotItem(size=5, pen=None, brush=pg.mkBrush("#d62728"))
        self.latency_plot.addItem(self.spikes)

        self.hist_plot = _plot("Latency histogram", "requests", "ms")
        self.hist_curve = self.hist_plot.plot(stepMode="center", fillLevel=0, brush=pg.mkBrush(31, 119, 180, 120),
                                              pen=pg.mkPen("#1f77b4"))
        self.hist_note = pg.TextItem("", color="#555", anchor=(1, 0))
        self.hist_plot.addItem(self.hist_note)

        self.throughput_plot = _plot("Throughput", "inferences/s", "s")
        self.throughput_curve = self.throughput_plot.plot(pen=pg.mkPen("#2ca02c", width=2))

        self.breakdown_plot = _plot(BREAKDOWN_TITLE, "µs", "s")
        self.breakdown_plot.addLegend(offset=(-5, 5), brush=pg.mkBrush(0, 0, 0, 170), labelTextSize="8pt")
        base = self._base_curve = self.breakdown_plot.plot(pen=None)
        self.part_curves: list[Any] = []
        for colour, label in zip(PART_COLOURS, PART_LABELS, strict=True):
            top = self.breakdown_plot.plot(pen=pg.mkPen(colour, width=1), name=label)
            fill = pg.FillBetweenItem(base, top, brush=pg.mkBrush(colour))
            self.breakdown_plot.addItem(fill)
            self.part_curves.append(top)
            base = top

        self.gpu_plot = _plot("GPU (per step, from /metrics)", "value", "step")
        self.gpu_plot.addLegend(offset=(-5, 5), brush=pg.mkBrush(0, 0, 0, 170), labelTextSize="8pt")
        self.gpu_curves: dict[str, Any] = {}
        self.gpu_label = QLabel("")
        self.gpu_label.setWordWrap(True)
        self.gpu_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        gpu_box = QWidget()
        gpu_lay = QVBoxLayout(gpu_box)
        gpu_lay.setContentsMargins(0, 0, 0, 0)
        gpu_lay.addWidget(self.gpu_plot, 1)
        gpu_lay.addWidget(self.gpu_label)

        self.curve_plot = _plot("Latency vs throughput (steps)", "ms", "inferences/s")
        self.curve_plot.addLegend(offset=(-5, 5), brush=pg.mkBrush(0, 0, 0, 170), labelTextSize="8pt")
        self.step_curves = {q: self.curve_plot.plot(pen=pg.mkPen(c, width=2), symbol="o", symbolSize=6,
                                                    symbolBrush=c, name=q)
                            for q, c in (("p50", "#1f77b4"), ("p90", "#9467bd"), ("p99", "#ff7f0e"))}

        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        for i, w in enumerate((self.latency_plot, self.hist_plot, self.throughput_plot,
                               self.breakdown_plot, gpu_box, self.curve_plot)):
            grid.addWidget(w, i // 3, i % 3)
        self.clear()

    def clear(self) -> None:
        self._live = TritonLive()
        self._steps: list[dict[str, Any]] = []
        for c in (self.sample_curve, self.p50_curve, self.p99_curve, self.hist_curve, self.throughput_curve,
                  self._base_curve, *self.part_curves, *self.step_curves.values(), *self.gpu_curves.values()):
            c.setData([], [])
        self.spikes.setData([], [])
        self.hist_note.setText("")
        self.gpu_label.setText("GPU figures come from the server's /metrics after each step")
        self.set_breakdown_source("statistics")

    def set_breakdown_source(self, source: str | None) -> None:
        """Say where the server breakdown comes from (the statistics API, the /metrics counters, nowhere)."""
        self.breakdown_plot.setTitle(BREAKDOWN_TITLES.get(source, BREAKDOWN_TITLE))

    # -- feeding ---------------------------------------------------------------------------------
    def add_window(self, w: dict[str, Any], frame: dict[str, Any] | None = None) -> None:
        """One measurement window: draw ``frame`` (``TritonLive.add_window``'s, computed in the worker),
        or compute it here from the window's ``samples_t``/``samples_ms``."""
        self.draw_frame(frame if frame is not None else self._live.add_window(w))

    def draw_frame(self, frame: dict[str, Any]) -> None:
        if "samples" in frame:
            self.sample_curve.setData(*frame["samples"])
            if frame["bands"] is not None:
                tc, p50, p99 = frame["bands"]
                self.p50_curve.setData(tc, p50)
                self.p99_curve.setData(tc, p99)
            self.spikes.setData(*frame["spikes"])
            self.latency_plot.setYRange(0.0, frame["top"], padding=0)
            edges, counts, note = frame["hist"]
            self.hist_curve.setData(edges, counts)
            self.hist_note.setHtml(f"<span style='color:#555'>{note}</span>" if note else "")
            self.hist_note.setPos(float(edges[-1]), float(counts.max()) if counts.size else 0.0)
            self.throughput_curve.setData(*frame["throughput"])
        if frame.get("breakdown") is not None:
            xs, tops = frame["breakdown"]
            for curve, y in zip((self._base_curve, *self.part_curves), tops, strict=True):
                curve.setData(xs, y)

    def add_step(self, step: dict[str, Any]) -> None:
        self._steps.append(step)
        done = [s for s in self._steps if s.get("requests")]
        xs = [float(s["throughput"]) for s in done]
        for q, c in self.step_curves.items():
            c.setData(xs, [float(s["latency_ms"][q]) for s in done])
        self._draw_gpu()

    # -- drawing ---------------------------------------------------------------------------------
    def _draw_gpu(self) -> None:
        series: dict[str, list[tuple[float, float]]] = {}
        units: dict[str, str] = {}
        for i, s in enumerate(self._steps):
            for label, (value, unit) in gpu_figures(s.get("metrics")).items():
                series.setdefault(label, []).append((float(i), value))
                units[label] = unit
        # a server without GPU series (a CPU server, or no /metrics) gets a sentence, not empty axes
        self.gpu_plot.setVisible(bool(series) or not self._steps)
        if not series:
            self.gpu_label.setText(NO_GPU if self._steps else "")
            return
        for (label, pts), colour in zip(series.items(), GPU_COLOURS, strict=False):
            if label not in self.gpu_curves:
                self.gpu_curves[label] = self.gpu_plot.plot(pen=pg.mkPen(colour, width=2), symbol="o", symbolSize=5,
                                                            symbolBrush=colour, name=f"{label} ({units[label]})")
            self.gpu_curves[label].setData([p[0] for p in pts], [p[1] for p in pts])
        last = "; ".join(f"{k} {v[-1][1]:.3g} {units[k]}" for k, v in series.items())
        self.gpu_label.setText(f"last step: {last}")
