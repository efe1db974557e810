"""Which Triton configuration meets the latency target at the highest throughput (Qt-free).

The search loads each :class:`~trtstudio.triton.variants.Variant` of a model through the server's
repository API under its own name (a load with config and file overrides, explicit model control;
what the server already serves is never replaced), sweeps it over concurrency with the existing
sweep (:func:`~trtstudio.triton.sweep.run_sweep`), and unloads it. One variant is loaded at a time
(``max_loaded``); everything the search loaded is unloaded at the end, errors and Ctrl+C included.

Modes: ``exhaustive`` measures every variant of the :class:`~trtstudio.triton.variants.Space` at
every concurrency; ``quick`` walks the space one dimension at a time (instances, max_batch_size,
queue delay) while a step pays (Model Analyzer's quick mode), and stops a variant's sweep as soon
as its latency percentile breaks the budget or two concurrency steps in a row add less than 5 %
throughput.

The answer (``trtstudio.tritonsearch/1``): the default config's figures, the best variant per
constraint with throughput and p99 intervals and its gain over the default with an interval and
a verdict, the Pareto front of throughput vs p99 (and GPU memory where the server reports it), why
each other variant lost (queueing, compute, memory, rejected), and, with ``out``, the winning
model-repository entry written, loaded once more and re-measured.
"""

from __future__ import annotations

import math
import secrets
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.errors import InputError
from trtstudio.triton.client import Connection, _exc_text, is_restricted, scrape_metrics
from trtstudio.triton.search_answer import (  # noqa: F401 - the answer's names, this module's as ever
    CONSTRAINT_SETS,
    SEARCH_SCHEMA,
    answer,
    gain,
    headline,
    pareto,
    render_text,
    representative,
    why_lost,
)
from trtstudio.triton.search_figures import (  # noqa: F401 - the figures' names, this module's as ever
    Constraints,
    best_point,
    feasible,
    parse_budget,
    parse_bytes,
    percentile_interval,
    score,
    step_point,
    t_interval,
)
from trtstudio.triton.sweep import SweepSettings, run_sweep
from trtstudio.triton.variants import ModelSource, Space, Variant, config_json, parse_pbtxt

CONTROL_FLAG = "--model-control-mode=explicit"
MIN_GAIN = 0.03  # quick mode moves only for a gain above this (noise on a busy machine)
SATURATED = 0.05  # quick mode ends a variant's sweep when two steps in a row add less throughput than this
# (one is not enough: dynamic batching can put the first extra requests into one instance's batch)


class SearchFailed(RuntimeError):
    """The server stopped answering mid-search (the variants measured so far are kept)."""


@dataclass
class SearchSettings:
    """What each variant's sweep runs and how the search walks the space."""

    concurrency: list[int] = field(default_factory=lambda: [1, 2, 4, 8, 16])
    window_s: float = 0.5
    max_windows: int = 5
    batch: int = 1
    mode: str = "quick"  # or "exhaustive"
    space: Space = field(default_factory=Space)
    kind: str = ""  # instance kind for every variant ("" keeps the default's)
    max_loaded: int = 1
    timeout_s: float = 10.0
    max_rounds: int = 3

    def sweep(self) -> SweepSettings:
        return SweepSettings(concurrency=list(self.concurrency), batch=self.batch, window_s=self.window_s,
                             max_windows=self.max_windows, timeout_s=self.timeout_s)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "space"} | {"space": self.space.to_json()}


