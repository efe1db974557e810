"""Scenario dialog, timeline view and per-GPU panels: real widgets (pytest-qt), real ORT scenarios."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_profiling_runner import matmul_model

pytestmark = pytest.mark.gui

from trtstudio.profiling.scenario_devices import GpuInfo, GpuSampler  # noqa: E402
from trtstudio.profiling.timeline import COMPUTE, D2H, H2D, Timeline  # noqa: E402


@pytest.fixture(scope="module")
def light(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return matmul_model(tmp_path_factory.mktemp("ui") / "light.onnx", size=64, depth=2)


def synthetic_timeline(n: int = 30_000, rows: int = 3) -> Timeline:
    tl = Timeline(capacity=n * 3)
    ids = [tl.add_row(f"m{i} (stream)", "cuda:0") for i in range(rows)]
    t = np.zeros(rows)
    for i in range(n):
        r = i % rows
        a = t[r] + 0.01
        tl.add_stages(ids[r], (a, a + 0.02, a + 0.3, a + 0.32), i)
        t[r] = a + 0.32
    return tl


def test_timeline_view_draws_visible_intervals_and_navigates(qtbot) -> None:  # type: ignore[no-untyped-def]
    from trtstudio.ui.timeline_view import TimelineView

    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(900, 300)
    view.show()
    qtbot.waitExposed(view)
    tl = synthetic_timeline()
    view.set_timeline(tl)
    qtbot.wait(20)
    x0, x1 = view.x_range()
    assert x0 <= 0.05 and x1 >= 3000  # fitted to the whole run
    view.plot.viewport().repaint()
    far = view.item.drawn
    assert 0 < far <= 3 * 3 * 900  # merged per pixel column: bounded by the view's pixels
    view.set_x_range(100.0, 101.0)  # ~3 inferences per row
    view.plot.viewport().repaint()
    assert 3 * 3 * 2 <= view.item.drawn <= 3 * 3 * 5
    view.pan(0.5)
    assert view.x_range() == pytest.approx((100.5, 101.5))
    view.zoom(2.0)
    assert view.x_range() == pytest.approx((100.75, 101.25))
    assert "30,000" not in view.info.text() and "90,000 intervals on 3 rows" in view.info.text()
    img = view.grab()
    assert not img.isNull()


def test_timeline_view_live_refresh(qtbot) -> None:  # type: ignore[no-untyped-def]
    from trtstudio.ui.timeline_view import TimelineView

    view = TimelineView()
    qtbot.addWidget(view)
    tl = Timeline(100)
    r = tl.add_row("w (worker)", "cpu")
    view.set_timeline(tl, live=True)
    assert "0 intervals" in view.info.text()
    tl.add(r, COMPUTE, 0.0, 1.0)
    tl.add(r, H2D, 1.0, 2.0)
    qtbot.waitUntil(lambda: "2 intervals" in view.info.text(), timeout=3000)
    view.stop_live()
    assert not view.timer.isActive() and D2H == 2


def test_gpu_panel_one_plot_per_gpu(qtbot) -> None:  # type: ignore[no-untyped-def]
    from trtstudio.ui.gpu_panel import DevicePicker, GpuMemoryPanel

    gpus = [GpuInfo(i, "H200", 140 << 30) for i in range(2)]

    def read(index: int) -> dict[str, float]:
        return {"used_bytes": float((index + 1) << 30), "total_bytes": float(140 << 30), "util_percent": 40.0}

    sampler = GpuSampler(gpus, read=read)
    for _ in range(5):
        sampler.sample()
    panel = GpuMemoryPanel()
    qtbot.addWidget(panel)
    panel.set_sampler(sampler, start_timer=False)
    assert sorted(panel.plots) == [0, 1]
    x, y = panel.curves[1][0].getData()
    assert len(x) == 5 and y[-1] == pytest.approx(2.0)
    assert panel.titles[0].text() == "GPU 0: H200 (140 GiB): 1.0 GiB used, 40% busy"
    panel.set_sampler(GpuSampler([], read=read))
    assert panel.plots == {} and not panel._empty.isHidden()
    picker = DevicePicker(gpus)
    qtbot.addWidget(picker)
    assert picker.count() == 3 and picker.device() is None
    picker.set_device(1)
    assert picker.device() == 1
    picker.set_gpus(gpus[:1])  # GPU 1 gone: back to the default
    assert picker.device() is None


def test_dialog_runs_contention_with_live_curves(qtbot, light: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from trtstudio.ui.scenario_dialog import ScenarioDialog

    dlg = ScenarioDialog(models=[str(light), str(light)])
    qtbot.addWidget(dlg)
    dlg.iterations.setValue(200)
    dlg.warmup.setValue(2)
    with qtbot.waitSignal(dlg.sig_finished, timeout=30_000) as blocker:
        assert dlg.start()
        assert not dlg.start()  # one at a time
    assert dlg.stop()  # its worker thread ends just after the result
    result = blocker.args[0]
    assert result.failure is None and [m["model"] for m in result.models] == ["light.onnx", "light.onnx #2"]
    assert set(dlg.curves) == {"light.onnx", "light.onnx #2"}
    x = dlg.curves["light.onnx #2"].xData  # all the data (getData() is what is drawn: clipped, decimated)
    assert x is not None and len(x) == result.models[1]["alone"]["count"] + result.models[1]["together"]["count"]
    assert "slowdown" in dlg.text.toPlainText() and dlg.status.text() == "finished"
    assert "intervals on 2 rows" in dlg.timeline.info.text()
    # each model's slowdown in words: its top cause, or that there was none
    doc = result.to_json()
    assert doc["isolation"] == "process" and dlg.why.text().count("light.onnx") == 2
    for m in doc["models"]:
        causes = m["slowdown"]["causes"]
        assert ("slower together, mostly" in dlg.why.text()) if causes else ("no slowdown" in dlg.why.text())
    dlg.grab().save(str(tmp_path / "scenario_dialog.png"))


def test_dialog_stop_keeps_cycles_measured(qtbot, light: Path) -> None:  # type: ignore[no-untyped-def]
    from trtstudio.ui.scenario_dialog import ScenarioDialog

    dlg = ScenarioDialog(models=[str(light)])
    qtbot.addWidget(dlg)
    dlg.kind.setCurrentText("cycles")
    dlg.cycles.setValue(100_000)
    dlg.inferences.setValue(5)
    with qtbot.waitSignal(dlg.sig_finished, timeout=30_000) as blocker:
        assert dlg.start()
        qtbot.waitUntil(lambda: len(dlg.state.cycles) >= 3, timeout=20_000)  # type: ignore[union-attr]
        dlg._on_stop_clicked()
    result = blocker.args[0]
    assert result.stopped and len(result.cycles) >= 3
    assert dlg.status.text().startswith("stopped")
    x = dlg.curves["host_rss_bytes"].xData
    assert x is not None and len(x) >= 3


def test_dialog_refuses_missing_files_and_close_joins(qtbot, light: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from trtstudio.ui.scenario_dialog import ScenarioDialog

    dlg = ScenarioDialog()
    qtbot.addWidget(dlg)
    assert not dlg.start() and dlg.status.text() == "error: Models: add at least one model"
    dlg.add_models([str(tmp_path / "gone.onnx")])
    assert not dlg.start() and "no such file" in dlg.status.text()
    dlg.models.clear()
    dlg.add_models([str(light)])
    dlg.kind.setCurrentText("soak")
    dlg.minutes.setValue(10)
    assert dlg.start()
    qtbot.waitUntil(lambda: dlg.state is not None and dlg.state.live.get("light.onnx") is not None
                    and dlg.state.live["light.onnx"].count > 10, timeout=20_000)
    dlg.close()  # stops the soak and joins its worker
    assert not dlg.is_running()


def test_dialog_shows_the_runs_sampler_and_starts_none(qtbot) -> None:  # type: ignore[no-untyped-def]
    from trtstudio.profiling.scenario import ScenarioState
    from trtstudio.ui.scenario_dialog import ScenarioDialog

    dlg = ScenarioDialog()
    qtbot.addWidget(dlg)
    assert dlg.gpus.sampler is None  # nothing sampled before a run
    dlg.state = ScenarioState()
    sampler = GpuSampler([GpuInfo(0, "H200", 140 << 30)], read=lambda i: {"used_bytes": 1.0, "util_percent": 5.0})
    dlg.state.gpu_sampler = sampler  # what run_contention puts there for a GPU model
    dlg._on_timer_timeout()
    assert dlg.gpus.sampler is sampler
    dlg.gpus.stop()


def test_dialog_imports_nothing_from_the_cli_layer() -> None:
    import ast

    import trtstudio.ui.scenario_dialog as mod

    tree = ast.parse(Path(mod.__file__).read_text())
    names = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
    names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert names and not [n for n in names if n.startswith("trtstudio.commands")]
