"""What a user's actions cost the GUI thread once a big model and engine are open: overlay switches,
the engine tabs, the table's colours, search keystrokes, a filter, clicks and Ctrl+A in the layer
and findings tables (whose selection the graph follows).

    QT_QPA_PLATFORM=offscreen python benchmarks/window_actions.py --synthetic [--layers 50000]
    QT_QPA_PLATFORM=offscreen python benchmarks/window_actions.py --model M.onnx --engine layers.json profile.json

``--synthetic`` opens ``benchmarks/engine.py``'s engine and its 100,000-node model. The actions start once the graph's layout is complete (a big graph is laid out
in the background after its first frame). For each action: how long the call took and the longest
gap between two ticks of a 10 ms timer until the window is idle again (the stall the user feels).
The window's stall budget is 100 ms (issue 16 and the workspace issue). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

BUDGET_MS = 100.0


def measure(model: Path, engine_files: list[Path]) -> dict[str, Any]:
    import numpy as np
    from PySide6.QtCore import QPointF, Qt, QTimer
    from PySide6.QtTest import QTest

    from trtstudio.engine.overlay import MODES
    from trtstudio.ui.app import _app
    from trtstudio.ui.main_window import MainWindow

    app = _app()
    win = MainWindow()
    win.resize(1400, 900)
    win.show()

    def settle(seconds: float = 0.3) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end or win.is_busy():
            app.processEvents()
            time.sleep(0.005)

    settle()
    win.open_model(str(model))
    settle()
    win.open_engine([str(p) for p in engine_files])
    settle()
    t0 = time.perf_counter()
    while win.view.dg is not None and not win.view.dg.placement.complete and time.perf_counter() - t0 < 300:
        settle(0.05)
    settle(1.0)
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    tabs = win.engine_tabs
    table = tabs.layer_table
    findings = tabs.findings_view
    out: dict[str, dict[str, float]] = {}

    def act(name: str, fn: Callable[[], Any]) -> None:
        ticks.clear()
        start = time.perf_counter()
        fn()
        call = time.perf_counter() - start
        settle(0.4)
        gaps = np.diff(np.asarray([start, *ticks])) * 1e3
        out[name] = {"call_ms": round(call * 1e3, 1), "worst_gap_ms": round(float(gaps.max()) if len(gaps) else 0.0, 1)}

    def click(view: Any, row: int) -> None:
        pos = view.visualRect(view.model().index(row, 1)).center()
        QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)

    def select_all(view: Any) -> None:
        view.setFocus()
        QTest.keyClick(view, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)

    def pan(scale: float) -> None:
        view = win.view
        view.scale = scale
        view.offset = QPointF(view.offset.x(), view.offset.y() + 400 / scale)
        view.repaint()

    for scale in (0.35, 0.7, 1.4):  # a paint of the graph where the last action left it, panned down
        act(f"graph pan at {scale:.0%}", lambda s=scale: pan(s))
    for mode in MODES:
        act(f"overlay {mode}", lambda m=mode: win.overlay.setCurrentText(m))
    act("overlay back to Op category", lambda: win.overlay.setCurrentText(MODES[0]))
    for i in range(tabs.count()):
        act(f"engine tab {tabs.tabText(i).split(' (')[0]}", lambda i=i: tabs.setCurrentIndex(i))
    tabs.setCurrentWidget(table)
    settle()
    for i in range(table.color_combo.count()):
        act(f"table {table.color_combo.itemText(i)}", lambda i=i: table.color_combo.setCurrentIndex(i))
    act("search keystroke (first)", lambda: win.search.setText(win.model.graph.nodes[len(win.model.graph.nodes) // 2].name[:4]))
    act("search keystroke (one node)", lambda: win.search.setText(win.model.graph.nodes[len(win.model.graph.nodes) // 2].name))
    act("search next match", lambda: win.search_ctl.find_next())
    act("search cleared", lambda: win.search.setText(""))
    act("table click a row", lambda: click(table.table, 5))
    act("table Ctrl+A", lambda: select_all(table.table))
    act("table filter with all selected", lambda: table.filter_edit.setText("Reformat"))
    act("table Ctrl+A filtered", lambda: select_all(table.table))
    act("table filter cleared", lambda: table.filter_edit.setText(""))
    act("table selection cleared", lambda: table.table.clearSelection())
    tabs.setCurrentWidget(findings)
    settle()
    act("findings click a row", lambda: click(findings, 3))
    act("findings Ctrl+A", lambda: select_all(findings))
    timer.stop()
    result = {
        "bench": "window_actions", "model": str(model), "engine": [str(p) for p in engine_files],
        "nodes": len(win.model.graph.nodes) if win.model is not None else None,
        "layers": len(win.engine.layers) if win.engine is not None else None,
        "actions": out, "worst_gap_ms": max(v["worst_gap_ms"] for v in out.values()),
        "over_budget": sorted(k for k, v in out.items() if v["worst_gap_ms"] > BUDGET_MS), "budget_ms": BUDGET_MS,
    }
    result["ok"] = not result["over_budget"]
    win.shutdown()
    win.close()
    return result


def main() -> int:
    from gui_stall import add_input_args, input_files  # benchmarks/gui_stall.py

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_input_args(ap)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model, engine_files = input_files(ap, args, Path(tmp))
        print(json.dumps(measure(model, engine_files)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
