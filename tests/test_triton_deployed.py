"""`trtstudio triton` against Triton as deployed: a real PyTriton 0.7.0 server (tritonserver 2.51)
with its default API restrictions (repository index and statistics need a token it generates),
and one with a token set and TLS (gRPC TLS by tritonserver itself, HTTPS through a TLS-terminating
proxy on loopback, as deployments put one in front of Triton's HTTP port). All traffic is to
127.0.0.1. Skips only where the PyTriton environment cannot be built."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.triton, pytest.mark.timeout(900)]
pytest.importorskip("tritonclient.http")

from tls_loopback import TlsTerminator, make_certs  # noqa: E402
from triton_server import Server, Unavailable  # noqa: E402

from trtstudio.errors import FieldError  # noqa: E402
from trtstudio.triton.request import TritonRequest  # noqa: E402

TOKEN = "tok-3f9c2a7e-do-not-write"  # the guarded server's access token
GRPC_TOKEN_HEADER = "triton-grpc-protocol-triton-access-token"  # Triton's name for it on gRPC


def _server(path: Path, **kw: Any) -> Server:
    try:
        return Server(path, **kw)
    except Unavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def pytriton(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """PyTriton's defaults: shared-memory, model-repository, statistics, trace and logging restricted."""
    s = _server(tmp_path_factory.mktemp("pytriton"), security="pytriton")
    assert s.token  # PyTriton generated one (the tests read it from the server's log)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory, certs: tuple[Path, Path, Path]) -> Any:
    """PyTriton's restrictions and the metadata API too (PyTriton itself needs the health API open),
    with a token set; gRPC TLS, and HTTPS through a TLS terminator."""
    _, cert, key = certs
    s = _server(tmp_path_factory.mktemp("guarded"), security=f"token={TOKEN}", grpc_tls=(cert, key),
                restrict_more="metadata")
    proxy = TlsTerminator(s.http, cert, key)
    s.https = proxy.port  # type: ignore[attr-defined]
    yield s
    proxy.close()
    s.stop()


def _cli(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trtstudio.cli", "triton", *argv], capture_output=True, text=True,
                          timeout=timeout)


def _doc(r: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"non-strict JSON: {c}"))


def _metrics(s: Server) -> str:
    return f"http://127.0.0.1:{s.metrics}/metrics"


def test_the_server_restricts_what_pytriton_restricts(pytriton: Server) -> None:
    """The premise, read with tritonclient: index and statistics refused, metadata/config/metrics answer."""
    import urllib.request

    import tritonclient.http as th
    from tritonclient.utils import InferenceServerException

    with th.InferenceServerClient(f"127.0.0.1:{pytriton.http}") as c:
        for call in (c.get_model_repository_index, c.get_inference_statistics):
            with pytest.raises(InferenceServerException, match="restricted") as info:
                call()
            assert info.value.status() == "403"
        assert c.get_model_metadata("identity")["name"] == "identity" and c.get_model_config("identity")["name"]
        assert c.get_inference_statistics(headers={"triton-access-token": pytriton.token})["model_stats"]
    with urllib.request.urlopen(_metrics(pytriton), timeout=5) as r:
        assert 'nv_inference_queue_duration_us{model="identity"' in r.read().decode()


def test_default_pytriton_server_sweeps_with_the_metrics_breakdown(pytriton: Server) -> None:
    doc = _doc(_cli(f"127.0.0.1:{pytriton.http}", "mobilenet", "--concurrency", "1,2", "--window", "0.4",
                    "--metrics", _metrics(pytriton), "--json"))
    assert doc["breakdown_source"] == "metrics" and not doc["error"]
    index_note, stats_note = doc["notes"]
    assert index_note.startswith("repository index skipped") and "triton-access-token" in index_note
    assert "statistics API is restricted" in stats_note and _metrics(pytriton) in stats_note
    assert [s["concurrency"] for s in doc["steps"]] == [1, 2]
    for s in doc["steps"]:
        # the counters saw every request the client saw answered, and the phases fit inside the client's mean
        assert s["server_requests"] == s["requests"] > 0
        us = s["server_us"]
        assert us["compute_infer"] > 0 and us["queue"] >= 0
        assert us["queue"] + s["server_compute_p50_us"] <= s["latency_ms"]["mean"] * 1e3 * 1.5
        # a request's time on the server holds its queue and compute phases (whole µs each in the counters)
        assert us["request"] + 4 >= us["queue"] + us["compute_input"] + us["compute_infer"] + us["compute_output"]
        assert all(w["server"]["requests"] >= 0 for w in s["windows"] if "server" in w)


