"""The ``trtstudio`` command line.

Each subcommand lives in ``trtstudio/commands/<name>.py`` and defines ``HELP`` (one line),
``configure(parser)`` and ``run(args) -> int``. Those modules import only the standard library at
module level, so ``trtstudio --help`` and ``--version`` answer without importing onnx or Qt; the
heavy imports happen inside ``run``.

Exit codes: 0 success, 1 a build or run that failed, 2 bad input (one line ``error: FILE: ...``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from trtstudio import __version__

# Order is the order shown in --help.
COMMANDS = ("demo", "gui", "inspect", "layers", "build", "profile", "report", "compare", "precision", "scenario")


def _load(name: str):  # type: ignore[no-untyped-def]
    try:
        return importlib.import_module(f"trtstudio.commands.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"trtstudio.commands.{name}":
            return None
        raise


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trtstudio",
        description="Desktop profiler for NVIDIA TensorRT: ONNX graph, engine layers, live runs, reports.",
    )
    parser.add_argument("--version", action="version", version=f"trtstudio {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        mod = _load(name)
        if mod is None:
            continue
        p = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.configure(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    from trtstudio.errors import BackendError, BuildError, InputError

    try:
        return int(args._run(args) or 0)
    except InputError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return InputError.exit_code
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return BuildError.exit_code
    except BackendError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return BackendError.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
