"""Map engine layers to the ONNX nodes they were built from.

Evidence, strongest first (``Layer.mapping_confidence`` records which one was used):

=====  ==========================================================================================
1.0    ``Metadata``: ``[ONNX Layer: name]`` entries, several per fused layer, separated by ``\\x1e``
       (TensorRT 10) or ``\\x1f``.
0.9    The layer name is a node name, or a fusion of node names: ``a + b`` (vertical fusion),
       ``a || b`` (horizontal fusion), ``PWN(a, b, PWN(c))`` (point-wise fusion), DLA ``{a,b}``.
0.8    The same after cleaning a part: ``[profile N]`` markers, Torch-TensorRT names
       ``[CONVOLUTION]-[aten_ops.convolution.default]-[/conv1/convolution]`` (the last bracket),
       Myelin suffixes ``_myl12_3``, ``_clone_4``, ``_output``/``_output_0``.
0.7    A part is a tensor name (``/conv1/Conv_output_0``): the node producing it.
0.6    ``{ForeignNode[first...last]}`` (a Myelin region): every node from ``first`` to ``last`` in
       the graph's (topological) node order.
0.5    Nothing in the name resolves, but the layer's output tensors are ONNX tensors: their
       producing nodes.
0.3    Reformat layers (``Reformatting CopyNode for Input Tensor 0 to X``, ``X input reformatter 0``)
       map to the nodes of the layer X they feed; a region with only one resolvable end maps to
       that end.
=====  ==========================================================================================

Parts that name weights or graph inputs (tensors without a producer), parser helpers
(``ONNXTRT_*``) and TensorRT's own layers (``(Unnamed Layer* 12) [Shuffle]``) are ignored; other
parts that resolve to nothing lower the confidence in proportion. Nodes no layer maps to (constant
folded, eliminated, fused away without a trace) are listed in ``MappingResult.unmapped_nodes``.

Everything is dictionary lookups and ``str`` methods with regular expressions compiled once, so
50,000 layers against 100,000 nodes map in a fraction of a second.
"""

from __future__ import annotations

import operator
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, filterfalse, repeat
from operator import attrgetter
from typing import Any, Protocol, cast

from trtstudio.bigdocs.gcpause import gc_paused
from trtstudio.engine.model import EngineInfo, Layer, own_attrs_of
from trtstudio.engine.readers._common import base_name

CONF_METADATA = 1.0
CONF_NAME = 0.9
CONF_CLEANED = 0.8
CONF_TENSOR = 0.7
CONF_SPAN = 0.6
CONF_IO = 0.5
CONF_REFORMAT = 0.3

_METADATA_PREFIX = "[ONNX Layer: "
_PREFIX_LEN = len(_METADATA_PREFIX)
_METADATA_SEP = "]\x1e" + _METADATA_PREFIX  # between two entries
_METADATA = attrgetter("metadata")
_CHUNK = 4096  # names looked up per call in C (a few ms)
_REFORMAT_PREFIX = "Reformatting CopyNode for "
_REFORMAT_RE = re.compile(r"Reformatting CopyNode for (?:Input|Output) Tensor \d+ to (.*)$", re.S)
_LEGACY_REFORMAT_RE = re.compile(r"^(.*?) (?:input|output) reformatter \d+$")
_SUFFIX_RES = (
    re.compile(r"_myl\d+_\d+$"),
    re.compile(r"(?:\.\d+)?_\d+_myl\d+$"),
    re.compile(r"_clone_\d+$"),
    re.compile(r"(?:_output(?:_\d+)?|_out_tensor)$"),
)
# Brackets and the separators that matter at depth 0.
_TOKEN_RE = re.compile(r"[()\[\]{}]| \+ | \|\| |, ?|\.\.\.")
_FUSION_RE = re.compile(r" \+ | \|\| ")
_OPEN = frozenset("([{")
_CLOSE = frozenset(")]}")


class NodeLike(Protocol):
    index: int
    name: str
    op_type: str
    inputs: Sequence[str]
    outputs: Sequence[str]


