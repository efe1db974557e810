"""Byte-compile the trtstudio package before a benchmark times a fresh ``trtstudio`` process.

``pip install`` compiles a package's modules when it installs them, and an editable install
writes each module's bytecode the first time it is imported. A checkout where Python never
writes bytecode (``PYTHONDONTWRITEBYTECODE=1``, as in this project's sandbox) compiles every
trtstudio module from source at each launch instead: 0.2 s before the window shows here. The
launch-time benchmarks compile first (into the git-ignored ``__pycache__`` folders), so that
they time what an installed program does; ``--from-source`` times the other.
"""

from __future__ import annotations

import compileall
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "trtstudio"


def compile_package() -> bool:
    """Write the bytecode of every trtstudio module that has none or an outdated one; True when
    every module compiled."""
    return bool(compileall.compile_dir(str(PACKAGE), quiet=1))
