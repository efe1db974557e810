"""The window opens an engine in two stages: its layer table first (the analysis ``pending``), its
diagnosis (findings column, severities, the Findings tab) from the same worker after; a diagnosis
made for what is no longer open is dropped. Real MainWindow, real loader, real trtexec fixtures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

from trtstudio.ui.main_window import MainWindow  # noqa: E402

RESULTS = "fuzzylabs_edge-vision-power-estimation/desktop/torch_onnx_trtexec/results"


def _files(trt_real: Path, net: str) -> list[str]:
    folder = trt_real / RESULTS / net
    files = [folder / f"{net}_fp16.graph.json", folder / f"{net}_fp16.profile.json"]
    if not all(f.is_file() for f in files):
        pytest.skip(f"fixture {folder} absent")
    return [str(f) for f in files]


def _seen(win: MainWindow) -> dict[str, Any]:
    """What the window shows now: the analysis's stage, the table's rows and findings, the tab."""
    from trtstudio.ui.layer_table import COLUMN

    ws, model = win.workspace, win.engine_tabs.layer_table.model
    tabs = win.engine_tabs
    return {"analysis": ws.analysis, "pending": ws.analysis.pending if ws.analysis is not None else None,
            "layers": len(ws.engine.layers) if ws.engine is not None else 0, "rows": model.rowCount(),
            "severe_rows": int((model._severity > 0).sum()),
            "findings_cells": sum(1 for r in range(model.rowCount())
                                  if model.data(model.index(r, COLUMN["findings"]))),
            "tab": tabs.tabText(tabs.indexOf(tabs.findings_view))}


def test_the_table_shows_before_the_findings_which_fill_in_after(qtbot, window: MainWindow, trt_real: Path) -> None:
    from trtstudio.ui.layer_table import COLUMN, LAYER_INDEX_ROLE

    files = _files(trt_real, "resnet18")
    seen: list[dict[str, Any]] = []
    view = window.engine_tabs.layer_table
    picked: list[int] = []

    def on_analysis(_ws: Any) -> None:
        seen.append(_seen(window))
        if len(seen) == 1:  # what a user does with the table while the diagnosis runs
            view.table.sortByColumn(COLUMN["total_ms"], Qt.SortOrder.DescendingOrder)
            first = view.model.data(view.model.index(0, 0), LAYER_INDEX_ROLE)
            view.select_layers([first])
            picked.append(first)

    window.workspace.events.connect("analysis", on_analysis)
    window.open_engine(files)
    qtbot.waitUntil(lambda: not window.is_busy() and len(seen) >= 2, timeout=60000)

    first, last = seen[0], seen[-1]
    assert first["pending"] is True and first["rows"] == first["layers"] > 10
    assert first["severe_rows"] == 0 and first["findings_cells"] == 0 and first["tab"] == "Findings (…)"
    assert first["analysis"].findings == [] and first["analysis"].columns is not None
    assert last["pending"] is False and last["rows"] == last["layers"] == first["layers"]
    findings = last["analysis"].findings
    assert findings and last["severe_rows"] > 0 and last["findings_cells"] == last["severe_rows"]
    assert last["tab"] == f"Findings ({len(findings)})"
    qtbot.waitUntil(lambda: window.engine_tabs.finding_count() == len(findings), timeout=5000)  # later turns
    # the findings went into the rows as they were: still sorted by time, the layer still selected
    times = [view.model.data(view.model.index(r, COLUMN["total_ms"]), Qt.ItemDataRole.UserRole + 1)
             for r in range(view.model.rowCount())]
    known = [t for t in times if t is not None]
    assert known == sorted(known, reverse=True)
    assert view.selected_layers() == picked
    # severities as a fresh table of the final analysis shows them
    assert np.array_equal(view.model._severity, last["analysis"].columns.severity)
    # "Has finding" keeps the rows with findings
    view.finding_check.setChecked(True)
    assert view.model.rowCount() == last["severe_rows"]


def test_a_switch_between_the_stages_drops_the_stale_diagnosis(qtbot, window: MainWindow, trt_real: Path) -> None:
    """Another engine opened while the first one's diagnosis runs: that diagnosis never shows."""
    from trtstudio.engine.load import load_engine

    first_files, other_files = _files(trt_real, "resnet18"), _files(trt_real, "alexnet")
    other = load_engine(other_files)
    assert len(other.layers) != len(load_engine(first_files).layers)
    seen: list[dict[str, Any]] = []

    def on_analysis(_ws: Any) -> None:
        seen.append(_seen(window))
        if len(seen) == 1:
            window.set_engine(other, other_files)  # its analysis follows in a worker (reanalyze)

    window.workspace.events.connect("analysis", on_analysis)
    window.open_engine(first_files)
    qtbot.waitUntil(lambda: not window.is_busy() and len(seen) >= 2
                    and window.analysis is not None and not window.analysis.pending, timeout=60000)
    qtbot.wait(200)  # a late stale result would have come by now: the loader's worker has ended
    assert seen[0]["pending"] is True
    shown = [s for s in seen[1:] if not s["pending"]]
    assert shown and all(s["layers"] == len(other.layers) for s in shown)  # never the first engine's findings
    assert window.workspace.engine is other and window.analysis.engine.layers[0].name == other.layers[0].name
    assert window.engine_tabs.layer_table.model.rowCount() == len(other.layers)


