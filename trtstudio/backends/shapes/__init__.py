"""One shape plan for every tool: the input shapes (min/opt/max per input) and where each value came from.

The package along its seams:

- :mod:`~trtstudio.backends.shapes.plan`: :class:`ShapePlan` / :class:`InputShape` (what a plan is,
  its text and JSON, the shape-error hint);
- :mod:`~trtstudio.backends.shapes.planner`: :func:`plan_shapes`, which makes one (the sources and
  their order are in its docstring);
- :mod:`~trtstudio.backends.shapes.probe`: the onnxruntime probe of guessed sizes;
- :mod:`~trtstudio.backends.shapes.text`: the one parser of shape text (``--shapes`` and the window's
  cells) and how shapes are written.

Qt-free; ``onnx`` and ``onnxruntime`` are imported inside the functions that use them.
"""

from trtstudio.backends.shapes.plan import (
    DEFAULT_BATCH,
    DEFAULT_BATCH_MAX,
    DEFAULT_INT,
    DEFAULT_OTHER,
    DEFAULT_SIZES,
    DEFAULT_SPATIAL,
    SCHEMA,
    InputShape,
    Shape,
    ShapePlan,
    Triple,
    explain_run_failure,
    looks_like_shape_error,
)
from trtstudio.backends.shapes.planner import (
    BATCH_KEYS,
    SIZE_KEYS,
    plan_shapes,
    read_metadata,
    run_plan,
    user_shapes_from_profile,
)
from trtstudio.backends.shapes.probe import PROBE_MAX_BYTES, PROBE_SECONDS, PROBE_TRIES
from trtstudio.backends.shapes.text import parse_dims, parse_shapes

__all__ = [
    "BATCH_KEYS", "DEFAULT_BATCH", "DEFAULT_BATCH_MAX", "DEFAULT_INT", "DEFAULT_OTHER", "DEFAULT_SIZES",
    "DEFAULT_SPATIAL", "PROBE_MAX_BYTES", "PROBE_SECONDS", "PROBE_TRIES", "SCHEMA", "SIZE_KEYS", "InputShape",
    "Shape", "ShapePlan", "Triple", "explain_run_failure", "looks_like_shape_error", "parse_dims", "parse_shapes",
    "plan_shapes", "read_metadata", "run_plan", "user_shapes_from_profile",
]
