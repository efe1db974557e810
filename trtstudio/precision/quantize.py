"""INT8 / FP8 variants through explicit Q/DQ nodes, calibrated on the user's data.

TensorRT 11 and TensorRT-RTX take INT8 and FP8 only from ``QuantizeLinear``/``DequantizeLinear`` pairs
in the model (explicit quantization). This module makes them by the recipe TensorRT takes
(:mod:`trtstudio.precision.recipe`): the model is pre-processed (BatchNormalization folded into Conv,
constants folded), activation ranges are calibrated on the user's samples with MinMax, Entropy or
Percentile, and onnxruntime's QDQ quantizer puts Q/DQ on the inputs and weights of Conv,
ConvTranspose, MatMul and Gemm only (symmetric, zero point 0; weights per output channel; biases
float; no Q/DQ on outputs), leaving the rest for TensorRT to fuse. The ranges go to a JSON
calibration cache (``trtstudio.calibcache/2``: tensor -> [min, max], with the key they were made
for) that a later run reuses only when the model, the method, the precision, the recipe and the
calibration samples all match.

NVIDIA ModelOpt (``modelopt.onnx.quantization.quantize``) is used instead when installed and asked
for (``engine="modelopt"``, or ``"auto"`` where it is present). FP8 needs onnx's ``FLOAT8E4M3FN``
and a TensorRT target of SM 89 or newer.

For TensorRT 10 (a module with ``BuilderFlag.INT8`` and ``IInt8EntropyCalibrator2``),
:func:`make_legacy_calibrator` gives the implicit-quantization calibrator class. It is written
against TensorRT 10's documentation and cannot run here (TensorRT-RTX has no such API and this
machine has no GPU).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.errors import BackendError, InputError
from trtstudio.precision.entropy import speed_up
from trtstudio.precision.recipe import (
    BASE_OPS,
    METHODS,
    Recipe,
    attention_matmuls,
    cache_key,
    count_ops,
    key_mismatch,
    preprocess,
    samples_sha256,
    small_convs,
)
from trtstudio.precision.state import Cancelled, PrecisionState

CALIB_SCHEMA = "trtstudio.calibcache/2"
ORT_PIP = "pip install onnxruntime"


@dataclass
class QuantizeOptions:
    """``precision`` int8 or fp8; ``method`` minmax (default), entropy or percentile; ``target`` a TensorRT
    compute capability (``sm89``) that FP8 checks; ``engine`` ort, modelopt or auto. The recipe:
    ``extra_ops`` quantized besides Conv/ConvTranspose/MatMul/Gemm, ``preprocess`` (fold BN and
    constants first), ``keep_small_convs_float`` (Convs TensorRT has no INT8 kernel for),
    ``keep_attention_float`` (the MatMuls of an attention core)."""

    precision: str = "int8"
    method: str = METHODS[0]  # minmax: see recipe.METHODS
    per_channel: bool = True
    extra_ops: tuple[str, ...] = ()
    exclude_nodes: tuple[str, ...] = ()
    percentile: float = 99.999
    cache_path: str | None = None
    target: str | None = None
    engine: str = "ort"
    preprocess: bool = True
    keep_small_convs_float: bool = True
    keep_attention_float: bool = True

    def recipe(self) -> Recipe:
        """The recipe these options ask for."""
        return Recipe(tuple(self.extra_ops), self.preprocess, self.keep_small_convs_float, tuple(self.exclude_nodes),
                      self.per_channel, self.keep_attention_float)


@dataclass
class QuantizeResult:
    """A quantized model on disk and how it was made."""

    model_path: str
    precision: str
    method: str
    engine: str
    cache_path: str | None = None
    cache_reused: bool = False
    ranges: int = 0
    qdq_pairs: int = 0
    samples: int = 0
    recipe: dict[str, Any] = field(default_factory=dict)
    float_convs: dict[str, str] = field(default_factory=dict)  # Conv kept float -> why
    float_matmuls: dict[str, str] = field(default_factory=dict)  # attention MatMul kept float -> why
    notes: list[str] = field(default_factory=list)
    name_map: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Summary for JSON output."""
        return {k: v for k, v in self.__dict__.items() if k != "name_map"}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _ort_quant() -> Any:
    try:
        import onnxruntime.quantization as q
    except ImportError as exc:
        raise BackendError(f"INT8 calibration needs onnxruntime.quantization ({exc}); install: {ORT_PIP}") from exc
    return q


