"""Time the report of a big model with its engine: the synthetic 100,000-node model beside its
50,000-layer engine (benchmarks/engine.py's inspector JSON + profile), as `trtstudio report` makes it.

    python benchmarks/report_model.py [--layers 50000] [--format html|json|pdf] [--repeat 3]

Phases: make_session (model load, engine read + analysis, excerpts), Report.from_session (At a
glance included), the writer. Budget (issue 30): <= 5 s for the whole HTML report on this 2-core
machine. Prints one JSON line per repeat.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

BUDGET_S = 5.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=50_000)
    ap.add_argument("--format", default="html", choices=("html", "json", "pdf"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    from gui_stall import synthetic

    from trtstudio.report.model import Report, make_session
    from trtstudio.report.writers import write_report

    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        model, files = synthetic(args.layers, tmp)
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            session = make_session(str(model), [str(f) for f in files])
            t1 = time.perf_counter()
            rep = Report.from_session(session)
            t2 = time.perf_counter()
            out = tmp / f"r.{args.format}"
            write_report(rep, out)
            t3 = time.perf_counter()
            print(json.dumps({
                "benchmark": "report_model", "layers": len(rep.layers), "model_nodes": (rep.model or {}).get("nodes"),
                "format": args.format, "session_s": round(t1 - t0, 3), "report_s": round(t2 - t1, 3),
                "write_s": round(t3 - t2, 3), "total_s": round(t3 - t0, 3), "budget_s": BUDGET_S,
                "excerpts": len((session.graph_excerpts or {}).get("excerpts") or []),
                "bytes": out.stat().st_size, "ok": t3 - t0 <= BUDGET_S}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
