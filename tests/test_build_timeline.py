"""Build timelines from build logs (engine.buildtime, trtstudio build-log): every verbose log in the
real fixtures, figures checked against the logs' own lines, and synthetic logs in each TensorRT
version's wording."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from trtstudio.cli import main
from trtstudio.engine.buildtime import UNSTATED, analyse_lines, compare_rows, read_build_log

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "trt-real"
_GEN = re.compile(r"Engine generation completed in ([\d.eE+-]+) seconds")
_PROF = re.compile(r"profiling completed in ([\d.eE+-]+) seconds")


def _verbose_logs() -> list[Path]:
    if not FIXTURES.is_dir():
        return []
    out = []
    for p in sorted(FIXTURES.rglob("*.log")):
        text = p.read_text(errors="replace")
        if "Engine generation completed in" in text and ("[V]" in text or "[VERBOSE]" in text):
            out.append(p)
    return out


VERBOSE = _verbose_logs()


@pytest.mark.skipif(not VERBOSE, reason="real TensorRT fixtures (../shared/fixtures/trt-real) are absent")
@pytest.mark.parametrize("path", VERBOSE, ids=[p.name for p in VERBOSE])
def test_fixture_log_phases_sum_to_its_own_total(path: Path) -> None:
    text = path.read_text(errors="replace")
    doc = read_build_log(path)
    totals = [float(x) for x in _GEN.findall(text)]
    assert doc["total_seconds"] == pytest.approx(sum(totals), rel=1e-6)
    assert [p["total_seconds"] for p in doc["passes"]] == pytest.approx(totals)
    for p in doc["passes"]:  # each pass: within 5 %, or 1 ms for a pass of a few ms (a warm-cache rebuild)
        assert p["stated_seconds"] == pytest.approx(p["total_seconds"], rel=0.05, abs=0.001), p
    stated = sum(r["seconds"] for r in doc["timeline"] if r["phase"] not in (UNSTATED, "parsing"))
    assert stated == pytest.approx(sum(totals), rel=0.05)
    # the timeline is laid end to end, each row starting where the one before ended
    for a, b in zip(doc["timeline"], doc["timeline"][1:], strict=False):
        assert b["start_s"] == pytest.approx(a["start_s"] + a["seconds"], abs=2e-6)
    # cache counts are the lines' own counts; layer build times sum to the runners' stated times
    assert doc["cache"]["hits"] == text.count("got cached result")
    assert doc["cache"]["misses"] == text.count("Timing Runner:")
    assert sum(lay["seconds"] for lay in doc["layers"]) == pytest.approx(sum(float(x) for x in _PROF.findall(text)),
                                                                         rel=1e-5)
    assert len(doc["top_layers"]) == min(20, len(doc["layers"]))
    assert [t["seconds"] for t in doc["top_layers"]] == sorted((t["seconds"] for t in doc["top_layers"]), reverse=True)


@pytest.mark.skipif(not VERBOSE, reason="real TensorRT fixtures are absent")
def test_trtexec_verbose_log_figures(trt_real: Path) -> None:
    path = trt_real / "NVIDIA_trt-samples-for-hackathon-cn/HEAD/cookbook/07-Tool/trtexec/result-02.log"
    text = path.read_text()
    doc = read_build_log(path)
    # three backend strategies, one pass each; the log says which it kept and which it skipped
    assert [p["strategy"] for p in doc["passes"]] == [int(x) for x in re.findall(r"Building graph using backend strategy (\d+)", text)]
    assert [p["kept"] for p in doc["passes"]][1:] == [True, False]
    assert doc["parse_seconds"] == float(re.search(r"Parse time: ([\d.]+)", text).group(1))  # type: ignore[union-attr]
    peak = re.search(r"allocators: CPU (\d+) MiB, GPU (\d+) MiB", text)
    assert peak is not None
    assert doc["memory"]["allocator_cpu_peak_bytes"] == int(peak.group(1)) << 20
    assert doc["memory"]["allocator_gpu_peak_bytes"] == int(peak.group(2)) << 20
    assert doc["cache"]["saved_entries"] == int(re.search(r"Serialized (\d+) timing cache entries", text).group(1))  # type: ignore[union-attr]
    # the costliest layer: its time is the sum of its runners' "profiling completed in" lines
    top = doc["layers"][0]
    own = [float(m.group(1)) for m in re.finditer(re.escape(top["name"]) + r" \(\w+\[0x[0-9a-f]+\]\) profiling completed in ([\d.]+)", text)]
    assert top["seconds"] == pytest.approx(sum(own)) and own
    # kernel compilation holds every "Subgraph compilation completed in" of the log
    subgraph = sum(float(x) for x in re.findall(r"Subgraph compilation completed in ([\d.]+)", text))
    assert doc["phases"]["kernel compilation"] == pytest.approx(subgraph, rel=1e-6)


def _memory_logs() -> list[Path]:
    """Every real log (the fixtures', and the TensorRT-RTX logs of tests/data) with a memory line."""
    here = Path(__file__).parent / "data"
    found = sorted(FIXTURES.rglob("*.log")) if FIXTURES.is_dir() else []
    return [p for p in found + sorted(here.rglob("*.log")) if "[MemUsage" in p.read_text(errors="replace")]


MEMORY_LOGS = _memory_logs()
_NOW = re.compile(r"\[MemUsageChange\] [^:]+: CPU [+-]?\d+, GPU [+-]?\d+, now: CPU (-?\d+), GPU (-?\d+) \(MiB\)")
_STATS = re.compile(r"\[MemUsageStats\] Peak memory usage of TRT CPU/GPU memory allocators: CPU (\d+) MiB, GPU (\d+) MiB")


@pytest.mark.skipif(not MEMORY_LOGS, reason="real TensorRT fixtures are absent")
@pytest.mark.parametrize("path", MEMORY_LOGS, ids=[p.name for p in MEMORY_LOGS])
def test_build_memory_is_the_one_memory_readers_reading(path: Path) -> None:
    """The build-log document's memory is what engine.memory's reader reads of the same log, and each
    figure is the highest its lines state (parsed apart here)."""
    from trtstudio.engine.buildtime import analyse_text
    from trtstudio.engine.memory import read_log

    text = path.read_text(errors="replace")
    m = analyse_text(text, str(path))["memory"]
    peaks = read_log(str(path), text).peaks()
    assert (m["host_peak_bytes"], m["gpu_peak_bytes"], m["allocator_cpu_peak_bytes"], m["allocator_gpu_peak_bytes"]) == (
        peaks["cpu_now"], peaks["gpu_now"], peaks["allocator_cpu"], peaks["allocator_gpu"])
    now = [(int(c), int(g)) for c, g in _NOW.findall(text)]
    stats = [(int(c), int(g)) for c, g in _STATS.findall(text)]
    assert now or stats
    assert m["host_peak_bytes"] == (max(c for c, _ in now) << 20 if now else None)
    assert m["gpu_peak_bytes"] == (max(g for _, g in now) << 20 if now else None)
    assert m["allocator_cpu_peak_bytes"] == (max(c for c, _ in stats) << 20 if stats else None)
    assert m["allocator_gpu_peak_bytes"] == (max(g for _, g in stats) << 20 if stats else None)


def test_one_module_holds_the_memory_line_patterns() -> None:
    """No second reader of the [MemUsageChange]/[MemUsageStats] lines: only engine/memory/log.py compiles
    a pattern for them (read as text: a pattern added anywhere else in the package fails here)."""
    import ast

    import trtstudio

    root = Path(trtstudio.__file__).parent
    holders = set()
    for f in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and ast.unparse(node.func) in ("re.compile", "compile")
                    and "MemUsage" in ast.unparse(node)):
                holders.add(f.relative_to(root).as_posix())
    assert holders == {"engine/memory/log.py"}


