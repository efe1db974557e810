"""The Engine dock: layer table, time charts, memory, findings and the build log, filled from one Analysis."""

from __future__ import annotations

import html
import re
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTabWidget, QTextBrowser, QWidget

from trtstudio.palette import SEVERITY_COLORS
from trtstudio.ui.rows_model import RowsModel
from trtstudio.ui.tables import RowsTable, rows_only_header, size_columns_to_texts

FINDING_COLUMNS = ("Severity", "Kind", "Layer", "Message", "Hint")


class FindingsModel(RowsModel):
    """The findings of one analysis as rows (no item objects: tens of thousands of findings are
    shown, and replaced, in constant time). ``Qt.UserRole`` of a row: (layer index, node names)."""

    COLUMNS = FINDING_COLUMNS

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._brushes = {sev: QBrush(QColor(c)) for sev, c in SEVERITY_COLORS.items()}
        self._other = QBrush(QColor("#333333"))

    def set_findings(self, findings: list[Any]) -> None:
        self.replace(findings)

    def finding(self, row: int) -> Any:
        return self.rows[row]

    def texts(self, row: int) -> tuple[str, str, str, str, str]:
        """The display texts of ``row``, a column each."""
        f = self.rows[row]
        return f.severity, f.kind, f.layer or "", f.message, f.hint

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        f = self.rows[index.row()]
        col = index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return self.texts(index.row())[col]
        if role == Qt.ItemDataRole.ForegroundRole and col == 0:
            return self._brushes.get(f.severity, self._other)
        if role == Qt.ItemDataRole.UserRole:
            return f.layer_index, list(f.nodes)
        return None


def _mib(n: Any) -> str:
    return "not recorded" if not isinstance(n, (int, float)) else f"{n / 2**20:.1f} MiB"


def summary_html(engine: Any, summary: dict[str, Any] | None, pending: bool = False) -> str:
    """The Summary tab's page: ``summary`` (``engine.summary.summary`` of ``engine``, with its
    ``mapping`` line), or while ``pending`` a line saying it comes with the findings."""
    from trtstudio.engine.summary import MIB

    esc = html.escape
    rows: list[tuple[str, str]] = []
    if summary is None:
        rows.append(("Layers", f"{len(engine.layers):,}"))
        note = "<p><i>the summary comes with the findings...</i></p>" if pending else ""
    else:
        note = ""
        for key, title in (("inputs", "Inputs"), ("outputs", "Outputs")):
            for i, t in enumerate(summary.get(key) or []):
                rows.append((title if i == 0 else "", t["text"]))
        all_layers = summary.get("layers_all", summary["layers"])
        rows.append(("Layers", f"{summary['layers']:,}" + (f" ({all_layers:,} with Constant/NoOp)"
                                                           if all_layers != summary["layers"] else "")))
        avg = summary.get("average_time_ms")
        rows.append(("Average time", "not recorded (no profile)" if avg is None else f"{avg:.3f} ms"))
        rows.append(("Weights", summary.get("weights_text", "not recorded") + (
            f" (+ bias {summary['layer_bias'] / MIB:.2f} MB)" if summary.get("layer_bias") else "")))
        rows.append(("Activations", summary.get("activations_text", "not recorded")
                     + (" (layer inputs + outputs)" if "activations_text" in summary else "")))
        if summary.get("mapping"):
            rows.append(("ONNX model", summary["mapping"]))
    versions = getattr(engine, "versions", {}) or {}
    device = getattr(engine, "device", {}) or {}
    memory = getattr(engine, "memory", {}) or {}
    rows.append(("Runtime", ", ".join(f"{k} {v}" for k, v in versions.items()) or "not recorded"))
    rows.append(("GPU", str(device.get("name") or "not recorded")))
    for key, title in (("engine_size", "Engine size"), ("device_memory", "Device memory"),
                       ("weights", "Weights memory (TensorRT)"), ("activation", "Activation memory (TensorRT)")):
        if key in memory:
            rows.append((title, _mib(memory[key])))
    body = "".join(f"<tr><td><b>{esc(k)}</b></td><td>{esc(v)}</td></tr>" for k, v in rows)
    return f"<table cellspacing=3>{body}</table>{note}"


