"""The shape planner: one shape plan for every tool, from the user's shapes, data, metadata and graph.

``profile``, ``build``, ``precision``, ``check`` and the window ask :func:`plan_shapes` instead of filling
dynamic dimensions with 1 on their own. Sources, first match wins per dimension:

1. the user: ``--shapes`` / ``--min-shapes`` / ``--opt-shapes`` / ``--max-shapes`` or a value the user
   edited in a window's table (the only user source: a table's pre-filled values are the plan's own);
2. a data file the user gave (its arrays are what will run, so their shapes are given too);
3. the model's metadata (Ultralytics ``imgsz``/``batch``, and similar keys other exporters write);
4. what the graph pins: a dimension named like one already fixed (same symbol), the constant weight of
   the first Conv/MatMul/Gemm, a constant Reshape/Expand shape;
5. a default, with a warning that names the input, the dimension and the flag to set (with
   ``probe=True``, sizes onnxruntime runs: :mod:`trtstudio.backends.shapes.probe`).

Shape-tensor inputs (integer vectors that feed Reshape/Expand/ConstantOfShape/... shape slots) get
*values* in the plan: TensorRT needs them in the optimization profile (``set_shape_input``) and a run
needs values that make sense (random integers do not).

The model's inputs come from :mod:`trtstudio.backends.model_io` (callers pass a path, a
``ModelProto`` or an :class:`~trtstudio.backends.model_io.OnnxModel` already read). Qt-free;
imports ``onnx`` lazily.
"""

from __future__ import annotations

import os
from typing import Any

from trtstudio.backends.model_io import OnnxModel, onnx_model
from trtstudio.backends.shapes.plan import (
    DEFAULT_BATCH,
    DEFAULT_BATCH_MAX,
    DEFAULT_SIZES,
    InputShape,
    Shape,
    ShapePlan,
    Triple,
)
from trtstudio.backends.shapes.probe import PROBE_SOURCE, probe
from trtstudio.backends.shapes.text import decl_text as _x_decl
from trtstudio.backends.shapes.text import metadata_ints as _ints
from trtstudio.backends.shapes.text import shape_text as _x
from trtstudio.errors import InputError

# Metadata keys exporters write for the input size / batch (Ultralytics: imgsz, batch).
SIZE_KEYS = ("imgsz", "img_size", "image_size", "input_size", "input_shape", "imgsize", "img_shape", "size")
BATCH_KEYS = ("batch", "batch_size", "max_batch_size")
_BATCH_NAMES = {"n", "b", "batch", "batch_size", "batchsize", "bs", "nbatch", "num_batch", "unk__0", "n_batch"}
_SHAPE_SLOTS = {  # op -> {input index: what the values mean}
    "Reshape": {1: "reshape"},
    "Expand": {1: "ones"},
    "ConstantOfShape": {0: "ones"},
    "Tile": {1: "ones"},
    "Resize": {3: "sizes"},
    "Upsample": {},
    "Slice": {1: "zeros", 2: "ends", 3: "axes", 4: "ones"},
    "Range": {},
}
_PASS_OPS = {"Cast", "Identity"}
_ELEMENTWISE = {
    "Relu", "Sigmoid", "Tanh", "Cast", "Identity", "Clip", "LeakyRelu", "HardSigmoid", "HardSwish", "Neg", "Abs",
    "Exp", "Log", "Sqrt", "Erf", "Softplus", "Elu", "Selu", "Gelu", "Mish", "Dropout", "Sub", "Add", "Mul", "Div",
    "BatchNormalization", "InstanceNormalization",
}
_INT_DTYPES = {"int32", "int64"}


def read_metadata(proto: Any) -> dict[str, str]:
    """The model's ``metadata_props`` as a dict."""
    return {p.key: p.value for p in proto.metadata_props}


def _image_axes(dims: list[int | str]) -> tuple[int, int] | None:
    """(H axis, W axis) of an image-like rank-4 input: NCHW with C in 1..4 or NHWC with C in 1..4."""
    if len(dims) != 4:
        return None
    if isinstance(dims[1], int) and 1 <= dims[1] <= 4:
        return 2, 3
    if isinstance(dims[3], int) and 1 <= dims[3] <= 4:
        return 1, 2
    if all(not isinstance(d, int) for d in dims[2:]):
        return 2, 3
    return None


