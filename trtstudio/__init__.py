"""trtstudio: an open desktop profiler for NVIDIA TensorRT engines and ONNX models, and a Python library.

The public API (documented in :mod:`trtstudio.api`; semantic versioning, see README "Python API")::

    import trtstudio as ts
    plan = ts.open_engine("engine_folder")       # EnginePlan: .layers .df .findings .summary() .provenance
    ts.diff(plan, ts.open_engine("other"))       # Diff
    ts.compare(plan, "other_engine_folder")      # Comparison
    ts.explain(plan, against=...)                # Explanation
    ts.profile("model.onnx")                     # ProfileResult
    ts.report(model=..., engine=plan).save("r.html")

The names are looked up on first use (PEP 562): ``import trtstudio`` imports none of them, nor
numpy, pandas, Qt or ONNX Runtime (``benchmarks/startup.py`` measures it).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from trtstudio._version import __version__

if TYPE_CHECKING:
    from trtstudio.api import (
        SVG,
        Comparison,
        Diff,
        EnginePlan,
        EngineWarning,
        Explanation,
        ModelInfo,
        ProfileResult,
        ReportDoc,
        Summary,
        compare,
        diff,
        explain,
        open_engine,
        open_model,
        profile,
        report,
    )
    from trtstudio.diff.mismatch import MismatchWarning

__all__ = ["SVG", "Comparison", "Diff", "EnginePlan", "EngineWarning", "Explanation", "MismatchWarning", "ModelInfo",
           "ProfileResult", "ReportDoc", "Summary", "__version__", "compare", "diff", "explain", "open_engine",
           "open_model", "profile", "report"]
_ELSEWHERE = {"MismatchWarning": "trtstudio.diff.mismatch"}  # public names not defined in trtstudio.api


def __getattr__(name: str) -> Any:
    if name in __all__ and name != "__version__":
        value = getattr(import_module(_ELSEWHERE.get(name, "trtstudio.api")), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'trtstudio' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
