"""``trtstudio upgrade-check MODEL --runtime A --runtime B [...]``: the same model and build flags built by
several TensorRT / TensorRT-RTX runtimes, side by side (see :mod:`trtstudio.runtimes.upgrade`).

The build flags are ``trtstudio build``'s (``--fp16``, ``--target``, ``--shapes``...), handed to each
child build as given. Exit 0, or 1 on a regression named by ``--fail-on`` (against the first runtime),
2 on bad input (a model or runtime that does not exist).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

HELP = "build one model with several TensorRT / TensorRT-RTX runtimes and compare the engines side by side"
INPUTS = ("model",)
# build flags that upgrade-check sets itself or that mean nothing here
_NOT_FORWARDED = {"help", "model", "output", "save_log", "log_level", "json"}
_PATHS = {"timing_cache", "calib"}


def _build_actions() -> list[argparse.Action]:
    from trtstudio.commands import build

    p = argparse.ArgumentParser(add_help=False)
    build.configure(p)
    return [a for a in p._actions if a.dest not in _NOT_FORWARDED]


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="ONNX model file")
    p.add_argument("--runtime", action="append", required=True, metavar="VENV|NAME",
                   help="a runtime: a virtual environment's folder, its python, 'here', or a managed runtime "
                        "(trtstudio runtimes add tensorrt-rtx==VERSION); give two or more, oldest first")
    p.add_argument("--fail-on", metavar="GATES",
                   help="exit 1 on these regressions against the first runtime: build, precision[:POINTS], "
                        "slower[:PCT], size[:PCT], memory[:PCT] (e.g. precision,build,slower:5)")
    p.add_argument("--out", metavar="DIR", help="keep each runtime's engine and build document here")
    p.add_argument("--jobs", type=int, default=0, help="builds at a time (default: one per runtime, up to the CPU count)")
    p.add_argument("--no-accuracy", action="store_true", help="do not run the engines here against ONNX Runtime")
    p.add_argument("--runtimes-root", help="where managed runtimes live (as trtstudio runtimes --root)")
    p.add_argument("--json", action="store_true", help="print one JSON document (schema trtstudio.upgrade/1)")
    group = p.add_argument_group("build flags (as trtstudio build; given to every runtime's build)")
    for action in _build_actions():
        group._add_action(action)


def forwarded_args(args: argparse.Namespace) -> list[str]:
    """The build flags set on the command line, as ``trtstudio build`` arguments."""
    out: list[str] = []
    for action in _build_actions():
        value = getattr(args, action.dest, None)
        if value is None or value == action.default or value is False:
            continue
        flag = action.option_strings[-1]
        if action.dest in _PATHS:  # the child builds in a folder of its own
            value = os.path.abspath(value)
        out += [flag] if value is True else [flag, str(value)]
    return out


def request_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~trtstudio.runtimes.upgrade.UpgradeRequest` of these flags (the window's dialog
    builds the same request)."""
    from trtstudio.runtimes.upgrade import UpgradeRequest, parse_fail_on

    return UpgradeRequest(model=args.model, runtimes=list(args.runtime), build_args=forwarded_args(args),
                          gates=parse_fail_on(args.fail_on), jobs=args.jobs, out_dir=args.out,
                          root=args.runtimes_root, accuracy=not args.no_accuracy)


def run(args: argparse.Namespace) -> int:
    from trtstudio.commands._emit import emit
    from trtstudio.runtimes.upgrade import render_text, run_upgrade

    def progress(name: str, state: str) -> None:
        if not args.json:
            print(f"{state} {name}", file=sys.stderr, flush=True)

    result = run_upgrade(request_from_args(args), progress=progress)
    doc = result.to_json()
    code = emit(doc, args.json, render_text)
    if result.regressions:
        for text in result.regressions:
            print(f"error: {text}", file=sys.stderr)
        return 1
    return code
