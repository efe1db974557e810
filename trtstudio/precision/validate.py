"""Accuracy of a precision variant against the FP32 reference, both run with onnxruntime (CPU).

Per output: max / mean absolute error, relative error (L2 norm of the difference over the L2 norm of
the reference), cosine similarity (per sample, mean and min), top-1 / top-5 agreement for classifier
outputs (2-D ``[N, C>1]``), NaN / Inf counts; pass or fail against thresholds per precision
(:data:`THRESHOLDS`). :func:`localize` marks intermediate tensors as extra outputs in both models,
matched through the variant's name map, and reports the error of every tensor in topological order:
where it first exceeds a threshold, where it jumps most, and a node -> relative error dict for a heat
overlay on the graph.

A BF16 model that onnxruntime cannot run (its CPU provider has no BF16 Conv) is run through
:func:`trtstudio.precision.convert.emulate_in_fp32` instead, with a note saying so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trtstudio.backends.base import require_module
from trtstudio.errors import BackendError
from trtstudio.precision.data import batches

# Defaults that suit each precision: FP16 keeps ~3 decimal digits, BF16 ~2, INT8 loses more.
THRESHOLDS: dict[str, dict[str, float]] = {
    "fp32": {"cosine": 0.99999, "top1": 0.999},
    "fp16": {"cosine": 0.999, "top1": 0.97},
    "bf16": {"cosine": 0.995, "top1": 0.95},
    "int8": {"cosine": 0.98, "top1": 0.9},
    "fp8": {"cosine": 0.98, "top1": 0.9},
}
# Relative error above which localisation calls a tensor "off".
LOCALIZE_THRESHOLDS = {"fp16": 0.01, "bf16": 0.03, "int8": 0.1, "fp8": 0.1, "fp32": 1e-4}
EPS = 1e-12
FP8_TYPES = {17, 18, 19, 20}  # FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ


@dataclass
class OutputMetrics:
    """Error of one output over all validation samples."""

    name: str
    max_abs: float
    mean_abs: float
    rel: float
    cosine: float
    cosine_min: float
    top1: float | None = None
    top5: float | None = None
    nan: int = 0
    inf: int = 0
    ref_nonfinite: int = 0

    def to_json(self) -> dict[str, Any]:
        """JSON-ready copy."""
        return dict(self.__dict__)


@dataclass
class ValidationResult:
    """Accuracy of one variant; ``passed`` False with ``reasons`` when a threshold is missed."""

    variant: str
    precision: str
    outputs: list[OutputMetrics]
    thresholds: dict[str, float]
    samples: int
    passed: bool = True
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def accuracy(self) -> dict[str, float | None]:
        """The worst figure over outputs: {cosine, max_abs, mean_abs, rel, top1, top5, nan, inf}."""
        o = self.outputs
        tops = [m.top1 for m in o if m.top1 is not None]
        top5 = [m.top5 for m in o if m.top5 is not None]
        return {
            "cosine": min((m.cosine for m in o), default=None),
            "max_abs": max((m.max_abs for m in o), default=None),
            "mean_abs": max((m.mean_abs for m in o), default=None),
            "rel": max((m.rel for m in o), default=None),
            "top1": min(tops) if tops else None,
            "top5": min(top5) if top5 else None,
            "nan": sum(m.nan for m in o),
            "inf": sum(m.inf for m in o),
        }

    def to_json(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {"variant": self.variant, "precision": self.precision, "samples": self.samples,
                "passed": self.passed, "reasons": list(self.reasons), "thresholds": dict(self.thresholds),
                "accuracy": self.accuracy(), "outputs": [m.to_json() for m in self.outputs],
                "notes": list(self.notes)}


def _ort() -> Any:
    return require_module("onnxruntime", "ort", "pip install onnxruntime")


def _has_bf16(model: Any) -> bool:
    g = model.graph
    return any(i.data_type == 16 for i in g.initializer) or any(
        vi.type.tensor_type.elem_type == 16 for vi in (*g.value_info, *g.output, *g.input)
    )


def _has_fp8(model: Any) -> bool:
    return any(i.data_type in FP8_TYPES for i in model.graph.initializer)


def open_session(model: Any, notes: list[str] | None = None, threads: int | None = None) -> Any:
    """An onnxruntime CPU session for a path or ModelProto; a BF16 model ORT cannot run is emulated
    in FP32 with BF16 rounding (a note says so)."""
    from trtstudio.precision.convert import emulate_in_fp32, load_onnx

    ort = _ort()
    so = ort.SessionOptions()
    so.log_severity_level = 3
    if threads:
        so.intra_op_num_threads = threads
    proto = load_onnx(model)
    if _has_fp8(proto):
        # onnxruntime's CPU graph optimizer fuses FP8 Q/DQ into kernels that give wrong results here
        # (relative error ~0.9 on a small conv net vs ~0.05 unfused): evaluate the Q/DQ nodes as written
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        if notes is not None:
            notes.append("FP8 Q/DQ evaluated by onnxruntime unfused (graph optimizations off): accuracy as "
                         "TensorRT would quantize, latency not representative")
    try:
        return ort.InferenceSession(proto.SerializeToString(), so, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - ORT raises its own types
        if not _has_bf16(proto):
            raise BackendError(f"onnxruntime cannot run {model if isinstance(model, (str, os.PathLike)) else 'the model'}: "
                               f"{str(exc).splitlines()[0]}") from None
        if notes is not None:
            notes.append("onnxruntime (CPU) runs no BF16 kernels here: BF16 accuracy emulated in FP32 with "
                         "BF16 rounding of every tensor and weight (close to, not equal to, a BF16 engine)")
        return ort.InferenceSession(emulate_in_fp32(proto).SerializeToString(), so, providers=["CPUExecutionProvider"])


def run_outputs(session: Any, samples: list[dict[str, np.ndarray]], specs: list[dict[str, Any]],
                names: list[str] | None = None, batch: int = 8) -> dict[str, np.ndarray]:
    """Run every sample (batched where the batch dim is dynamic); outputs concatenated along axis 0."""
    names = names or [o.name for o in session.get_outputs()]
    parts: dict[str, list[np.ndarray]] = {n: [] for n in names}
    for feed in batches(samples, specs, batch):
        for n, v in zip(names, session.run(names, feed), strict=True):
            parts[n].append(np.asarray(v))
    out: dict[str, np.ndarray] = {}
    for n, vs in parts.items():
        try:
            out[n] = np.concatenate([v.reshape(v.shape or (1,)) for v in vs], axis=0)
        except ValueError:  # outputs without a common batch axis: flatten
            out[n] = np.concatenate([v.ravel() for v in vs])
    return out


def _rows(a: np.ndarray, n: int) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    return a.reshape(n, -1) if n > 0 and a.size % n == 0 and a.ndim >= 1 and a.shape[0] == n else a.reshape(1, -1)


def compare_arrays(name: str, ref: np.ndarray, var: np.ndarray) -> OutputMetrics:
    """Metrics of ``var`` against ``ref`` (same shape; rows along axis 0 are samples)."""
    r = np.asarray(ref, dtype=np.float64)
    v = np.asarray(var, dtype=np.float64)
    if r.shape != v.shape:
        raise BackendError(f"output '{name}': reference shape {list(r.shape)} != variant shape {list(v.shape)}")
    nan, inf = int(np.isnan(v).sum()), int(np.isinf(v).sum())
    ref_bad = int((~np.isfinite(r)).sum())
    ok = np.isfinite(r) & np.isfinite(v)
    diff = np.where(ok, np.abs(v - r), 0.0)
    max_abs = float(diff.max()) if diff.size else 0.0
    mean_abs = float(diff[ok].mean()) if ok.any() else float("nan")
    rz, vz = np.where(ok, r, 0.0), np.where(ok, v, 0.0)
    rel = float(np.linalg.norm(vz - rz) / (np.linalg.norm(rz) + EPS))
    n = r.shape[0] if r.ndim >= 1 else 1
    rr, vv = _rows(rz, n), _rows(vz, n)
    norms = np.linalg.norm(rr, axis=1) * np.linalg.norm(vv, axis=1)
    # no EPS added to the norms: an output of small values (a background-only detection map, ~1e-4)
    # then had a cosine of 0.9999 against itself, and FP32 failed its own 0.99999 threshold
    cos_rows = (rr * vv).sum(axis=1) / np.maximum(norms, np.finfo(np.float64).tiny)
    both_zero = (np.linalg.norm(rr, axis=1) < EPS) & (np.linalg.norm(vv, axis=1) < EPS)
    cos_rows = np.where(both_zero, 1.0, cos_rows)
    if nan or inf:
        cos_rows = np.minimum(cos_rows, 0.0) if not ok.any() else cos_rows
    top1 = top5 = None
    if r.ndim == 2 and r.shape[1] > 1:
        ref_top = np.argmax(r, axis=1)
        top1 = float(np.mean(np.argmax(np.where(np.isfinite(v), v, -np.inf), axis=1) == ref_top))
        if r.shape[1] >= 5:
            var_top5 = np.argsort(-np.where(np.isfinite(v), v, -np.inf), axis=1)[:, :5]
            top5 = float(np.mean([ref_top[i] in var_top5[i] for i in range(r.shape[0])]))
    return OutputMetrics(name, max_abs, mean_abs, rel, float(cos_rows.mean()), float(cos_rows.min()),
                         top1, top5, nan, inf, ref_bad)


def judge(metrics: list[OutputMetrics], thresholds: dict[str, float]) -> list[str]:
    """Reasons a variant fails (empty: it passes)."""
    reasons: list[str] = []
    for m in metrics:
        if m.nan or m.inf:
            if m.ref_nonfinite == 0:
                reasons.append(f"{m.name}: {m.nan} NaN and {m.inf} Inf values (the reference has none)")
        if "cosine" in thresholds and not m.cosine >= thresholds["cosine"]:
            reasons.append(f"{m.name}: cosine {m.cosine:.5f} < {thresholds['cosine']}")
        if m.top1 is not None and "top1" in thresholds and m.top1 < thresholds["top1"]:
            reasons.append(f"{m.name}: top-1 agreement {m.top1:.3f} < {thresholds['top1']}")
        if "max_abs" in thresholds and m.max_abs > thresholds["max_abs"]:
            reasons.append(f"{m.name}: max abs error {m.max_abs:.4g} > {thresholds['max_abs']}")
    return reasons


def validate(
    reference: Any,
    variant: Any,
    samples: list[dict[str, np.ndarray]],
    specs: list[dict[str, Any]],
    precision: str,
    *,
    name: str | None = None,
    thresholds: dict[str, float] | None = None,
    reference_outputs: dict[str, np.ndarray] | None = None,
    batch: int = 8,
) -> ValidationResult:
    """Run ``variant`` and the FP32 ``reference`` (paths or ModelProtos) on ``samples`` and compare
    every model output. ``reference_outputs`` skips re-running the reference (a sweep runs it once)."""
    th = dict(THRESHOLDS.get(precision, THRESHOLDS["int8"]))
    th.update(thresholds or {})
    notes: list[str] = []
    if reference_outputs is None:
        ref_sess = open_session(reference)
        reference_outputs = run_outputs(ref_sess, samples, specs, batch=batch)
    var_sess = open_session(variant, notes)
    names = list(reference_outputs)
    var_names = [o.name for o in var_sess.get_outputs()]
    missing = [n for n in names if n not in var_names]
    if missing:
        raise BackendError(f"the variant lacks output(s) {', '.join(missing)} of the reference")
    var_out = run_outputs(var_sess, samples, specs, names, batch=batch)
    metrics = [compare_arrays(n, reference_outputs[n], var_out[n]) for n in names]
    reasons = judge(metrics, th)
    label = name or (os.path.basename(os.fspath(variant)) if isinstance(variant, (str, os.PathLike)) else precision)
    return ValidationResult(label, precision, metrics, th, len(samples), not reasons, reasons, notes)


# -- localisation -------------------------------------------------------------------------------


@dataclass
class TensorError:
    """Error of one intermediate tensor (``node``: its producer in the reference)."""

    tensor: str
    node: str
    op_type: str
    rel: float
    cosine: float
    max_abs: float
    input_rel: float  # the largest relative error among the node's float inputs

    @property
    def growth(self) -> float:
        """How much this node added to the error it received."""
        return self.rel - self.input_rel


@dataclass
class Localization:
    """Per-tensor error in topological order and where it first and most grows."""

    tensors: list[TensorError]
    threshold: float
    first_over: TensorError | None
    largest_growth: list[TensorError]
    node_errors: dict[str, float]
    skipped: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready summary (the heat overlay is ``node_errors``)."""
        return {
            "threshold": self.threshold,
            "first_over": None if self.first_over is None else self.first_over.__dict__,
            "largest_growth": [t.__dict__ for t in self.largest_growth],
            "node_errors": dict(self.node_errors),
            "tensors": [t.__dict__ for t in self.tensors],
            "skipped": list(self.skipped),
        }


