"""Remote targets over SSH: a real sshd on 127.0.0.1 (tests/sshd.py), the real ssh client, the real
agent and ONNX Runtime on the "target"; tegrastats replayed by a test double (fake_tegrastats.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import onnx
import onnx_models as models
import pytest
import sshd

from trtstudio.remote.tegrastats import parse_l4t_release, parse_line

pytestmark = pytest.mark.sshd  # the Qt-less pass of .ci/run leaves these to the full pass
DATA = Path(__file__).parent / "data" / "tegrastats"


# -- tegrastats (no server needed) ------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.log")))
def test_every_recorded_tegrastats_line_parses(name: str) -> None:
    for line in (DATA / name).read_text().splitlines():
        rec = parse_line(line)
        assert rec is not None
        used, total = (int(x) for x in line.split("RAM ", 1)[1].split("MB", 1)[0].split("/"))
        assert rec["ram_used_bytes"] == used << 20 and rec["ram_total_bytes"] == total << 20
        assert rec["rails_mw"] and rec["power_mw"] > 0
        assert all(t > -256 for t in rec["temps_c"].values())  # sensors that are off are left out
        assert rec["gpu_freq_mhz"]


def test_tegrastats_formats_of_each_release() -> None:
    orin = parse_line((DATA / "l4t36.4.4_agx_orin.log").read_text().splitlines()[1])
    assert orin["time"] == "05-09-2026 18:42:07" and orin["gpu_load_percent"] == 0 and orin["gpu_freq_mhz"] == [0, 0]
    assert orin["rails_mw"]["VIN_SYS_5V0"] == {"current_mw": 4607, "average_mw": 4657}
    thor = parse_line((DATA / "l4t38.4_thor.log").read_text().splitlines()[0])
    assert thor["gpu_load_percent"] is None and thor["gpu_freq_mhz"] == [0, 0, 0]  # Thor prints no load
    jp4 = parse_line((DATA / "jp4_agx_xavier.log").read_text())
    assert jp4["time"] is None and jp4["power_mw"] == 14025 and jp4["gpu_load_percent"] == 37  # no unit: mW
    nano = parse_line((DATA / "jp4_nano.log").read_text())
    assert nano["power_mw"] == 4520 and "IRAM" not in nano["rails_mw"]
    xavier5 = parse_line((DATA / "jp5_xavier.log").read_text())
    assert xavier5["cpu"][-1] is None and xavier5["cpu"][0] == {"load_percent": 3, "freq_mhz": 1904}
    assert parse_line("not a tegrastats line") is None
    rel = parse_l4t_release((DATA / "nv_tegra_release_r36.4.4").read_text())
    assert rel == {"release": "R36", "revision": "4.4", "l4t": "36.4.4", "board": "generic"}


# -- a real sshd --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(tmp_path_factory):
    why = sshd.missing()
    if why:
        pytest.skip(why)
    srv = sshd.start(tmp_path_factory.mktemp("sshd"), env_file=str(DATA / "nv_tegra_release_r36.4.4"))
    yield srv
    srv.kill()


@pytest.fixture
def ssh_env(server, monkeypatch):
    monkeypatch.setenv("TRTSTUDIO_SSH_CONFIG", str(server.config))
    return {**os.environ, "TRTSTUDIO_SSH_CONFIG": str(server.config)}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("m") / "tiny.onnx"
    onnx.save(models.conv_net(batch=1), str(p))
    return p


def _cli(*argv: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trtstudio", *argv], capture_output=True, text=True, env=env,
                          timeout=timeout, check=False)


def test_remote_profile_has_the_local_schema_and_names_the_target(server, ssh_env, tiny, tmp_path) -> None:
    pytest.importorskip("onnxruntime")
    local = _cli("profile", str(tiny), "--backend", "ort", "--iterations", "200", "--json", env=ssh_env)
    session = tmp_path / "remote.trtstudio"
    remote = _cli("profile", str(tiny), "--backend", "ort", "--iterations", "200", "--json", "--remote", server.url,
                  "--session", str(session), env=ssh_env)
    assert remote.returncode == 0, remote.stderr
    a, b = json.loads(local.stdout), json.loads(remote.stdout)
    assert set(a) <= set(b) and set(a["latency_ms"]) == set(b["latency_ms"])  # the same statistics schema
    assert b["latency_ms"]["count"] == 200 and b["model"] == str(tiny)
    r = b["remote"]
    assert r["target"] == "trtstudio-test" and r["host"] and r["samples_received"] == 200
    assert r["l4t"]["l4t"] == "36.4.4" and r["versions"]["onnxruntime"]
    from trtstudio.report.session import load_session

    run = load_session(session).runs[0]
    assert run.latency_ms.size == 200 and run.config["remote"]["target"] == "trtstudio-test"


def test_samples_stream_while_the_remote_run_goes_on(server, ssh_env, tiny) -> None:
    pytest.importorskip("onnxruntime")
    from trtstudio.profiling.samples import SampleBuffer
    from trtstudio.remote.client import remote_profile
    from trtstudio.remote.target import Target

    argv = [str(tiny), "--backend", "ort", "--duration", "2"]
    buf = SampleBuffer(100_000)
    seen: list[tuple[str, int]] = []
    run = remote_profile(Target.parse(server.url), argv, [str(tiny)], samples=buf,
                         on_line=lambda m: seen.append((m["kind"], buf.count)))
    kinds = [k for k, _ in seen]
    assert run.error is None and kinds[0] == "hello" and kinds[-1] == "result"
    batches = [n for k, n in seen if k == "samples"]
    assert len(batches) >= 5  # a 2 s run arrives in many batches, not at the end
    assert batches[0] < batches[-1] < buf.count or batches[-1] == buf.count
    assert buf.count == run.samples == run.doc["latency_ms"]["count"]
    assert run.first_sample_s is not None


def test_a_target_that_dies_mid_run_keeps_the_samples(tmp_path, tiny, monkeypatch) -> None:
    pytest.importorskip("onnxruntime")
    why = sshd.missing()
    if why:
        pytest.skip(why)
    srv = sshd.start(tmp_path / "dying")
    env = {**os.environ, "TRTSTUDIO_SSH_CONFIG": str(srv.config)}
    session = tmp_path / "cut.trtstudio"
    proc = subprocess.Popen([sys.executable, "-m", "trtstudio", "profile", str(tiny), "--backend", "ort", "--duration",
                             "60", "--json", "--remote", srv.url, "--session", str(session)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "inferences" not in (proc.stderr.readline() if proc.stderr else ""):
            pass
        srv.kill()
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    doc = json.loads(out)
    assert doc["latency_ms"]["count"] > 0 and "lost after" in doc["error"]
    assert err.strip().splitlines()[-1].startswith("error: ") and "Traceback" not in err
    from trtstudio.report.session import load_session

    run = load_session(session).runs[0]
    assert run.latency_ms.size == doc["latency_ms"]["count"]  # the session keeps what was received


def test_remote_check_reports_the_target(server, ssh_env) -> None:
    res = _cli("remote", "check", server.url, "--json", env=ssh_env)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "trtstudio.remote/1" and doc["missing_deps"] == []
    names = {row["name"] for row in doc["checks"]}
    assert {"onnx", "numpy"} <= names


def test_unreachable_or_refusing_targets_are_one_line(tiny, tmp_path) -> None:
    if shutil.which("ssh") is None:
        pytest.skip("no ssh client")
    env = {**os.environ, "HOME": str(tmp_path)}  # no keys, no known hosts
    res = _cli("profile", str(tiny), "--remote", "ssh://127.0.0.1:1", env=env, timeout=60)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and res.stderr.startswith("error: ssh://127.0.0.1:1")
    res = _cli("profile", str(tiny), "--remote", "http://x", env=env)
    assert res.returncode == 2 and "expected ssh://" in res.stderr


def test_jetson_target_memory_comes_from_tegrastats(server, ssh_env, tiny) -> None:
    pytest.importorskip("onnxruntime")
    fake = server.bin / "tegrastats"
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} {Path(__file__).parent / 'fake_tegrastats.py'} \"$@\"\n")
    fake.chmod(0o755)
    try:
        res = _cli("profile", str(tiny), "--backend", "ort", "--duration", "1.5", "--json", "--remote", server.url,
                   env=ssh_env)
    finally:
        fake.unlink()
    assert res.returncode == 0, res.stderr
    r = json.loads(res.stdout)["remote"]
    ts = r["tegrastats"]
    assert len(ts["t_s"]) >= 5 and len(ts["ram_used_bytes"]) == len(ts["t_s"])
    assert {int(v) >> 20 for v in ts["ram_used_bytes"]} <= {18207, 18202, 18203}  # the recorded board's RAM
    assert "unified memory" in r["memory_note"]


def test_forwarded_check_runs_on_the_target(server, ssh_env, tiny) -> None:
    pytest.importorskip("tensorrt_rtx")
    res = _cli("check", str(tiny), "--backend", "rtx", "--json", "--remote", server.url, env=ssh_env, timeout=300)
    assert res.returncode in (0, 1), res.stderr
    doc = json.loads(res.stdout)
    assert doc.get("schema", "").startswith("trtstudio.")


@pytest.mark.slow
def test_setup_installs_this_trtstudio_and_its_core_into_a_bare_python(server, ssh_env, tmp_path) -> None:
    venv = tmp_path / "target-venv"  # the target's Python: nothing of ours, no numpy, no onnx
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    assert subprocess.run([str(py), "-c", "import trtstudio"], capture_output=True, check=False, cwd=tmp_path,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}).returncode != 0
    url = f"ssh://trtstudio-test?python={py}"
    before = _cli("remote", "check", url, env=ssh_env)
    assert before.returncode == 2 and "remote setup" in before.stderr and before.stderr.count("\n") == 1
    res = _cli("remote", "setup", url, "--with-deps", "--json", env=ssh_env, timeout=900)
    if res.returncode != 0 and "could not download" in res.stderr:
        pytest.skip(f"no package index reachable: {res.stderr.strip()}")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["installed"].startswith("trtstudio-") and doc["missing_deps"] == []
    assert subprocess.run([str(py), "-c", "import trtstudio.remote.agent"], check=False, cwd=tmp_path).returncode == 0


@pytest.fixture(scope="module")
def installed_here(tmp_path_factory) -> Path:
    """A trtstudio installed from a wheel (not editable, no source checkout) into a throwaway venv:
    the README's ``pip install`` as a user has it. Its ``trtstudio`` script is returned."""
    root = tmp_path_factory.mktemp("installed")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}  # nothing of this checkout
    src = Path(__file__).resolve().parents[1]
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(root / "dist"), str(src)],
                           capture_output=True, text=True, check=False)
    wheels = sorted((root / "dist").glob("trtstudio-*.whl"))
    if built.returncode != 0 or not wheels:
        pytest.skip(f"could not build a wheel of this checkout: {built.stderr.strip()[-300:]}")
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
    inst = subprocess.run([str(root / "venv" / "bin" / "pip"), "install", "-q", str(wheels[0])],
                          capture_output=True, text=True, env=env, cwd=root, check=False)
    if inst.returncode != 0:
        pytest.skip(f"no package index reachable for trtstudio's dependencies: {inst.stderr.strip()[-300:]}")
    return root / "venv" / "bin" / "trtstudio"


