"""``trtstudio environment`` (also ``python -m trtstudio.environment``): what trtstudio can use here
(packages, driver, GPUs, backends) and the TensorRT / TensorRT-RTX runtimes an upgrade check can use,
with a warning on each combination that cannot load an engine (``--engine FILE``); see
:mod:`trtstudio.environment` and :mod:`trtstudio.runtimes.listing`."""

from __future__ import annotations

import argparse

HELP = "what trtstudio can use here, and the TensorRT runtimes (with the engines each can load)"
INPUTS = ("engine",)


def configure(p: argparse.ArgumentParser) -> None:
    from trtstudio.runtimes.listing import configure as flags

    flags(p)


def run(args: argparse.Namespace) -> int:
    from trtstudio.runtimes.listing import run as report

    return report(args)
