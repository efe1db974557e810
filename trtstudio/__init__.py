"""trtstudio: an open desktop profiler for NVIDIA TensorRT engines and ONNX models."""

__version__ = "0.1.0"