@dataclass
class MappingResult:
    """What ``map_layers`` found, besides the ``onnx_nodes`` it wrote into each layer."""

    node_layers: dict[str, list[int]] = field(default_factory=dict)  # node name -> layer indices
    unmapped_nodes: list[str] = field(default_factory=list)  # nodes no layer maps to
    unmapped_layers: list[int] = field(default_factory=list)  # layers that map to no node
    by_confidence: dict[float, int] = field(default_factory=dict)  # confidence -> number of layers

    def to_json(self) -> dict[str, Any]:
        return {
            "mapped_nodes": len(self.node_layers),
            "unmapped_nodes": self.unmapped_nodes,
            "unmapped_layers": self.unmapped_layers,
            "by_confidence": {str(k): v for k, v in sorted(self.by_confidence.items(), reverse=True)},
        }


OTHER_MODEL_SHARE = 0.2  # below this share of its layers mapped, an engine was probably built from another model


def mapped_share(engine: EngineInfo) -> tuple[int, int]:
    """``(mapped, counted)``: how many of the engine's layers that are not reformats (a reformat
    maps through the layer it feeds, so says nothing of its own; ``diagnose.is_reformat``'s test)
    have ONNX nodes. Each test is a C loop over the layers (300,000s)."""
    import numpy as np

    layers = engine.layers
    n = len(layers)
    names = list(map(_NAME, layers))

    def flags(values: Any) -> np.ndarray:
        return np.fromiter(values, dtype=bool, count=n)

    reformat = flags(map(operator.eq, map(_TYPE, layers), repeat("Reformat")))
    reformat |= flags(map(str.startswith, names, repeat(_REFORMAT_PREFIX)))
    reformat |= flags(map(operator.contains, names, repeat(" reformatter ")))
    reformat |= flags(map(bool, map(_GET_REFORMAT, own_attrs_of(layers))))
    mapped = flags(map(bool, map(_ONNX_NODES, layers)))
    return int((mapped & ~reformat).sum()), int(n - reformat.sum())


_NAME, _TYPE, _ONNX_NODES = attrgetter("name"), attrgetter("type"), attrgetter("onnx_nodes")
_GET_REFORMAT = operator.methodcaller("get", "reformat")


def other_model(engine: EngineInfo) -> tuple[int, int] | None:
    """``(mapped, counted)`` of :func:`mapped_share` where under :data:`OTHER_MODEL_SHARE` of the
    layers map (the ONNX model is probably not the one the engine was built from), else None.
    Call it on an engine mapped to a model (``map_layers``)."""
    mapped, counted = mapped_share(engine)
    return (mapped, counted) if counted and mapped < OTHER_MODEL_SHARE * counted else None


def _split_top(s: str, seps: frozenset[str]) -> list[str]:
    """Split ``s`` at the separators in ``seps`` that are outside any bracket."""
    depth = 0
    out: list[str] = []
    start = 0
    for m in _TOKEN_RE.finditer(s):
        tok = m.group()
        if tok in _OPEN:
            depth += 1
        elif tok in _CLOSE:
            depth = max(0, depth - 1)
        elif depth == 0 and tok.strip() in seps:
            out.append(s[start:m.start()])
            start = m.end()
    out.append(s[start:])
    return [p.strip() for p in out if p.strip()]


_FUSION_SEPS = frozenset(("+", "||"))
_COMMA_SEPS = frozenset((",",))
_SPAN_SEPS = frozenset(("...",))


def split_name(name: str) -> list[tuple[str, str]]:
    """The parts of a (fused) layer name, as ``(kind, text)``; kind is ``"name"`` or ``"span"``.

    A span's text is ``first...last`` (from ``{ForeignNode[first...last]}``).
    """
    s = name.strip()
    if not s:
        return []
    if s.startswith("{ForeignNode[") and s.endswith("]}"):
        return [("span", s[13:-2])]
    if s.startswith("PWN(") and s.endswith(")"):
        out: list[tuple[str, str]] = []
        for p in _split_top(s[4:-1], _COMMA_SEPS):
            out.extend(split_name(p))
        return out
    if s.startswith("{") and s.endswith("}") and "," in s:  # DLA region {a,b,c}
        out = []
        for p in _split_top(s[1:-1], _COMMA_SEPS):
            out.extend(split_name(p))
        return out
    if " + " in s or " || " in s:
        if "(" not in s and "[" not in s and "{" not in s:
            parts = [p.strip() for p in _FUSION_RE.split(s)] if " || " in s else s.split(" + ")
            if len(parts) > 1:
                out = []
                for p in parts:
                    q = p.strip()
                    if not q:
                        continue
                    if " + " in q or " || " in q:
                        out.extend(split_name(q))
                    else:  # no brackets, no separators: a plain name
                        out.append(("name", q))
                return out
        else:
            parts = _split_top(s, _FUSION_SEPS)
            if len(parts) > 1:
                out = []
                for p in parts:
                    out.extend(split_name(p))
                return out
    return [("name", s)]


