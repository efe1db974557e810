"""The categories a log's memory lines give (:func:`log_figures`): the last build's kept engine, the
largest of its profiles, each figure sourced ``FILE:LINE: text``."""

from __future__ import annotations

from typing import Any

from trtstudio.engine.memory.categories import CATEGORIES, Figure
from trtstudio.engine.memory.log import MIB, Candidate, Line, LogMemory


def _source(path: str, line: Line) -> str:
    text = line.text if len(line.text) <= 160 else line.text[:157] + "..."
    return f"{path}:{line.number}: {text}"


def _from_line(name: str, path: str, line: Line | None, note: str = "") -> Figure:
    return Figure(name) if line is None else Figure(name, line.bytes, _source(path, line), note)


def _profile_figures(path: str, cand: Candidate) -> dict[int, dict[str, Figure]]:
    out: dict[int, dict[str, Figure]] = {}
    for p, lines in sorted(cand.profiles.items()):
        figs = {k: _from_line(k, path, lines.get(k)) for k in ("activations", "device_persistent", "host_persistent",
                                                                  "scratch")}
        blocks = lines.get("block_assignment")
        if blocks is not None:
            act = figs["activations"]
            src = _source(path, blocks)
            what = f"block assignment: {blocks.extra['blocks']} blocks for {blocks.extra['nodes']} nodes"
            also: dict[str, Any] = {"bytes": blocks.bytes, "source": src, "what": what}
            if act.bytes is None:
                figs["activations"] = Figure("activations", blocks.bytes, src, what)
            else:
                act.also.append(also)
        out[p] = figs
    return out


def _largest(name: str, per_profile: dict[int, dict[str, Figure]]) -> Figure:
    """A category's engine figure over its profiles: the largest (kSTATIC allocates the largest)."""
    known = [(figs[name], p) for p, figs in per_profile.items() if figs[name].bytes is not None]
    if not known:
        return Figure(name)
    fig, p = max(known, key=lambda fp: fp[0].bytes or 0)
    note = fig.note
    if len(per_profile) > 1:
        note = (note + "; " if note else "") + f"the largest of {len(per_profile)} profiles (profile {p})"
    return Figure(name, fig.bytes, fig.source, note, list(fig.also))


def _library_figure(path: str, libs: list[Line]) -> Figure:
    if not libs:
        return Figure("libraries")
    total = sum(max(line.bytes or 0, 0) for line in libs)
    builder = any(line.key == "Init builder kernel library" for line in libs)
    note = "GPU each init added (a negative change counts 0)"
    if builder:
        note += "; the builder's kernel library is loaded only while building"
    return Figure("libraries", total, "; ".join(_source(path, line) for line in libs), note)


def log_figures(log: LogMemory) -> tuple[dict[str, Figure], dict[int, dict[str, Figure]], Figure, list[Line]]:
    """The categories a log gives (its last build, the engine it kept), per profile, the context's
    device memory and the kept engine's per-layer lines (its first profile)."""
    path = log.path
    figs = {n: Figure(n) for n in CATEGORIES}
    build = log.last()
    if build is None:
        return figs, {}, Figure("context_device_memory"), []
    cand = build.kept()
    per_profile = _profile_figures(path, cand)
    for name in ("activations", "device_persistent", "host_persistent", "scratch"):
        figs[name] = _largest(name, per_profile)
    streamable = "how much is streamable is not printed (getStreamableWeightsSize at runtime)"
    if cand.weights is not None:
        figs["weights"] = _from_line("weights", path, cand.weights, streamable)
    elif "deserialization" in build.runtime:
        figs["weights"] = _from_line("weights", path, build.runtime["deserialization"],
                                     "GPU the engine took when deserialized (MiB resolution); " + streamable)
    cuda = [b.cuda for b in log.builds[:log.builds.index(build) + 1] if b.cuda is not None]
    if cuda:  # one per process: an earlier build's where this one's builder found CUDA up
        line = cuda[-1]
        figs["cuda_context"] = Figure("cuda_context", line.extra["gpu_now_bytes"], _source(path, line),
                                      "GPU in use once CUDA was up: this process's context and anything else "
                                      "on that GPU then")
    figs["libraries"] = _library_figure(path, build.libraries)
    if build.peak is not None:
        figs["builder_peak"] = _from_line("builder_peak", path, build.peak,
                                          f"CPU {build.peak.extra['cpu_bytes'] // MIB} MiB")
    size = build.created or build.runtime.get("loaded")
    if size is not None:
        figs["engine_size"] = _from_line("engine_size", path, size)
        if build.created is not None and "loaded" in build.runtime:
            loaded = build.runtime["loaded"]
            figs["engine_size"].also.append({"bytes": loaded.bytes, "source": _source(path, loaded)})
    if build.other:
        figs["other"] = Figure("other", sum(max(line.bytes or 0, 0) for line in build.other),
                               "; ".join(_source(path, line) for line in build.other),
                               "GPU the other TensorRT-managed allocations added")
    ctx = Figure("context_device_memory")
    for key in ("context_device_memory", "scratch_allocated"):
        if key in build.runtime:
            ctx = _from_line("context_device_memory", path, build.runtime[key])
            break
    return figs, per_profile, ctx, cand.layers.get(0, [])
