"""The shape plan: the input shapes (min/opt/max per input) every tool uses, and where each value came from.

:class:`ShapePlan` is what :func:`trtstudio.backends.shapes.plan_shapes` returns: one
:class:`InputShape` per model input with one source per dimension (the user, a data file, the model's
metadata, the graph, a same-named dim, a default), the warnings for guessed sizes, and the text and
JSON forms (``trtstudio.shapeplan/1``) the commands print. Qt-free; no onnx import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from trtstudio.backends.shapes.text import shape_text as _x

SCHEMA = "trtstudio.shapeplan/1"
Shape = tuple[int, ...]
Triple = tuple[Shape, Shape, Shape]

DEFAULT_BATCH = 1
DEFAULT_BATCH_MAX = 8
# Image H/W default: 256 = 2**8 keeps stride-32/64 detectors' feature maps whole (their Concats line up).
DEFAULT_SPATIAL = 256
# Other float dims (samples, frames, sequence): long enough for reflect pads, STFT windows, strided convs.
DEFAULT_OTHER = 512
# Other integer dims (token ids, sequence lengths of text models).
DEFAULT_INT = 128
DEFAULT_SIZES = {"spatial": DEFAULT_SPATIAL, "other": DEFAULT_OTHER, "int": DEFAULT_INT}


@dataclass
class InputShape:
    """One input's part of the plan: ``min``/``opt``/``max`` shapes and one source per dimension."""

    name: str
    dtype: str
    declared: list[int | str]  # the model's dims: int, symbol (str) or "?"
    min: Shape
    opt: Shape
    max: Shape
    sources: list[str]
    shape_tensor: bool = False
    values: Triple | None = None  # shape-tensor values (min, opt, max)
    values_source: str | None = None

    @property
    def dynamic(self) -> bool:
        return any(not isinstance(d, int) for d in self.declared)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "name": self.name,
            "dtype": self.dtype,
            "declared": self.declared,
            "min": list(self.min),
            "opt": list(self.opt),
            "max": list(self.max),
            "sources": self.sources,
        }
        if self.shape_tensor:
            doc["shape_tensor"] = True
        if self.values is not None:
            doc["values"] = [list(v) for v in self.values] if self.values else None
            doc["values_source"] = self.values_source
        return doc


