"""Mutators: byte level (truncate, flip, zero-extend, invalid UTF-8) and structure level (JSON paths:
delete keys, wrong types, huge and non-finite numbers, deep nesting; ONNX protobuf fields)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

DEEP = 100_000

# JSON values that replace a field: wrong types, huge and non-finite numbers, odd strings.
# Raw JSON text, so 10**400 / NaN / Infinity are written exactly as a hostile file holds them.
RAW_VALUES = [
    "null", "true", "0", "-1", "1e400", "-1e400", str(10**400), "NaN", "Infinity", "-Infinity",
    '""', '"x"', '"\\ud800"', '"' + "A" * 5000 + '"', "[]", "{}", "[null]", '{"": {}}', "1.5", "-0.0",
    "9223372036854775808",
]


def paths(doc: Any, prefix: tuple = (), limit: int = 400) -> list[tuple]:
    """Every path (tuple of keys/indices) into ``doc``, breadth first, at most ``limit``."""
    out: list[tuple] = []
    queue: list[tuple[tuple, Any]] = [(prefix, doc)]
    while queue and len(out) < limit:
        p, node = queue.pop(0)
        if isinstance(node, dict):
            for k, v in node.items():
                out.append(p + (k,))
                queue.append((p + (k,), v))
        elif isinstance(node, list):
            for i, v in enumerate(node[:6]):
                out.append(p + (i,))
                queue.append((p + (i,), v))
    return out


_MARK = "\x00FUZZ\x00"


def _set(doc: Any, path: tuple, value: Any, delete: bool = False) -> Any:
    node = doc
    for k in path[:-1]:
        node = node[k]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


def replace_raw(doc: Any, path: tuple, raw: str) -> str:
    """``doc`` as JSON text with the value at ``path`` replaced by the raw JSON text ``raw``."""
    d = json.loads(json.dumps(doc))
    _set(d, path, _MARK)
    return json.dumps(d, indent=1).replace(json.dumps(_MARK), raw, 1)


def delete_key(doc: Any, path: tuple) -> str:
    d = json.loads(json.dumps(doc))
    _set(d, path, None, delete=True)
    return json.dumps(d, indent=1)


def deep_nesting(kind: str = "list", depth: int = DEEP) -> str:
    return ("[" * depth + "]" * depth) if kind == "list" else ('{"a":' * depth + "1" + "}" * depth)


def nest_at(doc: Any, path: tuple, depth: int = DEEP) -> str:
    return replace_raw(doc, path, deep_nesting("list", depth))


def byte_mutations(data: bytes, rng: random.Random, n: int) -> Iterator[tuple[str, bytes]]:
    """``n`` byte-level variants of ``data``: truncations, flips, invalid UTF-8, zero runs."""
    size = len(data)
    for cut in (1, 2, size // 3, size // 2, size - 1):
        if 0 < cut < size:
            yield f"truncate@{cut}", data[:cut]
    for i in range(n):
        buf = bytearray(data)
        what = i % 4
        pos = rng.randrange(size)
        if what == 0:
            buf[pos] ^= 1 << rng.randrange(8)
            yield f"bitflip@{pos}", bytes(buf)
        elif what == 1:
            buf[pos] = rng.choice((0x00, 0xFF, 0x80, 0xC0, 0xFE))
            yield f"byte@{pos}", bytes(buf)
        elif what == 2:
            yield f"invalid-utf8@{pos}", bytes(buf[:pos]) + b"\xff\xfe\xc3\x28" + bytes(buf[pos:])
        else:
            n0 = rng.randrange(1, 64)
            yield f"zeros@{pos}", bytes(buf[:pos]) + b"\x00" * n0 + bytes(buf[pos + n0:])
