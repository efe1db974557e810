"""`trtstudio triton-search` on a real Triton Inference Server (nvidia-pytriton's tritonserver 2.51,
in the venv ``tests/triton_server.py`` builds once) serving third-party ONNX models through
python-backend models running ONNX Runtime: quick and exhaustive searches, the answer's invariants,
the written entry loading on a fresh server, a server without model control refused, a server
killed mid-search, a stopped search leaving nothing loaded, sessions, reports and compare.
Sweeps are short (two concurrency steps of windows of 0.3 s) and spaces small: the machine has 2 cores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.triton, pytest.mark.timeout(900)]
pytest.importorskip("tritonclient.http")
pytest.importorskip("tritonclient.grpc")

from triton_server import Unavailable, venv_python  # noqa: E402

from trtstudio.errors import InputError  # noqa: E402
from trtstudio.triton.launch import LaunchedServer  # noqa: E402
from trtstudio.triton.search import (  # noqa: E402
    Constraints,
    Search,
    SearchRequest,
    SearchSettings,
    parse_budget,
    parse_bytes,
)
from trtstudio.triton.variants import ModelSource, Space, Variant, parse_pbtxt, to_pbtxt  # noqa: E402


def _site(package: str, rel: str) -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec(package.split(".")[0])
    if spec is None or not spec.submodule_search_locations:
        return None
    p = Path(list(spec.submodule_search_locations)[0]) / rel
    return p if p.exists() else None


CLS = _site("rapidocr_onnxruntime", "models/ch_ppocr_mobile_v2.0_cls_infer.onnx")  # PaddleOCR's direction classifier
SQUEEZE = _site("onnx", "backend/test/data/light/light_squeezenet.onnx")  # onnx's light SqueezeNet (batch fixed at 1)
SMALL = Space(instances=[1, 2], max_batch_sizes=[4], queue_delays_us=[None, 100])


def _python() -> Path:
    try:
        return venv_python()
    except Unavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def server() -> Any:
    with LaunchedServer(python=_python()) as s:
        yield s


def _cls() -> ModelSource:
    if CLS is None:
        pytest.skip("rapidocr_onnxruntime (PaddleOCR's classifier) not installed")
    return ModelSource.from_onnx(CLS, {"x": (1, 3, 48, 192)})


def _settings(mode: str, **kw: Any) -> SearchSettings:
    return SearchSettings(concurrency=[1, 4], window_s=0.3, max_windows=3, mode=mode, space=kw.pop("space", SMALL), **kw)


def _ours_loaded(server: LaunchedServer) -> list[str]:
    import tritonclient.http as http

    doc = http.InferenceServerClient(server.url).get_inference_statistics("")
    return [m["name"] for m in doc.get("model_stats", []) if "__ts" in m["name"]]


def _check_answer(doc: dict[str, Any]) -> None:
    """What every search document holds, whatever was measured."""
    assert doc["schema"] == "trtstudio.tritonsearch/1"
    keys = [v["key"] for v in doc["variants"]]
    assert len(keys) == len(set(keys)) == doc["measured"]
    assert sum(v["role"] == "default" for v in doc["variants"]) == 1
    names = [v["name"] for v in doc["variants"]]
    assert all("__ts" in n and n != doc["model"]["name"] for n in names)  # never the served model's name
    budget, pk = doc["constraints"]["latency_ms"], f"p{doc['constraints']['percentile']}"
    pts = {v["key"]: v["point"] for v in doc["variants"] if v["point"]}
    for k in doc["front"]:  # no measured point beats a front point
        a = pts[k]
        assert not any(b["throughput"] > a["throughput"] and b[pk] < a[pk] for b in pts.values())
    for v in doc["variants"]:
        for p in v["steps"]:
            if p["throughput_ci"]:
                assert p["throughput_ci"][0] <= p["throughput"] <= p["throughput_ci"][1] + 1e-9
        if v["key"] != doc["winner"]:
            assert v["lost"] in ("queue", "compute", "memory", "rejected", "error") and v["lost_text"]
    if doc["winner"]:
        win = next(v for v in doc["variants"] if v["key"] == doc["winner"])
        best = doc["best"][0]
        assert best["variant"] == doc["winner"] and best["throughput"] == max(
            p["throughput"] for v in doc["variants"] for p in v["steps"]
            if p["requests"] and not p["error"] and (budget is None or p[pk] <= budget))
        assert win["point"][pk] <= budget if budget else True
        assert doc["headline"].startswith(win["describe"])


def test_variants_and_configs_offline() -> None:
    with pytest.raises(ValueError, match="preferred batch sizes"):
        Variant(1, 4, 100, (8,))  # model_analyzer#957's failure cannot be written
    space = Space([1, 2], [1, 4, 8], [None, 0, 500], preferred=True)
    grid = space.grid()
    assert len({v.key for v in grid}) == len(grid)
    assert all(p <= v.max_batch_size for v in grid for p in v.preferred)
    assert any(v.preferred for v in grid) and any(v.queue_delay_us is None for v in grid)
    src = _cls()
    cfg = Variant(2, 8, 250, (4, 8), "KIND_CPU").apply(src.config, "x__ts")
    again = parse_pbtxt(to_pbtxt(cfg))
    assert Variant.of_config(again) == Variant(2, 8, 250, (4, 8), "KIND_CPU")
    assert [i["dims"] for i in again["input"]] == [["3", "48", "192"]]
    assert parse_budget("p95=5ms") == (95, 5.0) and parse_budget("0.02s") == (99, 20.0)
    assert parse_bytes("512MiB") == 512 * 2**20
    with pytest.raises(InputError, match="--shapes"):
        ModelSource.from_onnx(CLS)  # H and W are dynamic
    if SQUEEZE is not None:
        sq = ModelSource.from_onnx(SQUEEZE)  # batch fixed at 1 in the ONNX: Triton batches, model.py loops
        assert sq.config["max_batch_size"] == 8 and sq.config["input"][0]["dims"] == [3, 224, 224]


def test_tensorrt_plan_profiles_and_gpu_lists_offline(tmp_path: Path) -> None:
    """A TensorRT plan's optimization profile and the GPUs its instances go on are variant
    dimensions: written into instance_group as Triton's ModelConfig reads them (protobuf), keyed
    apart, walked by the grid; refused in one line where they cannot apply."""
    entry = tmp_path / "detector"
    (entry / "1").mkdir(parents=True)
    (entry / "1" / "model.plan").write_bytes(b"\0plan")  # never loaded here: the configs are checked
    (entry / "config.pbtxt").write_text('platform: "tensorrt_plan"\nmax_batch_size: 8\n'
                                        'instance_group [{ count: 1 kind: KIND_GPU profile: ["0"] }]\n')
    src = ModelSource.from_entry(entry)
    default = Variant.of_config(src.config)
    assert default.profile == ("0",) and default.kind == "KIND_GPU"
    v = Variant(2, 8, 100, (), "KIND_GPU", ("1",), (0, 1))
    again = parse_pbtxt(to_pbtxt(v.apply(src.config, "detector__ts_x")))
    group = again["instance_group"][0]
    assert group["profile"] == ["1"] and [int(g) for g in group["gpus"]] == [0, 1] and int(group["count"]) == 2
    assert Variant.of_config(again) == v and Variant.from_json(v.to_json()) == v
    assert "optimization profile 1" in v.describe() and "GPUs 0, 1" in v.describe()
    kept = parse_pbtxt(to_pbtxt(Variant(1, 8, None, (), "KIND_GPU").apply(src.config, "d")))  # (): the model's own
    assert kept["instance_group"][0]["profile"] == ["0"]
    grid = Space([1], [8], [None], profiles=[("0",), ("1",)], gpus=(0,)).grid()
    assert sorted(g.key for g in grid) == ["i1_b8_qoff_g0_prof0", "i1_b8_qoff_g0_prof1"]
    with pytest.raises(ValueError, match="KIND_GPU"):
        Variant(1, 8, None, (), "KIND_CPU", (), (0,))
    for args, flag in ((["--profiles", "0,1"], "--profiles"), (["--gpus", "0", "--kind", "cpu"], "--gpus")):
        if CLS is None:
            break
        r = subprocess.run([sys.executable, "-m", "trtstudio", "triton-search", str(CLS), "--shapes", "x:1x3x48x192",
                            "--launch", *args], capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith(f"error: {flag}: "), r.stderr
    r = subprocess.run([sys.executable, "-m", "trtstudio", "triton-search", str(entry), "--launch", "--profiles", "x"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("error: --profiles: ") and "whole number" in r.stderr


def _entry(key: str, steps: list[tuple[int, float, float, float, float]], mem: float | None = None) -> dict[str, Any]:
    """A variant entry as Search.measure keeps it: steps of (concurrency, infer/s, p99 ms, queue µs, compute µs)."""
    return {"key": key, "role": "variant", "error": None, "gpu_memory_bytes": mem,
            "steps": [{"concurrency": c, "requests": 100, "throughput": tp, "p99": p99, "queue_us": q, "compute_us": cu,
                       "error": None} for c, tp, p99, q, cu in steps]}


def test_constraints_front_and_why_lost_offline() -> None:
    from trtstudio.triton.search import best_point, pareto, why_lost

    c = Constraints(latency_ms=20.0, gpu_memory_bytes=2 * 2**30, min_throughput=150.0)
    fast_big = _entry("fast_big", [(1, 300.0, 5.0, 100, 900), (4, 900.0, 15.0, 400, 1000)], mem=3 * 2**30)
    queued = _entry("queued", [(1, 200.0, 8.0, 300, 700), (4, 400.0, 35.0, 9000, 800)], mem=2**30)
    slow = _entry("slow", [(1, 120.0, 12.0, 50, 8000)], mem=2**30)
    assert best_point(fast_big, c) is None  # over the memory limit
    assert best_point(queued, c)["concurrency"] == 1  # concurrency 4 breaks p99
    assert best_point(slow, c) is None  # under the minimum throughput
    assert best_point(slow, Constraints(latency_ms=20.0))["throughput"] == 120.0
    assert why_lost(fast_big, queued, c)[0] == "memory"
    assert why_lost(slow, queued, c)[0] == "compute"  # 8 ms compute against 50 µs queueing
    assert why_lost(queued, fast_big, Constraints(latency_ms=20.0))[0] == "queue"  # its next step waited 9 ms
    pts = [("a", 900.0, 15.0, 3e9), ("b", 400.0, 8.0, 1e9), ("c", 300.0, 9.0, 1e9), ("d", 300.0, 9.0, 5e8)]
    assert pareto(pts) == ["a", "b", "d"]  # c is beaten by b (more throughput, less latency); d by none (least memory)


def test_exhaustive_then_quick_on_a_real_server(server: LaunchedServer, tmp_path: Path) -> None:
    src = _cls()
    seen: list[str] = []
    ex = Search(SearchRequest(src, url=server.url, constraints=Constraints(latency_ms=1000.0),
                              settings=_settings("exhaustive")), on_variant=lambda e: seen.append(e["key"])).run()
    _check_answer(ex)
    grid = {v.key for v in SMALL.grid("KIND_CPU")}
    assert grid <= {v["key"] for v in ex["variants"]}  # every variant of the space measured
    assert all(len(v["steps"]) == 2 for v in ex["variants"])  # at every concurrency
    assert seen == [v["key"] for v in ex["variants"]]  # live, in order
    assert ex["winner"] and ex["best"][0]["gain"]["verdict"] in ("better", "inconclusive", "worse")
    assert _ours_loaded(server) == []
    # quick, with a budget nothing meets: every variant stops after its first step
    q = Search(SearchRequest(src, url=server.url, constraints=Constraints(latency_ms=0.01),
                             settings=_settings("quick"))).run()
    _check_answer(q)
    assert q["winner"] is None and q["headline"].startswith("No variant")
    assert all(len(v["steps"]) == 1 and v["early_stop"] for v in q["variants"])
    assert q["measured"] <= ex["measured"]
    assert _ours_loaded(server) == []
    # sessions, reports, compare
    from trtstudio.triton.search_report import front_svg, load_search, write_search, write_search_report

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_search(ex, a)
    write_search(q, b)
    assert load_search(a)["winner"] == ex["winner"]
    page = write_search_report(load_search(a), tmp_path / "r.html").read_text()
    assert "<svg" in page and ex["headline"].split(":")[0] in page.replace("&#x27;", "'")
    assert front_svg(ex).count("<circle") == sum(1 for v in ex["variants"] if v["point"])
    r = subprocess.run([sys.executable, "-m", "trtstudio", "compare", str(a), str(b), "--json"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    comp = json.loads(r.stdout)
    assert comp["schema"] == "trtstudio.tritonsearch-comparison/1"
    assert [s["winner"] for s in comp["searches"]] == [ex["winner"], None]


def test_cli_launch_writes_a_winner_that_loads(tmp_path: Path) -> None:
    if SQUEEZE is None:
        pytest.skip("onnx's test data not installed")
    out = tmp_path / "repo"
    r = subprocess.run([sys.executable, "-m", "trtstudio", "triton-search", str(SQUEEZE), "--launch", "--python",
                        str(_python()), "--latency-budget", "p99=2000ms", "--concurrency", "1,2", "--instances", "1,2",
                        "--max-batch", "4", "--queue-delay", "off,100", "--window", "0.3", "--max-windows", "3",
                        "--out", str(out), "--json"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    _check_answer(doc)
    assert doc["server"]["launched"] and doc["server"]["url"].startswith("127.0.0.1:")
    conf = doc["out"]["confirm"]
    assert conf["loaded"] and not conf.get("error") and conf["throughput"] > 0 and conf["within_budget"]
    written = parse_pbtxt((out / "light_squeezenet" / "config.pbtxt").read_text())
    win = next(v for v in doc["variants"] if v["key"] == doc["winner"])
    assert Variant.of_config(written) == Variant.from_json(win["variant"])
    assert not list(out.rglob("__pycache__"))
    # the written entry loads on a server of its own, by name: Triton parses config.pbtxt itself
    import tritonclient.http as http

    with LaunchedServer(repository=out, python=_python()) as s:
        client = http.InferenceServerClient(s.url)
        client.load_model("light_squeezenet")
        assert client.is_model_ready("light_squeezenet")


def test_server_without_model_control_is_refused(tmp_path: Path) -> None:
    src = _cls()
    with LaunchedServer(python=_python(), control="none") as s:
        r = subprocess.run([sys.executable, "-m", "trtstudio", "triton-search", str(CLS), "--shapes", "x:1x3x48x192",
                            "--server", s.url], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "--model-control-mode=explicit" in errors[0]
    assert src.name  # the model itself was fine


def test_restricted_repository_api_is_refused_naming_the_flag(tmp_path: Path) -> None:
    from triton_server import Server

    try:
        pytriton = Server(tmp_path, security="pytriton")  # PyTriton restricts the repository API to its token
    except Unavailable as exc:
        pytest.skip(str(exc))
    try:
        r = subprocess.run([sys.executable, "-m", "trtstudio", "triton-search", str(CLS), "--shapes", "x:1x3x48x192",
                            "--server", f"127.0.0.1:{pytriton.http}"], capture_output=True, text=True, timeout=120)
    finally:
        pytriton.stop()
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert r.returncode == 2 and len(errors) == 1 and "--http-restricted-api" in errors[0] and "--header" in errors[0]


def test_server_killed_mid_search_exits_1_with_what_was_measured(tmp_path: Path) -> None:
    _cls()  # skips where the model is not installed
    s = LaunchedServer(python=_python())
    try:
        import tritonclient.http as http

        client = http.InferenceServerClient(s.url)
        stop = threading.Event()

        def killer() -> None:  # once a second variant is loaded, the server dies
            names: set[str] = set()
            while not stop.is_set():
                try:
                    names |= {m["name"] for m in client.get_inference_statistics("").get("model_stats", [])
                              if "__ts" in m["name"]}
                except Exception:  # noqa: BLE001
                    return
                if len(names) >= 2:
                    os.killpg(s.proc.pid, signal.SIGKILL)
                    return
                time.sleep(0.05)

        t = threading.Thread(target=killer, daemon=True)
        t.start()
        r = subprocess.run([sys.executable, "-m", "trtstudio", "triton-search", str(CLS), "--shapes", "x:1x3x48x192",
                            "--server", s.url, "--exhaustive", "--concurrency", "1,4", "--instances", "1,2",
                            "--max-batch", "4", "--queue-delay", "off,100", "--window", "0.3", "--max-windows", "3",
                            "--json"], capture_output=True, text=True, timeout=300)
        stop.set()
        t.join(10)
    finally:
        s.cleanup()
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["error"] and "stopped answering" in doc["error"]
    assert doc["variants"][0]["role"] == "default" and doc["variants"][0]["steps"]  # kept
    assert any(ln.startswith("error:") for ln in r.stderr.splitlines())


def test_stopped_search_unloads_everything(server: LaunchedServer) -> None:
    src = _cls()
    done: list[str] = []
    doc = Search(SearchRequest(src, url=server.url, settings=_settings("exhaustive")),
                 should_stop=lambda: len(done) >= 2, on_variant=lambda e: done.append(e["key"])).run()
    assert doc["stopped"] and doc["measured"] == 2 and not doc["error"]
    assert _ours_loaded(server) == []


def test_ctrl_c_mid_search_exits_130_keeps_what_was_measured_and_leaves_nothing_loaded(server: LaunchedServer) -> None:
    """Ctrl+C as a user presses it (SIGINT to the process) while a variant is being swept: the
    search stops, unloads what it loaded, prints what it measured and exits 130."""
    _cls()
    import tritonclient.http as http

    client = http.InferenceServerClient(server.url)
    proc = subprocess.Popen([sys.executable, "-m", "trtstudio", "triton-search", str(CLS), "--shapes", "x:1x3x48x192",
                             "--server", server.url, "--exhaustive", "--concurrency", "1,4", "--instances", "1,2",
                             "--max-batch", "4", "--queue-delay", "off,100", "--window", "0.3", "--max-windows", "3",
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        seen: set[str] = set()
        while time.monotonic() < deadline and len(seen) < 2:  # the default measured, a second variant loaded
            seen |= {m["name"] for m in client.get_inference_statistics("").get("model_stats", []) if "__ts" in m["name"]}
            time.sleep(0.05)
        assert len(seen) >= 2, "the search never loaded a second variant"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "stopping: unloading what the search loaded" in err
    doc = json.loads(out)
    assert doc["stopped"] and doc["variants"][0]["role"] == "default" and doc["variants"][0]["steps"]
    assert 1 <= doc["measured"] < 5  # stopped before the whole space (default + 4 variants)
    assert _ours_loaded(server) == []
    assert not any(ln.startswith("Traceback") for ln in err.splitlines())
