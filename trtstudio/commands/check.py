"""``trtstudio check``: which ONNX nodes TensorRT / TensorRT-RTX supports, without building."""

from __future__ import annotations

import argparse
import json
import sys

HELP = "check which ONNX nodes TensorRT-RTX or TensorRT supports, without building (exit 1 if any is not)"


def configure(parser: argparse.ArgumentParser) -> None:
    """Flags of ``trtstudio check``."""
    from trtstudio.commands.build import add_model_and_backend

    add_model_and_backend(parser)
    parser.add_argument("--shapes", help="input shapes a build would use, e.g. images:1x3x640x640 (shown, not needed)")
    parser.add_argument("--json", action="store_true", help="print one JSON document (schema trtstudio.check/1)")


def run(args: argparse.Namespace) -> int:
    """Exit 0 when every node is supported, 1 when some are not, 2 for bad input or no runtime."""
    from trtstudio.backends.support import check_support
    from trtstudio.commands.build import parse_shapes

    result = check_support(args.model, args.backend, parse_shapes(args.shapes, "--shapes"))
    if args.json:
        json.dump(result.to_json(), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(result.render_text())
    return 0 if result.supported else 1
