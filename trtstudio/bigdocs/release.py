"""Letting go of big documents without freezing the thread that lets go.

A 100,000-node model or a 50,000-layer engine with its analysis is millions of small objects.
When the last reference to one goes, CPython frees all of them in one go, holding the GIL: on the
window's thread that was a stall of 0.5-1.5 s each time another model or engine replaced one.

:func:`release_later` hands such objects to one background thread. It waits until it holds the
last reference (the views drop theirs when they show what replaced it), then empties the big
lists and dicts inside it a chunk at a time, yielding the GIL between chunks. A container that
somebody else still refers to is left alone; an object still referenced after a minute is simply
dropped, as it would have been without this module.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from typing import Any

CHUNK = 2000  # items freed between two yields of the GIL (well under a millisecond each)
PAUSE_S = 0.003  # between chunks: the thread that gave the document away gets the GIL back at once
BIG = 512  # containers shorter than this are freed in one go
WAIT_S = 60.0  # how long to wait for the other holders to let go

_queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
_lock = threading.Lock()
_thread: threading.Thread | None = None
_pending = 0
_idle = threading.Event()
_idle.set()


def release_later(*objs: Any) -> None:
    """Free ``objs`` (each None, or a document: model, display graph, engine, analysis) in the
    background once nothing else refers to them. Call it while still holding them, then drop them."""
    global _thread, _pending
    todo = [o for o in objs if o is not None]
    if not todo:
        return
    with _lock:
        _pending += len(todo)
        _idle.clear()
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run, name="release", daemon=True)
            _thread.start()
    for o in todo:
        _queue.put(o)
    del todo, objs


def wait_idle(timeout: float = 30.0) -> bool:
    """True once everything handed over has been freed (for tests and clean shutdowns)."""
    return _idle.wait(timeout)


def _run() -> None:
    global _pending
    while True:
        obj = _queue.get()
        deadline = time.monotonic() + WAIT_S
        # references: ``obj`` here and getrefcount's argument
        while sys.getrefcount(obj) > 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        if sys.getrefcount(obj) <= 2:
            _dismantle(obj, 0)
        del obj
        with _lock:
            _pending -= 1
            if _pending == 0:
                _idle.set()


def _sole(value: Any) -> bool:
    """Whether ``value``, fetched from one attribute or item of its owner into one local variable,
    is referred to by nothing else (the owner, the variable and getrefcount's argument)."""
    return sys.getrefcount(value) <= 4  # the caller's variable, our parameter, the argument, the owner


def _dismantle(obj: Any, depth: int) -> None:
    if isinstance(obj, list):
        while len(obj) > CHUNK:
            del obj[-CHUNK:]
            time.sleep(PAUSE_S)
        obj.clear()
        return
    if isinstance(obj, dict):
        pop = obj.popitem
        while obj:
            for _ in range(min(CHUNK, len(obj))):
                pop()
            time.sleep(PAUSE_S)
        return
    if depth >= 3 or isinstance(obj, (str, bytes, int, float, type)) or type(obj).__module__ == "builtins":
        return
    names = list(getattr(obj, "__dict__", {}) or ())
    for cls in type(obj).__mro__:
        names += [n for n in getattr(cls, "__slots__", ()) if isinstance(n, str) and not n.startswith("__")]
    for name in names:
        value = getattr(obj, name, None)
        if value is None or not type(value).__module__.startswith(("builtins", "trtstudio")):
            continue  # numpy arrays, protobuf messages and Qt objects free in one step of their own
        if isinstance(value, (list, dict)) and len(value) < BIG:
            continue
        if _sole(value):
            _dismantle(value, depth + 1)
        del value
