"""``trtstudio precision``: FP16/BF16/INT8 variants of a model, profiled and validated against FP32."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from trtstudio.precision.recipe import METHODS  # standard library only at module level

HELP = "build FP16/BF16/INT8 variants, calibrate, validate against FP32, profile, and recommend one"


def configure(parser: argparse.ArgumentParser) -> None:
    """Flags of ``trtstudio precision``."""
    parser.add_argument("model", metavar="MODEL", help="an FP32 .onnx model")
    parser.add_argument("--variants", default="fp16,bf16,int8", help="comma list of fp16, bf16, int8, fp8 (FP32 always runs)")
    parser.add_argument("--calib", metavar="DIR", help="calibration data: folder of .npy/.npz, images, or samples.py")
    parser.add_argument("--val", metavar="DIR", help="validation data (default: the calibration samples)")
    parser.add_argument("--shapes", help="input shapes, e.g. input:1x3x224x224 (fixes dynamic dims)")
    parser.add_argument("--calib-method", choices=METHODS, default=METHODS[0],
                        help="INT8/FP8 calibration (default minmax: the most faithful on the models tried)")
    parser.add_argument("--calib-samples", type=int, default=64, metavar="N", help="at most N calibration samples")
    parser.add_argument("--int8-ops", default="", metavar="OPS",
                        help="INT8/FP8: op types whose inputs get Q/DQ besides Conv, ConvTranspose, MatMul and Gemm "
                             "(comma list, e.g. Add,GlobalAveragePool)")
    parser.add_argument("--int8-small-convs", action="store_true",
                        help="INT8/FP8: quantize also the Convs TensorRT has no INT8 kernel for (under 16 channels)")
    parser.add_argument("--int8-attention", action="store_true",
                        help="INT8/FP8: quantize also the two MatMuls of attention cores (kept float by default)")
    parser.add_argument("--block-ops", default="", help="op types kept FP32, e.g. Softmax,LayerNormalization")
    parser.add_argument("--block-nodes", default="", help="node names kept FP32 (comma list)")
    parser.add_argument("--fp32-reductions", action="store_true", help="keep Softmax/LayerNorm/Reduce* in FP32")
    parser.add_argument("--iterations", type=int, default=60, help="profiled inferences per variant (default 60)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved profiling rounds the iterations split into")
    parser.add_argument("--threads", type=int, help="onnxruntime intra-op threads")
    parser.add_argument("--target", action="append", metavar="SM", help="TensorRT-RTX target(s) (default sm86)")
    parser.add_argument("--no-engines", action="store_true", help="skip the TensorRT-RTX engine builds")
    parser.add_argument("--no-localize", action="store_true", help="skip per-tensor error localisation")
    parser.add_argument("--out-dir", metavar="DIR", help="where variants go (default MODEL_STEM.precision/ beside it)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")


def _onnx_op(op_type: str) -> bool:
    import onnx.defs

    return bool(onnx.defs.has(op_type))


def _options(args: argparse.Namespace) -> Any:
    from trtstudio.backends.base import parse_shapes
    from trtstudio.errors import InputError
    from trtstudio.precision.sweep import SweepOptions, parse_variants

    if args.iterations < 1 or args.calib_samples < 1 or args.rounds < 1:
        raise InputError(None, "--iterations, --rounds and --calib-samples must be positive")
    split = lambda text: tuple(x.strip() for x in (text or "").split(",") if x.strip())  # noqa: E731
    unknown = [op for op in split(args.int8_ops) if not _onnx_op(op)]
    if unknown:
        raise InputError("--int8-ops", f"not ONNX op types: {', '.join(unknown)} (e.g. Add,GlobalAveragePool)")
    return SweepOptions(
        variants=parse_variants(args.variants), calib=args.calib, val=args.val, shapes=parse_shapes(args.shapes),
        method=args.calib_method, block_ops=split(args.block_ops), block_nodes=split(args.block_nodes),
        fp32_reductions=args.fp32_reductions, out_dir=args.out_dir, iterations=args.iterations,
        threads=args.threads, calib_limit=args.calib_samples, rounds=args.rounds,
        build_engines=False if args.no_engines else None, targets=tuple(args.target or ("sm86",)),
        localize=not args.no_localize, int8_ops=split(args.int8_ops), int8_small_convs=args.int8_small_convs,
        int8_attention=args.int8_attention,
    )


def _cell(value: Any, fmt: str) -> str:
    width = int("".join(ch for ch in fmt.split(".")[0].split(",")[0] if ch.isdigit()) or 0)
    return "-".rjust(width) if value is None else format(value, fmt)


def format_table(doc: dict[str, Any]) -> str:
    """The sweep as a text table for people."""
    head = f"{'variant':8} {'median ms':>10} {'p99 ms':>9} {'inf/s':>9} {'model':>10} {'engine':>10} " \
           f"{'cosine':>9} {'max abs':>9} {'top1':>6}  result"
    lines = [*(doc.get("story") or []), *([""] if doc.get("story") else []), head, "-" * len(head)]
    for v in doc["variants"]:
        lat = v.get("latency_ms") or {}
        acc = v.get("accuracy") or {}
        result = "error: " + v["error"] if v.get("error") else ("pass" if v.get("passed") else "FAIL")
        lines.append(
            f"{v['name']:8} {_cell(lat.get('median'), '10.3f')} {_cell(lat.get('p99'), '9.3f')} "
            f"{_cell(v.get('throughput'), '9.1f')} {_cell(v.get('model_bytes'), '10,d')} "
            f"{_cell(v.get('engine_bytes'), '10,d')} {_cell(acc.get('cosine'), '9.5f')} "
            f"{_cell(acc.get('max_abs'), '9.3g')} {_cell(acc.get('top1'), '6.3f')}  {result}"
        )
        for reason in v.get("reasons", []):
            lines.append(f"           fails: {reason}")
        if v.get("first_over"):
            f = v["first_over"]
            lines.append(f"           error first over threshold at {f['node']} ({f['op_type']}, rel {f['rel']:.3g})")
        if v.get("layer_precisions"):
            lines.append("           engine layers: " + ", ".join(f"{k} {n}" for k, n in sorted(v["layer_precisions"].items())))
        for note in v.get("notes", []):
            lines.append(f"           note: {note}")
    lines.append("")
    lines.extend(f"note: {n}" for n in doc.get("notes", []))
    lines.append(f"recommendation: {doc['recommendation']}")
    if doc.get("versions"):
        lines.append("computed with: " + ", ".join(f"{k} {v or '?'}" for k, v in doc["versions"].items()))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run the sweep; exit 1 when a variant could not be made or run."""
    from trtstudio.graph.model import load_model
    from trtstudio.precision.state import PrecisionState
    from trtstudio.precision.sweep import run_sweep

    options = _options(args)
    load_model(args.model, infer_shapes=False)  # a bad model is one line before any progress is printed
    state = PrecisionState(None if args.json else lambda p: print(f"[{p['phase']}] {p['message']}", file=sys.stderr))
    result = run_sweep(args.model, options, state)
    from trtstudio.commands._emit import emit

    emit(result.to_json(), args.json, format_table)
    return 1 if any(v.error for v in result.variants) else 0
