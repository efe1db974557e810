"""The one rule that says what kind of file a path is: a model, a session, engine outputs, ...

The command line (``gui``, ``report``, ``compare``, ``profile``'s session), the window's File > Open and
drag-and-drop, the Live profile panel and the backend catalogue's ``auto`` all ask :func:`classify`,
so a file is the same kind everywhere.
Suffixes decide, except for Triton sessions, which are JSON documents told apart by their
``schema`` (``sniff=True`` reads the first 4 KiB of a regular file; pipes and devices are never read).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

ONNX = "onnx"  # an ONNX model: the graph, and what ort/torch run
TORCH = "torch"  # a PyTorch file: torch.export (.pt2) or TorchScript
SESSION = "session"  # a .trtstudio session (model, engine, runs)
TRITON = "triton"  # a Triton sweep session (JSON of schema trtstudio.triton/1)
ENGINE = "engine"  # TensorRT outputs: engine plans, layer information, profiles, timings, logs

TORCH_SUFFIXES = (".pt2", ".pt", ".pth", ".ts", ".torchscript", ".jit")
SESSION_SUFFIX = ".trtstudio"
TRITON_SCHEMA = "trtstudio.triton/1"


def classify(path: str | os.PathLike[str], sniff: bool = True) -> str:
    """The kind of ``path``: ONNX, TORCH, SESSION, TRITON or ENGINE (anything else: TensorRT's
    outputs, which the engine readers accept or refuse with a message of their own)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".onnx":
        return ONNX
    if suffix == SESSION_SUFFIX:
        return SESSION
    if suffix in TORCH_SUFFIXES:
        return TORCH
    if sniff and suffix == ".json" and is_triton_file(path):
        return TRITON
    return ENGINE


def is_triton_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a JSON document of schema ``trtstudio.triton/1`` (False for anything else)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False  # a FIFO or device is left to the readers' own checks (no blocking read here)
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except (OSError, ValueError):
        return False
    return f'"{TRITON_SCHEMA}"'.encode() in head


def split(paths: Iterable[str]) -> dict[str, list[str]]:
    """``paths`` grouped by kind, each group in the given order (kinds with no path are absent)."""
    out: dict[str, list[str]] = {}
    for p in paths:
        out.setdefault(classify(p), []).append(p)
    return out


# what each kind is, in an error that refuses it
WHAT = {ONNX: "an ONNX model", TORCH: "a PyTorch file (.pt2, TorchScript)", SESSION: "a trtstudio session",
        TRITON: "a Triton sweep session", ENGINE: "an engine's file"}


def model_and_engines(paths: Iterable[str], refuse: Mapping[str, str] | None = None) -> tuple[str | None, list[str]]:
    """The ONNX model (at most one) and the engine files among ``paths``, as ``trtstudio gui``,
    ``report`` and the window take them. InputError naming the file for a second model, or a
    file of another kind (``refuse[kind]`` says what to do with it instead)."""
    from trtstudio.errors import InputError

    kinds = split(paths)
    for kind, found in kinds.items():
        if kind not in (ONNX, ENGINE):
            raise InputError(found[0], (refuse or {}).get(kind) or f"is {WHAT[kind]}, not a model or an engine's file")
    models = kinds.get(ONNX, [])
    if len(models) > 1:
        raise InputError(models[1], "only one ONNX model can be opened at a time")
    return (models[0] if models else None), kinds.get(ENGINE, [])


def session_among(paths: Iterable[str]) -> str | None:
    """The ``.trtstudio`` session among ``paths`` (None when there is none), as ``trtstudio gui``
    opens it. InputError naming the file for a second session, or a session given with other files
    (a session brings its own model and engine files)."""
    from trtstudio.errors import InputError

    paths = list(paths)
    sessions = [p for p in paths if classify(p, sniff=False) == SESSION]
    if not sessions:
        return None
    if len(sessions) > 1:
        raise InputError(sessions[1], "only one session can be opened at a time")
    others = [p for p in paths if p != sessions[0]]
    if others:
        raise InputError(others[0], f"a session opens on its own (it holds its model and engine): open {sessions[0]} "
                                    "alone, then this file from the window's File > Open")
    return sessions[0]
