"""The categories an engine's own information gives where no log did (:func:`fill_from_info`): the
readers' figures (``EngineInfo.memory``), the I/O buffers at their shapes, and TREx's naive
activation figure (every layer's inputs plus outputs), with the layers' weights."""

from __future__ import annotations

import math

from trtstudio.engine.memory.categories import NOT_RECORDED, Figure
from trtstudio.engine.model import EngineInfo, TensorDesc
from trtstudio.engine.summary import tensor_bytes

_INFO_KEYS = {"weights": "weights", "activation": "activations", "host_persistent": "host_persistent",
              "device_persistent": "device_persistent", "scratch": "scratch", "engine_size": "engine_size"}


def fill_from_info(figs: dict[str, Figure], info: EngineInfo, label: str, session: str | None) -> None:
    """Categories no log gave, from what the readers kept (``EngineInfo.memory``) and the layers."""
    where = f"{session}: the session's engine.memory" if session else "engine.memory (the readers' figures)"
    for key, name in _INFO_KEYS.items():
        v = info.memory.get(key)
        if figs[name].bytes is None and isinstance(v, int):
            figs[name] = Figure(name, v, f"{where}[{key!r}]")
    if figs["io"].bytes is None:
        figs["io"] = _io_figure(info, label)
    naive, weights = _naive_figure(info, label)
    figs["activations_naive"] = naive
    if figs["weights"].bytes is None and weights is not None:
        figs["weights"] = weights


def _io_figure(info: EngineInfo, label: str) -> Figure:
    """The I/O buffers at the first profile's max shapes (where recorded), else the tensors' shapes."""
    tensors = info.io_tensors
    if not tensors:
        return Figure("io")
    shapes = info.build_settings.get("profile_shapes")
    shapes = shapes if isinstance(shapes, dict) else {}
    total = 0.0
    maxed = 0
    for t in tensors:
        given = shapes.get(t.name)
        if isinstance(given, dict) and isinstance(given.get("MaxShape"), list):
            t = TensorDesc(t.name, given["MaxShape"], t.dtype, t.format)
            maxed += 1
        b = tensor_bytes(t)
        if b is None:
            return Figure("io", None, NOT_RECORDED, f"{t.name}: shape or type not known "
                                                    f"({t.shape}, {t.dtype}); no profile max shape recorded")
        total += b
    what = f"{len(tensors)} I/O tensors of {label}"
    what += f", {maxed} at the first profile's max shape" if maxed else " at their shapes"
    return Figure("io", int(math.ceil(total)), what)


def _naive_figure(info: EngineInfo, label: str) -> tuple[Figure, Figure | None]:
    """TREx's activation sum, and the layers' weights where no log gave them."""
    from trtstudio.engine.summary import layer_memory

    if not info.layers or not info.detailed:
        return Figure("activations_naive"), None
    # the sums an analysis added already (engine.summary.add_layer_memory: the window's diagnosis), else made here
    mem = info.memory if "layer_activations" in info.memory else layer_memory(info.layers)
    where = f"{label}: {len(info.layers)} layers"
    naive = Figure("activations_naive")
    if "layer_activations" in mem:
        naive = Figure("activations_naive", mem["layer_activations"],
                       f"{where}, every layer's inputs + outputs (engine.summary.layer_memory, TREx's figure)",
                       "no memory shared between tensors: not what TensorRT allocates")
    keys = [k for k in ("layer_weights", "layer_bias", "layer_constants") if k in mem]
    weights = None
    if keys:
        weights = Figure("weights", sum(mem[k] for k in keys), f"{where}, Weights/Bias counts x type size "
                         f"({', '.join(keys)})", "from the layer information: regions that list no weights "
                         "(Myelin) are missing")
    return naive, weights
