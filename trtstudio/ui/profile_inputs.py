"""The Live profile panel's Inputs box: the model's inputs (read in a worker), their model shapes
(symbolic dims shortened) and the run shapes the shape plan chose, editable, with a note on what
was guessed. ``InputsBox.shapes`` reads the table back as the request's shapes."""

from __future__ import annotations

import re
import threading
import time
from functools import partial
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from trtstudio.backends.shapes import parse_dims
from trtstudio.errors import InputError
from trtstudio.profiling.session import BackendFactory
from trtstudio.tasks import TaskState
from trtstudio.ui.words import window_words
from trtstudio.ui.workers import WorkerHandle, run_in_thread


def _load_proto(path: str) -> Any:
    """The ModelProto of ``path`` without external weights; InputError for an unreadable file."""
    import onnx

    try:
        return onnx.load(path, load_external_data=False)
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except Exception as exc:  # noqa: BLE001 - onnx raises DecodeError and others
        raise InputError(path, f"not a readable ONNX model: {str(exc).splitlines()[0] if str(exc) else exc}") from None


def read_model_inputs(path: str, model: Any = None) -> list[dict[str, Any]]:
    """Input specs (name, dtype, shape with str/'?' for dynamic dims) of an ONNX model, without
    weights (``model``: its ModelProto when already loaded): the model's one view, backends.model_io."""
    from trtstudio.backends.model_io import OnnxModel

    return [t.spec() for t in OnnxModel(model if model is not None else _load_proto(path)).inputs]


SPECS_WAIT_S = 10.0  # how long the input specs wait for the window's layout to settle (see _specs_task)


def _specs_task(path: str, backend: str, factory: BackendFactory | None, proto: Any = None,
                wait_for: threading.Event | None = None) -> Any:
    def task(state: TaskState) -> list[dict[str, Any]]:
        if wait_for is not None:  # the window lays a big graph out: read the inputs after that
            end = time.monotonic() + SPECS_WAIT_S
            while not wait_for.wait(0.1) and time.monotonic() < end:
                state.check()
        if path.lower().endswith(".onnx"):
            from trtstudio.backends.shapes import plan_shapes

            # the window's own ModelProto when it has one: parsing a big model holds the GIL (a GUI
            # stall) for as long as it takes
            model_proto = proto if proto is not None else _load_proto(path)
            specs = read_model_inputs(path, model_proto)
            # the shape plan (metadata, graph-pinned dims, defaults) without the onnxruntime probe the
            # run itself may make: a probe builds a session, too heavy to do on every model opened
            plan = plan_shapes(model_proto, {}, probe=False) if specs else None
            by_name = {i.name: i for i in plan.inputs} if plan is not None else {}
            for spec in specs:
                planned = by_name.get(spec["name"])
                if planned is not None:
                    spec["run"] = list(planned.opt)
                    spec["sources"] = list(planned.sources)
            if specs and plan is not None:  # the plan's own words on each guessed size
                specs[0]["plan_warnings"] = list(plan.warnings) + list(plan.notes)
            return specs
        from trtstudio.backends.base import open_backend

        b = (factory or open_backend)(backend, path)
        try:
            return [dict(s) for s in b.input_specs()]
        finally:
            b.close()

    return task


MAX_SHAPE_ROWS = 256  # inputs listed in the shapes table (a row per input of a 25,000-input model stalls)


def _where(spec: dict[str, Any]) -> str:
    """``dim: source`` of each dynamic dim of an input spec that carries the plan's ``sources``."""
    return "; ".join(f"{d}: {src}" for d, src in zip(spec["shape"], spec.get("sources", []), strict=False)
                     if not isinstance(d, int))


def _run_dims(spec: dict[str, Any]) -> list[int]:
    return spec.get("run") or [d if isinstance(d, int) and d > 0 else 1 for d in spec["shape"]]


DIM_MAX = 8  # characters of a symbolic dim shown in the table; the tooltip has the whole shape


def _short_dim(d: Any) -> str:
    """A dim for the inputs table: ``p2o.DynamicDimension.0`` -> ``p2o…n.0`` (exporters' symbols run
    to 25 characters, four of them pushed the table past the dock's edge)."""
    text = str(d)
    return text if len(text) <= DIM_MAX else f"{text[:3]}\u2026{text[-3:]}"


