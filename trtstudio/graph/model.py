"""ONNX model -> Graph: nodes, tensors, shapes, initializers, subgraphs.

The loader reads the protobuf without external data (fast, and it works for models over 2 GB),
checks that every external-data file is there, runs shape inference that keeps symbolic dims,
and builds plain Python objects the views and the engine mapping use. Initializer values are
read lazily (``Graph.initializer_array``) only when someone asks for min/max/mean.
"""

from __future__ import annotations

import gc
import operator
import os
from collections import Counter
from dataclasses import dataclass, field
from itertools import compress, repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from trtstudio.bigdocs.gcpause import gc_paused
from trtstudio.errors import InputError
from trtstudio.graph.dtypes import ITEMSIZE as _ITEMSIZE
from trtstudio.graph.dtypes import dtype_name
from trtstudio.graph.params import count_parameters

_SEP = "\x00"  # between a node's names in Graph.search_columns

if TYPE_CHECKING:
    import onnx

SCHEMA = "trtstudio.model/1"

# Above this size shape inference runs on the file (infer_shapes_path) instead of in memory.
_INFER_IN_MEMORY_LIMIT = 1_500_000_000

# onnx.TensorProto.EXTERNAL and onnx.AttributeProto.{TENSOR, GRAPH, TENSORS, GRAPHS} (fixed by the ONNX spec)
_EXTERNAL = 1
_ATTR_TENSOR, _ATTR_GRAPH, _ATTR_TENSORS, _ATTR_GRAPHS = 4, 5, 9, 10


@dataclass
class Tensor:
    """A tensor of the graph: its dtype and shape (ints, or strings for symbolic/unknown dims)."""

    name: str
    dtype: str = "undefined"
    shape: list[int | str] | None = None
    kind: str = "intermediate"  # input | output | initializer | intermediate
    producer: int | None = None  # node index
    consumers: list[int] = field(default_factory=list)

    @property
    def numel(self) -> int | None:
        if self.shape is None:
            return None
        dims = [d for d in self.shape if isinstance(d, int)]
        if len(dims) != len(self.shape):  # a symbolic dim
            return None
        return int(np.prod(dims, dtype=np.int64)) if dims else 1

    @property
    def nbytes(self) -> int | None:
        n = self.numel
        size = _ITEMSIZE.get(self.dtype)
        return None if n is None or size is None else n * size

    def shape_text(self) -> str:
        if self.shape is None:
            return "?"
        return "[" + ",".join(str(d) for d in self.shape) + "]"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype, "shape": self.shape}


@dataclass
class Node:
    """One ONNX node. ``name`` is unique in its graph and never empty (``onnx_name`` is the original)."""

    index: int
    name: str
    op_type: str
    domain: str
    inputs: list[str]
    outputs: list[str]
    onnx_name: str = ""
    subgraphs: dict[str, Graph] = field(default_factory=dict)
    proto: Any = None  # onnx.NodeProto, for attributes on demand

    @property
    def qualified_op(self) -> str:
        return self.op_type if self.domain in ("", "ai.onnx") else f"{self.domain}::{self.op_type}"

    def attributes(self) -> dict[str, Any]:
        """Attribute name -> Python value (subgraphs shown as '<graph NAME: N nodes>')."""
        if self.proto is None:
            return {}
        from onnx import helper

        out: dict[str, Any] = {}
        for attr in self.proto.attribute:
            if attr.type == attr.GRAPH:
                out[attr.name] = f"<graph {attr.g.name or attr.name}: {len(attr.g.node)} nodes>"
            elif attr.type == attr.GRAPHS:
                out[attr.name] = [f"<graph {g.name}: {len(g.node)} nodes>" for g in attr.graphs]
            elif attr.type == attr.TENSOR:
                t = attr.t
                out[attr.name] = f"<tensor {dtype_name(t.data_type)} {list(t.dims)}>"
                if int(np.prod(list(t.dims) or [1])) <= 16 and not t.data_location:
                    try:
                        from onnx import numpy_helper

                        out[attr.name] = numpy_helper.to_array(t).tolist()
                    except Exception:  # noqa: BLE001 - keep the summary
                        pass
            else:
                value = helper.get_attribute_value(attr)
                if isinstance(value, bytes):
                    value = value.decode("utf-8", "replace")
                elif isinstance(value, list):
                    value = [v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in value]
                out[attr.name] = value
        return out


