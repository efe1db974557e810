"""Work the window hands to a child process of this same program, because in-process it would hold
the GIL (C code that never releases it) long enough to freeze the window's thread.

A child is ``trtstudio FLAG ARG`` (``python -m trtstudio.cli FLAG ARG`` from a source tree, the
bundle's executable when frozen); :func:`trtstudio.cli.main` routes the private flags here:

- ``--_infer-shapes MODEL``: ONNX shape inference (:func:`trtstudio.graph.model.inferred_table`).
- ``--_json-lines FILE``: a JSON document re-written one piece per line (:func:`write_json_lines`),
  which the parent parses piece by piece (:func:`load_json_in_pieces`), so no single parse holds
  the GIL for long. orjson parses a 56 MB engine description in one call of about 0.25 s. The fast
  readers cut documents up to ``CUT_HERE_MAX_BYTES`` into the same pieces in this process
  (:func:`cut_here`), which is much cheaper than the child and holds the GIL only tens of ms.
- ``--_json-tree FILE``: a document nested deeper (a session) cut into pieces of about
  ``PIECE_BYTES`` (:func:`write_json_tree`), which the parent parses one by one (:func:`load_json_tree`).

Responsive parsing is asked for per thread (:func:`responsive_parsing`): the window's loader
workers do; the command line parses in one go, which is fastest.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

INFER_SHAPES_FLAG = "--_infer-shapes"
JSON_LINES_FLAG = "--_json-lines"
JSON_TREE_FLAG = "--_json-tree"
FLAGS = (INFER_SHAPES_FLAG, JSON_LINES_FLAG, JSON_TREE_FLAG)

# Documents at least this big are parsed in pieces by a responsive thread (about 30 ms of orjson).
RESPONSIVE_MIN_BYTES = 8 * 1024 * 1024
_LIST_PIECES_MIN = 64  # top-level lists shorter than this travel as one line

_local = threading.local()


def command(flag: str, arg: str) -> list[str]:
    """The command line of a child running ``flag arg``."""
    if getattr(sys, "frozen", False):  # the PyInstaller bundle: the executable is the trtstudio command
        return [sys.executable, flag, arg]
    return [sys.executable, "-m", "trtstudio.cli", flag, arg]


@contextlib.contextmanager
def _this_thread(name: str, value: Any) -> Iterator[None]:
    """Within this block, this thread's ``name`` (in ``_local``) is ``value``."""
    before = getattr(_local, name, None)
    setattr(_local, name, value)
    try:
        yield
    finally:
        setattr(_local, name, before)


def responsive_parsing() -> contextlib.AbstractContextManager[None]:
    """Within this block, this thread parses big JSON files in pieces (see the module docstring)."""
    return _this_thread("on", True)


def parsing_responsively() -> bool:
    return bool(getattr(_local, "on", False))


def encode_document(doc: Any, indent: int = 2) -> tuple[bytes, int]:
    """(``doc`` as indented strict JSON, how many NaN/infinities became null) for a file: orjson in
    one call, except in a thread that parses responsively (the window's workers,
    :func:`parsing_responsively`), where one orjson call on a big document would hold the GIL (and
    freeze the window) for a fifth of a second: there the standard library's indented encoder,
    which is pure Python and lets the window's thread in, writes the same document (slower)."""
    from trtstudio.jsonio import count_non_finite, default, dumps, strict

    if parsing_responsively():
        clean, count = strict(doc)
        text = json.dumps(clean, indent=indent, allow_nan=False, default=default) + "\n"
        return text.encode("utf-8"), count
    return dumps(doc, indent=indent, check_finite=False), count_non_finite(doc)


def _file_bytes(path: str) -> bytes | None:
    """The children's input: the file's bytes, None where it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _cutter() -> Callable[[Any], Any]:
    """msgspec's cut of a JSON list or object into its elements' or members' JSON, as written
    (:func:`cut_here` and the children), without parsing them."""
    import msgspec

    return msgspec.json.Decoder(list[msgspec.Raw] | dict[str, msgspec.Raw]).decode


def _one_line(raw: Any) -> bytes:
    """A piece's JSON on one line: msgspec refuses a control character inside a string, so a line
    break in a piece it cut is whitespace, written as a space."""
    piece = bytes(raw)
    return piece.replace(b"\n", b" ").replace(b"\r", b" ") if b"\n" in piece or b"\r" in piece else piece


# the child sends a long list's elements in runs of about this many bytes (at least one element)
RUN_BYTES = 256 * 1024


def _write_runs(write: Callable[[bytes], Any], items: list[Any]) -> None:
    """``items`` (pieces of JSON) in runs: a line ``[count, nbytes]``, then ``nbytes`` bytes, a JSON
    list of the run's ``count`` pieces as the document wrote them, and a newline."""
    i, n = 0, len(items)
    while i < n:
        j, size = i, 0
        while j < n and (size < RUN_BYTES or j == i):
            size += len(items[j]) + 1
            j += 1
        body = b"[%s]" % b",".join(items[i:j])
        write(b"[%d,%d]\n" % (j - i, len(body)) + body + b"\n")
        i = j


