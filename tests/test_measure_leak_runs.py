"""Memory-growth verdicts of real ONNX Runtime runs: a leak is caught, a flat run stays stable, and
neither changes with a CPU hog beside the run (issue 28 item 3)."""

from __future__ import annotations

import contextlib
import functools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import onnx
import onnx_models as models
import pytest
from backend_doubles import LeakingOrtBackend, failing_factory

from trtstudio.profiling.memory import MemoryMonitor
from trtstudio.profiling.session import ProfileRequest, run_profile

pytest.importorskip("onnxruntime")


class FlatOrtBackend(LeakingOrtBackend):
    """Test double: the same backend keeping nothing."""

    keep_bytes = 0


@contextlib.contextmanager
def cpu_hogs(n: int = 2) -> Iterator[None]:
    """``n`` busy-looping processes beside the run (a loaded machine)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def _verdict(model: Path, cls: type[LeakingOrtBackend]) -> dict[str, Any]:
    factory = functools.partial(failing_factory, cls=cls)
    monitor = MemoryMonitor(probes=[], interval_ms=0)  # one reading per inference
    out = run_profile(ProfileRequest(str(model), iterations=400, warmup=5), monitor=monitor, factory=factory)
    leak = dict(out.result.memory_summary()["host_rss_bytes"]["leak"])
    leak["warnings"] = out.result.warnings()
    return leak


def test_a_leak_is_caught_and_a_flat_run_is_not_quiet_or_loaded(tmp_path: Path) -> None:
    model = tmp_path / "conv.onnx"
    onnx.save(models.conv_net(), model)
    quiet = {cls.__name__: _verdict(model, cls) for cls in (LeakingOrtBackend, FlatOrtBackend)}
    with cpu_hogs():
        loaded = {cls.__name__: _verdict(model, cls) for cls in (LeakingOrtBackend, FlatOrtBackend)}
    for runs in (quiet, loaded):
        leak, flat = runs["LeakingOrtBackend"], runs["FlatOrtBackend"]
        assert leak["verdict"] == "growing", leak
        # 256 KiB per inference is 250 MiB per 1,000; less shows where the buffers reuse heap that other
        # work in this process freed (resident already), never more
        ev = leak["evidence"]
        assert 100 < ev["low_mib_per_1k"] <= ev["slope_mib_per_1k"] < 255
        assert ev["excluded"][0]["why"] == "warm-up" and ev["points"] >= 250
        assert any(w.startswith("memory growing (host RSS)") for w in leak["warnings"])
        assert flat["verdict"] == "stable", flat
        assert not any("memory growing" in w for w in flat["warnings"])
