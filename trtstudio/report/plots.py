"""Plot data and SVG rendering for reports, from numpy only (no matplotlib).

Two steps, so a report's JSON holds everything needed to redraw its plots:

* ``envelope``, ``histogram``, ``series`` turn raw arrays into small plot-data dicts (a long series
  becomes a min/max envelope of at most ``columns`` columns: 1,000,000 samples -> 2,000 columns);
* ``svg_*`` render a plot-data dict as one ``<svg>`` element for inline HTML (no external reference,
  not even the SVG namespace URL, which the reports keep out: :func:`standalone` adds it for a
  separate .svg file or an image, as the Python API's ``SVG`` does for Jupyter, where an image
  without ``xmlns`` is broken once ``jupyter nbconvert --to html`` exports the notebook).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any
from xml.sax.saxutils import escape

import numpy as np

DEFAULT_COLUMNS = 2000
WIDTH = 760
HEIGHT = 230
_PAD_L, _PAD_R, _PAD_T, _PAD_B = 64, 16, 28, 40
SVG_NS = "http://www.w3.org/2000/svg"
COLORS = ("#1f6fb4", "#e07b00", "#2a9d3c", "#c22f2f", "#7b52ab", "#8c564b", "#d462b4", "#6b6b6b")


def _r(v: float, nd: int = 6) -> float:
    """Round for JSON (plot coordinates need no more) and so output is stable."""
    return float(round(float(v), nd))


def envelope(y: np.ndarray, x: np.ndarray | None = None, columns: int = DEFAULT_COLUMNS) -> dict[str, Any]:
    """Min/max envelope of ``y`` in at most ``columns`` columns (raw points when short).

    Returns ``{"kind": "envelope", "n": N, "x": [...], "lo": [...], "hi": [...], "mean": [...]}``
    where ``x`` is the first x of each column (``x`` defaults to the sample index)."""
    v = np.asarray(y, dtype=np.float64)
    n = int(v.size)
    xs = np.arange(n, dtype=np.float64) if x is None else np.asarray(x, dtype=np.float64)
    if n == 0:
        return {"kind": "envelope", "n": 0, "x": [], "lo": [], "hi": [], "mean": []}
    if n <= columns:
        vals = [_r(a) for a in v]
        return {"kind": "envelope", "n": n, "x": [_r(a) for a in xs], "lo": vals, "hi": vals, "mean": vals}
    edges = np.linspace(0, n, columns + 1).astype(np.int64)
    starts = edges[:-1]
    lo = np.minimum.reduceat(v, starts)
    hi = np.maximum.reduceat(v, starts)
    sums = np.add.reduceat(v, starts)
    mean = sums / np.diff(edges)
    return {
        "kind": "envelope", "n": n,
        "x": np.round(xs[starts], 6).tolist(),
        "lo": np.round(lo, 6).tolist(), "hi": np.round(hi, 6).tolist(), "mean": np.round(mean, 6).tolist(),
    }


def histogram(values: np.ndarray, bins: int = 60, clip_percentile: float = 99.9) -> dict[str, Any]:
    """Histogram of ``values`` between the minimum and the ``clip_percentile`` (values above are
    counted in ``over``, so one spike does not squash the rest)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return {"kind": "histogram", "n": 0, "edges": [], "counts": [], "over": 0}
    lo = float(v.min())
    hi = float(np.percentile(v, clip_percentile)) if v.size > 100 else float(v.max())
    if hi <= lo:
        hi = lo + max(abs(lo) * 1e-3, 1e-9)
    counts, edges = np.histogram(v, bins=bins, range=(lo, hi))
    over = int((v > hi).sum())
    return {"kind": "histogram", "n": int(v.size), "edges": np.round(edges, 6).tolist(),
            "counts": counts.astype(int).tolist(), "over": over}


