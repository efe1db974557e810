"""One analysis of an engine against its model (engine.analysis.analyze), its overlays, table columns
and palette, on real engine outputs: the sample's TensorRT-RTX build log and real TensorRT 10.4
ResNet-18 layer JSON + profile (../shared/fixtures/trt-real). No Qt."""

from __future__ import annotations

import copy
import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from conftest import FIXTURES, SAMPLE
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from trtstudio.engine.analysis import SCHEMA, Analysis, analyze
from trtstudio.engine.load import load_engine
from trtstudio.engine.model import Layer
from trtstudio.engine.overlay import MODES, error_overlay, overlay
from trtstudio.engine.table import MEMORY_KEYS, SEVERITY_RANK, layer_columns
from trtstudio.graph.model import load_model
from trtstudio.jsonio import dumps
from trtstudio.palette import (
    NO_FINDING_COLOR,
    NO_LAYER_COLOR,
    OTHER_PRECISION_COLOR,
    PRECISION_COLORS,
    SEVERITY_COLORS,
    heat,
    heat_colors,
    precision_color,
    tint,
)

RTX_LOG = SAMPLE.with_name("mobilenetv2_035.rtx-sm86.build.log")
RESNET18 = FIXTURES / "fuzzylabs_edge-vision-power-estimation/desktop/torch_onnx_trtexec/results/resnet18"
MACHINE_KINDS = {"engine_vs_machine"}  # added by `trtstudio layers` only: this machine, not the engine


