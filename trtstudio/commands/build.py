"""``trtstudio build``: build a TensorRT / TensorRT-RTX engine from an ONNX model and list its layers."""

from __future__ import annotations

import argparse
import re
import signal
import sys
from pathlib import Path
from typing import Any

HELP = "build an engine from an ONNX model with TensorRT-RTX or TensorRT and list its layers"
INPUTS = ("model", "timing_cache?", "calib/")  # checked before the run (cli), copied to a --remote target
_LEVELS = ("ERROR", "WARNING", "INFO", "VERBOSE")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.I)


def add_model_and_backend(parser: argparse.ArgumentParser) -> None:
    """The ONNX model argument and ``--backend rtx|tensorrt|auto`` (build and check share them)."""
    parser.add_argument("model", help="ONNX model file")
    parser.add_argument(
        "--backend",
        choices=("rtx", "tensorrt", "auto"),
        default="auto",
        help="rtx (tensorrt_rtx), tensorrt, or auto: TensorRT-RTX if installed, else TensorRT",
    )


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the build options (trtexec-style shape flags)."""
    add_model_and_backend(parser)
    parser.add_argument(
        "--target",
        default="sm86",
        help="TensorRT-RTX compute capabilities, comma-separated (sm75,sm80,sm86,sm89,sm120,sm121)",
    )
    parser.add_argument("-o", "--output", help="engine file to write (default: MODEL with .engine)")
    parser.add_argument("--workspace", help="workspace memory pool limit, e.g. 512M or 1G")
    parser.add_argument("--shapes", help="static input shapes, e.g. input:1x3x224x224[,other:...]")
    parser.add_argument("--min-shapes", help="profile minimum shapes (name:dims,...)")
    parser.add_argument("--opt-shapes", help="profile optimum shapes (name:dims,...)")
    parser.add_argument("--max-shapes", help="profile maximum shapes (name:dims,...)")
    parser.add_argument("--opt-level", type=int, help="builder optimization level 0..5")
    parser.add_argument("--timing-cache", help="timing cache file to read and update")
    parser.add_argument("--fp16", action="store_true",
                        help="FP16: on TensorRT-RTX/TensorRT 11 (strongly typed) the model is converted as "
                             "trtstudio precision does (FP16 weights and casts, FP32 islands) and that is built; "
                             "TensorRT 10: the builder flag")
    parser.add_argument("--bf16", action="store_true", help="BF16, as --fp16")
    parser.add_argument("--int8", action="store_true",
                        help="INT8: strongly typed runtimes need --calib (Q/DQ placed as trtstudio precision "
                             "does); TensorRT 10: the builder flag")
    parser.add_argument("--calib", metavar="DIR",
                        help="calibration data for --int8 on a strongly typed runtime: a folder of .npy/.npz, "
                             "images, or samples.py")
    parser.add_argument("--require-precision", action="store_true",
                        help="fail (exit 1) when the built engine has no layer in the precision asked for "
                             "(--fp16/--bf16/--int8); without it that is a warning")
    parser.add_argument("--require-cache-hits", action="store_true",
                        help="fail the build when the timing cache (--timing-cache) misses a layer "
                             "(TensorRT's --errorOnTimingCacheMiss; TensorRT-RTX has no timing cache)")
    parser.add_argument("--no-tf32", action="store_true", help="disable TF32 for FP32 math")
    parser.add_argument("--strongly-typed", action="store_true", help="build a strongly typed network")
    parser.add_argument("--names-only", action="store_true", help="profiling verbosity LAYER_NAMES_ONLY")
    parser.add_argument(
        "--save-log", help="write the verbose build log to this file (readable by trtstudio layers)"
    )
    parser.add_argument(
        "--log-level",
        choices=[lv.lower() for lv in _LEVELS],
        default="warning",
        help="builder messages printed to stderr while building (default: warning)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON document (schema trtstudio.build/1)"
    )


def parse_size(text: str) -> int:
    """'1G' / '512MiB' / '1048576' -> bytes (binary units)."""
    from trtstudio.errors import InputError

    m = _SIZE.match(text)
    if not m:
        raise InputError(None, f"bad size {text!r}; write e.g. 512M or 1G")
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def parse_shapes(text: str | None, flag: str) -> dict[str, tuple[int, ...]]:
    """'input:1x3x224x224,mask:1x128' -> {name: dims} (the one rule: :mod:`trtstudio.backends.shapes.text`)."""
    from trtstudio.backends.shapes.text import parse_shapes as parse

    return parse(text, flag)


def profiles_from_args(args: argparse.Namespace) -> list[dict[str, tuple[tuple[int, ...], ...]]]:
    """One optimization profile from --shapes or --min/--opt/--max-shapes (empty: the shape plan's)."""
    from trtstudio.errors import InputError

    static = parse_shapes(args.shapes, "--shapes")
    mins = parse_shapes(args.min_shapes, "--min-shapes")
    opts = parse_shapes(args.opt_shapes, "--opt-shapes")
    maxs = parse_shapes(args.max_shapes, "--max-shapes")
    prof: dict[str, tuple[tuple[int, ...], ...]] = {name: (s, s, s) for name, s in static.items()}
    for name in dict.fromkeys([*mins, *opts, *maxs]):
        if name in prof:
            raise InputError(None, f"input {name!r} is in --shapes and in --min/--opt/--max-shapes")
        opt = opts.get(name) or maxs.get(name) or mins[name]
        prof[name] = (mins.get(name, opt), opt, maxs.get(name, opt))
    return [prof] if prof else []


# request field -> the flag that sets it (errors from the core name fields; the CLI shows flags)
FIELD_FLAGS = {"shapes": "--shapes/--min-shapes/--opt-shapes/--max-shapes", "targets": "--target",
               "output": "--output", "opt_level": "--opt-level", "workspace_bytes": "--workspace",
               "timing_cache": "--timing-cache", "model": "MODEL", "fp16": "--fp16", "bf16": "--bf16",
               "int8": "--int8", "calib": "--calib"}


def request_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~trtstudio.backends.build_request.BuildRequest` these flags describe (the window's
    build dialog builds the same request from its form)."""
    from trtstudio.backends.build_request import BuildRequest

    profiles = profiles_from_args(args)
    return BuildRequest(
        model=str(Path(args.model)),
        output=args.output,
        backend=args.backend,
        targets=[t for t in (args.target or "").split(",") if t.strip()],
        workspace_bytes=parse_size(args.workspace) if args.workspace else None,
        profiles=profiles,  # type: ignore[arg-type]
        opt_level=args.opt_level,
        timing_cache=args.timing_cache,
        detailed_profiling=not args.names_only,
        tf32=not args.no_tf32,
        fp16=args.fp16,
        int8=args.int8,
        bf16=args.bf16,
        strongly_typed=args.strongly_typed,
        calib=args.calib,
        require_precision=args.require_precision,
        require_cache_hits=getattr(args, "require_cache_hits", False),
    )



class _Progress:
    """The build's progress on standard error: a bar redrawn in place on a terminal (phase, step,
    elapsed), one plain line per phase in a pipe or file."""

    def __init__(self, stream: Any, width: int = 24) -> None:
        import time

        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.width = width
        self.clock = time.perf_counter
        self.t0 = self.clock()
        self.phase = ""
        self.drawn = 0.0

    def update(self, phase: str, step: int, total: int) -> None:
        now = self.clock() - self.t0
        if not self.tty:
            if step == 0:
                print(f"build: {now:7.2f} s  {phase}", file=self.stream, flush=True)
            self.phase = phase
            return
        if phase == self.phase and now - self.drawn < 0.1 and step < total:
            return
        self.phase, self.drawn = phase, now
        filled = round(self.width * step / total) if total else 0
        bar = "#" * filled + "." * (self.width - filled)
        text = f"\r[{bar}] {now:7.1f} s  {phase[:40]:<40} {step}/{total}"
        self.stream.write(text)
        self.stream.flush()

    def done(self) -> None:
        if self.tty and self.phase:
            self.stream.write("\r" + " " * (self.width + 70) + "\r")
            self.stream.flush()


def run(args: argparse.Namespace) -> int:
    """Build; print a summary or JSON. Exit 0 built, 1 build failed (a conversion that failed, or no layer in
    the precision asked for with --require-precision; the JSON document is printed), 2 bad input /
    missing backend."""
    from trtstudio.backends.build_request import run_build
    from trtstudio.errors import FieldError, InputError

    model = Path(args.model)
    if not model.is_file():
        raise InputError(model, "no such file")
    request = request_from_args(args)
    shown = set(_LEVELS[: _LEVELS.index(args.log_level.upper()) + 1]) | {"INTERNAL_ERROR"}

    def on_log(severity: str, message: str) -> None:
        if severity in shown and not args.json:
            print(f"[{severity[0]}] {message}", file=sys.stderr)

    interrupted = {"flag": False}

    def on_sigint(signum: int, frame: Any) -> None:
        interrupted["flag"] = True

    try:
        previous = signal.signal(signal.SIGINT, on_sigint)
    except ValueError:  # not the main thread
        previous = None
    try:
        bar = None if args.json else _Progress(sys.stderr)
        result = run_build(request, log=on_log, cancel=lambda: interrupted["flag"],
                           progress=bar.update if bar is not None else None)
        if bar is not None:
            bar.done()
    except FieldError as exc:
        raise exc.named(FIELD_FLAGS.get(exc.field, exc.field)) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if args.save_log:
        Path(args.save_log).write_text(result.log_text(), encoding="utf-8")
    if not args.json:
        for w in result.warnings:
            print(f"warning: {w}", file=sys.stderr)
    from trtstudio.commands._emit import emit

    return emit(result.to_json(), args.json, lambda _doc: result.render_text())
