"""Batch and shape sweeps: one model run at a series of shapes, one profiling run per step.

``trtstudio profile MODEL --sweep batch=1,2,4,8`` runs the model at batch 1, 2, 4 and 8 (every
input whose first dimension is dynamic); ``--sweep images=1x3x320x320,1x3x640x640`` runs the input
``images`` at those shapes. Dimensions the model ties by name follow the swept input (``input_ids``
and ``attention_mask`` both declared ``[batch, seq]``: sweeping one sets the other); several
``--sweep`` flags with the same number of steps move together, step by step.

The backend is opened once; each step re-plans its inputs (``prepare_inputs``) and runs the same
:class:`~trtstudio.profiling.runner.Runner` loop a separate ``trtstudio profile`` runs (cold
inference, warm-up, measured inferences), so a step's median is that profile's median (the
overhead budget, ``benchmarks/sweep.py``). A step that fails (a shape the model refuses, out of
memory) keeps its error and the sweep goes on.

What a sweep says, all from the measured samples:

- per step: median with its 95% interval, p99, throughput in inferences/s and samples/s (a sample
  is one item of the batch), the memory peak of the step;
- the **knee**: the last step after which throughput stops growing, i.e. the next step's gain in
  samples/s (a shape sweep: elements of the swept input per second, e.g. pixels/s) is not above
  ``1 + min_gain`` with its whole 95% interval (a bootstrap ratio of the two steps' times per
  sample or element, :func:`trtstudio.measure.ratio.ratio_interval`), so noise cannot move it; none while throughput still grows at the largest step;
- the **best step under a latency budget**: the largest step whose p99 is within ``budget_ms``.

Qt-free; the window's Sweep tab runs :func:`run_sweep` in a worker and draws its ``step`` events.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trtstudio.errors import FieldError, InputError

SCHEMA = "trtstudio.sweep/1"
MIN_GAIN = 0.05  # a step must add more than 5% samples/s (whole interval) to count as growth
# The window's default length of a step: measured seconds, not inferences. 1,000 inferences per step
# made a 4-step sweep of a detector take 237 s, 100 s of it on its last step; a duration keeps every
# step as long, whatever its batch, so the time left is known.
STEP_DURATION_S = 3.0
Shape = tuple[int, ...]


def _x(shape: Any) -> str:
    return "x".join(str(int(d)) for d in shape)


@dataclass
class SweepStep:
    """One step: the full shape of every input, its label, batch and the swept size (x axis)."""

    label: str
    shapes: dict[str, Shape]
    batch: int
    size: int  # the swept quantity: the batch for batch sweeps, the swept input's element count otherwise


@dataclass
class SweepPlan:
    """The steps of a sweep and what is swept (``axis``: "batch" or the first swept input's name)."""

    axis: str
    steps: list[SweepStep]
    swept: list[str]  # the inputs whose shapes change
    dynamic: list[str] = field(default_factory=list)  # the inputs with a dynamic dim (what a profile sets)


def _dynamic(dim: Any) -> bool:
    return not isinstance(dim, int) or dim < 0


def _symbols(spec: dict[str, Any]) -> list[str | None]:
    """Each declared dim's symbol when it is a named dynamic dim (not '?'), else None."""
    return [d if isinstance(d, str) and d not in ("?", "") else None for d in spec["shape"]]


def _parse_one(text: str) -> tuple[str, list[str]]:
    key, sep, values = text.partition("=")
    key = key.strip()
    items = [v.strip() for v in values.split(",") if v.strip()]
    if not sep or not key or not items:
        raise FieldError("sweep", f"'{text}' is not NAME=V1,V2,... (e.g. batch=1,2,4,8 or images=1x3x320x320,1x3x640x640)")
    return key, items


def plan_sweep(texts: list[str], specs: list[dict[str, Any]], base: dict[str, Shape]) -> SweepPlan:
    """The steps ``--sweep`` texts describe, over the model's inputs ``specs`` (backend
    ``input_specs()``) and the shapes of the base run ``base`` (what a plain profile would run).
    Errors are :class:`FieldError` on the field ``sweep``."""
    if not texts:
        raise FieldError("sweep", "no sweep given")
    by_name = {s["name"]: s for s in specs}
    columns: list[tuple[str, list[dict[str, Shape]]]] = []  # per flag: the assignments of each step
    for text in texts:
        key, items = _parse_one(text)
        if key == "batch":
            try:
                values = [int(v) for v in items]
            except ValueError:
                raise FieldError("sweep", f"batch sizes must be integers: {','.join(items)}") from None
            if any(v < 1 for v in values):
                raise FieldError("sweep", "batch sizes must be 1 or more")
            batched = [s["name"] for s in specs if s["shape"] and _dynamic(s["shape"][0])]
            if not batched:
                decl = ", ".join(f"{s['name']} {_x_decl(s['shape'])}" for s in specs)
                raise FieldError("sweep", f"no input has a dynamic first (batch) dimension ({decl}); "
                                          "sweep an input's shape instead (NAME=1x3x320x320,...)")
            columns.append(("batch", [{n: (v, *base[n][1:]) for n in batched} for v in values]))
            continue
        spec = by_name.get(key)
        if spec is None:
            raise FieldError("sweep", f"'{key}' is not an input of the model (inputs: {', '.join(by_name)}; "
                                      "or batch=...)")
        steps = []
        for item in items:
            try:
                from trtstudio.backends.shapes.text import parse_dims

                shape = parse_dims(item, "sweep", f"input '{key}'")
            except InputError as exc:
                raise FieldError("sweep", exc.message) from None
            declared = spec["shape"]
            if len(shape) != len(declared):
                raise FieldError("sweep", f"input '{key}' has rank {len(declared)} ({_x_decl(declared)}), got {_x(shape)}")
            fixed = [k for k, (d, v) in enumerate(zip(declared, shape, strict=True)) if not _dynamic(d) and d != v]
            if fixed:
                raise FieldError("sweep", f"input '{key}' is fixed at {_x_decl(declared)}, got {_x(shape)}")
            steps.append({key: shape})
        columns.append((key, steps))
    lengths = {len(c[1]) for c in columns}
    if len(lengths) != 1:
        raise FieldError("sweep", "several --sweep flags move together step by step and need the same number of "
                                  f"steps (got {', '.join(str(len(c[1])) for c in columns)})")
    steps_out: list[SweepStep] = []
    first_key = columns[0][0]
    for k in range(lengths.pop()):
        shapes = {n: tuple(v) for n, v in base.items()}
        for _key, col in columns:
            shapes.update(col[k])
        named = {n for key, col in columns if key != "batch" for n in col[k]}  # a named input's dims rule its ties
        shapes = _tie(shapes, named, specs) if named else shapes
        batch = next((int(s[0]) for s in shapes.values() if s), 1)
        if first_key == "batch":
            size, label = batch, f"batch {batch}"
        else:
            size = int(np.prod(shapes[first_key]))
            label = ", ".join(f"{n} {_x(shapes[n])}" for _key, col in columns for n in col[k])
        steps_out.append(SweepStep(label, shapes, batch, size))
    swept = sorted({n for _key, col in columns for n in col[0]})
    from trtstudio.profiling.profiles import dynamic_names

    return SweepPlan(first_key, steps_out, swept, dynamic_names(specs))


def _x_decl(dims: Any) -> str:
    return "x".join(str(d) for d in dims) if dims else "scalar"


def _tie(shapes: dict[str, Shape], set_here: set[str], specs: list[dict[str, Any]]) -> dict[str, Shape]:
    """Dims other inputs share by name with the inputs set in this step follow them."""
    values: dict[str, int] = {}
    for spec in specs:
        if spec["name"] in set_here:
            for sym, v in zip(_symbols(spec), shapes[spec["name"]], strict=False):
                if sym is not None:
                    values.setdefault(sym, int(v))
    out = dict(shapes)
    for spec in specs:
        name = spec["name"]
        if name in set_here or name not in out:
            continue
        dims = list(out[name])
        for k, sym in enumerate(_symbols(spec)):
            if sym is not None and sym in values and k < len(dims):
                dims[k] = values[sym]
        out[name] = tuple(dims)
    return out


# -- statistics of one step ------------------------------------------------------------------------

def statistic_interval(values: np.ndarray, statistic: str = "median") -> tuple[float | None, float | None]:
    """The 95% interval of ``statistic`` over a run's samples (in time order): the block bootstrap of
    :func:`~trtstudio.measure.ratio.ratio_interval` over a constant baseline of 1, i.e. the
    statistic's own interval, resampled the way every ratio of the project is."""
    from trtstudio.measure.ratio import ratio_interval

    r = ratio_interval(np.ones(2), values, statistic=statistic)
    return (r.low, r.high) if r.has_interval else (None, None)


@dataclass
class StepResult:
    """A finished step: its latencies (ms, in order), throughput and memory, or its error."""

    step: SweepStep
    latencies: np.ndarray
    active_s: float = 0.0
    cold_ms: float | None = None
    peak_memory_bytes: int | None = None
    memory_key: str | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and self.latencies.size > 0

    def samples_per_s(self) -> float | None:
        n = self.latencies.size
        if not n:
            return None
        seconds = self.active_s if self.active_s > 0 else float(self.latencies.sum()) / 1e3
        return n * self.step.batch / seconds

    def to_dict(self, index: int) -> dict[str, Any]:
        """One row of ``sweep`` in the document."""
        v = self.latencies
        row: dict[str, Any] = {"index": index, "label": self.step.label,
                               "shapes": {k: list(s) for k, s in self.step.shapes.items()},
                               "batch": self.step.batch, "size": self.step.size, "count": int(v.size),
                               "median_ms": None, "median_interval_ms": None, "p99_ms": None, "mean_ms": None,
                               "throughput": None, "samples_per_s": None, "samples_per_s_interval": None,
                               "peak_memory_bytes": self.peak_memory_bytes, "memory_key": self.memory_key,
                               "cold_ms": self.cold_ms, "error": self.error}
        if v.size:
            sps = self.samples_per_s() or 0.0
            mean = float(v.mean())
            lo, hi = statistic_interval(v, "median")
            mlo, mhi = statistic_interval(v, "mean")
            row.update(median_ms=float(np.median(v)), median_interval_ms=[lo, hi] if lo is not None else None,
                       p99_ms=float(np.percentile(v, 99)), mean_ms=mean, throughput=sps / self.step.batch,
                       samples_per_s=sps,
                       samples_per_s_interval=[sps * mean / mhi, sps * mean / mlo] if mlo and mhi else None)
        return row


def knee(results: list[StepResult], min_gain: float = MIN_GAIN, unit: str = "samples") -> dict[str, Any] | None:
    """The step where throughput stops growing (see the module docstring), over the steps that ran,
    in the order given; None with fewer than two such steps. ``unit``: "samples" (items of the
    batch, for batch sweeps) or "elements" (of the swept input, for shape sweeps: an image sweep's
    pixels/s, where samples/s can only fall)."""
    from trtstudio.measure.ratio import ratio_interval

    done = [(i, r) for i, r in enumerate(results) if r.ok]
    if len(done) < 2:
        return None

    def per(r: StepResult) -> int:
        return r.step.batch if unit == "samples" else r.step.size

    def rate(r: StepResult) -> float:
        return (r.samples_per_s() or 0.0) / r.step.batch * per(r)

    gains = []
    for (_i, prev), (_j, cur) in zip(done, done[1:], strict=False):
        # rate(cur) / rate(prev) = mean time per unit (prev) / mean time per unit (cur)
        gains.append(ratio_interval(cur.latencies / per(cur), prev.latencies / per(prev), statistic="mean"))
    what = f"throughput ({unit}/s)"
    for k, gain in enumerate(gains):
        grew = gain.has_interval and gain.low > 1.0 + min_gain
        if not grew:
            index, res = done[k]
            nxt = done[k + 1][1]
            return {"index": index, "label": res.step.label, "unit": unit, "rate": rate(res),
                    "samples_per_s": res.samples_per_s(), "next_gain": gain.to_json(), "min_gain": min_gain,
                    "still_growing": False,
                    "text": (f"{what} stops growing at {res.step.label} ({rate(res):.4g} {unit}/s): "
                             f"{nxt.step.label} adds {gain.describe()} "
                             f"(growth needs more than {1 + min_gain:.2f}x with its whole interval)")}
    index, res = done[-1]
    return {"index": index, "label": res.step.label, "unit": unit, "rate": rate(res),
            "samples_per_s": res.samples_per_s(), "next_gain": None, "min_gain": min_gain, "still_growing": True,
            "text": (f"{what} still grows at the largest step ({res.step.label}, last gain "
                     f"{gains[-1].describe()}): sweep further to find the knee")}


def best_under_budget(results: list[StepResult], budget_ms: float | None,
                      statistic: str = "p99") -> dict[str, Any] | None:
    """The largest step (by swept size, then order) whose ``statistic`` latency is within
    ``budget_ms``; None without a budget."""
    if budget_ms is None:
        return None
    fits = [(r.step.size, i, r) for i, r in enumerate(results)
            if r.ok and float(np.percentile(r.latencies, 99 if statistic == "p99" else 50)) <= budget_ms]
    base: dict[str, Any] = {"budget_ms": budget_ms, "statistic": statistic}
    if not fits:
        ran = [r for r in results if r.ok]
        low = min((float(np.percentile(r.latencies, 99)) for r in ran), default=math.nan)
        return {**base, "index": None, "label": None,
                "text": f"no step meets {statistic} <= {budget_ms:g} ms (the lowest {statistic} is {low:.3f} ms)"}
    _size, i, r = max(fits, key=lambda t: (t[0], t[1]))
    value = float(np.percentile(r.latencies, 99 if statistic == "p99" else 50))
    return {**base, "index": i, "label": r.step.label, "value_ms": value, "samples_per_s": r.samples_per_s(),
            "text": (f"largest step within {statistic} <= {budget_ms:g} ms: {r.step.label} "
                     f"({statistic} {value:.3f} ms, {r.samples_per_s():.1f} samples/s)")}


# -- running -----------------------------------------------------------------------------------------

@dataclass
class SweepOutcome:
    """A finished (or stopped) sweep: the plan, each step's result, the run record."""

    request: Any  # profiling.session.ProfileRequest
    record: Any  # profiling.session.RunRecord
    plan: SweepPlan
    results: list[StepResult]
    budget_ms: float | None = None
    notes: list[str] = field(default_factory=list)
    stopped: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The ``trtstudio.sweep/1`` document (``sweep``, ``knee``, ``best_under_budget``, ``profiles``)."""
        from trtstudio.profiling.profiles import from_sweep

        rows = [r.to_dict(i) for i, r in enumerate(self.results)]
        warnings = [f"step {r.step.label}: {r.error}" for r in self.results if r.error]
        if self.stopped:
            warnings.append(f"stopped after {len(self.results)} of {len(self.plan.steps)} steps")
        return {"schema": SCHEMA, "model": self.request.model, "model_sha256": self.record.model_sha256,
                "backend": self.request.backend, "settings": self.record.settings, "axis": self.plan.axis,
                "swept_inputs": self.plan.swept, "sweep": rows,
                "knee": knee(self.results, unit="samples" if self.plan.axis == "batch" else "elements"),
                "best_under_budget": best_under_budget(self.results, self.budget_ms),
                "profiles": from_sweep(self.results, self.plan.dynamic or None, self.request.model), "notes": list(self.notes), "warnings": warnings,
                "stopped": self.stopped}


def _peak(monitor: Any, backend_name: str) -> tuple[int | None, str | None]:
    """The step's memory peak: the process's GPU memory on a GPU backend, else host RSS."""
    summary = monitor.series.summary()
    order = ("context_device_bytes", "process_used_bytes", "nvml_process_bytes", "nvml_used_bytes", "host_rss_bytes")
    keys = [k for k in order if k in summary] if backend_name != "ort" else ["host_rss_bytes"]
    keys += [k for k in summary if k.endswith("_bytes") and "total" not in k and "free" not in k and k not in keys]
    for k in keys:
        if k in summary:
            return int(summary[k]["peak"]), k
    return None, None


def run_step(backend: Any, step: SweepStep, request: Any, state: Any = None, samples: Any = None) -> StepResult:
    """Prepare ``backend`` at the step's shapes and run the profiling loop on it (the loop a plain
    profile runs); an error while preparing or running is the step's error."""
    from trtstudio.profiling.memory import MemoryMonitor, default_probes
    from trtstudio.profiling.runner import RunConfig, Runner, RunState

    try:
        backend.prepare_inputs(dict(step.shapes), None)
    except (InputError, Exception) as exc:  # noqa: BLE001 - the step fails, the sweep goes on
        text = exc.one_line() if isinstance(exc, InputError) else f"{type(exc).__name__}: {exc}"
        return StepResult(step, np.empty(0), error=text.splitlines()[0] if text else type(exc).__name__)
    monitor = MemoryMonitor(probes=default_probes(gpu=request.backend != "ort"), interval_ms=100)
    if state is not None:
        state.done = 0  # the inferences of this step (a progress view reads them)
    iterations = request.iterations if request.duration_s is None else None
    config = RunConfig(warmup=request.warmup, iterations=iterations, duration_s=request.duration_s,
                       batch=step.batch, ring_capacity=min(request.ring_capacity, 100_000))
    result = Runner(backend, config, state or RunState(), samples, monitor).run()
    peak, key = _peak(monitor, request.backend)
    return StepResult(step, result.exact.values(), result.active_s, result.cold_ms, peak, key, result.error_text)


