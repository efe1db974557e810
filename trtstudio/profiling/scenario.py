"""Production scenarios, Qt-free: contention, load/unload cycles, soak, cold start.

One request for the command line and the window: :class:`ScenarioRequest` (its errors name its
fields, as ``ProfileRequest``'s do) and :func:`run_scenario`, which returns a ``ScenarioResult``
(``to_json()``: the ``trtstudio.scenario/1`` document, ``render_text()``: its summary).

- **Contention** (``scenario_contention``): N models (or N copies of one) each run alone, then all at
  once, each in its own process (default) or thread; the slowdown of median and p99, jitter,
  throughput, and the slowdown's causes with their evidence (``scenario_causes``).
- **Cycles** (``scenario_cycles``): load, run K inferences, unload, M times over a mix of models;
  after each cycle NVML used, CUDA free, the largest allocatable block and host RSS; a verdict:
  leak or fragmentation.
- **Soak** (here): one model for T minutes, a summary per window (latency, throughput, memory), drift
  of the first vs the last window and the memory slope; its own memory stays bounded.
- **Cold start** (here): load (deserialize, context, inputs) and first-inference time per model.

Faults end a scenario cleanly: a model that fails to load, runs out of memory or raises, or a stop
request; everything measured so far is kept, and ``failure`` names the model, phase and cycle.
Every worker checks the shared ``ScenarioState`` between inferences.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.backends.catalogue import choices
from trtstudio.errors import FieldError, InputError
from trtstudio.measure.stats import latency_stats
from trtstudio.profiling.leak import leak_check
from trtstudio.profiling.scenario_common import (
    ISOLATIONS,
    KINDS,
    SCHEMA,
    STREAM_MODES,
    ModelSpec,
    Opener,
    ScenarioFailure,
    ScenarioResult,
    ScenarioState,
    failure_from,
    failure_of,
    open_model,
    ratio,
    stats_of,
    unique_labels,
)
from trtstudio.profiling.scenario_contention import ContentionConfig, run_contention, share_streams
from trtstudio.profiling.scenario_cycles import CyclesConfig, gpu_of, run_cycles
from trtstudio.profiling.scenario_memory import DEFAULT_CAP, host_rss, nvml_used

__all__ = [
    "ISOLATIONS", "KINDS", "SCHEMA", "STREAM_MODES", "ContentionConfig", "CyclesConfig", "ModelSpec", "Opener",
    "ScenarioFailure", "ScenarioRequest", "ScenarioResult", "ScenarioState", "SoakConfig", "failure_from",
    "failure_of", "open_model", "run_contention", "run_coldstart", "run_cycles", "run_scenario", "run_soak",
    "share_streams", "soak_summary", "stats_of", "unique_labels",
]
_ratio, _gpu_of = ratio, gpu_of  # the names soak and cold start use


@dataclass
class ScenarioRequest:
    """What a scenario runs: the CLI builds it from its flags, the scenario dialog from its form.
    Fields a kind does not use are ignored by it. ``devices``: one CUDA device per model (after
    ``copies``) or one for all; ``device`` the default for every model."""

    kind: str
    models: list[str]
    backend: str = "auto"
    device: int | None = None
    devices: list[int | None] | None = None
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    threads: int | None = None
    copies: int = 1
    iterations: int = 500  # contention
    warmup: int = 20
    streams: str = "dedicated"
    isolation: str = "process"
    cpu_load_ms: float = 0.0
    cycles: int = 10  # cycles
    inferences: int = 50
    probe: bool = True
    probe_cap_bytes: int | None = DEFAULT_CAP
    release_cache: bool = False
    minutes: float = 10.0  # soak
    window_s: float = 10.0
    rate_hz: float | None = None

    def paths(self) -> list[str]:
        """Every model file, each ``copies`` times over."""
        return [str(m) for m in self.models] * max(1, self.copies)

    def validate(self) -> None:
        """Raise :class:`FieldError` naming the first field out of range (InputError for a missing file)."""
        if self.kind not in KINDS:
            raise FieldError("kind", f"must be one of {', '.join(KINDS)}")
        if not self.models:
            raise FieldError("models", "add at least one model")
        if self.kind == "soak" and len(self.models) != 1:
            raise FieldError("models", "a soak runs one model")
        for p in self.models:
            if not Path(p).is_file():
                raise InputError(p, "no such file")
        if self.backend not in choices():
            raise FieldError("backend", f"must be one of {', '.join(choices())}")
        for name in ("copies", "iterations", "cycles", "inferences", "threads", "minutes", "window_s", "rate_hz"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise FieldError(name, "must be positive")
        for name in ("warmup", "cpu_load_ms", "device"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise FieldError(name, "must be 0 or more")
        self._check_modes()

    def _check_modes(self) -> None:
        if self.streams not in STREAM_MODES:
            raise FieldError("streams", f"must be one of {', '.join(STREAM_MODES)}")
        if self.isolation not in ISOLATIONS:
            raise FieldError("isolation", f"must be one of {', '.join(ISOLATIONS)}")
        if self.kind == "contention" and self.streams == "shared" and self.isolation == "process":
            raise FieldError("streams", "a CUDA stream is shared only between threads of one process: use isolation thread")
        if self.devices is not None:
            if len(self.devices) not in (1, len(self.paths())):
                raise FieldError("devices", f"{len(self.devices)} devices for {len(self.paths())} models; "
                                 "give one per model or one for all")
            if any(d is not None and d < 0 for d in self.devices):
                raise FieldError("devices", "GPU indices must be 0 or more")

    def specs(self) -> list[ModelSpec]:
        """One ModelSpec per model (copies included), with its device, shapes and options."""
        paths = self.paths()
        devices = self.devices if self.devices is not None else [self.device]
        devices = devices * len(paths) if len(devices) == 1 else devices
        options = {"threads": self.threads} if self.threads else {}
        return [ModelSpec(p, self.backend, d, dict(self.shapes), dict(options)) for p, d in zip(paths, devices, strict=True)]

    def contention_config(self) -> ContentionConfig:
        """The contention settings of this request."""
        return ContentionConfig(iterations=self.iterations, warmup=self.warmup, streams=self.streams,
                                cpu_load_ms=self.cpu_load_ms, isolation=self.isolation, timeline=True)

    def settings(self) -> dict[str, Any]:
        """The request as JSON (recorded with the result)."""
        out = asdict(self)
        out["shapes"] = {k: list(v) for k, v in self.shapes.items()}
        return out


def run_scenario(request: ScenarioRequest, state: ScenarioState | None = None,
                 opener: Opener = open_model) -> ScenarioResult:
    """Validate ``request`` and run it; the CLI and the scenario dialog both come here."""
    request.validate()
    specs = request.specs()
    if request.kind == "contention":
        return run_contention(specs, request.contention_config(), state, opener)
    if request.kind == "cycles":
        cfg = CyclesConfig(cycles=request.cycles, inferences=request.inferences, probe=request.probe,
                           release_cache=request.release_cache, probe_cap_bytes=request.probe_cap_bytes)
        return run_cycles(specs, cfg, state, opener)
    if request.kind == "soak":
        return run_soak(specs[0], SoakConfig(minutes=request.minutes, window_s=request.window_s, rate_hz=request.rate_hz),
                        state, opener)
    return run_coldstart(specs, state, opener)


# -- soak ------------------------------------------------------------------------------------------
@dataclass
class SoakConfig:
    """``minutes`` of inference, a summary every ``window_s``; ``rate_hz`` paces inferences (None: as
    fast as they go). At most ``max_windows`` summaries are kept (every other middle one dropped
    beyond) and ``window_cap`` latencies per window (a uniform reservoir beyond), so the soak's own
    memory does not grow with its length."""

    minutes: float = 10.0
    window_s: float = 10.0
    rate_hz: float | None = None
    warmup: int = 10
    max_windows: int = 2000
    window_cap: int = 65_536
    device: int | None = None


def run_soak(
    spec: ModelSpec,
    config: SoakConfig | None = None,
    state: ScenarioState | None = None,
    opener: Opener = open_model,
    on_window: Callable[[dict[str, Any]], None] | None = None,
) -> ScenarioResult:
    """One model for ``minutes``; windows, drift (last vs first window) and memory slope."""
    cfg = config or SoakConfig()
    state = state or ScenarioState()
    label = spec.label()
    result = ScenarioResult("soak", models=[{"model": label, "path": spec.path, "backend": spec.backend_name()}],
                            extra={"minutes": cfg.minutes, "window_s": cfg.window_s, "rate_hz": cfg.rate_hz})
    try:
        backend = opener(spec)
    except Exception as exc:  # noqa: BLE001
        result.failure = failure_of(exc, label, "load")
        return result
    device = cfg.device if cfg.device is not None else _gpu_of(backend, spec)
    perf = time.perf_counter
    buf = np.empty(cfg.window_cap, np.float64)
    rng = np.random.default_rng(0)
    live = state.buffer(label)
    total = 0
    try:
        for _ in range(cfg.warmup):
            backend.infer_once()
        t_start = perf()
        t_end = t_start + cfg.minutes * 60.0
        period = 1.0 / cfg.rate_hz if cfg.rate_hz else 0.0
        next_t = t_start
        while perf() < t_end and not state.is_stop_requested():
            w0 = perf()
            w_end = min(w0 + cfg.window_s, t_end)
            n = 0
            while perf() < w_end and not state.is_stop_requested():
                if period:
                    next_t += period
                    delay = next_t - perf()
                    if delay > 0:
                        time.sleep(delay)
                    elif delay < -1.0:
                        next_t = perf()  # fell far behind: do not burst to catch up
                ms = backend.infer_once().total_ms
                if n < cfg.window_cap:
                    buf[n] = ms
                else:
                    j = int(rng.integers(0, n + 1))
                    if j < cfg.window_cap:
                        buf[j] = ms
                n += 1
                live.append(perf() - t_start, ms)
            total += n
            window = _window(len(result.windows), w0 - t_start, perf() - t_start, buf[: min(n, cfg.window_cap)], n, total, device)
            result.windows.append(window)
            state.cycles.append(window)
            if len(state.cycles) > cfg.max_windows:
                del state.cycles[: len(state.cycles) - cfg.max_windows]
            if on_window is not None:
                on_window(window)
            if len(result.windows) > cfg.max_windows:
                result.windows = [result.windows[0], *result.windows[1:-1][1::2], result.windows[-1]]
    except Exception as exc:  # noqa: BLE001
        result.failure = failure_of(exc, label, "run")
    finally:
        try:
            backend.close()
        except Exception:  # noqa: BLE001
            pass
    result.stopped = state.is_stop_requested()
    result.extra.update(soak_summary(result.windows))
    result.extra["inferences"] = total
    state.phase = "finished"
    return result


def _window(index: int, t0: float, t1: float, values: np.ndarray, n: int, total: int, device: int | None) -> dict[str, Any]:
    s = latency_stats(values)
    w: dict[str, Any] = {
        "window": index, "t_start_s": t0, "t_end_s": t1, "count": n, "inferences_total": total,
        "median": s.get("median"), "p99": s.get("p99"), "mean": s.get("mean"), "max": s.get("max"),
        "throughput_per_s": n / (t1 - t0) if t1 > t0 else 0.0, "host_rss_bytes": host_rss(trim=True),
    }
    if device is not None:
        w.update(nvml_used(device))
    return w


def soak_summary(windows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Drift (last window vs first, medians and p99) and memory slope (MiB per hour with its
    interval, from ``measure.trend.fit_trend``, and the leak verdict against inferences) over the windows."""
    from trtstudio.measure.trend import fit_trend

    if len(windows) < 2:
        return {"drift": None, "memory": {}}
    first, last = windows[0], windows[-1]
    drift = {"median_ratio": _ratio(first["median"], last["median"]), "p99_ratio": _ratio(first["p99"], last["p99"]),
             "first_median": first["median"], "last_median": last["median"]}
    memory: dict[str, Any] = {}
    t = np.array([w["t_end_s"] for w in windows])
    n = np.array([w["inferences_total"] for w in windows])
    for key in ("host_rss_bytes", "gpu_used_bytes", "process_gpu_bytes"):
        if not all(key in w for w in windows):
            continue
        y = np.array([w[key] for w in windows], dtype=np.float64)
        trend = fit_trend(t, y) if np.ptp(t) > 0 else None  # the project's one trend fit
        slope = trend.slope if trend is not None and np.isfinite(trend.slope) else 0.0
        memory[key] = {
            "first": int(y[0]), "last": int(y[-1]), "slope_mib_per_hour": slope * 3600.0 / 2**20,
            "slope_interval_mib_per_hour": trend.to_json(3600.0 / 2**20) if trend is not None else None,
            "leak": leak_check(n, y, min_points=4).to_dict(),
        }
    return {"drift": drift, "memory": memory}


