"""Live profiling in the GUI: workers, ProfilePanel and LivePanels on real onnxruntime sessions."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from backend_doubles import FailingOrtBackend, failing_factory
from onnx import TensorProto, helper, numpy_helper

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

SCREENSHOT = Path("/tmp/live.png")


def tiny_model(path: Path, size: int = 32) -> Path:
    """MatMul -> Tanh -> MatMul with a dynamic batch: a few microseconds per inference."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((size, size)).astype(np.float32), f"w{i}") for i in range(2)]
    nodes = [
        helper.make_node("MatMul", ["x", "w0"], ["m0"], name="/mm0/MatMul"),
        helper.make_node("Tanh", ["m0"], ["t0"], name="/tanh/Tanh"),
        helper.make_node("MatMul", ["t0", "w1"], ["y"], name="/mm1/MatMul"),
    ]
    graph = helper.make_graph(
        nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", size])], inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return tiny_model(tmp_path / "tiny.onnx")


@pytest.fixture
def panel(qtbot: Any):
    from trtstudio.ui.profile_panel import ProfilePanel

    p = ProfilePanel()
    qtbot.addWidget(p)
    p.resize(1300, 850)
    p.show()
    yield p
    assert p.shutdown(10_000)


def _open(qtbot: Any, panel: Any, path: Path) -> None:
    with qtbot.waitSignal(panel.sig_model_ready, timeout=10_000):
        panel.set_model(str(path))


def _curve_len(panel: Any) -> int:
    x, _ = panel.live.latency_curve.getOriginalDataset()  # getData() gives the decimated display set
    return 0 if x is None else len(x)


def _until_stopped(panel: Any) -> None:
    panel.count_mode.setCurrentIndex(2)
    panel.threads_spin.setValue(1)
    panel.warmup_spin.setValue(2)


def test_model_inputs_fill_the_table_with_a_dynamic_dim_note(qtbot: Any, panel: Any, tiny: Path) -> None:
    _open(qtbot, panel, tiny)
    assert panel.shapes_table.rowCount() == 1
    assert panel.shapes_table.item(0, 1).text().startswith("batchx32")
    assert panel.shapes() == {"x": (1, 32)}
    assert panel.shapes_note.isVisible() and "batch" in panel.shapes_note.text()
    panel.shapes_table.item(0, 2).setText("4x32")
    assert panel.shapes() == {"x": (4, 32)}
    assert panel.start_button.isEnabled()


def test_a_long_dynamic_dim_note_is_shown_whole(qtbot: Any, panel: Any, tmp_path: Path) -> None:
    """An exporter's long symbolic dims (paddle2onnx: ``p2o.DynamicDimension.0``): the note wraps
    inside the Inputs box, and the box gives it every line it needs (it was cut off at the bottom
    and ran past the right edge)."""
    dims = ["p2o.DynamicDimension.0", 3, "p2o.DynamicDimension.1", "p2o.DynamicDimension.2"]
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    path = tmp_path / "p2o.onnx"
    onnx.save(model, path)
    panel.resize(922, 560)  # the controls beside the plots, at their narrowest
    _open(qtbot, panel, path)
    note = panel.shapes_note
    qtbot.waitUntil(lambda: note.isVisible() and note.height() >= note.heightForWidth(note.width()), timeout=5000)
    assert "p2o.DynamicDimension.2" in note.plain_text() and "\u200b" not in note.plain_text()
    assert note.heightForWidth(note.width()) > 3 * note.fontMetrics().height()  # several lines: it wraps
    assert note.minimumSizeHint().width() <= note.width()  # no line wider than the label
    # the inputs table shows the long symbolic shape whole: abbreviated dims, the full text on hover,
    # and its columns within the table (the model-shape column ran off the edge, then the run shape)
    table = panel.shapes_table
    cell = table.item(0, 1)
    assert "\u2026" in cell.text() and cell.toolTip().startswith("p2o.DynamicDimension.0x3xp2o.DynamicDimension.1")
    assert sum(table.columnWidth(c) for c in range(3)) <= table.viewport().width()
    run = table.item(0, 2)  # the shape to edit, whole
    assert table.columnWidth(2) >= table.fontMetrics().horizontalAdvance(run.text())


def test_latest_set_model_wins_and_bad_models_are_one_line(qtbot: Any, panel: Any, tiny: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a protobuf")
    panel.set_model(str(bad))
    with qtbot.waitSignal(panel.sig_model_ready, timeout=10_000):
        panel.set_model(str(tiny))
    assert panel.shapes() == {"x": (1, 32)}
    qtbot.waitUntil(lambda: panel.inputs.loader.is_done(), timeout=5_000)
    qtbot.wait(100)
    assert not panel.error_label.isVisible()  # the first model's failure came too late to show
    panel.set_model(str(bad))
    qtbot.waitUntil(lambda: panel.error_label.isVisible(), timeout=10_000)
    assert str(bad) in panel.error_label.text() and "\n" not in panel.error_label.text()
    assert not panel.start_button.isEnabled()


def test_run_streams_into_the_plots_then_stops(qtbot: Any, panel: Any, tiny: Path) -> None:
    from trtstudio.ui import workers

    _open(qtbot, panel, tiny)
    _until_stopped(panel)
    panel.start()
    assert panel.is_running()

    def samples_plotted() -> None:
        drawn, _ = panel.live.latency_curve.getData()
        assert drawn is not None and len(drawn) > 0
        assert _curve_len(panel) > 200
        assert panel.live.stat_labels["median"].text() not in ("-", "")

    qtbot.waitUntil(samples_plotted, timeout=15_000)
    qtbot.wait(300)
    panel.grab().save(str(SCREENSHOT))
    live = panel.statistics()
    y = panel.runner.samples.snapshot()["latency_ms"]
    assert live["count"] > 0 and float(y.min()) <= live["median"] <= float(y.max())
    _, hist = panel.live.hist_curve.getData()
    assert hist is not None and hist.sum() > 0
    x_tp, _ = panel.live.tp_inf.getData()
    assert x_tp is not None and len(x_tp) > 0
    assert panel.live.split_plot.isHidden()  # ORT gives no H2D/compute/D2H split
    with qtbot.waitSignal(panel.sig_run_finished, timeout=10_000) as blocker:
        panel.stop()
    doc = blocker.args[0]
    assert doc["schema"] == "trtstudio.profile/1" and doc["stopped"] is True and doc["error"] is None
    assert doc["latency_ms"]["count"] == panel.runner.samples.count > 200
    assert doc["cold_ms"] is not None and panel.live.stat_labels["cold"].text() != "-"
    assert panel.statistics()["latency_ms"]["count"] == doc["latency_ms"]["count"]
    qtbot.waitUntil(lambda: not workers.live_threads(), timeout=5_000)
    assert not panel.is_running() and panel.start_button.isEnabled()
    assert _curve_len(panel) > 0  # the plots stay after the run


def test_pause_holds_the_run_and_resume_goes_on(qtbot: Any, panel: Any, tiny: Path) -> None:
    _open(qtbot, panel, tiny)
    _until_stopped(panel)
    panel.start()
    qtbot.waitUntil(lambda: panel.runner.samples is not None and panel.runner.samples.count > 100, timeout=15_000)
    panel.pause()
    assert panel.pause_button.text() == "Resume"
    qtbot.waitUntil(lambda: panel.runner.state.phase == "paused", timeout=5_000)
    held = panel.runner.samples.count
    qtbot.wait(400)
    assert panel.runner.samples.count == held
    assert panel.is_running()
    panel.resume()
    assert panel.pause_button.text() == "Pause"
    qtbot.waitUntil(lambda: panel.runner.samples.count > held + 100, timeout=10_000)
    with qtbot.waitSignal(panel.sig_run_finished, timeout=10_000) as blocker:
        panel.stop()
    assert blocker.args[0]["latency_ms"]["count"] > held + 100


def test_backend_error_mid_run_is_one_line_and_keeps_samples(qtbot: Any, tiny: Path) -> None:
    from trtstudio.ui.profile_panel import ProfilePanel

    p = ProfilePanel(backend_factory=failing_factory)
    qtbot.addWidget(p)
    p.show()
    _open(qtbot, p, tiny)
    p.warmup_spin.setValue(5)
    p.count_spin.setValue(100_000)
    with qtbot.waitSignal(p.sig_run_finished, timeout=20_000) as blocker:
        p.start()
    doc = blocker.args[0]
    recorded = FailingOrtBackend.fail_at - 1 - 1 - 5  # minus the failing call, the cold one and warm-up
    assert doc["latency_ms"]["count"] == recorded
    assert "simulated device loss" in doc["error"]
    text = p.error_label.text()
    assert p.error_label.isVisible() and "simulated device loss" in text
    assert "\n" not in text and "Traceback" not in text
    assert _curve_len(p) == recorded
    assert p.live.stat_labels["median"].text() != "-"
    assert not p.is_running()
    assert p.shutdown()


def test_shutdown_during_a_run_joins_the_worker(qtbot: Any, panel: Any, tiny: Path) -> None:
    from trtstudio.ui import workers

    _open(qtbot, panel, tiny)
    _until_stopped(panel)
    panel.start()
    qtbot.waitUntil(lambda: panel.runner.samples is not None and panel.runner.samples.count > 50, timeout=15_000)
    handle = panel.runner.run
    assert handle is not None and handle.is_running()
    assert panel.shutdown(10_000)
    assert not handle.is_running()
    assert handle not in workers.live_handles()
    assert not workers.live_threads()
    assert not panel.live.is_streaming()


def test_bad_settings_show_an_error_and_start_nothing(qtbot: Any, panel: Any, tiny: Path, tmp_path: Path) -> None:
    _open(qtbot, panel, tiny)
    panel.shapes_table.item(0, 2).setText("1xA")
    panel.start()
    assert not panel.is_running()
    assert "1xa" in panel.error_label.text().lower() and panel.error_label.isVisible()
    panel.shapes_table.item(0, 2).setText("2x32")
    bad = tmp_path / "x.npy"
    np.save(bad, np.zeros((3, 32), np.float32))  # the run shape says 2x32
    panel.data_combo.setCurrentIndex(1)
    panel.data_edit.setText(str(bad))
    with qtbot.waitSignal(panel.sig_run_finished, timeout=10_000) as blocker:
        panel.start()
    assert "shape" in blocker.args[0]["error"] and str(bad) in blocker.args[0]["error"]
    assert str(bad) in panel.error_label.text()


def test_input_data_file_is_used(qtbot: Any, panel: Any, tiny: Path, tmp_path: Path) -> None:
    data = tmp_path / "x.npy"
    np.save(data, np.ones((3, 32), np.float32))
    _open(qtbot, panel, tiny)
    panel.shapes_table.item(0, 2).setText("3x32")
    panel.data_combo.setCurrentIndex(1)
    panel.data_edit.setText(str(data))
    panel.count_spin.setValue(50)
    with qtbot.waitSignal(panel.sig_run_finished, timeout=10_000) as blocker:
        panel.start()
    doc = blocker.args[0]
    assert doc["error"] is None and doc["shapes"] == {"x": [3, 32]} and doc["latency_ms"]["count"] == 50


def test_per_layer_run_emits_rows_mapped_to_model_nodes(qtbot: Any, panel: Any, tiny: Path) -> None:
    _open(qtbot, panel, tiny)
    with qtbot.waitSignal(panel.sig_layer_times, timeout=20_000) as blocker:
        panel.run_layers()
    rows = blocker.args[0]
    names = {n.name for n in onnx.load(str(tiny)).graph.node}
    mapped = {n for r in rows for n in r["onnx_nodes"]}
    assert rows and mapped <= names and "/mm0/MatMul" in mapped
    assert panel.layers_table.rowCount() == len(rows)
    times = [r["time_ms"] for r in rows]
    assert times == sorted(times, reverse=True) and all(t >= 0 for t in times)


def test_sample_model_fixed_iterations(qtbot: Any, panel: Any, sample_model: Path) -> None:
    _open(qtbot, panel, sample_model)
    assert panel.shapes() == {"input": (1, 3, 224, 224)}
    panel.count_spin.setValue(25)
    panel.warmup_spin.setValue(2)
    with qtbot.waitSignal(panel.sig_run_finished, timeout=60_000) as blocker:
        panel.start()
    doc = blocker.args[0]
    assert doc["error"] is None and doc["latency_ms"]["count"] == 25 and not doc["stopped"]
    assert doc["latency_ms"]["min"] <= doc["latency_ms"]["median"] <= doc["latency_ms"]["max"]
    assert _curve_len(panel) == 25
    assert panel.live.stat_labels["count"].text() == "25"


def test_backend_combo_disables_what_cannot_run_here(qtbot: Any, panel: Any, tiny: Path) -> None:
    """The panel lists the catalogue's backends (PyTorch's too), each enabled where
    catalogue.availability says it can run the model here, else disabled with the reason."""
    import onnxruntime

    from trtstudio.backends.catalogue import CATALOGUE, availability

    _open(qtbot, panel, tiny)
    providers = onnxruntime.get_available_providers()
    avail = availability(str(tiny))
    assert avail["ort"] is None
    assert (avail["ort-cuda"] is None) == ("CUDAExecutionProvider" in providers)
    assert avail["tensorrt"] is not None and avail["rtx"] is not None  # an .onnx is no engine plan
    combo = panel.backend_combo
    assert [combo.itemData(i) for i in range(combo.count())] == list(CATALOGUE)
    assert {"torch", "torch-cuda"} <= {combo.itemData(i) for i in range(combo.count())}
    model = combo.model()
    for i in range(combo.count()):
        key = combo.itemData(i)
        assert combo.itemText(i) == CATALOGUE[key].label
        assert model.item(i).isEnabled() == (avail[key] is None)
        assert model.item(i).toolTip() == (avail[key] or "")
    assert availability("model.plan")["ort"] is not None


def test_a_backend_the_user_picked_is_kept_where_it_can_run(qtbot: Any, panel: Any, tiny: Path,
                                                              tmp_path: Path) -> None:
    """Until the user picks, each model gets the backend `trtstudio profile` picks on auto; a pick
    stays for the next model it can run, and gives way to auto's choice where it cannot."""
    from trtstudio.backends.catalogue import default_backend, unavailable_reason

    _open(qtbot, panel, tiny)
    combo = panel.backend_combo
    assert combo.currentData() == default_backend(str(tiny)) == "ort"
    if unavailable_reason("torch", str(tiny)) is not None:
        pytest.skip(f"torch cannot run an .onnx here: {unavailable_reason('torch', str(tiny))}")
    combo.setCurrentIndex(combo.findData("torch"))
    combo.activated.emit(combo.currentIndex())  # what a click on the item sends
    other = tiny_model(tmp_path / "other.onnx", size=8)
    _open(qtbot, panel, other)
    assert combo.currentData() == "torch"
    plan = tmp_path / "m.plan"  # an engine plan: torch cannot run it, auto's tensorrt is selected
    plan.write_bytes(b"\0" * 64)
    panel.set_model(str(plan))
    assert combo.currentData() == default_backend(str(plan)) == "tensorrt"
    assert panel.inputs.loader.join(10_000)  # its inputs are not read: the engine is no plan


# -- LivePanels on synthetic samples in the real ring buffer ------------------------------------


class GrowingProbe:
    """Test double of a memory probe: reports 1 MiB more device memory at every reading."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> dict[str, int]:
        self.n += 1
        return {"gpu_used_bytes": (100 + self.n) << 20, "gpu_total_bytes": 8 << 30, "process_gpu_bytes": (50 + self.n) << 20}


def test_live_panels_mark_spikes_split_and_memory_growth(qtbot: Any) -> None:
    from trtstudio.profiling.memory import MemoryMonitor
    from trtstudio.profiling.samples import SampleBuffer
    from trtstudio.ui.live_panels import LivePanels

    live = LivePanels()
    qtbot.addWidget(live)
    live.resize(1100, 800)
    live.show()
    buf = SampleBuffer(10_000)
    monitor = MemoryMonitor(probes=[GrowingProbe()], interval_ms=0)
    live.attach(buf, monitor, batch=8)
    rng = np.random.default_rng(1)
    spikes = {500, 1200, 1201, 2500}
    for i in range(3000):
        lat = 10.0 if i in spikes else 1.0 + 0.01 * rng.random()
        buf.append(i * 1e-3, lat, 0.3, lat - 0.5, 0.2)
        if i % 50 == 0:
            monitor.record(i)
    live.refresh(force=True)
    sx, sy = live.spikes.getData()
    marked = {round(float(t) * 1e3) for t in sx}
    assert spikes <= marked
    assert live.statistics()["longest_spike"]["samples"] == 2
    assert live.split_plot.isVisible()
    hx, _ = live.split_curves["compute_ms"].getOriginalDataset()
    assert hx is not None and len(hx) == 3000
    dx, _ = live.split_curves["compute_ms"].getData()
    assert 0 < len(dx) <= 3000  # what is drawn: peak-decimated to the view's width
    mx, my = live.mem_curves["gpu_used_bytes"].getOriginalDataset()
    assert mx is not None and len(mx) == 60 and my[-1] > my[0]
    stats = live.statistics()
    assert stats["memory"]["GPU used"]["verdict"] == "growing"
    assert any("memory growing" in w for w in live.warnings())
    assert stats["throughput"]["samples_per_s"] == pytest.approx(8 * stats["throughput"]["inferences_per_s"])
    # parts: 0.3 + 0.2 transfers against ~0.5 compute: transfer-bound only when copies outweigh compute
    assert stats["parts_ms"]["h2d_ms"] == pytest.approx(0.3)
    live.toggles["Histogram"].setChecked(False)
    assert not live.hist_plot.isVisible()
    live.finish(None)
    assert not live.is_streaming()
    qtbot.wait(50)  # let the layout take the hidden histogram's room before the screenshot
    assert live.tp_plot.geometry().x() < live.width() // 4
    live.grab().save(str(SCREENSHOT.with_name("live_synthetic.png")))


# -- workers ---------------------------------------------------------------------------------------


@pytest.mark.usefixtures("qtbot")
def test_run_in_thread_delivers_results_in_the_gui_thread(qtbot: Any) -> None:
    from trtstudio.ui import workers

    seen: dict[str, Any] = {}
    gui = threading.get_ident()

    def task(state: workers.TaskState) -> int:
        seen["worker"] = threading.get_ident()
        state.set_progress(0.5)
        return 42

    def on_done(value: Any) -> None:
        seen["done"] = (value, threading.get_ident())

    progress: list[object] = []
    h = workers.run_in_thread(task, on_done=on_done, on_progress=progress.append, name="answer")
    qtbot.waitUntil(lambda: "done" in seen and not h.is_running(), timeout=5_000)
    assert seen["done"] == (42, gui) and seen["worker"] != gui and progress == [0.5]
    assert h.result == 42 and h.error is None


def test_run_in_thread_reports_errors_and_stops_cooperatively(qtbot: Any) -> None:
    from trtstudio.profiling.runner import RunState
    from trtstudio.ui import workers

    errors: list[BaseException] = []
    h = workers.run_in_thread(lambda s: 1 / 0, on_error=errors.append)
    qtbot.waitUntil(lambda: bool(errors), timeout=5_000)
    assert isinstance(errors[0], ZeroDivisionError)
    assert workers.error_text(errors[0]).startswith("ZeroDivisionError")
    h.join()

    run_state = RunState()

    def loop(state: workers.TaskState) -> str:
        while not (state.is_stop_requested() and run_state.is_stop_requested()):
            time.sleep(0.005)
        return "stopped"

    h2 = workers.run_in_thread(loop, cancel_state=run_state, name="loop")
    qtbot.waitUntil(h2.is_running, timeout=5_000)
    assert h2 in workers.live_handles()
    assert workers.shutdown_all(5_000) == []
    assert not h2.is_running() and run_state.is_stop_requested()
    assert not workers.live_threads()


def test_input_specs_wait_for_the_window_layout(qtbot: Any, panel: Any, tiny: Path) -> None:
    """While the window lays a big graph out (``wait_for`` cleared), the panel names the model at
    once but reads its inputs only when the layout has settled."""
    gate = threading.Event()
    panel.wait_for = gate
    panel.set_model(str(tiny))
    assert panel.model_label.text() == tiny.name
    qtbot.wait(400)
    assert panel.shapes_table.rowCount() == 0
    with qtbot.waitSignal(panel.sig_model_ready, timeout=10_000):
        gate.set()
    assert panel.shapes_table.rowCount() == 1