@dataclass
class Graph:
    """A (sub)graph: nodes in file order (which ONNX requires to be topological)."""

    name: str
    nodes: list[Node]
    tensors: dict[str, Tensor]
    inputs: list[str]  # graph inputs that are not initializers
    outputs: list[str]
    initializers: dict[str, Any]  # name -> onnx.TensorProto (raw data may be external)
    owner: str | None = None  # "node_name.attr" for subgraphs
    depth: int = 0
    base_dir: str = "."
    node_by_name: dict[str, int] = field(default_factory=dict)
    implicit_inputs: dict[int, list[str]] = field(default_factory=dict)  # node -> outer tensors its bodies read
    # what find() searches, made on the first search or ahead of it (search_columns)
    _search: tuple[list[str], list[str], list[int]] | None = field(default=None, init=False, repr=False, compare=False)

    def edges(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """(src node, dst node, tensor name) for every data edge between two nodes of this graph."""
        tget, implicit = self.tensors.get, self.implicit_inputs
        src: list[int] = []
        dst: list[int] = []
        names: list[str] = []
        add_src, add_dst, add_name = src.append, dst.append, names.append
        for node in self.nodes:
            i = node.index
            for tname in (node.inputs + implicit.get(i, []) if implicit else node.inputs):
                t = tget(tname)
                if t is not None:
                    p = t.producer
                    if p is not None and p != i:
                        add_src(p)
                        add_dst(i)
                        add_name(tname)
        return np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64), names

    def initializer_array(self, name: str) -> np.ndarray | None:
        """Load an initializer's values (from external data if needed); None if it cannot be read."""
        proto = self.initializers.get(name)
        if proto is None:
            return None
        from onnx import numpy_helper

        try:
            if proto.data_location == proto.EXTERNAL:
                return numpy_helper.to_array(proto, base_dir=self.base_dir)
            return numpy_helper.to_array(proto)
        except Exception:  # noqa: BLE001 - stats are optional
            return None

    def initializer_stats(self, name: str) -> dict[str, float] | None:
        arr = self.initializer_array(name)
        if arr is None or arr.size == 0 or not np.issubdtype(arr.dtype, np.number):
            return None
        a = arr.astype(np.float64, copy=False)
        return {"min": float(a.min()), "max": float(a.max()), "mean": float(a.mean())}

    def walk(self) -> list[Graph]:
        """This graph and all nested subgraphs, depth first."""
        out = [self]
        for node in [n for n in self.nodes if n.subgraphs]:  # few nodes have any: one pass picks them
            for sub in node.subgraphs.values():
                out.extend(sub.walk())
        return out

    def find(self, text: str) -> list[int]:
        """Indices of nodes whose name, op type or any input/output tensor name contains ``text`` (case-insensitive)."""
        q = text.strip().lower()
        if not q:
            return []
        texts, ops, index = self.search_columns()
        if _SEP in q:  # not typed; it would match across two of a node's names
            return [i for i, node in zip(index, self.nodes, strict=True)
                    if any(q in t.lower() for t in (node.name, *node.inputs, *node.outputs, node.qualified_op))]
        op_hit = {op: q in op for op in set(ops)}  # (an op type equal to q is one it contains)
        return list(compress(index, map(operator.or_, map(operator.contains, texts, repeat(q)),
                                        map(op_hit.__getitem__, ops))))

    def search_columns(self) -> tuple[list[str], list[str], list[int]]:
        """Per node: its name and tensor names lowercased in one string (separated by a character
        nobody types), its qualified op type lowercased, its index. Made once: each keystroke in
        the search field then tests 100,000 nodes in C (15 ms, not 150 ms lowering every name).
        The window makes them in the model's load worker (50 ms at 100,000 nodes)."""
        if self._search is None:
            nodes = self.nodes
            texts = [_SEP.join((n.name, *n.inputs, *n.outputs)).lower() for n in nodes]
            ops = [n.qualified_op.lower() for n in nodes]
            self._search = (texts, ops, [n.index for n in nodes])
        return self._search


