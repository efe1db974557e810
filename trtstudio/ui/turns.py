"""Work on the GUI thread in slices, one per event-loop turn, so that paints and input come between."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer


def in_turns(context: QObject, step: Callable[[], Any], done: Callable[[], None]) -> None:
    """``step()`` on successive event-loop turns while it returns something true, then ``done()``
    on the turn of the last step, also when a step raises (the exception goes on from there).
    The turns have ``context`` as context: dropped once it is gone."""

    def turn() -> None:
        more = False
        try:
            more = bool(step())
        finally:
            if more:
                QTimer.singleShot(0, context, turn)
            else:
                done()

    QTimer.singleShot(0, context, turn)


__all__ = ["in_turns"]
