"""``trtstudio compare``: compare two or more runs/engines (sessions, report JSON files, or an
engine named as every command names one: a folder, files joined with commas, a TREx prefix, a
file; trtexec's per-inference times in them count as a run)."""

from __future__ import annotations

import argparse
from typing import Any

from trtstudio.commands._args import add_json, add_labels

INPUTS: tuple[str, ...] = ()  # sessions, report JSON, engines (engine.naming.resolve): _load checks each
HELP = ("compare sessions or engine files (FP32 vs FP16 vs INT8, two builds): latency, speed-ups, memory, accuracy, "
        "layer diff")


def configure(parser: argparse.ArgumentParser) -> None:
    """Flags of ``trtstudio compare``."""
    parser.add_argument("inputs", nargs="+", metavar="INPUT",
                        help=".trtstudio sessions, report .json files, or engines (a folder of one engine's files, "
                             "its files joined with commas, a TREx prefix DIR/NAME.onnx.engine, as trtstudio diff "
                             "takes them); the first is the baseline")
    parser.add_argument("-o", "--output", metavar="OUT", help="comparison file: .html, .pdf or .json")
    add_labels(parser)
    add_json(parser, "trtstudio.comparison/2; trtstudio.triton-comparison/1 for Triton sessions")


def _load(path: str) -> Any:
    """The report of one input: a session, a report JSON, or an engine side (``diff.sides.load_side``)."""
    from pathlib import Path

    from trtstudio.errors import InputError
    from trtstudio.filekinds import ENGINE, SESSION, classify
    from trtstudio.report.model import Report
    from trtstudio.report.session import NotASession, load_session

    p = Path(path)
    if not p.exists() or p.is_dir():  # a folder, a comma list, a TREx prefix (or nothing: resolve says so)
        return _engine_report(path)
    if not p.is_file():
        from trtstudio.fileio import check_input

        check_input(p)  # names what it is: a named pipe, a device, a socket
        raise InputError(p, "not a regular file")
    if p.suffix.lower() == ".json" and classify(p) == ENGINE:  # a report JSON (Triton sessions: _run_triton)
        from trtstudio.jsonio import read_json_file

        doc = read_json_file(p, "report JSON")
        if not isinstance(doc, dict) or doc.get("schema") != "trtstudio.report/1":
            return _engine_report(path)  # an engine's own file (graph/layer JSON, profile, timings)
        try:
            from trtstudio.report.compare import compare

            rep = Report.from_json(doc)
            compare([rep, rep], ["a", "b"])  # a field of the wrong type fails here, naming this file
            return rep
        except (TypeError, AttributeError, KeyError, IndexError, ValueError, OverflowError) as exc:
            raise InputError(p, f"damaged report JSON: {type(exc).__name__}: {exc}") from None
    try:
        return Report.from_session(load_session(p))
    except NotASession:
        if classify(p) == SESSION:
            raise
        return _engine_report(path)


def _engine_report(spec: str) -> Any:
    """The report of one engine (named as ``engine.naming.resolve`` takes it; an ONNX model among or
    beside its files maps its layers), with the engine object for the layer diff."""
    from trtstudio.diff.sides import load_side
    from trtstudio.report.model import Report, make_session

    side = load_side(spec)
    session = make_session(model=side.model, engine=side.engine, title=side.name)
    session.engines[0].paths = list(side.paths)
    return Report.from_session(session)


def run(args: argparse.Namespace) -> int:
    """Load, compare, write; exit 2 for bad input."""
    import os

    from trtstudio.commands._args import labels
    from trtstudio.commands._emit import emit
    from trtstudio.errors import InputError
    from trtstudio.filekinds import TRITON, classify
    from trtstudio.report.compare import compare
    from trtstudio.report.writers import COMPARISON_WRITERS, write_comparison

    if len(args.inputs) < 2:
        raise InputError(None, "compare needs at least two inputs (sessions, report JSON or engine files)")
    from trtstudio.triton.search_report import is_search_file

    if any(os.path.isfile(p) and is_search_file(p) for p in args.inputs):  # Triton config searches
        from trtstudio.commands.triton_search import run_compare

        return run_compare(args)
    if any(os.path.isfile(p) and classify(p) == TRITON for p in args.inputs):
        return _run_triton(args)
    if args.output:
        COMPARISON_WRITERS.for_path(args.output)
    names = labels(args.names, args.inputs)
    comp = compare([_load(p) for p in args.inputs], names, args.title)
    written = write_comparison(comp, args.output) if args.output else []
    doc = comp.to_json() if args.json else {"summary": comp.summary, "warnings": comp.warnings, "story": comp.story}
    return emit(doc, args.json, render_text, written=written)


def render_text(doc: dict[str, Any]) -> str:
    """One line per input: its median latency and its speed-up over the first with its interval;
    then each verdict and the comparison's warnings."""
    from trtstudio.report.compare import prov_text, speedup_text

    lines = [" ".join(doc["story"])] if doc.get("story") else []
    for s in doc["summary"]:
        med = s["median_ms"]
        prov = s.get("provenance") or {}
        where = f"  ({prov_text(prov)})" if prov else ""
        lines.append(f"{s['name']:<30} median {'-' if med is None else f'{med:.4f} ms':>12}  speed-up {speedup_text(s)}"
                     f"{where}")
    lines += [f"{s['verdict']}: {s['verdict_text']}" for s in doc["summary"] if s.get("verdict_text")]
    lines += [f"warning: {w}" for w in doc.get("warnings") or []]
    return "\n".join(lines)


def _run_triton(args: argparse.Namespace) -> int:
    """Triton sessions (``trtstudio triton --session``): per matching step, throughput and p50/p99
    deltas against the first, and each session's recommendation (trtstudio.triton-comparison/1)."""
    from pathlib import Path

    from trtstudio.commands._args import labels
    from trtstudio.commands._emit import emit
    from trtstudio.errors import InputError
    from trtstudio.triton.report import compare_sessions, comparison_text, load_session, write_session

    names = labels(args.names, args.inputs)
    if args.output and Path(args.output).suffix.lower() != ".json":
        raise InputError(args.output, "Triton sessions compare to .json (or --json / text)")
    comp = compare_sessions([load_session(p) for p in args.inputs], names)
    if args.output:
        write_session(comp, args.output)
    return emit(comp, args.json, comparison_text, written=[args.output] if args.output else None)
