"""Find in the graph: the toolbar's search field, match count and next/previous, on the current tab.

Matches are ranked: a node (or engine layer) named exactly as typed first, then names containing
it, then op types, then nodes found only through a tensor name ("Reformat" finds the reformatting
layers before ``MaxPool_2``, whose output tensor is named ``Reformatted ...``). A match selected
selects as a click on it would, in every view (the window links ``sig_hit``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel, QLineEdit, QToolBar

RANK_MAX = 20000  # matches ranked in full; above, only an exact name goes first


def rank_matches(graph: Any, found: list[int], text: str) -> list[int]:
    """``found`` (node indices of ``graph.find(text)``) ranked: exact name, name containing
    ``text``, op type containing it, the rest (tensor names); graph order within each rank."""
    q = text.strip().lower()
    if not found or not q:
        return found
    nodes = graph.nodes
    if len(found) > RANK_MAX:  # a keystroke stays cheap: only an exact name (as typed) comes first
        exact = graph.node_by_name.get(text.strip())
        first = [exact] if exact is not None and exact in set(found) else []
        return first + [i for i in found if not first or i != first[0]]
    rank = np.empty(len(found), dtype=np.int8)
    for k, i in enumerate(found):
        n = nodes[i]
        name = n.name.lower()
        rank[k] = 0 if name == q else 1 if q in name else 2 if q in n.qualified_op.lower() else 3
    order = np.argsort(rank, kind="stable")
    return [found[int(k)] for k in order]


class SearchController(QObject):
    """Owns the search field (``search``) and its label (``search_label``); ``view_getter()`` gives
    the graph view searched. ``sig_hit(view, display_index)`` when a match is selected."""

    sig_hit = Signal(object, int)

    def __init__(self, toolbar: QToolBar, view_getter: Callable[[], Any]) -> None:
        super().__init__(toolbar)
        self._view_getter = view_getter
        self.hits: list[int] = []
        self.pos = -1
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find node, op type or tensor (Enter = next)")
        self.search.setClearButtonEnabled(True)
        self.search.setFixedWidth(320)
        self.search.returnPressed.connect(self.find_next)
        self.search.textChanged.connect(self.refresh)
        toolbar.addWidget(self.search)
        toolbar.addAction("◀", self.find_previous).setToolTip("Previous match (Shift+F3)")
        toolbar.addAction("▶", self.find_next).setToolTip("Next match (F3)")
        self.search_label = QLabel("")
        self.search_label.setMinimumWidth(90)
        toolbar.addWidget(self.search_label)

    def refresh(self, text: str | None = None) -> None:
        """Recompute the matches of ``text`` (default: the field's) in the current view and highlight them."""
        text = self.search.text() if text is None else text
        view = self._view_getter()
        if view is None or view.dg is None:
            return
        found = rank_matches(view.dg.graph, view.dg.graph.find(text), text) if text.strip() else []
        self.hits = [view.dg.display_index(i) for i in found]
        self.pos = -1
        view.highlight = set(self.hits)
        view.update()
        self.search_label.setText(f"{len(found)} matches" if text.strip() else "")

    def find_next(self, step: int = 1) -> None:
        """Select the next match (``step`` -1: the previous one) and centre it."""
        if not self.hits:
            self.refresh()
        if not self.hits:
            return
        self.pos = (self.pos + step) % len(self.hits)
        target = self.hits[self.pos]
        view = self._view_getter()
        view.select([target], center=True)
        self.search_label.setText(f"{self.pos + 1} of {len(self.hits)}")
        self.sig_hit.emit(view, target)

    def find_previous(self) -> None:
        """Select the previous match."""
        self.find_next(-1)

    def focus(self) -> None:
        """Put the cursor in the field with its text selected."""
        self.search.setFocus()
        self.search.selectAll()
