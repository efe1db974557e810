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
import os
import sys
from collections.abc import Sequence

from trtstudio._version import __version__

# Order is the order shown in --help.
COMMANDS = ("demo", "gui", "inspect", "layers", "check", "build", "profile", "report", "compare", "diff", "explain", "memory",
            "build-log", "precision", "scenario", "triton", "triton-config", "triton-search", "remote", "runtimes", "upgrade-check", "environment")

# Arguments that name input files, checked (stat only: pipes, devices, unreadable files refused)
# before a command runs. A command module may declare its own ``INPUTS``; "name/" accepts a folder.
_INPUTS = {
    "gui": ("files",),
    "inspect": ("model",),
    "layers": ("files", "onnx"),
    "build": ("model", "timing_cache?"),
    "profile": ("model", "input/"),
    "report": ("session", "engine", "onnx", "run"),
    "compare": ("inputs",),
    "precision": ("model", "calib/", "val/"),
    "check": ("model",),
}


_GUI_PACKAGES = {"PySide6", "pyqtgraph", "shiboken6"}
_REMOTE_COMMANDS = ("profile", "build", "check", "precision", "scenario")  # trtstudio.remote.client


def _load(name: str):  # type: ignore[no-untyped-def]
    try:
        return importlib.import_module(f"trtstudio.commands.{name.replace('-', '_')}")
    except ModuleNotFoundError as exc:
        if exc.name == f"trtstudio.commands.{name.replace('-', '_')}":
            return None
        raise


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; ``only`` (a name in :data:`COMMANDS`): that command's subparser alone,
    which is all a command line that names it parses (configuring the other 21 costs 50 ms: their
    modules, and what ``environment``'s flags import)."""
    parser = argparse.ArgumentParser(
        prog="trtstudio",
        description="Desktop profiler for NVIDIA TensorRT: ONNX graph, engine layers, live runs, reports.",
    )
    parser.add_argument("--version", action="version", version=f"trtstudio {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else (only,):
        mod = _load(name)
        if mod is None:
            continue
        p = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.configure(p)
        if name in _REMOTE_COMMANDS:
            p.add_argument("--remote", metavar="ssh://[user@]host[:port]",
                           help="run on that machine over SSH (trtstudio's core installed there: "
                                "trtstudio remote setup); results come back here")
        p.set_defaults(_run=mod.run, _inputs=getattr(mod, "INPUTS", _INPUTS.get(name, ())))
    return parser


def entry() -> None:
    """The ``trtstudio`` program: :func:`main`, then exit with its status (without freeing what a
    command kept, where it asked to skip the teardown: :func:`trtstudio.commands._emit.skip_teardown`)."""
    from trtstudio.commands import _emit

    _emit.ENDING.in_entry = True
    code = main()
    if _emit.ENDING.skip_teardown:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os._exit(code)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    if len(args_in) == 2 and args_in[0].startswith("--_"):  # a child of the window (trtstudio.bigdocs.children)
        from trtstudio.bigdocs.children import FLAGS

        if args_in[0] in FLAGS:
            return _child(args_in[0], args_in[1])
        from trtstudio.diff import prefetch

        if args_in[0] == prefetch.FLAG:  # the helper of a diff (trtstudio.diff.prefetch)
            return prefetch.serve(args_in[1])
    # a command named first: only its parser (anything else, --help or a typo, gets the whole one)
    parser = build_parser(args_in[0] if args_in and args_in[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    import trtstudio.fileio as fileio
    from trtstudio.errors import BackendError, BuildError, InputError

    fileio.reset_last_input()
    try:
        _check_inputs(args)
        if getattr(args, "remote", None):
            from trtstudio.remote.client import run_remote

            return run_remote(args.command, args, args_in[1:])
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
    except ModuleNotFoundError as exc:
        # PySide6/pyqtgraph missing or broken: name the package and the fix, not "internal error".
        if os.environ.get("TRTSTUDIO_DEBUG"):
            raise
        if (exc.name or "").split(".")[0] not in _GUI_PACKAGES:
            return _internal_error(exc)
        print(f"error: {args.command}: needs {exc.name}, which cannot be imported ({exc}); "
              "install it with: pip install 'trtstudio' PySide6 pyqtgraph", file=sys.stderr)
        return 2
    except (OverflowError, RecursionError, UnicodeError, ValueError, OSError, MemoryError) as exc:
        # A damaged file that got past a reader's own checks: still one line, never a traceback.
        if os.environ.get("TRTSTUDIO_DEBUG"):
            raise
        path, message = fileio.describe_error(exc)
        print(f"error: {InputError(path, message).one_line()}", file=sys.stderr)
        return InputError.exit_code
    except Exception as exc:  # noqa: BLE001 - a bug: one line, the traceback on request
        if os.environ.get("TRTSTUDIO_DEBUG"):
            raise
        return _internal_error(exc)


def _child(flag: str, path: str) -> int:
    """A child process of the window (see trtstudio.bigdocs.children): its result on standard output."""
    if flag == "--_json-lines":
        from trtstudio.bigdocs.children import write_json_lines

        return write_json_lines(path, sys.stdout.buffer)
    if flag == "--_json-tree":
        from trtstudio.bigdocs.children import write_json_tree

        return write_json_tree(path, sys.stdout.buffer)
    from trtstudio.graph.model import inferred_table
    from trtstudio.jsonio import dumps, write_stdout

    try:
        doc = inferred_table(path)
    except Exception as exc:  # noqa: BLE001 - the parent turns this line into a warning
        print(f"error: {path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", file=sys.stderr)
        return 2
    write_stdout(dumps(doc, check_finite=False))
    return 0


def _internal_error(exc: BaseException) -> int:
    import trtstudio.fileio as fileio

    where = fileio.last_input()
    print(f"error: {where + ': ' if where else ''}internal error {type(exc).__name__}: "
          f"{str(exc).splitlines()[0][:200] if str(exc) else ''} (a bug: rerun with TRTSTUDIO_DEBUG=1 "
          "and report the traceback)", file=sys.stderr)
    return 1


def _check_inputs(args: argparse.Namespace) -> None:
    """Refuse input files that are not readable regular files before the command opens them."""
    from trtstudio.fileio import check_input

    for spec in getattr(args, "_inputs", ()):
        allow_dir = spec.endswith("/")
        optional = spec.endswith("?")
        dest = spec.rstrip("/?")
        value = getattr(args, dest, None)
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if item is None or (optional and not os.path.exists(item)):
                continue
            check_input(item, allow_dir=allow_dir)


if __name__ == "__main__":  # python -m trtstudio.cli: the commands see this module as trtstudio.cli, not __main__
    from trtstudio.cli import entry as _entry

    _entry()
