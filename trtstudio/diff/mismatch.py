"""When two sides of a diff do not belong together: different models, GPUs or TensorRT versions, or
too few convolutions/GEMMs aligned for the verdicts to mean anything.

:func:`mismatches` reads what both engines' own files say (no guess from file names: a QAT export
of a model is often named apart from its FP32 export):

- ``model``: the engines' I/O tensor shapes differ (names aside: exports rename them; another batch
  size is other work too), or their
  counts of convolutions/GEMMs differ by more than :data:`COMPUTE_COUNT_SHARE` (ResNet-18 has 21,
  ResNet-50 54; one model built in FP32, FP16 or INT8 keeps its count).
- ``gpu`` / ``tensorrt``: both sides record one (``engine.provenance``) and they differ.
- ``alignment``: fewer than :data:`MIN_ALIGNED_SHARE` of either side's convolutions/GEMMs are in
  a group with the other side: the groups and the verdicts built on them are unreliable.

Each is one sentence; the diff and explain documents list them as ``warnings`` (first in their
text), and the Python API's ``diff``/``explain`` warn with :class:`MismatchWarning`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from trtstudio.engine.model import EngineInfo
from trtstudio.engine.provenance import NOT_RECORDED, gpu_of, runtime_of

COMPUTE_COUNT_SHARE = 0.8  # fewer/more convolutions+GEMMs than this share of the other side's: another model
MIN_ALIGNED_SHARE = 0.5  # under this share of a side's convolutions/GEMMs aligned: verdicts unreliable
UNRELIABLE_KINDS = ("model", "alignment")  # what makes a verdict (and a CI gate) unreliable


class MismatchWarning(UserWarning):
    """Two engines compared (``trtstudio.diff``, ``trtstudio.explain``) that do not belong together:
    different models, GPUs or TensorRT versions, or too few layers aligned (the text says which)."""


def _shape(t: Any) -> str:
    return "x".join(str(d) for d in t.shape) if t.shape else "?"


def _io_shapes(engine: EngineInfo) -> Counter[str]:
    return Counter(_shape(t) for t in engine.io_tensors)


def _io_text(engine: EngineInfo) -> str:
    return ", ".join(f"{t.name} {_shape(t)}" for t in engine.io_tensors[:4]) + (", ..." if len(engine.io_tensors) > 4 else "")


def mismatches(base_name: str, base: EngineInfo, other_name: str, other: EngineInfo,
               alignment: dict[str, Any]) -> dict[str, str]:
    """``{kind: sentence}`` for each way ``other`` does not belong beside ``base`` (see the module
    docstring); ``alignment`` is the pair's (``diff.core``: ``compute_layers`` counts)."""
    out: dict[str, str] = {}
    cl = alignment.get("compute_layers") or {}
    nb, no = int(cl.get("base") or 0), int(cl.get("other") or 0)
    why = []
    if base.io_tensors and other.io_tensors and _io_shapes(base) != _io_shapes(other):
        why.append(f"I/O {_io_text(base)} against {_io_text(other)}")
    if nb and no and min(nb, no) < COMPUTE_COUNT_SHARE * max(nb, no):
        why.append(f"{nb} against {no} convolutions/GEMMs")
    if why:
        out["model"] = (f"{base_name} and {other_name} look like different models or input shapes ({'; '.join(why)}): "
                        "the groups and the verdict compare different work, not two builds of one model")
    gb, go = gpu_of(base), gpu_of(other)
    if NOT_RECORDED not in (gb, go) and gb != go:
        out["gpu"] = f"{base_name} ran on {gb}, {other_name} on {go}: the times compare GPUs as well as builds"
    rb, ro = runtime_of(base), runtime_of(other)
    if NOT_RECORDED not in (rb, ro) and rb != ro:
        out["tensorrt"] = (f"{base_name} was built with {rb}, {other_name} with {ro}: the times compare TensorRT "
                           "versions as well as builds")
    low = [(name, int(cl.get(f"{key}_aligned") or 0), n) for name, key, n in
           ((base_name, "base", nb), (other_name, "other", no)) if n and cl.get(f"{key}_aligned", n) < MIN_ALIGNED_SHARE * n]
    if low:
        parts = [f"{a} of {n} convolutions/GEMMs of {name}" for name, a, n in low]
        out["alignment"] = (f"only {' and '.join(parts)} aligned (under half): the verdicts are unreliable")
    return out


def warn(texts: list[str]) -> None:
    """Each of ``texts`` as a :class:`MismatchWarning`, attributed to the first caller outside
    trtstudio (``ts.diff`` may pass through the package's callable module first)."""
    import os
    import sys
    import warnings

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    level, frame = 2, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        level, frame = level + 1, frame.f_back  # type: ignore[assignment]
    for text in dict.fromkeys(texts):
        warnings.warn(text, MismatchWarning, stacklevel=level)


def unreliable(found: dict[str, str]) -> str | None:
    """Why a pair's verdicts are unreliable (different models, too few layers aligned), None where they are not."""
    reasons = [found[k] for k in UNRELIABLE_KINDS if k in found]
    return "; ".join(reasons) if reasons else None
