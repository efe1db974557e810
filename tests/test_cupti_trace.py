"""Kernels recorded by CUPTI alone, put on ONNX nodes by the launch order of one traced inference
(trtstudio.backends.cupti_trace): the order join and the demangler, on the CPU. The recorder itself
runs on the GPU (tests/test_backends_torch.py, marked gpu)."""

from __future__ import annotations

import ctypes.util

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trtstudio.backends.cupti_trace import Kernel, align_by_order, demangle, table_by_order, ticks_per_ns
from trtstudio.engine.kineto import kernel_sequence, trace_table

# names CUPTI gave on an H100 (PyTorch 2.11, cuDNN 9), and what torch.profiler showed for them
MANGLED = {
    "_Z23implicit_convolve_sgemmIffLi1024ELi5ELi5ELi3ELi3ELi3ELi1ELb0ELb0ELb1EEviiiPKT_iPT0_S2_18kernel_conv_"
    "paramsyiffiPKS3_S7_bbii": "void implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, false, false,",
    "_ZN5cudnn26bn_fw_inf_1C11_kernel_NCHWIffLb1ELi1EEEvT0_S1_17cudnnTensorStructPKT_S2_PS3_S2_PKS1_S8_S8_S8_S1_":
        "void cudnn::bn_fw_inf_1C11_kernel_NCHW<float, float, true, 1>(float, float, cudn",
}


@pytest.mark.skipif(not ctypes.util.find_library("stdc++"), reason="no libstdc++ to demangle with")
def test_demangled_names_are_torch_profilers() -> None:
    for mangled, shown in MANGLED.items():
        assert demangle(mangled).startswith(shown)
    assert demangle("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32") == \
        "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32"  # C names stay
    assert demangle("_Znot a symbol") == "_Znot a symbol"


names = st.sampled_from("abcdefg")


@given(st.lists(names, min_size=1, max_size=30), st.integers(1, 6))
def test_repeated_inferences_land_in_order(expected: list[str], n: int) -> None:
    pos, in_order = align_by_order(expected, expected * n)
    assert pos == list(range(len(expected))) * n and in_order == len(expected) * n


@given(st.lists(names, min_size=2, max_size=30, unique=True), st.integers(2, 6), st.data())
def test_a_changed_inference_costs_only_itself(expected: list[str], n: int, data: st.DataObject) -> None:
    """One inference loses a kernel and gains one of a name never traced: the others stay in order."""
    bad = data.draw(st.integers(0, n - 1))
    drop = data.draw(st.integers(0, len(expected) - 1))
    seen: list[str] = []
    truth: list[int] = []
    for i in range(n):
        for j, name in enumerate(expected):
            if i == bad and j == drop:
                seen.append("zz_unknown")
                truth.append(-1)
                continue
            seen.append(name)
            truth.append(j)
    pos, in_order = align_by_order(expected, seen)
    assert pos == truth  # distinct names: a skipped kernel is found again at once
    assert in_order >= len(seen) - 2


def _traced(nodes: list[tuple[str, list[str]]]) -> list[dict]:
    """One inference as torch.profiler traces it: a user_annotation range per node, the launch call
    inside it, the kernel with the same correlation id (times in microseconds)."""
    events: list[dict] = []
    t, corr = 10.0, 1
    for node, kernels in nodes:
        start = t
        for k in kernels:
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                           "ts": t + 1, "dur": 2, "args": {"correlation": corr}})
            events.append({"ph": "X", "cat": "kernel", "name": k, "pid": 0, "tid": 7, "ts": 1000 + 10 * corr,
                           "dur": 4, "args": {"correlation": corr, "device": 0, "grid": [8, 1, 1],
                                              "block": [256, 1, 1]}})
            t, corr = t + 5, corr + 1
        events.append({"ph": "X", "cat": "user_annotation", "name": f"trtstudio::{node}", "pid": 1, "tid": 1,
                       "ts": start, "dur": t - start})
    return events


def test_recorded_kernels_go_to_the_traced_nodes() -> None:
    """The traced inference's order is the key; each recorded inference's kernel times add up per
    node as a traced run's would, with the launch dimensions CUPTI recorded."""
    layout = [("conv/Conv", ["_Z4convv", "bias"]), ("relu/Relu", ["relu"]), ("fc/Gemm", ["gemm", "bias"])]
    events = _traced(layout)
    expected = kernel_sequence(events)
    assert expected == [("_Z4convv", "trtstudio::conv/Conv"), ("bias", "trtstudio::conv/Conv"),
                        ("relu", "trtstudio::relu/Relu"), ("gemm", "trtstudio::fc/Gemm"),
                        ("bias", "trtstudio::fc/Gemm")]
    expected = [(demangle(name), node) for name, node in expected]  # torch.profiler shows them demangled
    kernels: list[Kernel] = []
    t = 0
    want: dict[str, float] = {}
    for i in range(4):
        for node, ks in layout:
            for k in ks:
                dur = 1000 * (1 + i + len(k))
                kernels.append(Kernel(t, t + dur, k, 7, (8, 1, 1), (256, 1, 1)))
                want[f"trtstudio::{node}"] = want.get(f"trtstudio::{node}", 0.0) + dur / 1e6
                t += dur + 500
    kernels.append(Kernel(t, t + 999, "stray", 7, (1, 1, 1), (1, 1, 1)))  # not the model's
    table, in_order = table_by_order(expected, kernels)
    got = {r["name"]: r for r in table.ranges}
    assert got.keys() == want.keys()
    assert all(got[n]["ms"] == pytest.approx(ms) for n, ms in want.items())
    assert table.kernels == 21 and table.attributed == 20 and in_order == pytest.approx(20 / 21)
    assert table.total_ms == pytest.approx(sum(want.values()) + 999 / 1e6)
    bias = next(k for k in got["trtstudio::conv/Conv"]["kernels"] if k["name"] == "bias")
    assert bias["count"] == 4 and bias["launch"] == "grid 8x1x1 block 256x1x1"
    # the traced run's own table agrees on where each kernel went
    traced = {r["name"]: r["count"] for r in trace_table(events, kinds=("user_annotation",)).ranges}
    assert traced == {n: 1 for n in want}


def test_cupti_clock_rate_from_both_ends_of_a_recording() -> None:
    """CUPTI's own clock is in ns; once Kineto registered its TSC callback it ticks at the TSC's rate
    (2.1 GHz on the lent H100's host, measured): kernel times are divided by it."""
    ms = 1_000_000
    assert ticks_per_ns((5_000, 0), (5_000 + 40 * ms, 40 * ms)) == 1.0
    assert ticks_per_ns((0, 10), (int(2.1 * 40 * ms), 10 + 40 * ms)) == pytest.approx(2.1)
    assert ticks_per_ns((0, 0), (1_004_000, ms)) == 1.0  # within 1 %
    assert ticks_per_ns((0, 0), (900, 900)) == 1.0  # too short to tell
