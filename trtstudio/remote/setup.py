"""``trtstudio remote check`` and ``remote setup``: what a target can run, and installing trtstudio there.

The target needs Python 3.10+ and trtstudio's core (no Qt). ``setup`` builds a wheel of the
trtstudio running here (``pip wheel`` of its source checkout; else the installed distribution's
files and metadata packed again, as ``pip install`` or a wheel left them; or a wheel the user
names), copies it through the SSH channel and installs it with ``pip install --no-deps --no-index``, so the
target needs no internet. ``--with-deps`` downloads the core's dependencies here (PyPI, for the
target's Python version and CPU) and installs them the same way.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from trtstudio.remote.target import RemoteError, Target, first_line

SCHEMA = "trtstudio.remote/1"
CORE_DEPS = ("numpy", "onnx", "psutil", "orjson", "msgspec")
_PACKAGE_INIT = Path(__file__).resolve().parents[1] / "__init__.py"  # the running trtstudio's


def facts(target: Target) -> dict[str, Any]:
    """The target's ``hello``: host, environment report, checks, L4T, tegrastats."""
    proc = target.run(words=[target.python, "-m", "trtstudio.remote.agent", "facts"], timeout=120)
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("kind") == "hello":
            return msg
    err = first_line(proc.stderr)
    gone = re.search(r"No module named '([\w.]+)'", err)
    if gone and gone.group(1).split(".")[0] != "trtstudio":  # trtstudio is there, one of its dependencies not
        raise RemoteError(target.url, f"trtstudio is installed for {target.python} there but its dependency "
                                      f"'{gone.group(1).split('.')[0]}' is not; "
                                      f"run: trtstudio remote setup {target.url} --with-deps")
    if gone or proc.returncode == 127:
        raise RemoteError(target.url, f"trtstudio is not installed for {target.python} there ({err or 'not found'}); "
                                      f"run: trtstudio remote setup {target.url}")
    raise RemoteError(target.url, f"the target did not answer with its facts: {err or f'exit {proc.returncode}'}")


def missing_deps(target: Target) -> list[str]:
    code = ("import importlib.util as u, json; "
            f"print(json.dumps([m for m in {list(CORE_DEPS)!r} if u.find_spec(m) is None]))")
    proc = target.run(words=[target.python, "-c", code])
    try:
        return list(json.loads(proc.stdout.decode().strip().splitlines()[-1]))
    except (ValueError, IndexError):
        raise RemoteError(target.url, f"{target.python} does not run there: {first_line(proc.stderr)}") from None


def check(url: str) -> dict[str, Any]:
    """The ``remote check`` document."""
    target = Target.parse(url)
    target.check_reachable()
    hello = facts(target)
    return {"schema": SCHEMA, "target": target.label, "host": hello.get("host"), "l4t": hello.get("l4t"),
            "tegrastats": hello.get("tegrastats"), "environment": hello.get("environment"),
            "checks": hello.get("checks") or [], "missing_deps": missing_deps(target)}


def build_wheel(out: Path) -> Path:
    """A wheel of the trtstudio running here: from its source checkout when it runs from one, else
    its installed distribution packed again (:func:`wheel_from_distribution`)."""
    root = _PACKAGE_INIT.parents[1]
    if not (root / "pyproject.toml").is_file():
        return wheel_from_distribution(out)
    base = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(root)]
    proc = subprocess.run(base, capture_output=True, check=False)
    if proc.returncode != 0:  # no index reachable for the build backend: try the one installed here
        proc = subprocess.run([*base, "--no-build-isolation"], capture_output=True, check=False)
    wheels = sorted(out.glob("trtstudio-*.whl"))
    if proc.returncode != 0 or not wheels:
        raise RemoteError(None, f"could not build a wheel of trtstudio here: {first_line(proc.stderr)}")
    return wheels[-1]


# what pip writes at install time (not part of a wheel); RECORD is written afresh
_INSTALL_ONLY = {"INSTALLER", "REQUESTED", "RECORD", "direct_url.json"}


def _running_distribution() -> Any:
    """The installed distribution whose files are the trtstudio running here (not another copy of it
    on the path, nor an editable install pointing elsewhere)."""
    from importlib import metadata

    here = _PACKAGE_INIT
    for dist in metadata.distributions(name="trtstudio"):
        try:
            if Path(str(dist.locate_file("trtstudio/__init__.py"))).resolve() == here and any(
                    str(f).replace("\\", "/") == "trtstudio/__init__.py" for f in dist.files or ()):
                return dist
        except OSError:
            continue
    raise RemoteError(None, f"the trtstudio running here ({here.parent}) has neither a source checkout nor "
                            "installed metadata to pack; give its wheel with --wheel")


