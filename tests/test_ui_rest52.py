"""What was left of issue 52 items 2 and 6: the side-by-side compare graphs name the convolution,
not the weights folded into a layer's name; row context menus Compare and Export; plot menus that
copy the series' name and the point under the pointer; a theme switch repaints the layer table's
selection colour. Real MainWindow, real TREx A100 engine files, real input events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

pytest.importorskip("PySide6")

from PySide6.QtCore import QPointF  # noqa: E402
from test_ui_compare import compared  # noqa: E402
from test_ui_engine_graph import A100, engine_files, open_engine_graph, shot  # noqa: E402

from trtstudio.ui.main_window import MainWindow  # noqa: E402


def test_side_by_side_sub_labels_name_the_convolution(qtbot: Any, window: MainWindow, trt_real: Path,
                                                      tmp_path: Path) -> None:
    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    compared(qtbot, window, [str(trt_real / A100 / "qat-residual")])
    tab = window.compare.tab
    view = tab.other_view
    dg = view.dg
    names = [n.name for n in dg.graph.nodes]
    i = next(k for k, n in enumerate(names) if n.endswith("+ Conv_22") and ".weight + QuantizeLinear" in n)
    d = dg.display_index(i)
    assert dg.sublabels[d] == "Conv_22"
    view.center_on([d], zoom_in=True)
    p = view.to_view(float(dg.lay.x[d]), float(dg.lay.y[d]))
    tip = view.tooltip_at(QPointF(p.x(), p.y()))
    assert names[i] in tip  # the whole name in the tooltip
    # every node: no weight or Q/DQ part left where a compute part is in the name
    for k, n in enumerate(names):
        sub = dg.sublabels[dg.display_index(k)]
        parts = n.split(" + ")
        if any("Conv" in part for part in parts):
            assert ".weight" not in sub and "QuantizeLinear" not in sub.replace("DequantizeLinear", ""), (n, sub)
    # the window's own engine graph keeps its labels (the comparison's copy is shortened)
    eg = window.graphs.engine_view.dg
    assert all(eg.sublabels[eg.display_index(k)] == node.name for k, node in enumerate(eg.graph.nodes))
    window.graphs.tabs.setCurrentWidget(tab)
    shot(window, "compare_sub_labels.png", tmp_path)
