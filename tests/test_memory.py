"""trtstudio memory: an engine's memory by category from its files, per layer, and a deployment's total.

The real logs are every file of the fixtures with a TensorRT memory line (a new one is checked the
day it arrives); each figure is checked against the line it names, parsed here on its own."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import FIXTURES

from trtstudio.cli import main
from trtstudio.engine.memory import (
    CATEGORIES,
    DEFAULT_CUDA_CONTEXT_BYTES,
    MIB,
    engine_memory,
    live_memory,
    memory_rows,
    parse_size,
    predict,
    read_log,
)
from trtstudio.engine.model import Layer, TensorDesc

# What a memory line looks like, written apart from the module under test
MARKERS = ("[MemUsageChange]", "[BlockAssignment] Algorithm", "[MemUsageStats]", "Total Activation Memory:",
           "Total Weights Memory:", "Total Host Persistent Memory:", "Total Device Persistent Memory:",
           "Max Scratch Memory:", "Total Scratch Memory:", "Created engine with size:", "Loaded engine size:",
           "execution context with device memory size:", "Allocated device scratch memory of size",
           " Host Persistent: ")


def _memory_logs() -> list[Path]:
    if not FIXTURES.is_dir():
        return []
    out = []
    for p in sorted(FIXTURES.rglob("*")):
        if p.is_file() and p.suffix in (".log", ".txt") and p.stat().st_size < 20_000_000:
            text = p.read_text(errors="replace")
            if any(m in text for m in MARKERS):
                out.append(p)
    return out


LOGS = _memory_logs()
TOTALS_LOGS = [p for p in LOGS if "Total Activation Memory:" in p.read_text(errors="replace")]


def _value_of(name: str, text: str) -> int:
    """The bytes a line states for category ``name``, parsed here: "N bytes"/": N" for totals, "GPU N
    (MiB)" after "now:" for Init CUDA, "GPU N MiB" for the peak, "X MiB" for sizes."""
    if name == "cuda_context":
        return int(re.search(r"now: CPU -?\d+, GPU (-?\d+)", text).group(1)) * MIB
    if name == "builder_peak":
        return int(re.search(r"GPU (\d+) MiB", text).group(1)) * MIB
    if name == "libraries" or "engine deserialization" in text:  # what the step added
        return max(int(re.search(r"GPU ([+-]\d+),", text).group(1)), 0) * MIB
    if "MiB" in text:
        return round(float(re.search(r"([\d.]+) MiB", text).group(1)) * MIB)
    return int(re.findall(r"(\d+)(?: bytes)?\s*$", text.strip())[-1])


def _line_at(source: str) -> tuple[str, int]:
    m = re.match(r"(.+?):(\d+): ", source)
    assert m, source
    return m.group(1), int(m.group(2))


def test_the_fixtures_hold_the_logs_the_issue_counts(trt_real):
    assert len(TOTALS_LOGS) >= 17  # the 17 TensorRT 10.14-10.16 logs with an engine's totals


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_memory_line_of_a_real_log_is_read(path):
    lines = path.read_text(errors="replace").split("\n")
    wanted = {i for i, ln in enumerate(lines, 1) if any(m in ln for m in MARKERS)}
    read = {ln.number for ln in read_log(str(path), "\n".join(lines)).lines}
    assert wanted and wanted <= read, sorted(wanted - read)[:5]


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_each_figure_is_the_one_its_line_states(path):
    lines = path.read_text(errors="replace").split("\n")
    mem = engine_memory(str(path))
    checked = 0
    for name in ("weights", "activations", "device_persistent", "host_persistent", "scratch", "cuda_context",
                 "builder_peak", "engine_size"):
        fig = mem.categories[name]
        if fig.bytes is None or not fig.source.startswith(str(path)):
            continue
        file, number = _line_at(fig.source)
        assert file == str(path)
        assert fig.bytes == _value_of(name, lines[number - 1]), (name, lines[number - 1])
        checked += 1
    lib = mem.categories["libraries"]
    if lib.bytes is not None:
        numbers = [int(n) for n in re.findall(r":(\d+): \[MemUsageChange\]", lib.source)]
        assert lib.bytes == sum(_value_of("libraries", lines[n - 1]) for n in numbers)
    assert checked or mem.categories["libraries"].bytes is not None or mem.context.bytes is not None


