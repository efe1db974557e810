"""Budgets of the scenario runner, printed as JSON lines.

overhead: one model through the scenario runner (``run_contention`` with one model, timeline on, GPU
  sampler on where a GPU runs) against the plain profile runner (``profiling/runner.Runner``) on the
  same open backend object, in one process. Budget: the scenario's median latency <= the plain
  runner's + 2 %.
  Both runners get the same configuration: the backend object (one wrapper kind for both), the
  thread placement (a fresh worker thread measures while the main thread waits in
  ``join(timeout=0.2)``, as ``scenario._run_phase`` does), the warm-up (the plain runner's cold
  inference counts as one more warm-up for the scenario), a fixed number of measured inferences per
  trial, and the CPUs (``--cpus``: pinned with sched_setaffinity before anything starts a thread).
  Trials alternate in ABBA order (pair k runs plain-scenario when k is even, scenario-plain when odd,
  so a linear drift of clocks, caches or neighbours falls on both sides); each pair gives the ratio
  of the scenario's trial median to the plain trial median. The result is the median of the per-pair
  ratios with a bootstrap 95 % confidence interval (pairs resampled), as overhead in percent, and a
  verdict: ``met`` when the CI's upper bound is <= +2 %, ``not met`` when its lower bound is > +2 %,
  ``undecided`` otherwise. ``--control`` runs the plain runner on both sides (an A/A run: the
  ratio should straddle 1 and the verdict be ``met``; it shows what the method itself resolves).
  ``--main-thread`` also runs the plain runner on the main thread after each pair (as the CLI runs
  it) and reports the scenario's overhead against that too (``vs_main_thread``), for reference.
  Trial length: on the H200 the launch-bound sample (torch-cuda, batch 1) flips between ~1.9 and
  ~3.5 ms states that last about a second, in A/A runs too; 300-inference trials left 30 pairs
  undecided (CI about +-3 %), 50-inference trials with 100+ pairs resolve it (CI about +-1.2 %);
  150 pairs of 100 gave -1.8 % [-3.1, +1.5] there (CPU here: -0.25 % [-2.8, +1.5]). Hence the
  defaults (``--n 100 --pairs 150``); shorter still on such models (``--n 50 --pairs 300
  --seconds 120``). ``--seconds`` ends a run on time with the pairs measured so far.
probe:    the largest-block probe (cudaMalloc bisection, capped at 8 GiB) on a GPU, repeated; budget
  <= 50 ms; three uncapped probes for comparison. Also on a heap fragmented on purpose (every other
  1 GiB block of a row freed) to see what the probe finds.

    python benchmarks/scenario.py overhead [--backend ort|torch|torch-cuda] [--onnx sample|mlp|FILE]
        [--batch 1] [--threads 1] [--n 100] [--pairs 150] [--warmup 20] [--cpus auto|none|2,3]
        [--no-gpu-sampling] [--control] [--main-thread] [--out FILE] [--seconds S]
    python benchmarks/scenario.py summary FILE   # the result again from an --out file's pair lines
    python benchmarks/scenario.py probe [--repeats 20] [--device 0]

``--onnx``: 'sample' is the bundled mobilenetv2_035 (input batch x 3 x 224 x 224); 'mlp' the FP16 MLP
of scenario_gpu.py (8 x Linear 4096 + GELU, torch.export, input batch x 4096; needs torch), GPU-bound
at large batches (``--mlp`` is the same as ``--onnx mlp``; ``--trials`` the same as ``--pairs``); no
value: the MatMul model of benchmarks/profiling.py (ORT, 64 x 256).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SAMPLE = ROOT / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"
BUDGET_PERCENT = 2.0


def _emit(doc: dict[str, Any], out: str | None = None) -> None:
    line = json.dumps(doc, default=float)
    print(line, flush=True)
    if out:
        with open(out, "a") as fh:
            fh.write(line + "\n")


class _Borrowed:
    """The open backend lent to both runners: ``close()`` is left to the benchmark (the scenario
    closes what its opener gave it). ``infer_once`` is the backend's own bound method."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.name: str = inner.name
        self.notes: list[str] = []
        self.infer_once = inner.infer_once

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def close(self) -> None:
        pass


