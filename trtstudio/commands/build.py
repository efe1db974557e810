"""``trtstudio build``: build a TensorRT / TensorRT-RTX engine from an ONNX model and list its layers."""

from __future__ import annotations

import argparse
import re
import signal
import sys
from pathlib import Path
from typing import Any

HELP = "build an engine from an ONNX model with TensorRT-RTX or TensorRT and list its layers"
SCHEMA = "trtstudio.build/1"
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
    parser.add_argument("--fp16", action="store_true", help="TensorRT 10 weak typing: allow FP16 kernels")
    parser.add_argument("--int8", action="store_true", help="TensorRT 10 weak typing: allow INT8 kernels")
    parser.add_argument("--bf16", action="store_true", help="TensorRT 10 weak typing: allow BF16 kernels")
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
    """'input:1x3x224x224,mask:1x128' -> {name: dims}; names may themselves hold ':'."""
    from trtstudio.errors import InputError

    out: dict[str, tuple[int, ...]] = {}
    if not text:
        return out
    for item in text.split(","):
        name, sep, dims = item.strip().rpartition(":")
        name = name.strip().strip("'\"")
        try:
            shape = tuple(int(d) for d in dims.lower().split("x")) if dims.strip() else ()
        except ValueError:
            shape = None  # type: ignore[assignment]
        if not sep or not name or shape is None or any(d < 0 for d in shape):
            raise InputError(None, f"{flag}: bad shape {item!r}; write NAME:1x3x224x224")
        out[name] = shape
    return out


def profiles_from_args(args: argparse.Namespace) -> list[dict[str, tuple[tuple[int, ...], ...]]]:
    """One optimization profile from --shapes or --min/--opt/--max-shapes (empty: model defaults)."""
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
        triple = (mins.get(name, opt), opt, maxs.get(name, opt))
        if len({len(s) for s in triple}) != 1:
            raise InputError(None, f"input {name!r}: min/opt/max shapes have different ranks")
        prof[name] = triple
    return [prof] if prof else []


def _layers(result: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Layer JSON of the built engine (inspector output, else the verbose log) and its reader warnings."""
    info = result.engine_info
    if info is None:
        return [], []
    return [lay.to_json() for lay in info.layers], [w for w in info.warnings if not w.startswith("builder ")]


def _print_human(result: Any, layers: list[dict[str, Any]]) -> None:
    out = sys.stdout
    for w in result.warnings:
        print(f"warning: {w}", file=sys.stderr)
    plan = getattr(result, "shape_plan", None)
    if plan is not None and plan.inputs:
        print("input shapes", file=out)
        print(plan.render_text(), file=out)
    if result.ok:
        backend = result.versions.get("module", "?")
        version = result.versions.get(backend, "")
        targets = ",".join(result.settings.get("targets") or []) or "this GPU"
        print(
            f"built {result.engine_path or '(not written)'}: {result.engine_bytes} bytes in {result.seconds:.2f} s "
            f"with {backend} {version} for {targets}",
            file=out,
        )
        print(f"{len(layers)} layers", file=out)
        for lay in layers:
            prec = lay.get("precision") or "-"
            nodes = ", ".join(lay.get("onnx_nodes") or [])
            print(
                f"  {lay['index']:4d}  {lay['type']:<16} {prec:<6} {lay['name']}"
                + (f"  <- {nodes}" if nodes else ""),
                file=out,
            )
        return
    if result.unsupported:
        print(f"build failed after {result.seconds:.2f} s: the ONNX parser rejected "
              f"{len(result.unsupported)} node(s)", file=out)
    else:
        print(f"build failed after {result.seconds:.2f} s: {result.error}", file=out)
    for u in result.unsupported:
        op = u.get("op_type") or "?"
        label = str(u.get("node"))
        dom = u.get("domain")
        where = f" [{dom}]" if dom and dom != "ai.onnx" else ""
        print(f"  unsupported: {label}{'' if label.endswith(op) else f' ({op})'}{where}: {u.get('reason')}", file=out)
        if u.get("hint"):
            print(f"      hint: {u['hint']}", file=out)


def run(args: argparse.Namespace) -> int:
    """Build; print a summary or JSON. Exit 0 built, 1 build failed, 2 bad input / missing backend."""
    from trtstudio.backends.build import BuildOptions, build_engine
    from trtstudio.errors import InputError

    model = Path(args.model)
    if not model.is_file():
        raise InputError(model, "no such file")
    out = Path(args.output) if args.output else model.with_suffix(".engine")
    targets = [t for t in (args.target or "").split(",") if t.strip()]
    opts = BuildOptions(
        backend=args.backend,
        targets=targets,
        workspace_bytes=parse_size(args.workspace) if args.workspace else None,
        profiles=profiles_from_args(args),  # type: ignore[arg-type]
        opt_level=args.opt_level,
        timing_cache=args.timing_cache,
        detailed_profiling=not args.names_only,
        tf32=not args.no_tf32,
        fp16=args.fp16,
        int8=args.int8,
        bf16=args.bf16,
        strongly_typed=args.strongly_typed,
    )
    shown = set(_LEVELS[: _LEVELS.index(args.log_level.upper()) + 1]) | {"INTERNAL_ERROR"}

    def on_log(severity: str, message: str) -> None:
        if severity in shown and not args.json:
            print(f"[{severity[0]}] {message}", file=sys.stderr)

    interrupted = {"flag": False}

    def on_sigint(signum: int, frame: Any) -> None:
        interrupted["flag"] = True

    previous = None
    try:
        previous = signal.signal(signal.SIGINT, on_sigint)
    except ValueError:  # not the main thread
        previous = None
    try:
        result = build_engine(model, out, opts, log=on_log, cancel=lambda: interrupted["flag"])
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if args.save_log:
        Path(args.save_log).write_text(result.log_text(), encoding="utf-8")
    layers, reader_warnings = _layers(result) if result.ok else ([], [])
    if args.json:
        doc = {
            "schema": SCHEMA,
            "ok": result.ok,
            "model": str(model),
            "engine_path": result.engine_path,
            "engine_bytes": result.engine_bytes,
            "seconds": round(result.seconds, 4),
            "versions": result.versions,
            "settings": result.settings,
            "unsupported": result.unsupported,
            "shape_plan": result.shape_plan.to_json() if getattr(result, "shape_plan", None) is not None else None,
            "layers": layers,
            "warnings": result.warnings + reader_warnings,
            "cancelled": result.cancelled,
            "log": [r.to_json() for r in result.log],
            "error": result.error,
        }
        from trtstudio.fileio import dump

        dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        _print_human(result, layers)
    return 0 if result.ok else 1
