"""Why an INT8 engine is not faster: the precision explainer (``trtstudio explain``).

For an INT8 engine (Q/DQ or calibrated), alone or beside an FP16/FP32 build of the same model
(aligned by :mod:`trtstudio.diff.align`, as ``trtstudio diff`` does), the causes TensorRT's users
find by hand, each with its layers and the time at stake (per inference, from the profile):

- ``qdq_not_fused``: a QuantizeLinear/DequantizeLinear that runs as a layer of its own (a reformat
  whose origin is QDQ, or named so). TensorRT fuses a DQ into the consumer and a Q into the
  producer when the pair sits on a fusible op's input/output ("Q/DQ layer placement"
  recommendations of the TensorRT developer guide); a Q/DQ anywhere else is a scale kernel of its
  own and a format change around it.
- ``reformat``: a format/type reformat (origin REFORMAT) between layers that want different
  precisions or vectorised layouts (INT8 kernels read 4- or 32-wide channel vectors).
- ``conv_wide_output``: an INT8 convolution/GEMM that writes FP16 or FP32: the next layer's
  input has no Q/DQ pair (a residual Add's other input, the last layer before a float head), so
  TensorRT must dequantize: TREx's linter "QDQ missing after a convolution".
- ``kept_wide``: a convolution/GEMM computing in FP16/FP32 in an engine that has INT8 layers: no
  Q/DQ on its input (or a precision constraint) kept it wide.
- ``int8_slower`` (with a build to compare): an aligned group whose INT8 time is above the other
  build's time for the same ONNX nodes.

The verdict sentence comes first ("INT8 is 8 % slower than FP16: 14 Q/DQ layers and reformats add
0.21 ms and 9 convolutions write FP16/FP32"); the suggestion is text a user can paste: trtexec
``--precisionConstraints=obey --layerPrecisions=NODE:fp16,...`` (a weakly typed TensorRT 10 build)
and ``trtstudio precision --block-nodes NODE,...`` (strongly typed: the Q/DQ around those nodes not
placed), for the groups where INT8 lost, with the gain estimated from the measured times (the sum
of those groups' losses; reformats they cause are not counted, so it is a lower bound).

Beside another build, the pair's ``diff.mismatch`` sentences (different models, GPUs, TensorRT
versions, too few convolutions/GEMMs aligned) are the document's ``warnings``, first in its text;
different models or too few aligned make the verdict and the suggestion unreliable (``reliable:
false``, ``unreliable_because``, texts starting with ``unreliable:``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from trtstudio.diff.core import PairDiff, diff_sides
from trtstudio.diff.sides import Side
from trtstudio.engine.diagnose import is_conv, is_gemm, is_reformat
from trtstudio.engine.layer_stats import layer_ms
from trtstudio.engine.model import Layer
from trtstudio.engine.provenance import provenance

SCHEMA = "trtstudio.explain/1"
_QDQ_RE = re.compile(r"(Quantize|Dequantize)Linear|QuantLinearNode|DequantLinearNode", re.I)
_COMPUTE_OP_RE = re.compile(r"(^|[/_.])(conv|gemm|matmul|fc|linear|conv2d)", re.I)
WIDE = ("FP32", "FP16", "BF16")


def _ms(lay: Layer) -> float:
    return float(layer_ms(lay) or 0.0)


def _is_qdq(lay: Layer) -> bool:
    """A Q/DQ running as a layer of its own: origin QDQ, or a reformat named after the Q/DQ node
    itself (not a "Reformatting CopyNode for ... to X" whose X fused one)."""
    if (lay.origin or "").upper() == "QDQ":
        return True
    return is_reformat(lay) and not lay.name.startswith("Reformatting CopyNode") and bool(_QDQ_RE.match(lay.name))


@dataclass
class Cause:
    """One cause: its key, a sentence, the layers (names) and the time at stake per inference (ms)."""

    cause: str
    text: str
    layers: list[str] = field(default_factory=list)
    ms: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"cause": self.cause, "text": self.text, "layers": self.layers, "count": len(self.layers),
                "ms": self.ms}


@dataclass
class Explanation:
    """The precision explainer's answer for one engine (see the module docstring)."""

    engine: Side
    against: Side | None
    verdict: str
    text: str
    causes: list[Cause]
    suggestion: dict[str, Any]
    pair: PairDiff | None = None
    int8_share: dict[str, Any] = field(default_factory=dict)

    @property
    def warnings(self) -> list[str]:
        """Why the engine and the build it is explained against may not belong together (``diff.mismatch``)."""
        return self.pair.warnings if self.pair is not None else []

    @property
    def unreliable_because(self) -> str | None:
        """Why the verdict is unreliable (different models, too few layers aligned), None where it is not."""
        return self.pair.summary.get("unreliable_because") if self.pair is not None else None

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "engine": self.engine.name, "against": self.against.name if self.against else None,
                "warnings": self.warnings,
                "provenance": provenance(self.engine.engine),
                "precision": {"verdict": self.verdict, "text": self.text, "causes": [c.to_json() for c in self.causes],
                              "suggestion": self.suggestion, "int8": self.int8_share,
                              "reliable": self.unreliable_because is None,
                              "unreliable_because": self.unreliable_because},
                "diff": self.pair.to_json() if self.pair is not None else None}


