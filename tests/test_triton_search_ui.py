"""Profile > Triton config search... in the window: a search on a tritonserver the dialog launches
(nvidia-pytriton's, in the tests' venv) over PaddleOCR's classifier served through ONNX Runtime;
the scatter fills live, the front and the winner are drawn, a click shows a variant's sweep, Save
config writes the winner's entry."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.triton, pytest.mark.gui, pytest.mark.timeout(600)]
pytest.importorskip("PySide6")
pytest.importorskip("tritonclient.grpc")

from test_triton_search import CLS, _python  # noqa: E402


def test_window_searches_draws_the_front_and_saves_the_winner(qtbot: Any, tmp_path: Path) -> None:
    if CLS is None:
        pytest.skip("rapidocr_onnxruntime not installed")
    python = _python()
    from trtstudio.triton.variants import Variant, parse_pbtxt
    from trtstudio.ui.actions import ACTIONS
    from trtstudio.ui.triton_search_dialog import TritonSearchDialog

    assert any(a.slot == "tools.open_triton_search_dialog" and a.menu == "&Profile" for a in ACTIONS)
    dlg = TritonSearchDialog(model=str(CLS))
    qtbot.addWidget(dlg)
    dlg.shapes_edit.setText("x:1x3x48x192")
    dlg.python_edit.setText(str(python))
    dlg.budget_spin.setValue(12.0)
    dlg.mode_combo.setCurrentIndex(1)  # exhaustive: every variant of the small space
    dlg.concurrency_edit.setText("1,4")
    dlg.instances_edit.setText("1,2")
    dlg.batch_edit.setText("4")
    dlg.delay_edit.setText("off,100")
    dlg.window_spin.setValue(0.3)
    live: list[int] = []
    dlg.scatter.sigPlotChanged.connect(lambda *_: live.append(len(dlg.scatter.points())))
    with qtbot.waitSignal(dlg.sig_finished, timeout=400_000) as blocker:
        dlg.start()
    doc = blocker.args[0]
    assert not doc["error"] and doc["measured"] == 5, doc.get("error")  # the default and the 2x2 space
    assert live and live[0] < doc["measured"] and max(live) == doc["measured"]  # filled as variants came
    xs, ys = dlg.scatter.getData()
    assert len(xs) == doc["measured"]
    fx, _fy = dlg.front_curve.getData()
    assert (0 if fx is None else len(fx)) == len(doc["front"])  # the front joined, point by point
    assert dlg.headline_label.text() == doc["headline"] and doc["winner"]
    assert dlg.variants_table.rowCount() == doc["measured"]
    # a click on a point shows that variant's sweep
    other = next(p for p in dlg.scatter.points() if p.data() != doc["winner"])
    dlg.scatter.sigClicked.emit(dlg.scatter, [other], None)
    v = next(x for x in doc["variants"] if x["key"] == other.data())
    assert dlg.selected == other.data() and dlg.steps_table.rowCount() == len(v["steps"])
    assert other.data() in dlg.sweep_label.text() and v["lost"] in dlg.sweep_label.text()
    shot = Path(os.environ.get("TRTSTUDIO_SHOT_DIR", str(tmp_path))) / "triton_search_dialog.png"
    dlg.grab().save(str(shot))
    # Save config writes the winner's entry, which says the winner's variant
    assert dlg.save_button.isEnabled()
    path = dlg.save_config(str(tmp_path / "repo"))
    assert path and Variant.of_config(parse_pbtxt(Path(path).read_text())) == Variant.from_json(
        next(x for x in doc["variants"] if x["key"] == doc["winner"])["variant"])
    assert (Path(path).parent / "1" / "model.onnx").read_bytes() == CLS.read_bytes()
    # the search saved as a session, opened in a fresh dialog, draws the same variants
    assert dlg.export_report(str(tmp_path / "s.json"))
    again = TritonSearchDialog()
    qtbot.addWidget(again)
    assert again.open_search(str(tmp_path / "s.json"))
    assert len(again.scatter.getData()[0]) == doc["measured"] and again.headline_label.text() == doc["headline"]
    assert not again.save_button.isEnabled()  # the model's files are not in a session
    assert not again.open_search(str(CLS)) and str(CLS) in again.status_label.text()  # not a search: one line
