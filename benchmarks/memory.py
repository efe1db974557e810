"""``trtstudio memory`` budgets, printed as JSON lines.

1. Every log of the real fixtures with memory lines: how many lines of each kind were read, and
   whether each category equals the line it names (the test ``tests/test_memory.py`` asserts the same).
2. ``trtstudio memory --json`` of a 50,000-layer engine (``benchmarks/engine.py``'s synthetic
   inspector document) in this process, whole command (budget: under 1 s), median of the repeats.

    python benchmarks/memory.py --layers 50000 --repeat 3
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine import make_engine  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "trt-real"


def real_logs() -> None:
    from trtstudio.engine.memory import engine_memory

    for p in sorted(FIXTURES.rglob("*.log")):
        text = p.read_text(errors="replace")
        if "MemUsage" not in text and "Memory:" not in text and "engine size" not in text:
            continue
        mem = engine_memory(str(p))
        if not any(mem.line_kinds.values()):
            continue
        recorded = [n for n, f in mem.categories.items() if f.bytes is not None]
        print(json.dumps({"log": str(p.relative_to(FIXTURES)), "line_kinds": mem.line_kinds,
                          "kinds_read": sum(1 for v in mem.line_kinds.values() if v), "recorded": recorded}))


def big_engine(blocks: int, repeat: int) -> None:
    from trtstudio.cli import main

    doc, _, _ = make_engine(blocks)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.graph.json"
        path.write_text(json.dumps(doc))
        times = []
        for _ in range(repeat):
            out = io.StringIO()
            t0 = time.perf_counter()
            with redirect_stdout(out):
                rc = main(["memory", str(path), "--json", "--contexts", "2", "--gpu-memory", "16GB"])
            times.append(time.perf_counter() - t0)
            assert rc == 0
        d = json.loads(out.getvalue())
        procs = []  # as a user meets it: a whole process
        for _ in range(repeat):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "trtstudio", "memory", str(path), "--json", "--contexts", "2",
                            "--gpu-memory", "16GB"], check=True, capture_output=True)
            procs.append(time.perf_counter() - t0)
    print(json.dumps({"layers": len(doc["Layers"]), "process_s_median": statistics.median(procs), "process_s": procs,
                      "memory_s_median": statistics.median(times),
                      "memory_s": times, "budget_s": 1.0, "peak_bytes": d["live"]["peak_bytes"],
                      "activations_naive": next(c["bytes"] for c in d["categories"] if c["name"] == "activations_naive")}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if FIXTURES.is_dir():
        real_logs()
    big_engine(args.layers // 6, args.repeat)


if __name__ == "__main__":
    main()
