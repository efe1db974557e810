"""``profile --shape-mix``: mixes from CSV, JSON and folders of .npy/.npz, the seeded order, buffers
kept per shape (one allocation per shape, the same arrays on every later request), weighted
statistics, padding to a recommended profile's opt, the recommended profiles themselves (and a real
TensorRT-RTX build with them), on third-party models with dynamic inputs (NudeNet's YOLOv8n,
Magika's byte classifier with a dynamic batch)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from test_precision_recipe import _package_file  # a model shipped by an installed package, not imported
from test_sweep import FAST, SPECS, _nudenet, _tied_model

from trtstudio.backends.base import open_backend
from trtstudio.cli import main
from trtstudio.errors import InputError
from trtstudio.profiling.profiles import ShapePoint, build_profiles, recommend
from trtstudio.profiling.session import ProfileRequest
from trtstudio.profiling.shape_mix import (
    InputSlots,
    MixEntry,
    load_mix,
    pad_targets,
    replay,
    request_order,
    run_mix,
    split_counts,
    weighted_quantile,
)

HAS_RTX = importlib.util.find_spec("tensorrt_rtx") is not None
BASE = {"input_ids": (1, 128), "attention_mask": (1, 128), "scale": (1,)}


def test_csv_mix_merges_equal_shapes_and_ties_dims(tmp_path: Path) -> None:
    f = tmp_path / "mix.csv"
    f.write_text("input_ids,count\n1x32,5\n2x64,3\n1x32,2\n4x16,0\n")
    entries = load_mix(f, SPECS, BASE)
    assert [(e.shapes["input_ids"], e.shapes["attention_mask"], e.count) for e in entries] == [
        ((1, 32), (1, 32), 7), ((2, 64), (2, 64), 3)]
    assert entries[0].shapes["scale"] == (1,)


def test_json_mix_takes_text_or_lists(tmp_path: Path) -> None:
    f = tmp_path / "mix.json"
    f.write_text(json.dumps([{"shapes": {"input_ids": "1x8"}, "count": 4},
                             {"shapes": {"input_ids": [2, 8], "attention_mask": [2, 8]}, "count": 1}]))
    entries = load_mix(f, SPECS, BASE)
    assert [(e.shapes["attention_mask"], e.count) for e in entries] == [((1, 8), 4), ((2, 8), 1)]


def test_folder_mix_counts_files_per_shape_and_keeps_data(tmp_path: Path) -> None:
    d = tmp_path / "reqs"
    d.mkdir()
    for k, seq in enumerate([8, 8, 16]):
        a = np.full((1, seq), k, dtype=np.float32)
        np.savez(d / f"r{k}.npz", input_ids=a, attention_mask=a, scale=np.ones(1, np.float32))
    entries = load_mix(d, SPECS, BASE)
    assert sorted((e.shapes["input_ids"], e.count) for e in entries) == [((1, 8), 2), ((1, 16), 1)]
    first = next(e for e in entries if e.shapes["input_ids"] == (1, 8))
    assert first.data is not None and float(first.data["input_ids"][0, 0]) == 0.0
    np.save(d / "single.npy", np.zeros((1, 8), np.float32))
    with pytest.raises(InputError, match="use .npz"):
        load_mix(d, SPECS, BASE)


@pytest.mark.parametrize(("text", "words"), [
    ("input_ids,cnt\n1x8,1\n", "no 'count' column"),
    ("nope,count\n1x8,1\n", "not an input of the model"),
    ("input_ids,count\n1x8,many\n", "not a whole number"),
    ("input_ids,count\n1x8,0\n", "no request"),
    ("input_ids,count\n1xq,1\n", "not a shape"),
])
def test_bad_mix_files_name_the_file(tmp_path: Path, text: str, words: str) -> None:
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(InputError) as err:
        load_mix(f, SPECS, BASE)
    assert err.value.path == str(f) and words in err.value.message


def test_order_is_seeded_and_keeps_the_counts() -> None:
    entries = [MixEntry({"x": (1,)}, 30), MixEntry({"x": (2,)}, 5), MixEntry({"x": (3,)}, 1)]
    a, b, c = request_order(entries, 7), request_order(entries, 7), request_order(entries, 8)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert np.bincount(a).tolist() == [30, 5, 1] and not np.array_equal(a, np.sort(a))


def test_weighted_quantile_equals_the_repeated_samples() -> None:
    rng = np.random.default_rng(1)
    v = rng.exponential(size=200)
    w = rng.integers(1, 5, size=200).astype(float)
    rep = np.repeat(v, w.astype(int))
    for q in (0.5, 0.9, 0.99):
        assert weighted_quantile(v, w, q) == pytest.approx(np.sort(rep)[int(np.ceil(q * rep.size)) - 1])


def test_buffers_kept_per_shape_are_reused_without_allocation() -> None:
    model = _nudenet()
    backend = open_backend("ort", str(model), threads=1)
    try:
        entries = [MixEntry({"images": (1, 3, 64, 64)}, 12), MixEntry({"images": (1, 3, 96, 96)}, 8),
                   MixEntry({"images": (2, 3, 64, 64)}, 5)]
        order = request_order(entries, 0)
        seen: dict[int, set[int]] = {}
        real_infer = backend.infer_once

        def infer() -> object:  # the array each request actually runs on
            seen.setdefault(entries_index(backend.shapes), set()).add(id(backend._feeds["images"]))
            return real_infer()

        def entries_index(shapes: dict) -> int:
            return next(i for i, e in enumerate(entries) if e.shapes["images"] == shapes["images"])

        backend.infer_once = infer  # type: ignore[method-assign]
        stats, slots = replay(backend, entries, order)
    finally:
        backend.close()
    assert slots.allocations == 3 and slots.can_keep and slots.switches > 3
    assert all(len(ids) == 1 for ids in seen.values()) and len(seen) == 3
    assert [len(s.latencies) for s in stats] == [12, 8, 5]  # every request counts; the cold run is apart
    assert all(s.replan_ms is not None and s.first_ms is not None for s in stats)


def test_a_backend_without_slots_re_prepares_on_every_change() -> None:
    class PlainOrt:  # the ONNX Runtime backend seen through the Backend protocol only (no keep_inputs)
        def __init__(self, inner: object) -> None:
            self.inner = inner

        def prepare_inputs(self, shapes: dict, data: object = None) -> None:
            self.inner.prepare_inputs(shapes, data)  # type: ignore[attr-defined]

    backend = open_backend("ort", str(_nudenet()), threads=1)
    try:
        slots = InputSlots(PlainOrt(backend))
        for s in (64, 96, 64, 64, 96):
            slots.select({"images": (1, 3, s, s)})
    finally:
        backend.close()
    assert not slots.can_keep and slots.allocations == 4 and slots.switches == 0


def test_yolov8_mix_weighted_stats_padding_and_profiles(tmp_path: Path) -> None:
    f = tmp_path / "mix.csv"
    f.write_text("images,count\n1x3x64x64,9\n1x3x96x96,5\n1x3x160x160,4\n")
    out = run_mix(ProfileRequest(str(_nudenet()), **FAST), str(f), pad_to="opt", seed=3)
    doc = out.to_dict()
    mix = doc["mix"]
    assert doc["schema"] == "trtstudio.mix/1" and mix["requests"] == 18 and mix["warm"] == 18
    meds = [r["median_ms"] for r in mix["shapes"]]
    assert meds[0] < meds[2] and min(meds) <= mix["median_ms"] <= max(meds)
    assert mix["p99_ms"] >= mix["median_ms"] and doc["buffers"]["allocations"] == 3
    pad = doc["padded"]
    assert pad["median_ms"] >= min(meds) and pad["cost"]["value"] > 0
    targets = {r["shapes"]["images"]: r["padded_to"]["images"] for r in pad["shapes"]}
    prof = doc["profiles"]
    opts = ["x".join(map(str, p["inputs"]["images"]["opt"]))
            for p in (prof["one"] if prof["recommended"] == 1 else prof["two"])["profiles"]]
    assert set(targets.values()) <= set(opts) and targets["1x3x160x160"] == "1x3x160x160"


def test_recommend_one_or_two_profiles_by_padding_loss() -> None:
    def pts(lat: list[float], counts: list[float]) -> list[ShapePoint]:
        return [ShapePoint({"x": (1, 3, s, s)}, c, v) for s, v, c in zip((64, 96, 320, 640), lat, counts, strict=True)]

    far = recommend(pts([1.0, 1.2, 10.0, 40.0], [50, 30, 10, 10]), ["x"], "mix")
    assert far is not None and far["recommended"] == 2
    two = far["two"]["profiles"]
    assert two[0]["inputs"]["x"]["max"] == [1, 3, 96, 96] and two[1]["inputs"]["x"]["min"] == [1, 3, 320, 320]
    assert far["two"]["padding_loss_fraction"] < far["one"]["padding_loss_fraction"]
    near = recommend(pts([1.0, 1.01, 1.02, 1.03], [1, 1, 1, 1]), ["x"], "sweep")
    assert near is not None and near["recommended"] == 1
    flags = near["one"]["profiles"][0]
    assert "--min-shapes x:1x3x64x64 --opt-shapes x:1x3x640x640 --max-shapes x:1x3x640x640" in flags["build_flags"]
    assert flags["trtexec"] == "--minShapes=x:1x3x64x64 --optShapes=x:1x3x640x640 --maxShapes=x:1x3x640x640"
    assert build_profiles(far, 2)[1]["x"] == ((1, 3, 320, 320), (1, 3, 640, 640), (1, 3, 640, 640))


def test_pad_targets_follow_the_profile_whose_range_holds_the_shape() -> None:
    profs = [{"inputs": {"x": {"min": [1, 8], "opt": [1, 32], "max": [1, 32]}}},
             {"inputs": {"x": {"min": [1, 64], "opt": [1, 128], "max": [1, 128]}}}]
    entries = [MixEntry({"x": (1, 16), "y": (2,)}, 1), MixEntry({"x": (1, 100), "y": (2,)}, 1),
               MixEntry({"x": (1, 40), "y": (2,)}, 1)]
    assert pad_targets(entries, profs) == [{"x": (1, 32), "y": (2,)}, {"x": (1, 128), "y": (2,)},
                                           {"x": (1, 40), "y": (2,)}]


def test_cli_mix_magika_batches_json_and_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _package_file("magika", "models/standard_v3_3/model.onnx")
    f = tmp_path / "mix.json"
    f.write_text(json.dumps([{"shapes": {"bytes": "1x2048"}, "count": 6}, {"shapes": {"bytes": "4x2048"}, "count": 3}]))
    session = tmp_path / "m.trtstudio"
    rc = main(["profile", str(model), "--shape-mix", str(f), "--threads", "1", "--session", str(session), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and [r["count"] for r in doc["mix"]["shapes"]] == [6, 3]
    assert doc["profiles"]["inputs"] == ["bytes"] and json.loads(session.read_text())["sweeps"][0]["mix"]
    with pytest.raises(SystemExit) as bad:  # argparse's own usage error
        main(["profile", str(model), "--shape-mix", str(f), "--pad-to", "max"])
    assert bad.value.code == 2


@pytest.mark.skipif(not HAS_RTX, reason="tensorrt_rtx is not installed")
def test_recommended_profiles_build_with_tensorrt_rtx(tmp_path: Path) -> None:
    """The two profiles a mix recommends build into one TensorRT-RTX engine (and one alone too)."""
    from trtstudio.backends.build_request import BuildRequest, run_build

    f = tmp_path / "mix.csv"
    f.write_text("images,count\n1x3x64x64,6\n1x3x96x96,4\n1x3x256x256,3\n1x3x320x320,3\n")
    model = _nudenet()
    doc = run_mix(ProfileRequest(str(model), **FAST), str(f)).to_dict()
    for which in (1, 2):
        profiles = build_profiles(doc["profiles"], which)
        assert len(profiles) == which
        result = run_build(BuildRequest(model=str(model), output=str(tmp_path / f"p{which}.engine"), backend="rtx",
                                        targets=["sm86"], profiles=profiles))
        assert result.ok, result.error
        assert Path(result.engine_path).stat().st_size > 0
        assert result.settings["profiles"] == [{k: [list(s) for s in v] for k, v in p.items()} for p in profiles]


def test_tied_model_mix_runs_with_ties(tmp_path: Path) -> None:
    model = _tied_model(tmp_path / "tied.onnx")
    f = tmp_path / "mix.csv"
    f.write_text("input_ids,count\n1x16,4\n3x40,3\n")
    doc = run_mix(ProfileRequest(str(model), warmup=0, iterations=1), str(f)).to_dict()
    assert [r["shapes"]["attention_mask"] for r in doc["mix"]["shapes"]] == ["1x16", "3x40"]
    assert doc["profiles"]["inputs"] == ["input_ids", "attention_mask"]


def test_split_counts_keeps_the_proportions_and_the_total() -> None:
    rng = np.random.default_rng(5)
    for _ in range(200):
        counts = rng.integers(0, 50, size=int(rng.integers(1, 8))).tolist()
        if not sum(counts):
            continue
        total = int(rng.integers(1, 500))
        parts = split_counts(counts, total)
        exact = [c * total / sum(counts) for c in counts]
        assert sum(parts) == total and all(abs(p - e) < 1 for p, e in zip(parts, exact, strict=True))
    order = request_order([MixEntry({"x": (1,)}, 6), MixEntry({"x": (2,)}, 3), MixEntry({"x": (3,)}, 1)], 4, 100)
    assert np.bincount(order).tolist() == [60, 30, 10] and not np.array_equal(order, np.sort(order))


def _mix_cli(capsys: pytest.CaptureFixture[str], model: Path, mix: Path, *flags: str) -> dict:
    rc = main(["profile", str(model), "--shape-mix", str(mix), "--threads", "1", "--json", *flags])
    assert rc == 0
    return json.loads(capsys.readouterr().out)


def test_cli_mix_counts_are_weights_over_iterations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Counts 6/3/1 with --iterations 100 run 100 requests split 60/30/10, in the seeded order, and say so."""
    model = _tied_model(tmp_path / "tied.onnx")
    f = tmp_path / "mix.csv"
    f.write_text("input_ids,count\n1x16,6\n2x32,3\n4x64,1\n")
    doc = _mix_cli(capsys, model, f, "--iterations", "100", "--mix-seed", "4")
    mix, counts = doc["mix"], doc["counts"]
    assert mix["requests"] == mix["warm"] == counts["ran"] == 100
    assert [r["warm"] for r in mix["shapes"]] == split_counts([6, 3, 1], 100) == counts["planned"]
    assert [r["count"] for r in mix["shapes"]] == [6, 3, 1] and counts["used"] == "weights"
    assert counts["text"] == "counts 6/3/1 used as weights over 100 iterations"
    assert mix["p99_thin"] is False and all(r["p99_thin"] for r in mix["shapes"])  # 60, 30, 10 each: thin
    assert not any("the mix's p99" in w for w in doc["warnings"])
    assert any("3 of 3 shape(s) ran fewer than 100 requests" in w for w in doc["warnings"])
    assert doc["settings"]["iterations"] == 100 and doc["settings"]["duration_s"] is None
    main(["profile", str(model), "--shape-mix", str(f), "--threads", "1", "--iterations", "100"])
    text = capsys.readouterr().out
    assert "counts 6/3/1 used as weights over 100 iterations" in text and "100 requests over 3 shapes" in text

    thin = _mix_cli(capsys, model, f, "--iterations", "7")  # 4.2/2.1/0.7 -> 4/2/1
    assert [r["warm"] for r in thin["mix"]["shapes"]] == split_counts([6, 3, 1], 7) and thin["mix"]["p99_thin"]
    assert any(w.startswith("the mix's p99 of 7 requests: fewer than 100") for w in thin["warnings"])
    few = _mix_cli(capsys, model, f, "--iterations", "2")  # the 1 in 10 shape gets no request
    assert few["mix"]["shapes"][2]["warm"] == 0
    assert any("1 shape(s) got no request in 2 iterations" in w for w in few["warnings"])