def write_json_lines(path: str, out: IO[bytes]) -> int:
    """The child's side: ``path`` cut by :func:`cut_here` and written as lines: ``["a", n]`` and
    the n elements for a top-level list; for an object, ``["r", key]`` and the member's line, or
    ``["l", key, n]`` and the n elements of a long list; ``["v", value]`` for a top-level string,
    number, true, false or null. The elements of a list come in runs (:func:`_write_runs`): the
    parent reads and decodes a run in one call each, not an element at a time (the runs of a
    300,000-layer engine decode in 0.41 s, its 300,000 lines split and decoded one by one in
    0.52 s). Each piece is its JSON as the document wrote it; a member's line is on one line
    (:func:`_one_line`). What the cut does not parse (numbers, the text of strings), the parent's
    parse of each piece checks. Exit status 0, or 3 where msgspec cannot cut the document (NaN
    literals, malformed): the parent then parses it itself and reports what is wrong. (This child
    parsed the whole document with orjson and wrote every piece again: 2.6 s for a 340 MB engine
    description, the cut 0.5 s.)"""
    import msgspec

    data = _file_bytes(path)
    if data is None:
        return 3
    doc = cut_here(data)
    write = out.write
    if doc is None:  # a top-level scalar, or what msgspec cannot cut
        try:
            scalar = msgspec.json.decode(data, type=msgspec.Raw)
        except (msgspec.DecodeError, RecursionError):
            return 3
        write(b'["v",' + _one_line(scalar) + b"]\n")
    elif isinstance(doc, RawLines):
        write(b'["a",%d]\n' % len(doc))
        _write_runs(write, doc)
    else:
        key = msgspec.json.Encoder().encode
        for k, v in doc.items():
            if isinstance(v, RawLines):
                write(b'["l",' + key(k) + b',%d]\n' % len(v))
                _write_runs(write, v)
            else:
                write(b'["r",' + key(k) + b"]\n" + _one_line(v.raw) + b"\n")
    out.flush()
    return 0


class RawLines(list):  # type: ignore[type-arg]
    """The elements of a long list, each one's JSON as the document wrote it (a ``msgspec.Raw``),
    for a reader that decodes them itself (:func:`cut_here`)."""


class RawRuns(list):  # type: ignore[type-arg]
    """The elements of a long list as the child of :func:`read_pieces` sent them: runs of them,
    each a JSON list (bytes) of elements as the document wrote them; ``n`` of them in all. A
    reader decodes them with :func:`decode_runs` (a run in one call); :meth:`lines` cuts them."""

    n = 0

    def lines(self) -> RawLines:
        """The elements, each one's JSON (a ``msgspec.Raw``), as :func:`cut_here` gives them."""
        import msgspec

        out = RawLines()
        decode_runs(self, msgspec.json.Decoder(list[msgspec.Raw]).decode, self.n, out)
        return out


def decode_runs(runs: Iterable[bytes], decode: Callable[[bytes], Any], n: int | None = None,
                into: list[Any] | None = None) -> list[Any]:
    """The elements of ``runs`` (each a JSON list, as :func:`_write_runs` wrote it), each run
    decoded in one call of ``decode``, appended to ``into`` (a new list where None), which is
    returned. ``n``: how many elements the child said there are (a :class:`RawRuns`' ``n``, or a
    run's count); a ValueError ``"N elements where the child said n"`` where the runs give another
    number (cut short, garbled). The one place the readers join runs: :meth:`RawRuns.lines`,
    :func:`read_pieces`, :func:`parse_raw` and the fast readers (``engine/readers/_fast.py``).
    What ``decode`` raises (a run that is not JSON, or not of the reader's shape) passes through."""
    out = [] if into is None else into
    start = len(out)
    extend = out.extend
    for run in runs:  # between two runs the interpreter may hand the GIL to the window
        extend(decode(run))
    if n is not None and len(out) - start != n:
        raise ValueError(f"{len(out) - start} elements where the child said {n}")
    return out


