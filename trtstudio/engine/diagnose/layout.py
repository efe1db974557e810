"""Rules of the family ``layout``: memory formats and channel alignment, what decides whether a
layer's kernel can run on tensor cores: reformats between layers that disagree, convolutions and
GEMMs whose kernel does not use tensor cores, channel counts that are not a multiple of what they
need."""

from __future__ import annotations

from typing import Any

from trtstudio.engine.diagnose.classify import LOW, dim, is_conv, is_gemm, uses_tensor_cores
from trtstudio.engine.diagnose.context import REFORMAT_WARN_SHARE, Ctx, finding, share_of, share_text
from trtstudio.engine.model import Finding, Layer

_NO_TC_EXEMPT = ("gemv", "depthwise")
ALIGN = {"FP16": 8, "BF16": 8, "INT8": 16, "FP8": 16, "FP4": 32, "INT4": 32}
TF32_ALIGN = 4  # an FP32 convolution on TF32 tensor cores: only a first convolution's image input is said


def _tensor_desc(t: Any) -> str:
    return "?" if t is None else (t.format or t.dtype or t.raw or "?")


def _tensor_types(lay: Layer) -> tuple[str, str]:
    return (_tensor_desc(lay.inputs[0] if lay.inputs else None),
            _tensor_desc(lay.outputs[0] if lay.outputs else None))


_BOUNDARY_HINT = (
    "the engine's I/O tensors are in another type/format than the layers next to them: give the "
    "I/O the engine's own type and format (trtexec --inputIOFormats/--outputIOFormats=fp16:chw, "
    "or FP16 inputs/outputs in the model) to drop this copy")
_CONVERTING_HINT = (
    "the layers on both sides run in different precisions: make the model's types agree "
    "(cast the weights/inputs of the FP32 side to FP16/BF16, or add Q/DQ on both sides for INT8)")
_FORMAT_HINT = (
    "neighbouring layers want different memory formats; a channel count that is a multiple of "
    "8 (FP16) or 32 (INT8), or keeping consecutive layers in one precision, usually removes it")


def reformats(ctx: Ctx) -> list[Finding]:
    """``reformat`` (info; warning when type-converting or >= 2 % of the time)
        ``Reformat`` layers and ``Reformatting CopyNode ...`` layers that are not ``NoOp`` and whose
        ``Origin`` is not ``QDQ`` (those are quantize layers: the precision family's). The message names
        the formats or data types on both sides; an input type different from the output type is a
        precision change TensorRT inserted between layers that disagree."""
    out: list[Finding] = []
    append = out.append
    qdq_ids = ctx.qdq_ids
    total = ctx.total
    at_boundary = ctx.at_boundary
    for lay in ctx.reformats:  # often a sixth of the layers: the checks are written out
        if lay.type == "NoOp" or id(lay) in qdq_ids:
            continue
        share = share_of(lay, total)
        din, dout = lay.precision_in, lay.precision_out
        converting = bool(din and dout and din != dout)
        boundary = at_boundary(lay)
        sev = "warning" if (converting and not boundary) or (
            share is not None and share >= REFORMAT_WARN_SHARE) else "info"
        if converting:
            change = f"{din} -> {dout}"
        else:
            fin, fout = _tensor_types(lay)
            change = f"{fin} -> {fout}" if fin != "?" or fout != "?" else "(formats not recorded)"
        where = " at the engine's input/output" if boundary else ""
        origin = f" (origin {lay.origin})" if lay.origin else ""
        append(finding("reformat", sev, lay, f"{lay.name}: reformat {change}{where}{origin}{share_text(share)}",
                        _BOUNDARY_HINT if boundary else _CONVERTING_HINT if converting else _FORMAT_HINT))
    return out



def _is_depthwise(lay: Layer) -> bool:
    g = lay.groups()
    c = dim(lay.inputs[0].shape, 1) if lay.inputs else None
    return "depthwise" in lay.type.lower() or (isinstance(g, int) and g > 1 and c is not None and g == c)


def _no_tensor_cores(tactic: str) -> bool:
    """A kernel that should use tensor cores and does not (gemv and depthwise kernels are exempt)."""
    t = tactic.lower()
    return not any(x in t for x in _NO_TC_EXEMPT) and uses_tensor_cores(tactic) is False


