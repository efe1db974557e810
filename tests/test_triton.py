"""`trtstudio triton` against a real Triton Inference Server (tritonserver 2.51 from the PyPI wheel
nvidia-pytriton, in its own venv of /usr/bin/python3.11, built once and cached), started by the
fixtures on loopback ports. Skips only where that environment cannot be built."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from html import escape as html_escape
from pathlib import Path
from typing import Any

import numpy as np
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
        # the server saw exactly the requests the client sent, and a request is never faster than its
        # compute: the client's mean against the median of the windows' mean compute (under a loaded
        # machine a skewed window can put that above the client's p50, not far above its mean)
        assert s["server_requests"] == s["requests"]
        assert lat["mean"] * 1000 * 1.2 >= s["server_compute_p50_us"] > 0
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


def _stop_in_second_step(victim: Server, proc: subprocess.Popen[str]) -> None:
    """Stop the server 4 s after it answered the sweep's first request: the first step (3 s, windows
    of 0.5 s) is over, the second is running. Timed from the server's own count of answered requests,
    not from the start of the CLI, whose start-up takes longer on a loaded machine."""
    import time
    import urllib.request

    while proc.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{victim.metrics}/metrics", timeout=2) as r:
                page = r.read().decode()
        except OSError:
            page = ""
        if any(line.startswith('nv_inference_request_success{model="identity"') and not line.endswith(" 0")
               for line in page.splitlines()):
            time.sleep(4.0)
            break
        time.sleep(0.05)
    victim.stop()


def test_server_dying_mid_sweep_keeps_the_steps_measured(tmp_path: Path) -> None:
    victim = _server(tmp_path)
    session, report = tmp_path / "died.json", tmp_path / "died.html"
    try:
        proc = subprocess.Popen([sys.executable, "-m", "trtstudio.cli", "triton", f"127.0.0.1:{victim.http}", "identity",
                                 "--concurrency", "1,2,4,8", "--window", "0.5", "--duration", "3", "--timeout", "3",
                                 "--metrics", "none", "--json", "--session", str(session), "--report", str(report)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        threading.Thread(target=_stop_in_second_step, args=(victim, proc), daemon=True).start()
        out, err = proc.communicate(timeout=120)
    finally:
        victim.stop()
    assert proc.returncode == 1, err
    doc = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-strict JSON: {c}"))
    assert doc["error"] and len(doc["steps"]) >= 1
    assert doc["steps"][0]["requests"] > 0 and not doc["steps"][0].get("error")
    # one line, whether or not the step the server died in got any answer (no warning about its figures)
    said = [line for line in err.strip().splitlines() if not line.startswith("wrote ")]
    assert len(said) == 1 and said[0].startswith("error: ") and "Traceback" not in err, err
    assert json.loads(session.read_text()) == doc and "concurrency 1" in report.read_text()
    r = _compare(str(session), str(session), "--json")
    assert r.returncode == 0, r.stderr


def test_a_step_without_answers_saves_and_reads_back(tmp_path: Path) -> None:
    """A step the server never answered (it died, or every request timed out) has no latency
    figures: the document writes them as null without a warning, and reads back for reports and compare."""
    from trtstudio.triton.report import load_session, write_report, write_session
    from trtstudio.triton.sweep import SweepResult, latency_figures, recommend

    answered = {"index": 0, "concurrency": 1, "batch": 1, "requests": 3, "stable": False, "duration_s": 1.0,
                "throughput": 3.0, "latency_ms": latency_figures(np.asarray([0.010, 0.012, 0.011])), "windows": []}
    none = latency_figures(np.asarray([]))
    assert all(np.isnan(v) for v in none.values())
    silent = {"index": 1, "concurrency": 2, "batch": 1, "requests": 0, "stable": False, "duration_s": 1.0,
              "throughput": 0.0, "latency_ms": none, "error": "timed out",
              "windows": [{"step": 1, "concurrency": 2, "t": 0.5, "requests": 0, "throughput": 0.0,
                           "latency_mean_ms": none["mean"], "latency_ms": none}]}
    result = SweepResult(server={"version": "2.51"}, model={"name": "m"}, settings={}, steps=[answered, silent],
                         recommendation=recommend([answered, silent], None), error="timed out")
    written = write_session(result.to_json(), tmp_path / "s.json")
    doc = load_session(written)
    assert doc["steps"][1]["latency_ms"] == dict.fromkeys(none)
    assert doc["steps"][1]["windows"][0]["latency_mean_ms"] is None
    assert doc["steps"][0]["latency_ms"]["p50"] == pytest.approx(11.0)
    assert np.isnan(silent["latency_ms"]["p50"])  # the sweep's own step is unchanged
    for ext in ("html", "md"):
        assert "concurrency 2" in write_report(doc, tmp_path / f"r.{ext}").read_text()
    r = _compare(str(written), str(written), "--json")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert [st["concurrency"] for st in json.loads(r.stdout)["steps"]] == [1]
    # answered requests, but none inside a measured window (a server slower than the windows):
    # counted, without figures; the session still loads, reports and compares
    late = silent | {"index": 2, "concurrency": 4, "requests": 2, "error": None}
    written = write_session(SweepResult(server={"version": "2.51"}, model={"name": "m"}, settings={},
                                        steps=[answered, late]).to_json(), tmp_path / "late.json")
    assert load_session(written)["steps"][1]["latency_ms"]["p99"] is None
    assert "concurrency 4" in write_report(load_session(written), tmp_path / "late.md").read_text()
    r = _compare(str(written), str(written), "--json")
    assert r.returncode == 0, r.stderr
    late_step = next(st for st in json.loads(r.stdout)["steps"] if st["concurrency"] == 4)
    assert late_step["sessions"][1]["p99_delta_ms"] is None and late_step["sessions"][1]["throughput_delta"] == 0.0


@pytest.mark.gui
def test_window_dialog_sweeps_live(qtbot, server: Server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Profile > Triton Inference Server: the dialog runs the same sweep in a worker and draws it live."""
    pytest.importorskip("PySide6")
    from trtstudio.ui.triton_panel import TritonDialog

    dlg = TritonDialog(url=f"127.0.0.1:{server.http}", model="identity")
    qtbot.addWidget(dlg)
    # the repository browser lists what the server's index says, and picking a model fills the form
    import tritonclient.http as th

    with th.InferenceServerClient(f"127.0.0.1:{server.http}") as c:
        index = c.get_model_repository_index()  # empty under PyTriton: its models are loaded by override
        loaded = c.get_inference_statistics()["model_stats"]
        cfg = c.get_model_config("identity")
    dlg.model_edit.setText("")
    dlg.connect_button.click()
    qtbot.waitUntil(lambda: dlg.models_table.rowCount() > 0 and dlg.start_button.isEnabled(), timeout=60_000)
    listed = [(dlg.models_table.item(r, 0).text(), dlg.models_table.item(r, 2).text())
              for r in range(dlg.models_table.rowCount())]
    assert sorted(n for n, _ in listed) == sorted({m["name"] for m in index} | {m["name"] for m in loaded})
    assert {state for _, state in listed} == {"READY"}
    row = next(r for r, (name, _) in enumerate(listed) if name == "identity")
    dlg.models_table.selectRow(row)
    assert dlg.model_edit.text() == "identity"
    summary = dlg.config_label.text()
    assert f"max_batch_size: {cfg.get('max_batch_size', 0)}" in summary
    assert all(i["name"] in summary for i in cfg["input"])
    dlg.steps_edit.setText("1,2")
    dlg.metrics_edit.setText(f"127.0.0.1:{server.metrics}/metrics")
    dlg.window_spin.setValue(0.3)
    dlg.budget_spin.setValue(1000.0)
    with qtbot.waitSignal(dlg.sig_finished, timeout=120_000) as blocker:
        dlg.start()
        assert not dlg.start_button.isEnabled()
    doc = blocker.args[0]
    assert doc["schema"] == "trtstudio.triton/1" and not doc["error"]
    assert dlg.table.rowCount() == len(doc["steps"]) == 2
    assert [dlg.table.item(r, 1).text() for r in range(2)] == [str(s["requests"]) for s in doc["steps"]]
    panels = dlg.panels
    n_req = sum(s["requests"] for s in doc["steps"])
    x, y = panels.sample_curve.getData()
    assert x is not None and 0 < len(x) <= n_req and np.all(np.diff(x) >= 0)  # every request's latency, in time order
    bx, p50 = panels.p50_curve.getData()
    _, p99 = panels.p99_curve.getData()
    assert bx is not None and len(bx) >= 2 and np.all(p99 >= p50)  # rolling bands
    hx, hy = panels.hist_curve.getData()
    assert hy is not None and int(hy.sum()) <= len(y) and int(hy.sum()) >= 0.99 * len(y)
    tx, rate = panels.throughput_curve.getData()
    assert rate is not None and len(rate) >= 2 and float(rate.max()) > 0
    # the breakdown is stacked: each part's top is at or above the one below, the last is the client mean
    tops = [c.getData()[1] for c in panels.part_curves]
    assert all(np.all(hi >= lo - 1e-9) for lo, hi in zip(tops, tops[1:], strict=False))
    assert len(tops[-1]) >= 2 and float(tops[-1].min()) > 0
    assert panels.gpu_label.text() == "no GPU metrics from this server"  # the CPU server has no GPU series
    assert all(s.get("metrics") for s in doc["steps"])  # /metrics answered: the absence is the server's
    assert panels.gpu_plot.isHidden() and not panels.gpu_label.isHidden()
    assert dlg.export_button.isEnabled()
    page = Path(dlg.export_report(str(tmp_path / "dialog.md"))).read_text()  # the same report as the CLI's
    assert page.count("| concurrency ") == 2 and doc["recommendation"]["reason"] in page
    assert dlg.export_report(str(tmp_path / "dialog.txt")) == "" and "no Triton report format" in dlg.status_label.text()
    out = Path(os.environ.get("TRTSTUDIO_SHOT_DIR", str(tmp_path)))
    dlg.grab().save(str(out / "triton_dialog.png"))
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


