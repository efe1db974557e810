"""``trtstudio compare``: compare two or more runs/engines (sessions or report JSON files)."""

from __future__ import annotations

import argparse
from typing import Any

HELP = "compare sessions (FP32 vs FP16 vs INT8, two builds): latency, speed-ups, memory, accuracy, layer diff"


def configure(parser: argparse.ArgumentParser) -> None:
    """Flags of ``trtstudio compare``."""
    parser.add_argument("inputs", nargs="+", metavar="SESSION", help=".trtstudio sessions or report .json files; the first is the baseline")
    parser.add_argument("-o", "--output", metavar="OUT", help="comparison file: .html, .pdf or .json")
    parser.add_argument("--names", help="comma-separated labels, one per input (default: file names)")
    parser.add_argument("--title", help="comparison title")
    parser.add_argument("--json", action="store_true", help="print the comparison JSON (schema trtstudio.comparison/1)")


def _load(path: str) -> Any:
    from pathlib import Path

    from trtstudio.errors import InputError
    from trtstudio.report.model import Report
    from trtstudio.report.session import load_session

    p = Path(path)
    if p.suffix.lower() == ".json":
        from trtstudio.jsonio import read_json_file

        doc = read_json_file(p, "report JSON")
        if not isinstance(doc, dict) or doc.get("schema") != "trtstudio.report/1":
            raise InputError(p, "not a trtstudio report JSON (schema trtstudio.report/1)")
        try:
            from trtstudio.report.compare import compare

            rep = Report.from_json(doc)
            compare([rep, rep], ["a", "b"])  # a field of the wrong type fails here, naming this file
            return rep
        except (TypeError, AttributeError, KeyError, IndexError, ValueError, OverflowError) as exc:
            raise InputError(p, f"damaged report JSON: {type(exc).__name__}: {exc}") from None
    return Report.from_session(load_session(p))


def run(args: argparse.Namespace) -> int:
    """Load, compare, write; exit 2 for bad input."""
    from pathlib import Path

    from trtstudio.errors import InputError
    from trtstudio.report.compare import compare
    from trtstudio.report.writers import COMPARISON_WRITERS, write_comparison

    if len(args.inputs) < 2:
        raise InputError(None, "compare needs at least two sessions")
    from trtstudio.triton.report import is_triton_file

    if any(is_triton_file(p) for p in args.inputs):
        return _run_triton(args)
    if not args.output and not args.json:
        raise InputError(None, "give -o OUT (.html, .pdf, .json) or --json")
    if args.output:
        COMPARISON_WRITERS.for_path(args.output)
    names = [n.strip() for n in args.names.split(",")] if args.names else [Path(p).stem for p in args.inputs]
    if len(names) != len(args.inputs):
        raise InputError(None, f"--names has {len(names)} labels for {len(args.inputs)} inputs")
    comp = compare([_load(p) for p in args.inputs], names, args.title)
    written = write_comparison(comp, args.output) if args.output else []
    if args.json:
        from trtstudio.commands.report import emit_json

        emit_json(comp.to_json(), written)
    else:
        from trtstudio.report.compare import speedup_text

        for s in comp.summary:
            med = s["median_ms"]
            print(f"{s['name']:<30} median {'-' if med is None else f'{med:.4f} ms':>12}  speed-up {speedup_text(s)}")
        for s in comp.summary:
            if s.get("verdict_text"):
                print(f"{s['verdict']}: {s['verdict_text']}")
        for w in comp.warnings:
            print(f"warning: {w}")
        for p in written:
            print(f"wrote {p}")
    return 0


def _run_triton(args: argparse.Namespace) -> int:
    """Triton sessions (``trtstudio triton --session``): per matching step, throughput and p50/p99
    deltas against the first, and each session's recommendation (trtstudio.triton-comparison/1)."""
    from pathlib import Path

    from trtstudio.errors import InputError
    from trtstudio.jsonio import dumps, write_stdout
    from trtstudio.triton.report import compare_sessions, comparison_text, load_session, write_session

    names = [n.strip() for n in args.names.split(",")] if args.names else [Path(p).stem for p in args.inputs]
    if len(names) != len(args.inputs):
        raise InputError(None, f"--names has {len(names)} labels for {len(args.inputs)} inputs")
    if args.output and Path(args.output).suffix.lower() != ".json":
        raise InputError(args.output, "Triton sessions compare to .json (or --json / text)")
    comp = compare_sessions([load_session(p) for p in args.inputs], names)
    if args.output:
        write_session(comp, args.output)
    if args.json:
        write_stdout(dumps(comp, indent=2))
    else:
        print(comparison_text(comp))
        if args.output:
            print(f"wrote {args.output}")
    return 0