@dataclass
class Model:
    path: str
    ir_version: int
    opsets: dict[str, int]
    producer: str
    graph: Graph
    proto: Any = None
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Everything ``trtstudio inspect --json`` prints."""
        g = self.graph
        graphs = g.walk()
        # op types counted in C; the few in other domains are qualified afterwards
        ops = [n.op_type for n in g.nodes]
        by_op = Counter(zip([n.domain for n in g.nodes], ops, strict=True))
        counts: Counter[str] = Counter()
        for (domain, op), k in by_op.items():
            counts[op if domain in ("", "ai.onnx") else f"{domain}::{op}"] += k
        params = count_parameters(g, ops)  # initializers, and weights in Constant / ConstantOfShape nodes
        subgraphs = [
            {"owner": sub.owner, "name": sub.name, "depth": sub.depth, "nodes": len(sub.nodes)}
            for sub in graphs[1:]
        ]
        return {
            "schema": SCHEMA,
            "path": self.path,
            "ir_version": self.ir_version,
            "opsets": self.opsets,
            "producer": self.producer,
            "graph_name": g.name,
            "nodes": len(g.nodes),
            "nodes_total": sum(len(s.nodes) for s in graphs),
            "op_counts": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
            "inputs": [g.tensors[n].to_json() for n in g.inputs],
            "outputs": [g.tensors[n].to_json() for n in g.outputs],
            "initializers": len(g.initializers),
            "parameters": params.parameters,
            "parameter_bytes": params.bytes,
            "parameters_in_constants": params.in_constants,
            "parameter_sources": params.to_json(),
            "subgraphs": subgraphs,
            "custom_domains": sorted({d for s in graphs for d in {n.domain for n in s.nodes}} - {"", "ai.onnx"}),
            "warnings": self.warnings,
        }


def _shape_of(type_proto: Any) -> tuple[str, list[int | str] | None]:
    tt = type_proto.tensor_type
    if not type_proto.HasField("tensor_type"):
        which = type_proto.WhichOneof("value")
        return (which or "undefined"), None
    dtype = dtype_name(tt.elem_type)
    if not tt.HasField("shape"):
        return dtype, None
    dims: list[int | str] = []
    for d in tt.shape.dim:
        # -1: a dynamic dim as Paddle's exporters write it (every PaddleOCR batch), read as one
        if d.HasField("dim_value") and d.dim_value != -1:
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append("?")
    return dtype, dims


def _graph_tensors(gproto: Any, initializers: dict[str, Any]) -> tuple[dict[str, Tensor], list[str], list[str]]:
    """The tensors ``gproto`` declares (initializers, value_info, inputs, outputs), its input names
    (initializers listed as inputs left out) and its output names."""
    tensors: dict[str, Tensor] = {}
    for init in gproto.initializer:
        tensors[init.name] = Tensor(init.name, dtype_name(init.data_type), [int(d) for d in init.dims], "initializer")
    for vi in gproto.value_info:
        dtype, shape = _shape_of(vi.type)
        tensors[vi.name] = Tensor(vi.name, dtype, shape)
    inputs = []
    for vi in gproto.input:
        dtype, shape = _shape_of(vi.type)
        if vi.name in initializers:
            continue
        tensors[vi.name] = Tensor(vi.name, dtype, shape, "input")
        inputs.append(vi.name)
    outputs = []
    for vi in gproto.output:
        dtype, shape = _shape_of(vi.type)
        t = tensors.get(vi.name)
        if t is None or shape is not None:
            t = Tensor(vi.name, dtype, shape)
            tensors[vi.name] = t
        t.kind = "output"
        outputs.append(vi.name)
    return tensors, inputs, outputs


def _build_graph(gproto: Any, base_dir: str, owner: str | None, depth: int, outer: set[str],
                 external: list[Any] | None = None) -> Graph:
    """The Graph of ``gproto`` (and its subgraphs); ``external`` collects the initializer and
    attribute TensorProtos whose data lies in external files, for :func:`_check_external`."""
    initializers = {init.name: init for init in gproto.initializer}
    if external is not None:
        external.extend(init for init in gproto.initializer if init.data_location == _EXTERNAL)
    tensors, inputs, outputs = _graph_tensors(gproto, initializers)

    nodes: list[Node] = []
    by_name: dict[str, int] = {}
    graph = Graph(gproto.name or "main", nodes, tensors, inputs, outputs, initializers, owner, depth, base_dir,
                  by_name)
    local: set[str] = set(initializers) | set(inputs)
    synced = 0  # nodes[:synced] have their outputs in ``local`` (needed only where a subgraph starts)
    for i, np_ in enumerate(gproto.node):
        onnx_name, op = np_.name, np_.op_type
        name = onnx_name or f"{op}_{i}"
        if name in by_name:
            name = f"{name}#{i}"
        node = Node(i, name, op, np_.domain, [x for x in np_.input if x], list(np_.output), onnx_name, {}, np_)
        nodes.append(node)
        by_name[name] = i
        for tname in node.inputs:
            t = tensors.get(tname)
            if t is None:
                t = tensors[tname] = Tensor(tname)
            t.consumers.append(i)
        for tname in node.outputs:
            if not tname:
                continue
            t = tensors.get(tname)
            if t is None:
                t = tensors[tname] = Tensor(tname)
            if t.producer is not None:
                raise ValueError(f"tensor '{tname}' is produced by two nodes ({nodes[t.producer].name}, {name})")
            t.producer = i
        for attr in np_.attribute:
            atype = attr.type
            if atype == _ATTR_TENSOR or atype == _ATTR_TENSORS:
                if external is not None:
                    external.extend(x for x in ([attr.t] if atype == _ATTR_TENSOR else attr.tensors)
                                    if x.data_location == _EXTERNAL)
                continue
            subs = [attr.g] if atype == _ATTR_GRAPH else list(attr.graphs) if atype == _ATTR_GRAPHS else []
            if not subs:
                continue
            for before in nodes[synced:i]:
                local.update(before.outputs)
            synced = i
            visible = outer | local
            for k, sub in enumerate(subs):
                key = attr.name if len(subs) == 1 else f"{attr.name}[{k}]"
                body = _build_graph(sub, base_dir, f"{name}.{key}", depth + 1, visible, external)
                node.subgraphs[key] = body
                implicit = sorted(
                    {t for t in _free_tensors(body) if t in visible or t in tensors}
                )
                if implicit:
                    graph.implicit_inputs.setdefault(i, [])
                    graph.implicit_inputs[i].extend(x for x in implicit if x not in graph.implicit_inputs[i])
    _check_order(graph)
    return graph


def _free_tensors(body: Graph) -> set[str]:
    """Tensors a body reads that it does not define (outer-scope references), nested bodies included."""
    defined = set(body.initializers) | set(body.inputs)
    for n in body.nodes:
        defined.update(n.outputs)
    free: set[str] = set()
    for n in body.nodes:
        free.update(t for t in n.inputs if t not in defined)
        for sub in n.subgraphs.values():
            free.update(t for t in _free_tensors(sub) if t not in defined)
    return free


def _check_order(graph: Graph) -> None:
    """Reject cyclic graphs. File order need not be topological, but the graph must be a DAG."""
    n = len(graph.nodes)
    if n == 0:
        return
    if not graph.implicit_inputs:
        # Consumers are recorded in node order: when every tensor's first consumer comes after its
        # producer, every edge points forward and file order is a topological order.
        for tensor in graph.tensors.values():
            p = tensor.producer
            if p is not None and tensor.consumers and tensor.consumers[0] <= p:
                break
        else:
            return
    indeg = np.zeros(n, dtype=np.int64)
    succ: list[list[int]] = [[] for _ in range(n)]
    for node in graph.nodes:
        for tname in set(node.inputs) | set(graph.implicit_inputs.get(node.index, [])):
            t = graph.tensors.get(tname)
            if t is not None and t.producer is not None:
                if t.producer == node.index:
                    raise ValueError(f"graph is cyclic: node '{node.name}' consumes its own output '{tname}'")
                succ[t.producer].append(node.index)
                indeg[node.index] += 1
    stack = [int(i) for i in np.flatnonzero(indeg == 0)]
    seen = 0
    while stack:
        i = stack.pop()
        seen += 1
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                stack.append(j)
    if seen != n:
        stuck = [graph.nodes[i].name for i in np.flatnonzero(indeg > 0)[:3]]
        raise ValueError(f"graph is cyclic: {n - seen} nodes lie on a cycle (e.g. {', '.join(stuck)})")


def _check_external(external: list[Any], base_dir: str, path: str) -> None:
    """Every external-data reference (``external``: the TensorProtos :func:`_build_graph` found with
    external data) must name a regular file inside the model's folder, with numeric offset/length
    that fit it. Nothing outside the folder is opened (a model is untrusted input)."""
    root = os.path.realpath(base_dir)
    for tensor in external:
        if tensor.data_location == _EXTERNAL:
            info = {e.key: e.value for e in tensor.external_data}
            loc = info.get("location", "")
            full = os.path.realpath(os.path.join(root, loc))
            if loc and (os.path.isabs(loc) or os.path.commonpath([root, full]) != root):
                raise InputError(path, f"external data location '{loc}' for tensor '{tensor.name}' lies outside the "
                                       "model's folder: refused (it is never read)")
            if not loc or not os.path.isfile(full):
                raise InputError(path, f"external data file '{loc}' for tensor '{tensor.name}' not found beside the model")
            need = 0
            for key in ("offset", "length"):
                text = info.get(key, "") or "0"
                try:
                    value = int(text)
                except ValueError:
                    value = -1
                if value < 0:
                    raise InputError(path, f"external data {key} '{text[:40]}' for tensor '{tensor.name}' is not a "
                                           "non-negative integer")
                need += value
            if need and os.path.getsize(full) < need:
                raise InputError(path, f"external data file '{loc}' is truncated (tensor '{tensor.name}' needs "
                                       f"{need} bytes, file has {os.path.getsize(full)})")


def _has_negative(shape: list[int | str]) -> bool:
    try:
        return min(shape) < 0  # type: ignore[type-var,operator]  # all ints (the usual case)
    except TypeError:  # names among the dims
        return any(isinstance(d, int) and d < 0 for d in shape)


def _content_warnings(proto: onnx.ModelProto, graph: Graph) -> list[str]:
    """Suspicious but loadable content: unknown opset versions, negative dims, dangling inputs."""
    import onnx
    from onnx import defs

    out: list[str] = []
    known = {"": defs.onnx_opset_version(), "ai.onnx": defs.onnx_opset_version()}
    for o in proto.opset_import:
        latest = known.get(o.domain)
        if o.version < 1 or (latest is not None and o.version > latest):
            out.append(f"opset {o.domain or 'ai.onnx'} version {o.version} is unknown (this onnx "
                       f"{onnx.__version__} knows 1..{latest or '?'}); "
                       "TensorRT will refuse it")
    graphs = graph.walk()
    # shapes with an int below 0: most shapes have none, and min() over them runs in C
    negative = [f"{t.name} {t.shape_text()}" for g in graphs for t in g.tensors.values()
                if t.shape and _has_negative(t.shape)]
    if negative:
        out.append(f"{len(negative)} tensor(s) with a negative dimension, e.g. {negative[0]}; a dimension is "
                   "a size (>= 0) or a name")
    if len(graphs) == 1:  # the tensor table knows: read by a node, written by none, no input or initializer
        g = graph
        outer = set(g.inputs) | set(g.initializers)
        dangling = sorted(name for name, t in g.tensors.items() if t.consumers and t.producer is None
                          and t.kind not in ("input", "initializer") and name not in outer)
    else:  # a subgraph may read any enclosing graph's tensors
        defined: set[str] = set()
        for g in graphs:
            defined.update(g.inputs, g.initializers)
            for n in g.nodes:
                defined.update(n.outputs)
            defined.update(t.name for t in g.tensors.values() if t.kind in ("input", "initializer"))
        used: set[str] = set()
        for g in graphs:
            for n in g.nodes:
                used.update(n.inputs)
        dangling = sorted(used - defined)
    if dangling:
        out.append(f"{len(dangling)} node input(s) that no node, graph input or initializer provides "
                   f"(dangling): {', '.join(repr(t) for t in dangling[:5])}")
    return out


def load_model(path: str | os.PathLike[str], *, infer_shapes: bool = True) -> Model:
    """Load an ONNX model; raise InputError (one line) for anything that is not a usable model.

    With the cyclic collector enabled, a loaded model is moved to its permanent generation
    (``gc.freeze``, :func:`trtstudio.bigdocs.gcpause.gc_paused`, as for engines): everything
    the process holds then is, so cyclic garbage not yet collected stays. The model's objects
    have no cycles and are still freed when the last reference to them goes."""
    # Hundreds of thousands of small objects and no cycles: the cyclic collector's full passes
    # over them cost more than the load itself (3.1 s -> 1.1 s at 100,000 nodes). They are
    # long-lived too: frozen, the collector's next pass does not walk them (0.25 s at 100,000
    # nodes, paid by whatever ran next).
    with gc_paused():
        return _load_model(path, infer_shapes)


def _adopt_shapes(graph: Graph, inferred: Graph) -> None:
    """Give ``graph``'s tensors the dtypes and shapes of ``inferred`` (the same graph built after shape
    inference), keeping the Tensor objects views already hold and ``inferred``'s tensor order."""
    old = graph.tensors
    merged: dict[str, Tensor] = {}
    for name, t in inferred.tensors.items():
        mine = old.get(name)
        if mine is None:
            merged[name] = t
            continue
        mine.dtype, mine.shape, mine.kind = t.dtype, t.shape, t.kind
        merged[name] = mine
    for name, t in old.items():
        merged.setdefault(name, t)
    old.clear()
    old.update(merged)
    for node, inode in zip(graph.nodes, inferred.nodes, strict=True):
        for key, body in node.subgraphs.items():
            if key in inode.subgraphs:
                _adopt_shapes(body, inode.subgraphs[key])


