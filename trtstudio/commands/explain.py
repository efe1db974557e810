"""``trtstudio explain``: why an INT8 engine is not faster, cause by cause, with a suggestion."""

from __future__ import annotations

import argparse

from trtstudio.commands._args import add_json

HELP = "why an INT8 engine is not faster: Q/DQ and reformats, wide convolutions, groups slower than FP16"
INPUTS: tuple[str, ...] = ()  # sides are named as engine.naming.resolve takes them: it checks them


def configure(parser: argparse.ArgumentParser) -> None:
    """Flags of ``trtstudio explain``."""
    parser.add_argument("engine", metavar="ENGINE",
                        help="the INT8 engine: a folder, FILE,FILE,..., a TREx prefix, one file or a session")
    parser.add_argument("--against", metavar="OTHER", help="an FP16/FP32 build of the same model, to find the "
                                                           "groups where INT8 loses (aligned as trtstudio diff does)")
    parser.add_argument("--onnx", metavar="MODEL", help="the ONNX model both were built from (node names for the "
                                                        "suggestion)")
    add_json(parser, "trtstudio.explain/1")


def run(args: argparse.Namespace) -> int:
    """Load, explain, print."""
    from trtstudio.commands._emit import emit
    from trtstudio.diff.explain import explain, has_int8, render_text
    from trtstudio.diff.sides import load_side
    from trtstudio.errors import InputError

    engine = load_side(args.engine, args.onnx)
    if not has_int8(engine):
        raise InputError(args.engine, "no INT8 layer in this engine: explain looks at an INT8 (Q/DQ or calibrated) "
                                      "engine; compare two builds with trtstudio diff")
    against = load_side(args.against, args.onnx) if args.against else None
    if against is not None and against.name == engine.name:
        against.name = f"{against.name} (against)"
    return emit(explain(engine, against).to_json(), args.json, render_text)
