"""``trtstudio profile --sweep`` / ``--shape-mix``: shapes as they arrive in production.

The glue between ``trtstudio profile``'s flags and :mod:`~trtstudio.profiling.sweep` /
:mod:`~trtstudio.profiling.shape_mix`: which flags go together, the run, and saving the result
in a session (``Session.sweeps``) and a report (its Shapes section). The window's Sweep tab calls
the same ``run_sweep`` and :func:`save` does the same saving.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from trtstudio.errors import FieldError, InputError

# flags a sweep or a mix does not take (they belong to one run at one shape)
_ONE_RUN_ONLY = {"per_layer": "--per-layer", "cuda_graph": "--cuda-graph", "samples_csv": "--samples-csv",
                 "samples_npy": "--samples-npy", "trace": "--trace", "input": "--input"}


def check_flags(args: argparse.Namespace) -> None:
    """FieldError for flags that do not go together (the CLI names the flag)."""
    sweep, mix = getattr(args, "sweep", None), getattr(args, "shape_mix", None)
    if sweep and mix:
        raise FieldError("sweep", "give --sweep or --shape-mix, not both")
    if getattr(args, "latency_budget", None) is not None and not sweep:
        raise FieldError("latency_budget", "applies to --sweep")
    if getattr(args, "pad_to", None) and not mix:
        raise FieldError("pad_to", "applies to --shape-mix")
    for attr, flag in _ONE_RUN_ONLY.items():
        if getattr(args, attr, None):
            raise InputError(flag, "is for one run at one shape; "
                                   f"{'--sweep' if sweep else '--shape-mix'} runs many"
                                   + ("; give the mix's data as a folder of .npy/.npz" if attr == "input" else ""))


def run_production(args: argparse.Namespace, request: Any) -> dict[str, Any]:
    """Run the sweep or the mix ``args`` ask for and return its document (files written listed)."""
    check_flags(args)
    if args.sweep:
        from trtstudio.profiling.sweep import run_sweep

        doc = run_sweep(request, list(args.sweep), budget_ms=args.latency_budget).to_dict()
    else:
        from trtstudio.profiling.shape_mix import run_mix

        doc = run_mix(request, args.shape_mix, pad_to=args.pad_to, seed=args.mix_seed,
                      iterations=args.iterations, duration_s=args.duration).to_dict()
    if getattr(args, "session", None) or getattr(args, "report", None):
        doc["written"] = save(doc, session_path=args.session, report_path=args.report, title=args.title)
    return doc


def save(doc: dict[str, Any], session_path: str | None = None, report_path: str | None = None,
         title: str | None = None) -> list[str]:
    """Write a sweep or mix document into a new session and/or a report; the files written."""
    from trtstudio.filekinds import ONNX, classify
    from trtstudio.report.model import Report, make_session
    from trtstudio.report.session import write_session
    from trtstudio.report.writers import REPORT_WRITERS, write_report

    if report_path:
        REPORT_WRITERS.for_path(report_path)  # unknown extension: InputError before any work
    model = str(doc["model"])
    try:
        session = make_session(model=model if classify(model, sniff=False) == ONNX else None,
                               title=title or f"{Path(model).name}: {kind_of(doc)}")
    except InputError as exc:
        session = make_session(title=title)
        session.warnings.append(f"model not read: {exc.one_line()}")
    session.sweeps.append(doc)
    written: list[str] = []
    if session_path:
        written.append(str(write_session(session_path, session)))
    if report_path:
        written += [str(p) for p in write_report(Report.from_session(session), report_path)]
    return written


def kind_of(doc: dict[str, Any]) -> str:
    """'batch sweep', 'shape sweep (images)' or 'shape mix'."""
    if str(doc.get("schema", "")).startswith("trtstudio.mix/"):
        return "shape mix"
    return "batch sweep" if doc.get("axis") == "batch" else f"shape sweep ({doc.get('axis')})"


def render_text(doc: dict[str, Any]) -> str:
    """Text of a sweep or mix document."""
    if str(doc.get("schema", "")).startswith("trtstudio.mix/"):
        from trtstudio.profiling.shape_mix import render_text as mix_text

        return mix_text(doc)
    from trtstudio.profiling.sweep import render_text as sweep_text

    return sweep_text(doc)