class RawValue:
    """A member of a document that :func:`cut_here` or the child of :func:`read_pieces` left
    unparsed (``raw``: its JSON, a ``msgspec.Raw`` or the child's line): a fast reader decodes it with msgspec as its decode of the whole document
    would, :func:`parse_raw` with orjson as the general reader's parse of the whole document would
    (they differ on integers beyond 64 bits: exact, or a float)."""

    __slots__ = ("raw",)

    def __init__(self, raw: Any) -> None:
        self.raw = raw


def load_json_in_pieces(path: str) -> Any | None:
    """The parent's side: the document at ``path`` parsed from a child's lines, each line parsed on
    its own; None when the child could not do it (the caller then parses in one go)."""
    return read_pieces(path)


class Abandoned(Exception):
    """Raised in a thread reading through a child (:func:`read_pieces`, :func:`load_json_tree`)
    once another thread gave the read up (:class:`Abandon`): the child was killed. Not a
    ValueError, so no reader takes it for a damaged file."""


class Abandon:
    """One thread's way to give up the children's reads of another: that thread reads within
    :meth:`watching`; :meth:`now` (from any thread) kills the children it has running and keeps it
    from starting more, and its read raises :class:`Abandoned` as soon as it next touches a child
    (it reads the killed child's end of output), whatever the child had sent. Work of that
    thread between reads from a child (reading the file, decoding a run it holds) is not
    interrupted: it ends at the next read. ``engine.load._read_files`` gives up a big file's
    read when a small file beside it fails."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen[bytes]] = set()
        self.given_up = False

    def watching(self) -> contextlib.AbstractContextManager[None]:
        """Within this block, this thread's children are the ones :meth:`now` kills."""
        return _this_thread("abandon", self)

    def now(self) -> None:
        """Give the reads up: kill (and reap) the children running; a child started later is
        killed as it starts. Waits for no thread."""
        with self._lock:
            self.given_up = True
            procs = list(self._procs)
        for proc in procs:
            _end(proc)

    def _add(self, proc: subprocess.Popen[bytes]) -> bool:
        """Count ``proc`` in; False where the reads were given up already."""
        with self._lock:
            if self.given_up:
                return False
            self._procs.add(proc)
            return True

    def _drop(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.discard(proc)

    def check(self) -> None:
        """Raise :class:`Abandoned` where the reads were given up."""
        if self.given_up:
            raise Abandoned("the read was given up")


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc`` where it still runs, and reap it (Popen's wait is safe from two threads)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def _child_output(flag: str, path: str) -> Iterator[subprocess.Popen[bytes] | None]:
    """A child running ``flag path`` (None where it cannot start), its standard output a pipe to
    read; killed when the block ends before the child does. In a thread whose reads an
    :class:`Abandon` can give up, the block raises :class:`Abandoned` where they were (whatever
    the block made of the killed child's output)."""
    abandon: Abandon | None = getattr(_local, "abandon", None)
    if abandon is not None:
        abandon.check()
    try:
        proc = subprocess.Popen(command(flag, path), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        yield None
        return
    try:
        if abandon is not None and not abandon._add(proc):
            raise Abandoned("the read was given up")
        try:
            yield proc
        except BaseException:
            if abandon is not None:
                abandon.check()
            raise
    finally:
        _end(proc)
        assert proc.stdout is not None
        proc.stdout.close()
        if abandon is not None:
            abandon._drop(proc)
    if abandon is not None:
        abandon.check()


def read_pieces(path: str, raw: bool = False, feed: dict[str | None, Callable[[bytes], None]] | None = None) -> Any | None:
    """:func:`load_json_in_pieces`; with ``raw``, the elements of long lists (and of a top-level
    list) stay unparsed, in :class:`RawRuns` (:func:`parse_raw` parses them as it would have).

    ``feed`` (with ``raw``): for a long list whose key is in it (None: a top-level list), a
    function that is also given each run of the list's elements as it arrives, in order: a reader
    decodes them while the child cuts and sends the rest (a 300,000-layer engine: the child takes
    0.4 s to its first run, then sends the rest beside the parent's 0.8 s of decoding)."""
    import orjson

    with _child_output(JSON_LINES_FLAG, path) as proc:
        if proc is None or proc.stdout is None:
            return None
        stdout = proc.stdout
        read = stdout.readline
        loads = orjson.loads
        feeds = feed if raw and feed else {}

        def elements(key: str | None, n: int) -> Any:
            fed = feeds.get(key)
            runs = RawRuns()
            runs.n = n
            out: list[Any] = []
            while n > 0:
                count, size = loads(read())
                run = stdout.read(size)
                if not 0 < count <= n or len(run) != size or stdout.read(1) != b"\n":
                    raise ValueError("a short run")
                n -= count
                if not raw:
                    decode_runs((run,), loads, count, out)
                    continue
                runs.append(run)
                if fed is not None:
                    fed(run)
            return runs if raw else out

        doc: Any = None
        try:
            while line := read():
                head = loads(line)
                kind = head[0]
                if kind == "a":
                    doc = elements(None, head[1])
                elif kind == "v":
                    doc = head[1]
                else:
                    if doc is None:
                        doc = {}
                    if kind == "r":  # a member: raw, as cut_here leaves it, or parsed
                        doc[head[1]] = RawValue(read()) if raw else loads(read())
                    else:  # "l"
                        doc[head[1]] = elements(head[1], head[2])
            return doc if proc.wait() == 0 else None
        except (orjson.JSONDecodeError, IndexError, TypeError, ValueError):
            return None


# Up to this size a document's raw pieces are cut in this process (cut_here), not by a child. The
# cut is two msgspec calls (the top-level members, then the long list), each about 0.75 ms a MB with
# the GIL held: 20-27 ms each for a 50,000-layer description (31 MB), about 20 ms at this limit.
# At 64 MB (the limit before), a 56 MB indented description beside a 100,000-node model stalled the
# window 67-93 ms; cut by the child (which now sends runs the parent decodes as they come, beside
# the other files' reads) 25-34 ms, its table 0.1 s later (benchmarks/stall_matrix.py cases
# transformer/fan/cnn). The child costs about 0.4 s before its first run, read beside the profile.
CUT_HERE_MAX_BYTES = 24 * 1024 * 1024


def cut_here(text: str | bytes) -> Any | None:
    """What :func:`read_pieces` with ``raw`` gives for the document ``text``, cut in this process:
    a top-level list, and each list of at least ``_LIST_PIECES_MIN`` elements of a top-level
    object, as :class:`RawLines` of each element's JSON (``msgspec.Raw``, as the document wrote
    it); the object's other members as :class:`RawValue` (the child parses them). None where
    msgspec cannot cut it (NaN literals, malformed JSON...): the caller then parses the whole
    document in one go, which names what is wrong.

    The child of :func:`read_pieces` cuts with this too. Neither checks what it leaves raw: a
    reader that refuses a piece parses the pieces with :func:`parse_raw_or_none`, which says None
    where orjson refuses one."""
    import msgspec

    try:
        doc = _cutter()(text)
        if isinstance(doc, list):
            return RawLines(doc)
        out: dict[str, Any] = {}
        for k, raw in doc.items():
            items = msgspec.json.decode(raw, type=list[msgspec.Raw]) if memoryview(raw)[:1] == b"[" else None
            if items is not None and len(items) >= _LIST_PIECES_MIN:
                out[k] = RawLines(items)
            else:
                out[k] = RawValue(raw)
        return out
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, UnicodeEncodeError):
        return None


# write_json_tree: an object or list at least this big is cut into its members, a smaller value
# travels whole (the parent parses it in one orjson call of about 2 ms a MB)
PIECE_BYTES = 1024 * 1024


def write_json_tree(path: str, out: IO[bytes]) -> int:
    """The child's side of :func:`load_json_tree`: the document at ``path`` cut by msgspec (without
    parsing what it does not cut) into a stream of header lines, each a JSON list:

    - ``["o", key]`` or ``["a", key]`` opens an object or list of at least ``PIECE_BYTES`` (``key``:
      its name in the enclosing object, else null), ``["e"]`` closes it;
    - ``["m", n]`` and ``["x", n]``: the next members of the open object or list, as a JSON object
      or list of up to about ``PIECE_BYTES`` in ``n`` bytes and a newline (a list of a million
      numbers is a few pieces, not a million);
    - ``["v", key, n]``: a value whose JSON follows in ``n`` bytes and a newline (the whole
      document when small; a big string or number).

    Exit status 0, or 3 where msgspec cannot cut it (the parent then parses the file itself and
    reports what is wrong)."""
    import msgspec

    data = _file_bytes(path)
    if data is None:
        return 3
    cut = _cutter()
    header = msgspec.json.Encoder().encode
    write = out.write

    def piece(kind: str, body: bytes) -> None:
        write(header([kind, len(body)]) + b"\n")
        write(body)
        write(b"\n")

    def walk(raw: Any, key: str | None) -> None:
        doc = None
        if len(raw) >= PIECE_BYTES:
            try:
                doc = cut(raw)
            except msgspec.ValidationError:  # a big string or number: a value
                doc = None
        if doc is None:
            write(header(["v", key, len(raw)]) + b"\n")
            write(raw)
            write(b"\n")
            return
        is_list = isinstance(doc, list)
        write(header(["a" if is_list else "o", key]) + b"\n")
        items: Iterable[tuple[str | None, Any]] = ((None, x) for x in doc) if isinstance(doc, list) else doc.items()
        batch: list[bytes] = []
        size = 0

        def flush() -> None:  # the small members gathered so far, as one piece
            nonlocal batch, size
            if batch:
                if is_list:
                    piece("x", b"[%s]" % b",".join(batch))
                else:
                    piece("m", b"{%s}" % b",".join(batch))
                batch, size = [], 0

        for k, v in items:
            if len(v) >= PIECE_BYTES:  # cut further; the members before it go first
                flush()
                walk(v, k)
                continue
            batch.append(bytes(v) if is_list else header(k) + b":" + bytes(v))
            size += len(v) + 1
            if size >= PIECE_BYTES:
                flush()
        flush()
        write(b'["e"]\n')

    try:
        walk(data, None)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return 3
    out.flush()
    return 0


def load_json_tree(path: str) -> Any | None:
    """What ``orjson.loads`` gives for the document at ``path``, parsed in short calls: a child cuts
    it (:func:`write_json_tree`) into pieces of about ``PIECE_BYTES`` (a value, or a run of an
    object's or list's small members) and the objects and lists around them, and this thread parses
    the pieces one by one, the GIL free in between. For documents
    nested deeper than :func:`read_pieces` cuts (a session: its engines' layers and findings).
    Cutting in this process instead held the GIL 60 ms per pass over a 92 MB session, a pass per
    level. None where the child could not cut it or orjson refuses a value (NaN literals,
    malformed JSON...): the caller then parses it in one go, which names what is wrong."""
    import orjson

    with _child_output(JSON_TREE_FLAG, path) as proc:
        if proc is None or proc.stdout is None:
            return None
        readline, read = proc.stdout.readline, proc.stdout.read
        loads = orjson.loads
        root: Any = None
        stack: list[Any] = []
        try:
            while line := readline():
                head = loads(line)
                kind = head[0]
                if kind == "e":
                    stack.pop()
                    continue
                if kind == "x":
                    stack[-1].extend(loads(read(head[1] + 1)))
                    continue
                if kind == "m":
                    stack[-1].update(loads(read(head[1] + 1)))
                    continue
                value = loads(read(head[2] + 1)) if kind == "v" else {} if kind == "o" else []
                if not stack:
                    root = value
                elif type(stack[-1]) is list:
                    stack[-1].append(value)
                else:
                    stack[-1][head[1]] = value
                if kind != "v":
                    stack.append(value)
            return root if proc.wait() == 0 and not stack else None
        except (orjson.JSONDecodeError, IndexError, TypeError, ValueError, KeyError, AttributeError):
            return None


def parse_raw_or_none(doc: Any) -> Any | None:
    """:func:`parse_raw`, or None where orjson refuses a piece (a piece that :func:`cut_here` left
    unchecked: bad UTF-8, a number beyond a double...) or the child's runs are cut short: the
    caller parses the whole document then."""
    try:
        return parse_raw(doc)
    except (ValueError, RecursionError):  # orjson.JSONDecodeError is a ValueError
        return None


def parse_raw(doc: Any) -> Any:
    """``doc`` from :func:`read_pieces` with ``raw`` as it would be without: each RawLines and
    RawRuns parsed (orjson.JSONDecodeError where orjson refuses a piece, ValueError where runs are
    cut short: :func:`decode_runs`)."""
    import orjson

    def loads(x: Any) -> Any:
        return orjson.loads(x if type(x) is bytes else bytes(x))  # a child's line, or a msgspec.Raw

    def value(v: Any) -> Any:
        if isinstance(v, RawLines):
            return [loads(x) for x in v]
        if isinstance(v, RawRuns):
            return decode_runs(v, orjson.loads, v.n)
        return loads(v.raw) if type(v) is RawValue else v

    if isinstance(doc, RawLines):
        return [loads(x) for x in doc]
    if isinstance(doc, RawRuns):
        return decode_runs(doc, orjson.loads, doc.n)
    if isinstance(doc, dict):
        return {k: value(v) for k, v in doc.items()}
    return doc