def infer_shapes_later(model: Model, *, isolated: bool = False) -> list[str]:
    """Run the shape inference a ``load_model(path, infer_shapes=False)`` skipped (in a worker: it
    takes about as long as the load) and fill in the model's tensors in place, so that the model
    then equals what ``load_model(path)`` returns. Returns the warnings it added to ``model.warnings``.

    ``isolated``: infer in a child process (:func:`inferred_table` there) and adopt only its
    dtypes and shapes. ONNX's shape inference is C++ that holds the GIL for its whole run (about a
    second at 100,000 nodes), which froze the window's thread however it was scheduled; a crash in
    it on a hostile model costs a warning instead of the application. ``model.proto`` then stays
    the file's own protobuf (without the inferred ``value_info``).
    """
    if isolated:
        warnings, table = _infer_in_child(model.path)
        if table is not None:
            _adopt_table(model.graph, table)
        model.warnings.extend(warnings)
        return warnings
    with gc_paused(freeze=False):
        warnings = []
        proto = _inferred_proto(model.proto, model.path, warnings)
        if proto is not model.proto:
            inferred = _build_graph(proto.graph, model.graph.base_dir, None, 0, set())
            _adopt_shapes(model.graph, inferred)
            model.proto = proto
        model.warnings.extend(warnings)
        return warnings


