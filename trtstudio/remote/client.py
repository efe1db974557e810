"""The desktop side of a remote run: copy the inputs, start the work on the target, stream it back.

``profile`` runs :mod:`trtstudio.remote.agent` on the target and reads its JSON lines: samples go
into a local ``SampleBuffer`` as they arrive (the window's live panels read it as they read a local
run), the final document is the one a local ``profile --json`` prints, with ``remote`` added (the
target, its host, GPU, driver, TensorRT, L4T). A connection lost mid-run keeps every sample
received: the result says so and the command exits 1.

``build``, ``check``, ``precision`` and ``scenario`` are forwarded: their input files are copied to
the target's cache, the same command runs there with the paths replaced, its output is relayed
as it comes, and the files it writes (``-o``, ``--session``, ``--report``, ...) are copied back.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.errors import InputError
from trtstudio.remote.target import RemoteError, Target, first_line

REMOTE_COMMANDS = ("profile", "build", "check", "precision", "scenario")
# argparse dests that name files a command writes (copied back after a forwarded run)
OUTPUT_DESTS = ("output", "session", "report", "trace", "samples_csv", "samples_npy", "engine_out", "layers_out")


@dataclass
class RemoteRun:
    """What a remote profile brought back (``doc`` is None when the run never finished)."""

    target: Target
    doc: dict[str, Any] | None = None
    run: dict[str, Any] | None = None
    hello: dict[str, Any] = field(default_factory=dict)
    samples: int = 0
    latencies: list[float] = field(default_factory=list)  # every latency received (ms)
    tegra: list[dict[str, Any]] = field(default_factory=list)
    first_sample_s: float | None = None  # seconds from the start of the call to the first batch
    first_sample_delay_s: float | None = None  # from the target sending the first batch to its arrival
    error: str | None = None
    exit: int = 0


def _file_args(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(dest, path) of the input files ``args`` name (cli's INPUTS specs)."""
    out = []
    for spec in getattr(args, "_inputs", ()):
        dest = spec.rstrip("/?")
        value = getattr(args, dest, None)
        for v in value if isinstance(value, list) else [value]:
            if v and Path(str(v)).is_file():
                out.append((dest, str(v)))
    return out


def _replace(argv: list[str], mapping: dict[str, str]) -> list[str]:
    """``argv`` with each token equal to a key of ``mapping`` (or ``--flag=key``) replaced."""
    out = []
    for tok in argv:
        if tok in mapping:
            out.append(mapping[tok])
        elif tok.startswith("--") and "=" in tok and tok.split("=", 1)[1] in mapping:
            flag, value = tok.split("=", 1)
            out.append(f"{flag}={mapping[value]}")
        else:
            out.append(tok)
    return out


def strip_remote(argv: list[str]) -> list[str]:
    """``argv`` without ``--remote URL`` / ``--remote=URL`` (what the target runs)."""
    out, skip = [], False
    for tok in argv:
        if skip:
            skip = False
        elif tok == "--remote":
            skip = True
        elif not tok.startswith("--remote="):
            out.append(tok)
    return out


