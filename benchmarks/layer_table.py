"""What the layer table costs the GUI thread on a big engine: showing it, a filter keystroke,
clearing the filter, sorting by a numeric, a text and a tensor column, and by the text column
again in the other direction (its ranks are kept from the first sort); then selecting every row,
filtering and sorting with a selection, and clearing it. Sorting goes through the header's sort
indicator, as a click on the header does.

    QT_QPA_PLATFORM=offscreen python benchmarks/layer_table.py [--layers 50000 300000] [--repeat 3]

The engine is ``benchmarks/engine.py``'s (with its profile); its columns are computed first, as the
window's worker does, and the GIL switch interval is the window's (``ui.app``). Each figure is the
median over ``--repeat`` rounds, in ms, of the longest stretch the GUI thread works at a time: the
call and the paint that follows it (``processEvents``); for a first sort by a text column at over
20,000 layers, whose keys are made in steps between the events, also each event-loop turn until
the rows are sorted (``until_sorted_ms``: the wall time until then). The window's stall budget is 100 ms (issue 16 and
the workspace issue). Prints JSON lines.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

BUDGET_MS = 100.0


def _emit(**kw: Any) -> None:
    print(json.dumps(kw), flush=True)


def _engine(n_layers: int, tmp: Path) -> Any:
    from engine import LAYERS_PER_BLOCK, make_engine  # benchmarks/engine.py

    from trtstudio.engine.load import load_engine

    doc, _spec, profile = make_engine(max(1, n_layers // LAYERS_PER_BLOCK))
    (tmp / "t.layers.json").write_text(json.dumps(doc))
    (tmp / "t.profile.json").write_text(json.dumps(profile))
    return load_engine([tmp / "t.layers.json", tmp / "t.profile.json"])


def bench(n_layers: int, repeat: int) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from trtstudio.engine.table import layer_columns
    from trtstudio.ui.app import GUI_SWITCH_INTERVAL_S
    from trtstudio.ui.layer_table import COLUMN, LayerTableView

    sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)  # as the window runs (workers yield the GIL often)
    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as d:
        engine = _engine(n_layers, Path(d))
    columns = [layer_columns(engine)]  # made again before each round (a new engine's opening)
    gc.freeze()  # as the window does after a load (ui.document_loader): no full collections in the steps
    view = LayerTableView()
    view.resize(1400, 800)
    view.show()
    app.processEvents()
    header = view.table.horizontalHeader()

    until_done: dict[str, list[float]] = {}

    def timed(step: Any, key: str) -> float:
        """The longest stretch the GUI thread works at a time: the call and the paint after it,
        then (a sort whose keys are made in steps) each turn of the event loop until the rows are
        sorted, whose wall time goes to ``until_done``."""
        t0 = time.perf_counter()
        step()
        app.processEvents()
        longest = time.perf_counter() - t0
        if view.model.sort_pending():
            while view.model.sort_pending():
                time.sleep(0.002)
                t1 = time.perf_counter()
                app.processEvents()
                longest = max(longest, time.perf_counter() - t1)
            until_done.setdefault(key, []).append((time.perf_counter() - t0) * 1e3)
        return longest * 1e3

    steps = {
        "set_engine": lambda: view.set_engine(engine, columns[0]),
        "filter_keystroke": lambda: view.filter_edit.setText("blk1"),
        "filter_cleared": lambda: view.filter_edit.setText(""),
        "sort_time": lambda: header.setSortIndicator(COLUMN["total_ms"], Qt.SortOrder.DescendingOrder),
        "sort_name": lambda: header.setSortIndicator(COLUMN["name"], Qt.SortOrder.AscendingOrder),
        "sort_out_shapes": lambda: header.setSortIndicator(COLUMN["out_shapes"], Qt.SortOrder.AscendingOrder),
        "sort_name_again": lambda: header.setSortIndicator(COLUMN["name"], Qt.SortOrder.DescendingOrder),
        # with a selection: Ctrl+A, a filter that hides part of it, the filter cleared (the hidden
        # rows stay unselected: a selection in many pieces), a sort, the selection cleared
        "select_all": view.table.selectAll,
        "filter_selected": lambda: view.filter_edit.setText("blk1"),
        "filter_cleared_selected": lambda: view.filter_edit.setText(""),
        "sort_time_selected": lambda: header.setSortIndicator(COLUMN["total_ms"], Qt.SortOrder.DescendingOrder),
        "clear_selection": view.table.clearSelection,
        # a selection in one piece per row: every reformat (one layer in six) selected, then the
        # filter cleared (8,333 pieces at 50,000 layers)
        "filter_reformats": lambda: view.filter_edit.setText("Reformatting"),
        "select_all_reformats": view.table.selectAll,
        "filter_cleared_scattered": lambda: view.filter_edit.setText(""),
        "clear_selection_scattered": view.table.clearSelection,
    }
    figures: dict[str, list[float]] = {k: [] for k in steps}
    for r in range(max(1, repeat)):
        if r:
            # the same columns again would be the engine's findings landing (set_engine keeps the
            # sort keys made): each round opens the engine anew
            columns[0] = layer_columns(engine)
            gc.freeze()
        for key, step in steps.items():
            figures[key].append(timed(step, key))
    shown = view.model.rowCount()
    view.close()
    out = {k: round(statistics.median(v), 1) for k, v in figures.items()}
    _emit(bench="layer_table", layers=len(engine.layers), rows_shown=shown, ms=out,
          worst_ms=round(max(max(v) for v in figures.values()), 1), budget_ms=BUDGET_MS,
          ok=all(v <= BUDGET_MS for v in out.values()),
          until_sorted_ms={k: round(statistics.median(v), 1) for k, v in until_done.items()},
          note="each round opens the engine again (its columns made anew, the last round's let go of): "
               "sort_name and sort_out_shapes make their column's sort keys, sort_out_shapes its cells "
               "too (engine.table.TensorText)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, nargs="+", default=[50_000, 300_000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for n in args.layers:
        bench(n, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
