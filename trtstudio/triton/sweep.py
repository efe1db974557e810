"""Load generation and perf_analyzer-like sweeps against a Triton server (asyncio, Qt-free).

One *step* holds the load at a fixed concurrency (N requests always in flight) or at a request
rate (constant or Poisson arrivals) and measures it in windows: per window the client latencies
and throughput, and the statistics extension's deltas (queue, compute input/infer/output, cache);
where the server restricts that API, the same breakdown from the per-model counters of its /metrics
page, and where both are closed none (``SweepResult.breakdown_source`` and ``notes`` say which).
A step is *stable* when its last three windows agree within 10 % in throughput and mean latency
(perf_analyzer's rule); it ends then, at ``max_windows``, at ``duration_s`` or at ``max_requests``.
At the end of a step the load stops, in-flight requests drain, and the statistics are read once
more, so the server's request count for the step equals the client's.

A failure mid-way (server gone, model unloaded, HTTP/gRPC error, timeout) ends the sweep with a
one-line ``error`` in the result; the steps measured so far (and the partial one) are kept.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trtstudio.triton import SCHEMA
from trtstudio.triton.client import (
    METRICS_HINT,
    Connection,
    ModelInfo,
    TritonTarget,
    _exc_text,
    find_metrics,
    import_tritonclient,
    is_restricted,
    metrics_headers,
    metrics_statistics,
    metrics_url,
    numpy_to_triton,
    parse_statistics,
    scrape_metrics,
    stats_delta,
)

PERCENTILES = (50, 90, 95, 99)


@dataclass
class SweepSettings:
    """What to run: steps of concurrency (or request rate), batch, windows and limits."""

    concurrency: list[int] = field(default_factory=lambda: [1])
    rates: list[float] = field(default_factory=list)  # requests/s; when given, rate mode replaces concurrency
    distribution: str = "constant"  # or "poisson"
    batch: int = 1
    window_s: float = 1.0
    stability: float = 0.10
    stable_windows: int = 3
    max_windows: int = 10
    duration_s: float | None = None  # cap per step
    max_requests: int | None = None  # cap per step
    latency_budget_ms: float | None = None
    budget_percentile: int = 99
    timeout_s: float = 10.0
    seed: int = 0

    def steps(self) -> list[tuple[str, float]]:
        if self.rates:
            return [("rate", float(r)) for r in self.rates]
        return [("concurrency", float(c)) for c in self.concurrency]


COMPUTE_PHASES = ("compute_input", "compute_infer", "compute_output")


def parse_steps(text: str, kind: type) -> list[Any]:
    """``"1,2,4"`` -> ``[1, 2, 4]`` (``kind`` int for concurrency, float for rates); ValueError
    naming the text for anything else, or for a value that is not positive."""
    try:
        values = [kind(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise ValueError(f"not a comma-separated list of numbers: {text!r}") from None
    if not values or any(v <= 0 for v in values):
        raise ValueError(f"give positive numbers separated by commas, not {text!r}")
    return values


def compute_us(server_us: dict[str, Any] | None) -> float:
    """The server's compute time per request (input + infer + output), in µs."""
    return sum(float((server_us or {}).get(k) or 0.0) for k in COMPUTE_PHASES)


BREAKDOWN_PARTS = ("queue", "compute_input", "compute_infer", "compute_output", "client_network")


def breakdown_us(window: dict[str, Any]) -> dict[str, float] | None:
    """Where a window's mean request time went (µs): the server's phases and the client/network rest
    (client mean latency minus the server's request time, never below 0); None without server figures."""
    server = window.get("server") or {}
    us = server.get("server_us")
    if not us or not server.get("requests"):
        return None
    out = {k: float(us.get(k) or 0.0) for k in BREAKDOWN_PARTS[:4]}
    mean_ms = float((window.get("latency_ms") or {}).get("mean") or math.nan)
    rest = mean_ms * 1e3 - float(us.get("request") or 0.0)
    out["client_network"] = max(rest, 0.0) if math.isfinite(rest) else 0.0
    return out


GPU_METRICS = (("nv_gpu_utilization", "GPU utilisation", 100.0, "%"),
               ("nv_gpu_memory_used_bytes", "GPU memory", 1.0 / 2**30, "GiB"),
               ("nv_gpu_power_usage", "GPU power", 1.0, "W"),
               ("nv_energy_consumption", "energy", 1.0, "J"))


