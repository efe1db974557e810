"""Load the files of ONE engine (layer info, profile, timings, logs, metadata) into one EngineInfo.

Order of merging: the best layer listing first (detailed over names-only, then the most layers),
then per-layer times matched by name (exactly, then without "[profile N]" markers), then latency,
versions, device, memory and build settings (the first file that names a value wins).
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Iterable
from itertools import repeat
from operator import attrgetter, itemgetter
from pathlib import Path

from trtstudio.bigdocs.gcpause import gc_paused
from trtstudio.engine.model import EngineInfo, Layer, LayerTime, own_attrs_of
from trtstudio.engine.readers import ReadResult, find_reader, read_file
from trtstudio.engine.readers._common import (
    NAMES_ONLY_WARNING,
    PROFILE,
    PROFILE_ONLY,
    base_name,
    layers_from_times,
)
from trtstudio.errors import InputError

MATCH_WARN_FRACTION = 0.5
_NAME = attrgetter("name")
_SET_TIME = Layer.__dict__["time"].__set__  # the slot behind Layer.time (SourcedLayer's too)

# What a file must hold, and the TensorRT flags that write it: the message for a file that gave nothing.
EXPECTED_FILES = (
    "expected layer information (trtexec --exportLayerInfo=layers.json --profilingVerbosity=detailed, or "
    "IEngineInspector.get_engine_information(LayerInformationFormat.JSON)), a per-layer profile "
    "(trtexec --exportProfile=profile.json), timings (--exportTimes), or a trtexec/build log "
    "(--dumpLayerInfo --dumpProfile, --verbose)"
)


def _yields_nothing(info: EngineInfo) -> bool:
    return not (info.layers or info.times or info.latency_ms or info.versions or info.device or info.memory
                or info.build_settings or info.io_tensors or info.kernels)


def require_layers(info: EngineInfo) -> None:
    """InputError when the files gave no engine layers (a command that lists layers calls this)."""
    if not info.layers:
        raise InputError(info.sources[0] if info.sources else None, f"no engine layers found; {EXPECTED_FILES}")


def detect_format(path: str | Path) -> str:
    """The name of the reader that would read ``path`` (InputError when none would)."""
    return find_reader(Path(path)).name


def _is_profile_only(info: EngineInfo) -> bool:
    if info.times and not info.layers:
        return True
    return bool(info.layers) and all(a.get(PROFILE_ONLY) for a in own_attrs_of(info.layers))


def times_of(info: EngineInfo) -> list[tuple[str, LayerTime | None]]:
    """(layer name, time) of each layer a file timed: a profile's ``times``, else its layers' (a log)."""
    return list(info.times) if info.times else [(lay.name, lay.time) for lay in info.layers]


def match_times(layers: list[Layer], timed: list[tuple[str, LayerTime | None]]) -> tuple[int, list[str]]:
    """Copy the times of ``timed`` (layer name, time) onto ``layers`` by name; returns (matched,
    unmatched names)."""
    names = list(map(_NAME, layers)) if len(timed) == len(layers) else None
    if names is not None and list(map(itemgetter(0), timed)) == names and len(set(names)) == len(names):
        # the usual case (a profile of this very build): the same unique names in the same order,
        # the times set in C (a None time leaves its layer's as it was)
        times = list(map(itemgetter(1), timed))
        missing = sum(map(operator.is_, times, repeat(None)))
        if missing:
            pairs = [(lay, t) for lay, t in zip(layers, times, strict=True) if t is not None]
            deque(map(_SET_TIME, map(itemgetter(0), pairs), map(itemgetter(1), pairs)), maxlen=0)
        else:
            deque(map(_SET_TIME, layers, times), maxlen=0)
        return len(times) - missing, []
    return _match_by_name(layers, timed)


def _match_by_name(layers: list[Layer], timed: list[tuple[str, LayerTime | None]]) -> tuple[int, list[str]]:
    exact = {lay.name: lay for lay in reversed(layers)}  # the first layer of a name wins
    loose: dict[str, Layer] | None = None  # by base_name, made when an exact name fails
    matched = 0
    unmatched: list[str] = []
    used: set[int] = set()
    for name, t in timed:
        if t is None:
            continue
        target = exact.get(name)
        if target is None or id(target) in used:
            if loose is None:
                loose = {base_name(lay.name): lay for lay in reversed(layers)}
            target = loose.get(base_name(name))
        if target is None or id(target) in used:
            unmatched.append(name)
            continue
        used.add(id(target))
        target.time = t
        matched += 1
    return matched, unmatched


def select_profile(info: EngineInfo, profile: int = 0) -> None:
    """Keep the layers of one optimization profile (tagged by the readers) and say so in a warning."""
    tagged = list(filter(None, own_attrs_of(info.layers)))  # most layers carry no attrs of ours
    profiles = sorted({int(a.get(PROFILE, 0)) for a in tagged} | ({0} if len(tagged) < len(info.layers) else set()))
    if len(profiles) <= 1:
        return
    if profile not in profiles:
        raise InputError(info.sources[0] if info.sources else None,
                         f"no optimization profile {profile}; the engine has {len(profiles)}")
    kept = [lay for lay in info.layers if int(lay.own_attrs().get(PROFILE, 0)) == profile]
    info.warnings.append(
        f"the engine has {len(profiles)} optimization profiles; showing profile {profile} "
        f"({len(kept)} of {len(info.layers)} layers; all of them side by side: `layers --all-profiles`, "
        "or the window's Profiles tab)"
    )
    for i, lay in enumerate(kept):
        lay.index = i
    info.layers = kept


SAME_ENGINE_SHARE = 0.9  # two listings of one engine share at least this share of their layer names and precisions


def _refuse_two_engines(primary: ReadResult, parts: list[ReadResult]) -> None:
    """InputError naming both files where another layer listing among ``parts`` (a second graph
    JSON, a log's layer listing) is not of ``primary``'s engine: two engines' files merged would
    show one engine's layers with the other's details, the last file's winning. Of one engine
    where at least :data:`SAME_ENGINE_SHARE` of the layer names (the longer listing's) are in
    both, and, both listings detailed, as many of those layers compute in the same precisions
    (an FP32 and an FP16 build of one model share most names)."""
    for r in parts:
        if r is primary or not r.info.layers:
            continue
        why = _other_engine(primary.info.layers, r.info.layers, primary.info.detailed and r.info.detailed)
        if why:  # the diff's sides in the order the files were given
            first, second = (primary.path, r.path) if parts.index(primary) < parts.index(r) else (r.path, primary.path)
            raise InputError(r.path, f"describes another engine than {primary.path} ({why}); give one engine's files, "
                                     f"and {_compare_hint(first, second)}")


def _other_engine(a: list[Layer], b: list[Layer], detailed: bool) -> str:
    """Why layer listings ``a`` and ``b`` are not of one engine ("" where they are)."""
    def first_by_name(layers: list[Layer]) -> dict[str, Layer]:
        return {base_name(lay.name): lay for lay in reversed(layers)}  # "[profile N]" markers aside

    by_a, by_b = first_by_name(a), first_by_name(b)
    common = by_a.keys() & by_b.keys()
    most = max(len(by_a), len(by_b))
    if len(common) < SAME_ENGINE_SHARE * most:
        return f"{len(common)} of {most} layer names in common"
    if detailed:
        differ = sum(1 for n in common if _precisions(by_a[n]) != _precisions(by_b[n]))
        if differ > (1 - SAME_ENGINE_SHARE) * len(common):
            return f"{differ} of the {len(common)} layers of the same name compute in other precisions"
    return ""


def _precisions(lay: Layer) -> tuple[str | None, str | None]:
    return lay.precisions()


def _compare_hint(a: Path, b: Path) -> str:
    """How to compare the engines of files ``a`` and ``b``."""
    return f"compare the two with `trtstudio diff {a} {b}`"


def _merge_dict(dst: dict, src: dict) -> None:  # type: ignore[type-arg]
    for k, v in src.items():
        dst.setdefault(k, v)


def load_engine(paths: Iterable[str | Path] | str | Path, profile: int = 0) -> EngineInfo:
    """Read several files describing one engine and merge them into one EngineInfo.

    ``profile`` picks the optimization profile whose layers are kept when the layer information
    lists several. Raises InputError for a file that no reader understands or that is malformed.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    with gc_paused():
        return _load(list(paths), profile)


def _read_files(paths: list[str | Path]) -> list[ReadResult]:
    """Each file's ReadResult, in order; the error of the first that fails.

    In a thread that parses responsively (the window's loaders), a file that a child process cuts
    (``children.CUT_HERE_MAX_BYTES``) is read in a thread of its own, and the other files here
    meanwhile: the child takes 0.3-0.5 s to cut a 300,000-layer description before its first
    record comes, time in which this process reads the profile (0.25 s).

    A small file that fails raises at once: the big reads still running are given up
    (``children.Abandon``: their children killed; their threads, which then end on their own, are
    not waited for), not finished first (0.4-1.7 s for a 300,000-layer description). "First" is
    then the first in order among the files whose outcome is known: the small file's error,
    unless a big file before it has failed already; a big file before it still being read might
    have failed too, but that is not waited for. Where every small file reads, the big reads are
    waited for in order, and the first that fails raises (the later ones given up)."""
    from trtstudio.bigdocs import children

    big = [i for i, p in enumerate(paths) if children.parsing_responsively() and _size(p) > children.CUT_HERE_MAX_BYTES]
    if not big or len(paths) < 2:
        return [read_file(p) for p in paths]
    from concurrent.futures import Future, ThreadPoolExecutor

    def read(p: str | Path, abandon: children.Abandon) -> ReadResult:
        with children.responsive_parsing(), abandon.watching():
            return read_file(p)

    abandons = {i: children.Abandon() for i in big}
    pool = ThreadPoolExecutor(len(big), thread_name_prefix="trtstudio-read")
    futures: dict[int, Future[ReadResult]] = {i: pool.submit(read, paths[i], abandons[i]) for i in big}
    results: dict[int, ReadResult] = {}
    failed: BaseException | None = None
    try:
        for i, p in enumerate(paths):
            if i not in futures:
                try:
                    results[i] = read_file(p)
                except Exception as exc:  # noqa: BLE001 - raised below, unless a big file before it failed
                    before = [f.exception() for j, f in futures.items() if j < i and f.done()]
                    failed = next((e for e in before if e is not None), exc)
                    break
        else:
            for i in big:
                results[i] = futures[i].result()  # the first big file that fails raises
    finally:
        # an error here (or an interrupt) gives the big reads still running up, and their threads
        # are not waited for; else every read has ended, and so do the pool's idle threads
        running = [i for i in big if not futures[i].done()]
        for i in running:
            abandons[i].now()
        pool.shutdown(wait=not running)
    if failed is not None:
        raise failed
    return [results[i] for i in range(len(paths))]


def _size(path: str | Path) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def load_engine_profiles(paths: Iterable[str | Path] | str | Path) -> list[EngineInfo]:
    """One EngineInfo per optimization profile of the engine that ``paths`` describe (read once):
    ``[load_engine(paths, profile=0), load_engine(paths, profile=1), ...]``; one item for an engine
    of one profile. Each profile's layers are its own objects (their indices from 0), its times
    matched to them by name."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    with gc_paused():
        results = _checked(list(paths))
        first = _merge(results, 0)
        return [first] + [_merge(results, p) for p in range(1, profile_count(first))]


def profile_count(info: EngineInfo) -> int:
    """How many optimization profiles the engine of ``info`` has (1 where its files do not say)."""
    n = info.build_settings.get("optimization_profiles")
    return int(n) if isinstance(n, int) and n > 1 else 1


def shown_profile(info: EngineInfo, look: int = 200) -> int:
    """The optimization profile whose layers ``info`` holds: the readers' tag, else the "[profile N]"
    that a name among its first ``look`` layers carries (a session keeps names, not tags); 0 without."""
    from trtstudio.engine.readers._common import marked_profile

    for lay in info.layers[:look]:
        tagged = lay.own_attrs().get(PROFILE)
        marked = int(tagged) if tagged else marked_profile(lay)
        if marked:
            return marked
    return 0


def _load(paths: list[str | Path], profile: int) -> EngineInfo:
    return _merge(_checked(paths), profile)


def _checked(paths: list[str | Path]) -> list[ReadResult]:
    """Each file's ReadResult; InputError where there is none, or a file gave nothing. A plan
    beside files that list the engine's layers (``trtstudio build``'s document or log) is not
    deserialized (that needs its runtime and a GPU): its header says what it is (:func:`_plans_aside`)."""
    plans, rest = _plans_aside(paths)
    results = _read_files(rest)
    if plans:
        if any(r.info.layers for r in results):
            results += [_plan_header(p, results) for p in plans]
        else:
            results = _read_files(paths)
    if not results:
        raise InputError(None, "no files given")
    for r in results:
        if _yields_nothing(r.info):
            raise InputError(r.path, f"nothing read as {r.reader.name} (no layers, times or engine details); "
                                     f"{EXPECTED_FILES}")
    return results


def _plans_aside(paths: list[str | Path]) -> tuple[list[str | Path], list[str | Path]]:
    """(the serialized plans among ``paths``, the other files), when there are both; else ([], paths)."""
    from trtstudio.engine.readers.engine_file import ENGINE_SUFFIXES

    if len(paths) < 2:
        return [], paths
    plans = [p for p in paths if Path(p).suffix.lower() in ENGINE_SUFFIXES and _is_plan(p)]
    if not plans or len(plans) == len(paths):
        return [], paths
    return plans, [p for p in paths if p not in plans]


def _is_plan(path: str | Path) -> bool:
    try:
        return find_reader(Path(path)).name == "engine-plan"
    except InputError:
        return False


def _plan_header(path: str | Path, listed: list[ReadResult]) -> ReadResult:
    """A plan read by its header alone (beside ``listed``, the files that list its layers); a
    warning where its TensorRT-RTX version is not the one those files record."""
    from trtstudio.engine.readers import get_reader
    from trtstudio.engine.readers.engine_file import plan_header_info

    info = plan_header_info(path)
    version = info.build_settings.get("plan_version")
    recorded = next((r.info.versions.get("tensorrt_rtx") for r in listed if r.info.versions.get("tensorrt_rtx")), None)
    if version and recorded and not str(recorded).startswith(f"{version}."):
        info.warnings.append(f"{Path(path).name} is a TensorRT-RTX {version} plan, but the files that list its layers "
                             f"record TensorRT-RTX {recorded}: is it another build's plan?")
    return ReadResult(Path(path), get_reader("engine-plan"), info)


def _merge(results: list[ReadResult], profile: int) -> EngineInfo:
    """The EngineInfo of ``results`` with the layers of optimization profile ``profile``. The
    results' layer lists are not changed (several profiles are merged from one read)."""
    profile_only = [_is_profile_only(r.info) for r in results]  # once: a walk over every layer
    layer_parts = [r for r, p in zip(results, profile_only, strict=True) if r.info.layers and not p]
    timed_parts = [r for r, p in zip(results, profile_only, strict=True) if p]
    out = EngineInfo()
    primary: ReadResult | None = None
    if layer_parts:
        primary = max(layer_parts, key=lambda r: (r.info.detailed, len(r.info.layers)))
        if len(layer_parts) > 1:
            _refuse_two_engines(primary, layer_parts)
        out.layers = primary.info.layers
        out.detailed = primary.info.detailed
        out.io_tensors = list(primary.info.io_tensors)
    for r in results:
        out.sources.extend(s for s in r.info.sources if s not in out.sources)
        out.formats.extend(f for f in r.info.formats if f not in out.formats)
        _merge_dict(out.versions, r.info.versions)
        _merge_dict(out.device, r.info.device)
        _merge_dict(out.memory, r.info.memory)
        _merge_dict(out.build_settings, r.info.build_settings)
        if not out.io_tensors and r.info.io_tensors:
            out.io_tensors = list(r.info.io_tensors)
        for w in r.info.warnings:
            if w not in out.warnings and not (w == NAMES_ONLY_WARNING and out.detailed and r is not primary):
                out.warnings.append(w)
        out.log.extend(r.info.log)
    # Raw per-inference timings (--exportTimes) win over the summaries printed by trtexec.
    for r in sorted(results, key=lambda r: r.reader.kind != "times"):
        _merge_dict(out.latency_ms, r.info.latency_ms)
        for key, series in r.info.samples_ms.items():
            out.samples_ms.setdefault(key, series)
        if r.info.kernels and not out.kernels:
            out.kernels = r.info.kernels
    if primary is not None:
        select_profile(out, profile)
    # Other layer listings that carry times (a log with --dumpProfile) count as profiles too.
    for r in layer_parts:
        if r is not primary and any(lay.time for lay in r.info.layers):
            timed_parts.append(r)
    layer_sources = [primary] if primary is not None else []  # the files the layers come from
    if primary is None and timed_parts:
        first = timed_parts.pop(0)
        layer_sources.append(first)
        out.layers = first.info.layers or layers_from_times(first.info.times)
        out.detailed = False
        out.warnings.append(
            f"{first.path.name}: only per-layer times, no layer information; export it with "
            "trtexec --profilingVerbosity=detailed --exportLayerInfo=layers.json for types, precision and tactics"
        )
    # every number in the layers came from msgspec where the files that gave the layers and their
    # times were all read by it (the others give latency, versions, device: not the layers)
    finite = all(r.info.finite for r in layer_sources + timed_parts)
    for r in timed_parts:
        timed = times_of(r.info)
        matched, unmatched = match_times(out.layers, timed)
        n = len(timed) - sum(map(operator.is_, map(itemgetter(1), timed), repeat(None)))
        if n and matched < MATCH_WARN_FRACTION * n:
            out.warnings.append(
                f"{r.path.name}: only {matched} of {n} profiled layer names match the {len(out.layers)} layers "
                "of the layer information; the profile may come from another engine or build"
            )
        elif unmatched:
            out.warnings.append(
                f"{r.path.name}: {len(unmatched)} of {n} profiled layers not found in the layer information "
                f"(e.g. {unmatched[0]!r})"
            )
    out.finite = finite
    if out.layers:
        from trtstudio.engine.summary import fill_io_tensors

        fill_io_tensors(out)  # TensorRT 8's Bindings name the engine's I/O only: the layers say the rest
    return out
