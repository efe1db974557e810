"""What trtstudio can use on this machine: Python packages, ONNX Runtime providers, the NVIDIA driver.

``check_environment()`` returns one dict per item::

    {"name": "onnxruntime", "status": "ok" | "missing" | "warning", "version": "1.20.1" | None,
     "detail": "what was found", "fix": "how to install or repair it" | None, "required": False}

By default it only reads package metadata (``importlib.metadata``) and looks modules up
(``importlib.util.find_spec``): nothing heavy is imported, so it is instant and safe to call from
the GUI thread. ``probe_gpu=True`` also imports ``pynvml`` (driver version, CUDA version, GPU
names, compute capabilities, memory), loads the CUDA driver library (``cuDriverGetVersion``) and
imports ``onnxruntime`` to list its execution providers.

From a shell (``trtstudio environment`` takes the same flags)::

    python -m trtstudio.environment [--json] [--no-gpu] [--engine FILE] [--runtimes-root DIR]

lists, after the packages and the driver, the runtimes an upgrade check can use (this Python's and
the managed ones, :func:`trtstudio.runtimes.listing.runtime_items`) with a warning on each
combination that cannot load an engine,
exits 1 when a required package is missing, else 0.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import platform
import re
import sys
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from trtstudio.backends.catalogue import CATALOGUE, RUNTIMES

SCHEMA = "trtstudio.environment/1"
FIX_ORT = RUNTIMES["onnxruntime"].fix
FIX_RTX = RUNTIMES["tensorrt_rtx"].fix
FIX_TRT = RUNTIMES["tensorrt"].fix
FIX_DRIVER = ("install the NVIDIA driver (nvidia.com/drivers); without a GPU, build engines ahead of time "
              "with TensorRT-RTX and profile on CPU with ONNX Runtime")

Item = dict[str, Any]

# name shown, module to look up, distributions that may provide it (first found wins),
# minimum version (from pyproject.toml) or None, required, fix when missing. The backends' runtimes
# come from the backend catalogue (its RUNTIMES, in the order its backends list them).
_Package = tuple[str, str, tuple[str, ...], str | None, bool, str]
_PACKAGES: tuple[_Package, ...] = (
    ("PySide6", "PySide6", ("PySide6-Essentials", "PySide6"), "6.5", True, "pip install trtstudio  (PySide6-Essentials)"),
    ("pyqtgraph", "pyqtgraph", ("pyqtgraph",), "0.13.3", True, "pip install trtstudio  (pyqtgraph)"),
    ("onnx", "onnx", ("onnx",), "1.14", True, "pip install trtstudio  (onnx)"),
    ("numpy", "numpy", ("numpy",), "1.23", True, "pip install trtstudio  (numpy)"),
    *((r.module, r.module, r.dists, r.minimum, False, r.fix)
      for r in (RUNTIMES[m] for m in dict.fromkeys(b.runtime for b in CATALOGUE.values()))),
    ("pycuda", "pycuda", ("pycuda",), None, False, 'pip install "trtstudio[tensorrt]"  (or: pip install pycuda)'),
    ("cuda-python", "cuda", ("cuda-python", "cuda-bindings"), None, False,
     'pip install "trtstudio[tensorrt]"  (or: pip install cuda-python)'),
    ("nvidia-ml-py", "pynvml", ("nvidia-ml-py", "pynvml"), None, False,
     'pip install "trtstudio[tensorrt]"  (or: pip install nvidia-ml-py)'),
)


def _item(name: str, status: str, version: str | None = None, detail: str = "", fix: str | None = None,
          required: bool = False) -> Item:
    return {"name": name, "status": status, "version": version, "detail": detail,
            "fix": None if status == "ok" else fix, "required": required}


def _dist_version(dists: Sequence[str]) -> tuple[str | None, str | None]:
    """(distribution, version) of the first installed distribution in ``dists``."""
    for dist in dists:
        try:
            return dist, metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None, None


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text.split("+")[0])[:3])


def _has_module(module: str) -> bool:
    """find_spec on a top-level name: imports nothing."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _package(name: str, module: str, dists: Sequence[str], minimum: str | None, required: bool,
             fix: str) -> Item:
    dist, version = _dist_version(dists)
    found = _has_module(module)
    if not found:
        detail = "not installed" if dist is None else f"{dist} {version} is installed but `import {module}` fails"
        return _item(name, "missing", version, detail, fix, required)
    if dist is None:
        return _item(name, "ok", None, f"importable as {module} (installed outside pip)", fix, required)
    if minimum and _version_tuple(version or "0") < _version_tuple(minimum):
        return _item(name, "warning", version, f"{dist} {version} is older than the {minimum} trtstudio needs",
                     f'pip install -U "{dist}>={minimum}"', required)
    return _item(name, "ok", version, dist, fix, required)


