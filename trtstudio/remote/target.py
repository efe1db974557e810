"""A remote machine reached over SSH with the system OpenSSH client.

``ssh://[user@]host[:port][?python=/path/to/python]``: ``host`` may be an alias of the user's
``~/.ssh/config`` (keys, agents, ProxyJump and the rest of it apply); ``python`` is the
interpreter on the target that has trtstudio's core installed (default ``python3``).
``TRTSTUDIO_SSH_CONFIG`` names another ssh config file (``ssh -F``).

Every connection uses ``BatchMode=yes`` (a password or passphrase prompt fails at once instead of
hanging a run), ``StrictHostKeyChecking=accept-new`` (a new host is remembered, a changed key is
refused), a connect timeout and keep-alives (a target that dies mid-run is noticed within seconds),
and one shared master connection per target (``ControlMaster``) so that the copies and the run do
not each pay a handshake. Nothing is stored: no password or token is ever written anywhere.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from trtstudio.errors import InputError

REMOTE_CACHE = ".cache/trtstudio/remote"  # under the remote user's home
CONNECT_TIMEOUT_S = 10
_CHUNK = 1 << 20


class RemoteError(InputError):
    """The target cannot be reached or refused us: one line, exit 2."""


@dataclass
class Target:
    """``ssh://[user@]host[:port]`` and the options every ssh call gets."""

    url: str
    host: str
    user: str | None = None
    port: int | None = None
    python: str = "python3"
    extra: list[str] = field(default_factory=list)  # more ssh options (tests: -F config)

    @classmethod
    def parse(cls, url: str) -> Target:
        """Parse ``ssh://[user@]host[:port][?python=...]``; InputError naming the URL otherwise."""
        parts = urlsplit(url if "://" in url else f"ssh://{url}")
        if parts.scheme != "ssh" or not parts.hostname:
            raise InputError(url, "not a remote target: expected ssh://[user@]host[:port]")
        if not re.fullmatch(r"[A-Za-z0-9._:%-]+", parts.hostname) or (parts.username and
                                                                     not re.fullmatch(r"[A-Za-z0-9._-]+", parts.username)):
            raise InputError(url, "the host or user has characters a host name cannot have")
        try:
            port = parts.port
        except ValueError:
            raise InputError(url, "the port is not a number from 1 to 65535") from None
        query = parse_qs(parts.query)
        extra = []
        config = os.environ.get("TRTSTUDIO_SSH_CONFIG")
        if config:
            extra += ["-F", config]
        return cls(url=url, host=parts.hostname, user=parts.username, port=port,
                   python=(query.get("python") or ["python3"])[0], extra=extra)

    @property
    def label(self) -> str:
        """``user@host:port`` as the user wrote it (for messages and results)."""
        return (f"{self.user}@" if self.user else "") + self.host + (f":{self.port}" if self.port else "")

    def ssh_argv(self, *, master: bool = True) -> list[str]:
        """The ssh command line up to the destination (the remote command follows)."""
        argv = ["ssh", *self.extra, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new",
                "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}", "-o", "ServerAliveInterval=2",
                "-o", "ServerAliveCountMax=3", "-o", "LogLevel=ERROR"]
        if master:
            control = Path(tempfile.gettempdir()) / f"trtstudio-ssh-{os.getuid() if hasattr(os, 'getuid') else 0}-%C"
            argv += ["-o", "ControlMaster=auto", "-o", f"ControlPath={control}", "-o", "ControlPersist=60"]
        if self.port:
            argv += ["-p", str(self.port)]
        if self.user:
            argv += ["-l", self.user]
        return [*argv, self.host]

    def command(self, words: list[str]) -> list[str]:
        """The ssh argv that runs ``words`` (quoted for the remote shell) on the target."""
        return [*self.ssh_argv(), "--", " ".join(shlex.quote(w) for w in words)]

    def shell(self, script: str) -> list[str]:
        """The ssh argv that runs a shell ``script`` on the target."""
        return [*self.ssh_argv(), "--", script]

    def run(self, words: list[str] | None = None, script: str | None = None, stdin: Any = None,
            timeout: float | None = 120) -> subprocess.CompletedProcess[bytes]:
        """Run on the target and wait; RemoteError (one line) when ssh itself fails (exit 255)."""
        argv = self.shell(script) if script is not None else self.command(words or [])
        try:
            proc = subprocess.run(argv, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                                  capture_output=True, timeout=timeout, check=False)
        except FileNotFoundError:
            raise RemoteError(self.url, "the OpenSSH client (ssh) is not installed here") from None
        except subprocess.TimeoutExpired:
            raise RemoteError(self.url, f"no answer within {timeout:.0f} s") from None
        if proc.returncode == 255:
            raise RemoteError(self.url, ssh_failure(proc.stderr))
        return proc

    def check_reachable(self) -> None:
        """Connect once (starting the shared master connection); RemoteError when we cannot."""
        self.run(script="true", timeout=CONNECT_TIMEOUT_S + 20)

    def put(self, path: str | os.PathLike[str]) -> str:
        """Copy ``path`` into the target's content-hashed cache (once per content) and return its
        path there. Files travel through the ssh channel (no scp/sftp needed on the target)."""
        digest = sha256_file(path)
        name = Path(path).name
        rel = f"{REMOTE_CACHE}/{digest[:24]}/{name}"
        have = self.run(script=f"test -s \"$HOME\"/{shlex.quote(rel)} && echo cached || echo missing")
        if have.stdout.strip() == b"cached":
            return self._abs(rel)
        d = shlex.quote(f"{REMOTE_CACHE}/{digest[:24]}")
        script = (f"cd \"$HOME\" && mkdir -p {d} && cat > {d}/.part.$$ && mv -f {d}/.part.$$ "
                  f"{shlex.quote(rel)}")
        with open(path, "rb") as fh:
            proc = self.run(script=script, stdin=fh, timeout=None)
        if proc.returncode != 0:
            raise RemoteError(self.url, f"could not copy {name}: {first_line(proc.stderr) or f'exit {proc.returncode}'}")
        return self._abs(rel)

    def get(self, remote: str, local: str | os.PathLike[str]) -> None:
        """Copy the target's file ``remote`` to ``local`` (written whole or not at all)."""
        proc = self.run(words=["cat", remote], timeout=None)
        if proc.returncode != 0:
            raise RemoteError(self.url, f"could not read {remote}: {first_line(proc.stderr)}")
        tmp = Path(str(local) + ".part")
        tmp.write_bytes(proc.stdout)
        os.replace(tmp, local)

    def _abs(self, rel: str) -> str:
        if not hasattr(self, "_home"):
            self._home = self.run(script="printf %s \"$HOME\"").stdout.decode() or "~"
        return f"{self._home}/{rel}"


def sha256_file(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def first_line(data: bytes | str | None) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else (data or "")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def ssh_failure(stderr: bytes) -> str:
    """ssh's own error in one line, with what to do for the usual causes."""
    why = first_line(stderr) or "ssh failed"
    low = why.lower()
    if "permission denied" in low:
        return f"{why} (set up key login: ssh-copy-id; trtstudio never asks for a password)"
    if "host key verification failed" in low or "remote host identification has changed" in low:
        return f"{why} (the host's key changed; check it, then remove the old one with ssh-keygen -R)"
    if "connection refused" in low or "timed out" in low or "no route" in low or "could not resolve" in low:
        return f"{why} (is the host up and sshd running?)"
    return why
