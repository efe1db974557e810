"""Every kernel file read shows what it held (issue 52 item 3): the real Nsight Systems export (PyTorch
ranges on two H100s) opened through File > Open engine files beside TREx's A100 engine gets its
one-line verdict in the Kernels tab, the status bar and the Log tab, and the Kernels tab never asks
for the export just opened; opened alone, its ranges are a table and a chart. The dialogs' first
filter lists every kind trtstudio reads. Screenshots under $TRTSTUDIO_SHOTS."""

from __future__ import annotations

import fnmatch
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

pytest.importorskip("PySide6")

from PySide6.QtWidgets import QFileDialog  # noqa: E402

from trtstudio.ui.main_window import MainWindow  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_ui_engine_graph import engine_files, shot  # noqa: E402
from test_ui_node_time import REAL_NSYS, _select_layer, _settled  # noqa: E402


def _export_facts() -> tuple[int, list[int]]:
    con = sqlite3.connect(f"file:{REAL_NSYS}?mode=ro", uri=True)
    n = con.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    devices = [d for (d,) in con.execute("SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY 1")]
    return n, devices


def _first_filter_patterns(filters: str) -> list[str]:
    first = filters.split(";;")[0]
    return first[first.index("(") + 1:first.rindex(")")].split()


def test_export_beside_the_a100_engine_says_what_it_held(qtbot: Any, window: MainWindow, trt_real: Path,
                                                          monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if not REAL_NSYS.is_file():
        pytest.skip(f"fixture {REAL_NSYS} absent")
    files = engine_files(trt_real, "fp32")
    window.open_engine(files)
    qtbot.waitUntil(lambda: _settled(window), timeout=60000)
    # File > Open engine files: the filter it starts with lists the export (and every engine file)
    seen: dict[str, str] = {}

    def dialog(_parent: Any, _title: str, _dir: str, filters: str) -> tuple[list[str], str]:
        seen["filters"] = filters
        return [str(REAL_NSYS)], filters.split(";;")[0]

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", dialog)
    window.open_engine_dialog()
    first = _first_filter_patterns(seen["filters"])
    for f in [REAL_NSYS, *map(Path, files)]:
        assert any(fnmatch.fnmatch(f.name, p) for p in first), f.name
    qtbot.waitUntil(lambda: _settled(window) and bool(window.engine.kernels), timeout=60000)
    assert window.workspace.engine_paths == [*files, str(REAL_NSYS)]

    kernels, devices = _export_facts()
    layers = {lay["Name"] for lay in json.loads(Path(next(f for f in files if f.endswith(".graph.json")))
                                                .read_text())["Layers"]}
    kv = window.engine_tabs.kernels_view
    line = kv.verdict.text()
    assert kv.verdict.isVisibleTo(kv)
    assert line.startswith(f"{REAL_NSYS.name}: Nsight Systems export, {kernels:,} kernels")
    assert f"devices {', '.join(map(str, devices))}" in line and "PyTorch op ranges" in line
    assert f"none of the engine's {len(layers)} layers matched" in line and window.engine.device["name"] in line
    # the Log tab carries the same line (after the engine's log is put there)
    log = window.engine_tabs.log_panel
    qtbot.waitUntil(lambda: any(line in m for _s, m in log.lines()), timeout=10000)
    # a layer of the engine has no kernels in this export: said so, and the export is not asked for
    _select_layer(window, 3)
    assert kv.table.rowCount() == 0 and "no kernels recorded" in kv.title.text()
    assert "PyTorch op ranges" in kv.title.text() and "nsys export" not in kv.title.text()
    assert "File > Open engine files" not in kv.title.text()
    window.engine_tabs.setCurrentWidget(kv)
    shot(window, "export_beside_engine.png", tmp_path)


def test_export_opened_alone_lists_its_ranges(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    if not REAL_NSYS.is_file():
        pytest.skip(f"fixture {REAL_NSYS} absent")
    from trtstudio.engine.nsys import read_kernels

    window.open_paths([str(REAL_NSYS)])
    qtbot.waitUntil(lambda: not window.is_busy() and window.workspace.engine is not None
                    and bool(window.workspace.engine.kernels), timeout=60000)
    tabs, kv = window.engine_tabs, window.engine_tabs.kernels_view
    assert tabs.currentWidget() is kv
    table = read_kernels(REAL_NSYS)  # what `trtstudio layers export.sqlite` prints
    assert kv.ranges.isVisibleTo(kv) and not kv.table.isVisibleTo(kv)
    assert kv.ranges.rowCount() == len(table.ranges)
    top = max(table.ranges, key=lambda r: r["ms"])
    assert kv.ranges.item(0, 0).text() == top["name"] == "aten::mm"
    assert float(kv.ranges.item(0, 3).text()) == pytest.approx(top["ms"], abs=1e-4)
    assert f"{table.kernels:,} kernels" in kv.title.text() and f"{table.kernels:,} kernels" in kv.verdict.text()
    assert "no engine layers to match" in kv.verdict.text()
    # the chart: the heaviest ranges' kernel time, heaviest on top
    assert kv.chart is not None and kv.chart.isVisibleTo(kv)
    assert kv.chart.data[0] == (top["name"], pytest.approx(top["ms"]))
    assert len(kv.chart.data) == min(10, len(table.ranges))
    assert kv.copy_text().splitlines()[1].startswith("aten::mm\t")
    window.resize(1280, 720)
    shot(window, "export_alone.png", tmp_path)


def test_file_open_lists_every_kind_first() -> None:
    from trtstudio.ui.document_loader import open_filters

    first = _first_filter_patterns(open_filters())
    for name in ("model.onnx", "run.trtstudio", "model.pt2", "export.sqlite", "resnet.onnx.engine.graph.json",
                 "trtexec.log", "model.engine", "model.plan", "x.profile"):
        assert any(fnmatch.fnmatch(name, p) for p in first), name
