"""The one catalogue of inference backends: what each runs, what it needs, what it is called.

Every place that lists backends derives from :data:`CATALOGUE`: the CLI's ``--backend`` choices,
the Live profile panel's list and its tooltips, the scenario dialog, scenarios' GPU sampling, the
engine builder's runtimes and the environment report. :func:`default_backend` is the one rule
that picks a backend for a file on ``auto``, so the same file picks the same backend everywhere.

Nothing here imports a runtime: availability is probed with ``importlib.util.find_spec`` and
cached probes (ONNX Runtime's providers, a GPU through NVML).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from types import MappingProxyType
from typing import Any

from trtstudio.filekinds import ENGINE, ONNX, TORCH, classify


@dataclass(frozen=True)
class BackendInfo:
    """One backend: ``name`` is what the CLI and sessions call it."""

    name: str
    label: str  # what the window shows
    module: str  # trtstudio module that implements it
    cls: str  # class in ``module``
    runtime: str  # the Python module it imports lazily (onnxruntime, tensorrt, torch, ...)
    pip: str  # what the user installs when ``runtime`` is missing
    gpu: bool  # needs an NVIDIA GPU to run
    kinds: frozenset[str]  # file kinds (filekinds.ONNX/ENGINE/TORCH) it loads
    defaults: Mapping[str, Any] = field(default_factory=dict)  # constructor/load options
    provider: str | None = None  # ONNX Runtime execution provider it needs, if any
    builds: bool = False  # a TensorRT flavour that builds engines (backends.build)
    cuda_graph: bool = False  # can capture its enqueue in a CUDA graph (--cuda-graph)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "runtime": self.runtime, "pip": self.pip,
                "gpu": self.gpu, "kinds": sorted(self.kinds), "provider": self.provider, "builds": self.builds,
                "cuda_graph": self.cuda_graph}


_TRT_PIP = ("pip install tensorrt pycuda (TensorRT from NVIDIA's index: "
            "pip install --extra-index-url https://pypi.nvidia.com tensorrt)")
_TORCH_KINDS = frozenset({TORCH, ONNX})

_ENTRIES = (
    BackendInfo("ort", "ONNX Runtime (CPU)", "trtstudio.backends.ort", "OrtBackend", "onnxruntime",
                "pip install onnxruntime", False, frozenset({ONNX}),
                MappingProxyType({"providers": ["CPUExecutionProvider"]})),
    BackendInfo("ort-cuda", "ONNX Runtime CUDA EP", "trtstudio.backends.ort", "OrtBackend", "onnxruntime",
                "pip install onnxruntime-gpu", True, frozenset({ONNX}),
                MappingProxyType({"providers": ["CUDAExecutionProvider", "CPUExecutionProvider"]}),
                provider="CUDAExecutionProvider"),
    BackendInfo("ort-trt", "ONNX Runtime TensorRT EP", "trtstudio.backends.ort", "OrtBackend", "onnxruntime",
                "pip install onnxruntime-gpu tensorrt", True, frozenset({ONNX}),
                MappingProxyType({"providers": ["TensorrtExecutionProvider", "CUDAExecutionProvider",
                                                "CPUExecutionProvider"]}),
                provider="TensorrtExecutionProvider"),
    BackendInfo("tensorrt", "TensorRT engine", "trtstudio.backends.tensorrt", "TrtBackend", "tensorrt",
                _TRT_PIP, True, frozenset({ENGINE}), MappingProxyType({"module": "tensorrt"}), builds=True,
                cuda_graph=True),
    BackendInfo("rtx", "TensorRT-RTX engine", "trtstudio.backends.tensorrt", "TrtBackend", "tensorrt_rtx",
                "pip install tensorrt-rtx-cu13 pycuda", True, frozenset({ENGINE}),
                MappingProxyType({"module": "tensorrt_rtx"}), builds=True, cuda_graph=True),
    # PyTorch (.pt2, TorchScript, .onnx through onnx2torch): "torch" takes CUDA when visible, else the CPU
    BackendInfo("torch", "PyTorch (CUDA if visible, else CPU)", "trtstudio.backends.torch_backend",
                "TorchBackend", "torch", "pip install torch onnx2torch", False, _TORCH_KINDS,
                MappingProxyType({"accelerator": "auto"}), cuda_graph=True),
    BackendInfo("torch-cuda", "PyTorch CUDA", "trtstudio.backends.torch_backend", "TorchBackend", "torch",
                "pip install torch onnx2torch", True, _TORCH_KINDS, MappingProxyType({"accelerator": "cuda"}),
                cuda_graph=True),
)

CATALOGUE: Mapping[str, BackendInfo] = MappingProxyType({b.name: b for b in _ENTRIES})


@dataclass(frozen=True)
class RuntimeInfo:
    """A Python runtime the backends import (``BackendInfo.runtime``), as the environment report
    checks it: the distributions that may provide it (first found wins), the minimum version
    (pyproject's extras) and how to install it with trtstudio's extras."""

    module: str
    dists: tuple[str, ...]
    minimum: str | None
    fix: str


NVIDIA_INDEX = "https://pypi.nvidia.com"
RUNTIMES: Mapping[str, RuntimeInfo] = MappingProxyType({r.module: r for r in (
    RuntimeInfo("onnxruntime", ("onnxruntime", "onnxruntime-gpu", "onnxruntime-directml", "onnxruntime-openvino"),
                "1.16", 'pip install "trtstudio[ort]"  (NVIDIA GPU: pip install onnxruntime-gpu)'),
    RuntimeInfo("tensorrt", ("tensorrt", "tensorrt-cu13", "tensorrt-cu12", "tensorrt-cu11"), None,
                f'pip install "trtstudio[tensorrt]" --extra-index-url {NVIDIA_INDEX}  '
                "(or the TensorRT tarball from developer.nvidia.com/tensorrt)"),
    RuntimeInfo("tensorrt_rtx", ("tensorrt-rtx-cu13", "tensorrt-rtx-cu12", "tensorrt-rtx", "tensorrt_rtx"), None,
                'pip install "trtstudio[rtx]"  (TensorRT-RTX, builds engines even without a GPU)'),
    RuntimeInfo("torch", ("torch",), None, "pip install torch onnx2torch  (PyTorch: .pt2, TorchScript, .onnx)"),
)})
"""runtime module -> RuntimeInfo, for every ``BackendInfo.runtime`` (checked by the tests)."""
"""name -> BackendInfo, in the order the window lists them. Every backend also takes the option
``device`` (int): the CUDA device it runs on (default 0)."""

AUTO = "auto"
# what ``auto`` picks for each file kind (see default_backend)
_DEFAULT_FOR_KIND = {ONNX: "ort", TORCH: "torch", ENGINE: "tensorrt"}
# "auto" for an engine build tries these in order: TensorRT-RTX first, because it builds ahead of
# time without a GPU
BUILD_AUTO_ORDER = ("rtx", "tensorrt")


def names() -> tuple[str, ...]:
    """Every backend's name, in catalogue order."""
    return tuple(CATALOGUE)


def choices() -> tuple[str, ...]:
    """The CLI's ``--backend`` choices: ``auto`` and every backend."""
    return (AUTO, *CATALOGUE)


def gpu_backends() -> frozenset[str]:
    """The backends that run on an NVIDIA GPU (scenarios sample the GPU for them)."""
    return frozenset(b.name for b in _ENTRIES if b.gpu)


def graph_backends() -> frozenset[str]:
    """The backends that can capture their enqueue in a CUDA graph (``--cuda-graph``)."""
    return frozenset(b.name for b in _ENTRIES if b.cuda_graph)


def build_backends() -> tuple[str, ...]:
    """The TensorRT flavours that build engines, in ``auto`` order."""
    return BUILD_AUTO_ORDER


def info(name: str) -> BackendInfo:
    """The record of ``name``; KeyError for an unknown one (callers raise InputError with choices())."""
    return CATALOGUE[name]


def default_backend(path: str) -> str:
    """The backend ``auto`` picks for ``path``: ort for ONNX, torch for PyTorch files (.pt2,
    TorchScript), tensorrt for anything else (an engine plan). Decided by :func:`classify`."""
    return _DEFAULT_FOR_KIND.get(classify(path, sniff=False), "tensorrt")


def resolve(name: str | None, path: str) -> str:
    """``name`` itself, or :func:`default_backend` of ``path`` for None/``auto``."""
    return default_backend(path) if name in (None, "", AUTO) else str(name)


@lru_cache(maxsize=1)
def ort_providers() -> tuple[str, ...] | None:
    """ONNX Runtime's available execution providers; None when onnxruntime is not installed."""
    try:
        import onnxruntime
    except ImportError:
        return None
    return tuple(onnxruntime.get_available_providers())


@lru_cache(maxsize=1)
def gpu_present() -> bool:
    """Whether NVML sees an NVIDIA GPU here (cached: probed once per process)."""
    try:
        from trtstudio.measure.devices import nvml_memory

        nvml_memory(0)
    except Exception:  # noqa: BLE001 - no driver, no NVML, no device: no GPU
        return False
    return True


@cache
def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def unavailable_reason(name: str, path: str | None = None) -> str | None:
    """None when backend ``name`` can run ``path`` on this machine, else why not (one sentence,
    naming what to install where something is missing). Without ``path`` only the machine counts."""
    b = CATALOGUE[name]
    if b.runtime == "onnxruntime":
        providers = ort_providers()
        if providers is None:
            return f"onnxruntime is not installed: {b.pip}"
    elif not _installed(b.runtime):
        return f"the Python module '{b.runtime}' is not installed: {b.pip}"
    if path is not None:
        kind = classify(path, sniff=False)
        if kind not in b.kinds:
            return _wrong_kind(b, kind)
    if b.provider is not None:
        providers = ort_providers() or ()
        if b.provider not in providers:
            return f"this onnxruntime lacks {b.provider} (has {', '.join(providers)})"
    if b.gpu and b.provider is None and not gpu_present():
        return "no NVIDIA GPU found (NVML sees none)"
    return None


def _wrong_kind(b: BackendInfo, kind: str) -> str:
    if ENGINE in b.kinds:
        return "runs a built engine plan: build one from this model first"
    if b.kinds == {ONNX}:
        return f"{b.label.split(' (')[0]} runs .onnx models; this is {'an engine' if kind == ENGINE else 'not one'}"
    return f"{b.label} runs PyTorch files (.pt2, TorchScript) and .onnx models; this is an engine"


def availability(path: str | None = None) -> dict[str, str | None]:
    """Per backend name: None when usable for ``path`` here, else why not (the panel's tooltips)."""
    return {name: unavailable_reason(name, path) for name in CATALOGUE}
