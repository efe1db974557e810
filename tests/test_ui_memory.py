"""The window's process keeps freed memory for its next allocations (trtstudio.ui.app): blocks of
megabytes freed and made again are not faulted in from the kernel page by page each time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FAULTS = r"""
import resource, sys
if sys.argv[1] == "kept":
    from trtstudio.ui.app import _keep_freed_memory
    _keep_freed_memory()
out = []
for i in range(4):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    block = bytearray(16 << 20)  # 16 MB, zeroed: every page touched
    out.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    del block
print(*out)
"""


def _glibc() -> bool:
    try:
        return sys.platform.startswith("linux") and (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (ValueError, OSError, AttributeError):
        return False


@pytest.mark.skipif(not _glibc(), reason="glibc's mallopt")
def test_a_block_freed_and_made_again_is_not_faulted_in_again() -> None:
    faults = {}
    for mode in ("default", "kept"):
        res = subprocess.run([sys.executable, "-c", FAULTS, mode], capture_output=True, text=True, timeout=60,
                             check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        faults[mode] = [int(x) for x in res.stdout.split()]
    pages = (16 << 20) // os.sysconf("SC_PAGE_SIZE")
    assert faults["kept"][0] > pages // 2  # the first block comes from the kernel
    assert max(faults["kept"][1:]) < pages // 10, faults  # the next ones reuse it
    assert faults["default"][1] > pages // 2, faults  # glibc's default gave it back once more
