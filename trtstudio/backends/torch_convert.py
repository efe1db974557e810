"""ONNX to PyTorch for the torch backends: onnx2torch, with constant subgraphs folded first where it needs
that, and converters for ops it lacks.

onnx2torch takes a model as it is first (the fast path: a YOLOv8n export converts in about 0.1 s). When
that fails, the model's constant subgraphs are folded into initializers with onnxslim (constant folding,
dead-node elimination and shape inference only: no fusions, so node names and numerics stay): weights
held in ``Constant`` nodes (paddle2onnx exports), weights made by ``ConstantOfShape`` (ONNX's light test
models), and shape chains over static shapes. A model that still cannot convert is a BackendError that
names each node and why, and names ``--backend ort`` as the runtime that runs it.

Converters added to onnx2torch's registry (it lacks them; real models use them):

- ``GlobalMaxPool`` (Keras exports such as magika's classifier)
- ``LSTM`` opsets 7 and 14 (forward, reverse and bidirectional; no peepholes, clip or custom
  activations; the sequence model of silero-vad)

Not converted (met in real models, reported by name): ``If`` and ``Loop`` (control flow: onnx2torch
builds one static graph), and any op onnx2torch's registry has no entry for.
"""

from __future__ import annotations

import os
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trtstudio.backends.base import require_module
from trtstudio.errors import BackendError, InputError

PIP_FOLD = "pip install onnxslim"
# why an op has no converter, where trtstudio knows more than "not in onnx2torch's registry"
_WHY = {
    "If": "control flow: onnx2torch builds one static graph, and this branch depends on an input's value",
    "Loop": "control flow: onnx2torch builds one static graph",
    "Scan": "control flow: onnx2torch builds one static graph",
}
_FOLD_SKIP = ["graph_fusion", "subexpression_elimination", "weight_tying"]  # fold only: names and numerics stay


@dataclass
class Converted:
    """A converted module, the ONNX model it was converted from (folded or not) and what it took."""

    module: Any
    model: Any  # onnx.ModelProto actually converted
    times: dict[str, float] = field(default_factory=dict)  # read_ms, fold_ms, convert_ms
    notes: list[str] = field(default_factory=list)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class _LazyTorchvision(types.ModuleType):
    """Stands in for ``torchvision`` / ``torchvision.ops`` while onnx2torch is imported: onnx2torch imports
    torchvision only for its NonMaxSuppression and RoiAlign converters, and torchvision imports
    torch._dynamo (1.7 s of onnx2torch's 2.0 s import, measured here; 4-6 s on the GPU machines). Any
    attribute asked of it imports the real module then, so those converters still work."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(_real_module(self.__name__), name)


def _real_module(name: str) -> Any:
    import importlib

    for key in ("torchvision.ops", "torchvision"):
        if isinstance(sys.modules.get(key), _LazyTorchvision):
            del sys.modules[key]
    return importlib.import_module(name)


def _lazy_roi_align(*args: Any, **kwargs: Any) -> Any:
    return _real_module("torchvision.ops").roi_align(*args, **kwargs)


def _import_without_torchvision() -> Any:
    """``import onnx2torch`` with torchvision deferred until a converter uses it (see _LazyTorchvision)."""
    import importlib

    if "onnx2torch" in sys.modules or "torchvision" in sys.modules:
        return importlib.import_module("onnx2torch")
    tv, ops = _LazyTorchvision("torchvision"), _LazyTorchvision("torchvision.ops")
    tv.ops = ops  # type: ignore[attr-defined]
    ops.roi_align = _lazy_roi_align  # type: ignore[attr-defined]
    sys.modules["torchvision"], sys.modules["torchvision.ops"] = tv, ops
    try:
        return importlib.import_module("onnx2torch")
    finally:
        for key, stub in (("torchvision.ops", ops), ("torchvision", tv)):
            if sys.modules.get(key) is stub:
                del sys.modules[key]


def import_onnx2torch(backend: str) -> Any:
    """onnx2torch with trtstudio's converters registered; a missing or broken install is a BackendError."""
    try:
        require_module("torch", backend, "pip install torch")
        o2t = _import_without_torchvision()
    except ImportError as exc:
        raise BackendError(f"backend '{backend}' needs the Python module 'onnx2torch' ({exc}); "
                           "install it: pip install onnx2torch") from None
    except BackendError:
        raise
    except Exception as exc:  # noqa: BLE001 - onnx2torch imports torchvision, which may not match torch
        raise BackendError(f"onnx2torch is installed but does not import here: {_first_line(exc)}") from None
    from trtstudio.backends import torch_converters

    torch_converters.register()
    return o2t


