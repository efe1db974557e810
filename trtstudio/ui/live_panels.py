"""Live plots of a profiling run, redrawn by a 25 Hz timer that pulls snapshots of the run's ring buffer.

The runner's thread appends samples to a ``SampleBuffer`` under its lock; this widget never receives
one signal per sample. Each frame copies the rows appended since the last one (``SampleWindow``) and
calls ``setData`` once per curve it redraws. The latency curve follows every frame (25 Hz); the
heavier parts take turns, one per frame, each at 5 Hz (``SLOW_EVERY``): statistics and warnings;
rolling bands and spikes; the histogram; throughput and the H2D/compute/D2H split; memory at 2.5 Hz.
Spreading them keeps every frame short. Plots that are hidden are not redrawn.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QFont, QFontMetrics, QResizeEvent, QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from trtstudio.profiling.live import (
    SampleWindow,
    fmt_ms,
    histogram,
    latency_view,
    live_statistics,
    memory_text,
    peak_decimate,
    rolling_bands,
    split_top,
    throughput_series,
)
from trtstudio.profiling.memory import MemoryMonitor
from trtstudio.profiling.samples import SampleBuffer
from trtstudio.ui.live_memory import MEMORY_SERIES, MemoryPlots
from trtstudio.ui.live_stats import StatsStrip
from trtstudio.ui.plots import pg

FRAME_MS = 40  # 25 Hz
SLOW_EVERY = 5  # each slow part is redrawn every 5th frame (5 Hz), in its own frame of the cycle
_STATS, _BANDS, _HIST, _RATE = 0, 1, 2, 3  # frame phases within the cycle
MEMORY_EVERY = 10  # memory plots: 2.5 Hz (the monitor samples every 100 ms), phase 4
MIB = 1024.0 * 1024.0
PLOT_MIN_PX = 150
NARROW_PX = 720  # narrower than this, the plots go two to a row
EMPTY_MIN_PX = 3 * PLOT_MIN_PX + 110  # before a run: the height its plots will take (three rows, the strip), so
# that the controls beside them (their wrapped notes) keep the height they need and nothing jumps at Start

class _Plot(pg.PlotWidget):
    """A PlotWidget set up for streaming: autorange off, clip to view, peak downsampling, no antialias."""

    def __init__(self, title: str, x: tuple[str, str | None], y: tuple[str, str | None]) -> None:
        super().__init__()
        self.setBackground("w")
        item = self.getPlotItem()
        item.setTitle(title, size="9pt")
        for side, (label, units) in (("bottom", x), ("left", y)):
            item.setLabel(side, label, units=units)
            if units is None:
                item.getAxis(side).enableAutoSIPrefix(False)
        item.showGrid(x=False, y=False)
        item.setClipToView(True)
        item.setDownsampling(auto=True, mode="peak")
        item.disableAutoRange()
        item.setMenuEnabled(False)
        self.setMinimumHeight(PLOT_MIN_PX)
        self.setAntialiasing(False)
        self._range: tuple[float, float, float, float] | None = None
        self._legend: tuple[str, list[tuple[str, str]], str, str] = (title, [], "", "")
        self._title_html = ""

    def set_legend(self, name: str, items: list[tuple[str, str]] | None = None, note: str = "", status: str = "",
                   tip: str = "") -> None:
        """The title: ``name`` in bold, ``status`` (HTML: the memory verdict), a coloured key per
        ``(label, colour)`` of ``items``, then ``note`` (HTML); laid out in as many lines as the plot's
        width needs (see :func:`fit_title`). ``tip``: the plot's tooltip (else the title's text)."""
        self._legend = (name, list(items or []), note, status)
        self.setToolTip(tip or _plain(self._legend))
        self._fit_title()

    def resizeEvent(self, ev: QResizeEvent | None) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(ev)
        if hasattr(self, "_title_html"):  # pyqtgraph resizes it while it is made
            self._fit_title()

    def _fit_title(self) -> None:
        item = self.getPlotItem()
        label = item.titleLabel
        # the title sits above the view box: the left axis's column is not its room
        room = self.width() - item.getAxis("left").width() - 2 * TITLE_MARGIN_PX
        html, lines = fit_title(*self._legend, width=max(40, room), font=label.item.font())
        if html == self._title_html:
            return
        self._title_html = html
        item.setTitle(html)
        height = lines * QFontMetrics(_title_font(label.item.font())).lineSpacing() + 10
        label.setMaximumHeight(height)
        item.layout.setRowFixedHeight(0, height)

    def curve(self, color: str, name: str | None = None, width: float = 1.0, finite: bool = True, **kw: Any) -> pg.PlotDataItem:
        """Add one series (one PlotDataItem for its whole life); ``finite``: the data never hold NaN, so
        pyqtgraph may skip its per-frame finiteness scan."""
        c = pg.PlotDataItem(pen=pg.mkPen(color, width=width, style=kw.pop("style", Qt.PenStyle.SolidLine)), name=name, **kw)
        c.setClipToView(True)
        c.setDownsampling(auto=True, method="peak")
        # pyqtgraph keeps ~5 samples per pixel by default; peak decimation keeps min and max of each
        # bucket already, so one bucket per pixel looks the same and draws a fifth of the path
        c.opts["autoDownsampleFactor"] = 1.0
        c.setSkipFiniteCheck(finite)
        self.addItem(c)
        return c

    def set_ranges(self, x0: float, x1: float, y0: float, y1: float, exact: bool = False) -> None:
        """Explicit view ranges (no autorange while streaming). A range change makes every curve redo
        its clipping and decimation, so while streaming the view moves in steps: x runs 5 % ahead of
        the data, y gets 15 % headroom, and the view changes only when the data leave it (or shrink
        well inside it). ``exact`` sets the given ranges as they are (the last frame of a run)."""
        if not (math.isfinite(x0) and math.isfinite(x1) and math.isfinite(y0) and math.isfinite(y1)):
            return
        if x1 <= x0:
            x1 = x0 + 1e-3
        if y1 <= y0:
            y1 = y0 + 1e-3
        cur = self._range
        if not exact and cur is not None:
            cx0, cx1, cy0, cy1 = cur
            span = x1 - x0
            x_ok = cx0 <= x0 <= cx0 + 0.05 * span and x1 <= cx1 and (cx1 - cx0) <= 1.2 * span
            y_ok = cy0 <= y0 and y1 <= cy1 and (y1 - y0) >= 0.6 * (cy1 - cy0)
            if x_ok and y_ok:
                return
            if not x_ok:
                cx0, cx1 = x0, x1 + 0.05 * span
            if not y_ok:
                cy0, cy1 = y0, y0 + 1.15 * (y1 - y0)
            x0, x1, y0, y1 = cx0, cx1, cy0, cy1
        self._range = (x0, x1, y0, y1)
        self.getPlotItem().getViewBox().setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0.02)

    def reset_range(self) -> None:
        """Forget the streaming range (a new run starts)."""
        self._range = None


TITLE_MARGIN_PX = 6  # the title's room short of the plot's width on each side
TITLE_PT = 9


def _title_font(base: QFont) -> QFont:
    f = QFont(base)
    f.setPointSize(TITLE_PT)
    return f


def _key(label: str, color: str) -> str:
    return f"<span style='color:{color}'>&#9632;&nbsp;{label}</span>"


def _html_width(html: str, font: QFont) -> float:
    doc = QTextDocument()
    doc.setDefaultFont(_title_font(font))
    doc.setDocumentMargin(0)
    doc.setHtml(html)
    return doc.idealWidth()


def _plain(legend: tuple[str, list[tuple[str, str]], str, str]) -> str:
    name, items, note, status = legend
    doc = QTextDocument()
    doc.setHtml(" ".join([name + status, *(n for n, _ in items), note]))
    return doc.toPlainText()


def fit_title(name: str, items: list[tuple[str, str]], note: str, status: str, width: float,
              font: QFont) -> tuple[str, int]:
    """A plot's title as HTML lines no wider than ``width`` px (at the title's font): the bold name
    (elided when it alone is too wide), then ``status``, the keys and the note, each moved to a new
    line where it would not fit. Returns the HTML and its number of lines."""
    bold = QFont(_title_font(font))
    bold.setBold(True)
    head = QFontMetrics(bold).elidedText(name, Qt.TextElideMode.ElideRight, int(width))
    pieces = [f"<b>{head}</b>", *([status] if status else []), *(_key(n, c) for n, c in items), *([note] if note else [])]
    lines: list[str] = []
    for piece in pieces:
        joined = f"{lines[-1]}&nbsp;&nbsp; {piece}" if lines else piece
        if lines and _html_width(joined, font) <= width:
            lines[-1] = joined
        else:
            lines.append(piece)
    return "<br>".join(lines), len(lines)


class LivePanels(MemoryPlots, QWidget):
    """Latency over time (p50/p99 bands, spikes), histogram, throughput, memory and the H2D/compute/D2H
    split of a run, plus a statistics strip and warnings. ``attach`` a run's buffer, ``finish`` at its end.

    Signals: ``sig_stats(dict)`` each time the statistics strip is recomputed.
    """

    sig_stats = Signal(object)
    sig_start_requested = Signal()  # the "Start a run" button of the empty panel
    sig_run_attached = Signal()  # a run (live, or a session's) is drawn from now on

    def __init__(self, parent: QWidget | None = None, in_steps: bool = False) -> None:
        """``in_steps``: only start building; :meth:`build_step` makes the rest a plot at a time (the
        window does one per event-loop turn, so that no turn takes long); the panel is usable once
        it returns False."""
        super().__init__(parent)  # pyqtgraph is configured (antialias off) by trtstudio.ui.plots
        self._samples: SampleBuffer | None = None
        self._monitor: MemoryMonitor | None = None
        self._batch = 1
        self._cold_ms: float | None = None
        self._final: dict[str, Any] | None = None
        self._stats: dict[str, Any] = {}
        self._warnings: list[str] = []
        self._frame = 0
        self._last_count = -1
        self._last_mem = -1
        self._hist_note = ""
        self._exact = False
        self._window: SampleWindow | None = None
        self._disturbances: list[str] = []
        self._has_run = False  # before the first run the plots give their room away to one line
        self._narrow = False  # the plots two to a row (see _place)
        self._timer = QTimer(self)
        self._timer.setInterval(FRAME_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._steps: Any = self._build()
        if not in_steps:
            while self.build_step():
                pass

    def build_step(self) -> bool:
        """Make the next part of the panel; False once it is complete."""
        if self._steps is None:
            return False
        if next(self._steps, None) is None:
            self._steps = None
            return False
        return True

    # -- layout ----------------------------------------------------------------------------------
    def _build(self) -> Iterator[bool]:
        """The panel's construction, a plot per step (see build_step)."""
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.setSpacing(4)
        from trtstudio.ui.dock_layout import EmptyBar

        self.empty_bar = EmptyBar("No run yet: latency, throughput and memory are drawn here once a run starts.",
                                  [("Start a run", self.sig_start_requested.emit)])
        outer.addWidget(self.empty_bar)
        self.setMinimumHeight(EMPTY_MIN_PX)
        self.strip = StatsStrip()
        self.stat_labels, self.scope_label = self.strip.stat_labels, self.strip.scope_label
        self.strip.setVisible(False)
        outer.addWidget(self.strip)

        self.warnings_label = QLabel("")
        self.warnings_label.setWordWrap(True)
        self.warnings_label.setStyleSheet("color: #a05000;")
        self.warnings_label.setVisible(False)
        outer.addWidget(self.warnings_label)

        self.toggle_row = QWidget()
        toggles = QHBoxLayout(self.toggle_row)
        toggles.setContentsMargins(0, 0, 0, 0)
        toggles.addWidget(QLabel("Show:"))
        self.toggles: dict[str, QCheckBox] = {}
        self.toggle_row.setVisible(False)
        outer.addWidget(self.toggle_row)

        self.latency_plot = _Plot("Latency per inference", ("time", "s"), ("latency", "s"))
        self.band_p99 = self.latency_plot.curve("#ff7f0e", "rolling p99", width=1.5)
        self.band_p50 = self.latency_plot.curve("#2ca02c", "rolling p50", width=1.5)
        self.band_fill = pg.FillBetweenItem(self.band_p50, self.band_p99, brush=pg.mkBrush(255, 127, 14, 40))
        self.latency_plot.addItem(self.band_fill)
        self.latency_curve = self.latency_plot.curve("#1f77b4", "latency")
        self.latency_curve.setZValue(-1)
        self.spikes = pg.PlotDataItem(pen=None, symbol="o", symbolSize=5, symbolPen=None,
                                      symbolBrush=pg.mkBrush("#d62728"), name="spikes (>p99 or >2x median)")
        self.latency_plot.addItem(self.spikes)
        yield True

        self.hist_plot = _Plot("Latency histogram", ("latency", "s"), ("inferences", None))
        self.hist_curve = pg.PlotDataItem(stepMode="center", fillLevel=0, pen=pg.mkPen("#1f77b4"),
                                          brush=pg.mkBrush(31, 119, 180, 90))
        self.hist_plot.addItem(self.hist_curve)
        self.hist_curve.setClipToView(False)  # step-mode data cannot be clipped or decimated
        self.hist_curve.setDownsampling(ds=1, auto=False)
        yield True

        self.tp_plot = _Plot("Throughput", ("time", "s"), ("rate", "/s"))
        self.tp_inf = self.tp_plot.curve("#1f77b4", "inferences/s", width=1.5)
        self.tp_samp = self.tp_plot.curve("#ff7f0e", "samples/s", style=Qt.PenStyle.DashLine)
        yield True

        self.split_plot = _Plot("H2D / compute / D2H", ("time", "s"), ("time", "s"))
        self.split_curves = {
            "h2d_ms": self.split_plot.curve("#9467bd", "H2D", finite=False),
            "compute_ms": self.split_plot.curve("#2ca02c", "compute", finite=False),
            "d2h_ms": self.split_plot.curve("#8c564b", "D2H", finite=False),
        }
        yield True

        self.gpu_mem_plot = _Plot("GPU memory", ("time", "s"), ("MiB", None))
        self.mem_curves: dict[str, pg.PlotDataItem] = {}
        self.stack_curves: dict[str, pg.PlotDataItem] = {}  # the process's GPU memory by category
        for key, name, color in MEMORY_SERIES:
            style = Qt.PenStyle.DashLine if "total" in key else Qt.PenStyle.SolidLine
            self.mem_curves[key] = self.gpu_mem_plot.curve(color, name, style=style)
        yield True
        self.host_mem_plot = _Plot("Process RSS (host)", ("time", "s"), ("MiB", None))
        self.mem_curves["host_rss_bytes"] = self.host_mem_plot.curve("#e377c2", "RSS", width=1.5)
        self._finish_build(outer, toggles)

    def _finish_build(self, outer: QVBoxLayout, toggles: QHBoxLayout) -> None:
        """The notes, the curves by name, the plots' grid and their toggles (the last step)."""
        self.notes_label = QLabel("")
        self.notes_label.setStyleSheet("color: #666; font-size: 8pt;")
        self.notes_label.setWordWrap(True)
        self.notes_label.setVisible(False)
        outer.addWidget(self.notes_label)
        self._titles()

        self.curves: dict[str, pg.PlotDataItem] = {
            "latency": self.latency_curve,
            "p50": self.band_p50,
            "p99": self.band_p99,
            "spikes": self.spikes,
            "histogram": self.hist_curve,
            "inferences_per_s": self.tp_inf,
            "samples_per_s": self.tp_samp,
            **{k: v for k, v in self.split_curves.items()},
            **{f"mem:{k}": v for k, v in self.mem_curves.items()},
        }

        self._grid = QGridLayout()
        self._grid.setSpacing(4)
        self._no_data: dict[QWidget, bool] = {}
        self._group_of: dict[QWidget, str] = {}
        outer.addLayout(self._grid, 1)

        self._groups: dict[str, list[QWidget]] = {
            "Latency": [self.latency_plot],
            "Histogram": [self.hist_plot],
            "Throughput": [self.tp_plot],
            "Split": [self.split_plot],
            "Memory": [self.gpu_mem_plot, self.host_mem_plot],
        }
        for name in self._groups:
            box = QCheckBox(name)
            box.setChecked(True)
            box.toggled.connect(lambda on, n=name: self._on_toggle_toggled(n, on))
            toggles.addWidget(box)
            self.toggles[name] = box
            for w in self._groups[name]:
                self._group_of[w] = name
        toggles.addStretch(1)
        self._place()
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self.strip.fit_width(event.size().width())
        if hasattr(self, "_grid") and (event.size().width() < NARROW_PX) != self._narrow:
            self._place()
        self._fit_height()

    def _fit_height(self) -> None:
        """Ask for the height the shown parts need at this width (wrapped warnings and notes
        included): the splitter and tab widget above do not ask a wrapped label's height for a width,
        so the plots overflowed the panel at 1280x720 (the Process RSS plot half cut, no scrolling
        reaching it). The dock scrolls instead."""
        lay = self.layout()
        if not self._has_run or lay is None:
            return
        m = lay.contentsMargins()
        width = max(1, self.width() - m.left() - m.right())
        need, shown = m.top() + m.bottom(), 0
        for i in range(lay.count()):
            item = lay.itemAt(i)
            if item is None:
                continue
            w, sub = item.widget(), item.layout()
            if w is not None and not w.isHidden():
                need += max(w.heightForWidth(width) if w.hasHeightForWidth() else w.minimumSizeHint().height(),
                            w.minimumHeight())
            elif sub is not None:
                need += sub.minimumSize().height()
            else:
                continue
            shown += 1
        need += lay.spacing() * max(0, shown - 1)
        if need != self.minimumHeight():
            self.setMinimumHeight(need)

    def _titles(self) -> None:
        self.latency_plot.set_legend("Latency per inference", [
            ("latency", "#1f77b4"), ("rolling p50", "#2ca02c"), ("rolling p99", "#ff7f0e"),
            ("spikes &gt; p99 or &gt; 2x median", "#d62728")])
        self.hist_plot.set_legend("Latency histogram")
        self.tp_plot.set_legend("Throughput", [("inferences/s", "#1f77b4"), ("samples/s", "#ff7f0e")])
        self.split_plot.set_legend("H2D / compute / D2H", [("H2D", "#9467bd"), ("compute", "#2ca02c"), ("D2H", "#8c564b")])
        self._memory_titles([k for k, _, _ in MEMORY_SERIES], [])

    def _place(self) -> None:
        """A 12-column grid: each row's shown panels share its width by weight; panels without data
        (no H2D/compute/D2H split, no GPU or host memory monitor) and unticked ones give their room away."""
        g = self._grid
        self._narrow = self.width() < NARROW_PX
        if self._narrow:  # two to a row: three in 500 px left the titles 100 px ("H2D / compute / D2H" cut)
            rows = [
                [(self.latency_plot, 1)],
                [(self.hist_plot, 1), (self.tp_plot, 1)],
                [(self.split_plot, 1), (self.host_mem_plot, 1)],
                [(self.gpu_mem_plot, 1)],
            ]
        else:
            rows = [
                [(self.latency_plot, 1)],
                [(self.hist_plot, 1), (self.tp_plot, 1), (self.split_plot, 1)],
                [(self.gpu_mem_plot, 2), (self.host_mem_plot, 1)],
                [],
            ]
        for row in rows:
            for w, _ in row:
                g.removeWidget(w)
        for r, row in enumerate(rows):
            shown = [(w, k) for w, k in row if self._shown(w)]
            for w, _ in row:
                w.setVisible(any(w is x for x, _ in shown))
            total = sum(k for _, k in shown)
            col = 0
            for i, (w, k) in enumerate(shown):
                span = 12 - col if i == len(shown) - 1 else round(12 * k / total)
                g.addWidget(w, r, col, 1, span)
                col += span
            g.setRowStretch(r, (3, 2, 2, 2)[r] if shown else 0)
        for c in range(12):
            g.setColumnStretch(c, 1)
        notes = []
        if self._no_data.get(self.split_plot):
            notes.append("this backend does not time H2D / compute / D2H apart")
        if self._no_data.get(self.gpu_mem_plot):
            notes.append("no GPU memory monitor here (NVML / CUDA unavailable)")
        text = "; ".join(notes)
        self.notes_label.setText(text[:1].upper() + text[1:])
        self.notes_label.setVisible(bool(notes))
        self._fit_height()

    def reveal_steps(self) -> Iterator[bool]:
        """Show this panel (hidden while it was put in place) a plot per step: the first paint of
        all six at once, beside the window's busy workers, stalled the window 60-100 ms. The plots
        end as :meth:`_place` has them (a toggle meanwhile has its say)."""
        plots = [w for w in self._group_of if self._shown(w)]
        for w in plots:
            w.setVisible(False)
        self.setVisible(True)
        for w in plots:
            yield True
            w.setVisible(self._shown(w))

    def _shown(self, w: QWidget) -> bool:
        box = self.toggles.get(self._group_of.get(w, ""))
        return self._has_run and (box is None or box.isChecked()) and not self._no_data.get(w, False)

    def has_run(self) -> bool:
        """A run was attached (before one, the panel is one line with a Start a run button)."""
        return self._has_run

    def _show_run_parts(self) -> None:
        if self._has_run:
            return
        self._has_run = True
        self.setMinimumHeight(0)  # from now on the height its parts need (_fit_height)
        self.empty_bar.setVisible(False)
        self.strip.setVisible(True)
        self.toggle_row.setVisible(True)
        self._place()
        self.sig_run_attached.emit()

    def _on_toggle_toggled(self, name: str, on: bool) -> None:
        self._place()
        self.refresh(force=True)

    def _set_no_data(self, plot: QWidget, no_data: bool) -> None:
        if self._no_data.get(plot, False) != no_data:
            self._no_data[plot] = no_data
            self._place()

    # -- run control -----------------------------------------------------------------------------
    @property
    def samples(self) -> SampleBuffer | None:
        """The ring buffer of the run attached last (None before the first run)."""
        return self._samples

    def attach(self, samples: SampleBuffer, monitor: MemoryMonitor | None = None, batch: int = 1) -> None:
        """Follow a new run: clear every plot and start the 25 Hz redraw timer."""
        self._samples, self._monitor, self._batch = samples, monitor, max(1, int(batch))
        self._cold_ms, self._final, self._stats, self._warnings = None, None, {}, []
        self._frame, self._last_count, self._last_mem = 0, -1, -1
        self._window = SampleWindow(samples.capacity)
        for c in (*self.curves.values(), *self.stack_curves.values()):
            c.setData([], [])
        for plot in (self.latency_plot, self.hist_plot, self.tp_plot, self.split_plot, self.gpu_mem_plot,
                     self.host_mem_plot):
            plot.reset_range()
        self.band_fill.setCurves(self.band_p50, self.band_p99)
        self.strip.clear()
        for plot in (self.split_plot, self.gpu_mem_plot, self.host_mem_plot):
            self._set_no_data(plot, False)
        self.warnings_label.setVisible(False)
        self._show_run_parts()
        self._timer.start()

    def set_disturbances(self, disturbances: list[str]) -> None:
        """The run's list of other work in this process (the host memory verdict reads it)."""
        self._disturbances = disturbances

    def set_batch(self, batch: int) -> None:
        """Samples per inference (samples/s = inferences/s x batch)."""
        self._batch = max(1, int(batch))

    def set_cold_ms(self, ms: float | None) -> None:
        """The cold first-inference latency, shown apart from the measured samples."""
        self._cold_ms = ms
        self.stat_labels["cold"].setText(fmt_ms(ms))

    def finish(self, final: dict[str, Any] | None = None) -> None:
        """The run ended: draw a last frame, stop the timer, and show whole-run statistics ``final``
        (``RunResult.to_dict()`` shape) when given; samples and plots stay."""
        self._timer.stop()
        self._exact = True
        try:
            self.refresh(force=True)
        finally:
            self._exact = False
        if final is not None:
            self._final = final
            lat = dict(final.get("latency_ms") or {})
            if lat.get("count"):
                lat["jitter_ms"] = final.get("jitter_ms")
                lat["longest_spike"] = final.get("longest_spike")
                tp = final.get("throughput") or {}
                self.strip.show_stats(lat, tp.get("inferences_per_s"), tp.get("samples_per_s"), self._cold_ms)
                live_memory = self._stats.get("memory") if isinstance(self._stats.get("memory"), dict) else {}
                # the memory verdict (stable / growing) of the last live window stays, as the report has one
                self.scope_label.setText(f"whole run: {lat['count']} inferences" + memory_text(live_memory or {}))
            if final.get("cold_ms") is not None:
                self.set_cold_ms(final["cold_ms"])
            self._show_warnings(list(final.get("warnings") or []))
            self._stats = {**self._stats, **final}
            self._draw_memory(force=True)  # the whole run's memory verdicts on the memory plots

    def is_streaming(self) -> bool:
        """True while the redraw timer runs."""
        return self._timer.isActive()

    def stop_timer(self) -> None:
        """Stop redrawing (on shutdown)."""
        self._timer.stop()

    def statistics(self) -> dict[str, Any]:
        """The latest statistics: live window statistics while running, whole-run ones after ``finish``."""
        return dict(self._stats)

    def warnings(self) -> list[str]:
        """Warnings currently shown."""
        return list(self._warnings)

    # -- frames ----------------------------------------------------------------------------------
    @Slot()
    def _on_timer_timeout(self) -> None:
        self.refresh()

    def refresh(self, force: bool = False) -> None:
        """Draw one frame from a fresh snapshot (skipped when nothing changed and not ``force``)."""
        samples = self._samples
        if samples is None:
            return
        self._frame += 1
        count = samples.count
        changed = count != self._last_count
        phase = self._frame % SLOW_EVERY

        def due(p: int) -> bool:
            return force or phase == p

        if force or self._frame % MEMORY_EVERY == 4 or self._frame == 1:
            self._draw_memory(force)
        if not changed and not force:
            return
        self._last_count = count
        if self._window is None or self._window.capacity != samples.capacity:
            self._window = SampleWindow(samples.capacity)
        self._window.update(samples)
        snap = self._window.columns()
        t, y = snap["t_s"], snap["latency_ms"]
        if y.size == 0:
            return
        if due(_STATS) or not self._stats:
            self._update_stats(snap, count)
        if self.latency_plot.isVisible() or force:
            self._draw_latency(t, y, bands=due(_BANDS))
        if self.hist_plot.isVisible() and due(_HIST):
            self._draw_histogram(y)
        if self.tp_plot.isVisible() and due(_RATE):
            self._draw_throughput(t)
        if due(_RATE):
            self._draw_split(snap, force)

    def _draw_latency(self, t: np.ndarray, y_ms: np.ndarray, bands: bool) -> None:
        y = y_ms * 1e-3  # plotted in seconds: the axis picks µs / ms itself
        self.latency_curve.setData(*peak_decimate(t, y, finite=True))
        top_ms, spikes = latency_view(t, y_ms, self._stats)
        top = top_ms * 1e-3
        self.latency_plot.set_ranges(float(t[0]), float(t[-1]), 0.0, top, exact=self._exact)
        if not bands:
            return
        b = rolling_bands(t, y)
        if b is None:
            self.band_p50.setData([], [])
            self.band_p99.setData([], [])
        else:
            # the fill between the bands rebuilds its path on each curve's change signal: once is enough
            self.band_p50.blockSignals(True)
            try:
                self.band_p50.setData(b[0], b[1])
            finally:
                self.band_p50.blockSignals(False)
            self.band_p99.setData(b[0], np.minimum(b[2], top))
        self.spikes.setData(t[spikes], np.minimum(y[spikes], 0.99 * top))  # spikes above the view sit on its edge

    def _draw_histogram(self, y_ms: np.ndarray) -> None:
        counts, edges, note = histogram(y_ms, self._stats)
        self.hist_curve.setData(edges * 1e-3, counts)
        self.hist_plot.set_ranges(float(edges[0]) * 1e-3, float(edges[-1]) * 1e-3, 0.0,
                                  float(counts.max()) * 1.08 if counts.size else 1.0, exact=self._exact)
        # a title change re-lays the plot out (a full repaint): the note changes only with its rounded text
        if note != self._hist_note:
            self._hist_note = note
            self.hist_plot.set_legend("Latency histogram", note=f"({note})" if note else "")

    def _draw_throughput(self, t: np.ndarray) -> None:
        span = float(t[-1] - t[0]) if t.size > 1 else 0.0
        width = max(0.1, span / 100.0)
        x, rate = throughput_series(t, width)
        if x.size == 0:
            return
        self.tp_inf.setData(x, rate)
        self.tp_samp.setData(x, rate * self._batch)
        self.tp_plot.set_ranges(float(t[0]), float(t[-1]), 0.0, 1.1 * float(rate.max()) * self._batch, exact=self._exact)

    def _draw_split(self, snap: dict[str, np.ndarray], force: bool) -> None:
        parts = {k: snap[k] for k in self.split_curves}
        has = any(v.size and np.isfinite(v[-1]) for v in parts.values())
        self._set_no_data(self.split_plot, not has)
        if not has or not (self.split_plot.isVisible() or force):
            return
        t = snap["t_s"]
        for key, curve in self.split_curves.items():
            curve.setData(*peak_decimate(t, parts[key] * 1e-3))  # three 100k-sample curves: decimated once here
        top = split_top(t, parts) * 1e-3
        self.split_plot.set_ranges(float(t[0]), float(t[-1]), 0.0, 1.3 * top, exact=self._exact)

    # -- statistics ------------------------------------------------------------------------------
    def _update_stats(self, snap: dict[str, np.ndarray], count: int) -> None:
        memory = self._monitor.snapshot() if self._monitor is not None else None
        stats = live_statistics(snap, count, self._batch, memory, self._cold_ms, self._disturbances)
        if not stats:
            return
        self._stats = stats
        shown = dict(stats)
        shown["count"] = count
        ips = stats["throughput"]["inferences_per_s"]
        self.strip.show_stats(shown, ips, ips * self._batch, self._cold_ms)
        self.scope_label.setText(stats["scope"])
        self._show_warnings(stats["warnings"])
        self.sig_stats.emit(stats)

    def _show_warnings(self, warnings: list[str]) -> None:
        self._warnings = warnings
        self.warnings_label.setText("\n".join(f"⚠ {w}" for w in warnings))
        self.warnings_label.setVisible(bool(warnings))
        self._fit_height()
