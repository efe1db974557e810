"""One shape plan for every tool: the input shapes (min/opt/max per input) and where each value came from.

``profile``, ``build``, ``precision``, ``check`` and the window ask :func:`plan_shapes` instead of filling
dynamic dimensions with 1 on their own. Sources, first match wins per dimension:

1. the user: ``--shapes`` / ``--min-shapes`` / ``--opt-shapes`` / ``--max-shapes`` or the GUI table;
2. a data file the user gave (its arrays are what will run, so their shapes are given too);
3. the model's metadata (Ultralytics ``imgsz``/``batch``, and similar keys other exporters write);
4. what the graph pins: a dimension named like one already fixed (same symbol), the constant weight of
   the first Conv/MatMul/Gemm, a constant Reshape/Expand shape;
5. a default, with a warning that names the input, the dimension and the flag to set.

Shape-tensor inputs (integer vectors that feed Reshape/Expand/ConstantOfShape/... shape slots) get
*values* in the plan: TensorRT needs them in the optimization profile (``set_shape_input``) and a run
needs values that make sense (random integers do not).

Qt-free; imports ``onnx`` lazily (callers pass a path or a ``ModelProto``).
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trtstudio.errors import InputError

SCHEMA = "trtstudio.shapeplan/1"
Shape = tuple[int, ...]
Triple = tuple[Shape, Shape, Shape]

DEFAULT_BATCH = 1
DEFAULT_BATCH_MAX = 8
# Image H/W default: 256 = 2**8 keeps stride-32/64 detectors' feature maps whole (their Concats line up).
DEFAULT_SPATIAL = 256
# Other float dims (samples, frames, sequence): long enough for reflect pads, STFT windows, strided convs.
DEFAULT_OTHER = 512
# Other integer dims (token ids, sequence lengths of text models).
DEFAULT_INT = 128
# The onnxruntime probe of guessed sizes: tries, time and model size limits.
PROBE_TRIES = 24
PROBE_SECONDS = 10.0
PROBE_MAX_BYTES = 200 << 20
_PROBE_SIZES = {
    "spatial": (256, 320, 640, 224, 48, 32, 64, 96, 128, 160, 192, 384, 512),
    "other": (512, 576, 1024, 256, 128, 64, 1, 16000),
    "int": (128, 64, 16, 512),
}
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


@dataclass
class InputShape:
    """One input's part of the plan: ``min``/``opt``/``max`` shapes and one source per dimension."""

    name: str
    dtype: str
    declared: list[int | str]  # the model's dims: int, symbol (str) or "?"
    min: Shape
    opt: Shape
    max: Shape
    sources: list[str]
    shape_tensor: bool = False
    values: Triple | None = None  # shape-tensor values (min, opt, max)
    values_source: str | None = None

    @property
    def dynamic(self) -> bool:
        return any(not isinstance(d, int) for d in self.declared)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "name": self.name,
            "dtype": self.dtype,
            "declared": self.declared,
            "min": list(self.min),
            "opt": list(self.opt),
            "max": list(self.max),
            "sources": self.sources,
        }
        if self.shape_tensor:
            doc["shape_tensor"] = True
        if self.values is not None:
            doc["values"] = [list(v) for v in self.values] if self.values else None
            doc["values_source"] = self.values_source
        return doc


