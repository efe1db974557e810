"""Calibration and validation data: folders of .npy/.npz, images, or a Python script of samples.

A *sample* is one ``{input name: array}`` dict whose arrays have the model's full input shapes (the
batch dimension included, 1 for a batch-dynamic input). Sources:

- a folder (or a single file) of ``.npy`` (one-input models) or ``.npz`` (keys are input names): one
  sample per file, or batched arrays split along axis 0 when the batch dimension is dynamic; an array
  without the batch axis gets one;
- a folder of images (``.png .jpg .jpeg .bmp``; needs Pillow) for a one-input image model, with an
  :class:`ImageSpec` (resize, scale, mean/std, layout NCHW/NHWC);
- a ``.py`` file defining ``def samples() -> Iterable[dict[str, np.ndarray]]``.

Every sample is checked against the model's inputs: a missing/unknown name, a wrong rank or static
dimension, a dtype of another kind, or too few samples raise InputError naming the input and the
expected shape.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trtstudio.errors import InputError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp")
ARRAY_SUFFIXES = (".npy", ".npz")


@dataclass
class ImageSpec:
    """How images become input tensors: resized to ``size`` (H, W; default the model's), scaled by
    ``scale``, then ``(x - mean) / std`` per channel, in ``layout`` NCHW or NHWC, RGB order."""

    size: tuple[int, int] | None = None
    scale: float = 1.0 / 255.0
    mean: tuple[float, ...] = (0.485, 0.456, 0.406)
    std: tuple[float, ...] = (0.229, 0.224, 0.225)
    layout: str = "NCHW"


def model_inputs(model: Any) -> list[dict[str, Any]]:
    """The inputs of an ONNX model (path or ModelProto): ``{name, dtype, shape}`` like InputSpec, with
    dynamic dims as their symbol (str) or "?"."""
    from onnx import helper

    from trtstudio.precision.convert import load_onnx

    m = load_onnx(model) if isinstance(model, (str, os.PathLike)) else model
    inits = {i.name for i in m.graph.initializer}
    specs: list[dict[str, Any]] = []
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        shape: list[int | str] = []
        for d in tt.shape.dim:
            shape.append(int(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?"))
        specs.append({"name": vi.name, "dtype": str(np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))),
                      "shape": shape})
    return specs


def shape_text(shape: list[int | str]) -> str:
    """``[N,3,224,224]`` for people."""
    return "[" + ",".join(str(d) for d in shape) + "]"


def _batch_dynamic(shape: list[int | str]) -> bool:
    return bool(shape) and not (isinstance(shape[0], int) and shape[0] > 0)


def planned_specs(model: str, specs: list[dict[str, Any]],
                   shapes: dict[str, tuple[int, ...]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Input specs with the user's shapes, and the shape plan's sizes for the other dynamic dims
    (metadata imgsz, graph pins, defaults; see :mod:`trtstudio.backends.shapes`) and the plan's
    warnings. A dynamic batch dimension stays dynamic, so samples can still be batched."""
    from trtstudio.backends.shapes import plan_shapes

    plan = plan_shapes(model, shapes, probe=True)
    out = []
    for s in specs:
        if s["name"] in shapes:
            out.append(dict(s, shape=list(shapes[s["name"]])))
            continue
        planned = plan.get(s["name"])
        if planned is None or len(planned.opt) != len(s["shape"]):
            out.append(s)
            continue
        dims = [d if (isinstance(d, int) and d > 0) or axis == 0 else planned.opt[axis] for axis, d in enumerate(s["shape"])]
        out.append(dict(s, shape=dims))
    return out, list(plan.warnings)


def check_sample(source: str, index: int, sample: dict[str, Any], specs: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Check one sample against the model inputs and return it with arrays cast to the input dtypes."""
    names = [s["name"] for s in specs]
    missing = [n for n in names if n not in sample]
    if missing:
        spec = next(s for s in specs if s["name"] == missing[0])
        raise InputError(source, f"sample {index} has no data for input '{missing[0]}' "
                                 f"(expects {spec['dtype']} {shape_text(spec['shape'])}; it has {', '.join(sample) or 'nothing'})")
    extra = [n for n in sample if n not in names]
    if extra:
        raise InputError(source, f"sample {index} has unknown input(s) {', '.join(extra)}; the model takes {', '.join(names)}")
    out: dict[str, np.ndarray] = {}
    for spec in specs:
        name, want_shape = spec["name"], spec["shape"]
        arr = np.asarray(sample[name])
        want = np.dtype(spec["dtype"])
        expect = f"{want} {shape_text(want_shape)}"
        if arr.ndim != len(want_shape) or any(
            isinstance(w, int) and w > 0 and w != h for w, h in zip(want_shape, arr.shape, strict=False)
        ):
            raise InputError(source, f"input '{name}' expects shape {shape_text(want_shape)}; "
                                     f"sample {index} has {list(arr.shape)}")
        if arr.dtype != want:
            same_kind = (arr.dtype.kind == "f" and want.kind == "f") or (arr.dtype.kind in "iu" and want.kind in "iu")
            if not same_kind:
                raise InputError(source, f"input '{name}' expects {expect}; sample {index} is {arr.dtype}")
            cast = arr.astype(want)
            if want.kind in "iu" and not np.array_equal(cast, arr):
                raise InputError(source, f"input '{name}' expects {expect}; sample {index}'s {arr.dtype} values do not fit")
            arr = cast
        out[name] = np.ascontiguousarray(arr)
    return out


def _units(arrays: dict[str, np.ndarray], specs: list[dict[str, Any]]) -> list[dict[str, np.ndarray]]:
    """One file's arrays -> samples: add a missing batch axis, split a batch along axis 0."""
    by_name = {s["name"]: s for s in specs}
    fixed: dict[str, np.ndarray] = {}
    for name, arr in arrays.items():
        spec = by_name.get(name)
        a = np.asarray(arr)
        if spec is not None and a.ndim == len(spec["shape"]) - 1 and (
            _batch_dynamic(spec["shape"]) or spec["shape"][0] == 1
        ):
            a = a[None, ...]
        fixed[name] = a
    split = [n for n in fixed if n in by_name and fixed[n].ndim >= 1
             and (_batch_dynamic(by_name[n]["shape"]) or by_name[n]["shape"][0] == 1)]
    sizes = {fixed[n].shape[0] for n in split}
    if split and len(sizes) == 1 and len(split) == len([n for n in fixed if n in by_name]):
        count = sizes.pop()
        if count > 1:
            return [{n: a[i : i + 1] for n, a in fixed.items()} for i in range(count)]
    return [fixed]


def _read_arrays(path: Path, names: list[str]) -> dict[str, np.ndarray]:
    try:
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as z:
                return {k: z[k] for k in z.files}
        if len(names) != 1:
            raise InputError(path, f"a .npy file fits a one-input model; this one takes {', '.join(names)} (use .npz)")
        return {names[0]: np.load(path, allow_pickle=False)}
    except InputError:
        raise
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot read arrays: {exc}") from None


def _image(path: Path, spec: dict[str, Any], image: ImageSpec) -> np.ndarray:
    try:
        from PIL import Image
    except ImportError:
        raise InputError(path, "reading images needs Pillow (pip install pillow); or give .npy/.npz arrays") from None
    shape = spec["shape"]
    if len(shape) != 4:
        raise InputError(path, f"images fit a rank-4 input; '{spec['name']}' is {shape_text(shape)}")
    nhwc = image.layout.upper() == "NHWC"
    if image.layout.upper() not in ("NCHW", "NHWC"):
        raise InputError(path, f"image layout must be NCHW or NHWC, not {image.layout}")
    h, w = (shape[1], shape[2]) if nhwc else (shape[2], shape[3])
    size = image.size or (h if isinstance(h, int) and h > 0 else None, w if isinstance(w, int) and w > 0 else None)
    if size[0] is None or size[1] is None:
        raise InputError(path, f"input '{spec['name']}' {shape_text(shape)} has dynamic H/W: set the image size")
    try:
        with Image.open(path) as im:
            rgb = im.convert("RGB").resize((int(size[1]), int(size[0])))
            arr = np.asarray(rgb, dtype=np.float32)
    except OSError as exc:
        raise InputError(path, f"cannot read image: {exc}") from None
    arr = arr * np.float32(image.scale)
    arr = (arr - np.asarray(image.mean, np.float32)) / np.asarray(image.std, np.float32)
    if not nhwc:
        arr = arr.transpose(2, 0, 1)
    return arr[None, ...].astype(spec["dtype"])


def _script_samples(path: Path) -> Iterator[dict[str, Any]]:
    module_spec = importlib.util.spec_from_file_location(f"trtstudio_samples_{abs(hash(str(path)))}", path)
    if module_spec is None or module_spec.loader is None:
        raise InputError(path, "cannot import this Python file")
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's script; one line, no traceback
        raise InputError(path, f"the script raised {type(exc).__name__}: {exc}") from None
    fn = getattr(module, "samples", None)
    if not callable(fn):
        raise InputError(path, "the script must define samples() -> Iterable[dict[str, np.ndarray]]")
    try:
        for item in fn():
            if not isinstance(item, dict):
                raise InputError(path, f"samples() yielded {type(item).__name__}, not a dict of input name -> array")
            yield item
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise InputError(path, f"samples() raised {type(exc).__name__}: {exc}") from None


def iter_raw(source: str | os.PathLike[str], specs: list[dict[str, Any]], image: ImageSpec | None = None) -> Iterator[dict[str, Any]]:
    """Unchecked samples from a source (see the module docstring)."""
    p = Path(source)
    names = [s["name"] for s in specs]
    if not p.exists():
        raise InputError(p, "no such file or folder")
    if p.is_file() and p.suffix == ".py":
        yield from _script_samples(p)
        return
    files = sorted(f for f in p.iterdir() if f.is_file()) if p.is_dir() else [p]
    arrays = [f for f in files if f.suffix.lower() in ARRAY_SUFFIXES]
    images = [f for f in files if f.suffix.lower() in IMAGE_SUFFIXES]
    if arrays:
        for f in arrays:
            yield from _units(_read_arrays(f, names), specs)
        return
    if images:
        if len(specs) != 1:
            raise InputError(p, f"images fit a one-input model; this one takes {', '.join(names)}")
        for f in images:
            yield {names[0]: _image(f, specs[0], image or ImageSpec())}


def load_samples(
    source: str | os.PathLike[str] | Iterable[dict[str, Any]],
    specs: list[dict[str, Any]],
    *,
    min_samples: int = 1,
    limit: int | None = None,
    image: ImageSpec | None = None,
    purpose: str = "calibration",
) -> list[dict[str, np.ndarray]]:
    """Read and check samples for ``specs`` (from :func:`model_inputs`); at most ``limit``, at least
    ``min_samples`` (else InputError naming the inputs and their expected shapes)."""
    label = os.fspath(source) if isinstance(source, (str, os.PathLike)) else f"{purpose} data"
    raw = iter_raw(source, specs, image) if isinstance(source, (str, os.PathLike)) else iter(source)
    out: list[dict[str, np.ndarray]] = []
    for i, sample in enumerate(raw):
        if limit is not None and len(out) >= limit:
            break
        out.append(check_sample(label, i, sample, specs))
    if len(out) < max(1, min_samples):
        want = ", ".join(f"'{s['name']}' {s['dtype']} {shape_text(s['shape'])}" for s in specs)
        raise InputError(label, f"{len(out)} {purpose} sample(s), at least {max(1, min_samples)} needed "
                                f"(.npy/.npz arrays, images or samples.py) for input {want}")
    return out


def random_samples(specs: list[dict[str, Any]], count: int, seed: int = 0, default_dim: int = 1) -> list[dict[str, np.ndarray]]:
    """Random samples (floats in [-1, 1)) for when the user gave no data: accuracy on noise, say so."""
    from trtstudio.backends.inputs import random_array

    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        sample = {}
        for s in specs:
            shape = tuple(d if isinstance(d, int) and d > 0 else default_dim for d in s["shape"])
            sample[s["name"]] = random_array(s["dtype"], shape, rng)
        out.append(sample)
    return out


def batches(samples: list[dict[str, np.ndarray]], specs: list[dict[str, Any]], batch: int = 8) -> list[dict[str, np.ndarray]]:
    """Concatenate samples along axis 0 into feeds of up to ``batch`` (when every input's batch dim is
    dynamic and the other dims agree); else one feed per sample."""
    if not samples or not all(_batch_dynamic(s["shape"]) for s in specs) or batch <= 1:
        return list(samples)
    out: list[dict[str, np.ndarray]] = []
    group: list[dict[str, np.ndarray]] = []

    def flush() -> None:
        if group:
            out.append({k: np.concatenate([g[k] for g in group], axis=0) for k in group[0]})
            group.clear()

    for s in samples:
        if group and any(s[k].shape[1:] != group[0][k].shape[1:] for k in s):
            flush()
        group.append(s)
        if len(group) >= batch:
            flush()
    flush()
    return out
