"""One side of a diff: an engine read from what the user has, with its runs and its model.

A side is named as every command names an engine (``engine.naming.resolve``): a folder of one
engine's files (an ``.onnx`` beside them is its model), files joined with commas, a TREx prefix,
one file (a ``trtstudio build --json`` document, a log, a layer JSON), or a ``.trtstudio`` session
(its engine, model and last run).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.engine.model import EngineInfo
from trtstudio.errors import InputError


@dataclass
class Side:
    """An engine as a diff compares it: ``engine`` (analysed when a model was given), its
    ``samples`` (ms per inference, run order) and which figure they are (``metric``), its model."""

    name: str
    engine: EngineInfo
    paths: list[str] = field(default_factory=list)
    model: str | None = None
    samples: np.ndarray = field(default_factory=lambda: np.zeros(0))
    metric: str = ""  # "gpu_compute" (trtexec computeMs), "latency" (latencyMs), "run" (a session's run)
    run_backend: str | None = None


def load_side(spec: str | Sequence[str], model: str | None = None, name: str | None = None) -> Side:
    """Read one side (``engine.naming.resolve``: a folder, a comma list, a TREx prefix, a file, a
    session); ``model`` (an ONNX file) maps its layers to nodes, else a model among or beside them."""
    from trtstudio.engine.load import load_engine, require_layers
    from trtstudio.engine.naming import resolve

    named = resolve(spec)
    if named.session:
        return _from_session(named.session, model, name)
    engine = load_engine(named.files)
    require_layers(engine)
    side = _with_engine_samples(Side(name or named.label, engine, list(named.files), model or named.model))
    return _mapped(side)


def unique_names(sides: Sequence[Side]) -> None:
    """Name a side whose name an earlier side has "NAME (N)" (N: its place among the sides)."""
    seen: dict[str, int] = {}
    for i, s in enumerate(sides):
        if s.name in seen:
            s.name = f"{s.name} ({i + 1})"
        seen[s.name] = i


def engine_samples(engine: EngineInfo) -> tuple[np.ndarray, str]:
    """An engine's per-inference times from its --exportTimes series, and which figure they are:
    GPU compute (``gpu_compute``), else host latency (``latency``); empty and "" without either.
    The one rule for diff sides, compare's engine runs, the API and the window's Compare."""
    for key, metric in (("compute", "gpu_compute"), ("latency", "latency")):
        series = engine.samples_ms.get(key)
        if series:
            return np.asarray(series, dtype=np.float64), metric
    return np.zeros(0), ""


def _with_engine_samples(side: Side) -> Side:
    """The side's samples from its engine's --exportTimes series (:func:`engine_samples`)."""
    samples, metric = engine_samples(side.engine)
    if metric:
        side.samples, side.metric = samples, metric
    return side


def _from_session(path: str, model: str | None, name: str | None) -> Side:
    from trtstudio.report.session import load_session

    s = load_session(path)
    if not s.engines:
        raise InputError(path, "this session holds no engine: open engine files beside its model, save, then diff")
    side = Side(name or Path(path).stem, s.engines[0].info, [path], model or s.model_path)
    if s.runs and len(s.runs[-1].latency_ms):
        run = s.runs[-1]
        side.samples, side.metric, side.run_backend = np.asarray(run.latency_ms, dtype=np.float64), "run", run.backend
    else:  # a session of engine files: their --exportTimes series
        _with_engine_samples(side)
    if model is None:
        return side  # a session's layers carry their ONNX nodes already
    return _mapped(side)


def _mapped(side: Side) -> Side:
    """The engine's layers mapped to the side's model (their ``onnx_nodes``), where it has one."""
    if not side.model:
        return side
    from trtstudio.engine.analysis import analyze
    from trtstudio.graph.model import load_model

    if not os.path.isfile(side.model):
        raise InputError(side.model, "model not found")
    graph = load_model(side.model)
    side.engine = analyze(side.engine, graph).engine
    return side


def describe(side: Side) -> dict[str, Any]:
    """The side's name, files, model and what its time figures are."""
    return {"name": side.name, "files": side.paths, "model": side.model, "metric": side.metric or None,
            "samples": int(len(side.samples)), "backend": side.run_backend}
