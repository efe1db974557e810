"""Write synthetic but valid ONNX models of a chosen node count, for layout and loader benchmarks.

    python benchmarks/synth.py --nodes 10000 -o /tmp/t10k.onnx --kind transformer

``transformer``: repeated pre-norm blocks (LayerNorm spelled out as ReduceMean/Sub/Mul/Sqrt/Div,
Q/K/V MatMuls, Softmax attention, an Erf-GELU MLP) with residual skips, so the graph has fan-out,
long edges and merges. ``cnn``: ResNet basic blocks with an occasional three-branch Concat block. ``random``: Add/Relu
nodes wired to random recent outputs (a wide DAG with many crossings, a stress case). ``fan``: wide
fans: each block sends its input to ``FAN_WIDTH`` parallel Mul/Relu branches (shared weights) that
one Sum gathers with the graph input again (a rank of 512 nodes, a fan-in of 513, and an edge from the
input into every block: the long edges of a tensor read everywhere).
Weights are tiny (hidden 8) and shared between blocks, so files stay small; the model passes
``onnx.checker.check_model``. The last few nodes are a Relu chain so the count is exact.
Prints one JSON line: {"file", "kind", "nodes", "bytes"}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN = 8
SEQ = 4
FFN = 16
HEADS = 2
FAN_WIDTH = 512


class _Builder:
    """Accumulates nodes and initializers with unique tensor names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._count = 0

    def op(self, op_type: str, inputs: list[str], **attrs: object) -> str:
        self._count += 1
        out = f"t{self._count}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"{op_type}_{self._count}", **attrs))
        return out

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(value.astype(np.float32), name))
        return name


