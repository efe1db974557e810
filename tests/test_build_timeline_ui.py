"""The build dialog's live phase bar (pytest-qt): a real TensorRT-RTX build of a third-party model
fills it phase by phase; a cancel mid-phase leaves the partial timeline. Screenshot:
/tmp/build_phase_bar.png."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import onnx
import pytest

from trtstudio.engine.buildtime import PhaseRecorder

HAS_RTX = importlib.util.find_spec("tensorrt_rtx") is not None
MODEL = Path(onnx.__file__).parent / "backend/test/data/light/light_inception_v1.onnx"


def test_recorder_estimates_what_is_left_of_the_open_phase() -> None:
    now = [0.0]
    rec = PhaseRecorder(clock=lambda: now[0])
    rec.start("Building engine", 2)
    now[0] = 1.0
    rec.start("Timing tactics", 10)
    assert rec.snapshot()["open"]["left_s"] is None  # no step reported yet: no estimate
    now[0] = 3.0
    rec.step("Timing tactics", 4, 10)
    snap = rec.snapshot()
    assert snap["open"]["elapsed_s"] == 2.0 and snap["open"]["left_s"] == pytest.approx(2.0 * 6 / 4)
    now[0] = 4.0
    rec.finish("Timing tactics")
    now[0] = 4.5
    rec.close()
    rows = rec.timeline()
    assert [(r["phase"], r["seconds"]) for r in rows] == [("builder (other)", 1.0), ("tactic timing", 3.0),
                                                            ("builder (other)", 0.5)]


@pytest.mark.gui
@pytest.mark.rtx
@pytest.mark.skipif(not HAS_RTX or not MODEL.is_file(), reason="tensorrt_rtx or the onnx light zoo is missing")
def test_dialog_phase_bar_live_then_final(qtbot, tmp_path: Path) -> None:
    from trtstudio.ui.build_dialog import BuildDialog

    dlg = BuildDialog(str(MODEL))
    qtbot.addWidget(dlg)
    dlg.backend_combo.setCurrentIndex(dlg.backend_combo.findData("rtx"))
    dlg.output_edit.setText(str(tmp_path / "inception.engine"))
    live: list[dict[str, float]] = []
    dlg.phase_timer.timeout.connect(lambda: live.append(dict(dlg.phase_bar.segments)))
    with qtbot.waitSignal(dlg.sig_built, timeout=120000) as blocker:
        dlg.start_build()
    result = blocker.args[0]
    qtbot.waitUntil(lambda: not dlg.is_building(), timeout=10000)
    assert not dlg.phase_timer.isActive()
    final = dict(dlg.phase_bar.segments)
    # the final bar is the build's own timeline, phase by phase
    from trtstudio.engine.buildtime import phase_totals

    assert final == {k: v for k, v in phase_totals(result.timeline).items() if v > 0}
    assert "graph optimization" in final and "tactic timing" in final
    assert dlg.phase_caption.text().startswith(f"{result.seconds:.1f} s")
    dlg.show()
    qtbot.waitExposed(dlg)
    assert dlg.grab().save("/tmp/build_phase_bar.png")


@pytest.mark.gui
@pytest.mark.rtx
@pytest.mark.skipif(not HAS_RTX or not MODEL.is_file(), reason="tensorrt_rtx or the onnx light zoo is missing")
def test_dialog_cancel_mid_phase_keeps_partial_timeline(qtbot, tmp_path: Path) -> None:
    from trtstudio.ui import workers
    from trtstudio.ui.build_dialog import BuildDialog

    dlg = BuildDialog(str(MODEL))
    qtbot.addWidget(dlg)
    dlg.backend_combo.setCurrentIndex(dlg.backend_combo.findData("rtx"))
    dlg.output_edit.setText(str(tmp_path / "cancelled.engine"))

    def on_progress(value: object) -> None:
        if value[0] == "progress" and value[1] == "Optimizing graph" and dlg.cancel_button.isEnabled():
            dlg.cancel_button.click()

    dlg.start_build()
    dlg._handle.sig_progress.connect(on_progress)
    qtbot.waitUntil(lambda: not dlg.is_building() and dlg._handle is None, timeout=60000)
    assert not workers.live_threads()
    res = dlg.build_result
    assert res is not None and res.cancelled and res.timeline
    assert dlg.phase_caption.text().startswith("Until cancelled")
    assert "graph optimization" in dict(dlg.phase_bar.segments)
    assert "tactic timing" not in dict(dlg.phase_bar.segments)
