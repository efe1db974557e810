"""One side of a diff: an engine read from what the user has, with its runs and its model.

A side is given as a folder of one engine's files (the trtexec/TREx layout: graph or layer JSON,
profile, timings, metadata, logs; an ``.onnx`` beside them is its model), a list of files joined
with commas, one file (a ``trtstudio build --json`` document, a log, a layer JSON), or a
``.trtstudio`` session (its engine, model and last run).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.engine.model import EngineInfo
from trtstudio.errors import InputError

# trtexec/TREx file names: NAME.engine.graph.json, NAME.engine.profile.metadata.json, ...
_PART_RE = re.compile(r"(\.engine)?\.(graph|profile|timing|times|metadata|build|layers|layer_info|log)\b.*$", re.I)
_SKIP_SUFFIXES = (".onnx", ".md", ".txt", ".png", ".html", ".pdf", ".csv")


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


def _stem(name: str) -> str:
    base = re.sub(r"__added_in_[0-9a-f]+", "", name)
    if ".engine" in base:
        return base.split(".engine", 1)[0]
    return _PART_RE.sub("", Path(base).stem) or base


def folder_files(folder: Path) -> tuple[list[str], str | None]:
    """The engine files of ``folder`` and the ONNX model beside them; refuses a folder that holds
    the files of several engines (naming them) or none."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    models = [str(p) for p in files if p.suffix.lower() == ".onnx"]
    engine_files = [p for p in files if p.suffix.lower() not in _SKIP_SUFFIXES]
    stems = sorted({_stem(p.name) for p in engine_files})
    if not engine_files:
        raise InputError(folder, "no engine files in this folder (graph/layer JSON, profile, timings, logs)")
    if len(stems) > 1:
        raise InputError(folder, f"holds the files of {len(stems)} engines ({', '.join(stems[:4])}"
                                 f"{', ...' if len(stems) > 4 else ''}): give one engine's files joined with commas")
    if len(models) > 1:
        models = [m for m in models if _stem(Path(m).name) == stems[0]] or models[:0]
    return [str(p) for p in engine_files], models[0] if len(models) == 1 else None


def _label(spec: str, paths: list[str]) -> str:
    p = Path(spec.split(",")[0].rstrip("/"))
    if p.is_dir():
        return p.name
    return _stem(p.name) if paths else spec


def load_side(spec: str, model: str | None = None, name: str | None = None) -> Side:
    """Read one side (see the module docstring); ``model`` (an ONNX file) maps its layers to nodes."""
    from trtstudio.engine.load import load_engine, require_layers
    from trtstudio.filekinds import ONNX, SESSION, classify

    parts = [s for s in spec.split(",") if s] if "," in spec and not os.path.exists(spec) else [spec]
    if len(parts) == 1 and os.path.isdir(parts[0]):
        paths, found_model = folder_files(Path(parts[0]))
        model = model or found_model
    else:
        paths = parts
    if len(paths) == 1 and classify(paths[0]) == SESSION:
        return _from_session(paths[0], model, name)
    onnx = [p for p in paths if classify(p, sniff=False) == ONNX]
    if onnx:
        model = model or onnx[0]
        paths = [p for p in paths if p not in onnx]
    if not paths:
        raise InputError(spec, "no engine files given for this side")
    engine = load_engine(paths)
    require_layers(engine)
    side = _with_engine_samples(Side(name or _label(spec, paths), engine, list(paths), model))
    return _mapped(side)


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