@dataclass
class ShapePlan:
    """The shapes every input gets, where they came from, and warnings for defaults."""

    inputs: list[InputShape] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # guessed sizes that may well be wrong
    model: str | None = None
    notes: list[str] = field(default_factory=list)  # defaults that are usually right (batch 1)

    def get(self, name: str) -> InputShape | None:
        return next((i for i in self.inputs if i.name == name), None)

    @property
    def defaulted(self) -> list[tuple[str, int, str]]:
        """(input, axis, declared symbol) of every dimension that got a default value."""
        return [
            (i.name, k, str(i.declared[k])) for i in self.inputs for k, s in enumerate(i.sources) if s == "default"
        ]

    def opt_shapes(self) -> dict[str, Shape]:
        """The shape each input runs with (the profile's opt)."""
        return {i.name: i.opt for i in self.inputs}

    def profile(self) -> dict[str, Triple]:
        """``{name: (min, opt, max)}`` of the inputs with a dynamic dimension (what a profile must set)."""
        return {i.name: (i.min, i.opt, i.max) for i in self.inputs if i.dynamic}

    def shape_values(self) -> dict[str, Triple]:
        """``{name: (min, opt, max) values}`` of the shape-tensor inputs."""
        return {i.name: i.values for i in self.inputs if i.shape_tensor and i.values is not None}

    def flag(self, which: str = "opt") -> str:
        """The ``--shapes`` text that reproduces this plan (opt shapes, or min/max)."""
        parts = []
        for i in self.inputs:
            if not i.opt and i.values is None:
                continue  # a scalar: nothing to set
            if i.values is not None:
                vals = {"min": i.values[0], "opt": i.values[1], "max": i.values[2]}[which]
                parts.append(f"{i.name}:{_x(vals)}")
            else:
                parts.append(f"{i.name}:{_x(getattr(i, which))}")
        return ",".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "model": self.model,
            "inputs": [i.to_json() for i in self.inputs],
            "warnings": self.warnings,
            "notes": self.notes,
            "shapes_flag": self.flag(),
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ShapePlan:
        """The plan back from :meth:`to_json` (for text outputs made from a JSON document)."""
        inputs = []
        for d in doc.get("inputs", []):
            vals = d.get("values")
            inputs.append(InputShape(
                name=d["name"], dtype=d["dtype"], declared=list(d["declared"]), min=tuple(d["min"]),
                opt=tuple(d["opt"]), max=tuple(d["max"]), sources=list(d["sources"]),
                shape_tensor=bool(d.get("shape_tensor")),
                values=tuple(tuple(v) for v in vals) if vals else None,  # type: ignore[arg-type]
                values_source=d.get("values_source"),
            ))
        return cls(inputs, list(doc.get("warnings", [])), doc.get("model"), list(doc.get("notes", [])))

    def render_text(self) -> str:
        """Lines like ``images  1x3x640x640  (N: --shapes; H, W: metadata imgsz)``."""
        lines = []
        for i in self.inputs:
            shape = _x(i.opt)
            if i.min != i.opt or i.max != i.opt:
                shape = f"{shape} (min {_x(i.min)}, max {_x(i.max)})"
            groups: dict[str, list[str]] = {}
            for k, src in enumerate(i.sources):
                if src != "model":
                    groups.setdefault(src, []).append(str(i.declared[k]) if not isinstance(i.declared[k], int) else f"#{k}")
            where = "; ".join(f"{', '.join(dims)}: {src}" for src, dims in groups.items()) or "the model (fixed)"
            line = f"  {i.name:<20} {shape:<16} from {where}"
            if i.values is not None:
                line += f"  values {list(i.values[1])} ({i.values_source})"
            lines.append(line)
        return "\n".join(lines)

    def explain_failure(self, message: str) -> str | None:
        """When ``message`` (a build or run error) looks like a shape problem, a sentence naming the dims
        that were guessed and the flag that sets them; None otherwise."""
        if not looks_like_shape_error(message):
            return None
        guessed = self.defaulted
        if guessed:
            dims = ", ".join(f"{n}[{k}] ({sym})" for n, k, sym in guessed)
            return (
                f"this looks like a shape problem; these dims were guessed: {dims}. "
                f"Give the real sizes, e.g. --shapes {self.flag()}"
            )
        dyn = [i for i in self.inputs if i.dynamic]
        if dyn:
            return (
                "this looks like a shape problem with the shapes used: "
                + ", ".join(f"{i.name} {_x(i.opt)}" for i in dyn)
                + f"; try other sizes with --shapes (now {self.flag()})"
            )
        return None


_SHAPE_ERROR = re.compile(
    r"dimensions must be equal|must be equal|must match|mismatch|shape analysis|broadcast|\bshape error\b|Error Code 4|"
    r"no optimization profile|optimization profile|Reshape|reshape|Pad reflect|requires axis length|"
    r"getDimensions|InvalidArgument.*(shape|dimension)|Got invalid dimensions|Invalid input shape|"
    r"Incompatible dimensions|ShapeInferenceError|shape mismatch|out of range|volume|"
    r"The input tensor cannot be reshaped|axis .* dimensions|IShuffleLayer|IConcatenationLayer|"
    r"IElementWiseLayer|ISliceLayer|kernel size|larger than",
    re.I,
)