@pytest.mark.parametrize("path", TOTALS_LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_log_with_totals_gives_the_engine_its_build_kept(path):
    lines = path.read_text(errors="replace").split("\n")
    mem = engine_memory(str(path))
    for name in ("weights", "activations", "device_persistent", "host_persistent", "scratch"):
        assert mem.categories[name].bytes is not None, name
    _, act_line = _line_at(mem.categories["activations"].source)
    chosen = [i for i, ln in enumerate(lines, 1) if "Chose this engine with backend strategy" in ln]
    builds = [i for i, ln in enumerate(lines, 1) if "Init builder kernel library" in ln]
    if chosen:  # the candidate of the strategy chosen, not the last one built
        strategy = re.search(r"strategy (\d+)", lines[chosen[-1] - 1]).group(1)
        start = max(i for i, ln in enumerate(lines, 1)
                    if f"Building graph using backend strategy {strategy}" in ln and i < chosen[-1])
        assert start < act_line < chosen[-1]
    else:  # the last build's (its largest profile where it builds several)
        last = [i for i, ln in enumerate(lines, 1) if "Total Activation Memory:" in ln and i > max(builds or [0])]
        assert act_line in last
        assert mem.categories["activations"].bytes == max(_value_of("activations", lines[i - 1]) for i in last)
    blocks = mem.categories["activations"].also
    assert not blocks or "block assignment" in blocks[0]["what"]


def test_backend_strategies_keep_the_chosen_engine(trt_real):
    log = trt_real / "NVIDIA_trt-samples-for-hackathon-cn/HEAD/cookbook/07-Tool/trtexec/result-02.log"
    lines = log.read_text().split("\n")
    mem = engine_memory(str(log))
    assert lines[_line_at(mem.categories["activations"].source)[1] - 1].endswith("Total Activation Memory: 2007040 bytes")
    per_layer = [r for r in mem.layers if r.get("host_persistent") is not None]
    assert per_layer and all(r["source"].startswith(str(log)) for r in per_layer)
    assert {r["name"] for r in per_layer} >= {"node_max_pool2d", "node_max_pool2d_1"}


def test_two_profiles_give_each_its_figures_and_the_largest(trt_real):
    log = trt_real / "NVIDIA_trt-samples-for-hackathon-cn/HEAD/cookbook/04-Feature/ProfilingVerbosity/log-main.py.log"
    mem = engine_memory(str(log))
    assert [p["profile"] for p in mem.profiles] == [0, 1]
    acts = [next(c["bytes"] for c in p["categories"] if c["name"] == "activations") for p in mem.profiles]
    assert mem.categories["activations"].bytes == max(acts)
    assert any("3 engine builds" in w for w in mem.warnings)


# --- each TensorRT version's wording --------------------------------------------------------------

TRT86 = """\
[04/07/2024-15:13:18] [TRT] [I] [MemUsageChange] Init CUDA: CPU +2, GPU +0, now: CPU 300, GPU 610 (MiB)
[04/07/2024-15:13:19] [TRT] [I] [MemUsageChange] Init builder kernel library: CPU +1450, GPU +266, now: CPU 1827, GPU 876 (MiB)
[04/07/2024-15:13:34] [TRT] [I] Total Host Persistent Memory: 63184
[04/07/2024-15:13:34] [TRT] [I] Total Device Persistent Memory: 1024
[04/07/2024-15:13:34] [TRT] [I] Total Scratch Memory: 537001984
[04/07/2024-15:13:34] [TRT] [I] [MemUsageStats] Peak memory usage of TRT CPU/GPU memory allocators: CPU 0 MiB, GPU 4 MiB
[04/07/2024-15:13:34] [TRT] [I] [BlockAssignment] Started assigning block shifts. This will take 557 steps to complete.
[04/07/2024-15:13:34] [TRT] [I] [BlockAssignment] Algorithm ShiftNTopDown took 26.1125ms to assign 15 blocks to 557 nodes requiring 3120567296 bytes.
[04/07/2024-15:13:34] [TRT] [I] Total Activation Memory: 3120566272
[04/07/2024-15:13:34] [TRT] [I] Total Weights Memory: 14483464192
[04/07/2024-15:13:34] [TRT] [I] [MemUsageChange] Init cuBLAS/cuBLASLt: CPU +0, GPU +8, now: CPU 2951, GPU 14639 (MiB)
[04/07/2024-15:13:34] [TRT] [I] [MemUsageChange] Init cuDNN: CPU +1, GPU +10, now: CPU 2952, GPU 14649 (MiB)
[04/07/2024-15:13:34] [TRT] [I] Engine generation completed in 16.3055 seconds.
[04/07/2024-15:13:34] [TRT] [I] [MemUsageChange] TensorRT-managed allocation in building engine: CPU +0, GPU +13813, now: CPU 0, GPU 13813 (MiB)
"""


def _log(tmp_path, text: str, name: str = "build.log") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_tensorrt_8_wording(tmp_path):
    mem = engine_memory(str(_log(tmp_path, TRT86)))
    b = {n: mem.categories[n].bytes for n in CATEGORIES}
    assert b["activations"] == 3120566272 and b["weights"] == 14483464192
    assert b["scratch"] == 537001984 and b["host_persistent"] == 63184 and b["device_persistent"] == 1024
    assert b["cuda_context"] == 610 * MIB and b["builder_peak"] == 4 * MIB
    assert b["libraries"] == (266 + 8 + 10) * MIB  # builder kernel library, cuBLAS/cuBLASLt, cuDNN
    assert b["other"] == 13813 * MIB  # "in building engine": no other category holds it
    assert mem.categories["activations"].also[0]["bytes"] == 3120567296  # the block assignment beside it
    assert b["io"] is None and mem.categories["io"].source == "not recorded"


def test_tensorrt_rtx_logs_of_each_release():
    for log in sorted((Path(__file__).parent / "data" / "rtx_logs").glob("*.log")):
        text = log.read_text()
        mem = engine_memory(str(log))
        want = int(re.search(r"Total Activation Memory: (\d+) bytes", text).group(1))
        assert mem.categories["activations"].bytes == want, log.name
        assert mem.categories["weights"].bytes == int(re.search(r"Total Weights Memory: (\d+)", text).group(1))
        assert mem.categories["cuda_context"].bytes is None  # built with no GPU: no CUDA line
        rows = [r for r in mem.layers if r.get("scratch") is not None]
        assert rows and sum(r["scratch"] for r in rows) == int(re.search(r"Max Scratch Memory: (\d+)", text).group(1))


def test_a_real_tensorrt_rtx_build_document(tmp_path):
    pytest.importorskip("tensorrt_rtx")
    import onnx
    from onnx_models import conv_net

    model = tmp_path / "conv.onnx"
    onnx.save(conv_net(batch=1), model)
    doc = tmp_path / "m.build.json"
    engine = tmp_path / "m.engine"
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["build", str(model), "--backend", "rtx", "--target", "sm86", "-o", str(engine),
                     "--json"]) == 0
    doc.write_text(out.getvalue())
    records = json.loads(doc.read_text())["log"]
    mem = engine_memory(f"{doc},{engine}")
    src = mem.categories["activations"].source
    n = int(re.search(r"#log:(\d+):", src).group(1))
    assert records[n - 1]["message"] == f"Total Activation Memory: {mem.categories['activations'].bytes} bytes"
    assert mem.categories["engine_size"].bytes == engine.stat().st_size
    assert mem.categories["activations_naive"].bytes and mem.live["peak_bytes"] > 0


