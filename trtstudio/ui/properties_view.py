"""The model side panel: the model summary (computed in the loading worker) and the properties of
the selected node or graph input/output, with the engine layers it became."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTabWidget, QTextBrowser, QTreeWidget, QTreeWidgetItem, QWidget

from trtstudio.graph.params import parameters_text

MAX_LAYERS_LISTED = 50
MAX_IO_ROWS = 200  # inputs/outputs listed in the Model tab (a table the GUI thread lays out, see summary_html)
MAX_IO_ROWS_BIG = 50  # ... of a model of over BIG_MODEL_NODES nodes
BIG_MODEL_NODES = 20_000


def fmt_bytes(n: int | None) -> str:
    """``1.5 MiB``; ``?`` for None."""
    if n is None:
        return "?"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(n)


DIM_TEXT_MAX = 24  # a symbolic dimension longer than this is shortened on the Model tab
_BREAK_AFTER = "_-./\\:,"
ZWSP = "\u200b"  # a line may break here (Qt's rich text has no <wbr>)


def breakable(text: str) -> str:
    """``text`` with a line-break opportunity after each separator (``_ - . / \\ : ,``), so that a long
    file name wraps between its parts ("ch_PP-OCRv4_det_|infer.onnx"), never inside a word
    ("ch_PP-OCRv4_det_infer.o|nnx"). For headings only: tensor names stay as they are, to copy."""
    return "".join(c + ZWSP if c in _BREAK_AFTER else c for c in text)


def dim_text(d: Any) -> str:
    """A dimension as the Model tab shows it: a long symbolic expression (exporters write output
    sizes such as ``floor(floor(height/2 - 1/2)/2) + 1``, nested a dozen deep) keeps its ends; the
    Properties tab of the selected tensor shows it whole."""
    text = str(d)
    if len(text) <= DIM_TEXT_MAX:
        return text
    keep = (DIM_TEXT_MAX - 1) // 2
    return f"{text[:keep]}…{text[-keep:]}"


def summary_html(s: dict[str, Any]) -> str:
    """The Model tab's page for ``Model.summary()``."""
    # A page of 25,000 rows takes seconds to lay out; 200 rows, 25 ms alone, but 0.1-0.15 s while a
    # worker runs Python (Qt's layout calls virtual methods that first wait for the GIL), as the
    # workers of a big model do when its page is shown (layout, shapes): 50 rows there. A model
    # with a KV cache has 50 to 200 inputs and outputs.
    most = MAX_IO_ROWS_BIG if (s.get("nodes") or 0) > BIG_MODEL_NODES else MAX_IO_ROWS

    def io_rows(items: list[dict[str, Any]]) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(t['name'])}</td><td>{t['dtype']}</td>"
            f"<td>[{html.escape(', '.join(dim_text(d) for d in (t['shape'] or ['?'])))}]</td></tr>"
            for t in items[:most])
        if len(items) > most:
            rows += f"<tr><td colspan=3><i>... {len(items) - most:,} more</i></td></tr>"
        return rows

    ops = "".join(f"<tr><td>{html.escape(k)}</td><td align=right>{v}</td></tr>" for k, v in s["op_counts"].items())
    subs = "".join(f"<li>{html.escape(g['owner'])}: {g['nodes']} nodes</li>" for g in s["subgraphs"])
    warn = "".join(f"<p style='color:#b00'>{html.escape(w)}</p>" for w in s["warnings"])
    return (f"<h3>{html.escape(breakable(Path(s['path']).name))}</h3>{warn}"
            f"<table cellspacing=2>"
            f"<tr><td><b>IR version</b></td><td>{s['ir_version']}</td></tr>"
            f"<tr><td><b>Opsets</b></td><td>{html.escape(', '.join(f'{k} {v}' for k, v in s['opsets'].items()))}</td></tr>"
            f"<tr><td><b>Producer</b></td><td>{html.escape(s['producer'] or '-')}</td></tr>"
            f"<tr><td><b>Nodes</b></td><td>{s['nodes']} ({s['nodes_total']} with subgraphs)</td></tr>"
            f"<tr><td><b>Parameters</b></td><td>{parameters_text(s)} ({fmt_bytes(s['parameter_bytes'])})</td></tr>"
            f"</table><h4>Inputs</h4><table>{io_rows(s['inputs'])}</table>"
            f"<h4>Outputs</h4><table>{io_rows(s['outputs'])}</table>"
            + (f"<h4>Subgraphs</h4><ul>{subs}</ul>" if subs else "")
            + f"<h4>Operators</h4><table>{ops}</table>")


class _PropsTree(QTreeWidget):
    """The Properties tree: its Property column takes what its keys need, at most 40 % of a narrow
    dock, so the values get the rest (a 220 px dock showed "TiledPoolin" beside a 150 px key column)."""

    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.setColumnWidth(0, min(150, max(70, int(self.viewport().width() * 0.4))))


