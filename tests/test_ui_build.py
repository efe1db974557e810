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


def test_profile_prefill_from_the_shape_plan(qtbot, tmp_path):
    from trtstudio.backends.build import DEFAULT_MAX_DIM
    from trtstudio.backends.shapes import DEFAULT_OTHER
    from trtstudio.errors import FieldError
    from trtstudio.ui.build_dialog import BuildDialog

    dlg = BuildDialog(str(_dynamic_model(tmp_path / "dyn.onnx")))
    qtbot.addWidget(dlg)
    table = dlg.profile_table
    assert table.rowCount() == 1  # only the dynamic input, not the static one
    assert table.item(0, 0).text() == "x"
    cells = [table.item(0, c).text() for c in (1, 2, 3)]
    # the plan's sizes: batch 1..8, the other dim its default (the same the CLI's build plans)
    assert cells == [f"1x4x{DEFAULT_OTHER}", f"1x4x{DEFAULT_OTHER}", f"{DEFAULT_MAX_DIM}x4x{DEFAULT_OTHER}"]
    assert "seq" in dlg.profile_note.text()  # the plan's warning names the guessed dim
    assert dlg.profiles() == []  # nothing edited: the build plans it itself
    for c, text in ((1, "1x4x16"), (2, "2x4x16"), (3, " 4x4x16 ")):
        table.item(0, c).setText(text)
    assert dlg.profiles() == [{"x": ((1, 4, 16), (2, 4, 16), (4, 4, 16))}]
    assert dlg.request().profiles == dlg.profiles()
    table.item(0, 2).setText("8x4x16")  # opt > max
    with pytest.raises(FieldError, match="min <= opt <= max"):
        dlg.request()
    dlg.start_build()  # bad form: an error in the dialog naming the form's field, no thread
    assert dlg.status_label.text().startswith("Optimization profile: input 'x': need min <= opt <= max")
    assert not dlg.is_building()
    table.item(0, 2).setText("2x4x-16")
    with pytest.raises(FieldError, match="integers >= 0 joined by 'x'"):
        dlg.profiles()


def test_dialog_and_cli_make_the_same_request(qtbot, tmp_path):
    """The window's form and `trtstudio build`'s flags build the same BuildRequest (as profile's do)."""
    import shape_models as sm

    from trtstudio.cli import build_parser
    from trtstudio.commands.build import request_from_args
    from trtstudio.ui.build_dialog import BuildDialog

    model = sm.detector(tmp_path / "det.onnx", imgsz=[64, 96])
    dlg = BuildDialog(str(model))
    qtbot.addWidget(dlg)
    if dlg.backend_combo.findData("rtx") < 0 or not dlg.backend_combo.model().item(dlg.backend_combo.findData("rtx")).isEnabled():
        pytest.skip("tensorrt_rtx not installed")
    dlg.backend_combo.setCurrentIndex(dlg.backend_combo.findData("rtx"))
    for t, box in dlg.target_boxes.items():
        box.setChecked(t in ("sm86", "sm120"))
    out = str(tmp_path / "det.engine")
    dlg.output_edit.setText(out)
    dlg.workspace_spin.setValue(256)
    dlg.opt_level_spin.setValue(2)
    window = dlg.request()
    args = build_parser().parse_args(["build", str(model), "--backend", "rtx", "--target", "sm86,sm120", "-o", out,
                                      "--workspace", "256M", "--opt-level", "2"])
    cli = request_from_args(args)
    cli.validate()
    assert window.profiles == cli.profiles == []  # metadata sizes are the plan's, in both
    window.shapes_source = cli.shapes_source
    assert window == cli
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
        assert dlg.precision_row.isVisibleTo(dlg)  # builder flags (TensorRT 10) or a converted model
        assert ("builder flags" in dlg.precision_note.text()) == bool(flags)
    opts = dlg.request()
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


