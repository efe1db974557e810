"""What the GUI thread runs while it stalls: a sampling thread for the stall benchmarks.

Caution: on Python 3.11 the sampling itself can crash the measured process. The window now builds
its plot panels after a model given on the command line is shown, so `graph_view.py --where`
samples the GUI thread while it constructs pyqtgraph widgets. There, even a sampler that only calls
``sys._current_frames()`` and reads the top frame's code name ended the child with SIGSEGV in 6
of 8 runs. An idle thread waking just as often crashed none in 6, and no run without a sampler
crashed. Read ``--where`` results of the window's start-up with that in mind.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any


def watch_stalls(ticks: list[float], out: list[list[object]]) -> Any:
    """A thread that, while the GUI thread has not ticked for over 100 ms (``STALLWATCH_MS`` in the
    environment: another threshold, to see what the stalls under the budget are), notes the GUI thread's
    innermost frames every 20 ms, and the other threads' ([time, ms since the last tick, frames,
    other threads' top frames]); returns its stop."""
    import threading
    import traceback

    main_id = threading.get_ident()
    done = threading.Event()
    threshold = float(os.environ.get("STALLWATCH_MS", "100")) / 1000

    def run() -> None:
        while not done.wait(0.02):
            if not ticks:
                continue
            gap = time.perf_counter() - ticks[-1]
            frame = sys._current_frames().get(main_id)
            if gap > threshold and frame is not None:
                frames = [f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in traceback.extract_stack(frame)[-5:]]
                others = []
                for ident, fr in sys._current_frames().items():
                    if ident not in (main_id, threading.get_ident()):
                        top = traceback.extract_stack(fr)[-4:]
                        others.append(" <- ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in top[::-1]))
                out.append([time.perf_counter(), round(gap * 1000), frames[::-1], others])

    threading.Thread(target=run, daemon=True, name="stall-watch").start()
    return done.set
