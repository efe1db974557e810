"""The engine summary TREx gave (engine.summary): I/O tensors filled from the layers, layer count,
average time, weights and activations, against TREx's own expected values for its MobileNet QAT
test engine (tests/test_engine_plan.py::test_summary_dict in NVIDIA/TensorRT's trt-engine-explorer)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from trtstudio.cli import main
from trtstudio.engine.analysis import analyze
from trtstudio.engine.load import load_engine
from trtstudio.engine.model import EngineInfo, Layer, TensorDesc
from trtstudio.engine.readers import _fast
from trtstudio.engine.readers._common import info_from_layer_doc
from trtstudio.engine.summary import MEMORY_KEYS, layer_memory, summary, summary_lines
from trtstudio.jsonio import loads

FIX = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "trt-real"
TREX = FIX / "NVIDIA_TensorRT_trex/release-11.0/tests/inputs"
MOBILENET = TREX / "mobilenet.qat.onnx.engine"
HACKATHON = FIX / "NVIDIA_trt-samples-for-hackathon-cn/HEAD/cookbook/07-Tool/trtexec"
needs_fixtures = pytest.mark.skipif(not TREX.is_dir(), reason="real TensorRT fixtures not present")

# TREx's expected summary (tests/test_engine_plan.py of trt-engine-explorer, NVIDIA/TensorRT)
TREX_EXPECTED = {"Inputs": "input1: [1, 3, 224, 224]xFP32 NCHW", "Average time": "0.470 ms", "Layers": "72",
                 "Weights": "3.3 MB", "Activations": "15.9 MB"}


def _raw_sums(doc: dict) -> tuple[int, int, int]:  # type: ignore[type-arg]
    """(weights, bias, activations) in bytes, summed straight from the JSON as TREx's Layer does."""
    wsize = {"Int8": 1, "Half": 2, "Float": 4, "Int32": 4}
    dsize = {"Int8": 1, "FP16": 2, "FP32": 4}
    kept = [r for r in doc["Layers"] if r["LayerType"] not in ("Constant", "NoOp")]
    weights = sum(r["Weights"]["Count"] * wsize[r["Weights"]["Type"]] for r in kept if "Weights" in r)
    bias = sum(r["Bias"]["Count"] * wsize[r["Bias"]["Type"]] for r in kept if "Bias" in r)
    act = 0
    for r in kept:
        for t in r["Inputs"] + r["Outputs"]:
            word = next(w for w in dsize if w in t["Format/Datatype"])
            act += math.prod(t["Dimensions"]) * dsize[word]
    return weights, bias, act


@needs_fixtures
def test_trex_mobilenet_summary_is_trexs() -> None:
    eng = analyze(load_engine([f"{MOBILENET}.graph.json", f"{MOBILENET}.profile.json"])).engine
    s = summary(eng)
    got = {"Inputs": "; ".join(t["text"] for t in s["inputs"]), "Average time": f"{s['average_time_ms']:.3f} ms",
           "Layers": str(s["layers"]), "Weights": s["weights_text"], "Activations": s["activations_text"]}
    assert got == TREX_EXPECTED
    doc = json.loads(Path(f"{MOBILENET}.graph.json").read_text())
    weights, bias, act = _raw_sums(doc)
    assert (eng.memory["layer_weights"], eng.memory["layer_bias"], eng.memory["layer_activations"]) == (weights, bias, act)
    assert "layer_constants" not in eng.memory  # the engine has no Constant layer: no key, not a zero
    assert s["layers_all"] == len(doc["Layers"]) == s["layers"] + 1  # TREx drops the one NoOp
    # the binding names only ("Bindings": ["input1", "1179"]); the layers that read and write them say the rest
    assert doc["Bindings"] == [t.name for t in eng.io_tensors]
    first, last = doc["Layers"][0]["Inputs"][0], doc["Layers"][-1]["Outputs"][0]
    assert [(t.shape, t.format) for t in eng.io_tensors] == [(first["Dimensions"], first["Format/Datatype"]),
                                                            (last["Dimensions"], last["Format/Datatype"])]
    assert [t.dtype for t in eng.io_tensors] == ["FP32", "FP32"]
    assert s["outputs"][0]["text"] == "1179: [1, 1000]xFP32 NCHW"


