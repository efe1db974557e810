"""Each layer's memory where the window shows it (issue 49 item 2), without Qt: the table's memory
columns (``engine.table.with_memory``, made with the diagnosis), Colour by ``Memory`` on the engine's
graph (``engine.overlay.layer_overlay``) and on the ONNX graph through the layer-node map
(``engine.overlay.overlay``), and ``Analysis.memory``. The figures are checked against the real files,
read here on their own: TREx's A100 ResNet-18 layer JSON (tensor shapes and weight counts) and
trt-samples' ProfilingVerbosity log (its "Layer: NAME Host Persistent: .. Scratch Memory: .." lines)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES

from trtstudio.engine.analysis import analyze, diagnosed, mapped
from trtstudio.engine.load import load_engine
from trtstudio.engine.memory import engine_memory
from trtstudio.engine.overlay import MEMORY_MODE, MODES, NO_MEMORY, layer_overlay, overlay
from trtstudio.engine.table import bytes_text
from trtstudio.palette import NO_LAYER_COLOR, UNMEASURED_COLOR, heat, heat_colors

A100_FP32 = FIXTURES / "NVIDIA_TensorRT_trex/release-11.0/examples/pytorch/resnet/A100/fp32"
VERBOSE_LOG = FIXTURES / "NVIDIA_trt-samples-for-hackathon-cn/HEAD/cookbook/04-Feature/ProfilingVerbosity/log-main.py.log"
# sizes written apart from the code under test: TensorRT's format text and weight type names
DTYPE_BYTES = {"FP32": 4, "FP16": 2, "INT8": 1, "INT32": 4}
WEIGHT_BYTES = {"Float": 4, "Half": 2, "Int8": 1}


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"fixture {path} absent")
    return path


def _a100_files() -> list[str]:
    return sorted(str(p) for p in _need(A100_FP32).iterdir() if p.is_file())


def _file_figures() -> list[tuple[str, float, float]]:
    """(name, output bytes, weight + bias bytes) of each layer of the A100 graph JSON, read here."""
    doc = json.loads((A100_FP32 / "resnet.onnx.engine.graph.json").read_text())
    out = []
    for lay in doc["Layers"]:
        outputs = 0.0
        for t in lay["Outputs"]:
            size = next(v for k, v in DTYPE_BYTES.items() if k in t["Format/Datatype"])
            outputs += float(np.prod(t["Dimensions"])) * size
        weights = sum(lay[k]["Count"] * WEIGHT_BYTES[lay[k]["Type"]] for k in ("Weights", "Bias")
                      if isinstance(lay.get(k), dict)) if any(k in lay for k in ("Weights", "Bias")) else np.nan
        out.append((lay["Name"], outputs, float(weights)))
    return out


def test_memory_columns_are_the_files_figures(trt_real: Path) -> None:
    files = _a100_files()
    an = analyze(load_engine(files), None, columns=True, machine=files)
    cols = an.columns
    assert cols is not None and an.memory is not None
    figures = _file_figures()
    assert [lay.name for lay in an.engine.layers] == [f[0] for f in figures]
    np.testing.assert_array_equal(cols.memory["activation_bytes"], [f[1] for f in figures])
    np.testing.assert_array_equal(cols.memory["weight_bytes"], [f[2] for f in figures])
    assert np.isnan(cols.memory["scratch_bytes"]).all()  # no verbose log among these files
    big = int(np.argmax(cols.memory["activation_bytes"]))
    assert cols.text["activation_bytes"][big] == f"{figures[big][1] / 2**20:.3g} MiB"
    assert cols.tips["activation_bytes"][big].startswith(f"{int(figures[big][1]):,} bytes")
    # Analysis.memory is what `trtstudio memory` reads from the same files
    cli = engine_memory(files)
    assert {n: f.bytes for n, f in an.memory.categories.items()} == {n: f.bytes for n, f in cli.categories.items()}
    assert an.memory.live == cli.live


def test_the_table_before_the_diagnosis_has_no_memory_yet(trt_real: Path) -> None:
    files = _a100_files()
    partial = mapped(load_engine(files), None, columns=True)
    assert partial.columns is not None and partial.columns.memory == {} and partial.memory is None
    full = diagnosed(partial, None, [], machine=files)
    assert full.columns is not None and full.columns.num is partial.columns.num  # the table takes them with the findings
    assert full.columns.memory and partial.columns.memory == {}


def test_verbose_log_gives_scratch_and_persistent_memory_per_layer(trt_real: Path) -> None:
    path = str(_need(VERBOSE_LOG))
    an = analyze(load_engine([path]), None, columns=True, machine=[path])
    cols = an.columns
    assert cols is not None and an.memory is not None
    text = Path(path).read_text(errors="replace")
    lines = re.findall(r"Layer: (.+?) Host Persistent: (\d+) bytes Device Persistent: (\d+) bytes "
                       r"Scratch Memory: (\d+) bytes", text)
    last = {name: tuple(map(int, v)) for name, *v in lines}  # the last build's line of each layer
    matched = 0
    for p, lay in enumerate(an.engine.layers):
        if lay.name in last:
            host, device, scratch = last[lay.name]
            assert (cols.memory["host_persistent_bytes"][p], cols.memory["device_persistent_bytes"][p],
                    cols.memory["scratch_bytes"][p]) == (host, device, scratch)
            matched += 1
        else:
            assert np.isnan(cols.memory["host_persistent_bytes"][p])
    assert matched == 4  # the CUDA layers; the Myelin region's line names none of its kernels' layers
    unmatched = {r["name"]: r for r in an.memory.layers if r["index"] is None}
    foreign = next(n for n in last if n.startswith("{ForeignNode"))
    assert unmatched[foreign]["scratch"] == last[foreign][2]
    tip = cols.tips["host_persistent_bytes"][next(p for p, lay in enumerate(an.engine.layers) if lay.name in last)]
    assert re.match(r"[\d,]+ bytes: log-main\.py\.log:\d+$", tip)


def test_colour_by_memory_on_the_engine_graph(trt_real: Path) -> None:
    files = _a100_files()
    an = analyze(load_engine(files), None, columns=True, machine=files)
    figures = _file_figures()
    per_layer = np.array([o + (0.0 if np.isnan(w) else w) for _, o, w in figures])
    got = layer_overlay(an, len(an.engine.layers), MEMORY_MODE)
    assert got is not None
    colors, legend = got
    assert colors == heat_colors(per_layer / per_layer.max())
    assert colors[int(np.argmax(per_layer))] == heat(1.0)
    assert f"0 - {per_layer.max() / 2**20:.3g} MiB" in legend[0][0] and legend[1] == (NO_MEMORY, UNMEASURED_COLOR)


def test_colour_by_memory_on_the_onnx_graph_sums_each_nodes_layers(trt_real: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    import onnx
    from test_analysis import RESNET18, resnet18_like

    from trtstudio.graph.model import load_model

    files = sorted(str(p) for p in _need(RESNET18).glob("*.json"))
    tmp = Path(__import__("tempfile").mkdtemp()) / "resnet18.onnx"
    onnx.save(resnet18_like(), tmp)
    model = load_model(str(tmp))
    an = analyze(load_engine(files), model, columns=True, machine=files)
    assert an.columns is not None and an.layer_nodes is not None
    mem = an.columns.memory
    per_layer = np.nansum(np.vstack([mem[k] for k in ("activation_bytes", "weight_bytes", "scratch_bytes",
                                                      "device_persistent_bytes")]), axis=0)
    nodes = model.graph.nodes
    expect = []
    for node in nodes:
        layers = an.node_layers.get(node.name, [])
        expect.append(sum(per_layer[p] for p in layers) if layers else None)
    top = max(v for v in expect if v is not None)
    ov = overlay(an, nodes, MEMORY_MODE)
    assert ov is not None
    for node, v, c, folded in zip(nodes, expect, ov.colors, ov.folded, strict=True):
        if v is None:
            assert folded and c == NO_LAYER_COLOR, node.name
        else:
            assert not folded and c == heat(v / top), node.name
    # node by node (an analysis without the map) paints the same
    import dataclasses

    slow = overlay(dataclasses.replace(an, layer_nodes=None), nodes, MEMORY_MODE)
    assert slow is not None and (slow.colors, slow.folded, slow.legend) == (ov.colors, ov.folded, ov.legend)
    assert MEMORY_MODE in MODES


def test_the_memory_legend_is_a_ramp_the_legend_strip_draws() -> None:
    from trtstudio.engine import node_time
    from trtstudio.engine import overlay as ov

    assert ov.RAMP == node_time.RAMP


def test_bytes_text() -> None:
    assert [bytes_text(v) for v in (float("nan"), 0.0, 512.0, 3328.0, 25690112.0, 3 * 2**30)] == \
        ["", "0 B", "512 B", "3.25 KiB", "24.5 MiB", "3 GiB"]
