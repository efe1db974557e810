"""Shape mixes: replay a distribution of request shapes in a seeded random order, as a server gets them.

``trtstudio profile MODEL --shape-mix FILE`` where FILE is

- a CSV with one column per input (dims joined by ``x``) and a ``count`` column;
- a JSON list ``[{"shapes": {"NAME": "1x3x320x320"}, "count": N}, ...]`` (shapes as text or lists);
- a folder of ``.npy``/``.npz`` inputs, one request each (``.npz`` keys are input names; ``.npy``
  only for a one-input model): requests of one shape replay the first file of that shape.

Inputs a row leaves out keep the base run's shape, except dims tied by name to the inputs it sets.
The replay holds one set of input buffers per shape (:class:`InputSlots`): a shape's first request
prepares them and runs once cold (timed apart as ``replan_ms`` and ``first_ms``, out of the
statistics) before it runs as a request; every later request of that shape switches to them with
no allocation (backends with ``keep_inputs``/``use_inputs``: ONNX Runtime, torch, TensorRT; another
backend re-prepares on every change of shape, said in a note).

How many requests: the file's counts are weights (:class:`MixPlan`). With ``iterations`` N the
replay runs N requests split in the counts' proportions (largest remainder, :func:`split_counts`)
in the seeded order; with ``duration_s`` it replays rounds of the counts, each in a new seeded
order, until the time is up; with neither it runs the counts as given (the window's Sweep tab).
The document says which (``counts.text``: "counts 6/3/1 used as weights over 100 iterations").

Statistics: per shape (count, median, p99 of its requests) and the mix's weighted median and p99
(each sample of a shape weighs ``count / samples`` of that shape: the pooled requests when the
replay ran whole, still the mix's weights when it was stopped or cut by the time). A p99 over fewer
than 100 requests is marked thin (``p99_thin``, a warning; :func:`~trtstudio.measure.stats.thin_tail`):
it is about the slowest request, not a tail. ``pad_to="opt"``
replays the mix a second time with every request padded to the opt shape of the recommended
profile whose range holds it (:mod:`~trtstudio.profiling.profiles`), and gives the padded mix's median against the
exact one as a ratio with its interval: what padding to a profile's opt costs.
"""

from __future__ import annotations

import csv
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.errors import FieldError, InputError
from trtstudio.measure.stats import thin_tail, thin_tail_note

SCHEMA = "trtstudio.mix/1"
Shape = tuple[int, ...]
Key = tuple[tuple[str, Shape], ...]


def _x(shape: Any) -> str:
    return "x".join(str(int(d)) for d in shape)


def shape_key(shapes: dict[str, Shape]) -> Key:
    return tuple(sorted((n, tuple(int(d) for d in s)) for n, s in shapes.items()))


@dataclass
class MixEntry:
    """One shape of the mix: every input's shape, how many requests, optional data (a folder's file)."""

    shapes: dict[str, Shape]
    count: int
    data: dict[str, np.ndarray] | None = None

    @property
    def label(self) -> str:
        return ", ".join(f"{n} {_x(s)}" for n, s in self.shapes.items())


def _dims(path: str, text: Any, where: str) -> Shape:
    from trtstudio.backends.shapes.text import parse_dims

    if isinstance(text, list) and all(isinstance(d, int) and not isinstance(d, bool) for d in text):
        return tuple(text)
    return parse_dims(str(text), path, where)


