"""`trtstudio triton` against a real Triton Inference Server (tritonserver 2.51 from the PyPI wheel
nvidia-pytriton, in its own venv of /usr/bin/python3.11, built once and cached), started by the
fixtures on loopback ports. Skips only where that environment cannot be built."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.triton, pytest.mark.timeout(900)]
pytest.importorskip("tritonclient.http")

from triton_server import Server, Unavailable, free_ports  # noqa: E402


def _server(path: Path) -> Server:
    try:
        return Server(path)
    except Unavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    s = _server(tmp_path_factory.mktemp("triton"))
    yield s
    s.stop()


def _cli(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trtstudio.cli", "triton", *argv], capture_output=True, text=True,
                          timeout=timeout)


def test_concurrency_sweep_over_http(server: Server) -> None:
    r = _cli(f"127.0.0.1:{server.http}", "mobilenet", "--concurrency", "1,2", "--window", "0.5", "--latency-budget",
             "1000", "--metrics", f"http://127.0.0.1:{server.metrics}/metrics", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"non-strict JSON: {c}"))
    assert doc["schema"] == "trtstudio.triton/1"
    assert doc["server"]["version"] and doc["model"]["name"] == "mobilenet" and doc["model"]["max_batch_size"] == 8
    assert [s["concurrency"] for s in doc["steps"]] == [1, 2]
    for s in doc["steps"]:
        assert s["requests"] > 0 and s["throughput"] > 0
        lat = s["latency_ms"]
        assert lat["p50"] <= lat["p90"] <= lat["p95"] <= lat["p99"]
        assert set(s["server_us"]) >= {"queue", "compute_input", "compute_infer", "compute_output"}
        # the server saw exactly the requests the client sent, and a request is never faster than its compute
        assert s["server_requests"] == s["requests"]
        assert lat["p50"] * 1000 >= s["server_compute_p50_us"]
    rec = doc["recommendation"]
    assert rec["value"] in (1, 2) and rec["throughput"] == max(s["throughput"] for s in doc["steps"])


def test_grpc_and_text_output(server: Server) -> None:
    r = _cli(f"grpc://127.0.0.1:{server.grpc}", "identity", "--concurrency", "2", "--window", "0.3", "--metrics", "none")
    assert r.returncode == 0, r.stderr
    assert "identity" in r.stdout and "conc" in r.stdout and "recommendation: concurrency 2" in r.stdout


@pytest.mark.parametrize("argv, expected", [
    (["{http}", "no_such_model"], "no_such_model"),
    (["{http}", "mobilenet", "--version", "7"], "version 7"),
    (["127.0.0.1:{closed}", "mobilenet"], "refused"),
    (["not a url!", "mobilenet"], "not a server URL"),
])
def test_bad_targets_are_one_line(server: Server, argv: list[str], expected: str) -> None:
    closed = free_ports(1)[0]
    argv = [a.format(http=f"127.0.0.1:{server.http}", closed=closed) for a in argv]
    r = _cli(*argv, timeout=60)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_server_dying_mid_sweep_keeps_the_steps_measured(tmp_path: Path) -> None:
    victim = _server(tmp_path)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "trtstudio.cli", "triton", f"127.0.0.1:{victim.http}", "identity",
                                 "--concurrency", "1,2,4,8", "--window", "0.5", "--duration", "3", "--timeout", "3",
                                 "--metrics", "none", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        threading.Timer(4.5, victim.stop).start()  # during the second step
        out, err = proc.communicate(timeout=120)
    finally:
        victim.stop()
    assert proc.returncode == 1, err
    doc = json.loads(out)
    assert doc["error"] and len(doc["steps"]) >= 1
    assert doc["steps"][0]["requests"] > 0 and not doc["steps"][0].get("error")
    assert err.strip().startswith("error: ") and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.gui
def test_window_dialog_sweeps_live(qtbot, server: Server) -> None:  # type: ignore[no-untyped-def]
    """Profile > Triton Inference Server: the dialog runs the same sweep in a worker and draws it live."""
    pytest.importorskip("PySide6")
    from trtstudio.ui.triton_panel import TritonDialog

    dlg = TritonDialog(url=f"127.0.0.1:{server.http}", model="identity")
    qtbot.addWidget(dlg)
    dlg.steps_edit.setText("1,2")
    dlg.window_spin.setValue(0.3)
    dlg.budget_spin.setValue(1000.0)
    with qtbot.waitSignal(dlg.sig_finished, timeout=120_000) as blocker:
        dlg.start()
        assert not dlg.start_button.isEnabled()
    doc = blocker.args[0]
    assert doc["schema"] == "trtstudio.triton/1" and not doc["error"]
    assert dlg.table.rowCount() == len(doc["steps"]) == 2
    assert [dlg.table.item(r, 1).text() for r in range(2)] == [str(s["requests"]) for s in doc["steps"]]
    x, _ = dlg.p50_curve.getData()
    assert x is not None and len(x) >= 2  # one point per measurement window, drawn while it ran
    assert "Recommendation: concurrency" in dlg.recommendation_label.text()
    assert dlg.start_button.isEnabled()
    dlg.steps_edit.setText("0,x")
    dlg.start()
    assert "comma-separated list of numbers" in dlg.status_label.text() and "0,x" in dlg.status_label.text()
    dlg.steps_edit.setText("0,1")
    dlg.start()
    assert "positive numbers" in dlg.status_label.text() and dlg.start_button.isEnabled()
    dlg.url_edit.setText(f"127.0.0.1:{free_ports(1)[0]}")
    dlg.steps_edit.setText("1")
    with qtbot.waitSignal(dlg.sig_finished, timeout=60_000) as blocker:
        dlg.start()
    assert "refused" in blocker.args[0]["error"] and "refused" in dlg.status_label.text()
