"""``cli.detach``: a command that fills much memory (``layers`` on a big engine) goes on in a forked
worker; the program ends with the worker's status as soon as the worker has said it, without
waiting for the kernel to tear the worker down. Real processes: status, output, a worker that
dies, an interrupt, a program that is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker is forked: Linux only")

ROOT = Path(__file__).resolve().parents[1]
TREX = ROOT.parent / "shared/fixtures/trt-real/NVIDIA_TensorRT_trex/release-11.0/tests/inputs"

# a program whose "command" detaches, then does what argv[1] says in the worker
PROGRAM = r"""
import os, sys, time
from trtstudio import cli
cli._in_entry = True
print(os.getpid(), flush=True)
cli.detach()
print(os.getpid(), flush=True)
what = sys.argv[1]
if what == "status":
    print("written by the worker", flush=True)
    cli._end(7)
elif what == "killed":
    os.kill(os.getpid(), 9)
elif what == "interrupt":
    open(sys.argv[2], "w").write(str(os.getpid()))
    try:
        time.sleep(60)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        cli._end(130)
elif what == "sleep":
    open(sys.argv[2], "w").write(str(os.getpid()))
    time.sleep(60)
"""


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("TRTSTUDIO_NO_FORK", None)
    return env


def _gone(pid: int, within: float = 10.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie of ours counts as gone
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split()[2] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def test_the_program_ends_with_the_workers_status_and_output() -> None:
    r = subprocess.run([sys.executable, "-c", PROGRAM, "status"], capture_output=True, text=True, env=_env(),
                       timeout=60, check=False)
    before, after, said = r.stdout.splitlines()
    assert r.returncode == 7 and said == "written by the worker"
    assert before != after  # the rest ran in another process
    assert r.stderr == ""


def test_a_worker_that_dies_is_one_error_line_and_status_1() -> None:
    r = subprocess.run([sys.executable, "-c", PROGRAM, "killed"], capture_output=True, text=True, env=_env(),
                       timeout=60, check=False)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == ["error: internal error: the command's process ended by signal 9 (SIGKILL)"]


def test_an_interrupt_is_the_workers_to_handle(tmp_path: Path) -> None:
    pidfile = tmp_path / "worker"
    p = subprocess.Popen([sys.executable, "-c", PROGRAM, "interrupt", str(pidfile)], stdout=subprocess.PIPE,
                         text=True, env=_env(), start_new_session=True)
    end = time.monotonic() + 30
    while not (pidfile.is_file() and pidfile.read_text()) and time.monotonic() < end:
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGINT)  # Ctrl-C: the whole foreground group
    out, _ = p.communicate(timeout=30)
    assert p.returncode == 130 and out.splitlines()[-1] == "interrupted"


def test_a_killed_program_takes_its_worker_with_it(tmp_path: Path) -> None:
    pidfile = tmp_path / "worker"
    p = subprocess.Popen([sys.executable, "-c", PROGRAM, "sleep", str(pidfile)], stdout=subprocess.DEVNULL,
                         env=_env())
    end = time.monotonic() + 30
    while not (pidfile.is_file() and pidfile.read_text()) and time.monotonic() < end:
        time.sleep(0.05)
    worker = int(pidfile.read_text())
    assert not _gone(worker, within=0.2)
    p.kill()  # a timeout's kill: the worker must not write on after it
    p.wait(timeout=30)
    assert _gone(worker)


# the layers command, with its threshold lowered so that a small engine is read in a worker
LAYERS = r"""
import sys
import trtstudio.commands.layers as layers
layers.DETACH_MIN_BYTES = 0
from trtstudio.cli import entry
sys.argv = ["trtstudio", "layers", *sys.argv[1:]]
entry()
"""


def test_the_layers_command_in_a_worker_writes_what_it_writes_in_one_process(tmp_path: Path) -> None:
    eng = tmp_path / "e.layers.json"
    eng.write_text(json.dumps({"Layers": [
        {"Name": f"conv{i}", "LayerType": "CaskConvolution",
         "Inputs": [{"Name": f"t{i}", "Dimensions": [1, 60, 8, 8], "Format/Datatype": "Channel major FP16 format"}],
         "Outputs": [{"Name": f"t{i + 1}", "Dimensions": [1, 60, 8, 8],
                      "Format/Datatype": "Channel major FP16 format"}],
         "TacticName": "sm80_xmma_gemm_simt", "Kernel": [3, 3]} for i in range(30)]}))
    cases = [[str(eng)]]
    if TREX.is_dir():
        cases.append([str(TREX / "mobilenet.qat.onnx.engine.graph.json"),
                      str(TREX / "mobilenet.qat.onnx.engine.profile.json")])
    for files in cases:
        out = tmp_path / "out.json"
        with out.open("wb") as fh:
            detached = subprocess.run([sys.executable, "-c", LAYERS, *files, "--json"], stdout=fh,
                                      stderr=subprocess.PIPE, env=_env(), timeout=120, check=False)
        plain = subprocess.run([sys.executable, "-m", "trtstudio", "layers", *files, "--json"], capture_output=True,
                               env=dict(_env(), TRTSTUDIO_NO_FORK="1"), timeout=120, check=False)
        assert detached.returncode == plain.returncode == 0, detached.stderr
        assert out.read_bytes() == plain.stdout and json.loads(plain.stdout)["layers"]
    bad = tmp_path / "bad.layers.json"
    bad.write_text('{"Layers": [{"Name": "a"}, ')
    r = subprocess.run([sys.executable, "-c", LAYERS, str(bad), "--json"], capture_output=True, text=True,
                       env=_env(), timeout=120, check=False)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith(f"error: {bad}")
