"""The one JSON writer and reader: fast, strict JSON in and out (orjson, with the standard library
where orjson says no). Every document trtstudio prints or writes goes through here (commands
through :func:`trtstudio.commands._emit.emit`).

- :func:`dumps` returns bytes: compact by default, ``indent`` for people; non-finite floats
  (NaN, +-Infinity, which JSON cannot hold) are written as ``null`` with one warning that counts
  them; keys stay in insertion order; non-string keys become strings, dataclasses and numpy
  values are serialised.
- :func:`loads` parses bytes or text; documents orjson refuses (the ``NaN``/``Infinity`` literals
  that Python's own writer emits) fall back to :mod:`json`, whose errors say line and column.
"""

from __future__ import annotations

import json
import math
import sys
from typing import IO, Any

import orjson

OPTS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


class NonFiniteWarning(UserWarning):
    """Warned by :func:`dumps` when it wrote NaN or infinite numbers as ``null``."""


def count_non_finite(obj: Any) -> int:
    """How many NaN or infinite floats ``obj`` (dicts, lists, tuples, scalars, numpy scalars and
    arrays, which orjson writes too) holds."""
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
        elif t is float:
            if x - x != 0.0:  # NaN - NaN and inf - inf are NaN
                n += 1
        elif t is not str and t is not int and t is not bool and x is not None and hasattr(x, "dtype"):
            n += _numpy_non_finite(x)
    return n


def _numpy_non_finite(x: Any) -> int:
    import numpy as np

    a = np.asarray(x)
    if a.dtype.kind in "fc":
        return int(np.count_nonzero(~np.isfinite(a)))
    return count_non_finite(a.ravel().tolist()) if a.dtype.kind == "O" else 0


def default(obj: Any) -> Any:
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=str)
    if hasattr(obj, "to_json"):
        return obj.to_json()
    if hasattr(obj, "__fspath__"):  # a pathlib.Path: its text
        return obj.__fspath__()
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def dumps(obj: Any, *, indent: int | None = None, newline: bool = True, check_finite: bool = True) -> bytes:
    """``obj`` as UTF-8 JSON bytes: compact, or indented by ``indent`` (orjson indents by 2 only,
    so any other width is re-indented by the standard library, which is slower). NaN and infinities
    become null; with ``check_finite`` one ``warning:`` line on stderr says how many (once the
    document is written, so a failure prints only its error)."""
    data = _encode(obj, indent, newline)
    if check_finite:
        warn_non_finite(count_non_finite(obj))
    return data


def _encode(obj: Any, indent: int | None, newline: bool) -> bytes:
    opts = OPTS | (orjson.OPT_APPEND_NEWLINE if newline else 0)
    if indent is None or indent == 2:
        try:
            return orjson.dumps(obj, default=default, option=opts | (orjson.OPT_INDENT_2 if indent else 0))
        except TypeError:  # integers beyond 64 bits, lone surrogates: the standard library writes them
            pass
    try:
        data = json.loads(orjson.dumps(obj, default=default, option=OPTS))
    except TypeError:
        data = strict(obj)[0]
    # ensure_ascii: lone surrogates (from damaged inputs) leave as \u escapes, never as bad UTF-8
    text = json.dumps(data, indent=indent, separators=(",", ":") if indent is None else None, ensure_ascii=True,
                      allow_nan=False, default=default)
    return (text + ("\n" if newline else "")).encode("utf-8")


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse JSON; raises :class:`json.JSONDecodeError` (with line and column) on bad input."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    text = data if isinstance(data, str) else bytes(data).decode("utf-8", errors="replace")
    return json.loads(text)


def strict(obj: Any) -> tuple[Any, int]:
    """A copy of ``obj`` that strict JSON parsers accept, and how many non-finite numbers became null.

    NaN/Infinity -> None, numpy scalars and arrays -> Python, tuples -> lists, keys -> str.
    """
    count = 0

    def clean(o: Any) -> Any:
        nonlocal count
        if isinstance(o, float):
            if math.isfinite(o):
                return o
            count += 1
            return None
        if isinstance(o, dict):
            return {(k if isinstance(k, str) else str(k)): clean(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [clean(v) for v in o]
        if isinstance(o, (str, int, bool)) or o is None:
            return o
        tolist = getattr(o, "tolist", None)  # numpy scalars and arrays, without importing numpy
        if callable(tolist):
            return clean(tolist())
        return o

    return clean(obj), count


def warn_non_finite(count: int, where: str = "the output", stream: IO[str] | None = None) -> None:
    """The one warning line for ``count`` NaN/infinite numbers written as null (none for 0)."""
    if count:
        print(f"warning: {count} non-finite number{'s' if count != 1 else ''} (NaN/Infinity) in {where} "
              "written as null", file=stream or sys.stderr)


def dumps_text(doc: Any, *, indent: int | None = None, where: str = "the output", warn: bool = True) -> str:
    """:func:`dumps` as text without the newline (NaN/Infinity as null; with ``warn`` the warning
    names ``where``)."""
    data = dumps(doc, indent=indent, newline=False, check_finite=False).decode("utf-8")
    if warn:
        warn_non_finite(count_non_finite(doc), where)
    return data


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


def loads_strict(text: str | bytes) -> Any:
    """``json.loads`` that refuses NaN/Infinity, as JavaScript's ``JSON.parse`` and ``jq`` do."""
    return json.loads(text, parse_constant=_refuse_constant)


def write_json(doc: Any, *, indent: int | None = 2, non_finite: int | None = None) -> None:
    """``doc`` as strict JSON on standard output, then the NaN warning (``non_finite``: the count
    when the caller knows it cheaper than a walk of the document)."""
    write_stdout(dumps(doc, indent=indent, check_finite=non_finite is None))
    if non_finite is not None:
        warn_non_finite(non_finite)


def write_stdout(data: bytes) -> None:
    """Write encoded JSON to standard output (its byte buffer when it has one, else as text)."""
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


__all__ = ["OPTS", "NonFiniteWarning", "count_non_finite", "default", "dumps", "dumps_text",
           "loads", "loads_strict", "read_json_file", "strict", "warn_non_finite", "write_json", "write_stdout"]
