"""Precision sweep: build FP32 / FP16 / BF16 / INT8 variants, profile and validate each, one table.

Each variant is written to ``out_dir``, profiled with the onnxruntime backend and the profiling
runner in interleaved rounds (median / p99 latency, throughput, resident memory the session added;
rounds alternate the variants so a machine that gets busier mid-sweep does not favour one), validated against the
FP32 reference (:mod:`trtstudio.precision.validate`), and, when ``tensorrt_rtx`` is installed, built
ahead of time with :func:`trtstudio.backends.build.build_engine` (SM 86 by default) to record the
engine size and the precisions of its layers: the TensorRT view; the latency here is ORT's.

The recommendation is what the data supports: the fastest variant that passes validation, or a
plain statement that none beats FP32 on this backend (onnxruntime's CPU provider has few FP16
kernels and casts around the rest, so FP16 is often slower there than FP32).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.errors import BackendError, InputError
from trtstudio.precision.state import Cancelled, PrecisionState
from trtstudio.profiling.runner import RunState

SCHEMA = "trtstudio.precision/1"
VARIANTS = ("fp32", "fp16", "bf16", "int8", "fp8")
NOISY_SPREAD = 1.25  # round medians of one variant further apart than this: say the figures are noisy
FASTER_BY = 0.95  # a variant "beats" FP32 when its median latency is below 95% of FP32's (noise margin)


@dataclass
class SweepOptions:
    """What to sweep. ``calib``/``val``: data sources (see :mod:`trtstudio.precision.data`); without
    ``val`` the calibration samples validate, without either random inputs do (a note says so)."""

    variants: tuple[str, ...] = ("fp32", "fp16", "bf16", "int8")
    calib: str | None = None
    val: str | None = None
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    method: str = "minmax"
    block_ops: tuple[str, ...] = ()
    block_nodes: tuple[str, ...] = ()
    fp32_reductions: bool = False
    out_dir: str | None = None
    iterations: int = 60  # per variant, split over ``rounds`` interleaved rounds
    rounds: int = 3
    warmup: int = 3
    threads: int | None = None
    calib_limit: int = 64
    val_limit: int = 32
    min_calib: int = 1
    build_engines: bool | None = None  # None: when tensorrt_rtx is installed
    targets: tuple[str, ...] = ("sm86",)
    localize: bool = True
    localize_samples: int = 2
    thresholds: dict[str, dict[str, float]] = field(default_factory=dict)
    int8_ops: tuple[str, ...] = ()  # INT8/FP8: op types quantized besides Conv/ConvTranspose/MatMul/Gemm
    int8_small_convs: bool = False  # INT8/FP8: quantize Convs TensorRT has no INT8 kernel for too
    int8_attention: bool = False  # INT8/FP8: quantize the attention core's MatMuls too


@dataclass
class VariantResult:
    """One row of the sweep table."""

    name: str
    model_path: str | None = None
    model_bytes: int | None = None
    latency_ms: dict[str, float] | None = None
    throughput: float | None = None  # inferences per second
    memory_bytes: int | None = None  # resident memory the session added
    accuracy: dict[str, Any] = field(default_factory=dict)
    passed: bool | None = None
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    engine_bytes: int | None = None
    engine_path: str | None = None
    layer_precisions: dict[str, int] = field(default_factory=dict)
    node_errors: dict[str, float] = field(default_factory=dict)
    first_over: dict[str, Any] | None = None
    # every compared tensor's error in topological order (validate.TensorError fields) and the threshold
    tensors: list[dict[str, Any]] = field(default_factory=list)
    localize_threshold: float | None = None
    error: str | None = None
    seconds: float = 0.0
    quantization: dict[str, Any] | None = None  # INT8/FP8: how the Q/DQ model was made (recipe, cache, counts)
    speedup: dict[str, Any] | None = None  # median speed-up over FP32 with its 95 % interval (measure.ratio)
    speedup_verdict: dict[str, Any] | None = None  # faster / slower / no significant difference (measure.Verdict)

    def to_json(self) -> dict[str, Any]:
        """A ``variants`` entry of the ``trtstudio.precision/1`` document."""
        doc = {
            "name": self.name, "model_path": self.model_path, "model_bytes": self.model_bytes,
            "accuracy": self.accuracy, "latency_ms": self.latency_ms, "throughput": self.throughput,
            "memory_bytes": self.memory_bytes, "passed": self.passed, "reasons": self.reasons,
            "notes": self.notes, "error": self.error, "seconds": self.seconds,
            "first_over": self.first_over, "node_errors": self.node_errors, "tensors": self.tensors,
            "localize_threshold": self.localize_threshold,
            "speedup": self.speedup, "speedup_verdict": self.speedup_verdict,
        }
        if self.quantization is not None:
            doc["quantization"] = self.quantization
        if self.engine_bytes is not None or self.layer_precisions:
            doc.update(engine_bytes=self.engine_bytes, engine_path=self.engine_path,
                       layer_precisions=self.layer_precisions)
        return doc


@dataclass
class SweepResult:
    """The whole sweep: rows, the recommendation and notes."""

    model: str
    variants: list[VariantResult]
    recommendation: str
    recommended: str | None
    notes: list[str] = field(default_factory=list)
    backend: str = "ort (CPUExecutionProvider)"
    cancelled: bool = False
    versions: dict[str, str | None] = field(default_factory=dict)  # package -> version that computed figures
    computed_by: dict[str, list[str]] = field(default_factory=dict)  # figure -> the packages of ``versions``

    def to_json(self) -> dict[str, Any]:
        """The ``trtstudio.precision/1`` document."""
        from trtstudio.report.story import sweep_story

        doc = {"schema": SCHEMA, "model": self.model, "backend": self.backend,
               "variants": [v.to_json() for v in self.variants], "recommendation": self.recommendation,
               "recommended": self.recommended, "notes": self.notes, "cancelled": self.cancelled,
               "versions": self.versions, "computed_by": self.computed_by}
        doc["story"] = sweep_story(doc)  # what changed, in sentences, before the table
        return doc

    def variant(self, name: str) -> VariantResult | None:
        """The row named ``name``."""
        return next((v for v in self.variants if v.name == name), None)


class _BridgeState(RunState):
    """A profiling RunState that also stops when the sweep's state asks."""

    def __init__(self, outer: PrecisionState) -> None:
        super().__init__()
        self._outer = outer

    def is_stop_requested(self) -> bool:
        return super().is_stop_requested() or self._outer.is_stop_requested()


