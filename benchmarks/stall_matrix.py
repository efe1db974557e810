"""The window's stall budget over every benchmark input at once: each case opened ``--runs`` times
in a fresh process by ``benchmarks/gui_stall.py`` (the real MainWindow, offscreen).

    QT_QPA_PLATFORM=offscreen python benchmarks/stall_matrix.py [--runs 3] [--only synthetic,fan]

Cases (issue 32: "longest stall <= 100 ms while any of our benchmark inputs open, including other
graph shapes than the synthetic one"):

- ``synthetic``: benchmarks/engine.py's 50,000-layer engine with its 100,000-node model;
- ``transformer``, ``fan``, ``cnn``: a 100,000-node ``benchmarks/synth.py`` model of that kind with
  a 50,000-layer engine of chained copies of TREx's MobileNet listing (``layers_cli.make_files``:
  another engine than the model, as a user opening the wrong pair would);
- ``engine300k``: the synthetic 300,000-layer engine alone (``--engine-only``), whose
  ``table_s`` has its own budget (3 s to an interactive table);
- ``session``: a saved session of the synthetic 50,000-layer engine and its model.

Prints one JSON line per run (the case, run and gui_stall's figures) and a last line
``{"summary": {case: {"max_stall_ms": [...], "worst_ms", "table_s": [...], "within_budget"}}}``.
Each run is a fresh process, so every figure includes what a user's open does; the machine's
load is printed beside them (``load1``), since stalls grow with it.
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

BUDGET_MS = 100.0
TABLE_BUDGET_S = 3.0
CASES = ("synthetic", "transformer", "fan", "cnn", "engine300k", "session")


def _model(kind: str, nodes: int, tmp: Path) -> Path:
    import onnx
    from synth import make_model  # benchmarks/synth.py

    path = tmp / f"{kind}{nodes}.onnx"
    if not path.exists():
        onnx.save(make_model(nodes, kind), str(path))
    return path


def _mobilenet_engine(layers: int, tmp: Path) -> list[Path]:
    from layers_cli import make_files  # benchmarks/layers_cli.py

    folder = tmp / f"mobilenet{layers}"
    if not folder.exists():
        folder.mkdir()
        make_files(layers, folder)
    return [folder / "BIG.graph.json", folder / "BIG.profile.json"]


def _session(tmp: Path) -> Path:
    from gui_stall import synthetic

    from trtstudio.engine.load import load_engine
    from trtstudio.report.model import make_session
    from trtstudio.report.session import write_session

    path = tmp / "synthetic50k.trtstudio"
    if not path.exists():
        folder = tmp / "session-src"
        folder.mkdir(exist_ok=True)
        model, files = synthetic(50_000, folder)
        write_session(path, make_session(model=str(model), engine=load_engine(files)))
    return path


def case_args(case: str, tmp: Path, nodes: int) -> list[str]:
    """gui_stall.py's arguments for ``case`` (its inputs written into ``tmp`` once)."""
    if case == "synthetic":
        return ["--synthetic"]
    if case == "engine300k":
        return ["--synthetic", "--layers", "300000", "--engine-only"]
    if case == "session":
        return ["--session", str(_session(tmp))]
    engine = _mobilenet_engine(50_000, tmp)
    return ["--model", str(_model(case, nodes, tmp)), "--engine", *map(str, engine)]


def run_case(case: str, args: list[str]) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, str(HERE / "gui_stall.py"), *args], capture_output=True, text=True,
                          env={**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")},
                          timeout=900)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1], "rc": proc.returncode}
    return dict(json.loads(lines[-1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default=",".join(CASES), help="comma-separated cases: " + ", ".join(CASES))
    ap.add_argument("--nodes", type=int, default=100_000, help="the synth models' nodes")
    ap.add_argument("--keep", help="write the inputs into this folder and keep them (else a temporary one)")
    args = ap.parse_args()
    cases = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {', '.join(unknown)}: choose from {', '.join(CASES)}")
    summary: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(args.keep) if args.keep else Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        for case in cases:
            gui_args = case_args(case, tmp, args.nodes)
            stalls: list[float] = []
            tables: list[float] = []
            for run in range(args.runs):
                out = run_case(case, gui_args)
                out.update(case=case, run=run, load1=round(os.getloadavg()[0], 2))
                print(json.dumps(out), flush=True)
                if "max_stall_ms" in out:
                    stalls.append(float(out["max_stall_ms"]))
                if out.get("table_s") is not None:
                    tables.append(float(out["table_s"]))
            entry: dict[str, Any] = {"max_stall_ms": stalls, "worst_ms": max(stalls) if stalls else None,
                                     "within_budget": bool(stalls) and max(stalls) <= BUDGET_MS}
            if case == "engine300k":
                entry["table_s"] = tables
                entry["within_budget"] = entry["within_budget"] and bool(tables) and max(tables) <= TABLE_BUDGET_S
            summary[case] = entry
    print(json.dumps({"summary": summary, "budget_ms": BUDGET_MS, "table_budget_s": TABLE_BUDGET_S}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
