"""Runtimes: the Python environments an upgrade check builds with.

A runtime is a Python interpreter whose environment holds one TensorRT or TensorRT-RTX version. It is
given as a virtual environment's folder (or its ``python``), or it is *managed*: ``trtstudio runtimes
add tensorrt-rtx==1.5.0.114`` creates a virtual environment under :func:`runtimes_root` holding that
version, trtstudio's core dependencies, onnxruntime (the shape plan's probe and the FP16 converter
use it, as they do here) and a wheel of this trtstudio, and remembers it by a record file in its
folder (``trtstudio-runtime.json``): the folder is the memory, so ``runtimes list`` is a scan and
``runtimes remove`` deletes the folder. pip installs from the index (PyPI; full TensorRT also from
NVIDIA's index) and reuses its own cache, so a second environment of a version already downloaded
costs no download.

Children run this trtstudio, not the one installed in the runtime: :func:`child_env` puts a folder
holding only a link to this package first on ``PYTHONPATH`` (so its build documents are the ones this
trtstudio reads), and a user's environment needs only the runtime and the core dependencies.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trtstudio.errors import BackendError, InputError

SCHEMA = "trtstudio.runtimes/1"
RECORD = "trtstudio-runtime.json"
NVIDIA_INDEX = "https://pypi.nvidia.com"
# what a managed runtime holds besides the TensorRT package (remote/setup.py's CORE_DEPS, and
# onnxruntime, which the build's shape probe and precision converter use where it is installed)
RUNTIME_DEPS = ("numpy", "onnx", "psutil", "orjson", "msgspec", "onnxruntime")
# distributions that provide each runtime module, the first the default for a bare name
_DISTS = {
    "tensorrt-rtx": ("tensorrt-rtx-cu13", "tensorrt_rtx"),
    "tensorrt-rtx-cu13": ("tensorrt-rtx-cu13", "tensorrt_rtx"),
    "tensorrt-rtx-cu12": ("tensorrt-rtx-cu12", "tensorrt_rtx"),
    "tensorrt": ("tensorrt", "tensorrt"),
    "tensorrt-cu13": ("tensorrt-cu13", "tensorrt"),
    "tensorrt-cu12": ("tensorrt-cu12", "tensorrt"),
}
_SPEC = re.compile(r"^\s*([A-Za-z0-9_.-]+?)\s*(?:==\s*([0-9][0-9A-Za-z.+-]*))?\s*$")
# run in a runtime's Python: what it holds, read from package metadata (imports nothing heavy)
_PROBE = r"""
import json, platform, sys
from importlib import metadata, util
def v(d):
    try:
        return metadata.version(d)
    except metadata.PackageNotFoundError:
        return None
dists = {d: v(d) for d in %r}
mods = {m: util.find_spec(m) is not None for m in ("tensorrt_rtx", "tensorrt")}
print(json.dumps({"python_version": platform.python_version(), "dists": dists, "modules": mods,
                  "trtstudio": v("trtstudio"), "missing": [m for m in %r if util.find_spec(m) is None]}))
"""


@dataclass
class Runtime:
    """One runtime: its ``python``, the environment's folder (``prefix``), the TensorRT ``module`` it
    holds (``tensorrt_rtx`` or ``tensorrt``), that module's distribution (``package``) and ``version``."""

    name: str
    python: str
    prefix: str
    managed: bool = False
    module: str | None = None
    package: str | None = None
    version: str | None = None
    python_version: str | None = None
    trtstudio: str | None = None  # the trtstudio version installed there (children run this one)
    missing: list[str] = field(default_factory=list)  # core dependencies the environment lacks
    spec: str | None = None  # what ``runtimes add`` was given

    @property
    def label(self) -> str:
        """``tensorrt_rtx 1.5.0.114`` (or the name where the environment holds no TensorRT)."""
        return f"{self.module} {self.version}" if self.module and self.version else self.name

    def problem(self) -> str | None:
        """Why this runtime cannot build, or None."""
        if not Path(self.python).exists():
            return f"its Python {self.python} is gone"
        if not self.module:
            return "holds neither tensorrt_rtx nor tensorrt"
        if self.missing:
            return f"lacks {', '.join(self.missing)} (pip install {' '.join(self.missing)} there)"
        return None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "python": self.python, "prefix": self.prefix,
                "managed": self.managed, "module": self.module, "package": self.package, "version": self.version,
                "python_version": self.python_version, "trtstudio": self.trtstudio, "missing": self.missing,
                "spec": self.spec, "problem": self.problem()}


