"""TensorRT's and TensorRT-RTX's ONNX parser, as the engine build and the support check use it.

- :func:`import_runtime`: the ``tensorrt_rtx`` / ``tensorrt`` module for a backend name (``auto``
  tries TensorRT-RTX first: it builds ahead of time without a GPU); a missing one is a
  BackendError that names the package to install.
- :func:`parsed_network`: a context manager, in the manner of Polygraphy's ``NetworkFromOnnxPath``
  loader, that creates the builder, the network and the parser, parses the model and frees the
  three (parser first) when the block ends, also when it raises.
- :func:`versions`: the runtime's versions as a build and a check record them.

Both runtimes share the builder, parser and inspector API; nothing heavy is imported at module level.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trtstudio.backends import catalogue
from trtstudio.errors import BackendError, InputError

# backend name -> (module to import, what the user should install), from the backend catalogue
MODULES: dict[str, tuple[str, str]] = {name: (catalogue.info(name).runtime, catalogue.info(name).pip)
                                       for name in catalogue.build_backends()}
# "auto" tries these in order: TensorRT-RTX first, because it builds ahead of time without a GPU.
AUTO_ORDER = catalogue.build_backends()


def import_runtime(backend: str) -> tuple[Any, str]:
    """Import the TensorRT module for ``backend`` ("rtx", "tensorrt" or "auto"); return (module, name).

    Raises BackendError naming the package to install when it is missing, InputError for an
    unknown backend name.
    """
    if backend == "auto":
        names: tuple[str, ...] = AUTO_ORDER
    elif backend in MODULES:
        names = (backend,)
    else:
        raise InputError(None, f"unknown backend {backend!r}; choose rtx, tensorrt or auto")
    problems = []
    for name in names:
        module, install = MODULES[name]
        try:
            return importlib.import_module(module), name
        except ImportError as exc:  # also OSError-like load failures surface as ImportError
            problems.append(f"{module} is not importable ({exc}); install: {install}")
        except OSError as exc:
            problems.append(f"{module} failed to load its libraries ({exc})")
    raise BackendError("no TensorRT backend: " + "; ".join(problems))


def versions(trt: Any, name: str) -> dict[str, str]:
    """``{"backend", "module", "version", <module>: version, "onnx_parser"}`` of an imported runtime
    (the module's own key is what the engine readers and the compatibility check look up)."""
    version = str(getattr(trt, "__version__", "unknown"))
    v = {"backend": name, "module": trt.__name__, "version": version, trt.__name__: version}
    if hasattr(trt, "get_nv_onnx_parser_version"):
        try:
            v["onnx_parser"] = str(trt.get_nv_onnx_parser_version())
        except Exception:  # noqa: BLE001
            pass
    return v


@dataclass
class ParsedNetwork:
    """The builder, the network the parser filled and the parser; ``ok``: the parse succeeded."""

    builder: Any
    network: Any
    parser: Any
    ok: bool


def create_parser(trt: Any, logger: Any, strongly_typed: bool = False) -> ParsedNetwork:
    """A builder, an empty network and an ONNX parser for it (nothing parsed yet: ``ok`` False)."""
    builder = trt.Builder(logger)
    if builder is None:
        raise BackendError("TensorRT could not create a builder (see the log)")
    flags = 0
    if strongly_typed:
        flag = getattr(trt.NetworkDefinitionCreationFlag, "STRONGLY_TYPED", None)
        if flag is not None:
            flags |= 1 << int(flag)
    network = builder.create_network(flags)
    return ParsedNetwork(builder, network, trt.OnnxParser(network, logger), False)


@contextmanager
def parsed_network(trt: Any, logger: Any, model_path: str | os.PathLike[str], *, strongly_typed: bool = False,
                   data: bytes | None = None) -> Iterator[ParsedNetwork]:
    """Parse the ONNX model at ``model_path`` (or ``data``, its bytes, when given: the parser still
    reads external weights beside ``model_path``) into a new network; the builder, network and
    parser are released when the block ends. A parse that fails is no exception: ``ok`` is False
    and the parser holds the errors."""
    net = create_parser(trt, logger, strongly_typed)
    try:
        path = str(Path(model_path))
        net.ok = bool(net.parser.parse_from_file(path) if data is None else net.parser.parse(data, path))
        yield net
    finally:
        # TensorRT frees its objects with their last reference: the parser before the network it
        # fills, the network before its builder
        net.parser = net.network = net.builder = None
