"""The one Backend protocol every inference runtime implements, and the ``open_backend`` factory.

A backend loads a model (ONNX) or an engine (TensorRT plan), tells which inputs it takes, prepares
input data once, then runs ``infer_once`` as often as the profiling runner asks. Nothing here
imports a heavy runtime: each backend module imports its runtime lazily inside ``load``.
"""

from __future__ import annotations

import importlib
import os
from typing import Any, NamedTuple, Protocol, TypedDict, runtime_checkable

from trtstudio.backends.catalogue import CATALOGUE
from trtstudio.errors import BackendError, InputError

# name -> (module, class, default options, what the user should install): derived from the one
# catalogue (trtstudio.backends.catalogue), for the callers that read this table
BACKENDS: dict[str, tuple[str, str, dict[str, Any], str]] = {
    name: (b.module, b.cls, dict(b.defaults), b.pip) for name, b in CATALOGUE.items()
}


class InputSpec(TypedDict):
    """One model input: ``shape`` holds ints, or a str (the symbol) / -1 for dynamic dimensions."""

    name: str
    dtype: str
    shape: list[int | str]


class LayerTime(TypedDict, total=False):
    """One row of a per-layer profile (``fallback``: ran on the CPU though a GPU provider was asked)."""

    name: str
    onnx_nodes: list[str]
    op_type: str | None  # the ONNX op type (or, without one, the module's class)
    provider: str
    time_ms: float
    fallback: bool
    timing: str  # how time_ms was measured: "kernels" (GPU kernel time per inference), else wall time
    kernels: list[dict[str, Any]]  # with timing "kernels": each kernel's name, launches and ms per inference


class InferTiming(NamedTuple):
    """The time of one inference in milliseconds; the parts are None where a backend cannot tell.
    (A NamedTuple: built once per inference, it must be cheap.)"""

    total_ms: float
    h2d_ms: float | None = None
    compute_ms: float | None = None
    d2h_ms: float | None = None
    enqueue_ms: float | None = None  # host time to enqueue the GPU work, where the backend enqueues


@runtime_checkable
class Backend(Protocol):
    """What the profiling runner and the CLI need from an inference runtime."""

    name: str
    notes: list[str]

    def load(self, path: str | os.PathLike[str], options: dict[str, Any]) -> None:
        """Load a model or engine file; raise InputError for a bad file, BackendError for a runtime failure."""

    def input_specs(self) -> list[InputSpec]:
        """The inputs the model takes, with dtype names (numpy) and shapes."""

    def prepare_inputs(self, shapes: dict[str, tuple[int, ...]], data: dict[str, Any] | None = None) -> None:
        """Fix input shapes and fill the inputs: from ``data`` where given, else random per dtype."""

    def infer_once(self) -> InferTiming:
        """Run one inference on the prepared inputs and return how long it took."""

    def per_layer_profile(self, iterations: int) -> list[LayerTime]:
        """Run ``iterations`` profiled inferences; the median time per layer."""

    def memory(self) -> dict[str, int]:
        """What the backend knows of its memory, in bytes (e.g. ``context_device_bytes``)."""

    def close(self) -> None:
        """Free buffers, sessions and contexts; the backend is unusable afterwards."""


def require_module(module: str, backend: str, pip: str) -> Any:
    """Import a heavy runtime lazily; a missing one is a BackendError that names the pip command."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise BackendError(f"backend '{backend}' needs the Python module '{module}' ({exc}); install it: {pip}") from exc


def open_backend(name: str, path: str | os.PathLike[str], **options: Any) -> Backend:
    """Create the backend ``name`` (one of the catalogue's: ort, ort-cuda, ort-trt, tensorrt, rtx, torch,
    torch-cuda) and load ``path`` into it; ``device=N`` picks the CUDA device."""
    info = CATALOGUE.get(name)
    if info is None:
        raise InputError(None, f"unknown backend '{name}'; choose one of {', '.join(CATALOGUE)}")
    if not os.path.exists(path):
        raise InputError(path, "no such file")
    cls = getattr(importlib.import_module(info.module), info.cls)
    merged = {**info.defaults, **{k: v for k, v in options.items() if v is not None}}
    backend: Backend = cls(name=name, pip=info.pip, **{k: merged.pop(k) for k in ("providers", "module") if k in merged})
    backend.load(path, merged)
    return backend


def parse_shapes(text: str | None, source: str = "--shapes") -> dict[str, tuple[int, ...]]:
    """Parse ``name:1x3x224x224,other:1x10`` into ``{name: (1, 3, 224, 224), ...}``: the one shape-text
    rule of the project, :func:`trtstudio.backends.shapes.text.parse_shapes` (integers >= 0 joined by x)."""
    from trtstudio.backends.shapes.text import parse_shapes as parse

    return parse(text, source)


def resolve_shape(
    spec: InputSpec, requested: tuple[int, ...] | None, default_dim: int = 1
) -> tuple[tuple[int, ...], str | None]:
    """Concrete shape for one input: the requested one (checked against static dims) or dynamic dims set to
    ``default_dim``; returns the shape and a note to show when a default was used."""
    dims = spec["shape"]
    if requested is not None:
        if len(requested) != len(dims):
            raise InputError(
                "--shapes", f"input '{spec['name']}' has rank {len(dims)} ({_fmt(dims)}), got {_fmt(requested)}"
            )
        for want, have in zip(dims, requested, strict=True):
            if isinstance(want, int) and want >= 0 and want != have:
                raise InputError("--shapes", f"input '{spec['name']}' is fixed at {_fmt(dims)}, got {_fmt(requested)}")
        return tuple(requested), None
    dynamic = [d for d in dims if not isinstance(d, int) or d < 0]
    shape = tuple(d if isinstance(d, int) and d >= 0 else default_dim for d in dims)
    note = None
    if dynamic:
        note = (
            f"input '{spec['name']}' has dynamic dims {_fmt(dims)}; using {_fmt(shape)} "
            f"(set --shapes {spec['name']}:{'x'.join(map(str, shape))})"
        )
    return shape, note


def _fmt(dims: Any) -> str:
    return "x".join(str(d) for d in dims) if dims else "scalar"
