"""Startup time: process start to the main window shown, and ``trtstudio --version`` / ``--help``.

    python benchmarks/startup.py [--runs 5] [--importtime [--top 25]]

Each measurement runs a fresh child process ``--runs`` times. The window time is wall time from
just before the child is spawned to a ``QTimer.singleShot(0)`` queued right after
``MainWindow.show()`` (the first turn of the event loop), offscreen, at 1600x1000, so it counts
interpreter start, imports, QApplication and the window's construction. ``--version`` and
``--help`` run the installed ``trtstudio`` console script (``python -m trtstudio`` if there is none).

Budgets (2-core machine): window shown <= 1.5 s; --version and --help well under 1 s.
Prints JSON lines: one per measurement with every run and the median, then one summary line.
``--bundle dist/trtstudio/trtstudio`` also times the PyInstaller bundle's --version and --help.
``--importtime`` adds the slowest imports (cumulative, from ``python -X importtime``) of the window
child, with the trtstudio module that first imports each one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _bytecode import compile_package  # noqa: E402

BUDGETS = {"window_shown_s": 1.5, "version_s": 1.0, "help_s": 1.0}

WINDOW_CHILD = r"""
import json, sys, time
t_spawn = float(sys.argv[1])
from trtstudio.ui.app import _app
app = _app()
t_app = time.time()
from trtstudio.ui.main_window import MainWindow
t_import = time.time()
win = MainWindow()
win.resize(1600, 1000)
win.show()
from PySide6.QtCore import QTimer


def _shown():
    now = time.time()
    print(json.dumps({"shown": now - t_spawn, "qapp": t_app - t_spawn, "main_window_import": t_import - t_app,
                      "construct_show": now - t_import}))
    win.close()
    app.quit()

QTimer.singleShot(0, _shown)
app.exec()
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    return env


_CLI_OVERRIDE: list[str] = []


def _cli() -> list[str]:
    if _CLI_OVERRIDE:
        return list(_CLI_OVERRIDE)
    script = Path(sys.executable).with_name("trtstudio")
    return [str(script)] if script.exists() else [sys.executable, "-m", "trtstudio"]


def time_window(runs: int) -> list[dict[str, float]]:
    """``runs`` child processes, each showing the main window once; their JSON reports."""
    out = []
    for _ in range(runs):
        t0 = time.time()
        proc = subprocess.run([sys.executable, "-c", WINDOW_CHILD, repr(t0)], capture_output=True, text=True,
                              env=_env(), timeout=120)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode != 0 or not lines:
            raise SystemExit(f"window child failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
        out.append(json.loads(lines[-1]))
    return out


def time_command(args: list[str], runs: int) -> list[float]:
    """Wall time of ``trtstudio ARGS`` ``runs`` times; it must exit 0."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run(_cli() + args, capture_output=True, text=True, env=_env(), timeout=60)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit(f"trtstudio {' '.join(args)} exited {proc.returncode}: {proc.stderr[-1000:]}")
    return times


def slow_imports(top: int) -> list[dict[str, object]]:
    """The ``top`` imports with the largest cumulative time in the window child, and who imports them."""
    env = _env()
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", WINDOW_CHILD, repr(time.time())],
                          capture_output=True, text=True, env=env, timeout=120)
    rows = []  # (depth, module, self_us, cumulative_us) in the order printed (children before parents)
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m:
            rows.append((len(m.group(3)) // 2, m.group(4), int(m.group(1)), int(m.group(2))))
    # The parent of a row is the next row below it printed with a smaller depth.
    parents: dict[int, str] = {}
    for i, (depth, _mod, _s, _c) in enumerate(rows):
        for j in range(i + 1, len(rows)):
            if rows[j][0] < depth:
                parents[i] = rows[j][1]
                break
    result = []
    for i in sorted(range(len(rows)), key=lambda k: -rows[k][3]):
        depth, mod, self_us, cum_us = rows[i]
        # first trtstudio module on the way up: the file whose top-level import pulls this in
        via, k = None, i
        while k in parents:
            parent = parents[k]
            if parent.startswith("trtstudio"):
                via = parent
                break
            k = next((j for j in range(k + 1, len(rows)) if rows[j][1] == parent), -1)
            if k < 0:
                break
        result.append({"module": mod, "cumulative_ms": round(cum_us / 1000, 1), "self_ms": round(self_us / 1000, 1),
                       "depth": depth, "imported_by": via})
        if len(result) >= top:
            break
    return result


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--importtime", action="store_true", help="also list the slowest imports of the window child")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--bundle", metavar="EXE", help="also time --version/--help of a bundle, e.g. dist/trtstudio/trtstudio")
    ap.add_argument("--from-source", action="store_true",
                    help="do not byte-compile trtstudio first (see benchmarks/_bytecode.py)")
    args = ap.parse_args()
    if not args.from_source:
        compile_package()

    win = time_window(args.runs)
    phases = {k: _median([r[k] for r in win]) for k in ("qapp", "main_window_import", "construct_show")}
    summary = {"window_shown_s": _median([r["shown"] for r in win])}
    print(json.dumps({"measure": "window_shown", "runs_s": [round(r["shown"], 3) for r in win],
                      "median_s": summary["window_shown_s"], "median_phases_s": phases}))
    for name, cli_args in (("version", ["--version"]), ("help", ["--help"])):
        times = time_command(cli_args, args.runs)
        summary[f"{name}_s"] = _median(times)
        print(json.dumps({"measure": name, "command": " ".join(_cli() + cli_args), "runs_s": [round(t, 3) for t in times],
                          "median_s": summary[f"{name}_s"]}))
    over = {k: v for k, v in summary.items() if v > BUDGETS[k]}
    print(json.dumps({"measure": "summary", "runs": args.runs, "cpus": os.cpu_count(), **summary, "budgets_s": BUDGETS,
                      "within_budget": not over, "over_budget": sorted(over),
                      "bytecode": "from source" if args.from_source else "compiled, as pip install does"}))
    if args.bundle:
        _CLI_OVERRIDE[:] = [str(Path(args.bundle).resolve())]
        for name, cli_args in (("bundle_version", ["--version"]), ("bundle_help", ["--help"])):
            times = time_command(cli_args, args.runs)
            print(json.dumps({"measure": name, "command": " ".join(_cli() + cli_args),
                              "runs_s": [round(t, 3) for t in times], "median_s": _median(times)}))
    if args.importtime:
        for row in slow_imports(args.top):
            print(json.dumps({"measure": "import", **row}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
