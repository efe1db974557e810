"""Device choice and per-GPU panels, for any number of GPUs.

``DevicePicker`` lists 'default' and every GPU of the host; ``GpuMemoryPanel`` draws one small plot
per GPU (memory used and utilisation over time) from a ``GpuSampler`` (profiling/scenario_devices),
refreshed on a timer; it holds no state of its own beyond the curves.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QComboBox, QGridLayout, QLabel, QVBoxLayout, QWidget

from trtstudio.profiling.scenario_devices import GpuInfo, GpuSampler
from trtstudio.ui.plots import pg

GIB = float(1 << 30)


class DevicePicker(QComboBox):
    """'default device' or one GPU; ``device()`` is None or the GPU index."""

    def __init__(self, gpus: list[GpuInfo] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.set_gpus(gpus or [])

    def set_gpus(self, gpus: list[GpuInfo]) -> None:
        """Offer these GPUs (a worker lists them; NVML can take a moment)."""
        current = self.device()
        self.clear()
        self.addItem("default device", None)
        for g in gpus:
            self.addItem(g.label(), g.index)
        if current is not None:
            self.set_device(current)
        self.setToolTip(f"{len(gpus)} GPU(s) visible" if gpus else "no GPU visible: models run where their backend runs")

    def device(self) -> int | None:
        """The chosen GPU index, or None for the backend's default."""
        data = self.currentData()
        return None if data is None else int(data)

    def set_device(self, index: int | None) -> None:
        """Select a GPU by index (None: default)."""
        i = self.findData(index)
        self.setCurrentIndex(max(0, i))


class GpuMemoryPanel(QWidget):
    """One plot per GPU: used memory (GiB, left) and utilisation (%, dashed) against time."""

    def __init__(self, parent: QWidget | None = None, columns: int = 2) -> None:
        super().__init__(parent)
        self.columns = columns
        self.sampler: GpuSampler | None = None
        self.plots: dict[int, pg.PlotWidget] = {}
        self.curves: dict[int, tuple[pg.PlotDataItem, pg.PlotDataItem]] = {}
        self.titles: dict[int, QLabel] = {}
        self._grid = QGridLayout()
        self._empty = QLabel("no GPU visible")
        layout = QVBoxLayout(self)
        layout.addWidget(self._empty)
        layout.addLayout(self._grid)
        self.timer = QTimer(self)
        self.timer.setInterval(250)
        self.timer.timeout.connect(self._on_timer_timeout)

    def set_sampler(self, sampler: GpuSampler | None, start_timer: bool = True) -> None:
        """Show the GPUs of ``sampler`` (one plot each) and follow it on a timer."""
        for w in (*self.plots.values(), *self.titles.values()):
            w.setParent(None)
        self.plots.clear()
        self.curves.clear()
        self.titles.clear()
        self.sampler = sampler
        gpus = sampler.gpus if sampler is not None else []
        self._empty.setVisible(not gpus)
        for n, gpu in enumerate(gpus):
            title = QLabel(gpu.label())
            plot = pg.PlotWidget()
            plot.setBackground("w")
            plot.setMenuEnabled(False)
            plot.setMinimumHeight(120)
            plot.setLabel("left", "used (GiB)")
            plot.setLabel("bottom", "time (s)")
            plot.setYRange(0, gpu.total_bytes / GIB, padding=0.02)
            used = plot.plot(pen=pg.mkPen("#1f77b4", width=2), name="used")
            util = plot.plot(pen=pg.mkPen("#d62728", width=1, style=pg.QtCore.Qt.PenStyle.DashLine), name="util %")
            row, col = divmod(n, self.columns)
            self._grid.addWidget(title, 2 * row, col)
            self._grid.addWidget(plot, 2 * row + 1, col)
            self.plots[gpu.index], self.curves[gpu.index], self.titles[gpu.index] = plot, (used, util), title
        if start_timer and gpus:
            self.timer.start()
        else:
            self.timer.stop()
        self.refresh()

    def refresh(self) -> None:
        """Redraw every GPU's curves from the sampler's snapshot."""
        if self.sampler is None:
            return
        for index, s in self.sampler.snapshot().items():
            if index not in self.curves:
                continue
            used_c, util_c = self.curves[index]
            t, used, util = s["t_s"], s["used_bytes"], s["util_percent"]
            used_c.setData(t, used / GIB)
            total = float(np.nanmax(s["total_bytes"])) if np.isfinite(s["total_bytes"]).any() else 0.0
            # utilisation is drawn on the memory axis, scaled so that 100 % reaches the top
            util_c.setData(t, util / 100.0 * (total / GIB)) if total else util_c.setData([], [])
            gpu = next(g for g in self.sampler.gpus if g.index == index)
            last_used = used[np.isfinite(used)][-1] if np.isfinite(used).any() else None
            last_util = util[np.isfinite(util)][-1] if np.isfinite(util).any() else None
            text = gpu.label()
            if last_used is not None:
                text += f": {last_used / GIB:.1f} GiB used"
            if last_util is not None:
                text += f", {last_util:.0f}% busy"
            self.titles[index].setText(text)

    def stop(self) -> None:
        """Stop following the sampler."""
        self.timer.stop()

    def _on_timer_timeout(self) -> None:
        self.refresh()