class Loader:
    """Loads variants of ``source`` on a server under names of their own and unloads them.

    ``max_loaded`` bounds the variants loaded at once; :meth:`close` unloads every one still
    loaded (a server gone away is then nothing left loaded)."""

    def __init__(self, url: str, source: ModelSource, connection: Connection | None = None, max_loaded: int = 1,
                 timeout_s: float = 120.0) -> None:
        import tritonclient.http as http

        self.url, self.source, self.max_loaded = url, source, max(1, max_loaded)
        self.connection = connection or Connection()
        self.client = http.InferenceServerClient(url, connection_timeout=timeout_s, network_timeout=timeout_s,
                                                 **self.connection.client_kwargs("http"))
        self.loaded: list[str] = []
        self.unloaded: Callable[[str], bool] | None = None
        self.token = secrets.token_hex(2)
        self._served = self._served_names()

    def _served_names(self) -> set[str]:
        names: set[str] = set()
        headers = self.connection.headers_or_none()
        try:
            names |= {m.get("name", "") for m in self.client.get_model_repository_index(headers=headers)}
            doc = self.client.get_inference_statistics("", headers=headers)
            names |= {m.get("name", "") for m in doc.get("model_stats", [])}
        except Exception as exc:  # noqa: BLE001 - a restricted or closed API is named by the first load
            if not is_restricted(exc):
                raise InputError(self.url, f"server does not answer: {_exc_text(exc)}") from None
        return names

    def name(self, variant: Variant, suffix: str = "") -> str:
        """``MODEL__tsXXXX_i2_b8_q100``: never a name the server already serves."""
        name = f"{self.source.name}__ts{self.token}_{variant.key}{suffix}"
        while name in self._served:
            self.token = secrets.token_hex(2)
            name = f"{self.source.name}__ts{self.token}_{variant.key}{suffix}"
        return name

    def load(self, name: str, config: dict[str, Any], files: dict[str, bytes] | None = None) -> None:
        """Load ``config`` (with the source's files) as ``name``; InputError for a server that does not
        allow it (naming the flag), RuntimeError (the server's words) for a rejected config."""
        while len(self.loaded) >= self.max_loaded:
            self.unload(self.loaded[0])
        files = self.source.files if files is None else files
        try:
            self.loaded.append(name)
            self.client.load_model(name, headers=self.connection.headers_or_none(), config=config_json(config),
                                   files={f"file:{k}": v for k, v in files.items()})
        except Exception as exc:  # noqa: BLE001 - tritonclient raises its own and socket errors
            text = _exc_text(exc)
            if is_restricted(exc):
                raise InputError(self.url, "the server restricts its model-repository API: start it without "
                                           "model-repository in --http-restricted-api/--grpc-restricted-protocol, or give "
                                           f"its access header with --header ({text})") from None
            if "not allowed" in text or "polling is enabled" in text:
                raise InputError(self.url, f"the server does not load models on request: start it with "
                                           f"{CONTROL_FLAG} ({text})") from None
            if isinstance(exc, (ConnectionError, OSError)) or "connect" in text.lower():
                raise SearchFailed(f"load {name}: {text}") from None
            raise RuntimeError(text) from None

    def unload(self, name: str, wait_s: float = 10.0) -> None:
        """Unload ``name`` and wait (up to ``wait_s``) until it is gone: Triton unloads in the background
        (a python-backend model's stubs take seconds to end after it stops being ready), and the next
        variant is measured alone. ``self.unloaded(name)``, where set, says when it is gone (a
        launched server's log); else readiness does."""
        if name in self.loaded:
            self.loaded.remove(name)
        headers = self.connection.headers_or_none()
        try:
            self.client.unload_model(name, headers=headers)
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline and (self.client.is_model_ready(name, headers=headers)
                                                   or (self.unloaded is not None and not self.unloaded(name))):
                time.sleep(0.05)
        except Exception:  # noqa: BLE001 - a server gone away has nothing loaded
            pass

    def still_loaded(self) -> list[str]:
        """Models of this search the server still reports ready (empty where it cannot be asked)."""
        out = []
        for name in self._mine():
            try:
                if self.client.is_model_ready(name, headers=self.connection.headers_or_none()):
                    out.append(name)
            except Exception:  # noqa: BLE001 - a server gone away has nothing loaded
                pass
        return out

    def _mine(self) -> list[str]:
        try:
            doc = self.client.get_inference_statistics("", headers=self.connection.headers_or_none())
        except Exception:  # noqa: BLE001
            return list(self.loaded)
        prefix = f"{self.source.name}__ts{self.token}_"
        return sorted({m.get("name", "") for m in doc.get("model_stats", []) if m.get("name", "").startswith(prefix)}
                      | set(self.loaded))

    def close(self) -> None:
        for name in list(self.loaded):
            self.unload(name)
        deadline = time.monotonic() + 10.0
        while self.still_loaded() and time.monotonic() < deadline:
            time.sleep(0.1)
        try:
            self.client.close()
        except Exception:  # noqa: BLE001
            pass