def looks_like_shape_error(message: str | None) -> bool:
    """True when an error text is a shape-analysis failure (TensorRT or ONNX Runtime wording)."""
    return bool(message) and bool(_SHAPE_ERROR.search(message or ""))


def _x(shape: Any) -> str:
    return "x".join(str(int(d)) for d in shape) if len(shape) else "scalar"


# -- reading the model ---------------------------------------------------------------------------
def _load(model: Any) -> tuple[Any, str | None]:
    if isinstance(model, (str, os.PathLike)):
        import onnx
        from google.protobuf.message import DecodeError

        path = Path(model)
        if not path.is_file():
            raise InputError(path, "no such file")
        try:
            return onnx.load(str(path), load_external_data=False), str(path)
        except (DecodeError, ValueError, RuntimeError, OSError) as exc:
            raise InputError(path, f"not an ONNX model ({type(exc).__name__})") from None
    proto = getattr(model, "proto", model)  # a trtstudio Model holds the ModelProto in .proto
    if not hasattr(proto, "graph"):
        raise InputError(None, "plan_shapes needs an ONNX path or ModelProto")
    return proto, None


def _dtype(elem_type: int) -> str:
    import onnx

    try:
        return str(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, ValueError, TypeError):
        return onnx.TensorProto.DataType.Name(elem_type).lower()


def _declared(vi: Any) -> list[int | str]:
    dims: list[int | str] = []
    for d in vi.type.tensor_type.shape.dim:
        if d.HasField("dim_value") and d.dim_value > 0:
            dims.append(int(d.dim_value))
        elif d.HasField("dim_value") and d.dim_value == 0 and not d.dim_param:
            dims.append(0)
        else:
            dims.append(d.dim_param or "?")
    return dims


def read_metadata(proto: Any) -> dict[str, str]:
    """The model's ``metadata_props`` as a dict."""
    return {p.key: p.value for p in proto.metadata_props}


def _ints(text: str) -> list[int] | None:
    """'[640, 640]' / '640' / '(1, 3, 640, 640)' / '640x640' -> ints; None when it is not that."""
    text = text.strip()
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        m = re.fullmatch(r"\s*(\d+)\s*[x,]\s*(\d+)\s*", text)
        return [int(m.group(1)), int(m.group(2))] if m else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return [value]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return [int(v) for v in value]
    return None


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
    def __init__(self, proto: Any, model_name: str | None) -> None:
        self.proto = proto
        self.graph = proto.graph
        init_names = {i.name for i in self.graph.initializer}
        self.vis = [vi for vi in self.graph.input if vi.name not in init_names]
        self.names = [vi.name for vi in self.vis]
        self.model_name = model_name
        self.declared = {vi.name: _declared(vi) for vi in self.vis}
        self.dtypes = {vi.name: _dtype(vi.type.tensor_type.elem_type) for vi in self.vis}
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
        meta = read_metadata(self.proto)
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

    def apply_defaults(self, batch_max: int, probe: bool = False) -> None:
        groups = self._default_groups()
        if not groups:
            return
        sizes = {"spatial": DEFAULT_SPATIAL, "other": DEFAULT_OTHER, "int": DEFAULT_INT}
        for g in groups:
            if g["kind"] == "batch":
                triple = (DEFAULT_BATCH, DEFAULT_BATCH, max(DEFAULT_BATCH, batch_max))
            else:
                triple = (sizes[g["kind"]],) * 3
            for n, axis in g["dims"]:
                self._set(n, axis, triple, "default")  # type: ignore[arg-type]
        free = [g for g in groups if g["kind"] != "batch"]
        if probe and free:
            self._probe(free)
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
            probed = any(self.sources[n][a].startswith("probe") for a in axes)
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

    def _probe(self, free: list[dict[str, Any]]) -> None:
        """Try a few sizes for the guessed (non-batch) dims with onnxruntime, keep the first that runs.

        Only when onnxruntime is installed and the model is small enough to load quickly; at most
        ``PROBE_TRIES`` runs and ``PROBE_SECONDS`` seconds. The defaults stay when nothing runs.
        """
        import time

        if self.proto.ByteSize() > PROBE_MAX_BYTES:
            return
        try:
            import onnxruntime as ort
        except ImportError:
            return
        t0 = time.perf_counter()
        try:
            so = ort.SessionOptions()
            so.log_severity_level = 4
            so.intra_op_num_threads = 2
            sess = ort.InferenceSession(self.proto.SerializeToString(), so, providers=["CPUExecutionProvider"])
        except Exception:  # noqa: BLE001 - a model ORT cannot load: keep the defaults
            return
        for trial in _candidates(free):
            if time.perf_counter() - t0 > PROBE_SECONDS:
                break
            for g, size in zip(free, trial, strict=True):
                for n, axis in g["dims"]:
                    self.dims[n][axis] = (size, size, size)
            if self._runs(sess):
                for g in free:
                    for n, axis in g["dims"]:
                        self.sources[n][axis] = "probe (onnxruntime ran it)"
                return
        sizes = {"spatial": DEFAULT_SPATIAL, "other": DEFAULT_OTHER, "int": DEFAULT_INT}
        for g in free:
            for n, axis in g["dims"]:
                self.dims[n][axis] = (sizes[g["kind"]],) * 3

    def _runs(self, sess: Any) -> bool:
        import numpy as np

        from trtstudio.backends.inputs import random_array

        rng = np.random.default_rng(0)
        feeds = {}
        values = {n: v for n, (v, _src) in self.values.items()}
        for n in self.names:
            shape = tuple(t[1] for t in self.dims[n])  # type: ignore[index]
            if n in values:
                feeds[n] = np.asarray(values[n][1], dtype=self.dtypes[n]).reshape(shape)
            else:
                feeds[n] = random_array(self.dtypes[n], shape, rng)
        try:
            sess.run(None, feeds)
        except Exception:  # noqa: BLE001 - any failure: this size does not fit
            return False
        return True

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


