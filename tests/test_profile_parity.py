"""`trtstudio profile M --json` and the Live profile panel's run of the same request give the same
document: the same schema and key structure, the same request settings; figures from their own runs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.gui

ITERATIONS = 60
WARMUP = 3


def structure(obj: Any) -> Any:
    """The key structure of a JSON document: dicts by key (recursively), lists of dicts by their
    first item, every other value as "value" (numbers, strings, None alike)."""
    if isinstance(obj, dict):
        return {str(k): structure(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return ["list", structure(obj[0])] if obj and isinstance(obj[0], dict) else "list"
    return "value"


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    from test_ui_profile import tiny_model

    return tiny_model(tmp_path / "tiny.onnx")


def cli_doc(model: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    from trtstudio.cli import main

    capsys.readouterr()
    # no --shapes: the panel's table shows the plan's 1x32 and sends only what the user changed
    rc = main(["profile", str(model), "--json", "--backend", "ort", "--iterations",
               str(ITERATIONS), "--warmup", str(WARMUP), "--threads", "1", "--per-layer-iterations", "20"])
    captured = capsys.readouterr()
    assert rc == 0
    assert "non-finite" not in captured.err, captured.err  # what a short run lacks is null by design
    return json.loads(captured.out)  # type: ignore[no-any-return]


def panel_doc(qtbot: Any, model: Path) -> dict[str, Any]:
    from trtstudio.ui.profile_panel import ProfilePanel

    panel = ProfilePanel()
    qtbot.addWidget(panel)
    try:
        with qtbot.waitSignal(panel.sig_model_ready, timeout=10_000):
            panel.set_model(str(model))
        panel.backend_combo.setCurrentIndex(panel.backend_combo.findData("ort"))
        panel.count_mode.setCurrentIndex(0)  # iterations
        panel.count_spin.setValue(ITERATIONS)
        panel.warmup_spin.setValue(WARMUP)
        panel.threads_spin.setValue(1)
        panel.layers_spin.setValue(20)
        assert panel.shapes() == {"x": (1, 32)}
        with qtbot.waitSignal(panel.sig_run_finished, timeout=60_000) as blocker:
            panel.start()
        doc = blocker.args[0]
    finally:
        assert panel.shutdown(10_000)
    assert isinstance(doc, dict)
    return json.loads(json.dumps(doc, default=float))  # type: ignore[no-any-return]


def test_cli_and_panel_produce_the_same_document(qtbot: Any, tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli = cli_doc(tiny, capsys)
    gui = panel_doc(qtbot, tiny)
    assert cli["schema"] == gui["schema"] == "trtstudio.profile/1"
    assert structure(gui) == structure(cli)
    # the same request: the settings recorded with each run are equal, value for value
    assert gui["settings"] == cli["settings"]
    sha = hashlib.sha256(tiny.read_bytes()).hexdigest()
    for doc in (cli, gui):
        assert doc["model"] == str(tiny) and doc["model_sha256"] == sha and doc["backend"] == "ort"
        assert doc["shapes"] == {"x": [1, 32]} and doc["error"] is None and not doc["stopped"]
        assert doc["latency_ms"]["count"] == ITERATIONS  # each from its own run
        assert doc["throughput"]["inferences_per_s"] > 0


def test_structure_tells_documents_apart() -> None:
    a = {"schema": "s", "latency_ms": {"count": 1, "p99": 2.0}, "layers": [{"name": "x", "time_ms": 1.0}]}
    assert structure(a) == structure({"schema": "t", "latency_ms": {"count": 5, "p99": None},
                                      "layers": [{"name": "y", "time_ms": 3.0}]})
    assert structure(a) != structure({**a, "latency_ms": {"count": 1}})
    assert structure(a) != structure({**a, "layers": [{"name": "x"}]})


def _file_of_kind(kind: str, tmp_path: Path) -> Path:
    """A real file of each kind: an ONNX model, a TorchScript module, an engine plan's name."""
    if kind == "onnx":
        from test_ui_profile import tiny_model

        return tiny_model(tmp_path / "m.onnx")
    if kind == "torch":
        torch = pytest.importorskip("torch")
        path = tmp_path / "m.pt"
        torch.jit.save(torch.jit.trace(torch.nn.Linear(4, 2).eval(), torch.randn(1, 4)), str(path))
        return path
    path = tmp_path / "m.plan"
    path.write_bytes(b"\0" * 64)  # which backend runs it is decided before it is read
    return path


@pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")
@pytest.mark.parametrize(("kind", "auto"), [("onnx", "ort"), ("torch", "torch"), ("engine", "tensorrt")])
def test_the_same_file_picks_the_same_backend(qtbot: Any, tmp_path: Path, kind: str, auto: str) -> None:
    """`trtstudio profile FILE` on auto, the Live profile panel opening FILE and a scenario of FILE
    pick one backend: the catalogue's default_backend (where the panel can run it here)."""
    from trtstudio.backends.catalogue import default_backend, unavailable_reason
    from trtstudio.cli import build_parser
    from trtstudio.commands.profile import request_from_args
    from trtstudio.profiling.scenario import ModelSpec
    from trtstudio.ui.profile_panel import ProfilePanel

    path = str(_file_of_kind(kind, tmp_path))
    cli = request_from_args(build_parser().parse_args(["profile", path])).backend
    assert cli == default_backend(path) == auto
    assert ModelSpec(path=path).backend_name() == cli
    panel = ProfilePanel()
    qtbot.addWidget(panel)
    try:
        panel.set_model(path)
        picked = panel.backend_combo.currentData()
    finally:
        assert panel.shutdown(30_000)
    if unavailable_reason(cli, path) is None:
        assert picked == cli
    else:  # auto's backend cannot run here: the panel offers one that can, if any
        assert picked == cli or unavailable_reason(picked, path) is None


def test_device_flag_and_panel_selector(qtbot: Any, tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--device`` reaches the request like the panel's Device selector; a device that cannot apply or
    does not exist is one line, exit 2."""
    import importlib.util

    from trtstudio.cli import main
    from trtstudio.ui.profile_panel import ProfilePanel

    # without torch installed the backend itself is what is missing (its pip command is the one line)
    missing_device = "needs CUDA device 63" if importlib.util.find_spec("torch") else "pip install torch"
    for argv, expected in ((["--backend", "ort", "--device", "0"], "--device: backend 'ort' runs on the CPU"),
                           (["--backend", "torch-cuda", "--device", "-1"], "--device: must be 0 or more"),
                           (["--backend", "torch-cuda", "--device", "63"], missing_device)):
        capsys.readouterr()
        rc = main(["profile", str(tiny), "--iterations", "2", *argv])
        err = capsys.readouterr().err.strip()
        assert rc == 2 and err.startswith("error: ") and expected in err and len(err.splitlines()) == 1, err
    panel = ProfilePanel()
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.sig_model_ready, timeout=10_000):
        panel.set_model(str(tiny))
    panel.device_spin.setValue(1)
    panel.backend_combo.setCurrentIndex(panel.backend_combo.findData("ort"))
    assert not panel.device_spin.isEnabled() and panel.request().device is None
    gpu_keys = [k for k in ("torch-cuda", "ort-cuda") if panel.backend_combo.findData(k) >= 0]
    assert gpu_keys
    for key in gpu_keys:
        panel.backend_combo.setCurrentIndex(panel.backend_combo.findData(key))
        assert panel.device_spin.isEnabled() and panel.request().device == 1
    panel.device_spin.setValue(-1)
    assert panel.request().device is None
