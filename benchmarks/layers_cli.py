"""Time ``trtstudio layers GRAPH PROFILE --json > FILE`` end to end on a big engine in TREx's format.

The engine is TREx's MobileNet QAT example (``tests/inputs/mobilenet.qat.onnx.engine.graph.json``
and its ``.profile.json``, from ../shared/fixtures/trt-real/NVIDIA_TensorRT_trex) chained with
itself until it has ``--layers`` layers: copy k renames every layer and tensor with a ``c{k}/``
prefix and reads copy k-1's output, so names stay unique and the profile matches by name.

    python benchmarks/layers_cli.py [--layers 50000] [--repeat 3] [--keep DIR]

Budgets: <= 1.5 s wall at 50,000 layers, <= 6 s at 300,000. Prints one JSON line per size, with
the reference figures of issue 16 beside ours (TREx 78 CPU-s and trtstudio 11.9 CPU-s before this
work, both at 50,000 layers).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _bytecode import compile_package  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TREX = ROOT.parent / "shared/fixtures/trt-real/NVIDIA_TensorRT_trex/release-11.0/tests/inputs"
STEM = "mobilenet.qat.onnx.engine"
REFERENCE = {"layers": 50000, "trex_cpu_s": 78.0, "trtstudio_before_cpu_s": 11.9}


def _rename(rec: dict[str, Any], k: int, first_input: str | None, last_output: str | None) -> dict[str, Any]:
    out = dict(rec)
    out["Name"] = f"c{k}/{rec['Name']}"
    for key in ("Inputs", "Outputs"):
        if key in rec:
            ts = []
            for t in rec[key]:
                t = dict(t)
                if key == "Inputs" and k and t["Name"] == first_input and last_output is not None:
                    t["Name"] = f"c{k - 1}/{last_output}"
                else:
                    t["Name"] = f"c{k}/{t['Name']}"
                ts.append(t)
            out[key] = ts
    return out


def make_files(n_layers: int, folder: Path) -> tuple[Path, Path]:
    """Write BIG.graph.json and BIG.profile.json with about ``n_layers`` layers into ``folder``."""
    graph = json.loads((TREX / f"{STEM}.graph.json").read_text())
    profile = json.loads((TREX / f"{STEM}.profile.json").read_text())
    layers = graph["Layers"]
    recs = [r for r in profile if "name" in r]
    first_input = layers[0]["Inputs"][0]["Name"]
    last_output = layers[-1]["Outputs"][0]["Name"]
    copies = -(-n_layers // len(layers))
    big_layers: list[dict[str, Any]] = []
    big_prof: list[dict[str, Any]] = [profile[0]]
    for k in range(copies):
        big_layers += [_rename(r, k, first_input, last_output) for r in layers]
        big_prof += [dict(r, name=f"c{k}/{r['name']}") for r in recs]
    big_layers = big_layers[:n_layers]
    names = {r["Name"] for r in big_layers}
    big_prof = [big_prof[0]] + [r for r in big_prof[1:] if r["name"] in names]
    doc = dict(graph, Layers=big_layers)
    g = folder / "BIG.graph.json"
    p = folder / "BIG.profile.json"
    g.write_text(json.dumps(doc, indent=1))
    p.write_text(json.dumps(big_prof, indent=1))
    return g, p


# A fresh, small Python runs the command and reports its figures: ru_maxrss of a child forked from
# this process would count this process's own pages (the big generated documents) until exec.
# The command's processes that end after it (the worker of cli.detach, the writer of ForkedHead)
# are reparented to this one (a subreaper) and waited for too: their CPU time and memory count,
# and "all_ended_s" says when the last of them was gone.
LAUNCHER = r"""
import ctypes, json, os, resource, subprocess, sys, time

ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
out = sys.argv[1]
t0 = time.perf_counter()
with open(out, "wb") as fh:
    subprocess.run(sys.argv[2:], stdout=fh, check=True)
wall = time.perf_counter() - t0
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
ended = time.perf_counter() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall_s": wall, "all_ended_s": ended, "cpu_s": r.ru_utime + r.ru_stime, "rss_mib": r.ru_maxrss / 1024}))
"""


def run_once(graph: Path, profile: Path, out: Path) -> dict[str, float]:
    """Wall seconds (until the command returned, and until its last process was gone), CPU seconds
    of all its processes and the peak RSS of the largest, of one ``trtstudio layers --json`` run
    writing to ``out``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # ``-m trtstudio``: the program as the ``trtstudio`` script runs it (cli.entry)
    res = subprocess.run([sys.executable, "-c", LAUNCHER, str(out), sys.executable, "-m", "trtstudio", "layers",
                          str(graph), str(profile), "--json"], capture_output=True, text=True, check=True, env=env)
    return json.loads(res.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, nargs="+", default=[50000, 300000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", help="write the files into this folder and keep them")
    ap.add_argument("--from-source", action="store_true",
                    help="do not byte-compile trtstudio first (see benchmarks/_bytecode.py)")
    args = ap.parse_args()
    if not args.from_source:
        compile_package()
    budgets = {50000: 1.5, 300000: 6.0}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for n in args.layers:
            g, p = make_files(n, folder)
            runs = [run_once(g, p, folder / "out.json") for _ in range(args.repeat)]
            best = min(runs, key=lambda r: r["wall_s"])
            print(json.dumps({
                "bench": "layers_cli", "layers": n,
                "graph_bytes": g.stat().st_size, "profile_bytes": p.stat().st_size,
                "out_bytes": (folder / "out.json").stat().st_size,
                "wall_s": round(best["wall_s"], 3), "all_ended_s": round(best["all_ended_s"], 3),
                "cpu_s": round(best["cpu_s"], 3),
                "max_rss_mib": round(max(r["rss_mib"] for r in runs), 1),
                "budget_wall_s": budgets.get(n), "reference": REFERENCE,
                "bytecode": "from source" if args.from_source else "compiled, as pip install does",
            }), flush=True)


if __name__ == "__main__":
    main()
