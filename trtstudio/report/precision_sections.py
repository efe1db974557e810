"""Two report sections about precision, as data and as HTML/Markdown (no Qt):

- **INT8: why it is not faster** (:func:`explain_section`): for a report whose engine has INT8
  layers, the precision explainer's answer (:func:`trtstudio.diff.explain.explain`), alone or against
  another build (``trtstudio report --against FILES``): the sentence, each cause with its layers and
  time, the suggestion to paste.
- **Where accuracy is lost** (:func:`divergence_sections`): for a report with precision results
  (``trtstudio report --precision P.json``, a ``trtstudio precision --json`` document), each
  variant's per-tensor localisation: the first node over the threshold, the nodes adding the most
  error, and an excerpt of the graph around the first node (:mod:`trtstudio.precision.localize`).
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

MAX_LAYERS = 8  # layers named per cause in a report (the JSON keeps them all)
MAX_VARIANTS = 3


def has_int8(engine: Any) -> bool:
    """Whether an engine computes any layer in INT8 (or runs Q/DQ layers)."""
    return any((lay.precision or "").upper() == "INT8" or (lay.origin or "").upper() == "QDQ"
               for lay in getattr(engine, "layers", []) or [])


def explain_section(engine: Any, paths: list[str] | None = None, against: Any = None,
                    name: str | None = None) -> dict[str, Any] | None:
    """The explainer's ``precision`` document (``trtstudio explain --json``'s, with ``engine`` and
    ``against`` names) for ``engine`` (an EngineInfo) beside ``against`` (a ``diff.sides.Side``, or
    None); None when the engine has no INT8 layer."""
    if engine is None or not has_int8(engine):
        return None
    from trtstudio.diff.explain import explain
    from trtstudio.diff.sides import Side

    side = Side(name or "INT8 engine", engine, list(paths or []))
    files = [p for p in paths or [] if p and not p.startswith("<")]
    if files and against is not None:  # the engine as trtstudio explain reads it: with its per-inference samples
        from trtstudio.diff.sides import load_side
        from trtstudio.errors import InputError

        try:
            side = load_side(",".join(files) if len(files) > 1 else files[0], name=name)
        except InputError:
            pass
    if against is not None and against.name == side.name:
        against.name = f"{against.name} (against)"
    doc = explain(side, against).to_json()
    return {"engine": doc["engine"], "against": doc["against"], **doc["precision"]}


def _ms(v: Any) -> str:
    return "" if v is None else f"{float(v):.3g} ms"


def explain_html(sec: dict[str, Any], table: Callable[..., str]) -> str:
    """The section's HTML: the sentence, the causes table, the suggestion in a copyable block."""
    rows = []
    for c in sec.get("causes") or []:
        layers = list(c.get("layers") or [])
        more = f" (+{len(layers) - MAX_LAYERS} more)" if len(layers) > MAX_LAYERS else ""
        rows.append((c.get("cause", ""), c.get("text", ""), len(layers), _ms(c.get("ms")),
                     ", ".join(layers[:MAX_LAYERS]) + more))
    parts = [f"<p><b>{escape(str(sec.get('text', '')))}</b></p>"]
    against = sec.get("against")
    parts.append(f'<p class="muted">{escape(str(sec.get("engine")))}'
                 + (f" against {escape(str(against))} (aligned as trtstudio diff aligns them)" if against else
                    " alone (trtstudio report --against FILES compares it with an FP16/FP32 build)") + "</p>")
    if rows:
        parts.append(table(("cause", "what", "layers", "time at stake", "layers (first)"), rows, num=(2, 3)))
    s = sec.get("suggestion") or {}
    if s.get("layer_precisions"):
        gain = s.get("estimated_gain_ms")
        parts.append("<p><b>Suggestion</b>" + (f" (estimated gain {float(gain):.3g} ms per inference)" if gain else "")
                     + ":</p>")
        parts.append(f"<pre>trtexec {escape(s['layer_precisions'])}\n{escape(str(s.get('precision_command') or ''))}</pre>")
    if s.get("basis"):
        parts.append(f'<p class="muted">{escape(str(s["basis"]))}</p>')
    return "".join(parts)


