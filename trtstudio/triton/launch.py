"""A real Triton Inference Server that trtstudio starts and stops itself (Qt-free).

The server is the ``tritonserver`` binary that the ``nvidia-pytriton`` wheel brings, in the Python
environment ``python`` (by default the one trtstudio builds for its tests,
``~/.cache/trtstudio-triton-venv/v1``). It listens on 127.0.0.1 only, on free ports it picks,
with explicit model control (nothing is loaded at start), and is stopped (its whole process group)
when the context ends, errors and Ctrl+C included.

:func:`python_model_files` makes a Triton python-backend model of an ONNX file: ``1/model.py`` runs
ONNX Runtime on the batch Triton hands it (requests concatenated along the batch dim when the ONNX
batch dim is dynamic, one sample at a time when it is fixed at 1).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from trtstudio.errors import BackendError, InputError

DEFAULT_PYTHON = Path(os.environ.get("TRTSTUDIO_TRITON_VENV", Path.home() / ".cache" / "trtstudio-triton-venv" / "v1")) / "bin" / "python"

_PROBE = ("import json, os, sys, pytriton; root = os.path.dirname(pytriton.__file__); "
          "print(json.dumps({'root': root, 'libs': os.path.join(os.path.dirname(root), 'nvidia_pytriton.libs'), "
          "'version': '%d.%d' % sys.version_info[:2], 'bin': os.path.dirname(sys.executable)}))")


def free_ports(n: int) -> list[int]:
    """``n`` distinct free TCP ports on 127.0.0.1 (bound together, then released)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def find_server(python: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Where ``python``'s nvidia-pytriton keeps tritonserver, its libraries and the python-backend stub;
    InputError naming ``--python`` when that environment has no pytriton."""
    py = str(python or DEFAULT_PYTHON)
    if not os.path.exists(py):
        raise InputError("--python", f"{py} does not exist (a Python with nvidia-pytriton and onnxruntime installed)")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    try:
        out = subprocess.run([py, "-c", _PROBE], capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError("--python", f"{py} did not run: {exc}") from None
    if out.returncode != 0:
        raise InputError("--python", f"{py} has no nvidia-pytriton (pip install nvidia-pytriton onnxruntime)")
    info: dict[str, str] = json.loads(out.stdout.strip().splitlines()[-1])
    info["python"] = py
    info["tritonserver"] = os.path.join(info["root"], "tritonserver", "bin", "tritonserver")
    info["stub"] = os.path.join(info["root"], "tritonserver", "python_backend_stubs", info["version"],
                                "triton_python_backend_stub")
    for key in ("tritonserver", "stub"):
        if not os.path.exists(info[key]):
            raise InputError("--python", f"{py}: nvidia-pytriton has no {info[key]}")
    return info


class LaunchedServer:
    """tritonserver on 127.0.0.1 with ``--model-control-mode=explicit`` (``control``) over ``repository``
    (a folder this object owns when not given). Use as a context manager; :meth:`stop` ends the
    process group."""

    def __init__(self, repository: str | os.PathLike[str] | None = None, python: str | os.PathLike[str] | None = None,
                 ready_s: float = 120.0, log: str | os.PathLike[str] | None = None, control: str = "explicit",
                 dist: dict[str, str] | None = None) -> None:
        self.dist = dist or find_server(python)
        self._work = Path(tempfile.mkdtemp(prefix="trtstudio-triton-"))
        self.repository = Path(repository) if repository else self._work / "models"
        self.repository.mkdir(parents=True, exist_ok=True)
        self.http, self.grpc, self.metrics = free_ports(3)
        self.url = f"127.0.0.1:{self.http}"
        self.shm_prefix = f"trtstudio{self.http}_"  # the python backend's shared memory, removed after a kill
        self.log = Path(log) if log else self._work / "tritonserver.log"
        backends = self._work / "backends"
        shutil.copytree(os.path.join(self.dist["root"], "tritonserver", "backends"), backends)
        shutil.copy(self.dist["stub"], backends / "python" / "triton_python_backend_stub")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["LD_LIBRARY_PATH"] = ":".join(p for p in (env.get("LD_LIBRARY_PATH"), self.dist["libs"]) if p)
        env["PATH"] = f"{self.dist['bin']}:{env.get('PATH', '')}"
        cmd = [self.dist["tritonserver"], f"--model-repository={self.repository}", f"--model-control-mode={control}",
               f"--backend-directory={backends}", "--http-address=127.0.0.1", f"--http-port={self.http}",
               "--grpc-address=127.0.0.1", f"--grpc-port={self.grpc}", "--metrics-address=127.0.0.1",
               f"--metrics-port={self.metrics}", "--exit-on-error=true", "--log-verbose=0", "--strict-readiness=true",
               "--exit-timeout-secs=5", f"--backend-config=python,shm-region-prefix-name={self.shm_prefix}"]
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            self._wait_ready(ready_s)
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, ready_s: float) -> None:
        deadline = time.monotonic() + ready_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BackendError(f"tritonserver exited at start ({self.proc.returncode}): {self.log_tail()}")
            try:
                with urllib.request.urlopen(f"http://{self.url}/v2/health/ready", timeout=2) as r:  # noqa: S310
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.25)
        raise BackendError(f"tritonserver did not become ready in {ready_s:.0f} s: {self.log_tail()}")

    def log_tail(self, n: int = 600) -> str:
        try:
            return " ".join(self.log.read_text(errors="replace")[-n:].split())
        except OSError:
            return ""

    def unloaded(self, model: str) -> bool:
        """Whether the server's log says ``model`` finished unloading (its stubs ended)."""
        try:
            return f"successfully unloaded '{model}'" in self.log.read_text(errors="replace")
        except OSError:
            return True

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        """SIGTERM the server (it unloads its models and ends their python-backend stubs), then SIGKILL
        what is left of its process group after 20 s (it waits 5 s for open connections); remove the stubs' shared memory a kill leaves."""
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.proc.poll() is None:
            self.proc.wait(15)
        for leftover in Path("/dev/shm").glob(f"{self.shm_prefix}*"):
            leftover.unlink(missing_ok=True)
        shutil.rmtree(self._work / "backends", ignore_errors=True)

    def cleanup(self) -> None:
        """Stop and remove the folder this object made (its log and repository included)."""
        self.stop()
        shutil.rmtree(self._work, ignore_errors=True)

    def __enter__(self) -> LaunchedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


MODEL_PY = '''"""trtstudio: a Triton python-backend model running ONNX Runtime on 1/model.onnx."""
import json
import os

import numpy as np
import onnxruntime as ort
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        cfg = json.loads(args["model_config"])
        params = {k: v.get("string_value", "") for k, v in (cfg.get("parameters") or {}).items()}
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = int(params.get("intra_op_threads", "1") or 1)
        opts.inter_op_num_threads = 1
        path = os.path.join(args["model_repository"], args["model_version"], "model.onnx")
        self.sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.sess.get_inputs()]
        self.outputs = [o.name for o in self.sess.get_outputs()]
        self.batched = int(cfg.get("max_batch_size", 0)) > 0
        first = self.sess.get_inputs()[0].shape
        self.fixed_one = self.batched and bool(first) and first[0] == 1

    def _run(self, feeds):
        if not self.fixed_one:
            return self.sess.run(self.outputs, feeds)
        n = next(iter(feeds.values())).shape[0]
        parts = [self.sess.run(self.outputs, {k: v[i:i + 1] for k, v in feeds.items()}) for i in range(n)]
        return [np.concatenate([p[j] for p in parts]) for j in range(len(self.outputs))]

    def execute(self, requests):
        arrays = [{n: pb_utils.get_input_tensor_by_name(r, n).as_numpy() for n in self.inputs} for r in requests]
        if self.batched and len(requests) > 1:
            sizes = [a[self.inputs[0]].shape[0] for a in arrays]
            outs = self._run({n: np.concatenate([a[n] for a in arrays]) for n in self.inputs})
            bounds = np.cumsum([0] + sizes)
            results = [[o[bounds[i]:bounds[i + 1]] for o in outs] for i in range(len(requests))]
        else:
            results = [self._run(a) for a in arrays]
        return [pb_utils.InferenceResponse([pb_utils.Tensor(n, np.ascontiguousarray(v)) for n, v in zip(self.outputs, res)])
                for res in results]
'''
