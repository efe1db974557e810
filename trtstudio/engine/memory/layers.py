"""Per layer: each layer's activation and weight bytes, with the verbose log's persistent and
scratch bytes (:func:`layer_rows`); the activation bytes alive along the layer order (:func:`live_memory`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from trtstudio.engine.memory.log import Line
from trtstudio.engine.model import Layer, TensorDesc
from trtstudio.engine.summary import _constant_bytes, tensor_bytes


def _weight_bytes(lay: Layer) -> int | None:
    w, b = lay.constants()
    total = None
    for v in (w, b):
        n = _constant_bytes(v)
        if n is not None:
            total = (total or 0) + n
    return None if total is None else int(math.ceil(total))


def _out_bytes(tensors: Iterable[TensorDesc]) -> int | None:
    sized = [s for s in map(tensor_bytes, tensors) if s is not None]
    return int(math.ceil(sum(sized))) if sized else None


def layer_rows(layers: Sequence[Layer], log_layers: Sequence[Line] = (), source: str = "") -> list[dict[str, Any]]:
    """Per layer: ``activation_bytes`` (its outputs), ``weight_bytes`` (Weights + Bias), and where a
    verbose log gives them, ``host_persistent``, ``device_persistent`` and ``scratch`` (its
    workspace). Layers the log lists that the layer information lacks follow as rows of their own."""
    by_name = {line.key: line for line in log_layers}
    rows = []
    seen = set()
    for lay in layers:
        row: dict[str, Any] = {"index": lay.index, "name": lay.name, "activation_bytes": _out_bytes(lay.outputs),
                               "weight_bytes": _weight_bytes(lay)}
        line = by_name.get(lay.name)
        if line is not None:
            seen.add(lay.name)
            row.update({k: line.extra[k] for k in ("host_persistent", "device_persistent", "scratch")})
            row["source"] = f"{source}:{line.number}"
        rows.append(row)
    for line in log_layers:
        if line.key not in seen:
            rows.append({"index": None, "name": line.key, "activation_bytes": None, "weight_bytes": None,
                         **{k: line.extra[k] for k in ("host_persistent", "device_persistent", "scratch")},
                         "source": f"{source}:{line.number}"})
    return rows


def live_memory(layers: Sequence[Layer], io_outputs: Iterable[str] = (), alive_top: int = 20) -> dict[str, Any] | None:
    """Activation bytes alive at each layer (layer order, no sharing): a tensor lives from the layer
    that writes it (an engine input from the first) to the last layer that reads it (an engine
    output, or a tensor nobody reads, to the end). ``bytes`` per layer, ``peak_bytes``,
    ``peak_index``/``peak_layer``, ``alive_at_peak`` (the largest ``alive_top`` tensors, bytes),
    ``unsized`` (tensors of unknown shape or type, left out). None without layers."""
    import numpy as np

    n = len(layers)
    if not n:
        return None
    start: dict[str, int] = {}
    end: dict[str, int] = {}
    size: dict[str, float] = {}
    for i, lay in enumerate(layers):
        for t in lay.inputs:
            name = t.name
            if name not in start:
                start[name] = 0
                size[name] = tensor_bytes(t) or -1.0
            end[name] = i
        for t in lay.outputs:
            name = t.name
            if name not in start:
                start[name] = i
                size[name] = tensor_bytes(t) or -1.0
            end.setdefault(name, i)
    for name in io_outputs:
        if name in end:
            end[name] = n - 1
    read = {t.name for lay in layers for t in lay.inputs}
    for name in start:
        if name not in read:
            end[name] = n - 1
    names = [k for k in start if size[k] >= 0]
    unsized = len(start) - len(names)
    delta = np.zeros(n + 1)
    s = np.fromiter((start[k] for k in names), dtype=np.int64, count=len(names))
    e = np.fromiter((end[k] for k in names), dtype=np.int64, count=len(names))
    b = np.fromiter((size[k] for k in names), dtype=float, count=len(names))
    np.add.at(delta, s, b)
    np.add.at(delta, e + 1, -b)
    alive = np.cumsum(delta[:n])
    peak = int(np.argmax(alive)) if n else 0
    at_peak = [(names[j], int(b[j])) for j in np.nonzero((s <= peak) & (e >= peak))[0]]
    at_peak.sort(key=lambda kv: -kv[1])
    return {"bytes": [int(round(v)) for v in alive.tolist()], "peak_bytes": int(round(float(alive[peak]))),
            "peak_index": peak, "peak_layer": layers[peak].name,
            "alive_at_peak": [{"tensor": k, "bytes": v} for k, v in at_peak[:alive_top]],
            "alive_count": len(at_peak), "unsized": unsized}