class _Producers:
    """``producer.get(tensor)`` read from a trtstudio Graph's ``tensors`` (``Tensor.producer``)
    instead of a dict built over every node output (0.1 s at 100,000 nodes)."""

    __slots__ = ("_get",)

    def __init__(self, tensors: dict[str, Any]) -> None:
        self._get = tensors.get

    def get(self, name: str) -> int | None:
        t = self._get(name)
        return None if t is None else t.producer  # type: ignore[no-any-return]


def _knows_producers(tensors: dict[str, Any], nodes: Sequence[NodeLike]) -> bool:
    """True when ``tensors`` holds Tensor objects whose ``producer`` indexes ``nodes`` (checked on
    the first and the last node)."""
    for i in {0, len(nodes) - 1} if nodes else ():
        outs = [t for t in nodes[i].outputs if t]
        if outs and getattr(tensors.get(outs[0]), "producer", None) != i:
            return False
    return True


class Resolver:
    """Name -> node index lookups over one graph (built once; reuse it for many names)."""

    def __init__(self, graph: Any) -> None:
        g = graph.graph if not hasattr(graph, "nodes") and hasattr(graph, "graph") else graph
        self.nodes: Sequence[NodeLike] = g.nodes
        nbn = getattr(g, "node_by_name", None)
        self.node_by_name: dict[str, int] = (
            nbn if isinstance(nbn, dict) else {n.name: i for i, n in enumerate(self.nodes)}
        )
        tensors = getattr(g, "tensors", None)
        self.tensors: Any = tensors if tensors is not None else {}
        # tensor name -> producing node index: a trtstudio Graph's tensors know it already
        self.producer: Any = (
            _Producers(tensors) if isinstance(tensors, dict) and _knows_producers(tensors, self.nodes)
            else {t: i for i, n in enumerate(self.nodes) for t in n.outputs if t}
        )
        self._consumer: dict[str, int] | None = None
        self._cache: dict[str, tuple[int | None, float]] = {}

    def first_consumer(self, tensor: str) -> int | None:
        if self._consumer is None:
            self._consumer = {}
            for i, n in enumerate(self.nodes):
                for t in n.inputs:
                    if t and t not in self._consumer:
                        self._consumer[t] = i
        return self._consumer.get(tensor)

    def resolve(self, part: str) -> tuple[int | None, float]:
        """(node index, confidence); index None with confidence 1.0 means "ignorable", 0.0 "unknown"."""
        hit = self._cache.get(part)
        if hit is None:
            hit = self._resolve(part)
            self._cache[part] = hit
        return hit

    def _lookup(self, p: str, conf_node: float, conf_tensor: float) -> tuple[int | None, float] | None:
        i = self.node_by_name.get(p)
        if i is not None:
            return i, conf_node
        i = self.producer.get(p)
        if i is not None:
            return i, conf_tensor
        return None

    def _resolve(self, part: str) -> tuple[int | None, float]:
        p = part.strip()
        hit = self._lookup(p, CONF_NAME, CONF_TENSOR)
        if hit:
            return hit
        if "[profile " in p:
            p = base_name(p)
        if p.startswith("[") and p.endswith("]") and "]-[" in p:  # Torch-TensorRT
            p = p[p.rfind("]-[") + 3:-1]
        hit = self._lookup(p, CONF_CLEANED, CONF_TENSOR)
        if hit:
            return hit
        if p.startswith("node_of_"):  # the ONNX parser's name for an unnamed node: its first output
            hit = self._lookup(p[8:], CONF_CLEANED, CONF_CLEANED)
            if hit:
                return hit
        if p in self.tensors or p.startswith("(Unnamed Layer*") or p.startswith("ONNXTRT_"):
            return None, 1.0
        for rx in _SUFFIX_RES:
            q = rx.sub("", p)
            if q != p:
                hit = self._lookup(q, CONF_CLEANED, CONF_TENSOR)
                if hit:
                    return hit
                p = q
        return None, 0.0

    def span_end(self, text: str, first: bool) -> int | None:
        i, _ = self.resolve(text)
        if i is None and first:
            i = self.first_consumer(text.strip())  # a region often starts at a weight
        return i

    def resolve_name(self, name: str) -> tuple[list[int], float]:
        """Node indices and confidence for a layer name (no metadata)."""
        m = _REFORMAT_RE.match(name) if name.startswith(_REFORMAT_PREFIX) else None
        if m is None and " reformatter " in name:
            m = _LEGACY_REFORMAT_RE.match(name)
        if m is not None:
            idx, conf = self.resolve_name(m.group(1))
            return idx, min(conf, CONF_REFORMAT) if idx else 0.0
        found: list[int] = []
        conf = 1.0
        unresolved = 0
        counted = 0
        for kind, text in split_name(name):
            if kind == "span":
                ends = _split_top(text, _SPAN_SEPS)
                a = self.span_end(ends[0], True) if ends else None
                b = self.span_end(ends[-1], False) if len(ends) > 1 else None
                counted += 1
                if a is not None and b is not None:
                    lo, hi = (a, b) if a <= b else (b, a)
                    found.extend(range(lo, hi + 1))
                    conf = min(conf, CONF_SPAN)
                elif a is not None or b is not None:
                    found.append(a if a is not None else b)  # type: ignore[arg-type]
                    conf = min(conf, CONF_REFORMAT)
                else:
                    unresolved += 1
                continue
            i, c = self.resolve(text)
            if i is None:
                if c == 0.0:
                    unresolved += 1
                    counted += 1
                continue
            counted += 1
            found.append(i)
            conf = min(conf, c)
        if not found:
            return [], 0.0
        if unresolved:
            conf *= (counted - unresolved) / counted
        return found, conf

    def resolve_metadata(self, metadata: str) -> list[int]:
        """Node indices named by a layer's Metadata (``[ONNX Layer: name]`` entries)."""
        if "\x1f" in metadata:
            metadata = metadata.replace("\x1f", "\x1e")
        if "][" in metadata:  # entries written back to back (TensorRT-RTX logs)
            metadata = metadata.replace("][ONNX Layer: ", "]\x1e[ONNX Layer: ")
        nbn_get = self.node_by_name.get
        out: list[int] = []
        for entry in metadata.split("\x1e"):
            if entry.startswith(_METADATA_PREFIX) and entry.endswith("]"):
                entry = entry[_PREFIX_LEN:-1]
            i = nbn_get(entry)
            if i is None:
                entry = entry.strip()
                if not entry:
                    continue
                i, _ = self.resolve(entry)
            if i is not None:
                out.append(i)
        return out

    def resolve_io(self, layer: Layer) -> list[int]:
        producer_get = self.producer.get
        out: list[int] = []
        for t in layer.outputs:
            i = producer_get(t.name)
            if i is not None:
                out.append(i)
        return out