def runtimes_root(root: str | os.PathLike[str] | None = None) -> Path:
    """Where managed runtimes live: ``root``, else ``$TRTSTUDIO_RUNTIMES``, else
    ``$XDG_DATA_HOME/trtstudio/runtimes`` (``~/.local/share/trtstudio/runtimes``)."""
    if root is not None:
        return Path(root)
    if os.environ.get("TRTSTUDIO_RUNTIMES"):
        return Path(os.environ["TRTSTUDIO_RUNTIMES"])
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "trtstudio" / "runtimes"


def parse_spec(spec: str) -> tuple[str, str, str | None]:
    """``tensorrt-rtx==1.5.0.114`` -> (distribution ``tensorrt-rtx-cu13``, module ``tensorrt_rtx``,
    version ``1.5.0.114``); a bare name gives the latest version (None)."""
    m = _SPEC.match(spec)
    key = m.group(1).lower().replace("_", "-") if m else ""
    if not m or key not in _DISTS:
        raise InputError(spec, "not a runtime to install: write tensorrt-rtx==VERSION (tensorrt-rtx-cu13, "
                               "tensorrt-rtx-cu12) or tensorrt==VERSION (tensorrt-cu12, tensorrt-cu13)")
    dist, module = _DISTS[key]
    return dist, module, m.group(2)


def _runtime_name(dist: str, version: str) -> str:
    return f"{dist}-{version}"