def convert_onnx(path: str | os.PathLike[str], backend: str) -> Converted:
    """Read ``path`` and convert it; fold constants and retry when onnx2torch refuses the model as it is."""
    import onnx

    o2t = import_onnx2torch(backend)
    t0 = time.perf_counter()
    try:
        model = onnx.load(str(path))
    except Exception as exc:  # noqa: BLE001 - onnx raises DecodeError and others
        raise InputError(path, f"not a readable ONNX model: {_first_line(exc)}") from None
    t1 = time.perf_counter()
    times = {"read_ms": (t1 - t0) * 1e3}
    try:
        module = _one_per_output(o2t.convert(model), model)
        times["convert_ms"] = (time.perf_counter() - t1) * 1e3
        return Converted(module, model, times)
    except Exception as exc:  # noqa: BLE001 - onnx2torch raises KeyError, NotImplementedError and others
        first = exc
    folded, fold_note = _fold(model, backend)
    t2 = time.perf_counter()
    times["fold_ms"] = (t2 - t1) * 1e3
    if folded is None:
        raise BackendError(_refusal(path, model, first, fold_note))
    try:
        module = _one_per_output(o2t.convert(folded), folded)
    except Exception as exc:  # noqa: BLE001
        raise BackendError(_refusal(path, folded, exc, fold_note)) from None
    times["convert_ms"] = (time.perf_counter() - t2) * 1e3
    note = (f"onnx2torch could not take the model as it is ({_first_line(first)}); constant subgraphs folded "
            f"first with onnxslim: {len(model.graph.node)} nodes -> {len(folded.graph.node)}")
    return Converted(module, folded, times, [note])


def _one_per_output(module: Any, model: Any) -> Any:
    """The module returning one tensor per graph output, in the graph's order. onnx2torch returns a
    multi-output node's whole result when any of its outputs is a graph output (an LSTM's Y, Y_h and
    Y_c where the graph outputs Y_h and Y_c), and each node once however many of its outputs are
    graph outputs."""
    import operator

    from onnx2torch.onnx_graph import OnnxGraph

    graph = OnnxGraph(model.graph)
    producers = {out: (name, node) for name, node in graph.nodes.items() for out in node.output_values}
    wanted = [producers.get(o.name) for o in model.graph.output]
    if not any(p is not None and len(p[1].output_values) > 1 for p in wanted):
        return module
    fx_nodes = {str(n.target): n for n in module.graph.nodes if n.op == "call_module"}
    old = next(n for n in module.graph.nodes if n.op == "output")
    outs = []
    with module.graph.inserting_before(old):
        for o, p in zip(model.graph.output, wanted, strict=True):
            if p is None or p[0] not in fx_nodes:
                return module  # an output straight from an input or initializer: keep onnx2torch's form
            name, node = p
            fx = fx_nodes[name]
            outs.append(module.graph.call_function(operator.getitem, (fx, node.output_values.index(o.name)))
                        if len(node.output_values) > 1 else fx)
    module.graph.erase_node(old)
    module.graph.output(tuple(outs) if len(outs) > 1 else outs[0])
    module.recompile()
    return module


def _fold(model: Any, backend: str) -> tuple[Any | None, str]:
    """The model with its constant subgraphs folded (None and why not, when onnxslim is missing or fails)."""
    try:
        slim = require_module("onnxslim", backend, PIP_FOLD)
    except BackendError:
        return None, f"constant folding needs onnxslim ({PIP_FOLD})"
    import onnx

    copy = onnx.ModelProto()
    copy.CopyFrom(model)  # onnxslim edits the model it is given
    try:
        folded = slim.slim(copy, skip_optimizations=_FOLD_SKIP)
    except Exception as exc:  # noqa: BLE001 - onnxslim raises what onnx and its graph library raise
        return None, f"onnxslim could not fold it: {_first_line(exc)}"
    if folded is None:
        return None, "onnxslim could not fold it"
    return folded, ""


def unconvertible(model: Any) -> list[tuple[str, str, str]]:
    """(node name, op, why) for each node onnx2torch has no converter for, or whose converter refuses it."""
    from onnx2torch.node_converters import get_converter
    from onnx2torch.onnx_graph import OnnxGraph

    opsets = {o.domain: o.version for o in model.opset_import}
    opsets.setdefault("ai.onnx", opsets.get("", 1))
    graph = OnnxGraph(model.graph)
    found: list[tuple[str, str, str]] = []
    for name, node in graph.nodes.items():
        op = node.operation_type
        version = opsets.get(node.domain, opsets.get("", 1))
        label = f"{op}-{version}" if not node.domain else f"{node.domain}.{op}-{version}"
        try:
            converter = get_converter(operation_type=op, version=version, domain=node.domain)
        except NotImplementedError:
            found.append((node.name or name, op, _WHY.get(op, f"onnx2torch has no converter for {label}")))
            continue
        try:
            converter(node, graph)
        except Exception as exc:  # noqa: BLE001 - a converter that refuses this node's attributes or inputs
            found.append((node.name or name, op, f"{label}: {_first_line(exc)}"))
    return found


