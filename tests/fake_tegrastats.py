#!/usr/bin/env python3
"""TEST DOUBLE of NVIDIA's Jetson-only ``tegrastats``: replays recorded lines (tests/data/tegrastats,
real output of real boards, sources in SOURCES.md) at ``--interval`` milliseconds until killed.
Put on the SSH test target's PATH as ``tegrastats``; never shipped, never used outside the tests."""

import itertools
import os
import sys
import time

RECORDED = os.environ.get("FAKE_TEGRASTATS_LOG") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "data", "tegrastats", "l4t36.4.4_agx_orin.log")


def main() -> int:
    interval = 0.1
    if "--interval" in sys.argv:
        interval = int(sys.argv[sys.argv.index("--interval") + 1]) / 1000.0
    with open(RECORDED, encoding="utf-8") as fh:
        lines = [ln.rstrip("\n") for ln in fh if ln.strip()]
    for line in itertools.cycle(lines):
        print(line, flush=True)
        time.sleep(interval)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
