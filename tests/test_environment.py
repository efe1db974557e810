"""trtstudio.environment: package/driver checks without heavy imports, fixes for what is missing."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from importlib import metadata

import pytest

from trtstudio import environment
from trtstudio.environment import check_environment, format_table
from trtstudio.runtimes.listing import runtime_items

KEYS = {"name", "status", "version", "detail", "fix"}
HEAVY = ("onnxruntime", "tensorrt", "tensorrt_rtx", "pycuda", "pynvml", "cuda", "PySide6", "pyqtgraph", "onnx",
         "numpy")


def by_name(items: list[dict]) -> dict[str, dict]:
    return {it["name"]: it for it in items}


def test_entries_have_the_keys_and_known_statuses() -> None:
    items = check_environment()
    names = [it["name"] for it in items]
    for expected in ("onnxruntime", "tensorrt", "tensorrt_rtx", "pycuda", "nvidia-ml-py", "cuda-python", "PySide6",
                     "pyqtgraph", "onnx", "NVIDIA driver", "CUDA driver"):
        assert expected in names
    for it in items:
        assert KEYS <= set(it), it
        assert it["status"] in ("ok", "missing", "warning")
        if it["status"] == "ok":
            assert it["fix"] is None
        if it["status"] == "missing":
            assert it["fix"], f"{it['name']} is missing without a fix"


def test_versions_come_from_package_metadata() -> None:
    items = by_name(check_environment())
    assert items["onnx"]["status"] == "ok" and items["onnx"]["version"] == metadata.version("onnx")
    assert items["Python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    for name, module in (("onnxruntime", "onnxruntime"), ("tensorrt_rtx", "tensorrt_rtx"), ("pycuda", "pycuda"),
                         ("tensorrt", "tensorrt")):
        installed = importlib.util.find_spec(module) is not None
        assert (items[name]["status"] != "missing") == installed, items[name]


def test_surely_missing_module_is_missing_with_its_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = ("zz-missing", "trtstudio_surely_missing_module", ("trtstudio-surely-missing-dist",), None, False,
            'pip install "trtstudio[zz]"')
    monkeypatch.setattr(environment, "_PACKAGES", (*environment._PACKAGES, fake))
    item = by_name(check_environment())["zz-missing"]
    assert item["status"] == "missing"
    assert item["version"] is None
    assert item["fix"] == 'pip install "trtstudio[zz]"'
    assert 'fix: pip install "trtstudio[zz]"' in format_table([item])


def test_too_old_version_is_a_warning_with_an_upgrade(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = ("onnx-new", "onnx", ("onnx",), "9999.0", True, "pip install onnx")
    monkeypatch.setattr(environment, "_PACKAGES", (*environment._PACKAGES, fake))
    item = by_name(check_environment())["onnx-new"]
    assert item["status"] == "warning"
    assert "9999.0" in item["detail"] and item["fix"] == 'pip install -U "onnx>=9999.0"'


def test_missing_fixes_name_the_project_extras() -> None:
    fixes = {it["name"]: it["fix"] for it in check_environment() if it["fix"]}
    for it in environment._PACKAGES:
        assert it[5]  # every package has a fix text ready
    fix = dict((p[0], p[5]) for p in environment._PACKAGES)
    assert "trtstudio[ort]" in fix["onnxruntime"]
    assert "trtstudio[rtx]" in fix["tensorrt_rtx"]
    assert "trtstudio[tensorrt]" in fix["tensorrt"] and "pypi.nvidia.com" in fix["tensorrt"]
    assert all(isinstance(v, str) for v in fixes.values())


def _modules_after(call: str) -> list[str]:
    code = (f"import json, sys\nimport trtstudio.environment as e\n{call}\n"
            f"print(json.dumps(sorted(m for m in {list(HEAVY)!r} if m in sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_no_heavy_import_without_probe_gpu() -> None:
    assert _modules_after("items = e.check_environment()") == []


def test_probe_gpu_loads_nvml_and_lists_providers() -> None:
    loaded = _modules_after("items = e.check_environment(probe_gpu=True)")
    if importlib.util.find_spec("pynvml") is not None:
        assert "pynvml" in loaded
    items = by_name(check_environment(probe_gpu=True))
    driver = items["NVIDIA driver"]
    assert driver["status"] in ("ok", "missing", "warning") and "not probed" not in driver["detail"]
    if driver["status"] == "ok":
        assert driver["version"] and driver["gpus"] and all(g["name"] for g in driver["gpus"])
    else:
        assert driver["fix"]
    cuda = items["CUDA driver"]
    assert "not probed" not in cuda["detail"]
    if cuda["status"] == "ok":
        assert cuda["version"].count(".") == 1
    if importlib.util.find_spec("onnxruntime") is not None:
        assert "CPUExecutionProvider" in items["onnxruntime"]["providers"]


def _expected_exit() -> int:
    """1 when a required package is missing here (say on a GPU box without PySide6), else 0."""
    return int(any(it["required"] and it["status"] == "missing" for it in check_environment()))


def test_module_cli_json() -> None:
    proc = subprocess.run([sys.executable, "-m", "trtstudio.environment", "--json", "--no-gpu"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == _expected_exit(), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "trtstudio.environment/1"
    # the packages and driver, then the runtimes an upgrade check can use (this Python's, the managed ones)
    assert [it["name"] for it in doc["items"]] == [it["name"] for it in check_environment() + runtime_items(probe_gpu=False)]


def test_module_cli_text_lists_every_entry() -> None:
    proc = subprocess.run([sys.executable, "-m", "trtstudio.environment", "--no-gpu"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == _expected_exit()
    for it in check_environment():
        assert it["name"] in proc.stdout