def _add(zf: Any, rel: str, data: bytes) -> str:
    """Write one file into the wheel; its RECORD line."""
    zf.writestr(rel, data)
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{rel},sha256={digest},{len(data)}"


def wheel_from_distribution(out: Path) -> Path:
    """Pack the installed trtstudio again as a wheel: the files its RECORD lists inside site-packages
    (the package and its ``.dist-info``: METADATA, WHEEL, entry points, licences), without byte code,
    the scripts pip generated or install-time files; a new RECORD with each file's hash and size."""
    import zipfile

    dist = _running_distribution()
    rels = sorted({str(f).replace("\\", "/") for f in dist.files or ()})
    info_name = next((r.split("/")[0] for r in rels if r.endswith(".dist-info/METADATA") and r.count("/") == 1), "")
    if not info_name:
        raise RemoteError(None, "the installed trtstudio has no METADATA to pack; give its wheel with --wheel")
    wheel_meta = dist.read_text("WHEEL") or \
        "Wheel-Version: 1.0\nGenerator: trtstudio\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    tags = [ln.split(":", 1)[1].strip() for ln in wheel_meta.splitlines() if ln.startswith("Tag:")]
    keep = [r for r in rels if not r.startswith("../") and "__pycache__/" not in r and not r.endswith(".pyc")
            and not (r.startswith(info_name + "/") and r.split("/", 1)[1] in _INSTALL_ONLY)]
    if "trtstudio/__init__.py" not in keep:
        raise RemoteError(None, "the installed trtstudio's RECORD lists no package files; give its wheel with --wheel")
    parts = zip(*(t.split("-") for t in tags or ["py3-none-any"]), strict=True)  # python, abi, platform
    tag = "-".join(".".join(sorted(set(p))) for p in parts)
    target = out / f"{info_name[:-len('.dist-info')]}-{tag}.whl"
    record = []
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel in keep:
            src = Path(str(dist.locate_file(rel)))
            if not src.is_file():
                raise RemoteError(str(src), "listed in the installed trtstudio's RECORD but missing; "
                                            "reinstall trtstudio or give its wheel with --wheel")
            record.append(_add(zf, rel, src.read_bytes()))
        if f"{info_name}/WHEEL" not in keep:
            record.append(_add(zf, f"{info_name}/WHEEL", wheel_meta.encode()))
        record.append(f"{info_name}/RECORD,,")
        zf.writestr(f"{info_name}/RECORD", "\n".join(record) + "\n")
    return target


def _pip_install(target: Target, wheels: list[str]) -> None:
    base = [target.python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--force-reinstall",
            "--disable-pip-version-check"]
    proc = target.run(words=[*base, *wheels], timeout=600)
    if proc.returncode != 0 and b"ermission" in proc.stderr:  # a system Python: into the user's site
        proc = target.run(words=[*base, "--user", *wheels], timeout=600)
    if proc.returncode != 0 and b"externally-managed" in proc.stderr:
        proc = target.run(words=[*base, "--user", "--break-system-packages", *wheels], timeout=600)
    if proc.returncode != 0:
        raise RemoteError(target.url, f"pip install failed there: {first_line(proc.stderr)}")


def _dep_wheels(target: Target, out: Path) -> list[Path]:
    """The core's dependencies as wheels for the target's Python and CPU (downloaded here)."""
    code = "import sys, platform; print(f'{sys.version_info[0]}.{sys.version_info[1]} {platform.machine()}')"
    ver, machine = target.run(words=[target.python, "-c", code]).stdout.decode().split()
    plats = [f"--platform={p}_{machine}" for p in ("manylinux2014", "manylinux_2_17", "manylinux_2_28", "linux")]
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", f"--python-version={ver}",
                           *plats, "-d", str(out), *CORE_DEPS], capture_output=True, check=False)
    if proc.returncode != 0:
        raise RemoteError(None, f"could not download the dependencies for Python {ver} on {machine}: "
                                f"{first_line(proc.stderr)}")
    return sorted(out.glob("*.whl"))


def setup(url: str, wheel: str | None = None, with_deps: bool = False) -> dict[str, Any]:
    """Install trtstudio (and with ``with_deps`` its core dependencies) on the target; then check it."""
    target = Target.parse(url)
    target.check_reachable()
    with tempfile.TemporaryDirectory(prefix="trtstudio-setup-") as td:
        tmp = Path(td)
        local = Path(wheel) if wheel else build_wheel(tmp)
        if not local.is_file():
            raise RemoteError(str(local), "no such wheel")
        shipped = []
        if with_deps:
            deps = tmp / "deps"
            deps.mkdir()
            shipped = [target.put(w) for w in _dep_wheels(target, deps)]
        if shipped:
            _pip_install(target, shipped)
        _pip_install(target, [target.put(local)])
    doc = check(url)
    doc["installed"] = local.name
    return doc
