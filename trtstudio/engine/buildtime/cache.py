"""Timing-cache files (full TensorRT's editable timing cache): a file's entries
(:func:`timing_cache_entries`) and two diffed (:func:`diff_timing_caches`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trtstudio.errors import InputError

CACHE_SCHEMA = "trtstudio.timingcache/1"


def timing_cache_entries(path: str | Path, trt: Any) -> dict[str, Any]:
    """A timing-cache file's entries ``{key: {tactic, ms}}`` through TensorRT's documented API:
    ``IBuilderConfig.create_timing_cache(data)`` -> ``ITimingCache``, ``queryKeys()``, ``query(key)``
    -> ``TimingCacheValue(tacticHash, timingMSec)`` (TensorRT 10.x). ``trt``: the imported module.
    TensorRT-RTX keeps no timing cache (its ITimingCache calls are no-ops): refused with the reason."""
    p = Path(path)
    if getattr(trt, "__name__", "") == "tensorrt_rtx":
        raise InputError(p, "TensorRT-RTX keeps no timing cache (its timing-cache calls are no-ops); "
                            "it writes a runtime cache when engines run instead")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(p, f"cannot read: {exc.strerror or exc}") from None
    logger = trt.Logger(trt.Logger.ERROR)
    config = trt.Builder(logger).create_builder_config()
    cache = config.create_timing_cache(data)
    if cache is None or not hasattr(cache, "queryKeys"):
        raise InputError(p, f"not a timing cache this {getattr(trt, '__name__', 'TensorRT')} can read "
                            "(an editable timing cache needs TensorRT 10)")
    entries: dict[str, dict[str, Any]] = {}
    for key in cache.queryKeys():
        value = cache.query(key)
        ms = float(value.timingMSec)
        entries[str(key)] = {"tactic": f"0x{int(value.tacticHash):016x}", "ms": ms if ms == ms and ms >= 0 else None}
    return {"schema": CACHE_SCHEMA, "source": str(p), "bytes": len(data), "entries": entries}


def diff_timing_caches(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Which keys two timing caches share, which only one has, and which changed tactic."""
    ea, eb = a["entries"], b["entries"]
    changed = [{"key": k, "a": ea[k], "b": eb[k]} for k in ea if k in eb and ea[k]["tactic"] != eb[k]["tactic"]]
    return {"schema": CACHE_SCHEMA, "a": a["source"], "b": b["source"],
            "only_a": sorted(set(ea) - set(eb)), "only_b": sorted(set(eb) - set(ea)),
            "same": sum(1 for k in ea if k in eb and ea[k]["tactic"] == eb[k]["tactic"]),
            "changed_tactic": changed}
