"""The live panels' memory plots (a part of :class:`trtstudio.ui.live_panels.LivePanels`): the
process's GPU memory with its categories stacked under the measured curve (``profiling.memory_split``:
tensors, CUDA graph pools, fragmentation, allocator cache, the context and libraries), the host RSS,
and each plot's memory verdict (stable / growing, and which category grows) in its title."""

from __future__ import annotations

from typing import Any

import numpy as np

from trtstudio.palette import MEMORY_SERIES_COLORS
from trtstudio.profiling.leak import LEAK_KEYS, MIN_WARN_POINTS
from trtstudio.profiling.memory_split import REST, MemorySplit, memory_split
from trtstudio.ui.plots import pg

MIB = 1024.0 * 1024.0

MEMORY_SERIES = tuple((k, label, MEMORY_SERIES_COLORS[k]) for k, label in (  # key, legend, pen
    ("process_gpu_bytes", "process (measured)"),
    ("gpu_used_bytes", "GPU used"),
    ("gpu_total_bytes", "GPU total"),
    ("cuda_free_bytes", "CUDA free"),
    ("cuda_total_bytes", "CUDA total"),
    ("context_device_bytes", "TensorRT context"),
))


# the categories of the process's GPU memory (profiling.memory_split), stacked under its curve
_CATEGORY_COLORS = {
    "tensors (allocated)": "#1f77b4",
    "CUDA graph pools": "#17becf",
    "inactive split (fragmentation)": "#d62728",
    "allocator cache (free)": "#ffbb78",
    "activations & scratch (context)": "#9467bd",
    "engine (plan size)": "#8c564b",
    REST: "#c7c7c7",
}
_CATEGORY_KEYS = {  # their names in a plot's legend (the whole names in its tooltip)
    "tensors (allocated)": "tensors", "CUDA graph pools": "graph pools", "inactive split (fragmentation)": "fragmentation",
    "allocator cache (free)": "allocator cache", "activations & scratch (context)": "activations", "engine (plan size)": "engine",
    REST: "context & libraries",
}
_WITH_SPLIT = ("process_gpu_bytes", "gpu_used_bytes")  # the lines drawn over the stacked categories
_VERDICT_COLORS = {"growing": "#c03000", "stable": "#2a7d2a"}


def _verdict_html(v: tuple[str, str] | None) -> str:
    """"growing (allocator cache)" in the verdict's colour, for a memory plot's title."""
    if v is None:
        return ""
    word, category = v
    color = _VERDICT_COLORS.get(word, "#777777")
    return f"<span style='color:{color}'>{word}</span>" + (f" ({_CATEGORY_KEYS.get(category, category)})" if category else "")


