"""Op categories for colouring the graph, with their legend colours (hex, no Qt)."""

from __future__ import annotations

CATEGORIES: dict[str, tuple[str, str]] = {
    # key: (label, fill colour)
    "compute": ("Conv / MatMul", "#3b6fb6"),
    "activation": ("Activation", "#c0504d"),
    "normalization": ("Normalization", "#4f9d69"),
    "pooling": ("Pooling", "#2e8b8b"),
    "shape": ("Shape / Reshape", "#8a8a8a"),
    "elementwise": ("Elementwise", "#d08b2c"),
    "control": ("Control flow", "#8e5ea2"),
    "quantization": ("Quantization", "#b5487d"),
    "reformat": ("Reformat", "#e07b00"),
    "custom": ("Custom domain", "#2b2b2b"),
    "other": ("Other", "#6b7f99"),
}

_OPS: dict[str, set[str]] = {
    "compute": {"Conv", "ConvTranspose", "MatMul", "Gemm", "MatMulInteger", "ConvInteger", "QLinearConv",
                "QLinearMatMul", "Einsum", "Attention", "MultiHeadAttention", "LSTM", "GRU", "RNN"},
    "activation": {"Relu", "LeakyRelu", "PRelu", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Elu", "Selu", "Gelu",
                   "HardSigmoid", "HardSwish", "Softplus", "Softsign", "Mish", "Clip", "ThresholdedRelu", "Celu",
                   "Hardmax"},
    "normalization": {"BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization",
                      "LpNormalization", "LRN", "MeanVarianceNormalization", "RMSNormalization",
                      "SkipLayerNormalization"},
    "pooling": {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool", "GlobalLpPool",
                "ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd", "ReduceL2", "ReduceL1",
                "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin", "TopK", "Resize", "Upsample"},
    "shape": {"Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Shape", "Size", "Concat", "Split",
              "Slice", "Gather", "GatherElements", "GatherND", "Scatter", "ScatterND", "ScatterElements", "Expand",
              "Tile", "Pad", "Identity", "Constant", "ConstantOfShape", "Range", "NonZero", "Cast", "CastLike",
              "DepthToSpace", "SpaceToDepth", "Trilu", "OneHot", "Compress", "ReverseSequence"},
    "elementwise": {"Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Abs", "Neg", "Reciprocal", "Floor",
                    "Ceil", "Round", "Erf", "Sin", "Cos", "Max", "Min", "Mean", "Sum", "Where", "Equal", "Less",
                    "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Not", "Xor", "Mod", "Sign",
                    "IsNaN", "IsInf", "BitShift"},
    "control": {"If", "Loop", "Scan", "SequenceMap"},
    "quantization": {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"},
}
# TensorRT and TensorRT-RTX layer types (``LayerType`` of the inspector, the build log's type), so an
# engine's own graph (engine.layer_graph) is coloured as its ONNX graph would be
_ENGINE_OPS: dict[str, set[str]] = {
    "compute": {"CaskConvolution", "CaskGemmConvolution", "CudaDepthwiseConvolution", "FusedConvActConvolution",
                "ConvActPool", "CublasConvolution", "CudnnConvolution", "CaskDeconvolution", "Convolution",
                "Deconvolution", "MatrixMultiply", "FullyConnected", "CaskGemm", "gemm", "correlation", "Myelin",
                "runtime_fusion", "runtime_function"},
    "pooling": {"CaskPooling", "TiledPooling", "CudaPooling", "CudnnPooling", "Pooling", "maxpool", "Reduce"},
    "activation": {"Activation", "CudaSoftMax", "SoftMax", "CaskSoftMax"},
    "elementwise": {"ElementWise", "PointWise", "PointWiseV2", "kgen", "Scale"},
    "shape": {"Shuffle", "NoOp", "Slice", "Padding", "Concatenation", "Gather", "shape_call", "Resize"},
    "reformat": {"Reformat"},
    "control": {"wait", "signal"},
    "custom": {"PluginV2", "PluginV3"},
}
_BY_OP = {op: cat for cat, ops in (*_OPS.items(), *_ENGINE_OPS.items()) for op in ops}


def category(op_type: str, domain: str = "") -> str:
    """Category key of an op (``custom`` for any domain other than the default ONNX ones)."""
    if domain not in ("", "ai.onnx", "ai.onnx.ml", "com.microsoft"):
        return "custom"
    return _BY_OP.get(op_type, "custom" if domain == "com.microsoft" else "other")


def color(op_type: str, domain: str = "") -> str:
    return CATEGORIES[category(op_type, domain)][1]