def test_without_metrics_the_breakdown_is_left_out_and_nothing_fails(pytriton: Server) -> None:
    r = _cli(f"grpc://127.0.0.1:{pytriton.grpc}", "identity", "--concurrency", "2", "--window", "0.3",
             "--metrics", "none")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "server breakdown from: none" in r.stdout and "the server breakdown is left out" in r.stdout
    assert "triton-grpc-protocol-triton-access-token" in r.stdout  # the server's own words on what it expects
    row = next(line for line in r.stdout.splitlines() if line.startswith("conc"))
    assert row.split()[-3:-1] == ["-", "-"]  # no queue or compute figures
    doc = _doc(_cli(f"grpc://127.0.0.1:{pytriton.grpc}", "identity", "--window", "0.3", "--metrics", "none", "--json"))
    assert doc["breakdown_source"] is None and doc["steps"][0]["requests"] > 0
    assert "server_us" not in doc["steps"][0] and doc["recommendation"]["value"] == 1


def _three_free_ports(start: int = 18300) -> tuple[int, int, int]:
    """HTTP, gRPC and metrics ports in a row (PyTriton's own offsets), from ``start`` up."""
    import socket

    for base in range(start, start + 300, 3):
        socks = [socket.socket() for _ in range(3)]
        try:
            for i, sock in enumerate(socks):
                sock.bind(("127.0.0.1", base + i))
            return base, base + 1, base + 2
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()
    pytest.skip(f"no three free ports in a row from {start}")


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def own_ports(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """PyTriton's restrictions on ports of its own (HTTP 18300, metrics 18302 where free), not 8000-8002."""
    s = _server(tmp_path_factory.mktemp("own-ports"), security="pytriton", ports=_three_free_ports())
    yield s
    s.stop()


def test_metrics_candidates_keep_the_default_offset() -> None:
    from trtstudio.triton.client import metrics_candidates, metrics_url

    assert metrics_candidates("localhost:18300") == ["http://localhost:18302/metrics", "http://localhost:8002/metrics"]
    assert metrics_candidates("10.0.0.5:18301", "grpc") == ["http://10.0.0.5:18302/metrics", "http://10.0.0.5:8002/metrics"]
    assert metrics_candidates("h:8000") == ["http://h:8002/metrics"] == metrics_candidates("h:8001", "grpc")
    assert metrics_url("h:18300") == "http://h:8002/metrics" and metrics_url("h:1", "m:9/metrics") == "http://m:9/metrics"


def test_a_server_on_its_own_ports_finds_its_metrics_page(own_ports: Server) -> None:
    """No --metrics: the page at the HTTP port + 2 (and for gRPC, its port + 1) gives the breakdown."""
    page = _metrics(own_ports)
    assert own_ports.metrics == own_ports.http + 2 and _answers(page)
    for url in (f"127.0.0.1:{own_ports.http}", f"grpc://127.0.0.1:{own_ports.grpc}"):
        doc = _doc(_cli(url, "identity", "--concurrency", "2", "--window", "0.3", "--json"))
        assert doc["breakdown_source"] == "metrics" and not doc["error"], doc["notes"]
        assert doc["settings"]["metrics_url"] == page and page in doc["notes"][-1]
        assert doc["steps"][0]["server_requests"] == doc["steps"][0]["requests"] > 0
        assert "metrics" in doc["steps"][0]  # the GPU/counter figures of the step came from the page found


def test_no_metrics_page_found_says_which_were_tried_and_names_the_flag(pytriton: Server) -> None:
    """The default fixture's metrics port is a free one, not HTTP + 2: with nothing on 8002 either,
    the note names both pages tried and --metrics; given with --metrics, the same server's page works."""
    tried = [f"http://127.0.0.1:{pytriton.http + 2}/metrics", "http://127.0.0.1:8002/metrics"]
    if pytriton.metrics == pytriton.http + 2 or any(_answers(u) for u in tried):
        pytest.skip("a metrics page answers at one of the default places here")
    r = _cli(f"127.0.0.1:{pytriton.http}", "identity", "--window", "0.3")
    assert r.returncode == 0 and "server breakdown from: none" in r.stdout, r.stderr
    note = " ".join(r.stdout.split())
    assert f"no metrics page answered at {tried[0]} or {tried[1]}" in note and "--metrics URL" in note
    doc = _doc(_cli(f"127.0.0.1:{pytriton.http}", "identity", "--window", "0.3", "--metrics",
                    f"127.0.0.1:{pytriton.metrics}/metrics", "--json"))
    assert doc["breakdown_source"] == "metrics" and doc["settings"]["metrics_url"] == _metrics(pytriton)


def test_metrics_counters_agree_with_the_statistics_api(pytriton: Server) -> None:
    """The fallback's figures are the statistics API's: read both from the idle server after load."""
    import tritonclient.http as th

    from trtstudio.triton.client import metrics_statistics, parse_statistics, scrape_metrics

    _doc(_cli(f"127.0.0.1:{pytriton.http}", "identity", "--concurrency", "4", "--window", "0.3", "--metrics", "none",
              "--json"))
    with th.InferenceServerClient(f"127.0.0.1:{pytriton.http}") as c:
        api = parse_statistics(c.get_inference_statistics("identity", headers={"triton-access-token": pytriton.token}),
                               "identity")
    counters = metrics_statistics(scrape_metrics(_metrics(pytriton), "identity"))
    assert counters is not None
    n = api["success"][0]
    assert n > 0 and counters["success"][0] == n and counters["execution_count"] == api["execution_count"]
    for phase in ("queue", "compute_input", "compute_infer", "compute_output"):
        # the metrics count whole µs per request, the statistics ns
        assert abs(counters[phase][1] - api[phase][1]) <= n * 1000, phase


def _secret_free(token: str, *texts: str) -> None:
    for text in texts:
        assert token not in text


def test_the_token_opens_the_apis_and_is_never_written(pytriton: Server, tmp_path: Path) -> None:
    token = pytriton.token
    session, html, md, js = (tmp_path / n for n in ("s.json", "r.html", "r.md", "r.json"))
    r = _cli(f"127.0.0.1:{pytriton.http}", "identity", "--concurrency", "1,2", "--window", "0.3",
             "--metrics", _metrics(pytriton), "--header", f"triton-access-token={token}", "--header",
             "x-team=perf", "--json", "--session", str(session), "--report", str(html))
    doc = _doc(r)
    assert doc["breakdown_source"] == "statistics" and doc["notes"] == []
    assert doc["settings"]["connection"] == {"ssl": False, "ca": None, "headers": ["triton-access-token", "x-team"]}
    assert all(s["server_requests"] == s["requests"] for s in doc["steps"])
    r2 = _cli(f"127.0.0.1:{pytriton.http}", "identity", "--window", "0.3", "--header", f"triton-access-token={token}",
              "--report", str(md))
    r3 = _cli(f"127.0.0.1:{pytriton.http}", "identity", "--window", "0.3", "--header", f"triton-access-token={token}",
              "--report", str(js))
    assert r2.returncode == r3.returncode == 0, r2.stderr + r3.stderr
    assert "headers sent: triton-access-token" in md.read_text() and "triton-access-token" in html.read_text()
    _secret_free(token, r.stdout, r.stderr, r2.stdout, r2.stderr, r3.stdout, r3.stderr,
                 *(p.read_text() for p in (session, html, md, js)))
    cmp = subprocess.run([sys.executable, "-m", "trtstudio.cli", "compare", str(session), str(js), "--json"],
                         capture_output=True, text=True, timeout=120)
    assert cmp.returncode == 0, cmp.stderr
    _secret_free(token, cmp.stdout)


def test_https_and_grpc_tls_with_a_token(guarded: Server, certs: tuple[Path, Path, Path]) -> None:
    ca = str(certs[0])
    https = _doc(_cli(f"https://127.0.0.1:{guarded.https}", "identity", "--concurrency", "1,2",  # type: ignore[attr-defined]
                      "--window", "0.3", "--ca", ca, "--header", f"triton-access-token={TOKEN}",
                      "--metrics", _metrics(guarded), "--json"))
    assert https["settings"]["connection"] == {"ssl": True, "ca": ca, "headers": ["triton-access-token"]}
    assert https["breakdown_source"] == "statistics" and https["notes"] == []
    assert all(s["server_requests"] == s["requests"] > 0 for s in https["steps"])
    grpcs = _doc(_cli(f"127.0.0.1:{guarded.grpc}", "identity", "--protocol", "grpc", "--ssl", "--ca", ca,
                      "--header", f"{GRPC_TOKEN_HEADER}={TOKEN}", "--window", "0.3", "--metrics", "none", "--json"))
    assert grpcs["breakdown_source"] == "statistics" and grpcs["steps"][0]["server_requests"] == grpcs["steps"][0]["requests"]
    # no token: the same TLS sweep does without the statistics (metrics counters instead)
    open_ = _doc(_cli(f"grpcs://127.0.0.1:{guarded.grpc}", "identity", "--ca", ca, "--window", "0.3",
                      "--metrics", _metrics(guarded), "--json"))
    assert open_["breakdown_source"] == "metrics" and open_["settings"]["connection"]["ssl"] is True
    # ...and without the metadata API: the server's facts are left empty, the model's config serves
    skipped = {n.split(" skipped")[0] for n in open_["notes"] if " skipped: " in n}
    assert skipped == {"server metadata", "repository index", "model 'identity' metadata"}, open_["notes"]
    assert open_["server"]["version"] == "" and open_["model"]["max_batch_size"] == 64
    assert all(s["server_requests"] == s["requests"] > 0 for s in open_["steps"])
    plain = _doc(_cli(f"https://127.0.0.1:{guarded.https}", "identity", "--ca", ca, "--window", "0.3",  # type: ignore[attr-defined]
                      "--metrics", "none", "--json"))
    assert plain["breakdown_source"] is None and plain["steps"][0]["requests"] > 0
    assert "server metadata skipped" in " ".join(plain["notes"]) and plain["model"]["inputs"][0]["name"] == "INPUT0"
    _secret_free(TOKEN, json.dumps(https), json.dumps(grpcs))


@pytest.mark.parametrize("argv, expected", [
    (["https://127.0.0.1:{https}", "identity"], "CERTIFICATE_VERIFY_FAILED"),  # the system's CAs do not know ours
    (["grpcs://127.0.0.1:{grpc}", "identity"], "CERTIFICATE_VERIFY_FAILED"),
    (["127.0.0.1:{grpc}", "identity", "--protocol", "grpc"], "127.0.0.1:"),  # plain gRPC to a TLS port
])
def test_tls_failures_are_one_line(guarded: Server, argv: list[str], expected: str) -> None:
    argv = [a.format(https=guarded.https, grpc=guarded.grpc) for a in argv]  # type: ignore[attr-defined]
    r = _cli(*argv, "--window", "0.3", "--timeout", "5", timeout=120)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], r.stderr