@pytest.mark.slow
def test_setup_from_a_wheel_install_and_check_names_a_missing_dependency(server, installed_here, tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["TRTSTUDIO_SSH_CONFIG"] = str(server.config)
    here_py = installed_here.parent / "python"
    where = subprocess.run([str(here_py), "-c", "import trtstudio; print(trtstudio.__file__)"], capture_output=True,
                           text=True, env=env, cwd=tmp_path, check=True).stdout.strip()
    assert "site-packages" in where and not (Path(where).parents[1] / "pyproject.toml").exists()
    venv = tmp_path / "target-venv"  # the target's Python: no trtstudio, no numpy
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    url = f"ssh://trtstudio-test?python={venv / 'bin' / 'python'}"

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(installed_here), *argv], capture_output=True, text=True, env=env, cwd=tmp_path,
                              timeout=900, check=False)

    bare = cli("remote", "setup", url)  # trtstudio goes there, its dependencies do not
    assert bare.returncode == 2 and bare.stderr.count("\n") == 1, bare.stderr
    assert "'numpy'" in bare.stderr and "--with-deps" in bare.stderr and "source checkout" not in bare.stderr
    check = cli("remote", "check", url)
    assert check.returncode == 2 and "dependency 'numpy' is not" in check.stderr
    assert check.stderr.rstrip().endswith(f"run: trtstudio remote setup {url} --with-deps")
    res = cli("remote", "setup", url, "--with-deps", "--json")
    if res.returncode != 0 and "could not download" in res.stderr:
        pytest.skip(f"no package index reachable: {res.stderr.strip()}")
    assert res.returncode == 0, res.stderr
    version = subprocess.run([str(here_py), "-c", "import importlib.metadata as m; print(m.version('trtstudio'))"],
                             capture_output=True, text=True, env=env, cwd=tmp_path, check=True).stdout.strip()
    assert json.loads(res.stdout)["installed"] == f"trtstudio-{version}-py3-none-any.whl"
    doc = json.loads(cli("remote", "check", url, "--json").stdout)
    assert doc["missing_deps"] == [] and doc["target"] == "trtstudio-test" and doc["checks"]
    # the target runs the same files as here, and pip made its script from the packed entry points
    there = subprocess.run([str(venv / "bin" / "python"), "-c", "import trtstudio.remote.setup as s; print(s.__file__)"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, check=True).stdout.strip()
    assert Path(there).read_bytes() == (Path(where).parent / "remote" / "setup.py").read_bytes()
    assert subprocess.run([str(venv / "bin" / "trtstudio"), "--version"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, check=False).stdout.strip() == cli("--version").stdout.strip()


@pytest.mark.gui
def test_the_window_profiles_on_an_ssh_target(qtbot, server, ssh_env, tiny) -> None:
    pytest.importorskip("PySide6")
    pytest.importorskip("onnxruntime")
    from trtstudio.ui.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    panel = win.profile_panel
    with qtbot.waitSignal(win.sig_model_loaded, timeout=60000), qtbot.waitSignal(panel.sig_model_ready, timeout=60000):
        win.open_model(str(tiny))
    assert win.tools.set_target("ssh://not a url") is None  # refused in one line, nothing changes
    assert win.tools.set_target(server.url) == server.url and server.url in win.tools.target_label.text()
    assert win.tools.remembered_targets()[0] == server.url
    panel.count_mode.setCurrentIndex(1)  # for a duration
    panel.count_spin.setValue(2)
    counts: list[int] = []
    with qtbot.waitSignal(panel.sig_run_finished, timeout=120000) as blocker:
        panel.start()
        qtbot.waitUntil(lambda: panel.live.samples is not None and panel.live.samples.count > 0, timeout=60000)
        counts.append(panel.live.samples.count)
        qtbot.waitUntil(lambda: "connected" in win.tools.target_label.text() or not panel.is_running(), timeout=10000)
    doc = blocker.args[0]
    assert doc["remote"]["target"] == "trtstudio-test" and doc["latency_ms"]["count"] == panel.live.samples.count
    assert counts[0] < doc["latency_ms"]["count"] or counts[0] == doc["latency_ms"]["count"]
    run = win.workspace.runs[-1]
    assert run.status == "finished" and run.data is not None and run.data.latency_ms.size == doc["latency_ms"]["count"]
    assert run.model == str(tiny)
    win.tools.set_target("This machine")
    assert panel.target is None and "this machine" in win.tools.target_label.text()