def map_layers(engine: EngineInfo, graph: Any) -> MappingResult:
    """Fill each layer's ``onnx_nodes`` and ``mapping_confidence`` from ``graph``.

    ``graph`` is a ``trtstudio.graph`` Graph (or a Model with ``.graph``), or anything with
    ``nodes`` (objects with ``name``, ``op_type``, ``inputs``, ``outputs``) in topological order and
    optionally ``node_by_name`` and ``tensors``. Returns the node -> layers index and what stayed
    unmapped. Layers are changed in place.
    """
    g = getattr(graph, "graph", graph)
    own = getattr(g, "engine_layers", None)  # the engine's own graph (engine.layer_graph): of these layers?
    if own is not None and len(own) == len(engine.layers) and all(
            a.name == b.name for a, b in zip(own, engine.layers, strict=True)):
        return _own_graph(engine, g)
    with gc_paused():
        return _map_layers(engine, Resolver(graph))


def _own_graph(engine: EngineInfo, graph: Any) -> MappingResult:
    """Each layer to its own node of the engine's layer graph (one node per layer, in order)."""
    result = MappingResult()
    for pos, (lay, node) in enumerate(zip(engine.layers, graph.nodes, strict=True)):
        lay.onnx_nodes = [node.name]
        lay.mapping_confidence = CONF_METADATA
        result.node_layers[node.name] = [pos]
    result.by_confidence[CONF_METADATA] = len(engine.layers)
    return result


def _plain_metadata(md: str) -> bool:
    """Metadata of the usual form, ``[ONNX Layer: a]\x1e[ONNX Layer: b]``: split at the separator,
    its entries are node names as they stand."""
    return md.startswith(_METADATA_PREFIX) and md[-1] == "]" and "\x1f" not in md and "][" not in md