def _compare(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trtstudio.cli", "compare", *argv], capture_output=True, text=True,
                          timeout=120)


def test_session_report_and_compare(server: Server, tmp_path: Path) -> None:
    """--session/--report on `trtstudio triton`, then `trtstudio compare` across the two sessions."""
    import tritonclient.http as th

    with th.InferenceServerClient(f"127.0.0.1:{server.http}") as c:
        cfg = c.get_model_config("identity")
    a, b, html, md = (tmp_path / n for n in ("http.json", "grpc.json", "r.html", "r.md"))
    common = ("identity", "--concurrency", "1,2", "--window", "0.3", "--latency-budget", "1000",
              "--metrics", f"127.0.0.1:{server.metrics}/metrics")
    r = _cli(f"127.0.0.1:{server.http}", *common, "--session", str(a), "--report", str(html), "--json")
    assert r.returncode == 0, r.stderr
    printed = json.loads(r.stdout)
    saved = json.loads(a.read_text())
    assert saved == printed and saved["schema"] == "trtstudio.triton/1"
    page = html.read_text()
    assert "<svg" in page and page.count("<polyline") == 3  # p50, p90, p99 curves
    for s in saved["steps"]:
        assert f"<td>concurrency {s['concurrency']}</td><td>{s['requests']}</td>" in page
    assert html_escape(saved["recommendation"]["reason"]) in page
    assert f"max_batch_size: {cfg['max_batch_size']}" in page
    r = _cli(f"127.0.0.1:{server.grpc}", *common, "--protocol", "grpc", "--session", str(b), "--report", str(md))
    assert r.returncode == 0, r.stderr
    other = json.loads(b.read_text())
    text = md.read_text()
    assert "| step |" in text and text.count("| concurrency ") == len(other["steps"])

    r = _compare(str(a), str(b), "--names", "http,grpc", "--json")
    assert r.returncode == 0, r.stderr
    comp = json.loads(r.stdout)
    assert comp["schema"] == "trtstudio.triton-comparison/1" and comp["baseline"] == "http"
    assert [st["concurrency"] for st in comp["steps"]] == [1, 2]
    for st, sa, sb in zip(comp["steps"], saved["steps"], other["steps"], strict=True):
        base, new = st["sessions"]
        assert base["throughput_delta"] == 0.0
        assert new["throughput_delta"] == pytest.approx(sb["throughput"] - sa["throughput"])
        assert new["p99_delta_ms"] == pytest.approx(sb["latency_ms"]["p99"] - sa["latency_ms"]["p99"])
    assert [s["recommendation"] for s in comp["sessions"]] == [saved["recommendation"], other["recommendation"]]
    r = _compare(str(a), str(b))
    assert r.returncode == 0 and "recommendations:" in r.stdout and "concurrency 2" in r.stdout

    broken = tmp_path / "broken.json"
    broken.write_text('{"schema": "trtstudio.triton/1", "steps": [')
    notours = tmp_path / "other.json"
    notours.write_text(json.dumps({"schema": "trtstudio.report/1"}))
    for bad, why in ((broken, "cannot read Triton session JSON"), (notours, "not a Triton session")):
        r = _compare(str(a), str(bad))
        assert r.returncode == 2 and r.stdout == ""
        assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"error: {bad}: ") and why in r.stderr
    r = _cli(f"127.0.0.1:{server.http}", "identity", "--report", str(tmp_path / "r.txt"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no Triton report format" in r.stderr


@pytest.mark.gui
def test_gpu_panel_draws_metrics_when_the_server_has_them(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The tests' server runs on the CPU; a GPU server's /metrics page (Triton's own series names)
    goes through the same parser and the panel plots it per step instead of the 'no GPU' line."""
    pytest.importorskip("PySide6")
    from trtstudio.triton.client import parse_metrics
    from trtstudio.ui.triton_live import TritonLivePanels

    rng = np.random.default_rng(0)
    panels = TritonLivePanels()
    qtbot.addWidget(panels)
    utils = rng.uniform(0.1, 0.9, 3)
    for i, u in enumerate(utils):
        page = (f'nv_gpu_utilization{{gpu_uuid="GPU-1"}} {u}\n'
                f'nv_gpu_memory_used_bytes{{gpu_uuid="GPU-1"}} {(i + 1) * 2**30}\n'
                f'nv_gpu_power_usage{{gpu_uuid="GPU-1"}} {100 + i}\n'
                f'nv_inference_count{{model="other",version="1"}} 5\n')
        panels.add_step({"index": i, "concurrency": i + 1, "requests": 10, "throughput": 100.0 * (i + 1),
                         "latency_ms": {"p50": 1.0, "p90": 2.0, "p99": 3.0}, "metrics": parse_metrics(page, "m")})
    assert not panels.gpu_plot.isHidden()
    _, y = panels.gpu_curves["GPU utilisation"].getData()
    assert np.allclose(y, 100 * utils)
    _, mem = panels.gpu_curves["GPU memory"].getData()
    assert list(mem) == [1.0, 2.0, 3.0]
    assert "GPU power 102 W" in panels.gpu_label.text()