def fill_shapes_table(table: QTableWidget, specs: list[dict[str, Any]]) -> dict[str, str]:
    """Rows input / model shape / run shape (editable; the plan's value, its sources as tooltip).
    Returns input -> the run shape text filled in."""
    planned: dict[str, str] = {}
    specs = specs[:MAX_SHAPE_ROWS]
    table.setRowCount(len(specs))
    for r, spec in enumerate(specs):
        dims = spec["shape"]
        model_text = "x".join(str(d) for d in dims) if dims else "scalar"
        planned[spec["name"]] = run_text = "x".join(map(str, _run_dims(spec)))
        name_item = QTableWidgetItem(spec["name"])
        name_item.setFlags(name_item.flags() & ~Qt.ItemFlag.ItemIsEditable)
        name_item.setToolTip(f"{spec['name']} ({spec['dtype']})")
        short = "x".join(_short_dim(d) for d in dims) if dims else "scalar"
        model_item = QTableWidgetItem(f"{short}  {spec['dtype']}")
        model_item.setFlags(model_item.flags() & ~Qt.ItemFlag.ItemIsEditable)
        model_item.setToolTip(f"{model_text}  {spec['dtype']}")  # the whole text, always
        run_item = QTableWidgetItem(run_text)
        if spec.get("sources"):
            run_item.setToolTip("where each size came from: " + _where(spec))
        for c, item in enumerate((name_item, model_item, run_item)):
            table.setItem(r, c, item)
    return planned


def shape_notes(specs: list[dict[str, Any]]) -> list[str]:
    """What was guessed: the shape plan's warnings and notes (sizes taken from metadata or the graph
    need none: the run-shape tooltip says where they came from); without a plan (an engine file), a
    line per input with dynamic dims."""
    if specs and "plan_warnings" in specs[0]:
        notes = list(specs[0]["plan_warnings"][:20])
    else:
        notes = [f"'{spec['name']}' has dynamic dims ({'x'.join(str(d) for d in spec['shape'])}); defaulted to "
                 f"{'x'.join(map(str, _run_dims(spec)))}" for spec in specs
                 if not all(isinstance(d, int) and d > 0 for d in spec["shape"])][:20]
    if len(specs) > MAX_SHAPE_ROWS:
        notes.append(f"{len(specs):,} inputs: the first {MAX_SHAPE_ROWS} are listed; the others run with "
                     "the planned shapes (set them with trtstudio profile --shapes)")
    return notes


class WrappedNote(QLabel):
    """A word-wrapped label whose long names break after a ``.``, ``,``, ``/`` or ``=`` followed by
    a letter (a zero-width space; numbers stay whole). An exporter's symbolic dims (``[p2o.DynamicDimension.0,3,p2o.DynamicDimension.1,...]``)
    are one word to Qt: the note ran past the right edge, and the Inputs box, sized for the
    unbroken word, cut its last lines off."""

    _BREAK_AFTER = re.compile(r"([.,/=])(?=[A-Za-z_])")

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        super().setText(self._BREAK_AFTER.sub("\\1\u200b", text))

    def plain_text(self) -> str:
        """The text as set, without the break opportunities."""
        return self.text().replace("\u200b", "")