def remote_profile(target: Target, argv: list[str], files: list[str], samples: Any = None,
                   on_line: Callable[[dict[str, Any]], None] | None = None, stop: threading.Event | None = None
                   ) -> RemoteRun:
    """Run ``trtstudio profile ARGV`` on ``target`` (``argv`` as given locally, without --remote;
    ``files``: the local input files it names, copied once and replaced by their copies' paths),
    samples appended to ``samples`` (a SampleBuffer) as they stream in."""
    t0 = time.perf_counter()
    target.check_reachable()
    mapping = {path: target.put(path) for path in dict.fromkeys(files)}
    words = [target.python, "-u", "-m", "trtstudio.remote.agent", "profile", *_replace(argv, mapping)]
    proc = subprocess.Popen(target.command(words), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    out = RemoteRun(target)
    err_lines: list[bytes] = []
    errs = threading.Thread(target=lambda: err_lines.extend(proc.stderr or []), daemon=True)
    errs.start()
    assert proc.stdout is not None
    for raw in proc.stdout:
        if stop is not None and stop.is_set():
            proc.terminate()
            break
        try:
            msg = json.loads(raw)
        except ValueError:
            continue  # a stray line of the target's shell: not ours
        _take(out, msg, samples, t0)
        if on_line is not None:
            on_line(msg)
    rc = proc.wait()
    errs.join(2)
    if out.doc is None and out.error is None:
        why = first_line(b"".join(err_lines)) or f"exit {rc}"
        if rc == 255 or out.samples:
            out.error = f"connection to {target.label} lost after {out.samples} samples ({why})"
            out.exit = 1
        else:
            out.error = f"the run on {target.label} ended without a result: {why}"
            out.exit = 2 if rc in (2, 127) else 1
    return out


def _take(out: RemoteRun, msg: dict[str, Any], samples: Any, t0: float) -> None:
    kind = msg.get("kind")
    if kind == "samples":
        t, lat = msg.get("t_s") or [], msg.get("latency_ms") or []
        if out.first_sample_s is None and t:
            out.first_sample_s = time.perf_counter() - t0
            if isinstance(msg.get("wall_s"), (int, float)):  # the target's clock: exact on one machine only
                out.first_sample_delay_s = max(0.0, time.time() - float(msg["wall_s"]))
        parts = [msg.get(p) for p in ("h2d_ms", "compute_ms", "d2h_ms")]
        if samples is not None:
            for i, (ti, li) in enumerate(zip(t, lat, strict=False)):
                samples.append(ti, li, *(None if p is None else p[i] for p in parts))
        out.samples += len(lat)
        out.latencies.extend(lat)
    elif kind == "hello":
        out.hello = {k: v for k, v in msg.items() if k != "kind"}
    elif kind == "tegra":
        out.tegra.append(msg)
    elif kind == "result":
        out.doc, out.run = msg.get("doc"), msg.get("run")
    elif kind == "error":
        out.error, out.exit = str(msg.get("message")), int(msg.get("exit") or 1)


def remote_facts(run: RemoteRun) -> dict[str, Any]:
    """The ``remote`` member of a result: the target and what it is (GPU, driver, TensorRT, L4T)."""
    env = run.hello.get("environment") or {}
    gpus = env.get("gpus") or []
    facts = {"target": run.target.label, "host": run.hello.get("host"), "l4t": run.hello.get("l4t"),
             "gpu": gpus[0].get("name") if gpus else None, "driver": gpus[0].get("driver") if gpus else None,
             "versions": {k: v for k, v in (env.get("versions") or {}).items() if v},
             "samples_received": run.samples, "first_sample_s": run.first_sample_s,
             "first_sample_delay_s": run.first_sample_delay_s}
    if run.tegra:
        from trtstudio.remote.tegrastats import series

        facts["tegrastats"] = series(run.tegra, [float(m.get("t_s", 0.0)) for m in run.tegra])
        facts["memory_note"] = "unified memory (Jetson): RAM is shared by the CPU and the GPU"
    return facts


def partial_doc(run: RemoteRun, argv_model: str, backend: str) -> dict[str, Any]:
    """A ``profile`` document of the samples received before the connection was lost."""
    from trtstudio.measure.stats import latency_stats

    lat = np.asarray(run.latencies, dtype=float)
    stats = latency_stats(lat)
    return {"schema": "trtstudio.profile/1", "backend": backend, "model": argv_model, "shapes": {},
            "latency_ms": stats, "jitter_ms": stats.get("jitter_ms"), "throughput": {}, "memory": {},
            "error": run.error, "stopped": True, "notes": [], "warnings": [run.error] if run.error else []}


def run_profile_command(args: argparse.Namespace, argv: list[str]) -> int:
    """``trtstudio profile ... --remote URL``: the run on the target, printed and saved here."""
    from trtstudio.commands._emit import emit
    from trtstudio.commands.profile import render_text

    target = Target.parse(args.remote)
    progress = _Progress(sys.stderr)  # on stderr: --json's document on stdout stays clean
    files = [path for _, path in _file_args(args)]
    result = remote_profile(target, strip_remote(argv), files, on_line=progress)
    if result.exit == 2 and result.doc is None:
        raise RemoteError(args.remote, result.error or "the run failed")
    doc = result.doc if result.doc is not None else partial_doc(result, str(args.model), str(args.backend))
    doc["model"] = str(args.model)  # the user's path, not the target's cache
    doc["remote"] = remote_facts(result)
    if result.error and result.doc is not None:
        doc.setdefault("warnings", []).append(result.error)
    if (getattr(args, "session", None) or getattr(args, "report", None)):
        doc["written"] = _save(args, result, doc)
    code = emit(doc, args.json, _render(render_text), where=args.remote)
    if result.error and not doc.get("error"):
        print(f"error: {args.remote}: {result.error}", file=sys.stderr)
    return max(code, result.exit)


def _render(render_text: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
    def render(doc: dict[str, Any]) -> str:
        r = doc.get("remote") or {}
        head = f"target   {r.get('target')} ({r.get('host')}; {r.get('gpu') or 'no NVML GPU'}" + \
               (f"; L4T {r['l4t']['l4t']}" if r.get("l4t") else "") + ")"
        try:
            body = render_text(doc)
        except (KeyError, TypeError):  # a partial document: the statistics it has
            body = json.dumps(doc.get("latency_ms"), indent=1)
        return head + "\n" + body
    return render


def _save(args: argparse.Namespace, result: RemoteRun, doc: dict[str, Any]) -> list[str]:
    from trtstudio.report.model import Report, make_session
    from trtstudio.report.session import RunData, write_session
    from trtstudio.report.writers import write_report

    if result.run:
        run = RunData.from_json(result.run)
    else:  # the connection was lost: the samples received
        run = RunData.from_profile_doc(doc, name=f"{Path(str(args.model)).name} (remote, cut short)")
        run.latency_ms = np.asarray(result.latencies, dtype=np.float32)
    run.model = str(args.model)
    run.config = {**run.config, "remote": {k: v for k, v in doc["remote"].items() if k != "tegrastats"}}
    is_onnx = str(args.model).lower().endswith(".onnx")
    session = make_session(model=str(args.model) if is_onnx else None, run=run, title=args.title)
    session.environment = (result.hello.get("environment") or session.environment)
    written = []
    if args.session:
        written.append(str(write_session(args.session, session)))
    if args.report:
        written += [str(p) for p in write_report(Report.from_session(session), args.report)]
    return written


class _Progress:
    """One status line on stderr while a remote run streams (the CLI's live view)."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.count, self.last = stream, 0, 0.0

    def __call__(self, msg: dict[str, Any]) -> None:
        if msg.get("kind") == "hello":
            print(f"remote: connected to {msg.get('host')}", file=self.stream, flush=True)
        elif msg.get("kind") == "samples":
            lat = msg.get("latency_ms") or []
            self.count += len(lat)
            now = time.monotonic()
            if lat and now - self.last > 1.0:
                self.last = now
                print(f"remote: {self.count} inferences, last {float(np.median(lat)):.3f} ms median",
                      file=self.stream, flush=True)


def forward(name: str, args: argparse.Namespace, argv: list[str]) -> int:
    """``trtstudio NAME ... --remote URL`` for build/check/precision/scenario: run it there."""
    target = Target.parse(args.remote)
    target.check_reachable()
    mapping = {path: target.put(path) for _, path in _file_args(args)}
    outputs = {str(getattr(args, d)): d for d in OUTPUT_DESTS if isinstance(getattr(args, d, None), str)}
    workdir = target.run(script="mktemp -d").stdout.decode().strip()
    if not workdir:
        raise RemoteError(args.remote, "could not make a working folder on the target")
    out_map = {local: f"{workdir}/{Path(local).name}" for local in outputs}
    words = [target.python, "-m", "trtstudio", name, *_replace(strip_remote(argv), {**mapping, **out_map})]
    proc = subprocess.run(target.command(words), stdin=subprocess.DEVNULL, check=False)
    if proc.returncode == 255:
        raise RemoteError(args.remote, f"connection to {target.label} lost")
    for local, remote in out_map.items():
        try:
            target.get(remote, local)
        except RemoteError as exc:
            print(f"warning: {exc.one_line()}", file=sys.stderr)
    target.run(words=["rm", "-rf", workdir])
    return proc.returncode


def run_remote(name: str, args: argparse.Namespace, argv: list[str]) -> int:
    """The entry from the command line for ``--remote``."""
    if name not in REMOTE_COMMANDS:
        raise InputError(None, f"--remote works with {', '.join(REMOTE_COMMANDS)}")
    if name == "profile":
        return run_profile_command(args, argv)
    return forward(name, args, argv)


# -- the window: a ProfileRequest run on a target ------------------------------------------------------
def request_argv(request: Any) -> list[str]:
    """The ``trtstudio profile`` flags that describe ``request`` (a ``ProfileRequest``), the inverse
    of ``commands.profile.request_from_args`` for what a remote run needs."""
    from trtstudio.backends.shapes.text import shape_text

    argv = [str(request.model), "--backend", str(request.backend), "--warmup", str(request.warmup)]
    if request.shapes:
        argv += ["--shapes", ",".join(f"{k}:{shape_text(v)}" for k, v in request.shapes.items())]
    if request.input_path:
        argv += ["--input", str(request.input_path)]
    argv += ["--duration", str(request.duration_s)] if request.duration_s else ["--iterations", str(request.iterations)]
    if request.threads:
        argv += ["--threads", str(request.threads)]
    if request.cuda_graph:
        argv += ["--cuda-graph", "--variant-rounds", str(request.variant_rounds)]
    if request.per_layer:
        argv += ["--per-layer", "--per-layer-iterations", str(request.layer_iterations)]
    if getattr(request, "device", None) is not None:
        argv += ["--device", str(request.device)]
    return argv


@dataclass
class RemoteResult:
    """What the panel reads of a run's result: its error, whether it stopped, how many inferences."""

    error: str | None = None
    stopped: bool = False
    count: int = 0


@dataclass
class RemoteOutcome:
    """A remote run as the window takes a local ``ProfileOutcome``: ``to_dict()`` (the profile
    document with ``remote``), ``run_data()`` (samples included), ``record``, ``result``, ``layers``."""

    request: Any
    doc: dict[str, Any]
    run: Any  # report.session.RunData
    result: RemoteResult
    record: Any = None
    layers: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return self.doc

    def run_data(self, name: str | None = None) -> Any:
        if name:
            self.run.name = name
        return self.run


class _StopWhen:
    """An Event-like view of a task state's stop request (for :func:`remote_profile`)."""

    def __init__(self, state: Any) -> None:
        self.state = state

    def is_set(self) -> bool:
        return bool(self.state is not None and self.state.is_stop_requested())


def profile_request_remote(url: str, request: Any, state: Any = None, samples: Any = None) -> RemoteOutcome:
    """Run ``request`` on the target ``url`` as the Live profile panel runs it locally: samples into
    ``samples`` while it goes on, ``loaded``/``cold`` events on ``state``; a stop on ``state`` ends
    the remote run and keeps what was received."""
    from trtstudio.profiling.session import RunRecord
    from trtstudio.report.session import RunData

    target = Target.parse(url)
    argv = request_argv(request)
    files = [str(p) for p in (request.model, request.input_path) if p and Path(str(p)).is_file()]

    def on_line(msg: dict[str, Any]) -> None:
        if state is None:
            return
        if msg.get("kind") == "loaded":
            state.event("loaded", shapes=msg.get("shapes") or {}, batch=msg.get("batch", 1),
                        notes=[f"on {target.label}", *(msg.get("notes") or [])])
        elif msg.get("kind") == "cold" and msg.get("cold_ms") is not None:
            state.event("cold", cold_ms=float(msg["cold_ms"]))

    out = remote_profile(target, argv, files, samples=samples, on_line=on_line, stop=_StopWhen(state))  # type: ignore[arg-type]
    if out.exit == 2 and out.doc is None:
        raise RemoteError(url, out.error or "the run failed")
    doc = out.doc if out.doc is not None else partial_doc(out, str(request.model), str(request.backend))
    doc["model"] = str(request.model)
    doc["remote"] = remote_facts(out)
    stopped = bool(doc.get("stopped")) or (state is not None and state.is_stop_requested())
    if out.run:
        run = RunData.from_json(out.run)
    else:
        run = RunData.from_profile_doc(doc, name=f"{Path(str(request.model)).name} on {target.label}")
        run.latency_ms = np.asarray(out.latencies, dtype=np.float32)
    run.model = str(request.model)
    run.config = {**run.config, "remote": {k: v for k, v in doc["remote"].items() if k != "tegrastats"}}
    run.record = {**run.record, "model": str(request.model)} if run.record else {}  # the user's path, not the cache's
    record = RunRecord.from_json(run.record) if run.record else None
    error = None if stopped and out.doc is None else (out.error if out.exit else None)
    return RemoteOutcome(request, doc, run, RemoteResult(error, stopped, out.samples), record, doc.get("layers"))
