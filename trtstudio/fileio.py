"""Safe input files and strict JSON output: the one place that says what a file must be.

Every reader, loader and CLI entry point calls :func:`check_input` before opening a user's file. It
looks with ``stat`` only (never ``open``), so a named pipe, ``/dev/zero``, a socket or a directory is
refused before anything blocks or reads forever, and a file the user cannot read is one line, not a
``PermissionError`` traceback. :func:`describe_error` turns the exceptions hostile files provoke deep
in a parser (``OverflowError`` for ``10**400``, ``RecursionError`` for JSON nested 100,000 deep,
``UnicodeDecodeError``, ``ValueError``) into the same one-line message; ``trtstudio.cli.main`` uses it
as the last guard, naming the file :func:`check_input` saw last.

Strict JSON output is :mod:`trtstudio.jsonio`'s.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from trtstudio.errors import InputError

PathLike = str | os.PathLike[str]

_last_input: str | None = None


def last_input() -> str | None:
    """The file :func:`check_input` accepted last (the CLI names it when a parser fails late)."""
    return _last_input


def reset_last_input() -> None:
    """Forget the last input (the CLI calls this before each command)."""
    global _last_input
    _last_input = None


def _kind(mode: int) -> str | None:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device (like /dev/zero)"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return "not a regular file"


def check_input(path: PathLike, *, allow_dir: bool = False, what: str = "a file") -> Path:
    """Refuse, with one :class:`InputError` line, anything that is not a readable regular file.

    Uses ``stat`` and ``access`` only, so pipes and devices are refused before any read can block.
    ``allow_dir`` accepts a readable directory too (data folders). Returns the path.
    """
    global _last_input
    p = Path(path)
    spath = os.fspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputError(spath, "no such file" if not allow_dir else "no such file or folder") from None
    except PermissionError:
        raise InputError(spath, "permission denied: a folder on the path cannot be searched") from None
    except (OSError, ValueError) as exc:  # ENAMETOOLONG, ELOOP, NUL in the name
        raise InputError(spath, f"cannot open: {getattr(exc, 'strerror', None) or exc}") from None
    kind = _kind(st.st_mode)
    if kind is not None:
        raise InputError(spath, f"is {kind}, expected {what}; trtstudio reads regular files only")
    if stat.S_ISDIR(st.st_mode):
        if not allow_dir:
            raise InputError(spath, f"is a directory, expected {what}")
        if not _readable(p, os.R_OK | os.X_OK):
            raise InputError(spath, "permission denied: the folder cannot be read")
    else:
        if not _readable(p):
            raise InputError(spath, "permission denied: the file cannot be read (check its owner and mode)")
        if looks_sparse(st):
            raise InputError(spath, f"is a sparse file ({st.st_size:,} bytes long, {st.st_blocks * 512:,} stored): "
                                    "mostly zero-filled holes (truncate, an interrupted copy), not a complete file")
    _last_input = spath
    return p


SPARSE_MIN_BYTES = 64 * 1024**2


def looks_sparse(st: os.stat_result) -> bool:
    """A large file with less than 1/16 of its length stored on disk: holes, read back as zeros."""
    blocks = getattr(st, "st_blocks", None)
    return blocks is not None and st.st_size >= SPARSE_MIN_BYTES and blocks * 512 < st.st_size // 16


def file_stamp(path: PathLike) -> tuple[int, int, int] | None:
    """(inode, size, modification time) of ``path``, None where it cannot be read: equal before
    and after a second read of the file, both reads saw the same file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _readable(p: Path, mode: int = os.R_OK) -> bool:
    # effective ids where supported: the permission open() will check
    return os.access(p, mode, effective_ids=os.access in os.supports_effective_ids)


def read_bytes(path: PathLike, limit: int | None = None) -> bytes:
    """The file's bytes (at most ``limit``) after :func:`check_input`; OS errors as InputError."""
    p = check_input(path)
    try:
        with open(p, "rb") as fh:
            return fh.read() if limit is None else fh.read(limit)
    except OSError as exc:
        raise InputError(os.fspath(path), f"cannot read: {exc.strerror or exc}") from None


def tail_is_binary(path: PathLike, n: int = 4096) -> bool:
    """True when the last ``n`` bytes hold NUL bytes: a text file padded or extended with zeros
    (``truncate -s 2G``, a sparse or half-written file). Checked before reading a large text file."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > n:
                fh.seek(size - n)
            return b"\x00" in fh.read(n)
    except OSError:
        return False


_FRIENDLY = {
    OverflowError: "a number too large to represent",
    RecursionError: "nested too deeply",
    UnicodeDecodeError: "not valid UTF-8 text",
    MemoryError: "too large to load into memory",
}


def describe_error(exc: BaseException) -> tuple[str | None, str]:
    """(file, message) for an exception a damaged input provoked, for the one-line CLI error."""
    path = getattr(exc, "filename", None)
    if isinstance(exc, OSError):
        text = exc.strerror or str(exc)
        if isinstance(exc, PermissionError):
            text = "permission denied"
        return (os.fspath(path) if path else _last_input), f"cannot read: {text}"
    for typ, text in _FRIENDLY.items():
        if isinstance(exc, typ):
            detail = str(exc).splitlines()[0][:160] if str(exc) else ""
            return _last_input, f"damaged input: {text}" + (f" ({detail})" if detail else "")
    first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
    return _last_input, f"damaged input: {first}"


# ------------------------------------------------------------------------------------------------
# JSON output is trtstudio.jsonio's. This one function remains for the command that still prints
# with it (commands/build, to move onto trtstudio.commands._emit.emit); then it goes, and with it the
# one import of jsonio here (import-linter's acyclic contract lists it as its documented exception).



__all__ = [
    "check_input",
    "describe_error",
    "last_input",
    "read_bytes",
    "reset_last_input",
    "tail_is_binary",
]


def file_sha256(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str | None:
    """SHA-256 of a file's content (None when it cannot be read)."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while block := fh.read(chunk):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_replace(path: str | os.PathLike[str], make: Any) -> Path:
    """Call ``make(tmp_path)`` to write a temporary file beside ``path``, then ``os.replace`` it over
    ``path``. On any exception the temporary file is removed, ``path`` is untouched, and the error
    re-raised."""
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        make(tmp)
        try:  # mkstemp makes 0600; give the file the mode a plain open() would
            mode = p.stat().st_mode & 0o777 if p.exists() else 0o666 & ~_umask()
            os.chmod(tmp, mode)
        except OSError:
            pass
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return p


def atomic_write(path: str | os.PathLike[str], write: Any, mode: str = "w") -> Path:
    """Call ``write(fh)`` on a temporary file beside ``path`` (text, UTF-8, unless ``mode`` is "wb"),
    then replace ``path`` with it (see :func:`atomic_replace`)."""
    def make(tmp: str) -> None:
        kwargs: dict[str, Any] = {"encoding": "utf-8", "newline": ""} if "b" not in mode else {}
        with open(tmp, mode, **kwargs) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
    return atomic_replace(path, make)