# --- per layer and live ---------------------------------------------------------------------------


def _t(name: str, n: int) -> TensorDesc:
    return TensorDesc(name, [n], "FP32")


def test_live_activations_follow_the_layer_order():
    layers = [Layer(0, "a", inputs=[_t("x", 10)], outputs=[_t("t1", 100)]),
              Layer(1, "b", inputs=[_t("t1", 100)], outputs=[_t("t2", 1000)]),
              Layer(2, "c", inputs=[_t("t2", 1000), _t("x", 10)], outputs=[_t("y", 1)])]
    live = live_memory(layers, ["y"])
    # x lives through c; t1 from a to b; t2 from b to c; y from c on (4 bytes a float)
    assert live["bytes"] == [4 * (10 + 100), 4 * (10 + 100 + 1000), 4 * (10 + 1000 + 1)]
    assert live["peak_index"] == 1 and live["peak_layer"] == "b" and live["peak_bytes"] == 4 * 1110
    assert [a["tensor"] for a in live["alive_at_peak"]] == ["t2", "t1", "x"]


# --- the prediction -------------------------------------------------------------------------------

TWO_PROFILES = """\
[I] [TRT] [MemUsageChange] Init CUDA: CPU +1, GPU +0, now: CPU 32, GPU 400 (MiB)
[V] [TRT] Constructing optimization profile number 0 [1/2].
[I] [TRT] Total Device Persistent Memory: 1000 bytes
[I] [TRT] Total Activation Memory: 3000000 bytes
[V] [TRT] Constructing optimization profile number 1 [2/2].
[I] [TRT] Total Device Persistent Memory: 1000 bytes
[I] [TRT] Total Activation Memory: 9000000 bytes
[I] [TRT] Total Weights Memory: 50000000 bytes
[I] [TRT] Engine generation completed in 1.5 seconds.
"""


