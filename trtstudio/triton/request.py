"""TritonRequest: what a Triton sweep runs, built alike by ``trtstudio triton`` and the window's dialog.

The request names its fields (``window_s``, ``headers``...), never flags or form labels:
:meth:`TritonRequest.validate` raises :class:`~trtstudio.errors.FieldError` for the first bad one,
which the CLI shows under its flag and the dialog under its label. Header values (access tokens,
``Authorization``) live only in the request and the clients: :meth:`TritonRequest.recorded` and
every document name the headers without their values.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from trtstudio.errors import FieldError, InputError
from trtstudio.triton.client import Connection, parse_header, parse_url, wants_tls
from trtstudio.triton.sweep import SweepResult, SweepSettings, run_sweep


def parse_headers(items: Iterable[str]) -> dict[str, str]:
    """``["NAME=VALUE", ...]`` (blank items skipped) -> ``{name: value}``; FieldError on ``headers``
    that never repeats a value."""
    out: dict[str, str] = {}
    for item in items:
        if not item.strip():
            continue
        try:
            name, value = parse_header(item)
        except ValueError as exc:
            raise FieldError("headers", str(exc)) from None
        out[name] = value
    return out


@dataclass
class TritonRequest:
    """A sweep of one served model: server and model, the load's steps and limits, how to connect."""

    url: str
    model: str
    version: str = ""
    protocol: str | None = None  # None: from the URL (port 8001 = gRPC)
    concurrency: list[int] = field(default_factory=lambda: [1])
    rates: list[float] = field(default_factory=list)  # requests/s; when given, they replace concurrency
    distribution: str = "constant"  # or "poisson"
    batch: int = 1
    window_s: float = 1.0
    duration_s: float | None = None
    max_requests: int | None = None
    latency_budget_ms: float | None = None
    metrics: str | None = "auto"  # a /metrics URL, "auto" (HTTP port + 2, else HOST:8002) or None
    timeout_s: float = 10.0
    headers: dict[str, str] = field(default_factory=dict)
    ssl: bool = False
    ca: str | None = None  # a CA bundle (PEM) to verify the server; implies TLS

    def validate_connection(self) -> None:
        """What browsing the server needs: URL, protocol, headers, TLS, timeout (FieldError)."""
        if self.protocol not in (None, "http", "grpc"):
            raise FieldError("protocol", f"unknown protocol {self.protocol!r} (http or grpc)")
        try:
            parse_url(self.url, self.protocol)
        except InputError as exc:
            raise FieldError("url", f"{self.url!r}: {exc.message}") from None
        parse_headers(f"{k}={v}" for k, v in self.headers.items())
        if self.ca is not None and not os.path.isfile(self.ca):
            raise FieldError("ca", f"no CA bundle at {self.ca}")
        if not self.timeout_s > 0:
            raise FieldError("timeout_s", "must be positive")

    def validate(self) -> None:
        """Raise :class:`FieldError` naming the first field that is out of range."""
        self.validate_connection()
        if not self.model.strip():
            raise FieldError("model", "no model name given")
        steps = ("rates", self.rates) if self.rates else ("concurrency", self.concurrency)
        if not steps[1] or any(not v > 0 for v in steps[1]):
            raise FieldError(steps[0], "give positive numbers")
        if self.distribution not in ("constant", "poisson"):
            raise FieldError("distribution", "constant or poisson")
        for name in ("batch", "max_requests"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise FieldError(name, "must be at least 1")
        for name in ("window_s", "duration_s", "latency_budget_ms"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise FieldError(name, "must be positive")

    def settings(self) -> SweepSettings:
        return SweepSettings(concurrency=list(self.concurrency) if not self.rates else [], rates=list(self.rates),
                             distribution=self.distribution, batch=self.batch, window_s=self.window_s,
                             duration_s=self.duration_s, max_requests=self.max_requests,
                             latency_budget_ms=self.latency_budget_ms, timeout_s=self.timeout_s)

    def connection(self) -> Connection:
        return Connection(headers=dict(self.headers), ssl=self.ssl or self.ca is not None or wants_tls(self.url),
                          ca=self.ca)

    def recorded(self) -> dict[str, Any]:
        """The request as documents may keep it (JSON-ready): header names, never their values."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "headers"}
        return out | {"headers": sorted(self.headers)}


def run_triton(request: TritonRequest, *, should_stop: Callable[[], bool] = lambda: False,
               on_window: Callable[[dict[str, Any]], None] | None = None,
               on_step: Callable[[dict[str, Any]], None] | None = None,
               on_notes: Callable[[list[str], str | None], None] | None = None) -> SweepResult:
    """Validate ``request`` and run its sweep (``run_sweep``): the CLI's and the window's one way in."""
    request.validate()
    return run_sweep(request.url, request.model, request.settings(), version=request.version,
                     protocol=request.protocol, metrics=request.metrics, should_stop=should_stop,
                     on_window=on_window, on_step=on_step, connection=request.connection(), on_notes=on_notes)


def browse(request: TritonRequest) -> dict[str, Any]:
    """The server's models for the window's browser (``browse_repository``), the typed model among
    them where the server does not list its models."""
    from trtstudio.triton.client import browse_repository

    request.validate_connection()
    return browse_repository(request.url, request.protocol, request.timeout_s, connection=request.connection(),
                             typed=(request.model.strip(),))
