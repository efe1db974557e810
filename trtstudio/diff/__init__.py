"""What changed between two builds: aligned layer groups with change labels, a time verdict with its
interval, provenance, and a CI gate (``trtstudio diff``). See :mod:`trtstudio.diff.core`."""

import sys as _sys
import types as _types
from importlib import import_module as _import_module
from typing import Any as _Any


class _CallableModule(_types.ModuleType):
    """``trtstudio.diff(base, *others)`` is the public API's function (:func:`trtstudio.api.diff`)
    whether Python has bound the name to this package (once imported) or to the function."""

    def __call__(self, *args: _Any, **kwargs: _Any) -> _Any:
        return _import_module("trtstudio.api").diff(*args, **kwargs)  # on first use (PEP 562, as above)


_sys.modules[__name__].__class__ = _CallableModule
