"""The analysis in two parts (engine.analysis.mapped, then diagnosed), as the window opens an engine:
together they are analyze(); the first part is left as it was. No Qt; the sample's TensorRT-RTX
build log against its model, and a real TensorRT ResNet-18 layer JSON + profile without one."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import FIXTURES, SAMPLE

from trtstudio.engine.analysis import analyze, diagnosed, mapped
from trtstudio.engine.load import load_engine
from trtstudio.engine.table import base_columns, layer_columns, with_findings
from trtstudio.graph.model import load_model

RESNET = FIXTURES / "fuzzylabs_edge-vision-power-estimation/desktop/torch_onnx_trtexec/results/resnet18"


def _cases() -> list[tuple[list[Path], Path | None]]:
    out: list[tuple[list[Path], Path | None]] = []
    log = SAMPLE.with_name("mobilenetv2_035.rtx-sm86.build.log")
    if SAMPLE.is_file() and log.is_file():
        out.append(([log], SAMPLE))
    files = [RESNET / "resnet18_fp16.graph.json", RESNET / "resnet18_fp16.profile.json"]
    if all(f.is_file() for f in files):
        out.append((files, None))
    return out


def _columns_state(cols: Any) -> dict[str, Any]:
    return {"text": {k: list(v) for k, v in cols.text.items()}, "severity": cols.severity.tolist(),
            "tooltips": list(cols.tooltips), "haystack": list(cols.haystack),
            "tips": {k: list(v) for k, v in cols.tips.items()}, "num": {k: np.nan_to_num(v, nan=-1).tolist()
                                                                       for k, v in cols.num.items()},
            "rest": (cols.precision, cols.types, cols.precisions, cols.time_by_type, cols.time_by_precision,
                     cols.has_times)}


@pytest.mark.parametrize("case", range(2))
def test_mapped_then_diagnosed_is_analyze_and_leaves_the_first_part(case: int) -> None:
    cases = _cases()
    if case >= len(cases):
        pytest.skip("fixture absent")
    files, model_path = cases[case]
    model = load_model(str(model_path), infer_shapes=False) if model_path is not None else None
    engine = load_engine([str(f) for f in files])
    before = copy.deepcopy(engine.to_json())
    whole = analyze(engine, model, [], columns=True, machine=[str(f) for f in files])

    partial = mapped(engine, model, columns=True)
    assert partial.pending and partial.findings == [] and partial.node_severity == {}
    assert partial.columns is not None and not partial.columns.severity.any()
    assert not any(partial.columns.text["findings"]) and not any(partial.columns.tooltips)
    shown = _columns_state(partial.columns)  # what the window shows while the diagnosis runs
    done = diagnosed(partial, model, [], machine=[str(f) for f in files])

    assert not done.pending and done.findings
    assert done.to_json() == whole.to_json()
    assert done.node_severity == whole.node_severity and done.node_layers == whole.node_layers
    assert done.node_time_ms == whole.node_time_ms
    assert _columns_state(done.columns) == _columns_state(whole.columns)
    assert np.array_equal(done.columns.severity, whole.columns.severity)
    assert done.columns.severity.any() == any(f.layer_index is not None for f in done.findings)
    if model is not None:
        assert done.mapping is not None and done.layer_nodes is not None and any(done.node_layers.values())
    # the first part is as it was: no findings in it, its columns unchanged
    assert partial.findings == [] and partial.engine.findings == [] and _columns_state(partial.columns) == shown
    assert engine.to_json() == before  # the engine given is not changed either


def test_with_findings_of_base_columns_are_layer_columns() -> None:
    files = [RESNET / "resnet18_fp16.graph.json", RESNET / "resnet18_fp16.profile.json"]
    if not all(f.is_file() for f in files):
        pytest.skip("fixture absent")
    engine = analyze(load_engine([str(f) for f in files])).engine
    assert engine.findings
    base = base_columns(engine)
    full = with_findings(base, engine, engine.findings)
    assert _columns_state(full) == _columns_state(layer_columns(engine))
    assert full.text["findings"] != base.text["findings"] and full.num is base.num
    assert list(base.haystack) == list(full.haystack)  # made on its first read, the same texts


def test_the_diagnosis_makes_the_search_texts_once_for_both_parts() -> None:
    """A filter typed while the rules run reads texts the diagnosis's worker made first (not the
    window's thread), and the diagnosed columns share that one list."""
    from trtstudio.engine.table import _haystack

    files = [RESNET / "resnet18_fp16.graph.json", RESNET / "resnet18_fp16.profile.json"]
    if not all(f.is_file() for f in files):
        pytest.skip("fixture absent")
    partial = mapped(load_engine([str(f) for f in files]), None, columns=True)
    hay = partial.columns.haystack
    assert None in hay._cells  # not made for the table's first showing
    done = diagnosed(partial, None, [])
    assert None not in hay._cells  # made by the diagnosis
    assert done.columns.haystack is hay._cells  # shared, not made twice
    assert list(hay) == _haystack(partial.columns.text) and len(hay) == len(partial.engine.layers)
