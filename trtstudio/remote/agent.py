"""What runs on the target: ``python -m trtstudio.remote.agent profile ARGS...``.

The same profiling run a local ``trtstudio profile ARGS`` makes (its flags, its request, its
``run_profile``), with its samples streamed to stdout as JSON lines while it runs, one flushed line
per 100 ms at most:

- ``{"kind": "hello", "host", "environment", "l4t"}`` first;
- ``{"kind": "loaded", "shapes", "batch", "notes"}`` once the backend is open;
- ``{"kind": "samples", "t_s", "latency_ms", "h2d_ms", "compute_ms", "d2h_ms"}`` batches;
- ``{"kind": "tegra", "t_s", ...}`` Jetson monitor lines where ``tegrastats`` runs (no NVML there);
- ``{"kind": "result", "doc", "run"}`` at the end: the ``profile --json`` document and the run with
  its samples (``report.session.RunData``), or ``{"kind": "error", "message", "exit"}``.

Standard library JSON only: NaN is written as ``NaN`` (Python's reader takes it back).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from typing import Any, TextIO

import numpy as np

FLUSH_S = 0.1
FIRST_POLL_S = 0.01
_PARTS = ("h2d_ms", "compute_ms", "d2h_ms")


class Emitter:
    """Writes one JSON document per line to ``out`` and flushes it (thread-safe)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.lock = threading.Lock()

    def __call__(self, kind: str, **fields: Any) -> None:
        line = json.dumps({"kind": kind, **fields}, default=_default)
        with self.lock:
            self.out.write(line + "\n")
            self.out.flush()


def _default(o: Any) -> Any:
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.integer, np.floating)):
        return o.item()
    if isinstance(o, (set, tuple)):
        return list(o)
    return str(o)


class SampleStreamer(threading.Thread):
    """Sends the samples appended to ``buf`` since the last batch, every :data:`FLUSH_S`."""

    def __init__(self, buf: Any, emit: Emitter) -> None:
        super().__init__(name="trtstudio-remote-samples", daemon=True)
        self.buf, self.emit = buf, emit
        self.stop = threading.Event()
        self.last_t = -math.inf
        self.sent = 0

    def flush(self) -> None:
        count = self.buf.count
        new = count - self.sent
        if new <= 0:
            return
        snap = self.buf.snapshot(last_n=min(self.buf.capacity, new + 1024))
        keep = snap["t_s"] > self.last_t
        if not keep.any():
            return
        self.last_t = float(snap["t_s"][keep][-1])
        self.sent = count
        cols = {k: np.round(v[keep], 6).tolist() for k, v in snap.items()}
        for part in _PARTS:  # parts a backend cannot tell are NaN: leave them out
            if not np.isfinite(snap[part][keep]).any():
                cols.pop(part, None)
        self.emit("samples", wall_s=time.time(), **cols)

    def run(self) -> None:
        # until the first batch is out, look every 10 ms: the first sample reaches the desktop at once
        while not self.stop.wait(FLUSH_S if self.sent else FIRST_POLL_S):
            self.flush()
        self.flush()


class TegraMonitor(threading.Thread):
    """Reads ``tegrastats --interval 100`` and forwards each parsed line (Jetson only)."""

    def __init__(self, emit: Emitter, t0: float) -> None:
        super().__init__(name="trtstudio-remote-tegrastats", daemon=True)
        self.emit, self.t0 = emit, t0
        self.proc: subprocess.Popen[str] | None = None

    def run(self) -> None:
        from trtstudio.remote.tegrastats import parse_line

        exe = shutil.which("tegrastats")
        if exe is None:
            return
        self.proc = subprocess.Popen([exe, "--interval", "100"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True)
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            rec = parse_line(line)
            if rec is not None:
                self.emit("tegra", t_s=round(time.perf_counter() - self.t0, 4), **rec)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(2)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def host_facts() -> dict[str, Any]:
    """Who the target is: host name, the environment report (GPU, driver, packages), L4T release."""
    from trtstudio.remote.tegrastats import parse_l4t_release
    from trtstudio.report.model import collect_environment

    env = collect_environment()
    l4t = None
    try:  # TRTSTUDIO_NV_TEGRA_RELEASE: another path (images that keep it elsewhere; the tests)
        with open(os.environ.get("TRTSTUDIO_NV_TEGRA_RELEASE", "/etc/nv_tegra_release"), encoding="utf-8",
                  errors="replace") as fh:
            l4t = parse_l4t_release(fh.read())
    except OSError:
        pass
    return {"host": socket.gethostname(), "environment": env, "l4t": l4t, "tegrastats": bool(shutil.which("tegrastats"))}


def profile(argv: list[str], emit: Emitter) -> int:
    """Run ``trtstudio profile ARGV`` here, streaming as the module docstring says."""
    from trtstudio.cli import build_parser
    from trtstudio.commands.profile import FIELD_FLAGS, request_from_args
    from trtstudio.errors import FieldError
    from trtstudio.profiling.runner import RunState
    from trtstudio.profiling.samples import SampleBuffer
    from trtstudio.profiling.session import run_profile

    args = build_parser().parse_args(["profile", *argv])
    emit("hello", **host_facts())
    try:
        request = request_from_args(args)
    except FieldError as exc:
        raise exc.named(FIELD_FLAGS.get(exc.field, exc.field)) from None
    samples = SampleBuffer(request.ring_capacity)
    streamer = SampleStreamer(samples, emit)
    tegra = TegraMonitor(emit, time.perf_counter())

    def on_event(event: Any) -> None:
        name, info = getattr(event, "kind", ""), getattr(event, "data", None) or {}
        if name == "loaded":
            emit("loaded", shapes={k: list(v) for k, v in info.get("shapes", {}).items()},
                 batch=info.get("batch", 1), notes=info.get("notes", []))
        elif name == "cold":
            emit("cold", cold_ms=info.get("cold_ms"))

    streamer.start()
    tegra.start()
    try:
        outcome = run_profile(request, RunState(on_event=on_event), samples)
    finally:
        streamer.stop.set()
        streamer.join(5)
        tegra.close()
    run = outcome.run_data(name=f"{os.path.basename(request.model)} ({request.backend})")
    emit("result", doc=outcome.to_dict(), run=run.to_json())
    return 1 if outcome.result is not None and outcome.result.error else 0


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    emit = Emitter(sys.stdout)
    if args[:1] == ["facts"]:  # trtstudio remote check: who the target is and what it can run
        from trtstudio.environment import check_environment

        emit("hello", **host_facts(), checks=check_environment(probe_gpu=True))
        return 0
    if not args or args[0] != "profile":
        emit("error", message="usage: python -m trtstudio.remote.agent profile|facts ARGS...", exit=2)
        return 2
    from trtstudio.errors import BackendError, InputError

    try:
        return profile(args[1:], emit)
    except InputError as exc:
        emit("error", message=exc.one_line(), exit=2)
        return 2
    except BackendError as exc:
        emit("error", message=str(exc), exit=2)
        return 2
    except SystemExit as exc:  # argparse refused a flag (its message went to stderr)
        emit("error", message="the target's trtstudio refused the profile flags (see its message above)",
             exit=int(exc.code or 2))
        return int(exc.code or 2)
    except Exception as exc:  # noqa: BLE001 - one line back to the client, never a traceback
        emit("error", message=f"internal error on the target: {type(exc).__name__}: {exc}", exit=1)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
