"""``trtstudio runtimes add|list|remove``: managed TensorRT / TensorRT-RTX runtimes for ``upgrade-check``.

``add tensorrt-rtx==1.5.0.114`` creates a virtual environment with that version, trtstudio's core
dependencies and this trtstudio (pip from the index, its cache reused), and remembers it;
``list`` shows them; ``remove NAME`` deletes one. See :mod:`trtstudio.runtimes.manage`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

HELP = "managed TensorRT / TensorRT-RTX runtimes (one virtual environment each) for upgrade-check"


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("add", "list", "remove"),
                   help="add SPEC: create one (tensorrt-rtx==1.5.0.114); list; remove NAME")
    p.add_argument("spec", nargs="?", help="add: tensorrt-rtx==VERSION or tensorrt==VERSION; remove: a name or version")
    p.add_argument("--root", help="where managed runtimes live (default $TRTSTUDIO_RUNTIMES, else "
                                  "~/.local/share/trtstudio/runtimes)")
    p.add_argument("--find-links", action="append", metavar="DIR", help="add: a folder of wheels pip also reads")
    p.add_argument("--python", help="add: the interpreter to make the environment from (default: this one)")
    p.add_argument("--json", action="store_true", help="print JSON (schema trtstudio.runtimes/1)")


def run(args: argparse.Namespace) -> int:
    from trtstudio.commands._emit import emit
    from trtstudio.errors import InputError
    from trtstudio.runtimes import manage

    root = str(manage.runtimes_root(args.root))
    if args.action == "list":
        return emit({"schema": manage.SCHEMA, "root": root,
                     "runtimes": [r.to_json() for r in manage.list_runtimes(args.root)]}, args.json, render_text)
    if not args.spec:
        raise InputError(None, f"runtimes {args.action}: give a runtime, e.g. tensorrt-rtx==1.5.0.114")
    if args.action == "remove":
        gone = manage.remove(args.spec, args.root)
        return emit({"schema": manage.SCHEMA, "root": root, "removed": gone.to_json()}, args.json,
                    lambda d: f"removed {d['removed']['name']} ({d['removed']['prefix']})")

    def log(line: str) -> None:
        if not args.json:
            print(f"$ {line}", file=sys.stderr, flush=True)

    rt = manage.add(args.spec, args.root, find_links=args.find_links, python=args.python, log=log)
    return emit({"schema": manage.SCHEMA, "root": root, "added": rt.to_json()}, args.json,
                lambda d: f"runtime {d['added']['name']}: {d['added']['label']} with trtstudio "
                          f"{d['added']['trtstudio']} in {d['added']['prefix']}")


def render_text(doc: dict[str, Any]) -> str:
    rows = doc.get("runtimes") or []
    if not rows:
        return f"no managed runtimes in {doc['root']} (add one: trtstudio runtimes add tensorrt-rtx==VERSION)"
    width = max(len(r["name"]) for r in rows)
    lines = [f"managed runtimes in {doc['root']}"]
    for r in rows:
        state = f"  !! {r['problem']}" if r.get("problem") else ""
        lines.append(f"  {r['name']:<{width}}  {r['label']:<24} Python {r.get('python_version') or '?'}{state}")
    return "\n".join(lines)
