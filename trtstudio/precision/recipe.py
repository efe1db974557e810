"""The INT8/FP8 recipe TensorRT takes: pre-processing, where Q/DQ go, and what a calibration is keyed on.

TensorRT (and NVIDIA ModelOpt, whose ONNX quantizer places Q/DQ for it) quantize a model this way:

1. **Pre-process.** BatchNormalization is folded into the Conv before it and constants are folded,
   so the ranges calibrated are those of the tensors TensorRT computes. Done by onnxruntime's
   quantization pre-processing (``onnxruntime.quantization.shape_inference.quant_pre_process``:
   ONNX shape inference and onnxruntime's *basic* graph optimizations, which use ONNX ops only;
   its symbolic shape inference is skipped: it fails on the dynamic dims of most exported models
   and then leaves a ``sym_shape_infer_temp.onnx`` in the working directory).
2. **Q/DQ only where TensorRT runs INT8 kernels**: on the inputs and weights of Conv, ConvTranspose,
   MatMul and Gemm (:data:`BASE_OPS`), weights per output channel and symmetric, activations per
   tensor and symmetric (zero point 0), no Q/DQ on any output; Add, BatchNormalization, activations,
   pooling and the rest are left for TensorRT to fuse into the kernels around them. Biases stay
   float (TensorRT-RTX's parser rejects an INT32 bias DequantizeLinear). More op types can be
   asked for (``extra_ops``, the CLI's ``--int8-ops``).
3. **Attention stays float**: the two MatMuls of an attention core (MatMul, pointwise ops, Softmax,
   MatMul) get no Q/DQ, as ModelOpt leaves them (``find_mha_partitions``); TensorRT fuses them.
4. **Convs without INT8 kernels stay float** (ModelOpt's ``find_nodes_from_convs_to_exclude``):
   a Conv with under 16 input or output channels is quantized only when TensorRT has an INT8
   kernel for it: a dense Conv with a square kernel and 8k input or output channels that reads
   the graph input or has 16 channels on the other side, or a grouped Conv with 8k outputs and a
   kernel of 3 or more; for FP8, Convs with a filter of over 32 taps stay float too.

A calibration (the ranges) is reused only when its key matches: the model's hash, the calibration
method (and percentile), the recipe, and the hash of the calibration samples themselves.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
from dataclasses import dataclass
from math import prod
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trtstudio.errors import BackendError

if TYPE_CHECKING:
    import numpy as np

# imported by the CLI's flag table: this module imports only the standard library at module level
BASE_OPS = ("Conv", "ConvTranspose", "MatMul", "Gemm")
# calibration methods, the default first: minmax kept the cosine to FP32 highest on every model tried
# (PaddleOCR cls 0.998 vs entropy 0.993, and 0.990 vs 0.908 on [0, 1) inputs; PP-OCRv4 rec 0.995 vs
# 0.961): onnxruntime's symmetric entropy search clips these activations too far
METHODS = ("minmax", "entropy", "percentile")
RECIPE_NAME = "tensorrt/1"  # bump when placement or pre-processing changes: old caches stop matching


@dataclass(frozen=True)
class Recipe:
    """How a model is quantized: ``extra_ops`` besides :data:`BASE_OPS`, pre-processing on or off,
    the small-Conv rule on or off, node names kept float, weights per channel or per tensor, the
    attention MatMuls float or not."""

    extra_ops: tuple[str, ...] = ()
    preprocess: bool = True
    keep_small_convs_float: bool = True
    exclude_nodes: tuple[str, ...] = ()
    per_channel: bool = True
    keep_attention_float: bool = True

    @property
    def op_types(self) -> tuple[str, ...]:
        """The op types whose inputs get Q/DQ."""
        return tuple(dict.fromkeys((*BASE_OPS, *self.extra_ops)))

    def to_json(self) -> dict[str, Any]:
        """What the calibration cache and the sweep record of the recipe."""
        return {"name": RECIPE_NAME, "op_types": list(self.op_types), "preprocess": self.preprocess,
                "keep_small_convs_float": self.keep_small_convs_float,
                "exclude_nodes": sorted(self.exclude_nodes), "per_channel_weights": self.per_channel,
                "keep_attention_float": self.keep_attention_float}


def preprocess(src: Path, out: Path) -> list[str]:
    """Fold BatchNormalization and constants of ``src`` into ``out``; returns notes for the user."""
    from onnxruntime.quantization.shape_inference import quant_pre_process

    notes: list[str] = []
    logger = logging.getLogger()
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            # symbolic shape inference off: it gives up on the dynamic dims of most exported models
            # (PaddleOCR, YOLOv8, Magika) and then writes sym_shape_infer_temp.onnx into the cwd
            quant_pre_process(str(src), str(out), skip_symbolic_shape=True)
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises many kinds
        raise BackendError(f"{src}: onnxruntime's quantization pre-processing failed: "
                           f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    finally:
        logger.setLevel(level)
    return notes


def count_ops(model: Any, op_type: str) -> int:
    """Nodes of ``op_type`` in ``model``."""
    return sum(1 for n in model.graph.node if n.op_type == op_type)


def _attr(node: Any, name: str, default: Any) -> Any:
    from onnx import helper

    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def small_convs(model: Any, precision: str = "int8") -> dict[str, str]:
    """Conv node -> why TensorRT has no INT8 (or FP8) kernel for it (ModelOpt's rule, see module doc)."""
    weights = {i.name: tuple(i.dims) for i in model.graph.initializer}
    graph_inputs = {i.name for i in model.graph.input}
    out: dict[str, str] = {}
    for node in model.graph.node:
        if node.op_type != "Conv" or len(node.input) < 2:
            continue
        shape = weights.get(node.input[1])
        if shape is None or len(shape) < 3:
            out[node.name] = "its weight is not a constant"
            continue
        oc, ic, taps = shape[0], shape[1], shape[2:]
        group = int(_attr(node, "group", 1))
        kernel = tuple(_attr(node, "kernel_shape", taps))
        if precision == "fp8" and prod(taps) > 32:
            out[node.name] = f"an FP8 Conv filter of {prod(taps)} taps (over 32)"
            continue
        if oc >= 16 and ic >= 16:
            continue
        if precision == "int8" and group == 1 and (oc % 8 == 0 or ic % 8 == 0) and len(set(kernel)) == 1 \
                and (node.input[0] in graph_inputs or oc >= 16 or ic >= 16):
            continue
        if precision == "int8" and group > 1 and oc % 8 == 0 and all(k >= 3 for k in kernel):
            continue
        out[node.name] = f"{ic} input / {oc} output channels, group {group}, kernel {list(kernel)}"
    return out


# between an attention MatMul and its Softmax: scaling and masking, and the Flatten/Reshape that
# onnx's version converter wraps around a Softmax of opset < 13
_POINTWISE = ("Add", "Sub", "Mul", "Div", "Where", "Cast", "Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze")


def attention_matmuls(model: Any) -> dict[str, str]:
    """MatMul node -> why it stays float: the two MatMuls of an attention core (MatMul, pointwise or
    shape ops, Softmax, MatMul), which ModelOpt leaves unquantized (``find_mha_partitions``) and
    TensorRT fuses into its attention kernels in FP16/FP32."""
    producer = {o: n for n in model.graph.node for o in n.output}
    consumers: dict[str, list[Any]] = {}
    for n in model.graph.node:
        for t in n.input:
            consumers.setdefault(t, []).append(n)
    out: dict[str, str] = {}
    for softmax in (n for n in model.graph.node if n.op_type == "Softmax"):
        node = producer.get(softmax.input[0])
        while node is not None and node.op_type in _POINTWISE:
            node = producer.get(node.input[0])
        if node is None or node.op_type != "MatMul":
            continue
        later = list(consumers.get(softmax.output[0], []))
        while later and later[0].op_type in _POINTWISE and len(later) == 1:
            later = list(consumers.get(later[0].output[0], []))
        second = [n for n in later if n.op_type == "MatMul"]
        if len(second) != 1:
            continue
        out[node.name] = f"the attention scores MatMul before {softmax.name}"
        out[second[0].name] = f"the attention-times-values MatMul after {softmax.name}"
    return out


def samples_sha256(samples: list[dict[str, np.ndarray]]) -> str:
    """Hash of calibration samples: order, input names, dtypes, shapes and bytes."""
    import numpy as np

    h = hashlib.sha256()
    for sample in samples:
        for name in sorted(sample):
            a = np.ascontiguousarray(sample[name])
            h.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
            h.update(a.tobytes())
    return h.hexdigest()


def cache_key(model_sha: str, method: str, percentile: float | None, recipe: Recipe, precision: str,
              data_sha: str | None) -> dict[str, Any]:
    """What a calibration cache must match to be reused."""
    return {"model_sha256": model_sha, "method": method,
            "percentile": percentile if method == "percentile" else None, "precision": precision,
            "recipe": recipe.to_json(), "data_sha256": data_sha}


def key_mismatch(stored: dict[str, Any] | None, wanted: dict[str, Any]) -> str | None:
    """None when a cache's key matches ``wanted`` (its data unchecked when ``wanted`` has none);
    else which part differs, for the note."""
    if not isinstance(stored, dict):
        return "no key (an older cache)"
    labels = {"model_sha256": "another model", "method": "another method", "percentile": "another percentile",
              "precision": "another precision", "recipe": "another recipe", "data_sha256": "other data"}
    for k, label in labels.items():
        if k == "data_sha256" and wanted.get(k) is None:
            continue
        if stored.get(k) != wanted.get(k):
            return label
    return None
