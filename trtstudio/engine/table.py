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
from itertools import compress, count, repeat
from operator import attrgetter, is_, is_not
from typing import Any

import numpy as np

from trtstudio.engine.model import SEVERITY_RANK, EngineInfo, Finding, Layer, LayerTime, TensorDesc

__all__ = ["MEMORY_KEYS", "NUMERIC_KEYS", "SEVERITY_RANK", "LayerColumns", "LazyText", "TensorText", "base_columns",
           "layer_columns", "layer_memory_bytes", "sum_known", "with_findings", "with_memory"]
NUMERIC_KEYS = ("index", "stream", "ms", "total_ms", "average_ms", "median_ms", "percent")
# The memory columns (bytes per layer, ``LayerColumns.memory``) and the key of ``engine.memory.layer_rows``
# each is read from: the layer's outputs and Weights + Bias (the layer information), its scratch
# (workspace) and persistent memory (a verbose log's "Layer: NAME Host Persistent: .." lines)
MEMORY_KEYS = {"activation_bytes": "activation_bytes", "weight_bytes": "weight_bytes", "scratch_bytes": "scratch",
               "device_persistent_bytes": "device_persistent", "host_persistent_bytes": "host_persistent"}
# What a layer's device memory is taken to be (the window's Colour by Memory): these summed where known
DEVICE_MEMORY_KEYS = ("activation_bytes", "weight_bytes", "scratch_bytes", "device_persistent_bytes")


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
    time_by_precision: list[tuple[str, float]] = field(default_factory=list)  # by compute precision (Layer.precision)
    # the detail of time_by_precision: per compute precision, its layers' time by the pair of
    # input and output precision ("INT8 -> FP16"; one precision where they agree), largest first
    # (made with the findings: with_findings)
    time_by_precision_pairs: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    # bytes per layer by MEMORY_KEYS key (NaN not recorded), from engine.memory.layer_rows (with_memory:
    # the diagnosis's; empty before), apart from ``num``: the table takes them with the findings
    memory: dict[str, np.ndarray] = field(default_factory=dict)

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

    def __init__(self, items: Sequence[Any] | np.ndarray, cell_of: Callable[[Any], str]) -> None:
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