@needs_fixtures
def test_the_fast_reader_sums_the_constants_without_parsing_a_record() -> None:
    text = Path(f"{MOBILENET}.graph.json").read_text()
    fast = _fast.read_layer_doc(text)
    assert fast is not None
    records = fast.layers[1].source.records  # type: ignore[attr-defined]
    assert layer_memory(fast.layers) == layer_memory(info_from_layer_doc(Path("x.json"), loads(text)).layers)
    assert records._raws is None  # no record cut, none parsed
    assert set(layer_memory(fast.layers)) == {"layer_weights", "layer_bias", "layer_activations"}


@needs_fixtures
def test_tensorrts_own_memory_figures_are_kept_beside_the_layer_sums() -> None:
    log = HACKATHON / "result-04.log"  # trtexec --dumpLayerInfo with "Total Weights Memory: ... bytes"
    read = load_engine([log])
    assert not set(MEMORY_KEYS) & read.memory.keys()  # the analysis adds them, to a copy
    eng = analyze(read).engine
    text = log.read_text(errors="replace")
    assert f"Total Weights Memory: {eng.memory['weights']} bytes" in text
    assert f"Total Activation Memory: {eng.memory['activation']} bytes" in text
    assert 0 < eng.memory["layer_weights"] != eng.memory["weights"]
    names_only = analyze(load_engine([HACKATHON / "result-05.log"])).engine  # a names-only listing: nothing to sum
    assert not names_only.detailed and not set(MEMORY_KEYS) & names_only.memory.keys()


def test_dynamic_and_unknown_tensors_add_nothing_and_constants_count_apart() -> None:
    def t(name: str, dtype: str | None, shape: list) -> TensorDesc:  # type: ignore[type-arg]
        return TensorDesc(name, shape, dtype)

    layers = [
        Layer(0, "const", "Constant", attrs={"Weights": {"Type": "Half", "Count": 10}}, outputs=[t("c", "FP16", [10])]),
        Layer(1, "conv", "CaskConvolution", "Convolution", inputs=[t("x", "FP32", [-1, 3, 8, 8]), t("c", "FP16", [10])],
              outputs=[t("y", "FP16", [1, 4, 8, 8])],
              attrs={"Weights": {"Type": "Float", "Count": 108}, "Bias": {"Type": "Float", "Count": 4}}),
        Layer(2, "noop", "NoOp", inputs=[t("y", "FP16", [1, 4, 8, 8])], outputs=[t("z", "FP16", [1, 256])]),
        Layer(3, "odd", "Unknown", inputs=[t("z", None, [1, 256]), t("s", "FP32", ["N", 4])], outputs=[t("w", "INT8", [])]),
    ]
    mem = layer_memory(layers)
    # conv: x is dynamic (nothing), c 10 x 2 bytes, y 256 x 2; odd: z has no type, s a symbolic dim, w a scalar INT8
    assert mem == {"layer_weights": 108 * 4, "layer_bias": 4 * 4, "layer_activations": 20 + 512 + 1,
                   "layer_constants": 10 * 2}
    eng = EngineInfo(layers=layers, memory={"weights": 7})
    assert summary(eng)["layers"] == 2 and summary(eng)["average_time_ms"] is None
    assert any("average time" not in line and "2 layers" in line for line in summary_lines(eng))


@needs_fixtures
def test_layers_prints_and_writes_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    files = [f"{MOBILENET}.graph.json", f"{MOBILENET}.profile.json"]
    assert main(["layers", *files]) == 0
    out = capsys.readouterr().out
    assert f"inputs: {TREX_EXPECTED['Inputs']}" in out
    assert (f"engine: {TREX_EXPECTED['Layers']} layers" in out and f"average time {TREX_EXPECTED['Average time']}" in out
            and f"weights {TREX_EXPECTED['Weights']}" in out and f"activations {TREX_EXPECTED['Activations']}" in out)
    assert main(["layers", "--json", *files]) == 0
    doc = json.loads(capsys.readouterr().out)
    mem = doc["engine"]["memory"]
    assert f"{mem['layer_weights'] / 2**20:.1f} MB" == TREX_EXPECTED["Weights"]
    assert f"{mem['layer_activations'] / 2**20:.1f} MB" == TREX_EXPECTED["Activations"]
    assert doc["engine"]["io_tensors"][0] == {"name": "input1", "shape": [1, 3, 224, 224], "dtype": "FP32",
                                              "format": "Row major linear FP32"}