class ModelPanel(QTabWidget):
    """Two tabs: Properties (``props``) and Model (``summary``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QTextBrowser()
        self.summary.setOpenExternalLinks(False)
        self.props = _PropsTree()
        self.props.setHeaderLabels(["Property", "Value"])
        self.props.setColumnWidth(0, 150)
        self.props.setAlternatingRowColors(True)
        # a value too long for its column keeps both ends ("fp32 [3…,56]"), whole in its tooltip
        self.props.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.addTab(self.props, "Properties")
        self.addTab(self.summary, "Model")
        # what the window measured per node of the open model's graph (``graph``): its time
        # (engine.node_time.NodeTimes) and its error against FP32 (precision.localize.divergence)
        self.measured_graph: Any = None
        self.node_time: Any = None
        self.accuracy: dict[str, Any] | None = None

    def show_summary(self, summary: dict[str, Any] | None) -> None:
        """Show the model summary (None clears it) and bring its tab forward."""
        self.summary.setHtml(summary_html(summary) if summary else "")
        self.props.clear()
        self.setCurrentWidget(self.summary)

    def _add(self, parent: QTreeWidget | QTreeWidgetItem, key: str, value: Any = "") -> QTreeWidgetItem:
        item = QTreeWidgetItem([key, str(value)])
        item.setToolTip(1, str(value))
        if isinstance(parent, QTreeWidget):
            parent.addTopLevelItem(item)
        else:
            parent.addChild(item)
        return item

    def _tensor_rows(self, graph: Any, parent: QTreeWidgetItem, names: list[str]) -> None:
        for tname in names:
            t = graph.tensors.get(tname)
            if t is None:
                self._add(parent, tname, "(outer scope)")
                continue
            item = self._add(parent, tname, f"{t.dtype} {t.shape_text()}" + (" initializer" if t.kind == "initializer" else ""))
            if t.kind == "initializer":
                self._add(item, "bytes", fmt_bytes(t.nbytes))
                stats = graph.initializer_stats(tname)
                if stats:
                    self._add(item, "min / max / mean", f"{stats['min']:.4g} / {stats['max']:.4g} / {stats['mean']:.4g}")

    def _measured_rows(self, name: str) -> None:
        """The node's time (``Time``) and its output's error against FP32 (``Accuracy vs FP32``)."""
        t = self.node_time
        if t is not None and name in t.ms:
            item = self._add(self.props, "Time", f"{t.ms[name]:.4g} ms per inference ({t.source})")
            unit, shared = t.layers.get(name), t.shared.get(name, 1)
            if unit:
                self._add(item, "timed as", unit + (f" (with {shared - 1} other node(s))" if shared > 1 else ""))
        div = self.accuracy
        stats = (div or {}).get("nodes", {}).get(name)
        if div is None or stats is None:
            return
        first = (div.get("first") or {}).get("node") == name
        item = self._add(self.props, "Accuracy vs FP32",
                         f"{div.get('variant')}: relative error {stats['rel']:.3g}" + (" (first over threshold)" if first else ""))
        for key, label, fmt in (("tensor", "tensor", "s"), ("rel", "relative error (L2)", ".4g"),
                                ("cosine", "cosine", ".6f"), ("max_abs", "max abs error", ".4g"),
                                ("input_rel", "error received", ".4g"), ("growth", "error added", ".4g")):
            v = stats.get(key)
            if v is not None:
                self._add(item, label, format(v, fmt))
        if div.get("threshold") is not None:
            self._add(item, "threshold", f"{div['threshold']:.3g}")

    def show_properties(self, dg: Any, display_index: int, analysis: Any = None) -> None:
        """Properties of display item ``display_index`` of ``dg``; with ``analysis`` (of this graph),
        the engine layers the node became."""
        self.props.clear()
        if dg is None or display_index < 0:
            return
        graph = dg.graph
        ni = dg.node_index(display_index)
        add = self._add
        if ni is None:
            tname = str(dg.ref[display_index])
            t = graph.tensors[tname]
            add(self.props, "Graph " + ("input" if dg.kind[display_index] == 0 else "output"), tname)
            add(self.props, "dtype", t.dtype)
            add(self.props, "shape", t.shape_text())
        else:
            node = graph.nodes[ni]
            add(self.props, "Name", node.onnx_name or f"(unnamed) {node.name}")
            add(self.props, "Op type", node.op_type)
            add(self.props, "Domain", node.domain or "ai.onnx")
            attrs = node.attributes()
            if attrs:
                a = add(self.props, "Attributes", len(attrs))
                for k, v in attrs.items():
                    add(a, k, v)
            self._tensor_rows(graph, add(self.props, "Inputs", len(node.inputs)), node.inputs)
            self._tensor_rows(graph, add(self.props, "Outputs", len(node.outputs)), node.outputs)
            if node.subgraphs:
                s = add(self.props, "Subgraphs", "double-click the node to open")
                for k, g in node.subgraphs.items():
                    add(s, k, f"{g.name}: {len(g.nodes)} nodes")
            if analysis is not None and analysis.mapping is not None:
                from trtstudio.engine.overlay import other_model

                layers = analysis.layers_of(node.name)
                none = "none (the model is probably not the engine's)" if not layers and other_model(analysis) else (
                    "none (folded or removed)")
                lay_item = add(self.props, "Engine layers", len(layers) if layers else none)
                for li in layers[:MAX_LAYERS_LISTED]:
                    layer = analysis.engine.layers[li]
                    add(lay_item, layer.name, f"{layer.type} {layer.precision or ''}")
            if graph is self.measured_graph:
                self._measured_rows(node.name)
        self.props.expandAll()
        self.setCurrentWidget(self.props)