def series(x: np.ndarray, ys: dict[str, np.ndarray], scale: float = 1.0, columns: int = DEFAULT_COLUMNS) -> dict[str, Any]:
    """Several lines over the same x (memory keys over time), each thinned to ``columns`` points."""
    xs = np.asarray(x, dtype=np.float64)
    n = int(xs.size)
    idx = np.arange(n) if n <= columns else np.linspace(0, n - 1, columns).astype(np.int64)
    return {
        "kind": "series", "n": n, "x": np.round(xs[idx], 6).tolist(),
        "lines": {k: np.round(np.asarray(v, dtype=np.float64)[idx] * scale, 6).tolist() for k, v in sorted(ys.items())},
    }


# ------------------------------------------------------------------------------------------------
# SVG


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    out = []
    t = first
    while t <= hi + step * 1e-9:
        out.append(round(t, 12))
        t += step
    return out


def bar_text(v: float) -> str:
    """A bar's value label: three significant digits (``1.99``, ``0.862``), as At a glance shows figures."""
    from trtstudio.fmt import sig

    return sig(v) if math.isfinite(v) else str(v)


def tick_text(v: float) -> str:
    """Short tick label."""
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e6 or a < 1e-3:
        return f"{v:.2g}"
    return f"{v:.6g}"


class _Frame:
    """Maps data to pixel coordinates inside the plot area and draws axes."""

    def __init__(self, x0: float, x1: float, y0: float, y1: float, width: int = WIDTH, height: int = HEIGHT) -> None:
        if x1 <= x0:
            x1 = x0 + 1.0
        if y1 <= y0:
            y1 = y0 + (abs(y0) * 0.1 or 1.0)
        self.x0, self.x1, self.y0, self.y1 = x0, x1, y0, y1
        self.w, self.h = width, height
        self.pw = width - _PAD_L - _PAD_R
        self.ph = height - _PAD_T - _PAD_B

    def px(self, x: np.ndarray | float) -> np.ndarray:
        return _PAD_L + (np.asarray(x, dtype=np.float64) - self.x0) / (self.x1 - self.x0) * self.pw

    def py(self, y: np.ndarray | float) -> np.ndarray:
        return _PAD_T + self.ph - (np.asarray(y, dtype=np.float64) - self.y0) / (self.y1 - self.y0) * self.ph

    def axes(self, title: str, xlabel: str, ylabel: str) -> list[str]:
        out = [f'<rect x="0" y="0" width="{self.w}" height="{self.h}" fill="#ffffff"/>',
               f'<text x="{_PAD_L}" y="16" font-size="13" font-weight="bold">{escape(title)}</text>']
        for t in nice_ticks(self.y0, self.y1):
            y = float(self.py(t))
            out.append(f'<line x1="{_PAD_L}" y1="{y:.1f}" x2="{self.w - _PAD_R}" y2="{y:.1f}" stroke="#e4e4e4"/>')
            out.append(f'<text x="{_PAD_L - 4}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{tick_text(t)}</text>')
        for t in nice_ticks(self.x0, self.x1, 6):
            x = float(self.px(t))
            out.append(f'<line x1="{x:.1f}" y1="{_PAD_T + self.ph}" x2="{x:.1f}" y2="{_PAD_T + self.ph + 4}" stroke="#444"/>')
            out.append(f'<text x="{x:.1f}" y="{_PAD_T + self.ph + 15}" font-size="10" text-anchor="middle">{tick_text(t)}</text>')
        out.append(f'<rect x="{_PAD_L}" y="{_PAD_T}" width="{self.pw}" height="{self.ph}" fill="none" stroke="#444"/>')
        out.append(f'<text x="{_PAD_L + self.pw / 2:.1f}" y="{self.h - 6}" font-size="11" text-anchor="middle">{escape(xlabel)}</text>')
        out.append(f'<text x="12" y="{_PAD_T + self.ph / 2:.1f}" font-size="11" text-anchor="middle" '
                   f'transform="rotate(-90 12 {_PAD_T + self.ph / 2:.1f})">{escape(ylabel)}</text>')
        return out


def _svg(parts: list[str], width: int = WIDTH, height: int = HEIGHT, label: str = "") -> str:
    return (f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'font-family="Helvetica, Arial, sans-serif" role="img" aria-label="{escape(label, {chr(34): "&quot;"})}">'
            + "".join(parts) + "</svg>")


