"""The window's words: the core's messages name command-line flags and modules (right in a terminal,
where the CLI prints them); the window speaks of its menu actions and fields instead.

``window_words(text)`` rewrites what the core says for the CLI into what the window's user does:
``set --shapes x:1x3x256x256`` -> ``set x's run shape to 1x3x256x256``, ``BuildRequest(profiles=[...])
in trtstudio.backends.build_request`` -> the Build dialog's profiles table, ``give --against ...`` ->
Against another build..., ``trtstudio diff A B`` -> Engine > Compare with....
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p), r) for p, r in (
    # the shape plan's notes (backends.shapes.planner, backends.base)
    (r"set --shapes (\S+?):V1xV2x\.\.\. \(its values, as trtexec takes them\)",
     r"set the values of \1 in its 'run shape' cell (V1xV2x..., as trtexec takes them)"),
    (r"set --shapes (\S+?):(\S+?) to the values it should take", r"set \1's 'run shape' to the values it should take"),
    (r"set --shapes (\S+?):([0-9x]+)", r"set \1's 'run shape' to \2"),
    (r"\(?set them with trtstudio profile --shapes\)?", "(edit 'run shape')"),
    # profiles.py: several shape profiles in one engine
    (r"\(`trtstudio build` makes one profile per engine; one engine with both: "
     r"BuildRequest\(profiles=\[\.\.\.\]\) in trtstudio\.backends\.build_request\)",
     "(Engine > Build engine... builds one engine with every row of its Shape profiles table)"),
    (r"BuildRequest\(profiles=\[\.\.\.\]\) in trtstudio\.backends\.build_request",
     "the rows of Engine > Build engine...'s Shape profiles table"),
    # diff/explain
    (r"give --against (an FP16/FP32 build)", r"use Against another build... with \1"),
    (r"with trtstudio diff\b", "with Engine > Compare with..."),
    (r"`?trtstudio diff [^`]*`", "Engine > Compare with..."),
    (r"`?trtstudio compare`?", "the Compare dock (Engine > Compare with...)"),
))


def window_words(text: str) -> str:
    """``text`` (a core message written for the CLI) in the window's words (see the module doc)."""
    if "--" not in text and "trtstudio" not in text and "BuildRequest" not in text:
        return text
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    return text


def _precision(engine: Any) -> str:
    """The compute precision most layers of ``engine`` run in (INT8 for a Q/DQ engine), '' when none says."""
    counts = Counter(str(p).upper() for p in (lay.precision for lay in getattr(engine, "layers", [])) if p)
    if not counts:
        return ""
    if counts.get("INT8"):
        return "INT8"
    top = counts.most_common(1)[0][0]
    return {"HALF": "FP16", "FLOAT": "FP32", "FLOAT16": "FP16", "FLOAT32": "FP32"}.get(top, top)


def _version(engine: Any) -> str:
    versions = getattr(engine, "versions", None) or {}
    for key in ("tensorrt", "tensorrt_rtx"):
        if versions.get(key):
            return ("TensorRT " if key == "tensorrt" else "TensorRT-RTX ") + str(versions[key])
    return ""


def _folder(paths: list[str]) -> str:
    if not paths:
        return ""
    p = Path(str(paths[0]).split(",")[0].rstrip("/"))
    return p.name if p.is_dir() else p.parent.name


def build_names(a: tuple[Any, list[str], str], b: tuple[Any, list[str], str]) -> tuple[str, str]:
    """Names of two builds, each ``(engine, paths, fallback name)``, by what distinguishes them: their
    precision, then their folder, then their TensorRT version (an INT8 build explained beside its FP16
    one reads "INT8 ... than FP16", not "... than resnet.onnx"); the fallback names (the files') where
    nothing differs or a side does not say."""
    for part in (lambda e, p: _precision(e), lambda e, p: _folder(p), lambda e, p: _version(e)):
        na, nb = part(a[0], a[1]), part(b[0], b[1])
        if na and nb and na != nb:
            return na, nb
    if a[2] == b[2]:
        return a[2], f"{b[2]} (against)"
    return a[2], b[2]


__all__ = ["build_names", "window_words"]