class MemoryPlots:
    """The memory plots' drawing, mixed into ``LivePanels``: it reads the panel's ``gpu_mem_plot``,
    ``host_mem_plot``, ``mem_curves``, ``stack_curves``, ``_monitor``, ``_final``, ``_stats``,
    ``_last_mem`` and ``_exact``, and its ``_set_no_data``."""

    gpu_mem_plot: Any
    host_mem_plot: Any
    mem_curves: dict[str, Any]
    stack_curves: dict[str, Any]
    _monitor: Any
    _final: dict[str, Any] | None
    _stats: dict[str, Any]
    _last_mem: int
    _exact: bool

    def _set_no_data(self, plot: Any, no_data: bool) -> None:
        raise NotImplementedError

    def _memory_titles(self, keys: list[str], categories: list[str]) -> None:
        """The memory plots' titles: the series this run has (all of them would not fit), the
        categories stacked under the process's curve, and each plot's memory verdict (stable /
        growing), as the report gives it."""
        gpu_verdict, host_verdict = self._memory_verdict(("process_gpu_bytes", "gpu_used_bytes")), \
            self._memory_verdict(("host_rss_bytes",))
        state = (tuple(keys), tuple(categories), gpu_verdict, host_verdict)
        if state == getattr(self, "_memory_title_state", None):
            return
        self._memory_title_state = state
        items = [(_CATEGORY_KEYS.get(n, n), _CATEGORY_COLORS.get(n, "#bbbbbb")) for n in categories]
        items += [(n, c) for k, n, c in MEMORY_SERIES if k in keys and (not categories or k in _WITH_SPLIT)]
        tip = ("The process's GPU memory by category, stacked under its measured curve: "
               + ", ".join(categories) + "." if categories else "")
        self.gpu_mem_plot.set_legend("GPU memory", items, status=_verdict_html(gpu_verdict), tip=tip)
        self.host_mem_plot.set_legend("Process RSS (host)", status=_verdict_html(host_verdict))

    def _memory_verdict(self, keys: tuple[str, ...]) -> tuple[str, str] | None:
        """(verdict, category) of the first of ``keys`` with a verdict: the whole run's once it ended,
        else the live window's; None while too early to tell."""
        final = (self._final or {}).get("memory") or {}
        live = self._stats.get("memory") if isinstance(self._stats.get("memory"), dict) else {}
        for key in keys:
            v = (final.get(key) or {}).get("leak") or (live or {}).get(LEAK_KEYS.get(key, key))
            if not v or v.get("verdict") in (None, "unknown"):
                continue
            if v["verdict"] != "inconclusive" and int(v.get("points") or 0) < MIN_WARN_POINTS:
                return ("too early to tell", "")
            return (str(v["verdict"]), str((v.get("evidence") or {}).get("category") or ""))
        return None

    def _draw_memory(self, force: bool) -> None:
        mon = self._monitor
        if mon is None:
            self._set_no_data(self.gpu_mem_plot, True)
            self._set_no_data(self.host_mem_plot, True)
            return
        arrays = mon.snapshot()
        n = int(arrays["t_s"].size)
        gpu = [k for k, _, _ in MEMORY_SERIES if k in arrays]
        split = memory_split(arrays) if n else None
        categories = ([k for k, v in split.categories.items() if v.any()] if split is not None and split.source != "none"
                      else [])
        self._set_no_data(self.gpu_mem_plot, not gpu)
        self._set_no_data(self.host_mem_plot, "host_rss_bytes" not in arrays)
        self._memory_titles(gpu, categories)
        if n == 0 or (n == self._last_mem and not force):
            return
        self._last_mem = n
        t = arrays["t_s"]
        x0, x1 = float(t[0]), float(t[-1])
        if self.gpu_mem_plot.isVisible() and gpu:
            self._draw_gpu_memory(t, arrays, gpu, split if categories else None)
        if self.host_mem_plot.isVisible() and "host_rss_bytes" in arrays:
            v = arrays["host_rss_bytes"] / MIB
            self.mem_curves["host_rss_bytes"].setData(t, v)
            lo, hi = float(np.min(v)), float(np.max(v))
            pad = max(1.0, 0.1 * (hi - lo))
            self.host_mem_plot.set_ranges(x0, x1, lo - pad, hi + pad, exact=self._exact)

    def _draw_gpu_memory(self, t: np.ndarray, arrays: dict[str, np.ndarray], gpu: list[str], split: MemorySplit | None) -> None:
        """The GPU series, and with a ``split`` its categories stacked under the process's curve (the
        other series then stay off: the stack says more than they do). Totals (the GPU's size) stay
        out of the view's range unless the run uses half of it: they flattened every other curve."""
        shown = [k for k in gpu if split is None or k in _WITH_SPLIT]
        ymax, total = 0.0, 0.0
        for key in gpu:
            v = arrays[key] / MIB if key in shown else None
            self.mem_curves[key].setData(t if v is not None else [], v if v is not None else [])
            if v is not None:
                if "total" in key:
                    total = max(total, float(np.max(v)))
                else:
                    ymax = max(ymax, float(np.max(v)))
        if total and ymax > 0.5 * total:
            ymax = total
        tops = [(k, top) for k, top in split.stacked() if split.categories[k].any()] if split is not None else []
        for name, top in tops:
            self._stack_curve(name).setData(t, top / MIB)
        for name, curve in self.stack_curves.items():
            if name not in dict(tops):
                curve.setData([], [])
        self.gpu_mem_plot.set_ranges(float(t[0]), float(t[-1]), 0.0, 1.08 * max(ymax, 1.0), exact=self._exact)

    def _stack_curve(self, name: str) -> pg.PlotDataItem:
        """The filled area of category ``name`` (made on first use): its top filled down to zero, the
        lower categories drawn over it."""
        curve = self.stack_curves.get(name)
        if curve is None:
            color = pg.mkColor(_CATEGORY_COLORS.get(name, "#bbbbbb"))
            fill = pg.mkColor(color)
            fill.setAlpha(150)
            curve = pg.PlotDataItem(pen=pg.mkPen(color, width=1), fillLevel=0.0, brush=pg.mkBrush(fill))
            curve.setZValue(-10 - len(self.stack_curves))  # later (higher) categories behind the lower ones
            self.gpu_mem_plot.addItem(curve)
            self.stack_curves[name] = curve
        return curve
