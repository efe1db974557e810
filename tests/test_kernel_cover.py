"""The kernel-recording verdict of ``profile --per-layer`` on torch-cuda (profiling.kernel_cover)
and the per-layer table's text: launch-bound below half of the inference with --cuda-graph named or
quoted, what recording cost, op types and the provider in full. Pure functions over the figures a
run records; the GPU run itself is in test_backends_torch.py (skipped without a GPU)."""

from __future__ import annotations

import pytest

from trtstudio.commands.profile import render_text
from trtstudio.profiling.kernel_cover import LAUNCH_BOUND_SHARE, RECORDING_BUDGET, summarise


def _rec(kernel_ms: float, recorded_ms: float) -> dict:
    return {"total_ms": kernel_ms, "attributed_ms": kernel_ms, "share": 1.0, "kernels_per_inference": 52.0,
            "recorder": "cupti", "in_launch_order": 1.0, "recorded_median_ms": recorded_ms}


def test_kernels_under_half_of_the_inference_are_launch_bound_and_name_the_cuda_graph() -> None:
    # ShuffleNet on the H100 as the issue measured it: kernels 1.04 ms of a 4.83 ms inference
    out = summarise(_rec(1.04, 4.83 * 1.4), 4.83)
    assert out["gpu_busy_share"] == pytest.approx(1.04 / 4.83)
    assert out["gpu_busy_share"] < LAUNCH_BOUND_SHARE and out["bound"] == "launch"
    assert "22 %" in out["text"] and "launch-bound" in out["text"] and "--cuda-graph" in out["text"]
    assert out["recorded_vs_run"] == pytest.approx(1.4) and "1.40x" in out["text"] and "budget" not in out["text"]


def test_a_measured_graph_is_quoted_and_a_gpu_bound_model_is_not_launch_bound() -> None:
    variants = {"verdict": "the CUDA graph is 8.05x faster than eager (4.830 -> 0.600 ms): launching the work "
                           "costs about 4.230 ms per inference"}
    out = summarise(_rec(1.04, 4.9), 4.83, variants, cuda_graph=True)
    assert "--cuda-graph measured: the CUDA graph is 8.05x faster" in out["text"]
    busy = summarise(_rec(3.9, 4.0 * RECORDING_BUDGET * 0.99), 4.0)
    assert busy["bound"] == "gpu" and "launch-bound" not in busy["text"] and "within the 1.10x budget" in busy["text"]
    none = summarise({"recorder": "torch.profiler"}, None)
    assert none["bound"] is None and none["text"] is None


def test_the_text_shows_op_types_the_whole_provider_and_the_verdict() -> None:
    provider = "PyTorch kernels (cuda:0)"
    layers = [{"name": f"n{i}", "op_type": op, "provider": provider, "time_ms": t, "onnx_nodes": [f"node_{i}"]}
              for i, (op, t) in enumerate((("Conv", 0.2), ("Relu", 0.01), ("Gemm", 0.05)))]
    doc = {"schema": "trtstudio.profile/1", "model": "m.onnx", "backend": "torch-cuda", "shapes": {}, "latency_ms": {},
           "throughput": {"inferences_per_s": 200.0, "samples_per_s": 200.0}, "layers": layers,
           "kernel_recording": summarise(_rec(0.26, 5.0), 4.83)}
    text = render_text(doc)
    rows = [ln for ln in text.splitlines() if ln.startswith("n")]
    assert [r.split()[:2] for r in rows] == [["n0", "Conv"], ["n2", "Gemm"], ["n1", "Relu"]]  # slowest first
    assert all(provider in r for r in rows)
    assert "kernels: recorded by cupti, 52 per inference" in text and "launch-bound" in text


def test_kernels_longer_than_the_inference_fill_it_and_a_ratio_below_one_is_noise() -> None:
    # ShuffleNet replayed as a CUDA graph on the H100: recorded kernels 1.04 ms, the timed median 0.609 ms
    out = summarise(_rec(1.04, 0.609 * 0.63), 0.609, cuda_graph=True)
    assert out["gpu_busy_share"] == 1.0 and out["bound"] == "gpu"
    assert "fill the inference" in out["text"] and "1.04 ms, exceeds" in out["text"]
    assert "noisy" in out["text"] and "within" not in out["text"]