def _is_batch_axis(dims: list[int | str], axis: int) -> bool:
    if axis != 0 or len(dims) < 2:
        return False
    sym = str(dims[0]).lower()
    generated = sym.startswith(("unk__", "dim_", "p2o.dynamicdimension", "dynamicdimension"))
    return sym in _BATCH_NAMES or "batch" in sym or sym == "?" or generated or len(dims) >= 3


# -- the plan ------------------------------------------------------------------------------------
class _Planner:
    def __init__(self, model: OnnxModel) -> None:
        self.model = model
        self.proto = model.proto
        self.graph = model.proto.graph
        self.names = [t.name for t in model.inputs]
        self.model_name = model.name
        self.declared: dict[str, list[int | str]] = {t.name: list(t.dims) for t in model.inputs}
        self.dtypes = {t.name: t.dtype for t in model.inputs}
        self.dims: dict[str, list[tuple[int, int, int] | None]] = {
            n: [(d, d, d) if isinstance(d, int) else None for d in dims] for n, dims in self.declared.items()
        }
        self.sources: dict[str, list[str]] = {
            n: ["model" if isinstance(d, int) else "" for d in dims] for n, dims in self.declared.items()
        }
        self.values: dict[str, tuple[Triple, str]] = {}
        self.warnings: list[str] = []
        self.notes: list[str] = []
        self.consumers: dict[str, list[tuple[Any, int]]] = {}
        for node in self.graph.node:
            for k, t in enumerate(node.input):
                if t:
                    self.consumers.setdefault(t, []).append((node, k))
        self.inits = {i.name: i for i in self.graph.initializer}
        self.const_nodes = {n.output[0]: n for n in self.graph.node if n.op_type == "Constant" and n.output}
        self.shape_tensors = {n: slot for n in self.names if (slot := self._shape_slot(n)) is not None}

    # helpers ---------------------------------------------------------------------------------
    def _const(self, name: str) -> Any:
        """The constant array of tensor ``name`` (initializer or Constant node), else None."""
        from onnx import numpy_helper

        try:
            if name in self.inits:
                init = self.inits[name]
                if init.data_location == init.EXTERNAL:
                    return None
                return numpy_helper.to_array(init)
            node = self.const_nodes.get(name)
            if node is not None:
                for a in node.attribute:
                    if a.name == "value":
                        return numpy_helper.to_array(a.t)
        except (ValueError, TypeError):
            return None
        return None

    def _set(self, name: str, axis: int, triple: tuple[int, int, int], source: str) -> bool:
        if self.dims[name][axis] is not None:
            return False
        self.dims[name][axis] = triple
        self.sources[name][axis] = source
        return True

    def _shape_slot(self, name: str) -> tuple[str, Any, int] | None:
        """(meaning, consumer node, slot) when input ``name`` is an integer vector used as a shape."""
        if self.dtypes[name] not in _INT_DTYPES or len(self.declared[name]) > 1:
            return None
        frontier, seen = [name], set()
        while frontier:
            t = frontier.pop()
            if t in seen:
                continue
            seen.add(t)
            for node, k in self.consumers.get(t, []):
                meaning = _SHAPE_SLOTS.get(node.op_type, {}).get(k)
                if meaning is not None:
                    return meaning, node, k
                if node.op_type in _PASS_OPS:
                    frontier.extend(o for o in node.output if o)
        return None

    # sources ---------------------------------------------------------------------------------
    def apply_user(self, given: dict[str, Any], source: str) -> None:
        for name, value in given.items():
            if name not in self.dims:
                raise InputError(source, f"unknown input '{name}'; the model takes {', '.join(self.names) or 'no inputs'}")
            triple = _as_triple(value)
            takes_values = name in self.shape_tensors or (self.dtypes[name] in _INT_DTYPES and not self.declared[name])
            if takes_values and self._as_values(name, triple, source):
                continue
            declared = self.declared[name]
            if any(len(s) != len(declared) for s in triple):
                raise InputError(
                    source, f"input '{name}' has rank {len(declared)} ({_x_decl(declared)}), got {_x(triple[1])}"
                )
            for axis, want in enumerate(declared):
                got = (triple[0][axis], triple[1][axis], triple[2][axis])
                if isinstance(want, int):
                    if any(g != want for g in got):
                        raise InputError(source, f"input '{name}' is fixed at {_x_decl(declared)}, got {_x(triple[1])}")
                    continue
                if not got[0] <= got[1] <= got[2]:
                    raise InputError(source, f"input '{name}' axis {axis}: need min <= opt <= max, got {got}")
                self._set(name, axis, got, source)

    def _as_values(self, name: str, triple: Triple, source: str) -> bool:
        """A shape-tensor input given trtexec-style (its values); False when the text is its shape."""
        declared = self.declared[name]
        lengths = {len(v) for v in triple}
        if not declared:  # a scalar: one value, or the empty shape
            if lengths == {1}:
                self.values[name] = (triple, source)
                return True
            return False
        length = declared[0]
        if not isinstance(length, int):
            return False  # a dynamic-length vector: the text gives its length
        if lengths != {length}:
            raise InputError(source, f"shape-tensor input '{name}' takes {length} values, got {_x(triple[1])}")
        self.values[name] = (triple, source)
        return True

    def apply_data(self, data: dict[str, Any], source: str) -> None:
        for name, arr in data.items():
            if name not in self.dims:
                continue
            shape = tuple(int(d) for d in getattr(arr, "shape", ()))
            if len(shape) != len(self.declared[name]):
                continue
            for axis, d in enumerate(shape):
                self._set(name, axis, (d, d, d), source)
            if name in self.shape_tensors and name not in self.values:
                import numpy as np

                vals = tuple(int(v) for v in np.asarray(arr).reshape(-1))
                self.values[name] = ((vals, vals, vals), source)

    def propagate_symbols(self) -> None:
        """A symbol fixed on one input fixes it wherever it appears (same name = same size)."""
        known: dict[str, tuple[tuple[int, int, int], str]] = {}
        for n in self.names:
            for axis, d in enumerate(self.declared[n]):
                if isinstance(d, str) and d != "?" and self.dims[n][axis] is not None and d not in known:
                    known[d] = (self.dims[n][axis], n)  # type: ignore[assignment]
        for n in self.names:
            for axis, d in enumerate(self.declared[n]):
                if isinstance(d, str) and d in known and known[d][1] != n:
                    triple, owner = known[d]
                    self._set(n, axis, triple, f"same dim '{d}' as input '{owner}'")

    def apply_metadata(self) -> None:
        meta = self.model.metadata
        lower = {k.lower(): v for k, v in meta.items()}
        size = next(((k, v) for k in SIZE_KEYS if (v := _ints(lower.get(k, "") or "")) is not None), None)
        batch = next(((k, v) for k in BATCH_KEYS if (v := _ints(lower.get(k, "") or "")) is not None), None)
        image_inputs = [n for n in self.names if _image_axes(self.declared[n]) is not None]
        if size is not None and image_inputs:
            key, vals = size
            hw = vals[-2:] if len(vals) >= 2 else vals * 2
            for n in image_inputs:
                axes = _image_axes(self.declared[n])
                assert axes is not None
                for axis, size_v in zip(axes, hw, strict=True):
                    if size_v > 0:
                        self._set(n, axis, (size_v, size_v, size_v), f"metadata {key}")
                if len(vals) == 4 and vals[0] > 0:
                    self._set(n, 0, (vals[0],) * 3, f"metadata {key}")  # type: ignore[arg-type]
        if batch is not None and batch[1] and batch[1][0] > 0:
            b = batch[1][0]
            for n in self.names:
                if self.declared[n] and _is_batch_axis(self.declared[n], 0):
                    self._set(n, 0, (b, b, b), f"metadata {batch[0]}")

    def apply_graph(self) -> None:
        """Dims the first consumers pin: Conv/MatMul/Gemm weights, constant Reshape/Expand shapes."""
        for n in self.names:
            if n in self.shape_tensors:
                continue
            self._pin_from_consumers(n)

    def _pin_from_consumers(self, name: str) -> None:
        rank = len(self.declared[name])
        frontier: list[tuple[str, list[int]]] = [(name, list(range(rank)))]  # tensor, input axis per axis
        seen = set()
        while frontier:
            t, axes = frontier.pop()
            if t in seen:
                continue
            seen.add(t)
            for node, k in self.consumers.get(t, []):
                op = node.op_type
                label = f"graph: {op} '{node.name or node.output[0]}'"
                if op == "Conv" and k == 0 and len(node.input) > 1:
                    w = self._const(node.input[1])
                    if w is not None and w.ndim >= 2 and len(axes) >= 2:
                        group = _attr(node, "group", 1)
                        c = int(w.shape[1]) * int(group)
                        self._set(name, axes[1], (c, c, c), label)
                elif op in ("MatMul", "Gemm") and k == 0 and len(node.input) > 1:
                    w = self._const(node.input[1])
                    if w is not None and w.ndim == 2 and axes:
                        kdim = int(w.shape[1] if (op == "Gemm" and _attr(node, "transB", 0)) else w.shape[0])
                        ax = axes[-1] if not (op == "Gemm" and _attr(node, "transA", 0)) else axes[0]
                        self._set(name, ax, (kdim, kdim, kdim), label)
                elif op == "Reshape" and k == 0 and len(node.input) > 1:
                    self._pin_reshape(name, axes, node, label)
                elif op == "Expand" and k == 0 and len(node.input) > 1:
                    target = self._const(node.input[1])
                    if target is not None and target.ndim == 1 and len(target) >= len(axes):
                        off = len(target) - len(axes)
                        for i, ax in enumerate(axes):
                            v = int(target[off + i])
                            if v > 1:
                                self._set(name, ax, (v, v, v), label)
                elif op in _ELEMENTWISE and k == 0:
                    frontier.extend((o, axes) for o in node.output[:1] if o)
                elif op == "Transpose" and k == 0:
                    perm = _attr(node, "perm", None)
                    if perm is not None and len(perm) == len(axes):
                        frontier.append((node.output[0], [axes[p] for p in perm]))

    def _pin_reshape(self, name: str, axes: list[int], node: Any, label: str) -> None:
        target = self._const(node.input[1])
        if target is None or target.ndim != 1 or any(int(v) < 0 for v in target):
            return
        total = 1
        for v in (int(t) for t in target):
            if v == 0:  # copy the input's dim: the same on both sides, cancels out
                continue
            total *= v
        copied = {i for i, v in enumerate(target) if int(v) == 0 and i < len(axes)}
        unknown = [ax for i, ax in enumerate(axes) if i not in copied and self.dims[name][ax] is None]
        known = 1
        for i, ax in enumerate(axes):
            if i in copied or self.dims[name][ax] is None:
                continue
            known *= self.dims[name][ax][1]  # type: ignore[index]
        if len(unknown) == 1 and known and total % known == 0:
            v = total // known
            self._set(name, unknown[0], (v, v, v), label)

    def _default_groups(self) -> list[dict[str, Any]]:
        """The dims still open, grouped by symbol (one size per symbol), each with its kind."""
        batch_syms = {
            str(self.declared[n][0]) for n in self.names
            if self.declared[n] and self.dims[n][0] is None and _is_batch_axis(self.declared[n], 0)
        } - {"?"}
        groups: dict[Any, dict[str, Any]] = {}
        for n in self.names:
            declared = self.declared[n]
            image = _image_axes(declared)
            for axis, t in enumerate(self.dims[n]):
                if t is not None:
                    continue
                sym = str(declared[axis])
                key = sym if sym != "?" else (n, axis)
                if (axis == 0 and _is_batch_axis(declared, 0)) or sym in batch_syms:
                    kind = "batch"
                elif image is not None and axis in image:
                    kind = "spatial"
                elif self.dtypes[n] in _INT_DTYPES:
                    kind = "int"
                else:
                    kind = "other"
                g = groups.setdefault(key, {"kind": kind, "dims": []})
                if kind == "batch":
                    g["kind"] = "batch"
                g["dims"].append((n, axis))
        return list(groups.values())

    def apply_defaults(self, batch_max: int, probe_sizes: bool = False) -> None:
        groups = self._default_groups()
        if not groups:
            return
        for g in groups:
            if g["kind"] == "batch":
                triple = (DEFAULT_BATCH, DEFAULT_BATCH, max(DEFAULT_BATCH, batch_max))
            else:
                triple = (DEFAULT_SIZES[g["kind"]],) * 3
            for n, axis in g["dims"]:
                self._set(n, axis, triple, "default")  # type: ignore[arg-type]
        free = [g for g in groups if g["kind"] != "batch"]
        if probe_sizes and free:
            probe(self, free)
        missing: dict[str, list[int]] = {}
        for g in groups:
            for n, axis in g["dims"]:
                missing.setdefault(n, []).append(axis)
        for n in self.names:
            axes = sorted(missing.get(n, []))
            if not axes:
                continue
            declared = self.declared[n]
            guessed = [f"{declared[a]}={self.dims[n][a][1]}" for a in axes]  # type: ignore[index]
            example = _x(tuple(t[1] for t in self.dims[n]))  # type: ignore[index]
            probed = any(self.sources[n][a] == PROBE_SOURCE for a in axes)
            batch_only = all(self.sources[n][a] == "default" and g_kind == "batch"
                             for a in axes for g_kind in [self._kind_of(groups, n, a)])
            how = "ran with onnxruntime at" if probed else "using"
            (self.notes if batch_only else self.warnings).append(
                f"input '{n}' has dynamic dims {_x_decl(declared)} of no known size ({', '.join(guessed)}); "
                f"{how} {example}: set --shapes {n}:{example} with the real size"
            )

    @staticmethod
    def _kind_of(groups: list[dict[str, Any]], name: str, axis: int) -> str:
        return next((g["kind"] for g in groups if (name, axis) in g["dims"]), "other")

    def apply_values(self, final: bool = True) -> None:
        """Values for shape-tensor inputs (defaults that fit their consumer) and for integer scalars a
        graph compares with a constant (Silero's ``sr == 16000``: the branch the model was made for)."""
        self._compared_scalars()
        for n, (meaning, node, _slot) in self.shape_tensors.items():
            if n in self.values:
                continue
            declared = self.declared[n]
            length = self.dims[n][0][1] if declared and self.dims[n][0] is not None else 1  # type: ignore[index]
            vals = self._default_values(meaning, node, int(length))
            if vals is None and not final:
                continue
            if vals is None:
                self.warnings.append(
                    f"input '{n}' is a shape tensor ({node.op_type} '{node.name}' reads it); no values known: "
                    f"set --shapes {n}:V1xV2x... (its values, as trtexec takes them)"
                )
                continue
            self.values[n] = ((vals, vals, vals), f"default for {node.op_type}")
            self.warnings.append(
                f"input '{n}' is a shape tensor read by {node.op_type} '{node.name or node.output[0]}'; "
                f"using values {list(vals)}: set --shapes {n}:{_x(vals)} to the values it should take"
            )

    def _compared_scalars(self) -> None:
        for n in self.names:
            if n in self.values or n in self.shape_tensors or self.dtypes[n] not in _INT_DTYPES:
                continue
            if self.declared[n] not in ([], [1]):
                continue
            for node, k in self.consumers.get(n, []):
                if node.op_type not in ("Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual") or len(node.input) != 2:
                    continue
                other = self._const(node.input[1 - k])
                if other is not None and other.size == 1:
                    v = int(other.reshape(-1)[0])
                    self.values[n] = (((v,), (v,), (v,)), f"graph: {node.op_type} '{node.name or node.output[0]}' constant")
                    break

    def _default_values(self, meaning: str, node: Any, length: int) -> Shape | None:
        if meaning == "ones":
            return (1,) * length
        if meaning == "zeros":
            return (0,) * length
        if meaning == "ends":
            return (2**31 - 1,) * length
        if meaning == "axes":
            return tuple(range(length))
        if meaning == "reshape":
            data_rank = self._rank(node.input[0])
            if data_rank == length and not _attr(node, "allowzero", 0):
                return (0,) * length  # copy every dim: the identity reshape
            return (-1,) + (1,) * (length - 1)
        if meaning == "sizes":
            src = node.input[0]
            if src in self.dims and all(t is not None for t in self.dims[src]):
                return tuple(t[1] for t in self.dims[src])  # type: ignore[index]
        return None

    def _rank(self, tensor: str) -> int | None:
        if tensor in self.declared:
            return len(self.declared[tensor])
        for vi in self.graph.value_info:
            if vi.name == tensor and vi.type.tensor_type.HasField("shape"):
                return len(vi.type.tensor_type.shape.dim)
        return None

    def plan(self) -> ShapePlan:
        out = []
        for n in self.names:
            triples = self.dims[n]
            mn = tuple(t[0] for t in triples)  # type: ignore[index]
            opt = tuple(t[1] for t in triples)  # type: ignore[index]
            mx = tuple(t[2] for t in triples)  # type: ignore[index]
            vals = self.values.get(n)
            out.append(
                InputShape(
                    name=n,
                    dtype=self.dtypes[n],
                    declared=self.declared[n],
                    min=mn,
                    opt=opt,
                    max=mx,
                    sources=self.sources[n],
                    shape_tensor=n in self.shape_tensors,
                    values=vals[0] if vals else None,
                    values_source=vals[1] if vals else None,
                )
            )
        return ShapePlan(out, self.warnings, self.model_name, self.notes)



