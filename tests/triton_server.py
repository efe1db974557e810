"""Start a real Triton Inference Server (tritonserver from the PyPI wheel nvidia-pytriton) for the
tests and benchmarks, in its own venv of /usr/bin/python3.11 built once and cached. ``Unavailable``
when that environment cannot be built (the tests skip, naming why)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"
VENV = Path(os.environ.get("TRTSTUDIO_TRITON_VENV", Path.home() / ".cache" / "trtstudio-triton-venv" / "v1"))
PACKAGES = ["nvidia-pytriton==0.7.0", "numpy<2", "onnxruntime"]


class Unavailable(RuntimeError):
    """The PyTriton environment cannot be built here."""


def venv_python() -> Path:
    """The PyTriton venv's Python, built on first use (its stub links the system libpython3.11)."""
    py = VENV / "bin" / "python"
    if py.exists() and subprocess.run([str(py), "-c", "import pytriton, onnxruntime"], capture_output=True).returncode == 0:
        return py
    base = shutil.which("python3.11", path="/usr/bin")
    if base is None:
        raise Unavailable("no /usr/bin/python3.11 for the PyTriton server environment")
    shutil.rmtree(VENV, ignore_errors=True)
    VENV.parent.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run([base, "-m", "venv", str(VENV)], check=True, capture_output=True, timeout=120)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *PACKAGES], check=True, capture_output=True, timeout=600)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(VENV, ignore_errors=True)
        err = getattr(exc, "stderr", b"") or b""
        raise Unavailable(f"cannot build the PyTriton environment: {err.decode(errors='replace')[-300:] or exc}") from None
    return py


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Server:
    """``tests/triton_server_main.py`` on free loopback ports: models ``mobilenet`` and ``identity``.

    ``security``: ``open`` (no restricted API), ``pytriton`` (PyTriton's defaults; ``token`` is the
    token it generated) or ``token=VALUE`` (``restrict_more``: APIs restricted besides PyTriton's,
    e.g. ``metadata``). ``grpc_tls``: (certificate, key) PEM files: the gRPC
    endpoint serves TLS only. ``ports``: (HTTP, gRPC, metrics), free ones when not given."""

    def __init__(self, log_dir: Path, ready_s: float = 180.0, security: str = "open",
                 grpc_tls: tuple[Path, Path] | None = None, restrict_more: str | None = None,
                 ports: tuple[int, int, int] | None = None) -> None:
        self.http, self.grpc, self.metrics = ports or free_ports(3)
        self.log = log_dir / f"triton-{self.http}.log"
        self.token = security.split("=", 1)[1] if security.startswith("token=") else None
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        tls = ["--grpc-cert", str(grpc_tls[0]), "--grpc-key", str(grpc_tls[1])] if grpc_tls else []
        tls += ["--restrict-more", restrict_more] if restrict_more else []
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(
                [str(venv_python()), str(HERE / "triton_server_main.py"), str(SAMPLE), str(self.http), str(self.grpc),
                 str(self.metrics), "--security", security, *tls], stdout=out, stderr=subprocess.STDOUT, env=env,
                start_new_session=True)
        deadline = time.monotonic() + ready_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the Triton server exited: {self.log.read_text()[-2000:]}")
            try:
                ready = urllib.request.Request(f"http://127.0.0.1:{self.http}/v2/models/identity/ready",
                                               headers={"triton-access-token": self.token} if self.token else {})
                with urllib.request.urlopen(ready, timeout=2) as r:
                    if r.status == 200:
                        self._read_token()
                        return
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the Triton server did not become ready in {ready_s:.0f} s: {self.log.read_text()[-2000:]}")

    def _read_token(self) -> None:
        for line in self.log.read_text().splitlines():
            if line.startswith("TRTSTUDIO-TRITON-TOKEN "):
                self.token = line.split()[1]

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)