def _refusal(path: str | os.PathLike[str], model: Any, exc: BaseException, fold_note: str) -> str:
    """One line: which nodes cannot convert and why, and the backend that runs the model."""
    try:
        bad = unconvertible(model)
    except Exception:  # noqa: BLE001 - the listing is a courtesy; the conversion error still stands
        bad = []
    if bad:
        shown = "; ".join(f"{op} '{name}' ({why})" for name, op, why in bad[:5])
        more = f"; and {len(bad) - 5} more" if len(bad) > 5 else ""
        what = f"{len(bad)} node(s) do not convert: {shown}{more}"
    else:
        what = f"the conversion failed: {_first_line(exc)}"
    extra = f" ({fold_note})" if fold_note else ""
    return f"{Path(path)}: onnx2torch cannot convert this model: {what}{extra}; --backend ort runs it"


# Inputs that onnx2torch's modules read on the host (``tolist``, ``item``, ``torch.Size``): a constant fed
# only to these stays on the CPU when the module moves to CUDA, so reading it costs no device-to-host
# synchronisation (and a CUDA graph can capture the call). op -> input positions
_HOST_SLOTS: dict[str, tuple[int, ...]] = {
    "Reshape": (1,), "Resize": (1, 2, 3), "Upsample": (1,), "Split": (1,), "Squeeze": (1,), "Unsqueeze": (1,),
    "Slice": (1, 2, 3, 4), "Expand": (1,), "Tile": (1,), "Pad": (1,), "TopK": (1,), "Range": (0, 1, 2),
    "ConstantOfShape": (0,), "ReduceSum": (1,), "ReduceMean": (1,), "ReduceMax": (1,), "ReduceMin": (1,),
    "ReduceProd": (1,), "ReduceL1": (1,), "ReduceL2": (1,), "ReduceLogSumExp": (1,), "ReduceSumSquare": (1,),
}


def host_constants(module: Any, model: Any) -> list[str]:
    """Names (``initializers.onnx_initializer_N``) of the converted module's constants that only feed
    inputs onnx2torch reads on the host (shapes, axes, scales, split sizes)."""
    from onnx2torch.onnx_graph import OnnxGraph

    ops = {name: node.operation_type for name, node in OnnxGraph(model.graph).nodes.items()}
    host: dict[str, bool] = {}
    for fx_node in module.graph.nodes:
        if fx_node.op != "call_module":
            continue
        op = ops.get(str(fx_node.target), "")
        positions = _HOST_SLOTS.get(op, ())
        uses = [(i, a) for i, a in enumerate(fx_node.args)]
        uses += [(-1, a) for a in fx_node.kwargs.values()]  # skipped optional inputs: later positions
        for i, arg in uses:
            if getattr(arg, "op", None) != "get_attr":
                continue
            on_host = (i in positions) or (i == -1 and bool(positions) and positions != (0,))
            host[str(arg.target)] = host.get(str(arg.target), True) and on_host
    return [name for name, only_host in host.items() if only_host]


def specialize(model: Any, shapes: dict[str, tuple[int, ...]], backend: str) -> Converted:
    """The model converted again with its inputs fixed to ``shapes`` and every shape computation folded
    (what a CUDA graph needs: no host work decided by tensor values at run time)."""
    o2t = import_onnx2torch(backend)
    try:
        slim = require_module("onnxslim", backend, PIP_FOLD)
    except BackendError:
        raise BackendError(f"--cuda-graph on an ONNX model folds its shape computations first: {PIP_FOLD}") from None
    import onnx

    t0 = time.perf_counter()
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    del copy.graph.value_info[:]  # shapes inferred for the dynamic model would keep its shape chains
    for vi in copy.graph.input:
        if vi.name in shapes:
            dims = vi.type.tensor_type.shape.dim
            for d, n in zip(dims, shapes[vi.name], strict=False):
                d.ClearField("dim_param")
                d.dim_value = int(n)
    try:
        folded = slim.slim(copy, skip_optimizations=_FOLD_SKIP)
        t1 = time.perf_counter()
        module = _one_per_output(o2t.convert(folded), folded)
    except Exception as exc:  # noqa: BLE001
        raise BackendError(f"folding the model's shapes for a CUDA graph failed: {_first_line(exc)}; "
                           "run without --cuda-graph") from None
    return Converted(module, folded, {"fold_ms": (t1 - t0) * 1e3, "convert_ms": (time.perf_counter() - t1) * 1e3})