def pin_cpus(spec: str) -> list[int] | None:
    """Pin this thread (and every thread started after it) to CPUs: 'none', a list '2,3', or 'auto'
    (the last two CPUs this process may use when it may use 4 or more; else no pinning)."""
    allowed = sorted(os.sched_getaffinity(0))
    if spec == "none":
        return None
    cpus = allowed[-2:] if spec == "auto" and len(allowed) >= 4 else None
    if spec not in ("auto", "none"):
        cpus = [int(c) for c in spec.split(",") if c.strip()]
    if cpus:
        try:
            os.sched_setaffinity(0, cpus)
        except OSError:  # a sandbox that refuses affinity: run unpinned, and say so
            return None
    return cpus


def bootstrap_median_ci(values: np.ndarray, reps: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of the median of ``values`` (resampled with replacement)."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, values.size, (reps, values.size))
    meds = np.median(values[idx], axis=1)
    lo, hi = np.percentile(meds, [2.5, 97.5])
    return float(lo), float(hi)


def verdict(ci_percent: tuple[float, float], budget: float = BUDGET_PERCENT) -> str:
    """'met' (the CI lies at or under the budget), 'not met' (it lies above), else 'undecided'."""
    lo, hi = ci_percent
    if hi <= budget:
        return "met"
    if lo > budget:
        return "not met"
    return "undecided"


def _machine(backend: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"host": platform.node(), "python": platform.python_version(),
                           "cpu_count": os.cpu_count(), "affinity": sorted(os.sched_getaffinity(0))}
    try:
        with open("/proc/cpuinfo") as fh:
            out["cpu"] = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), None)
    except OSError:
        pass
    torch = sys.modules.get("torch")
    if torch is not None:
        out["torch"] = torch.__version__
        if getattr(backend, "cuda", False):
            out["gpu"] = torch.cuda.get_device_name(backend.device)
            out["cuda"] = torch.version.cuda
    ort = sys.modules.get("onnxruntime")
    if ort is not None:
        out["onnxruntime"] = ort.__version__
    return out


def _model(args: argparse.Namespace) -> tuple[str, dict[str, tuple[int, ...]]]:
    """The model file and its input shapes for ``--onnx``."""
    if args.onnx == "sample":
        return str(SAMPLE), {"input": (args.batch, 3, 224, 224)}
    tmp = tempfile.mkdtemp()
    if args.onnx == "mlp":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from scenario_gpu import make_models  # the FP16 MLP the GPU run uses

        return make_models(Path(tmp))["mlp"], {"x": (args.batch, 4096)}
    if args.onnx is None:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from profiling import make_model  # the profiling benchmark's MatMul model

        path = os.path.join(tmp, "m.onnx")
        make_model(path, 256)
        return path, {}
    return args.onnx, {}


def _waited(work: Callable[[], Any]) -> Any:
    """Run ``work`` on a fresh thread; wait the way the scenario waits for its workers."""
    box: list[Any] = []
    t = threading.Thread(target=lambda: box.append(work()), name="trtstudio-bench-plain", daemon=True)
    t.start()
    while t.is_alive():
        t.join(timeout=0.2)
    return box[0]


