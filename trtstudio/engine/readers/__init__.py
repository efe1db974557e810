"""Registry of readers for TensorRT output files.

Each reader module registers itself with :func:`register`::

    @register("trtexec-profile", patterns=("*.profile.json",), sniff=_sniff, kind="profile")
    def read(path: Path, text: str) -> EngineInfo: ...

``sniff(head, path)`` looks at the first ~64 KiB of the file as text and says whether the reader
understands it; ``patterns`` are fnmatch patterns on the file name, used when no sniffer claims a file.
``kind`` tells :func:`trtstudio.engine.load.load_engine` how to merge the result: ``layers``
(layer information), ``profile`` (per-layer times), ``times`` (per-inference timings), ``log``
(anything a log may hold), ``metadata`` (versions, device, settings) or ``engine`` (a plan file).

Readers are loaded lazily on first use (:func:`readers`), so importing this package costs nothing.
"""

from __future__ import annotations

import fnmatch
import importlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trtstudio.jsonio as jsonio
from trtstudio.bigdocs.gcpause import gc_paused
from trtstudio.engine.model import EngineInfo
from trtstudio.errors import InputError

HEAD_BYTES = 64 * 1024

SniffFn = Callable[[str, Path], bool]
ReadFn = Callable[[Path, str], EngineInfo]


@dataclass
class Reader:
    """One registered reader."""

    name: str
    read: ReadFn
    patterns: tuple[str, ...] = ()
    sniff: SniffFn | None = None
    kind: str = "layers"
    binary: bool = False  # reads the bytes itself; ``text`` is empty
    priority: int = 50  # sniffing order: lower first
    # ``text`` is the file's bytes (checked as read_text checks them, not decoded): a reader that
    # decodes JSON from bytes saves decoding a big file to str first
    takes_bytes: bool = False

    def matches_name(self, path: Path) -> bool:
        name = path.name.lower()
        return any(fnmatch.fnmatch(name, p.lower()) for p in self.patterns)


_REGISTRY: dict[str, Reader] = {}
_LOADED = False
_LOADING = threading.RLock()  # a reader module registering itself may ask for the readers again

# Built-in reader modules, in sniffing order (most specific first).
_BUILTIN = (
    "trtstudio.engine.readers.engine_file",
    "trtstudio.engine.readers.nsys_sqlite",
    "trtstudio.engine.readers.kineto_json",
    "trtstudio.engine.readers.layer_dump",
    "trtstudio.engine.readers.build_json",
    "trtstudio.engine.readers.inspector_json",
    "trtstudio.engine.readers.profile_json",
    "trtstudio.engine.readers.times_json",
    "trtstudio.engine.readers.metadata_json",
    "trtstudio.engine.readers.polygraphy_log",
    "trtstudio.engine.readers.trtexec_log",
    "trtstudio.engine.readers.rtx_log",  # also read by build_json: always there
)
# Readers written elsewhere; absent ones are skipped.
_OPTIONAL: tuple[str, ...] = ()


def register(
    name: str,
    patterns: tuple[str, ...] | list[str] = (),
    sniff: SniffFn | None = None,
    kind: str = "layers",
    binary: bool = False,
    priority: int = 50,
    takes_bytes: bool = False,
) -> Callable[[ReadFn], ReadFn]:
    """Decorator: register ``read(path, text) -> EngineInfo`` under ``name``.

    ``priority`` orders the sniffers (lower first; generic log sniffers use 90); ``takes_bytes``:
    ``text`` is the file's undecoded bytes (see :attr:`Reader.takes_bytes`).
    """

    def deco(fn: ReadFn) -> ReadFn:
        _REGISTRY[name] = Reader(name, fn, tuple(patterns), sniff, kind, binary, priority, takes_bytes)
        return fn

    return deco


def _load_builtin() -> None:
    global _LOADED
    if _LOADED:
        return
    with _LOADING:  # files read in threads of their own (load_engine) each see every reader
        if _LOADED:
            return
        for mod in _BUILTIN:
            importlib.import_module(mod)
        for mod in _OPTIONAL:
            try:
                importlib.import_module(mod)
            except ImportError:
                pass
        _LOADED = True


def readers() -> list[Reader]:
    """All registered readers, built-in ones first, in sniffing order."""
    _load_builtin()
    return sorted(_REGISTRY.values(), key=lambda r: r.priority)


