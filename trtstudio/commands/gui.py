"""``trtstudio gui [MODEL.onnx] [ENGINE FILES...] [--screenshot OUT.png]``, or ``trtstudio gui RUN.trtstudio``."""

from __future__ import annotations

import argparse

from trtstudio.commands._args import add_window

INPUTS: tuple[str, ...] = ()  # a session, the model, the engine's names (engine.naming.resolve): checked as opened
HELP = "open the main window on a model and/or engine files, or on a saved session"

# what the window cannot open from its command line, and what to do instead
REFUSE = {
    "torch": "is a PyTorch file: profile it with `trtstudio profile` (or open it in the window's Live profile panel)",
    "triton": "is a Triton sweep session: `trtstudio compare` it",
}


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="*", help="an ONNX model and/or one engine (a folder of its files, FILE,FILE,... "
                                            "or several files: layer JSON, profile, logs, plan; a TREx prefix "
                                            "DIR/NAME.onnx.engine), or one .trtstudio session")
    add_window(p, "window size for --screenshot (default 1600x1000)")


def run(args: argparse.Namespace) -> int:
    from trtstudio.commands._args import parse_size
    from trtstudio.filekinds import model_and_engines, session_among

    session = session_among(args.files)
    model, engine = model_and_engines(args.files, REFUSE) if session is None else (None, [])
    if engine:  # named as every command names an engine
        from trtstudio.engine.naming import resolve

        named = resolve(engine)
        model, engine = model or named.model, named.files
    if model:
        from trtstudio.fileio import check_input

        check_input(model, what="an ONNX model")
    size = parse_size(args.size)
    if args.screenshot and model:
        from trtstudio.graph.model import load_model

        load_model(model, infer_shapes=False)  # fail fast with the one-line error before Qt starts
    if args.screenshot and session:
        from trtstudio.report.session import load_session

        load_session(session)  # the same: a file that is not a session is one line before Qt starts
    from trtstudio.ui.app import run_gui

    return run_gui(model, engine, screenshot=args.screenshot, size=size, session=session)