def _candidates(free: list[dict[str, Any]]) -> list[tuple[int, ...]]:
    """Sizes to try for the free groups, most likely first: everything at the n-th preferred size,
    then one group varied at a time (image H with W at its first choice, and so on); PROBE_TRIES at most."""
    lists = [_PROBE_SIZES[g["kind"]] for g in free]
    out: list[tuple[int, ...]] = []
    longest = max(len(c) for c in lists)
    for i in range(longest):
        out.append(tuple(c[min(i, len(c) - 1)] for c in lists))
    for k, c in enumerate(lists):
        for v in c:
            t = tuple(v if j == k else lists[j][0] for j in range(len(lists)))
            if t not in out:
                out.append(t)
    diagonal = out[:longest]
    varied = [t for t in out[longest:]]
    head = diagonal[:3]
    return (head + [t for t in varied if t not in head] + [t for t in diagonal[3:] if t not in varied])[:PROBE_TRIES]


def _attr(node: Any, name: str, default: Any) -> Any:
    import onnx

    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def _x_decl(dims: list[int | str]) -> str:
    return "[" + ",".join(str(d) for d in dims) + "]"


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
    """The shape plan of ``model`` (an ONNX path or ``ModelProto``).

    ``user``: ``{input: shape}`` or ``{input: (min, opt, max)}`` (``--shapes``, the min/opt/max flags or
    the GUI table); a shape-tensor input may be given its values instead (trtexec's convention).
    ``data``: ``{input: array}`` the run will feed (its shapes are taken as given). ``probe``: try a
    few sizes for guessed dims with onnxruntime and keep the first that runs (bounded; the warning
    still asks for the real size). Raises InputError for unknown inputs, wrong ranks or dims that
    contradict the model.
    """
    proto, name = _load(model)
    p = _Planner(proto, name)
    p.apply_user(dict(user or {}), user_source)
    if data:
        p.apply_data(data, data_source)
    p.propagate_symbols()
    p.apply_metadata()
    p.propagate_symbols()
    p.apply_graph()
    p.propagate_symbols()
    p.apply_values(final=False)
    p.apply_defaults(batch_max, probe=probe)
    p.apply_values()
    return p.plan()


def user_shapes_from_profile(profile: dict[str, Any]) -> dict[str, Triple]:
    """A build profile ``{name: (min, opt, max)}`` as ``plan_shapes`` user input (a copy, ints)."""
    return {k: _as_triple(v) for k, v in profile.items()}
