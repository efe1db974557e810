"""Cut real TensorRT-RTX build logs down to what trtstudio reads, for tests/test_diff_xversion.py.

Each log was written by ``trtstudio build MODEL --backend rtx --target sm86 -o DIR/model.engine
--json --save-log DIR/build.log`` (this checkout, run by each version's own virtual environment
with ``tensorrt-rtx-cu13==VERSION``, on a machine with no GPU). Kept: the first line (trtstudio's
``# trtstudio.buildlog/1`` header: versions and settings), TensorRT's lines naming the input file
and the engine's memory, and everything from the last ``Layers:`` line on (the layer listing and
the I/O tensors). Dropped: the builder's verbose progress (300-800 KB a log).

    python tests/data/xversion/make.py BUILDS_DIR   # BUILDS_DIR/VERSION/MODEL/build.log
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

KEEP = re.compile(r"Input filename:|Opset version:|Producer name:|Total \w+ (Persistent )?Memory:|Max Scratch Memory:|"
                  r"Engine generation completed|Number of target compute capabilities")
WANTED = {"cls": ("1.4.0.76", "1.5.0.114", "1.6.1.120", "1.7.1.116"), "resnet50": ("1.4.0.76", "1.7.1.116"),
          "silero": ("1.6.1.120", "1.7.1.116"), "cls-fp16": ("1.5.0.114", "1.7.1.116")}


def cut(text: str) -> str:
    lines = text.splitlines()
    last = max(i for i, line in enumerate(lines) if line.rstrip().endswith("Layers:"))
    head = [lines[0]] + [line for line in lines[1:last] if KEEP.search(line)]
    return "\n".join(head + lines[last:]) + "\n"


def main(builds: Path) -> None:
    out = Path(__file__).parent
    for model, versions in WANTED.items():
        for v in versions:
            text = (builds / v / model / "build.log").read_text(encoding="utf-8")
            (out / f"{model}-{v}.build.log").write_text(cut(text), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