def explain_markdown(sec: dict[str, Any], md_table: Callable[..., str]) -> list[str]:
    """The section as Markdown lines (``md_table``: the Markdown writer's table)."""
    out = ["## INT8: why it is not faster", "", f"**{sec.get('text', '')}**", ""]
    causes = sec.get("causes") or []
    if causes:
        out += [md_table(("cause", "layers", "time at stake", "layers (first)"),
                         [(c.get("cause"), len(c.get("layers") or []), _ms(c.get("ms")),
                           ", ".join((c.get("layers") or [])[:MAX_LAYERS])) for c in causes]), ""]
    s = sec.get("suggestion") or {}
    if s.get("layer_precisions"):
        out += ["Suggestion" + (f" (estimated gain {float(s['estimated_gain_ms']):.3g} ms per inference)"
                                if s.get("estimated_gain_ms") else "") + ":", "", "```",
                f"trtexec {s['layer_precisions']}", str(s.get("precision_command") or ""), "```", ""]
    if s.get("basis"):
        out += [f"_{s['basis']}_", ""]
    return out


def divergence_sections(precision_doc: dict[str, Any], graph: Any = None) -> list[dict[str, Any]]:
    """One section per variant of a ``trtstudio.precision/1`` document that has a localisation (at
    most :data:`MAX_VARIANTS`, the ones with a first diverging node first)."""
    from trtstudio.precision.localize import divergence, divergence_section

    out = []
    for v in precision_doc.get("variants") or []:
        if not isinstance(v, dict) or v.get("name") == "fp32":
            continue
        sec = divergence_section(divergence(v), graph)
        if sec is not None:
            out.append(sec)
    out.sort(key=lambda s: s.get("first") is None)
    return out[:MAX_VARIANTS]


def divergence_html(sections: list[dict[str, Any]], images: Any, table: Callable[..., str]) -> str:
    """The sections' HTML: per variant the sentence, the table and the excerpt around the first node."""
    from trtstudio.precision.localize import SECTION_HEADERS, section_rows
    from trtstudio.report.excerpts import safe_svg

    parts = ['<p class="muted">Every float tensor of the FP32 model compared with the same tensor of each variant '
             "(both run with ONNX Runtime, the intermediate tensors made graph outputs); relative error = "
             "L2 norm of the difference over the L2 norm of the FP32 tensor.</p>"]
    for k, sec in enumerate(sections, start=1):
        parts.append(f"<h3>{escape(str(sec.get('variant')))}</h3><p>{escape(str(sec.get('text', '')))}</p>")
        rows = section_rows(sec)
        if rows:
            parts.append(table(SECTION_HEADERS, rows, num=(2, 3, 4)))
        svg = safe_svg(sec.get("svg"))
        if svg:
            around = "the first diverging node" if sec.get("anchor", "first") == "first" else "the worst tensor's node"
            parts.append(f'<p class="muted">The graph around {around} (outlined), each node coloured by its '
                         "relative error (yellow: small, dark red: the variant's worst, grey: not compared; its value in the "
                         "tooltip):</p>")
            parts.append(images.svg(svg, f"divergence-{k}.svg", "excerpt"))
    return "".join(parts)


def divergence_markdown(sections: list[dict[str, Any]], md_table: Callable[..., str]) -> list[str]:
    """The sections as Markdown lines (the excerpt SVGs are in the HTML and PDF reports)."""
    from trtstudio.precision.localize import SECTION_HEADERS, section_rows

    out = ["## Where accuracy is lost", ""]
    for sec in sections:
        out += [f"### {sec.get('variant')}", "", str(sec.get("text", "")), ""]
        rows = section_rows(sec)
        if rows:
            out += [md_table(SECTION_HEADERS, rows), ""]
    return out