@pytest.mark.parametrize("argv, expected", [
    (["--header", "Authorization: Bearer SECRET-VALUE-1"], "--header: give NAME=VALUE"),
    (["--header", "bad name=SECRET-VALUE-1"], "--header: give NAME=VALUE"),
    (["--ca", "/no/such/ca.pem"], "--ca: no CA bundle at /no/such/ca.pem"),
    (["--window", "0"], "--window: must be positive"),
    (["--batch", "0"], "--batch: must be at least 1"),
])
def test_bad_flags_are_one_line_without_the_secret(argv: list[str], expected: str) -> None:
    r = _cli("127.0.0.1:1", "identity", *argv, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"error: {expected}"), r.stderr
    assert "SECRET-VALUE-1" not in r.stderr


# -- the request: one for the CLI and the window -----------------------------------------------------------


@pytest.mark.parametrize(("changes", "field"), [
    ({"url": "not a url!"}, "url"), ({"model": " "}, "model"), ({"concurrency": [0]}, "concurrency"),
    ({"rates": [10.0, -1.0]}, "rates"), ({"batch": 0}, "batch"), ({"window_s": 0.0}, "window_s"),
    ({"duration_s": -1.0}, "duration_s"), ({"max_requests": 0}, "max_requests"),
    ({"latency_budget_ms": 0.0}, "latency_budget_ms"), ({"timeout_s": 0.0}, "timeout_s"),
    ({"headers": {"a b": "x"}}, "headers"), ({"ca": "/no/such.pem"}, "ca"), ({"protocol": "ftp"}, "protocol"),
    ({"distribution": "burst"}, "distribution"),
])
def test_validate_names_the_field(changes: dict[str, Any], field: str) -> None:
    req = TritonRequest(**{"url": "127.0.0.1:8000", "model": "m", **changes})
    with pytest.raises(FieldError) as info:
        req.validate()
    assert info.value.field == field and field in {f.name for f in dataclasses.fields(TritonRequest)}
    assert "--" not in str(info.value)


