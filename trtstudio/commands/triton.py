"""``trtstudio triton URL MODEL``: load a model served by Triton Inference Server and sweep it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

HELP = "profile a model served by Triton Inference Server: concurrency or request-rate sweep, server-side breakdown"
INPUTS: tuple[str, ...] = ()


def _steps(kind: type) -> Any:
    def parse(text: str) -> list[Any]:
        from trtstudio.triton.sweep import parse_steps

        try:
            return parse_steps(text, kind)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


FIELD_FLAGS = {"model": "MODEL", "protocol": "--protocol", "concurrency": "--concurrency", "rates": "--rate",
               "batch": "--batch", "window_s": "--window", "duration_s": "--duration", "max_requests": "--requests",
               "latency_budget_ms": "--latency-budget", "metrics": "--metrics", "timeout_s": "--timeout",
               "headers": "--header", "ca": "--ca"}


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("url", help="server: host:port, http(s)://host:port (8000) or grpc(s)://host:port (8001); "
                               "https and grpcs turn TLS on")
    p.add_argument("model", help="model name in the server's repository")
    p.add_argument("--version", default="", help="model version (default: the server's choice)")
    p.add_argument("--protocol", choices=["http", "grpc"], help="default: from the URL (port 8001 = grpc)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--concurrency", type=_steps(int), default=[1],
                     help="requests in flight per step, e.g. 1,2,4,8 (default 1)")
    how.add_argument("--rate", type=_steps(float), help="requests/s per step, e.g. 100,200")
    p.add_argument("--poisson", action="store_true", help="with --rate: Poisson arrivals (default constant)")
    p.add_argument("--batch", type=int, default=1, help="batch size of each request (default 1)")
    p.add_argument("--window", type=float, default=1.0, help="measurement window in seconds (default 1)")
    p.add_argument("--duration", type=float, help="cap each step at this many seconds")
    p.add_argument("--requests", type=int, help="cap each step at this many requests")
    p.add_argument("--latency-budget", type=float, metavar="MS", help="recommend the best step with p99 <= MS")
    p.add_argument("--metrics", default="auto", metavar="URL",
                   help="the server's Prometheus /metrics page (default: the first that answers of HOST:HTTP port + 2 "
                        "and HOST:8002; 'none' to skip)")
    p.add_argument("--timeout", type=float, default=10.0, help="per-request timeout in seconds (default 10)")
    p.add_argument("--header", action="append", default=[], metavar="NAME=VALUE",
                   help="send this header with every request (repeatable): access tokens, auth, e.g. "
                        "triton-access-token=... (gRPC: triton-grpc-protocol-triton-access-token=...); "
                        "values are never written into sessions or reports")
    p.add_argument("--ssl", action="store_true", help="HTTPS or gRPC TLS (the system's CAs unless --ca)")
    p.add_argument("--ca", metavar="PEM", help="CA bundle that signed the server's certificate (implies --ssl)")
    p.add_argument("--json", action="store_true", help="print the trtstudio.triton/1 document")
    p.add_argument("--session", metavar="S", help="save the sweep as a Triton session (JSON; for `trtstudio compare`)")
    p.add_argument("--report", metavar="R", help="write a report: .html, .md or .json (curve, breakdown, config, recommendation)")


def request_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~trtstudio.triton.request.TritonRequest` these flags describe (the window's
    Triton dialog builds the same request from its form)."""
    from trtstudio.triton.request import TritonRequest, parse_headers

    return TritonRequest(
        url=args.url, model=args.model, version=args.version, protocol=args.protocol,
        concurrency=list(args.concurrency or [1]) if not args.rate else [], rates=list(args.rate or []),
        distribution="poisson" if args.poisson and args.rate else "constant", batch=args.batch, window_s=args.window,
        duration_s=args.duration, max_requests=args.requests, latency_budget_ms=args.latency_budget,
        metrics=None if str(args.metrics).lower() == "none" else args.metrics, timeout_s=args.timeout,
        headers=parse_headers(args.header), ssl=bool(args.ssl), ca=args.ca)


def run(args: argparse.Namespace) -> int:
    """Exit 0; a server that fails mid-sweep gives exit 1 with the steps measured so far; a bad URL,
    model, version or flag is InputError (exit 2)."""
    from trtstudio.errors import FieldError, InputError
    from trtstudio.triton.report import REPORT_EXTENSIONS, write_report, write_session
    from trtstudio.triton.request import run_triton
    from trtstudio.triton.sweep import render_text

    if args.report and not str(args.report).lower().endswith(REPORT_EXTENSIONS):
        raise InputError(args.report, f"no Triton report format for this extension (use {', '.join(REPORT_EXTENSIONS)})")
    try:
        result = run_triton(request_from_args(args))
    except FieldError as exc:
        if exc.field == "url":
            raise InputError(None, exc.message) from None
        raise exc.named(FIELD_FLAGS.get(exc.field, exc.field)) from None
    doc = result.to_json()
    written = [write_session(doc, args.session)] if args.session else []
    written += [write_report(doc, args.report)] if args.report else []
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    from trtstudio.commands._emit import emit
    from trtstudio.jsonio import dumps, write_stdout

    return emit(doc, args.json, render_text, lambda d: write_stdout(dumps(d, indent=2)), where=args.url)
