"""``trtstudio profile``: run a model or engine in a loop and report latency, throughput and memory."""

from __future__ import annotations

import argparse
from typing import Any

from trtstudio.commands._args import add_backend, add_json

HELP = "run a model or engine repeatedly: latency percentiles, throughput, memory, per-layer times"
SCHEMA = "trtstudio.profile/1"


def configure(parser: argparse.ArgumentParser) -> None:
    """Flags of ``trtstudio profile``."""
    parser.add_argument("model", metavar="MODEL_OR_ENGINE",
                        help="an .onnx model, a PyTorch file (.pt2, TorchScript) or a TensorRT engine plan")
    add_backend(parser)
    parser.add_argument("--shapes", help="input shapes, e.g. input:1x3x224x224,mask:1x128")
    count = parser.add_mutually_exclusive_group()
    count.add_argument("--iterations", type=int,
                       help="measured inferences (default 1000); with --shape-mix: requests, split in the "
                            "proportions of the file's counts (default: the counts as given)")
    count.add_argument("--duration", type=float, metavar="S",
                       help="measure for S seconds instead (with --shape-mix: replay the counts as weights for S s)")
    parser.add_argument("--warmup", type=int, default=10, help="inferences before measuring (default 10)")
    parser.add_argument("--threads", type=int, help="onnxruntime intra-op threads")
    parser.add_argument("--device", type=int, metavar="N",
                        help="CUDA device of a GPU backend (ort-cuda, ort-trt, tensorrt, rtx, torch, torch-cuda; default 0)")
    parser.add_argument("--per-layer", action="store_true", help="also profile per layer")
    parser.add_argument("--per-layer-iterations", type=int, default=20, metavar="N", help="profiled runs (default 20)")
    parser.add_argument("--input", metavar="DATA", help="input data: .npz, .npy or a folder of NAME.npy")
    parser.add_argument("--cuda-graph", action="store_true",
                        help="TensorRT, torch-cuda: capture the enqueue in a CUDA graph (torch-cuda also runs eager "
                             "against it in paired rounds: the 'variants' section)")
    parser.add_argument("--variant-rounds", type=int, default=10, metavar="N",
                        help="with --cuda-graph: paired rounds of eager against the graph (default 10; 0: none)")
    parser.add_argument("--samples-csv", metavar="F", help="write raw samples as CSV")
    parser.add_argument("--samples-npy", metavar="F", help="write raw samples as .npy")
    parser.add_argument("--trace", metavar="F", help="write a Chrome-trace / Perfetto JSON timeline")
    parser.add_argument("--session", metavar="S.trtstudio", help="save the run as a session (reopen with `trtstudio report`)")
    parser.add_argument("--report", metavar="R.html|.pdf|.json|.csv", help="write a report of the run")
    parser.add_argument("--title", help="title of the session/report")
    shapes = parser.add_argument_group("shapes as they arrive in production")
    shapes.add_argument("--sweep", action="append", metavar="NAME=V1,V2,...",
                        help="run one step per value: batch=1,2,4,8 (every input with a dynamic first dim) or "
                             "INPUT=1x3x320x320,1x3x640x640 (tied dims follow; several --sweep move together); "
                             "--iterations/--duration apply to each step")
    shapes.add_argument("--latency-budget", type=float, metavar="MS",
                        help="with --sweep: name the largest step whose p99 is within MS milliseconds")
    shapes.add_argument("--shape-mix", metavar="FILE",
                        help="replay a mix of shapes in a seeded random order: CSV (a column per input, dims "
                             "joined by x, and count), JSON [{\"shapes\": {NAME: DIMS}, \"count\": N}] or a folder "
                             "of .npy/.npz inputs")
    shapes.add_argument("--mix-seed", type=int, default=0, metavar="N", help="seed of the mix's order (default 0)")
    shapes.add_argument("--pad-to", choices=["opt"],
                        help="with --shape-mix: also replay every request padded to its recommended profile's opt shape")
    add_json(parser, SCHEMA)


# request field -> the flag that sets it (errors from the core name fields; the CLI shows flags)
FIELD_FLAGS = {"shapes": "--shapes", "input": "--input", "iterations": "--iterations", "warmup": "--warmup",
               "threads": "--threads", "device": "--device", "variant_rounds": "--variant-rounds", "cuda_graph": "--cuda-graph", "layer_iterations": "--per-layer-iterations", "duration_s": "--duration",
               "model": "MODEL_OR_ENGINE", "sweep": "--sweep", "latency_budget": "--latency-budget",
               "pad_to": "--pad-to"}