def resnet18_like(width: int = 8) -> onnx.ModelProto:
    """ResNet-18 as torchvision exports it (BatchNorm folded into Conv; node names /layer1/layer1.0/
    conv1/Conv ...), narrower, so that real TensorRT layer JSON of ResNet-18 maps onto it."""
    rng = np.random.default_rng(0)
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []

    def op(kind: str, name: str, inputs: list[str], **attrs: Any) -> str:
        out = f"{name}_output_0"
        nodes.append(helper.make_node(kind, inputs, [out], name=name, **attrs))
        return out

    def conv(name: str, x: str, cin: int, cout: int, k: int, stride: int) -> str:
        w = rng.standard_normal((cout, cin, k, k)).astype(np.float32) * 0.1
        inits.append(numpy_helper.from_array(w, f"{name}.w"))
        inits.append(numpy_helper.from_array(np.zeros(cout, np.float32), f"{name}.b"))
        return op("Conv", name, [x, f"{name}.w", f"{name}.b"], kernel_shape=[k, k], strides=[stride, stride],
                  pads=[k // 2] * 4)

    x = conv("/conv1/Conv", "input", 3, width, 7, 2)
    x = op("Relu", "/relu/Relu", [x])
    x = op("MaxPool", "/maxpool/MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = width
    for li, (cout, stride) in enumerate([(width, 1), (2 * width, 2), (4 * width, 2), (8 * width, 2)], 1):
        for bi in (0, 1):
            p = f"/layer{li}/layer{li}.{bi}"
            s = stride if bi == 0 else 1
            y = op("Relu", f"{p}/relu/Relu", [conv(f"{p}/conv1/Conv", x, cin, cout, 3, s)])
            y = conv(f"{p}/conv2/Conv", y, cout, cout, 3, 1)
            short = conv(f"{p}/downsample/downsample.0/Conv", x, cin, cout, 1, s) if s != 1 or cin != cout else x
            x = op("Relu", f"{p}/relu_1/Relu", [op("Add", f"{p}/Add", [y, short])])
            cin = cout
    x = op("GlobalAveragePool", "/avgpool/GlobalAveragePool", [x])
    x = op("Flatten", "/Flatten", [x])
    inits.append(numpy_helper.from_array(rng.standard_normal((10, cin)).astype(np.float32), "fc.weight"))
    inits.append(numpy_helper.from_array(np.zeros(10, np.float32), "fc.bias"))
    nodes.append(helper.make_node("Gemm", [x, "fc.weight", "fc.bias"], ["output"], name="/fc/Gemm", transB=1))
    graph = helper.make_graph(nodes, "resnet18_like",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 64, 64])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="tests")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


@pytest.fixture(scope="module")
def resnet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    if not RESNET18.is_dir():
        pytest.skip("real TensorRT fixtures (../shared/fixtures/trt-real) are absent")
    path = tmp_path_factory.mktemp("resnet") / "resnet18.onnx"
    onnx.save(resnet18_like(), path)
    return path, sorted(RESNET18.glob("*.json"))


def layers_cli(files: list[Path], onnx_path: Path | None = None, *extra: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "trtstudio.cli", "layers", *map(str, files), "--json", *extra]
    if onnx_path is not None:
        cmd += ["--onnx", str(onnx_path)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=120)
    return json.loads(out.stdout)


def as_json(an: Analysis) -> dict[str, Any]:
    return json.loads(dumps(an.to_json(), check_finite=False))


def total_ms(lay: Layer) -> float:
    """A layer's time per inference (never the profile's total over its runs)."""
    assert lay.time is not None and lay.time.per_inference_ms is not None
    return lay.time.per_inference_ms


def without_machine(doc: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    doc["findings"] = [f for f in doc["findings"] if f["kind"] not in MACHINE_KINDS]
    return doc


# -- a mapped engine with times -----------------------------------------------------------------------------


def test_mapped_engine_time_shares_sum_to_the_engine_total(resnet: tuple[Path, list[Path]]) -> None:
    onnx_path, files = resnet
    model = load_model(onnx_path)
    engine = load_engine(files)
    an = analyze(engine, model, columns=True)
    total = an.total_time_ms
    assert total is not None and total > 0 and total == engine.total_time_ms
    convs = [n.name for n in model.graph.nodes if n.op_type == "Conv"]
    assert convs and all(an.layers_of(c) for c in convs)  # every Conv became a layer
    assert an.layers_of("/Flatten") == []  # folded into the fc layer's ForeignNode
    # a node's time is the sum of the layers it became; layers' shares add up to the whole
    for name, positions in an.node_layers.items():
        assert an.node_time_ms[name] == pytest.approx(sum(total_ms(an.engine.layers[p]) for p in positions))
        assert 0 < an.node_time_ms[name] / total <= 1
    mapped = {p for positions in an.node_layers.values() for p in positions}
    unmapped = set(range(len(an.engine.layers))) - mapped
    assert unmapped and all(not an.engine.layers[p].onnx_nodes for p in unmapped)  # reformats, shape calls
    layer_sum = sum(total_ms(lay) for lay in an.engine.layers if lay.time and lay.time.per_inference_ms is not None)
    assert layer_sum == pytest.approx(total)
    # the table's percent column is each layer's share of the same total
    assert an.columns is not None and len(an.columns) == len(engine.layers) and an.columns.has_times
    assert np.nansum(an.columns.num["percent"]) == pytest.approx(100.0, abs=0.05)
    # the "Time share" overlay colours the hottest node darkest
    ov = overlay(an, model.graph.nodes, "Time share")
    assert ov is not None and len(ov.colors) == len(model.graph.nodes)
    assert ov.folded == [not an.layers_of(n.name) for n in model.graph.nodes]
    hottest = max(an.node_time_ms, key=an.node_time_ms.__getitem__)
    reds = {n.name: int(c[1:3], 16) for n, c in zip(model.graph.nodes, ov.colors, strict=True)}
    assert reds[hottest] == min(reds[n] for n in an.node_time_ms)


def test_findings_severity_and_counts(resnet: tuple[Path, list[Path]]) -> None:
    onnx_path, files = resnet
    model = load_model(onnx_path)
    unsupported = [{"node": "/fc/Gemm", "op_type": "Gemm", "reason": "pretend the parser said no"}]
    an = analyze(load_engine(files), model, unsupported, model_precision="fp16", columns=True)
    counts = an.severity_counts()
    assert sum(counts.values()) == len(an.findings) > 0 and counts["error"] >= 1
    assert an.engine.findings == an.findings and an.unsupported == unsupported
    assert an.node_severity["/fc/Gemm"] == "error"
    # each node's severity is the worst finding that touches it (by node name or by its layer)
    worst: dict[str, int] = {}
    for f in an.findings:
        names = list(f.nodes) + (an.engine.layers[f.layer_index].onnx_nodes if f.layer_index is not None else [])
        for n in names:
            worst[n] = max(worst.get(n, 0), SEVERITY_RANK[f.severity])
    assert {n: SEVERITY_RANK[s] for n, s in an.node_severity.items()} == worst
    # the table's severity column agrees with the findings of each layer
    by_layer: dict[int, int] = {}
    for f in an.findings:
        if f.layer_index is not None:
            by_layer[f.layer_index] = max(by_layer.get(f.layer_index, 0), SEVERITY_RANK[f.severity])
    assert an.columns is not None
    assert {i: int(s) for i, s in enumerate(an.columns.severity) if s} == by_layer
    ov = overlay(an, model.graph.nodes, "Finding")
    assert ov is not None
    for node, color in zip(model.graph.nodes, ov.colors, strict=True):
        if not an.layers_of(node.name):
            assert color == NO_LAYER_COLOR
        else:
            assert color == SEVERITY_COLORS.get(an.node_severity.get(node.name, ""), NO_FINDING_COLOR)


def test_analyze_does_not_touch_the_engine_it_is_given(resnet: tuple[Path, list[Path]]) -> None:
    onnx_path, files = resnet
    engine = load_engine(files)
    before = json.loads(dumps(engine.to_json(), check_finite=False))
    an = analyze(engine, load_model(onnx_path))
    assert json.loads(dumps(engine.to_json(), check_finite=False)) == before
    assert not any(lay.onnx_nodes for lay in engine.layers) and any(lay.onnx_nodes for lay in an.engine.layers)
    assert an.engine is not engine and an.engine.layers[0] is not engine.layers[0]
    again = analyze(engine, load_model(onnx_path))
    assert as_json(again) == as_json(an)  # a pure function: the same inputs, the same analysis


def test_the_same_document_as_trtstudio_layers(resnet: tuple[Path, list[Path]]) -> None:
    onnx_path, files = resnet
    an = analyze(load_engine(files), load_model(str(onnx_path)))
    doc = as_json(an)
    assert doc["schema"] == SCHEMA and doc["mapping"]["model"] == str(onnx_path)
    assert without_machine(layers_cli(files, onnx_path)) == doc


# -- the sample model and its real TensorRT-RTX build log -----------------------------------------------------


def test_sample_and_its_rtx_build_the_same_as_trtstudio_layers() -> None:
    model = load_model(str(SAMPLE))
    an = analyze(load_engine([RTX_LOG]), model, columns=True)
    assert an.mapping is not None and an.model_path == str(SAMPLE)
    assert an.total_time_ms is None and an.node_time_ms == {}  # a build log has no times
    assert an.columns is not None and not an.columns.has_times
    assert without_machine(layers_cli([RTX_LOG], SAMPLE)) == as_json(an)
    kinds = {f.kind for f in an.findings}
    assert "shape_ops" in kinds
    # node <-> layer both ways
    for name, positions in an.node_layers.items():
        assert all(name in an.engine.layers[p].onnx_nodes for p in positions)
        assert name in an.nodes_of(positions)
    prec = overlay(an, model.graph.nodes, "Precision")
    assert prec is not None
    used = {an.engine.layers[an.layers_of(n.name)[0]].precision or "" for n in model.graph.nodes if an.layers_of(n.name)}
    assert [p for p, _ in prec.legend[:-1]] == [p for p in PRECISION_COLORS if p in used]
    assert prec.legend[-1] == ("no engine layer (folded)", NO_LAYER_COLOR)
    fused = overlay(an, model.graph.nodes, "Fused layer")
    assert fused is not None and overlay(an, model.graph.nodes, "Op category") is None
    with pytest.raises(ValueError, match="unknown overlay"):
        overlay(an, model.graph.nodes, "Colourful")
    assert set(MODES) >= {"Fused layer", "Precision", "Time share", "Finding"}


@pytest.fixture(scope="module")
def sample_analysis() -> tuple[Any, Analysis]:
    if not SAMPLE.is_file():
        pytest.skip("sample model not generated")
    model = load_model(str(SAMPLE))
    return model, analyze(load_engine([RTX_LOG]), model, columns=True)


@given(st.lists(st.integers(-3, 400), max_size=60))
def test_a_window_analysis_gathers_the_nodes_of_layers_as_the_layers_name_them(
        sample_analysis: tuple[Any, Analysis], positions: list[int]) -> None:
    """The window's analysis (``columns=True``) keeps each layer's nodes as graph indices, which a
    big selection gathers with numpy: the same names, in the same order, as the layers give."""
    model, an = sample_analysis
    assert an.layer_nodes is not None
    layers = an.engine.layers
    expected = list(dict.fromkeys(n for p in positions if 0 <= p < len(layers) for n in layers[p].onnx_nodes))
    assert an.nodes_of(positions) == expected
    index = an.nodes_and_indices_of(positions)[1]
    assert index is not None and [model.graph.nodes[i].name for i in index.tolist()] == expected


def test_an_analysis_without_the_window_or_a_model_names_nodes_from_its_layers() -> None:
    model = load_model(str(SAMPLE)) if SAMPLE.is_file() else pytest.skip("sample model not generated")
    engine = load_engine([RTX_LOG])
    cli = analyze(engine, model)  # what trtstudio layers --onnx makes: no columns, no gathering
    alone = analyze(cli.engine)  # layers that carry their nodes, no graph
    assert cli.layer_nodes is None and alone.layer_nodes is None
    assert alone.nodes_and_indices_of([0, 1])[1] is None
    everything = list(range(len(engine.layers)))
    assert alone.nodes_of(everything) == cli.nodes_of(everything) and cli.nodes_of(everything)


@pytest.mark.parametrize("case", ["resnet", "sample"])
def test_a_window_overlay_from_columns_is_the_one_node_by_node(resnet: tuple[Path, list[Path]], case: str) -> None:
    """The window's analysis paints overlays from its columns with numpy; an analysis without them
    (the reports', the CLI's) goes node by node: the same colours, folded nodes and legend, for
    every mode, on a mapped engine with times (ResNet-18) and a build log without (the sample)."""
    if case == "resnet":
        onnx_path, files = resnet
        model, engine = load_model(str(onnx_path)), load_engine(files)
    else:
        if not SAMPLE.is_file():
            pytest.skip("sample model not generated")
        model, engine = load_model(str(SAMPLE)), load_engine([RTX_LOG])
    an = analyze(engine, model, columns=True)
    assert an.layer_nodes is not None
    one_by_one = dataclasses.replace(an, layer_nodes=None)
    nodes = model.graph.nodes
    for mode in MODES[1:]:
        fast, slow = overlay(an, nodes, mode), overlay(one_by_one, nodes, mode)
        assert fast is not None and slow is not None
        assert (fast.colors, fast.folded, fast.legend) == (slow.colors, slow.folded, slow.legend), mode
    shares = overlay(an, nodes, "Time share")
    assert shares is not None and (len(set(shares.colors)) > 3) == (case == "resnet")
    assert overlay(an, nodes[:-1], "Fused layer") == overlay(one_by_one, nodes[:-1], "Fused layer")  # another graph


@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.floats(-0.1, 1.1)), max_size=50))
def test_heat_colours_of_an_array_are_heat_of_each(values: list[float]) -> None:
    assert heat_colors(np.asarray(values, dtype=np.float64)) == [heat(v) for v in values]