_CHILD_TIMEOUT_S = 900.0


def _table(graph: Graph) -> dict[str, Any]:
    """The dtypes and shapes of ``graph``'s tensors in order, with its nodes' subgraphs."""
    return {
        "t": [[t.name, t.dtype, t.shape, t.kind] for t in graph.tensors.values()],
        "s": [[i, key, _table(body)] for i, node in enumerate(graph.nodes) for key, body in node.subgraphs.items()],
    }


def inferred_table(path: str) -> dict[str, Any]:
    """What the child of an isolated inference prints: ``{"warnings", "table"}`` for the model at
    ``path`` after shape inference (``table`` None when inference failed). The collector stays
    off: the child exits when it has printed this, and its passes tripled the time."""
    gc.disable()
    import onnx

    original = onnx.load(path, load_external_data=False)  # the parent's load_model has checked the file
    warnings: list[str] = []
    proto = _inferred_proto(original, path, warnings)
    if proto is original:
        return {"warnings": warnings, "table": None}
    graph = _build_graph(proto.graph, os.path.dirname(path) or ".", None, 0, set())
    return {"warnings": warnings, "table": _table(graph)}


def _infer_in_child(path: str) -> tuple[list[str], dict[str, Any] | None]:
    import subprocess

    import trtstudio.jsonio as jsonio
    from trtstudio.bigdocs import children

    try:
        done = subprocess.run(children.command(children.INFER_SHAPES_FLAG, path), capture_output=True,
                              timeout=_CHILD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return [f"shape inference took over {_CHILD_TIMEOUT_S:.0f} s and was stopped; shapes may be missing"], None
    except OSError as exc:
        return [f"shape inference could not start ({exc}); shapes may be missing"], None
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = err[-1][:200] if err else f"exit status {done.returncode}"
        return [f"shape inference failed, shapes may be missing: {why}"], None
    try:
        doc = jsonio.loads(done.stdout)
        return [str(w) for w in doc["warnings"]], doc["table"]
    except (ValueError, KeyError, TypeError) as exc:
        return [f"shape inference failed, shapes may be missing: unreadable result ({exc})"], None


def _adopt_table(graph: Graph, table: dict[str, Any]) -> None:
    """:func:`_adopt_shapes` from a child's :func:`_table`: the same tensor order, the same objects kept."""
    old = graph.tensors
    merged: dict[str, Tensor] = {}
    for name, dtype, shape, kind in table["t"]:
        mine = old.get(name)
        if mine is None:
            merged[name] = Tensor(name, dtype, shape, kind)  # a value_info no node touches
            continue
        mine.dtype, mine.shape, mine.kind = dtype, shape, kind
        merged[name] = mine
    for name, t in old.items():
        merged.setdefault(name, t)
    old.clear()
    old.update(merged)
    for i, key, sub in table["s"]:
        if 0 <= i < len(graph.nodes) and key in graph.nodes[i].subgraphs:
            _adopt_table(graph.nodes[i].subgraphs[key], sub)


def _inferred_proto(proto: onnx.ModelProto, spath: str, warnings: list[str]) -> onnx.ModelProto:
    """``proto`` after ONNX shape inference (on the file above the in-memory limit); ``proto`` itself
    with a warning appended when inference fails."""
    import onnx
    from onnx import shape_inference

    try:
        if os.path.getsize(spath) < _INFER_IN_MEMORY_LIMIT:
            return shape_inference.infer_shapes(proto, check_type=False, strict_mode=False, data_prop=True)
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "inferred.onnx")
            shape_inference.infer_shapes_path(spath, out)
            return onnx.load(out, load_external_data=False)
    except Exception as exc:  # noqa: BLE001 - shapes are a bonus; keep the model
        warnings.append(f"shape inference failed, shapes may be missing: {str(exc).splitlines()[0][:200]}")
        return proto


