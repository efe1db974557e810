"""``trtstudio report``: a report (HTML, PDF, JSON, CSV) from a session, or from engine files and a model."""

from __future__ import annotations

import argparse
from typing import Any

from trtstudio.commands._args import add_json

HELP = "write a report (.html .pdf .json .csv) from a .trtstudio session, or from engine files and an ONNX model"
SCHEMA = "trtstudio.report/1"
INPUTS = ("onnx", "run")  # a session or an engine's names: load_session and engine.naming.resolve check them


def configure(parser: argparse.ArgumentParser) -> None:
    """Flags of ``trtstudio report``."""
    parser.add_argument("session", nargs="*", metavar="SESSION | FILE",
                        help="a .trtstudio session (from profile --session), or an ONNX model and an engine "
                             "(as --onnx and --engine take them)")
    parser.add_argument("-o", "--output", metavar="OUT", help="report file: .html, .pdf, .json or .csv (by extension)")
    parser.add_argument("--engine", nargs="+", metavar="ENGINE",
                        help="one engine: a folder of its files, FILE,FILE,... or several files (layer info, "
                             "profile, logs), a TREx prefix (DIR/NAME.onnx.engine); no session")
    parser.add_argument("--onnx", metavar="MODEL", help="the ONNX model (summary, graph picture, layer mapping)")
    parser.add_argument("--title", help="report title")
    parser.add_argument("--what", choices=("all", "layers", "samples"), help="CSV only: what to write (default all)")
    parser.add_argument("--run", action="append", metavar="S.trtstudio",
                        help="add the runs of a saved session (profile --session) to a model and engine report; "
                             "repeatable. A run of another model is refused (the model's hash decides)")
    parser.add_argument("--against", nargs="+", metavar="FILE",
                        help="an FP16/FP32 build of the same model (its files, a folder or a session): the INT8 "
                             "section names the layer groups where INT8 loses to it (as trtstudio explain --against)")
    parser.add_argument("--precision", metavar="P.json",
                        help="a trtstudio precision --json document: its accuracy figures and, per variant, where "
                             "accuracy is lost (the first diverging node, drawn on an excerpt of the graph)")
    parser.add_argument("--save-session", metavar="S.trtstudio", help="also save the inputs as a session")
    add_json(parser, SCHEMA)


def _model_and_engine(files: list[str], onnx: str | None,
                      engine: list[str] | None) -> tuple[str | None, list[str] | None]:
    """The model and the engine's files among the positional ``files`` and ``--onnx``/``--engine``
    (the engine named as ``engine.naming.resolve`` takes it; a model beside a folder's files is its)."""
    from trtstudio.engine.naming import resolve
    from trtstudio.errors import InputError
    from trtstudio.filekinds import SESSION, model_and_engines

    model, engine_files = model_and_engines(files, {SESSION: "a session makes a report alone (without engine "
                                                             "files or --onnx)"})
    if model and onnx:
        raise InputError(model, f"one ONNX model per report (--onnx gives {onnx})")
    engine_files += engine or []
    if not engine_files:
        return model or onnx, None
    named = resolve(engine_files)
    return model or onnx or named.model, named.files


def runs_of(paths: list[str], model: str | None) -> list[Any]:
    """The runs of the sessions at ``paths``, each checked against ``model`` (InputError naming the
    session and both hashes when a run ran another model)."""
    import os

    from trtstudio.errors import InputError
    from trtstudio.fileio import file_sha256
    from trtstudio.profiling.session import RunRecord
    from trtstudio.report.session import load_session

    want = file_sha256(model) if model else None
    runs = []
    for path in paths:
        session = load_session(path)
        if not session.runs:
            raise InputError(path, "this session has no run")
        for run in session.runs:
            rec = RunRecord.from_json(run.record)
            have = rec.model_sha256 if rec else None
            if want and have and have != want:
                raise InputError(path, f"its run '{run.name}' ran {os.path.basename(rec.model) if rec else '?'} "
                                       f"(sha256 {have[:12]}), not {os.path.basename(str(model))} (sha256 {want[:12]})")
            runs.append(run)
    return runs


def add_precision(session: Any, path: str) -> None:
    """Put a ``trtstudio precision --json`` document's accuracy figures (per variant) and its
    localisations (``divergence``, with excerpts of the session's model graph) in ``session``."""
    from trtstudio.errors import InputError
    from trtstudio.jsonio import read_json_file
    from trtstudio.report.precision_sections import divergence_sections

    doc = read_json_file(path, "precision results")
    if not isinstance(doc, dict) or doc.get("schema") != "trtstudio.precision/1":
        raise InputError(path, "not a trtstudio precision --json document (schema trtstudio.precision/1)")
    graph = None
    if session.model_path:
        from trtstudio.graph.model import load_model

        graph = load_model(session.model_path).graph
    acc = dict(session.accuracy or {})
    for v in doc.get("variants") or []:
        if isinstance(v, dict) and v.get("accuracy"):
            acc[str(v.get("name"))] = v["accuracy"]
    acc["divergence"] = divergence_sections(doc, graph)
    session.accuracy = acc


def add_against(report: Any, files: list[str]) -> None:
    """The INT8 section of ``report`` against another build (``--against``); InputError when the
    report's engine has no INT8 layer."""
    from trtstudio.diff.sides import load_side
    from trtstudio.errors import InputError
    from trtstudio.report.precision_sections import explain_section

    info = report.engine_info
    if info is None or report.precision_explain is None:
        raise InputError(files[0], "--against compares an INT8 engine with another build; this report's engine "
                                   "has no INT8 layer" if info is not None else "--against needs the report's engine")
    against = load_side(files)
    sec = explain_section(info, (report.engine or {}).get("files"), against, name=report.precision_explain["engine"])
    report.precision_explain = sec


def run(args: argparse.Namespace) -> int:
    """Build the report and write it; exit 2 for bad input."""
    import os

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
    one_file = len(files) == 1 and os.path.isfile(files[0]) and classify(files[0]) != ONNX
    if one_file and not (args.engine or args.onnx):
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
        if args.run:
            raise InputError(files[0], "--run adds runs to a report of a model and engine files; "
                                       "this session is a report of its own")
    elif files or args.engine or args.onnx:
        model, engine = _model_and_engine(files, args.onnx, args.engine)
        runs = runs_of(args.run or [], model)
        session = make_session(model=model, engine=engine, run=runs[0] if runs else None, title=args.title)
        session.runs.extend(runs[1:])
    else:
        raise InputError(None, "give a .trtstudio session, or --engine FILES and/or --onnx MODEL")
    if args.precision:
        add_precision(session, args.precision)
    if args.save_session:
        write_session(args.save_session, session)
    report = Report.from_session(session)
    if args.against:
        add_against(report, args.against)
    written = write_report(report, args.output, what=args.what) if args.output else []
    return emit(report.to_json() if args.json else {}, args.json, written=written)