def gpu_figures(metrics: dict[str, float] | None) -> dict[str, tuple[float, str]]:
    """The GPU figures of a step's scraped metrics (label -> (value, unit)); empty when the server has none."""
    out: dict[str, tuple[float, str]] = {}
    for key, label, scale, unit in GPU_METRICS:
        if metrics and key in metrics:
            out[label] = (float(metrics[key]) * scale, unit)
    return out


def step_figures(step: dict[str, Any]) -> dict[str, Any]:
    """What a table row shows of one step: mode and value, requests, throughput, p50/p90/p99 (ms),
    server queue and compute (µs per request), stable."""
    mode = "concurrency" if "concurrency" in step else "rate"
    lat, srv = step.get("latency_ms") or {}, step.get("server_us") or {}

    def ms(key: str) -> float:  # null in a document (no request answered) reads as NaN, as in memory
        v = lat.get(key)
        return math.nan if v is None else float(v)

    return {"mode": mode, "value": step[mode], "requests": int(step.get("requests", 0)),
            "throughput": float(step.get("throughput", 0.0)), "p50": ms("p50"), "p90": ms("p90"), "p99": ms("p99"),
            "queue_us": float(srv.get("queue") or 0.0), "compute_us": compute_us(srv), "stable": bool(step.get("stable"))}


def latency_figures(lat_s: np.ndarray) -> dict[str, float]:
    """p50/p90/p95/p99/mean/min/max of latencies given in seconds, in ms, from the one statistics
    summary (``measure.stats.latency_stats``; p50 is its median under perf_analyzer's name); NaN
    each where none (no request answered), which the document writes as null (:func:`absent_as_null`)."""
    from trtstudio.measure.stats import latency_stats, stat

    s = latency_stats(np.asarray(lat_s, dtype=np.float64) * 1e3)
    out = {}
    for key in (*(f"p{p}" for p in PERCENTILES), "mean", "min", "max"):
        v = stat(s, key)
        out[key] = math.nan if v is None else v
    return out


def is_stable(windows: list[dict[str, Any]], n: int = 3, tol: float = 0.10) -> bool:
    """perf_analyzer's rule: the last ``n`` windows' throughput and mean latency each within ``tol`` of their mean."""
    if len(windows) < n:
        return False
    last = windows[-n:]
    for key in ("throughput", "latency_mean_ms"):
        vals = np.array([w[key] for w in last], dtype=float)
        if not np.all(np.isfinite(vals)) or vals.mean() <= 0:
            return False
        if np.any(np.abs(vals - vals.mean()) > tol * vals.mean()):
            return False
    return True


def recommend(steps: list[dict[str, Any]], budget_ms: float | None, percentile: int = 99) -> dict[str, Any] | None:
    """The highest-throughput step whose latency percentile is within the budget (any step without one)."""
    key = f"p{percentile}"
    ok = [s for s in steps if s["requests"] > 0 and not s.get("error")
          and (budget_ms is None or s["latency_ms"][key] <= budget_ms)]
    if not ok:
        return {"step": None, "reason": f"no step has {key} <= {budget_ms} ms"} if steps else None
    best = max(ok, key=lambda s: s["throughput"])
    label = f"concurrency {best['concurrency']}" if "concurrency" in best else f"rate {best['rate']}/s"
    cond = f" with {key} {best['latency_ms'][key]:.2f} ms <= {budget_ms} ms" if budget_ms is not None else ""
    return {"step": best["index"], "mode": "concurrency" if "concurrency" in best else "rate",
            "value": best.get("concurrency", best.get("rate")), "throughput": best["throughput"],
            "latency_ms": best["latency_ms"][key], "budget_ms": budget_ms, "percentile": percentile,
            "reason": f"{label}: {best['throughput']:.1f} infer/s{cond}"}


class _Recorder:
    """Completion times and latencies (seconds, perf_counter), appended by the request coroutines."""

    def __init__(self) -> None:
        self.ends: list[float] = []
        self.lats: list[float] = []
        self.error: str | None = None

    def window(self, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray]:
        """Completion times and latencies (s) of the requests that ended in [t0, t1)."""
        ends = np.asarray(self.ends)
        lats = np.asarray(self.lats)
        mask = (ends >= t0) & (ends < t1)
        return ends[mask], lats[mask]