def test_engine_alone_without_a_model(trt_real: Path) -> None:
    files = sorted((trt_real / "NVIDIA_TensorRT_trex/release-11.0/examples/pytorch/resnet/A100/fp16").glob("*.json"))
    engine = load_engine(files)
    an = analyze(engine, columns=True)
    assert an.mapping is None and an.model_path is None and "mapping" not in an.to_json()
    assert an.node_layers == {} and an.node_time_ms == {}  # nothing names ONNX nodes without a model
    assert an.total_time_ms is not None and an.total_time_ms == engine.total_time_ms and an.total_time_ms > 0
    assert an.findings
    assert an.columns is not None
    # the window's analysis adds the memory columns (engine.table.with_memory) to the table's
    assert {k: v for k, v in an.columns.text.items() if k not in MEMORY_KEYS} == layer_columns(an.engine, an.findings).text
    assert set(an.columns.text) - set(layer_columns(an.engine, an.findings).text) == set(MEMORY_KEYS)
    assert without_machine(layers_cli(files)) == as_json(an)


# -- error overlay and palette ---------------------------------------------------------------------------------


def test_error_overlay_darkest_is_worst() -> None:
    model = load_model(str(SAMPLE))
    nodes = model.graph.nodes[:5]
    errors = {nodes[0].name: 0.5, nodes[1].name: 0.05, nodes[2].name: float("nan")}
    ov = error_overlay(nodes, errors)
    assert ov is not None and ov.colors[0] == heat(1.0) and ov.colors[1] == heat(0.1)
    assert ov.colors[3] == ov.colors[4] != ov.colors[0]  # not measured
    assert error_overlay(nodes, {}) is None


