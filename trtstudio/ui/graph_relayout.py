"""Folding choice and re-layout of a graph view's display graph.

Constant and shape-computation chains are folded into their consumer (``trtstudio.graph.fold``)
while folding is on; nodes the view must show (search hits, the selection) keep their chain
unfolded. Laying a big graph out again runs in a worker; only the newest request is applied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from trtstudio.graph.display import DisplayGraph, Placement
from trtstudio.graph.fold import Folding, fold_constants, no_folding


class Relayout:
    """Which folding a view wants, and the (possibly threaded) placement under it."""

    def __init__(self) -> None:
        self.enabled = True  # the user's choice; build_display decides the first folding
        self._base: Folding | None = None
        self._gen = 0
        self._handle: object | None = None

    def reset(self, dg: DisplayGraph | None) -> None:
        """A new display graph: folding on when build_display folded something; pending results dropped."""
        self._gen += 1
        self.enabled = dg is not None and dg.folded_count > 0
        self._base = dg.folding if dg is not None and dg.folded_count else None

    def wanted(self, dg: DisplayGraph, keep: Iterable[int]) -> Folding:
        """The folding to show: none, or every foldable chain but those of display items ``keep``."""
        nn = len(dg.graph.nodes)
        if not self.enabled:
            return no_folding(nn)
        if self._base is None:  # every foldable chain folded, computed on the first toggle
            self._base = fold_constants(dg.graph)
        kept = np.fromiter(keep, dtype=np.int64) - dg.node_offset
        kept = kept[(kept >= 0) & (kept < nn)]
        return self._base.without(kept) if kept.size else self._base

    def change(self, dg: DisplayGraph | None, keep: Iterable[int], *, force: bool = False) -> Folding | None:
        """The folding to lay out now, or None when the shown (complete) layout already has it."""
        if dg is None or (not force and not self.enabled and not dg.hidden.any()):
            return None
        wanted = self.wanted(dg, keep)
        if np.array_equal(wanted.host, dg.folding.host) and dg.placement.complete:
            return None
        return wanted

    def start(self, dg: DisplayGraph, wanted: Folding, *, sync: bool,
              done: Callable[[DisplayGraph, Placement], None]) -> None:
        """Place ``dg`` under ``wanted`` (here when ``sync``, else in a worker) and call ``done``
        on the GUI thread, unless a newer request or :meth:`reset` came in between."""
        self._gen += 1
        gen = self._gen

        def finish(placement: Placement) -> None:
            if gen == self._gen:
                done(dg, placement)

        if sync:
            finish(dg.place(wanted))
            return
        from trtstudio.ui.workers import run_in_thread

        self._handle = run_in_thread(lambda _state: dg.place(wanted), on_done=finish, name="graph-relayout")