def get_reader(name: str) -> Reader:
    """The reader registered as ``name``."""
    _load_builtin()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no reader named {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def read_head(path: Path, n: int = HEAD_BYTES) -> bytes:
    """The first ``n`` bytes of ``path``; InputError when it cannot be read (pipes and devices are
    refused before opening: :func:`trtstudio.fileio.check_input`)."""
    from trtstudio.fileio import read_bytes

    return read_bytes(path, n)


def is_binary(head: bytes) -> bool:
    """True for data that is not text (NUL bytes or mostly non-printable)."""
    if not head:
        return False
    if b"\x00" in head:
        return True
    sample = head[:4096]
    bad = sum(1 for b in sample if b < 9 or 13 < b < 32)
    return bad > len(sample) // 20


def find_reader(path: Path, head: bytes | None = None) -> Reader:
    """The reader for ``path``: first a sniffer that claims its head, then a name pattern."""
    path = Path(path)
    if head is None:
        head = read_head(path)
    all_readers = readers()
    if not head.strip():
        raise InputError(path, "empty file")
    binary = is_binary(head)
    text = "" if binary else head.decode("utf-8", errors="replace")
    for r in all_readers:
        if r.binary:  # binary readers sniff the raw head (latin-1 keeps every byte)
            if r.sniff is not None and r.sniff(head.decode("latin-1"), path):
                return r
            continue
        if not binary and r.sniff is not None and r.sniff(text, path):
            return r
    if binary:
        raise InputError(
            path,
            "binary data that is not a known TensorRT output (a serialized engine must end in .engine, "
            ".plan or .trt)",
        )
    for r in all_readers:
        if not r.binary and r.matches_name(path):
            return r
    raise InputError(
        path,
        "not a known TensorRT output: expected layer information JSON (--exportLayerInfo), "
        "a profile (--exportProfile), timings (--exportTimes), a trtexec/Polygraphy log or TREx metadata",
    )


def read_text(path: Path) -> str:
    """The whole file as text (UTF-8, undecodable bytes replaced)."""
    return read_text_bytes(path).decode("utf-8", errors="replace")


def read_text_bytes(path: Path) -> bytes:
    """The whole file's bytes, refused as :func:`read_text` refuses them (binary tail, empty)."""
    from trtstudio.fileio import read_bytes, tail_is_binary

    if tail_is_binary(path):
        raise InputError(path, "ends in binary data (NUL bytes): a truncated, zero-padded or corrupt text file")
    data = read_bytes(path)
    if not data or data.isspace():  # (not data.strip(): a copy of the whole file where it ends in a newline)
        raise InputError(path, "empty file")
    return data


def as_text(text: str | bytes) -> str:
    """``text`` as str (the bytes a ``takes_bytes`` reader gets decoded as :func:`read_text` decodes them)."""
    return text if isinstance(text, str) else text.decode("utf-8", errors="replace")


def loads_json(path: Path, text: str, pieces: bool = True) -> Any:
    """JSON (orjson, else the standard library) with malformed or truncated JSON as one InputError line.

    In a thread that parses responsively (the window's loader workers, see :mod:`trtstudio.bigdocs.children`)
    a big document is parsed in pieces that a child process cuts, so that no single call holds the
    GIL long; where the child cannot (or not ``pieces``: it could not already), it is parsed here in one go."""
    from trtstudio.bigdocs import children

    if pieces and len(text) >= children.RESPONSIVE_MIN_BYTES and children.parsing_responsively():
        doc = children.load_json_in_pieces(str(path))
        if doc is not None:
            return doc
    try:
        return jsonio.loads(text)
    except json.JSONDecodeError as exc:
        msg, cut = exc.msg, exc.pos >= len(text.rstrip())
        if msg == "Unterminated string starting at":  # its position is the string's start; it runs to the end
            msg, cut = "a string starts here and runs to the end of the file", True
        what = "truncated JSON" if cut else "malformed JSON"
        raise InputError(path, f"{what} at line {exc.lineno}, column {exc.colno}: {msg}") from None
    except RecursionError:
        raise InputError(path, "JSON nested too deeply") from None


@dataclass
class ReadResult:
    """What reading one file gave: the reader used and its (partial) EngineInfo."""

    path: Path
    reader: Reader
    info: EngineInfo
    extra: dict[str, Any] = field(default_factory=dict)


def read_file(path: str | Path, reader: str | None = None) -> ReadResult:
    """Read one file with the named reader, or the one :func:`find_reader` picks."""
    p = Path(path)
    r = get_reader(reader) if reader else find_reader(p)
    text: Any = "" if r.binary else read_text_bytes(p) if r.takes_bytes else read_text(p)
    try:
        with gc_paused():
            info = r.read(p, text)
    except (TypeError, AttributeError, KeyError, IndexError, ValueError, OverflowError, RecursionError) as exc:
        # a field of the wrong type or size deep in a reader: the file does not match the format
        detail = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        raise InputError(p, f"damaged {r.name} file: unexpected content ({detail})") from None
    if str(p) not in info.sources:
        info.sources.append(str(p))
    if r.name not in info.formats:
        info.formats.append(r.name)
    return ReadResult(p, r, info)


__all__ = [
    "HEAD_BYTES",
    "as_text",
    "ReadResult",
    "Reader",
    "find_reader",
    "get_reader",
    "is_binary",
    "loads_json",
    "read_file",
    "read_head",
    "read_text",
    "read_text_bytes",
    "readers",
    "register",
]