def _rss() -> int | None:
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except Exception:  # noqa: BLE001
        return None


def parse_variants(text: str | None) -> tuple[str, ...]:
    """``fp16,int8`` -> ("fp32", "fp16", "int8"): FP32 always leads (it is the reference)."""
    items = [v.strip().lower() for v in (text or "").split(",") if v.strip()]
    bad = [v for v in items if v not in VARIANTS]
    if bad:
        raise InputError("--variants", f"unknown precision(s) {', '.join(bad)}; choose from {', '.join(VARIANTS)}")
    return tuple(dict.fromkeys(["fp32", *items]))


def profile_interleaved(paths: dict[str, str], sample: dict[str, np.ndarray], opts: SweepOptions,
                        state: PrecisionState) -> dict[str, dict[str, Any]]:
    """Latency of every variant on the ORT backend, measured in ``opts.rounds`` interleaved rounds
    (FP32, FP16, INT8, FP32, FP16, ...) so that a machine that gets busier or quieter during the sweep
    shifts all variants alike; ``round_spread`` is the max/min ratio of a variant's round medians."""
    from trtstudio.backends.base import open_backend
    from trtstudio.measure.stats import latency_stats
    from trtstudio.profiling.runner import RunConfig, Runner

    backends: dict[str, Any] = {}
    memory: dict[str, int | None] = {}
    values: dict[str, list[np.ndarray]] = {n: [] for n in paths}
    active: dict[str, float] = dict.fromkeys(paths, 0.0)
    errors: dict[str, str] = {}
    rounds = max(1, opts.rounds)
    per_round = max(1, opts.iterations // rounds)
    batch = int(next(iter(sample.values())).shape[0]) if sample else 1
    try:
        for name, path in paths.items():
            before = _rss()
            backend = open_backend("ort", path, threads=opts.threads)
            after = _rss()
            backend.prepare_inputs({}, sample)
            backends[name] = backend
            memory[name] = None if before is None or after is None else max(0, after - before)
        for r in range(rounds):
            for k, name in enumerate(paths):
                state.check()
                if name in errors:
                    continue
                state.report("profile", f"{name}: profiling round {r + 1}/{rounds}", r * len(paths) + k,
                             rounds * len(paths))
                cfg = RunConfig(warmup=opts.warmup, iterations=per_round, batch=max(1, batch))
                res = Runner(backends[name], cfg, state=_BridgeState(state)).run()
                if res.error is not None:
                    errors[name] = res.error_text or "profiling failed"
                    continue
                values[name].append(res.exact.values())
                active[name] += res.active_s
    finally:
        for backend in backends.values():
            backend.close()
    state.check()
    out: dict[str, dict[str, Any]] = {}
    base = np.concatenate(values["fp32"]) if values.get("fp32") and "fp32" not in errors else None
    for name in paths:
        if name in errors or not values[name]:
            out[name] = {"error": errors.get(name, "not profiled")}
            continue
        allv = np.concatenate(values[name])
        stats = latency_stats(allv)
        medians = [float(np.median(v)) for v in values[name] if v.size]
        out[name] = {
            "latency_ms": {k: float(stats[k]) for k in ("median", "p99", "mean", "min") if k in stats},
            "throughput": float(allv.size / active[name]) if active[name] > 0 else None,
            "memory_bytes": memory.get(name),
            "round_spread": max(medians) / min(medians) if medians and min(medians) > 0 else None,
        }
        if base is not None and name != "fp32":
            from trtstudio.report.compare import speedup_verdict

            verdict, sp = speedup_verdict("fp32", base, name, allv, [latency_stats(base).get("cov"), stats.get("cov")])
            out[name]["speedup"], out[name]["speedup_verdict"] = sp.to_json(), verdict.to_json()
    return out


def _build_engine(path: str, out: Path, opts: SweepOptions) -> tuple[int | None, str | None, dict[str, int], str | None]:
    from trtstudio.backends.build import BuildOptions, build_engine
    from trtstudio.engine.readers import rtx_log

    res = build_engine(path, out, BuildOptions(backend="rtx", targets=list(opts.targets)))
    if not res.ok:
        return None, None, {}, res.error
    info = rtx_log.read(out.with_suffix(".build.log"), res.log_text())
    counts = Counter(layer.precision or "?" for layer in info.layers)
    return res.engine_bytes, res.engine_path, dict(counts), None


def _rtx_installed() -> bool:
    try:
        import importlib.util

        return importlib.util.find_spec("tensorrt_rtx") is not None
    except (ImportError, ValueError):
        return False


def make_variant(model: str, name: str, out_dir: Path, calib: list[dict[str, np.ndarray]] | None,
                 opts: SweepOptions, state: PrecisionState) -> tuple[str, dict[str, str], list[str], dict[str, Any] | None]:
    """Write one variant; returns its path, its tensor name map, notes and (INT8/FP8) how it was quantized."""
    from trtstudio.precision.convert import convert_float, save_model
    from trtstudio.precision.quantize import QuantizeOptions, quantize_model

    stem = Path(model).stem
    if name == "fp32":
        return model, {}, [], None
    if name in ("fp16", "bf16"):
        conv = convert_float(model, name, block_ops=opts.block_ops, block_nodes=opts.block_nodes,
                             fp32_reductions=opts.fp32_reductions)
        path = save_model(conv.model, out_dir / f"{stem}.{name}.onnx")
        return str(path), conv.name_map, conv.notes, None
    target = opts.targets[0] if opts.targets else None
    q = quantize_model(model, out_dir / f"{stem}.{name}.onnx", calib,
                       QuantizeOptions(precision=name, method=opts.method, target=target,
                                       cache_path=str(out_dir / f"{stem}.{name}.{opts.method}.calib.json"),
                                       exclude_nodes=tuple(opts.block_nodes), extra_ops=tuple(opts.int8_ops),
                                       keep_small_convs_float=not opts.int8_small_convs,
                                       keep_attention_float=not opts.int8_attention), state=state)
    notes = list(q.notes)
    notes.append(f"{q.qdq_pairs} Q/DQ pairs, {q.method} calibration on {q.samples} sample(s)"
                 + (" (cache reused)" if q.cache_reused else ""))
    return q.model_path, q.name_map, notes, {k: v for k, v in q.to_json().items() if k not in ("notes", "model_path")}


@dataclass
class _Inputs:
    """What every variant of one sweep shares: input specs, data, where files go, notes so far."""

    specs: list[dict[str, Any]]
    out_dir: Path
    calib: list[dict[str, np.ndarray]] | None
    val: list[dict[str, np.ndarray]]
    notes: list[str]
    build: bool
    reference: dict[str, np.ndarray] = field(default_factory=dict)


def _inputs(model: str, opts: SweepOptions, variants: tuple[str, ...]) -> _Inputs:
    """Input specs (with the shape plan), the calibration and validation samples, the output folder."""
    from trtstudio.precision.data import load_samples, model_inputs, planned_specs, random_samples

    specs, plan_warnings = planned_specs(model, model_inputs(model), opts.shapes)
    out_dir = Path(opts.out_dir) if opts.out_dir else Path(model).with_suffix("").parent / f"{Path(model).stem}.precision"
    out_dir.mkdir(parents=True, exist_ok=True)
    notes: list[str] = list(plan_warnings)
    calib = None
    if opts.calib:
        calib = load_samples(opts.calib, specs, min_samples=opts.min_calib, limit=opts.calib_limit)
    elif any(v in ("int8", "fp8") for v in variants):
        raise InputError("--calib", "INT8/FP8 need calibration data (a folder of .npy/.npz, images or samples.py) "
                                    "for input " + ", ".join(f"'{s['name']}' {s['shape']}" for s in specs))
    if opts.val:
        val = load_samples(opts.val, specs, limit=opts.val_limit, purpose="validation")
    elif calib:
        val = calib[: opts.val_limit]
        notes.append("no validation set: accuracy measured on the calibration samples (optimistic for INT8)")
    else:
        val = random_samples(specs, 8)
        notes.append("no validation data: accuracy measured on random inputs in [-1, 1) (a rough check only)")
    build = opts.build_engines if opts.build_engines is not None else _rtx_installed()
    return _Inputs(specs, out_dir, calib, val, notes, build)


def _variant_steps(model: str, row: VariantResult, step: int, total: int, ins: _Inputs, opts: SweepOptions,
                   state: PrecisionState, to_profile: dict[str, str]) -> None:
    """Make, validate, localize and (optionally) build one variant into ``row``; a variant whose
    latency onnxruntime CPU can measure goes into ``to_profile`` once validated."""
    from trtstudio.precision.validate import localize, validate

    name = row.name
    state.report("build", f"{name}: making the variant", step, total)
    path, name_map, vnotes, row.quantization = make_variant(model, name, ins.out_dir, ins.calib, opts, state)
    row.model_path, row.notes = path, vnotes
    row.model_bytes = Path(path).stat().st_size
    state.check()
    state.report("validate", f"{name}: validating on {len(ins.val)} sample(s)", step, total)
    v = validate(model, path, ins.val, ins.specs, name, name=name, reference_outputs=ins.reference,
                 thresholds=opts.thresholds.get(name))
    row.accuracy, row.passed, row.reasons = v.accuracy(), v.passed, v.reasons
    row.notes.extend(v.notes)
    if opts.localize and name != "fp32":
        loc = localize(model, path, ins.val[: opts.localize_samples], ins.specs, name_map, precision=name)
        row.node_errors = loc.node_errors
        row.first_over = None if loc.first_over is None else dict(loc.first_over.__dict__)
        row.tensors = [dict(t.__dict__) for t in loc.tensors]
        row.localize_threshold = loc.threshold
    state.check()
    if any("emulated" in n or "unfused" in n for n in v.notes):
        row.notes.append(f"{name} latency not measured: onnxruntime CPU has no native {name} kernels")
    else:
        to_profile[name] = path
    state.check()
    if ins.build:
        state.report("engine", f"{name}: building a TensorRT-RTX engine ({', '.join(opts.targets)})", step, total)
        size, epath, precisions, err = _build_engine(path, ins.out_dir / f"{Path(model).stem}.{name}.engine", opts)
        row.engine_bytes, row.engine_path, row.layer_precisions = size, epath, precisions
        if err:
            row.notes.append(f"TensorRT-RTX build failed: {err}")


def _run_variant(model: str, name: str, step: int, total: int, ins: _Inputs, opts: SweepOptions,
                 state: PrecisionState, to_profile: dict[str, str]) -> VariantResult:
    """One row; a failure is the row's ``error`` (``cancelled`` on a stop), never an exception."""
    row = VariantResult(name)
    t0 = time.perf_counter()
    try:
        _variant_steps(model, row, step, total, ins, opts, state, to_profile)
    except Cancelled:
        row.error = "cancelled"
    except (InputError, BackendError) as exc:
        row.error = str(exc)
    except Exception as exc:  # noqa: BLE001 - one variant's failure must not end the sweep
        row.error = f"{type(exc).__name__}: {exc}"
    row.seconds = time.perf_counter() - t0
    return row


def _add_latency(rows: list[VariantResult], to_profile: dict[str, str], sample: dict[str, np.ndarray],
                 opts: SweepOptions, state: PrecisionState) -> bool:
    """Profile ``to_profile`` interleaved and put the figures into ``rows``; True when cancelled."""
    try:
        prof = profile_interleaved(to_profile, sample, opts, state)
    except Cancelled:
        return True
    for row in rows:
        p = prof.get(row.name)
        if p is None:
            continue
        if "error" in p:
            row.error = row.error or f"profiling: {p['error']}"
            continue
        row.latency_ms, row.throughput, row.memory_bytes = p["latency_ms"], p["throughput"], p["memory_bytes"]
        row.speedup, row.speedup_verdict = p.get("speedup"), p.get("speedup_verdict")
        spread = p.get("round_spread")
        if spread is not None and spread > NOISY_SPREAD:
            row.notes.append(f"latency noisy: round medians differ by {spread:.2f}x (a busy machine?)")
    return False


def package_versions(engines: bool) -> tuple[dict[str, str | None], dict[str, list[str]]]:
    """The versions of the packages that computed a sweep's figures, and which figure each computed."""
    import importlib.metadata
    import sys

    def version(module: str, *dists: str) -> str | None:
        loaded = sys.modules.get(module)
        if loaded is not None and getattr(loaded, "__version__", None):
            return str(loaded.__version__)
        for dist in dists:
            with contextlib.suppress(importlib.metadata.PackageNotFoundError):
                return importlib.metadata.version(dist)
        return None

    versions = {"onnxruntime": version("onnxruntime", "onnxruntime", "onnxruntime-gpu"),
                "numpy": version("numpy", "numpy"), "onnx": version("onnx", "onnx")}
    computed_by = {"accuracy": ["onnxruntime", "numpy"], "latency": ["onnxruntime", "numpy"],
                   "variants": ["onnx", "onnxruntime"], "calibration": ["onnxruntime", "numpy"]}
    if engines:
        versions["tensorrt_rtx"] = version("tensorrt_rtx", "tensorrt-rtx-cu13", "tensorrt-rtx-cu12", "tensorrt-rtx")
        computed_by["engine"] = ["tensorrt_rtx"]
    return versions, computed_by


def run_sweep(model: str | os.PathLike[str], options: SweepOptions | None = None,
              state: PrecisionState | None = None) -> SweepResult:
    """Build, profile and validate every variant of ``options.variants``; see the module docstring.
    A variant that fails to build or run gets ``error`` set and the sweep goes on; a stop request
    ends the sweep after the current step with ``cancelled`` set."""
    from trtstudio.precision.validate import open_session, run_outputs

    opts = options or SweepOptions()
    state = state or PrecisionState()
    model = os.fspath(model)
    variants = parse_variants(",".join(opts.variants))
    ins = _inputs(model, opts, variants)
    state.report("reference", "running the FP32 reference", 0, len(variants))
    ins.reference = run_outputs(open_session(model), ins.val, ins.specs)
    rows: list[VariantResult] = []
    to_profile: dict[str, str] = {}
    cancelled = False
    for i, name in enumerate(variants):
        if state.is_stop_requested():
            cancelled = True
            break
        row = _run_variant(model, name, i, len(variants), ins, opts, state, to_profile)
        rows.append(row)
        if row.error == "cancelled":
            cancelled = True
            break
    if to_profile and not cancelled:
        cancelled = _add_latency(rows, to_profile, ins.val[0], opts, state)
    rec, recommended = recommend(rows)
    state.report("finished", rec, len(variants), len(variants))
    versions, computed_by = package_versions(any(r.engine_bytes or r.layer_precisions for r in rows) or ins.build)
    return SweepResult(model, rows, rec, recommended, ins.notes, cancelled=cancelled, versions=versions,
                       computed_by=computed_by)


def recommend(rows: list[VariantResult]) -> tuple[str, str | None]:
    """The fastest variant that passes and beats FP32, or why there is none."""
    ref = next((r for r in rows if r.name == "fp32"), None)
    ref_ms = ref.latency_ms.get("median") if ref and ref.latency_ms else None
    timed = [r for r in rows if r.name != "fp32" and r.passed and r.latency_ms and r.error is None]
    failed = [r.name for r in rows if r.name != "fp32" and r.passed is False]
    engines = {r.name: r.engine_bytes for r in rows if r.engine_bytes}
    engine_text = ""
    if engines and ref and ref.engine_bytes:
        smaller = [f"{n} {b / ref.engine_bytes:.0%}" for n, b in engines.items() if n != "fp32"]
        if smaller:
            engine_text = f" TensorRT-RTX engine size vs FP32: {', '.join(smaller)}."
    if ref_ms is None:
        return "no FP32 latency to compare with" + engine_text, None
    if not timed:
        why = f" ({', '.join(failed)} failed validation)" if failed else ""
        return f"keep FP32: no reduced-precision variant both passed and ran on this backend{why}." + engine_text, "fp32"
    noisy = [r.name for r in rows if any(n.startswith("latency noisy") for n in r.notes)]
    if noisy:
        engine_text += f" Latency of {', '.join(noisy)} was noisy between rounds: rerun on a quiet machine to confirm."
    best = min(timed, key=lambda r: r.latency_ms["median"] if r.latency_ms else float("inf"))
    best_ms = best.latency_ms["median"] if best.latency_ms else float("inf")
    verdict = (best.speedup_verdict or {}).get("verdict")
    if best_ms < FASTER_BY * ref_ms and verdict in ("no significant difference", "slower"):
        return (f"keep FP32 on this backend: {best.name} ran {best_ms:.3f} ms vs {ref_ms:.3f} ms, but "
                f"{(best.speedup_verdict or {}).get('text', 'the difference is within the noise')}." + engine_text), "fp32"
    if best_ms < FASTER_BY * ref_ms:
        return (f"{best.name}: passes validation and runs in {best_ms:.3f} ms vs {ref_ms:.3f} ms for FP32 "
                f"({ref_ms / best_ms:.2f}x) on onnxruntime CPU." + engine_text), best.name
    slow = ", ".join(f"{r.name} {r.latency_ms['median']:.3f} ms" for r in timed if r.latency_ms)
    return (f"keep FP32 on this backend: no passing variant beats FP32 ({ref_ms:.3f} ms; {slow}). "
            "onnxruntime's CPU provider has few FP16/BF16 kernels and casts around the rest, and INT8 gains "
            "need VNNI/AMX; the TensorRT engine is where reduced precision pays: profile it on the GPU."
            + engine_text), "fp32"
