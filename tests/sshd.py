"""A real OpenSSH server on 127.0.0.1 for the remote-target tests (Debian's openssh-server).

Throwaway host and user keys in a temporary folder; the server runs as the test's user on a free
port and accepts only that key. The client side is an ssh config file (``TRTSTUDIO_SSH_CONFIG``)
naming the host ``trtstudio-test``. ``PATH`` on the target starts with ``<tmp>/bin``, where a test
can put a test double of a Jetson-only tool (``fake_tegrastats.py`` as ``tegrastats``).
"""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd") else None)


def missing() -> str | None:
    """Why the server cannot start here (None when it can)."""
    if SSHD is None:
        return "sshd is not installed (apt-get install openssh-server)"
    if shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        return "the OpenSSH client is not installed (apt-get install openssh-client)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class SshServer:
    root: Path
    port: int
    config: Path  # the client's ssh config
    proc: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"ssh://trtstudio-test?python={sys.executable}"

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def kill(self) -> None:
        """Kill the server and every session it runs (a target that dies mid-run): the listener,
        its per-connection sshd processes and what they started (each session is its own
        process session, so a process-group kill would miss them)."""
        import psutil

        try:
            procs = [psutil.Process(self.proc.pid), *psutil.Process(self.proc.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            procs = []
        for p in procs:
            try:
                p.send_signal(signal.SIGKILL)
            except psutil.NoSuchProcess:
                pass
        self.proc.wait(10)


def start(root: Path, env_file: str | None = None) -> SshServer:
    """Start sshd under ``root`` and return it once it accepts connections."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "bin").mkdir(exist_ok=True)
    for key in ("host_key", "user_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(root / key)], check=True)
    (root / "authorized_keys").write_text((root / "user_key.pub").read_text())
    os.chmod(root / "authorized_keys", 0o600)
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", exist_ok=True)  # privilege separation folder Debian's sshd wants
    port = _free_port()
    path = f"{root / 'bin'}:{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin"
    extra_env = f" TRTSTUDIO_NV_TEGRA_RELEASE={env_file}" if env_file else ""
    (root / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {root / 'host_key'}\nPidFile {root / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {root / 'authorized_keys'}\nPubkeyAuthentication yes\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n"
        f"SetEnv PATH={path}{extra_env}\n")
    config = root / "ssh_config"
    config.write_text(
        f"Host trtstudio-test\n  HostName 127.0.0.1\n  Port {port}\n  User {getpass.getuser()}\n"
        f"  IdentityFile {root / 'user_key'}\n  IdentitiesOnly yes\n  UserKnownHostsFile {root / 'known_hosts'}\n")
    proc = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(root / "sshd_config")], stdout=subprocess.DEVNULL,
                            stderr=open(root / "sshd.log", "wb"), start_new_session=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sshd exited: {(root / 'sshd.log').read_text()[-500:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return SshServer(root, port, config, proc)
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("sshd did not listen within 20 s")