def overhead(args: argparse.Namespace) -> dict[str, Any]:
    """The A/B comparison described in the module docstring; one JSON line per pair, then the result."""
    cpus = pin_cpus(args.cpus)  # before any library starts a thread
    from trtstudio.backends.base import open_backend
    from trtstudio.profiling import scenario as sc
    from trtstudio.profiling.runner import RunConfig, Runner

    if getattr(args, "mlp", False):
        args.onnx = "mlp"
    model, shapes = _model(args)
    options: dict[str, Any] = {"threads": args.threads} if args.backend == "ort" and args.threads else {}
    backend = open_backend(args.backend, model, **options)
    backend.prepare_inputs(shapes)
    borrowed = _Borrowed(backend)
    sampling = args.gpu_sampling and bool(getattr(backend, "cuda", False))

    def plain() -> float:
        r = _waited(lambda: Runner(borrowed, RunConfig(warmup=args.warmup, iterations=args.n)).run())  # type: ignore[arg-type]
        if r.error is not None:
            raise r.error
        assert r.count == args.n
        return float(r.latency()["median"])

    def scenario() -> float:
        # threads: the runner measured here is the one that shares this process with the plain runner
        # (benchmarks/scenario_isolation.py measures the process runner against it)
        cfg = sc.ContentionConfig(iterations=args.n, warmup=args.warmup + 1, alone=False, gpu_sampling=sampling,
                                  isolation="thread")
        s = sc.run_contention([sc.ModelSpec(model, args.backend)], cfg, opener=lambda spec: borrowed)  # type: ignore[arg-type,return-value]
        if hasattr(backend, "set_time_origin"):  # the plain runner's trials must not pay for the timeline
            backend.set_time_origin(None)
        if s.failure is not None:
            raise RuntimeError(s.failure.one_line())
        together = s.models[0]["together"]
        assert together["count"] == args.n
        return float(together["median"])

    def plain_main() -> float:  # the plain runner on this (the main) thread, as the CLI runs it
        r = Runner(borrowed, RunConfig(warmup=args.warmup, iterations=args.n)).run()  # type: ignore[arg-type]
        if r.error is not None:
            raise r.error
        return float(r.latency()["median"])

    main_thread = getattr(args, "main_thread", False)
    b_side = plain if args.control else scenario
    a_ms, b_ms, m_ms = [], [], []
    t0 = time.perf_counter()
    for k in range(args.pairs):
        if args.seconds is not None and time.perf_counter() - t0 >= args.seconds:
            break  # the time budget is spent: summarise the pairs measured
        if k % 2 == 0:
            a, b = plain(), b_side()
        else:
            b, a = b_side(), plain()
        a_ms.append(a)
        b_ms.append(b)
        extra: dict[str, float] = {}
        if main_thread:
            m_ms.append(plain_main())
            extra = {"plain_main_median_ms": m_ms[-1]}
        _emit({"bench": "scenario_overhead_pair", "pair": k, "order": "AB" if k % 2 == 0 else "BA",
               "plain_median_ms": a, "scenario_median_ms": b, "ratio": b / a, **extra}, args.out)
    wall = time.perf_counter() - t0
    machine = _machine(backend)
    backend.close()
    return {
        "bench": "scenario_overhead", "control_aa": bool(args.control), "backend": args.backend,
        "model": Path(model).name, "shapes": {k: list(v) for k, v in shapes.items()} or "model's own",
        "threads": options.get("threads"), "n_per_trial": args.n, "warmup": args.warmup,
        "order": "ABBA (pair k: plain first when k is even)", "cpus_pinned": cpus,
        "gpu_sampling": sampling and not args.control, "timeline": not args.control, "machine": machine,
        **summarise(a_ms, b_ms), "pairs_asked": args.pairs, "trials_wall_s": wall,
        **({"vs_main_thread": summarise(m_ms, b_ms)} if main_thread and m_ms else {}),
    }


def summarise(plain_ms: list[float], scenario_ms: list[float]) -> dict[str, Any]:
    """The figures of paired trial medians: median of the per-pair ratios, its bootstrap CI, verdict."""
    pa, pb = np.asarray(plain_ms, np.float64), np.asarray(scenario_ms, np.float64)
    ratios = pb / pa
    med = float(np.median(ratios))
    lo, hi = bootstrap_median_ci(ratios)
    ci_pct = ((lo - 1.0) * 100.0, (hi - 1.0) * 100.0)
    return {
        "pairs": int(ratios.size), "plain_median_ms": float(np.median(pa)), "scenario_median_ms": float(np.median(pb)),
        "plain_trials_ms": {"min": float(pa.min()), "max": float(pa.max())},
        "scenario_trials_ms": {"min": float(pb.min()), "max": float(pb.max())},
        "ratio_median": med, "ratio_ci95": [lo, hi], "ratio_spread": [float(ratios.min()), float(ratios.max())],
        "overhead_percent": (med - 1.0) * 100.0, "overhead_ci95_percent": list(ci_pct),
        "budget_percent": BUDGET_PERCENT, "verdict": verdict(ci_pct),
    }


def summary(args: argparse.Namespace) -> dict[str, Any]:
    """``summarise`` over the pair lines of an ``overhead --out`` file (a run cut short included)."""
    docs = [json.loads(line) for line in Path(args.file).read_text().splitlines() if line.strip()]
    pairs = [d for d in docs if d.get("bench") == "scenario_overhead_pair"]
    if not pairs:
        raise SystemExit(f"error: {args.file}: no scenario_overhead_pair lines")
    return {"bench": "scenario_overhead_summary", "file": Path(args.file).name,
            **summarise([d["plain_median_ms"] for d in pairs], [d["scenario_median_ms"] for d in pairs])}


