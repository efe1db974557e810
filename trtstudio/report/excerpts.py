"""Readable graph excerpts for reports: the hottest regions and the nodes with findings.

A whole-graph thumbnail of a 600-node detector is three columns of specks. Instead a report shows
a few excerpts, each a small neighbourhood drawn at full scale (node text 11 px, never below 9 px
at 100 % zoom), and an overview strip of the whole model (its nodes in file order, inputs left,
outputs right) marking where each excerpt lies.

Regions, in order: the ONNX nodes of the slowest engine layers (by profiled time), then the nodes
with error/warning findings; each seed grows by its neighbours (producers and consumers) up to
:data:`MAX_NODES` nodes, constants left out. Overlapping regions merge. Cost: one pass over the
edges (numpy) plus a layout of each excerpt (at most :data:`MAX_NODES` nodes), so a 100,000-node
model's report stays fast.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

import numpy as np

MAX_EXCERPTS = 4
MAX_NODES = 18
FONT_PX = 11  # op type; the node name is drawn at 9 px
_BOX_W, _BOX_H = 176.0, 40.0
_SKIP_OPS = frozenset({"Constant", "Identity"})
_SEVERITY_COLOR = {"error": "#b00020", "warning": "#c77700", "hot": "#d0341c"}


def _csr(n: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(a, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(a, minlength=n), out=ptr[1:])
    return ptr, b[order]


class _Neighbours:
    """Producers and consumers of each node (CSR arrays over the graph's data edges)."""

    def __init__(self, n: int, src: np.ndarray, dst: np.ndarray) -> None:
        self.out_ptr, self.out_adj = _csr(n, src, dst)
        self.in_ptr, self.in_adj = _csr(n, dst, src)

    def of(self, i: int) -> list[int]:
        return (self.in_adj[self.in_ptr[i]:self.in_ptr[i + 1]].tolist()
                + self.out_adj[self.out_ptr[i]:self.out_ptr[i + 1]].tolist())


def _grow(seeds: list[int], nb: _Neighbours, ops: list[str], limit: int, taken: set[int]) -> list[int]:
    """Breadth-first from ``seeds`` (all kept) until ``limit`` nodes, skipping constants and the
    nodes earlier excerpts show."""
    region = list(dict.fromkeys(seeds))[:limit]
    seen = set(region) | taken
    frontier = list(region)
    while frontier and len(region) < limit:
        nxt = []
        for i in frontier:
            for j in nb.of(i):
                if j not in seen and ops[j] not in _SKIP_OPS:
                    seen.add(j)
                    region.append(j)
                    nxt.append(j)
                    if len(region) >= limit:
                        return region
        frontier = nxt
    return region


def regions(graph: Any, hot: list[tuple[list[str], str]], flagged: list[tuple[list[str], str, str]]
            ) -> list[dict[str, Any]]:
    """Excerpt regions: ``hot`` = [(ONNX node names of a slow layer, caption)], ``flagged`` =
    [(node names, severity, caption)]. Each region: {nodes (indices), seeds, marks, title}."""
    index = {node.name: node.index for node in graph.nodes if node.name}
    ops = [node.op_type for node in graph.nodes]
    src, dst, _ = graph.edges()
    nb = _Neighbours(len(ops), src, dst)
    out: list[dict[str, Any]] = []
    taken: set[int] = set()
    candidates = [(names, "hot", cap) for names, cap in hot] + [(n, sev, cap) for n, sev, cap in flagged]
    for names, mark, caption in candidates:
        seeds = [index[n] for n in names if n in index]
        if not seeds:
            continue
        if taken.intersection(seeds):  # already shown: add the mark to that excerpt
            for r in out:
                if r["nodes_set"].intersection(seeds):
                    r["marks"].update({s: r["marks"].get(s, mark) for s in seeds})
                    r["captions"].append(caption)
            continue
        if len(out) >= MAX_EXCERPTS:
            continue
        region = _grow(seeds[:MAX_NODES], nb, ops, MAX_NODES, taken)
        taken.update(region)
        out.append({"nodes": region, "nodes_set": set(region), "marks": dict.fromkeys(seeds[:MAX_NODES], mark),
                    "captions": [caption]})
    for r in out:
        del r["nodes_set"]
    return out


def _induced(nodes: list[int], src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    local = {g: k for k, g in enumerate(nodes)}
    keep = np.isin(src, nodes) & np.isin(dst, nodes)
    s = np.asarray([local[int(v)] for v in src[keep]], dtype=np.int64)
    d = np.asarray([local[int(v)] for v in dst[keep]], dtype=np.int64)
    return s, d


def excerpt_svg(graph: Any, region: dict[str, Any], src: np.ndarray, dst: np.ndarray,
                notes: dict[int, str] | None = None, fills: dict[int, str] | None = None) -> str:
    """One excerpt drawn at full scale: op type and name in each box, marked nodes outlined;
    ``fills``: a fill colour per node index (e.g. its error against FP32) instead of its op's."""
    from trtstudio.graph.categories import color
    from trtstudio.graph.layout import layout

    nodes = region["nodes"]
    s, d = _induced(nodes, src, dst)
    lay = layout(len(nodes), s, d, np.full(len(nodes), _BOX_W), np.full(len(nodes), _BOX_H),
                 node_gap=24.0, layer_gap=64.0)
    pad = 8.0
    width, height = lay.width + _BOX_W + 2 * pad, lay.height + _BOX_H + 2 * pad
    ox, oy = pad + _BOX_W / 2 - float(lay.x.min()), pad + _BOX_H / 2 - float(lay.y.min())
    parts = [f'<svg width="{width:.0f}" height="{height:.0f}" '
             f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="Helvetica, Arial, sans-serif">'
             f'<rect width="100%" height="100%" fill="#fff"/>']
    if lay.edge_xy.size:
        pts = lay.edge_xy + [ox, oy]
        offs = lay.edge_offsets
        paths = []
        for e in range(offs.size - 1):
            seg = pts[offs[e]:offs[e + 1]]
            if len(seg) >= 2:
                paths.append("M" + "L".join(f"{x:.1f} {y:.1f}" for x, y in seg.tolist()))
        parts.append(f'<path d="{" ".join(paths)}" fill="none" stroke="#888" stroke-width="1.2"/>')
    for k, g in enumerate(nodes):
        node = graph.nodes[g]
        x, y = float(lay.x[k]) + ox, float(lay.y[k]) + oy
        mark = region["marks"].get(g)
        stroke = _SEVERITY_COLOR.get(mark, "#4a6a8a") if mark else "#4a6a8a"
        sw = 2.6 if mark else 0.9
        name = node.name or f"#{g}"
        tip = escape(f"{node.op_type} {name}" + (f" - {notes[g]}" if notes and g in notes else ""))
        parts.append(f'<g><title>{tip}</title><rect x="{x - _BOX_W / 2:.1f}" y="{y - _BOX_H / 2:.1f}" '
                     f'width="{_BOX_W:.0f}" height="{_BOX_H:.0f}" rx="5" '
                     f'fill="{fills[g] if fills and g in fills else color(node.op_type, node.domain)}" '
                     f'fill-opacity="{0.9 if fills and g in fills else 0.35}" stroke="{stroke}" stroke-width="{sw}"/>'
                     f'<text x="{x:.1f}" y="{y - 3:.1f}" font-size="{FONT_PX}" font-weight="bold" text-anchor="middle">'
                     f'{escape(node.op_type[:24])}</text>'
                     f'<text x="{x:.1f}" y="{y + 11:.1f}" font-size="9" text-anchor="middle" fill="#333">'
                     f'{escape(_short(name, 30))}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n // 2 - 1] + "…" + text[-(n - n // 2):]


def overview_svg(n_nodes: int, ranges: list[tuple[int, int]], width: float = 760.0) -> str:
    """The whole model as a strip (node order, inputs left, outputs right) with each excerpt's span
    marked and numbered."""
    h = 34.0
    parts = [f'<svg width="{width:.0f}" height="{h:.0f}" '
             f'viewBox="0 0 {width:.0f} {h:.0f}" font-family="Helvetica, Arial, sans-serif">',
             f'<rect x="0" y="8" width="{width:.0f}" height="14" fill="#e8eef5" stroke="#9ab"/>',
             '<text x="2" y="33" font-size="9" fill="#555">inputs</text>',
             f'<text x="{width - 2:.0f}" y="33" font-size="9" fill="#555" text-anchor="end">outputs</text>']
    scale = (width - 2) / max(n_nodes, 1)
    for k, (lo, hi) in enumerate(ranges, start=1):
        x0, x1 = 1 + lo * scale, max(1 + (hi + 1) * scale, 1 + lo * scale + 6)
        parts.append(f'<rect x="{x0:.1f}" y="6" width="{x1 - x0:.1f}" height="18" fill="#d0341c" fill-opacity="0.55"/>'
                     f'<text x="{(x0 + x1) / 2:.1f}" y="5" font-size="9" text-anchor="middle" dominant-baseline="auto">'
                     f'{k}</text>')
    parts.append("</svg>")
    return "".join(parts)


def make_excerpts(graph: Any, layers: list[dict[str, Any]], findings: list[dict[str, Any]],
                  top: int = 3) -> dict[str, Any] | None:
    """Excerpts of ``graph`` for a report whose layer rows are ``layers`` (report.model.layer_rows)
    and findings ``findings`` (dicts with severity, nodes, message); None when nothing stands out."""
    if graph is None or not graph.nodes:
        return None
    timed = sorted((r for r in layers if r.get("time_ms") and r.get("onnx_nodes")),
                   key=lambda r: -float(r["time_ms"]))[:top]
    total = sum(float(r["time_ms"]) for r in layers if r.get("time_ms"))
    hot = [(list(r["onnx_nodes"]),
            f"{'slow layer' if r.get('type') != r.get('name') else 'hot spot'} {r['name']} ({float(r['time_ms']):.3g} ms" + (f", {100 * float(r['time_ms']) / total:.1f} %)"
                                                                       if total else ")"))
           for r in timed]
    flagged = [(list(f.get("nodes") or []), str(f["severity"]), f"{f['severity']}: {f.get('message', '')}")
               for f in findings if f.get("severity") in ("error", "warning") and f.get("nodes")]
    regs = regions(graph, hot, flagged)
    if not regs:
        return None
    src, dst, _ = graph.edges()
    out = []
    for r in regs:
        out.append({"title": "; ".join(dict.fromkeys(r["captions"]))[:300], "nodes": [graph.nodes[i].name for i in r["nodes"]],
                    "span": [min(r["nodes"]), max(r["nodes"])], "svg": excerpt_svg(graph, r, src, dst)})
    return {"overview": overview_svg(len(graph.nodes), [tuple(e["span"]) for e in out]), "excerpts": out,
            "nodes": len(graph.nodes)}


_UNSAFE = re.compile(r"<script|<foreignobject|javascript:|\bon[a-z]+\s*=|<iframe|<object|<embed|href\s*=", re.I)


def safe_svg(text: Any) -> str | None:
    """``text`` when it is an SVG of ours (made by this module), None for anything else: a session
    file is data, and what it says is drawn only when it cannot run script in a browser."""
    if not isinstance(text, str) or not text.startswith("<svg ") or _UNSAFE.search(text):
        return None
    return text


def excerpts_html(doc: dict[str, Any], images: Any) -> str:
    """The excerpts of ``doc`` (:func:`make_excerpts`) for the HTML/PDF writers: the overview strip,
    then each excerpt at full scale with its caption. Parts a damaged session holds are left out."""
    overview = safe_svg(doc.get("overview"))
    excerpts = [e for e in doc.get("excerpts") or [] if isinstance(e, dict) and safe_svg(e.get("svg"))]
    if overview is None or not excerpts:
        return ""
    nodes = doc.get("nodes") if isinstance(doc.get("nodes"), int) else len(excerpts)
    parts = [f'<h3>Graph excerpts</h3><p class="muted">Where each excerpt lies in the model '
             f'({nodes:,} nodes in file order, inputs left, outputs right):</p>',
             images.svg(overview, "graph-overview.svg")]
    for k, e in enumerate(excerpts, start=1):
        parts.append(f"<p><b>{k}.</b> {escape(str(e.get('title', '')))}</p>")
        parts.append(images.svg(e["svg"], f"graph-excerpt-{k}.svg", "excerpt"))
    return "".join(parts)
