"""What TensorRT's ONNX parser refuses, said so a user can act on it, and the support check.

:func:`diagnose` turns raw parser errors into one entry per rejected node: the node by name (or
``#index OpType`` when unnamed), its domain, a reason in words (TensorRT's checkers often say only
``false`` or quote an assertion) and a hint. :func:`check_support` runs the parser's support check
without building (like Polygraphy's ``inspect capability``): supported and unsupported partitions in
node order, counts by op type, and the nodes' states for painting the graph
(:meth:`CheckResult.node_states`).

The build (:mod:`trtstudio.backends.build`) and the check share the runtime import, the parsed
network and the versions of :mod:`trtstudio.backends.trt_parser`; this module imports nothing of
the build. Qt-free; ``onnx`` and ``tensorrt_rtx``/``tensorrt`` are imported inside the functions.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trtstudio.backends.model_io import OnnxModel, onnx_model, read_onnx
from trtstudio.backends.trt_parser import create_parser, import_runtime, parsed_network, versions

SCHEMA = "trtstudio.check/1"

# ONNX element types TensorRT takes (others: "cannot take dtype ...").
_TRT_DTYPES = {
    "FLOAT", "FLOAT16", "BFLOAT16", "DOUBLE", "INT8", "UINT8", "INT32", "INT64", "BOOL", "FLOAT8E4M3FN", "INT4",
    "FLOAT4E2M1",
}
_NOISE = re.compile(r"\n?\[checkMacros\.cpp::catchCudaError[^\n]*|\(cudaError \d+:[^)]*\)", re.S)
_ASSERT = re.compile(r'^(?:Assertion failed:\s*)?(?P<cond>.*?)\s*&&\s*"(?P<text>[^"]+)"\s*$', re.S)
_SUGGEST_ORT = "or leave this part to ONNX Runtime (its TensorRT execution provider runs the rest)"


@dataclass
class RawError:
    """One parser error as TensorRT gives it."""

    code: str
    desc: str
    index: int  # node index in the graph, -1 for inputs/initializers
    node_name: str = ""
    op_type: str = ""
    func: str = ""

    @classmethod
    def from_parser(cls, err: Any) -> RawError:
        code = err.code()
        return cls(
            code=getattr(code, "name", str(code)).split(".")[-1],
            desc=str(err.desc()),
            index=int(err.node()) if hasattr(err, "node") else -1,
            node_name=str(err.node_name()) if hasattr(err, "node_name") else "",
            op_type=str(err.node_operator()) if hasattr(err, "node_operator") else "",
            func=str(err.func()) if hasattr(err, "func") else "",
        )


def read_errors(parser: Any) -> list[RawError]:
    """Every error the parser recorded."""
    return [RawError.from_parser(parser.get_error(i)) for i in range(parser.num_errors)]


def node_label(name: str | None, index: int, op_type: str | None) -> str:
    """How a node is named to the user: its name, else ``#index OpType``."""
    if name:
        return name
    if index >= 0:
        return f"#{index} {op_type or '?'}"
    return op_type or "(model)"


def _dtype_name(elem_type: int) -> str:
    import onnx

    try:
        return str(onnx.TensorProto.DataType.Name(elem_type))
    except ValueError:
        return str(elem_type)


class _GraphIndex:
    """The ONNX graph's nodes, consumers and initializers, read once; inputs from the model's view."""

    def __init__(self, model: OnnxModel) -> None:
        g = model.proto.graph
        self.nodes = list(g.node)
        self.consumers: dict[str, list[int]] = {}
        for i, n in enumerate(self.nodes):
            for t in n.input:
                if t:
                    self.consumers.setdefault(t, []).append(i)
        self.inits = {i.name: i for i in g.initializer}
        self.inputs = model.inputs

    def bad_inputs(self) -> list[tuple[str, str]]:
        """(input name, dtype) of graph inputs whose dtype TensorRT cannot take."""
        return [(t.name, t.onnx_type) for t in self.inputs if t.onnx_type not in _TRT_DTYPES]