@pytest.mark.rtx
@needs_rtx
def test_window_build_and_cli_build_make_the_same_profile(qtbot, tmp_path, capsys, monkeypatch):
    """A model with Ultralytics metadata: the dialog's unedited build and `trtstudio build` plan the
    same profile from its imgsz (the dialog used to pre-fill 1/1/8 and send that as the user's), and
    the dialog's build parses the model once."""
    import json

    import shape_models as sm

    from trtstudio.backends import trt_parser
    from trtstudio.cli import main
    from trtstudio.ui.build_dialog import BuildDialog

    model = sm.detector(tmp_path / "det.onnx", imgsz=[64, 96])
    dlg = BuildDialog(str(model))
    qtbot.addWidget(dlg)
    assert [dlg.profile_table.item(0, c).text() for c in (1, 2, 3)] == ["1x3x64x96", "1x3x64x96", "8x3x64x96"]
    dlg.backend_combo.setCurrentIndex(dlg.backend_combo.findData("rtx"))
    dlg.output_edit.setText(str(tmp_path / "window.engine"))
    parses: list[object] = []
    real = trt_parser.create_parser
    monkeypatch.setattr(trt_parser, "create_parser", lambda *a, **k: parses.append(a) or real(*a, **k))
    rejected: list[object] = []
    dlg.sig_unsupported.connect(rejected.append)
    with qtbot.waitSignal(dlg.sig_built, timeout=120000) as blocker:
        dlg.start_build()
    window = blocker.args[0].to_json()
    qtbot.waitUntil(lambda: not dlg.is_building(), timeout=10000)
    assert len(parses) == 1 and rejected == [[]]  # one parse; its (empty) verdict came before the build
    capsys.readouterr()
    rc = main(["build", str(model), "--backend", "rtx", "--target", "sm86", "-o", str(tmp_path / "cli.engine"), "--json"])
    cli = json.loads(capsys.readouterr().out)
    assert rc == 0 and window["ok"] and cli["ok"]
    want = [{"images": [[1, 3, 64, 96], [1, 3, 64, 96], [8, 3, 64, 96]]}]
    assert window["settings"] == cli["settings"] and cli["settings"]["profiles"] == want
    assert window["shape_plan"] == cli["shape_plan"]
    assert cli["shape_plan"]["inputs"][0]["sources"] == ["default", "model", "metadata imgsz", "metadata imgsz"]
    assert set(window) == set(cli) and len(window["layers"]) == len(cli["layers"]) > 0


@pytest.mark.rtx
@needs_rtx
def test_fp16_box_builds_the_converted_model(qtbot, sample_model, tmp_path):
    """FP16 on TensorRT-RTX (strongly typed): the dialog builds the model converted as Precision does,
    its layers read FP16 and the status says which model was built; INT8 asks for calibration data."""
    from collections import Counter

    from trtstudio.ui.build_dialog import BuildDialog

    dlg = BuildDialog(str(sample_model))
    qtbot.addWidget(dlg)
    dlg.backend_combo.setCurrentIndex(dlg.backend_combo.findData("rtx"))
    assert "strongly typed" in dlg.precision_note.text()
    dlg.output_edit.setText(str(tmp_path / "s.engine"))
    dlg.precision_boxes["int8"].setChecked(True)
    assert dlg.calib_row.isVisibleTo(dlg)
    dlg.start_build()
    assert not dlg.is_building() and "Calibration data" in dlg.status_label.text()
    dlg.precision_boxes["int8"].setChecked(False)
    assert not dlg.calib_row.isVisibleTo(dlg)
    dlg.precision_boxes["fp16"].setChecked(True)
    dlg.precision_boxes["bf16"].setChecked(True)
    dlg.start_build()
    assert not dlg.is_building() and "FP16 or BF16" in dlg.status_label.text()
    dlg.precision_boxes["bf16"].setChecked(False)
    with qtbot.waitSignal(dlg.sig_built, timeout=120000) as blocker:
        dlg.start_build()
    result = blocker.args[0]
    built = tmp_path / "s.fp16.onnx"
    assert result.ok and result.precision.how == "converted" and result.precision.built_model == str(built)
    assert built.is_file()
    counts = Counter(lay.precision for lay in result.engine_info.layers if lay.precision)
    assert counts["FP16"] >= 0.9 * sum(counts.values()), counts
    qtbot.waitUntil(lambda: not dlg.is_building(), timeout=10000)
    assert str(built) in dlg.status_label.text() and "converted to FP16" in dlg.status_label.text()
    dlg.show()
    qtbot.waitExposed(dlg)
    assert dlg.grab().save(str(tmp_path / "fp16_dialog.png"))