# -- cold start ------------------------------------------------------------------------------------
def run_coldstart(
    specs: Sequence[ModelSpec], state: ScenarioState | None = None, opener: Opener = open_model
) -> ScenarioResult:
    """Per model: open (deserialize / load, context, input buffers) time, its phases where the backend
    reports them (``load_times``), the first and the second inference, and the file size."""
    state = state or ScenarioState()
    result = ScenarioResult("coldstart")
    perf = time.perf_counter
    for spec, label in zip(specs, unique_labels(specs), strict=True):
        if state.is_stop_requested():
            result.stopped = True
            break
        state.phase = f"cold start {label}"
        t0 = perf()
        try:
            backend = opener(spec)
        except Exception as exc:  # noqa: BLE001
            result.failure = failure_of(exc, label, "load")
            break
        row: dict[str, Any] = {"model": label, "path": spec.path, "backend": backend.name,
                               "open_ms": (perf() - t0) * 1e3, "file_bytes": Path(spec.path).stat().st_size}
        row.update({k: v for k, v in getattr(backend, "load_times", {}).items()})
        try:
            row["first_ms"] = backend.infer_once().total_ms
            row["second_ms"] = backend.infer_once().total_ms
        except Exception as exc:  # noqa: BLE001
            result.failure = failure_of(exc, label, "first inference")
        finally:
            backend.close()
        result.models.append(row)
        if result.failure is not None:
            break
    state.phase = "finished"
    return result