def bytes_text(v: float) -> str:
    """A memory cell with three significant digits: ``512 B``, ``24 KiB``, ``1.15 MiB``, ``125 MiB``; NaN blank."""
    if v != v:
        return ""
    if abs(v) < 1024:
        return f"{int(v)} B"
    for unit, scale in (("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30)):
        if abs(v) < scale * 1024 or unit == "GiB":
            x = v / scale
            return f"{x:.0f} {unit}" if abs(x) >= 100 else f"{x:.3g} {unit}"
    return str(v)


MAX_BARS = 16  # time_by: beyond this many groups the smallest are summed into "other"
UNKNOWN = "unknown"


def time_by(engine: EngineInfo | None, key: str) -> list[tuple[str, float]]:
    """Layer time per inference (ms, :attr:`LayerTime.per_inference_ms`) grouped by ``"type"`` or ``"precision"`` (the compute precision,
    :attr:`Layer.precision`: an INT8 convolution with FP16 output is INT8), largest first; layers
    without a time are left out. Beyond :data:`MAX_BARS` groups the smallest are summed into ``other``.
    :func:`precision_pairs` gives each precision's detail."""
    layers = engine.layers if engine else []
    names = [lay.type for lay in layers] if key == "type" else [lay.precision for lay in layers]
    return _grouped_time(names, [None if lay.time is None else lay.time.per_inference_ms for lay in layers])


def pair_text(pin: str | None, pout: str | None) -> str:
    """``INT8 -> FP16`` for a layer whose output precision differs from its input's, else the one
    precision (``unknown`` for none)."""
    if pin and pout and pin != pout:
        return f"{pin} -> {pout}"
    return pin or pout or UNKNOWN


def precision_pairs(precision_in: Sequence[str | None], precision_out: Sequence[str | None],
                    totals: Sequence[float | None] | np.ndarray) -> dict[str, list[tuple[str, float]]]:
    """Per compute precision (the input's, else the output's), its layers' time per inference (ms) by
    :func:`pair_text` of their input and output precision, largest first (timed layers only)."""
    pairs = list(zip(precision_in, precision_out, strict=True))
    distinct, code = _codes(pairs)
    values = totals if isinstance(totals, np.ndarray) else _column(list(totals))
    timed = ~np.isnan(values)
    sums = np.bincount(code[timed], weights=values[timed], minlength=len(distinct))
    present = np.bincount(code[timed], minlength=len(distinct)) > 0
    out: dict[str, dict[str, float]] = {}
    for c, (pin, pout) in enumerate(distinct):
        if present[c]:
            group = out.setdefault(pin or pout or UNKNOWN, {})
            text = pair_text(pin, pout)
            group[text] = group.get(text, 0.0) + float(sums[c])
    return {k: sorted(v.items(), key=lambda kv: (-kv[1], kv[0])) for k, v in out.items()}


def precision_detail(engine: EngineInfo | None) -> list[dict[str, Any]]:
    """Where the time goes by compute precision, with the in -> out pairs as a detail: rows
    ``{"precision", "time_ms", "percent", "layers", "pairs": [{"pair", "time_ms", "layers"}]}``,
    largest first, of the timed layers (what a report's "time by precision" shows: a QAT engine's
    INT8 convolutions with FP16 output count as INT8)."""
    rows: dict[str, dict[str, Any]] = {}
    for lay in engine.layers if engine else []:
        t = lay.time.per_inference_ms if lay.time is not None else None
        if t is None:
            continue
        pin, pout = lay.precisions()
        row = rows.setdefault(pin or pout or UNKNOWN, {"time_ms": 0.0, "layers": 0, "pairs": {}})
        row["time_ms"] += t
        row["layers"] += 1
        pair = row["pairs"].setdefault(pair_text(pin, pout), [0.0, 0])
        pair[0] += t
        pair[1] += 1
    total = sum(r["time_ms"] for r in rows.values())
    out = [{"precision": k, "time_ms": r["time_ms"], "percent": 100.0 * r["time_ms"] / total if total > 0 else None,
            "layers": r["layers"],
            "pairs": [{"pair": p, "time_ms": v[0], "layers": v[1]}
                      for p, v in sorted(r["pairs"].items(), key=lambda kv: (-kv[1][0], kv[0]))]}
           for k, r in rows.items()]
    return sorted(out, key=lambda d: (-d["time_ms"], d["precision"]))


def _grouped_time(names: Sequence[str | None], totals: Sequence[float | None]) -> list[tuple[str, float]]:
    """:func:`time_by` of the layers with these group names and total times."""
    if not len(names):
        return []
    n = len(names)
    distinct, code = _codes(names)
    return _group_sums(distinct, code, (_column(list(totals)),
                                        np.fromiter(map(is_not, totals, repeat(None)), dtype=bool, count=n)))


def _group_sums(distinct: list[str | None], code: np.ndarray, column: tuple[np.ndarray, np.ndarray]) -> list[tuple[str, float]]:
    """:func:`time_by` of layers in groups: ``distinct`` names, each layer's position among them
    (``code``, of :func:`_codes`), and their total times as floats with where they are not None
    (``column``). Summed by numpy in layer order (``bincount`` adds each group's values one after
    the other, as a Python loop would, so the sums are the same to the last bit): the loop took
    0.1 s at 300,000 layers."""
    values, timed = column
    keys = list(dict.fromkeys(nm or UNKNOWN for nm in distinct))  # None and "" are one group
    key_of = {k: i for i, k in enumerate(keys)}
    remap = np.array([key_of[nm or UNKNOWN] for nm in distinct], dtype=np.int64)
    code = remap[code]
    groups = np.bincount(code[timed], weights=values[timed], minlength=len(keys))
    present = np.bincount(code[timed], minlength=len(keys)) > 0
    sums = {name: float(groups[c]) for name, c in key_of.items() if present[c]}
    items = sorted(sums.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(items) > MAX_BARS:
        rest = sum(v for _, v in items[MAX_BARS - 1:])
        items = items[: MAX_BARS - 1] + [("other", rest)]
    return items


def _column(values: list[float | None]) -> np.ndarray:
    """A float column, NaN for None (numpy converts None to NaN itself: one pass in C)."""
    return np.array(values, dtype=float)


STEP = 4_096  # layers read by one C loop (well under a millisecond): the window's thread gets the GIL between two
_TIME_KEYS = ("total_ms", "average_ms", "median_ms", "percent", "count")


def _first_dtype(tensors: list[TensorDesc]) -> str:
    """The first set dtype of ``tensors``, "" for none (:meth:`Layer.precisions`' loop)."""
    for t in tensors:
        if t.dtype:
            return t.dtype
    return ""


def _texts(get: Callable[[Any], str | None], items: list[Any]) -> list[str]:
    """``get(x) or ""`` of each of ``items`` (None found by identity, in C: the strings themselves
    are not read again)."""
    values = list(map(get, items))
    for i in compress(range(len(values)), map(is_, values, repeat(None))):
        values[i] = ""
    return values  # type: ignore[return-value]  # no None left


def _floats(get: Callable[[Any], Any], items: list[Any]) -> np.ndarray:
    """``get(x)`` of each of ``items`` as floats, NaN for None (as :func:`_column`), converted by
    numpy as they are read, without a list of them first."""
    try:
        return np.fromiter(map(get, items), dtype=float, count=len(items))
    except TypeError:  # a numpy whose fromiter refuses None (its array makes it NaN)
        return _column(list(map(get, items)))


class _Codes:
    """Each name's number among the distinct names given so far, in the order they first came:
    ``add`` gives the codes of some names (one dictionary lookup each, in C), ``names`` the
    distinct names and ``dense`` the codes (``add``'s) as their positions among them."""

    __slots__ = ("_first", "_numbers")

    def __init__(self) -> None:
        self._first: dict[Any, int] = {}  # name -> the number given with its first occurrence
        self._numbers = count()

    def add(self, names: list[Any]) -> np.ndarray:
        return np.fromiter(map(self._first.setdefault, names, self._numbers), dtype=np.int64, count=len(names))

    def names(self) -> list[Any]:
        return list(self._first)

    def dense(self, code: np.ndarray) -> np.ndarray:
        remap = np.zeros(next(self._numbers), dtype=np.int64)
        remap[np.fromiter(self._first.values(), dtype=np.int64, count=len(self._first))] = np.arange(len(self._first))
        return remap[code]


def _codes(names: Sequence[Any]) -> tuple[list[Any], np.ndarray]:
    """The distinct ``names`` in the order they first come, and each name's position among them."""
    codes = _Codes()
    n = len(names)
    code = np.empty(n, dtype=np.int64)
    for a in range(0, n, STEP):
        code[a:a + STEP] = codes.add(list(names[a:a + STEP]))
    return codes.names(), codes.dense(code)


def layer_columns(engine: EngineInfo | None, findings: Iterable[Finding] | None = None) -> LayerColumns:
    """The table columns of ``engine`` (``findings``: the analysis's, else ``engine.findings``):
    :func:`base_columns` with :func:`with_findings`."""
    return with_findings(base_columns(engine), engine, engine.findings if engine and findings is None else findings)


def base_columns(engine: EngineInfo | None) -> LayerColumns:
    """The table columns of ``engine`` without its findings (severity 0, no findings text, no
    tooltips): what the window shows while the diagnosis is still running. Its ``haystack`` is
    made when first read (:class:`_Haystack`); :func:`with_findings` makes it in the worker.

    The layers are read once (:func:`_read_layers`); each distinct tensor format and shape is
    described once (:func:`_tensor_columns`: an engine has a few dozen formats and a few hundred
    shapes), each tensor's cell when it is first shown."""
    layers: list[Layer] = engine.layers if engine else []
    n = len(layers)
    r = _read_layers(layers)
    nums = r.nums
    total = np.nansum(nums["ms"]) if n else 0.0
    missing_pct = np.isnan(nums["percent"]) & ~np.isnan(nums["ms"])
    if total > 0 and missing_pct.any():
        nums["percent"][missing_pct] = nums["ms"][missing_pct] / total * 100.0

    cols = LayerColumns(has_times=bool(n) and not np.isnan(nums["ms"]).all())
    cols.severity = np.zeros(n, dtype=np.int8)
    cols.tooltips = [""] * n
    tensor_text, tensor_tips = _tensor_columns(r.ins, r.outs)
    cols.text = {
        "name": r.names,
        "type": r.types,
        "parameter_type": r.parameter_types,
        "precision_in": r.precision_in,
        "precision_out": r.precision_out,
        **tensor_text,
        "tactic": r.tactics,
        "nodes": r.nodes,
        "findings": [""] * n,
        "index": LazyText(r.indices, str),
        # the number columns' cells from their arrays' numbers (a list of them: 3-5 ms a column)
        "stream": LazyText(nums["stream"], _stream_text),
        "ms": LazyText(nums["ms"], _ms_text),
        "total_ms": LazyText(nums["total_ms"], _ms_text),
        "average_ms": LazyText(nums["average_ms"], _ms_text),
        "median_ms": LazyText(nums["median_ms"], _ms_text),
        "percent": LazyText(nums["percent"], _percent_text),
    }
    cols.tips = tensor_tips
    if not n:  # no layers: the findings, index, stream and time columns only (as the table model has always had)
        cols.text = {k: v for k, v in cols.text.items() if k == "findings" or k in NUMERIC_KEYS}
        cols.tips = {}
    cols.num = nums
    cols.precision = r.precision
    cols.types = sorted(set(r.type_codes.names()) - {""})
    cols.precisions = sorted(set(r.precision_codes.names()) - {""})
    column = (nums["ms"], r.timed)
    cols.time_by_type = _group_sums(r.type_codes.names(), r.type_codes.dense(r.type_code), column) if n else []
    cols.time_by_precision = _group_sums(r.precision_codes.names(), r.precision_codes.dense(r.precision_code),
                                         column) if n else []
    cols.haystack = _Haystack(cols.text)
    return cols


@dataclass(slots=True)
class _Read:
    """What :func:`_read_layers` read of the layers: their fields as lists ("" for None), their
    numbers as arrays (NaN for None), their types and precisions as codes."""

    names: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    parameter_types: list[str] = field(default_factory=list)
    tactics: list[str] = field(default_factory=list)
    ins: list[list[TensorDesc]] = field(default_factory=list)
    outs: list[list[TensorDesc]] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    indices: list[int] = field(default_factory=list)
    precision_in: list[str] = field(default_factory=list)  # Layer.precision_in, "" for None
    precision_out: list[str] = field(default_factory=list)
    precision: list[str] = field(default_factory=list)  # Layer.precision, "" for None
    nums: dict[str, np.ndarray] = field(default_factory=dict)
    timed: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))  # a time per inference known
    type_codes: _Codes = field(default_factory=lambda: _Codes())
    precision_codes: _Codes = field(default_factory=lambda: _Codes())
    type_code: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    precision_code: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))


