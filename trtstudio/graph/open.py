"""Opening an ONNX model as a document, in two stages, the way the window and the Python API do.

Stage one (:func:`open_document`): the model loaded without shape inference, its display graph
(laid out, constants folded into their consumers), its search columns, its summary, its file's
content hash and stamp. Stage two (:func:`infer_document_shapes`): shape inference, in this process
or, for a big model, in a child process (ONNX's inference holds the GIL for its whole run, which
would freeze a window's thread that long). The window's loader runs each stage in a worker and
shows the model between them; :func:`trtstudio.api.open_model` runs both in a row. No Qt here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trtstudio.graph.display import DisplayGraph
    from trtstudio.graph.model import Model

# Above this many nodes, or this file size, shape inference runs in a child process: ONNX's
# inference holds the GIL for its whole run, which would freeze the window's thread that long. It
# costs about 10 us a node, and 2-5 ms a megabyte of weights, which it copies in and out (ddddocr's
# 54 MB model of 102 nodes: 280 ms), several times that in the window while other threads
# allocate (PP-OCRv4 rec, 11 MB: a 150 ms stall). The child costs the shapes half a second.
ISOLATED_INFERENCE_NODES = 5000
ISOLATED_INFERENCE_BYTES = 2_000_000


@dataclass
class OpenedModel:
    """A model opened as a document: ``model`` (shapes inferred once :func:`infer_document_shapes`
    ran), its ``display`` graph (None when not asked for), ``summary`` (``trtstudio inspect``'s,
    made again by stage two), ``sha256`` of the file's content (None when unreadable) and
    ``stamp`` (``fileio.file_stamp`` when it was loaded)."""

    model: Model
    display: DisplayGraph | None
    summary: dict[str, Any]
    sha256: str | None
    stamp: tuple[int, int, int] | None
    shapes_inferred: bool = False


def open_document(path: str | os.PathLike[str], *, display: bool = True, search: bool = True) -> OpenedModel:
    """Stage one: load ``path`` without shape inference (InputError, one line, for anything that is
    not a usable model), with its display graph (``display``) and search columns (``search``: for
    the first keystroke in a search field, made while a window has nothing else to draw)."""
    from trtstudio.fileio import file_sha256, file_stamp
    from trtstudio.graph.model import load_model

    path = os.fspath(path)
    stamp = file_stamp(path)
    model = load_model(path, infer_shapes=False)  # shapes follow in stage two
    shown = None
    if display:
        from trtstudio.graph.display import build_display

        shown = build_display(model.graph)
    if search:
        model.graph.search_columns()
    return OpenedModel(model, shown, model.summary(), file_sha256(path), stamp)


def inference_isolated(model: Model) -> bool:
    """Whether ``model``'s shapes are inferred in a child process (its node count or file size)."""
    from trtstudio.fileio import file_stamp

    now = file_stamp(model.path)
    return len(model.graph.nodes) > ISOLATED_INFERENCE_NODES or (now is not None and now[1] > ISOLATED_INFERENCE_BYTES)


def infer_document_shapes(opened: OpenedModel, *, isolated: bool | None = None) -> OpenedModel:
    """Stage two: infer the model's shapes in place (``isolated``: in a child process; None: where
    :func:`inference_isolated` says) and make its summary again. A child reads the file again: where
    the file changed since stage one (its stamp), the shapes are not inferred and a warning says so
    (another model's shapes would be adopted)."""
    from trtstudio.fileio import file_stamp
    from trtstudio.graph.model import infer_shapes_later

    model = opened.model
    model.graph.search_columns()  # where stage one did not make them
    if isolated is None:
        isolated = inference_isolated(model)
    if isolated and opened.stamp is not None and file_stamp(model.path) != opened.stamp:
        model.warnings.append(f"{model.path} changed since it was opened: shapes not inferred (open it again)")
    else:
        infer_shapes_later(model, isolated=isolated)
        opened.shapes_inferred = True
    opened.summary = model.summary()
    return opened
