"""The torch backend's model: a ``torch.export`` program (.pt2), a TorchScript file or an ONNX model
converted by onnx2torch (``torch_convert``), read, given its device and moved there.

:class:`TorchModel` holds what the file gave (the module, its kind, its inputs, the ONNX model converted)
and what the load took (``load_times``); :class:`~trtstudio.backends.torch_backend.TorchBackend`
composes it with the device run (``torch_device``) and the layer recording (``torch_kernels``).
``torch`` is imported in :meth:`TorchModel.read`.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from trtstudio.backends.base import InputSpec, require_module, resolve_shape
from trtstudio.errors import BackendError, InputError

PIP_TORCH = "pip install torch (and onnx2torch for .onnx models)"
INPUTS_FILE = "trtstudio_inputs.json"
_NP_NAMES = {
    "float32": "float32", "float16": "float16", "float64": "float64", "bfloat16": "bfloat16",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "bool": "bool",
}
_TORCHSCRIPT_SUFFIXES = (".pt", ".pth", ".ts", ".torchscript", ".jit", ".zip")


def first_line(exc: BaseException) -> str:
    """An exception's first line (its type's name when it has no text)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class TorchModel:
    """A PyTorch module read from a file, on the device chosen for it (CUDA or the CPU)."""

    def __init__(self, name: str, pip: str, notes: list[str]) -> None:
        self.name = name
        self.notes = notes  # the backend's notes: one list, appended to
        self._pip = pip
        self.torch: Any = None
        self.path: Path | None = None
        self.options: dict[str, Any] = {}
        self.module: Any = None
        self.kind = ""  # "exported", "torchscript" or "onnx2torch"
        self.specs: list[InputSpec] = []
        self.device: Any = None  # torch.device
        self.cuda = False
        self.load_times: dict[str, float] = {}
        self.onnx_model: Any = None  # the ONNX model converted (after folding, when it was folded)

    def read(self, path: str | os.PathLike[str], options: dict[str, Any]) -> Any:
        """Read the file and choose the device (the CUDA context starts while onnx2torch is imported);
        returns ``torch``. :meth:`place` moves the module to the device."""
        torch = self.torch = require_module("torch", self.name, self._pip)
        self.path = Path(path)
        self.options = dict(options)
        if self.path.stat().st_size == 0:
            raise InputError(self.path, "empty file")
        self._choose_device(torch)
        if options.get("cuda_graph") and not self.cuda:
            raise BackendError(f"backend '{self.name}' runs on the CPU here: --cuda-graph needs a CUDA device")
        if options.get("threads"):
            torch.set_num_threads(int(options["threads"]))
            self.notes.append(f"torch intra-op threads set to {int(options['threads'])} (process-wide)")
        suffix = self.path.suffix.lower()
        prefetch = _Prefetch(self.name) if suffix == ".onnx" else None  # imports onnx2torch while CUDA starts
        if self.cuda:
            torch.empty(0, device=self.device)  # the CUDA context, overlapping the import
        self.load_times = prefetch.join() if prefetch is not None else {}
        t0 = time.perf_counter()
        if suffix == ".pt2":
            self._load_exported(torch)
        elif suffix == ".onnx":
            self._load_onnx(torch)
        else:
            self._load_torchscript(torch)
        if "read_ms" not in self.load_times:
            self.load_times["read_ms"] = (time.perf_counter() - t0) * 1e3
        return torch

    def place(self) -> None:
        """The module in inference form on its device (synchronised there)."""
        if self.kind != "exported":  # an exported program is already in inference form; it refuses eval()
            self.module.eval()
        if self.cuda and self.kind != "torchscript":  # TorchScript was mapped onto the device while loading
            self.module = self.to_device(self.module)
        if self.cuda:
            self.torch.cuda.synchronize(self.device)

    def _choose_device(self, torch: Any) -> None:
        want = str(self.options.get("accelerator", "auto"))
        if want not in ("auto", "cuda", "cpu"):
            raise InputError(None, f"accelerator must be auto, cuda or cpu, not '{want}'")
        index = int(self.options.get("device") or 0)
        count = torch.cuda.device_count() if want != "cpu" and torch.cuda.is_available() else 0
        if want != "cpu" and index < count:
            self.device, self.cuda = torch.device("cuda", index), True
        elif want == "cuda" or (want == "auto" and self.options.get("device") is not None):
            seen = f"{count} CUDA device(s)" if count else f"no CUDA device (torch {torch.__version__})"
            raise BackendError(f"backend '{self.name}' needs CUDA device {index}; this machine has {seen}")
        else:
            self.device, self.cuda = torch.device("cpu"), False
            if want == "auto":
                self.notes.append("no CUDA device visible to torch: running on the CPU")

    def to_device(self, module: Any) -> Any:
        """The module on the device; an onnx2torch module keeps the constants it reads on the host
        (shapes, axes, scales) on the CPU, so running it needs no device-to-host synchronisation."""
        if self.kind != "onnx2torch":
            return module.to(self.device)
        from trtstudio.backends.torch_convert import host_constants

        keep = {name: module.get_buffer(name) for name in host_constants(module, self.onnx_model)}
        module = module.to(self.device)
        for name, tensor in keep.items():
            owner, _, leaf = name.rpartition(".")
            module.get_submodule(owner)._buffers[leaf] = tensor
        return module

    def specialize(self, shapes: dict[str, tuple[int, ...]]) -> None:
        """Convert the ONNX model again with its inputs fixed to ``shapes`` and every shape computation
        folded (for a CUDA graph), and put that module on the device."""
        from trtstudio.backends.torch_convert import specialize

        fixed = specialize(self.onnx_model, shapes, self.name)
        self.onnx_model = fixed.model
        self.module = self.to_device(fixed.module.eval())
        self.load_times.update({f"graph_{k}": v for k, v in fixed.times.items()})

    def _load_exported(self, torch: Any) -> None:
        try:
            ep = torch.export.load(str(self.path))
        except Exception as exc:  # noqa: BLE001 - torch raises many types for a bad archive
            raise InputError(self.path, f"torch.export cannot load this file: {first_line(exc)}") from None
        if self.cuda:
            try:
                from torch.export.passes import move_to_device_pass

                ep = move_to_device_pass(ep, self.device)
            except ImportError:  # older torch: the module is moved with .to()
                pass
        placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
        specs: list[InputSpec] = []
        for s in ep.graph_signature.input_specs:
            if getattr(s.kind, "name", "") != "USER_INPUT":
                continue
            val = placeholders[s.arg.name].meta.get("val")
            shape: list[int | str] = [d if isinstance(d, int) else str(d) for d in getattr(val, "shape", [])]
            specs.append({"name": s.arg.name, "dtype": self._np_dtype(getattr(val, "dtype", None)), "shape": shape})
        self.specs = specs
        self.module = ep.module()
        self.kind = "exported"

    def _load_torchscript(self, torch: Any) -> None:
        extra = {INPUTS_FILE: ""}
        try:
            module = torch.jit.load(str(self.path), map_location=self.device, _extra_files=extra)
        except Exception as exc:  # noqa: BLE001
            raise InputError(
                self.path, f"not a TorchScript file torch can load ({first_line(exc)}); .pt2 files are read with torch.export"
            ) from None
        names = [a.name for a in module.forward.schema.arguments[1:]]
        declared: dict[str, dict[str, Any]] = {}
        if extra[INPUTS_FILE]:
            try:
                declared = {d["name"]: d for d in json.loads(extra[INPUTS_FILE])}
            except (ValueError, TypeError, KeyError) as exc:
                raise InputError(self.path, f"{INPUTS_FILE} inside the file is not a list of inputs: {exc}") from None
        specs: list[InputSpec] = []
        for name in names:
            d = declared.get(name)
            if d is None:
                specs.append({"name": name, "dtype": "float32", "shape": ["?unknown-rank"]})
            else:
                specs.append({"name": name, "dtype": str(d.get("dtype", "float32")), "shape": list(d["shape"])})
        self.specs = specs
        self.module = module
        self.kind = "torchscript"

    def _load_onnx(self, torch: Any) -> None:
        import onnx

        from trtstudio.backends.torch_convert import convert_onnx

        converted = convert_onnx(self.path, self.name)  # type: ignore[arg-type]
        self.module, self.onnx_model = converted.module, converted.model
        self.load_times.update(converted.times)
        self.notes.extend(converted.notes)
        model = converted.model
        inits = {i.name for i in model.graph.initializer}
        specs: list[InputSpec] = []
        for vi in model.graph.input:
            if vi.name in inits:
                continue
            tt = vi.type.tensor_type
            dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type).name
            shape: list[int | str] = [
                d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim
            ]
            specs.append({"name": vi.name, "dtype": dtype, "shape": shape})
        self.specs = specs
        self.kind = "onnx2torch"

    def _np_dtype(self, dtype: Any) -> str:
        name = str(dtype).replace("torch.", "") if dtype is not None else "float32"
        if name not in _NP_NAMES:
            raise BackendError(f"{self.path}: input dtype {dtype} cannot be fed from numpy")
        return _NP_NAMES[name]

    def input_specs(self) -> list[InputSpec]:
        """Inputs with numpy dtype names; symbolic dims are str."""
        return [dict(s) for s in self.specs]  # type: ignore[misc]

    def resolve(self, spec: InputSpec, requested: tuple[int, ...] | None) -> tuple[tuple[int, ...], str | None]:
        """An input's shape: the one requested, else the file's (dynamic dims from ``default_dim``)."""
        if spec["shape"] == ["?unknown-rank"]:
            if requested is None:
                raise InputError(
                    "--shapes", f"TorchScript file {self.path} keeps no shape for input '{spec['name']}'; give --shapes "
                    f"{spec['name']}:1x3x224x224 (or save it with _extra_files={{'{INPUTS_FILE}': ...}})"
                )
            return tuple(requested), None
        return resolve_shape(spec, requested, int(self.options.get("default_dim", 1)))

    def require(self) -> Any:
        """``torch``, once a module is loaded."""
        if self.module is None:
            raise BackendError(f"backend '{self.name}' has no model loaded")
        return self.torch


class _Prefetch:
    """Imports onnx2torch (with trtstudio's converters) on a thread while the caller starts CUDA; ``join``
    returns ``{"import_ms": ...}`` or raises what the import raised."""

    def __init__(self, backend: str) -> None:
        self._backend = backend
        self._error: BaseException | None = None
        self._ms = 0.0
        self._thread = threading.Thread(target=self._run, name="trtstudio-onnx2torch-import", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from trtstudio.backends.torch_convert import import_onnx2torch

        t0 = time.perf_counter()
        try:
            import_onnx2torch(self._backend)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread in join()
            self._error = exc
        self._ms = (time.perf_counter() - t0) * 1e3

    def join(self) -> dict[str, float]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return {"import_ms": self._ms}