class InputsBox(QGroupBox):
    """The Inputs box: the shapes table (input / model shape / run shape) and the note on guessed
    sizes. ``load`` reads a model's input specs in a worker and fills the table
    (``sig_ready(specs)``, or ``sig_error(exc)``); a later ``load`` wins over an earlier one."""

    sig_ready = Signal(object)  # the input specs, once shown
    sig_error = Signal(object)  # the exception that kept them from being read

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Inputs", parent)
        self.specs: list[dict[str, Any]] = []  # the model's input specs, as read (empty until then)
        self.loader: WorkerHandle | None = None  # the worker reading them
        self._path: str | None = None  # the model whose specs are wanted (results for others are dropped)
        self._planned: dict[str, str] = {}  # input -> the run shape the plan filled in (edits differ)
        v = QVBoxLayout(self)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["input", "model shape", "run shape"])
        # the input and the run shape (the one to edit) whole; the model shape takes what is left,
        # elided in the middle (its dtype at the end stays), the whole text on hover. All three
        # sized to their contents pushed the run shape past the dock's edge (PP-OCRv4 det at the
        # default window size: a scroll bar under "1x")
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.table.verticalHeader().setVisible(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # what is still too long: both ends kept
        self.table.setMaximumHeight(110)
        self.table.setSizeAdjustPolicy(QAbstractItemView.SizeAdjustPolicy.AdjustToContents)
        self.table.setToolTip("Edit 'run shape' as e.g. 1x3x224x224")
        v.addWidget(self.table)
        self.note = WrappedNote("")
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #a05000;")
        self.note.setVisible(False)
        # never squeezed below its wrapped height (a tall panel scrolls instead of cutting lines off)
        self.note.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        v.addWidget(self.note)
        self._notes: list[str] = []  # the plan's notes on the sizes it guessed
        self.table.itemChanged.connect(self._on_table_item_changed)

    def load(self, path: str, backend: str, factory: BackendFactory | None, proto: Any = None,
             wait_for: threading.Event | None = None) -> None:
        """Empty the table and read ``path``'s inputs in a worker (``backend`` opens a non-ONNX file;
        ``proto``: its ModelProto when parsed already; ``wait_for``: see ``_specs_task``)."""
        self._path = path
        self.table.setRowCount(0)
        self.specs = []
        if self.loader is not None:
            self.loader.request_stop()
        self.loader = run_in_thread(
            _specs_task(path, backend, factory, proto, wait_for),
            # a later load wins: results for a model no longer shown are dropped
            on_done=partial(self._on_specs_done, path=path),
            on_error=partial(self._on_specs_error, path=path),
            name="model-inputs",
        )

    def shutdown(self, timeout_ms: int) -> bool:
        """Stop the reading worker and join it; True when it ended in time (or there was none)."""
        return self.loader.stop(timeout_ms) if self.loader is not None else True

    def _on_specs_done(self, specs: object, path: str | None = None) -> None:
        if not isinstance(specs, list) or (path is not None and path != self._path):
            return
        self.specs = specs
        self.table.blockSignals(True)  # the plan's values are no edit
        try:
            self._planned = fill_shapes_table(self.table, specs)
        finally:
            self.table.blockSignals(False)
        self._notes = shape_notes(specs)
        self._show_notes()
        self.sig_ready.emit(specs)

    def _show_notes(self) -> None:
        """The note: the plan's words on each size it guessed, except for the inputs whose run shape
        was edited since (said as run instead)."""
        edited = {n: t for n, t in self._cells().items() if self._planned.get(n) != t}
        notes = [n for n in self._notes if not any(f"'{name}'" in n for name in edited)]
        notes += [f"'{name}' runs as {text or 'a scalar'} (edited; the plan chose {self._planned.get(name) or '-'})"
                  for name, text in edited.items()]
        guessed = any(n in self._notes for n in notes)
        self.note.setText(window_words("\n".join(notes)) + ("\nEdit 'run shape' to change." if guessed else ""))
        self.note.setVisible(bool(notes))

    def _cells(self) -> dict[str, str]:
        """input -> the run shape text in the table (as typed, lower case, trimmed)."""
        out: dict[str, str] = {}
        for r in range(self.table.rowCount()):
            name_item, shape_item = self.table.item(r, 0), self.table.item(r, 2)
            if name_item is not None and shape_item is not None:
                out[name_item.text()] = shape_item.text().strip().lower()
        return out

    def _on_table_item_changed(self, item: QTableWidgetItem) -> None:
        if item.column() == 2:
            self._show_notes()

    def set_run_shapes(self, shapes: dict[str, Any]) -> list[str]:
        """Put ``shapes`` (input -> dims) in the run shape cells of the inputs listed; returns the
        names it found no row for."""
        rows = {item.text(): r for r in range(self.table.rowCount()) if (item := self.table.item(r, 0)) is not None}
        missing = []
        for name, dims in shapes.items():
            r = rows.get(name)
            cell = self.table.item(r, 2) if r is not None else None
            if cell is None:
                missing.append(name)
                continue
            cell.setText("x".join(str(int(d)) for d in dims))
        return missing

    def _on_specs_error(self, exc: object, path: str | None = None) -> None:
        if path is None or path == self._path:
            self.sig_error.emit(exc)

    def shapes(self, edited_only: bool = False) -> dict[str, tuple[int, ...]]:
        """The run shapes in the table (``edited_only``: those the user changed from the plan);
        raises InputError naming the input for a malformed one."""
        out: dict[str, tuple[int, ...]] = {}
        for r in range(self.table.rowCount()):
            name_item, shape_item = self.table.item(r, 0), self.table.item(r, 2)
            if name_item is None or shape_item is None:
                continue
            text = shape_item.text().strip().lower()
            # the one shape-text rule (backends.shapes.text), as --shapes reads it; empty: a scalar
            dims = parse_dims(text, None, f"input '{name_item.text()}'") if text else ()
            if edited_only and self._planned.get(name_item.text()) == text:
                continue  # as planned: the run plans it the same way and records where it came from
            out[name_item.text()] = dims
        return out
