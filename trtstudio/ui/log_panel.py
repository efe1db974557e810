"""A log view for builder and runtime messages: severity filter, text filter, coalesced appends.

``append`` is cheap (a list append and a timer start); the text widget is updated at most every
:data:`FLUSH_MS` ms with all lines that arrived since, so a verbose TensorRT build that logs tens
of thousands of lines does not stall the GUI.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

SEVERITIES = ("VERBOSE", "INFO", "WARNING", "ERROR", "INTERNAL_ERROR")
RANK = {s: i for i, s in enumerate(SEVERITIES)}
LETTER = {"VERBOSE": "V", "INFO": "I", "WARNING": "W", "ERROR": "E", "INTERNAL_ERROR": "F"}
FLUSH_MS = 50
FLUSH_LINES = 5_000  # lines written per flush at most; the rest follow on the next turns
MAX_LINES = 200_000  # lines kept; the oldest are dropped beyond this


def _norm(severity: str) -> str:
    s = severity.strip().upper()
    s = {"WARN": "WARNING", "FATAL": "INTERNAL_ERROR", "DEBUG": "VERBOSE", "V": "VERBOSE", "I": "INFO",
         "W": "WARNING", "E": "ERROR", "F": "INTERNAL_ERROR"}.get(s, s)
    return s if s in RANK else "INFO"


class LogPanel(QWidget):
    """Log lines with a minimum-severity combo and a text filter; ``append(severity, message)``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lines: list[tuple[str, str]] = []
        self._pending: list[tuple[str, str]] = []
        self._shown = 0
        self.severity_combo = QComboBox()
        for s, label in (("VERBOSE", "Verbose and up"), ("INFO", "Info and up"), ("WARNING", "Warnings and up"),
                         ("ERROR", "Errors only")):
            self.severity_combo.addItem(label, s)
        self.severity_combo.setCurrentIndex(1)
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter log…")
        self.filter_edit.setClearButtonEnabled(True)
        self.count_label = QLabel()
        self.clear_button = QPushButton("Clear")
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setMaximumBlockCount(MAX_LINES)
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.severity_combo)
        bar.addWidget(self.filter_edit, 1)
        bar.addWidget(self.count_label)
        bar.addWidget(self.clear_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(bar)
        lay.addWidget(self.text, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self.flush)
        self.severity_combo.currentIndexChanged.connect(self._on_filter_changed)
        self.filter_edit.textChanged.connect(self._on_filter_changed)
        self.clear_button.clicked.connect(self.clear)
        self._update_count()

    # -- public API -------------------------------------------------------------------------
    @Slot(str, str)
    def append(self, severity: str, message: str) -> None:
        """Add one line (``severity``: VERBOSE/INFO/WARNING/ERROR/INTERNAL_ERROR, or W/E/... letters)."""
        item = (_norm(severity), message)
        self._lines.append(item)
        if len(self._lines) > MAX_LINES:
            del self._lines[: len(self._lines) - MAX_LINES]
        self._pending.append(item)
        if not self._timer.isActive():
            self._timer.start()

    @Slot()
    def flush(self) -> None:
        """Write the lines that arrived since the last flush (called by the timer; tests call it)."""
        self._timer.stop()
        batch, self._pending = self._pending[:FLUSH_LINES], self._pending[FLUSH_LINES:]
        if self._pending:  # a long log (a verbose build's 100,000 lines) in slices, between events
            QTimer.singleShot(0, self, self.flush)  # with the panel as context: dropped once it is gone
        shown = [self._format(s, m) for s, m in batch if self._accepts(s, m)]
        self._shown += len(shown)
        if shown:
            bar = self.text.verticalScrollBar()
            at_end = bar.value() >= bar.maximum() - 2
            self.text.appendPlainText("\n".join(shown))
            if at_end:
                bar.setValue(bar.maximum())
        self._update_count()

    @Slot()
    def clear(self) -> None:
        """Forget every line."""
        self._lines = []
        self._pending = []
        self._shown = 0
        self._timer.stop()
        self.text.clear()
        self._update_count()

    def set_min_severity(self, severity: str) -> None:
        """Show lines of ``severity`` and worse."""
        i = self.severity_combo.findData(_norm(severity))
        self.severity_combo.setCurrentIndex(max(i, 0))

    def lines(self) -> list[tuple[str, str]]:
        """Every (severity, message) kept, oldest first."""
        return list(self._lines)

    def line_count(self) -> int:
        """Number of lines kept."""
        return len(self._lines)

    def visible_lines(self) -> list[tuple[str, str]]:
        """The (severity, message) lines that pass the filters."""
        return [(s, m) for s, m in self._lines if self._accepts(s, m)]

    # -- internals ------------------------------------------------------------------------------
    def _accepts(self, severity: str, message: str) -> bool:
        if RANK[severity] < RANK.get(self.severity_combo.currentData(), 0):
            return False
        needle = self.filter_edit.text().strip().lower()
        return not needle or needle in message.lower()

    @staticmethod
    def _format(severity: str, message: str) -> str:
        return f"[{LETTER[severity]}] {message}"

    @Slot()
    def _on_filter_changed(self) -> None:
        self._pending = []
        self._timer.stop()
        visible = self.visible_lines()
        self._shown = len(visible)
        self.text.setPlainText("\n".join(self._format(s, m) for s, m in visible))
        self.text.verticalScrollBar().setValue(self.text.verticalScrollBar().maximum())
        self._update_count()

    def _update_count(self) -> None:
        self.count_label.setText(f"{min(self._shown, len(self._lines))} / {len(self._lines)} lines")
