"""Build TensorRT engines from ONNX, with TensorRT-RTX or full TensorRT, with progress, log and cancel.

One code path serves both runtimes: ``tensorrt_rtx`` and ``tensorrt`` share the builder, parser and
inspector API. Features are detected on the imported module (``hasattr``), never on its version
string: the compute-capability targets exist only in TensorRT-RTX (``trt.ComputeCapability``,
``IBuilderConfig.set_compute_capability``); the weak-typing flags ``BuilderFlag.FP16/INT8/BF16``
exist only in TensorRT 10 (TensorRT 11 and TensorRT-RTX are strongly typed).

The builder logs at verbose level into a :class:`LogRecord` list; TensorRT-RTX prints the engine's
layers there (``Layers:`` listing) and full TensorRT prints ``Engine Layer Information:``, which
:mod:`trtstudio.engine.readers.rtx_log` turns into an :class:`~trtstudio.engine.model.EngineInfo`.
When the engine can be deserialized here (a GPU the engine was built for), the inspector's JSON is
kept too (``BuildResult.layer_info_json``).

The model is read once per build (:func:`trtstudio.backends.model_io.read_onnx`): the shape plan, the
renaming of ``?`` dims, the parser's diagnoses and the failure hints all use that one read. The runtime
import, the parsed network and the versions come from :mod:`trtstudio.backends.trt_parser`, which the
support check (:mod:`trtstudio.backends.support`) shares.

Nothing heavy is imported at module level; ``tensorrt_rtx``/``tensorrt`` are imported in
:func:`~trtstudio.backends.trt_parser.import_runtime`.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trtstudio.backends.build_precision import (
    ConversionError,
    PrecisionStep,
    flag_step,
    flags_to_convert,
    give_precision,
)
from trtstudio.backends.model_io import UNKNOWN_DIM, OnnxModel, onnx_model, read_onnx
from trtstudio.backends.trt_parser import AUTO_ORDER as AUTO_ORDER  # re-exported: the "auto" order
from trtstudio.backends.trt_parser import MODULES as MODULES  # re-exported: backend -> (module, pip hint)
from trtstudio.backends.trt_parser import import_runtime, parsed_network, versions
from trtstudio.engine.buildlog import build_log_text, log_line
from trtstudio.engine.buildtime import MemoryWatch, PhaseRecorder
from trtstudio.errors import BackendError, InputError

if TYPE_CHECKING:
    from trtstudio.engine.model import EngineInfo

Shape = tuple[int, ...]
ProgressFn = Callable[[str, int, int], None]
LogFn = Callable[[str, str], None]
CancelFn = Callable[[], bool]
ParsedFn = Callable[[list[dict[str, Any]]], None]

# MODULES and AUTO_ORDER live with the runtime import (backends.trt_parser), re-exported above
import_backend = import_runtime  # the name this module had for it
DEFAULT_MAX_DIM = 8
DEFAULT_TARGETS = ("sm86",)
SCHEMA = "trtstudio.build/1"


@dataclass
class LogRecord:
    """One message of the builder log: ``severity`` is INTERNAL_ERROR/ERROR/WARNING/INFO/VERBOSE."""

    severity: str
    message: str
    time_s: float = 0.0  # seconds since the build started
    source: str = "TRT"  # "TRT" for the builder, "trtstudio" for our own notes

    def format(self) -> str:
        """The record as TensorRT's own Python logger prints it: ``[TRT] [V] message``."""
        return log_line(self.source, self.severity, self.message)

    def to_json(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "message": self.message,
            "time_s": round(self.time_s, 4),
            "source": self.source,
        }