class LoadGenerator:
    """asyncio clients over one server and model, reused across steps (one event loop).

    The server's per-request breakdown comes from its statistics API or, where the server restricts
    that API, from the per-model counters of its /metrics page (:meth:`choose_counters`)."""

    def __init__(self, url: str, protocol: str, info: ModelInfo, feeds: dict[str, np.ndarray], timeout_s: float = 10.0,
                 connection: Connection | None = None, metrics_url: str | None = None) -> None:
        self.url, self.protocol, self.info, self.timeout_s = url, protocol, info, timeout_s
        self.connection = connection or Connection()
        self.metrics_url = metrics_url
        self.metrics_tried: list[str] = []  # the pages probed where none was given and none answered
        self.counters: str | None = "statistics"  # or "metrics", or None: no server breakdown
        mod = import_tritonclient(protocol)
        self._inputs = []
        for name, arr in feeds.items():
            ii = mod.InferInput(name, list(arr.shape), numpy_to_triton(arr.dtype))
            if protocol == "http":
                ii.set_data_from_numpy(arr, binary_data=True)
            else:
                ii.set_data_from_numpy(arr)
            self._inputs.append(ii)
        self.client: Any = None

    async def open(self, conn_limit: int = 256) -> None:
        tls = self.connection.client_kwargs(self.protocol, aio=True)
        if self.protocol == "grpc":
            import tritonclient.grpc.aio as aio

            self.client = aio.InferenceServerClient(self.url, **tls)
        else:
            import tritonclient.http.aio as aio

            self.client = aio.InferenceServerClient(self.url, conn_limit=conn_limit, conn_timeout=self.timeout_s, **tls)

    async def close(self) -> None:
        if self.client is not None:
            try:
                await self.client.close()
            except Exception:  # noqa: BLE001 - closing after a failure
                pass
            self.client = None

    async def infer(self) -> Any:
        headers = self.connection.headers_or_none()
        if self.protocol == "grpc":
            return await self.client.infer(self.info.name, self._inputs, model_version=self.info.version,
                                           client_timeout=self.timeout_s, headers=headers)
        return await self.client.infer(self.info.name, self._inputs, model_version=self.info.version, headers=headers)

    async def _api_statistics(self) -> dict[str, Any]:
        kw = {"as_json": True} if self.protocol == "grpc" else {}
        doc = await self.client.get_inference_statistics(self.info.name, self.info.version,
                                                         headers=self.connection.headers_or_none(), **kw)
        return parse_statistics(doc, self.info.name, self.info.version)

    async def _metrics_statistics(self) -> dict[str, Any] | None:
        murl = self.metrics_url or ""
        page = await asyncio.to_thread(scrape_metrics, murl, self.info.name, 2.0, self.info.version, self.connection,
                                       metrics_headers(murl, self.url, self.connection))
        return metrics_statistics(page)

    async def statistics(self) -> dict[str, Any] | None:
        """The model's cumulative counters from the chosen source; None without one. Raises when the
        source stops answering (the server went away)."""
        if self.counters == "statistics":
            return await self._api_statistics()
        if self.counters == "metrics":
            now = await self._metrics_statistics()
            if now is None:
                raise RuntimeError(f"the metrics page {self.metrics_url} stopped answering")
            return now
        return None

    async def choose_counters(self) -> str | None:
        """Pick the breakdown's source: the statistics API, else (restricted) the /metrics counters,
        else none. Returns the note that says what was chosen and why (None when the API answers)."""
        try:
            await self._api_statistics()
            return None
        except Exception as exc:  # noqa: BLE001 - only a restricted API is done without
            if not is_restricted(exc):
                return None  # a server gone away: the step's first reading says so, as an error
            why = f"the statistics API is restricted ({_exc_text(exc)})"
        if self.metrics_url and await self._metrics_statistics() is not None:
            self.counters = "metrics"
            return (f"{why}: the server breakdown comes from the metrics counters at {self.metrics_url} (deltas of "
                    f"nv_inference_queue/compute_input/compute_infer/compute_output_duration_us over "
                    f"nv_inference_request_success)")
        self.counters = None
        if self.metrics_url:
            closed = f"the metrics page {self.metrics_url} did not answer with counters of model {self.info.name!r}"
        elif self.metrics_tried:
            closed = f"no metrics page answered at {' or '.join(self.metrics_tried)}"
        else:
            closed = "no metrics page was read"
        return f"{why} and {closed}: the server breakdown is left out; {METRICS_HINT}"

    # -- load shapes ---------------------------------------------------------------------------

    async def _one(self, rec: _Recorder, stop: asyncio.Event) -> None:
        t0 = time.perf_counter()
        try:
            await self.infer()
        except Exception as exc:  # noqa: BLE001 - any request failure ends the step
            if rec.error is None:
                rec.error = _exc_text(exc)
            stop.set()
            return
        t1 = time.perf_counter()
        rec.ends.append(t1)
        rec.lats.append(t1 - t0)

    async def _closed_loop(self, rec: _Recorder, stop: asyncio.Event, limit: list[int]) -> None:
        while not stop.is_set() and limit[0] > 0:
            limit[0] -= 1
            await self._one(rec, stop)

    async def _open_loop(self, rate: float, poisson: bool, rng: np.random.Generator, rec: _Recorder,
                         stop: asyncio.Event, limit: list[int], tasks: set[asyncio.Task[None]]) -> None:
        t_next = time.perf_counter()
        max_outstanding = max(64, int(rate * self.timeout_s))
        while not stop.is_set() and limit[0] > 0:
            t_next += rng.exponential(1.0 / rate) if poisson else 1.0 / rate
            delay = t_next - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            if len(tasks) >= max_outstanding:
                continue  # the server cannot keep up: drop the arrival rather than grow without bound
            limit[0] -= 1
            task = asyncio.create_task(self._one(rec, stop))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    def _start_load(self, index: int, mode: str, value: float, s: SweepSettings, rec: _Recorder, stop: asyncio.Event,
                    limit: list[int], tasks: set[asyncio.Task[None]]) -> list[asyncio.Task[None]]:
        if mode == "concurrency":
            return [asyncio.create_task(self._closed_loop(rec, stop, limit)) for _ in range(int(value))]
        rng = np.random.default_rng(s.seed + index)
        return [asyncio.create_task(self._open_loop(value, s.distribution == "poisson", rng, rec, stop, limit, tasks))]

    async def _window(self, index: int, mode: str, value: float, s: SweepSettings, rec: _Recorder, stop: asyncio.Event,
                      limit: list[int], t_start: float, prev: list[dict[str, Any] | None]) -> dict[str, Any]:
        """Hold the load for one window; its figures, with the server's delta when there are counters."""
        t0 = time.perf_counter()
        deadline = t0 + s.window_s
        while time.perf_counter() < deadline and not stop.is_set() and limit[0] > 0:
            await asyncio.sleep(min(0.02, max(0.0, deadline - time.perf_counter())))
        t1 = time.perf_counter()
        ends_w, lat = rec.window(t0, t1)
        lf = latency_figures(lat)
        w: dict[str, Any] = {"step": index, mode: value, "t": t1 - t_start, "requests": int(lat.size),
                             "throughput": lat.size * s.batch / (t1 - t0), "latency_mean_ms": lf["mean"], "latency_ms": lf}
        try:
            now = await self.statistics()
            if prev[0] is not None and now is not None:
                w["server"] = stats_delta(prev[0], now)
            prev[0] = now
        except Exception as exc:  # noqa: BLE001 - the server went away mid-step
            if rec.error is None:
                rec.error = f"statistics: {_exc_text(exc)}"
            stop.set()
        return w | {"samples_t": ends_w, "samples_ms": lat * 1e3}

    async def _server_totals(self, step: dict[str, Any], before: dict[str, Any], answered: int) -> None:
        """The step's server figures from its counters, read until they count every answered request."""
        # Triton records a request's statistics after its response is sent: read again briefly
        # until the server has counted every request the client saw answered.
        settle = time.perf_counter() + 1.0
        while True:
            after = await self.statistics()
            total = stats_delta(before, after or before)
            if total["requests"] >= answered or time.perf_counter() >= settle:
                break
            await asyncio.sleep(0.01)
        step["server_requests"] = total["requests"]
        step["server_failed"] = total["failed"]
        step["server_executions"] = total["executions"]
        step["server_us"] = total["server_us"]
        step["cache"] = {"hit": total["cache_hit"], "miss": total["cache_miss"]}
        comp = [compute_us(w["server"]["server_us"]) for w in step["windows"] if "server" in w and w["server"]["requests"]]
        step["server_compute_p50_us"] = float(np.median(comp)) if comp else None
        mean_ms = step["latency_ms"]["mean"]
        if math.isfinite(mean_ms):
            step["client_overhead_us"] = mean_ms * 1e3 - total["server_us"]["request"]

    async def run_step(self, index: int, mode: str, value: float, s: SweepSettings,
                       should_stop: Callable[[], bool], on_window: Callable[[dict[str, Any]], None] | None) -> dict[str, Any]:
        """One step of the sweep; returns its figures (with ``error`` when it failed)."""
        rec, stop = _Recorder(), asyncio.Event()
        limit = [s.max_requests if s.max_requests else 1 << 62]
        error: str | None = None
        try:
            before = await self.statistics()
        except Exception as exc:  # noqa: BLE001
            before, error = None, f"statistics: {_exc_text(exc)}"
        tasks: set[asyncio.Task[None]] = set()
        runners = self._start_load(index, mode, value, s, rec, stop, limit, tasks)
        t_start = time.perf_counter()
        windows: list[dict[str, Any]] = []
        prev, stable = [before], False
        while error is None and not stop.is_set():
            w = await self._window(index, mode, value, s, rec, stop, limit, t_start, prev)
            if rec.error is None:
                windows.append({k: v for k, v in w.items() if not k.startswith("samples_")})
                if on_window is not None:
                    # the window's requests for live panels (perf_counter end times, ms); not kept in the document
                    on_window(w)
            stable = is_stable(windows, s.stable_windows, s.stability)
            if (stable or len(windows) >= s.max_windows or should_stop() or limit[0] <= 0
                    or (s.duration_s is not None and w["t"] >= s.duration_s)):
                break
        stop.set()
        await asyncio.gather(*runners, return_exceptions=True)
        if tasks:
            await asyncio.gather(*list(tasks), return_exceptions=True)
        t_end = time.perf_counter()
        error = error or rec.error
        step: dict[str, Any] = {"index": index, mode: int(value) if mode == "concurrency" else value,
                                "batch": s.batch, "requests": len(rec.lats), "stable": stable,
                                "windows": windows, "duration_s": t_end - t_start}
        # figures from the stable windows (the last three), else from every window
        used = windows[-s.stable_windows:] if stable else windows
        lat = np.asarray(rec.lats)
        if used:
            ends = np.asarray(rec.ends)
            lat = lat[(ends > t_start + used[0]["t"] - s.window_s * 1.5) & (ends <= t_start + used[-1]["t"] + 1e-9)]
            step["throughput"] = sum(w["throughput"] for w in used) / len(used)
        else:
            step["throughput"] = len(rec.lats) * s.batch / max(t_end - t_start, 1e-9)
        step["latency_ms"] = latency_figures(lat)
        if before is not None:
            try:
                await self._server_totals(step, before, len(rec.lats))
            except Exception as exc:  # noqa: BLE001
                error = error or f"statistics: {_exc_text(exc)}"
        if error:
            step["error"] = error
        return step