def test_palette_one_hue_per_precision() -> None:
    assert precision_color("fp32") == precision_color("FP32") == PRECISION_COLORS["FP32"]
    assert precision_color(None) == precision_color("UINT8") == OTHER_PRECISION_COLOR
    assert len(set(PRECISION_COLORS[p] for p in ("FP32", "FP16", "BF16", "INT8", "FP8"))) == 5
    assert tint("#4e79a7", 0.0) == "#4e79a7" and tint("#4e79a7", 1.0) == "#ffffff"


@given(st.floats(-1.0, 2.0, allow_nan=False), st.floats(-1.0, 2.0, allow_nan=False))
def test_heat_darkens_with_the_value(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    c_lo, c_hi = heat(lo), heat(hi)
    assert len(c_lo) == 7 and c_lo.startswith("#")
    assert all(int(c_hi[i:i + 2], 16) <= int(c_lo[i:i + 2], 16) for i in (1, 3, 5))


@given(st.sampled_from(sorted(PRECISION_COLORS.values())), st.floats(0.0, 1.0))
def test_tint_is_lighter_than_its_colour(color: str, amount: float) -> None:
    t = tint(color, amount)
    assert all(int(t[i:i + 2], 16) >= int(color[i:i + 2], 16) for i in (1, 3, 5))


def test_layer_columns_of_no_engine() -> None:
    cols = layer_columns(None)
    assert len(cols) == 0 and not cols.has_times


def test_tensor_columns_are_made_when_read() -> None:
    """The tensor text columns describe a layer's tensors when a cell is first read (the table
    shows a screenful), and read whole they are what describing every row up front gives."""
    from trtstudio.engine.model import EngineInfo, Layer, TensorDesc
    from trtstudio.engine.table import TensorText, format_text

    def tensor(name: str, shape: list[int | str], fmt: str, dtype: str) -> TensorDesc:
        return TensorDesc(name=name, shape=shape, format=fmt, dtype=dtype)

    fp16 = "Channel major FP16 format where channel % 8 == 0"
    layers = [Layer(i, f"l{i}", "Convolution", inputs=[tensor(f"a{i}", [1, 8, i + 1, 4], fp16, "FP16")] * (1 + i % 2),
                    outputs=[tensor(f"b{i}", [1, 8, i + 1, 4], "Row major linear FP32", "FP32")]) for i in range(50)]
    cols = layer_columns(EngineInfo(layers=layers))
    col = cols.text["in_shapes"]
    assert isinstance(col, TensorText) and len(col) == 50
    assert col._cells.count(None) == 50  # nothing described yet
    assert col[3] == "1x8x4x4; 1x8x4x4" and col[-2] == "1x8x49x4"
    assert col._cells.count(None) == 48  # only what was read
    assert col[2:4] == ["1x8x3x4", "1x8x4x4; 1x8x4x4"]
    expected = ["; ".join("x".join(map(str, t.shape)) for t in lay.inputs) for lay in layers]
    assert list(col) == expected and col == expected and None not in col._cells
    assert cols.text["out_formats"] == ["FP32 linear"] * 50
    assert cols.text["in_formats"][0] == format_text(layers[0].inputs[0]) == "FP16 HWC c%8"
    assert cols.tips["in_formats"][1] == f"a1: {fp16}\na1: {fp16}"


def test_time_and_stream_columns_are_formatted_when_read() -> None:
    """The time, percent and stream cells are formatted when first read, as the table always
    formatted them: 4 decimals below 10 ms, else 2; two for percent; blank where unknown; and the
    precision columns are each layer's own."""
    from trtstudio.engine.model import EngineInfo, Layer, LayerTime, TensorDesc
    from trtstudio.engine.table import LazyText

    totals = [0.123456, 9.99999, 10.0, 123.456, None, -3.5]
    layers = [Layer(i, f"l{i}", "Convolution", stream=None if i == 2 else i % 2,
                    inputs=[TensorDesc("x", [1], dtype=None if i == 1 else "FP16")],
                    outputs=[TensorDesc("y", [1], dtype="INT8" if i % 2 else None)],
                    time=None if t is None else LayerTime(t, t / 2, None, None, 10)) for i, t in enumerate(totals)]
    cols = layer_columns(EngineInfo(layers=layers))
    total = cols.text["total_ms"]
    assert isinstance(total, LazyText) and total._cells.count(None) == len(totals)
    assert total[3] == "123.46" and total._cells.count(None) == len(totals) - 1
    assert list(total) == ["0.1235", "10.0000", "10.00", "123.46", "", "-3.5000"]
    assert list(cols.text["average_ms"]) == ["0.0617", "5.0000", "5.0000", "61.73", "", "-1.7500"]
    assert list(cols.text["median_ms"]) == [""] * len(totals)
    share = [f"{t / sum(v for v in totals if v is not None) * 100:.2f}" if t is not None else "" for t in totals]
    assert list(cols.text["percent"]) == share
    assert list(cols.text["stream"]) == ["0", "1", "", "1", "0", "1"]
    assert [lay.precision_in or "" for lay in layers] == cols.text["precision_in"] == ["FP16", "", "FP16", "FP16", "FP16", "FP16"]
    assert [lay.precision_out or "" for lay in layers] == list(cols.text["precision_out"])
    assert cols.precision == [lay.precision or "" for lay in layers] == ["FP16", "INT8", "FP16", "FP16", "FP16", "FP16"]


def test_base_columns_read_in_steps_are_each_layers_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """The layers are read a step at a time: across steps whose times are all there, all missing
    or some of each, whose median is never given, with None types, tactics and streams and a
    total given as NaN, every column is what reading each layer on its own gives."""
    from trtstudio.engine import table
    from trtstudio.engine.model import EngineInfo, LayerTime, TensorDesc

    def time_of(i: int) -> LayerTime | None:
        if i < 6 or (i >= 12 and i % 3 == 0):
            return None  # steps 0 and 1 (of 3 layers) untimed, then some untimed
        total = float("nan") if i == 13 else None if i == 16 else i * 0.25  # given as NaN; a time without a total
        return LayerTime(total, i * 0.5, None, None if i % 2 else 1.5, 1)

    layers = [Layer(i, f"l{i}", None if i % 5 == 0 else ("Conv" if i % 2 else "Pool"),  # type: ignore[arg-type]
                    parameter_type=None if i % 4 else "Convolution", tactic=None if i % 3 else f"t{i}",
                    stream=None if i % 7 == 0 else i % 2, onnx_nodes=[f"n{i}", "m"][: i % 3],
                    inputs=[TensorDesc("x", [1], dtype=None if i % 4 == 1 else "FP16"), TensorDesc("z", [2], dtype="INT8")]
                    if i % 6 else [],
                    outputs=[TensorDesc("y", [i], dtype=None if i % 8 == 3 else "FP32")], time=time_of(i))
              for i in range(23)]
    engine = EngineInfo(layers=layers)
    whole = table.base_columns(engine)
    monkeypatch.setattr(table, "STEP", 3)
    cols = table.base_columns(engine)
    for key in whole.text:
        assert list(cols.text[key]) == list(whole.text[key]), key
    assert cols.text["type"] == [lay.type or "" for lay in layers] and "" in cols.text["type"]
    assert cols.text["tactic"] == [lay.tactic or "" for lay in layers]
    assert cols.text["parameter_type"] == [lay.parameter_type or "" for lay in layers]
    assert cols.text["nodes"] == [", ".join(lay.onnx_nodes) for lay in layers]
    assert list(cols.text["index"]) == [str(i) for i in range(23)]
    assert cols.text["precision_in"] == [lay.precision_in or "" for lay in layers]
    assert cols.text["precision_out"] == [lay.precision_out or "" for lay in layers]
    assert cols.precision == [lay.precision or "" for lay in layers] == whole.precision
    for key, field in (("total_ms", "total_ms"), ("average_ms", "average_ms"), ("median_ms", "median_ms")):
        expected = np.array([None if lay.time is None else getattr(lay.time, field) for lay in layers], dtype=float)
        np.testing.assert_array_equal(cols.num[key], expected)
        np.testing.assert_array_equal(whole.num[key], expected)
    np.testing.assert_array_equal(cols.num["stream"], np.array([lay.stream for lay in layers], dtype=float))
    np.testing.assert_array_equal(cols.num["percent"], whole.num["percent"])
    assert np.isnan(cols.num["median_ms"]).all() and not np.isnan(cols.num["percent"][7])
    # the time per inference is each layer's own rule (median, else average, else total/count): a
    # NaN total with an average is timed; the groups sum those times
    per_inference = np.array([np.nan if lay.time is None or lay.time.per_inference_ms is None
                              else lay.time.per_inference_ms for lay in layers])
    np.testing.assert_array_equal(cols.num["ms"], per_inference)
    by_type = cols.time_by_type
    assert repr(by_type) == repr(whole.time_by_type) and repr(cols.time_by_precision) == repr(whole.time_by_precision)
    assert not any(v != v for _, v in by_type)
    assert sum(v for _, v in by_type) == pytest.approx(np.nansum(per_inference))
    assert sorted(name for name, _ in by_type) == ["Conv", "Pool", "unknown"]
    assert repr(cols.time_by_precision) == repr(table.time_by(engine, "precision"))
    assert repr(by_type) == repr(table.time_by(engine, "type"))
    assert not any(name == "Pool" and v != v for name, v in by_type)  # a total not given is left out
    assert cols.types == ["Conv", "Pool"] and cols.precisions == ["FP16", "FP32", "INT8"]
    assert cols.has_times and list(cols.haystack) == list(whole.haystack)


def test_an_engine_from_another_model_is_mapped_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An engine opened beside a model it was not built from: no layer maps to a node, and the
    rules take the analysis's mapping as done instead of mapping every layer again (2.6 s at
    300,000 layers); the findings are the ones mapping again gives."""
    from trtstudio.engine import analysis, diagnose, mapping
    from trtstudio.engine.diagnose import rules
    from trtstudio.graph.model import load_model

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="unrelated_relu")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    path = tmp_path / "other.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    model = load_model(str(path))
    engine = load_engine([RTX_LOG])
    calls: list[int] = []
    real = mapping.map_layers

    def counted(eng: Any, g: Any) -> Any:
        calls.append(len(eng.layers))
        return real(eng, g)

    monkeypatch.setattr(analysis, "map_layers", counted)
    monkeypatch.setattr(rules, "map_layers", counted)  # diagnose() maps in its registry's module
    an = analyze(engine, model)
    assert an.mapping is not None and not any(lay.onnx_nodes for lay in an.engine.layers)
    assert calls == [len(engine.layers)]
    again = diagnose.diagnose(copy.deepcopy(an.engine), model.graph)  # the rules mapping for themselves
    assert len(calls) == 2
    assert [f.to_json() for f in again] == [f.to_json() for f in an.findings]
