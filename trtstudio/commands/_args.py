"""Flag groups several commands share (in the manner of Polygraphy's ``tools/args``): each
``add_*`` adds one group to a parser, and the helper beside it reads the group back from the
parsed arguments. Standard library only at import (``trtstudio --help`` imports every command)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def add_json(p: argparse.ArgumentParser, schema: str) -> None:
    """``--json``: print the one document instead of text."""
    p.add_argument("--json", action="store_true", help=f"print one JSON document (schema {schema})")


def add_backend(p: argparse.ArgumentParser) -> None:
    """``--backend``: the catalogue's backends and ``auto`` (:func:`trtstudio.backends.catalogue.default_backend`)."""
    from trtstudio.backends.catalogue import choices  # standard library only at import

    p.add_argument("--backend", choices=choices(), default="auto",
                   help="runtime (auto: ort for .onnx, torch for PyTorch files (.pt2, TorchScript), "
                        "tensorrt for an engine plan)")


def add_window(p: argparse.ArgumentParser, size_help: str = "window size for --screenshot (default 1600x1000)") -> None:
    """``--screenshot OUT.png`` and ``--size WxH`` of the commands that open the window."""
    p.add_argument("--screenshot", metavar="OUT.png", help="render offscreen, save a PNG and exit")
    p.add_argument("--size", default="1600x1000", help=size_help)


def parse_size(text: str) -> tuple[int, int]:
    """``WIDTHxHEIGHT`` of ``--size``; InputError for anything else."""
    from trtstudio.errors import InputError

    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise InputError(None, f"--size: expected WIDTHxHEIGHT, got {text!r}") from None
    if w <= 0 or h <= 0:
        raise InputError(None, f"--size: width and height must be positive, got {text!r}")
    return w, h


def add_labels(p: argparse.ArgumentParser) -> None:
    """``--names`` and ``--title`` of the commands that put several inputs side by side."""
    p.add_argument("--names", help="comma-separated labels, one per input (default: file names)")
    p.add_argument("--title", help="title")


def labels(names: str | None, inputs: Sequence[str]) -> list[str]:
    """The labels ``--names`` gives, one per input, or the inputs' file names without suffix."""
    from pathlib import Path

    from trtstudio.errors import InputError

    out = [n.strip() for n in names.split(",")] if names else [Path(p).stem for p in inputs]
    if len(out) != len(inputs):
        raise InputError(None, f"--names has {len(out)} labels for {len(inputs)} inputs")
    return out
