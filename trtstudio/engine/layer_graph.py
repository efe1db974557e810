"""The engine's own graph: its layers as nodes, the tensors between them as edges.

Engine files are often handed over without their ONNX model (a proprietary model, a build made
elsewhere); TREx and Nsight Deep Learning Designer then draw the engine itself. ``layer_model``
makes a :class:`trtstudio.graph.model.Model` whose graph has one node per layer (op type: the layer
type, name: the layer name, in layer order), one tensor per layer input/output (its shape, its
precision as dtype, its format kept in ``formats``), the engine's inputs and outputs as graph inputs
and outputs: the same display, layout, search and selection as an ONNX graph. Each node is named
after its layer, and :func:`trtstudio.engine.mapping.map_layers` maps every layer of that engine to
its own node (the graph's ``engine_layers``), so the table selects the graph and back; reformats, plugins and fallbacks
are painted by their findings like any node.

Tensors the files do not connect (a names-only layer listing, a log without tensor names) leave
the layers unconnected, in layer order.
"""

from __future__ import annotations

from typing import Any

from trtstudio.engine.model import EngineInfo
from trtstudio.graph.model import Graph, Model, Node, Tensor

ENGINE_DOMAIN = ""  # TensorRT layer types are categorised by graph.categories like ONNX ops


def layer_graph(engine: EngineInfo) -> Graph:
    """The engine's layers and tensors as a :class:`Graph` (see the module docstring)."""
    nodes: list[Node] = []
    tensors: dict[str, Tensor] = {}
    formats: dict[str, str] = {}
    used: dict[str, int] = {}
    for i, lay in enumerate(engine.layers):
        name = lay.name
        if name in used:  # node names are unique in a graph; layer names may repeat (profiles)
            used[name] += 1
            name = f"{name} #{used[name]}"
        else:
            used[name] = 1
        ins, outs = [t.name for t in lay.inputs], [t.name for t in lay.outputs]
        nodes.append(Node(index=i, name=name, op_type=lay.type or "Unknown", domain=ENGINE_DOMAIN, inputs=ins,
                          outputs=outs, onnx_name=lay.name))
        for t in lay.outputs:
            tensors[t.name] = Tensor(t.name, (t.dtype or "undefined").lower(), t.shape, producer=i)
            if t.format:
                formats[t.name] = t.format
    for node, lay in zip(nodes, engine.layers, strict=True):
        for t in lay.inputs:
            tensor = tensors.get(t.name)
            if tensor is None:
                tensor = tensors[t.name] = Tensor(t.name, (t.dtype or "undefined").lower(), t.shape, kind="input")
                if t.format:
                    formats[t.name] = t.format
            tensor.consumers.append(node.index)
    io_names = {t.name for t in engine.io_tensors}
    inputs = [n for n, t in tensors.items() if t.producer is None]
    outputs = [n for n, t in tensors.items() if t.producer is not None and (not t.consumers or n in io_names)]
    for n in outputs:
        tensors[n].kind = "output"
    g = Graph(name="engine", nodes=nodes, tensors=tensors, inputs=inputs, outputs=outputs, initializers={})
    g.node_by_name = {n.name: n.index for n in nodes}
    g.formats = formats  # type: ignore[attr-defined]
    g.engine_layers = engine.layers  # type: ignore[attr-defined]  # engine.mapping maps each layer to its node
    return g


def layer_model(engine: EngineInfo, path: str | None = None) -> Model:
    """The engine's graph as a :class:`Model` (``path``: the engine file it stands for); its
    ``engine_graph`` attribute is True, so a view can tell it from an ONNX model (nothing runs it)."""
    src = path or (engine.sources[0] if engine.sources else "engine")
    m = Model(path=src, ir_version=0, opsets={}, producer="TensorRT engine", graph=layer_graph(engine))
    m.engine_graph = True  # type: ignore[attr-defined]
    return m


def is_layer_model(model: Any) -> bool:
    """Whether ``model`` is an engine's own graph (:func:`layer_model`), not an ONNX model."""
    return bool(getattr(model, "engine_graph", False))