def test_recorded_request_keeps_header_names_only() -> None:
    req = TritonRequest("https://127.0.0.1:8443", "m", headers={"Authorization": "Bearer SECRET"})
    req.validate()
    rec = req.recorded()
    assert rec["headers"] == ["Authorization"] and "SECRET" not in json.dumps(rec)
    conn = req.connection()
    assert conn.ssl and conn.headers == {"Authorization": "Bearer SECRET"}  # the clients get the value
    assert conn.recorded() == {"ssl": True, "ca": None, "headers": ["Authorization"]}


def test_headers_go_to_the_metrics_page_only_on_the_servers_host() -> None:
    from trtstudio.triton.client import Connection, metrics_headers

    conn = Connection(headers={"triton-access-token": "t"})
    assert metrics_headers("http://127.0.0.1:8002/metrics", "127.0.0.1:8000", conn) == {"triton-access-token": "t"}
    assert metrics_headers("http://metrics.example:9100/metrics", "127.0.0.1:8000", conn) == {}
    assert metrics_headers("http://[::1]:8002/metrics", "[::1]:8000", conn) == {"triton-access-token": "t"}


def _cli_request(*argv: str) -> TritonRequest:
    from trtstudio.commands import triton as cmd

    p = argparse.ArgumentParser()
    cmd.configure(p)
    return cmd.request_from_args(p.parse_args(list(argv)))  # type: ignore[no-any-return]


