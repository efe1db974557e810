"""``trtstudio report``: a report (HTML, PDF, JSON, CSV) from a session, or from engine files and a model."""

from __future__ import annotations

import argparse

from trtstudio.commands._args import add_json

HELP = "write a report (.html .pdf .json .csv) from a .trtstudio session, or from engine files and an ONNX model"
SCHEMA = "trtstudio.report/1"


def configure(parser: argparse.ArgumentParser) -> None:
    """Flags of ``trtstudio report``."""
    parser.add_argument("session", nargs="*", metavar="SESSION | FILE",
                        help="a .trtstudio session (from profile --session), or an ONNX model and engine files "
                             "(as --onnx and --engine take them)")
    parser.add_argument("-o", "--output", metavar="OUT", help="report file: .html, .pdf, .json or .csv (by extension)")
    parser.add_argument("--engine", nargs="+", metavar="FILE", help="files of one engine (layer info, profile, logs), no session")
    parser.add_argument("--onnx", metavar="MODEL", help="the ONNX model (summary, graph picture, layer mapping)")
    parser.add_argument("--title", help="report title")
    parser.add_argument("--what", choices=("all", "layers", "samples"), help="CSV only: what to write (default all)")
    parser.add_argument("--save-session", metavar="S.trtstudio", help="also save the inputs as a session")
    add_json(parser, SCHEMA)


def _model_and_engine(files: list[str], onnx: str | None,
                      engine: list[str] | None) -> tuple[str | None, list[str] | None]:
    """The model and engine files among the positional ``files`` and ``--onnx``/``--engine``."""
    from trtstudio.errors import InputError
    from trtstudio.filekinds import SESSION, model_and_engines

    model, engine_files = model_and_engines(files, {SESSION: "a session makes a report alone (without engine "
                                                             "files or --onnx)"})
    if model and onnx:
        raise InputError(model, f"one ONNX model per report (--onnx gives {onnx})")
    engine_files += engine or []
    return model or onnx, engine_files or None


def run(args: argparse.Namespace) -> int:
    """Build the report and write it; exit 2 for bad input."""
    from trtstudio.commands._emit import emit
    from trtstudio.errors import InputError
    from trtstudio.filekinds import ONNX, SESSION, classify
    from trtstudio.report.model import Report, make_session
    from trtstudio.report.session import NotASession, load_session, write_session
    from trtstudio.report.writers import REPORT_WRITERS, write_report

    if not args.output and not args.json:
        raise InputError(None, "give -o OUT (.html, .pdf, .json, .csv) or --json")
    if args.output:
        REPORT_WRITERS.for_path(args.output)
    files = list(args.session or [])
    if len(files) == 1 and not (args.engine or args.onnx) and classify(files[0]) != ONNX:
        try:
            session = load_session(files[0])
        except NotASession as exc:
            if classify(files[0]) == SESSION:
                raise
            try:  # not a session: an engine's file, as `layers` and `gui` take it
                session = make_session(engine=files, title=args.title)
            except InputError as engine_exc:
                raise InputError(exc.path, f"neither a trtstudio session ({exc.why}) nor an engine file "
                                           f"({engine_exc.message})") from None
        if args.title:
            session.title = args.title
    elif files or args.engine or args.onnx:
        model, engine = _model_and_engine(files, args.onnx, args.engine)
        session = make_session(model=model, engine=engine, title=args.title)
    else:
        raise InputError(None, "give a .trtstudio session, or --engine FILES and/or --onnx MODEL")
    if args.save_session:
        write_session(args.save_session, session)
    report = Report.from_session(session)
    written = write_report(report, args.output, what=args.what) if args.output else []
    return emit(report.to_json() if args.json else {}, args.json, written=written)
