"""``--fp16``/``--bf16``/``--int8`` on a strongly typed runtime: the precision goes into the model.

TensorRT 11 and TensorRT-RTX have no ``BuilderFlag.FP16/BF16/INT8``: a layer runs in half precision
because its tensors are half in the model, in INT8 because Q/DQ nodes say so. A build that asks
for such a precision where the runtime has no flag for it converts the model the way
``trtstudio precision`` makes its variants, writes that model beside the engine and builds it:

- FP16/BF16: :func:`trtstudio.precision.convert.convert_float` (FP16/BF16 weights and casts, inputs
  and outputs FP32, the nodes that must stay FP32 kept so: the islands, each with its reason);
- INT8: :func:`trtstudio.precision.quantize.quantize_model` on calibration data (``calib``: a folder
  of .npy/.npz, images or samples.py), the default recipe of ``trtstudio precision`` (minmax ranges,
  per-channel weights; Convs without an INT8 kernel and attention MatMuls kept float). Without
  calibration data the build is refused (:class:`~trtstudio.errors.FieldError` ``int8``).

Where the runtime is weakly typed (full TensorRT 10: it has the flags), nothing here runs: the
builder flag is set as before. TensorRT-RTX is strongly typed in every release, though 1.4 still has
``BuilderFlag.FP16`` (its builder refuses it: "condition: !config.getFlag(BuilderFlag::kFP16)"), so
:func:`strongly_typed` knows it by its module, not by the flag's presence. Heavy modules (onnx, onnxruntime's quantizer) are imported only when converting.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trtstudio.errors import FieldError

LOW = ("fp16", "bf16")
LAYER_PRECISION = {"fp16": "FP16", "bf16": "BF16", "int8": "INT8"}  # asked -> a layer's compute precision
CALIB_LIMIT = 64  # calibration samples read at most (trtstudio precision's default)


STRONGLY_TYPED_MODULES = ("tensorrt_rtx",)  # strongly typed in every release, whatever flags they keep


def strongly_typed(trt: Any) -> bool:
    """True for a runtime whose builder takes no precision flags: TensorRT-RTX (every version, known by
    its module's name, since 1.4 still has the attributes) and TensorRT 11 (no ``BuilderFlag.FP16``)."""
    name = str(getattr(trt, "__name__", "")).split(".")[0]
    if name in STRONGLY_TYPED_MODULES:
        return True
    flags = getattr(trt, "BuilderFlag", None)
    return flags is None or not any(hasattr(flags, f) for f in ("FP16", "BF16", "INT8"))


def flags_to_convert(trt: Any, options: Any) -> list[str]:
    """The precision flags ``options`` asks for that ``trt``'s builder does not take (in the order
    fp16, bf16, int8): all of them on a strongly typed runtime (:func:`strongly_typed`), else those
    it has no ``BuilderFlag`` for; FieldError where they cannot be given to the model: FP16 with
    BF16, INT8 with a low float precision, INT8 without calibration data."""
    flags = getattr(trt, "BuilderFlag", None)
    typed = strongly_typed(trt)
    wanted = [f for f in ("fp16", "bf16", "int8") if getattr(options, f, False)
              and (typed or flags is None or not hasattr(flags, f.upper()))]
    runtime = f"{getattr(trt, '__name__', 'this TensorRT')} is strongly typed"
    if "fp16" in wanted and "bf16" in wanted:
        raise FieldError("fp16", f"{runtime}: the model is converted to one precision; choose FP16 or BF16")
    if "int8" in wanted and len(wanted) > 1:
        raise FieldError("int8", f"{runtime}: INT8 Q/DQ and a {wanted[0].upper()} conversion are not made "
                                 "together; build the INT8 model (its other layers FP32) or the "
                                 f"{wanted[0].upper()} one")
    if "int8" in wanted and not getattr(options, "calib", None):
        raise FieldError("int8", f"{runtime}: INT8 comes from Q/DQ nodes placed with calibration data; "
                                 "give --calib DIR (.npy/.npz, images or samples.py), or make the INT8 "
                                 "model with trtstudio precision MODEL --variants int8 --calib DIR and build it")
    return wanted


@dataclass
class PrecisionStep:
    """What a build did to give the model its precision: ``how`` is ``converted`` (FP16/BF16),
    ``quantized`` (INT8) or ``builder_flags`` (TensorRT 10's flags, the model built as it is).
    ``fp32_islands``: node -> why it stayed FP32 (float for INT8: the nodes left unquantized)."""

    precision: str
    how: str
    source_model: str
    built_model: str
    runtime: str
    fp32_islands: dict[str, str] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    layers: dict[str, int] | None = None  # the built engine's layers by compute precision (None: not read)

    def to_json(self) -> dict[str, Any]:
        """The ``precision`` section of the ``trtstudio.build/1`` document."""
        return {"precision": self.precision, "how": self.how, "runtime": self.runtime,
                "source_model": self.source_model, "built_model": self.built_model,
                "fp32_islands": dict(self.fp32_islands), "details": dict(self.details), "notes": list(self.notes),
                "layers": dict(self.layers) if self.layers is not None else None,
                "layers_in_precision": self.layers_in_precision()}

    def asked(self) -> list[str]:
        """The layer precisions asked for (``FP16``...; a weakly typed build may allow several)."""
        return [LAYER_PRECISION[p] for p in self.precision.split("+") if p in LAYER_PRECISION]

    def layers_in_precision(self) -> int | None:
        """How many of the built engine's layers compute in a precision asked for (None: not read)."""
        if self.layers is None:
            return None
        return sum(n for p, n in self.layers.items() if p in self.asked())

    def check_layers(self, precisions: list[str | None]) -> str | None:
        """Count the built engine's layers by compute precision (``precisions``: one per layer, None
        where the files name none); the warning when none is in a precision asked for, else None."""
        counts: dict[str, int] = {}
        for p in precisions:
            key = p or "none"
            counts[key] = counts.get(key, 0) + 1
        self.layers = dict(sorted(counts.items(), key=lambda kv: -kv[1]))
        if not precisions or self.layers_in_precision():
            return None
        asked = " or ".join(self.asked())
        shown = ", ".join(f"{p} {n}" for p, n in self.layers.items())
        kept = f"{len(self.fp32_islands)} node(s) kept {'FP32' if self.how == 'converted' else 'float'}"
        how = (f"the model built ({self.built_model}; {kept}) computes nothing in {asked} once built"
               if self.how != "builder_flags" else f"the builder flag allowed {asked}, and the builder chose none")
        return (f"no layer of the built engine runs in {asked} ({len(precisions)} layers: {shown}): {how}; "
                "--require-precision makes this a failure")

    def settings(self) -> dict[str, Any]:
        """Flat build settings (kept in the build log's header, shown in the window's Properties)."""
        return {"precision": self.precision, "precision_by": self.how, "built_model": self.built_model,
                "fp32_islands": len(self.fp32_islands)}

    def summary(self) -> str:
        """One line: the precision, how it was given, which file was built."""
        up = self.precision.upper()
        if self.how == "builder_flags":
            return f"precision: {up} allowed by the builder flag ({self.runtime} is weakly typed); built {self.built_model}"
        d = self.details
        if self.how == "converted":
            what = (f"converted to {up} as trtstudio precision does ({d.get('low_nodes', 0)} nodes {up}, "
                    f"{d.get('casts', 0)} casts, {len(self.fp32_islands)} kept FP32)")
        else:
            what = (f"quantized to {up} as trtstudio precision does ({d.get('qdq_pairs', 0)} Q/DQ pairs, "
                    f"{d.get('method')} calibration on {d.get('samples', 0)} sample(s), "
                    f"{len(self.fp32_islands)} kept float)")
        return f"precision: {what}, {self.runtime} being strongly typed; built {self.built_model} from {self.source_model}"

    def render_text(self, limit: int = 12) -> str:
        """The summary and the islands kept FP32 (at most ``limit`` named), with the notes."""
        lines = [self.summary()]
        items = list(self.fp32_islands.items())
        for node, why in items[:limit]:
            lines.append(f"  kept {'FP32' if self.how == 'converted' else 'float'}: {node} ({why})")
        if len(items) > limit:
            lines.append(f"  ... and {len(items) - limit} more (the --json document lists them all)")
        lines += [f"  note: {n}" for n in self.notes]
        if self.layers is not None:
            shown = ", ".join(f"{p} {n}" for p, n in self.layers.items())
            lines.append(f"  layers in {'/'.join(self.asked())}: {self.layers_in_precision()} of "
                         f"{sum(self.layers.values())} ({shown})")
        return "\n".join(lines)


def flag_step(precisions: list[str], model: str, runtime: str) -> PrecisionStep | None:
    """The step of a weakly typed build whose precision flags were set (None where none was)."""
    if not precisions:
        return None
    return PrecisionStep("+".join(precisions), "builder_flags", model, model, runtime)


def converted_path(model: str | os.PathLike[str], out_path: str | os.PathLike[str] | None, precision: str) -> Path:
    """Where the converted model goes: beside the engine as ``ENGINE_STEM.PRECISION.onnx`` (a temporary
    folder when no engine file is written), never over the source model."""
    if out_path is None:
        folder = Path(tempfile.gettempdir()) / "trtstudio-builds"
        stem = Path(model).stem
    else:
        folder, stem = Path(out_path).parent, Path(out_path).stem
    name = stem if stem.endswith(f".{precision}") else f"{stem}.{precision}"
    path = folder / f"{name}.onnx"
    if path.resolve() == Path(model).resolve():
        path = folder / f"{name}.built.onnx"
    return path


class ConversionError(RuntimeError):
    """The model could not be converted to the precision asked for: a fault of the converter, not of
    the user's input (the model was read); the build fails with an internal-error line (exit 1)."""


def give_precision(model: str | os.PathLike[str], precision: str, out_path: str | os.PathLike[str] | None,
                   options: Any, runtime: str) -> PrecisionStep:
    """Convert (FP16/BF16) or quantize (INT8) ``model`` as ``trtstudio precision`` does and write it
    (:func:`converted_path`); InputError for a model or calibration data that cannot be used."""
    path = converted_path(model, out_path, precision)
    path.parent.mkdir(parents=True, exist_ok=True)
    if precision in LOW:
        from trtstudio.precision.convert import convert_float, save_model

        try:
            conv = convert_float(model, precision)
            save_model(conv.model, path)
        except Exception as exc:  # noqa: BLE001 - the model was read: any failure here is ours
            text = getattr(exc, "message", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
            raise ConversionError(
                f"internal error: the {precision.upper()} conversion of {model} failed ({text}); this is a "
                f"trtstudio bug, please report it with the model; build it without --{precision} meanwhile") from exc
        details = conv.to_json()
        islands, notes = details.pop("fp32_nodes"), details.pop("notes")
        return PrecisionStep(precision, "converted", str(model), str(path), runtime, islands, details, notes)
    from trtstudio.precision.data import load_samples, model_inputs, planned_specs
    from trtstudio.precision.quantize import QuantizeOptions, quantize_model

    given = options.profiles[0] if getattr(options, "profiles", None) else {}
    specs, _warnings = planned_specs(str(model), model_inputs(model), {k: v[1] for k, v in given.items()})
    samples = load_samples(options.calib, specs, limit=CALIB_LIMIT)
    target = options.targets[0] if getattr(options, "targets", None) else None
    q = quantize_model(model, path, samples, QuantizeOptions(
        precision="int8", target=target, cache_path=str(path.with_suffix("")) + ".minmax.calib.json"))
    details = {k: v for k, v in q.to_json().items() if k not in ("notes", "model_path", "float_convs", "float_matmuls")}
    return PrecisionStep("int8", "quantized", str(model), str(path), runtime,
                         {**q.float_convs, **q.float_matmuls}, details, list(q.notes))
