"""``trtstudio gui [MODEL.onnx] [ENGINE FILES...] [--screenshot OUT.png]``."""

from __future__ import annotations

import argparse
import os

HELP = "open the main window on a model and/or engine files"


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="*", help="an ONNX model and/or TensorRT outputs (layer JSON, profile, logs, engine)")
    p.add_argument("--screenshot", metavar="OUT.png", help="render offscreen at --size, save a PNG and exit")
    p.add_argument("--size", default="1600x1000", help="window size for --screenshot (default 1600x1000)")


def split_files(files: list[str]) -> tuple[str | None, list[str]]:
    from trtstudio.errors import InputError

    models = [f for f in files if f.lower().endswith(".onnx")]
    if len(models) > 1:
        raise InputError(models[1], "only one ONNX model can be opened at a time")
    for f in files:
        if not os.path.exists(f):
            raise InputError(f, "no such file")
    return (models[0] if models else None), [f for f in files if f not in models]


def parse_size(text: str) -> tuple[int, int]:
    from trtstudio.errors import InputError

    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise InputError(None, f"--size: expected WIDTHxHEIGHT, got {text!r}") from None
    return w, h


def run(args: argparse.Namespace) -> int:
    model, engine = split_files(args.files)
    if args.screenshot and model:
        from trtstudio.graph.model import load_model

        load_model(model, infer_shapes=False)  # fail fast with the one-line error before Qt starts
    from trtstudio.ui.app import run_gui

    return run_gui(model, engine, screenshot=args.screenshot, size=parse_size(args.size))