@pytest.mark.gui
def test_cli_and_window_build_the_same_request(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("PySide6")
    from trtstudio.ui.triton_panel import FIELD_LABELS, TritonDialog

    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    dlg = TritonDialog(url="grpc://10.0.0.5:9001", model="resnet")
    qtbot.addWidget(dlg)
    dlg.protocol_combo.setCurrentIndex(2)
    dlg.mode_combo.setCurrentIndex(1)
    dlg.poisson_check.setChecked(True)
    dlg.version_edit.setText("3")
    dlg.steps_edit.setText("50,100.5")
    dlg.batch_spin.setValue(4)
    dlg.window_spin.setValue(0.5)
    dlg.budget_spin.setValue(20.0)
    dlg.metrics_edit.setText("none")
    dlg.headers_edit.setPlainText("triton-access-token=abc=def\nAuthorization=Bearer x y\n\n")
    dlg.ssl_check.setChecked(True)
    dlg.ca_edit.setText(str(ca))
    cli = _cli_request("grpc://10.0.0.5:9001", "resnet", "--version", "3", "--protocol", "grpc", "--rate", "50,100.5",
                       "--poisson", "--batch", "4",
                       "--window", "0.5", "--latency-budget", "20", "--metrics", "none", "--header",
                       "triton-access-token=abc=def", "--header", "Authorization=Bearer x y", "--ssl", "--ca", str(ca))
    assert dlg.request() == cli
    assert cli.headers == {"triton-access-token": "abc=def", "Authorization": "Bearer x y"}
    assert cli.distribution == "poisson" and cli.rates == [50.0, 100.5] and cli.concurrency == []
    cli.validate()
    # the defaults agree too
    dlg2 = TritonDialog(url="127.0.0.1:8000", model="m")
    qtbot.addWidget(dlg2)
    dlg2.steps_edit.setText("1")
    default = _cli_request("127.0.0.1:8000", "m")
    assert dlg2.request() == default
    dlg2.poisson_check.setChecked(True)  # Poisson arrivals are a property of a request rate only
    assert dlg2.request() == default == _cli_request("127.0.0.1:8000", "m", "--poisson")
    # a bad field: the CLI names its flag, the dialog its label, from the same FieldError
    dlg2.headers_edit.setPlainText("no equals sign SECRET-2")
    dlg2.start()
    assert dlg2.status_label.text().startswith(f"{FIELD_LABELS['headers']}: give NAME=VALUE")
    assert "SECRET-2" not in dlg2.status_label.text() and dlg2.start_button.isEnabled()


@pytest.mark.gui
def test_window_sweeps_a_default_pytriton_server(qtbot, pytriton: Server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Connect lists what the user typed (the server lists nothing to it); the sweep draws the
    /metrics breakdown; with the token in Headers the statistics answer and exports hold no token."""
    pytest.importorskip("PySide6")
    from trtstudio.ui.triton_panel import TritonDialog

    dlg = TritonDialog(url=f"127.0.0.1:{pytriton.http}", model="identity")
    qtbot.addWidget(dlg)
    dlg.connect_button.click()
    qtbot.waitUntil(lambda: dlg.models_table.rowCount() > 0 and dlg.start_button.isEnabled(), timeout=60_000)
    assert [dlg.models_table.item(r, 0).text() for r in range(dlg.models_table.rowCount())] == ["identity"]
    assert dlg.models_table.item(0, 2).text() == "READY" and "max_batch_size: 64" in dlg.config_label.text()
    assert "repository index skipped" in dlg.status_label.text()
    dlg.steps_edit.setText("1,2")
    dlg.window_spin.setValue(0.3)
    dlg.metrics_edit.setText(_metrics(pytriton))
    with qtbot.waitSignal(dlg.sig_finished, timeout=120_000) as blocker:
        dlg.start()
    doc = blocker.args[0]
    assert doc["breakdown_source"] == "metrics" and not doc["error"] and len(doc["steps"]) == 2
    assert "from /metrics counters" in dlg.panels.breakdown_plot.getPlotItem().titleLabel.text
    tops = [c.getData()[1] for c in dlg.panels.part_curves]
    assert tops[2] is not None and len(tops[2]) >= 2 and float(tops[2].min()) > 0  # compute infer is drawn
    assert "statistics API is restricted" in dlg.status_label.text()
    dlg.grab().save(str(Path(os.environ.get("TRTSTUDIO_SHOT_DIR", str(tmp_path))) / "triton_dialog_restricted.png"))

    dlg.headers_edit.setPlainText(f"triton-access-token={pytriton.token}")
    with qtbot.waitSignal(dlg.sig_finished, timeout=120_000) as blocker:
        dlg.start()
    doc = blocker.args[0]
    assert doc["breakdown_source"] == "statistics" and doc["notes"] == []
    assert dlg.panels.breakdown_plot.getPlotItem().titleLabel.text.endswith("(stacked, per window)")
    written = [dlg.export_report(str(tmp_path / n)) for n in ("w.html", "w.md", "w.json")]
    assert all(written)
    _secret_free(pytriton.token, json.dumps(doc), *(Path(p).read_text() for p in written))