def absent_as_null(step: dict[str, Any]) -> dict[str, Any]:
    """``step`` with the latency figures of a step or window that got no answer (NaN) as None, so the
    document says "no figure" by design rather than through the writers' non-finite warning."""
    def null(v: Any) -> Any:
        return None if isinstance(v, float) and math.isnan(v) else v

    def clean(lat: Any) -> Any:
        return {k: null(v) for k, v in lat.items()} if isinstance(lat, dict) else lat

    out = step | {"latency_ms": clean(step.get("latency_ms"))}
    if isinstance(step.get("windows"), list):
        out["windows"] = [w | {"latency_ms": clean(w.get("latency_ms")), "latency_mean_ms": null(w.get("latency_mean_ms"))}
                          if isinstance(w, dict) and "latency_ms" in w else w for w in step["windows"]]
    return out


@dataclass
class SweepResult:
    """The ``trtstudio.triton/1`` document being built; ``to_json`` gives it to writers and the CLI.

    ``notes`` says what the sweep did without (a restricted repository index or statistics API) and
    where the server breakdown came from; ``breakdown_source`` is ``"statistics"``, ``"metrics"`` or
    None (no breakdown)."""

    server: dict[str, Any]
    model: dict[str, Any]
    settings: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    recommendation: dict[str, Any] | None = None
    error: str | None = None
    stopped: bool = False
    notes: list[str] = field(default_factory=list)
    breakdown_source: str | None = "statistics"

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "server": self.server, "model": self.model, "settings": self.settings,
                "steps": [absent_as_null(s) for s in self.steps], "metrics": self.metrics, "recommendation": self.recommendation,
                "error": self.error, "stopped": self.stopped, "notes": self.notes, "breakdown_source": self.breakdown_source}

    def render_text(self) -> str:
        return render_text(self.to_json())


