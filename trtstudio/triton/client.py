"""Connection to a Triton server: URL parsing, server/model facts, inputs, statistics, metrics.

``tritonclient`` is imported lazily; every failure a user can cause (bad URL, unreachable server,
unknown model or version, model not ready) becomes a one-line ``InputError``. A deployed server
may restrict APIs (PyTriton restricts the repository and statistics APIs by default, Triton's
``--http-restricted-api``/``--grpc-restricted-protocol``): such a refusal is :class:`Restricted`,
which the callers that can do without the API turn into a note. :class:`Connection` carries the
request headers (access tokens, auth) and TLS settings to every client; its ``recorded()`` form,
the only one written into documents, names the headers without their values.
"""

from __future__ import annotations

import re
import ssl as _ssl
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trtstudio.errors import BackendError, InputError

# KServe v2 datatypes -> numpy dtypes (BYTES is not generated: no shape rule for strings).
DTYPES = {
    "BOOL": "bool", "UINT8": "uint8", "UINT16": "uint16", "UINT32": "uint32", "UINT64": "uint64",
    "INT8": "int8", "INT16": "int16", "INT32": "int32", "INT64": "int64",
    "FP16": "float16", "FP32": "float32", "FP64": "float64",
}
STAT_KEYS = ("queue", "compute_input", "compute_infer", "compute_output", "cache_hit", "cache_miss")
DEFAULT_PORTS = {"http": 8000, "grpc": 8001}


def import_tritonclient(protocol: str) -> Any:
    """The tritonclient module of ``protocol`` (``http`` or ``grpc``), or a BackendError naming the extra."""
    import os

    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # gRPC's own log lines (a failed TLS handshake) stay out of stderr
    try:
        if protocol == "grpc":
            import tritonclient.grpc as mod
        else:
            import tritonclient.http as mod
    except ImportError as exc:
        raise BackendError(f"tritonclient[{protocol}] is not installed ({exc}); pip install 'trtstudio[triton]'") from None
    return mod


def parse_url(url: str, protocol: str | None = None) -> tuple[str, str]:
    """``(host:port, protocol)`` from ``host:port`` or ``SCHEME://host:port`` (http, https, grpc,
    grpcs; the TLS schemes name the protocol they secure, see :func:`wants_tls`)."""
    m = re.fullmatch(r"(?:(https?|grpcs?)://)?([A-Za-z0-9.\-_\[\]:]+?)(?::(\d+))?/?", url.strip())
    if not m or not m.group(2):
        raise InputError(url, "not a server URL (host:port, http(s)://host:port or grpc(s)://host:port)")
    scheme, host, port = (m.group(1) or "").rstrip("s") or None, m.group(2), m.group(3)
    proto = protocol or scheme or ("grpc" if port == "8001" else "http")
    if proto not in DEFAULT_PORTS:
        raise InputError(url, f"unknown protocol {proto!r} (http or grpc)")
    if scheme and protocol and scheme != protocol:
        raise InputError(url, f"the URL says {scheme} but --protocol says {protocol}")
    return f"{host}:{port or DEFAULT_PORTS[proto]}", proto


def wants_tls(url: str) -> bool:
    """Whether the URL's scheme is https:// or grpcs://."""
    return url.strip().lower().startswith(("https://", "grpcs://"))


def _exc_text(exc: BaseException) -> str:
    msg = getattr(exc, "message", None)
    text = (msg() if callable(msg) else None) or str(exc)
    return " ".join(str(text).split())[:300] or type(exc).__name__


class Restricted(InputError):
    """The server refused an API that needs a header it was not given (HTTP 401/403, gRPC
    UNAUTHENTICATED/PERMISSION_DENIED, or Triton's 'This API is restricted' on either)."""


_RESTRICTED_TEXT = re.compile(r"is restricted|expecting header|forbidden|unauthori[sz]ed|permission denied", re.I)


def is_restricted(exc: BaseException) -> bool:
    """True when ``exc`` (a tritonclient or urllib error) says the API is closed to this client."""
    status = getattr(exc, "status", None)
    code = status() if callable(status) else status if status is not None else getattr(exc, "code", None)
    if str(code) in ("401", "403", "StatusCode.UNAUTHENTICATED", "StatusCode.PERMISSION_DENIED"):
        return True
    return bool(_RESTRICTED_TEXT.search(_exc_text(exc)))


