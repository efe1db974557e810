"""A real Triton server for the tests, run by the PyTriton venv's Python (not trtstudio's).

Usage: python triton_server_main.py ONNX HTTP_PORT GRPC_PORT METRICS_PORT [--security S]
                                     [--grpc-cert CERT --grpc-key KEY]

Serves two models on 127.0.0.1 with dynamic batching:
- ``mobilenet``: the bundled sample ONNX model, run by ONNX Runtime inside the bound function;
- ``identity``: returns its FP32 input (for load-generator overhead).

``--security``: ``open`` (default here: PyTriton's access-token guard switched off, statistics and
the repository API readable), ``pytriton`` (PyTriton's own defaults: the repository, statistics,
trace, logging and shared-memory APIs restricted to a generated token, printed as
``TRTSTUDIO-TRITON-TOKEN <token>`` for the tests), or ``token=VALUE`` (the same APIs restricted
to the token VALUE; ``--restrict-more metadata`` adds APIs; PyTriton needs ``health`` open). ``--grpc-cert``/``--grpc-key``: the gRPC endpoint serves TLS only.
"""

from __future__ import annotations

import argparse

import numpy as np
import onnxruntime as ort
from pytriton.decorators import batch
from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor
from pytriton.triton import Triton, TritonConfig, TritonSecurityConfig


def security(kind: str, more: str | None) -> TritonSecurityConfig:
    if kind == "open":  # an empty list of restricted endpoints: statistics and the repository API need no token
        return TritonSecurityConfig(restricted_endpoints=[])
    if kind == "pytriton":
        return TritonSecurityConfig()
    if kind.startswith("token="):
        extra = more.split(",") if more else []
        return TritonSecurityConfig(access_token=kind.split("=", 1)[1],
                                    restricted_endpoints=TritonSecurityConfig().restricted_endpoints + extra)
    raise SystemExit(f"unknown --security {kind!r}")


def main() -> None:
    p = argparse.ArgumentParser()
    for name in ("onnx", "http", "grpc", "metrics"):
        p.add_argument(name)
    p.add_argument("--security", default="open")
    p.add_argument("--restrict-more", help="with token=: restrict these APIs too (e.g. metadata)")
    p.add_argument("--grpc-cert")
    p.add_argument("--grpc-key")
    a = p.parse_args()
    onnx_path, http_port, grpc_port, metrics_port = a.onnx, int(a.http), int(a.grpc), int(a.metrics)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    out = sess.get_outputs()[0]
    in_shape = tuple(int(d) for d in inp.shape[1:])
    out_shape = tuple(int(d) if isinstance(d, int) else -1 for d in out.shape[1:])

    @batch
    def mobilenet(**inputs: np.ndarray) -> dict[str, np.ndarray]:
        x = inputs[inp.name].astype(np.float32)
        return {out.name: sess.run([out.name], {inp.name: x})[0]}

    @batch
    def identity(INPUT0: np.ndarray) -> dict[str, np.ndarray]:
        return {"OUTPUT0": INPUT0}

    config = TritonConfig(
        http_address="127.0.0.1",
        http_port=http_port,
        grpc_address="127.0.0.1",
        grpc_port=grpc_port,
        metrics_port=metrics_port,
        metrics_address="127.0.0.1",
        exit_on_error=True,
        log_verbose=0,
        **({"grpc_use_ssl": True, "grpc_server_cert": a.grpc_cert, "grpc_server_key": a.grpc_key} if a.grpc_cert else {}),
    )
    sec = security(a.security, a.restrict_more)
    if a.security == "pytriton":
        print(f"TRTSTUDIO-TRITON-TOKEN {sec.access_token}", flush=True)
    with Triton(config=config, security_config=sec) as triton:
        triton.bind(
            model_name="mobilenet",
            infer_func=mobilenet,
            inputs=[Tensor(name=inp.name, dtype=np.float32, shape=in_shape)],
            outputs=[Tensor(name=out.name, dtype=np.float32, shape=out_shape)],
            config=ModelConfig(max_batch_size=8, batcher=DynamicBatcher(max_queue_delay_microseconds=500)),
            strict=False,
        )
        triton.bind(
            model_name="identity",
            infer_func=identity,
            inputs=[Tensor(name="INPUT0", dtype=np.float32, shape=(16,))],
            outputs=[Tensor(name="OUTPUT0", dtype=np.float32, shape=(16,))],
            config=ModelConfig(max_batch_size=64, batcher=DynamicBatcher(max_queue_delay_microseconds=100)),
            strict=False,
        )
        print("TRTSTUDIO-TRITON-SERVING", flush=True)
        triton.serve()


if __name__ == "__main__":
    main()
