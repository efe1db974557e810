"""Run settings are part of the document (issue 52 item 4): PaddleOCR's text-direction classifier
(rapidocr_onnxruntime's ``ch_ppocr_mobile_v2.0_cls_infer.onnx``, input ``x [-1,3,?,?]``) in the real
window: its ``-1`` batch is a dynamic dim, not a negative-dimension warning; the orange note follows an
edited run shape; a saved session keeps the run shapes, backend, warm-up and iterations, and opening
it puts them back in the Live profile panel, not the plan's guess."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

pytest.importorskip("PySide6")

from trtstudio.ui.words import window_words  # noqa: E402


def _classifier() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("rapidocr_onnxruntime is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "models" / "ch_ppocr_mobile_v2.0_cls_infer.onnx"
    if not path.is_file():
        pytest.skip(f"{path} absent")
    return path


def _run_cell(panel: Any, name: str) -> Any:
    table = panel.inputs.table
    return next(table.item(r, 2) for r in range(table.rowCount()) if table.item(r, 0).text() == name)


def test_run_settings_follow_edits_and_survive_a_session(qtbot: Any, window: Any, tmp_path: Path) -> None:
    import onnx

    from trtstudio.backends.shapes import plan_shapes

    model = _classifier()
    proto = onnx.load(str(model), load_external_data=False)
    declared = [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim]
    assert declared[0] == -1  # Paddle's dynamic batch, as the file writes it
    guess = plan_shapes(proto, {}, probe=False)
    (guessed_note,) = guess.warnings
    planned = "x".join(map(str, guess.inputs[0].opt))

    with qtbot.waitSignal(window.sig_model_loaded, timeout=60_000):
        window.open_model(str(model))
    assert not [w for w in window.workspace.model.warnings if "negative" in w]
    assert window.workspace.model.graph.tensors["x"].shape[0] == "?"
    qtbot.waitUntil(lambda: window.profile_panel is not None and not window.plots_pending(), timeout=60_000)
    panel = window.profile_panel
    qtbot.waitUntil(lambda: bool(panel.inputs.specs), timeout=30_000)
    note = panel.inputs.note
    # the core's note in the window's words (a field, not a command-line flag)
    assert window_words(guessed_note) in note.plain_text() and f"using {planned}" in note.plain_text()
    assert "--shapes" not in note.plain_text()

    # the run shape edited in its cell: the note says what will run, no longer the guess
    _run_cell(panel, "x").setText("1x3x48x192")
    text = note.plain_text()
    assert f"using {planned}" not in text and "'x' runs as 1x3x48x192" in text
    assert panel.request().shapes == {"x": (1, 3, 48, 192)}
    form = panel.form
    form.warmup_spin.setValue(3)
    form.count_mode.setCurrentIndex(0)
    form.count_spin.setValue(57)
    backend = form.backend()

    path = tmp_path / "cls.trtstudio"
    with qtbot.waitSignal(window.sessions.sig_session_saved, timeout=60_000):
        window.sessions.save_session(str(path))
    doc = json.loads(path.read_text())
    saved = doc["run_settings"]
    assert saved["shapes"] == {"x": [1, 3, 48, 192]} and saved["warmup"] == 3 and saved["iterations"] == 57
    assert saved["backend"] == backend and Path(saved["model"]).name == model.name
    assert not [w for w in doc["warnings"] if "negative" in w]

    # the panel moved on (another shape, other settings), then the session opened again
    _run_cell(panel, "x").setText(planned)
    form.warmup_spin.setValue(10)
    form.count_spin.setValue(1000)
    with qtbot.waitSignal(window.sessions.sig_session_loaded, timeout=60_000):
        window.sessions.open_session(str(path))
    qtbot.waitUntil(lambda: not window.is_busy() and _run_cell(panel, "x").text() == "1x3x48x192", timeout=60_000)
    assert form.warmup_spin.value() == 3 and form.count_spin.value() == 57 and form.count_mode.currentIndex() == 0
    assert panel.request().shapes == {"x": (1, 3, 48, 192)} and panel.request().backend == backend
    assert "'x' runs as 1x3x48x192" in note.plain_text() and f"using {planned}" not in note.plain_text()
    panel.grab().save(str(tmp_path / "run_settings.png"))


def test_a_session_without_saved_settings_takes_its_last_run(tmp_path: Path) -> None:
    """An older session (no run_settings) restores what its latest run of the model ran."""
    from trtstudio.report.session import RunData, Session

    run = RunData(name="run", backend="ort", model="/m/cls.onnx", shapes={"x": [1, 3, 48, 192]},
                  record={"model": "/m/cls.onnx", "backend": "ort", "shapes": {"x": [1, 3, 48, 192]},
                          "settings": {"warmup": 5, "iterations": 200, "backend": "ort"}})
    other = RunData(name="other", backend="ort", model="/m/other.onnx", record={"model": "/m/other.onnx",
                                                                                 "backend": "ort"})
    s = Session(model_path="/elsewhere/cls.onnx", runs=[run, other])
    back = Session.from_json(json.loads(json.dumps(s.to_json())))
    got = back.restored_run_settings()
    assert got == {"warmup": 5, "iterations": 200, "backend": "ort", "shapes": {"x": [1, 3, 48, 192]}}
    back.run_settings = {"backend": "ort", "shapes": {"x": [1, 3, 32, 100]}}
    again = Session.from_json(json.loads(json.dumps(back.to_json())))
    assert again.restored_run_settings() == {"backend": "ort", "shapes": {"x": [1, 3, 32, 100]}}
