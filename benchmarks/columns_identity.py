"""Before/after check of the layer table's columns: ``engine.table.base_columns`` and
``layer_columns`` give the same columns with the code of another tree (``--before``, e.g. a
``git archive`` of the commit before the change) as with this one, for benchmarks/engine.py's
synthetic engine (``--layers``, with its profile), benchmarks/layers_cli.py's MobileNet-like one
(``--mobilenet``) and every file under ../shared/fixtures/trt-real (alone, and TREx's graph +
profile pairs).

    git archive c8cbcce | tar -x -C /tmp/base
    python benchmarks/columns_identity.py --before /tmp/base [--layers 300000] [--mobilenet 50000]

Every field is compared: text columns and tips as lists (lazy ones read whole), numeric columns
with NaN equal to NaN (and -0.0 told from 0.0), severity, tooltips, precision, the search haystack,
types, precisions, time_by_type and time_by_precision (floats to the last bit), has_times. Each
tree's columns are computed in a child process with that tree first on the import path. Prints one
JSON line per case and a summary line; exit 1 when any case differs.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared/fixtures/trt-real"
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _canonical(cols: Any) -> dict[str, Any]:
    import numpy as np

    def arr(a: Any) -> tuple[str, bytes, tuple[int, ...]]:
        a = np.asarray(a)
        return str(a.dtype), a.tobytes(), a.shape  # bytes: NaN equals NaN, -0.0 differs from 0.0

    return {
        "text": {k: list(v) for k, v in cols.text.items()},
        "tips": {k: list(v) for k, v in cols.tips.items()},
        "num": {k: arr(v) for k, v in cols.num.items()},
        "severity": arr(cols.severity),
        "tooltips": list(cols.tooltips),
        "precision": list(cols.precision),
        "haystack": list(cols.haystack),
        "has_times": cols.has_times,
        "types": list(cols.types),
        "precisions": list(cols.precisions),
        "time_by_type": [(k, float(v).hex()) for k, v in cols.time_by_type],
        "time_by_precision": [(k, float(v).hex()) for k, v in cols.time_by_precision],
        "len": len(cols),
    }


def _child(cases_file: Path, out: Path) -> None:
    """In the child: every case's columns, canonical, pickled to ``out``."""
    from trtstudio.engine.load import load_engine
    from trtstudio.engine.table import base_columns, layer_columns

    results: dict[str, Any] = {}
    for name, files in json.loads(cases_file.read_text()):
        try:
            engine = load_engine([Path(f) for f in files])
        except Exception as e:  # noqa: BLE001  # a file the loader refuses: the same refusal both ways
            results[name] = {"error": f"{type(e).__name__}: {e}"}
            continue
        results[name] = {"base": _canonical(base_columns(engine)), "full": _canonical(layer_columns(engine)),
                         "layers": len(engine.layers)}
    out.write_bytes(pickle.dumps(results))


def _cases(tmp: Path, layers: int, mobilenet: int) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    if layers:
        from engine import LAYERS_PER_BLOCK, make_engine  # benchmarks/engine.py

        doc, _spec, profile = make_engine(max(1, layers // LAYERS_PER_BLOCK))
        (tmp / "s.layers.json").write_text(json.dumps(doc))
        (tmp / "s.profile.json").write_text(json.dumps(profile))
        out.append((f"synthetic{layers}", [str(tmp / "s.layers.json"), str(tmp / "s.profile.json")]))
        out.append((f"synthetic{layers}-no-profile", [str(tmp / "s.layers.json")]))
    if mobilenet:
        from layers_cli import make_files  # benchmarks/layers_cli.py

        (tmp / "mb").mkdir()
        make_files(mobilenet, tmp / "mb")
        out.append((f"mobilenet{mobilenet}", [str(tmp / "mb/BIG.graph.json"), str(tmp / "mb/BIG.profile.json")]))
    files = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.name != "MANIFEST.md")
    for p in files:
        out.append((str(p.relative_to(FIXTURES)), [str(p)]))
        if p.name.endswith(".graph.json"):
            prof = p.with_name(p.name[: -len(".graph.json")] + ".profile.json")
            if prof.exists():
                out.append((str(p.relative_to(FIXTURES)) + "+profile", [str(p), str(prof)]))
    return out


def _run(tree: Path, cases_file: Path, out: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(tree))
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(cases_file), str(out)],
                   check=True, env=env, cwd=tree)


def _diff(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    keys = sorted(set(a) | set(b))
    out = []
    for k in keys:
        if a.get(k) != b.get(k):
            if isinstance(a.get(k), dict) and isinstance(b.get(k), dict):
                out += [f"{k}.{s}" for s in _diff(a[k], b[k])]
            else:
                out.append(k)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="root of the tree with the old code")
    ap.add_argument("--layers", type=int, default=300_000, help="synthetic engine's layers (0: none)")
    ap.add_argument("--mobilenet", type=int, default=50_000, help="MobileNet-like engine's layers (0: none)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(Path(args.child[0]), Path(args.child[1]))
        return 0
    if not args.before:
        ap.error("--before is required")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cases = _cases(tmp, args.layers, args.mobilenet)
        (tmp / "cases.json").write_text(json.dumps(cases))
        _run(Path(args.before).resolve(), tmp / "cases.json", tmp / "before.pkl")
        _run(ROOT, tmp / "cases.json", tmp / "after.pkl")
        before = pickle.loads((tmp / "before.pkl").read_bytes())
        after = pickle.loads((tmp / "after.pkl").read_bytes())
    bad = 0
    for name, _files in cases:
        diff = _diff(before[name], after[name])
        bad += bool(diff)
        print(json.dumps({"case": name, "same": not diff, "differs": diff[:20],
                          "layers": after[name].get("layers"), "error": after[name].get("error")}), flush=True)
    print(json.dumps({"cases": len(cases), "differ": bad}))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