BREAKDOWN_SOURCES = {"statistics": "the server's statistics API", "metrics": "the server's /metrics counters",
                     None: "none (the server restricts its statistics and no metrics counters were read)"}


def connection_line(doc: dict[str, Any]) -> str:
    """TLS and the header names the sweep sent (documents never hold the values)."""
    conn = (doc.get("settings") or {}).get("connection") or {}
    tls = ("TLS" + (f", CA {conn['ca']}" if conn.get("ca") else "")) if conn.get("ssl") else "no TLS"
    names = ", ".join(conn.get("headers") or []) or "none"
    return f"connection: {tls}; headers sent: {names}"


def notes(doc: dict[str, Any]) -> list[str]:
    """Where the server breakdown came from and what the sweep did without."""
    source = doc.get("breakdown_source", "statistics")
    return [f"server breakdown from: {BREAKDOWN_SOURCES.get(source, str(source))}", connection_line(doc),
            *[f"note: {n}" for n in doc.get("notes") or []]]


def render_text(doc: dict[str, Any]) -> str:
    """Server, model, a table of steps, the notes and the recommendation (the CLI's text output)."""
    srv, mdl = doc.get("server") or {}, doc.get("model") or {}
    lines = [f"server  {srv.get('name', 'triton')} {srv.get('version', '?')} ({(doc.get('settings') or {}).get('protocol', '')})",
             f"model   {mdl.get('name')} v{mdl.get('version') or '-'}  max_batch_size {mdl.get('max_batch_size')}  "
             f"inputs {mdl.get('input_shapes')}", *notes(doc), ""]
    lines.append(f"{'step':>10} {'requests':>9} {'infer/s':>9} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} "
                 f"{'queue us':>9} {'compute us':>11} {'stable':>7}")
    breakdown = doc.get("breakdown_source", "statistics") is not None
    for s in doc.get("steps", []):
        f = step_figures(s)
        queue, comp = (f"{f['queue_us']:>9.0f}", f"{f['compute_us']:>11.0f}") if breakdown else (f"{'-':>9}", f"{'-':>11}")
        lines.append(f"{f['mode'][:4]} {f['value']:>5g} {f['requests']:>9} {f['throughput']:>9.1f} "
                     f"{f['p50']:>8.3f} {f['p90']:>8.3f} {f['p99']:>8.3f} {queue} {comp} "
                     f"{'yes' if f['stable'] else 'no':>7}")
        if s.get("error"):
            lines.append(f"           error: {s['error']}")
    rec = doc.get("recommendation")
    if rec:
        lines += ["", f"recommendation: {rec.get('reason') or rec}"]
    if doc.get("error"):
        lines.append(f"stopped early: {doc['error']} (the steps above were measured before)")
    return "\n".join(lines)


