"""FP16 / BF16 variants of an ONNX model, the way strongly-typed TensorRT 11 and TensorRT-RTX read them.

TensorRT 11 has no ``BuilderFlag.FP16``: a layer runs in half precision because its tensors are half
in the model. :func:`convert_float` rewrites a float32 model so that:

- float32 initializers, Constant values and tensors become FP16 (or BF16);
- the model's inputs and outputs stay FP32, with ``Cast`` nodes at the boundary;
- nodes that must stay FP32 keep FP32 tensors, with ``Cast`` nodes around them: a block list of op
  types or node names, ops whose ONNX schema allows no half type at this opset (``Range``, the
  ``scales`` input of ``Resize``), ops with random or shape semantics, nodes with subgraphs (If, Loop,
  Scan: kept whole), custom-domain ops, and shape-computing subgraphs (everything computed only from
  ``Shape``/``Size`` results); optionally reductions and normalisations (Softmax, LayerNorm, Reduce*);
- tensor names of the original graph keep their meaning: each original tensor still exists under its
  own name (in the new precision), so an FP32 reference and the variant can be compared tensor by
  tensor (``ConvertResult.name_map``; only inserted casts are new);
- value_info is updated, shape inference re-run and ``onnx.checker`` passes.

Only onnx and numpy are used (onnxconverter_common is not needed).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.errors import InputError

FLOAT, FLOAT16, BFLOAT16 = 1, 10, 16
LOW_TYPES = {"fp16": FLOAT16, "bf16": BFLOAT16}
TYPE_STR = {FLOAT: "tensor(float)", FLOAT16: "tensor(float16)", BFLOAT16: "tensor(bfloat16)"}

# Always FP32: ranges and random numbers (TensorRT computes them in FP32; Range has no FP16 in ONNX),
# NMS (scores/boxes compared against thresholds).
ALWAYS_FP32 = frozenset({
    "Range", "NonMaxSuppression", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
    "Multinomial", "Bernoulli",
})
# Optional FP32 (``fp32_reductions=True``): reductions and normalisations that lose accuracy in FP16.
REDUCTION_OPS = frozenset({
    "Softmax", "LogSoftmax", "LayerNormalization", "GroupNormalization", "InstanceNormalization",
    "ReduceMean", "ReduceSum", "ReduceSumSquare", "ReduceL2", "ReduceLogSumExp", "ReduceProd",
})
SHAPE_SOURCES = frozenset({"Shape", "Size"})
FP16_MAX = 65504.0


@dataclass
class ConvertResult:
    """A converted model and what was done: ``name_map`` maps each original tensor name to the name
    holding the same value in the converted model; ``fp32_nodes`` lists nodes kept FP32 with the
    reason; ``casts`` counts inserted Cast nodes; ``notes`` are one-line remarks for the user."""

    model: Any  # onnx.ModelProto
    dtype: str
    name_map: dict[str, str] = field(default_factory=dict)
    fp32_nodes: dict[str, str] = field(default_factory=dict)
    low_nodes: list[str] = field(default_factory=list)
    casts: int = 0
    converted_initializers: int = 0
    clipped_values: int = 0
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Summary for JSON output (no model)."""
        return {
            "dtype": self.dtype,
            "low_nodes": len(self.low_nodes),
            "fp32_nodes": dict(self.fp32_nodes),
            "casts": self.casts,
            "converted_initializers": self.converted_initializers,
            "clipped_values": self.clipped_values,
            "notes": list(self.notes),
        }