def test_mix_replays_the_order_it_plans(tmp_path: Path) -> None:
    """The requests run in the mix's seeded order: the order request_order gives for the total."""
    model = _tied_model(tmp_path / "tied.onnx")
    entries = [MixEntry({"input_ids": (1, 16), "attention_mask": (1, 16)}, 5),
               MixEntry({"input_ids": (2, 8), "attention_mask": (2, 8)}, 2)]
    backend = open_backend("ort", str(model), threads=1)
    seen: list[int] = []
    try:
        replay(backend, entries, request_order(entries, 9, 21), on_request=lambda n, i, ms: seen.append(i))
    finally:
        backend.close()
    assert seen == request_order(entries, 9, 21).tolist() and len(seen) == 21


def test_cli_mix_duration_replays_rounds_until_the_time_is_up(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    model = _tied_model(tmp_path / "tied.onnx")
    f = tmp_path / "mix.json"
    f.write_text(json.dumps([{"shapes": {"input_ids": "1x16"}, "count": 6}, {"shapes": {"input_ids": "2x32"}, "count": 3},
                             {"shapes": {"input_ids": "4x64"}, "count": 1}]))
    doc = _mix_cli(capsys, model, f, "--duration", "0.3", "--pad-to", "opt")
    mix, counts = doc["mix"], doc["counts"]
    ran = counts["ran"]
    assert ran == mix["warm"] == mix["requests"] > 10 and counts["planned"] is None
    assert counts["text"] == f"counts 6/3/1 used as weights over 0.3 s ({ran:,} requests)"
    rounds, part = divmod(ran, 10)  # whole rounds of 6/3/1, then part of one more
    for row, c in zip(mix["shapes"], (6, 3, 1), strict=True):
        assert rounds * c <= row["warm"] <= rounds * c + min(c, part)
    latency_s = sum(row["median_ms"] * row["warm"] for row in mix["shapes"]) / 1e3
    assert latency_s < 0.3 * 1.5  # the time bounds the replay (medians times requests: its warm time)
    assert doc["padded"]["warm"] == ran  # the padded replay runs the same requests