@needs_fixtures
def test_time_by_precision_is_by_compute_precision_with_pairs_as_detail() -> None:
    from trtstudio.engine.table import layer_columns, precision_detail

    eng = load_engine([f"{MOBILENET}.graph.json", f"{MOBILENET}.profile.json"])
    rows = {r["precision"]: r for r in precision_detail(eng)}
    # straight from the files: a layer's compute precision is its first input's type, as TREx reads it
    doc = json.loads(Path(f"{MOBILENET}.graph.json").read_text())
    # each layer's time per inference: its median where the profile has one, else its average
    prof = {r["name"]: r.get("medianMs", r["averageMs"])
            for r in json.loads(Path(f"{MOBILENET}.profile.json").read_text())[1:]}
    word = {"Int8": "INT8", "FP16": "FP16", "FP32": "FP32"}
    expected: dict[str, float] = {}
    pairs: dict[tuple[str, str], float] = {}
    for rec in doc["Layers"]:
        pin = next(v for k, v in word.items() if k in rec["Inputs"][0]["Format/Datatype"])
        pout = next(v for k, v in word.items() if k in rec["Outputs"][0]["Format/Datatype"])
        expected[pin] = expected.get(pin, 0.0) + prof[rec["Name"]]
        pairs[(pin, pout)] = pairs.get((pin, pout), 0.0) + prof[rec["Name"]]
    assert {k: r["time_ms"] for k, r in rows.items()} == pytest.approx(expected)
    int8 = {p["pair"]: p["time_ms"] for p in rows["INT8"]["pairs"]}
    assert int8 == pytest.approx({("INT8" if b == "INT8" else f"INT8 -> {b}"): t for (a, b), t in pairs.items()
                                  if a == "INT8"})
    assert sum(r["percent"] for r in rows.values()) == pytest.approx(100.0)
    cols = layer_columns(eng)  # the table's (and the chart's) split is the same
    assert dict(cols.time_by_precision) == pytest.approx(expected)
    assert dict(cols.time_by_precision_pairs["INT8"]) == pytest.approx(int8)


def test_io_roles_from_the_layers_an_output_read_again_included() -> None:
    from trtstudio.engine.summary import NEAR_IO, fill_io_tensors, io_roles

    def t(name: str) -> TensorDesc:
        return TensorDesc(name, [1, 4], "FP16", "Row major linear FP16 format")

    middle = [Layer(i, f"mid{i}", "Pointwise", inputs=[t(f"m{i}")], outputs=[t(f"m{i + 1}")]) for i in range(NEAR_IO * 3)]
    layers = [Layer(0, "first", "Pointwise", inputs=[t("x")], outputs=[t("m0")]), *middle,
              Layer(0, "head", "Pointwise", inputs=[t(f"m{NEAR_IO * 3}")], outputs=[t("y")]),  # y: an output...
              Layer(0, "tail", "Pointwise", inputs=[t("y")], outputs=[t("z")])]  # ... read again
    eng = EngineInfo(layers=layers, io_tensors=[TensorDesc("z"), TensorDesc("y"), TensorDesc("x"),
                                                TensorDesc(f"m{NEAR_IO}"), TensorDesc("nowhere")])
    assert io_roles(eng) == {"x": "input", "y": "output", "z": "output", f"m{NEAR_IO}": "output"}
    assert summary(eng)["inputs"][0]["text"] == "x: ?x?"  # named only
    fill_io_tensors(eng)  # as load_engine does: from the layers that read and write them
    s = summary(eng)
    assert [e["name"] for e in s["inputs"]] == ["x", "nowhere"] and [e["name"] for e in s["outputs"]] == [
        "z", "y", f"m{NEAR_IO}"]
    assert s["inputs"][0]["text"] == "x: [1, 4]xFP16 NCHW"
