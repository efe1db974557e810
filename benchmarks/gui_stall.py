"""How long the GUI thread stops answering while a model and engine files are opened, as a user would.

    python benchmarks/gui_stall.py --model M.onnx --engine FILE [FILE ...]
    python benchmarks/gui_stall.py --synthetic [--layers 50000]   # benchmarks/engine.py's engine + its ONNX
    python benchmarks/gui_stall.py --session S.trtstudio          # a saved session (its engine, runs, model)
    python benchmarks/gui_stall.py --synthetic --layers 300000 --engine-only   # an engine alone

Opens the real MainWindow offscreen, loads the model (``open_model``), waits until the window is
idle, then opens the engine files (``open_engine``) and waits again; or opens a session
(``open_session``: its engine and runs, then its model) and waits until all of it is on screen. A 10 ms QTimer on the GUI
thread records its ticks; a stall is the gap between two ticks beyond the timer's period. Prints
one JSON line: ``{"max_stall_ms", "p99_stall_ms", "load_s", ...}``, with ``table_s`` (the engine's
layer table shows its rows, polled on the window's table model) and ``findings_s`` (the diagnosis
is in: the workspace's analysis no longer ``pending``) since the engine (or session) began to open; ``worst_stalls`` lists the five
longest as [ms, seconds after the load began]. Budget (issue 11): max stall
<= 100 ms for a 100,000-node model and a 50,000-layer engine. ``--profile FILE`` writes a cProfile
of the GUI thread during the load (what runs on it); ``--where`` samples the GUI thread's stack
during each stall over 100 ms (``stall_stacks``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from stallwatch import watch_stalls  # noqa: E402

BUDGET_MS = 100.0


def synthetic(layers: int, tmp: Path) -> tuple[Path, list[Path]]:
    """benchmarks/engine.py's inspector JSON, profile and matching ONNX model (2 nodes per layer)."""
    import engine as eb  # benchmarks/engine.py

    doc, spec, profile = eb.make_engine(max(1, layers // eb.LAYERS_PER_BLOCK))
    lp, pp, op = tmp / "bench.layers.json", tmp / "bench.profile.json", tmp / "bench.onnx"
    lp.write_text(json.dumps(doc))
    pp.write_text(json.dumps(profile))
    eb.write_onnx(spec, op)
    return op, [lp, pp]


def table_shown(ws: object, table: object, engine_before: object) -> bool:
    """The layer table of the window shows every row of an engine opened since ``engine_before``."""
    engine = getattr(ws, "engine", None)
    if engine is None or engine is engine_before or table is None:
        return False
    model = table.model  # type: ignore[attr-defined]
    return bool(model.engine() is not None and len(engine.layers) > 0 and model.rowCount() == len(engine.layers))


def measure(model: Path | None, engine_files: list[Path], profile_out: str | None = None,
            where: bool = False, session: Path | None = None) -> dict[str, object]:
    import numpy as np
    from PySide6.QtCore import QTimer

    from trtstudio.ui.app import _app
    from trtstudio.ui.main_window import MainWindow

    app = _app()  # the application as ``trtstudio gui`` sets it up (GIL switch interval, ...)
    win = MainWindow()
    win.resize(1400, 900)
    win.show()
    for _ in range(20):
        app.processEvents()
        time.sleep(0.01)
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    errors: list[str] = []
    win.sig_error.connect(errors.append)
    prof = None
    if profile_out:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    stall_stacks: list[list[object]] = []
    stop_watch = watch_stalls(ticks, stall_stacks) if where else None
    timer.start()
    t0 = time.perf_counter()
    phases = {}
    steps = [("session", lambda: win.open_session(str(session)))] if session is not None else [
        *([("model", lambda: win.open_model(str(model)))] if model is not None else []),
        ("engine", lambda: win.open_engine([str(p) for p in engine_files]) if engine_files else None)]
    ws, table = win.workspace, win.engine_tabs.layer_table
    for name, start in steps:
        p0 = time.perf_counter()
        engine_before = ws.engine
        start()
        app.processEvents()
        while True:
            app.processEvents()
            if name != "model" and "table_s" not in phases and table_shown(ws, table, engine_before):
                phases["table_s"] = round(time.perf_counter() - p0, 3)  # the rows are there to scroll, sort, filter
            if name != "model" and "findings_s" not in phases and ws.engine is not engine_before \
                    and ws.analysis is not None and not getattr(ws.analysis, "pending", False):
                phases["findings_s"] = round(time.perf_counter() - p0, 3)  # the diagnosis is in the window
            if not win.is_busy():
                break
            time.sleep(0.002)
        for _ in range(30):  # the first paint of what arrived
            app.processEvents()
            time.sleep(0.005)
        phases[f"{name}_s"] = round(time.perf_counter() - p0, 3)
    load_s = time.perf_counter() - t0
    timer.stop()
    if stop_watch is not None:
        stop_watch()
    if prof is not None:
        prof.disable()
        prof.dump_stats(profile_out)
    gaps = np.diff(np.asarray(ticks)) * 1000.0 if len(ticks) > 1 else np.zeros(1)
    stalls = np.maximum(gaps - 10.0, 0.0)
    out = {
        "bench": "gui_stall", "model": str(model) if model is not None else win.workspace.model_path,
        "engine": [str(p) for p in engine_files], **({"session": str(session)} if session is not None else {}),
        "nodes": len(win.model.graph.nodes) if win.model is not None else None,
        "layers": len(win.engine.layers) if win.engine is not None else None,
        "findings": len(win.analysis.findings) if win.analysis is not None else None,
        "max_stall_ms": round(float(stalls.max()), 1), "p99_stall_ms": round(float(np.percentile(stalls, 99)), 1),
        "stalls_over_100ms": int((stalls > 100).sum()), "ticks": len(ticks), "load_s": round(load_s, 3),
        **phases, "budget_ms": BUDGET_MS, "ok": bool(stalls.max() <= BUDGET_MS) and not errors, "errors": errors,
    }
    worst = np.argsort(stalls)[::-1][:5] if len(ticks) > 1 else []
    out["worst_stalls"] = [[round(float(stalls[i])), round(ticks[i] - t0, 2)] for i in worst]  # [ms, s after start]
    if where:
        out["stall_stacks"] = [[round((t - t0), 2), *rest] for t, *rest in stall_stacks]  # type: ignore[operator]
    win.shutdown()
    win.close()
    return out


def add_input_args(ap: argparse.ArgumentParser) -> None:
    """The window benchmarks' inputs: ``--model`` (and ``--engine`` files), or ``--synthetic``."""
    ap.add_argument("--model")
    ap.add_argument("--engine", nargs="*", default=[])
    ap.add_argument("--synthetic", action="store_true", help="benchmarks/engine.py's engine and model")
    ap.add_argument("--layers", type=int, default=50_000, help="the synthetic engine's layers")


def input_files(ap: argparse.ArgumentParser, args: argparse.Namespace, tmp: Path) -> tuple[Path, list[Path]]:
    """(model, engine files) of :func:`add_input_args`' arguments (the synthetic ones written to ``tmp``)."""
    if args.synthetic:
        return synthetic(args.layers, tmp)
    if not args.model and not (args.engine and getattr(args, "engine_only", False)):
        ap.error("give --model (and --engine), --engine-only --engine, or --synthetic")
    return Path(args.model), [Path(p) for p in args.engine]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_input_args(ap)
    ap.add_argument("--profile", help="write a cProfile of the load to this file")
    ap.add_argument("--where", action="store_true",
                    help="also list what the GUI thread ran during each stall over 100 ms (stall_stacks)")
    ap.add_argument("--session", help="open this saved session instead of --model/--engine")
    ap.add_argument("--engine-only", action="store_true",
                    help="open the engine files alone (with --synthetic: its engine, without its model)")
    args = ap.parse_args()
    if args.session and (args.model or args.engine or args.synthetic):
        ap.error("--session opens a session alone: leave out --model, --engine and --synthetic")
    if args.session:
        print(json.dumps(measure(None, [], args.profile, args.where, Path(args.session))), flush=True)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        model, engine_files = input_files(ap, args, Path(tmp))
        out = measure(None if args.engine_only else model, engine_files, args.profile, args.where)
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
