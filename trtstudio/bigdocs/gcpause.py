"""Pausing Python's cyclic garbage collector while many small, acyclic objects are built.

Reading a 50,000-layer engine or a 100,000-node model makes millions of objects and no cycles; with
the collector running, its repeated full passes over the growing heap cost several times the work
itself. What such a pass builds is usually long-lived: frozen (``gc.freeze``) on the way out, the
collector's later passes skip it too. Frozen objects are still freed by reference counting when
their last user drops them; what freezing costs is that cyclic garbage not yet collected anywhere
in the process stays (it is frozen with the rest).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused(*, freeze: bool = True) -> Iterator[None]:
    """Run the body with the cyclic collector off, and back on as it was after it.

    ``freeze``: after a body that succeeded, move everything alive to the permanent generation
    first (re-enabled as they were, the collector's next pass would walk every object made
    meanwhile: about a second for a 50,000-layer engine and its graph). A body that raised
    freezes nothing. A collector that was off stays off, and nothing is frozen then either."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    except BaseException:
        if was:
            gc.enable()
        raise
    if was:
        if freeze:
            gc.freeze()
        gc.enable()


__all__ = ["gc_paused"]