def _rows_csv(path: str) -> list[tuple[dict[str, Any], Any, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if not reader.fieldnames:
            raise InputError(path, "empty CSV: need a header with one column per input and a 'count' column")
        fields = [f.strip() for f in reader.fieldnames]
        if "count" not in [f.lower() for f in fields]:
            raise InputError(path, f"no 'count' column (columns: {', '.join(fields)})")
        rows = []
        for k, raw in enumerate(reader, start=2):
            row = {str(a).strip(): (b or "").strip() for a, b in raw.items() if a is not None}
            count = next(v for a, v in row.items() if a.lower() == "count")
            rows.append(({a: v for a, v in row.items() if a.lower() != "count" and v}, count, f"line {k}"))
    return rows


def _rows_json(path: str) -> list[tuple[dict[str, Any], Any, str]]:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as exc:
        raise InputError(path, f"not readable JSON: {exc}") from None
    if isinstance(doc, dict) and isinstance(doc.get("mix"), list):
        doc = doc["mix"]
    if isinstance(doc, dict) and isinstance(doc.get("shapes"), list):  # a trtstudio.mix/1 result replays itself
        doc = doc["shapes"]
    if not isinstance(doc, list):
        raise InputError(path, 'expected a list of {"shapes": {"NAME": "1x3x320x320"}, "count": N}')
    rows = []
    for k, item in enumerate(doc):
        if not isinstance(item, dict) or not isinstance(item.get("shapes"), dict):
            raise InputError(path, f"item {k}: expected {{\"shapes\": {{NAME: DIMS}}, \"count\": N}}")
        rows.append((item["shapes"], item.get("count", 1), f"item {k}"))
    return rows


def _load_folder(path: str, names: list[str]) -> list[MixEntry]:
    files = sorted(p for p in Path(path).iterdir() if p.suffix.lower() in (".npy", ".npz"))
    if not files:
        raise InputError(path, "no .npy or .npz files in the folder")
    entries: dict[Key, MixEntry] = {}
    for f in files:
        try:
            if f.suffix.lower() == ".npz":
                with np.load(f, allow_pickle=False) as z:
                    data = {k: np.asarray(z[k]) for k in z.files}
            else:
                if len(names) != 1:
                    raise InputError(f, f"a .npy holds one array; the model takes {len(names)} inputs "
                                        f"({', '.join(names)}): use .npz with those keys")
                data = {names[0]: np.load(f, allow_pickle=False)}
        except (OSError, ValueError) as exc:
            raise InputError(f, f"not a readable numpy file: {exc}") from None
        unknown = [k for k in data if k not in names]
        if unknown:
            raise InputError(f, f"unknown input(s) {', '.join(unknown)}; the model takes {', '.join(names)}")
        shapes = {k: tuple(int(d) for d in v.shape) for k, v in data.items()}
        key = shape_key(shapes)
        if key in entries:
            entries[key].count += 1
        else:
            entries[key] = MixEntry(shapes, 1, data)
    return list(entries.values())


def load_mix(path: str | os.PathLike[str], specs: list[dict[str, Any]], base: dict[str, Shape]) -> list[MixEntry]:
    """The mix a file or folder describes, over the model's inputs ``specs`` and the base run's
    shapes ``base`` (inputs a row leaves out); equal shapes merged. Errors name the file."""
    from trtstudio.profiling.sweep import _tie

    path = os.fspath(path)
    names = [s["name"] for s in specs]
    if os.path.isdir(path):
        entries = _load_folder(path, names)
    elif not os.path.exists(path):
        raise InputError(path, "no such file")
    else:
        rows = _rows_json(path) if path.lower().endswith(".json") else _rows_csv(path)
        merged: dict[Key, MixEntry] = {}
        for given, count, where in rows:
            unknown = [n for n in given if n not in names]
            if unknown:
                raise InputError(path, f"{where}: {', '.join(unknown)} is not an input of the model "
                                       f"(inputs: {', '.join(names)})")
            try:
                n = int(str(count).strip()) if not isinstance(count, int) else count
            except ValueError:
                raise InputError(path, f"{where}: count {count!r} is not a whole number") from None
            if n < 0:
                raise InputError(path, f"{where}: count must be 0 or more")
            set_here = {name: _dims(path, v, f"{where}, input '{name}'") for name, v in given.items()}
            shapes = _tie({**base, **set_here}, set(set_here), specs)
            key = shape_key(shapes)
            if key in merged:
                merged[key].count += n
            else:
                merged[key] = MixEntry({k: tuple(v) for k, v in shapes.items()}, n)
        entries = [e for e in merged.values() if e.count > 0]
    if not entries:
        raise InputError(path, "the mix has no request (every count is 0)")
    return entries


def split_counts(counts: list[int], total: int) -> list[int]:
    """``total`` requests split in the proportions of ``counts`` (largest remainder: each entry
    gets the whole part of its share, the requests left over go to the largest fractions, the
    earlier entry first on a tie); they sum to ``total``."""
    whole = sum(counts)
    parts = [c * total // whole for c in counts]
    rest = [c * total % whole for c in counts]
    for k in sorted(range(len(counts)), key=lambda k: -rest[k])[:total - sum(parts)]:
        parts[k] += 1
    return parts


def request_order(entries: list[MixEntry], seed: int = 0, total: int | None = None) -> np.ndarray:
    """The entry index of every request, in a seeded random order: the counts as given, or
    ``total`` requests split in their proportions (:func:`split_counts`)."""
    counts = [e.count for e in entries]
    order = np.repeat(np.arange(len(entries)), counts if total is None else split_counts(counts, total))
    return np.random.default_rng(seed).permutation(order)


def request_rounds(entries: list[MixEntry], seed: int = 0) -> Iterator[int]:
    """Requests without end for a replay bounded by time: round k is the counts as given in the
    order of seed ``seed + k``, so the proportions hold at the end of every round."""
    k = 0
    while True:
        yield from request_order(entries, seed + k).tolist()
        k += 1


@dataclass(frozen=True)
class MixPlan:
    """How a replay uses the file's counts: weights over ``iterations`` requests, weights over
    ``duration_s`` seconds, or (neither) the counts as given."""

    counts: tuple[int, ...]
    iterations: int | None = None
    duration_s: float | None = None

    def __post_init__(self) -> None:
        if self.iterations is not None and self.iterations < 1:
            raise FieldError("iterations", "must be positive")
        if self.duration_s is not None and not self.duration_s > 0:
            raise FieldError("duration_s", "must be positive")
        if self.iterations is not None and self.duration_s is not None:
            raise FieldError("duration_s", "give iterations or a duration, not both")

    def planned(self) -> list[int] | None:
        """Requests of each entry the replay runs (None when the time decides)."""
        if self.duration_s is not None:
            return None
        return list(self.counts) if self.iterations is None else split_counts(list(self.counts), self.iterations)

    def order(self, entries: list[MixEntry], seed: int) -> np.ndarray | Iterator[int]:
        """The requests in the mix's seeded order (an endless iterator when the time decides)."""
        if self.duration_s is not None:
            return request_rounds(entries, seed)
        return request_order(entries, seed, self.iterations)

    def text(self, ran: int) -> str:
        """"counts 6/3/1 used as weights over 100 iterations" (or seconds, or as given)."""
        shown = self.counts if len(self.counts) <= 12 else (*self.counts[:12], "...")
        counts = "counts " + "/".join(str(c) for c in shown)
        if self.iterations is not None:
            return f"{counts} used as weights over {self.iterations:,} iterations"
        if self.duration_s is not None:
            return f"{counts} used as weights over {self.duration_s:g} s ({ran:,} requests)"
        return (f"{counts} used as given: {sum(self.counts):,} requests "
                "(--iterations N or --duration S replays them as weights)")

    def to_json(self, ran: int) -> dict[str, Any]:
        """``{used, counts, iterations, duration_s, planned, ran, text}``."""
        return {"used": "as given" if self.iterations is None and self.duration_s is None else "weights",
                "counts": list(self.counts), "iterations": self.iterations, "duration_s": self.duration_s,
                "planned": self.planned(), "ran": ran, "text": self.text(ran)}


class InputSlots:
    """One set of prepared input buffers per shape: the first request of a shape prepares it
    (``allocations`` counts these), later ones switch to it (``switches``) with no allocation,
    where the backend can keep slots (``keep_inputs``/``use_inputs``); else every change of shape
    re-prepares (and counts as an allocation)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.can_keep = hasattr(backend, "keep_inputs") and hasattr(backend, "use_inputs")
        self.slots: dict[Key, Any] = {}
        self.current: Key | None = None
        self.allocations = 0
        self.switches = 0

    def select(self, shapes: dict[str, Shape], data: dict[str, np.ndarray] | None = None) -> float | None:
        """Make ``shapes`` the backend's inputs; the ms spent preparing when it had to (None: switched
        or already current)."""
        key = shape_key(shapes)
        if key == self.current:
            return None
        slot = self.slots.get(key)
        if slot is not None:
            self.backend.use_inputs(slot)
            self.current = key
            self.switches += 1
            return None
        t0 = time.perf_counter()
        self.backend.prepare_inputs(dict(shapes), data)
        ms = (time.perf_counter() - t0) * 1e3
        self.allocations += 1
        if self.can_keep:
            kept = self.backend.keep_inputs()
            if kept is not None:
                self.backend.use_inputs(kept)
                self.slots[key] = kept
        self.current = key
        return ms


@dataclass
class ShapeStats:
    """Requests of one shape during a replay."""

    entry: MixEntry
    latencies: list[float] = field(default_factory=list)
    replan_ms: float | None = None
    first_ms: float | None = None
    padded_to: dict[str, Shape] | None = None

    def to_dict(self) -> dict[str, Any]:
        v = np.asarray(self.latencies)
        row: dict[str, Any] = {"shapes": {n: _x(s) for n, s in self.entry.shapes.items()}, "count": self.entry.count,
                               "warm": int(v.size), "median_ms": float(np.median(v)) if v.size else None,
                               "p99_ms": float(np.percentile(v, 99)) if v.size else None,
                               "p99_thin": thin_tail("p99", int(v.size)) if v.size else None,
                               "replan_ms": self.replan_ms, "first_ms": self.first_ms}
        if self.padded_to is not None:
            row["padded_to"] = {n: _x(s) for n, s in self.padded_to.items()}
        return row


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The ``q`` quantile of ``values`` with ``weights`` (the weighted empirical distribution)."""
    order = np.argsort(values)
    v, w = values[order], weights[order]
    cum = np.cumsum(w)
    return float(v[min(int(np.searchsorted(cum, q * cum[-1])), v.size - 1)])


def _weighted(stats: list[ShapeStats]) -> tuple[np.ndarray, np.ndarray]:
    vals, wts = [], []
    for s in stats:
        if s.latencies:
            vals.append(np.asarray(s.latencies))
            wts.append(np.full(len(s.latencies), s.entry.count / len(s.latencies)))
    if not vals:
        return np.empty(0), np.empty(0)
    return np.concatenate(vals), np.concatenate(wts)


def summary(stats: list[ShapeStats], requests: int | None = None) -> dict[str, Any]:
    """``{shapes: [...], median_ms, p99_ms, p99_thin, requests, warm}``: the mix's weighted figures;
    ``requests`` the replay's planned requests (default: the counts as given), ``warm`` those run."""
    v, w = _weighted(stats)
    return {"shapes": [s.to_dict() for s in stats],
            "median_ms": weighted_quantile(v, w, 0.5) if v.size else None,
            "p99_ms": weighted_quantile(v, w, 0.99) if v.size else None,
            "p99_thin": thin_tail("p99", int(v.size)) if v.size else None,
            "requests": int(sum(s.entry.count for s in stats)) if requests is None else int(requests),
            "warm": int(v.size),
            "replan_ms_total": float(sum(s.replan_ms or 0.0 for s in stats))}


def replay(backend: Any, entries: list[MixEntry], order: np.ndarray | Iterable[int], state: Any = None,
           targets: list[dict[str, Shape]] | None = None,
           on_request: Callable[[int, int, float], None] | None = None,
           duration_s: float | None = None) -> tuple[list[ShapeStats], InputSlots]:
    """Run every request of ``order`` on ``backend`` (or those that start within ``duration_s``
    seconds of the first): switch to its shape's buffers (or the padded target's, ``targets[i]``
    for entry i), infer, record. A request's latency is the switch plus the inference; before a
    shape's first request its buffers are prepared and it runs once cold (``replan_ms``,
    ``first_ms``), outside the statistics."""
    slots = InputSlots(backend)
    stats = [ShapeStats(e, padded_to=(targets[i] if targets else None)) for i, e in enumerate(entries)]
    perf = time.perf_counter
    stop = state.is_stop_requested if state is not None else (lambda: False)
    end = perf() + duration_s if duration_s is not None else None
    for n, i in enumerate(order.tolist() if isinstance(order, np.ndarray) else order):
        if stop() or (end is not None and perf() >= end):
            break
        st = stats[i]
        shapes = targets[i] if targets else st.entry.shapes
        if st.first_ms is None:  # the shape's first request: buffers made and one cold run, timed apart
            st.replan_ms = slots.select(shapes, None if targets else st.entry.data)
            st.first_ms = backend.infer_once().total_ms
        t0 = perf()
        slots.select(shapes, None if targets else st.entry.data)
        backend.infer_once()
        ms = (perf() - t0) * 1e3
        st.latencies.append(ms)  # without kept slots this includes re-preparing: the cost of re-planning
        if on_request is not None:
            on_request(n, i, ms)
    return stats, slots


def pad_targets(entries: list[MixEntry], profiles: list[dict[str, Any]]) -> list[dict[str, Shape]]:
    """For each entry: the opt shape of the first profile whose min..max range holds it (inputs a
    profile does not set keep their shape); its own shape when no profile holds it."""
    def holds(p: dict[str, Any], shapes: dict[str, Shape]) -> bool:
        return all(len(v["min"]) == len(shapes[n]) and all(lo <= d <= hi for lo, d, hi in zip(v["min"], shapes[n], v["max"], strict=True))
                   for n, v in p["inputs"].items())

    out = []
    for e in entries:
        prof = next((p for p in profiles if holds(p, e.shapes)), None)
        out.append({**e.shapes, **{n: tuple(v["opt"]) for n, v in prof["inputs"].items()}} if prof else dict(e.shapes))
    return out


@dataclass
class MixOutcome:
    """A replayed mix: the entries, per-shape stats, slot counts, and the padded replay if asked."""

    request: Any
    record: Any
    source: str
    entries: list[MixEntry]
    stats: list[ShapeStats]
    slots: InputSlots
    seed: int
    dynamic: list[str]
    padded: list[ShapeStats] | None = None
    notes: list[str] = field(default_factory=list)
    stopped: bool = False
    plan: MixPlan | None = None
    ran: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``trtstudio.mix/1`` document: ``mix`` (per shape and weighted), ``allocations``,
        ``profiles`` recommended from it, and ``padded`` with ``pad_to``."""
        from trtstudio.profiling.profiles import ShapePoint, recommend

        plan = self.plan or MixPlan(tuple(e.count for e in self.entries))
        ran = self.ran if self.ran is not None else sum(len(s.latencies) for s in self.stats)
        planned = plan.planned()
        mix = summary(self.stats, sum(planned) if planned is not None else ran)
        points = [ShapePoint(s.entry.shapes, float(s.entry.count), float(np.median(s.latencies)))
                  for s in self.stats if s.latencies]
        doc: dict[str, Any] = {
            "schema": SCHEMA, "model": self.request.model, "model_sha256": self.record.model_sha256,
            "backend": self.request.backend, "settings": self.record.settings, "source": self.source,
            "seed": self.seed, "counts": plan.to_json(ran), "mix": mix,
            "buffers": {"allocations": self.slots.allocations, "switches": self.slots.switches,
                        "kept_per_shape": self.slots.can_keep},
            "profiles": recommend(points, self.dynamic, "mix", self.request.model),
            "notes": list(self.notes), "warnings": [], "stopped": self.stopped,
        }
        doc["warnings"].extend(_thin_warnings(self.stats, mix, plan, planned))
        if self.padded is not None:
            from trtstudio.measure.ratio import ratio_interval

            pad = summary(self.padded)
            exact_v, _ = _weighted(self.stats)
            pad_v, _ = _weighted(self.padded)
            r = ratio_interval(exact_v, pad_v, statistic="median", blocks=1)
            rm = ratio_interval(exact_v, pad_v, statistic="mean", blocks=1)
            pad["cost"], pad["cost_mean"] = r.to_json(), rm.to_json()
            pad["text"] = (f"padding every request to its profile's opt shape: mix median {pad['median_ms']:.3f} ms "
                           f"against {mix['median_ms']:.3f} ms at the exact shapes, {r.describe()}; "
                           f"mean latency {rm.describe()}")
            doc["padded"] = pad
        return doc


def _thin_warnings(stats: list[ShapeStats], mix: dict[str, Any], plan: MixPlan,
                   planned: list[int] | None) -> list[str]:
    """What the figures rest on: a thin mix p99, shapes whose own p99 is thin, shapes left out."""
    out = []
    note = thin_tail_note("p99", mix["warm"], "requests") if mix["warm"] else None
    if note:
        more = "give --iterations 100 or more" if plan.duration_s is None else "run longer"
        out.append(f"the mix's {note}; {more}")
    thin = [s for s in stats if s.latencies and thin_tail("p99", len(s.latencies))]
    if thin:
        out.append(f"{len(thin)} of {len(stats)} shape(s) ran fewer than 100 requests: their own p99 (marked *) "
                   "is about their slowest request")
    none = [k for k, s in enumerate(stats) if not s.latencies]
    if none and len(none) < len(stats):
        why = (f"in {plan.iterations:,} iterations" if planned is not None and all(planned[k] == 0 for k in none)
               else "before the replay ended")
        names = "; ".join(stats[k].entry.label for k in none[:3]) + ("; ..." if len(none) > 3 else "")
        out.append(f"{len(none)} shape(s) got no request {why} ({names}): left out of the mix's figures")
    return out


def run_mix(request: Any, source: str, pad_to: str | None = None, seed: int = 0, state: Any = None,
            factory: Any = None, iterations: int | None = None, duration_s: float | None = None) -> MixOutcome:
    """Open the request's backend, load the mix from ``source`` and replay it (and once more padded
    with ``pad_to="opt"``, the same requests in the same order). The file's counts are weights over
    ``iterations`` requests or ``duration_s`` seconds, or (neither) run as given (:class:`MixPlan`;
    the request's own iterations and duration are for one run and not read here). Events on
    ``state``: ``mix_plan`` (shapes, requests: None when the time decides, duration_s) before the
    replay."""
    from trtstudio.profiling.profiles import ShapePoint, dynamic_names, recommend
    from trtstudio.profiling.session import _open_recorded

    if pad_to not in (None, "opt"):
        raise FieldError("pad_to", f"'{pad_to}' is not a padding mode (opt)")
    backend, shapes, record = _open_recorded(request, factory)
    try:
        specs = list(backend.input_specs())
        entries = load_mix(source, specs, shapes)
        plan = MixPlan(tuple(e.count for e in entries), iterations, duration_s)
        record.settings.update(shape_mix=str(source), mix_seed=seed, pad_to=pad_to, iterations=iterations,
                               duration_s=duration_s)
        planned = plan.planned()
        if state is not None:
            state.event("mix_plan", shapes=[e.label for e in entries],
                        requests=sum(planned) if planned is not None else None, duration_s=duration_s)
        notes = list(backend.notes)
        ran: list[int] = []
        stats, slots = replay(backend, entries, plan.order(entries, seed), state,
                              on_request=lambda n, i, ms: ran.append(i), duration_s=duration_s)
        if not slots.can_keep:
            notes.append(f"backend '{request.backend}' cannot keep buffers per shape: every change of shape "
                         "re-prepared its inputs")
        dynamic = dynamic_names(specs)
        padded = None
        if pad_to == "opt" and not (state is not None and state.is_stop_requested()):
            points = [ShapePoint(s.entry.shapes, float(s.entry.count), float(np.median(s.latencies)))
                      for s in stats if s.latencies]
            rec = recommend(points, dynamic, "mix", request.model)
            if rec is not None:
                profs = rec["one"]["profiles"] if rec["recommended"] == 1 else rec["two"]["profiles"]
                padded, _ = replay(backend, entries, np.asarray(ran, dtype=np.int64), state,
                                   pad_targets(entries, profs))
        stopped = bool(state is not None and state.is_stop_requested())
        return MixOutcome(request, record, str(source), entries, stats, slots, seed, dynamic, padded, notes, stopped,
                          plan, len(ran))
    finally:
        backend.close()


def render_text(doc: dict[str, Any]) -> str:
    """The mix as a per-shape table, the weighted figures, padding and the recommended profiles."""
    mix = doc["mix"]
    lines = [f"model    {doc['model']}", f"backend  {doc['backend']}",
             f"mix      {doc['source']}: {mix['requests']} requests over {len(mix['shapes'])} shapes "
             f"(seed {doc['seed']})"]
    if doc.get("counts"):
        lines.append(f"         {doc['counts']['text']}")
    lines.append("")
    lines.append(f"{'shape':<44}{'count':>8}{'requests':>10}{'median ms':>11}{'p99 ms':>10}{'re-plan ms':>12}"
                 f"{'first ms':>10}")
    for row in mix["shapes"]:
        label = ", ".join(f"{n} {s}" for n, s in row["shapes"].items())
        med = f"{row['median_ms']:.3f}" if row["median_ms"] is not None else "-"
        p99 = f"{row['p99_ms']:.3f}{'*' if row.get('p99_thin') else ' '}" if row["p99_ms"] is not None else "- "
        rp = f"{row['replan_ms']:.2f}" if row["replan_ms"] is not None else "-"
        fm = f"{row['first_ms']:.2f}" if row["first_ms"] is not None else "-"
        lines.append(f"{label[:43]:<44}{row['count']:>8}{row.get('warm', 0):>10}{med:>11}{p99:>10}{rp:>12}{fm:>10}")
    if mix["median_ms"] is not None:
        thin = "*" if mix.get("p99_thin") else ""
        lines.append(f"mix (weighted by count): median {mix['median_ms']:.3f} ms, p99 {mix['p99_ms']:.3f} ms{thin} "
                     f"over {mix['warm']} warm requests; re-planning {mix['replan_ms_total']:.1f} ms in all")
    buf = doc["buffers"]
    lines.append(f"buffers: {buf['allocations']} input allocations for {len(mix['shapes'])} shapes, "
                 f"{buf['switches']} switches between kept buffers")
    if doc.get("padded"):
        lines.append(doc["padded"]["text"])
    from trtstudio.profiling.profiles import render_text as profiles_text

    lines.extend(profiles_text(doc.get("profiles"), doc["model"]))
    lines.extend(f"note: {n}" for n in doc.get("notes", []))
    lines.extend(f"warning: {w}" for w in doc.get("warnings", []))
    lines.extend(f"wrote {p}" for p in doc.get("written", []))
    return "\n".join(lines)
