"""Write the bundled sample model: a narrow MobileNetV2 (width 0.35, 100 classes) as ONNX.

Built with onnx.helper and numpy only (no torch), with He-initialised weights from a fixed seed,
so the file is reproducible byte for byte. Node and tensor names follow PyTorch's exporter
("/features/1/conv/0/0/Conv"), which is what engine layer names look like for real models.

Most BatchNorms are folded into the convolution before them, as the exporter does in eval mode;
the stem and the last 1x1 convolution keep explicit BatchNormalization nodes for variety.

Usage: python scripts/make_sample.py [OUT.onnx] [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DEFAULT_OUT = (
    Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"
)
WIDTH = 0.35
NUM_CLASSES = 100
LAST_CHANNEL = 1280
SEED = 20240601
BN_EPS = 1e-5
# t (expansion), c (channels), n (repeats), s (stride): torchvision's MobileNetV2 table.
SETTINGS = [
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
]


def make_divisible(v: float, divisor: int = 8) -> int:
    """Round channels like torchvision's ``_make_divisible``."""
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class _Builder:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []

    def init(self, name: str, arr: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(self, op: str, name: str, inputs: list[str], **attrs: Any) -> str:
        out = f"{name}_output_0"
        self.nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def bn_params(self, c: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        gamma = (1.0 + 0.1 * self.rng.standard_normal(c)).astype(np.float32)
        beta = (0.05 * self.rng.standard_normal(c)).astype(np.float32)
        mean = (0.05 * self.rng.standard_normal(c)).astype(np.float32)
        var = self.rng.uniform(0.5, 1.5, c).astype(np.float32)
        return gamma, beta, mean, var

    def conv_bn(
        self,
        x: str,
        prefix: str,
        cin: int,
        cout: int,
        k: int,
        stride: int,
        groups: int,
        *,
        keep_bn: bool = False,
        seq: bool = True,
    ) -> str:
        """Conv + BN (folded, or an explicit node when ``keep_bn``).

        ``prefix`` is the PyTorch module path: for a Conv2dNormActivation (``seq``) like
        /features/1/conv/0 the conv is ``<prefix>/0/Conv``; a bare projection conv is ``<prefix>/Conv``.
        """
        fan_out = cout * k * k // groups
        w = (self.rng.standard_normal((cout, cin // groups, k, k)) * np.sqrt(2.0 / fan_out)).astype(
            np.float32
        )
        gamma, beta, mean, var = self.bn_params(cout)
        dotted = prefix.strip("/").replace("/", ".")
        attrs = dict(
            kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4, group=groups, dilations=[1, 1]
        )
        if keep_bn:
            y = self.node("Conv", f"{prefix}/0/Conv", [x, self.init(f"{dotted}.0.weight", w)], **attrs)
            return self.node(
                "BatchNormalization",
                f"{prefix}/1/BatchNormalization",
                [
                    y,
                    self.init(f"{dotted}.1.weight", gamma),
                    self.init(f"{dotted}.1.bias", beta),
                    self.init(f"{dotted}.1.running_mean", mean),
                    self.init(f"{dotted}.1.running_var", var),
                ],
                epsilon=BN_EPS,
                momentum=0.9,
            )
        scale = gamma / np.sqrt(var + BN_EPS)
        wf = (w * scale[:, None, None, None]).astype(np.float32)
        bf = (beta - mean * scale).astype(np.float32)
        name, pname = (f"{prefix}/0/Conv", f"{dotted}.0") if seq else (f"{prefix}/Conv", dotted)
        return self.node(
            "Conv",
            name,
            [x, self.init(f"{pname}.weight", wf), self.init(f"{pname}.bias", bf)],
            **attrs,
        )

    def relu6(self, x: str, name: str) -> str:
        return self.node("Clip", name, [x, "relu6_min", "relu6_max"])


def build_model(width: float = WIDTH, num_classes: int = NUM_CLASSES, seed: int = SEED) -> onnx.ModelProto:
    """Return the MobileNetV2 ModelProto (dynamic batch dim ``batch``)."""
    b = _Builder(seed)
    b.init("relu6_min", np.array(0.0, dtype=np.float32))
    b.init("relu6_max", np.array(6.0, dtype=np.float32))

    cin = make_divisible(32 * width)
    x = b.conv_bn("input", "/features/0", 3, cin, 3, 2, 1, keep_bn=True)
    x = b.relu6(x, "/features/0/2/Clip")
    idx = 1
    for t, c, n, s in SETTINGS:
        cout = make_divisible(c * width)
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            p = f"/features/{idx}/conv"
            block_in = x
            layer = 0
            if t != 1:
                x = b.conv_bn(x, f"{p}/{layer}", cin, hidden, 1, 1, 1)
                x = b.relu6(x, f"{p}/{layer}/2/Clip")
                layer += 1
            x = b.conv_bn(x, f"{p}/{layer}", hidden, hidden, 3, stride, hidden)
            x = b.relu6(x, f"{p}/{layer}/2/Clip")
            layer += 1
            # Projection: 1x1 conv, linear (no activation); PyTorch names it conv.<layer> directly.
            x = b.conv_bn(x, f"{p}/{layer}", hidden, cout, 1, 1, 1, seq=False)
            if stride == 1 and cin == cout:
                x = b.node("Add", f"/features/{idx}/Add", [block_in, x])
            cin = cout
            idx += 1

    last = make_divisible(LAST_CHANNEL * max(1.0, width))
    x = b.conv_bn(x, f"/features/{idx}", cin, last, 1, 1, 1, keep_bn=True)
    x = b.relu6(x, f"/features/{idx}/2/Clip")
    x = b.node("GlobalAveragePool", "/GlobalAveragePool", [x])
    x = b.node("Flatten", "/Flatten", [x], axis=1)
    w = (b.rng.standard_normal((num_classes, last)) * 0.01).astype(np.float32)
    bias = np.zeros(num_classes, dtype=np.float32)
    b.nodes.append(
        helper.make_node(
            "Gemm",
            [x, b.init("classifier.1.weight", w), b.init("classifier.1.bias", bias)],
            ["logits"],
            name="/classifier/1/Gemm",
            alpha=1.0,
            beta=1.0,
            transB=1,
        )
    )

    graph = helper.make_graph(
        b.nodes,
        "main_graph",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 224, 224])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", num_classes])],
        initializer=b.inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17)],
        producer_name="trtstudio make_sample.py",
        producer_version="1",
        doc_string=f"MobileNetV2 width {width}, {num_classes} classes, He-initialised (seed {seed}); not trained.",
    )
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)


def check(path: Path) -> None:
    """Run the full ONNX checker and an onnxruntime CPU inference at batch 1 and 2."""
    import onnxruntime as ort

    onnx.checker.check_model(str(path), full_check=True)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for n in (1, 2):
        x = rng.standard_normal((n, 3, 224, 224)).astype(np.float32)
        (y,) = sess.run(["logits"], {"input": x})
        assert y.shape == (n, NUM_CLASSES), y.shape
        assert np.isfinite(y).all()
        print(f"onnxruntime batch {n}: logits {y.shape}, std {float(y.std()):.4f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT)
    ap.add_argument(
        "--check", action="store_true", help="run onnx.checker (full) and onnxruntime on the result"
    )
    args = ap.parse_args(argv)
    model = build_model()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(args.out))
    size = args.out.stat().st_size
    print(f"wrote {args.out} ({size / 1e6:.2f} MB, {len(model.graph.node)} nodes)")
    if args.check:
        check(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
