"""``trtstudio memory``: where an engine's GPU memory goes, and what a deployment will need."""

from __future__ import annotations

import argparse

from trtstudio.commands._args import add_json

HELP = "an engine's GPU memory by category (weights, activations, context, ...) and a deployment's total"
INPUTS: tuple[str, ...] = ()  # engines are named as engine.naming.resolve takes them: it checks them


def configure(parser: argparse.ArgumentParser) -> None:
    """Flags of ``trtstudio memory``."""
    parser.add_argument("engines", nargs="+", metavar="ENGINE",
                        help="each an engine, named as diff names a side: a folder, FILE,FILE,..., a TREx prefix, "
                             "one file (a log, a layer JSON, a plan, a trtstudio build --json document) or a session")
    parser.add_argument("--contexts", type=int, metavar="K", help="execution contexts of each engine per process "
                                                                   "(predicts the deployment's total)")
    parser.add_argument("--instances", type=int, metavar="P", help="processes, each with its CUDA context and a copy "
                                                                    "of every engine's weights")
    parser.add_argument("--gpu-memory", metavar="SIZE", help="the GPU's memory (16GB = 16e9 bytes, 16GiB, "
                                                             "15360MiB): says whether the deployment fits")
    parser.add_argument("--measure", nargs="?", const="1,2,4", metavar="N,N,...",
                        help="on a GPU: load the model (ENGINE is then an .onnx/.pt2 run by --backend) in 1, 2 and 4 "
                             "processes (or the counts given) and set what they take against what was predicted "
                             "(trtstudio.memory-measure/1)")
    parser.add_argument("--backend", default="torch-cuda", help="with --measure: the backend that runs the model "
                                                                "(torch-cuda)")
    parser.add_argument("--device", type=int, default=0, help="with --measure: the GPU (default 0)")
    add_json(parser, "trtstudio.memory/1")


def run(args: argparse.Namespace) -> int:
    """Read each engine, predict where asked, print."""
    from trtstudio.commands._emit import emit
    from trtstudio.engine.memory import engine_memory, memory_doc, parse_size, predict, render_text
    from trtstudio.errors import InputError

    for flag, value in (("--contexts", args.contexts), ("--instances", args.instances)):
        if value is not None and value < 1:
            raise InputError(flag, f"must be 1 or more, not {value}")
    gpu = None
    if args.gpu_memory is not None:
        try:
            gpu = parse_size(args.gpu_memory)
        except ValueError as exc:
            raise InputError("--gpu-memory", str(exc)) from None
    if args.measure is not None:
        return _measure(args)
    engines = [engine_memory(name) for name in args.engines]
    prediction = None
    if args.contexts or args.instances or gpu is not None:
        prediction = predict(engines, args.contexts or 1, args.instances or 1, gpu)
    return emit(memory_doc(engines, prediction), args.json, render_text)


def _measure(args: argparse.Namespace) -> int:
    """``--measure``: predicted against measured GPU memory of 1, 2, 4 processes of one model."""
    from trtstudio.commands._emit import emit
    from trtstudio.errors import InputError
    from trtstudio.fileio import check_input
    from trtstudio.profiling.memory_measure import measure, render_text

    if len(args.engines) != 1:
        raise InputError("--measure", "measures one model at a time")
    try:
        counts = tuple(int(x) for x in args.measure.split(",") if x.strip())
    except ValueError:
        raise InputError("--measure", f"'{args.measure}' is not a list of process counts (1,2,4)") from None
    if not counts or min(counts) < 1:
        raise InputError("--measure", "process counts must be 1 or more")
    check_input(args.engines[0], what="a model to run")
    return emit(measure(args.engines[0], args.backend, counts, args.device), args.json, render_text)
