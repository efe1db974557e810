"""The layer table's columns, computed without Qt where the engine is loaded (a worker thread).

:func:`layer_columns` turns an engine's layers and their findings into column lists of display
strings, numpy sort keys and the per-row severity, precision and search text, once; the Qt table
model (``ui.layer_table``) only indexes them. For 50,000 layers this is the part that takes time,
so the window computes it in the worker that reads the engine (``engine.analysis.analyze``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat
from operator import attrgetter, is_not
from typing import Any

import numpy as np

from trtstudio.engine.model import SEVERITY_RANK, EngineInfo, Finding, Layer, TensorDesc

__all__ = ["NUMERIC_KEYS", "SEVERITY_RANK", "LayerColumns", "LazyText", "TensorText", "base_columns", "layer_columns",
           "with_findings"]
NUMERIC_KEYS = ("index", "stream", "total_ms", "average_ms", "median_ms", "percent")


@dataclass
class LayerColumns:
    """Per-layer columns in ``engine.layers`` order: ``text`` and ``tips`` by column key, ``num``
    (NaN unknown) by numeric key, the worst finding ``severity`` (0 none, 1 info .. 3 error) with its
    ``tooltips``, ``precision`` and the lower-case search ``haystack``."""

    text: dict[str, Sequence[str]] = field(default_factory=dict)  # lists, and LazyText for tensors and times
    tips: dict[str, Sequence[str]] = field(default_factory=dict)
    num: dict[str, np.ndarray] = field(default_factory=dict)
    severity: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    tooltips: list[str] = field(default_factory=list)
    precision: list[str] = field(default_factory=list)
    haystack: Sequence[str] = field(default_factory=list)  # a list, or made on first read (base_columns)
    has_times: bool = False
    types: list[str] = field(default_factory=list)  # distinct layer types, sorted (the filter's choices)
    precisions: list[str] = field(default_factory=list)  # distinct precisions, sorted
    time_by_type: list[tuple[str, float]] = field(default_factory=list)  # see time_by
    time_by_precision: list[tuple[str, float]] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.severity.size)


def _shape_text(t: TensorDesc) -> str:
    return "?" if t.shape is None else "x".join(str(d) for d in t.shape) or "scalar"


def format_text(t: TensorDesc) -> str:
    """A short form of TensorRT's format text: ``FP16 HWC8`` for "Channel major FP16 format where
    channel % 8 == 0", ``FP16 linear`` for "Row major linear FP16 format"; others as printed."""
    fmt = t.format or ""
    dtype = t.dtype or ""
    low = fmt.lower()
    if not fmt:
        return dtype or "?"
    if fmt.startswith("(") and ")" in fmt and dtype:  # TensorRT-RTX: "(NHWC) Channel major format"
        return f"{dtype} {fmt[1:fmt.index(')')]}"
    if low.startswith("row major linear") and dtype:
        return f"{dtype} linear"
    if low.startswith("channel major") and dtype:
        _, sep, rest = low.partition("channel % ")
        vec = rest.split(" ", 1)[0] if sep else ""
        return f"{dtype} HWC c%{vec}" if vec else f"{dtype} HWC"
    return fmt


def findings_by_layer(engine: EngineInfo, findings: Iterable[Finding] | None = None) -> dict[int, list[Finding]]:
    """Findings grouped by the position of their layer in ``engine.layers`` (by index, else by name)."""
    items = list(engine.findings if findings is None else findings)
    if not items:
        return {}  # no lookup tables over 300,000 layers for nothing (0.25 s)
    pos_of_index = {lay.index: i for i, lay in enumerate(engine.layers)}
    pos_of_name: dict[str, int] | None = None  # made when a finding names its layer without an index
    out: dict[int, list[Finding]] = {}
    for f in items:
        pos: int | None = pos_of_index.get(f.layer_index) if f.layer_index is not None else None
        if pos is None and f.layer is not None:
            if pos_of_name is None:
                pos_of_name = {}
                for i, lay in enumerate(engine.layers):
                    pos_of_name.setdefault(lay.name, i)
            pos = pos_of_name.get(f.layer)
        if pos is not None:
            out.setdefault(pos, []).append(f)
    return out


