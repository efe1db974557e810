"""Rules of the family ``compat``: whether the files given fit together and say enough: the engine's
layer information (names only), the ONNX model (another model's), the parser (nodes it rejected)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from trtstudio.engine.diagnose.context import Ctx
from trtstudio.engine.model import Finding

NAMES_ONLY_HINT = (
    "rebuild with trtexec --profilingVerbosity=detailed --exportLayerInfo=layers.json (or "
    "config.profiling_verbosity = ProfilingVerbosity.DETAILED) to see precision, formats and tactics"
)


def names_only(ctx: Ctx) -> list[Finding]:
    """``names_only`` (warning)
        Engine-level: the layer information has names only (``detailed=False``): rebuild with
        ``--profilingVerbosity=detailed``."""
    if ctx.engine.detailed:
        return []
    return [Finding(
        kind="names_only",
        severity="warning",
        message="names-only layer info: rebuild with --profilingVerbosity=detailed",
        hint=NAMES_ONLY_HINT,
    )]


def unsupported_nodes(ctx: Ctx, unsupported: Iterable[dict[str, Any]] | None) -> list[Finding]:
    """``unsupported_node`` (error)
        Each entry of ``unsupported`` (the ONNX parser's list of ``{node, op_type, reason}`` from
        ``backends.build.parse_onnx``). Hint: replace/decompose the op, fold constants, or add a plugin."""
    out = []
    for it in unsupported or ():
        node = str(it.get("node") or "")
        op = str(it.get("op_type") or "")
        reason = str(it.get("reason") or "not supported by the TensorRT ONNX parser")
        what = f"{node} ({op})" if node and op else (node or op or "a node")
        out.append(Finding(
            kind="unsupported_node",
            severity="error",
            message=f"ONNX node {what} cannot be built: {reason}",
            hint=(f"replace or decompose {op or 'the op'} in the exporter, fold it with `polygraphy surgeon "
                  "sanitize --fold-constants`, export with a newer opset, or provide a TensorRT plugin for it"),
            nodes=[node] if node else [],
        ))
    return out


def other_model(ctx: Ctx, graph: Any) -> list[Finding]:
    """``other_model`` (warning)
        Engine-level, with a model: under ``mapping.OTHER_MODEL_SHARE`` (20 %) of the layers that are not
        reformats map to its nodes, so the model is probably not the one the engine was built from
        (and its nodes without a layer were not folded away: the models differ)."""
    from trtstudio.engine.mapping import OTHER_MODEL_SHARE, other_model

    if graph is None:
        return []
    found = other_model(ctx.engine)
    if found is None:
        return []
    mapped, counted = found
    return [Finding(
        kind="other_model",
        severity="warning",
        message=(f"only {mapped} of {counted} engine layers (reformats not counted) map to nodes of the ONNX model, "
                 f"under {OTHER_MODEL_SHARE:.0%}: the model is probably not the one the engine was built from"),
        hint=("open the ONNX model the engine was built from (the file given to trtexec --onnx or the parser); "
              "a model exported again, or simplified, has other node names. Nodes without a layer say nothing "
              "about folding while the models differ"),
    )]