def explain(err: RawError, op_type: str, domain: str, trt_name: str, version: str) -> tuple[str, str]:
    """A reason in words and a hint for one parser error."""
    desc = _NOISE.sub("", err.desc).strip()
    m = _ASSERT.match(desc)
    said = m.group("text").strip() if m else desc.removeprefix("Assertion failed:").strip()
    lower = desc.lower()
    func = err.func or ""
    runtime = f"{trt_name} {version}".strip()
    qual = f"{domain}::{op_type}" if domain and domain not in ("", "ai.onnx") else op_type
    if "plugin not found" in lower or func == "checkFallbackPluginImporter":
        return (
            f"{runtime} has no importer for {qual or 'this op'} and no plugin is registered under that name",
            f"register a TensorRT plugin named {op_type}, rewrite the node with onnx-graphsurgeon into supported ops, "
            + _SUGGEST_ORT,
        )
    if "dilation" in lower:
        return (
            f"{op_type} with dilations other than 1 is refused by {runtime}",
            "set dilations to 1 (or rewrite the pooling as a dilated depthwise Conv) with onnx-graphsurgeon, " + _SUGGEST_ORT,
        )
    if "antialias" in lower:
        return (
            f"Resize with antialias=1 is not supported by {runtime}",
            "export with antialias=False (a small accuracy change) or resize before the model",
        )
    if "cubic" in lower:
        return (f"{op_type}: {said}", "use linear or nearest mode, or resize before the model")
    if "convertdtype" in lower or "data type" in lower or "datatype" in lower:
        return (f"a data type {runtime} cannot take: {said}", "cast to a supported type (FP32/FP16/INT32/INT64) before export")
    if "failed to import initializer" in lower:
        return (
            f"an initializer has a data type or encoding {runtime} cannot take ({said})",
            "re-encode it (FP8 must be E4M3FN, not FNUZ; no UINT64/INT16/strings) or fold it away",
        )
    if any(k in lower for k in ("must be an initializer", "must be constant", "must be a constant", "initializer",
                                "shape tensor", "build-time", "is a shape tensor")):
        return (
            f"a value that must be known when the engine is built is computed at run time ({said})",
            "fold constants (polygraphy surgeon sanitize --fold-constants, onnxsim) or make that input an initializer",
        )
    if said in ("", "false") or (desc.strip() in ("", "false")):
        if func.startswith("check") or func.startswith("import"):
            return (
                f"{qual or 'this op'} is not supported by {runtime}",
                "rewrite it with onnx-graphsurgeon into supported ops, write a plugin, " + _SUGGEST_ORT,
            )
        return (f"{runtime} refused this node without a reason", "see the verbose build log; " + _SUGGEST_ORT)
    if err.code in ("UNSUPPORTED_NODE_ATTR",) or "attribute" in lower or "not supported" in lower:
        return (f"{op_type}: {said}", "change that attribute with onnx-graphsurgeon, " + _SUGGEST_ORT)
    if err.code in ("UNSUPPORTED_NODE_DATATYPE",) or "type" in lower and "support" in lower:
        return (f"{op_type}: {said}", "cast to a supported type before this node")
    if "dynamic" in lower or "dimension" in lower or "shape" in lower:
        return (f"{op_type}: {said}", "give fixed input shapes (--shapes) or fold shape computations")
    return (f"{op_type + ': ' if op_type else ''}{said}", "see the verbose build log; " + _SUGGEST_ORT)


