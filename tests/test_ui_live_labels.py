"""The live panels in the window's 1280x720 layout (issue 52, item 8; issue 49, item 4): every plot
title, legend and axis label lies inside its plot (they were cut: "inferer", "process (N",
"spikes > p99 or > 2x me", "H2D / compute / D2H", "time (s"), no plot overflows the panel (the
Process RSS plot was half below the fold, out of the dock's scrolling), the memory plots carry the
memory verdict, and the process's GPU memory is stacked by category under its measured curve."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gui

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, QRect, QRectF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from trtstudio.profiling.memory import MemoryMonitor  # noqa: E402
from trtstudio.profiling.memory_split import REST  # noqa: E402
from trtstudio.profiling.samples import SampleBuffer  # noqa: E402
from trtstudio.ui.main_window import MainWindow, wait_idle  # noqa: E402
from trtstudio.ui.settings import AppSettings  # noqa: E402

MIB = 1 << 20


class AllocatorRun:
    """Readings as a torch-cuda run's monitor takes them (NVML process and device, host RSS, torch's
    allocator), with the figures issue 49 measured on an H100; the allocator cache grows."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> dict[str, int]:
        self.n += 1
        grow = self.n * (1 << 18)
        return {"gpu_used_bytes": 1331 * MIB + grow, "gpu_total_bytes": 80 << 30, "process_gpu_bytes": 834 * MIB + grow,
                "host_rss_bytes": 998 * MIB, "torch_allocated_bytes": 39 * MIB, "torch_reserved_bytes": 80 * MIB + grow,
                "torch_inactive_split_bytes": 2 * MIB}


def _text_rect(widget, text) -> QRect:  # noqa: ANN001
    """The rect of ``text``'s (a QGraphicsTextItem's) text in ``widget``'s pixels: its bounding rect
    less the document's margin, which holds no text."""
    m = text.document().documentMargin()
    rect: QRectF = text.mapRectToScene(text.boundingRect().adjusted(m, m, -m, -m))
    return widget.mapFromScene(rect).boundingRect()


def _labels(plot) -> dict[str, QRect]:  # noqa: ANN001
    """Each shown title, legend and axis label of ``plot`` (a pyqtgraph PlotWidget) in its own pixels."""
    item = plot.getPlotItem()
    out = {}
    title = item.titleLabel
    if title.isVisible():
        out["title"] = _text_rect(plot, title.item)
    for side in ("left", "bottom"):
        axis = item.getAxis(side)
        if axis.isVisible() and axis.label.isVisible():
            out[f"{side} axis"] = _text_rect(plot, axis.label)
    if item.legend is not None:
        for _sample, label in item.legend.items:
            out[f"legend {label.text}"] = _text_rect(plot, label.item)
    return out


@pytest.fixture
def window(qtbot, monkeypatch):  # noqa: ANN001, ANN201
    monkeypatch.setattr(AppSettings, "has_window_state", lambda self: False)
    monkeypatch.setattr(AppSettings, "restore_window", lambda self, w: False)
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    wait_idle(win, QApplication.instance())
    yield win
    win.shutdown()


def test_every_live_label_fits_at_1280x720(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    live = window.profile_panel.live
    buf = SampleBuffer(10_000)
    monitor = MemoryMonitor(probes=[AllocatorRun()], interval_ms=0)
    with qtbot.waitSignal(live.sig_run_attached, timeout=2000):
        live.attach(buf, monitor, batch=8)
    rng = np.random.default_rng(1)
    for i in range(3000):
        lat = 10.0 if i % 700 == 0 else 1.0 + 0.01 * rng.random()
        buf.append(i * 1e-3, lat, 0.3, lat - 0.5, 0.2)
        if i % 25 == 0:
            monitor.record(i)
    qtbot.wait(100)
    live.refresh(force=True)
    live.finish(None)
    qtbot.waitUntil(lambda: window.profile_dock.width() > 450, timeout=5000)
    qtbot.wait(100)
    shot = Path(os.environ.get("TRTSTUDIO_SHOTS", tmp_path)) / "live_1280x720.png"
    assert window.grab().save(str(shot))

    plots = [live.latency_plot, live.hist_plot, live.tp_plot, live.split_plot, live.gpu_mem_plot, live.host_mem_plot]
    assert all(p.isVisible() for p in plots)
    panel = QRect(QPoint(0, 0), live.size())
    for plot in plots:
        box = plot.rect()
        labels = _labels(plot)
        assert {"title", "bottom axis", "left axis"} <= set(labels), plot
        for what, rect in labels.items():
            assert box.contains(rect), (plot.getPlotItem().titleLabel.text, what, rect, box)
        # the plot lies inside the panel, so the dock's scrolling reaches all of it
        assert panel.contains(QRect(plot.mapTo(live, QPoint(0, 0)), plot.size())), plot
    scroll = window.profile_dock.widget()
    port = scroll.viewport()

    def seen_whole() -> None:  # the dock scrolled to its end: the memory plots are seen whole
        scroll.verticalScrollBar().setValue(scroll.verticalScrollBar().maximum())
        for plot in (live.host_mem_plot, live.gpu_mem_plot):
            shown = QRect(plot.mapTo(port, QPoint(0, 0)), plot.size())
            assert port.rect().contains(shown), (shown, port.rect())

    qtbot.waitUntil(seen_whole, timeout=3000)

    # the memory verdicts on the memory plots, as the report has them
    gpu_title = live.gpu_mem_plot.getPlotItem().titleLabel.text
    assert "growing" in gpu_title and "allocator cache" in gpu_title
    assert "stable" in live.host_mem_plot.getPlotItem().titleLabel.text
    # the categories stacked under the measured curve: the top of the stack is the process's memory
    arrays = monitor.snapshot()
    names = list(live.stack_curves)
    assert names[-1] == REST and "allocator cache (free)" in names
    top = live.stack_curves[REST].getOriginalDataset()[1]
    measured = live.mem_curves["process_gpu_bytes"].getOriginalDataset()[1]
    assert np.allclose(top, arrays["process_gpu_bytes"] / MIB) and np.allclose(top, measured)
    tensors = live.stack_curves["tensors (allocated)"].getOriginalDataset()[1]
    assert np.allclose(tensors, 39.0)
