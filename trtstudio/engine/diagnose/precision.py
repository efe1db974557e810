"""Rules of the family ``precision``: where an engine computes in another precision than it could,
and quantize/dequantize that did not fuse: FP32 islands, INT8 layers writing float for a separate
quantize, Q/DQ layers of their own, and the required quantize/dequantize at the engine's boundary."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trtstudio.engine.diagnose.classify import FLOAT, LOW, REDUCED
from trtstudio.engine.diagnose.context import REFORMAT_WARN_SHARE, Ctx, finding, share_of, share_text
from trtstudio.engine.model import Finding, Layer

_ISLAND_HINT = (
    "TensorRT keeps FP32 where the model's types say so (strongly typed) or where no faster "
    "kernel exists: cast this node's inputs/weights to FP16/BF16 in the ONNX model, or check "
    "--layerPrecisions/precision constraints that pin it to FP32")
_INT8_OUT_HINT = (
    "place the QuantizeLinear of the next Q/DQ pair directly after this layer's output (after the "
    "Add/Relu it fuses) so TensorRT can write INT8 directly; export with opset >= 13 Q/DQ pairs "
    "on every input of residual Adds")
_QDQ_HINT = (
    "TensorRT fuses a Q/DQ pair into the neighbouring layer when the pair sits directly on the "
    "input/output of a fusible op: export with opset >= 13 Q/DQ pairs around every conv/GEMM input and "
    "the residual Add inputs, and avoid Q/DQ around ops with no INT8 kernel (pooling, resize)")


def precision(ctx: Ctx, model_precision: str | None) -> list[Finding]:
    """``precision_fallback`` (warning or info)
        * an FP32 compute layer in an engine that otherwise computes in FP16/BF16 (or FP32 compute
          when ``model_precision`` asks for fp16/bf16/int8): an FP32 island (warning);
        * an INT8 convolution/GEMM with a float output; warning when its output feeds a separate
          quantize layer (the Q of the next Q/DQ pair was not fused into it), info otherwise (the last
          INT8 layer of a region legitimately outputs float);
        * Q/DQ not fused: a quantize/dequantize that survives as its own layer (a ``Reformat`` of
          ``Origin`` ``QDQ``, a ``Quantize``/``Dequantize`` layer, or a layer whose ONNX nodes are only
          QuantizeLinear/DequantizeLinear) (info; warning when >= 2 % of the time).

        Not findings: an INT8 layer whose float output is the engine's output (a classifier's logits)
        has nothing to hand INT8 to.

    ``reformat`` at the engine's boundary (info, whatever its time)
        The quantize of a network's float input and the dequantize of its output (a Q/DQ layer
        reading an engine input, or writing an engine output, through layers that only move data)
        are required by float I/O, not Q/DQ left unfused: each is one ``info`` reformat finding (TREx
        flags it) whose hint is the I/O format that removes the copy, from the format the layer
        writes (reads): ``trtexec --inputIOFormats=int8:chw4`` (``--outputIOFormats``), with the
        caller quantizing (dequantizing) the data (one of ``Ctx.expected``). The Q/DQ layers are
        walked once, in engine order, so these come between the Q/DQ-not-fused findings."""
    out: list[Finding] = []
    append = out.append
    compute = ctx.compute
    # Layer.precision (precision_in, else precision_out) in REDUCED
    has_reduced = any((pin or pout) in REDUCED for pin, pout in zip(ctx.compute_in, ctx.compute_out, strict=True))
    want = (model_precision or "").upper()
    want_low = want in LOW
    islands = want_low or has_reduced
    conv_gemm = set(map(id, ctx.conv_gemm))  # a compute layer is a conv/GEMM when it is there (in C)
    total = ctx.total
    requantized_by: Callable[[Layer], Layer | None] | None = None
    for lay, pin, pout in zip(compute, ctx.compute_in, ctx.compute_out, strict=True):  # 100,000s: the checks are written out
        if pin == "FP32" and islands and pout in (None, "FP32"):
            around = ctx.neighbours(lay, False) + ctx.neighbours(lay, True)
            low_around = [n for n in around if (n.precision_in in LOW or n.precision_out in LOW)]
            if want_low or (low_around and len(low_around) == len(around)):
                kinds = sorted({_low_of(n) for n in low_around})
                why = f"the model asks for {want}" if want_low and not low_around else (
                    f"its neighbours compute in {', '.join(kinds)}")
                append(finding(
                    "precision_fallback", "warning", lay,
                    f"{lay.name} runs in FP32 while {why}: an FP32 island{share_text(share_of(lay, total))}",
                    _ISLAND_HINT,
                ))
        elif pin == "INT8" and pout in FLOAT and id(lay) in conv_gemm:
            if ctx.feeds_engine_output(lay):
                continue  # the network's own float output (a classifier's logits): nothing to fuse
            if requantized_by is None:
                requantized_by = _requantizer(ctx)
            requant = requantized_by(lay)
            tail = (f"; its output is re-quantized by {requant.name}, a separate layer" if requant else "")
            append(finding("precision_fallback", "warning" if requant else "info", lay,
                            f"{lay.name} is an INT8 {lay.type} with {pout} output{tail}{share_text(share_of(lay, total))}",
                            _INT8_OUT_HINT))
    for lay, pin, pout in zip(ctx.qdq, ctx.qdq_in, ctx.qdq_out, strict=True):
        if pout in LOW and pin not in LOW and ctx.reads_engine_input(lay):
            append(_boundary_qdq(ctx, lay, pin, pout, True))  # required: said, with the I/O format that drops it
            continue
        if pin in LOW and pout not in LOW and ctx.feeds_engine_output(lay):
            append(_boundary_qdq(ctx, lay, pin, pout, False))
            continue
        share = share_of(lay, total)
        sev = "warning" if share is not None and share >= REFORMAT_WARN_SHARE else "info"
        conv = f" ({pin} -> {pout})" if pin and pout else ""
        append(finding("precision_fallback", sev, lay,
                        f"{lay.name} runs as its own quantize/dequantize layer{conv}{share_text(share)}: Q/DQ not fused",
                        _QDQ_HINT))
    return out


# the IOFormats word of a TensorRT format text (trtexec --inputIOFormats=TYPE:FORMAT), the first
# that the text holds ("thirty-two wide" before "two wide", which it also holds)
_LAYOUT_WORDS = (("thirty-two wide channel vectorized", "chw32"), ("two wide channel vectorized", "chw2"),
                 ("four wide channel vectorized", "chw4"), ("sixteen wide channel vectorized", "chw16"),
                 ("channel % 16 == 0", "hwc16"), ("channel % 8 == 0", "hwc8"), ("channel major", "hwc"),
                 ("row major", "chw"))


def io_format(t: Any, precision: str | None) -> str:
    """``int8:chw4``: the ``--inputIOFormats``/``--outputIOFormats`` spec of tensor ``t``'s type and
    layout (``chw`` where its format text says none)."""
    text = (getattr(t, "format", None) or "").lower()
    layout = next((word for key, word in _LAYOUT_WORDS if key in text), "chw")
    if "3 spatial" in text:
        layout = {"chw32": "cdhw32", "hwc8": "dhwc8", "hwc": "dhwc"}.get(layout, layout)
    return f"{(precision or 'fp32').lower()}:{layout}"


def _boundary_qdq(ctx: Ctx, lay: Layer, pin: str | None, pout: str | None, quantize: bool) -> Finding:
    """The info finding of the quantize of the network's float input (``quantize``) or the
    dequantize of its output: required by float I/O, removed by giving the engine the low-precision
    I/O format the layer writes (reads). Listed in ``ctx.expected``: info whatever its time."""
    share = ctx.share(lay)
    if quantize:
        spec = io_format(lay.outputs[0] if lay.outputs else None, pout)
        what, flag, data = "quantizes the engine's float input", "--inputIOFormats", "quantize its input data"
    else:
        spec = io_format(lay.inputs[0] if lay.inputs else None, pin)
        what, flag, data = ("dequantizes to the engine's float output", "--outputIOFormats",
                            "dequantize the output it receives")
    conv = f" ({pin} -> {pout})" if pin and pout else ""
    f = finding("reformat", "info", lay,
                 f"{lay.name} {what}{conv}{share_text(share)}: required while the engine's I/O is float, "
                 "a copy of the whole tensor",
                 f"expected with float I/O; to drop the copy build with trtexec {flag}={spec} (the layout the "
                 f"layer {'writes' if quantize else 'reads'}) and {data} with the model's Q/DQ scale in the caller")
    ctx.expected.append(f)
    return f


def _requantizer(ctx: Ctx) -> Callable[[Layer], Layer | None]:
    """A function giving the first of a layer's direct consumers (through reformats that are not
    Q/DQ, in the order of the layer's outputs and then of the engine) that is a separate quantize
    layer writing INT8, or None."""
    get = ctx.consumers.get
    reformats = ctx.reformat_ids
    qdq = ctx.qdq_ids

    def requantized_by(lay: Layer) -> Layer | None:  # tens of thousands of calls: the lookups bound once
        for t in lay.outputs:
            for c in get(t.name, ()):
                if id(c) in reformats and id(c) not in qdq:  # a reformat (is_reformat) of the engine
                    for t2 in c.outputs:
                        for n in get(t2.name, ()):
                            if id(n) in qdq and n.precision_out == "INT8":
                                return n
                elif id(c) in qdq and c.precision_out == "INT8":
                    return c
        return None

    return requantized_by


def _low_of(lay: Layer) -> str:
    return lay.precision_in if lay.precision_in in LOW else (lay.precision_out or "?")
