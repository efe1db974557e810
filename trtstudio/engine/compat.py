"""Engine vs this machine: can this engine be deserialized and run here, and if not, what to do.

An engine plan is tied to the TensorRT version that built it and to the GPU's compute capability,
unless it was built *version compatible* (TensorRT >= 8.6: later runtimes of the same major version
load it, with the lean runtime embedded unless excluded) or with a *hardware compatibility level*
(``AMPERE_PLUS``: any SM80+ GPU; ``SAME_COMPUTE_CAPABILITY``: any GPU of the same SM). TensorRT-RTX
plans name their target compute capabilities and cannot run on SM90 (Hopper).

:func:`compare_engine` takes what the engine files said (an :class:`EngineInfo`: versions, device,
build settings) and/or a serialized plan's header, and this machine (:func:`this_machine`), and
returns findings ``{"severity", "message", "hint"}``. Qt-free; reads package metadata and, when
asked, NVML/libcuda through :mod:`trtstudio.environment`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# TensorRT-RTX plan header (observed on tensorrt_rtx 1.7 plans built for each target, see
# tests/test_engine_compat.py): "vtrt" magic, the builder version as 3 bytes at offset 24, "vtrt"
# again at 28 and a bit mask of the target compute capabilities at offset 32.
_RTX_TARGET_BITS = {0: "7.5", 1: "8.0", 2: "8.6", 3: "8.9", 4: "12.0", 5: "12.1"}
_HW_LEVELS = {
    "NONE": "none",
    "AMPERE_PLUS": "ampere_plus",
    "SAME_COMPUTE_CAPABILITY": "same_compute_capability",
}


@dataclass
class Machine:
    """This machine as far as engines care: TensorRT runtimes, GPUs and driver."""

    runtimes: dict[str, str] = field(default_factory=dict)  # {"tensorrt": "10.16.1", "tensorrt_rtx": "1.7.1"}
    gpus: list[dict[str, Any]] = field(default_factory=list)  # [{"name", "compute_capability": "8.6"}]
    driver: str | None = None
    cuda_driver: str | None = None  # highest CUDA version the driver supports, "12.4"
    probed: bool = False  # False: GPUs and driver were not looked at

    def to_json(self) -> dict[str, Any]:
        return {"runtimes": self.runtimes, "gpus": self.gpus, "driver": self.driver,
                "cuda_driver": self.cuda_driver, "probed": self.probed}


def this_machine(probe_gpu: bool = True) -> Machine:
    """The installed TensorRT runtimes (package metadata) and, with ``probe_gpu``, GPUs and driver."""
    import trtstudio.environment as env

    m = Machine(probed=probe_gpu)
    for item in env.check_environment(probe_gpu=False):  # package metadata only: instant
        if item["name"] in ("tensorrt", "tensorrt_rtx") and item["status"] != "missing" and item.get("version"):
            m.runtimes[item["name"]] = str(item["version"])
    if probe_gpu:  # NVML and libcuda only (check_environment(probe_gpu=True) also imports onnxruntime)
        driver, gpus = env._nvml_items()
        m.driver = driver.get("version")
        m.gpus = [dict(g) for g in gpus]
        cuda = env._cuda_driver_item()
        m.cuda_driver = cuda.get("version") if cuda["status"] == "ok" else None
    return m


def read_plan_header(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """What a serialized plan's first bytes say: ``{"kind": "tensorrt" | "tensorrt_rtx", ...}`` with,
    for TensorRT-RTX plans, ``version`` and ``targets`` (compute capabilities). None when the file is
    not a plan."""
    try:
        with Path(path).open("rb") as fh:
            head = fh.read(64)
    except OSError:
        return None
    if head[:4] == b"ftrt":
        return {"kind": "tensorrt"}
    if head[:4] != b"vtrt":
        return None
    out: dict[str, Any] = {"kind": "tensorrt_rtx"}
    if len(head) >= 40 and head[28:32] == b"vtrt":
        out["version"] = f"{head[24]}.{head[25]}.{head[26]}"
        mask = int.from_bytes(head[32:40], "little")
        out["targets"] = [cc for bit, cc in sorted(_RTX_TARGET_BITS.items()) if mask >> bit & 1]
        unknown = mask & ~sum(1 << b for b in _RTX_TARGET_BITS)
        if unknown:
            out["unknown_target_bits"] = unknown
    return out


def _cc(text: Any) -> str | None:
    """'8.6' / 'SM86' / 'sm_86' / (8, 6) -> '8.6'."""
    if text is None:
        return None
    if isinstance(text, (tuple, list)) and len(text) == 2:
        return f"{int(text[0])}.{int(text[1])}"
    t = str(text).strip().upper().replace("SM_", "SM")
    m = re.fullmatch(r"(\d+)\.(\d+)", t)
    if m:
        return f"{int(m.group(1))}.{int(m.group(2))}"
    m = re.fullmatch(r"SM(\d+?)(\d)", t)
    if m:
        return f"{int(m.group(1))}.{m.group(2)}"
    return None


def _setting(settings: dict[str, Any], *patterns: str) -> Any:
    for key, value in settings.items():
        k = re.sub(r"[^a-z]", "", str(key).lower())
        if any(p in k for p in patterns):
            return value
    return None


def _enabled(value: Any) -> bool:
    return str(value).strip().lower() in ("enabled", "true", "1", "yes", "on")


def _major_minor(v: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v or "")[:2])


def engine_facts(info: Any = None, plan_path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """What the engine files say about where the engine can run: ``kind`` (tensorrt / tensorrt_rtx),
    ``version``, ``device``, ``compute_capabilities``, ``version_compatible``, ``hardware_compat``,
    ``runtime`` (full / lean / dispatch), ``cuda``."""
    facts: dict[str, Any] = {}
    if info is not None:
        versions = dict(getattr(info, "versions", {}) or {})
        settings = dict(getattr(info, "build_settings", {}) or {})
        device = dict(getattr(info, "device", {}) or {})
        if versions.get("tensorrt_rtx"):
            facts["kind"], facts["version"] = "tensorrt_rtx", versions["tensorrt_rtx"]
        elif versions.get("tensorrt"):
            facts["kind"], facts["version"] = "tensorrt", versions["tensorrt"]
        if versions.get("cuda"):
            facts["cuda"] = versions["cuda"]
        if device.get("name"):
            facts["device"] = device["name"]
        ccs = [c for c in [_cc(device.get("compute_capability"))] if c]
        targets = settings.get("targets")
        if isinstance(targets, list):
            ccs += [c for t in targets if (c := _cc(t)) and c not in ccs]
        if ccs:
            facts["compute_capabilities"] = ccs
        vc = _setting(settings, "versioncompatible")
        if vc is not None:
            facts["version_compatible"] = _enabled(vc)
        hw = _setting(settings, "hardwarecompat")
        if hw is not None:
            key = re.sub(r"[^A-Z_]", "", str(hw).upper().replace(" ", "_").replace("+", "_PLUS"))
            facts["hardware_compat"] = _HW_LEVELS.get(key, str(hw).lower())
        rt = _setting(settings, "tensorrtruntime")
        if rt is not None:
            facts["runtime"] = str(rt).lower()
        lean = _setting(settings, "excludeleanruntime")
        if lean is not None:
            facts["exclude_lean_runtime"] = _enabled(lean)
    if plan_path is not None:
        head = read_plan_header(plan_path)
        if head is not None:
            facts.setdefault("kind", head["kind"])
            if head.get("version") and "version" not in facts:
                facts["version"] = head["version"]
            if head.get("targets"):
                facts["compute_capabilities"] = head["targets"]
            facts["header"] = head
    return facts


def _finding(severity: str, message: str, hint: str = "") -> dict[str, str]:
    return {"severity": severity, "message": message, "hint": hint}


def compare_engine(info: Any = None, plan_path: str | os.PathLike[str] | None = None,
                   machine: Machine | None = None) -> list[dict[str, str]]:
    """Findings on running this engine here (empty when the files say nothing about its origin)."""
    facts = engine_facts(info, plan_path)
    if not facts:
        return []
    m = machine if machine is not None else this_machine()
    kind = facts.get("kind")
    label = {"tensorrt_rtx": "TensorRT-RTX", "tensorrt": "TensorRT"}.get(kind or "", "TensorRT")
    here = m.runtimes.get(kind or "")
    out = _runtime_findings(facts, m, label, here)
    out += _gpu_findings(facts, m, plan_path)
    # the driver
    cuda = facts.get("cuda")
    if cuda and m.cuda_driver and _major_minor(m.cuda_driver) < _major_minor(cuda):
        out.append(_finding("error", f"the engine's TensorRT was built against CUDA {cuda}; this driver supports CUDA up to "
                            f"{m.cuda_driver}", "update the NVIDIA driver"))
    gpus = m.gpus
    if not out and (here or gpus):
        where = ", ".join(x for x in (f"{label} {here}" if here else "", ", ".join(g.get("name", "") for g in gpus)) if x)
        out.append(_finding("info", f"the engine matches this machine ({where})"))
    return out


def _runtime_findings(facts: dict[str, Any], m: Machine, label: str, here: str | None) -> list[dict[str, str]]:
    """The runtime: none here for the engine's kind, or a version other than the one that built it."""
    out: list[dict[str, str]] = []
    kind = facts.get("kind")
    built = facts.get("version")
    vc = bool(facts.get("version_compatible"))
    if kind and not here:
        other = "tensorrt_rtx" if kind == "tensorrt" else "tensorrt"
        extra = f" ({other} {m.runtimes[other]} is installed, but it cannot read {label} plans)" if other in m.runtimes else ""
        pip = "pip install tensorrt-rtx-cu13" if kind == "tensorrt_rtx" else (
            "pip install --extra-index-url https://pypi.nvidia.com tensorrt")
        out.append(_finding("warning", f"this machine has no {label} runtime{extra}: the engine cannot be deserialized here",
                            f"{pip} (version {built})" if built else pip))
    elif kind and built and here and not here.startswith(built) and not built.startswith(here):
        if kind == "tensorrt" and vc and _major_minor(here) >= _major_minor(built) and \
                _major_minor(here)[:1] == _major_minor(built)[:1]:
            lean = ("the lean runtime is embedded" if not facts.get("exclude_lean_runtime")
                    else "built with --excludeLeanRuntime: load it with the lean runtime of version " + built)
            out.append(_finding("info", f"built version-compatible with TensorRT {built}; TensorRT {here} here can load it "
                                f"({lean})", "set runtime.engine_host_code_allowed = True before deserializing"))
        elif kind == "tensorrt_rtx":
            out.append(_finding("warning", f"built with TensorRT-RTX {built}, this machine has {here}: the runtime checks "
                                "the version when loading and may refuse it (Runtime.get_engine_validity says why)",
                                "rebuild the engine here if it is refused"))
        else:
            vc_hint = (" or build it version-compatible (--versionCompatible, TensorRT >= 8.6) so later runtimes "
                       "of the same major version load it") if kind == "tensorrt" else ""
            out.append(_finding("error", f"built with {label} {built}, this machine has {label} {here}: "
                                f"deserializing will fail (plans are tied to the version that built them)",
                                f"rebuild the engine here{vc_hint}, or install {label} {built}"))
    return out


