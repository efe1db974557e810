"""``trtstudio diff`` of two 50,000-layer engines (budget: 2 s on the 2-core machine), JSON lines.

The base is ``benchmarks/engine.py``'s synthetic engine; the other is the same engine rebuilt the
way a second build differs: every 3rd block's first convolution in another precision, every 5th
block's reformat gone, and in every 10th block the names changed (a re-export: the structure pass
must align those), with a per-inference timing file on each side. Prints, per repeat, the time of
the whole command in this process (read both sides, align, verdict, JSON), of the reads alone and
of the diff alone, and the share of convolutions aligned.

    python benchmarks/diff.py --layers 50000 --repeat 3
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine import make_engine  # noqa: E402


def _other(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    layers = []
    for i, lay in enumerate(out["Layers"]):
        block = i // 6
        if lay["LayerType"] == "Reformat" and block % 5 == 0:
            continue
        if i % 6 == 0 and block % 3 == 0:
            for t in lay["Inputs"] + lay["Outputs"]:
                t["Format/Datatype"] = "Thirty-two wide channel vectorized row major Int8 format"
            lay["TacticName"] = "sm86_xmma_fprop_implicit_gemm_interleaved_i8i8"
        if block % 10 == 0:
            lay["Name"] = lay["Name"].replace("/blk", "/export2_blk")
            lay["Metadata"] = lay.get("Metadata", "").replace("/blk", "/export2_blk")
        layers.append(lay)
    out["Layers"] = layers
    return out


def _times(path: Path, median: float, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    vals = rng.normal(median, median * 0.01, n)
    path.write_text(json.dumps([{"startEnqMs": 0, "endEnqMs": 0.01, "computeMs": float(v), "latencyMs": float(v),
                                 "h2dMs": 0, "d2hMs": 0} for v in vals]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from trtstudio.cli import main as cli
    from trtstudio.diff.core import diff
    from trtstudio.diff.sides import load_side

    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        doc, _, profile = make_engine(args.layers // 6 + 1)
        sides = []
        for name, d, med in (("base", doc, 10.0), ("other", _other(doc), 9.5)):
            folder = t / name
            folder.mkdir()
            (folder / "net.engine.graph.json").write_text(json.dumps(d))
            names = {lay["Name"] for lay in d["Layers"]}
            recs = [profile[0]]
            for r in profile[1:]:
                if r["name"] in names:
                    recs.append(r)
                elif r["name"].replace("/blk", "/export2_blk") in names:
                    recs.append(dict(r, name=r["name"].replace("/blk", "/export2_blk")))
            (folder / "net.engine.profile.json").write_text(json.dumps(recs))
            _times(folder / "net.engine.timing.json", med, 2000, len(sides))
            sides.append(str(folder))
        for i in range(args.repeat):
            t0 = time.perf_counter()
            with redirect_stdout(io.StringIO()) as buf:
                rc = cli(["diff", sides[0], sides[1], "--json"])
            total = time.perf_counter() - t0
            out = json.loads(buf.getvalue())
            t1 = time.perf_counter()
            a, b = load_side(sides[0]), load_side(sides[1])
            t2 = time.perf_counter()
            d = diff(a, b)
            t3 = time.perf_counter()
            cl = out["diffs"][0]["alignment"]["compute_layers"]
            print(json.dumps({"bench": "diff", "repeat": i, "layers": [len(a.engine.layers), len(b.engine.layers)],
                              "rc": rc, "command_s": round(total, 3), "read_s": round(t2 - t1, 3),
                              "diff_s": round(t3 - t2, 3), "budget_s": 2.0,
                              "compute_aligned": [cl["base_aligned"], cl["base"]],
                              "matched_by": out["diffs"][0]["alignment"]["matched_by"],
                              "verdict": d.pairs[0].summary["verdict"]}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
