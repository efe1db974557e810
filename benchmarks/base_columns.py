"""Time ``engine.table.base_columns`` against another tree's (``--before``), interleaved in one process
on one engine: benchmarks/engine.py's synthetic engine with its profile (``--layers``) or given files.

    git archive c8cbcce | tar -x -C /tmp/base
    python benchmarks/base_columns.py --before /tmp/base [--layers 300000] [--repeat 5] [--files F ...]

The cyclic collector is off while they run, as in the window's worker (``analysis.mapped``,
``gc_paused``). Prints one JSON line: each tree's min and median over ``--repeat`` runs, in ms.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _old_module(tree: Path) -> Any:
    """The other tree's engine/table.py as a module of its own (it imports this tree's model)."""
    spec = importlib.util.spec_from_file_location("before_table", tree / "trtstudio/engine/table.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["before_table"] = mod
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="root of the tree with the old code")
    ap.add_argument("--layers", type=int, default=300_000)
    ap.add_argument("--files", nargs="*", help="engine files instead of the synthetic engine")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    from trtstudio.engine import table
    from trtstudio.engine.load import load_engine

    old = _old_module(Path(args.before).resolve())
    with tempfile.TemporaryDirectory() as d:
        if args.files:
            engine = load_engine([Path(f) for f in args.files])
        else:
            from engine import LAYERS_PER_BLOCK, make_engine  # benchmarks/engine.py

            doc, _spec, profile = make_engine(max(1, args.layers // LAYERS_PER_BLOCK))
            (Path(d) / "t.layers.json").write_text(json.dumps(doc))
            (Path(d) / "t.profile.json").write_text(json.dumps(profile))
            del doc, profile
            engine = load_engine([Path(d) / "t.layers.json", Path(d) / "t.profile.json"])
    gc.collect()
    gc.disable()
    runs: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(args.repeat):
        for name, fn in (("before", old.base_columns), ("after", table.base_columns)):
            t = time.perf_counter()
            cols = fn(engine)
            runs[name].append((time.perf_counter() - t) * 1000)
            del cols
    print(json.dumps({"layers": len(engine.layers),
                      **{f"{k}_min_ms": round(min(v), 1) for k, v in runs.items()},
                      **{f"{k}_median_ms": round(statistics.median(v), 1) for k, v in runs.items()}}))


if __name__ == "__main__":
    main()
