"""Parity of trtstudio's findings with TREx's linters, on every TREx engine in the fixtures.

TREx (NVIDIA/TensorRT tools/experimental/trt-engine-explorer, trex/lint.py) lints an engine's
layer JSON with ``ConvLinter`` (tensor cores, INT8 in / float out, channel alignment),
``ReformatLinter`` (type-converting reformats) and ``QDQLinter`` (unfused quantize/dequantize);
its ``SliceLinter`` is ``ReformatLinter``'s rule on Slice layers. (The issue also names a
``SlowLayersLinter``: TREx's lint.py has none.) The rules are stated below in our own words as
predicates over one layer of the layer JSON (:data:`RULES`), TREx's code is not imported or copied.

A TREx flag is one (rule, layer). Some of TREx's flags are wrong by its own help texts, and are
listed apart (``false``), each with its reason (:data:`NOT_TRUE`):

- a "not accelerated" convolution whose kernel name shows tensor-core instructions TREx's pattern
  does not know (``tensor8x8x16``, ``h16816``, ...): it is accelerated;
- a "not accelerated" depthwise convolution (groups == input channels): tensor cores do not run
  depthwise convolutions, so there is nothing to accelerate (TREx's help: "TensorCores accelerate
  large Convolution and GEMM operations");
- a "not accelerated" convolution with no kernel name at all: TREx reads the missing name as
  "TensorRT" and flags it; nothing in the file says what the kernel does;
- an INT8 convolution "with float outputs" whose output is the engine's own float output (a
  classifier's logits, through no-ops): there is nothing after it to quantize.

The others are the true flags. One is matched when trtstudio gives a finding of a kind that names
the same hazard (:data:`KINDS`) on the same layer, at any severity. Parity = matched / true.

    python benchmarks/trex_lint_parity.py [FIXTURES_DIR]

prints JSON: per engine the true flags expected, matched, missing (rule and layer), and TREx's
false flags; then the totals. ``tests/test_trex_lint_parity.py`` holds the totals to >= 97 %.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "trt-real"
TREX = "NVIDIA_TensorRT_trex"
SCHEMA = "trtstudio.bench.trex_lint_parity/1"

# The data type a layer JSON's "Format/Datatype" text names, as TREx's short format names read it
# (their first word): Int8, FP32, FP16, BF16, FP8, INT32, ... None for a text that names none.
_DTYPE_WORDS = (("int8", "Int8"), ("bfloat16", "BF16"), ("fp16", "FP16"), ("half", "FP16"), ("fp32", "FP32"),
                ("float", "FP32"), ("fp8", "FP8"), ("int32", "INT32"), ("int64", "INT64"), ("uint8", "UInt8"),
                ("bool", "Bool"))


def dtype(tensor: dict[str, Any]) -> str | None:
    """The data type of one tensor of the layer JSON."""
    words = str(tensor.get("Format/Datatype", "")).lower().replace(".", "").split()
    for word in words:
        for key, name in _DTYPE_WORDS:
            if word == key:
                return name
    return None


def trex_type(layer: dict[str, Any]) -> str:
    """TREx's ``type`` of a layer: its ParameterType, else its LayerType."""
    return str(layer.get("ParameterType") or layer.get("LayerType") or "")


def precision(layer: dict[str, Any]) -> str | None:
    """TREx's layer precision: the data type of its first input (INT8 for Int8)."""
    ins = layer.get("Inputs") or []
    d = dtype(ins[0]) if ins else None
    return "INT8" if d == "Int8" else d