def standalone(svg: str) -> str:
    """An inline ``<svg>`` made a standalone SVG document (adds the namespace)."""
    return svg if "xmlns=" in svg[:200] else svg.replace("<svg ", f'<svg xmlns="{SVG_NS}" ', 1)


def _points(xs: np.ndarray, ys: np.ndarray) -> str:
    return " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(xs.tolist(), ys.tolist(), strict=True))


def _empty(title: str) -> str:
    return _svg([f'<rect x="0" y="0" width="{WIDTH}" height="60" fill="#fff"/>',
                 f'<text x="10" y="35" font-size="13">{escape(title)}: no data</text>'], WIDTH, 60, title)


def svg_envelope(data: dict[str, Any], title: str, xlabel: str = "inference", ylabel: str = "ms",
                 hlines: dict[str, float] | None = None) -> str:
    """Line (or min/max band with a mean line) of an ``envelope`` dict; ``hlines`` label -> y."""
    if not data.get("n"):
        return _empty(title)
    x = np.asarray(data["x"], dtype=np.float64)
    lo = np.asarray(data["lo"], dtype=np.float64)
    hi = np.asarray(data["hi"], dtype=np.float64)
    mean = np.asarray(data["mean"], dtype=np.float64)
    ylo, yhi = float(lo.min()), float(hi.max())
    for v in (hlines or {}).values():
        ylo, yhi = min(ylo, v), max(yhi, v)
    margin = (yhi - ylo) * 0.05
    x_end = float(x[-1]) + (float(x[-1] - x[0]) / max(len(x) - 1, 1) if len(x) > 1 else 1.0)
    f = _Frame(float(x[0]), x_end, max(0.0, ylo - margin) if ylo >= 0 else ylo - margin, yhi + margin)
    parts = f.axes(title, xlabel, ylabel)
    px, plo, phi = f.px(x), f.py(lo), f.py(hi)
    if not np.array_equal(lo, hi):
        poly = _points(np.r_[px, px[::-1]], np.r_[phi, plo[::-1]])
        parts.append(f'<polygon points="{poly}" fill="{COLORS[0]}" fill-opacity="0.3" stroke="none"/>')
    parts.append(f'<polyline points="{_points(px, f.py(mean))}" fill="none" stroke="{COLORS[0]}" stroke-width="1"/>')
    for i, (name, v) in enumerate(sorted((hlines or {}).items(), key=lambda kv: kv[1])):
        y = float(f.py(v))
        color = COLORS[(i + 1) % len(COLORS)]
        parts.append(f'<line x1="{_PAD_L}" y1="{y:.1f}" x2="{f.w - _PAD_R}" y2="{y:.1f}" stroke="{color}" stroke-dasharray="4 3"/>')
        parts.append(f'<text x="{f.w - _PAD_R - 2}" y="{y - 3:.1f}" font-size="10" text-anchor="end" fill="{color}">{escape(name)}</text>')
    return _svg(parts, label=title)


def svg_histogram(data: dict[str, Any], title: str, xlabel: str = "latency (ms)") -> str:
    """Bars of a ``histogram`` dict."""
    if not data.get("n"):
        return _empty(title)
    edges = np.asarray(data["edges"], dtype=np.float64)
    counts = np.asarray(data["counts"], dtype=np.float64)
    f = _Frame(float(edges[0]), float(edges[-1]), 0.0, float(counts.max()) * 1.08 or 1.0)
    parts = f.axes(title + (f" ({data['over']} above the range)" if data.get("over") else ""), xlabel, "count")
    x0, x1 = f.px(edges[:-1]), f.px(edges[1:])
    ytop = f.py(counts)
    base = float(f.py(0.0))
    for a, b, t in zip(x0.tolist(), x1.tolist(), ytop.tolist(), strict=True):
        if base - t > 0:
            parts.append(f'<rect x="{a:.1f}" y="{t:.1f}" width="{max(b - a - 0.5, 0.5):.1f}" height="{base - t:.1f}" fill="{COLORS[0]}"/>')
    return _svg(parts, label=title)


