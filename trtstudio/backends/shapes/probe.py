"""The onnxruntime probe of guessed sizes: try a few sizes for the dims nothing pinned, keep the first that runs.

Used by the planner (:mod:`trtstudio.backends.shapes.planner`) with ``plan_shapes(..., probe=True)``
(a run or a build), never for a plan only shown. Only when onnxruntime is installed and the model is
small enough to load quickly; at most ``PROBE_TRIES`` runs and ``PROBE_SECONDS`` seconds. The
defaults stay when nothing runs, and the plan's warning still asks for the real size.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from trtstudio.backends.inputs import random_array
from trtstudio.backends.shapes.plan import DEFAULT_SIZES

PROBE_TRIES = 24
PROBE_SECONDS = 10.0
PROBE_MAX_BYTES = 200 << 20
PROBE_SOURCE = "probe (onnxruntime ran it)"
_PROBE_SIZES = {
    "spatial": (256, 320, 640, 224, 48, 32, 64, 96, 128, 160, 192, 384, 512),
    "other": (512, 576, 1024, 256, 128, 64, 1, 16000),
    "int": (128, 64, 16, 512),
}


class Probed(Protocol):
    """What the probe reads and sets on a planner: its model, its dims per input and their sources."""

    proto: Any
    names: list[str]
    dtypes: dict[str, str]
    dims: dict[str, list[tuple[int, int, int] | None]]
    sources: dict[str, list[str]]
    values: dict[str, tuple[Any, str]]


def probe(p: Probed, free: list[dict[str, Any]]) -> None:
    """Set the ``free`` groups' dims (``{"kind", "dims": [(input, axis)]}``) of ``p`` to the first
    candidate sizes onnxruntime runs, their source to :data:`PROBE_SOURCE`; else the defaults."""
    if p.proto.ByteSize() > PROBE_MAX_BYTES:
        return
    try:
        import onnxruntime as ort
    except ImportError:
        return
    t0 = time.perf_counter()
    try:
        so = ort.SessionOptions()
        so.log_severity_level = 4
        so.intra_op_num_threads = 2
        sess = ort.InferenceSession(p.proto.SerializeToString(), so, providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - a model ORT cannot load: keep the defaults
        return
    for trial in candidates(free):
        if time.perf_counter() - t0 > PROBE_SECONDS:
            break
        for g, size in zip(free, trial, strict=True):
            for n, axis in g["dims"]:
                p.dims[n][axis] = (size, size, size)
        if _runs(p, sess):
            for g in free:
                for n, axis in g["dims"]:
                    p.sources[n][axis] = PROBE_SOURCE
            return
    for g in free:
        for n, axis in g["dims"]:
            p.dims[n][axis] = (DEFAULT_SIZES[g["kind"]],) * 3


def _runs(p: Probed, sess: Any) -> bool:
    import numpy as np

    rng = np.random.default_rng(0)
    feeds = {}
    values = {n: v for n, (v, _src) in p.values.items()}
    for n in p.names:
        shape = tuple(t[1] for t in p.dims[n])  # type: ignore[index]
        if n in values:
            feeds[n] = np.asarray(values[n][1], dtype=p.dtypes[n]).reshape(shape)
        else:
            feeds[n] = random_array(p.dtypes[n], shape, rng)
    try:
        sess.run(None, feeds)
    except Exception:  # noqa: BLE001 - any failure: this size does not fit
        return False
    return True


def candidates(free: list[dict[str, Any]]) -> list[tuple[int, ...]]:
    """Sizes to try for the free groups, most likely first: everything at the n-th preferred size,
    then one group varied at a time (image H with W at its first choice, and so on); PROBE_TRIES at most."""
    lists = [_PROBE_SIZES[g["kind"]] for g in free]
    out: list[tuple[int, ...]] = []
    longest = max(len(c) for c in lists)
    for i in range(longest):
        out.append(tuple(c[min(i, len(c) - 1)] for c in lists))
    for k, c in enumerate(lists):
        for v in c:
            t = tuple(v if j == k else lists[j][0] for j in range(len(lists)))
            if t not in out:
                out.append(t)
    diagonal = out[:longest]
    varied = [t for t in out[longest:]]
    head = diagonal[:3]
    return (head + [t for t in varied if t not in head] + [t for t in diagonal[3:] if t not in varied])[:PROBE_TRIES]
