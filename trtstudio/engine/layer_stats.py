"""Per-layer figures for plots: memory (weights and activations) and convolution work (MACs and
arithmetic intensity), as TREx's notebooks drew them. The Python API (``EnginePlan.memory_by_layer``,
``conv_macs``) and the reports' Layers section both read them from here."""

from __future__ import annotations

from typing import Any

import numpy as np

from trtstudio.engine.diagnose import is_conv
from trtstudio.engine.model import Layer, layer_ms

__all__ = ["conv_macs", "layer_ms", "memory_by_layer"]  # layer_ms: engine.model's, here for the diff and API


def memory_by_layer(layers: list[Layer]) -> list[dict[str, Any]]:
    """Each layer's weights (TREx's count x type size, bias included) and activations (its input and
    output tensors) in bytes, as ``engine.summary.layer_memory`` sums them for the engine."""
    from trtstudio.engine.summary import layer_memory

    out = []
    for lay in layers:
        m = layer_memory([lay])
        out.append({"layer": lay.name, "weights": m.get("layer_weights", 0) + m.get("layer_bias", 0),
                    "activations": m.get("layer_activations", 0)})
    return out


def conv_macs(layers: list[Layer]) -> list[dict[str, Any]]:
    """Per convolution whose detailed record gives its geometry: multiply-accumulates per inference
    (batch x out channels x out H x W x in channels / groups x kernel area), the bytes it moves (as
    :func:`memory_by_layer`) and its arithmetic intensity (2 x MACs per byte: above the GPU's
    FLOP/byte ratio it is compute bound, below it memory bound)."""
    convs = [lay for lay in layers if is_conv(lay) and lay.inputs and lay.outputs]
    mem = {r["layer"]: r for r in memory_by_layer(convs)}
    out = []
    for lay in convs:
        attrs = lay.attrs
        kernel, groups = attrs.get("Kernel"), attrs.get("Groups") or 1
        o, i = lay.outputs[0].shape, lay.inputs[0].shape
        if not (isinstance(kernel, list) and isinstance(o, list) and isinstance(i, list)
                and all(isinstance(d, int) for d in (*kernel, *o, *i)) and len(o) >= 3 and len(i) >= 2):
            continue
        out_dims, in_ch, k = [int(d) for d in o], int(i[1]), [int(d) for d in kernel]
        macs = int(np.prod(out_dims, dtype=np.int64)) * (in_ch // max(int(groups), 1)) * int(np.prod(k, dtype=np.int64))
        moved = mem[lay.name]["weights"] + mem[lay.name]["activations"]
        out.append({"layer": lay.name, "macs": macs, "bytes": moved,
                    "arithmetic_intensity": 2 * macs / moved if moved else None, "ms": layer_ms(lay)})
    return out