_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an RFC 9110 token


def parse_header(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` -> ``(name, value)``; ValueError that never repeats the value (it may be a secret)."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not _HEADER_NAME.fullmatch(name):
        raise ValueError("give NAME=VALUE with a header name of letters, digits and -_.")
    if any(c in value for c in "\r\n\0"):
        raise ValueError(f"the value of header {name!r} has a line break")
    return name, value.strip()


@dataclass
class Connection:
    """How to reach the server beyond its URL: request headers and TLS (HTTPS or gRPC TLS, with an
    optional CA bundle; without one the system's CAs are trusted)."""

    headers: dict[str, str] = field(default_factory=dict)
    ssl: bool = False
    ca: str | None = None

    def recorded(self) -> dict[str, Any]:
        """What documents keep: TLS, the CA's path and the header names, never their values."""
        return {"ssl": self.ssl, "ca": self.ca, "headers": sorted(self.headers)}

    def ssl_context(self) -> _ssl.SSLContext:
        return _ssl.create_default_context(cafile=self.ca) if self.ca else _ssl.create_default_context()

    def client_kwargs(self, protocol: str, aio: bool = False) -> dict[str, Any]:
        """TLS arguments of tritonclient's (sync or asyncio) client of ``protocol``."""
        if not self.ssl:
            return {}
        if protocol == "grpc":
            return {"ssl": True, "root_certificates": self.ca}
        if aio:
            return {"ssl": True, "ssl_context": self.ssl_context()}
        return {"ssl": True, "ssl_options": {"ca_certs": self.ca} if self.ca else {}}

    def headers_or_none(self) -> dict[str, str] | None:
        return dict(self.headers) or None


@dataclass
class ModelInfo:
    """What trtstudio needs of a served model: I/O, batching, instances, platform."""

    name: str
    version: str
    platform: str
    max_batch_size: int
    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]
    dynamic_batching: dict[str, Any] | None
    instance_groups: list[dict[str, Any]]
    versions: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "version": self.version, "platform": self.platform,
            "max_batch_size": self.max_batch_size, "inputs": self.inputs, "outputs": self.outputs,
            "dynamic_batching": self.dynamic_batching, "instance_groups": self.instance_groups,
            "versions": self.versions,
        }


def _io(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for it in items:
        dims = it.get("dims", it.get("shape", []))
        out.append({"name": it["name"], "datatype": str(it.get("datatype", it.get("data_type", ""))).replace("TYPE_", ""),
                    "dims": [int(d) for d in dims]})
    return out


class TritonTarget:
    """A synchronous handle on one server (facts and statistics; the load uses the asyncio clients)."""

    def __init__(self, url: str, protocol: str | None = None, timeout_s: float = 10.0,
                 connection: Connection | None = None) -> None:
        self.url, self.protocol = parse_url(url, protocol)
        self.timeout_s = timeout_s
        self.connection = connection or Connection()
        if wants_tls(url) and not self.connection.ssl:
            self.connection = Connection(self.connection.headers, True, self.connection.ca)
        self.notes: list[str] = []  # what was done without (a restricted repository index...)
        self._mod = import_tritonclient(self.protocol)
        tls = self.connection.client_kwargs(self.protocol)
        try:
            if self.protocol == "grpc":
                self.client = self._mod.InferenceServerClient(self.url, **tls)
            else:
                self.client = self._mod.InferenceServerClient(
                    self.url, connection_timeout=timeout_s, network_timeout=timeout_s, **tls)
        except Exception as exc:  # noqa: BLE001 - any client construction failure is a bad URL or CA
            raise InputError(url, f"cannot open a {self.protocol} client: {_exc_text(exc)}") from None

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:  # noqa: BLE001 - closing a dead connection is not an error
            pass

    def __enter__(self) -> TritonTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, what: str, fn: Any, *args: Any, json_reply: bool = True, **kw: Any) -> Any:
        """``fn(*args)`` with the connection's headers; Restricted or InputError naming ``what``."""
        kw.setdefault("headers", self.connection.headers_or_none())
        if self.protocol == "grpc":
            kw.setdefault("client_timeout", self.timeout_s)
            if json_reply:
                kw.setdefault("as_json", True)
        try:
            return fn(*args, **kw)
        except Exception as exc:  # noqa: BLE001 - tritonclient raises its own and socket errors
            kind = Restricted if is_restricted(exc) else InputError
            raise kind(self.url, f"{what}: {_exc_text(exc)}") from None

    def _optional(self, what: str, fn: Any, *args: Any, **kw: Any) -> Any:
        """``_call``, or None with a note (once) when the server restricts the API."""
        try:
            return self._call(what, fn, *args, **kw)
        except Restricted as exc:
            note = f"{what} skipped: {exc.message.split(': ', 1)[-1]}"
            if note not in self.notes:
                self.notes.append(note)
            return None

    def server_info(self) -> dict[str, Any]:
        """Version and extensions; InputError when the server is unreachable or not live. A server
        that restricts its health or metadata API is taken as live, its facts left empty."""
        live = self._optional("live", self.client.is_server_live, json_reply=False)
        noted = len(self.notes)
        meta = self._optional("server metadata", self.client.get_server_metadata)
        # tritonclient's HTTP health calls say False for a refusal (403) as well: a server whose
        # metadata answers, or refuses with a 403 of its own, is live
        answered = meta is not None or len(self.notes) > noted
        if live is False and (self.protocol != "http" or not answered):
            raise InputError(self.url, "server is not live")
        meta = meta or {}
        return {"url": self.url, "protocol": self.protocol, "name": meta.get("name", ""),
                "version": meta.get("version", ""), "extensions": list(meta.get("extensions", []))}

    def repository_index(self) -> list[dict[str, Any]] | None:
        """Models in the repository (name, version, state: READY, UNAVAILABLE...), or None with a note
        when the server restricts the index."""
        idx = self._optional("repository index", self.client.get_model_repository_index)
        if idx is None:
            return None
        if isinstance(idx, dict):
            idx = idx.get("models", [])
        return [{"name": m.get("name", ""), "version": str(m.get("version", "")), "state": m.get("state", ""),
                 "reason": m.get("reason", "")} for m in idx]

    def model_info(self, model: str, version: str = "") -> ModelInfo:
        """Metadata and config summary; InputError for an unknown or not-ready model or version.
        A restricted repository index is done without (the model's own APIs still answer)."""
        index = self.repository_index() or []
        known = [m for m in index if m["name"] == model]
        if index and not known:
            names = ", ".join(sorted({m["name"] for m in index})) or "none"
            raise InputError(self.url, f"no model {model!r} on the server (it serves {names})")
        ready = self._optional(f"model {model!r} version {version or 'latest'}", self.client.is_model_ready, model,
                               version, json_reply=False)
        if ready is False and self.protocol == "http":  # False for a refused health API too
            try:
                self._call("model config", self.client.get_model_config, model, version)
                ready = None  # the config of that version answers: the model is there
            except InputError:
                pass
        if ready is False:
            states = ", ".join(f"v{m['version']} {m['state']}" for m in known) or "unknown"
            raise InputError(self.url, f"model {model!r} version {version or 'latest'} is not ready ({states})")
        meta = self._optional(f"model {model!r} metadata", self.client.get_model_metadata, model, version) or {}
        cfg = self._call(f"model {model!r} config", self.client.get_model_config, model, version)
        cfg = cfg.get("config", cfg)
        db = cfg.get("dynamic_batching")
        return ModelInfo(
            name=model, version=version,
            platform=cfg.get("platform") or cfg.get("backend") or meta.get("platform", ""),
            max_batch_size=int(cfg.get("max_batch_size", 0) or 0),
            inputs=_io(cfg.get("input", []) or meta.get("inputs", [])),
            outputs=_io(cfg.get("output", []) or meta.get("outputs", [])),
            dynamic_batching=db if isinstance(db, dict) else None,
            instance_groups=[{"kind": g.get("kind", ""), "count": int(g.get("count", 1) or 1)}
                             for g in cfg.get("instance_group", [])],
            versions=sorted(str(v) for v in meta.get("versions", [])),
        )

    def statistics(self, model: str, version: str = "") -> dict[str, Any]:
        """Cumulative per-model statistics: ``{success: (count, ns), queue: ..., inference_count, execution_count}``."""
        doc = self._call("statistics", self.client.get_inference_statistics, model, version)
        return parse_statistics(doc, model, version)

    def loaded_models(self) -> list[dict[str, Any]] | None:
        """Every loaded model as the statistics API lists it, or None with a note when it is restricted."""
        try:
            doc = self._call("statistics", self.client.get_inference_statistics, "")
        except Restricted as exc:
            self.notes.append(f"statistics skipped: {exc.message.split(': ', 1)[-1]}")
            return None
        return [{"name": st.get("name", ""), "version": str(st.get("version", ""))}
                for st in (doc.get("model_stats", []) if isinstance(doc, dict) else []) if st.get("name")]


def browse_repository(url: str, protocol: str | None = None, timeout_s: float = 10.0, max_configs: int = 64,
                      connection: Connection | None = None, typed: tuple[str, ...] = ()) -> dict[str, Any]:
    """The server, its models and the config summary of each READY one (the first ``max_configs``):
    ``{server, models: [{name, version, state, reason, config?, config_error?}], notes}``.

    The models are the repository index's, plus those the statistics list (PyTriton and explicit
    model control load models the index does not show). Where the server restricts either list,
    ``notes`` says so and the models named in ``typed`` (what the user typed) are looked up by
    their own metadata instead."""
    with TritonTarget(url, protocol, timeout_s, connection) as target:
        server = target.server_info()
        index = target.repository_index()
        loaded = target.loaded_models()
        models = list(index or [])
        known = {(m["name"], m["version"]) for m in models} | {(m["name"], "") for m in models}
        for st in loaded or []:
            if (st["name"], st["version"]) not in known and (st["name"], "") not in known:
                models.append(st | {"state": "READY", "reason": "loaded, not in the repository index"})
                known.add((st["name"], st["version"]))
        if index is None or loaded is None:
            reason = "typed (the server does not list its models to this client)"
            models += [{"name": n, "version": "", "state": "?", "reason": reason}
                       for n in dict.fromkeys(typed) if n and (n, "") not in known]
        for m in models:
            if m["state"] not in ("READY", "?") or max_configs <= 0:
                continue
            max_configs -= 1
            try:
                m["config"] = target.model_info(m["name"], m["version"]).to_json()
                m["state"] = "READY"
            except InputError as exc:
                m["config_error"] = str(exc)
        return {"server": server, "models": models, "notes": list(target.notes)}


def config_summary(model: dict[str, Any]) -> list[str]:
    """A served model's config (``ModelInfo.to_json()``) as short lines for dialogs and reports."""
    db = model.get("dynamic_batching")
    if db is None:
        batching = "off"
    else:
        sizes = db.get("preferred_batch_size") or []
        delay = db.get("max_queue_delay_microseconds")
        batching = "on" + (f", preferred {sizes}" if sizes else "") + (f", max queue delay {delay} µs" if delay else "")
    groups = ", ".join(f"{g.get('count', 1)} x {g.get('kind', '') or 'auto'}" for g in model.get("instance_groups") or []) or "default"

    def io(items: list[dict[str, Any]]) -> str:
        return ", ".join(f"{t['name']} {t.get('datatype', '')} {t.get('dims', [])}" for t in items) or "none"

    return [f"platform/backend: {model.get('platform') or 'unknown'}",
            f"max_batch_size: {model.get('max_batch_size', 0)}",
            f"dynamic batching: {batching}",
            f"instance groups: {groups}",
            f"inputs: {io(model.get('inputs') or [])}",
            f"outputs: {io(model.get('outputs') or [])}"]


def parse_statistics(doc: dict[str, Any], model: str, version: str = "") -> dict[str, Any]:
    """Sum the statistics extension's entries of ``model`` (one version or all) into counts and ns."""
    total: dict[str, Any] = {k: [0, 0] for k in ("success", "fail", *STAT_KEYS)}
    total["inference_count"] = 0
    total["execution_count"] = 0
    for st in doc.get("model_stats", []):
        if st.get("name") != model or (version and str(st.get("version")) != str(version)):
            continue
        inf = st.get("inference_stats", {})
        for k in ("success", "fail", *STAT_KEYS):
            d = inf.get(k, {})
            total[k][0] += int(d.get("count", 0) or 0)
            total[k][1] += int(d.get("ns", 0) or 0)
        total["inference_count"] += int(st.get("inference_count", 0) or 0)
        total["execution_count"] += int(st.get("execution_count", 0) or 0)
    return total


def stats_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Per-interval figures: requests, executions, and mean µs per request of each server phase."""
    n = after["success"][0] - before["success"][0]
    out: dict[str, Any] = {
        "requests": n,
        "failed": after["fail"][0] - before["fail"][0],
        "inferences": after["inference_count"] - before["inference_count"],
        "executions": after["execution_count"] - before["execution_count"],
    }
    us: dict[str, float] = {}
    for k in ("queue", "compute_input", "compute_infer", "compute_output"):
        c = after[k][0] - before[k][0]
        us[k] = (after[k][1] - before[k][1]) / c / 1e3 if c else 0.0
    for k in ("cache_hit", "cache_miss"):
        out[k] = after[k][0] - before[k][0]
    c = n or 1
    us["request"] = (after["success"][1] - before["success"][1]) / c / 1e3 if n else 0.0
    out["server_us"] = us
    return out


# -- Prometheus /metrics ------------------------------------------------------------------------

_METRIC_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+([-+0-9.eEinfNa]+)")
# the per-model counters that stand in for the statistics API (cumulative µs over successful requests)
METRIC_PHASES = {"queue": "nv_inference_queue_duration_us", "compute_input": "nv_inference_compute_input_duration_us",
                 "compute_infer": "nv_inference_compute_infer_duration_us",
                 "compute_output": "nv_inference_compute_output_duration_us"}
WANTED_METRICS = ("nv_inference_request_success", "nv_inference_request_failure", "nv_inference_count",
                  "nv_inference_exec_count", "nv_inference_request_duration_us", *METRIC_PHASES.values(),
                  "nv_gpu_utilization", "nv_gpu_memory_used_bytes",
                  "nv_gpu_memory_total_bytes", "nv_energy_consumption", "nv_gpu_power_usage")


def parse_metrics(text: str, model: str | None = None, version: str = "") -> dict[str, float]:
    """Sum the wanted ``nv_*`` series (those of ``model``, and of ``version`` when given, for
    per-model series) of a /metrics page."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        m = _METRIC_LINE.match(line)
        if not m or m.group(1) not in WANTED_METRICS:
            continue
        labels = m.group(2) or ""
        if model and 'model="' in labels and (f'model="{model}"' not in labels
                                              or (version and f'version="{version}"' not in labels)):
            continue
        try:
            out[m.group(1)] = out.get(m.group(1), 0.0) + float(m.group(3))
        except ValueError:
            continue
    return out


def metrics_statistics(metrics: dict[str, float] | None) -> dict[str, Any] | None:
    """A model's metrics counters in :func:`parse_statistics`' form (counts, ns), so that
    :func:`stats_delta` gives the same per-request breakdown; None when the page lacks them."""
    if not metrics or "nv_inference_request_success" not in metrics or not all(
            k in metrics for k in METRIC_PHASES.values()):
        return None
    n = int(metrics["nv_inference_request_success"])
    total: dict[str, Any] = {"success": [n, int(metrics.get("nv_inference_request_duration_us", 0.0) * 1e3)],
                             "fail": [int(metrics.get("nv_inference_request_failure", 0.0)), 0],
                             "cache_hit": [0, 0], "cache_miss": [0, 0],
                             "inference_count": int(metrics.get("nv_inference_count", 0.0)),
                             "execution_count": int(metrics.get("nv_inference_exec_count", 0.0))}
    for phase, key in METRIC_PHASES.items():
        total[phase] = [n, int(metrics[key] * 1e3)]
    return total


def metrics_headers(metrics_url: str, server_url: str, connection: Connection | None) -> dict[str, str]:
    """The connection's headers when the metrics page is on the server's host (never sent elsewhere)."""
    host = urllib.parse.urlsplit(metrics_url).hostname or ""
    same = host == server_url.rsplit(":", 1)[0].strip("[]")
    return dict(connection.headers) if connection is not None and same else {}


def scrape_metrics(url: str, model: str | None = None, timeout_s: float = 2.0, version: str = "",
                   connection: Connection | None = None, headers: dict[str, str] | None = None) -> dict[str, float] | None:
    """The parsed /metrics page, or None when it cannot be reached (metrics are optional). An
    https page is verified with the connection's CA."""
    req = urllib.request.Request(url, headers=headers or {})  # noqa: S310 - a user-given server URL
    ctx = (connection or Connection()).ssl_context() if url.startswith("https:") else None
    try:
        with urllib.request.urlopen(req, timeout=timeout_s, context=ctx) as r:  # noqa: S310
            return parse_metrics(r.read().decode("utf-8", "replace"), model, version)
    except Exception:  # noqa: BLE001 - unreachable metrics only mean no GPU figures
        return None


def metrics_url(server_url: str, given: str | None = None) -> str:
    """``given`` (``http://`` added when it has no scheme) or ``http://HOST:8002/metrics``."""
    if given:
        return given if "://" in given else f"http://{given}"
    return metrics_candidates(server_url)[-1]


METRICS_PORT = 8002  # Triton's and PyTriton's default: HTTP 8000, gRPC 8001, metrics 8002


def metrics_candidates(server_url: str, protocol: str = "http") -> list[str]:
    """Where a server's /metrics page may be, in the order to try: its HTTP port + 2 (its gRPC port
    + 1), the offset both Triton's and PyTriton's defaults keep, then Triton's default 8002."""
    host, _, port = server_url.rpartition(":")
    ports = [int(port) + (2 if protocol == "http" else 1)] if port.isdigit() else []
    return [f"http://{host}:{p}/metrics" for p in dict.fromkeys([*ports, METRICS_PORT])]


def find_metrics(server_url: str, protocol: str, model: str | None = None, version: str = "",
                 connection: Connection | None = None) -> tuple[str | None, list[str]]:
    """The first of :func:`metrics_candidates` whose page answers (None when none does), and the
    candidates tried."""
    tried = metrics_candidates(server_url, protocol)
    for url in tried:
        if scrape_metrics(url, model, 2.0, version, connection, metrics_headers(url, server_url, connection)) is not None:
            return url, tried
    return None, tried


METRICS_HINT = "give the page with --metrics URL (Metrics in the window's Triton dialog)"


# -- inputs -------------------------------------------------------------------------------------

def make_inputs(info: ModelInfo, batch: int = 1, shapes: dict[str, tuple[int, ...]] | None = None,
                data: dict[str, np.ndarray] | None = None, seed: int = 0) -> tuple[dict[str, np.ndarray], list[str]]:
    """Arrays per input, by the same rules as local runs (``backends.inputs.build_feeds``).

    Shapes come from ``--shapes`` (full shapes, batch included) or the config dims with the batch
    prepended when ``max_batch_size > 0``; a dynamic dim without ``--shapes`` is an InputError.
    """
    from trtstudio.backends.inputs import build_feeds

    if batch < 1:
        raise InputError("--batch", "must be at least 1")
    if info.max_batch_size == 0 and batch != 1:
        raise InputError("--batch", f"model {info.name!r} does not batch (max_batch_size 0)")
    if info.max_batch_size and batch > info.max_batch_size:
        raise InputError("--batch", f"{batch} exceeds the model's max_batch_size {info.max_batch_size}")
    specs = []
    for i in info.inputs:
        if i["datatype"] not in DTYPES:
            raise InputError(info.name, f"input {i['name']!r} has datatype {i['datatype']}; trtstudio generates numeric inputs only")
        specs.append({"name": i["name"], "dtype": DTYPES[i["datatype"]], "dims": i["dims"]})

    def resolve(spec: dict[str, Any], requested: tuple[int, ...] | None) -> tuple[tuple[int, ...], str | None]:
        full = ([batch] if info.max_batch_size else []) + list(spec["dims"])
        if requested is not None:
            if len(requested) != len(full) or any(f >= 0 and f != r for f, r in zip(full, requested, strict=True)):
                raise InputError("--shapes", f"input {spec['name']!r} takes shape {full}, got {list(requested)}")
            return tuple(requested), None
        if any(d < 0 for d in full):
            raise InputError("--shapes", f"input {spec['name']!r} has dynamic dims {full}; give --shapes {spec['name']}:...")
        return tuple(full), None

    return build_feeds(specs, shapes or {}, data, resolve, seed=seed)


def numpy_to_triton(dtype: np.dtype[Any]) -> str:
    inv = {v: k for k, v in DTYPES.items()}
    return inv[np.dtype(dtype).name]