@dataclass
class BuildOptions:
    """How to build. ``profiles``: one dict per optimization profile, input name -> (min, opt, max).

    Inputs with dynamic dimensions that a profile does not name get the shape plan's sizes
    (:func:`trtstudio.backends.shapes.plan_shapes`: metadata, graph pins, else defaults with a
    warning; a default batch is ``1..default_max_dim``); shape-tensor inputs get its values. ``targets`` are TensorRT-RTX compute capabilities
    (``sm86``, ``sm120``...); full TensorRT builds for the GPU it runs on and ignores them with a
    warning. ``fp16``/``int8``/``bf16`` are TensorRT 10's weak-typing flags where the module has
    them; on a strongly typed runtime (TensorRT 11, TensorRT-RTX) the model is converted to that
    precision as ``trtstudio precision`` does and the converted model is built
    (:mod:`trtstudio.backends.build_precision`; INT8 needs ``calib``, calibration data). A built engine
    with no layer in the precision asked for is a warning, and a failed build with ``require_precision``.
    """

    backend: str = "auto"  # "rtx" | "tensorrt" | "auto"
    targets: list[str] = field(default_factory=lambda: list(DEFAULT_TARGETS))
    workspace_bytes: int | None = None
    profiles: list[dict[str, tuple[Shape, Shape, Shape]]] = field(default_factory=list)
    opt_level: int | None = None
    timing_cache: str | None = None
    detailed_profiling: bool = True
    tf32: bool = True
    fp16: bool = False
    int8: bool = False
    bf16: bool = False
    strongly_typed: bool = False
    calib: str | None = None  # INT8 calibration data on a strongly typed runtime (folder or samples.py)
    require_precision: bool = False  # no layer in the precision asked for: the build fails (exit 1)
    require_cache_hits: bool = False  # a timing-cache miss fails the build (TensorRT's --errorOnTimingCacheMiss)
    measure_memory: bool = True  # peak host RSS (and GPU memory where NVML is) of the build process
    record_timeline: bool = True  # the phases from the progress monitor (off: benchmarks/build_timeline.py's baseline)
    default_max_dim: int = DEFAULT_MAX_DIM
    shapes_source: str | None = None  # how the plan names the user's shapes (None: the CLI's flags)

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "targets": list(self.targets),
            "workspace_bytes": self.workspace_bytes,
            "profiles": [{k: [list(s) for s in v] for k, v in p.items()} for p in self.profiles],
            "opt_level": self.opt_level,
            "timing_cache": self.timing_cache,
            "detailed_profiling": self.detailed_profiling,
            "tf32": self.tf32,
            "fp16": self.fp16,
            "int8": self.int8,
            "bf16": self.bf16,
            "strongly_typed": self.strongly_typed,
            "calib": self.calib,
            "require_precision": self.require_precision,
            "require_cache_hits": self.require_cache_hits,
        }