def diagnose(errors: list[RawError], model: Any, trt_name: str = "TensorRT", version: str = "") -> list[dict[str, Any]]:
    """One entry per rejected node: ``{node, index, op_type, domain, reason, hint, code, detail}``
    (``model``: an OnnxModel, a ModelProto or a path, see :func:`~trtstudio.backends.model_io.onnx_model`).

    Errors on graph inputs or initializers (index -1) are put on the nodes that read them, with the
    input named in the reason. The same node rejected twice (the parser checks, then imports) shows once.
    """
    gi = _GraphIndex(onnx_model(model))
    entries: dict[Any, dict[str, Any]] = {}

    def add(key: Any, index: int, err: RawError, reason: str, hint: str, name: str | None = None) -> None:
        node = gi.nodes[index] if 0 <= index < len(gi.nodes) else None
        op = (node.op_type if node is not None else "") or err.op_type
        domain = (node.domain if node is not None else "") or ""
        label = node_label(node.name if node is not None else (name or err.node_name), index, op)
        detail = _NOISE.sub("", err.desc).strip()
        if key in entries:
            e = entries[key]
            if reason not in e["reason"]:
                e["reason"] += "; " + reason
            if detail and detail not in e["detail"]:
                e["detail"].append(detail)
            return
        entries[key] = {
            "node": label,
            "index": index,
            "op_type": op or None,
            "domain": domain or "ai.onnx",
            "reason": reason,
            "hint": hint,
            "code": err.code,
            "detail": [detail] if detail else [],
        }

    for err in errors:
        index = err.index
        if 0 <= index < len(gi.nodes):
            node = gi.nodes[index]
            reason, hint = explain(err, node.op_type, node.domain, trt_name, version)
            add(index, index, err, reason, hint)
            continue
        # index -1: an input or initializer; blame the nodes that read it
        named = [n for n in re.findall(r"Failed to import initializer:\s*(\S+)", err.desc) if n in gi.inits]
        if named:
            init = gi.inits[named[-1]]
            dt = _dtype_name(init.data_type)
            reason = f"initializer '{init.name}' has dtype {dt}, which {trt_name} {version} cannot take".replace("  ", " ")
            hint = ("FP8 must be E4M3FN (not FNUZ/E5M2); re-encode the value or fold it away"
                    if "FLOAT8" in dt else "re-encode the value in a supported dtype or fold it away")
            for c in gi.consumers.get(init.name, []) or [-1]:
                add(c if c >= 0 else ("init", init.name), c, err, reason, hint, name=init.name)
            continue
        bad = gi.bad_inputs() if ("convertdtype" in err.desc.lower() or "data type" in err.desc.lower()) else []
        if bad:
            for name, dt in bad:
                reason = f"input '{name}' has dtype {dt}, which {trt_name} {version} cannot take".replace("  ", " ")
                hint = f"cast '{name}' to a supported type (INT32/INT64/FP32) in the exporter"
                for c in gi.consumers.get(name, []) or [-1]:
                    add(c if c >= 0 else ("input", name), c, err, reason, hint, name=name)
            continue
        reason, hint = explain(err, err.op_type, "", trt_name, version)
        add(("model", err.desc), -1, err, reason, hint, name=err.node_name or "(model)")
    return sorted(entries.values(), key=lambda e: (e["index"] < 0, e["index"]))


def summary_line(entries: list[dict[str, Any]]) -> str:
    """``pool (MaxPool): reason; #1 Foo: reason`` for an error message."""
    return "; ".join(
        f"{e['node']}" + (f" ({e['op_type']})" if e["op_type"] and not e["node"].endswith(e["op_type"]) else "")
        + f": {e['reason']}"
        for e in entries
    )