def test_prediction_arithmetic(tmp_path):
    mem = engine_memory(str(_log(tmp_path, TWO_PROFILES)))
    k, p, gpu = 3, 2, parse_size("2GiB")
    pred = predict([mem], contexts=k, instances=p, gpu_memory=gpu)
    per_process = 400 * MIB + 50_000_000 + k * (9_000_000 + 1000)
    assert pred["total_bytes"] == p * per_process
    assert pred["fits"] is True and pred["spare_bytes"] == gpu - p * per_process
    assert pred["max_instances"] == gpu // per_process
    fixes = {f["fix"]: f["saves_bytes"] for f in pred["fixes"]}
    assert fixes["shared device memory between contexts"] == p * (k - 1) * 9_000_000
    assert fixes["kON_PROFILE_CHANGE allocation"] == p * k * (9_000_000 - 3_000_000)
    assert fixes["fewer profiles"] == p * k * (9_000_000 - 3_000_000)
    assert fixes["weight-streaming budget"] == p * 50_000_000
    assert pred["assumed"] == []


def test_prediction_that_does_not_fit_names_the_shortfall_and_the_assumed_context(tmp_path):
    text = "\n".join(ln for ln in TWO_PROFILES.splitlines() if "Init CUDA" not in ln)
    mem = engine_memory(str(_log(tmp_path, text)))
    pred = predict([mem, mem], contexts=1, instances=4, gpu_memory=parse_size("1GB"))
    total = 4 * (DEFAULT_CUDA_CONTEXT_BYTES + 2 * (50_000_000 + 9_000_000 + 1000))
    assert pred["total_bytes"] == total and pred["fits"] is False and pred["spare_bytes"] == 10**9 - total
    assert pred["assumed"] == ["CUDA context (per process)"]
    streaming = next(f for f in pred["fixes"] if f["fix"] == "weight-streaming budget")
    assert streaming["saves_bytes"] == min(4 * 2 * 50_000_000, total - 10**9)


def test_memory_rows_side_by_side(tmp_path):
    a = engine_memory(str(_log(tmp_path, TRT86, "a.log")))
    b = engine_memory(str(_log(tmp_path, TWO_PROFILES, "b.log")))
    rows = {r["name"]: r for r in memory_rows(a, b)}
    assert rows["weights"]["change_bytes"] == 50_000_000 - 14483464192
    assert rows["scratch"]["change_bytes"] is None  # b did not record it


def test_sizes():
    assert parse_size("16GB") == 16 * 10**9 and parse_size("16GiB") == 16 << 30 and parse_size("512") == 512
    with pytest.raises(ValueError):
        parse_size("lots")


# --- the command ------------------------------------------------------------------------------------