def _pyside_shiboken(item: Item) -> None:
    """PySide6 and shiboken6 of different versions fail at import with an obscure error."""
    if item["status"] != "ok" or not item["version"]:
        return
    _, shiboken = _dist_version(("shiboken6",))
    if shiboken and shiboken != item["version"]:
        item.update(status="warning", detail=f"{item['detail']}; shiboken6 {shiboken} does not match",
                    fix=f'pip install "shiboken6=={item["version"]}"')


def _ort_providers(item: Item) -> None:
    import onnxruntime  # heavy: only with probe_gpu

    providers = list(onnxruntime.get_available_providers())
    item["providers"] = providers
    item["detail"] = f"{item['detail']}; providers: {', '.join(providers)}"
    gpu = [p for p in providers if p in ("CUDAExecutionProvider", "TensorrtExecutionProvider",
                                         "NvTensorRTRTXExecutionProvider")]
    item["gpu_providers"] = gpu


def _nvml_items() -> tuple[Item, list[dict[str, Any]]]:
    """The NVIDIA driver as NVML sees it, and one dict per GPU (``measure.devices``: NVML opened
    once for the process)."""
    from trtstudio.errors import BackendError
    from trtstudio.measure.devices import gpu_inventory, nvml, nvml_text

    try:
        import pynvml  # noqa: F401 - is the package there at all
    except ImportError:
        return _item("NVIDIA driver", "warning", None, "not checked: nvidia-ml-py is not installed",
                     "pip install nvidia-ml-py"), []
    try:
        nv = nvml()
    except BackendError as exc:
        return _item("NVIDIA driver", "missing", None, f"NVML cannot start: {exc.__cause__ or exc}", FIX_DRIVER), []
    try:
        inventory = gpu_inventory(nv)
    except nv.NVMLError as exc:
        return _item("NVIDIA driver", "warning", None, f"NVML error: {exc}", FIX_DRIVER), []
    driver = inventory[0]["driver"] if inventory else nvml_text(nv.nvmlSystemGetDriverVersion())
    gpus = [{"index": g["index"], "name": g["name"], "memory_total": g["memory_bytes"],
             "compute_capability": g["compute_capability"]} for g in inventory]
    names = ", ".join(f"{g['name']} (SM{(g['compute_capability'] or '?').replace('.', '')})" for g in gpus)
    status = "ok" if gpus else "warning"
    item = _item("NVIDIA driver", status, driver, f"{len(gpus)} GPU(s): {names}" if gpus else "no GPU found",
                 FIX_DRIVER)
    item["gpus"] = gpus
    return item, gpus


def _cuda_driver_item() -> Item:
    """cuDriverGetVersion from the CUDA driver library (needs no cuInit and no GPU context)."""
    names = ["nvcuda.dll"] if sys.platform == "win32" else ["libcuda.so.1", "libcuda.so"]
    found = ctypes.util.find_library("cuda")
    if found:
        names.append(found)
    lib = None
    for n in names:
        try:
            lib = ctypes.CDLL(n)
            break
        except OSError:
            continue
    if lib is None:
        return _item("CUDA driver", "missing", None, "libcuda is not loadable", FIX_DRIVER)
    v = ctypes.c_int(0)
    rc = lib.cuDriverGetVersion(ctypes.byref(v))
    if rc != 0:
        return _item("CUDA driver", "warning", None, f"cuDriverGetVersion failed (CUresult {rc})", FIX_DRIVER)
    version = f"{v.value // 1000}.{v.value % 1000 // 10}"
    return _item("CUDA driver", "ok", version, f"libcuda supports CUDA up to {version}", FIX_DRIVER)


