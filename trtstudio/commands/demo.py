"""``trtstudio demo``: the main window on the bundled sample model and its TensorRT-RTX layer listing."""

from __future__ import annotations

import argparse

from trtstudio.commands._args import add_window

HELP = "open the bundled sample (MobileNetV2, its TensorRT-RTX engine layers, a live ONNX Runtime run)"


def configure(p: argparse.ArgumentParser) -> None:
    add_window(p, "window size for --screenshot")
    p.add_argument("--no-profile", action="store_true", help="do not start the live ONNX Runtime run")


def sample_files() -> tuple[str, list[str]]:
    from importlib import resources

    base = resources.files("trtstudio.resources") / "sample"
    model = str(base / "mobilenetv2_035.onnx")
    engine = [str(p) for p in base.iterdir() if p.name.startswith("mobilenetv2_035.rtx") and
              p.name.endswith((".log", ".json"))]
    return model, sorted(engine)


def run(args: argparse.Namespace) -> int:
    from trtstudio.commands._args import parse_size
    from trtstudio.ui.app import run_gui

    model, engine = sample_files()
    return run_gui(model, engine, screenshot=args.screenshot, size=parse_size(args.size),
                   demo=not args.no_profile, profile_seconds=3.0 if args.screenshot else 0.0)