def test_command_json_and_text(tmp_path, capsys):
    log = _log(tmp_path, TWO_PROFILES)
    assert main(["memory", str(log), "--json", "--contexts", "2", "--gpu-memory", "16GB"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "trtstudio.memory/1"
    assert [c["name"] for c in doc["categories"]] == list(CATEGORIES)
    assert {c["name"]: c["bytes"] for c in doc["categories"]}["activations"] == 9_000_000
    assert [p["profile"] for p in doc["profiles"]] == [0, 1]
    assert doc["prediction"]["contexts"] == 2 and doc["prediction"]["fits"] is True
    assert main(["memory", str(log)]) == 0
    text = capsys.readouterr().out
    assert "activations" in text and "not recorded" in text and "build.log:7: Total Activation Memory" in text


@pytest.mark.parametrize("argv,where", [
    (["memory", "{missing}"], "{missing}"),
    (["memory", "{log}", "--gpu-memory", "huge"], "--gpu-memory"),
    (["memory", "{log}", "--contexts", "0"], "--contexts"),
    (["memory", "{log}", "--instances", "-1"], "--instances"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, where):
    log = _log(tmp_path, TWO_PROFILES)
    fill = {"missing": str(tmp_path / "nothing.log"), "log": str(log)}
    assert main([a.format(**fill) for a in argv]) == 2
    err = capsys.readouterr().err.strip().split("\n")
    assert len(err) == 1 and err[0].startswith(f"error: {where.format(**fill)}: ")


def test_api_plan_memory_is_the_command_document(trt_real, capsys):
    import trtstudio

    folder = trt_real / "NVIDIA_trt-samples-for-hackathon-cn/HEAD/cookbook/07-Tool/trtexec"
    log = folder / "result-04.log"  # --dumpLayerInfo: layers beside the memory lines
    plan = trtstudio.open_engine(log)
    assert main(["memory", str(log), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert plan.memory["schema"] == doc["schema"]
    assert plan.memory["categories"] == doc["categories"]
    assert plan.memory["live"] == doc["live"] and doc["live"]["peak_bytes"] > 0
    assert {c["name"]: c["bytes"] for c in doc["categories"]}["activations"] == 125440


def test_diff_sets_both_engines_memory_side_by_side(trt_real, capsys):
    """``trtstudio diff``'s pairs carry each side's memory by category (what ``trtstudio memory``
    says of each), with the change, in the JSON and the text."""
    from trtstudio.engine.memory import engine_memory

    a100 = trt_real / "NVIDIA_TensorRT_trex/release-11.0/examples/pytorch/resnet/A100"
    base, other = str(a100 / "fp32"), str(a100 / "fp16")
    assert main(["diff", base, other, "--json"]) == 0
    mem = json.loads(capsys.readouterr().out)["diffs"][0]["memory"]
    mb, mo = engine_memory(base), engine_memory(other)
    recorded = [n for n in mb.categories if mb.categories[n].bytes is not None or mo.categories[n].bytes is not None]
    assert sorted(mem) == sorted(recorded) and "weights" in mem
    for name, row in mem.items():
        assert (row["base"], row["other"]) == (mb.categories[name].bytes, mo.categories[name].bytes), name
        assert row["change"] == (None if None in (row["base"], row["other"]) else row["other"] - row["base"])
    assert mem["weights"]["other"] < mem["weights"]["base"]  # FP16 weights take half the bytes
    assert main(["diff", base, other]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("memory: "))
    assert "weights" in line


def test_the_report_has_the_engine_memory_section(trt_real, tmp_path, capsys):
    """A report of an engine whose files record memory carries ``trtstudio memory``'s categories
    (JSON ``engine_memory``) and shows each in the HTML and Markdown with the line it came from."""
    log = trt_real / "NVIDIA_trt-samples-for-hackathon-cn/HEAD/cookbook/04-Feature/ProfilingVerbosity/log-main.py.log"
    assert main(["memory", str(log), "--json"]) == 0
    want = {c["name"]: c["bytes"] for c in json.loads(capsys.readouterr().out)["categories"]}
    for ext in ("json", "html", "md"):
        assert main(["report", str(log), "-o", str(tmp_path / f"r.{ext}")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    assert {c["name"]: c["bytes"] for c in doc["engine_memory"]["categories"]} == want
    html, md = (tmp_path / "r.html").read_text(), (tmp_path / "r.md").read_text()
    assert "Engine memory" in html and "## Engine memory" in md
    assert want["weights"] and "Total Weights Memory: 13100672 bytes" in html and "Total Weights Memory" in md