def svg_series(data: dict[str, Any], title: str, xlabel: str = "time (s)", ylabel: str = "MiB") -> str:
    """Lines of a ``series`` dict with a legend."""
    lines = data.get("lines") or {}
    if not data.get("n") or not lines:
        return _empty(title)
    x = np.asarray(data["x"], dtype=np.float64)
    allv = np.concatenate([np.asarray(v, dtype=np.float64) for v in lines.values()])
    lo, hi = float(allv.min()), float(allv.max())
    margin = (hi - lo) * 0.08 or max(abs(hi) * 0.05, 1.0)
    f = _Frame(float(x[0]), float(x[-1]), lo - margin, hi + margin)
    parts = f.axes(title, xlabel, ylabel)
    for i, (name, v) in enumerate(lines.items()):
        color = COLORS[i % len(COLORS)]
        pts = _points(f.px(x), f.py(np.asarray(v, dtype=np.float64)))
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="1.5"/>')
        parts.append(f'<text x="{_PAD_L + 6}" y="{_PAD_T + 14 + 13 * i}" font-size="10" fill="{color}">{escape(name)}</text>')
    return _svg(parts, label=title)


def svg_bars(labels: Sequence[str], values: Sequence[float], title: str, unit: str = "ms",
             notes: Sequence[str] | None = None, max_label: int = 48, colors: Sequence[str] | None = None,
             legend: Sequence[tuple[str, str]] | None = None) -> str:
    """Horizontal bars, one per label (top-N layers, time by type, comparison of variants);
    ``colors``: one per bar, ``legend``: (label, colour) pairs drawn under the bars."""
    if not labels:
        return _empty(title)
    row = 18
    legend_rows = math.ceil(len(legend) / 4) if legend else 0
    height = _PAD_T + row * len(labels) + 24 + 16 * legend_rows
    label_w = 300
    width = WIDTH
    vmax = max((float(v) for v in values), default=0.0) or 1.0
    bar_w = width - label_w - 110
    parts = [f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
             f'<text x="4" y="16" font-size="13" font-weight="bold">{escape(title)}</text>']
    for i, (lab, v) in enumerate(zip(labels, values, strict=True)):
        y = _PAD_T + i * row
        text = lab if len(lab) <= max_label else lab[: max_label - 3] + "..."
        w = max(float(v) / vmax * bar_w, 0.0)
        note = f" {notes[i]}" if notes else ""
        parts.append(f'<text x="{label_w - 6}" y="{y + 12}" font-size="10" text-anchor="end">{escape(text)}</text>')
        parts.append(f'<rect x="{label_w}" y="{y + 2}" width="{w:.1f}" height="{row - 5}" fill="{colors[i] if colors else COLORS[i % len(COLORS)] if notes else COLORS[0]}"/>')
        parts.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 12}" font-size="10">{bar_text(float(v))} {escape(unit)}{escape(note)}</text>')
    parts += _legend(legend or [], 4, _PAD_T + row * len(labels) + 10, width)
    return _svg(parts, width, height, title)


