"""The one rule that says what kind of file a path is: a model, a session, engine outputs, ...

The command line (``gui`` and ``compare``), the window's File > Open and drag-and-drop, and the
backend catalogue's ``auto`` all ask :func:`classify`, so a file is the same kind everywhere.
Suffixes decide, except for Triton sessions, which are JSON documents told apart by their
``schema`` (``sniff=True`` reads the first 4 KiB of a regular file; pipes and devices are never read).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
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


def split_for_window(paths: Sequence[str]) -> tuple[list[str], str | None, list[str]]:
    """What the window opens from ``paths`` (a drop, the command line): (sessions, the ONNX model,
    engine files). PyTorch files and Triton sessions are not opened by the window's graph view and
    are left out; a second ONNX model is the caller's error to report."""
    kinds = split(paths)
    models = kinds.get(ONNX, [])
    return kinds.get(SESSION, []), (models[0] if models else None), kinds.get(ENGINE, [])