StepCallback = Callable[[int, StepResult], None]


def run_sweep(request: Any, sweep: list[str], budget_ms: float | None = None, state: Any = None,
              factory: Any = None, on_step: StepCallback | None = None,
              samples_for: Callable[[int], Any] | None = None) -> SweepOutcome:
    """Open the request's backend once and run every step of ``sweep`` (``--sweep`` texts).

    ``state`` (a ``RunState``) stops between and within steps; events on it: ``sweep_plan``
    (steps: labels) after planning, ``step_start`` (index, label) before each step, ``step`` (index,
    row: the step's document row) after each step; ``state.done`` counts the step's inferences.
    ``samples_for(index)`` may give each step a ``SampleBuffer`` that live plots read."""
    from trtstudio.profiling.runner import RunState
    from trtstudio.profiling.session import _open_recorded

    if budget_ms is not None and not budget_ms > 0:
        raise FieldError("latency_budget", "must be positive")
    state = state if state is not None else RunState()
    backend, shapes, record = _open_recorded(request, factory)
    try:
        specs = list(backend.input_specs())
        plan = plan_sweep(sweep, specs, shapes)
        record.settings["sweep"] = list(sweep)
        state.event("sweep_plan", steps=[s.label for s in plan.steps], axis=plan.axis)
        results: list[StepResult] = []
        stopped = False
        for i, step in enumerate(plan.steps):
            if state.is_stop_requested():
                stopped = True
                break
            state.event("step_start", index=i, label=step.label)
            res = run_step(backend, step, request, state, samples_for(i) if samples_for else None)
            results.append(res)
            state.event("step", index=i, row=res.to_dict(i))
            if on_step is not None:
                on_step(i, res)
        stopped = stopped or (state.is_stop_requested() and len(results) < len(plan.steps))
        # the base run's guesses for inputs whose every dynamic dim the sweep sets are not what ran
        whole = {sp["name"] for sp in specs if sp["name"] in plan.swept and (plan.axis != "batch" or all(
            not _dynamic(d) for d in sp["shape"][1:]))}
        notes = [n for n in backend.notes if not any(n.startswith(f"input '{name}' has dynamic dims") for name in whole)]
        return SweepOutcome(request, record, plan, results, budget_ms, notes, stopped)
    finally:
        backend.close()


