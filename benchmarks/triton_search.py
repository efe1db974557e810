"""Quick against exhaustive Triton config search on a real Triton (issue 51's budgets).

    python benchmarks/triton_search.py [--python PY] [--smoke] [--out FILE.json]

For each third-party ONNX model (PaddleOCR's direction classifier from rapidocr_onnxruntime, onnx's
light SqueezeNet), served by python-backend models running ONNX Runtime on a tritonserver that
trtstudio launches (nvidia-pytriton's, in the tests' venv unless --python), it runs the quick search
and the exhaustive search under the same p99 budget and space, one after the other, each as
``--launch --out`` runs it (its own server; the search's time includes starting it) (the winner written, loaded once more on a fresh server by name and
re-measured). Prints one JSON document:

- ``pick_ratio``: the throughput of the variant quick mode picked over that of the exhaustive
  search's best, both written entries re-measured head to head (:func:`head_to_head`: alternating
  fresh servers, long windows, medians of three) (budget >= 0.95); ``pick_ratio_same_run``: the
  exhaustive search's own figure of quick's pick over its own best (shown: biased low, its best
  being the largest of many noisy figures); ``quick_ratio``: quick mode's own figure over that best;
- ``time_ratio``: quick's wall time over the exhaustive one's (budget <= 0.30);
- ``rejected``: variants the server refused plus written entries that did not load (budget 0).

``--smoke``: one model, a tiny space, for checking that the benchmark runs (no budget judged).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def _site(package: str, rel: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    p = Path(list(spec.submodule_search_locations)[0]) / rel
    return p if p.exists() else None


MODELS = [  # (label, package, file, shapes, p99 budget ms)
    ("paddleocr-cls", "rapidocr_onnxruntime", "models/ch_ppocr_mobile_v2.0_cls_infer.onnx", {"x": (1, 3, 48, 192)}, 20.0),
    ("light-squeezenet", "onnx", "backend/test/data/light/light_squeezenet.onnx", None, 60.0),
]


def one(label: str, path: Path, shapes: Any, budget: float, python: str, smoke: bool, work: Path) -> dict[str, Any]:
    from trtstudio.triton.launch import LaunchedServer
    from trtstudio.triton.search import Constraints, Search, SearchRequest, SearchSettings
    from trtstudio.triton.variants import ModelSource, Space

    src = ModelSource.from_onnx(path, shapes)
    space = Space([1, 2], [4], [None, 100]) if smoke else Space([1, 2], [1, 4, 8, 16], [None, 100, 1000])
    conc = [1, 4] if smoke else [1, 2, 4, 8, 16]
    docs: dict[str, dict[str, Any]] = {}
    for mode in ("quick", "exhaustive"):  # each as the user runs it: --launch, its own server, --out
        req = SearchRequest(src, launch=True, constraints=Constraints(latency_ms=budget),
                            settings=SearchSettings(concurrency=conc, window_s=0.4, max_windows=4, mode=mode,
                                                    space=space),
                            out=str(work / f"{label}-{mode}"), python=python)
        docs[mode] = Search(req).run()
    q, e = docs["quick"], docs["exhaustive"]
    loaded, rejected_entries = 0, []
    for mode, d in docs.items():
        folder = (d.get("out") or {}).get("folder")
        if not folder:
            continue
        import tritonclient.http as http

        with LaunchedServer(repository=Path(folder).parent, python=python) as s:
            try:
                http.InferenceServerClient(s.url).load_model(Path(folder).name)
                loaded += 1
            except Exception as exc:  # noqa: BLE001 - counted and named
                rejected_entries.append(f"{mode}: {exc}")
    best_e = (e["best"][0] or {}).get("throughput") or 0.0
    pick = q.get("winner")
    e_of_pick = next((v["point"]["throughput"] for v in e["variants"] if v["key"] == pick and v.get("feasible")), 0.0)
    h2h = head_to_head(docs, python, 0 if smoke else ROUNDS)
    rejected_variants = [f"{m}: {v['key']}: {v['error']}" for m, d in docs.items() for v in d["variants"]
                         if str(v.get("error") or "").startswith("rejected")]
    return {"model": label, "budget_p99_ms": budget, "quick_winner": pick, "exhaustive_winner": e.get("winner"),
            "exhaustive_best": best_e, "exhaustive_of_quick_pick": e_of_pick,
            "quick_own": (q["best"][0] or {}).get("throughput"),
            "pick_ratio": h2h["ratio"], "head_to_head": h2h,
            "pick_ratio_same_run": e_of_pick / best_e if best_e else None,
            "quick_ratio": ((q["best"][0] or {}).get("throughput") or 0.0) / best_e if best_e else None,
            "quick_s": q["duration_s"], "exhaustive_s": e["duration_s"], "time_ratio": q["duration_s"] / e["duration_s"],
            "quick_measured": q["measured"], "exhaustive_measured": e["measured"],
            "confirm": {m: (d.get("out") or {}).get("confirm") for m, d in docs.items()},
            "entries_loaded": loaded, "rejected": len(rejected_variants) + len(rejected_entries),
            "rejected_what": rejected_variants + rejected_entries}


ROUNDS = 3  # head-to-head rounds: each pick measured this many times, the two alternating


def head_to_head(docs: dict[str, dict[str, Any]], python: str, rounds: int) -> dict[str, Any]:
    """Quick mode's pick against the exhaustive search's best, each written entry served by a fresh
    server in turn (quick, exhaustive, exhaustive, quick, ...: a drift of the machine falls on both)
    and measured at its own winning concurrency with long windows; the ratio of the medians. The
    same variant picked by both is a ratio of 1 without measuring. (An exhaustive search's best is
    the largest of many noisy figures, so its own figure is biased upward against any one re-measure:
    the winner's curse; judging the pick by the two figures of one run holds that bias.)"""
    from trtstudio.triton.launch import LaunchedServer
    from trtstudio.triton.sweep import SweepSettings, run_sweep

    q, e = docs["quick"], docs["exhaustive"]
    if q.get("winner") == e.get("winner"):
        return {"ratio": 1.0 if q.get("winner") else None, "same_variant": True}
    picks = {}
    for mode, d in docs.items():
        folder = (d.get("out") or {}).get("folder")
        conc = (d.get("out") or {}).get("confirm", {}).get("concurrency")
        if not folder or not conc:
            return {"ratio": None, "error": f"{mode}: no written winner to measure"}
        picks[mode] = (Path(folder), int(conc))
    got: dict[str, list[float]] = {"quick": [], "exhaustive": []}
    import tritonclient.http as http

    for r in range(rounds):
        for mode in (("quick", "exhaustive") if r % 2 == 0 else ("exhaustive", "quick")):
            folder, conc = picks[mode]
            with LaunchedServer(repository=folder.parent, python=python) as s:
                http.InferenceServerClient(s.url).load_model(folder.name)
                res = run_sweep(s.url, folder.name, SweepSettings(concurrency=[conc], window_s=1.0, max_windows=6),
                                metrics=None)
            if res.steps:
                got[mode].append(float(res.steps[-1]["throughput"]))
    med = {m: float(np.median(v)) if v else None for m, v in got.items()}
    ratio = med["quick"] / med["exhaustive"] if med["quick"] and med["exhaustive"] else None
    return {"ratio": ratio, "same_variant": False, "throughput": got, "median": med,
            "concurrency": {m: c for m, (_, c) in picks.items()}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", help="the Python whose nvidia-pytriton serves (default: the tests' venv)")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--out", help="also write the JSON here")
    a = ap.parse_args()
    if a.python:
        python = a.python
    else:
        from triton_server import venv_python

        python = str(venv_python())
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, pkg, rel, shapes, budget in MODELS[:1] if a.smoke else MODELS:
            path = _site(pkg, rel)
            if path is None:
                rows.append({"model": label, "skipped": f"{pkg} not installed"})
                continue
            rows.append(one(label, path, shapes, budget, python, a.smoke, Path(tmp)))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    done = [r for r in rows if "skipped" not in r]
    doc = {"schema": "trtstudio.bench.triton-search/1", "smoke": a.smoke, "models": rows,
           "budgets": None if a.smoke else {
               "pick_within_5pct": all((r["pick_ratio"] or 0) >= 0.95 for r in done),
               "quick_time_le_30pct": all(r["time_ratio"] <= 0.30 for r in done),
               "zero_rejected": all(r["rejected"] == 0 and r["entries_loaded"] == 2 for r in done)}}
    text = json.dumps(doc, indent=2)
    print(text)
    if a.out:
        Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