def check_environment(probe_gpu: bool = False) -> list[Item]:
    """One entry per package or driver trtstudio can use, with its status, version and a fix.

    Without ``probe_gpu`` only package metadata and module specs are read (no heavy import);
    the driver entries then say they were not probed. With it, NVML, libcuda and onnxruntime
    are loaded to report the driver, CUDA version, GPUs and ONNX Runtime's providers.
    """
    items: list[Item] = [_item("Python", "ok", platform.python_version(),
                               f"{platform.python_implementation()} on {platform.system()} {platform.machine()}",
                               required=True)]
    by_name: dict[str, Item] = {}
    for spec in _PACKAGES:
        it = _package(*spec)
        by_name[it["name"]] = it
        items.append(it)
    _pyside_shiboken(by_name["PySide6"])
    if not probe_gpu:
        why = "not probed (check_environment(probe_gpu=True) or python -m trtstudio.environment)"
        items.append(_item("NVIDIA driver", "warning", None, why, None))
        items.append(_item("CUDA driver", "warning", None, why, None))
        return items
    ort = by_name["onnxruntime"]
    if ort["status"] != "missing":
        try:
            _ort_providers(ort)
        except Exception as exc:  # a broken install: say so instead of failing the whole check
            ort.update(status="warning", detail=f"import onnxruntime failed: {exc}", fix=FIX_ORT)
    driver, gpus = _nvml_items()
    items.append(driver)
    items.append(_cuda_driver_item())
    rtx = by_name["tensorrt_rtx"]
    sm90 = [g["name"] for g in gpus if g.get("compute_capability") == "9.0"]
    if rtx["status"] == "ok" and sm90:
        rtx.update(status="warning", detail=f"{rtx['detail']}; cannot run on SM90 ({', '.join(sm90)}): "
                   "builds for other targets only", fix=FIX_TRT)
    if ort["status"] == "ok" and gpus and not ort.get("gpu_providers"):
        ort["detail"] += "; CPU only on a machine with an NVIDIA GPU"
        ort["status"] = "warning"
        ort["fix"] = "pip install onnxruntime-gpu  (replaces onnxruntime)"
    return items + backend_items()


def backend_items() -> list[Item]:
    """One entry per backend of the catalogue (``backend ort``, ...): ok where it can run here,
    missing (with the pip command) where its runtime is not installed, warning with the reason
    otherwise (no GPU, a provider this onnxruntime lacks). Imports onnxruntime and probes NVML."""
    from trtstudio.backends.catalogue import unavailable_reason

    out = []
    for b in CATALOGUE.values():
        why = unavailable_reason(b.name)
        status = "ok" if why is None else ("missing" if "not installed" in why else "warning")
        fix = FIX_DRIVER if why is not None and "GPU" in why else b.pip
        detail = b.label if why is None else f"{b.label}: {why.removesuffix(f': {b.pip}')}"
        item = _item(f"backend {b.name}", status, None, detail, fix)
        item["backend"] = b.name
        out.append(item)
    return out


def format_table(items: Sequence[Item]) -> str:
    """The entries as aligned text lines, a fix under each entry that is not ok."""
    marks = {"ok": "ok", "missing": "MISSING", "warning": "warning"}
    width = max(len(str(it["name"])) for it in items)
    lines = []
    for it in items:
        version = it["version"] or "-"
        lines.append(f"{marks.get(it['status'], it['status']):8} {it['name']:{width}}  {version:12} {it['detail']}")
        if it["status"] != "ok" and it["fix"]:
            lines.append(f"{'':8} {'':{width}}  fix: {it['fix']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m trtstudio.environment``: the same as ``trtstudio environment`` (packages, driver,
    then the runtimes of :mod:`trtstudio.runtimes.listing`); exit 1 if a required package is missing."""
    import runpy  # the program run by name: the CLI is above this module, not imported by it

    sys.argv = ["trtstudio", "environment", *(sys.argv[1:] if argv is None else argv)]
    try:
        runpy.run_module("trtstudio", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