# -- the search --------------------------------------------------------------------------------

@dataclass
class SearchRequest:
    """A search: the model (a repository entry or an ONNX file), the server (``url``, or launch one),
    constraints and settings."""

    source: ModelSource
    url: str | None = None
    launch: bool = False
    python: str | None = None
    constraints: Constraints = field(default_factory=Constraints)
    settings: SearchSettings = field(default_factory=SearchSettings)
    out: str | None = None
    confirm: bool = True
    connection: Connection = field(default_factory=Connection)
    metrics: str | None = "auto"


class Search:
    """One search run: measures variants, keeps them in ``variants`` (the document's order), and
    builds the answer. ``on_variant`` is called after each variant (the window's scatter fills
    from it); ``should_stop`` is polled between windows (cooperative stop, Ctrl+C)."""

    def __init__(self, request: SearchRequest, *, should_stop: Callable[[], bool] = lambda: False,
                 on_variant: Callable[[dict[str, Any]], None] | None = None,
                 on_status: Callable[[str], None] | None = None) -> None:
        self.request = request
        self.should_stop = should_stop
        self.on_variant = on_variant
        self.on_status = on_status or (lambda s: None)
        self.variants: list[dict[str, Any]] = []
        self.by_key: dict[str, dict[str, Any]] = {}
        self.notes: list[str] = []
        self.error: str | None = None
        self.stopped = False
        self.server: dict[str, Any] = {}
        self.loader: Loader | None = None
        self.url = request.url or ""
        self.metrics_url: str | None = None
        self.launched: Any = None
        self.started = time.perf_counter()
        self.finished: float | None = None
        self.out: dict[str, Any] | None = None

    # one variant
    def measure(self, variant: Variant, role: str = "variant") -> dict[str, Any]:
        """Load, sweep and unload one variant; its entry (kept and returned, measured once)."""
        if variant.key in self.by_key:
            return self.by_key[variant.key]
        assert self.loader is not None
        c, s = self.request.constraints, self.request.settings
        name = self.loader.name(variant)
        config = variant.apply(self.request.source.config, name)
        entry: dict[str, Any] = {"key": variant.key, "variant": variant.to_json(), "name": name, "role": role,
                                 "describe": variant.describe(), "steps": [], "sweep": None, "error": None,
                                 "early_stop": None, "gpu_memory_bytes": None, "order": len(self.variants)}
        self.on_status(f"loading {variant.describe()}")
        t0 = time.perf_counter()
        mem0 = self._gpu_memory()
        try:
            self.loader.load(name, config)
        except RuntimeError as exc:
            if isinstance(exc, SearchFailed) or not self._alive():
                raise SearchFailed(f"load {name}: {exc}") from None
            entry["error"] = f"rejected: {exc}"
            entry["load_s"] = time.perf_counter() - t0
            return self._keep(entry)
        entry["load_s"] = time.perf_counter() - t0
        mem1 = self._gpu_memory()
        if mem0 is not None and mem1 is not None:
            entry["gpu_memory_bytes"] = max(mem1 - mem0, 0.0)
        samples: dict[int, list[np.ndarray]] = {}
        stop_variant = [False]

        def on_window(w: dict[str, Any]) -> None:
            samples.setdefault(int(w["step"]), []).append(np.asarray(w["samples_ms"]))

        tops: list[float] = []

        def on_step(step: dict[str, Any]) -> None:
            if s.mode != "quick":
                return
            lat = (step.get("latency_ms") or {}).get(f"p{c.percentile}")
            tp = float(step.get("throughput") or 0.0)
            if c.latency_ms is not None and lat is not None and math.isfinite(lat) and lat > c.latency_ms:
                stop_variant[0] = True
                entry["early_stop"] = (f"stopped after concurrency {step.get('concurrency')}: p{c.percentile} "
                                       f"{lat:.2f} ms > {c.latency_ms:g} ms")
            elif len(tops) >= 2 and tp < max(tops) * (1 + SATURATED) and tops[-1] < max(tops[:-1]) * (1 + SATURATED):
                stop_variant[0] = True
                entry["early_stop"] = (f"stopped after concurrency {step.get('concurrency')}: two steps in a row "
                                       f"added less than {SATURATED:.0%} throughput")
            tops.append(tp)

        self.on_status(f"sweeping {variant.describe()}")
        t1 = time.perf_counter()
        try:
            result = run_sweep(self.url, name, s.sweep(), metrics=self.metrics_url, connection=self.request.connection,
                               should_stop=lambda: stop_variant[0] or self.should_stop(), on_window=on_window,
                               on_step=on_step)
        except InputError as exc:  # the variant vanished or the server went away before the load
            result = None
            entry["error"] = exc.message
        finally:
            self.loader.unload(name)
        entry["sweep_s"] = time.perf_counter() - t1
        if result is not None:
            for step in result.steps:
                lat_ms = np.concatenate(samples.get(int(step["index"]), [np.empty(0)]))
                windows = step.get("windows") or []
                used = windows[-3:] if step.get("stable") else windows
                step["throughput_ci"] = t_interval([float(w["throughput"]) for w in used])
                step["latency_ci"] = percentile_interval(lat_ms, c.percentile)
            doc = result.to_json()
            entry["sweep"] = doc
            entry["steps"] = [step_point(st, c.percentile) for st in doc["steps"]]
            if result.error:
                entry["error"] = result.error
        self._keep(entry)
        if entry["error"] and not self._alive():
            raise SearchFailed(entry["error"])
        return entry

    def _keep(self, entry: dict[str, Any]) -> dict[str, Any]:
        self.variants.append(entry)
        self.by_key[entry["key"]] = entry
        if self.on_variant is not None:
            self.on_variant(entry)
        return entry

    def _alive(self) -> bool:
        import urllib.request

        if self.launched is not None and not self.launched.alive():
            return False
        try:
            with urllib.request.urlopen(f"http://{self.url}/v2/health/live", timeout=3) as r:  # noqa: S310
                return bool(r.status == 200)
        except Exception:  # noqa: BLE001
            return False

    def _gpu_memory(self) -> float | None:
        if not self.metrics_url:
            return None
        m = scrape_metrics(self.metrics_url, None, 2.0, "", self.request.connection)
        return None if not m or "nv_gpu_memory_used_bytes" not in m else float(m["nv_gpu_memory_used_bytes"])

    # the walk
    def quick(self, default: Variant, space: Space) -> None:
        """Coordinate search: from the default's place, walk each dimension (instances, max batch,
        queue delay, a TensorRT plan's optimization profile) up (then down) while a
        step gains more than ``MIN_GAIN``; where no single step pays, try one more instance together
        with each batching step (the dimensions interact); repeat until nothing moves."""
        c, kind = self.request.constraints, self.request.settings.kind or default.kind
        dims: list[list[Any]] = [space.instances, space.max_batch_sizes, space.queue_delays_us, space.profiles]
        here = [_nearest(dims[0], default.instances), _nearest(dims[1], default.max_batch_size),
                dims[2].index(default.queue_delay_us) if default.queue_delay_us in dims[2] else 0,
                dims[3].index(default.profile) if default.profile in dims[3] else 0]
        cur = space.variant(here[0], here[1], here[2], kind, here[3]) or Variant(
            dims[0][here[0]], dims[1][here[1]], None, (), kind, dims[3][here[3]], space.gpus)
        best = self.measure(cur)
        for _ in range(self.request.settings.max_rounds):
            moved = False
            for d in range(len(dims)):
                for direction in (+1, -1):
                    walked = False
                    while not self.should_stop():
                        nxt = list(here)
                        nxt[d] += direction
                        if not 0 <= nxt[d] < len(dims[d]):
                            break
                        v = space.variant(nxt[0], nxt[1], nxt[2], kind, nxt[3])
                        if v is None:
                            break
                        entry = self.measure(v)
                        if score(entry, c) > score(best, c) * (1 + MIN_GAIN) or (score(best, c) == 0 and score(entry, c) > 0):
                            here, best, moved, walked = nxt, entry, True, True
                        else:
                            break
                    if walked:
                        break  # this dimension paid going this way: do not walk back
            if not moved and not self.should_stop():
                # a local optimum of single moves: instances interact with batching (with dynamic batching
                # on, the extra requests join one instance's batch, so a second instance pays only with
                # batching changed too), so try the instance step together with each batching step
                for d in (1, 2):
                    for direction in (+1, -1):
                        nxt = list(here)
                        nxt[0] += 1
                        nxt[d] += direction
                        if not (nxt[0] < len(dims[0]) and 0 <= nxt[d] < len(dims[d])):
                            continue
                        v = space.variant(nxt[0], nxt[1], nxt[2], kind, nxt[3])
                        if v is None or self.should_stop():
                            continue
                        entry = self.measure(v)
                        if score(entry, c) > score(best, c) * (1 + MIN_GAIN):
                            here, best, moved = nxt, entry, True
            if not moved or self.should_stop():
                break

    def run(self) -> dict[str, Any]:
        """Launch (if asked), measure the default and the variants, unload everything, write ``out``
        and confirm; the document. InputError before any measuring for what the user got wrong."""
        req = self.request
        try:
            if req.launch:
                from trtstudio.triton.launch import LaunchedServer, find_server

                dist = find_server(req.python)  # a wrong --python is one line before anything starts
                self.on_status(f"starting tritonserver ({dist['tritonserver']})")
                self.launched = LaunchedServer(python=req.python, dist=dist)
                self.url = self.launched.url
                self.metrics_url = f"http://127.0.0.1:{self.launched.metrics}/metrics"
            elif req.metrics and req.metrics != "auto":
                self.metrics_url = req.metrics
            elif req.metrics == "auto":
                from trtstudio.triton.client import find_metrics

                self.metrics_url, _tried = find_metrics(self.url, "http", None, "", req.connection)
            self._search()
        finally:
            if self.loader is not None:
                self.loader.close()
                left = self.loader.still_loaded()
                if left:
                    self.notes.append(f"still loaded after the search: {', '.join(left)}")
            if self.launched is not None:
                self.launched.cleanup()
        self.finished = time.perf_counter()
        if req.out and self.error is None and not self.stopped:
            self.write_out()
        return self.to_json()

    def _search(self) -> None:
        req = self.request
        from trtstudio.triton.client import TritonTarget

        with TritonTarget(self.url, "http", req.settings.timeout_s, req.connection) as target:
            self.server = target.server_info() | {"launched": req.launch}
        self.loader = Loader(self.url, req.source, req.connection, req.settings.max_loaded)
        if self.launched is not None:
            self.loader.unloaded = self.launched.unloaded
        default = Variant.of_config(req.source.config)
        if req.settings.kind and req.settings.kind != default.kind:
            self.notes.append(f"variants run as {req.settings.kind}; the default config as {default.kind or 'Triton chooses'}")
        space = req.settings.space.for_model(default)
        try:
            base = self.measure(default, role="default")
            if base.get("error", "") and str(base["error"]).startswith("rejected"):
                raise InputError(req.source.origin, f"the server rejects the model's own config: {base['error']}")
            if req.settings.mode == "exhaustive":
                for v in space.grid(req.settings.kind or default.kind):
                    if self.should_stop():
                        break
                    self.measure(v)
            else:
                self.quick(default, space)
            self.stopped = self.should_stop()
        except SearchFailed as exc:
            self.error = f"the server stopped answering: {exc}"

    # the answer
    def to_json(self) -> dict[str, Any]:
        return answer(self)

    def write_out(self) -> None:
        """Write the winner's model-repository entry under ``out`` and confirm it (:func:`confirm`)."""
        doc = answer(self)
        win = doc.get("winner")
        if not win:
            self.out = {"path": None, "error": "no variant meets the constraints: nothing written"}
            return
        entry = self.by_key[win]
        folder = Path(self.request.out or ".") / self.request.source.name
        try:
            path = save_variant(self.request.source, entry, folder)
        except FileExistsError as exc:
            self.out = {"path": None, "error": str(exc)}
            return
        self.out = {"path": str(path), "folder": str(folder), "variant": win}
        if self.request.confirm:
            self.out["confirm"] = confirm(self, folder, entry)


