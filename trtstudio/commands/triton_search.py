"""``trtstudio triton-search MODEL_REPO/MODEL|MODEL.onnx``: which Triton config meets the latency
target at the highest throughput (variants loaded under their own names, swept, unloaded)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

HELP = "search Triton model configs (instances, max batch, dynamic batching) for the highest throughput under a latency budget"
INPUTS = ("target/",)


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", help="a model-repository entry (MODEL_REPO/MODEL with config.pbtxt) or an ONNX model "
                                  "(served by a python-backend model running ONNX Runtime)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--server", metavar="URL", help="a running Triton (HTTP, host:port) started with "
                                                       "--model-control-mode=explicit; variants load there under names of their own")
    where.add_argument("--launch", action="store_true",
                       help="start a tritonserver on 127.0.0.1 (free ports) for the search and stop it after")
    p.add_argument("--python", metavar="PY", help="with --launch: the Python environment whose nvidia-pytriton "
                                                  "brings tritonserver (default: the one trtstudio builds for its tests)")
    p.add_argument("--latency-budget", metavar="pNN=MS", help="e.g. p99=20ms: variants whose p99 is above it lose")
    p.add_argument("--gpu-memory", metavar="SIZE", help="e.g. 4GiB: variants using more GPU memory (server metrics) lose")
    p.add_argument("--min-throughput", type=float, metavar="N", help="inferences/s a variant must reach")
    p.add_argument("--exhaustive", action="store_true", help="measure every variant at every concurrency "
                                                             "(default: quick coordinate search with early stopping)")
    p.add_argument("--concurrency", default="1,2,4,8,16", help="concurrency steps of each variant's sweep (default 1,2,4,8,16)")
    p.add_argument("--window", type=float, default=0.5, help="measurement window in seconds (default 0.5)")
    p.add_argument("--max-windows", type=int, default=5, help="windows per step at most (default 5)")
    p.add_argument("--instances", default="1,2,4", help="instance counts to try (default 1,2,4)")
    p.add_argument("--max-batch", default="1,2,4,8,16", help="max_batch_size values to try (default 1,2,4,8,16)")
    p.add_argument("--queue-delay", default="off,0,100,1000",
                   help="dynamic batching max queue delays in µs, off = no dynamic batching (default off,0,100,1000)")
    p.add_argument("--preferred", action="store_true", help="also try preferred_batch_size = max_batch_size")
    p.add_argument("--kind", choices=["cpu", "gpu"], help="instance kind of the variants (default: the model's)")
    p.add_argument("--gpus", metavar="0,1", help="GPU instances on each of these GPUs (instance_group gpus; KIND_GPU)")
    p.add_argument("--profiles", metavar="0,1", help="a TensorRT plan's optimization profiles to try, one per variant "
                                                     "(instance_group profile; default: the model's)")
    p.add_argument("--shapes", help="for an ONNX model with dynamic dims: NAME:1xCxHxW (served with those dims)")
    p.add_argument("--max-loaded", type=int, default=1, help="variants loaded at once at most (default 1)")
    p.add_argument("--out", metavar="DIR", help="write the winner's model-repository entry under DIR, load it once "
                                                "more and re-measure it")
    p.add_argument("--no-confirm", action="store_true", help="with --out: do not load and re-measure the written entry")
    p.add_argument("--header", action="append", default=[], metavar="NAME=VALUE",
                   help="send this header to the server (repeatable; values are never written into documents)")
    p.add_argument("--metrics", default="auto", metavar="URL", help="the server's /metrics page (GPU memory); 'none' to skip")
    p.add_argument("--json", action="store_true", help="print the trtstudio.tritonsearch/1 document")
    p.add_argument("--session", metavar="S", help="save the search (JSON) for `trtstudio compare` and the window")
    p.add_argument("--report", metavar="R", help="write a report: .html, .md or .json (the front's chart, the table)")


def request_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~trtstudio.triton.search.SearchRequest` these flags describe."""
    from pathlib import Path

    from trtstudio.errors import InputError
    from trtstudio.triton.client import Connection
    from trtstudio.triton.request import parse_headers
    from trtstudio.triton.search import Constraints, SearchRequest, SearchSettings, parse_budget, parse_bytes
    from trtstudio.triton.variants import ModelSource, Space, gpu_list, parse_list, plan_profiles

    if not args.server and not args.launch:
        raise InputError(args.target, "give --server URL (a Triton started with --model-control-mode=explicit) or "
                                      "--launch (trtstudio starts one)")
    if args.python and not args.launch:
        raise InputError("--python", "goes with --launch")
    if args.server:
        from trtstudio.triton.client import parse_url

        host_port, proto = parse_url(args.server)
        if proto != "http":
            raise InputError(args.server, "the search talks HTTP to the server (its HTTP port, 8000 by default)")
        args.server = host_port
    shapes = None
    if args.shapes:
        from trtstudio.backends.base import parse_shapes

        shapes = parse_shapes(args.shapes)
    path = Path(args.target)
    if path.suffix.lower() == ".onnx":
        source = ModelSource.from_onnx(path, shapes)
    else:
        if args.shapes:
            raise InputError("--shapes", "goes with an ONNX model (a repository entry's config says its dims)")
        source = ModelSource.from_entry(path)
    pct, ms = parse_budget(args.latency_budget) if args.latency_budget else (99, None)
    if args.min_throughput is not None and not args.min_throughput > 0:
        raise InputError("--min-throughput", "must be positive")
    constraints = Constraints(ms, pct, parse_bytes(args.gpu_memory) if args.gpu_memory else None, args.min_throughput)
    space = Space(parse_list(args.instances, "--instances"), parse_list(args.max_batch, "--max-batch"),
                  parse_list(args.queue_delay, "--queue-delay", allow_off=True), bool(args.preferred),
                  plan_profiles(args.profiles, source), gpu_list(args.gpus, args.kind, source))
    conc = parse_list(args.concurrency, "--concurrency")
    if 0 in conc:
        raise InputError("--concurrency", "give positive numbers")
    for name, value in (("--window", args.window), ("--max-windows", args.max_windows), ("--max-loaded", args.max_loaded)):
        if not value > 0:
            raise InputError(name, "must be positive")
    settings = SearchSettings(concurrency=conc, window_s=args.window, max_windows=args.max_windows,
                              mode="exhaustive" if args.exhaustive else "quick", space=space,
                              kind={"cpu": "KIND_CPU", "gpu": "KIND_GPU"}.get(args.kind or "", ""),
                              max_loaded=args.max_loaded)
    headers = parse_headers(args.header)
    return SearchRequest(source, url=args.server, launch=bool(args.launch), python=args.python, constraints=constraints,
                         settings=settings, out=args.out, confirm=not args.no_confirm, connection=Connection(headers=headers),
                         metrics=None if str(args.metrics).lower() == "none" else args.metrics)


