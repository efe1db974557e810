"""Opening a model as a document (``graph.open``): the window's loader and ``trtstudio.api.open_model``
go through the same two stages, and the result equals a plain ``load_model``."""

from __future__ import annotations

import hashlib
from pathlib import Path

from conftest import SAMPLE

from trtstudio.graph.model import load_model
from trtstudio.graph.open import infer_document_shapes, open_document


def _shapes(model: object) -> dict[str, object]:
    return {n: (t.dtype, t.shape) for n, t in model.graph.tensors.items()}  # type: ignore[attr-defined]


def test_two_stages_give_what_load_model_gives(tmp_path: Path) -> None:
    import onnx

    proto = onnx.load(SAMPLE)
    del proto.graph.value_info[:]  # the sample ships its shapes: without them, inference has work to do
    path = tmp_path / SAMPLE.name
    onnx.save(proto, path)
    opened = open_document(path)
    plain = load_model(path)
    assert opened.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert opened.display is not None and int((opened.display.kind == 1).sum()) == len(opened.model.graph.nodes)
    assert not opened.shapes_inferred and _shapes(opened.model) != _shapes(plain)  # stage one: no shapes yet
    infer_document_shapes(opened)
    assert opened.shapes_inferred and _shapes(opened.model) == _shapes(plain)
    assert opened.summary == plain.summary()


def test_api_open_model_opens_through_the_core(tmp_path: Path) -> None:
    import trtstudio

    m = trtstudio.open_model(SAMPLE)
    plain = load_model(SAMPLE)
    assert m.summary() == plain.summary() and _shapes(m.model) == _shapes(plain)
