"""Diagnostics: what in an engine costs time or precision, and what to do about it.

``diagnose(engine, graph=None, unsupported=None, model_precision=None)`` returns a list of
:class:`~trtstudio.engine.model.Finding`. Each finding has a ``kind``, a ``severity`` (``error``,
``warning``, ``info``), the ``layer`` (name and index) or none for engine-level findings, the ONNX
``nodes`` involved (from ``engine.mapping``; a graph given here is mapped first if no layer has
nodes yet), a ``message`` and a ``hint`` saying what to do. "Time share" below is the layer's
``percent`` from the profile, else its time over the sum of all layer times; rules that use it
work without times too.

Rules
-----

One registry, :data:`~trtstudio.engine.diagnose.rules.RULES`, lists the rules in the order their
findings come; each rule is a function in the module of its family, and its docstring is the rule's
paragraph (the kind, its severities, what it looks at; ``Rule.doc``):

``compat`` (:mod:`.compat`): do the files fit together and say enough
    ``names_only``, ``unsupported_node``, ``other_model``.
``plugins`` (:mod:`.plugins`)
    ``plugin``.
``layout`` (:mod:`.layout`): formats, alignment, tensor cores
    ``reformat``, ``no_tensor_cores``, ``unaligned_channels``.
``precision`` (:mod:`.precision`): FP32 islands, INT8 with float output, Q/DQ not fused
    ``precision_fallback``; and the ``reformat`` findings of the quantize/dequantize required at
    the engine's boundary.
``fusion`` (:mod:`.fusion`): what runs as one opaque unit, and the layers between
    ``foreign_node``, ``shape_ops``.

What every rule reads (the layers sorted in one pass, the tensor graph, time shares) is
:class:`~trtstudio.engine.diagnose.context.Ctx` (:mod:`.context`); what a layer is (reformat,
convolution, GEMM, plugin, a kernel on tensor cores) is :mod:`.classify`.

Severity
--------

Each rule gives the severity its kind deserves (its paragraph); then the time at stake decides,
where a profile gives the layer's time share (:func:`by_time`): a layer finding at or above
``TIME_WARN_SHARE`` (5 %) of the engine's time is raised to ``warning``, one below
``TIME_INFO_SHARE`` (2 %, the share at which the reformat and Q/DQ rules already warn) lowered to
``info``; in between the rule's own severity stands. Findings without a layer (engine-level, the
parser's errors, this machine's checks), errors, and the two expected ones (the boundary
quantize/dequantize, a first convolution's image channels: ``Ctx.expected``) keep theirs: a layer
that costs 18 % of the time is not a footnote, and one that costs 1 % is not what to fix first.

The names are looked up on first use (PEP 562): importing the package imports none of its modules,
so its modules importing one another make no circle through this file (every submodule's import
runs it first).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trtstudio.engine.diagnose.classify import (
        FLOAT,
        LOW,
        NO_TENSOR_CORE_MARKERS,
        REDUCED,
        TENSOR_CORE_MARKERS,
        is_conv,
        is_gemm,
        is_plugin,
        is_reformat,
        uses_tensor_cores,
    )
    from trtstudio.engine.diagnose.compat import NAMES_ONLY_HINT
    from trtstudio.engine.diagnose.context import REFORMAT_WARN_SHARE, Ctx
    from trtstudio.engine.diagnose.fusion import SHAPE_WARN_SHARE
    from trtstudio.engine.diagnose.layout import ALIGN, TF32_ALIGN
    from trtstudio.engine.diagnose.plugins import PLUGIN_WARN_SHARE
    from trtstudio.engine.diagnose.precision import io_format
    from trtstudio.engine.diagnose.rules import (
        FAMILIES,
        RULES,
        TIME_INFO_SHARE,
        TIME_WARN_SHARE,
        Rule,
        by_time,
        diagnose,
    )

__all__ = [
    "ALIGN", "FAMILIES", "FLOAT", "LOW", "NAMES_ONLY_HINT", "NO_TENSOR_CORE_MARKERS", "PLUGIN_WARN_SHARE", "REDUCED",
    "REFORMAT_WARN_SHARE", "RULES", "SHAPE_WARN_SHARE", "TENSOR_CORE_MARKERS", "TF32_ALIGN", "TIME_INFO_SHARE",
    "TIME_WARN_SHARE", "Ctx", "Rule", "by_time", "diagnose", "io_format", "is_conv", "is_gemm", "is_plugin",
    "is_reformat", "uses_tensor_cores",
]
_HOME = {  # each name of __all__ -> the module that defines it
    **dict.fromkeys(("FLOAT", "LOW", "NO_TENSOR_CORE_MARKERS", "REDUCED", "TENSOR_CORE_MARKERS", "is_conv", "is_gemm",
                     "is_plugin", "is_reformat", "uses_tensor_cores"), "classify"),
    "NAMES_ONLY_HINT": "compat", "REFORMAT_WARN_SHARE": "context", "Ctx": "context", "SHAPE_WARN_SHARE": "fusion",
    "ALIGN": "layout", "TF32_ALIGN": "layout", "PLUGIN_WARN_SHARE": "plugins", "io_format": "precision",
    **dict.fromkeys(("FAMILIES", "RULES", "TIME_INFO_SHARE", "TIME_WARN_SHARE", "Rule", "by_time", "diagnose"), "rules"),
}


def __getattr__(name: str) -> Any:
    """A name of ``__all__``, from its module, loaded on first use (PEP 562) and kept here."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(import_module(f"{__name__}.{_HOME[name]}"), name)
    return value
