"""Triton Inference Server targets: the remote side of trtstudio (Qt-free).

- ``client``: connect over HTTP or gRPC (tritonclient, imported lazily), server and model facts,
  input tensors from the model's metadata/config, statistics-extension and Prometheus parsing;
- ``sweep``: asyncio load generation (fixed concurrency or constant/Poisson request rate),
  measurement windows with perf_analyzer's stability rule, latency-throughput steps, the
  server-side breakdown and a recommendation under a latency budget (schema ``trtstudio.triton/1``);
- ``config_pbtxt``: a model-repository entry (``config.pbtxt``) for a TensorRT plan or an ONNX model;
- ``variants``, ``search``, ``launch``: the config search (``trtstudio triton-search``, schema
  ``trtstudio.tritonsearch/1``) and the tritonserver it can start on 127.0.0.1.
"""

SCHEMA = "trtstudio.triton/1"
