"""Before/after check: ``trtstudio layers FILE --json`` gives the same parsed document with the code
of another tree (``--before``, e.g. a ``git archive`` of the commit before the speed work) as with
this one, for every file under ../shared/fixtures/trt-real (alone, and TREx's graph + profile pairs).

    git archive 229203c trtstudio | tar -x -C /tmp/base
    python benchmarks/engine_identity.py --before /tmp/base

Compact vs indented output is expected to differ; the parsed objects must be equal (paths aside,
NaN/Infinity compared as the null the new writer makes). Prints one JSON line per case and a
summary line; exit 1 when any case differs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared/fixtures/trt-real"


def _run(tree: Path, files: list[Path]) -> tuple[int, Any]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    p = subprocess.run([sys.executable, "-m", "trtstudio.cli", "layers", *map(str, files), "--json"],
                       capture_output=True, env=env, cwd=tree)
    if p.returncode != 0:
        return p.returncode, p.stderr.decode(errors="replace").strip()
    return 0, json.loads(p.stdout, parse_constant=lambda _c: None)


def cases() -> list[list[Path]]:
    """Every fixture file alone, and each TREx stem's graph + profile together."""
    files = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.name != "MANIFEST.md")
    out = [[p] for p in files]
    for g in files:
        if g.name.endswith(".graph.json"):
            prof = g.with_name(g.name[: -len(".graph.json")] + ".profile.json")
            if prof.exists():
                out.append([g, prof])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="root of the tree with the old code")
    args = ap.parse_args()
    before = Path(args.before)
    n_same = n_diff = 0
    for files in cases():
        rc_a, a = _run(before, files)
        rc_b, b = _run(ROOT, files)
        same = rc_a == rc_b and a == b
        n_same += same
        n_diff += not same
        print(json.dumps({"files": [str(f.relative_to(FIXTURES)) for f in files], "rc": rc_b, "identical": same}),
              flush=True)
    print(json.dumps({"bench": "engine_identity", "cases": n_same + n_diff, "identical": n_same,
                      "different": n_diff}))
    return 1 if n_diff else 0


if __name__ == "__main__":
    raise SystemExit(main())