class LazyText(Sequence[str]):
    """A text column made when a cell is first read: cell ``i`` is ``cell_of(items[i])``. The table
    shows a screenful of 50,000 rows; made up front, the six tensor columns took 0.2 s of every
    engine's opening, the four time columns 50 ms. Reading it all (sorting by it, ``==``) makes the
    rest. Read from one thread at a time (the window's GUI thread once handed over)."""

    __slots__ = ("_cell_of", "_cells", "_items")

    def __init__(self, items: Sequence[Any], cell_of: Callable[[Any], str]) -> None:
        self._items = items
        self._cell_of = cell_of
        self._cells: list[str | None] = [None] * len(items)

    def __len__(self) -> int:
        return len(self._cells)

    def _cell(self, i: int) -> str:
        text = self._cells[i]
        if text is None:
            text = self._cells[i] = self._cell_of(self._items[i])
        return text

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._cell(j) for j in range(*i.indices(len(self._cells)))]
        return self._cell(i)

    def __iter__(self) -> Iterator[str]:
        if None in self._cells:
            self._cells = [self._cell(i) for i in range(len(self._cells))]
        return iter(self._cells)  # type: ignore[arg-type]  # every cell made

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (LazyText, list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class TensorText(LazyText):
    """A text column of the layers' tensors: for each layer, ``text_of(tensor)`` joined by ``sep``."""

    __slots__ = ()

    def __init__(self, tensor_lists: list[list[TensorDesc]], text_of: Callable[[TensorDesc], str], sep: str) -> None:
        def cell_of(ts: list[TensorDesc]) -> str:
            return text_of(ts[0]) if len(ts) == 1 else sep.join(map(text_of, ts))

        super().__init__(tensor_lists, cell_of)


def _ms_text(v: float) -> str:
    """A time cell: 4 decimals below 10, else 2; NaN blank."""
    return "" if v != v else f"{v:.4f}" if -10 < v < 10 else f"{v:.2f}"


def _percent_text(v: float) -> str:
    return "" if v != v else f"{v:.2f}"


def _stream_text(v: float) -> str:
    return "" if v != v else str(int(v))


def _string_columns(layers: list[Layer], precision_in: list[str], precision_out: list[str]) -> dict[str, Sequence[str]]:
    """The text columns, column by column (``precision_in`` and ``precision_out``: the layers' own,
    "" for none); each distinct tensor format and shape is described once (an engine has a few
    dozen formats and a few hundred shapes)."""
    formats: dict[tuple[str | None, str | None], str] = {}
    shapes: dict[str, str] = {}

    def format_of(t: TensorDesc) -> str:
        key = (t.format, t.dtype)
        text = formats.get(key)
        if text is None:
            text = formats[key] = format_text(t)
        return text

    def shape_of(t: TensorDesc) -> str:
        key = repr(t.shape)  # in C; tells 1 from "1"
        text = shapes.get(key)
        if text is None:
            text = shapes[key] = _shape_text(t)
        return text

    def named_format(t: TensorDesc) -> str:
        return f"{t.name}: {t.format or t.dtype or '?'}"

    ins = _fields(layers, "inputs")
    outs = _fields(layers, "outputs")
    return {
        "name": _fields(layers, "name"),
        "type": _texts(_fields(layers, "type")),
        "parameter_type": _texts(_fields(layers, "parameter_type")),
        "precision_in": precision_in,
        "precision_out": precision_out,
        "in_formats": TensorText(ins, format_of, "; "),
        "in_shapes": TensorText(ins, shape_of, "; "),
        "out_formats": TensorText(outs, format_of, "; "),
        "out_shapes": TensorText(outs, shape_of, "; "),
        "tactic": _texts(_fields(layers, "tactic")),
        "nodes": [", ".join(nodes) for nodes in _fields(layers, "onnx_nodes")],
        "in_formats_full": TensorText(ins, named_format, "\n"),
        "out_formats_full": TensorText(outs, named_format, "\n"),
    }


MAX_BARS = 16  # time_by: beyond this many groups the smallest are summed into "other"
UNKNOWN = "unknown"


def time_by(engine: EngineInfo | None, key: str) -> list[tuple[str, float]]:
    """Total layer time (ms) grouped by ``"type"`` or ``"precision"``, largest first; layers without
    a time are left out. Beyond :data:`MAX_BARS` groups the smallest are summed into ``other``."""
    layers = engine.layers if engine else []
    names = [lay.type for lay in layers] if key == "type" else [lay.precision for lay in layers]
    return _grouped_time(names, [None if lay.time is None else lay.time.total_ms for lay in layers])


def _grouped_time(names: Sequence[str | None], totals: Sequence[float | None],
                  column: tuple[np.ndarray, np.ndarray] | None = None) -> list[tuple[str, float]]:
    """:func:`time_by` of the layers with these group names and total times. Summed by numpy in
    layer order (``bincount`` adds each group's values one after the other, as a Python loop
    would, so the sums are the same to the last bit): the loop took 0.1 s at 300,000 layers.
    ``column``: the totals as a float array and a mask of those not None, where made already."""
    if not len(names):
        return []
    n = len(names)
    distinct = list(dict.fromkeys(names))  # in C, as the lookups below
    keys = list(dict.fromkeys(nm or UNKNOWN for nm in distinct))  # None and "" are one group
    key_of = {k: i for i, k in enumerate(keys)}
    remap = np.array([key_of[nm or UNKNOWN] for nm in distinct], dtype=np.int64)
    code = remap[np.fromiter(map({nm: i for i, nm in enumerate(distinct)}.__getitem__, names), dtype=np.int64, count=n)]
    # (``column``: the totals as floats, and where they are not None, made already)
    values, timed = column if column is not None else (
        _column(list(totals)), np.fromiter(map(is_not, totals, repeat(None)), dtype=bool, count=n))
    groups = np.bincount(code[timed], weights=values[timed], minlength=len(keys))
    present = np.bincount(code[timed], minlength=len(keys)) > 0
    codes = key_of
    sums = {name: float(groups[c]) for name, c in codes.items() if present[c]}
    items = sorted(sums.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(items) > MAX_BARS:
        rest = sum(v for _, v in items[MAX_BARS - 1:])
        items = items[: MAX_BARS - 1] + [("other", rest)]
    return items


def _column(values: list[float | None]) -> np.ndarray:
    """A float column, NaN for None (numpy converts None to NaN itself: one pass in C)."""
    return np.array(values, dtype=float)


def _fields(items: list[Any], name: str) -> list[Any]:
    """``item.name`` of each item, None where an item is None. A comprehension, not ``map()``: the
    window's thread gets the GIL between two items (one C call over 300,000 scattered objects held
    it 15-50 ms, a stall of the window beside the loader)."""
    get = attrgetter(name)
    return [None if x is None else get(x) for x in items]


def _texts(values: list[str | None]) -> list[str]:
    """``values`` with "" for None."""
    return [v or "" for v in values]


def layer_columns(engine: EngineInfo | None, findings: Iterable[Finding] | None = None) -> LayerColumns:
    """The table columns of ``engine`` (``findings``: the analysis's, else ``engine.findings``):
    :func:`base_columns` with :func:`with_findings`."""
    return with_findings(base_columns(engine), engine, engine.findings if engine and findings is None else findings)


def base_columns(engine: EngineInfo | None) -> LayerColumns:
    """The table columns of ``engine`` without its findings (severity 0, no findings text, no
    tooltips): what the window shows while the diagnosis is still running. Its ``haystack`` is
    made when first read (:class:`_Haystack`); :func:`with_findings` makes it in the worker."""
    layers: list[Layer] = engine.layers if engine else []
    n = len(layers)
    # Layer.precision_in, precision_out and precision, read in one pass over the tensors
    pairs = [lay.precisions() for lay in layers]
    precision_in = [pin or "" for pin, _ in pairs]
    precision_out = [pout or "" for _, pout in pairs]
    text = _string_columns(layers, precision_in, precision_out) if layers else {}
    times = _fields(layers, "time")
    totals = _fields(times, "total_ms")
    indices = _fields(layers, "index")
    nums: dict[str, np.ndarray] = {
        "index": _column(indices),
        "stream": _column(_fields(layers, "stream")),
        "total_ms": _column(totals),
        "average_ms": _column(_fields(times, "average_ms")),
        "median_ms": _column(_fields(times, "median_ms")),
        "percent": _column(_fields(times, "percent")),
    }
    total = np.nansum(nums["total_ms"]) if n else 0.0
    missing_pct = np.isnan(nums["percent"]) & ~np.isnan(nums["total_ms"])
    if total > 0 and missing_pct.any():
        nums["percent"][missing_pct] = nums["total_ms"][missing_pct] / total * 100.0
    cols = LayerColumns(has_times=bool(n) and not np.isnan(nums["total_ms"]).all())
    cols.severity = np.zeros(n, dtype=np.int8)
    cols.tooltips = [""] * n
    text["findings"] = [""] * n
    text["index"] = [str(i) for i in indices]
    text["stream"] = LazyText(nums["stream"].tolist(), _stream_text)
    for key in ("total_ms", "average_ms", "median_ms"):
        text[key] = LazyText(nums[key].tolist(), _ms_text)
    text["percent"] = LazyText(nums["percent"].tolist(), _percent_text)
    cols.tips = {k[:-5]: v for k, v in text.items() if k.endswith("_full")}
    cols.text = {k: v for k, v in text.items() if not k.endswith("_full")}
    cols.num = nums
    cols.precision = [pin or pout for pin, pout in zip(precision_in, precision_out, strict=True)]
    cols.types = sorted(set(text.get("type", ())) - {""})
    cols.precisions = sorted(set(cols.precision) - {""})
    timed = np.fromiter(map(is_not, totals, repeat(None)), dtype=bool, count=n)
    cols.time_by_type = _grouped_time(text.get("type", []), totals, (nums["total_ms"], timed))
    cols.time_by_precision = _grouped_time(cols.precision, totals, (nums["total_ms"], timed))
    cols.haystack = _Haystack(cols.text)
    return cols


def _haystack(text: dict[str, Sequence[str]]) -> list[str]:
    """Each row's lower-case search text: name, type, tactic and ONNX nodes."""
    return [f"{a}\n{b}\n{c}\n{d}".lower() for a, b, c, d in zip(
        text.get("name", ()), text.get("type", ()), text.get("tactic", ()), text.get("nodes", ()), strict=True)]


class _Haystack(LazyText):
    """The search texts of :func:`base_columns`, made all at once (a filter reads every row), 0.15 s
    at 300,000 layers, left out of the table's first showing: by the diagnosis's worker first
    (:meth:`made`, at its start), else on the first read (a filter typed before that, on the
    window's thread). Made once: whichever thread comes second waits for the first's list."""

    __slots__ = ("_lock", "_text")

    def __init__(self, text: dict[str, Sequence[str]]) -> None:
        self._text = text
        self._lock = threading.Lock()
        super().__init__(range(len(text.get("name", ()))), str)

    def made(self) -> list[str]:
        """Every row's search text (made now unless made already); the list is not changed after."""
        with self._lock:
            if self._cells and self._cells[0] is None:
                self._cells = _haystack(self._text)  # type: ignore[assignment]  # one assignment: all or nothing
            return self._cells  # type: ignore[return-value]

    def _cell(self, i: int) -> str:
        if self._cells and self._cells[0] is None:
            self.made()
        return super()._cell(i)


def with_findings(cols: LayerColumns, engine: EngineInfo | None, findings: Iterable[Finding] | None) -> LayerColumns:
    """``cols`` (of :func:`base_columns`) with the findings: the worst severity per row, the
    findings text and tooltips; a new LayerColumns sharing the other columns (``cols`` is left as
    it is: the window may be showing it), with its ``haystack`` made."""
    n = len(cols)
    by_layer = findings_by_layer(engine, findings) if engine else {}
    severity = np.zeros(n, dtype=np.int8)
    kinds = [""] * n
    tooltips = [""] * n
    for pos, fs in by_layer.items():
        kinds[pos] = ", ".join(dict.fromkeys(f.kind for f in fs))
        severity[pos] = max(SEVERITY_RANK.get(f.severity, 0) for f in fs)
        tooltips[pos] = "\n".join(f"[{f.severity}] {f.message}" + (f"\n  → {f.hint}" if f.hint else "")
                                   for f in fs)
    text = dict(cols.text)
    text["findings"] = kinds
    haystack = cols.haystack
    if isinstance(haystack, _Haystack):
        haystack = haystack.made()  # made once, shared (no cell of it changes after)
    return replace(cols, text=text, severity=severity, tooltips=tooltips, haystack=haystack)