def run(args: argparse.Namespace) -> int:
    """Exit 0; 1 when the server stops answering mid-search (the variants measured so far are
    printed); 2 for bad input, a server without model control included; 130 after Ctrl+C (what
    was measured is printed, everything loaded unloaded)."""
    import signal

    from trtstudio.commands._emit import emit
    from trtstudio.errors import InputError
    from trtstudio.triton.search import Search, render_text
    from trtstudio.triton.search_report import REPORT_EXTENSIONS, write_search, write_search_report

    if args.report and not str(args.report).lower().endswith(REPORT_EXTENSIONS):
        raise InputError(args.report, f"no search report format for this extension (use {', '.join(REPORT_EXTENSIONS)})")
    request = request_from_args(args)
    interrupted = [False]

    def on_sigint(_sig: int, _frame: Any) -> None:
        if interrupted[0]:
            raise KeyboardInterrupt
        interrupted[0] = True
        print("stopping: unloading what the search loaded (Ctrl+C again to quit at once)", file=sys.stderr)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        doc = Search(request, should_stop=lambda: interrupted[0],
                     on_status=lambda s: print(s, file=sys.stderr, flush=True)).run()
    finally:
        signal.signal(signal.SIGINT, previous)
    written = [write_search(doc, args.session)] if args.session else []
    written += [write_search_report(doc, args.report)] if args.report else []
    code = emit(doc, args.json, render_text, written=written, where=request.url or args.target)
    return 130 if interrupted[0] and code == 0 else code


def run_compare(args: argparse.Namespace) -> int:
    """``trtstudio compare`` of search sessions (its hook): each search's winner and gain, and the
    variants every search measured (``trtstudio.tritonsearch-comparison/1``); ``-o`` writes .json."""
    from pathlib import Path

    from trtstudio.commands._args import labels
    from trtstudio.commands._emit import emit
    from trtstudio.errors import InputError
    from trtstudio.triton.search_report import (
        compare_searches,
        comparison_text,
        is_search_file,
        load_search,
        write_search,
    )

    if args.output and Path(args.output).suffix.lower() != ".json":
        raise InputError(args.output, "Triton searches compare to .json (or --json / text)")
    for p in args.inputs:
        if not is_search_file(p):
            raise InputError(p, "is not a Triton search (searches compare with searches)")
    comp = compare_searches([load_search(p) for p in args.inputs], labels(args.names, args.inputs))
    if args.output:
        write_search(comp, args.output)
    return emit(comp, args.json, comparison_text, written=[args.output] if args.output else None)
