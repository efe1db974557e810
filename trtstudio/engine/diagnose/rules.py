"""The one registry of the findings rules (:data:`RULES`, in the order their findings come) and
:func:`diagnose`, which runs them in that order, then sets each finding's severity by the time at
stake (:func:`by_time`).

A rule is a function ``rule(ctx, *inputs) -> list[Finding]`` in the module of its family
(``compat``, ``plugins``, ``layout``, ``precision``, ``fusion``), documented in its own docstring
(the kind it gives, its severities, what it looks at); its :class:`Rule` entry here says the kind it
owns, the family, the severities it may give before :func:`by_time`, and which of ``diagnose``'s
inputs it is handed (``graph``, ``unsupported``, ``model_precision``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from trtstudio.bigdocs.gcpause import gc_paused
from trtstudio.engine.diagnose.compat import names_only, other_model, unsupported_nodes
from trtstudio.engine.diagnose.context import Ctx, graph_nodes, share_of
from trtstudio.engine.diagnose.fusion import regions, shape_ops
from trtstudio.engine.diagnose.layout import alignment, reformats, tensor_cores
from trtstudio.engine.diagnose.plugins import plugin_layers
from trtstudio.engine.diagnose.precision import precision
from trtstudio.engine.mapping import map_layers
from trtstudio.engine.model import EngineInfo, Finding, Layer

INPUTS = ("graph", "unsupported", "model_precision")  # what diagnose() can hand a rule
FAMILIES = ("compat", "plugins", "layout", "precision", "fusion")  # each the module of its rules


@dataclass(frozen=True)
class Rule:
    """One rule of the registry: ``check(ctx, *[the inputs named in needs])`` gives findings of
    ``kind`` (the kind this entry owns: no other entry owns it) and of the kinds of ``also`` (owned by
    another entry, given here too; the reason is in ``check``'s docstring), at the severities of
    ``severities``."""

    kind: str
    family: str
    severities: tuple[str, ...]
    check: Callable[..., list[Finding]]
    needs: tuple[str, ...] = ()
    also: tuple[str, ...] = ()

    @property
    def kinds(self) -> tuple[str, ...]:
        """Every kind of finding the rule gives."""
        return (self.kind, *self.also)

    @property
    def doc(self) -> str:
        """The rule's paragraph: its function's docstring."""
        return self.check.__doc__ or ""


RULES: tuple[Rule, ...] = (
    Rule("names_only", "compat", ("warning",), names_only),
    Rule("unsupported_node", "compat", ("error",), unsupported_nodes, needs=("unsupported",)),
    Rule("plugin", "plugins", ("info", "warning"), plugin_layers),
    Rule("reformat", "layout", ("info", "warning"), reformats),
    Rule("precision_fallback", "precision", ("info", "warning"), precision, needs=("model_precision",),
         also=("reformat",)),  # the quantize/dequantize required at the engine's boundary
    Rule("no_tensor_cores", "layout", ("warning",), tensor_cores),
    Rule("unaligned_channels", "layout", ("info", "warning"), alignment),
    Rule("foreign_node", "fusion", ("info",), regions, needs=("graph",)),
    Rule("shape_ops", "fusion", ("info", "warning"), shape_ops),
    Rule("other_model", "compat", ("warning",), other_model, needs=("graph",)),
)


TIME_WARN_SHARE = 5.0  # a layer finding at or above this share of the time is at least a warning
TIME_INFO_SHARE = 2.0  # ... and below this share at most info (needs a profile; errors stay errors)


def by_time(findings: list[Finding], engine: EngineInfo) -> list[Finding]:
    """The findings with their severity set by the time at stake (see "Severity" in the package
    docstring): a finding about a layer holding >= :data:`TIME_WARN_SHARE` % of the engine's time
    becomes a warning, one about a layer under :data:`TIME_INFO_SHARE` % info. Findings without a
    layer, layers without a time, and errors keep their severity. The list is changed in place
    (and returned)."""
    total = engine.total_time_ms
    pos: dict[int, Layer] | None = None
    for f in findings:
        if f.layer_index is None or f.severity == "error":
            continue
        if pos is None:
            pos = {lay.index: lay for lay in engine.layers}
        lay = pos.get(f.layer_index)
        share = share_of(lay, total) if lay is not None else None
        if share is None:
            continue
        if share >= TIME_WARN_SHARE:
            f.severity = "warning"
        elif share < TIME_INFO_SHARE:
            f.severity = "info"
    return findings


def diagnose(
    engine: EngineInfo,
    graph: Any = None,
    unsupported: Iterable[dict[str, Any]] | None = None,
    model_precision: str | None = None,
    mapped: bool = False,
) -> list[Finding]:
    """Run every rule of :data:`RULES` over ``engine``, in its order (see the package docstring);
    returns the findings.

    ``graph`` (a trtstudio Graph/Model) adds ONNX node names and op types; ``unsupported`` is the
    parser's list of unsupported nodes; ``model_precision`` ("fp16", "bf16", "int8", ...) is the
    precision the model is meant to run in. The engine is not changed, except that layers get
    ``onnx_nodes`` when a graph is given and no layer has any yet, unless ``mapped``: the caller
    has mapped the engine to this graph already (``engine.analysis``), and a layer without nodes
    is one the mapping found none for (mapping again took 2.6 s at 300,000 layers of an engine
    from another model).
    """
    with gc_paused():
        return _diagnose(engine, graph, unsupported, model_precision, mapped)


def _diagnose(engine: EngineInfo, graph: Any, unsupported: Iterable[dict[str, Any]] | None,
              model_precision: str | None, mapped: bool = False) -> list[Finding]:
    qdq_nodes: set[str] = set()
    shape_nodes: set[str] = set()
    if graph is not None:
        g = graph.graph if not hasattr(graph, "nodes") and hasattr(graph, "graph") else graph
        qdq_nodes, shape_nodes = graph_nodes(g)
        if not mapped and engine.layers and not any(lay.onnx_nodes for lay in engine.layers):
            map_layers(engine, g)
    ctx = Ctx(engine, qdq_nodes, shape_nodes)
    inputs = {"graph": graph, "unsupported": unsupported, "model_precision": model_precision}
    findings: list[Finding] = []
    for rule in RULES:
        findings += rule.check(ctx, *[inputs[name] for name in rule.needs])
    by_time(findings, engine)
    for f in ctx.expected:  # what is expected where it is stays info, whatever the time at stake
        f.severity = "info"
    return findings