def _transformer_weights(b: _Builder, rng: np.random.Generator) -> None:
    def w(name: str, *shape: int) -> None:
        b.const(name, rng.standard_normal(shape) * 0.1)

    for name in ("wq", "wk", "wv", "wo"):
        w(name, HIDDEN, HIDDEN)
    w("w1", HIDDEN, FFN)
    w("w2", FFN, HIDDEN)
    for name in ("bq", "bk", "bv", "bo", "b2", "beta"):
        w(name, HIDDEN)
    w("b1", FFN)
    b.const("gamma", np.ones(HIDDEN))
    b.const("eps", np.array(1e-5))
    b.const("scale", np.array(1.0 / np.sqrt(HIDDEN)))
    b.const("rsqrt2", np.array(1.0 / np.sqrt(2.0)))
    b.const("one", np.array(1.0))
    b.const("half", np.array(0.5))
    for name, value in (("i0", 0), ("i1", 1), ("axis0", [0]), ("heads", [HEADS, HIDDEN // HEADS]),
                        ("hidden", [HIDDEN])):
        b.inits.append(numpy_helper.from_array(np.array(value, dtype=np.int64), name))


def _layer_norm(b: _Builder, x: str) -> str:
    mean = b.op("ReduceMean", [x], axes=[-1], keepdims=1)
    d = b.op("Sub", [x, mean])
    sq = b.op("Mul", [d, d])
    var = b.op("ReduceMean", [sq], axes=[-1], keepdims=1)
    ve = b.op("Add", [var, "eps"])
    sd = b.op("Sqrt", [ve])
    n = b.op("Div", [d, sd])
    g = b.op("Mul", [n, "gamma"])
    return b.op("Add", [g, "beta"])


def _transformer_block(b: _Builder, x: str) -> str:
    ln = _layer_norm(b, x)
    # head split the way exporters write it: Shape -> Gather -> Unsqueeze -> Concat -> Reshape
    shp = b.op("Shape", [ln])
    dims = [b.op("Unsqueeze", [b.op("Gather", [shp, idx], axis=0), "axis0"]) for idx in ("i0", "i1")]
    split = b.op("Concat", [*dims, "heads"], axis=0)
    merge = b.op("Concat", [*dims, "hidden"], axis=0)

    def heads(w: str, bias: str, perm: list[int]) -> str:
        t = b.op("Add", [b.op("MatMul", [ln, w]), bias])
        return b.op("Transpose", [b.op("Reshape", [t, split])], perm=perm)

    q = heads("wq", "bq", [0, 2, 1, 3])
    kt = heads("wk", "bk", [0, 2, 3, 1])
    v = heads("wv", "bv", [0, 2, 1, 3])
    scores = b.op("Mul", [b.op("MatMul", [q, kt]), "scale"])
    probs = b.op("Softmax", [scores], axis=-1)
    ctx = b.op("Transpose", [b.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    ctx = b.op("Reshape", [ctx, merge])
    attn = b.op("Add", [b.op("MatMul", [ctx, "wo"]), "bo"])
    r1 = b.op("Add", [x, attn])
    ln2 = _layer_norm(b, r1)
    h = b.op("Add", [b.op("MatMul", [ln2, "w1"]), "b1"])
    e = b.op("Add", [b.op("Erf", [b.op("Mul", [h, "rsqrt2"])]), "one"])
    gelu = b.op("Mul", [b.op("Mul", [h, e]), "half"])
    f = b.op("Add", [b.op("MatMul", [gelu, "w2"]), "b2"])
    return b.op("Add", [r1, f])


def _cnn_weights(b: _Builder, rng: np.random.Generator) -> None:
    c = HIDDEN
    b.const("k3", rng.standard_normal((c, c, 3, 3)) * 0.1)
    b.const("k1", rng.standard_normal((c, c, 1, 1)) * 0.1)
    b.const("kcat", rng.standard_normal((c, 3 * c, 1, 1)) * 0.1)
    b.const("bn_s", np.ones(c))
    b.const("bn_b", np.zeros(c))
    b.const("bn_m", np.zeros(c))
    b.const("bn_v", np.ones(c))


def _conv_bn(b: _Builder, x: str, kernel: str = "k3") -> str:
    pads = [1, 1, 1, 1] if kernel == "k3" else [0, 0, 0, 0]
    c = b.op("Conv", [x, kernel], pads=pads)
    return b.op("BatchNormalization", [c, "bn_s", "bn_b", "bn_m", "bn_v"])


def _cnn_block(b: _Builder, x: str, index: int) -> str:
    if index % 3 == 2:
        branches = [
            b.op("Relu", [_conv_bn(b, x, "k1")]),
            b.op("Relu", [_conv_bn(b, b.op("Relu", [_conv_bn(b, x, "k1")]))]),
            b.op("Relu", [_conv_bn(b, b.op("MaxPool", [x], kernel_shape=[3, 3], pads=[1, 1, 1, 1]), "k1")]),
        ]
        cat = b.op("Concat", branches, axis=1)
        return b.op("Relu", [b.op("Add", [b.op("Conv", [cat, "kcat"]), x])])
    y = b.op("Relu", [_conv_bn(b, x)])
    y = _conv_bn(b, y)
    return b.op("Relu", [b.op("Add", [y, x])])


def _random_model(nodes: int, rng: np.random.Generator) -> onnx.ModelProto:
    """A random DAG: each Add/Relu consumes one or two outputs of the previous 64 nodes."""
    b = _Builder()
    outs = ["input"]
    for i in range(nodes):
        window = outs[max(0, len(outs) - 64):]
        if i and rng.random() < 0.7:
            pick = rng.choice(len(window), size=2, replace=len(window) < 2)
            outs.append(b.op("Add", [window[pick[0]], window[pick[1]]]))
        else:
            outs.append(b.op("Relu", [window[int(rng.integers(len(window)))]]))
    return _finish(b, "random", nodes, outs[-1], [1, HIDDEN])


def _fan_block(b: _Builder, x: str) -> str:
    """``FAN_WIDTH`` branches of ``x`` (Mul by a shared scale, Relu), summed with the graph input."""
    branches = [b.op("Relu", [b.op("Mul", [x, "fan_scale"])]) for _ in range(FAN_WIDTH)]
    return b.op("Sum", [*branches, "input"])


def _finish(b: _Builder, kind: str, nodes: int, last: str, shape: list[int]) -> onnx.ModelProto:
    for node in b.nodes:
        for k, name in enumerate(node.output):
            if name == last:
                node.output[k] = "output"
        for k, name in enumerate(node.input):
            if name == last:
                node.input[k] = "output"
    graph = helper.make_graph(
        b.nodes,
        f"synth_{kind}_{nodes}",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, shape)],
        initializer=b.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="trtstudio-synth")
    model.ir_version = 8
    return model


def make_model(nodes: int, kind: str = "transformer", seed: int = 0) -> onnx.ModelProto:
    """Build a synthetic model with exactly ``nodes`` nodes (at least 1)."""
    if nodes < 1:
        raise ValueError("nodes must be >= 1")
    rng = np.random.default_rng(seed)
    b = _Builder()
    if kind == "transformer":
        _transformer_weights(b, rng)
        shape = [1, SEQ, HIDDEN]
        block_nodes = 0
    elif kind == "random":
        return _random_model(nodes, rng)
    elif kind == "fan":
        b.const("fan_scale", np.array([0.5]))
        shape = [1, HIDDEN]
        block_nodes = 2 * FAN_WIDTH + 1
    elif kind == "cnn":
        _cnn_weights(b, rng)
        shape = [1, HIDDEN, 8, 8]
        block_nodes = 14  # the largest block (Concat) has 14 nodes
    else:
        raise ValueError(f"unknown kind {kind!r}")
    if kind == "transformer":
        probe = _Builder()
        _transformer_block(probe, "input")
        block_nodes = len(probe.nodes)
    x = "input"
    index = 0
    while len(b.nodes) + block_nodes <= nodes:
        if kind == "fan":
            x = _fan_block(b, x)
        else:
            x = _transformer_block(b, x) if kind == "transformer" else _cnn_block(b, x, index)
        index += 1
    while len(b.nodes) < nodes:
        x = b.op("Relu", [x])
    return _finish(b, kind, nodes, x, shape)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: write the model and print a JSON line describing it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, required=True)
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--kind", choices=["transformer", "cnn", "random", "fan"], default="transformer")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-check", action="store_true", help="skip onnx.checker")
    args = parser.parse_args(argv)
    model = make_model(args.nodes, args.kind, args.seed)
    if not args.no_check:
        onnx.checker.check_model(model)
    onnx.save(model, args.output)
    print(json.dumps({"file": args.output, "kind": args.kind, "nodes": len(model.graph.node),
                      "bytes": os.path.getsize(args.output)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
