"""Frames per second of the timeline view panning 100,000 intervals (budget >= 30 fps), offscreen.

Four rows (streams) of H2D / compute / D2H intervals; the view pans by 1 % of its width per frame at
four zoom levels (the whole run, ~10,000, ~2,000 and ~20 intervals in view), back and forth; each frame is a synchronous
repaint of the plot's viewport. Prints one JSON line per zoom and a summary.
    QT_QPA_PLATFORM=offscreen python benchmarks/scenario_timeline.py [--intervals 100000] [--frames 120]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--intervals", type=int, default=100_000)
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--rows", type=int, default=4)
    args = ap.parse_args()
    from PySide6.QtWidgets import QApplication

    from trtstudio.profiling.timeline import Timeline
    from trtstudio.ui.timeline_view import TimelineView

    app = QApplication.instance() or QApplication([])
    tl = Timeline(args.intervals + 3)
    rows = [tl.add_row(f"model {i} (stream)", "cuda:0") for i in range(args.rows)]
    rng = np.random.default_rng(0)
    t = np.zeros(args.rows)
    for i in range(args.intervals // 3):
        r = i % args.rows
        a = t[r] + rng.uniform(0.01, 0.05)
        m2 = a + 0.02 + rng.uniform(0.2, 0.5)
        tl.add_stages(rows[r], (a, a + 0.02, m2, m2 + 0.02), i)
        t[r] = m2 + 0.02
    view = TimelineView()
    view.resize(1600, 500)
    view.show()
    t0 = time.perf_counter()
    view.set_timeline(tl)
    app.processEvents()
    load_ms = (time.perf_counter() - t0) * 1e3
    end = float(t.max())
    per_ms = tl.count / end
    results = []
    zooms = (("whole run", end), ("~10,000 in view", 10_000 / per_ms), ("~2,000 in view", 2000 / per_ms),
             ("~20 in view", 20 / per_ms))
    for label, span in zooms:
        view.set_x_range(end * 0.3, end * 0.3 + span)
        app.processEvents()
        frames = []
        for k in range(args.frames):
            f0 = time.perf_counter()
            view.pan(0.01 if (k // 30) % 2 == 0 else -0.01)  # back and forth: the data stays in view
            view.plot.viewport().repaint()
            frames.append(time.perf_counter() - f0)
        med = float(np.median(frames))
        doc = {"bench": "timeline_pan", "zoom": label, "span_ms": span, "intervals": tl.count,
               "drawn_rects_last_frame": view.item.drawn, "frame_ms_median": med * 1e3,
               "frame_ms_p95": float(np.percentile(frames, 95)) * 1e3, "fps_median": 1.0 / med}
        results.append(doc)
        print(json.dumps(doc), flush=True)
    worst = min(r["fps_median"] for r in results)
    print(json.dumps({"bench": "timeline_pan_summary", "intervals": tl.count, "load_ms": load_ms,
                      "worst_fps_median": worst, "budget_fps": 30, "within_budget": worst >= 30}), flush=True)


if __name__ == "__main__":
    main()