def _io(layer: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    ins, outs = layer.get("Inputs") or [], layer.get("Outputs") or []
    return (ins[0], outs[0]) if ins and outs else None


# TREx's pattern for a tensor-core kernel name: any of these substrings
_TREX_TC = re.compile(r"imma|hmma|xmma|i88|884")


def _conv_not_accelerated(layer: dict[str, Any]) -> bool:
    """A convolution not in FP32 whose kernel name (a missing one counts as "TensorRT") matches
    none of TREx's tensor-core substrings."""
    tactic = str(layer.get("TacticName") or "TensorRT")
    return trex_type(layer) == "Convolution" and precision(layer) != "FP32" and not _TREX_TC.search(tactic)


def _conv_int8_in_float_out(layer: dict[str, Any]) -> bool:
    """An INT8 convolution reading Int8 and writing anything else."""
    io = _io(layer)
    return (trex_type(layer) == "Convolution" and precision(layer) == "INT8" and io is not None
            and dtype(io[0]) == "Int8" and dtype(io[1]) != "Int8")


def _conv_unaligned(layer: dict[str, Any]) -> bool:
    """A 4-D convolution whose input channels C or output channels K are not a multiple of 16
    (INT8) or 8 (any other precision, FP32 included)."""
    io = _io(layer)
    if trex_type(layer) != "Convolution" or io is None:
        return False
    ishape, oshape = io[0].get("Dimensions") or [], io[1].get("Dimensions") or []
    if len(ishape) != 4 or len(oshape) != 4:
        return False
    need = 16 if precision(layer) == "INT8" else 8
    return bool(ishape[1] % need or oshape[1] % need)


def _converts_type(kind: str) -> Callable[[dict[str, Any]], bool]:
    def rule(layer: dict[str, Any]) -> bool:
        io = _io(layer)
        return trex_type(layer) == kind and io is not None and dtype(io[0]) != dtype(io[1])
    rule.__doc__ = f"A {kind} layer whose first input and first output have different data types."
    return rule


def _unfused_qdq(layer: dict[str, Any]) -> bool:
    """A Scale layer with Int8 on exactly one side of it (a quantize or a dequantize left alone)."""
    io = _io(layer)
    return trex_type(layer) == "Scale" and io is not None and (dtype(io[0]) == "Int8") != (dtype(io[1]) == "Int8")


RULES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "ConvLinter.tensor_cores": _conv_not_accelerated,
    "ConvLinter.mixed_precision": _conv_int8_in_float_out,
    "ConvLinter.alignment": _conv_unaligned,
    "ReformatLinter.type_conversion": _converts_type("Reformat"),
    "SliceLinter.type_conversion": _converts_type("Slice"),
    "QDQLinter.unfused": _unfused_qdq,
}

# trtstudio finding kinds that name each rule's hazard (an unfused Q/DQ that TensorRT lists as a
# Reformat of origin QDQ is a precision_fallback finding, "Q/DQ not fused"; the quantize of the
# engine's float input is a reformat finding at the boundary, as a Reformat or a Scale layer)
KINDS: dict[str, frozenset[str]] = {
    "ConvLinter.tensor_cores": frozenset({"no_tensor_cores"}),
    "ConvLinter.mixed_precision": frozenset({"precision_fallback"}),
    "ConvLinter.alignment": frozenset({"unaligned_channels"}),
    "ReformatLinter.type_conversion": frozenset({"reformat", "precision_fallback"}),
    "SliceLinter.type_conversion": frozenset({"reformat", "precision_fallback"}),
    "QDQLinter.unfused": frozenset({"precision_fallback", "reformat"}),  # the input's quantize: a reformat
}

# kernel-name marks of tensor-core instructions that TREx's pattern misses (Turing/Ampere MMA shapes)
_TC_MARKS = re.compile(r"tensor\d+x\d+x\d+|h16816|h1688|s16816|s1688|i8816|i16832|bf16816")
_MOVES_DATA = frozenset(("NoOp", "Reformat", "Shuffle"))  # layer types that only move data


