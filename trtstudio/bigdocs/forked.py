"""A big JSON object written to standard output in two parts, so that its encoding runs beside the
work that follows and a big array never exists whole (``trtstudio layers --json`` on a 300,000-layer
engine): :class:`ForkedHead` and :class:`Chunked`.

The bytes are those :func:`trtstudio.jsonio.dumps` writes in one go (compact, with a newline).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from trtstudio.jsonio import OPTS as _OPTS
from trtstudio.jsonio import count_non_finite, strict
from trtstudio.jsonio import default as _default


def _members(pairs: list[tuple[str, Any]], stdlib: bool = False) -> list[bytes]:
    """``"key":value`` for each pair, compact, as :func:`dumps` writes them inside an object
    (orjson; TypeError where it cannot); ``stdlib``: by the standard library, NaN as null."""
    if not stdlib:
        return [orjson.dumps(k) + b":" + orjson.dumps(v, default=_default, option=_OPTS) for k, v in pairs]
    return [json.dumps(k).encode() + b":" + json.dumps(strict(v)[0], separators=(",", ":"), ensure_ascii=True,
                                                       allow_nan=False, default=_default).encode()
            for k, v in pairs]


class Chunked:
    """A JSON array that :class:`ForkedHead` makes, encodes (and writes) a piece at a time:
    ``pieces()`` gives lists of its items in order. A big array (300,000 layers' dicts) then never
    exists whole, and each piece's memory is used again for the next one."""

    __slots__ = ("count", "pieces")

    def __init__(self, pieces: Callable[[], Iterable[list[Any]]], count: Callable[[], int] | None = None) -> None:
        """``count()``: the NaN/infinite floats of the whole array where they can be counted
        without its items (else each piece is counted as the pair's value would be)."""
        self.pieces = pieces
        self.count = count


def _array_items(items: list[Any], stdlib: bool) -> bytes | memoryview:
    """The items of a JSON array, without its brackets (orjson; with ``stdlib``, the standard
    library where orjson cannot)."""
    try:
        return memoryview(orjson.dumps(items, default=_default, option=_OPTS))[1:-1]  # not copied
    except TypeError:
        if not stdlib:
            raise
    return _members([("", items)], stdlib=True)[0][4:-1]  # '"":[' ... ']'


def _encoded(pairs: list[tuple[str, Any]], counted: list[int], first: bytes = b"{",
             stdlib: bool = False) -> Iterator[bytes | memoryview]:
    """The members ``"key":value`` of ``pairs`` as :func:`_members` writes them, joined by commas
    after ``first``, in pieces (a :class:`Chunked` value one piece per list); the NaN/infinite
    floats of each value or piece (:func:`count_non_finite`, or the array's own count) are added
    to ``counted[0]``.
    TypeError where orjson cannot encode something, unless ``stdlib``: then the standard library
    encodes that value or piece (compact, NaN as null, non-ASCII escaped)."""
    sep = first
    for key, value in pairs:
        if type(value) is Chunked:
            yield sep + orjson.dumps(key) + b":["
            comma = b""
            whole = value.count
            if whole is not None:
                counted[0] += whole()
            for items in value.pieces():
                if items:
                    data = _array_items(items, stdlib)
                    if whole is None:
                        counted[0] += count_non_finite(items)
                    if comma:
                        yield comma
                    yield data
                    comma = b","
            yield b"]"
        else:
            counted[0] += count_non_finite(value)
            try:
                member = _members([(key, value)])[0]
            except TypeError:
                if not stdlib:
                    raise
                member = _members([(key, value)], stdlib=True)[0]
            yield sep + member
        sep = b","


_UNREAPED: list[int] = []  # ForkedHead children not waited for (their exit is the kernel's long teardown)


def _reap_finished() -> None:
    """Reap the children of earlier ForkedHeads that have ended (a process that goes on, as the
    tests do, would otherwise keep them as zombies)."""
    import os

    for pid in list(_UNREAPED):
        try:
            done = os.waitpid(pid, os.WNOHANG)[0] != 0
        except ChildProcessError:
            done = True
        if done:
            _UNREAPED.remove(pid)


def _die_with(parent: int) -> bool:
    """Have the kernel kill this (forked) process when ``parent`` ends (Linux's PR_SET_PDEATHSIG);
    False where that cannot be arranged, or ``parent`` has ended already."""
    import ctypes
    import os
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(1, int(signal.SIGKILL), 0, 0, 0) != 0:  # 1: PR_SET_PDEATHSIG
            return False
    except (OSError, AttributeError):
        return False
    return os.getppid() == parent  # it may have ended between the fork and the prctl


def _write_all(fd: int, data: bytes | memoryview) -> None:
    import os

    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _file_offset(fd: int) -> int | None:
    """Where the next write to ``fd`` goes, when ``fd`` is a regular file written at its end (so
    that cutting it back there loses nothing it held) and not opened to append (where the offset
    says nothing); None for anything else."""
    import fcntl
    import os
    import stat

    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND:
            return None
        offset = os.lseek(fd, 0, os.SEEK_CUR)
        return offset if offset == st.st_size else None
    except OSError:
        return None


class ForkedHead:
    """Write a big JSON object to standard output in two parts: a forked child encodes the object's
    first keys (the part known early, e.g. an engine's 50,000 layers) while this process computes
    the rest (the findings), and writes them once this process says go (into a regular file at
    once, taken back if this process fails); then this process writes the rest, a piece at a time
    from a writer thread while it encodes the next. On a 2-core machine the encoding and writing
    of the head run beside the work that follows. The head may also be made in the child from
    scratch (``head`` a function: ``trtstudio layers`` reads the files there too).

    The bytes written are those ``dumps(obj)`` writes (compact, with a newline), as long as orjson
    encodes each part; a value or piece of the rest that needs the standard library is written
    compact by it.
    :meth:`finish` returns None when the child could not encode the head (nothing was written):
    the caller writes the whole object itself. Linux only (``available``), and only in a process
    with one thread: anything else should write in one go.
    """

    def __init__(self, head: list[tuple[str, Any]] | Callable[[], list[tuple[str, Any]]]) -> None:
        """``head``: the first (key, value) pairs, or a function that makes them in the child; a
        value may be a function without arguments, called in the child, or a :class:`Chunked`
        array. The NaN/infinite floats of the values are counted in the child
        (:func:`count_non_finite`, or the array's own count)."""
        import os
        import sys

        out_fd = sys.stdout.fileno()
        sys.stdout.flush()
        sys.stderr.flush()
        self._out_fd = out_fd
        # Into a regular file the child writes the head as soon as it is encoded, beside this
        # process's work: what it wrote is taken back (the file cut where it began) if this
        # process fails. Into anything else (a pipe, a terminal) it waits for go. A child that
        # writes early dies with this process (PR_SET_PDEATHSIG), so that it can never write into
        # the file after this process is gone (killed, timed out) and a later command wrote there.
        _reap_finished()
        self._start = _file_offset(out_fd)
        parent = os.getpid()
        status_r, status_w = os.pipe()
        go_r, go_w = os.pipe()
        self._status_r: int | None = status_r
        self._go_w: int | None = go_w
        self._pid = os.fork()
        if self._pid == 0:  # the child: encode, (write,) report, wait for go, (write,) exit
            code = 0
            try:
                import gc

                gc.disable()  # what it makes lives until it exits, without cycles
                os.close(status_r)
                os.close(go_w)
                # dies with the parent: needed to write early, and spares an orphan's long read
                early = _die_with(parent) and self._start is not None
                os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # what the parent has to say, it says once
                values = [(k, v() if callable(v) else v) for k, v in (head() if callable(head) else head)]
                counted = [0]
                pieces: list[Any] = []
                for piece in _encoded(values, counted):  # failing, the parent takes back what was written
                    if early:
                        _write_all(out_fd, piece)  # written while the next piece is made
                    else:
                        pieces.append(piece)
                os.write(status_w, f"ok {counted[0]}\n".encode())
                if os.read(go_r, 1) == b"g":
                    os.write(status_w, b"writing\n")  # from here on, part of the head may be out
                    for piece in pieces:
                        _write_all(out_fd, piece)
                    os.write(status_w, b"written\n")  # all of it: the parent goes on without waiting for this exit
                elif early and os.getppid() == parent:  # the parent failed (and lives): take the head back
                    self._take_back()
            except BrokenPipeError:
                code = 3
            except BaseException:  # noqa: BLE001 - anything: the parent writes everything itself
                code = 1
                try:
                    os.write(status_w, b"fail\n")
                except OSError:
                    pass
            finally:
                os._exit(code)
        os.close(status_w)
        os.close(go_r)
        self._exit: int | None = None
        import threading

        # cancel() may come from the caller's thread while finish()'s writer thread hands over
        self._lock = threading.RLock()
        self._cancelled = False

    @staticmethod
    def available() -> bool:
        import os
        import sys
        import threading

        if not (sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1
                and not os.environ.get("TRTSTUDIO_NO_FORK")):
            return False
        try:  # both processes write to the file descriptor behind sys.stdout (not to a StringIO)
            return sys.stdout.fileno() >= 0 and getattr(sys.stdout, "buffer", None) is not None
        except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
            return False

    def _wait(self) -> int:
        import os

        with self._lock:
            if self._exit is None:
                _, status = os.waitpid(self._pid, 0)
                self._exit = os.waitstatus_to_exitcode(status)
            return self._exit

    def _close(self, which: str) -> None:
        import os

        fd = getattr(self, which)
        if fd is not None:
            setattr(self, which, None)
            try:
                os.close(fd)
            except OSError:
                pass

    def cancel(self) -> None:
        """Stop the child (the caller failed or was interrupted). Before go nothing it wrote stays
        written; after go it is stopped where it is. Safe to call more than once, and after
        :meth:`finish`."""
        import os
        import signal

        with self._lock:
            self._cancelled = True
            self._close("_go_w")  # a child waiting for go reads end-of-file and writes nothing
            self._close("_status_r")
            if self._exit is None:
                try:
                    os.kill(self._pid, signal.SIGKILL)  # one still encoding stops now
                except ProcessLookupError:
                    pass
                self._wait()
                self._take_back()

    def _take_back(self) -> None:
        """Cut the output file where the head began (what the child wrote early is gone)."""
        import os

        if self._start is not None:
            try:
                os.ftruncate(self._out_fd, self._start)
                os.lseek(self._out_fd, self._start, os.SEEK_SET)
            except OSError:
                pass

    def finish(self, rest: list[tuple[str, Any]]) -> int | None:
        """Let the child write the head, then write ``rest`` (the remaining pairs; a value may be
        :class:`Chunked`) and the closing brace. Returns how many NaN/infinite floats the whole
        object held, or None when the child could not encode the head or died before writing (nothing written: the caller writes the
        object itself). BrokenPipeError when the reader went away; OSError when the child failed
        while writing (part of the head may be out: nothing can be written after it)."""
        import os

        assert self._status_r is not None and self._go_w is not None
        status_file = os.fdopen(self._status_r, "rb")
        self._status_r = None
        try:
            return self._finish(rest, status_file)
        finally:
            status_file.close()

    def _finish(self, rest: list[tuple[str, Any]], status_file: Any) -> int | None:
        import queue
        import threading

        counted = [0]
        if self._start is None:
            # Into a pipe (or a file not written at its end) nothing can be taken back: the rest
            # is encoded whole before the child is let write, so that a failure writes nothing.
            try:
                tail = b"".join(_encoded(rest, counted, first=b",", stdlib=True))
            except BaseException:
                self.cancel()  # the child writes nothing, and stops reading now
                raise
            head = self._hand_over(status_file)
            if head is None:
                return None
            _write_all(self._out_fd, tail + b"}\n")
            _reap_finished()  # the child too, if it has ended by now
            return head + counted[0]
        # Into a regular file (taken back on failure) this thread encodes the rest a piece at a
        # time while a writer thread hands over to the child and, once the child has written the
        # head, writes the pieces: the kernel's copy of them into the file runs beside the encoding
        # of the next ones (0.8 s for the 100 MB of findings of 300,000 layers).
        pieces: queue.SimpleQueue[bytes | memoryview | None] = queue.SimpleQueue()
        state: dict[str, Any] = {}

        def write() -> None:
            try:
                state["head"] = self._hand_over(status_file)
                while (piece := pieces.get()) is not None:
                    if state["head"] is not None and "stop" not in state:
                        _write_all(self._out_fd, piece)
            except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
                state["error"] = exc
                while pieces.get() is not None:  # the encoder goes on to its end: let it
                    pass

        writer = threading.Thread(target=write, name="trtstudio-json-writer", daemon=True)
        writer.start()
        try:
            for piece in _encoded(rest, counted, first=b",", stdlib=True):
                pieces.put(piece)
            pieces.put(b"}\n")
            pieces.put(None)
            writer.join()
        except BaseException:
            state["stop"] = True  # nothing more written, the child stopped, what was written taken back
            self.cancel()
            pieces.put(None)
            writer.join()
            self._take_back()
            raise
        if "error" in state:
            raise state["error"]
        head = state["head"]
        _reap_finished()  # the child too, if it has ended by now
        return None if head is None else head + counted[0]

    def _hand_over(self, status_file: Any) -> int | None:
        """Let the child write the head (go) and wait until it has: its NaN count, or None when it
        could not encode the head or died before writing (nothing of it written)."""
        import os
        import sys

        status = status_file.readline().decode().split()
        if not status or status[0] != "ok":
            self.cancel()
            return None
        with self._lock:  # not after (or while) the caller cancels
            go_w = self._go_w
            if self._cancelled or go_w is None:
                return None
            try:
                os.write(go_w, b"g")
            except BrokenPipeError:  # the child is gone (killed) before it wrote anything
                self.cancel()
                return None
            self._close("_go_w")
        began = status_file.readline().strip() == b"writing"
        # a child that wrote it all is not waited for: ending a process the size of this one takes
        # the kernel a while (0.1-0.3 s here), and nothing of it is needed any more
        if began and status_file.readline().strip() == b"written":
            with self._lock:
                if self._exit is None:  # done (cancel() now does nothing); reaped later (_UNREAPED)
                    self._exit = 0
                    _UNREAPED.append(self._pid)
                code = self._exit
        else:
            code = self._wait()
        if not began:  # it died before go: nothing of it stays written, the caller writes the whole object
            self._take_back()
            return None
        if code == 3:
            raise BrokenPipeError("standard output closed")
        if code != 0:
            raise OSError(f"the process writing the layers ended with status {code}; the output is incomplete")
        sys.stdout.flush()  # the rest goes to the file descriptor after anything buffered
        return int(status[1])