def _compute(lay: Layer) -> bool:
    return is_conv(lay) or is_gemm(lay) or lay.type == "correlation"


def _causes(layers: list[Layer]) -> list[Cause]:
    qdq = [lay for lay in layers if _is_qdq(lay)]
    ref = [lay for lay in layers if is_reformat(lay) and lay not in qdq and _ms(lay) > 0.0 or
           (is_reformat(lay) and lay not in qdq and lay.type == "Reformat")]
    int8 = [lay for lay in layers if _compute(lay) and lay.precision == "INT8"]
    wide_out = [lay for lay in int8 if lay.precision_out in WIDE]
    wide = [lay for lay in layers if _compute(lay) and lay.precision in WIDE]
    out = []
    if qdq:
        out.append(Cause("qdq_not_fused", f"{len(qdq)} Q/DQ layers run on their own, not fused into a neighbour: "
                         "place Q/DQ pairs only on the inputs of convolutions/GEMMs and the residual Add, where "
                         "TensorRT fuses them", [lay.name for lay in qdq], sum(map(_ms, qdq))))
    if ref:
        out.append(Cause("reformat", f"{len(ref)} reformats change precision or layout between layers",
                         [lay.name for lay in ref], sum(map(_ms, ref))))
    if wide_out:
        out.append(Cause("conv_wide_output", f"{len(wide_out)} INT8 convolutions/GEMMs write "
                         f"{'/'.join(sorted({str(lay.precision_out) for lay in wide_out}))}: no Q/DQ pair after them "
                         "(a residual Add's other input, a float head), so they dequantize",
                         [lay.name for lay in wide_out], sum(map(_ms, wide_out))))
    if wide and int8:
        out.append(Cause("kept_wide", f"{len(wide)} convolutions/GEMMs compute in "
                         f"{'/'.join(sorted({str(lay.precision) for lay in wide}))}: no Q/DQ on their input, or a "
                         "precision constraint kept them wide", [lay.name for lay in wide], sum(map(_ms, wide))))
    return out


def _compute_nodes(nodes: list[str]) -> list[str]:
    picked = [n for n in nodes if _COMPUTE_OP_RE.search(n) and not _QDQ_RE.search(n) and not n.endswith((".weight", ".bias"))]
    return picked or [n for n in nodes if not _QDQ_RE.search(n)]


NO_INT8 = "no INT8"


def has_int8(side: Side) -> bool:
    """Whether any layer of the side's engine reads or writes INT8."""
    return any("INT8" in (lay.precision_in, lay.precision_out) for lay in side.engine.layers)


def explain(engine: Side, against: Side | None = None) -> Explanation:
    """The explanation for ``engine`` (the INT8 build), beside ``against`` (an FP16/FP32 build of
    the same model) where given. An engine with no INT8 layer gets the verdict ``no INT8`` and no
    causes: there is nothing to explain."""
    layers = engine.engine.layers
    if not has_int8(engine):
        text = (f"{engine.name} has no INT8 layer: explain looks at an INT8 (Q/DQ or calibrated) engine; "
                "compare two builds with trtstudio diff")
        return Explanation(engine, against, NO_INT8, text, [], {"layer_precisions": None, "block_nodes": None,
                                                                "precision_command": None, "estimated_gain_ms": None,
                                                                "basis": text}, None, {})
    causes = _causes(layers)
    compute = [lay for lay in layers if _compute(lay)]
    n_int8 = sum(1 for lay in compute if lay.precision == "INT8")
    total = sum(map(_ms, layers))
    share = {"compute_layers": len(compute), "int8_compute_layers": n_int8,
             "int8_ms": sum(_ms(lay) for lay in layers if lay.precision == "INT8"), "total_layer_ms": total}
    pair = diff_sides(against, engine) if against is not None else None
    losers: list[dict[str, Any]] = []
    if pair is not None:
        losers = [g for g in pair.groups if g["base_layers"] and g["other_layers"] and g["delta_ms"] is not None
                  and g["delta_ms"] > 0 and "INT8" in g["other_precision"] and "INT8" not in g["base_precision"]]
        losers.sort(key=lambda g: -g["delta_ms"])
        if losers:
            causes.append(Cause("int8_slower", f"{len(losers)} groups run slower in INT8 than in {against.name if against else ''}",
                                [n for g in losers for n in g["other_layers"]], sum(g["delta_ms"] for g in losers)))
    causes.sort(key=lambda c: -c.ms)
    # node names of the INT8 model (the one to rebuild), not the other build's
    from trtstudio.diff.align import node_names

    nodes = list(dict.fromkeys(n for g in losers for i in g["other_index"]
                               for n in _compute_nodes(list(node_names(layers[i])))))
    gain = sum(g["delta_ms"] for g in losers)
    suggestion = {
        "layer_precisions": (f"--precisionConstraints=obey --layerPrecisions={','.join(f'{n}:fp16' for n in nodes)}"
                             if nodes else None),
        "block_nodes": ",".join(nodes) or None,
        "precision_command": f"trtstudio precision MODEL --variants int8 --block-nodes {','.join(nodes)}" if nodes else None,
        "estimated_gain_ms": gain if nodes else None,
        "basis": ("the measured loss of each of those groups against the other build (the reformats around them not "
                  "counted: a lower bound)") if nodes else "no group lost time to INT8 against the other build"
                  if pair is not None else "give --against an FP16/FP32 build of the same model to find the groups "
                                           "where INT8 loses",
    }
    verdict, text = _verdict(engine, against, pair, causes, share)
    if pair is not None and pair.summary.get("unreliable_because"):
        text = text if text.startswith("unreliable: ") else f"unreliable: {text}"
        suggestion["basis"] = f"unreliable: {suggestion['basis']}"
    return Explanation(engine, against, verdict, text, causes, suggestion, pair, share)