def _method(q: Any, name: str) -> Any:
    table = {"entropy": q.CalibrationMethod.Entropy, "percentile": q.CalibrationMethod.Percentile,
             "minmax": q.CalibrationMethod.MinMax}
    if name not in table:
        raise InputError(None, f"calibration method must be one of {', '.join(METHODS)}, not '{name}'")
    return table[name]


def fp8_available(target: str | None) -> str | None:
    """None when FP8 Q/DQ can be made for ``target``; else the reason it cannot."""
    from onnx import TensorProto

    if not hasattr(TensorProto, "FLOAT8E4M3FN"):
        return "this onnx has no FLOAT8E4M3FN type (onnx >= 1.14 needed)"
    if not target:
        return "FP8 needs a TensorRT target of SM 89 or newer (e.g. --target sm89); none was given"
    digits = "".join(ch for ch in str(target) if ch.isdigit())
    if not digits or int(digits) < 89:
        return f"FP8 needs compute capability SM 89 or newer (Ada, Hopper, Blackwell); the target is {target}"
    return None


class _Reader:
    """onnxruntime CalibrationDataReader over checked samples, with progress and cancel."""

    def __init__(self, samples: list[dict[str, np.ndarray]], state: PrecisionState | None, label: str) -> None:
        self._samples = samples
        self._i = 0
        self._state = state
        self._label = label

    def get_next(self) -> dict[str, np.ndarray] | None:
        if self._state is not None and self._state.is_stop_requested():
            return None
        if self._i >= len(self._samples):
            return None
        item = self._samples[self._i]
        self._i += 1
        if self._state is not None:
            self._state.report("calibrate", f"{self._label}: sample {self._i}/{len(self._samples)}",
                               self._i, len(self._samples))
        return item

    def rewind(self) -> None:
        self._i = 0

    def __len__(self) -> int:
        return len(self._samples)


def calibrate(
    model_path: str | os.PathLike[str],
    samples: list[dict[str, np.ndarray]],
    method: str = "minmax",
    *,
    op_types: tuple[str, ...] = BASE_OPS,
    percentile: float = 99.999,
    state: PrecisionState | None = None,
) -> dict[str, tuple[float, float]]:
    """Activation ranges (tensor -> (min, max)) of the inputs and outputs of ``op_types`` nodes from
    running ``samples`` through the model."""
    q = _ort_quant()
    calib_method = _method(q, method)
    extra: dict[str, Any] = {"symmetric": True}
    if method == "entropy":  # TensorRT's entropy calibration: 2048 histogram bins, 128 quantized levels
        extra.update(num_bins=2048, num_quantized_bins=128)  # (onnxruntime's 128/128 never clips)
    if method == "percentile":
        extra["percentile"] = percentile
    with tempfile.TemporaryDirectory(prefix="trtstudio-calib-") as tmp:
        calibrator = q.create_calibrator(
            Path(model_path), list(op_types), augmented_model_path=os.path.join(tmp, "augmented.onnx"),
            calibrate_method=calib_method, extra_options=extra,
        )
        # onnxruntime's calibrators print progress to stdout: keep it out of --json output
        with contextlib.redirect_stdout(io.StringIO()):
            calibrator.collect_data(_Reader(samples, state, method))
            if state is not None:
                state.check()
            if method == "entropy":
                speed_up(calibrator)  # the same thresholds, without onnxruntime's Python loops
            data = calibrator.compute_data()
        del calibrator
    ranges: dict[str, tuple[float, float]] = {}
    for name, td in data.items():
        lo, hi = td.range_value
        ranges[name] = (float(np.min(lo)), float(np.max(hi)))
    return ranges


