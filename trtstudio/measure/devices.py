"""GPU and memory probes of this host: NVML, opened once for the whole process, and CUDA free/total;
and how many processors this process may use (:func:`usable_cpus`), and how many of them are idle
(:func:`spare_cpus`).

Every module that asks about GPUs (memory monitors, scenario samplers, load/unload cycles) asks
here. pynvml (package nvidia-ml-py) is imported lazily; a missing one is a BackendError naming the
pip command, and the callers that can do without a GPU turn that into "no figure".
"""

from __future__ import annotations

import math
import os
import sys
import threading
from dataclasses import asdict, dataclass
from typing import Any

from trtstudio.errors import BackendError

PIP_NVML = "pip install nvidia-ml-py"


def usable_cpus() -> int:
    """The processors this process may run on (its affinity where the OS has one, else the count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def spare_cpus() -> int:
    """The processors this process may run on that nothing runs on now, beside the one it runs on:
    :func:`usable_cpus` less the tasks runnable this instant (Linux's ``/proc/loadavg``, which
    counts this one), else less the last minute's load average and this process."""
    cpus = usable_cpus()
    try:
        with open("/proc/loadavg") as f:
            running = int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        try:
            running = math.ceil(os.getloadavg()[0]) + 1
        except (AttributeError, OSError):  # (no load average: nothing known to run beside this one)
            running = 1
    return max(0, cpus - running)

_lock = threading.Lock()
_nvml_ready = False


def nvml() -> Any:
    """The pynvml module with NVML initialised (once per process); BackendError when it cannot be."""
    global _nvml_ready
    try:
        import pynvml
    except ImportError as exc:
        raise BackendError(f"GPU memory monitoring needs pynvml ({exc}); install it: {PIP_NVML}") from exc
    with _lock:
        if not _nvml_ready:
            try:
                pynvml.nvmlInit()
            except pynvml.NVMLError as exc:
                raise BackendError(f"NVML is not usable here: {exc}") from exc
            _nvml_ready = True
    return pynvml


def nvml_or_none() -> Any | None:
    """``nvml()``, or None where there is no NVML (no package, no driver)."""
    try:
        return nvml()
    except BackendError:
        return None


def nvml_memory(device: int = 0) -> dict[str, int]:
    """NVML view of one GPU: ``gpu_used_bytes``, ``gpu_total_bytes`` and, where NVML lists this
    process, ``process_gpu_bytes``. Raises BackendError without NVML."""
    nv = nvml()
    h = nv.nvmlDeviceGetHandleByIndex(device)
    info = nv.nvmlDeviceGetMemoryInfo(h)
    out = {"gpu_used_bytes": int(info.used), "gpu_total_bytes": int(info.total)}
    pid = os.getpid()
    for getter in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
        try:
            procs = getattr(nv, getter)(h)
        except (nv.NVMLError, AttributeError):
            continue
        for p in procs:
            used = getattr(p, "usedGpuMemory", None)
            if p.pid == pid and used is not None:
                out["process_gpu_bytes"] = out.get("process_gpu_bytes", 0) + int(used)
    return out


def nvml_used(device: int = 0) -> dict[str, int]:
    """``gpu_used_bytes`` (and ``process_gpu_bytes`` where listed) of one GPU; {} without NVML."""
    try:
        got = nvml_memory(device)
    except Exception:  # noqa: BLE001 - NVML missing or no such GPU
        return {}
    return {k: v for k, v in got.items() if k in ("gpu_used_bytes", "process_gpu_bytes")}


@dataclass(frozen=True)
class GpuInfo:
    """One GPU as NVML (or torch) names it."""

    index: int
    name: str
    total_bytes: int

    def label(self) -> str:
        """'GPU 0: NVIDIA H200 (140 GiB)'."""
        return f"GPU {self.index}: {self.name} ({self.total_bytes / 2**30:.0f} GiB)"

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return asdict(self)


def list_gpus() -> list[GpuInfo]:
    """Every GPU visible here (NVML, else torch if imported); [] without a GPU."""
    nv = nvml_or_none()
    if nv is not None:
        out = []
        for i in range(nv.nvmlDeviceGetCount()):
            h = nv.nvmlDeviceGetHandleByIndex(i)
            out.append(GpuInfo(i, nvml_text(nv.nvmlDeviceGetName(h)),
                               int(nv.nvmlDeviceGetMemoryInfo(h).total)))
        return out
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return [GpuInfo(i, torch.cuda.get_device_name(i), int(torch.cuda.get_device_properties(i).total_memory))
                for i in range(torch.cuda.device_count())]
    return []


