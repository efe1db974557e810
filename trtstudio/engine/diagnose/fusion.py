"""Rules of the family ``fusion``: what TensorRT compiled as one opaque unit (Myelin and DLA regions)
and the shape/copy layers left between the fused ones."""

from __future__ import annotations

from typing import Any

from trtstudio.engine.diagnose.context import SHAPE_NAME_MARKERS, Ctx, finding, share_text
from trtstudio.engine.mapping import Resolver
from trtstudio.engine.model import Finding

SHAPE_WARN_SHARE = 5.0


def regions(ctx: Ctx, graph: Any) -> list[Finding]:
    """``foreign_node`` (info)
        Myelin regions (``{ForeignNode[first...last]}`` layers or regions named by reformats) and DLA
        regions (``{a,b,...}``), with the ONNX nodes they cover: they are compiled as one opaque unit."""
    out = []
    seen: set[str] = set()
    names: set[str] | None = None  # every layer's name, made when a region is named by another layer
    resolver: Any = None
    for lay in ctx.region_layers:
        name = lay.name
        region: str | None = None
        if "{ForeignNode[" in name:
            region = name[name.index("{ForeignNode["):]
            if region.endswith("]}") is False:
                end = region.find("]}")
                region = region[:end + 2] if end >= 0 else region
        elif lay.type == "DLA" or (name.startswith("{") and name.endswith("}")):
            region = name
        if region is None or region in seen:
            continue
        own = region == name
        if not own:
            if names is None:
                names = {lay.name for lay in ctx.engine.layers}
            if region in names:
                continue  # the region's own layer reports it
        seen.add(region)
        nodes = lay.onnx_nodes if own else []
        if not own and graph is not None:
            if resolver is None:
                resolver = Resolver(graph)
            idx, _ = resolver.resolve_name(region)
            nodes = [resolver.nodes[i].name for i in idx]
        kind = "DLA" if region.startswith("{") and not region.startswith("{ForeignNode[") else "Myelin"
        span = f", covering {len(nodes)} ONNX nodes ({nodes[0]} ... {nodes[-1]})" if nodes else ""
        share = ctx.share(lay) if own else None
        out.append(finding(
            "foreign_node", "info", lay if own else None,
            f"{kind} region {region}{span}{share_text(share)}",
            "the region is compiled as one opaque unit: per-node precision and time are not visible; "
            "profile with --profilingVerbosity=detailed (TensorRT >= 10 lists its kernels) or mark "
            "intermediate tensors as outputs to split it" if kind == "Myelin" else
            "these layers run on the DLA; layers outside the region fall back to the GPU with "
            "transfers (data to/from nvm) in between: keep DLA-supported ops contiguous",
            nodes=nodes,
        ))
    return out


def shape_ops(ctx: Ctx) -> list[Finding]:
    """``shape_ops`` (info; warning when >= 5 % of the time)
        One engine-level finding counting Shape/NoOp/Constant/Shuffle/shape_call layers (and layers
        whose ONNX nodes are only Shape/Reshape/Constant/Squeeze/Unsqueeze/Flatten/Identity) and their
        time share."""
    hits = ctx.shape_ops
    if not hits:
        return []
    shares = [ctx.share(lay) for lay in hits]
    known = [s for s in shares if s is not None]
    total = sum(known) if known else None
    sev = "warning" if total is not None and total >= SHAPE_WARN_SHARE else "info"
    kinds: dict[str, int] = {}
    for lay in hits:
        label = lay.type
        if label == "Unknown":
            label = next((m.strip("[]") for m in SHAPE_NAME_MARKERS if m in lay.name), "shape op")
        kinds[label] = kinds.get(label, 0) + 1
    by = ", ".join(f"{v} {k}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]))
    nodes = [n for lay in hits for n in lay.onnx_nodes]
    return [Finding(
        kind="shape_ops",
        severity=sev,
        message=(f"{len(hits)} of {len(ctx.engine.layers)} layers are shape/copy overhead ({by})"
                 + (f", {total:.1f} % of the time" if total is not None else "")),
        hint=("fold shape computations before building (`polygraphy surgeon sanitize --fold-constants`, "
              "onnxsim), use static shapes where possible, and remove Reshape/Transpose pairs that cancel out"),
        nodes=list(dict.fromkeys(nodes)),
    )]
