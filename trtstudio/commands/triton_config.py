"""``trtstudio triton-config MODEL -o REPO/NAME``: a Triton model-repository entry for what was profiled."""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path
from typing import Any

HELP = "write a Triton model-repository entry (config.pbtxt + 1/model.onnx or 1/model.plan) for an ONNX model or engine"
INPUTS = ("model", "onnx")

# ONNX element type -> Triton data type
_TYPES = {1: "TYPE_FP32", 2: "TYPE_UINT8", 3: "TYPE_INT8", 4: "TYPE_UINT16", 5: "TYPE_INT16", 6: "TYPE_INT32",
          7: "TYPE_INT64", 8: "TYPE_STRING", 9: "TYPE_BOOL", 10: "TYPE_FP16", 11: "TYPE_FP64", 12: "TYPE_UINT32",
          13: "TYPE_UINT64", 16: "TYPE_BF16"}


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="an ONNX model, or a serialized TensorRT engine (.engine/.plan) with --onnx")
    p.add_argument("-o", "--output", required=True, metavar="REPO/NAME", help="model folder to write (its name is the model's)")
    p.add_argument("--onnx", help="for an engine: the ONNX model it was built from (names, types and shapes of its I/O)")
    p.add_argument("--max-batch", type=int, default=None,
                   help="max_batch_size (default: 8 when the first dim of every input is dynamic, else 0)")
    p.add_argument("--no-dynamic-batching", action="store_true", help="leave out the dynamic_batching block")
    p.add_argument("--queue-delay-us", type=int, default=100, help="dynamic batching max queue delay (default 100)")
    p.add_argument("--instances", type=int, default=1, help="instances per GPU (default 1)")
    p.add_argument("--kind", choices=["gpu", "cpu"], default="gpu", help="instance kind (default gpu)")
    p.add_argument("--force", action="store_true", help="replace an existing folder")


def _io(onnx_path: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Triton's inputs and outputs of an ONNX model (the model's own view, backends.model_io)."""
    from trtstudio.backends.model_io import read_onnx
    from trtstudio.errors import InputError

    model = read_onnx(onnx_path)

    def rows(items: Any) -> list[dict[str, Any]]:
        out = []
        for t in items:
            if t.elem_type not in _TYPES:
                raise InputError(onnx_path, f"'{t.name}': element type {t.elem_type} has no Triton data type")
            out.append({"name": t.name, "data_type": _TYPES[t.elem_type], "dims": t.fixed_dims(-1)})
        return out

    return rows(model.inputs), rows(model.outputs)


def make_config(name: str, platform: str, inputs: list[dict[str, Any]], outputs: list[dict[str, Any]],
                max_batch: int | None, dynamic_batching: bool, queue_delay_us: int, instances: int,
                kind: str) -> tuple[str, int]:
    """The config.pbtxt text and the max_batch_size chosen. With batching, the first dim of each
    tensor is the batch dim and is left out of ``dims`` (Triton's convention)."""
    batchable = all(t["dims"] and t["dims"][0] == -1 for t in inputs + outputs)
    mb = (8 if batchable else 0) if max_batch is None else max_batch
    if mb > 0 and not batchable:
        raise ValueError("--max-batch > 0 needs a dynamic first dimension on every input and output")

    def block(key: str, items: list[dict[str, Any]]) -> str:
        parts = []
        for t in items:
            dims = t["dims"][1:] if mb > 0 else t["dims"]
            parts.append(f'  {{\n    name: "{t["name"]}"\n    data_type: {t["data_type"]}\n'
                         f'    dims: [ {", ".join(str(d) for d in dims) or "1"} ]\n  }}')
        return f"{key} [\n" + ",\n".join(parts) + "\n]\n"

    text = f'name: "{name}"\nplatform: "{platform}"\nmax_batch_size: {mb}\n'
    text += block("input", inputs) + block("output", outputs)
    text += f"instance_group [\n  {{\n    count: {instances}\n    kind: KIND_{kind.upper()}\n  }}\n]\n"
    if dynamic_batching and mb > 0:
        text += f"dynamic_batching {{\n  max_queue_delay_microseconds: {queue_delay_us}\n}}\n"
    return text, mb


def run(args: argparse.Namespace) -> int:
    from trtstudio.errors import InputError

    src = str(args.model)
    is_onnx = src.lower().endswith(".onnx")
    if not is_onnx and not args.onnx:
        raise InputError(src, "an engine does not say its inputs and outputs here: give --onnx MODEL.onnx, the "
                              "model it was built from")
    inputs, outputs = _io(src if is_onnx else args.onnx)
    out = Path(args.output)
    name = out.name
    if not name or name in (".", ".."):
        raise InputError(args.output, "give the model folder, REPO/NAME")
    if out.exists() and not args.force:
        raise InputError(args.output, "exists; add --force to replace it")
    if out.exists() and out.resolve() in Path(src).resolve().parents:
        raise InputError(args.output, f"holds the model given ({src}): copy the model elsewhere first")
    try:
        text, mb = make_config(name, "onnxruntime_onnx" if is_onnx else "tensorrt_plan", inputs, outputs,
                               args.max_batch, not args.no_dynamic_batching, args.queue_delay_us, args.instances,
                               args.kind)
    except ValueError as exc:
        raise InputError(src, str(exc)) from None
    if out.exists():
        shutil.rmtree(out)
    (out / "1").mkdir(parents=True)
    target = out / "1" / ("model.onnx" if is_onnx else "model.plan")
    shutil.copyfile(src, target)
    tmp = out / "config.pbtxt.tmp"
    tmp.write_text(text)
    os.replace(tmp, out / "config.pbtxt")
    print(f"wrote {out / 'config.pbtxt'} ({'onnxruntime_onnx' if is_onnx else 'tensorrt_plan'}, max_batch_size {mb}, "
          f"{len(inputs)} input(s), {len(outputs)} output(s)) and {target}")
    return 0