@dataclass
class BuildResult:
    """What a build produced; ``ok`` False with ``error`` set when it failed or was cancelled."""

    ok: bool
    model: str | None = None
    engine_path: str | None = None
    engine_bytes: int | None = None
    log: list[LogRecord] = field(default_factory=list)
    layer_info_json: str | None = None
    unsupported: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    versions: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    cancelled: bool = False
    settings: dict[str, Any] = field(default_factory=dict)
    shape_plan: Any = None  # the ShapePlan the profiles were made from (trtstudio.backends.shapes)
    precision: PrecisionStep | None = None  # how the requested precision was given (None: none asked)
    timeline: list[dict[str, Any]] = field(default_factory=list)  # [{phase, start_s, seconds, share, detail}]
    memory: dict[str, Any] = field(default_factory=dict)  # measured peaks (engine.buildtime.MemoryWatch)

    def log_text(self) -> str:
        """The log as one text, headed by a JSON line the rtx_log reader uses for versions/settings."""
        extra = {"timeline": self.timeline, "memory": self.memory, "seconds": round(self.seconds, 4),
                 "cancelled": self.cancelled}
        return build_log_text(self.versions, self.settings, [r.format() for r in self.log], extra)

    @cached_property
    def engine_info(self) -> EngineInfo | None:
        """The built engine's layers as an EngineInfo (inspector JSON when present, else the verbose
        build log), or None when neither can be read. Read once, on first access (the GUI does it
        in the build worker)."""
        import json

        from trtstudio.engine.readers._common import info_from_layer_doc
        from trtstudio.engine.readers.rtx_log import read

        try:
            if self.layer_info_json:
                info = info_from_layer_doc(Path("<inspector>"), json.loads(self.layer_info_json))
            else:
                info = read(Path(BUILD_LOG_SOURCE), self.log_text())
        except (InputError, ValueError):
            return None
        if self.engine_path:
            info.sources.insert(0, self.engine_path)
        info.versions.update({k: v for k, v in self.versions.items() if k not in info.versions})
        return info

    def layers_json(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The built engine's layers as JSON (inspector output, else the verbose log) and the
        reader's warnings; empty for a build that failed."""
        info = self.engine_info if self.ok else None
        if info is None:
            return [], []
        return [lay.to_json() for lay in info.layers], [w for w in info.warnings if not w.startswith("builder ")]

    def to_json(self) -> dict[str, Any]:
        """The ``trtstudio.build/1`` document (``trtstudio build --json`` prints it)."""
        layers, reader_warnings = self.layers_json()
        return {
            "schema": SCHEMA,
            "ok": self.ok,
            "model": self.model,
            "engine_path": self.engine_path,
            "engine_bytes": self.engine_bytes,
            "seconds": round(self.seconds, 4),
            "versions": self.versions,
            "settings": self.settings,
            "unsupported": self.unsupported,
            "shape_plan": self.shape_plan.to_json() if self.shape_plan is not None else None,
            "precision": self.precision.to_json() if self.precision is not None else None,
            "layers": layers,
            "warnings": self.warnings + reader_warnings,
            "cancelled": self.cancelled,
            "timeline": self.timeline,
            "memory": self.memory,
            "log": [r.to_json() for r in self.log],
            "error": self.error,
        }

    def render_text(self) -> str:
        """The input shapes, then what was built and its layers, or why the build failed."""
        lines: list[str] = []
        if self.shape_plan is not None and self.shape_plan.inputs:
            lines += ["input shapes", self.shape_plan.render_text()]
        if self.precision is not None:
            lines.append(self.precision.render_text())
        if self.ok:
            layers, _ = self.layers_json()
            module = self.versions.get("module", "?")
            targets = ",".join(self.settings.get("targets") or []) or "this GPU"
            lines.append(f"built {self.engine_path or '(not written)'}: {self.engine_bytes} bytes in {self.seconds:.2f} s "
                         f"with {module} {self.versions.get(module, '')} for {targets}")
            lines += self._timeline_text()
            lines.append(f"{len(layers)} layers")
            for lay in layers:
                nodes = ", ".join(lay.get("onnx_nodes") or [])
                lines.append(f"  {lay['index']:4d}  {lay['type']:<16} {lay.get('precision') or '-':<6} {lay['name']}"
                             + (f"  <- {nodes}" if nodes else ""))
            return "\n".join(lines)
        if self.unsupported:
            lines.append(f"build failed after {self.seconds:.2f} s: the ONNX parser rejected "
                         f"{len(self.unsupported)} node(s)")
        else:
            lines.append(f"build failed after {self.seconds:.2f} s: {self.error}")
            lines += self._timeline_text()
        for u in self.unsupported:
            op, label, dom = u.get("op_type") or "?", str(u.get("node")), u.get("domain")
            where = f" [{dom}]" if dom and dom != "ai.onnx" else ""
            lines.append(f"  unsupported: {label}{'' if label.endswith(op) else f' ({op})'}{where}: {u.get('reason')}")
            if u.get("hint"):
                lines.append(f"      hint: {u['hint']}")
        return "\n".join(lines)


    def _timeline_text(self) -> list[str]:
        from trtstudio.engine.buildtime import render_timeline

        if not self.timeline:
            return []
        m = self.memory
        mem = []
        if m.get("host_peak_bytes") is not None:
            mem.append(f"host peak {m['host_peak_bytes'] / (1 << 20):.0f} MiB")
        if m.get("gpu_peak_bytes") is not None:
            mem.append(f"GPU peak {m['gpu_peak_bytes'] / (1 << 20):.0f} MiB")
        return (["build phases" + (" (until cancelled)" if self.cancelled else "")] + render_timeline(self.timeline)
                + ([f"build memory: {', '.join(mem)}"] if mem else []))


def normalize_target(target: str) -> str:
    """``sm86``/``SM86``/``8.6``/``86`` -> ``SM86`` (the ``trt.ComputeCapability`` member name)."""
    t = target.strip().upper().replace("_", "")
    m = re.fullmatch(r"(?:SM)?(\d+)(?:\.(\d+))?", t)
    if not m:
        if t in ("CURRENT", "NATIVE"):
            return "CURRENT"
        raise InputError(None, f"bad compute capability {target!r}; write e.g. sm86 or 8.6")
    return f"SM{m.group(1)}{m.group(2) or ''}"


def _make_logger(trt: Any, records: list[LogRecord], t0: float, callback: LogFn | None) -> Any:
    class _Logger(trt.ILogger):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            trt.ILogger.__init__(self)

        def log(self, severity: Any, msg: str) -> None:
            sev = getattr(severity, "name", str(severity)).split(".")[-1]
            records.append(LogRecord(sev, msg, time.perf_counter() - t0))
            if callback is not None:
                try:
                    callback(sev, msg)
                except Exception:  # noqa: BLE001 - a faulty callback must not break TensorRT's thread
                    pass

    return _Logger()


def _make_monitor(
    trt: Any, progress: ProgressFn | None, cancel: CancelFn | None, state: dict[str, Any],
    recorder: PhaseRecorder | None = None,
) -> Any:
    class _Monitor(trt.IProgressMonitor):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            trt.IProgressMonitor.__init__(self)
            self.totals: dict[str, int] = {}

        def _report(self, phase: str, step: int, total: int) -> None:
            if progress is not None:
                try:
                    progress(phase, step, total)
                except Exception:  # noqa: BLE001
                    pass

        def phase_start(self, phase_name: str, parent_phase: str | None, num_steps: int) -> None:
            self.totals[phase_name] = int(num_steps)
            if recorder is not None:
                recorder.start(phase_name, int(num_steps))
            self._report(phase_name, 0, int(num_steps))

        def step_complete(self, phase_name: str, step: int) -> bool:
            if recorder is not None:
                recorder.step(phase_name, int(step) + 1, self.totals.get(phase_name, 0))
            self._report(phase_name, int(step) + 1, self.totals.get(phase_name, 0))
            try:
                stop = bool(cancel()) if cancel is not None else False
            except Exception:  # noqa: BLE001
                stop = False
            if stop:
                state["cancelled"] = True
            return not stop

        def phase_finish(self, phase_name: str) -> None:
            total = self.totals.get(phase_name, 0)
            if recorder is not None:
                recorder.finish(phase_name)
            self._report(phase_name, total, total)

    return _Monitor()


BUILD_LOG_SOURCE = "<build log>"  # the source name of a build's engine read from its own log
PLACEHOLDER_DIM = UNKNOWN_DIM  # what some exporters (Paddle2ONNX) name every unknown dimension


def placeholder_dims_apart(model: Any, plan: Any = None) -> tuple[bytes | None, str | None]:
    """(the model serialized with each input dimension named ``?`` given a name of its own, a note
    saying so), or (None, None) where fewer than two are so named or the model cannot be rewritten.

    TensorRT's ONNX parser holds dimensions of one name equal, so a model naming an image's height
    and width both ``?`` can only be built square ("different constant values" in getBounds);
    ONNX Runtime and trtstudio's shape plan read ``?`` as "unknown". Weights stored outside the
    model stay there (the parser finds them beside the model's path). The new names are ones the
    model does not use. ``model``: the build's :class:`~trtstudio.backends.model_io.OnnxModel` (its
    proto is left as it was) or a path; ``plan``: the build's shape plan, where its inputs declare
    fewer than two unknown dimensions nothing is serialized."""
    if plan is not None and sum(d == PLACEHOLDER_DIM for i in plan.inputs for d in i.declared) < 2:
        return None, None
    try:
        proto = onnx_model(model).proto
    except InputError:
        return None, None
    dims = [(inp.name, axis, d) for inp in proto.graph.input if inp.type.HasField("tensor_type")
            for axis, d in enumerate(inp.type.tensor_type.shape.dim) if d.dim_param == PLACEHOLDER_DIM]
    if len(dims) < 2:
        return None, None
    g = proto.graph
    taken = {d.dim_param for vi in (*g.input, *g.output, *g.value_info) if vi.type.HasField("tensor_type")
             for d in vi.type.tensor_type.shape.dim if d.dim_param}
    for name, axis, d in dims:
        new, k = f"{name}_dim{axis}", 1
        while new in taken:
            new, k = f"{name}_dim{axis}_{k}", k + 1
        taken.add(new)
        d.dim_param = new
    try:
        data = proto.SerializeToString()
    except ValueError:  # over protobuf's 2 GB
        data = None
    finally:
        for _name, _axis, d in dims:
            d.dim_param = PLACEHOLDER_DIM
    if data is None:
        return None, None
    renamed = ", ".join(f"{name}[{axis}]" for name, axis, _ in dims)
    return data, (f"the model names input dimensions {renamed} all '{PLACEHOLDER_DIM}', which TensorRT would hold "
                  "equal; built with each as a dimension of its own")


def parse_onnx(model_path: str | os.PathLike[str], backend: str = "auto") -> list[dict[str, Any]]:
    """Parse the model with the backend's ONNX parser; return the nodes it rejects (empty if none).

    Each entry is ``{"node": name, "op_type": op, "reason": text, "code": ErrorCode name, "index": i}``.
    """
    from trtstudio.backends.support import rejected_nodes

    model = read_onnx(model_path)
    trt, _ = import_runtime(backend)
    logger = _make_logger(trt, [], time.perf_counter(), None)
    with parsed_network(trt, logger, model_path) as net:
        return [] if net.ok else rejected_nodes(net.parser, model, trt)


def _profile(network: Any, given: dict[str, tuple[Shape, Shape, Shape]], plan: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(shapes, shape-tensor values) of one optimization profile: ``given`` for the inputs it names (the
    first profile is the plan's user source, so they agree), else the shape plan (:mod:`trtstudio.backends.shapes`), the one source of
    the sizes the user left open."""
    prof: dict[str, tuple[Shape, Shape, Shape]] = {}
    values: dict[str, tuple[Shape, Shape, Shape]] = {}
    for i in range(network.num_inputs):
        t = network.get_input(i)
        shape = tuple(int(d) for d in t.shape)
        planned = plan.get(t.name)
        if getattr(t, "is_shape_tensor", False):
            if planned is not None and planned.values is not None:
                values[t.name] = planned.values
            else:  # the plan has warned that no values are known
                n = shape[0] if shape else 1
                values[t.name] = ((1,) * n, (1,) * n, (1,) * n)
            if any(d < 0 for d in shape) and planned is not None:
                prof[t.name] = (planned.min, planned.opt, planned.max)
            continue
        if t.name in given:
            prof[t.name] = tuple(tuple(int(d) for d in s) for s in given[t.name])  # type: ignore[assignment]
        elif any(d < 0 for d in shape):
            if planned is None or len(planned.opt) != len(shape):
                raise BackendError(f"{t.name}: the parsed network's input {list(shape)} is not the model's "
                                   f"({planned.declared if planned is not None else 'not an input of the model'})")
            prof[t.name] = (planned.min, planned.opt, planned.max)
    unknown = set(given) - {network.get_input(i).name for i in range(network.num_inputs)}
    if unknown:
        names = ", ".join(network.get_input(i).name for i in range(network.num_inputs))
        raise InputError(
            None, f"shape given for unknown input(s) {sorted(unknown)}; the model's inputs: {names}"
        )
    return prof, values


def _error_text(records: list[LogRecord]) -> str:
    errors = [r.message for r in records if r.severity in ("ERROR", "INTERNAL_ERROR")]
    if not errors:
        return "the builder returned no engine (no error in the log)"
    return errors[-1] if len(errors) == 1 else " | ".join(dict.fromkeys(errors[-3:]))


def _try_inspector(trt: Any, plan: bytes) -> str | None:
    """The inspector's JSON for the plan, or None where it cannot be deserialized (no fitting GPU)."""
    try:
        quiet = _make_logger(trt, [], time.perf_counter(), None)
        runtime = trt.Runtime(quiet)
        engine = runtime.deserialize_cuda_engine(plan)
        if engine is None:
            return None
        inspector = engine.create_engine_inspector()
        text = inspector.get_engine_information(trt.LayerInformationFormat.JSON)
        return str(text) if text else None
    except Exception:  # noqa: BLE001 - any failure here only means "no inspector JSON"
        return None


class _Build:
    """State of one build_engine call; split out so each step stays short."""

    def __init__(self, trt: Any, name: str, options: BuildOptions, log: LogFn | None, model: OnnxModel) -> None:
        self.trt = trt
        self.model = model
        self.options = options
        self.t0 = time.perf_counter()
        self.records: list[LogRecord] = []
        self.log_cb = log
        self.warnings: list[str] = []
        self.converted: list[str] = []  # precision flags given to the model instead of the builder
        self.logger = _make_logger(trt, self.records, self.t0, log)
        self.recorder = PhaseRecorder(t0=self.t0, enabled=options.record_timeline)
        self.memory = MemoryWatch().start() if options.measure_memory else None
        self.result = BuildResult(
            ok=False, log=self.records, versions=versions(trt, name), warnings=self.warnings
        )

    def forget_model(self) -> None:
        """Keep of the model only what a failure hint reads (its control-flow nodes, copied), so its
        weights are not held while TensorRT builds."""
        import onnx

        light = onnx.ModelProto()
        light.graph.node.extend(n for n in self.model.proto.graph.node if n.op_type in ("If", "Loop", "Scan"))
        self.model = OnnxModel(light, self.model.path)

    def note(self, message: str) -> None:
        """An INFO line of ours in the build log (and to the log callback)."""
        self.records.append(LogRecord("INFO", message, time.perf_counter() - self.t0, source="trtstudio"))
        if self.log_cb is not None:
            self.log_cb("INFO", message)

    def warn(self, message: str) -> None:
        self.warnings.append(message)
        self.records.append(LogRecord("WARNING", message, time.perf_counter() - self.t0, source="trtstudio"))
        if self.log_cb is not None:
            self.log_cb("WARNING", message)

    def configure(self, builder: Any, network: Any, config: Any) -> dict[str, Any]:
        trt, o = self.trt, self.options
        settings: dict[str, Any] = {}
        pv = trt.ProfilingVerbosity
        config.profiling_verbosity = pv.DETAILED if o.detailed_profiling else pv.LAYER_NAMES_ONLY
        settings["profiling_verbosity"] = config.profiling_verbosity.name
        if o.workspace_bytes is not None:
            config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, int(o.workspace_bytes))
            settings["workspace_bytes"] = int(o.workspace_bytes)
        if o.opt_level is not None:
            if not 0 <= o.opt_level <= 5:
                raise InputError(None, f"optimization level {o.opt_level} is out of range 0..5")
            config.builder_optimization_level = int(o.opt_level)
        settings["opt_level"] = int(config.builder_optimization_level)
        if hasattr(trt.BuilderFlag, "TF32"):
            (config.set_flag if o.tf32 else config.clear_flag)(trt.BuilderFlag.TF32)
            settings["tf32"] = bool(o.tf32)
        flagged = []
        for flag in ("fp16", "int8", "bf16"):
            if getattr(o, flag) and flag not in self.converted:  # converted: given to the model
                config.set_flag(getattr(trt.BuilderFlag, flag.upper()))
                settings[flag] = True
                flagged.append(flag)
        res = self.result
        res.precision = res.precision or flag_step(flagged, res.model or "", trt.__name__)
        if res.precision is not None:
            settings.update(res.precision.settings())
        settings["targets"] = self._targets(config)
        settings["profiles"] = []
        for given in o.profiles or [{}]:
            shapes, values = _profile(network, given, self.result.shape_plan)
            if not shapes and not values:
                continue
            prof = builder.create_optimization_profile()
            for tname, (mn, opt, mx) in shapes.items():
                prof.set_shape(tname, mn, opt, mx)
            for tname, (mn, opt, mx) in values.items():
                prof.set_shape_input(tname, mn, opt, mx)
            config.add_optimization_profile(prof)
            doc: dict[str, Any] = {k: [list(s) for s in v] for k, v in shapes.items()}
            doc.update({k: {"values": [list(s) for s in v]} for k, v in values.items()})
            settings["profiles"].append(doc)
        return settings

    def _targets(self, config: Any) -> list[str]:
        trt, targets = self.trt, self.options.targets
        cc_enum = getattr(trt, "ComputeCapability", None)
        if cc_enum is None or not hasattr(config, "set_compute_capability"):
            if targets and tuple(targets) != DEFAULT_TARGETS:
                self.warn(
                    f"targets {','.join(targets)} ignored: {trt.__name__} builds for the GPU in this machine "
                    "(compute-capability targets need TensorRT-RTX)"
                )
            return []
        names = [normalize_target(t) for t in targets] or ["CURRENT"]
        known = [n for n in dir(cc_enum) if n.startswith("SM")]
        members = []
        for n in dict.fromkeys(names):
            member = getattr(cc_enum, n, None)
            if member is None:
                hint = " (Hopper has no TensorRT-RTX target: build with full TensorRT)" if n == "SM90" else ""
                raise InputError(
                    None,
                    f"compute capability {n} is not a {trt.__name__} target{hint}; choose from {', '.join(known)}",
                )
            members.append(member)
        config.num_compute_capabilities = len(members)
        for i, member in enumerate(members):
            if not config.set_compute_capability(member, i):
                raise InputError(None, f"{trt.__name__} refused target {member.name} (see the log)")
        return [m.name for m in members]

    def timing_cache(self, config: Any) -> Any:
        path = self.options.timing_cache
        if not path:
            return None
        data = Path(path).read_bytes() if Path(path).is_file() else b""
        cache = config.create_timing_cache(data)
        if cache is None or not config.set_timing_cache(cache, True):
            self.warn(f"timing cache {path} could not be used; building without it")
            return None
        return cache

    def save_timing_cache(self, config: Any) -> None:
        path = self.options.timing_cache
        cache = config.get_timing_cache() if path else None
        if cache is None or path is None:
            return
        try:
            Path(path).write_bytes(bytes(cache.serialize()))
        except OSError as exc:
            self.warn(f"timing cache {path} not saved: {exc}")


def build_engine(
    model_path: str | os.PathLike[str],
    out_path: str | os.PathLike[str] | None,
    options: BuildOptions | None = None,
    *,
    progress: ProgressFn | None = None,
    log: LogFn | None = None,
    cancel: CancelFn | None = None,
    parsed: ParsedFn | None = None,
) -> BuildResult:
    """Build an engine from an ONNX model and write it to ``out_path`` (not written when None).

    ``progress(phase, step, total)`` follows the builder's progress monitor; ``log(severity,
    message)`` receives every builder log record as it arrives (verbose level); ``cancel()`` is
    polled at every progress step and stops the build when it returns True; ``parsed(rejected)``
    is called once the parser is done, with the nodes it rejected (empty when it took them all),
    before the build proper. A failed, rejected or cancelled build returns ``ok=False`` with
    ``error`` set; bad input (missing file, not ONNX, bad option) raises InputError, a missing
    runtime raises BackendError. The model file is read once (and parsed once by TensorRT).
    """
    options = options or BuildOptions()
    model = read_onnx(model_path)
    trt, name = import_runtime(options.backend)
    b = _Build(trt, name, options, log, model)
    b.converted = flags_to_convert(trt, options)
    res = b.result
    res.model = str(model_path)
    b.recorder.start("Reading the model and planning shapes", canonical="parsing")
    res.shape_plan = _plan(model, options)
    for w in res.shape_plan.warnings:
        b.warn(w)
    if options.calib and "int8" not in b.converted:
        b.warn(f"calibration data {options.calib} not used: only INT8 on a strongly typed runtime reads it")
    if b.converted:
        try:
            model_path, model = _give_precision(b, model_path, out_path, progress)
        except ConversionError as exc:
            res.error = str(exc)
            return _finish(b)
    data, note = placeholder_dims_apart(model, res.shape_plan)
    if note:
        b.warn(note)
    try:
        b.recorder.finish("Reading the model and planning shapes")
        b.recorder.start("Parsing the ONNX model", canonical="parsing")
        with parsed_network(trt, b.logger, model_path, strongly_typed=options.strongly_typed, data=data) as net:
            b.recorder.finish("Parsing the ONNX model")
            if not net.ok:
                from trtstudio.backends.support import rejected_nodes, summary_line

                res.unsupported = rejected_nodes(net.parser, model, trt)
                res.error = f"the {trt.__name__} ONNX parser rejected the model: {summary_line(res.unsupported) or 'see the log'}"
            if parsed is not None:
                parsed(list(res.unsupported))
            if net.ok:
                del model  # not held through the build proper (a big model's weights)
                b.forget_model()
                _build_parsed(b, net, out_path, progress, cancel)
    except (InputError, BackendError):
        raise
    except MemoryError:
        res.error = "out of host memory while building: " + _error_text(b.records)
    except (RuntimeError, TypeError, ValueError, OSError) as exc:
        res.error = f"{type(exc).__name__}: {exc}".strip()
        if any(r.severity in ("ERROR", "INTERNAL_ERROR") for r in b.records):
            res.error += " | " + _error_text(b.records)
    return _finish(b)


def _give_precision(b: _Build, model_path: str | os.PathLike[str], out_path: str | os.PathLike[str] | None,
                    progress: ProgressFn | None) -> tuple[str, OnnxModel]:
    """Convert the model to the precision the runtime takes no flag for; (its path, its model)."""
    precision = b.converted[0]
    phase = f"Converting the model to {precision.upper()}"
    if progress is not None:
        progress(phase, 0, 1)
    b.note(f"{phase} ({b.trt.__name__} is strongly typed: the precision is the model's)")
    step = give_precision(model_path, precision, out_path, b.options, b.trt.__name__)
    b.result.precision = step
    b.note(step.summary())
    if progress is not None:
        progress(phase, 1, 1)
    return step.built_model, read_onnx(step.built_model)


def _build_parsed(b: _Build, net: Any, out_path: str | os.PathLike[str] | None, progress: ProgressFn | None,
                  cancel: CancelFn | None) -> None:
    """Configure and build the parsed network; the outcome goes into ``b.result``."""
    trt, res = b.trt, b.result
    state: dict[str, Any] = {"cancelled": False}
    config = net.builder.create_builder_config()
    res.settings = b.configure(net.builder, net.network, config)
    cache = b.timing_cache(config)
    _require_cache_hits(b, config)
    if hasattr(trt, "IProgressMonitor") and hasattr(config, "progress_monitor"):
        monitor = _make_monitor(trt, progress, cancel, state, b.recorder if b.recorder.enabled else None)
        config.progress_monitor = monitor
    elif cancel is not None:
        b.warn(f"{trt.__name__} has no progress monitor: cancel takes effect only after the build")
    if cancel is not None and cancel():
        state["cancelled"] = True
        plan = None
    else:
        b.recorder.start("TensorRT builder (outside its progress phases)", canonical="builder (other)")
        plan = net.builder.build_serialized_network(net.network, config)
        b.recorder.close()
    del cache
    if state["cancelled"] or (plan is None and cancel is not None and cancel()):
        res.cancelled = True
        res.error = "build cancelled"
        return
    if plan is None:
        res.error = _error_text(b.records)
        return
    b.recorder.start("Writing the engine", canonical="serialization")
    b.save_timing_cache(config)
    data = bytes(plan)
    res.engine_bytes = len(data)
    if out_path is not None:
        out = Path(out_path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        res.engine_path = str(out)
    res.layer_info_json = _try_inspector(trt, data)
    res.ok = True


def _plan(model: OnnxModel, options: BuildOptions) -> Any:
    """The shape plan of the first profile (user shapes, metadata, graph pins, defaults)."""
    from trtstudio.backends.shapes import plan_shapes, user_shapes_from_profile

    given = user_shapes_from_profile(options.profiles[0]) if options.profiles else {}
    ranged = any(len(set(v)) > 1 for v in given.values())
    source = options.shapes_source or ("--min/opt/max-shapes" if ranged else "--shapes")
    return plan_shapes(model, given, user_source=source, batch_max=options.default_max_dim, probe=True)


def _check_precision(b: _Build) -> None:
    """A built engine with no layer in the precision asked for: a warning (the rf-detr#1453 failure:
    an "FP16" build that wrote an FP32 engine), the build's error with ``require_precision``."""
    res = b.result
    if not res.ok or res.precision is None:
        return
    info = res.engine_info
    if info is None:
        return
    problem = res.precision.check_layers([lay.precision for lay in info.layers])
    if problem is None:
        return
    b.warn(problem)
    if b.options.require_precision:
        res.error = problem.split("; --require-precision")[0] + " (--require-precision)"


def _require_cache_hits(b: _Build, config: Any) -> None:
    """``require_cache_hits``: TensorRT's ERROR_ON_TIMING_CACHE_MISS flag (a miss fails the build);
    a runtime without it (TensorRT-RTX: no timing cache at all) is refused with the reason."""
    if not b.options.require_cache_hits:
        return
    flag = getattr(b.trt.BuilderFlag, "ERROR_ON_TIMING_CACHE_MISS", None)
    if flag is None or b.trt.__name__ == "tensorrt_rtx":
        raise InputError(None, f"--require-cache-hits needs a timing cache, which {b.trt.__name__} does not have "
                               "(TensorRT-RTX keeps no timing cache; its runtime cache is written when engines run)")
    if not b.options.timing_cache:
        raise InputError(None, "--require-cache-hits needs --timing-cache FILE (the cache that must cover the model)")
    config.set_flag(flag)
    b.result.settings["require_cache_hits"] = True


def _finish(b: _Build) -> BuildResult:
    res = b.result
    _check_precision(b)
    b.recorder.close()
    res.timeline = b.recorder.timeline()
    if b.memory is not None:
        res.memory = b.memory.stop()
    res.seconds = time.perf_counter() - b.t0
    if res.error and not res.ok and not res.cancelled and not res.unsupported and res.shape_plan is not None:
        from trtstudio.backends.support import control_flow_hint

        hint = res.shape_plan.explain_failure(res.error) or control_flow_hint(b.model, res.error)
        if hint:
            res.error = f"{res.error} -- {hint}"
    return res


# ---- TensorRT-RTX's runtime cache (it keeps no timing cache) ----

RUNTIME_CACHE_SCHEMA = "trtstudio.runtimecache/1"
RUNTIME_CACHE_API = ("IRuntimeCache: serialize, deserialize, reset; an IRuntimeConfig (ICudaEngine."
                     "create_runtime_config) makes one (create_runtime_cache) and takes it (set_runtime_cache)")


def runtime_cache_doc(path: str | os.PathLike[str], trt: Any) -> dict[str, Any]:
    """A TensorRT-RTX runtime cache file (the kernels compiled when engines run, kept in a file the
    application names through ``IRuntimeConfig.set_runtime_cache`` and ``IRuntimeCache.serialize``),
    as far as it can be read here: its size, SHA-256 and time, and what cannot be read and why.

    The API lists no entries (``serialize``/``deserialize``/``reset`` only), and ``deserialize`` needs
    a runtime config, which comes from a deserialized engine, which needs a GPU the engine runs on."""
    import datetime as _dt
    import hashlib

    p = Path(path)
    try:
        data = p.read_bytes()
        mtime = p.stat().st_mtime
    except OSError as exc:
        raise InputError(p, f"cannot read: {exc.strerror or exc}") from None
    cls = getattr(trt, "IRuntimeCache", None)
    api = sorted(n for n in dir(cls) if not n.startswith("_")) if cls is not None else []
    if cls is None:
        raise InputError(p, f"{getattr(trt, '__name__', 'this runtime')} has no IRuntimeCache (TensorRT-RTX has one)")
    module = getattr(trt, "__name__", "tensorrt_rtx")
    listed = [n for n in api if n not in ("serialize", "deserialize", "reset")]
    return {
        "schema": RUNTIME_CACHE_SCHEMA, "source": str(p), "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "modified": _dt.datetime.fromtimestamp(mtime, _dt.timezone.utc).replace(microsecond=0).isoformat(),
        "runtime": f"{module} {getattr(trt, '__version__', '')}".strip(),
        "api": api,
        "entries": None,
        "empty": len(data) == 0,
        "not_read": [
            "that it is a runtime cache: its format is not documented, so any file is taken as named",
            "entries: " + (f"{module}'s IRuntimeCache offers {', '.join(api)}, nothing that lists them"
                           if not listed else f"{module}'s IRuntimeCache has {', '.join(listed)}: not read by trtstudio yet"),
            "whether this runtime can use it: IRuntimeCache.deserialize needs a runtime config from a deserialized "
            "engine, and deserializing an engine needs a GPU it runs on (the cache is kept only for the GPU's SM, a "
            "TensorRT-RTX version >= and a CUDA version >= the ones that wrote it)",
        ],
    }


def render_runtime_cache(doc: dict[str, Any]) -> str:
    """Text of :func:`runtime_cache_doc`."""
    lines = [f"{doc['source']}: read as a TensorRT-RTX runtime cache, {doc['bytes']:,} bytes"
             + (" (empty: no kernel compiled into it yet)" if doc["empty"] else "")
             + f", sha256 {doc['sha256'][:16]}, written {doc['modified']}",
             "TensorRT-RTX keeps no timing cache; it compiles kernels when an engine runs and keeps them in this file"]
    lines += [f"not read here: {n}" for n in doc["not_read"]]
    return "\n".join(lines)