def save_variant(source: ModelSource, entry: dict[str, Any], folder: str | Path) -> Path:
    """Write ``entry``'s variant of ``source`` as the model-repository entry ``folder`` (its name is the
    model's); FileExistsError for a folder that holds files already. Returns its config.pbtxt."""
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise FileExistsError(f"{folder} exists and is not empty: nothing written")
    config = Variant.from_json(entry["variant"]).apply(source.config, folder.name)
    return source.write_entry(folder, config)


def _nearest(values: list[Any], target: int) -> int:
    return int(np.argmin([abs(int(v) - target) for v in values]))


def confirm(search: Search, folder: Path, entry: dict[str, Any]) -> dict[str, Any]:
    """Load the written entry once more and sweep it at the winner's concurrency. A launched search
    starts a fresh server on the folder's parent and loads the entry by name, so Triton parses the
    written config.pbtxt itself; a search on a given server loads it under a name of its own with
    the written file's config as the override."""
    req = search.request
    best = best_point(entry, req.constraints) or {}
    conc = int(best.get("concurrency") or req.settings.concurrency[0])
    settings = SweepSettings(concurrency=[conc], batch=req.settings.batch, window_s=req.settings.window_s,
                             max_windows=req.settings.max_windows, timeout_s=req.settings.timeout_s)
    out: dict[str, Any] = {"concurrency": conc, "loaded": False}
    config = parse_pbtxt((folder / "config.pbtxt").read_text(), folder / "config.pbtxt")
    try:
        if req.launch:
            import tritonclient.http as http

            from trtstudio.triton.launch import LaunchedServer

            out["how"] = "a fresh tritonserver over the written folder loaded it by name (config.pbtxt parsed by Triton)"
            with LaunchedServer(repository=folder.parent, python=req.python) as server:
                client = http.InferenceServerClient(server.url)
                try:
                    client.load_model(folder.name)
                except Exception as exc:  # noqa: BLE001
                    out["error"] = f"rejected: {_exc_text(exc)}"
                    return out
                out["loaded"] = True
                res = run_sweep(server.url, folder.name, settings, metrics=None)
                client.unload_model(folder.name)
            for cache in folder.rglob("__pycache__"):  # the python backend compiled model.py in place
                shutil.rmtree(cache, ignore_errors=True)
        else:
            loader = Loader(search.url, req.source, req.connection)
            name = loader.name(Variant.from_json(entry["variant"]), "_confirm")
            out["how"] = f"loaded on the server as {name} with the written config.pbtxt as the override"
            try:
                loader.load(name, config | {"name": name})
                out["loaded"] = True
                res = run_sweep(search.url, name, settings, metrics=None, connection=req.connection)
            except RuntimeError as exc:
                out["error"] = f"rejected: {exc}"
                return out
            finally:
                loader.close()
    except Exception as exc:  # noqa: BLE001 - a confirmation that fails says so in the document
        out["error"] = _exc_text(exc)
        return out
    if res.steps:
        point = step_point(res.steps[-1], req.constraints.percentile)
        out |= {"throughput": point["throughput"], f"p{req.constraints.percentile}": point[f"p{req.constraints.percentile}"],
                "searched_throughput": best.get("throughput"),
                "within_budget": feasible(point, req.constraints)}
    if res.error:
        out["error"] = res.error
    return out