# -- the support check ---------------------------------------------------------------------------
@dataclass
class CheckResult:
    """The outcome of :func:`check_support`."""

    model: str
    supported: bool
    unsupported: list[dict[str, Any]] = field(default_factory=list)
    partitions: list[dict[str, Any]] = field(default_factory=list)
    node_names: list[str] = field(default_factory=list)  # label per node index
    op_types: list[str] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    shape_plan: Any = None
    method: str = ""

    def counts(self) -> dict[str, dict[str, int]]:
        """Nodes by op type: ``{op: {"total": n, "unsupported": k}}``."""
        out: dict[str, dict[str, int]] = {}
        bad = {e["index"] for e in self.unsupported}
        for i, op in enumerate(self.op_types):
            c = out.setdefault(op, {"total": 0, "unsupported": 0})
            c["total"] += 1
            c["unsupported"] += int(i in bad)
        return out

    def states_by_index(self) -> dict[int, dict[str, Any]]:
        """Node index (ONNX graph order) -> ``{"state": "supported" | "unsupported", "partition": i,
        "boundary": True where a partition starts or ends, "reason": text or None}``."""
        reasons = {e["index"]: e["reason"] for e in self.unsupported}
        out: dict[int, dict[str, Any]] = {}
        for p_index, part in enumerate(self.partitions):
            first, last = part["range"]
            for i in range(first, last + 1):
                out[i] = {
                    "state": "supported" if part["supported"] else "unsupported",
                    "partition": p_index,
                    "boundary": i in (first, last),
                    "reason": reasons.get(i),
                }
        return out

    def node_states(self, graph: Any = None) -> dict[str, dict[str, Any]]:
        """For painting the graph: node name -> the state of :meth:`states_by_index`. With ``graph``
        (a :class:`trtstudio.graph.model.Graph` of the same model) the keys are its node names
        (``Op_i`` for unnamed nodes), else this check's labels (``#i Op`` for unnamed nodes)."""
        names = [n.name for n in graph.nodes] if graph is not None else self.node_names
        return {names[i]: st for i, st in self.states_by_index().items() if i < len(names)}

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "model": self.model,
            "supported": self.supported,
            "unsupported": [{k: e[k] for k in ("node", "index", "op_type", "domain", "reason", "hint", "code", "detail")}
                            for e in self.unsupported],
            "partitions": self.partitions,
            "counts": self.counts(),
            "nodes": len(self.node_names),
            "versions": self.versions,
            "method": self.method,
            "seconds": round(self.seconds, 4),
            "shape_plan": self.shape_plan.to_json() if self.shape_plan is not None else None,
        }

    def render_text(self) -> str:
        runtime = f"{self.versions.get('module', 'TensorRT')} {self.versions.get('version', '')}".strip()
        n = len(self.node_names)
        lines = [f"model    {self.model}", f"checked  with {runtime} ({self.method}) in {self.seconds:.2f} s"]
        if self.supported:
            lines.append(f"supported: all {n} nodes")
        else:
            bad = len({e['index'] for e in self.unsupported if e['index'] >= 0})
            lines.append(f"NOT supported: {bad} of {n} nodes rejected")
        if self.partitions and not self.supported:
            lines.append("")
            lines.append("partitions (node order)")
            for part in self.partitions:
                first, last = part["range"]
                names = part["nodes"]
                span = names[0] if len(names) == 1 else f"{names[0]} .. {names[-1]}"
                lines.append(f"  {'ok  ' if part['supported'] else 'NO  '} #{first}-{last} ({len(names)} nodes) {span}")
        if self.unsupported:
            lines.append("")
            lines.append("unsupported nodes")
            for e in self.unsupported:
                op = e["op_type"] or "?"
                dom = "" if e["domain"] == "ai.onnx" else f" [{e['domain']}]"
                kind = dom.strip() if e["node"].endswith(op) else f"({op}{dom})"
                lines.append(f"  {e['node']}{' ' + kind if kind else ''}: {e['reason']}")
                lines.append(f"      hint: {e['hint']}")
            lines.append("")
            lines.append("by op type (unsupported / total)")
            for op, c in sorted(self.counts().items(), key=lambda kv: -kv[1]["unsupported"]):
                if c["unsupported"]:
                    lines.append(f"  {op:<24} {c['unsupported']} / {c['total']}")
        if self.shape_plan is not None and any(i.dynamic for i in self.shape_plan.inputs):
            lines.append("")
            lines.append("input shapes a build would use")
            lines.append(self.shape_plan.render_text())
            lines.extend(f"warning: {w}" for w in self.shape_plan.warnings)
        return "\n".join(lines)