def _python_of(prefix: Path) -> Path:
    return prefix / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def probe(python: str | os.PathLike[str]) -> dict[str, Any]:
    """What the environment of ``python`` holds (package metadata, read in a child; nothing heavy is
    imported): ``python_version``, ``dists`` (TensorRT distributions -> version), ``modules``,
    ``trtstudio`` and the core dependencies it lacks."""
    dists = sorted({d for d, _ in _DISTS.values()} | {"tensorrt-rtx", "tensorrt_rtx"})
    script = _PROBE % (dists, ["numpy", "onnx", "orjson", "msgspec"])
    try:
        proc = subprocess.run([str(python), "-I", "-c", script], capture_output=True, text=True, timeout=60,
                              env=child_env(None))
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(python, f"cannot run this Python: {exc}") from None
    if proc.returncode != 0:
        raise InputError(python, f"this Python failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    return dict(json.loads(proc.stdout))


def _from_probe(name: str, python: Path, prefix: Path, facts: dict[str, Any], managed: bool,
                record: dict[str, Any] | None = None) -> Runtime:
    rt = Runtime(name=name, python=str(python), prefix=str(prefix), managed=managed,
                 python_version=facts.get("python_version"), trtstudio=facts.get("trtstudio"),
                 missing=list(facts.get("missing") or []), spec=(record or {}).get("spec"))
    for dist, version in (facts.get("dists") or {}).items():
        if version:
            rt.package, rt.version = dist, version
            rt.module = "tensorrt_rtx" if "rtx" in dist else "tensorrt"
            if rt.module == "tensorrt_rtx" or not (facts.get("modules") or {}).get("tensorrt_rtx"):
                break
    if rt.module and not (facts.get("modules") or {}).get(rt.module):
        rt.missing.append(rt.module)
    return rt


def _read_record(prefix: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads((prefix / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("schema") == SCHEMA else None


def _from_record(prefix: Path, doc: dict[str, Any]) -> Runtime:
    return Runtime(name=str(doc.get("name") or prefix.name), python=str(_python_of(prefix)), prefix=str(prefix),
                   managed=True, module=doc.get("module"), package=doc.get("package"), version=doc.get("version"),
                   python_version=doc.get("python_version"), trtstudio=doc.get("trtstudio"), spec=doc.get("spec"))


def list_runtimes(root: str | os.PathLike[str] | None = None) -> list[Runtime]:
    """The managed runtimes under ``root`` (their records; nothing is run), by module and version."""
    base = runtimes_root(root)
    out = []
    for prefix in sorted(base.iterdir()) if base.is_dir() else []:
        doc = _read_record(prefix) if prefix.is_dir() else None
        if doc is not None:
            out.append(_from_record(prefix, doc))
    return sorted(out, key=lambda r: (r.module or "", _version_key(r.version), r.name))


def _version_key(version: str | None) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version or ""))


def _pip(python: Path, args: list[str], what: str, log: Any = None) -> None:
    cmd = [str(python), "-m", "pip", "install", "--disable-pip-version-check", *args]
    if log is not None:
        log(" ".join(cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=child_env(None))
    if proc.returncode != 0:
        err = [ln for ln in proc.stderr.strip().splitlines() if ln.startswith("ERROR")] or proc.stderr.strip().splitlines()
        raise BackendError(f"pip could not install {what}: {(err or ['no message'])[-1][:300]}")


def add(spec: str, root: str | os.PathLike[str] | None = None, *, find_links: list[str] | None = None,
        python: str | None = None, log: Any = None) -> Runtime:
    """Create the managed runtime ``spec`` names (``tensorrt-rtx==1.5.0.114``) under :func:`runtimes_root`,
    or return it where it exists already. ``find_links``: folders of wheels pip also looks in;
    ``python``: the interpreter the environment is made from (default: this one's); ``log(line)``
    receives each command run. A failed install leaves nothing behind (BackendError with pip's line)."""
    dist, module, version = parse_spec(spec)
    base = runtimes_root(root)
    if version:
        existing = next((r for r in list_runtimes(base) if r.package == dist and r.version == version), None)
        if existing is not None and Path(existing.python).exists():
            return existing
    base.mkdir(parents=True, exist_ok=True)
    prefix = Path(tempfile.mkdtemp(prefix=f".{dist}-", dir=base))  # renamed once its version is known
    shutil.rmtree(prefix)
    try:
        rt = _install(spec, dist, module, version, prefix, find_links or [], python, log)
    except BaseException:
        shutil.rmtree(prefix, ignore_errors=True)
        raise
    final = base / rt.name
    if final.exists():  # made meanwhile (another add of the same version): keep that one
        shutil.rmtree(prefix, ignore_errors=True)
        return _from_record(final, _read_record(final) or {})
    # a venv's own Python finds its environment from where it lies, so the folder may be renamed;
    # the console scripts' first lines name the old path: rewrite them
    prefix.rename(final)
    _fix_scripts(final, prefix)
    return _from_record(final, _read_record(final) or {})


def _install(spec: str, dist: str, module: str, version: str | None, prefix: Path, find_links: list[str],
             python: str | None, log: Any) -> Runtime:
    import venv  # noqa: F401 - fail early with a clear message where the standard library lacks it

    base_python = python or getattr(sys, "_base_executable", None) or sys.executable
    cmd = [base_python, "-m", "venv", str(prefix)]
    if log is not None:
        log(" ".join(cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=child_env(None))
    if proc.returncode != 0:
        raise BackendError(f"cannot create a virtual environment with {base_python}: "
                           f"{(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    py = _python_of(prefix)
    extra = [a for d in find_links for a in ("--find-links", d)]
    if module == "tensorrt":
        extra += ["--extra-index-url", NVIDIA_INDEX]
    _pip(py, [f"{dist}=={version}" if version else dist, *RUNTIME_DEPS, *extra], spec, log)
    from trtstudio.remote.setup import build_wheel

    with tempfile.TemporaryDirectory(prefix="trtstudio-wheel-") as tmp:
        wheel = build_wheel(Path(tmp))
        _pip(py, ["--no-deps", "--force-reinstall", str(wheel)], "this trtstudio", log)
    facts = probe(py)
    rt = _from_probe("", py, prefix, facts, managed=True)
    if rt.module != module or not rt.version:
        raise BackendError(f"{spec}: the environment holds no {module} after pip's install")
    rt.name, rt.spec = _runtime_name(dist, rt.version), spec
    record = {"schema": SCHEMA, "name": rt.name, "spec": spec, "module": rt.module, "package": rt.package,
              "version": rt.version, "python_version": rt.python_version, "trtstudio": rt.trtstudio,
              "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    (prefix / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return rt


def _fix_scripts(prefix: Path, old: Path) -> None:
    """The scripts of ``bin`` (pip's and trtstudio's ``#!`` lines, ``activate``) that name the folder the
    environment was made in."""
    bindir = _python_of(prefix).parent
    for script in bindir.iterdir() if bindir.is_dir() else []:
        if script.is_symlink() or not script.is_file() or script.stat().st_size > 1 << 16:
            continue
        data = script.read_bytes()
        if b"\0" not in data and str(old).encode() in data:
            script.write_bytes(data.replace(str(old).encode(), str(prefix).encode()))


def remove(name: str, root: str | os.PathLike[str] | None = None) -> Runtime:
    """Delete the managed runtime ``name`` (a name, a spec or a version, as :func:`resolve` takes)."""
    rt = _managed(name, list_runtimes(root))
    if rt is None:
        raise InputError(name, _unknown(root))
    shutil.rmtree(rt.prefix)
    return rt


def _unknown(root: str | os.PathLike[str] | None) -> str:
    names = ", ".join(r.name for r in list_runtimes(root)) or "none yet"
    return (f"no such runtime: give a virtual environment's folder, or a managed runtime ({names}; "
            "add one with: trtstudio runtimes add tensorrt-rtx==VERSION)")


def _managed(spec: str, managed: list[Runtime]) -> Runtime | None:
    """The managed runtime named by ``spec``: its name, ``tensorrt-rtx==VERSION`` or a version alone."""
    found = [r for r in managed if r.name == spec]
    if not found and _SPEC.match(spec) and "==" in spec:
        try:
            dist, _, version = parse_spec(spec)
        except InputError:
            dist, version = "", None
        found = [r for r in managed if r.package == dist and r.version == version]
    if not found:
        found = [r for r in managed if r.version == spec.strip()]
    return found[0] if len(found) == 1 else None


def resolve(spec: str, root: str | os.PathLike[str] | None = None) -> Runtime:
    """The runtime ``spec`` names: a virtual environment's folder, a Python interpreter, ``here`` (this
    Python), or a managed runtime (:func:`_managed`). Probes its environment (a child, about 50 ms)."""
    path = Path(spec).expanduser()
    if spec == "here":
        python, prefix, managed, record = Path(sys.executable), Path(sys.prefix), False, None
    elif path.is_dir() or path.is_file():
        python = _python_of(path) if path.is_dir() else path
        if not python.exists():
            raise InputError(spec, f"not a virtual environment: no {python.relative_to(path)} in it")
        prefix = python.parent.parent
        record = _read_record(prefix)
        managed = record is not None
    else:
        rt = _managed(spec, list_runtimes(root))
        if rt is None:
            raise InputError(spec, _unknown(root))
        python, prefix, managed, record = Path(rt.python), Path(rt.prefix), True, _read_record(Path(rt.prefix))
    name = (record or {}).get("name") or (spec if spec == "here" else prefix.name)
    return _from_probe(str(name), python, prefix, probe(python), managed, record)


_SHIM: list[str] = []


def source_shim() -> str:
    """A folder holding only a link to this trtstudio package, for a child's ``PYTHONPATH`` (made once
    per process; the package's own parent where links cannot be made)."""
    if _SHIM:
        return _SHIM[0]
    here = Path(__file__).resolve().parents[1]
    shim = Path(tempfile.mkdtemp(prefix="trtstudio-src-"))
    try:
        (shim / "trtstudio").symlink_to(here, target_is_directory=True)
        import atexit

        atexit.register(shutil.rmtree, shim, True)
        _SHIM.append(str(shim))
    except OSError:
        shutil.rmtree(shim, ignore_errors=True)
        _SHIM.append(str(here.parent))
    return _SHIM[0]


def child_env(pythonpath: str | None) -> dict[str, str]:
    """This process's environment for a child of another Python environment: no ``PYTHONPATH``,
    ``PYTHONHOME`` or ``VIRTUAL_ENV`` of ours (``pythonpath`` instead, where given)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "__PYVENV_LAUNCHER__")}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env