def _attr(node: Any, name: str, default: Any) -> Any:
    import onnx

    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default



def _as_triple(value: Any) -> Triple:
    if isinstance(value, tuple) and len(value) == 3 and all(isinstance(v, (tuple, list)) for v in value):
        return tuple(tuple(int(d) for d in v) for v in value)  # type: ignore[return-value]
    shape = tuple(int(d) for d in value)
    return (shape, shape, shape)


def plan_shapes(
    model: Any,
    user: dict[str, Any] | None = None,
    *,
    data: dict[str, Any] | None = None,
    data_source: str = "--input",
    user_source: str = "--shapes",
    batch_max: int = DEFAULT_BATCH_MAX,
    probe: bool = False,
) -> ShapePlan:
    """The shape plan of ``model`` (an ONNX path, a ``ModelProto`` or an ``OnnxModel``).

    ``user``: ``{input: shape}`` or ``{input: (min, opt, max)}`` (``--shapes``, the min/opt/max flags or
    the cells a user edited in a window's table); a shape-tensor input may be given its values instead (trtexec's convention).
    ``data``: ``{input: array}`` the run will feed (its shapes are taken as given). ``probe``: try a
    few sizes for guessed dims with onnxruntime and keep the first that runs (bounded; the warning
    still asks for the real size). Raises InputError for unknown inputs, wrong ranks or dims that
    contradict the model.
    """
    p = _Planner(onnx_model(model))
    p.apply_user(dict(user or {}), user_source)
    if data:
        p.apply_data(data, data_source)
    p.propagate_symbols()
    p.apply_metadata()
    p.propagate_symbols()
    p.apply_graph()
    p.propagate_symbols()
    p.apply_values(final=False)
    p.apply_defaults(batch_max, probe_sizes=probe)
    p.apply_values()
    return p.plan()


def user_shapes_from_profile(profile: dict[str, Any]) -> dict[str, Triple]:
    """A build profile ``{name: (min, opt, max)}`` as ``plan_shapes`` user input (a copy, ints)."""
    return {k: _as_triple(v) for k, v in profile.items()}


def run_plan(model: str | os.PathLike[str] | OnnxModel | None, shapes: dict[str, tuple[int, ...]],
             data: dict[str, Any] | None = None, source: str = "--input") -> ShapePlan | None:
    """The plan for running an ONNX ``model`` with the user's ``shapes`` and ``data`` (the onnxruntime
    probe on); None for an engine file or anything else that is not ONNX. Bad shapes (unknown input,
    wrong rank, a fixed dim contradicted) raise InputError."""
    if model is None or not (isinstance(model, OnnxModel) or str(model).lower().endswith(".onnx")):
        return None
    return plan_shapes(model, shapes, data=data, data_source=source, probe=True)
