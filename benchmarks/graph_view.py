"""Graph view at scale: load + layout time, and paint time per frame at several zoom levels.

    QT_QPA_PLATFORM=offscreen python benchmarks/graph_view.py --onnx big.onnx
    (make one with: python benchmarks/synth.py --nodes 100000 -o big.onnx)

Prints one JSON line: {"nodes", "load_s", "display_s", "frames": {zoom: ms per frame (median of 10 pans)}}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--size", default="1100x700")
    args = ap.parse_args()
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication

    from trtstudio.graph.model import load_model
    from trtstudio.ui.graph_scene import build_display
    from trtstudio.ui.graph_view import GraphView

    app = QApplication.instance() or QApplication([])
    t0 = time.perf_counter()
    model = load_model(args.onnx)
    t1 = time.perf_counter()
    dg = build_display(model.graph)
    t2 = time.perf_counter()
    w, h = (int(v) for v in args.size.split("x"))
    view = GraphView()
    view.resize(w, h)
    view.set_display(dg)
    img = QImage(w, h, QImage.Format.Format_ARGB32_Premultiplied)
    frames: dict[str, float] = {}
    for label, whole, scale in (("whole", True, None), ("0.02", False, 0.02), ("0.2", False, 0.2),
                                ("readable_0.8", False, 0.8)):
        view.fit(whole=whole)
        if scale is not None:
            view.scale = scale
        times = []
        for _ in range(11):
            view.offset = view.offset + QPointF(37.0 / view.scale, 211.0 / view.scale)
            s = time.perf_counter()
            view.render(img)
            times.append((time.perf_counter() - s) * 1000)
        frames[label] = round(statistics.median(times[1:]), 2)  # first frame may build the overview
        frames[label + "_first"] = round(times[0], 2)
    app.processEvents()
    print(json.dumps({"nodes": len(model.graph.nodes), "load_s": round(t1 - t0, 3),
                      "display_s": round(t2 - t1, 3), "frame_ms": frames}))


if __name__ == "__main__":
    main()