def partitions_of(labels: list[str], bad: set[int]) -> list[dict[str, Any]]:
    """Maximal runs of consecutive nodes (graph order) that are all supported or all not."""
    parts: list[dict[str, Any]] = []
    for i, label in enumerate(labels):
        ok = i not in bad
        if parts and parts[-1]["supported"] == ok:
            parts[-1]["nodes"].append(label)
            parts[-1]["range"][1] = i
        else:
            parts.append({"supported": ok, "nodes": [label], "range": [i, i]})
    return parts


def rejected_nodes(parser: Any, model: OnnxModel, trt: Any) -> list[dict[str, Any]]:
    """The nodes the parser rejected, one entry each with a reason in words and a hint (:func:`diagnose`)."""
    return diagnose(read_errors(parser), model, trt.__name__, str(getattr(trt, "__version__", "")))


def check_support(model_path: str | os.PathLike[str], backend: str = "auto",
                  shapes: dict[str, Any] | None = None) -> CheckResult:
    """Ask TensorRT's ONNX parser which nodes it supports, without building.

    Uses ``supports_model_v2`` (TensorRT 10.x / TensorRT-RTX), else ``supports_model``, and adds the
    errors of a full ``parse`` (import-time refusals the static check misses), so every node a build
    would reject is in ``unsupported``. The model is read once (:func:`~trtstudio.backends.model_io.read_onnx`);
    bad files raise InputError, a missing runtime BackendError.
    """
    from trtstudio.backends.shapes import plan_shapes

    model = read_onnx(model_path)
    path = Path(model_path)
    plan = plan_shapes(model, shapes or {})
    trt, name = import_runtime(backend)
    t0 = time.perf_counter()
    logger = trt.Logger(trt.Logger.INTERNAL_ERROR)
    errors: list[RawError] = []
    method = "parse"
    ok = True
    static = create_parser(trt, logger)
    if hasattr(static.parser, "supports_model_v2"):
        ok = bool(static.parser.supports_model_v2(path.read_bytes(), str(path)))
        method = "supports_model_v2 + parse"
        errors += read_errors(static.parser)
    elif hasattr(static.parser, "supports_model"):
        ok = bool(static.parser.supports_model(path.read_bytes(), str(path))[0])
        method = "supports_model + parse"
        errors += read_errors(static.parser)
    del static
    with parsed_network(trt, logger, path) as net:
        parsed = net.ok
        errors += read_errors(net.parser)
    found = versions(trt, name)
    entries = diagnose(errors, model, trt.__name__, found["version"])
    nodes = model.proto.graph.node
    labels = [node_label(n.name, i, n.op_type) for i, n in enumerate(nodes)]
    bad = {e["index"] for e in entries if e["index"] >= 0}
    if any(e["index"] < 0 for e in entries) and not bad:
        bad = set(range(len(labels)))  # a model-level refusal: nothing can be built
    return CheckResult(
        model=str(path),
        supported=ok and parsed and not entries,
        unsupported=entries,
        partitions=partitions_of(labels, bad),
        node_names=labels,
        op_types=[n.op_type for n in nodes],
        versions=found,
        seconds=time.perf_counter() - t0,
        shape_plan=plan,
        method=method,
    )


def control_flow_hint(model: Any, error: str) -> str | None:
    """For a builder *internal* error on a model with If/Loop/Scan nodes: a sentence that says so and
    what usually helps (TensorRT's control-flow support is where such errors come from). ``model``:
    an OnnxModel, a ModelProto or a path."""
    if "internal error" not in error.lower():
        return None
    try:
        proto = onnx_model(model).proto
    except Exception:  # noqa: BLE001 - only a hint
        return None
    flow = [n for n in proto.graph.node if n.op_type in ("If", "Loop", "Scan")]
    if not flow:
        return None
    names = ", ".join(node_label(n.name, -1, n.op_type) for n in flow[:3])
    return (
        f"the model has {len(flow)} control-flow node(s) ({names}{', ...' if len(flow) > 3 else ''}); TensorRT's "
        "internal errors often come from them: fold conditions that are constants (polygraphy surgeon sanitize "
        "--fold-constants, onnxsim with fixed shapes) or export a variant without If/Loop"
    )