def probe(args: argparse.Namespace) -> dict[str, Any]:
    from trtstudio.profiling.scenario_memory import cuda_mem_info, cuda_try_alloc, largest_block

    try_alloc = cuda_try_alloc(args.device)
    info = cuda_mem_info(args.device)
    if try_alloc is None or info is None:
        return {"bench": "largest_block_probe", "skipped": "no CUDA device with cuda-python or pycuda here"}
    from trtstudio.profiling.scenario_memory import DEFAULT_CAP

    times, results = [], []
    for _ in range(args.repeats):
        free, _total = cuda_mem_info(args.device) or info
        r = largest_block(try_alloc, free, cap=DEFAULT_CAP)
        times.append(r.elapsed_ms)
        results.append(r)
    uncapped = [largest_block(try_alloc, (cuda_mem_info(args.device) or info)[0], budget_ms=5000) for _ in range(3)]
    out: dict[str, Any] = {
        "bench": "largest_block_probe", "device": args.device, "free_bytes": info[0], "total_bytes": info[1],
        "cap_bytes": DEFAULT_CAP, "median_ms": float(np.median(times)), "max_ms": float(np.max(times)),
        "steps_median": float(np.median([r.steps for r in results])), "largest_bytes": results[-1].largest_bytes,
        "exact": all(r.exact for r in results), "budget_ms": 50.0, "within_budget": float(np.max(times)) <= 50.0,
        "uncapped": [r.to_dict() for r in uncapped],
    }
    # fragment on purpose: a row of 1 GiB blocks with every other one freed
    from cuda.bindings import runtime as rt

    blocks = []
    free0 = info[0]
    n = min(64, int(free0 // (1 << 30)) - 4)
    for _ in range(n):
        err, ptr = rt.cudaMalloc(1 << 30)
        if err != rt.cudaError_t.cudaSuccess:
            rt.cudaGetLastError()
            break
        blocks.append(ptr)
    for ptr in blocks[0::2]:
        rt.cudaFree(ptr)
    free1, _ = cuda_mem_info(args.device) or info
    t = []
    for _ in range(5):
        r = largest_block(try_alloc, free1, cap=DEFAULT_CAP)
        t.append(r.elapsed_ms)
    whole = largest_block(try_alloc, free1, budget_ms=5000)
    for ptr in blocks[1::2]:
        rt.cudaFree(ptr)
    out["fragmented"] = {"blocks_of_1gib": len(blocks), "held_bytes": len(blocks[1::2]) << 30, "free_bytes": free1,
                         "largest_bytes": r.largest_bytes, "largest_over_free": r.largest_bytes / free1,
                         "median_ms": float(np.median(t)), "steps": r.steps, "uncapped": whole.to_dict()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    o = sub.add_parser("overhead")
    o.add_argument("--backend", default="ort")
    o.add_argument("--onnx", help="'sample', 'mlp' or an .onnx/.pt2 file (default: a MatMul model)")
    o.add_argument("--mlp", action="store_true", help="the same as --onnx mlp")
    o.add_argument("--batch", type=int, default=1)
    o.add_argument("--threads", type=int, default=1, help="ORT intra-op threads")
    # Short trials, many of them: launch-bound models switch between speed states every second or
    # so (trial medians of ~1.9 or ~3.5 ms on the H200); short adjacent trials fall in the same state.
    o.add_argument("--n", type=int, default=100, help="measured inferences per trial")
    o.add_argument("--pairs", "--trials", dest="pairs", type=int, default=150, help="ABBA pairs of trials")
    o.add_argument("--warmup", type=int, default=20)
    o.add_argument("--cpus", default="auto", help="auto, none, or a list such as 2,3")
    o.add_argument("--no-gpu-sampling", dest="gpu_sampling", action="store_false",
                   help="the scenario without its GPU sampler thread")
    o.add_argument("--control", action="store_true", help="A/A: the plain runner on both sides")
    o.add_argument("--main-thread", action="store_true",
                   help="also the plain runner on the main thread after each pair (reported as vs_main_thread)")
    o.add_argument("--out", help="also append the JSON lines to this file")
    o.add_argument("--seconds", type=float, help="start no pair after this many seconds of trials")
    m = sub.add_parser("summary")
    m.add_argument("file", help="an overhead --out file: the result from its pair lines")
    p = sub.add_parser("probe")
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--device", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    doc = {"overhead": overhead, "probe": probe, "summary": summary}[args.what](args)
    doc["wall_s"] = time.perf_counter() - t0
    _emit(doc, getattr(args, "out", None))


if __name__ == "__main__":
    main()