def to_bfloat16_bits(values: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bit patterns (uint16), rounding to nearest even; NaN stays NaN."""
    f = np.ascontiguousarray(values, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(f)
    if nan.any():
        rounded[nan] = 0x7FC0
    return rounded


def bfloat16_bits_to_float(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> float32."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def low_tensor(array: np.ndarray, name: str, dtype: str) -> tuple[Any, int]:
    """A TensorProto of ``array`` in FP16 (clipped to +-65504) or BF16; returns it and the count of
    values that were out of range (clipped to the largest finite value)."""
    from onnx import TensorProto, numpy_helper

    a = np.asarray(array, dtype=np.float32)
    finite = np.isfinite(a)
    if dtype == "fp16":
        over = int(np.count_nonzero(finite & (np.abs(a) > FP16_MAX)))
        low = np.where(finite, np.clip(a, -FP16_MAX, FP16_MAX), a).astype(np.float16)
        return numpy_helper.from_array(low, name), over
    t = TensorProto()
    t.name = name
    t.data_type = BFLOAT16
    t.dims.extend(a.shape)
    t.raw_data = to_bfloat16_bits(a).tobytes()
    return t, 0


def _elem_types(model: Any) -> dict[str, int]:
    g = model.graph
    types: dict[str, int] = {}
    for vi in (*g.input, *g.output, *g.value_info):
        if vi.type.HasField("tensor_type"):
            types[vi.name] = vi.type.tensor_type.elem_type
    for init in g.initializer:
        types[init.name] = init.data_type
    for node in g.node:
        if node.op_type == "Constant" and node.output:
            for attr in node.attribute:
                if attr.name == "value" and attr.type == attr.TENSOR:
                    types[node.output[0]] = attr.t.data_type
                elif attr.name in ("value_float", "value_floats"):
                    types[node.output[0]] = FLOAT
    return types


def _opset(model: Any, domain: str) -> int:
    for imp in model.opset_import:
        if imp.domain in (domain, "ai.onnx" if domain == "" else domain):
            return int(imp.version)
    return 0


def _schema(model: Any, node: Any) -> Any:
    import onnx

    domain = node.domain if node.domain not in ("ai.onnx",) else ""
    try:
        return onnx.defs.get_schema(node.op_type, _opset(model, domain), domain)
    except Exception:  # noqa: BLE001 - onnx raises SchemaError for unknown ops
        return None


def _formal(params: Any, index: int) -> Any:
    import onnx

    if index < len(params):
        return params[index]
    if params and params[-1].option == onnx.defs.OpSchema.FormalParameterOption.Variadic:
        return params[-1]
    return None


def _slot_rules(schema: Any, node: Any, types: dict[str, int], low_str: str) -> tuple[set[int], set[int], set[str]]:
    """FP32-fixed input and output slots of ``node`` (present float slots whose formal type is
    ``tensor(float)``, or, for FP16, a type parameter without float16), and the type parameters
    that lack the low type (reported as notes for BF16, which TensorRT takes regardless)."""
    allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
    lacking: set[str] = set()

    def check(params: Any, names: Any) -> set[int]:
        fixed: set[int] = set()
        for i, name in enumerate(names):
            p = _formal(params, i)
            if p is None or not _is_float(types, name):
                continue
            if p.type_str == "tensor(float)":
                fixed.add(i)
            elif p.type_str in allowed and low_str not in allowed[p.type_str]:
                lacking.add(p.type_str)
                if low_str == TYPE_STR[FLOAT16]:
                    fixed.add(i)
        return fixed

    return check(schema.inputs, node.input), check(schema.outputs, node.output), lacking


def _is_float(types: dict[str, int], name: str) -> bool:
    return bool(name) and types.get(name) == FLOAT


def _shape_tainted(graph: Any, static: set[str]) -> set[str]:
    """Tensors computed only from Shape/Size results (and constants): shape arithmetic."""
    tainted: set[str] = set()
    for node in graph.node:
        if node.op_type in SHAPE_SOURCES:
            tainted.update(o for o in node.output if o)
            continue
        dynamic = [i for i in node.input if i and i not in static]
        if dynamic and all(i in tainted for i in dynamic):
            tainted.update(o for o in node.output if o)
    return tainted


def _fp32_reason(
    model: Any, node: Any, options: dict[str, Any], types: dict[str, int], tainted: set[str], low_str: str
) -> str | None:
    if node.name and node.name in options["block_nodes"]:
        return "block list (node)"
    if node.op_type in options["block_ops"]:
        return "block list (op type)"
    if node.op_type in ALWAYS_FP32:
        return "always FP32"
    if options["fp32_reductions"] and node.op_type in REDUCTION_OPS:
        return "reduction kept FP32"
    if any(a.type in (a.GRAPH, a.GRAPHS) for a in node.attribute):
        return "has subgraphs (kept FP32 whole)"
    if node.domain not in ("", "ai.onnx"):
        return f"custom domain {node.domain}"
    if node.op_type not in SHAPE_SOURCES and any(o in tainted for o in node.output if o):
        return "shape computation"
    schema = _schema(model, node)
    if schema is None:
        return "no ONNX schema"
    fixed_in, fixed_out, lacking = _slot_rules(schema, node, types, low_str)
    if lacking and low_str != TYPE_STR[FLOAT16]:
        options["bf16_schema_notes"].add(node.op_type)
    slots = [("in", i) for i, t in enumerate(node.input) if _is_float(types, t)]
    slots += [("out", j) for j, t in enumerate(node.output) if _is_float(types, t)]
    if slots and all(j in (fixed_in if k == "in" else fixed_out) for k, j in slots):
        return f"ONNX opset {_opset(model, '')} {node.op_type} has no float16" if lacking else "float-only inputs"
    return None


def load_onnx(model: Any) -> Any:
    """An onnx.ModelProto from a path or a ModelProto (copied, so the caller's model is untouched)."""
    import onnx

    if isinstance(model, (str, os.PathLike)):
        p = Path(model)
        if not p.is_file():
            raise InputError(p, "no such ONNX model")
        try:
            return onnx.load(str(p))
        except Exception as exc:  # noqa: BLE001 - DecodeError and friends
            raise InputError(p, f"not a readable ONNX model: {exc}") from None
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return copy


def convert_float(
    model: Any,
    dtype: str = "fp16",
    *,
    block_ops: Iterable[str] = (),
    block_nodes: Iterable[str] = (),
    fp32_reductions: bool = False,
) -> ConvertResult:
    """Convert a float32 ONNX model (path or ModelProto) to FP16 or BF16 (``dtype`` "fp16"/"bf16").

    See the module docstring for what stays FP32. Raises InputError for an unknown dtype, an unknown
    block-list node name, or a model the checker rejects after conversion (a bug worth reporting).
    """
    import onnx

    if dtype not in LOW_TYPES:
        raise InputError(None, f"precision must be one of {', '.join(LOW_TYPES)}, not '{dtype}'")
    source = model if isinstance(model, (str, os.PathLike)) else None
    m = load_onnx(model)
    try:
        m = onnx.shape_inference.infer_shapes(m, strict_mode=False)
    except Exception:  # noqa: BLE001 - keep going with what the model declares
        pass
    block_nodes = set(block_nodes)
    unknown = sorted(block_nodes - {n.name for n in m.graph.node})
    if unknown:
        raise InputError(source, f"block list names node(s) the model lacks: {', '.join(unknown)}")
    conv = _Converter(m, dtype, {"block_ops": set(block_ops), "block_nodes": block_nodes,
                                 "fp32_reductions": fp32_reductions, "bf16_schema_notes": set()})
    conv.plan_nodes()
    conv.find_low_tensors()
    conv.rewrite_nodes()
    conv.convert_initializers()
    conv.fix_value_info()
    try:
        m = onnx.shape_inference.infer_shapes(m, strict_mode=False)
        onnx.checker.check_model(m)
    except Exception as exc:  # noqa: BLE001 - a converter bug; name it, not a traceback
        raise InputError(source, f"{dtype} conversion produced an invalid model: {str(exc).splitlines()[0]}") from None
    return conv.finish(m)


class _Converter:
    """The state of one :func:`convert_float`: a plan per node, then the graph rewritten in steps."""

    def __init__(self, m: Any, dtype: str, options: dict[str, Any]) -> None:
        g = m.graph
        self.m, self.g, self.dtype, self.tag, self.options = m, g, dtype, dtype, options
        self.low = LOW_TYPES[dtype]
        self.low_str = TYPE_STR[self.low]
        self.types = _elem_types(m)
        self.inits = {i.name: i for i in g.initializer}
        self.graph_inputs = {i.name for i in g.input if i.name not in self.inits}
        self.graph_outputs = {o.name for o in g.output}
        self.constants = {n.output[0] for n in g.node if n.op_type == "Constant" and n.output}
        self.tainted = _shape_tainted(g, set(self.inits) | self.constants)
        self.res = ConvertResult(m, dtype)
        self.plan: dict[int, tuple[bool, set[int], set[int]]] = {}
        self.low_tensors: set[str] = set()
        self.renamed: dict[str, str] = {}
        self.new_nodes: list[Any] = []
        self.new_inits: list[Any] = []
        self.value_info: dict[str, int] = {}  # new tensors -> elem type (shape copied from the source)
        self.cast_source: dict[str, str] = {}
        self.low_copy: dict[str, str] = {}
        self.fp32_copy: dict[str, str] = {}

    def plan_nodes(self) -> None:
        """Pass 1: which nodes run in low precision, and which input/output slots stay FP32."""
        for idx, node in enumerate(self.g.node):
            if node.op_type == "Constant":
                continue
            if not any(_is_float(self.types, t) for t in (*node.input, *node.output)):
                continue
            reason = _fp32_reason(self.m, node, self.options, self.types, self.tainted, self.low_str)
            if reason is not None:
                self.plan[idx] = (False, set(), set())
                self.res.fp32_nodes[node.name or f"#{idx} {node.op_type}"] = reason
                continue
            fixed_in, fixed_out, _ = _slot_rules(_schema(self.m, node), node, self.types, self.low_str)
            self.plan[idx] = (True, fixed_in, fixed_out)
            self.res.low_nodes.append(node.name or f"#{idx} {node.op_type}")

    def _wants(self) -> tuple[dict[str, int], dict[str, int]]:
        """How many consumers want each float tensor low, and how many FP32."""
        want_low: dict[str, int] = {}
        want_fp32: dict[str, int] = {}
        for idx, node in enumerate(self.g.node):
            if idx not in self.plan:
                continue
            is_low, fixed_in, _ = self.plan[idx]
            for i, t in enumerate(node.input):
                if not _is_float(self.types, t):
                    continue
                target = want_low if is_low and i not in fixed_in else want_fp32
                target[t] = target.get(t, 0) + 1
        for t in self.graph_outputs:
            want_fp32[t] = want_fp32.get(t, 0) + 1
        return want_low, want_fp32

    def find_low_tensors(self) -> None:
        """Tensors that are low after conversion (their own name, new type), and the graph outputs
        produced under a new name and cast back to FP32 under their own."""
        want_low, want_fp32 = self._wants()
        for idx, node in enumerate(self.g.node):
            if idx in self.plan and self.plan[idx][0]:
                for j, o in enumerate(node.output):
                    if _is_float(self.types, o) and j not in self.plan[idx][2]:
                        self.low_tensors.add(o)
        for name, init in self.inits.items():
            if init.data_type == FLOAT and name in want_low and name not in want_fp32 and name not in self.graph_inputs:
                self.low_tensors.add(name)
        for c in self.constants:
            if self.types.get(c) == FLOAT and c in want_low and c not in want_fp32:
                self.low_tensors.add(c)
        self.renamed = {t: f"{t}__{self.tag}" for t in self.graph_outputs if t in self.low_tensors}

    def _cast(self, src: str, to: int, cache: dict[str, str], suffix: str) -> str:
        from onnx import helper

        if src in cache:
            return cache[src]
        out = f"{src}__{suffix}"
        self.new_nodes.append(helper.make_node("Cast", [src], [out], name=f"{out}/Cast", to=to))
        cache[src] = out
        self.value_info[out] = to
        self.cast_source[out] = src
        self.res.casts += 1
        return out

    def _low_input(self, t: str) -> str:
        from onnx import numpy_helper

        if t in self.renamed:
            return self.renamed[t]
        if t in self.low_tensors:
            return t
        init = self.inits.get(t)
        if init is not None and init.data_type == FLOAT:  # an FP32 initializer also read in FP32: a low copy
            if t not in self.low_copy:
                tensor, over = low_tensor(numpy_helper.to_array(init), f"{t}__{self.tag}", self.dtype)
                self.new_inits.append(tensor)
                self.res.converted_initializers += 1
                self.res.clipped_values += over
                self.low_copy[t] = tensor.name
                self.value_info[tensor.name] = self.low
            return self.low_copy[t]
        return self._cast(t, self.low, self.low_copy, self.tag)

    def _fp32_input(self, t: str) -> str:
        if t in self.low_tensors and t not in self.renamed:
            return self._cast(t, FLOAT, self.fp32_copy, "fp32")
        return t  # FP32 already (renamed outputs: the FP32 cast keeps the original name)

    def _low_attributes(self, node: Any) -> None:
        from onnx import numpy_helper

        for attr in node.attribute:
            if node.op_type == "Cast" and attr.name == "to" and attr.i == FLOAT:
                attr.i = self.low
            elif node.op_type == "ConstantOfShape" and attr.name == "value" and attr.t.data_type == FLOAT:
                tensor, over = low_tensor(numpy_helper.to_array(attr.t), attr.t.name, self.dtype)
                attr.t.CopyFrom(tensor)
                self.res.clipped_values += over

    def rewrite_nodes(self) -> None:
        """Every node in order, its float inputs taken low or FP32 (casts added where needed)."""
        from onnx import helper

        for idx, node in enumerate(self.g.node):
            if node.op_type == "Constant":
                if node.output and node.output[0] in self.low_tensors:
                    _convert_constant(node, self.dtype, self.res)
                self.new_nodes.append(node)
                continue
            if idx not in self.plan:
                self.new_nodes.append(node)
                continue
            is_low, fixed_in, _ = self.plan[idx]
            for i, t in enumerate(node.input):
                if _is_float(self.types, t):
                    node.input[i] = self._low_input(t) if is_low and i not in fixed_in else self._fp32_input(t)
            if is_low:
                self._low_attributes(node)
            self.new_nodes.append(node)
            for j, o in enumerate(node.output):
                if o in self.renamed:
                    node.output[j] = self.renamed[o]
                    self.value_info[self.renamed[o]] = self.low
                    self.cast_source[self.renamed[o]] = o
                    self.new_nodes.append(helper.make_node("Cast", [self.renamed[o]], [o], name=f"{o}__fp32/Cast", to=FLOAT))
                    self.res.casts += 1

    def convert_initializers(self) -> None:
        """Initializers converted in place (every reader is low); the new nodes and copies put in."""
        from onnx import numpy_helper

        g = self.g
        for init in g.initializer:
            if init.name in self.low_tensors and init.data_type == FLOAT:
                tensor, over = low_tensor(numpy_helper.to_array(init), init.name, self.dtype)
                init.CopyFrom(tensor)
                self.res.converted_initializers += 1
                self.res.clipped_values += over
        g.initializer.extend(self.new_inits)
        del g.node[:]
        g.node.extend(self.new_nodes)

    def fix_value_info(self) -> None:
        """New types for low tensors, entries for cast outputs (shape from their source)."""
        import onnx

        g = self.g
        shapes = {vi.name: vi for vi in (*g.input, *g.output, *g.value_info)}
        for vi in g.value_info:
            if vi.name in self.low_tensors and vi.type.tensor_type.elem_type == FLOAT:
                vi.type.tensor_type.elem_type = self.low
        for name, elem in self.value_info.items():
            if name in shapes:
                continue
            src = self.cast_source.get(name)
            vi = onnx.ValueInfoProto()
            if src is not None and src in shapes:
                vi.CopyFrom(shapes[src])
            vi.name = name
            vi.type.tensor_type.elem_type = elem
            g.value_info.append(vi)

    def finish(self, m: Any) -> ConvertResult:
        """The result with its model, name map and notes."""
        res = self.res
        res.model = m
        res.name_map = {t: t for t in _all_tensors(self.g) if t not in self.cast_source and not t.endswith(f"__{self.tag}")}
        if res.clipped_values:
            res.notes.append(f"{res.clipped_values} weight value(s) beyond the FP16 range were clipped to +-65504")
        if self.options["bf16_schema_notes"]:
            ops = ", ".join(sorted(self.options["bf16_schema_notes"]))
            res.notes.append(
                f"ONNX opset {_opset(m, '')} lists no bfloat16 for {ops}; TensorRT accepts it, onnxruntime may not"
            )
        if res.fp32_nodes:
            reasons: dict[str, int] = {}
            for r in res.fp32_nodes.values():
                reasons[r] = reasons.get(r, 0) + 1
            res.notes.append("kept FP32: " + ", ".join(f"{n} {r}" for r, n in sorted(reasons.items())))
        return res


def _convert_constant(node: Any, dtype: str, res: ConvertResult) -> None:
    from onnx import helper, numpy_helper

    for attr in list(node.attribute):
        if attr.name == "value" and attr.type == attr.TENSOR and attr.t.data_type == FLOAT:
            tensor, over = low_tensor(numpy_helper.to_array(attr.t), attr.t.name, dtype)
            attr.t.CopyFrom(tensor)
            res.clipped_values += over
        elif attr.name in ("value_float", "value_floats"):
            arr = np.array(attr.f if attr.name == "value_float" else list(attr.floats), dtype=np.float32)
            tensor, over = low_tensor(arr, "", dtype)
            node.attribute.remove(attr)
            node.attribute.append(helper.make_attribute("value", tensor))
            res.clipped_values += over


def _all_tensors(graph: Any) -> list[str]:
    seen: dict[str, None] = {}
    for vi in graph.input:
        seen[vi.name] = None
    for node in graph.node:
        for t in node.output:
            if t:
                seen[t] = None
    return list(seen)


def save_model(model: Any, path: str | os.PathLike[str]) -> Path:
    """Write a ModelProto (external data beside it when over 1.8 GB) and return the path."""
    import onnx

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    large = model.ByteSize() > 1_800_000_000
    onnx.save_model(model, str(p), save_as_external_data=large, location=p.name + ".data" if large else None)
    return p


def emulate_in_fp32(model: Any) -> Any:
    """An FP32 model that rounds every BF16 tensor of ``model`` through BF16 (Cast to bfloat16 and back)
    and computes each op in FP32: a stand-in for runtimes without BF16 kernels (onnxruntime's CPU
    provider has no BF16 Conv). It reproduces the storage rounding of a BF16 engine, not the kernels'
    own arithmetic (TensorRT accumulates in FP32 anyway). Tensor names are those of ``model``."""
    import onnx
    from onnx import helper, numpy_helper

    m = load_onnx(model)
    g = m.graph

    def to_fp32(t: Any) -> Any:
        bits = np.frombuffer(t.raw_data, dtype=np.uint16) if t.raw_data else np.array(t.int32_data, np.uint16)
        return numpy_helper.from_array(bfloat16_bits_to_float(bits).reshape(tuple(t.dims)), t.name)

    for init in g.initializer:
        if init.data_type == BFLOAT16:
            init.CopyFrom(to_fp32(init))
    types = _elem_types(onnx.shape_inference.infer_shapes(m, strict_mode=False))
    nodes: list[Any] = []
    for node in g.node:
        for attr in node.attribute:
            if attr.type == attr.TENSOR and attr.t.data_type == BFLOAT16:
                attr.t.CopyFrom(to_fp32(attr.t))
        if node.op_type == "Cast":
            to = next((a for a in node.attribute if a.name == "to"), None)
            if to is not None and to.i == BFLOAT16:
                out = node.output[0]
                node.output[0] = f"{out}__bf16r"
                nodes.append(node)
                nodes.append(helper.make_node("Cast", [node.output[0]], [out], name=f"{out}__emul/Cast", to=FLOAT))
                continue
            nodes.append(node)
            continue
        nodes.append(node)
        for j, o in enumerate(node.output):
            if o and types.get(o) == BFLOAT16 and node.op_type != "Constant":
                node.output[j] = f"{o}__acc"
                nodes.append(helper.make_node("Cast", [node.output[j]], [f"{o}__bf16r"], name=f"{o}__round/Cast", to=BFLOAT16))
                nodes.append(helper.make_node("Cast", [f"{o}__bf16r"], [o], name=f"{o}__emul/Cast", to=FLOAT))
    del g.node[:]
    g.node.extend(nodes)
    del g.value_info[:]
    for vi in g.output:
        if vi.type.tensor_type.elem_type == BFLOAT16:
            vi.type.tensor_type.elem_type = FLOAT
    return onnx.shape_inference.infer_shapes(m, strict_mode=False)