def _load_model(path: str | os.PathLike[str], infer_shapes: bool) -> Model:
    from trtstudio.fileio import check_input

    p = check_input(path, what="an ONNX model")
    spath = str(p)
    size = p.stat().st_size
    if size == 0:
        raise InputError(spath, "empty file")
    import onnx
    from google.protobuf.message import DecodeError

    with open(p, "rb") as fh:
        head = fh.read(64)
    if head.lstrip().startswith((b"{", b"[", b"<")) or head.startswith((b"PK", b"\x89PNG", b"%PDF")):
        raise InputError(spath, "not an ONNX model (looks like a text, archive or image file)")
    try:
        proto = onnx.load(spath, load_external_data=False)
    except DecodeError as exc:
        raise InputError(spath, f"not an ONNX model or truncated/corrupt protobuf ({exc})") from None
    except Exception as exc:  # noqa: BLE001 - protobuf raises several types
        raise InputError(spath, f"cannot read ONNX protobuf: {exc}") from None
    if not proto.HasField("graph") or (proto.ir_version == 0 and not proto.opset_import):
        raise InputError(spath, "not an ONNX model (no graph or IR version in the protobuf)")
    if proto.ir_version > onnx.IR_VERSION:
        raise InputError(spath, f"unsupported IR version {proto.ir_version} (this onnx {onnx.__version__} reads up to "
                                f"{onnx.IR_VERSION}); upgrade onnx")
    base_dir = str(p.parent)
    warnings: list[str] = []
    external: list[Any] = []
    if infer_shapes:  # it reads no external data (load_external_data=False); those files are checked below
        proto = _inferred_proto(proto, spath, warnings)
    try:
        graph = _build_graph(proto.graph, base_dir, None, 0, set(), external)
    except ValueError as exc:
        raise InputError(spath, str(exc)) from None
    _check_external(external, base_dir, spath)
    warnings.extend(_content_warnings(proto, graph))
    opsets = {(o.domain or "ai.onnx"): int(o.version) for o in proto.opset_import}
    producer = f"{proto.producer_name} {proto.producer_version}".strip()
    return Model(spath, int(proto.ir_version), opsets, producer, graph, proto, warnings)