def _gpu_findings(facts: dict[str, Any], m: Machine,
                  plan_path: str | os.PathLike[str] | None) -> list[dict[str, str]]:
    """The GPUs: none here, or ones whose compute capability the engine was not built for."""
    out: list[dict[str, str]] = []
    kind = facts.get("kind")
    ccs: list[str] = list(facts.get("compute_capabilities") or [])
    hw = facts.get("hardware_compat")
    gpus = m.gpus
    if m.probed and not gpus:
        if plan_path is not None:
            out.append(_finding("error", "no NVIDIA GPU here: the engine cannot be deserialized or run on this machine",
                                "export its layers where it runs (trtexec --loadEngine=... --profilingVerbosity=detailed "
                                "--exportLayerInfo=layers.json); profile the ONNX model with --backend ort here"))
        else:
            out.append(_finding("info", "no NVIDIA GPU here: the engine's files can be read, the engine cannot be run",
                                "run it on a GPU it was built for; profile the ONNX model with --backend ort here"))
    for g in gpus:
        gcc = _cc(g.get("compute_capability"))
        if not gcc or not ccs:
            continue
        name = f"{g.get('name', 'GPU')} (SM{gcc.replace('.', '')})"
        built_for = ", ".join("SM" + c.replace(".", "") for c in ccs)
        if kind == "tensorrt_rtx":
            if gcc == "9.0":
                out.append(_finding("error", f"{name} is Hopper: TensorRT-RTX engines cannot run on SM90",
                                    "build with full TensorRT for this GPU"))
            elif gcc not in ccs:
                out.append(_finding("error", f"built for {built_for}, this GPU is {name}: TensorRT-RTX will refuse it",
                                    f"rebuild with --target sm{gcc.replace('.', '')} (several targets can share one engine)"))
            continue
        if gcc in ccs:
            continue
        if hw == "ampere_plus" and _major_minor(gcc) >= (8, 0):
            out.append(_finding("info", f"built for {built_for} with hardware compatibility AMPERE_PLUS: runs on {name}, "
                                "maybe slower than an engine built for it", "rebuild here for the best kernels"))
        elif hw == "same_compute_capability":
            out.append(_finding("error", f"built for {built_for} (hardware compatibility SAME_COMPUTE_CAPABILITY), this "
                                f"GPU is {name}: it will not load", "rebuild the engine on this GPU"))
        else:
            out.append(_finding("error", f"built for {built_for}"
                                + (f" on {facts['device']}" if facts.get("device") else "")
                                + f", this GPU is {name}: the engine cannot be deserialized here",
                                "rebuild it on this GPU, or build with --hardwareCompatibilityLevel=ampere+ "
                                "(TensorRT >= 8.6, SM80+ GPUs) for an engine that moves between GPUs"))
    return out


