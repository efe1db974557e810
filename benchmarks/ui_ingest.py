"""LivePanels under load: a thread feeds 20,000 samples/s into the ring buffer while the panels redraw
offscreen at 25 Hz for ~10 s. Prints one JSON line.

frame_ms: one timer frame = snapshot + setData of every curve (``refresh``) plus the paint events
of the plots that the event loop runs before the next frame (pyqtgraph's ``GraphicsView.paintEvent``). cpu_percent_of_one_core: CPU time of the GUI
thread over wall time. rss_growth_mib: process RSS after the run minus after the first second.
Budget: frame p99 <= 33 ms, GUI thread <= 30 % of one core.

    QT_QPA_PLATFORM=offscreen python benchmarks/ui_ingest.py [--seconds 10] [--rate 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rate", type=int, default=20_000, help="samples per second fed")
    ap.add_argument("--capacity", type=int, default=100_000, help="ring buffer capacity")
    ap.add_argument("--parts", action="store_true", help="feed H2D/compute/D2H parts too (TensorRT-like)")
    args = ap.parse_args()

    import numpy as np
    import psutil
    import pyqtgraph as pg
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from trtstudio.profiling.memory import MemoryMonitor, host_probe
    from trtstudio.profiling.samples import SampleBuffer
    from trtstudio.ui.live_panels import LivePanels

    app = QApplication.instance() or QApplication(sys.argv)
    live = LivePanels()
    live.resize(1400, 900)
    live.show()
    buf = SampleBuffer(args.capacity)
    monitor = MemoryMonitor(probes=[host_probe()], interval_ms=100)
    stop = threading.Event()
    fed = [0]

    def feed() -> None:
        rng = np.random.default_rng(0)
        chunk = max(1, args.rate // 200)  # every 5 ms
        lat = rng.gamma(20.0, 0.05, size=1 << 16)  # ~1 ms with a tail
        lat[rng.integers(0, lat.size, 64)] *= 8.0  # spikes
        t0 = time.perf_counter()
        i = 0
        while not stop.is_set():
            due = t0 + (i + chunk) / args.rate
            for _ in range(chunk):
                v = float(lat[i & 0xFFFF])
                if args.parts:
                    buf.append(i / args.rate, v, 0.1, v - 0.15, 0.05)
                else:
                    buf.append(i / args.rate, v)
                i += 1
            monitor.maybe_sample(time.perf_counter(), i)
            fed[0] = i
            pause = due - time.perf_counter()
            if pause > 0:
                time.sleep(pause)

    frames: list[float] = []
    paint = [0.0]
    original = live.refresh

    def timed(force: bool = False) -> None:
        if frames:
            frames[-1] += paint[0]  # the paints that followed the previous frame
        paint[0] = 0.0
        t = time.perf_counter()
        original(force)
        frames.append((time.perf_counter() - t) * 1e3)

    live.refresh = timed  # type: ignore[method-assign]
    view_paint = pg.GraphicsView.paintEvent

    def timed_paint(self: Any, ev: Any) -> None:
        t = time.perf_counter()
        view_paint(self, ev)
        paint[0] += (time.perf_counter() - t) * 1e3

    pg.GraphicsView.paintEvent = timed_paint  # type: ignore[method-assign]
    proc = psutil.Process()
    feeder = threading.Thread(target=feed, name="ui-ingest-feeder")
    live.attach(buf, monitor, batch=4)
    feeder.start()
    marks: dict[str, float] = {}

    def warm() -> None:
        marks["rss0"] = proc.memory_info().rss
        marks["cpu0"] = time.thread_time()
        marks["wall0"] = time.perf_counter()
        marks["frames0"] = len(frames)

    def end() -> None:
        marks["cpu1"] = time.thread_time()
        marks["wall1"] = time.perf_counter()
        stop.set()
        app.quit()

    QTimer.singleShot(1000, warm)
    QTimer.singleShot(int(1000 * (1.0 + args.seconds)), end)
    app.exec()
    feeder.join()
    live.stop_timer()
    rss1 = proc.memory_info().rss
    wall = marks["wall1"] - marks["wall0"]
    ft = np.asarray(frames[int(marks["frames0"]) : -1])
    out = {
        "benchmark": "ui_ingest",
        "seconds": round(wall, 2),
        "samples_fed": fed[0],
        "feed_rate_per_s": round(fed[0] / (wall + 1.0), 0),
        "frames": int(ft.size),
        "frame_rate_hz": round(ft.size / wall, 1),
        "frame_ms_p50": round(float(np.percentile(ft, 50)), 2),
        "frame_ms_p99": round(float(np.percentile(ft, 99)), 2),
        "cpu_percent_of_one_core": round(100.0 * (marks["cpu1"] - marks["cpu0"]) / wall, 1),
        "rss_growth_mib": round((rss1 - marks["rss0"]) / 2**20, 2),
        "budget_ok": bool(np.percentile(ft, 99) <= 33.0 and (marks["cpu1"] - marks["cpu0"]) / wall <= 0.30),
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