def _read_layers(layers: list[Layer]) -> _Read:
    """The layers' fields, read :data:`STEP` layers at a time, each field of a step's layers by a
    C loop while they are in the CPU's cache; the precision in and out from the step's tensor
    lists then. What the time goes on is the memory: each distinct object read is a cache miss (a
    layer's name, type, tactic, its lists and tensors), so each is read as few times as can be."""
    n = len(layers)
    r = _Read(nums={key: np.empty(n) for key in (*NUMERIC_KEYS, "count")}, timed=np.empty(n, dtype=bool),
              type_code=np.empty(n, dtype=np.int64), precision_code=np.empty(n, dtype=np.int64))
    nums = r.nums
    for a in range(0, n, STEP):
        step = layers[a:a + STEP]
        b = a + len(step)
        r.names += map(_NAME, step)
        step_types = _texts(_TYPE, step)
        r.types += step_types
        r.type_code[a:b] = r.type_codes.add(step_types)
        r.parameter_types += _texts(_PARAMETER_TYPE, step)
        r.tactics += _texts(_TACTIC, step)
        r.nodes += map(", ".join, map(_ONNX_NODES, step))
        step_indices = list(map(_INDEX, step))
        r.indices += step_indices
        nums["index"][a:b] = _column(step_indices)  # type: ignore[arg-type]
        nums["stream"][a:b] = _floats(_STREAM, step)
        _time_columns(list(map(_TIME, step)), nums, r.timed, a, b)
        step_ins = list(map(_INPUTS, step))
        step_outs = list(map(_OUTPUTS, step))
        r.ins += step_ins
        r.outs += step_outs
        step_in = [(ts[0].dtype or _first_dtype(ts)) if ts else "" for ts in step_ins]
        step_out = [(ts[0].dtype or _first_dtype(ts)) if ts else "" for ts in step_outs]
        r.precision_in += step_in
        r.precision_out += step_out
        step_precision = [pin or pout for pin, pout in zip(step_in, step_out, strict=True)]
        r.precision += step_precision
        r.precision_code[a:b] = r.precision_codes.add(step_precision)
    return r