class Plan:
    """What the rules' exceptions need of the whole layer JSON: the engine's outputs, each
    tensor's readers."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.layers = [lay for lay in doc.get("Layers") or [] if isinstance(lay, dict)]
        self.bindings = {str(b) for b in doc.get("Bindings") or []}
        self.readers: dict[str, list[dict[str, Any]]] = {}
        for lay in self.layers:
            for t in lay.get("Inputs") or []:
                self.readers.setdefault(str(t.get("Name")), []).append(lay)

    def feeds_output(self, layer: dict[str, Any], depth: int = 4) -> bool:
        """Every output of ``layer`` is an engine output, directly or through layers that only move data."""
        outs = layer.get("Outputs") or []
        return bool(outs) and all(
            str(t.get("Name")) in self.bindings or (
                depth > 0 and bool(self.readers.get(str(t.get("Name"))))
                and all(trex_type(r) in _MOVES_DATA and self.feeds_output(r, depth - 1)
                        for r in self.readers[str(t.get("Name"))]))
            for t in outs)


def _depthwise(layer: dict[str, Any]) -> bool:
    io = _io(layer)
    g = layer.get("Groups")
    c = (io[0].get("Dimensions") or [0, 0])[1] if io else None
    return "depthwise" in str(layer.get("LayerType", "")).lower() or (isinstance(g, int) and g > 1 and g == c)


def _not_accelerated_why(layer: dict[str, Any], plan: Plan) -> str | None:
    tactic = str(layer.get("TacticName") or "")
    if _TC_MARKS.search(tactic):
        return "kernel name shows tensor-core instructions"
    if _depthwise(layer):
        return "depthwise convolution: tensor cores do not run it"
    if not tactic:
        return "no kernel name in the file"
    return None


def _float_out_why(layer: dict[str, Any], plan: Plan) -> str | None:
    if plan.feeds_output(layer):
        return "writes the engine's float output (a classifier's logits): nothing after it to quantize"
    return None


# rule -> why one of its flags is not a true one (None: it is)
NOT_TRUE: dict[str, Callable[[dict[str, Any], Plan], str | None]] = {
    "ConvLinter.tensor_cores": _not_accelerated_why,
    "ConvLinter.mixed_precision": _float_out_why,
}


def trex_flags(doc: dict[str, Any]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """TREx's flags on a layer JSON (Constant and NoOp layers dropped, as TREx does): the true
    ones and the false ones (with ``why``)."""
    plan = Plan(doc)
    true: list[dict[str, str]] = []
    false: list[dict[str, str]] = []
    for layer in plan.layers:
        if layer.get("LayerType") in ("Constant", "NoOp"):
            continue
        for rule, flags in RULES.items():
            if not flags(layer):
                continue
            why = NOT_TRUE[rule](layer, plan) if rule in NOT_TRUE else None
            flag = {"rule": rule, "layer": str(layer.get("Name"))}
            (false if why else true).append({**flag, "why": why} if why else flag)
    return true, false


def engines(root: Path) -> list[list[Path]]:
    """Every TREx engine under ``root``: its layer JSON with the profile beside it, if any."""
    out = []
    for graph in sorted((root / TREX).rglob("*.json")):
        name = graph.name
        if ".graph" not in name:
            continue
        profile = graph.with_name(name.replace(".graph", ".profile", 1))
        out.append([graph] + ([profile] if profile.is_file() else []))
    return out


def parity_of(files: list[Path]) -> dict[str, Any] | None:
    """One engine's row: TREx's true flags, those our findings match, those missing, the false ones.
    None for a layer JSON without layer details (names only: TREx cannot lint it)."""
    from trtstudio.engine.diagnose import diagnose
    from trtstudio.engine.load import load_engine

    doc = json.loads(files[0].read_text(encoding="utf-8"))
    layers = doc.get("Layers") or []
    if not layers or not all(isinstance(lay, dict) for lay in layers):
        return None
    true, false = trex_flags(doc)
    findings = diagnose(load_engine(files))
    have: dict[str, set[str]] = {}
    for f in findings:
        if f.layer is not None:
            have.setdefault(f.layer, set()).add(f.kind)
    def found(flag: dict[str, str]) -> bool:
        return bool(have.get(flag["layer"], set()) & KINDS[flag["rule"]])

    matched = [t for t in true if found(t)]
    return {"engine": str(files[0]), "expected": len(true), "matched": len(matched),
            "missing": [t for t in true if not found(t)], "by_rule": _by_rule(true, matched),
            "trex_false": [{**f, "we_flag": found(f)} for f in false]}


def _by_rule(true: list[dict[str, str]], matched: list[dict[str, str]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for t in true:
        out.setdefault(t["rule"], [0, 0])[0] += 1
    for t in matched:
        out[t["rule"]][1] += 1
    return out


def parity(root: Path = FIXTURES) -> dict[str, Any]:
    """Every TREx engine's row and the totals (``parity`` = matched / expected)."""
    rows = [r for files in engines(root) if (r := parity_of(files)) is not None]
    for r in rows:
        r["engine"] = str(Path(r["engine"]).relative_to(root))
    expected = sum(r["expected"] for r in rows)
    matched = sum(r["matched"] for r in rows)
    false = [f for r in rows for f in r["trex_false"]]
    return {"schema": SCHEMA, "engines": rows, "expected": expected, "matched": matched,
            "parity": matched / expected if expected else None,
            "trex_false": len(false), "trex_false_we_flag": sum(f["we_flag"] for f in false),
            "all_trex_flags": {"flags": expected + len(false), "matched": matched + sum(f["we_flag"] for f in false)}}


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else FIXTURES
    if not (root / TREX).is_dir():
        print(f"error: {root}: no {TREX} folder of TREx engines", file=sys.stderr)
        return 2
    print(json.dumps(parity(root), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