def _legend(entries: Sequence[tuple[str, str]], x: float, y: float, width: float, opacity: float = 1.0) -> list[str]:
    """Legend swatches (label, colour), four to a row of ``width``, the first row at ``y``."""
    col = (width - x) / 4
    out = []
    for k, (label, color) in enumerate(entries):
        lx, ly = x + (k % 4) * col, y + (k // 4) * 16
        out.append(f'<rect x="{lx:.0f}" y="{ly:.0f}" width="11" height="11" fill="{escape(color)}" fill-opacity="{opacity}" '
                   f'stroke="#4a6a8a" stroke-width="0.5"/><text x="{lx + 15:.0f}" y="{ly + 10:.0f}" font-size="10">'
                   f'{escape(label[:34])}</text>')
    return out


def _segments(points: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Polylines (flat points + offsets) as an (m, 2, 2) array of line segments."""
    out = [np.stack([points[a:b - 1], points[a + 1:b]], axis=1) for a, b in zip(offsets[:-1], offsets[1:], strict=True)
           if b - a >= 2]
    return np.concatenate(out) if out else np.zeros((0, 2, 2))


def _clip_segments(segs: np.ndarray, top: float, bottom: float) -> np.ndarray:
    """The parts of ``segs`` between y = top and y = bottom (no clipPath: QtSvg draws those badly)."""
    y0, y1 = segs[:, 0, 1], segs[:, 1, 1]
    sub = segs[(np.maximum(y0, y1) >= top) & (np.minimum(y0, y1) <= bottom)].copy()
    for end in (0, 1):
        p, o = sub[:, end], sub[:, 1 - end]
        for bound, below in ((top, True), (bottom, False)):
            cond = p[:, 1] < bound if below else p[:, 1] > bound
            dyv = o[cond, 1] - p[cond, 1]
            t = np.divide(bound - p[cond, 1], dyv, out=np.zeros_like(dyv), where=dyv != 0)
            p[cond, 0] += t * (o[cond, 0] - p[cond, 0])
            p[cond, 1] = bound
    return sub


def svg_graph(n: int, src: np.ndarray, dst: np.ndarray, labels: Sequence[str], colors: Sequence[str] | None = None,
              max_width: float = 760.0, max_height: float = 900.0, legend: Sequence[tuple[str, str]] | None = None,
              titles: Sequence[str] | None = None, title: str = "") -> str:
    """A picture of a model graph laid out by ``trtstudio.graph.layout`` (boxes and edges). A deep
    graph is cut into vertical strips placed side by side (read them left to right), scaled so the
    picture fits ``max_width`` x ``max_height``. ``legend``: (label, colour) pairs and ``title``
    above the graph; ``titles``: each box's tooltip."""
    from trtstudio.graph.layout import layout

    lay = layout(n, src, dst)
    bw, bh = 160.0, 36.0
    ymin = float(lay.y.min() - bh / 2) if n else 0.0
    gw, gh = max(lay.width, 1.0), max(lay.height + 10.0, 1.0)
    gap = 24.0
    # scale s and strip count k: k strips of height gh / k side by side must fit the box
    scale, strips = 1.0, 1
    for k in range(1, 64):
        s = min(1.0, max_width / (k * gw + (k - 1) * gap), max_height / (gh / k))
        if s > scale * 1.02 or k == 1:
            scale, strips = s, k
        if gh / k * s <= max_height and s >= 1.0:
            break
    strip_h = gh / strips
    width = (strips * gw + (strips - 1) * gap) * scale
    height = (min(gh, strip_h + bh) if strips > 1 else gh) * scale
    ys = lay.y - ymin
    head = (20.0 if title else 0.0) + 16.0 * math.ceil(len(legend or []) / 4) + (6.0 if legend else 0.0)
    width = max(width, min(max_width, 560.0) if legend or title else width)
    parts = [f'<rect x="0" y="0" width="{width:.1f}" height="{height + head:.1f}" fill="#ffffff"/>']
    if title:
        parts.append(f'<text x="4" y="15" font-size="13" font-weight="bold">{escape(title)}</text>')
    parts += _legend(legend or [], 4, 20.0 if title else 2.0, width, opacity=0.35)
    parts.append(f'<g transform="translate(0 {head:.1f})">')
    segs = _segments(lay.edge_xy - [0.0, ymin] if lay.edge_xy.size else np.zeros((0, 2)), lay.edge_offsets)
    font = 10.0
    for k in range(strips):
        top, bottom = k * strip_h, (k + 1) * strip_h
        dx, dy = k * (gw + gap), (bh / 2 - top) if strips > 1 else 0.0
        g = [f'<g transform="scale({scale:.5f}) translate({dx:.1f} {dy:.1f})">']
        sub = _clip_segments(segs, top, bottom) if strips > 1 else segs
        if sub.size:
            d = " ".join(f"M{a:.1f} {b:.1f}L{c:.1f} {e:.1f}" for a, b, c, e in sub.reshape(-1, 4).tolist())
            g.append(f'<path d="{d}" fill="none" stroke="#888" stroke-width="1"/>')
        inside = (ys >= top) & ((ys < bottom) | (k == strips - 1))
        for i in np.flatnonzero(inside).tolist():
            fill = colors[i] if colors else "#dde8f5"
            tip = f"<title>{escape(titles[i])}</title>" if titles else ""
            g.append(f'<rect x="{lay.x[i] - bw / 2:.1f}" y="{ys[i] - bh / 2:.1f}" width="{bw:.0f}" height="{bh:.0f}" rx="4" '
                     f'fill="{fill}" fill-opacity="0.35" stroke="#4a6a8a" stroke-width="0.8">{tip}</rect>')
            g.append(f'<text x="{lay.x[i]:.1f}" y="{ys[i] + font / 3:.1f}" font-size="{font:.0f}" '
                     f'text-anchor="middle">{escape(labels[i][:24])}</text>')
        g.append("</g>")
        parts.extend(g)
    parts.append("</g>")
    return _svg(parts, int(math.ceil(width)), int(math.ceil(height + head)), title or "model graph")


def svg_distributions(data: dict[str, Any], title: str = "Latency distributions (share of inferences)",
                      xlabel: str = "latency (ms)") -> str:
    """Overlaid step histograms of several runs on common bins (``report.story.distributions``)."""
    edges = np.asarray(data.get("edges") or [], dtype=np.float64)
    series = data.get("series") or {}
    if edges.size < 2 or not series:
        return _empty(title)
    ymax = max((max(v) for v in series.values() if v), default=0.0) or 1.0
    f = _Frame(float(edges[0]), float(edges[-1]), 0.0, ymax * 1.08)
    parts = f.axes(title, xlabel, "share")
    for i, (name, counts) in enumerate(series.items()):
        xs = np.repeat(edges, 2)[1:-1]
        ys = np.repeat(np.asarray(counts, dtype=np.float64), 2)
        color = COLORS[i % len(COLORS)]
        parts.append(f'<polyline points="{_points(f.px(xs), f.py(ys))}" fill="none" stroke="{color}" stroke-width="1.6"/>')
        parts.append(f'<text x="{f.w - _PAD_R - 4:.0f}" y="{_PAD_T + 14 + 13 * i:.0f}" font-size="11" text-anchor="end" '
                     f'fill="{color}">{escape(name)}</text>')
    return _svg(parts, label=title)


def svg_grouped_bars(categories: Sequence[str], series: dict[str, Sequence[float]], title: str,
                     unit: str = "ms") -> str:
    """Horizontal bars grouped by category, one bar per series (time by layer type side by side)."""
    if not categories or not series:
        return _empty(title)
    names = list(series)
    row = 13
    group = row * len(names) + 8
    label_w, width = 220, WIDTH
    height = _PAD_T + group * len(categories) + 14 * len(names) + 16
    vmax = max((float(v) for vals in series.values() for v in vals), default=0.0) or 1.0
    bar_w = width - label_w - 90
    parts = [f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
             f'<text x="4" y="16" font-size="13" font-weight="bold">{escape(title)}</text>']
    for c, cat in enumerate(categories):
        y0 = _PAD_T + c * group
        parts.append(f'<text x="{label_w - 6}" y="{y0 + group / 2:.0f}" font-size="10" text-anchor="end">'
                     f'{escape(cat[:40])}</text>')
        for k, name in enumerate(names):
            v = float(series[name][c])
            w = max(v / vmax * bar_w, 0.0)
            y = y0 + k * row
            parts.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{row - 2}" fill="{COLORS[k % len(COLORS)]}"/>')
            parts.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 10}" font-size="9">{bar_text(v)} {escape(unit)}</text>')
    ly = _PAD_T + group * len(categories) + 4
    for k, name in enumerate(names):
        parts.append(f'<rect x="{label_w}" y="{ly + 14 * k}" width="10" height="10" fill="{COLORS[k % len(COLORS)]}"/>'
                     f'<text x="{label_w + 14}" y="{ly + 14 * k + 9}" font-size="10">{escape(name)}</text>')
    return _svg(parts, width, height, title)
