"""Kernels inside layers from Nsight Systems exports: the join on a real export (PyTorch ranges on
two H100s), and a TensorRT run's export beside TREx's engine (layer times from the TensorRT domain)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from nsys_synth import write_trt_export

from trtstudio.cli import main
from trtstudio.engine.load import load_engine
from trtstudio.engine.nsys import range_name, read_kernels
from trtstudio.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "fixtures" / "nsys-real" / "GindaChen_nsys-ai" / "h100_2gpu_1s.sqlite"
A100 = (ROOT.parent / "shared" / "fixtures" / "trt-real" / "NVIDIA_TensorRT_trex" / "release-11.0" / "examples"
        / "pytorch" / "resnet" / "A100" / "fp32")


@pytest.mark.skipif(not REAL.is_file(), reason=f"fixtures absent: {REAL}")
def test_real_export_innermost_attribution() -> None:
    table = read_kernels(REAL)
    # the innermost range by brute force: per kernel, among the push/pop ranges on its launching
    # thread that hold the launch call's start, the one that started last
    con = sqlite3.connect(f"file:{REAL}?mode=ro", uri=True)
    rows = con.execute("SELECT k.end - k.start, r.globalTid, r.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                       "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId").fetchall()
    rng = np.asarray(con.execute("SELECT start, end, globalTid FROM NVTX_EVENTS WHERE eventType = 59 AND end IS NOT NULL")
                     .fetchall(), dtype=np.int64)
    names = [t for (t,) in con.execute("SELECT text FROM NVTX_EVENTS WHERE eventType = 59 AND end IS NOT NULL")]
    total_ms = con.execute("SELECT SUM(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0] / 1e6
    expected: dict[str, float] = {}
    for dur, tid, t in rows:
        hold = np.flatnonzero((rng[:, 2] == tid) & (rng[:, 0] <= t) & (rng[:, 1] >= t))
        if len(hold):
            inner = hold[np.argmax(rng[hold, 0])]
            key = range_name(names[inner])
            expected[key] = expected.get(key, 0.0) + dur / 1e6
    got = {r["name"]: r["ms"] for r in table.ranges}
    assert got.keys() == expected.keys()
    assert all(got[k] == pytest.approx(v) for k, v in expected.items())
    # nested ranges are not counted twice: each range's time is the sum of its kernels, and all of
    # them together are the attributed time, within the export's total
    for r in table.ranges:
        assert r["ms"] == pytest.approx(sum(k["ms"] for k in r["kernels"]))
    assert sum(r["ms"] for r in table.ranges) == pytest.approx(table.attributed_ms)
    assert table.attributed_ms < table.total_ms == pytest.approx(total_ms)
    assert table.devices == [0, 1] and table.source["nsys"]
    assert any("no launch call" in n for n in table.notes)  # the fixture is a trimmed window


@pytest.mark.skipif(not REAL.is_file(), reason=f"fixtures absent: {REAL}")
def test_layers_command_on_the_export_alone(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["layers", str(REAL), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    k = doc["kernels"]
    assert doc["layers"] == [] and k["ranges"][0]["name"] == "aten::mm" and k["ranges"][0]["domain"] == "default"
    assert {"total_ms", "attributed_ms", "ranges"} <= set(k)
    assert main(["layers", str(REAL)]) == 0
    assert "inside NVTX ranges" in capsys.readouterr().out


@pytest.mark.skipif(not A100.is_dir(), reason=f"fixtures absent: {A100}")
def test_tensorrt_export_gives_layer_times_beside_the_engine(tmp_path: Path) -> None:
    graph = A100 / "resnet.onnx.engine.graph.json"
    names = [lay["Name"] for lay in json.loads(graph.read_text())["Layers"]]
    export = tmp_path / "run.sqlite"
    totals = write_trt_export(export, names, inferences=5)
    eng = load_engine([graph, export])
    assert [lay.name for lay in eng.layers] == names
    for lay in eng.layers:
        assert lay.time is not None and lay.time.count == 5
        assert lay.time.total_ms == pytest.approx(totals[lay.name]) and lay.time.average_ms == pytest.approx(totals[lay.name] / 5)
    # the enqueue range around the layers holds no kernel of its own: innermost attribution
    ranges = {r["name"]: r for r in eng.kernels["ranges"]}
    assert "ExecutionContext::enqueue" not in ranges and all(ranges[n]["domain"] == "TensorRT" for n in names)


def test_not_an_export_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "other.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(InputError, match="not an Nsight Systems export"):
        read_kernels(db)
    assert main(["layers", str(db)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not an Nsight Systems export" in err[0]


def _trace_events() -> tuple[list[dict], dict[str, float]]:
    """A Kineto trace as torch.profiler writes it (complete events in microseconds): per inference,
    trtstudio's record_function range per ONNX node, an aten:: op inside it, the cudaLaunchKernel
    call inside that, and the kernel on the GPU with the same correlation id."""
    events: list[dict] = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}}]
    want: dict[str, float] = {}
    t, corr = 100.0, 1
    for _ in range(3):
        for node, op, kernels in (("/conv1/Conv", "aten::conv2d", 2), ("/relu/Relu", "aten::relu", 1)):
            start = t
            events.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1, "ts": t + 1, "dur": 10 * kernels})
            for k in range(kernels):
                events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                               "ts": t + 2 + 10 * k, "dur": 3, "args": {"correlation": corr}})
                dur = 5.0 + corr
                events.append({"ph": "X", "cat": "kernel", "name": f"{op}_kernel_{k}", "pid": 0, "tid": 7,
                               "ts": t + 50 + 10 * k, "dur": dur, "args": {"correlation": corr, "device": 0, "stream": 7}})
                want[node] = want.get(node, 0.0) + dur / 1e3
                corr += 1
            t += 10 * kernels + 5
            events.append({"ph": "X", "cat": "user_annotation", "name": node, "pid": 1, "tid": 1, "ts": start,
                           "dur": t - start})
    # a kernel whose launch the trace missed
    events.append({"ph": "X", "cat": "kernel", "name": "orphan", "pid": 0, "tid": 7, "ts": 9999, "dur": 1,
                   "args": {"correlation": 99999, "device": 0}})
    return events, want


def test_kineto_trace_to_onnx_nodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from trtstudio.engine.kineto import read_trace

    events, want = _trace_events()
    path = tmp_path / "run.pt.trace.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    nodes = read_trace(path, kinds=("user_annotation",))
    got = {r["name"]: r for r in nodes.ranges}
    assert got.keys() == want.keys()
    assert all(got[n]["ms"] == pytest.approx(ms) and got[n]["count"] == 3 for n, ms in want.items())
    assert nodes.attributed == nodes.kernels - 1 and any("no launch call" in n for n in nodes.notes)
    # with aten ops as ranges too, the innermost is the op
    ops = {r["name"] for r in read_trace(path).ranges}
    assert ops == {"aten::conv2d", "aten::relu"}
    # the file opens alone with trtstudio layers, as an nsys export does
    assert main(["layers", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {r["name"] for r in doc["kernels"]["ranges"]} == ops


@pytest.mark.skipif(not (REAL.is_file() and A100.is_dir()), reason="fixtures absent")
def test_verdict_of_the_real_export_beside_the_a100_engine() -> None:
    """The H100 PyTorch export beside TREx's A100 engine: what it holds (PyTorch ranges, not the
    engine's layers), on which devices, and that none of the engine's layers matched."""
    from trtstudio.engine.node_time import trace_verdict

    files = sorted(A100.iterdir())
    eng = load_engine([*files, REAL])
    names = [lay["Name"] for lay in json.loads((A100 / "resnet.onnx.engine.graph.json").read_text())["Layers"]]
    v = trace_verdict(eng.kernels, str(REAL), [lay.name for lay in eng.layers], eng.device)
    con = sqlite3.connect(f"file:{REAL}?mode=ro", uri=True)
    kernels = con.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    devices = [d for (d,) in con.execute("SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY deviceId")]
    assert v["kernels"] == kernels == 3442 and v["layers"] == len(set(names)) and v["matched_layers"] == 0
    assert v["source"] == "Nsight Systems export" and "PyTorch op ranges" in v["holds"]
    assert f"devices {', '.join(map(str, devices))}" in v["gpu"] and "not named" in v["gpu"]
    assert eng.device["name"] in v["gpu_note"] and "not recorded" in v["gpu_note"]
    # the heaviest op named with its share of the kernel time, as `trtstudio layers` ranks them
    top = max(eng.kernels["ranges"], key=lambda r: r["ms"])
    assert f"{top['name']} {100 * top['ms'] / eng.kernels['total_ms']:.0f} %" in v["text"]
    assert v["text"].startswith("h100_2gpu_1s.sqlite: ") and "\n" not in v["text"]
    assert eng.kernels["archs"] and all(a.startswith("sm") for a in eng.kernels["archs"])


@pytest.mark.skipif(not A100.is_dir(), reason=f"fixtures absent: {A100}")
def test_verdict_of_a_tensorrt_export_counts_matched_layers_and_names_the_gpu(tmp_path: Path) -> None:
    from trtstudio.engine.node_time import trace_verdict

    graph = A100 / "resnet.onnx.engine.graph.json"
    names = [lay["Name"] for lay in json.loads(graph.read_text())["Layers"]]
    export = tmp_path / "run.sqlite"
    half = names[: len(names) // 2]
    totals = write_trt_export(export, half, inferences=2)
    con = sqlite3.connect(export)  # the GPU table newer exports carry
    con.execute("CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, computeMajor INTEGER, computeMinor INTEGER)")
    con.execute("INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 PCIe', 9, 0)")
    con.commit()
    con.close()
    eng = load_engine([graph, A100 / "resnet.onnx.engine.metadata.json", export])
    assert eng.kernels["gpus"] == [{"id": 0, "name": "NVIDIA H100 PCIe", "compute_capability": "9.0"}]
    v = trace_verdict(eng.kernels, str(export), [lay.name for lay in eng.layers], eng.device)
    assert v["matched_layers"] == len(set(half)) and v["holds"].startswith("TensorRT layer ranges")
    assert f"{len(set(half))} of {len(set(names))} engine layers matched" in v["text"]
    assert v["matched_ms"] == pytest.approx(sum(totals.values()))
    assert "NVIDIA H100 PCIe (9.0)" in v["gpu"]
    assert "A100" in eng.device["name"]
    assert v["gpu_note"] == f"another GPU than the engine's {eng.device['name']} ({eng.device['compute_capability']})"


def test_kernel_archs_from_names() -> None:
    from trtstudio.engine.nsys import kernel_archs

    assert kernel_archs(["sm80_xmma_gemm_f16", "ampere_sgemm", "cutlass_80_tensorop_sm90_s16816gemm_x",
                         "sm_75_something", "elementwise_kernel", "fsm100_x"]) == ["sm75", "sm80", "sm90"]
