"""``trtstudio diff A B --json`` of two 50,000-layer engines (budget: 2 s as users run it: a whole
process on the 2-core machine), JSON lines.

The base is ``benchmarks/engine.py``'s synthetic engine. Two "other" sides (``--pair``):

- ``renamed``: the same engine rebuilt the way a second build differs: every 3rd block's first
  convolution in another precision, every 5th block's reformat gone, and in every 10th block the
  names changed (a re-export: the structure pass must align those);
- ``precision``: every third layer's precision changed (its tensors' formats and its tactic), names
  kept (issue 53's measurement),

each with a per-inference timing file on each side. Prints, per pair and repeat, the whole process
(``python -m trtstudio diff A B --json``: wall time from spawn to exit, the figure the budget
judges, its processor time and peak RSS; and the same without the helper process that works out
each side's graph and memory beside it, ``diff.prefetch``) beside the same command in this process (read both sides, align,
verdict, JSON) and its parts: the reads alone and the diff alone, and the share of convolutions
aligned. ``--keep DIR`` leaves the pairs there (for farm-bench or a profiler).

    python benchmarks/diff.py --layers 50000 --repeat 3 [--pair renamed,precision] [--keep DIR]
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine import make_engine  # noqa: E402


def _renamed(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    layers = []
    for i, lay in enumerate(out["Layers"]):
        block = i // 6
        if lay["LayerType"] == "Reformat" and block % 5 == 0:
            continue
        if i % 6 == 0 and block % 3 == 0:
            for t in lay["Inputs"] + lay["Outputs"]:
                t["Format/Datatype"] = INT8
            lay["TacticName"] = INT8_TACTIC
        if block % 10 == 0:
            lay["Name"] = lay["Name"].replace("/blk", "/export2_blk")
            lay["Metadata"] = lay.get("Metadata", "").replace("/blk", "/export2_blk")
        layers.append(lay)
    out["Layers"] = layers
    return out


def _precision(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    for i, lay in enumerate(out["Layers"]):
        if i % 3 == 0:
            for t in lay["Inputs"] + lay["Outputs"]:
                t["Format/Datatype"] = INT8 if "FP16" in t["Format/Datatype"] else FP16
            if lay.get("TacticName"):
                lay["TacticName"] = INT8_TACTIC
    return out


INT8 = "Thirty-two wide channel vectorized row major Int8 format"
FP16 = "Channel major FP16 format where channel % 8 == 0"
INT8_TACTIC = "sm86_xmma_fprop_implicit_gemm_interleaved_i8i8"
PAIRS = {"renamed": _renamed, "precision": _precision}


def _times(path: Path, median: float, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    vals = rng.normal(median, median * 0.01, n)
    path.write_text(json.dumps([{"startEnqMs": 0, "endEnqMs": 0.01, "computeMs": float(v), "latencyMs": float(v),
                                 "h2dMs": 0, "d2hMs": 0} for v in vals]))


def _write_side(folder: Path, d: dict[str, Any], profile: list[dict[str, Any]], median: float, seed: int) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "net.engine.graph.json").write_text(json.dumps(d))
    names = {lay["Name"] for lay in d["Layers"]}
    recs = [profile[0]]
    for r in profile[1:]:
        if r["name"] in names:
            recs.append(r)
        elif r["name"].replace("/blk", "/export2_blk") in names:
            recs.append(dict(r, name=r["name"].replace("/blk", "/export2_blk")))
    (folder / "net.engine.profile.json").write_text(json.dumps(recs))
    _times(folder / "net.engine.timing.json", median, 2000, seed)
    return str(folder)


def whole_process(a: str, b: str, helper: bool = True) -> dict[str, Any]:
    """``python -m trtstudio diff A B --json`` as a user runs it: wall time from spawn to exit, the
    processor time of it and its helper process (``diff.prefetch``; ``helper`` False: none,
    ``TRTSTUDIO_DIFF_HELPER=0``), and the peak RSS of the largest of them as ``/usr/bin/time``
    reads it (a child spawned straight from this big process would count this process's pages,
    which the exec inherits as its high-water mark)."""
    import resource

    timer = Path("/usr/bin/time").exists()
    with tempfile.TemporaryDirectory() as tmp:
        peak_file = Path(tmp) / "peak"
        cmd = [sys.executable, "-m", "trtstudio", "diff", a, b, "--json"]
        if timer:
            cmd = ["/usr/bin/time", "-f", "%M", "-o", str(peak_file), *cmd]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed: bytecode cached
        env["TRTSTUDIO_DIFF_HELPER"] = "" if helper else "0"
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, env=env, check=False)
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        peak = int(peak_file.read_text().split()[-1]) / 1024 if timer and peak_file.exists() else None
    doc = json.loads(proc.stdout) if proc.stdout.strip().startswith(b"{") else None
    return {"process_s": round(wall, 3), "cpu_s": round(cpu, 3), "rc": proc.returncode, "stderr": proc.stderr.decode()[-300:] or None,
            "doc": doc, "peak_rss_mib": None if peak is None else round(peak, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pair", default="renamed,precision", help="which pairs: renamed, precision (comma list)")
    ap.add_argument("--keep", help="write the pairs into this folder and leave them there")
    args = ap.parse_args()
    from trtstudio.cli import main as cli
    from trtstudio.diff.core import diff
    from trtstudio.diff.sides import load_side

    with tempfile.TemporaryDirectory() as tmp:
        t = Path(args.keep or tmp)
        doc, _, profile = make_engine(args.layers // 6 + 1)
        base = _write_side(t / "base", doc, profile, 10.0, 0)
        for pair in args.pair.split(","):
            other = _write_side(t / pair, PAIRS[pair](doc), profile, 9.5, 1)
            whole_process(base, other)  # a first run writes the bytecode a pip install would have compiled
            for i in range(args.repeat):
                proc = whole_process(base, other)
                alone = whole_process(base, other, helper=False)
                t0 = time.perf_counter()
                with redirect_stdout(io.StringIO()) as buf:
                    rc = cli(["diff", base, other, "--json"])
                total = time.perf_counter() - t0
                out = json.loads(buf.getvalue())
                t1 = time.perf_counter()
                a, b = load_side(base), load_side(other)
                t2 = time.perf_counter()
                d = diff(a, b)
                t3 = time.perf_counter()
                cl = out["diffs"][0]["alignment"]["compute_layers"]
                print(json.dumps({"bench": "diff", "pair": pair, "repeat": i,
                                  "layers": [len(a.engine.layers), len(b.engine.layers)],
                                  "process_s": proc["process_s"], "process_cpu_s": proc["cpu_s"],
                                  "process_peak_rss_mib": proc["peak_rss_mib"],
                                  "process_no_helper_s": alone["process_s"], "process_no_helper_cpu_s": alone["cpu_s"],
                                  "process_no_helper_same_json": alone["doc"] == out,
                                  "process_rc": proc["rc"], "process_same_json": proc["doc"] == out,
                                  "rc": rc, "command_s": round(total, 3), "read_s": round(t2 - t1, 3),
                                  "diff_s": round(t3 - t2, 3), "budget_s": 2.0,
                                  "compute_aligned": [cl["base_aligned"], cl["base"]],
                                  "matched_by": out["diffs"][0]["alignment"]["matched_by"],
                                  "verdict": d.pairs[0].summary["verdict"]}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