def test_a_model_opened_between_the_stages_drops_the_stale_diagnosis(qtbot, window: MainWindow, trt_real: Path,
                                                                     sample_model: Path) -> None:
    """The diagnosis was made without a model; a model opened meanwhile makes it stale."""
    from trtstudio.graph.display import build_display
    from trtstudio.graph.model import load_model

    files = _files(trt_real, "resnet18")
    model = load_model(str(sample_model), infer_shapes=False)
    display = build_display(model.graph)
    seen: list[dict[str, Any]] = []

    def on_analysis(_ws: Any) -> None:
        seen.append(_seen(window))
        if len(seen) == 1:
            window.workspace.set_model(model, display)  # the analysis of the engine is dropped with it

    window.workspace.events.connect("analysis", on_analysis)
    window.open_engine(files)
    qtbot.waitUntil(lambda: not window.is_busy() and bool(seen), timeout=60000)
    qtbot.wait(200)
    assert seen[0]["pending"] is True and seen[0]["analysis"].model_path is None
    # whatever analysis shows after the switch was made against the new model, never the stale one
    later = [s["analysis"] for s in seen[1:]]
    assert all(a is not None and a.model_path == str(model.path) for a in later)
    a = window.analysis
    assert a is None or (a.model_path == str(model.path) and a.mapping is not None)


def test_a_model_opened_beside_an_engine_shows_first_then_the_table_mapped_then_the_findings(
        qtbot, window: MainWindow, trt_real: Path, sample_model: Path) -> None:
    """Opening a model while an engine is open: the model shows without waiting for the analysis,
    which follows in the two stages of an engine open (mapping pending, then the diagnosis), both
    made against the new model."""
    files = _files(trt_real, "resnet18")
    window.open_engine(files)
    qtbot.waitUntil(lambda: not window.is_busy() and window.analysis is not None
                    and not window.analysis.pending, timeout=60000)
    seen: list[dict[str, Any]] = []
    window.workspace.events.connect("analysis", lambda _ws: seen.append(
        {**_seen(window), "model_shown": window.workspace.model is not None}))
    window.open_model(sample_model)
    qtbot.waitUntil(lambda: not window.is_busy() and len(seen) >= 2
                    and window.analysis is not None and not window.analysis.pending, timeout=60000)
    first, last = seen[0], seen[-1]
    assert first["model_shown"] and first["pending"] is True and first["tab"] == "Findings (…)"
    assert first["rows"] == first["layers"] > 10 and first["analysis"].model_path == str(sample_model)
    assert last["pending"] is False and last["analysis"].model_path == str(sample_model)
    assert last["rows"] == first["rows"] and last["tab"] == f"Findings ({len(last['analysis'].findings)})"
