"""What a diff works out of each side alone, worked out by a second process while this one reads
the sides: ``trtstudio diff`` of big engines on a machine with a processor to spare.

Most of a diff needs both sides at once (the alignment, the rows), but some of it needs one side at
a time and gives little back: each side's orientation digest (``diff.align.orientation``), its
layer graph through its tensor names (the structure pass's walk, :class:`trtstudio.diff.align.FlowGraph`:
0.06 s a 50,000-layer side), its memory by category (:func:`trtstudio.diff.core.side_memory`:
TREx's activation sum walks every tensor, 0.1 s a 50,000-layer side) and the pair's sample figures
(:func:`trtstudio.diff.core.sample_figures`: the bootstrap). A helper process (``python -m
trtstudio.cli --_diff-prefetch REQUEST``, :func:`trtstudio.bigdocs.children.command`) reads the
same sides with the same function (``diff.sides.load_side``) and sends them in the order the
command asks for them: each side's orientation and graph as soon as it has read it, then the
pairs' figures, then each side's memory. This process takes what has come
when it needs it, without waiting, and works out the rest itself: the helper can save time, never
change a result.

What the helper sends of a side is used only where both read the same files: each of the side's
files with the same (inode, size, modification time) in the helper, before and after its read, and
here, after this process's read (:func:`trtstudio.fileio.file_stamp`).

The helper starts only where it can pay for itself: a processor this process may use is idle beside
it (:func:`trtstudio.measure.devices.spare_cpus`: on a busy machine the helper would take the
command's time, 3.1 s against 2.4 s for the renamed 50,000-layer pair beside a CPU hog on two
processors), the sides' files hold :data:`MIN_BYTES` or more (below, its start-up is most of what it could save),
and ``TRTSTUDIO_DIFF_HELPER`` is not ``0`` (``1``: whatever the size; ``wait``: whatever the size,
and this process waits for what the helper sends: the tests use the helper's results so). It costs
processor time (it reads every side a second time) and memory (its own copy of the sides, freed as
it ends) for wall time: 0.2-0.4 s of a 2 s diff of two 50,000-layer engines.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

FLAG = "--_diff-prefetch"
ENV = "TRTSTUDIO_DIFF_HELPER"
MIN_BYTES = 24 * 1024 * 1024
MEMORY_S = 0.1  # a 50,000-layer side's memory by category, worked out here


class Prefetch:
    """The helper as this process sees it: what it has sent so far, read by a thread as it comes
    (``wait``: each item asked for is waited for until the helper has sent it or ended, which only
    the tests want: the helper's results then are always the ones used)."""

    def __init__(self, proc: subprocess.Popen[bytes], wait: bool = False) -> None:
        self._proc = proc
        self._wait = wait
        self._got: dict[tuple[Any, ...], Any] = {}
        self._ended = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, name="trtstudio-diff-prefetch", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        out = self._proc.stdout
        assert out is not None
        try:
            while True:
                key, value = pickle.load(out)
                with self._changed:
                    self._got[key] = value
                    self._changed.notify_all()
        except Exception:  # noqa: BLE001 - its end (EOF), or a helper that failed: what came is kept
            pass
        finally:
            with self._changed:
                self._ended = True
                self._changed.notify_all()

    def _get(self, key: tuple[Any, ...], soon: float = 0.0) -> Any:
        """The item ``key`` if it has come; ``soon``: seconds to wait for it where the helper is
        working it out now (it says so before it starts one: ``("working", key)``)."""
        wait = 600.0 if self._wait else soon if self._got.get(("working",)) == key else 0.0
        if wait and key not in self._got:
            with self._changed:
                self._changed.wait_for(lambda: key in self._got or self._ended, timeout=wait)
        return self._got.get(key)

    def _same_files(self, index: int, paths: Sequence[str]) -> bool:
        from trtstudio.fileio import file_stamp

        got = self._get(("side", index))
        return got is not None and got == (list(paths), [file_stamp(p) for p in paths])

    def for_pair(self, other: int, paths: tuple[Sequence[str], Sequence[str]]) -> Callable[..., Any]:
        """What :func:`trtstudio.diff.core.diff_sides` asks of the helper for the base (side 0)
        against side ``other`` whose files are ``paths`` (base's, other's): ``ask(what, side)`` of
        a side (0 the base, 1 the other), its ``"orientation"`` or ``"graph"``
        (:func:`trtstudio.diff.align.align`'s ``known``) or its ``"memory"``
        (:func:`~trtstudio.diff.core.side_memory`); ``ask(what)`` of the pair, its ``"figures"``
        (:func:`~trtstudio.diff.core.sample_figures`). None wherever the helper has not sent it yet
        or read other files."""
        index = (0, other)

        def ask(what: str, side: int | None = None) -> Any:
            if side is not None:
                if not self._same_files(index[side], paths[side]):
                    return None
                # a side's memory the helper is working out now: waited for as long as it takes here
                return self._get((what, index[side]), soon=MEMORY_S if what == "memory" else 0.0)
            if self._same_files(0, paths[0]) and self._same_files(other, paths[1]):
                return self._get((what, other))
            return None
        return ask

    def close(self) -> None:
        """End the helper (done by now, or no longer needed) and reap it."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()


def start(specs: Sequence[str], models: Sequence[str | None], names: Sequence[str] | None) -> Prefetch | None:
    """The helper for the sides ``specs`` (with their ``models`` and ``names``, as the command reads
    them), where it can pay for itself (see the module docstring); None where not."""
    import json

    setting = os.environ.get(ENV, "")
    if setting == "0" or not sys.executable:
        return None
    from trtstudio.measure.devices import spare_cpus

    if setting not in ("1", "wait") and (spare_cpus() < 1 or _bytes(specs) < MIN_BYTES):
        return None
    request = json.dumps({"specs": list(specs), "models": list(models), "names": list(names) if names else None})
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    # the window's children's command line (in a PyInstaller bundle: its own executable)
    from trtstudio.bigdocs.children import command

    try:
        proc = subprocess.Popen(command(FLAG, request), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env)
    except OSError:
        return None
    return Prefetch(proc, wait=setting == "wait")


def _bytes(specs: Sequence[str]) -> int:
    """The size of the files the sides name (0 where one cannot be resolved: this process says why)."""
    from trtstudio.engine.naming import resolve

    total = 0
    try:
        for spec in specs:
            total += sum(os.path.getsize(f) for f in resolve(spec).files)
    except Exception:  # noqa: BLE001 - a side this process will refuse in its own words
        return 0
    return total


def serve(request: str) -> int:
    """The helper: read each side as the command does and send, pickled ``(key, value)`` on standard
    output, which files it read with their stamps, the side's orientation and FlowGraph (a side
    whose files changed while it read them: nothing), then each pair's sample figures, then each
    side's memory."""
    import json

    from trtstudio.diff.align import flow_graph, orientation
    from trtstudio.diff.core import sample_figures, side_memory
    from trtstudio.diff.sides import load_side, unique_names
    from trtstudio.engine.naming import resolve
    from trtstudio.fileio import file_stamp

    req = json.loads(request)
    out = sys.stdout.buffer

    def send(key: tuple[Any, ...], value: Any) -> None:
        pickle.dump((key, value), out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()

    names = req["names"]
    sides: list[Any] = []
    read: list[int] = []  # the sides whose files did not change while this process read them
    # in the order the command asks: each side's orientation and graph as soon as it is read, then
    # the pairs' figures, then each side's memory (asked last, and the longest to work out)
    for i, (spec, model) in enumerate(zip(req["specs"], req["models"], strict=True)):
        before = [file_stamp(f) for f in resolve(spec).files]
        side = load_side(spec, model, names[i] if names else None)
        after = [file_stamp(p) for p in side.paths]
        sides.append(side)
        unique_names(sides)  # (as the command names them: a memory figure says whose it is; an earlier side's name stays)
        if before != after:
            continue
        read.append(i)
        send(("side", i), (list(side.paths), after))
        send(("orientation", i), orientation(side.engine.layers))
        send(("graph", i), flow_graph(side.engine.layers))
    for k, side in enumerate(sides[1:], 1):
        send(("figures", k), sample_figures(sides[0], side))
    for i in read:
        send(("working",), ("memory", i))
        send(("memory", i), side_memory(sides[i]))
    return 0