def tensor_cores(ctx: Ctx) -> list[Finding]:
    """``no_tensor_cores`` (warning)
        A convolution or GEMM/MatMul computing in FP16/BF16/INT8/FP8 whose tactic (kernel) name has
        none of the tensor-core markers in :data:`TENSOR_CORE_MARKERS` (derived from real tactic names
        in TensorRT 8.2-10.16 engines: ``tensor16x8x16``, ``tensor8x8x16``, ``tensor1688``, ``hmma``,
        ``h16816``/``h1688`` (cuDNN/cuBLAS ampere kernels), ``imma``, ``i8816``, Hopper
        ``warpgroup``/``wgmma``/``cgasize``), or has one of :data:`NO_TENSOR_CORE_MARKERS`
        (``ffma``, ``simt``, ``scudnn``, ``sgemm``, ``int8x4``/``dp4a`` (INT8 on CUDA cores)).
        Matrix-vector kernels (``gemv``) and depthwise convolutions are not flagged: tensor cores do
        not help them. Layers without a tactic name are skipped."""
    out = []
    flagged: dict[str, bool] = {}  # per tactic: an engine has a few hundred
    for lay, pin, pout in zip(ctx.conv_gemm, ctx.conv_gemm_in, ctx.conv_gemm_out, strict=True):
        tactic = lay.tactic
        if not tactic:
            continue
        p = pin or pout  # Layer.precision
        if p not in LOW:
            continue
        bad = flagged.get(tactic)
        if bad is None:
            bad = flagged[tactic] = _no_tensor_cores(tactic)
        if not bad:
            continue
        if _is_depthwise(lay):  # reads the layer's Groups: last, only for the few it concerns
            continue
        out.append(finding(
            "no_tensor_cores", "warning", lay,
            f"{lay.name} computes in {p} but its kernel {lay.tactic} does not use tensor cores"
            f"{share_text(ctx.share(lay))}",
            "tensor-core kernels need aligned channels (multiples of 8 for FP16, 16/32 for INT8), supported "
            "formats and enough workspace: align the channels, give the builder more workspace "
            "(--memPoolSize=workspace:...), or check the GPU has tensor cores for this type",
        ))
    return out


def alignment(ctx: Ctx) -> list[Finding]:
    """``unaligned_channels`` (warning; info for image inputs with C <= 4)
        Convolution/GEMM layers whose input channels C or output channels K (dimension 1 of the
        input/output, the last dimension for GEMM/MatMul layers) are not a multiple of 8 for
        FP16/BF16 or 16 for INT8/FP8: tensor-core kernels then pad or fall back. A convolution whose
        only misaligned side is an input of C <= 4 channels (an image: the network's first
        convolution) is said at ``info`` whatever its time (FP32 ones too, against TF32's 4), with
        the fix: expected; pad the input to 4 channels only if the layer's time matters (one of
        ``Ctx.expected``)."""
    out = []
    kinds: dict[tuple[str, Any], tuple[bool, bool]] = {}  # (type, parameter type) -> (is_conv, is_gemm)
    for lay, pin, pout in zip(ctx.conv_gemm, ctx.conv_gemm_in, ctx.conv_gemm_out, strict=True):
        if not lay.inputs or not lay.outputs:
            continue
        ptype = lay.parameter_type
        key = (lay.type, ptype if type(ptype) is str else None)  # as is_conv/is_gemm read them
        kind = kinds.get(key)
        if kind is None:
            kind = kinds[key] = (is_conv(lay), is_gemm(lay))
        conv, gemm = kind
        if not (conv or gemm):
            continue
        p = pin or pout  # Layer.precision
        need = ALIGN.get(p or "")
        tf32 = need is None and p == "FP32" and conv  # TF32 tensor cores: only an image input is said
        if tf32:
            need = TF32_ALIGN
        elif need is None:
            continue
        ishape, oshape = lay.inputs[0].shape, lay.outputs[0].shape
        if gemm and not conv:
            c, k = dim(ishape, -1), dim(oshape, -1)
        else:
            c, k = dim(ishape, 1), dim(oshape, 1)
        if (c is None or not c % need) and (k is None or not k % need):  # most layers: aligned
            continue
        bad = [(n, v) for n, v in (("C", c), ("K", k)) if v is not None and v % need]
        image = conv and c is not None and c <= 4 and [n for n, _ in bad] == ["C"]
        if tf32 and not image:
            continue
        what = ", ".join(f"{n}={v}" for n, v in bad)
        tc = " (TF32 tensor cores)" if tf32 else ""
        f = finding(
            "unaligned_channels", "info" if image else "warning", lay,
            f"{lay.name}: {what} is not a multiple of {need} for {p}{tc}{share_text(ctx.share(lay))}",
            (f"expected for an image input of {c} channels (the kernel pads it); only if this layer's time "
             "matters, pad the input to 4 channels" + ("" if need == 4 else f" (TensorRT's first-layer kernels "
                                                      f"take 4) or to a multiple of {need}")
             + ", zeros in the data and in the weights") if image else
            f"make channels a multiple of {need} (pad the weights with zero channels, or choose layer widths "
            f"that are multiples of {need})",
        )
        out.append(f)
        if image:
            ctx.expected.append(f)
    return out