def _with_outputs(model: Any, names: list[str]) -> Any:
    import onnx

    m = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    known = {vi.name: vi for vi in (*m.graph.value_info, *m.graph.input)}
    have = {o.name for o in m.graph.output}
    for n in names:
        if n in have:
            continue
        vi = onnx.ValueInfoProto()
        if n in known:
            vi.CopyFrom(known[n])
        vi.name = n
        m.graph.output.append(vi)
    return m


def localize(
    reference: Any,
    variant: Any,
    samples: list[dict[str, np.ndarray]],
    specs: list[dict[str, Any]],
    name_map: dict[str, str] | None = None,
    *,
    precision: str = "fp16",
    threshold: float | None = None,
    top: int = 5,
) -> Localization:
    """Compare every float intermediate tensor of ``reference`` with its counterpart in ``variant``
    (``name_map``: reference tensor -> variant tensor; identity where absent) on a few ``samples``."""
    from trtstudio.precision.convert import load_onnx

    ref = load_onnx(reference)
    var = load_onnx(variant)
    ref_inf = __import__("onnx").shape_inference.infer_shapes(ref, strict_mode=False)
    float_types = {vi.name for vi in (*ref_inf.graph.value_info, *ref_inf.graph.output)
                   if vi.type.tensor_type.elem_type == 1}
    var_tensors = {t for n in var.graph.node for t in n.output if t}
    mapping = name_map or {}
    pairs: list[tuple[str, str, Any]] = []
    skipped: list[str] = []
    for node in ref.graph.node:
        for t in node.output:
            if not t or t not in float_types:
                continue
            vt = mapping.get(t, t)
            if vt in var_tensors:
                pairs.append((t, vt, node))
            else:
                skipped.append(t)
    ref_m = _with_outputs(ref, [p[0] for p in pairs])
    var_m = _with_outputs(var, list(dict.fromkeys(p[1] for p in pairs)))
    ref_out = run_outputs(open_session(ref_m), samples, specs, [p[0] for p in pairs])
    var_out = run_outputs(open_session(var_m), samples, specs, list(dict.fromkeys(p[1] for p in pairs)))
    rel_of: dict[str, float] = {}
    rows: list[TensorError] = []
    producer = {o: n for n in ref.graph.node for o in n.output if o}
    received: dict[str, float] = {}  # an unmeasured tensor: the worst error measured upstream of it

    def upstream(tensor: str, depth: int = 0) -> float:
        """The error ``tensor`` carries: measured, else the worst of its producer's inputs (a tensor
        the variant fused away, e.g. a Conv output folded with its BatchNormalization)."""
        if tensor in rel_of:
            return rel_of[tensor]
        if tensor in received:
            return received[tensor]
        node = producer.get(tensor)
        got = 0.0 if node is None or depth > 64 else max((upstream(i, depth + 1) for i in node.input if i), default=0.0)
        received[tensor] = got
        return got

    for t, vt, node in pairs:
        a, b = ref_out[t], var_out[vt].astype(np.float32)
        if a.shape != b.shape:
            skipped.append(t)
            continue
        m = compare_arrays(t, a, b)
        inputs = [upstream(i) for i in node.input if i]
        rel_of[t] = m.rel
        rows.append(TensorError(t, node.name, node.op_type, m.rel, m.cosine, m.max_abs, max(inputs, default=0.0)))
    thr = threshold if threshold is not None else LOCALIZE_THRESHOLDS.get(precision, 0.05)
    first = next((r for r in rows if r.rel > thr), None)
    largest = sorted(rows, key=lambda r: r.growth, reverse=True)[:top]
    node_errors: dict[str, float] = {}
    for r in rows:
        node_errors[r.node] = max(node_errors.get(r.node, 0.0), r.rel)
    return Localization(rows, thr, first, largest, node_errors, skipped)
