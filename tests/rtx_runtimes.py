"""TensorRT-RTX runtimes for the upgrade-check tests, installed by the product's own ``runtimes add``
(:func:`trtstudio.runtimes.manage.add`) into a cache kept between runs (like the Triton tests'
``~/.cache/trtstudio-triton-venv``). ``Unavailable`` when they are missing and cannot be installed
(the index is unreachable, pip fails): the tests skip, naming why."""

from __future__ import annotations

import os
import urllib.request
from pathlib import Path
from typing import Any

CACHE = Path(os.environ.get("TRTSTUDIO_TEST_RUNTIMES", Path.home() / ".cache" / "trtstudio-test-runtimes"))
VERSIONS = ("1.5.0.114", "1.6.1.120")  # two versions besides the tensorrt_rtx of the test environment


class Unavailable(RuntimeError):
    """The runtimes are not there and cannot be installed here."""


def _index_reachable() -> str | None:
    try:
        with urllib.request.urlopen("https://pypi.org/simple/tensorrt-rtx-cu13/", timeout=15) as r:
            return None if r.status == 200 else f"PyPI answered {r.status}"
    except OSError as exc:
        return f"PyPI is unreachable ({exc})"


def runtimes(versions: tuple[str, ...] = VERSIONS) -> list[str]:
    """The managed runtimes of ``versions`` under :data:`CACHE` (installed where missing): their names."""
    return [rt.name for rt in installed(versions)]


def installed(versions: tuple[str, ...] = VERSIONS) -> list[Any]:
    """The managed runtimes (``trtstudio.runtimes.manage.Runtime``) of ``versions`` under :data:`CACHE`,
    installed where missing."""
    from trtstudio.errors import BackendError, InputError
    from trtstudio.runtimes import manage

    have = {r.version: r for r in manage.list_runtimes(CACHE) if Path(r.python).exists()}
    missing = [v for v in versions if v not in have]
    if missing:
        why = _index_reachable()
        if why:
            raise Unavailable(f"tensorrt-rtx-cu13 {', '.join(missing)} not in {CACHE} and {why}")
        for v in missing:
            try:
                have[v] = manage.add(f"tensorrt-rtx=={v}", CACHE)
            except (BackendError, InputError) as exc:
                raise Unavailable(f"runtimes add tensorrt-rtx=={v}: {exc}") from None
    return [have[v] for v in versions]
