"""The window says when two sides do not belong together (issue 48 item 5): the Compare dock and the
Explain panel show the diff's ``warnings`` in a visible line above the story; none for two builds of
one model on one GPU. Real MainWindow, real TREx engines (A100 ResNet-18, RTX 3090 ResNet-50)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

pytest.importorskip("PySide6")

from test_ui_compare import compared  # noqa: E402
from test_ui_engine_graph import A100, engine_files, open_engine_graph, shot  # noqa: E402

from trtstudio.ui.main_window import MainWindow  # noqa: E402

RTX3090 = Path("NVIDIA_TensorRT_trex") / "release-11.0" / "examples" / "tensorflow" / "resnet" / "RTX-3090"


def test_compare_dock_warns_first_for_another_model_on_another_gpu(qtbot: Any, window: MainWindow, trt_real: Path,
                                                                    tmp_path: Path) -> None:
    from trtstudio.diff.core import diff_sides
    from trtstudio.diff.sides import load_side

    other = trt_real / RTX3090 / "fp32"
    if not other.is_dir():
        pytest.skip(f"fixture {other} absent")
    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    c = compared(qtbot, window, [str(other)])
    cli = diff_sides(load_side(str(trt_real / A100 / "fp32")), load_side(str(other)))
    assert set(cli.mismatch) == {"model", "gpu", "alignment"}  # the command line's pair says so
    dock = window.compare.dock_widget
    line = dock.warning
    assert line.isVisible() and line.warnings == c.pair.warnings and len(line.warnings) == 3
    assert "different models" in line.text() and "RTX 3090" in line.text() and "unreliable" in line.text()
    qtbot.waitUntil(lambda: line.geometry().bottom() <= dock.story.geometry().top(), timeout=5000)  # above the story
    assert "unreliable" in dock.story.text()
    shot(dock, "compare_mismatch.png", tmp_path)
    # two builds of one model on one GPU: no warning line
    compared(qtbot, window, [str(trt_real / A100 / "fp16")])
    assert not dock.warning.isVisible() and dock.warning.warnings == []


def test_explain_panel_warns_first_against_another_model(qtbot: Any, window: MainWindow, trt_real: Path,
                                                         tmp_path: Path) -> None:
    other = trt_real / RTX3090 / "fp16"
    if not other.is_dir():
        pytest.skip(f"fixture {other} absent")
    window.open_engine(engine_files(trt_real, "qat"))
    qtbot.waitUntil(lambda: not window.is_busy() and window.analysis is not None and not window.analysis.pending,
                    timeout=60000)
    view = window.engine_tabs.explain_view
    window.explain.explain([str(other)])
    qtbot.waitUntil(lambda: view.doc is not None and view.doc["against"] is not None, timeout=60000)
    assert view.warning.isVisible() and view.warning.warnings == view.doc["warnings"]
    assert any("different models" in w for w in view.doc["warnings"])
    assert view.doc["precision"]["reliable"] is False and view.sentence.text().startswith("<b>unreliable: ")
    qtbot.waitUntil(lambda: view.warning.geometry().bottom() <= view.sentence.geometry().top(), timeout=5000)
    shot(view, "explain_mismatch.png", tmp_path)
    # against the FP16 build of the same model: no warning
    before = view.doc
    window.explain.explain([str(trt_real / A100 / "fp16")])
    qtbot.waitUntil(lambda: view.doc is not None and view.doc is not before, timeout=60000)
    assert not view.warning.isVisible() and view.doc["warnings"] == []