def save_cache(path: str | os.PathLike[str], ranges: dict[str, tuple[float, float]], key: dict[str, Any],
               samples: int) -> None:
    """Write the calibration cache JSON: the ranges and the key they were made for."""
    from trtstudio.jsonio import dumps_text

    doc = {"schema": CALIB_SCHEMA, "key": key, "method": key.get("method"), "samples": samples,
           "ranges": {k: [v[0], v[1]] for k, v in sorted(ranges.items())}}
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(dumps_text(doc, indent=1, where=str(p)), encoding="utf-8")


def load_cache(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a calibration cache (this schema or the keyless ``/1``, which never matches a key);
    InputError when it is not one."""
    p = Path(path)
    try:
        from trtstudio.jsonio import loads_strict

        doc = loads_strict(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(p, f"not a readable calibration cache: {exc}") from None
    schemas = (CALIB_SCHEMA, "trtstudio.calibcache/1")
    if not isinstance(doc, dict) or doc.get("schema") not in schemas or not isinstance(doc.get("ranges"), dict):
        raise InputError(p, f"not a {CALIB_SCHEMA} calibration cache")
    return doc


def _count_qdq(model: Any) -> int:
    return sum(1 for n in model.graph.node if n.op_type == "QuantizeLinear")


def qdq_name_map(model: Any) -> dict[str, str]:
    """Original tensor -> the tensor holding its quantized value (the DequantizeLinear output after a
    QuantizeLinear of it); tensors that were not quantized map to themselves."""
    q_of: dict[str, str] = {}
    for n in model.graph.node:
        if n.op_type == "QuantizeLinear" and n.input:
            q_of[n.output[0]] = n.input[0]
    out: dict[str, str] = {}
    for n in model.graph.node:
        for t in n.output:
            if t:
                out.setdefault(t, t)
        if n.op_type == "DequantizeLinear" and n.input and n.input[0] in q_of:
            out[q_of[n.input[0]]] = n.output[0]
    return out


def _checked_source(model_path: str | os.PathLike[str], opts: QuantizeOptions) -> Path:
    src = Path(model_path)
    if not src.is_file():
        raise InputError(src, "no such ONNX model")
    if opts.precision not in ("int8", "fp8"):
        raise InputError(None, f"quantized precision must be int8 or fp8, not '{opts.precision}'")
    if opts.precision == "fp8":
        reason = fp8_available(opts.target)
        if reason:
            raise InputError(src, reason)
    return src


def quantize_model(
    model_path: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    samples: list[dict[str, np.ndarray]] | None,
    options: QuantizeOptions | None = None,
    *,
    state: PrecisionState | None = None,
) -> QuantizeResult:
    """Pre-process, calibrate, insert Q/DQ by the recipe and write the model to ``out_path``.

    ``samples`` (from :func:`trtstudio.precision.data.load_samples`) may be None only when the
    calibration cache exists and matches. FP8 raises InputError where :func:`fp8_available` says no.
    """
    import onnx

    opts = options or QuantizeOptions()
    src = _checked_source(model_path, opts)
    engine = opts.engine
    if engine == "auto":
        engine = "modelopt" if _has_modelopt() else "ort"
    if engine == "modelopt":
        return _quantize_modelopt(src, Path(out_path), samples, opts)
    if engine != "ort":
        raise InputError(None, f"quantizer must be ort, modelopt or auto, not '{engine}'")
    _ort_quant()
    result = QuantizeResult(str(out_path), opts.precision, opts.method, "onnxruntime", recipe=opts.recipe().to_json())
    with tempfile.TemporaryDirectory(prefix="trtstudio-quant-") as tmp:
        work = _prepared(src, opts, Path(tmp), result)
        ranges = _ranges(src, work, samples, opts, result, state)
        if state is not None:
            state.report("quantize", f"inserting Q/DQ ({opts.precision})")
        out = _insert_qdq(work, ranges, opts, result)
        if opts.precision == "fp8":
            out = to_fp8(out, onnx.load(str(work)))
            result.notes.append("FP8 E4M3 Q/DQ: symmetric amax/448 scales from the calibrated ranges (opset 19)")
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    onnx.save_model(out, str(out_path))
    result.qdq_pairs = _count_qdq(out)
    result.name_map = qdq_name_map(out)
    if result.qdq_pairs == 0:
        result.notes.append(f"no tensor was quantized (op types {', '.join(opts.recipe().op_types)} not in the model?)")
    return result


def _prepared(src: Path, opts: QuantizeOptions, tmp: Path, result: QuantizeResult) -> Path:
    """The model calibration and Q/DQ work on: at opset 19 for FP8, pre-processed unless turned off."""
    import onnx

    fp8 = opts.precision == "fp8"
    version = 19 if fp8 else 13 if opts.per_channel else 11
    work = at_opset(src, str(tmp), version, "FP8 Q/DQ" if fp8 else "per-channel INT8 Q/DQ")
    if work != src:
        result.notes.append(f"converted to opset {version} for {'FP8' if fp8 else 'per-channel INT8'} Q/DQ")
    if not opts.preprocess:
        return work
    pre = tmp / f"{src.stem}.pre.onnx"
    result.notes.extend(preprocess(work, pre))
    before, after = onnx.load(str(work)), onnx.load(str(pre))
    folded = count_ops(before, "BatchNormalization") - count_ops(after, "BatchNormalization")
    result.notes.append(f"pre-processed (onnxruntime): {folded} BatchNormalization folded, "
                        f"{len(before.graph.node)} -> {len(after.graph.node)} nodes")
    return pre


def _ranges(src: Path, work: Path, samples: list[dict[str, np.ndarray]] | None, opts: QuantizeOptions,
            result: QuantizeResult, state: PrecisionState | None) -> dict[str, tuple[float, float]]:
    """The activation ranges: from a cache whose key matches, else calibrated (and cached)."""
    key = cache_key(_sha256(src), opts.method, opts.percentile, opts.recipe(), opts.precision,
                    samples_sha256(samples) if samples else None)
    result.cache_path = opts.cache_path
    if opts.cache_path and Path(opts.cache_path).is_file():
        doc = load_cache(opts.cache_path)
        why = key_mismatch(doc.get("key"), key)
        if why is None:
            result.cache_reused, result.samples = True, int(doc.get("samples", 0))
            result.ranges = len(doc["ranges"])
            if not samples:
                result.notes.append("calibration cache reused with no samples to check it was made from the same data")
            return {k: (float(v[0]), float(v[1])) for k, v in doc["ranges"].items()}
        result.notes.append(f"calibration cache {opts.cache_path} was made for {why}; recalibrating")
    if not samples:
        raise InputError(src, "INT8 calibration needs samples (or a matching calibration cache)")
    if state is not None:
        state.report("calibrate", f"calibrating ({opts.method}) on {len(samples)} sample(s)", 0, len(samples))
    ranges = calibrate(work, samples, opts.method, op_types=opts.recipe().op_types, percentile=opts.percentile,
                       state=state)
    if state is not None and state.is_stop_requested():
        raise Cancelled("calibration cancelled")
    result.samples, result.ranges = len(samples), len(ranges)
    if opts.cache_path:
        save_cache(opts.cache_path, ranges, key, len(samples))
    return ranges


def _insert_qdq(work: Path, ranges: dict[str, tuple[float, float]], opts: QuantizeOptions,
                result: QuantizeResult) -> Any:
    """onnxruntime's QDQ quantizer, set up as TensorRT wants (see :mod:`trtstudio.precision.recipe`)."""
    q = _ort_quant()
    from onnxruntime.quantization.qdq_quantizer import QDQQuantizer
    from onnxruntime.quantization.quant_utils import load_model_with_shape_infer

    recipe = opts.recipe()
    model = load_model_with_shape_infer(work)
    if recipe.keep_small_convs_float:
        result.float_convs = small_convs(model, opts.precision)
        if result.float_convs:
            result.notes.append(f"{len(result.float_convs)} Conv(s) kept float: TensorRT has no "
                                f"{opts.precision.upper()} kernel for their channel counts")
    if recipe.keep_attention_float:
        result.float_matmuls = attention_matmuls(model)
        if result.float_matmuls:
            result.notes.append(f"{len(result.float_matmuls)} attention MatMul(s) kept float (as ModelOpt leaves them)")
    qtype = q.QuantType.QInt8  # FP8: INT8 placement, then rescaled to E4M3 (see to_fp8)
    tensors = q.calibrate.TensorsData(  # the quantizer reads only (min, max): MinMax's record form
        q.CalibrationMethod.MinMax,
        {k: (np.array(v[0], np.float32), np.array(v[1], np.float32)) for k, v in ranges.items()},
    )
    # TensorRT: zero points 0, biases left in float (its parser rejects INT32 DequantizeLinear of a bias),
    # Q/DQ on the inputs of the recipe's ops only (none on any output), weights per output channel
    extra = {"ActivationSymmetric": True, "WeightSymmetric": True, "QuantizeBias": False,
             "OpTypesToExcludeOutputQuantization": sorted({n.op_type for n in model.graph.node}),
             "ForceQuantizeNoInputCheck": True, "DedicatedQDQPair": False,
             "QDQDisableWeightAdjustForInt32Bias": True}  # no INT32 bias: weight scales stay calibrated
    try:
        quantizer = QDQQuantizer(
            model, opts.per_channel, False, qtype, qtype, tensors, [],
            [*recipe.exclude_nodes, *result.float_convs, *result.float_matmuls], list(recipe.op_types), extra,
        )
        quantizer.quantize_model()
    except Exception as exc:  # noqa: BLE001 - the quantizer raises many kinds; one line for the user
        raise BackendError(f"{work}: onnxruntime could not insert Q/DQ: {type(exc).__name__}: {exc}") from None
    return quantizer.model.model


FP8_MAX = 448.0  # largest finite float8 E4M3FN
INT8_MAX = 127.0


def to_fp8(model: Any, source: Any) -> Any:
    """Turn a symmetric INT8 Q/DQ model into FP8 E4M3 Q/DQ the way TensorRT reads it: each scale
    becomes amax/448 (from amax/127), zero points become FLOAT8E4M3FN zeros, and quantized weights
    are re-encoded from the source model's float weights (saturating). Needs opset 19 (FP8 Q/DQ);
    lower opsets are converted with onnx.version_converter."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    g = model.graph
    inits = {i.name: i for i in g.initializer}
    originals = {i.name: i for i in source.graph.initializer}
    done: set[str] = set()
    for node in g.node:
        if node.op_type not in ("QuantizeLinear", "DequantizeLinear") or len(node.input) < 3:
            continue
        x, scale_name, zp_name = node.input[0], node.input[1], node.input[2]
        old_scale = numpy_helper.to_array(inits[scale_name]).astype(np.float32)
        new_scale = old_scale * np.float32(INT8_MAX / FP8_MAX)
        if node.op_type == "DequantizeLinear" and x in inits and x not in done:  # a quantized weight
            axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
            q = numpy_helper.to_array(inits[x])
            base = x[: -len("_quantized")] if x.endswith("_quantized") else x
            w = (numpy_helper.to_array(originals[base]).astype(np.float32) if base in originals
                 else q.astype(np.float32) * _along(old_scale, axis, q.ndim))
            vals = w / _along(new_scale, axis, w.ndim)
            inits[x].CopyFrom(helper.make_tensor(x, TensorProto.FLOAT8E4M3FN, list(q.shape), vals.ravel().tolist()))
            done.add(x)
        if scale_name not in done:
            inits[scale_name].CopyFrom(numpy_helper.from_array(new_scale, scale_name))
            done.add(scale_name)
        if zp_name not in done:
            zp = numpy_helper.to_array(inits[zp_name])
            inits[zp_name].CopyFrom(helper.make_tensor(zp_name, TensorProto.FLOAT8E4M3FN, list(zp.shape),
                                                       [0.0] * int(zp.size)))
            done.add(zp_name)
    if _opset(model) < 19:
        raise BackendError(f"FP8 Q/DQ needs opset 19; the model has {_opset(model)} (convert it first: at_opset)")
    _topological_sort(g)
    del g.value_info[:]
    try:
        model = onnx.shape_inference.infer_shapes(model, strict_mode=False)
        onnx.checker.check_model(model)
    except Exception as exc:  # noqa: BLE001
        raise BackendError(f"the FP8 Q/DQ model is invalid at opset 19: {str(exc).splitlines()[0]}") from None
    return model


def _opset(model: Any) -> int:
    return next((int(o.version) for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def at_opset(path: Path, out_dir: str, version: int = 19, why: str = "FP8") -> Path:
    """The model at opset ``version`` or above (onnx.version_converter), written to ``out_dir`` when
    converted; InputError naming ``why`` when onnx cannot convert it."""
    import onnx

    model = onnx.load(str(path))
    if _opset(model) >= version:
        return path
    try:
        converted = onnx.version_converter.convert_version(model, version)
        onnx.checker.check_model(converted)
    except Exception as exc:  # noqa: BLE001
        raise InputError(path, f"{why} needs opset {version} and onnx cannot convert this model to it: "
                               f"{str(exc).splitlines()[0]}") from None
    out = Path(out_dir) / f"{path.stem}.opset{version}.onnx"
    onnx.save_model(converted, str(out))
    return out


def _topological_sort(graph: Any) -> None:
    """Order nodes so each comes after the producers of its inputs (onnxruntime's quantizer appends)."""
    produced = {i.name for i in graph.input} | {i.name for i in graph.initializer} | {""}
    pending = list(graph.node)
    ordered: list[Any] = []
    while pending:
        rest = []
        for n in pending:
            if all(i in produced for i in n.input):
                ordered.append(n)
                produced.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):  # a cycle or an outer-scope name: keep the remaining order
            ordered.extend(rest)
            break
        pending = rest
    del graph.node[:]
    graph.node.extend(ordered)


def _along(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    if v.ndim == 0 or v.size == 1:
        return v.reshape(())
    shape = [1] * ndim
    shape[axis % ndim] = v.size
    return v.reshape(shape)


def _has_modelopt() -> bool:
    try:
        import modelopt.onnx.quantization  # noqa: F401
    except Exception:  # noqa: BLE001
        return False
    return True


def _quantize_modelopt(src: Path, out: Path, samples: list[dict[str, np.ndarray]] | None,
                       opts: QuantizeOptions) -> QuantizeResult:
    """NVIDIA ModelOpt's ONNX PTQ (written against its documented ``quantize`` signature)."""
    try:
        from modelopt.onnx.quantization import quantize as mo_quantize
    except ImportError as exc:
        raise BackendError(f"ModelOpt is not installed ({exc}); pip install nvidia-modelopt[onnx]") from exc
    if not samples:
        raise InputError(src, "ModelOpt calibration needs samples")
    names = list(samples[0])
    data = {n: np.concatenate([s[n] for s in samples], axis=0) for n in names}
    method = {"entropy": "entropy", "minmax": "max", "percentile": "entropy"}.get(opts.method, "entropy")
    result = QuantizeResult(str(out), opts.precision, method, "modelopt", samples=len(samples))
    if opts.method == "percentile":
        result.notes.append("ModelOpt has no percentile calibration; used entropy")
    mo_quantize(
        onnx_path=str(src), quantize_mode=opts.precision, calibration_data=data, calibration_method=method,
        calibration_cache_path=opts.cache_path, nodes_to_exclude=list(opts.exclude_nodes) or None,
        calibration_eps=["cpu"], output_path=str(out),
    )
    import onnx

    model = onnx.load(str(out))
    result.qdq_pairs = _count_qdq(model)
    result.name_map = qdq_name_map(model)
    return result


def legacy_int8_supported(trt: Any) -> bool:
    """True for a TensorRT module with implicit INT8 (TensorRT 10: ``BuilderFlag.INT8`` and
    ``IInt8EntropyCalibrator2``); TensorRT 11 and TensorRT-RTX have neither."""
    return hasattr(getattr(trt, "BuilderFlag", None), "INT8") and hasattr(trt, "IInt8EntropyCalibrator2")


def make_legacy_calibrator(
    trt: Any,
    samples: list[dict[str, np.ndarray]],
    cache_path: str | os.PathLike[str],
    *,
    to_device: Callable[[str, np.ndarray], int] | None = None,
) -> Any:
    """A TensorRT 10 ``IInt8EntropyCalibrator2`` over ``samples`` (one batch each), with a cache file.

    Written against TensorRT 10's Python API documentation (``get_batch_size``, ``get_batch(names)``
    returning device pointers, ``read_calibration_cache``/``write_calibration_cache``); it cannot run
    here: TensorRT-RTX and TensorRT 11 have no implicit INT8 and this machine has no GPU.
    ``to_device(input name, array) -> device pointer`` copies a batch to the GPU (default: one
    cuda-python buffer per input, reused for every batch); set ``config.int8_calibrator`` and
    ``BuilderFlag.INT8`` to use it.
    """
    if not legacy_int8_supported(trt):
        raise BackendError(f"{getattr(trt, '__name__', 'this TensorRT')} has no implicit INT8 calibration "
                           "(TensorRT 11 / TensorRT-RTX are strongly typed): use Q/DQ (quantize_model)")
    copy_to_device: Callable[[str, np.ndarray], int] = to_device or _cuda_python_copier()
    base = trt.IInt8EntropyCalibrator2

    class EntropyCalibrator(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            base.__init__(self)
            self._i = 0

        def get_batch_size(self) -> int:
            first = next(iter(samples[0].values())) if samples else np.zeros((1,))
            return int(first.shape[0]) if first.ndim else 1

        def get_batch(self, names: list[str]) -> list[int] | None:
            if self._i >= len(samples):
                return None
            sample = samples[self._i]
            self._i += 1
            return [copy_to_device(n, np.ascontiguousarray(sample[n])) for n in names]

        def read_calibration_cache(self) -> bytes | None:
            p = Path(cache_path)
            return p.read_bytes() if p.is_file() else None

        def write_calibration_cache(self, cache: bytes) -> None:
            Path(cache_path).write_bytes(bytes(cache))

    return EntropyCalibrator()


def _cuda_python_copier() -> Callable[[str, np.ndarray], int]:
    try:
        from cuda import cudart  # type: ignore[import-not-found]
    except ImportError as exc:
        raise BackendError(f"the TensorRT 10 calibrator copies batches with cuda-python ({exc}); pip install cuda-python") from exc
    buffers: dict[str, tuple[int, int]] = {}  # input name -> (pointer, bytes); freed at exit by the driver

    def copy(name: str, array: np.ndarray) -> int:
        ptr, size = buffers.get(name, (0, 0))
        if size < array.nbytes:
            if ptr:
                cudart.cudaFree(ptr)
            err, ptr = cudart.cudaMalloc(array.nbytes)
            if int(err) != 0:
                raise BackendError(f"cudaMalloc of {array.nbytes} bytes failed: {err}")
            buffers[name] = (int(ptr), array.nbytes)
        cudart.cudaMemcpy(ptr, array.ctypes.data, array.nbytes, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice)
        return int(ptr)

    return copy