def _tensor_columns(ins: list[list[TensorDesc]],
                    outs: list[list[TensorDesc]]) -> tuple[dict[str, Sequence[str]], dict[str, Sequence[str]]]:
    """The tensor text columns (formats and shapes of the inputs and outputs) and their tips, each
    cell made when first read, each distinct format and shape described once."""
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

    text: dict[str, Sequence[str]] = {
        "in_formats": TensorText(ins, format_of, "; "),
        "in_shapes": TensorText(ins, shape_of, "; "),
        "out_formats": TensorText(outs, format_of, "; "),
        "out_shapes": TensorText(outs, shape_of, "; "),
    }
    tips: dict[str, Sequence[str]] = {"in_formats": TensorText(ins, named_format, "\n"),
                                      "out_formats": TensorText(outs, named_format, "\n")}
    return text, tips


_NAME, _TYPE, _PARAMETER_TYPE, _TACTIC = attrgetter("name"), attrgetter("type"), attrgetter("parameter_type"), \
    attrgetter("tactic")
_INPUTS, _OUTPUTS, _ONNX_NODES = attrgetter("inputs"), attrgetter("outputs"), attrgetter("onnx_nodes")
_INDEX, _STREAM, _TIME = attrgetter("index"), attrgetter("stream"), attrgetter("time")
_TIME_FIELDS = tuple((key, attrgetter(key)) for key in _TIME_KEYS)


