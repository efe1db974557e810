"""Reading a verbose build log (issue 50 budgets), printed as JSON lines.

1. ``trtstudio build-log --json`` of a 100,000-line verbose log (the real result-02.log's Timing
   Runner blocks repeated to that length; budget <= 1 s), whole command in this process, median of
   the repeats.
2. Every verbose log of the real fixtures: phases stated per pass against its own ``Engine
   generation completed in`` (budget: within 5 %), cache hits against the ``got cached result`` lines.

    python benchmarks/build_log_read.py --lines 100000 --repeat 5
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "trt-real"
RESULT02 = FIXTURES / "NVIDIA_trt-samples-for-hackathon-cn/HEAD/cookbook/07-Tool/trtexec/result-02.log"


def big_log(lines: int, repeat: int) -> None:
    from trtstudio.cli import main

    src = RESULT02.read_text().splitlines()
    start = next(i for i, ln in enumerate(src) if "Timing Runner" in ln)
    end = next(i for i, ln in enumerate(src) if "Formats and tactics selection completed" in ln)
    body, text = src[start:end], src[:start]
    while len(text) < lines - (len(src) - end):
        text += body
    text = text[: lines - (len(src) - end)] + src[end:]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.log"
        path.write_text("\n".join(text) + "\n")
        times = []
        for _ in range(repeat):
            out = io.StringIO()
            t0 = time.perf_counter()
            with redirect_stdout(out):
                rc = main(["build-log", str(path), "--json"])
            times.append(time.perf_counter() - t0)
            assert rc == 0
        procs = []  # as a user meets it: a whole process
        for _ in range(repeat):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "trtstudio", "build-log", str(path), "--json"], check=True,
                           capture_output=True)
            procs.append(time.perf_counter() - t0)
    doc = json.loads(out.getvalue())
    print(json.dumps({"lines": doc["lines"], "process_s_median": statistics.median(procs), "process_s": procs,
                      "read_s_median": statistics.median(times), "read_s": times,
                      "budget_s": 1.0, "timing_runners": doc["cache"]["misses"]}))


def fixture_logs() -> None:
    from trtstudio.engine.buildtime import read_build_log

    for p in sorted(FIXTURES.rglob("*.log")):
        text = p.read_text(errors="replace")
        if "Engine generation completed in" not in text or "[V]" not in text:
            continue
        doc = read_build_log(p)
        print(json.dumps({"log": str(p.relative_to(FIXTURES)), "total_s": doc["total_seconds"],
                          "passes": [(x["stated_seconds"], x["total_seconds"]) for x in doc["passes"]],
                          "worst_pass_share": min(x["stated_seconds"] / x["total_seconds"] for x in doc["passes"]),
                          "hits": doc["cache"]["hits"], "hit_lines": text.count("got cached result")}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if FIXTURES.is_dir():
        fixture_logs()
        big_log(args.lines, args.repeat)


if __name__ == "__main__":
    main()