def nvml_text(value: Any) -> str:
    """A string NVML returned (bytes in older pynvml releases, str in newer ones)."""
    return value.decode() if isinstance(value, bytes) else str(value)


def gpu_inventory(nv: Any = None) -> list[dict[str, Any]]:
    """Every GPU as NVML describes it: ``index``, ``name``, ``driver``, ``cuda_driver`` (e.g.
    "13.0"), ``memory_bytes``, ``compute_capability`` ("9.0"); a figure NVML refuses is None. Opens
    NVML through :func:`nvml` (never shuts it down: other monitors of this process use it); raises
    BackendError without NVML, and NVML's own error mid-way."""
    nv = nv if nv is not None else nvml()
    driver = nvml_text(nv.nvmlSystemGetDriverVersion())
    try:
        cv = int(nv.nvmlSystemGetCudaDriverVersion_v2())
        cuda: str | None = f"{cv // 1000}.{(cv % 1000) // 10}"
    except Exception:  # noqa: BLE001 - old drivers and virtual GPUs
        cuda = None
    out: list[dict[str, Any]] = []
    for i in range(int(nv.nvmlDeviceGetCount())):
        h = nv.nvmlDeviceGetHandleByIndex(i)
        entry: dict[str, Any] = {"index": i, "name": nvml_text(nv.nvmlDeviceGetName(h)), "driver": driver,
                                 "cuda_driver": cuda, "memory_bytes": None, "compute_capability": None}
        try:
            entry["memory_bytes"] = int(nv.nvmlDeviceGetMemoryInfo(h).total)
        except Exception:  # noqa: BLE001
            pass
        try:
            major, minor = nv.nvmlDeviceGetCudaComputeCapability(h)
            entry["compute_capability"] = f"{major}.{minor}"
        except Exception:  # noqa: BLE001
            pass
        out.append(entry)
    return out


def gpu_reading(index: int) -> dict[str, float]:
    """NVML now: ``used_bytes``, ``total_bytes``, ``util_percent`` (GPU), ``mem_util_percent``; {} without NVML."""
    nv = nvml_or_none()
    if nv is None:
        return {}
    h = nv.nvmlDeviceGetHandleByIndex(index)
    mem = nv.nvmlDeviceGetMemoryInfo(h)
    out: dict[str, float] = {"used_bytes": float(mem.used), "total_bytes": float(mem.total)}
    try:
        util = nv.nvmlDeviceGetUtilizationRates(h)
        out.update(util_percent=float(util.gpu), mem_util_percent=float(util.memory))
    except Exception:  # noqa: BLE001 - some GPUs (and virtual ones) refuse utilisation
        pass
    return out


def _pycuda_current() -> tuple[int, int] | None:
    """(free, total) of the device of the pycuda context current on this thread, if there is one."""
    drv = sys.modules.get("pycuda.driver")
    if drv is None:
        return None
    try:
        free, total = drv.mem_get_info()
    except Exception:  # noqa: BLE001 - no current context
        return None
    return int(free), int(total)


def cuda_mem_info(device: int | None = None) -> tuple[int, int] | None:
    """(free, total) bytes as CUDA sees them; None where it cannot be measured here.

    ``device`` None: the device of the pycuda context current on this thread (what a TensorRT run
    holds; None without one, so no context is made for the question). A device index: through
    cuda-python's runtime, else torch when it is already imported (a scenario that holds no
    context of its own)."""
    if device is None:
        return _pycuda_current()
    try:
        from cuda.bindings import runtime as rt
    except ImportError:
        rt = None
    if rt is not None:
        try:
            rt.cudaSetDevice(device)
            err, free, total = rt.cudaMemGetInfo()
            if err == rt.cudaError_t.cudaSuccess:
                return int(free), int(total)
        except Exception:  # noqa: BLE001 - no driver
            pass
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and device < torch.cuda.device_count():
        free, total = torch.cuda.mem_get_info(device)
        return int(free), int(total)
    return None