def prepare(url: str, model: str, version: str = "", protocol: str | None = None, batch: int = 1,
            shapes: dict[str, tuple[int, ...]] | None = None, data: dict[str, np.ndarray] | None = None,
            timeout_s: float = 10.0, connection: Connection | None = None,
            ) -> tuple[TritonTarget, dict[str, Any], ModelInfo, dict[str, np.ndarray]]:
    """Connect, read server and model facts, make inputs; InputError for anything the user got wrong.
    What was done without (a restricted repository index) is in the target's ``notes``."""
    target = TritonTarget(url, protocol, timeout_s, connection)
    try:
        server = target.server_info()
        info = target.model_info(model, version)
        from trtstudio.triton.client import make_inputs

        feeds, _notes = make_inputs(info, batch, shapes, data)
    except BaseException:
        target.close()
        raise
    return target, server, info, feeds


def _metrics_delta(m0: dict[str, float], m1: dict[str, float]) -> dict[str, float]:
    """A step's metrics: counters as deltas, GPU gauges as read at its end."""
    return {k: m1[k] - m0.get(k, 0.0) if not k.startswith(("nv_gpu_util", "nv_gpu_mem", "nv_gpu_power")) else m1[k]
            for k in m1}


def run_sweep(url: str, model: str, settings: SweepSettings, *, version: str = "", protocol: str | None = None,
              shapes: dict[str, tuple[int, ...]] | None = None, data: dict[str, np.ndarray] | None = None,
              metrics: str | None = "auto", should_stop: Callable[[], bool] = lambda: False,
              on_window: Callable[[dict[str, Any]], None] | None = None,
              on_step: Callable[[dict[str, Any]], None] | None = None,
              connection: Connection | None = None,
              on_notes: Callable[[list[str], str | None], None] | None = None) -> SweepResult:
    """Run every step of ``settings``; raises InputError before the load for bad URL/model/inputs.

    ``metrics``: a /metrics URL, ``"auto"`` (the first that answers of the server's HTTP port + 2
    and HOST:8002) or None. ``connection``: headers and TLS
    (only its ``recorded()`` form, without header values, goes into the document). ``should_stop``
    is polled each window (cooperative stop); ``on_window``/``on_step`` are called from this thread,
    ``on_notes(notes, breakdown_source)`` once before the first step.
    """
    target, server, info, feeds = prepare(url, model, version, protocol, settings.batch, shapes, data,
                                          settings.timeout_s, connection)
    target.close()
    conn = target.connection  # with TLS on where the URL's scheme asks for it
    tried: list[str] = []
    if metrics == "auto":  # the HTTP port + 2, then 8002
        murl, tried = find_metrics(target.url, target.protocol, model, info.version, conn)
        tried = [] if murl else tried
    else:
        murl = metrics_url(target.url, metrics) if metrics else None
    recorded = {k: getattr(settings, k) for k in settings.__dataclass_fields__}
    result = SweepResult(server=server, model=info.to_json() | {"input_shapes": {k: list(v.shape) for k, v in feeds.items()}},
                         settings=recorded | {"metrics_url": murl, "protocol": target.protocol,
                                              "connection": conn.recorded()},
                         notes=list(target.notes))
    gen = LoadGenerator(target.url, target.protocol, info, feeds, settings.timeout_s, conn, murl)
    gen.metrics_tried = tried
    sent = metrics_headers(murl or "", target.url, conn)

    async def scrape() -> dict[str, float] | None:
        return await asyncio.to_thread(scrape_metrics, murl, model, 2.0, info.version, conn, sent) if murl else None

    async def main() -> None:
        await gen.open(conn_limit=max([int(c) for c in settings.concurrency] + [64]) + 4)
        try:
            note = await gen.choose_counters()
            result.notes += [note] if note else []
            if not note and tried:  # the statistics answered; the GPU figures need the metrics page
                result.notes.append(f"no metrics page answered at {' or '.join(tried)}: the GPU figures are left "
                                    f"out; {METRICS_HINT}")
            result.breakdown_source = gen.counters
            if on_notes is not None:
                on_notes(list(result.notes), gen.counters)
            for i, (mode, value) in enumerate(settings.steps()):
                if should_stop():
                    result.stopped = True
                    break
                m0 = await scrape()
                step = await gen.run_step(i, mode, value, settings, should_stop, on_window)
                m1 = await scrape()
                if m0 is not None and m1 is not None:
                    step["metrics"] = _metrics_delta(m0, m1)
                result.steps.append(step)
                if on_step is not None:
                    on_step(step)
                if step.get("error"):
                    result.error = f"step {i} ({mode} {step[mode]}): {step['error']}"
                    break
            if should_stop() and not result.error:
                result.stopped = True
        finally:
            await gen.close()

    asyncio.run(main())
    result.recommendation = recommend(result.steps, settings.latency_budget_ms, settings.budget_percentile)
    return result