@dataclass
class ShapePlan:
    """The shapes every input gets, where they came from, and warnings for defaults."""

    inputs: list[InputShape] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # guessed sizes that may well be wrong
    model: str | None = None
    notes: list[str] = field(default_factory=list)  # defaults that are usually right (batch 1)

    def get(self, name: str) -> InputShape | None:
        return next((i for i in self.inputs if i.name == name), None)

    @property
    def defaulted(self) -> list[tuple[str, int, str]]:
        """(input, axis, declared symbol) of every dimension that got a default value."""
        return [
            (i.name, k, str(i.declared[k])) for i in self.inputs for k, s in enumerate(i.sources) if s == "default"
        ]

    def opt_shapes(self) -> dict[str, Shape]:
        """The shape each input runs with (the profile's opt)."""
        return {i.name: i.opt for i in self.inputs}

    def profile(self) -> dict[str, Triple]:
        """``{name: (min, opt, max)}`` of the inputs with a dynamic dimension (what a profile must set)."""
        return {i.name: (i.min, i.opt, i.max) for i in self.inputs if i.dynamic}

    def shape_values(self) -> dict[str, Triple]:
        """``{name: (min, opt, max) values}`` of the shape-tensor inputs."""
        return {i.name: i.values for i in self.inputs if i.shape_tensor and i.values is not None}

    def flag(self, which: str = "opt") -> str:
        """The ``--shapes`` text that reproduces this plan (opt shapes, or min/max)."""
        parts = []
        for i in self.inputs:
            if not i.opt and i.values is None:
                continue  # a scalar: nothing to set
            if i.values is not None:
                vals = {"min": i.values[0], "opt": i.values[1], "max": i.values[2]}[which]
                parts.append(f"{i.name}:{_x(vals)}")
            else:
                parts.append(f"{i.name}:{_x(getattr(i, which))}")
        return ",".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "model": self.model,
            "inputs": [i.to_json() for i in self.inputs],
            "warnings": self.warnings,
            "notes": self.notes,
            "shapes_flag": self.flag(),
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ShapePlan:
        """The plan back from :meth:`to_json` (for text outputs made from a JSON document)."""
        inputs = []
        for d in doc.get("inputs", []):
            vals = d.get("values")
            inputs.append(InputShape(
                name=d["name"], dtype=d["dtype"], declared=list(d["declared"]), min=tuple(d["min"]),
                opt=tuple(d["opt"]), max=tuple(d["max"]), sources=list(d["sources"]),
                shape_tensor=bool(d.get("shape_tensor")),
                values=tuple(tuple(v) for v in vals) if vals else None,  # type: ignore[arg-type]
                values_source=d.get("values_source"),
            ))
        return cls(inputs, list(doc.get("warnings", [])), doc.get("model"), list(doc.get("notes", [])))

    def render_text(self) -> str:
        """Lines like ``images  1x3x640x640  (N: --shapes; H, W: metadata imgsz)``."""
        lines = []
        for i in self.inputs:
            shape = _x(i.opt)
            if i.min != i.opt or i.max != i.opt:
                shape = f"{shape} (min {_x(i.min)}, max {_x(i.max)})"
            groups: dict[str, list[str]] = {}
            for k, src in enumerate(i.sources):
                if src != "model":
                    groups.setdefault(src, []).append(str(i.declared[k]) if not isinstance(i.declared[k], int) else f"#{k}")
            where = "; ".join(f"{', '.join(dims)}: {src}" for src, dims in groups.items()) or "the model (fixed)"
            line = f"  {i.name:<20} {shape:<16} from {where}"
            if i.values is not None:
                line += f"  values {list(i.values[1])} ({i.values_source})"
            lines.append(line)
        return "\n".join(lines)

    def explain_failure(self, message: str) -> str | None:
        """When ``message`` (a build or run error) looks like a shape problem, a sentence naming the dims
        that were guessed and the flag that sets them; None otherwise."""
        if not looks_like_shape_error(message):
            return None
        guessed = self.defaulted
        if guessed:
            dims = ", ".join(f"{n}[{k}] ({sym})" for n, k, sym in guessed)
            return (
                f"this looks like a shape problem; these dims were guessed: {dims}. "
                f"Give the real sizes, e.g. --shapes {self.flag()}"
            )
        dyn = [i for i in self.inputs if i.dynamic]
        if dyn:
            return (
                "this looks like a shape problem with the shapes used: "
                + ", ".join(f"{i.name} {_x(i.opt)}" for i in dyn)
                + f"; try other sizes with --shapes (now {self.flag()})"
            )
        return None


_SHAPE_ERROR = re.compile(
    r"dimensions must be equal|must be equal|must match|mismatch|shape analysis|broadcast|\bshape error\b|Error Code 4|"
    r"no optimization profile|optimization profile|Reshape|reshape|Pad reflect|requires axis length|"
    r"getDimensions|InvalidArgument.*(shape|dimension)|Got invalid dimensions|Invalid input shape|"
    r"Incompatible dimensions|ShapeInferenceError|shape mismatch|out of range|volume|"
    r"The input tensor cannot be reshaped|axis .* dimensions|IShuffleLayer|IConcatenationLayer|"
    r"IElementWiseLayer|ISliceLayer|kernel size|larger than",
    re.I,
)


def looks_like_shape_error(message: str | None) -> bool:
    """True when an error text is a shape-analysis failure (TensorRT or ONNX Runtime wording)."""
    return bool(message) and bool(_SHAPE_ERROR.search(message or ""))



def explain_run_failure(plan: ShapePlan | None, exc: BaseException) -> str | None:
    """The run error with a sentence naming the guessed dims and the ``--shapes`` to set, when the
    error looks like a shape problem and ``plan`` is known; None otherwise."""
    if plan is None:
        return None
    text = f"{type(exc).__name__}: {exc}".strip()
    hint = plan.explain_failure(text)
    return f"{text} -- {hint}" if hint else None
