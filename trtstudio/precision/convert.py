"""FP16 / BF16 variants of an ONNX model, the way strongly-typed TensorRT 11 and TensorRT-RTX read them.

TensorRT 11 has no ``BuilderFlag.FP16``: a layer runs in half precision because its tensors are half
in the model. :func:`convert_float` rewrites a float32 model so that:

- float32 initializers, Constant values and tensors become FP16 (or BF16);
- the model's inputs and outputs stay FP32, with ``Cast`` nodes at the boundary;
- nodes that must stay FP32 keep FP32 tensors, with ``Cast`` nodes around them: a block list of op
  types or node names, ops whose ONNX schema allows no half type at this opset (``Range``, the
  ``scales`` input of ``Resize``), ops with random or shape semantics, custom-domain ops, and
  shape-computing subgraphs (everything computed only from ``Shape``/``Size`` results); optionally
  reductions and normalisations (Softmax, LayerNorm, Reduce*);
- control flow (``If``, ``Loop``, ``Scan``) is converted inside: the node keeps FP32 at its boundary
  (its inputs, its outputs and the outer tensors its branches read), and each branch or body is
  converted by the same rules, with casts at its edges, as a graph of its own (nested ones too);
  weights the branches read from the main graph get a low copy there;
- IR-3 models, where every initializer is also listed as a graph input, keep those inputs consistent:
  an initializer made low is declared low as an input, and a low copy is listed as an input too;
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
    control_flow: list[str] = field(default_factory=list)  # If/Loop/Scan nodes converted inside

    def to_json(self) -> dict[str, Any]:
        """Summary for JSON output (no model)."""
        return {
            "dtype": self.dtype,
            "low_nodes": len(self.low_nodes),
            "fp32_nodes": dict(self.fp32_nodes),
            "casts": self.casts,
            "converted_initializers": self.converted_initializers,
            "clipped_values": self.clipped_values,
            "control_flow": list(self.control_flow),
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
    return _graph_types(model.graph)


def _graph_types(g: Any) -> dict[str, int]:
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


def _shape_tainted(graph: Any, static: set[str], outer: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """Tensors computed only from Shape/Size results (and constants): shape arithmetic (``outer``:
    the tainted tensors of enclosing graphs that ``graph`` may read)."""
    tainted: set[str] = set(outer)
    for node in graph.node:
        if node.op_type in SHAPE_SOURCES:
            tainted.update(o for o in node.output if o)
            continue
        reads = [*node.input, *(t for sub in _subgraphs(node) for t in _outer_refs(sub))]  # branches read too
        dynamic = [i for i in reads if i and i not in static]
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


def _subgraphs(node: Any) -> list[Any]:
    """The GraphProtos of a node's attributes (If's branches, Loop's and Scan's body)."""
    out: list[Any] = []
    for a in node.attribute:
        if a.type == a.GRAPH:
            out.append(a.g)
        elif a.type == a.GRAPHS:
            out.extend(a.graphs)
    return out


def _outer_refs(graph: Any) -> list[str]:
    """Names ``graph`` (and graphs nested in it) reads from enclosing scopes, in order."""
    defined = {i.name for i in graph.input} | {i.name for i in graph.initializer}
    defined.update(o for n in graph.node for o in n.output if o)
    refs: dict[str, None] = {}
    for node in graph.node:
        for t in node.input:
            if t and t not in defined:
                refs[t] = None
        for sub in _subgraphs(node):
            refs.update((t, None) for t in _outer_refs(sub) if t not in defined)
    refs.update((o.name, None) for o in graph.output if o.name not in defined)
    return list(refs)


def _rename_refs(graph: Any, mapping: dict[str, str]) -> None:
    """Point every read of an outer name in ``mapping`` (nested graphs too) at its new name (ONNX
    names are unique across scopes, so no local name is touched)."""
    for node in graph.node:
        for i, t in enumerate(node.input):
            if t in mapping:
                node.input[i] = mapping[t]
        for sub in _subgraphs(node):
            _rename_refs(sub, mapping)
    for o in graph.output:
        if o.name in mapping:
            o.name = mapping[o.name]


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
    unknown = sorted(block_nodes - {n.name for n in _all_nodes(m.graph)})
    if unknown:
        raise InputError(source, f"block list names node(s) the model lacks: {', '.join(unknown)}")
    conv = _Converter(m, m.graph, dtype, {"block_ops": set(block_ops), "block_nodes": block_nodes,
                                          "fp32_reductions": fp32_reductions, "bf16_schema_notes": set()})
    conv.run()
    conv.drop_unread_initializers()
    if m.ir_version < 4:
        _declare_initializer_inputs(m.graph)
    try:
        m = onnx.shape_inference.infer_shapes(m, strict_mode=False)
        onnx.checker.check_model(m)
    except Exception as exc:  # noqa: BLE001 - a converter bug; name it, not a traceback
        raise InputError(source, f"{dtype} conversion produced an invalid model: {str(exc).splitlines()[0]}") from None
    return conv.finish(m)


def _all_nodes(graph: Any) -> list[Any]:
    """The nodes of ``graph`` and of every graph nested in it."""
    out: list[Any] = []
    for node in graph.node:
        out.append(node)
        for sub in _subgraphs(node):
            out.extend(_all_nodes(sub))
    return out


def _declare_initializer_inputs(graph: Any) -> None:
    """IR 3 lists every initializer as a graph input: give each listed one its initializer's type,
    and list the initializers that were added (low copies)."""
    from onnx import helper

    inits = {i.name: i for i in graph.initializer}
    listed = set()
    for vi in graph.input:
        init = inits.get(vi.name)
        if init is not None:
            listed.add(vi.name)
            vi.type.tensor_type.elem_type = init.data_type
    for name, init in inits.items():
        if name not in listed:
            graph.input.append(helper.make_tensor_value_info(name, init.data_type, list(init.dims)))


class _Converter:
    """The state of one :func:`convert_float` on one graph: a plan per node, then the graph
    rewritten in steps. A control-flow node's branches are converted by child converters
    (``parent`` set), whose boundary (inputs, outputs, outer reads) stays FP32."""

    def __init__(self, m: Any, g: Any, dtype: str, options: dict[str, Any], parent: _Converter | None = None) -> None:
        self.m, self.g, self.dtype, self.tag, self.options = m, g, dtype, dtype, options
        self.parent = parent
        if parent is not None:  # names are unique across scopes: each branch's new names get their own tag
            options["graphs"] = options.get("graphs", 0) + 1
            self.tag = f"{dtype}_g{options['graphs']}"
        self.low = LOW_TYPES[dtype]
        self.low_str = TYPE_STR[self.low]
        self.types: dict[str, int] = {**parent.types, **_graph_types(g)} if parent is not None else _graph_types(g)
        self.inits = {i.name: i for i in g.initializer}
        self.graph_inputs = {i.name for i in g.input if i.name not in self.inits}
        self.graph_outputs = {o.name for o in g.output}
        self.constants = {n.output[0] for n in g.node if n.op_type == "Constant" and n.output}
        static = set(self.inits) | self.constants
        outer_tainted: set[str] = parent.tainted if parent is not None else set()
        if parent is not None:  # outer weights and constants are static here too
            static |= set(parent.types) - outer_tainted
        self.tainted: set[str] = _shape_tainted(g, static, outer_tainted)
        self.res: ConvertResult = parent.res if parent is not None else ConvertResult(m, dtype)
        self.flow: dict[int, list[str]] = {}  # control-flow node index -> the outer names its graphs read
        self.plan: dict[int, tuple[bool, set[int], set[int]]] = {}
        self.low_tensors: set[str] = set()
        self.renamed: dict[str, str] = {}
        self.new_nodes: list[Any] = []
        self.new_inits: list[Any] = []
        self.value_info: dict[str, int] = {}  # new tensors -> elem type (shape copied from the source)
        self.cast_source: dict[str, str] = {}
        self.low_copy: dict[str, str] = {}
        self.fp32_copy: dict[str, str] = {}

    def run(self) -> None:
        """Plan, rewrite and retype this graph (and, through :meth:`rewrite_nodes`, its branches)."""
        self.plan_nodes()
        self.find_low_tensors()
        self.rewrite_nodes()
        self.convert_initializers()
        self.fix_value_info()

    def plan_nodes(self) -> None:
        """Pass 1: which nodes run in low precision, and which input/output slots stay FP32; control-flow
        nodes keep FP32 at their boundary and are converted inside."""
        for idx, node in enumerate(self.g.node):
            if node.op_type == "Constant":
                continue
            subs = _subgraphs(node)
            if subs and not (node.name in self.options["block_nodes"] or node.op_type in self.options["block_ops"]):
                self.plan[idx] = (False, set(), set())
                self.flow[idx] = [t for sub in subs for t in _outer_refs(sub)]
                self.res.control_flow.append(node.name or f"#{idx} {node.op_type}")
                continue
            if subs:
                self.plan[idx] = (False, set(), set())
                self.res.fp32_nodes[node.name or f"#{idx} {node.op_type}"] = (
                    "block list (node)" if node.name in self.options["block_nodes"] else "block list (op type)")
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
            for t in self.flow.get(idx, ()):  # read inside a branch: FP32 at the boundary
                if _is_float(self.types, t):
                    want_fp32[t] = want_fp32.get(t, 0) + 1
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
        out = f"{src}__{suffix}" if self.parent is None or suffix == self.tag else f"{src}__{suffix}_{self.tag}"
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
        owner = self._init_owner(t)
        if owner is not None:  # an FP32 initializer also read in FP32: a low copy where it is declared
            if t not in owner.low_copy:
                tensor, over = low_tensor(numpy_helper.to_array(owner.inits[t]), f"{t}__{owner.tag}", self.dtype)
                owner.new_inits.append(tensor)
                self.res.converted_initializers += 1
                self.res.clipped_values += over
                owner.low_copy[t] = tensor.name
                owner.value_info[tensor.name] = self.low
            return owner.low_copy[t]
        return self._cast(t, self.low, self.low_copy, self.tag)

    def _init_owner(self, t: str) -> _Converter | None:
        """The converter of the graph that declares ``t`` as an FP32 initializer (this one or an enclosing one)."""
        conv: _Converter | None = self
        while conv is not None:
            if t in conv.inits:
                return conv if conv.inits[t].data_type == FLOAT else None
            if t in conv.graph_inputs or t in conv.constants or t in conv.low_tensors:
                return None
            conv = conv.parent
        return None

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
            if idx in self.flow:
                self._convert_branches(node, self.flow[idx])
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

    def _convert_branches(self, node: Any, refs: list[str]) -> None:
        """Convert the graphs of a control-flow node: the outer tensors they read are given in FP32
        (a cast here where this graph holds them low), then each graph is converted on its own."""
        mapping = {}
        for t in dict.fromkeys(refs):
            if _is_float(self.types, t):
                fp32 = self._fp32_input(t)
                if fp32 != t:
                    mapping[t] = fp32
                    self.types[fp32] = FLOAT
        for sub in _subgraphs(node):
            if mapping:
                _rename_refs(sub, mapping)
            _Converter(self.m, sub, self.dtype, self.options, parent=self).run()

    def drop_unread_initializers(self) -> None:
        """Remove FP32 initializers that only low copies are read from now (and their IR-3 input entries)."""
        read = {t for n in _all_nodes(self.g) for t in n.input} | {o.name for o in self.g.output}
        drop = {t for t in self.low_copy if t in self.inits and t not in read}
        if not drop:
            return
        keep = [i for i in self.g.initializer if i.name not in drop]
        del self.g.initializer[:]
        self.g.initializer.extend(keep)
        inputs = [i for i in self.g.input if i.name not in drop]
        del self.g.input[:]
        self.g.input.extend(inputs)

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
        if res.control_flow:
            res.notes.append(f"converted inside {len(res.control_flow)} control-flow node(s) "
                             f"({', '.join(res.control_flow[:5])}{', ...' if len(res.control_flow) > 5 else ''}): "
                             "FP32 at their boundary, their branches converted")
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
