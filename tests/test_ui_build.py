"""BuildDialog: form defaults from the model, real TensorRT-RTX builds of the sample, cancel, failure."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

needs_rtx = pytest.mark.skipif(importlib.util.find_spec("tensorrt_rtx") is None,
                               reason="tensorrt_rtx not installed")


def _dynamic_model(path: Path) -> Path:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, "seq"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4, "seq"])
    s = helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 2])
    t = helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 2])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu"),
                               helper.make_node("Neg", ["s"], ["t"], name="neg")], "g", [x, s], [y, t])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def _custom_op_model(path: Path) -> Path:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph([helper.make_node("FancyOp", ["x"], ["y"], name="fancy", domain="com.example")],
                              "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.example", 1)])
    onnx.save(model, str(path))
    return path


def test_profile_prefill_from_model_inputs(qtbot, tmp_path):
    from trtstudio.backends.build import DEFAULT_MAX_DIM
    from trtstudio.ui.build_dialog import BuildDialog

    dlg = BuildDialog(str(_dynamic_model(tmp_path / "dyn.onnx")))
    qtbot.addWidget(dlg)
    table = dlg.profile_table
    assert table.rowCount() == 1  # only the dynamic input, not the static one
    assert table.item(0, 0).text() == "x"
    cells = [table.item(0, c).text() for c in (1, 2, 3)]
    assert cells == ["1x4x1", "1x4x1", f"{DEFAULT_MAX_DIM}x4x{DEFAULT_MAX_DIM}"]
    table.item(0, 3).setText("4x4x16")
    prof = dlg.profiles()
    assert prof == [{"x": ((1, 4, 1), (1, 4, 1), (4, 4, 16))}]
    table.item(0, 2).setText("8x4x1")  # opt > max
    from trtstudio.errors import InputError

    with pytest.raises(InputError, match="min <= opt <= max"):
        dlg.profiles()
    dlg.start_build()  # bad form: an error in the dialog, no thread
    assert "min <= opt <= max" in dlg.status_label.text()
    assert not dlg.is_building()


def test_backend_choices_follow_installed_modules(qtbot, sample_model):
    from trtstudio.ui.build_dialog import BuildDialog, installed_backends, weak_typing_flags

    dlg = BuildDialog(str(sample_model))
    qtbot.addWidget(dlg)
    installed = installed_backends()
    combo_model = dlg.backend_combo.model()
    for i in range(dlg.backend_combo.count()):
        name = dlg.backend_combo.itemData(i)
        assert combo_model.item(i).isEnabled() == installed[name]
    backend = dlg.backend_combo.currentData()
    if backend is not None:
        assert installed[backend]
        flags = weak_typing_flags(backend)
        assert dlg.weak_row.isVisibleTo(dlg) == bool(flags)
    opts = dlg.options()
    assert opts.targets == (["sm86"] if backend == "rtx" else [])
    assert opts.detailed_profiling and opts.tf32


@pytest.mark.rtx
@pytest.mark.slow
@needs_rtx
def test_build_sample_for_sm86_streams_log_and_emits(qtbot, sample_model, tmp_path):
    from trtstudio.ui.build_dialog import BuildDialog
    from trtstudio.ui.log_panel import LogPanel

    log = LogPanel()
    qtbot.addWidget(log)
    dlg = BuildDialog(str(sample_model), log_panel=log)
    qtbot.addWidget(dlg)
    dlg.backend_combo.setCurrentIndex(dlg.backend_combo.findData("rtx"))
    for t, box in dlg.target_boxes.items():
        box.setChecked(t == "sm86")
    out = tmp_path / "sample.engine"
    dlg.output_edit.setText(str(out))
    progress_seen: list[int] = []
    dlg.progress.valueChanged.connect(progress_seen.append)
    with qtbot.waitSignal(dlg.sig_built, timeout=120000) as blocker:
        dlg.start_build()
        assert dlg.is_building()
    result = blocker.args[0]
    assert result.ok and Path(result.engine_path) == out and out.stat().st_size == result.engine_bytes > 0
    info = result.engine_info
    assert info is not None and len(info.layers) > 0
    assert dlg.engine_info is info
    qtbot.waitUntil(lambda: not dlg.is_building(), timeout=10000)
    log.flush()
    assert log.line_count() > 10
    assert any("trtstudio: built" in m for _, m in log.lines())
    assert progress_seen  # the bar moved
    assert "Built" in dlg.status_label.text()
    dlg.show()
    qtbot.waitExposed(dlg)
    assert dlg.grab().save("/tmp/build_dialog.png")


@pytest.mark.rtx
@needs_rtx
def test_cancel_stops_the_build(qtbot, sample_model, tmp_path):
    from trtstudio.ui import workers
    from trtstudio.ui.build_dialog import BuildDialog

    dlg = BuildDialog(str(sample_model))
    qtbot.addWidget(dlg)
    dlg.backend_combo.setCurrentIndex(dlg.backend_combo.findData("rtx"))
    dlg.output_edit.setText(str(tmp_path / "cancelled.engine"))
    built: list[object] = []
    dlg.sig_built.connect(built.append)
    phases: list[str] = []

    def on_progress(value: object) -> None:
        # cancel at the builder's first progress step (after the parse), through the button
        if value[0] == "progress" and value[1] != "Parsing the ONNX model" and dlg.cancel_button.isEnabled():
            phases.append(value[1])
            dlg.cancel_button.click()

    dlg.start_build()
    assert dlg.is_building()
    dlg._handle.sig_progress.connect(on_progress)
    qtbot.waitUntil(lambda: not dlg.is_building() and dlg._handle is None, timeout=60000)
    assert phases, "the builder reported no progress"
    assert not workers.live_threads()
    assert dlg.build_result is not None and dlg.build_result.cancelled and not dlg.build_result.ok
    assert "cancelled" in dlg.status_label.text().lower() and dlg.progress.format() == "cancelled"
    assert not built
    assert not (tmp_path / "cancelled.engine").exists()
    assert dlg.build_button.isEnabled() and not dlg.cancel_button.isEnabled()


@pytest.mark.rtx
@needs_rtx
def test_close_during_build_cancels_and_joins(qtbot, sample_model, tmp_path):
    from trtstudio.ui import workers
    from trtstudio.ui.build_dialog import BuildDialog

    dlg = BuildDialog(str(sample_model))
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.backend_combo.setCurrentIndex(dlg.backend_combo.findData("rtx"))
    dlg.output_edit.setText(str(tmp_path / "closed.engine"))
    dlg.start_build()
    qtbot.waitUntil(lambda: "Parsing" not in dlg.phase_label.text() and dlg.phase_label.text() != "Starting…",
                    timeout=30000)
    dlg.close()
    assert not dlg.is_building()
    assert not workers.live_threads()


@pytest.mark.rtx
@needs_rtx
def test_parser_rejection_lists_nodes_and_shows_error(qtbot, tmp_path):
    from trtstudio.ui.build_dialog import BuildDialog

    dlg = BuildDialog(str(_custom_op_model(tmp_path / "custom.onnx")))
    qtbot.addWidget(dlg)
    dlg.backend_combo.setCurrentIndex(dlg.backend_combo.findData("rtx"))
    dlg.output_edit.setText(str(tmp_path / "custom.engine"))
    built: list[object] = []
    dlg.sig_built.connect(built.append)
    dlg.start_build()
    qtbot.waitUntil(lambda: dlg.build_result is not None and dlg._handle is None, timeout=60000)
    assert not built and not dlg.build_result.ok
    assert dlg.unsupported_list.count() >= 1
    assert "fancy" in dlg.unsupported_list.item(0).text().lower() or "FancyOp" in dlg.unsupported_list.item(0).text()
    assert dlg.status_label.text().startswith("Build failed:")
