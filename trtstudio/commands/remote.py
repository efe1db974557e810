"""``trtstudio remote check|setup ssh://[user@]host[:port]``: what a target can run; install trtstudio there.

``check`` prints the target's environment report over SSH (GPU, driver, TensorRT, ONNX Runtime,
L4T/JetPack and tegrastats on a Jetson). ``setup`` builds a wheel of this trtstudio here (from its
source checkout, or its installed files and metadata packed again), copies it over the SSH channel and installs it with the target's Python (``pip install --no-deps
--no-index``: the target needs no internet); ``--with-deps`` also downloads the core's
dependencies here for the target's platform and installs them the same way.
"""

from __future__ import annotations

import argparse

HELP = "remote targets over SSH: check what one can run, set trtstudio up there"


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("check", "setup"), help="check: the target's environment; setup: install trtstudio")
    p.add_argument("target", metavar="ssh://[user@]host[:port]", help="the machine (an ~/.ssh/config alias works)")
    p.add_argument("--wheel", help="setup: install this trtstudio wheel instead of building one here")
    p.add_argument("--with-deps", action="store_true", help="setup: also ship the core's dependencies as wheels")
    p.add_argument("--json", action="store_true", help="print JSON (schema trtstudio.remote/1)")


def run(args: argparse.Namespace) -> int:
    from trtstudio.commands._emit import emit
    from trtstudio.remote.setup import check, setup

    doc = check(args.target) if args.action == "check" else setup(args.target, args.wheel, args.with_deps)
    return emit(doc, args.json, render_text)


def render_text(doc: dict) -> str:
    lines = [f"target   {doc['target']} ({doc.get('host')})"]
    if doc.get("installed"):
        lines.append(f"installed {doc['installed']}")
    if doc.get("l4t"):
        lines.append(f"L4T      {doc['l4t'].get('l4t')} ({doc['l4t'].get('board', '')})  tegrastats: "
                     + ("yes" if doc.get("tegrastats") else "no"))
    for row in doc.get("checks") or []:
        mark = {"ok": "ok ", "warning": "!! ", "missing": "-- "}.get(row.get("status"), "?? ")
        lines.append(f"  {mark}{row['name']:<16} {row.get('version') or '':<14} {row.get('detail') or ''}"
                     + (f"  fix: {row['fix']}" if row.get("fix") else ""))
    for m in doc.get("missing_deps") or []:
        lines.append(f"  -- {m:<16} missing on the target: trtstudio remote setup {doc['target']} --with-deps")
    return "\n".join(lines)
