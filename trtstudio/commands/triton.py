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


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("url", help="server: host:port, http://host:port (8000) or grpc://host:port (8001)")
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
    p.add_argument("--metrics", default="auto", help="Prometheus URL (default HOST:8002/metrics; 'none' to skip)")
    p.add_argument("--timeout", type=float, default=10.0, help="per-request timeout in seconds (default 10)")
    p.add_argument("--json", action="store_true", help="print the trtstudio.triton/1 document")
    p.add_argument("--session", metavar="S", help="save the sweep as a Triton session (JSON; for `trtstudio compare`)")
    p.add_argument("--report", metavar="R", help="write a report: .html, .md or .json (curve, breakdown, config, recommendation)")


def render_text(doc: dict[str, Any]) -> str:
    """Server, model, a table of steps and the recommendation."""
    srv, mdl = doc["server"], doc["model"]
    lines = [f"server  {srv.get('name', 'triton')} {srv.get('version', '?')} ({doc['settings'].get('protocol', '')})",
             f"model   {mdl.get('name')} v{mdl.get('version') or '-'}  max_batch_size {mdl.get('max_batch_size')}  "
             f"inputs {mdl.get('input_shapes')}", ""]
    head = f"{'step':>10} {'requests':>9} {'infer/s':>9} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} " \
           f"{'queue us':>9} {'compute us':>11} {'stable':>7}"
    lines.append(head)
    from trtstudio.triton.sweep import step_figures

    for s in doc["steps"]:
        f = step_figures(s)
        lines.append(f"{f['mode'][:4]} {f['value']:>5g} {f['requests']:>9} {f['throughput']:>9.1f} "
                     f"{f['p50']:>8.3f} {f['p90']:>8.3f} {f['p99']:>8.3f} {f['queue_us']:>9.0f} {f['compute_us']:>11.0f} "
                     f"{'yes' if f['stable'] else 'no':>7}")
        if s.get("error"):
            lines.append(f"           error: {s['error']}")
    rec = doc.get("recommendation")
    if rec:
        lines += ["", f"recommendation: {rec.get('reason') or rec}"]
    if doc.get("error"):
        lines.append(f"stopped early: {doc['error']} (the steps above were measured before)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Exit 0; a server that fails mid-sweep gives exit 1 with the steps measured so far; a bad URL,
    model or version is InputError (exit 2)."""
    from trtstudio.errors import InputError
    from trtstudio.triton.client import parse_url
    from trtstudio.triton.sweep import SweepSettings, run_sweep

    if args.batch < 1:
        raise InputError("--batch", "must be at least 1")
    settings = SweepSettings(
        concurrency=list(args.concurrency or [1]), rates=list(args.rate or []),
        distribution="poisson" if args.poisson else "constant", batch=args.batch, window_s=args.window,
        duration_s=args.duration, max_requests=args.requests, latency_budget_ms=args.latency_budget,
        timeout_s=args.timeout)
    metrics = None if str(args.metrics).lower() == "none" else args.metrics
    from trtstudio.triton.report import REPORT_EXTENSIONS

    if args.report and not str(args.report).lower().endswith(REPORT_EXTENSIONS):
        raise InputError(args.report, f"no Triton report format for this extension (use {', '.join(REPORT_EXTENSIONS)})")
    result = run_sweep(args.url, args.model, settings, version=args.version, protocol=args.protocol, metrics=metrics)
    doc = result.to_json()
    doc["settings"]["protocol"] = parse_url(args.url, args.protocol)[1]
    from trtstudio.triton.report import write_report, write_session

    written = [write_session(doc, args.session)] if args.session else []
    written += [write_report(doc, args.report)] if args.report else []
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    from trtstudio.commands._emit import emit
    from trtstudio.jsonio import dumps, write_stdout

    return emit(doc, args.json, render_text, lambda d: write_stdout(dumps(d, indent=2)), where=args.url)
