"""Number formatting for people, shared by every report writer and the diff's pages (so the HTML, the PDF
and the CSV show the same text for the same JSON number); below both, in the shared core."""

from __future__ import annotations

import math
from typing import Any


def _bad(v: Any) -> bool:
    return v is None or (isinstance(v, float) and not math.isfinite(v))


def fmt_ms(v: float | None) -> str:
    """Milliseconds with 4 decimals (``0.1234 ms``); an en dash when unknown."""
    return "\u2013" if _bad(v) else f"{float(v):.4f} ms"  # type: ignore[arg-type]


def sig(v: float, digits: int = 3) -> str:
    """``v`` with ``digits`` significant digits, trailing zeros kept (``94.1``, ``1.98``, ``0.470``,
    ``10.1``); at or above ``10**digits`` a whole number with thousands separators (``1,235``)."""
    x = float(v)
    if x == 0:
        return "0"
    for _ in range(2):  # once more where rounding adds a digit (9.996 -> 10.0)
        decimals = digits - 1 - math.floor(math.log10(abs(x)))
        if decimals <= 0:
            return f"{x:,.0f}"
        rounded = round(x, decimals)
        if rounded == 0 or math.floor(math.log10(abs(rounded))) == math.floor(math.log10(abs(x))):
            return f"{rounded:.{decimals}f}"
        x = rounded
    return f"{x:,.0f}"


def fmt_sig(v: Any, digits: int = 3, unit: str = "") -> str:
    """At a glance figures: :func:`sig` with a unit (``fmt_sig(1.9753, unit="ms")`` is ``1.98 ms``);
    an en dash when unknown."""
    if _bad(v) or isinstance(v, bool) or not isinstance(v, (int, float)):
        return "\u2013"
    return sig(v, digits) + (f" {unit}" if unit else "")


def fmt_ms3(v: float | None) -> str:
    """Milliseconds with three significant digits (``94.1 ms``, ``1.98 ms``), for At a glance."""
    return fmt_sig(v, 3, "ms")


def fmt_num(v: Any, digits: int = 4) -> str:
    """A number with ``digits`` decimals (ints as ints); text stays text."""
    if _bad(v):
        return "\u2013"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return str(v)


def fmt_pct(v: float | None, digits: int = 1) -> str:
    """Percent with one decimal (``12.5 %``)."""
    return "\u2013" if _bad(v) else f"{float(v):.{digits}f} %"  # type: ignore[arg-type]


def fmt_bytes(v: float | None) -> str:
    """Bytes in B / KiB / MiB / GiB."""
    if _bad(v):
        return "\u2013"
    n = float(v)  # type: ignore[arg-type]
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{int(n)} B" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return str(v)


def fmt_speedup(v: float | None) -> str:
    """Speed-up factor (``1.87x``)."""
    return "\u2013" if _bad(v) else f"{float(v):.2f}x"  # type: ignore[arg-type]


def fmt_value(key: str, v: Any) -> str:
    """Format by the key's unit suffix: ``*_ms``, ``*_bytes``/``*_size``, ``*percent``, else ``fmt_num``."""
    k = key.lower()
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if k.endswith("_ms") or k in ("mean", "median", "p90", "p95", "p99", "p999", "min", "max", "std"):
            return fmt_ms(v)
        if k.endswith("bytes") or k.endswith("_size") or k in ("weights", "scratch", "device_memory", "host_persistent",
                                                               "device_persistent"):
            return fmt_bytes(v)
        if "percent" in k or k == "cov":
            return fmt_pct(v, 2)
    if isinstance(v, (list, tuple)):
        return ", ".join(fmt_num(x) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{a}: {fmt_value(str(a), b)}" for a, b in v.items())
    return fmt_num(v)