def sweep_progress(steps: int, finished_s: list[float], current_s: float, done: int = 0,
                   iterations: int | None = None, duration_s: float | None = None,
                   measuring: bool = True) -> dict[str, Any]:
    """Where a sweep of ``steps`` steps stands while step ``len(finished_s)`` runs: ``finished_s``, the
    wall seconds of the steps done; ``current_s``, of the step under way (``done`` inferences measured
    of ``iterations``, or ``duration_s`` seconds to measure; ``measuring``: past its warm-up).

    Returns ``{step_fraction, fraction, left_s}``: the share of the current step and of the whole sweep
    done, and an estimate of the seconds left (None until a step has shown its pace). A step's own
    share is its inferences of ``iterations``, or its seconds of the expected step time (``duration_s``
    plus what loading and warm-up took in the finished steps); the steps to come take as long as the
    finished ones (a duration) or as the current one is heading for (iterations: later steps are
    bigger), whichever is longer; a step without a measure of its own (warming up, or work counted in
    steps only, as a precision sweep's variants) as long as the finished ones."""
    n_done = len(finished_s)
    overhead = max(0.0, float(np.mean(finished_s)) - duration_s) if finished_s and duration_s else 0.0
    if not measuring:
        frac = 0.0
    elif iterations:
        frac = min(1.0, done / iterations)
    elif duration_s:
        frac = min(0.99, current_s / (duration_s + overhead)) if current_s > 0 else 0.0
    else:
        frac = 0.0
    current_total: float | None = None
    if duration_s:
        current_total = duration_s + overhead if finished_s or measuring else None
    elif frac >= 0.05:
        current_total = current_s / frac
    per_step = current_total
    if finished_s:
        per_step = float(np.mean(finished_s))
        if not duration_s and current_total is not None:
            per_step = max(per_step, current_total)
        if current_total is None:  # no pace of its own yet (or none to have): as long as the others
            current_total = max(per_step, current_s)
    left = None
    if current_total is not None and per_step is not None:
        left = max(0.0, current_total - current_s) + max(0, steps - n_done - 1) * per_step
    whole = (n_done + frac) / steps if steps else 1.0
    return {"step_fraction": frac, "fraction": min(1.0, whole), "left_s": left}