@pytest.mark.skipif(not VERBOSE, reason="real TensorRT fixtures are absent")
def test_build_log_cli_json_and_text(trt_real: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = trt_real / "NVIDIA_trt-samples-for-hackathon-cn/HEAD/cookbook/04-Feature/ProfilingVerbosity/log-main.py.log"
    assert main(["build-log", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "trtstudio.buildlog/1"
    assert set(doc) >= {"timeline", "total_seconds", "layers", "tactics", "cache", "memory"}
    assert set(doc["memory"]) >= {"host_peak_bytes", "gpu_peak_bytes"}
    assert all(set(r) >= {"phase", "start_s", "seconds", "share"} for r in doc["timeline"])
    assert main(["build-log", str(path)]) == 0
    out = capsys.readouterr().out
    assert "tactic timing" in out and f"{doc['cache']['hits']} hits" in out and doc["layers"][0]["name"] in out


def test_build_log_refuses_what_is_not_a_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "notes.log"
    bad.write_text("hello\nworld\n")
    assert main(["build-log", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {bad}: not a TensorRT build log")


# Synthetic logs: the wording of each TensorRT generation, figures asserted from the lines themselves.
TRT86 = """\
[TRT] [V] Graph construction completed in 0.25 seconds.
[TRT] [V] Graph optimization time: 0.5 seconds.
[TRT] [V] =============== Computing costs for conv1 + relu1
[TRT] [V] *************** Autotuning format combination: Float(1,2,3,4) -> Float(5,6,7,8) ***************
[TRT] [V] --------------- Timing Runner: conv1 + relu1 (CaskConvolution)
[TRT] [V] Tactic Name: sm80_a Tactic: 0x00000000000001a8 Time: 0.020
[TRT] [V] Tactic Name: sm80_b Tactic: 0x00000000000001a9 Time: 0.010
[TRT] [V] Fastest Tactic: 0x00000000000001a9 Time: 0.010
[TRT] [V] --------------- Timing Runner: conv1 + relu1 (CudnnConvolution)
[TRT] [V] Tactic: 0x0000000000000001 Time: 0.030
[TRT] [V] Fastest Tactic: 0x0000000000000001 Time: 0.030
[TRT] [V] >>>>>>>>>>>>>>> Chose Runner Type: CaskConvolution Tactic: 0x00000000000001a9
[TRT] [V] conv2 [Float(1,2,3,4) -> Float(5,6,7,8)] got cached result: CaskConvolution, tactic 0x01, 0.04 ms
[TRT] [V] Formats and tactics selection completed in 3.0 seconds.
[TRT] [I] Engine generation completed in 4.0 seconds.
[TRT] [I] [MemUsageStats] Peak memory usage of TRT CPU/GPU memory allocators: CPU 5 MiB, GPU 120 MiB
"""

TRT10 = """\
[07/07/2026-02:11:00] [V] [TRT] Graph optimization time: 0.1 seconds.
[07/07/2026-02:11:00] [V] [TRT] --------------- Timing Runner: {ForeignNode[a...b]} (Myelin[0x80000023])
[07/07/2026-02:11:03] [V] [TRT] Subgraph compilation completed in 2.5 seconds.
[07/07/2026-02:11:03] [V] [TRT] {ForeignNode[a...b]} (Myelin[0x80000023]) profiling completed in 2.6 seconds. Fastest Tactic: 0x0000000000000000 Time: 0.05
[07/07/2026-02:11:03] [V] [TRT] >>>>>>>>>>>>>>> Chose Runner Type: Myelin Tactic: 0x0000000000000000
[07/07/2026-02:11:03] [V] [TRT] Formats and tactics selection completed in 3.0 seconds.
[07/07/2026-02:11:03] [V] [TRT] [MS] Multi stream splitting completed in 0.2 seconds.
[07/07/2026-02:11:03] [I] [TRT] [BlockAssignment] Algorithm ShiftNTopDown took 100ms to assign 1 blocks to 1 nodes requiring 4 bytes.
[07/07/2026-02:11:04] [I] [TRT] Engine generation completed in 3.5 seconds.
"""

RTX17 = """\
[TRT] [V] Graph construction completed in 0.03 seconds.
[TRT] [V] Graph optimization time: 0.002 seconds.
[TRT] [I] Local timing cache in use. Profiling results in this builder pass will not be stored.
[TRT] [V] --------------- Timing Runner: {ForeignNode[w...s]} (Myelin[0x80000023])
[TRT] [V] >>>>>>>>>>>>>>> Chose Runner Type: Myelin Tactic: 0x0000000000000000
[TRT] [V] Formats and tactics selection completed in 0.0015 seconds.
[TRT] [V] Subgraph compilation completed in 0.22 seconds.
[TRT] [I] Engine generation completed in 0.29 seconds.
"""


def test_trt86_wording() -> None:
    doc = analyse_lines(TRT86.splitlines())
    assert doc["total_seconds"] == 4.0
    assert doc["phases"]["graph construction"] == 0.25 and doc["phases"]["tactic timing"] == 3.0
    assert doc["phases"][UNSTATED] == pytest.approx(4.0 - 0.25 - 0.5 - 3.0)
    assert doc["cache"] == {"hits": 1, "misses": 2}
    lay = next(x for x in doc["layers"] if x["name"] == "conv1 + relu1")
    assert lay["tactics_tried"] == 3 and lay["chosen"] == {"runner": "CaskConvolution", "tactic": "0x00000000000001a9"}
    assert lay["fastest"]["ms"] == 0.010 and lay["runner_up"]["ms"] == 0.020
    assert lay["speedup_over_runner_up"] == pytest.approx(2.0)
    assert lay["seconds"] == 0  # 8.x states no per-runner build time
    assert doc["memory"]["allocator_gpu_peak_bytes"] == 120 << 20


def test_trt10_wording_kernel_compilation_inside_tactic_timing() -> None:
    doc = analyse_lines(TRT10.splitlines())
    assert doc["phases"]["kernel compilation"] == 2.5
    assert doc["phases"]["tactic timing"] == pytest.approx(0.5)  # 3.0 stated, 2.5 of it compiling
    assert doc["phases"]["multi-stream splitting"] == 0.2 and doc["phases"]["memory planning"] == pytest.approx(0.1)
    assert doc["layers"][0]["seconds"] == 2.6
    assert doc["global_settings"][0]["saving_s"] == 0.2
    # stated phases (0.1 + 3.0 + 0.2 + 0.1) over the pass's 3.5 s: the rest is one row of its own
    assert doc["phases"][UNSTATED] == pytest.approx(0.1)


def test_rtx_wording_compilation_after_tactic_selection() -> None:
    doc = analyse_lines(RTX17.splitlines())
    assert doc["phases"]["kernel compilation"] == 0.22
    assert doc["phases"]["tactic timing"] == 0.0015
    assert doc["cache"]["kind"] == "local" and doc["cache"]["misses"] == 1


def test_compare_rows_side_by_side() -> None:
    a, b = analyse_lines(TRT86.splitlines()), analyse_lines(TRT10.splitlines())
    rows = compare_rows(a, b)
    by = {r["phase"]: r for r in rows}
    assert by["total"]["a_s"] == 4.0 and by["total"]["b_s"] == 3.5 and by["total"]["delta_s"] == pytest.approx(-0.5)
    assert by["graph construction"]["b_s"] is None and by["kernel compilation"]["a_s"] is None
    assert by["graph optimization"]["delta_s"] == pytest.approx(0.1 - 0.5)
    assert compare_rows(a, a)[-1]["delta_s"] == 0


def test_hundred_thousand_lines_read(tmp_path: Path) -> None:
    block = TRT10.splitlines()[1:5]
    lines = [*TRT10.splitlines()[:1], *(block * 25_000), *TRT10.splitlines()[5:]]
    doc = analyse_lines(lines)
    assert doc["lines"] == len(lines) and doc["cache"]["misses"] == 25_000


@pytest.mark.skipif(not VERBOSE, reason="real TensorRT fixtures are absent")
def test_diff_of_two_build_logs_shows_build_time_by_phase(trt_real: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = trt_real / "NVIDIA_trt-samples-for-hackathon-cn/HEAD/cookbook/07-Tool/trtexec/result-02.log"
    other = trt_real / "NVIDIA_trt-samples-for-hackathon-cn/HEAD/cookbook/04-Feature/ProfilingVerbosity/log-main.py.log"
    assert main(["diff", str(base), str(other), "--json"]) in (0, 1)
    doc = json.loads(capsys.readouterr().out)
    rows = {r["phase"]: r for r in doc["diffs"][0]["build_time"]}
    assert rows["total"]["a_s"] == read_build_log(base)["total_seconds"]
    assert rows["total"]["b_s"] == read_build_log(other)["total_seconds"]
    assert rows["kernel compilation"]["delta_s"] == pytest.approx(rows["kernel compilation"]["b_s"] - rows["kernel compilation"]["a_s"])
    main(["diff", str(base), str(other)])
    assert "build time by phase" in capsys.readouterr().out


class FakeTrtForTimingCache:
    """Test double of full TensorRT's editable timing cache (not installed here): the documented
    ``create_timing_cache(data)`` -> ITimingCache with ``queryKeys()`` and ``query(key)`` ->
    ``TimingCacheValue(tacticHash, timingMSec)``; each line of the file is ``key tactic ms``."""

    __name__ = "tensorrt"

    class Logger:
        ERROR = 0

        def __init__(self, level: int) -> None:
            pass

    class Builder:
        def __init__(self, logger: object) -> None:
            pass

        def create_builder_config(self) -> object:
            class Config:
                def create_timing_cache(self, data: bytes) -> object:
                    rows = [ln.split() for ln in data.decode().splitlines() if ln.strip()]

                    class Value:
                        def __init__(self, tactic: str, ms: str) -> None:
                            self.tacticHash, self.timingMSec = int(tactic, 16), float(ms)

                    class Cache:
                        def queryKeys(self) -> list[str]:  # noqa: N802 - TensorRT's name
                            return [r[0] for r in rows]

                        def query(self, key: str) -> Value:
                            r = next(r for r in rows if r[0] == key)
                            return Value(r[1], r[2])

                    return Cache()

            return Config()


def test_timing_cache_listing_and_diff_with_a_test_double(tmp_path: Path) -> None:
    from trtstudio.engine.buildtime import diff_timing_caches, timing_cache_entries

    a, b = tmp_path / "a.cache", tmp_path / "b.cache"
    a.write_text("0xk1 1a 0.5\n0xk2 2b 0.25\n")
    b.write_text("0xk1 1a 0.5\n0xk2 3c 0.2\n0xk3 4d 1.0\n")
    ea, eb = timing_cache_entries(a, FakeTrtForTimingCache), timing_cache_entries(b, FakeTrtForTimingCache)
    assert ea["entries"]["0xk2"] == {"tactic": "0x000000000000002b", "ms": 0.25}
    d = diff_timing_caches(ea, eb)
    assert d["same"] == 1 and d["only_b"] == ["0xk3"] and [c["key"] for c in d["changed_tactic"]] == ["0xk2"]
    FakeTrtForTimingCache.__name__ = "tensorrt_rtx"
    try:
        with pytest.raises(Exception, match="keeps no timing cache"):
            timing_cache_entries(a, FakeTrtForTimingCache)
    finally:
        FakeTrtForTimingCache.__name__ = "tensorrt"
