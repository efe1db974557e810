"""Input data for a run: random tensors per dtype, or arrays read from .npy / .npz files or a folder.

Imports nothing of :mod:`trtstudio.backends.shapes` (the shape planner's probe imports this module
for its random data): a plan is passed in, made by the caller.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.errors import InputError

# Value ranges of random inputs: small, well-conditioned, valid as indices for integer inputs.
_INT_RANGE = (0, 16)


def random_array(dtype: str | np.dtype[Any], shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """A random array: floats uniform in [-1, 1), ints in [0, 16), bools half true."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.uniform(-1.0, 1.0, size=shape).astype(dt)
    if dt.kind in "iu":
        return rng.integers(_INT_RANGE[0], _INT_RANGE[1], size=shape).astype(dt)
    if dt.kind == "b":
        return rng.random(size=shape) < 0.5
    raise InputError(None, f"cannot make random data of dtype {dt}")


def load_input_file(path: str | os.PathLike[str], names: list[str]) -> dict[str, np.ndarray]:
    """Read arrays by input name from an .npz, a single .npy (for a one-input model), or a folder of NAME.npy."""
    p = Path(path)
    if not p.exists():
        raise InputError(p, "no such file or folder")
    out: dict[str, np.ndarray] = {}
    try:
        if p.is_dir():
            for f in sorted(p.glob("*.npy")):
                out[f.stem] = np.load(f, allow_pickle=False)
            if not out:
                raise InputError(p, "folder holds no .npy files")
        elif p.suffix == ".npz":
            with np.load(p, allow_pickle=False) as z:
                out = {k: z[k] for k in z.files}
        elif p.suffix == ".npy":
            if len(names) != 1:
                raise InputError(p, f"a single .npy only fits a one-input model; this one has {len(names)} inputs")
            out = {names[0]: np.load(p, allow_pickle=False)}
        else:
            raise InputError(p, "input data must be .npy, .npz or a folder of NAME.npy")
    except InputError:
        raise
    except (OSError, ValueError) as exc:
        raise InputError(p, f"cannot read arrays: {exc}") from None
    return out


def check_data(source: str, name: str, array: np.ndarray, dtype: str, shape: tuple[int, ...] | None) -> np.ndarray:
    """Check one user-given array against an input's dtype and shape; cast only when no value changes."""
    want = np.dtype(dtype)
    if shape is not None and tuple(array.shape) != tuple(shape):
        raise InputError(source, f"input '{name}' must have shape {list(shape)}, the file has {list(array.shape)}")
    if array.dtype != want:
        cast = array.astype(want)
        if not np.array_equal(cast.astype(array.dtype), array):
            raise InputError(source, f"input '{name}' must be {want}; the file's {array.dtype} values do not fit")
        array = cast
    return np.ascontiguousarray(array)


def missing_names(source: str, data: dict[str, Any], names: list[str]) -> None:
    """Raise InputError when data lacks an input or has names the model does not know."""
    missing = [n for n in names if n not in data]
    extra = [n for n in data if n not in names]
    if missing:
        raise InputError(source, f"no data for input(s) {', '.join(missing)} (the file has {', '.join(data) or 'none'})")
    if extra:
        raise InputError(source, f"unknown input(s) {', '.join(extra)}; the model takes {', '.join(names)}")


def build_feeds(
    specs: list[Any],
    shapes: dict[str, tuple[int, ...]],
    data: dict[str, np.ndarray] | None,
    resolve: Any,
    source: str = "--input",
    seed: int = 0,
    plan: Any = None,
) -> tuple[dict[str, np.ndarray], list[str]]:
    """Arrays for every input of ``specs`` and the notes to show.

    ``resolve(spec, requested_shape_or_None) -> (shape, note_or_None)`` fixes each shape (a backend's
    own rule for dynamic dims and ranges); data given for an input sets its shape unless ``shapes`` does.
    ``plan`` (a ShapePlan, see :func:`trtstudio.backends.shapes.run_plan`) chooses the shapes the user left open and the values
    of shape-tensor inputs; its warnings become the notes.
    """
    names = [s["name"] for s in specs]
    unknown = [n for n in shapes if n not in names]
    if unknown:
        raise InputError("--shapes", f"unknown input(s) {', '.join(unknown)}; the model takes {', '.join(names)}")
    if data is not None:
        missing_names(source, data, names)
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    notes: list[str] = list(plan.warnings + plan.notes) if plan is not None else []
    for spec in specs:
        name = spec["name"]
        given = None if data is None else np.asarray(data[name])
        planned = plan.get(name) if plan is not None else None
        requested = shapes.get(name)
        if planned is not None and planned.values is not None and given is None:
            values = np.asarray(planned.values[1], dtype=np.dtype(spec["dtype"]))
            feeds[name] = values.reshape(planned.opt) if values.size == int(np.prod(planned.opt)) else values
            continue
        if requested is None and given is not None:
            requested = tuple(int(d) for d in given.shape)
        if requested is None and planned is not None and len(planned.opt) == len(spec["shape"]):
            requested = planned.opt
        shape, note = resolve(spec, requested)
        if note and plan is None:
            notes.append(note)
        if given is not None:
            feeds[name] = check_data(source, name, given, spec["dtype"], shape)
        else:
            feeds[name] = random_array(spec["dtype"], shape, rng)
    return feeds, notes