LOG_SLICE = 20_000  # log lines tagged and added per event-loop turn
TAG_LOOKBACK = 10_000  # lines searched above a log's kept tail for the tag its first lines inherit
# TensorRT's and trtexec's "[W]" tag, after any other bracketed prefixes ("[12/04/2026-10:00:00] [I]",
# "[TRT] [V]"): only at the start of a line, so an "[E]" inside a message is not taken for one
_SEVERITY_TAG = re.compile(r"^(?:\[[^\]]*\]\s*)*?\[([VIWEF])\]")


class EngineTabs(QTabWidget):
    """Tabs ``layer_table``, ``kernels_view``, ``charts``, ``findings_view``, ``log_panel`` (each None when its module
    cannot load). Signals: ``sig_layers_selected(list)`` (table rows picked), ``sig_finding_clicked
    (layer_index or None, node names)``."""

    sig_layers_selected = Signal(object)  # list[int]; object: PySide copies a list (50,000 layers: 70 ms)
    sig_finding_clicked = Signal(object, list)

    def __init__(self, parent: QWidget | None = None, defer_charts: bool = False) -> None:
        """``defer_charts``: the charts tab (pyqtgraph) is made later, by :meth:`add_charts`."""
        super().__init__(parent)
        self.layer_table: Any = None
        self.charts: Any = None
        self.memory_view: Any = None  # the Memory tab (ui.memory_chart), made with the charts
        self._memory_shown: tuple[Any, Any, bool] = (None, None, False)  # (EngineMemory, engine, pending)
        self.log_panel: Any = None
        self.profiles_view: Any = None  # the Profiles tab (ui.profiles_view), made for an engine of several
        self._log_shown = False  # the Log tab holds an engine's own log (show_log), not a build's
        self._log_gen = 0  # which show_log is still putting its lines in the tab
        self._gen = 0
        self._shown: tuple[Any, Any] | None = None  # (engine, columns) the charts show, for charts made later
        try:
            from trtstudio.ui.layer_table import LayerTableView

            self.layer_table = LayerTableView()
            self.layer_table.sig_layers_selected.connect(self.sig_layers_selected)
            self.addTab(self.layer_table, "Layers")
        except ImportError:
            self.addTab(QLabel("layer table unavailable"), "Layers")
        from trtstudio.ui.kernels_tab import KernelsView

        self.kernels_view = KernelsView()  # the selected layer's kernels (Nsight Systems, Kineto, PyTorch)
        self.addTab(self.kernels_view, "Kernels")
        from trtstudio.ui.explain_panel import ExplainView

        self.explain_view = ExplainView()  # Engine > Explain precision... (why INT8 is not faster)
        if not defer_charts:
            self.add_charts()
        self.findings_model = FindingsModel(self)
        # A table, not a tree: a QTreeView lays out every row (two calls into the model each) before
        # it sizes or paints anything, 80 ms on the GUI thread for 30,000 findings; a table, 2 ms.
        self.findings_view = RowsTable()
        self.findings_view.setModel(self.findings_model)
        rows = self.findings_view.verticalHeader()
        rows.setVisible(False)
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # one height for all rows
        rows.setDefaultSectionSize(self.findings_view.fontMetrics().height() + 6)
        # a column the user sizes to its contents (a double click on its edge) measures 100 rows:
        # precision 0 ("the rows in view") means every row while the tab is hidden, 4 s for 30,000 findings
        self.findings_view.horizontalHeader().setResizeContentsPrecision(100)
        self.findings_view.horizontalHeader().setStretchLastSection(True)
        self.findings_view.setShowGrid(False)
        self.findings_view.setWordWrap(False)
        self.findings_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.findings_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        rows_only_header(self.findings_view)
        self.findings_view.clicked.connect(self._on_findings_view_clicked)
        self._sized = False
        self.addTab(self.findings_view, "Findings")
        self.summary_view = QTextBrowser()  # TREx's engine summary (engine.summary), from the analysis
        self.summary_view.setOpenExternalLinks(False)
        self.addTab(self.summary_view, "Summary")
        self.addTab(self.explain_view, "Precision")
        try:
            from trtstudio.ui.log_panel import LogPanel

            self.log_panel = LogPanel()
            self.addTab(self.log_panel, "Log")
        except ImportError:
            pass

    def show_log(self, engine: Any) -> None:
        """Put the log an engine was read from (a TensorRT-RTX build log, a trtexec or Polygraphy
        log: ``EngineInfo.log``) in the Log tab, each line at the severity its ``[W]``-style tag
        gives; an untagged line (a layer listing under a "[V]" header) has its block's severity.
        A build's engine (source ``<build log>``) leaves the log the build streamed there; an
        engine without a log clears another engine's log from the tab."""
        from trtstudio.backends.build import BUILD_LOG_SOURCE
        from trtstudio.ui.kernels_tab import trace_log_lines

        lines = trace_log_lines(engine) + list(getattr(engine, "log", None) or [])  # a kernel file's verdict first
        sources = [str(s) for s in getattr(engine, "sources", [])]
        if self.log_panel is None:
            return
        self._log_gen += 1  # a log still being put in the tab stops there
        if BUILD_LOG_SOURCE in sources:
            self._log_shown = False  # the tab holds what the build streamed
            return
        if not lines:
            if self._log_shown:  # the tab holds another engine's log, not a build's
                self.log_panel.clear()
                self.log_panel.append("INFO", f"trtstudio: no log for {', '.join(sources) or 'this engine'}")
            return
        from trtstudio.ui.log_panel import MAX_LINES
        from trtstudio.ui.turns import in_turns

        panel = self.log_panel
        panel.clear()
        self._log_shown = True
        gen = self._log_gen
        panel.append("INFO", f"trtstudio: the log of {', '.join(sources) or 'the engine'}")
        # the lines the panel keeps (a verbose build of a big engine logs millions), a slice per
        # event-loop turn: tagging 100,000 lines took 130 ms of the GUI thread
        at = max(0, len(lines) - (MAX_LINES - 1))
        severity = self._severity_before(lines, at)

        def step() -> bool:
            nonlocal at, severity
            if gen != self._log_gen:
                return False  # another engine's log replaced this one
            end = min(at + LOG_SLICE, len(lines))
            for line in lines[at:end]:
                m = _SEVERITY_TAG.match(line)
                if m:
                    severity = m.group(1)
                panel.append(severity, line)
            at = end
            return at < len(lines)

        in_turns(self, step, lambda: None)

    @staticmethod
    def _severity_before(lines: list[str], start: int) -> str:
        """The severity an untagged line at ``start`` inherits (the last tag above it, looking back
        at most ``TAG_LOOKBACK`` lines), INFO when none."""
        for line in reversed(lines[max(0, start - TAG_LOOKBACK):start]):
            m = _SEVERITY_TAG.match(line)
            if m:
                return m.group(1)
        return "INFO"

    def add_charts(self) -> None:
        """Make the charts tab (second, after the layer table) and show what the tabs show."""
        if self.charts is not None:
            return
        try:
            from trtstudio.ui.engine_charts import EngineChartsView
        except ImportError:
            return
        self.charts = EngineChartsView()
        self.insertTab(1, self.charts, "Time by type / precision")  # after the layer table (or its stand-in)
        if self._shown is not None:
            self.charts.set_engine(*self._shown)
        from trtstudio.ui.memory_chart import MemoryView

        self.memory_view = MemoryView()
        self.memory_view.sig_layer_chosen.connect(self._on_memory_view_layer_chosen)
        if self.layer_table is not None:  # rows picked in the table are marked on the chart too
            self.layer_table.sig_layers_selected.connect(self.memory_view.mark_layers)
        self.insertTab(self.indexOf(self.charts) + 1, self.memory_view, "Memory")
        self.memory_view.set_memory(*self._memory_shown)

    def show_analysis(self, analysis: Any, engine: Any = None) -> None:
        """Fill the tabs from ``analysis`` (an engine.analysis.Analysis with ``columns``); with only
        ``engine`` (no analysis yet) the table shows the engine as read."""
        eng = analysis.engine if analysis is not None else engine
        columns = analysis.columns if analysis is not None else None
        self._gen += 1
        gen = self._gen
        if self.layer_table is not None:
            self.layer_table.set_engine(eng, columns)
        findings = list(analysis.findings) if analysis is not None else []
        pending = analysis is not None and analysis.pending  # the diagnosis is still running
        self.setTabText(self.indexOf(self.findings_view), "Findings (…)" if pending else f"Findings ({len(findings)})")
        self.show_summary(analysis, eng)
        memory = (getattr(analysis, "memory", None), eng, pending)
        # The charts and the findings follow on later event-loop turns: with 50,000 layers each
        # part takes tens of milliseconds, and together they held the GUI thread a quarter second.
        QTimer.singleShot(0, lambda: self._show_rest(gen, eng, columns, findings, memory))

    def _show_rest(self, gen: int, engine: Any, columns: Any, findings: list[Any],
                   memory: tuple[Any, Any, bool] = (None, None, False)) -> None:
        if gen != self._gen:
            return  # a newer analysis replaced this one
        self._memory_shown = memory
        if self.memory_view is not None:  # drawn when its tab is first shown
            self.memory_view.set_memory(*memory)
        before, self._shown = self._shown, (engine, columns)
        # the diagnosis of an engine shown already (engine.analysis.diagnosed): same log (the charts
        # take the analysis's engine, with its findings)
        diagnosis = before is not None and before[1] is not None and columns is not None and before[1].num is columns.num
        if self.charts is not None:
            self.charts.set_engine(engine, columns)
        QTimer.singleShot(0, lambda: self._show_findings(gen, findings, not diagnosis))

    def show_summary(self, analysis: Any, engine: Any = None) -> None:
        """The Summary tab: ``analysis.summary`` (TREx's I/O, layers, average time, weights and
        activations, with the mapping to the model), what the engine's files recorded of its
        runtime, GPU and memory ("not recorded" where they are silent)."""
        summary = getattr(analysis, "summary", None)
        eng = analysis.engine if analysis is not None else engine
        if eng is None:
            self.summary_view.setHtml("")
            return
        self.summary_view.setHtml(summary_html(eng, summary, pending=analysis is not None and analysis.pending))

    def _show_findings(self, gen: int, findings: list[Any], log: bool = True) -> None:
        if gen != self._gen:
            return
        if self._shown is not None and log:
            self.show_log(self._shown[0])
        self.findings_model.set_findings(findings)
        if findings and not self._sized:  # the first findings size the columns (from the first 100)
            self._sized = True
            first = [self.findings_model.texts(row) for row in range(min(100, len(findings)))]
            size_columns_to_texts(self.findings_view, {c: [t[c] for t in first] for c in range(4)})

    def show_profiles(self, doc: Any, shown: int = 0, on_choose: Any = None) -> Any:
        """The Profiles tab: an engine's optimization profiles side by side (``ui.profiles_view``)."""
        from trtstudio.ui.profiles_view import show_profiles

        return show_profiles(self, doc, shown, on_choose)

    def finding_count(self) -> int:
        """Findings listed."""
        return self.findings_model.rowCount()

    def select_layers(self, positions: list[int]) -> None:
        """Select rows of the layer table (no signal loop: the table does not re-emit) and mark the
        first on the Memory tab's chart."""
        if self.layer_table is not None:
            self.layer_table.select_layers(positions)
        if self.memory_view is not None:
            self.memory_view.mark_layers(list(positions))

    def _on_memory_view_layer_chosen(self, index: int) -> None:
        """A click on the Memory tab's chart: that layer selected in the table and the graphs."""
        if self.layer_table is not None:
            self.layer_table.select_layers([index])
        self.sig_layers_selected.emit([index])

    def _on_findings_view_clicked(self, index: QModelIndex) -> None:
        layer_index, nodes = self.findings_model.data(index, Qt.ItemDataRole.UserRole)
        self.sig_finding_clicked.emit(layer_index, list(nodes))
