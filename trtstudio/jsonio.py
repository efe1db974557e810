"""Fast, strict JSON in and out (orjson, with the standard library where orjson says no).

- :func:`dumps` returns bytes: compact by default, ``indent`` for people; non-finite floats
  (NaN, +-Infinity, which JSON cannot hold) are written as ``null`` with one warning that counts
  them; keys stay in insertion order; non-string keys become strings, dataclasses and numpy
  values are serialised.
- :func:`loads` parses bytes or text; documents orjson refuses (the ``NaN``/``Infinity`` literals
  that Python's own writer emits) fall back to :mod:`json`, whose errors say line and column.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_OPTS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


class NonFiniteWarning(UserWarning):
    """Warned by :func:`dumps` when it wrote NaN or infinite numbers as ``null``."""


def count_non_finite(obj: Any) -> int:
    """How many NaN or infinite floats ``obj`` (dicts, lists, tuples, scalars) holds."""
    stack = [obj]
    pop = stack.pop
    push = stack.extend
    n = 0
    while stack:
        x = pop()
        t = type(x)
        if t is dict:
            push(x.values())
        elif t is list or t is tuple:
            push(x)
        elif t is float and x - x != 0.0:  # NaN - NaN and inf - inf are NaN
            n += 1
    return n


def _default(obj: Any) -> Any:
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=str)
    if hasattr(obj, "to_json"):
        return obj.to_json()
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def dumps(obj: Any, *, indent: int | None = None, newline: bool = True, check_finite: bool = True) -> bytes:
    """``obj`` as UTF-8 JSON bytes: compact, or indented by ``indent`` (orjson indents by 2 only,
    so any other width is re-indented by the standard library, which is slower). NaN and infinities
    become null; with ``check_finite`` one ``warning:`` line on stderr says how many (once the
    document is written, so a failure prints only its error)."""
    data = _encode(obj, indent, newline)
    if check_finite:
        from trtstudio.fileio import warn_non_finite

        warn_non_finite(count_non_finite(obj))
    return data


def _encode(obj: Any, indent: int | None, newline: bool) -> bytes:
    opts = _OPTS | (orjson.OPT_APPEND_NEWLINE if newline else 0)
    if indent is None or indent == 2:
        try:
            return orjson.dumps(obj, default=_default, option=opts | (orjson.OPT_INDENT_2 if indent else 0))
        except TypeError:  # integers beyond 64 bits, lone surrogates: the standard library writes them
            pass
    try:
        data = json.loads(orjson.dumps(obj, default=_default, option=_OPTS))
    except TypeError:
        from trtstudio.fileio import strict

        data = strict(obj)[0]
    # ensure_ascii: lone surrogates (from damaged inputs) leave as \u escapes, never as bad UTF-8
    text = json.dumps(data, indent=indent, ensure_ascii=True, allow_nan=False, default=_default)
    return (text + ("\n" if newline else "")).encode("utf-8")


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse JSON; raises :class:`json.JSONDecodeError` (with line and column) on bad input."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    text = data if isinstance(data, str) else bytes(data).decode("utf-8", errors="replace")
    return json.loads(text)


__all__ = ["NonFiniteWarning", "count_non_finite", "dumps", "loads"]


def write_stdout(data: bytes) -> None:
    """Write encoded JSON to standard output (its byte buffer when it has one, else as text)."""
    import sys

    buf = getattr(sys.stdout, "buffer", None)
    if buf is None:
        sys.stdout.write(data.decode("utf-8"))
        return
    sys.stdout.flush()
    buf.write(data)
    buf.flush()


def read_json_file(path: Any, what: str) -> Any:
    """The JSON document in ``path``; InputError "cannot read WHAT: ..." naming the file when it is
    not UTF-8 JSON or nests too deeply."""
    from trtstudio.errors import InputError
    from trtstudio.fileio import read_bytes

    try:
        return json.loads(read_bytes(path).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"cannot read {what}: {exc}") from None
    except RecursionError:
        raise InputError(path, f"cannot read {what}: nested too deeply") from None