def compat_text(findings: list[dict[str, str]]) -> list[str]:
    """One line per finding for text outputs: ``warning: message (hint)``."""
    return [f"{f['severity']}: {f['message']}" + (f" ({f['hint']})" if f.get("hint") else "") for f in findings]


def machine_findings(engine: Any, files: list[str] | None = None, machine: Machine | None = None) -> list[Any]:
    """:func:`compare_engine` as :class:`~trtstudio.engine.model.Finding` objects (kind
    ``engine_vs_machine``) for ``engine.findings``; ``files`` are searched for a serialized plan."""
    from trtstudio.engine.model import Finding

    plan = next((f for f in files or [] if read_plan_header(f) is not None), None)
    return [Finding("engine_vs_machine", f["severity"], f["message"], f["hint"])
            for f in compare_engine(engine, plan, machine)]


def plan_summary(path: str | os.PathLike[str]) -> str | None:
    """'a TensorRT-RTX 1.7.1 plan for SM86, SM120' from the header, or None."""
    head = read_plan_header(path)
    if head is None:
        return None
    label = "TensorRT-RTX" if head["kind"] == "tensorrt_rtx" else "TensorRT"
    text = f"a {label}{' ' + head['version'] if head.get('version') else ''} plan"
    if head.get("targets"):
        text += " for " + ", ".join("SM" + c.replace(".", "") for c in head["targets"])
    return text
