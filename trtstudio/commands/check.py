"""``trtstudio check``: which ONNX nodes TensorRT / TensorRT-RTX supports, without building."""

from __future__ import annotations

import argparse

HELP = "check which ONNX nodes TensorRT-RTX or TensorRT supports, without building (exit 1 if any is not)"


def configure(parser: argparse.ArgumentParser) -> None:
    """Flags of ``trtstudio check``."""
    parser.add_argument("model", help="ONNX model file")
    parser.add_argument("--backend", choices=("rtx", "tensorrt", "auto"), default="auto",
                        help="rtx (tensorrt_rtx), tensorrt, or auto: TensorRT-RTX if installed, else TensorRT")
    parser.add_argument("--shapes", help="input shapes a build would use, e.g. images:1x3x640x640 (shown, not needed)")
    parser.add_argument("--json", action="store_true", help="print one JSON document (schema trtstudio.check/1)")



def run(args: argparse.Namespace) -> int:
    """Exit 0 when every node is supported, 1 when some are not, 2 for bad input or no runtime."""
    from trtstudio.backends.shapes import parse_shapes
    from trtstudio.backends.support import check_support
    from trtstudio.commands._emit import emit

    result = check_support(args.model, args.backend, parse_shapes(args.shapes, "--shapes"))
    emit(result.to_json(), args.json, lambda _doc: result.render_text())
    return 0 if result.supported else 1