def render_text(doc: dict[str, Any]) -> str:
    """The sweep as a table, then the knee, the budget's answer and the recommended profiles."""
    lines = [f"model    {doc['model']}", f"backend  {doc['backend']}",
             f"sweep    {doc['axis']} ({', '.join(doc['swept_inputs'])})", ""]
    lines.append(f"{'step':<34}{'median ms':>11}{'(95% interval)':>20}{'p99 ms':>10}{'inf/s':>10}"
                 f"{'samples/s':>11}{'peak mem':>11}")
    for row in doc["sweep"]:
        if row["error"] and not row["count"]:
            lines.append(f"{row['label'][:33]:<34}error: {row['error']}")
            continue
        iv = row["median_interval_ms"]
        ivs = f"({iv[0]:.3f}-{iv[1]:.3f})" if iv else "(no interval)"
        mem = row["peak_memory_bytes"]
        lines.append(f"{row['label'][:33]:<34}{row['median_ms']:>11.3f}{ivs:>20}{row['p99_ms']:>10.3f}"
                     f"{row['throughput']:>10.1f}{row['samples_per_s']:>11.1f}"
                     f"{(f'{mem / 2**20:.0f} MiB' if mem else '-'):>11}")
    lines.append("")
    if doc.get("knee"):
        lines.append(f"knee: {doc['knee']['text']}")
    if doc.get("best_under_budget"):
        lines.append(f"budget: {doc['best_under_budget']['text']}")
    from trtstudio.profiling.profiles import render_text as profiles_text

    lines.extend(profiles_text(doc.get("profiles"), doc["model"]))
    lines.extend(f"note: {n}" for n in doc.get("notes", []))
    lines.extend(f"warning: {w}" for w in doc.get("warnings", []))
    lines.extend(f"wrote {p}" for p in doc.get("written", []))
    return "\n".join(lines)