def _time_columns(times: list[LayerTime | None], nums: dict[str, np.ndarray], timed: np.ndarray, a: int, b: int) -> None:
    """Rows ``a:b`` of the time columns in ``nums`` (NaN where a layer has no time or its time no
    such field), of ``ms`` (the time per inference: :attr:`LayerTime.per_inference_ms`, median,
    else average, else total over count) and of ``timed`` (a time per inference known) from those
    layers' ``times``."""
    given = np.fromiter(map(is_not, times, repeat(None)), dtype=bool, count=b - a)
    if not given.any():
        for key in (*_TIME_KEYS, "ms"):
            nums[key][a:b] = np.nan
        timed[a:b] = False
        return
    every = bool(given.all())
    with_time = times if every else list(compress(times, given.tolist()))
    for key, get in _TIME_FIELDS:
        values = _floats(get, with_time)
        if every:
            nums[key][a:b] = values
        else:
            nums[key][a:b] = np.nan
            nums[key][a:b][given] = values
    med, avg, tot, cnt = (nums[k][a:b] for k in ("median_ms", "average_ms", "total_ms", "count"))
    with np.errstate(divide="ignore", invalid="ignore"):
        per_run = np.where(cnt > 0, tot / cnt, np.nan)
    ms = np.where(np.isnan(med), np.where(np.isnan(avg), per_run, avg), med)
    nums["ms"][a:b] = ms
    timed[a:b] = ~np.isnan(ms)


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
    pairs = cols.time_by_precision_pairs
    if not pairs and cols.has_times and "precision_in" in cols.text:  # here, off the table's first showing
        pairs = precision_pairs(cols.text["precision_in"], cols.text["precision_out"], cols.num["ms"])
    return replace(cols, text=text, severity=severity, tooltips=tooltips, haystack=haystack,
                   time_by_precision_pairs=pairs)


def with_memory(cols: LayerColumns, rows: Sequence[dict[str, Any]], log: str = "") -> LayerColumns:
    """``cols`` with the memory columns (:data:`MEMORY_KEYS`) of ``rows``
    (``engine.memory.layer_rows`` of the same layers: its first ``len(cols)`` rows are theirs, in
    order), each cell made when first shown; a new LayerColumns sharing the rest. ``log``: the
    file the per-layer log lines came from (their tips name it with the line)."""
    n = len(cols)
    mine = list(rows[:n])
    if len(mine) < n:
        mine += [{}] * (n - len(mine))
    memory: dict[str, np.ndarray] = {}
    text = dict(cols.text)
    tips = dict(cols.tips)
    where = [f"{log.rsplit('/', 1)[-1] or 'log'}:{str(r.get('source') or '').rsplit(':', 1)[-1]}" for r in mine]
    for key, row_key in MEMORY_KEYS.items():
        values = memory[key] = _column([r.get(row_key) for r in mine])
        text[key] = LazyText(values, bytes_text)
        tips[key] = LazyText(np.arange(n), _memory_tip(values, row_key, where))
    return replace(cols, text=text, tips=tips, memory=memory)


def _memory_tip(values: np.ndarray, row_key: str, where: list[str]) -> Callable[[int], str]:
    """A memory column's tooltip of row ``i``: its exact bytes and where they came from."""
    what = {"activation_bytes": "the layer's outputs", "weight_bytes": "Weights + Bias of the layer information"}

    def tip(i: int) -> str:
        v = values[i]
        if v != v:
            return ""
        return f"{int(v):,} bytes: {what.get(row_key) or where[i]}"

    return tip


def layer_memory_bytes(cols: LayerColumns) -> np.ndarray | None:
    """Each layer's device memory as the files give it: its :data:`DEVICE_MEMORY_KEYS` summed where
    known (NaN where none is); None without memory columns."""
    arrays = [cols.memory[k] for k in DEVICE_MEMORY_KEYS if k in cols.memory]
    return sum_known(arrays) if arrays else None


def sum_known(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """The element-wise sum of ``arrays`` over their known (not NaN) values; NaN where none is known."""
    stack = np.vstack(arrays)
    known = ~np.isnan(stack)
    total = np.where(known, stack, 0.0).sum(axis=0)
    total[~known.any(axis=0)] = np.nan
    return total