def _verdict(engine: Side, against: Side | None, pair: PairDiff | None, causes: list[Cause],
             share: dict[str, Any]) -> tuple[str, str]:
    overhead = [c for c in causes if c.cause in ("qdq_not_fused", "reformat")]
    bits = []
    if overhead:
        n = sum(len(c.layers) for c in overhead)
        bits.append(f"{_n(n, 'Q/DQ layer and reformat', 'Q/DQ layers and reformats')} add "
                    f"{sum(c.ms for c in overhead):.3g} ms")
    for c in causes:
        if c.cause == "conv_wide_output":
            bits.append(f"{_n(len(c.layers), 'INT8 convolution writes', 'INT8 convolutions write')} a wide output "
                        f"({c.ms:.3g} ms)")
        elif c.cause == "kept_wide":
            bits.append(f"{_n(len(c.layers), 'convolution stays', 'convolutions stay')} wide ({c.ms:.3g} ms)")
        elif c.cause == "int8_slower":
            bits.append(f"{_n(len(c.layers), 'layer is', 'layers are')} slower in INT8 (+{c.ms:.3g} ms)")
    why = ": " + " and ".join(bits[:3]) if bits else ""
    if pair is not None and against is not None:
        s = pair.summary
        r = s.get("ratio")
        iv = s.get("interval")
        figures = (f"median {s['base_median_ms']:.3g} -> {s['other_median_ms']:.3g} ms"
                   + (f", 95 % interval x{iv[0]:.3f}-{iv[1]:.3f}" if iv else "")) if s.get("other_median_ms") else ""
        if r is not None and s["verdict"] in ("faster", "slower"):
            word = "slower" if r > 1 else "faster"
            return word, f"INT8 is {abs(r - 1) * 100:.0f} % {word} than {against.name} ({figures}){why}"
        if r is not None and s["verdict"] == "no significant difference":
            return s["verdict"], f"INT8 is no faster than {against.name} ({figures}: no significant difference){why}"
        return "inconclusive", f"INT8 against {against.name}: {s['text']}{why}"
    return "explained", (f"{share['int8_compute_layers']} of {share['compute_layers']} convolutions/GEMMs run INT8"
                         f"{why or ': nothing keeps INT8 from its kernels'}")


def _n(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def render_text(doc: dict[str, Any], limit: int = 8) -> str:
    """The sentence, each cause with its time and first layers, the suggestion."""
    p = doc["precision"]
    lines = [*(f"warning: {w}" for w in doc.get("warnings") or []), p["text"], ""]
    for c in p["causes"]:
        more = f" (+{c['count'] - limit} more)" if c["count"] > limit else ""
        lines.append(f"{c['cause']:<18} {c['ms']:>8.3g} ms  {c['text']}")
        lines += [f"    {name}" for name in c["layers"][:limit]]
        if more:
            lines.append(f"    ...{more}")
    s = p["suggestion"]
    lines.append("")
    if s.get("layer_precisions"):
        lines += [f"trtexec: {s['layer_precisions']}", f"trtstudio: {s['precision_command']}",
                  f"estimated gain: {s['estimated_gain_ms']:.3g} ms per inference ({s['basis']})"]
    else:
        lines.append(f"suggestion: {s['basis']}")
    return "\n".join(lines)