def _by_metadata(layers: list[Layer], nbn: dict[str, int]) -> list[list[str] | None]:
    """The usual case, in bulk: for each layer whose Metadata is ``[ONNX Layer: a]\x1e[ONNX Layer: b]``
    and names only nodes of the graph, its node names (duplicates dropped); None for the others.

    What :func:`_map_layers` would find for them one by one, with the names looked up in C."""
    out: list[list[str] | None] = [None] * len(layers)
    sep, start = _METADATA_SEP, _PREFIX_LEN
    pos = [i for i, md in enumerate(map(_METADATA, layers)) if type(md) is str and _plain_metadata(md)]
    lists = [layers[i].metadata[start:-1].split(sep) for i in pos]  # type: ignore[index]
    flat = list(chain.from_iterable(lists))
    missing: set[str] = set()
    for k in range(0, len(flat), _CHUNK):  # in chunks: a worker's C loop holds the GIL (the window waits)
        part = flat[k:k + _CHUNK]
        missing.update(compress(part, map(operator.not_, map(nbn.__contains__, part))))
    for i, names, n, distinct in zip(pos, lists, map(len, lists), map(len, map(set, lists)), strict=True):
        if missing and not missing.isdisjoint(names):
            continue  # names to clean or resolve: the general path (resolve_metadata)
        out[i] = names if n == distinct else list(dict.fromkeys(names))
    return out


def _evidence(lay: Layer, r: Resolver, nbn_get: Any) -> tuple[list[int], float]:
    """Node indices and confidence for one layer: its metadata, else its name, else its outputs."""
    idx: list[int] = []
    conf = 0.0
    md = lay.metadata
    if md and type(md) is str:  # a damaged file's Metadata may be anything: then names decide
        # most metadata name nodes that exist: "[ONNX Layer: a]\x1e[ONNX Layer: b]"; anything else
        # (other separators, names needing cleaning) goes to resolve_metadata
        if _plain_metadata(md):
            found = [nbn_get(n) for n in md[_PREFIX_LEN:-1].split(_METADATA_SEP)]  # one split in C
            idx = r.resolve_metadata(md) if None in found else cast(list[int], found)
        else:
            idx = r.resolve_metadata(md)
        conf = CONF_METADATA if idx else 0.0
    if not idx:
        idx, conf = r.resolve_name(lay.name)
        if not idx:
            idx = r.resolve_io(lay)
            conf = CONF_IO if idx else 0.0
    return idx, conf


def _map_layers(engine: EngineInfo, r: Resolver) -> MappingResult:
    nbn = r.node_by_name
    # a Graph's node_by_name lists every node in order: its keys are the names, copied in C
    node_names = list(nbn) if len(nbn) == len(r.nodes) else [n.name for n in r.nodes]
    nbn_get = nbn.get
    result = MappingResult()
    node_layers: dict[str, list[int]] = {}
    unmapped_append = result.unmapped_layers.append
    node_layers_get = node_layers.get
    confs: list[float] = []
    confs_append = confs.append
    rounded: dict[float, float] = {}  # conf -> round(conf, 3): only a handful of distinct values
    # node_names[nbn[x]] == x where node_names are nbn's keys: then a name found in metadata is the node's name
    by_metadata = _by_metadata(engine.layers, nbn) if len(nbn) == len(r.nodes) else [None] * len(engine.layers)
    for pos, (lay, names) in enumerate(zip(engine.layers, by_metadata, strict=True)):
        if names is not None:  # nodes named by metadata
            rc = CONF_METADATA
        else:
            idx, conf = _evidence(lay, r, nbn_get)
            if len(idx) > 1:
                idx = list(dict.fromkeys(idx))
            names = [node_names[i] for i in idx]
            known = rounded.get(conf)
            if known is None:
                known = rounded[conf] = round(conf, 3)
            rc = known
            if not names:
                unmapped_append(pos)
        lay.onnx_nodes = names
        lay.mapping_confidence = rc
        confs_append(rc)
        for n in names:
            lst = node_layers_get(n)
            if lst is None:
                node_layers[n] = [pos]
            else:
                lst.append(pos)
    result.node_layers = node_layers
    result.by_confidence.update(Counter(confs))  # counted in C
    result.unmapped_nodes = list(filterfalse(node_layers.__contains__, node_names))  # in C: 100,000s of names
    return result
