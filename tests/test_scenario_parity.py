"""`trtstudio scenario ... --json` and the scenario dialog build the same ScenarioRequest from the same
settings, refuse the same bad ones, and their runs of it give documents of the same structure."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from test_profile_parity import structure
from test_profiling_runner import matmul_model

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def light(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return matmul_model(tmp_path_factory.mktemp("par") / "light.onnx", size=64, depth=2)


def cli_request(argv: list[str]) -> Any:
    from trtstudio.commands import scenario as cmd

    parser = argparse.ArgumentParser()
    cmd.configure(parser)
    return cmd.request_from_args(parser.parse_args(argv))


def dialog(qtbot: Any, model: Path, **form: Any) -> Any:
    from trtstudio.ui.scenario_dialog import ScenarioDialog

    dlg = ScenarioDialog(models=[str(model), str(model)])
    qtbot.addWidget(dlg)
    for name, value in form.items():
        widget = getattr(dlg, name)
        widget.setCurrentText(value) if isinstance(value, str) else widget.setValue(value)
    return dlg


@pytest.mark.parametrize("kind, argv, form", [
    ("contention", ["--isolation", "thread", "--iterations", "40", "--warmup", "2", "--cpu-load-ms", "0.5"],
     {"isolation": "thread", "iterations": 40, "warmup": 2, "cpu_load": 0.5}),
    ("cycles", ["--cycles", "3", "--inferences", "4"], {"cycles": 3, "inferences": 4}),
    ("coldstart", [], {}),
])
def test_cli_and_dialog_build_the_same_request(qtbot: Any, light: Path, kind: str, argv: list[str],
                                               form: dict[str, Any]) -> None:
    cli = cli_request([kind, str(light), str(light), *argv])
    dlg = dialog(qtbot, light, kind=kind, **form)
    gui = dlg.request()
    # the fields a kind uses are equal; minutes/window keep each front end's default for other kinds
    assert {k: v for k, v in gui.settings().items() if k not in ("minutes", "window_s")} == \
           {k: v for k, v in cli.settings().items() if k not in ("minutes", "window_s")}
    assert [s.backend_name() for s in gui.specs()] == [s.backend_name() for s in cli.specs()] == ["ort", "ort"]


def test_both_refuse_shared_streams_between_processes(qtbot: Any, light: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from trtstudio.cli import main

    assert main(["scenario", "contention", str(light), "--streams", "shared", "--isolation", "process"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: --streams: a CUDA stream is shared only between threads of one process: use isolation thread"
    dlg = dialog(qtbot, light, kind="contention", isolation="process", streams="shared")
    assert not dlg.start()
    assert dlg.status.text() == "error: Streams: a CUDA stream is shared only between threads of one process: use isolation thread"
    # without --isolation, shared streams pick threads
    assert cli_request(["contention", str(light), "--streams", "shared"]).isolation == "thread"


def test_cli_and_dialog_runs_give_the_same_document(qtbot: Any, light: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from trtstudio.cli import main

    capsys.readouterr()
    assert main(["scenario", "contention", str(light), str(light), "--iterations", "30", "--warmup", "1", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    dlg = dialog(qtbot, light, kind="contention", iterations=30, warmup=1)
    with qtbot.waitSignal(dlg.sig_finished, timeout=60_000) as blocker:
        assert dlg.start()
    assert dlg.stop()  # the worker's thread ends just after it hands the result over: wait for it
    gui = json.loads(json.dumps(blocker.args[0].to_json()))
    assert cli["schema"] == gui["schema"] == "trtstudio.scenario/1"
    assert cli["isolation"] == gui["isolation"] == "process"
    drop = ("causes", "together_processes")  # causes are listed only where a slowdown was measured
    assert structure(_without(gui, drop)) == structure(_without(cli, drop))


def _without(doc: Any, keys: tuple[str, ...]) -> Any:
    if isinstance(doc, dict):
        return {k: _without(v, keys) for k, v in doc.items() if k not in keys}
    if isinstance(doc, list):
        return [_without(v, keys) for v in doc]
    return doc
