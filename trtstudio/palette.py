"""The one palette of trtstudio: precision, severity, fused-layer, heat and memory-series colours,
shared by the graph overlay, the layer table, the charts, the live panels and the reports.

Plain hex strings, no Qt. A precision or severity has one hue everywhere: strong where it marks a
shape (graph nodes, bars, curves), as a light :func:`tint` of the same hue where it fills a table
row or a report cell, so FP32 reads the same in the graph, the table and the report.
"""

from __future__ import annotations

from typing import Any

PRECISION_COLORS: dict[str, str] = {
    "FP32": "#4e79a7",
    "TF32": "#76b7b2",
    "FP16": "#59a14f",
    "BF16": "#17becf",
    "INT8": "#f28e2b",
    "FP8": "#b07aa1",
    "FP4": "#e377c2",
    "INT4": "#e377c2",
    "INT32": "#9c755f",
    "INT64": "#9c755f",
    "BOOL": "#7f7f7f",
}
OTHER_PRECISION_COLOR = "#a0a0a0"  # UINT8 and anything unknown

SEVERITY_COLORS: dict[str, str] = {"error": "#d62728", "warning": "#ff9f1c", "info": "#4c9be8"}
NO_FINDING_COLOR = "#a8d5a2"
NO_LAYER_COLOR = "#cfcfcf"  # an ONNX node no engine layer came from (folded or fused away)
UNMEASURED_COLOR = "#e8e8e8"

# colours that tell neighbouring fused layers apart (Tableau 10)
FUSED_COLORS: tuple[str, ...] = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
                                 "#ff9da7", "#9c755f", "#bab0ac")

MEMORY_SERIES_COLORS: dict[str, str] = {
    "gpu_used_bytes": "#1f77b4",
    "gpu_total_bytes": "#7f7f7f",
    "process_gpu_bytes": "#2ca02c",
    "cuda_free_bytes": "#9467bd",
    "cuda_total_bytes": "#c7c7c7",
    "context_device_bytes": "#d62728",
    "host_rss_bytes": "#1f77b4",
}


def precision_color(precision: str | None) -> str:
    """The colour of a precision name (``OTHER_PRECISION_COLOR`` when unknown)."""
    return PRECISION_COLORS.get((precision or "").upper(), OTHER_PRECISION_COLOR)


def tint(hex_color: str, amount: float = 0.72) -> str:
    """``hex_color`` mixed with white (``amount`` 0: unchanged, 1: white): a row or cell background."""
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    mix = [round(c + (255 - c) * amount) for c in (r, g, b)]
    return "#{:02x}{:02x}{:02x}".format(*mix)


def heat(v: float) -> str:
    """0 -> pale yellow, 1 -> dark red (time share, relative error)."""
    v = max(0.0, min(1.0, v))
    r = int(255 - 80 * v)
    g = int(240 - 200 * v)
    b = int(170 - 150 * v)
    return f"#{r:02x}{g:02x}{b:02x}"


def heat_colors(values: Any) -> list[str]:
    """:func:`heat` of each value of a float array, with numpy (100,000s of graph nodes): clamped
    to [0, 1] as heat clamps, NaN as 1, each distinct colour formatted once."""
    import numpy as np

    v = np.asarray(values, dtype=np.float64)
    v = np.where(np.isnan(v), 1.0, np.clip(v, 0.0, 1.0))  # max(0.0, min(1.0, nan)) is 1.0
    r = (255 - 80 * v).astype(np.int64)  # int() of a positive float: truncated
    g = (240 - 200 * v).astype(np.int64)
    b = (170 - 150 * v).astype(np.int64)
    keys, where = np.unique((r << 16) | (g << 8) | b, return_inverse=True)
    text = np.array([f"#{k >> 16:02x}{(k >> 8) & 255:02x}{k & 255:02x}" for k in keys.tolist()] or [""], dtype=object)
    return text[where.reshape(-1)].tolist()  # type: ignore[no-any-return]