def request_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~trtstudio.profiling.session.ProfileRequest` this command's flags describe (the
    window's Live profile panel builds the same request from its form)."""
    from trtstudio.backends.base import parse_shapes
    from trtstudio.backends.catalogue import resolve
    from trtstudio.profiling.session import ProfileRequest

    iterations = args.iterations if args.duration is None else None
    return ProfileRequest(
        model=str(args.model), backend=resolve(args.backend, str(args.model)), shapes=parse_shapes(args.shapes),
        input_path=args.input, warmup=args.warmup,
        iterations=iterations if iterations is not None or args.duration else 1000,
        duration_s=args.duration, threads=args.threads, device=args.device, cuda_graph=bool(args.cuda_graph),
        variant_rounds=args.variant_rounds,
        per_layer=bool(args.per_layer), layer_iterations=args.per_layer_iterations,
    )


# what each kind of engine output is, for a file given to profile that is not a model to run
_OUTPUT_KINDS = {
    "times": "trtexec's per-inference times (--exportTimes)",
    "profile": "a per-layer profile (trtexec --exportProfile)",
    "layers": "an engine's layer information (--exportLayerInfo)",
    "log": "a TensorRT log",
    "metadata": "engine metadata (TREx)",
}


def refuse_engine_outputs(path: str) -> None:
    """InputError for a file that describes an engine instead of being one (a timing, profile or
    layer JSON, a log, metadata), saying what it is and which commands read it."""
    from pathlib import Path

    from trtstudio.errors import InputError
    from trtstudio.filekinds import ENGINE, classify

    p = Path(path)
    if classify(p) != ENGINE or not p.is_file():
        return  # a model, or a file the backends refuse themselves (missing: their message)
    from trtstudio.engine.readers import find_reader

    try:
        kind = find_reader(p).kind
    except InputError:
        return  # not a TensorRT output the readers know: the backend says what it makes of it
    if kind in _OUTPUT_KINDS:
        beside = "" if kind == "layers" else " beside the engine's layer information"
        raise InputError(p, f"is {_OUTPUT_KINDS[kind]}, a record of an engine, not a model or engine to run: read "
                            f"it with `trtstudio layers {p.name}` or `trtstudio report {p.name}`{beside}; "
                            "profile the .onnx model or the engine plan")


def profile(args: argparse.Namespace) -> dict[str, Any]:
    """Run the profile ``args`` describe (``run_profile``, as the window does) and return its document."""
    from trtstudio.errors import FieldError
    from trtstudio.profiling.session import run_profile

    refuse_engine_outputs(str(args.model))
    try:
        request = request_from_args(args)
        if any(getattr(args, a, None) is not None for a in ("sweep", "shape_mix", "latency_budget", "pad_to")):
            from trtstudio.profiling.production import run_production

            return run_production(args, request)
        outcome = run_profile(request)
    except FieldError as exc:
        raise exc.named(FIELD_FLAGS.get(exc.field, exc.field)) from None
    doc = outcome.to_dict()
    result = outcome.result
    if args.samples_csv or args.samples_npy or args.trace:
        from trtstudio.profiling import export

        snap = result.samples.snapshot()
        if args.samples_csv:
            export.write_samples_csv(args.samples_csv, snap)
        if args.samples_npy:
            export.write_samples_npy(args.samples_npy, snap)
        if args.trace:
            export.write_trace(args.trace, export.chrome_trace(snap, outcome.monitor.snapshot(), outcome.layers,
                                                               name=str(args.model)))
    if getattr(args, "session", None) or getattr(args, "report", None):
        doc["written"] = _save_report(args, outcome)
    return doc


def _save_report(args: argparse.Namespace, outcome: Any) -> list[str]:
    """Write ``--session`` and/or ``--report`` for a finished run; returns the files written."""
    from pathlib import Path

    from trtstudio.errors import InputError
    from trtstudio.filekinds import ENGINE, ONNX, classify
    from trtstudio.report.model import make_session
    from trtstudio.report.session import write_session
    from trtstudio.report.writers import REPORT_WRITERS, write_report

    if args.report:
        REPORT_WRITERS.for_path(args.report)  # unknown extension: InputError before any work
    model_path = str(args.model)
    run = outcome.run_data(name=args.title or f"{Path(model_path).name} ({outcome.request.backend})")
    kind = classify(model_path, sniff=False)
    try:  # the graph of an ONNX model, the layers of an engine (a PyTorch file: the run alone)
        session = make_session(model=model_path if kind == ONNX else None,
                               engine=[model_path] if kind == ENGINE else None, run=run, title=args.title)
    except InputError as exc:  # an engine plan this machine cannot read: keep the run
        session = make_session(run=run, title=args.title)
        session.warnings.append(f"engine layers not read: {exc.one_line()}")
    written: list[str] = []
    if args.session:
        written.append(str(write_session(args.session, session)))
    if args.report:
        from trtstudio.report.model import Report

        written += [str(p) for p in write_report(Report.from_session(session), args.report)]
    return written


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return str(n)


def render_text(doc: dict[str, Any]) -> str:
    """The report as a readable summary table."""
    lat = doc["latency_ms"]
    lines = [f"model    {doc['model']}", f"backend  {doc['backend']}",
             "shapes   " + ", ".join(f"{k}: {'x'.join(map(str, v))}" for k, v in doc["shapes"].items())]
    plan = doc.get("shape_plan")
    if plan and any(any(not isinstance(d, int) for d in i.get("declared", [])) for i in plan.get("inputs", [])):
        from trtstudio.backends.shapes import ShapePlan

        lines.append("shape plan (dynamic inputs; where each size came from):")
        lines.extend(f"  {ln}" for ln in ShapePlan.from_json(plan).render_text().splitlines())
    if lat.get("count"):
        lines.append("")
        lines.append(f"{'latency (ms)':<14}{'mean':>10}{'median':>10}{'p90':>10}{'p95':>10}{'p99':>10}{'p99.9':>10}{'min':>10}{'max':>10}")
        lines.append(f"{'':<14}" + "".join(f"{lat[k]:>10.4f}" for k in ("mean", "median", "p90", "p95", "p99", "p999", "min", "max")))
        lines.append(f"count {lat['count']}   std {lat['std']:.4f} ms   CoV {lat['cov']:.2f}%   jitter (p99-p50) {doc['jitter_ms']:.4f} ms")
    if doc.get("cold_ms") is not None:
        lines.append(f"cold first inference {doc['cold_ms']:.3f} ms")
    tp = doc["throughput"]
    lines.append(f"throughput {tp['inferences_per_s']:.1f} inferences/s, {tp['samples_per_s']:.1f} samples/s")
    parts = {k: v for k, v in doc.get("parts_ms", {}).items() if v is not None}
    if parts:
        lines.append("stages (mean)  " + "  ".join(f"{k[:-3]} {v:.4f} ms" for k, v in parts.items()))
    if doc.get("variants"):
        from trtstudio.profiling.variants import render_text as variants_text

        lines.extend(variants_text(doc["variants"]))
    for key, value in doc.get("memory", {}).items():
        if isinstance(value, dict):
            leak = value.get("leak", {})
            lines.append(f"memory {key:<22} peak {_fmt_bytes(value['peak']):>11}  " + (f"leak: {leak.get('verdict')}" if leak else ""))
        else:
            lines.append(f"memory {key:<22} {_fmt_bytes(value):>11}")
    if doc.get("layers"):
        lines.append("")
        lines.extend(_layer_lines(doc["layers"]))
    if doc.get("kernel_recording"):
        from trtstudio.profiling.kernel_cover import render_text as kernels_text

        lines.extend(kernels_text(doc["kernel_recording"]))
    for note in doc.get("notes", []):
        lines.append(f"note: {note}")
    for warning in doc.get("warnings", []):
        lines.append(f"warning: {warning}")
    for path in doc.get("written", []):
        lines.append(f"wrote {path}")
    return "\n".join(lines)


def _layer_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The per-layer table, slowest first: each row's name, its ONNX op type, the provider in full
    (the column as wide as its longest text) and its time per inference."""
    name_w = min(max((len(r["name"]) for r in rows), default=5), 47) + 1
    op_w = max((len(str(r.get("op_type") or "")) for r in rows), default=0)
    op_w = max(op_w, 2) + 2 if op_w else 0
    prov_w = max((len(str(r.get("provider") or "")) for r in rows), default=8) + 2
    out = [f"{'layer':<{name_w}}{'op' if op_w else '':<{op_w}}{'provider':<{prov_w}}{'ms':>10}  onnx nodes"]
    for row in sorted(rows, key=lambda r: -r["time_ms"]):
        flag = " (fallback)" if row.get("fallback") else ""
        op = str(row.get("op_type") or "")
        out.append(f"{row['name'][:name_w - 1]:<{name_w}}{op:<{op_w}}{str(row.get('provider') or ''):<{prov_w}}"
                   f"{row['time_ms']:>10.4f}  {', '.join(row['onnx_nodes'])}{flag}")
    return out


def run(args: argparse.Namespace) -> int:
    """Entry point of ``trtstudio profile``; exit 1 when the backend failed mid-run."""
    from trtstudio.commands._emit import emit

    doc = profile(args)
    if doc.get("schema") != SCHEMA:  # a sweep or a shape mix
        from trtstudio.profiling.production import render_text as production_text

        return emit(doc, args.json, production_text)
    return emit(doc, args.json, render_text)
