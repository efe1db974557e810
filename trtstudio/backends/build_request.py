"""One engine build for the CLI and the window: a :class:`BuildRequest` in, a
:class:`~trtstudio.backends.build.BuildResult` out, through :func:`run_build`.

``trtstudio build`` builds its request from its flags (``commands/build.py``); the window's build
dialog builds the same request from its form (``ui/build_dialog.py``). Both call :func:`run_build`,
so the same model and settings give the same ``trtstudio.build/1`` document. The request's
``shapes`` are only what the user set (``--shapes``/``--min-shapes``/... or the dialog's cells the
user edited): every size the user left open comes from the one shape plan
(:func:`trtstudio.backends.shapes.plan_shapes`: metadata such as Ultralytics ``imgsz``, graph pins,
defaults), in the window as on the command line.

Errors in a request name its fields (``shapes``, ``targets``, ``opt_level``...) through
:class:`~trtstudio.errors.FieldError`: the CLI shows the field as its flag, the dialog as its label.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trtstudio.backends.build import (
    DEFAULT_TARGETS,
    BuildOptions,
    BuildResult,
    CancelFn,
    LogFn,
    ParsedFn,
    ProgressFn,
    build_engine,
    normalize_target,
)
from trtstudio.errors import FieldError, InputError

Shape = tuple[int, ...]
Triple = tuple[Shape, Shape, Shape]


@dataclass
class BuildRequest:
    """What a build builds: an ONNX model into an engine file, for targets, with the user's shapes."""

    model: str
    output: str | None = None  # the engine file (None: the model's path with .engine)
    backend: str = "auto"  # rtx | tensorrt | auto
    targets: list[str] = field(default_factory=lambda: list(DEFAULT_TARGETS))
    workspace_bytes: int | None = None
    shapes: dict[str, Triple] = field(default_factory=dict)  # input -> (min, opt, max) the user set
    opt_level: int | None = None
    timing_cache: str | None = None
    detailed_profiling: bool = True
    tf32: bool = True
    fp16: bool = False
    int8: bool = False
    bf16: bool = False
    strongly_typed: bool = False
    shapes_source: str | None = None  # how the shape plan names the user's shapes (None: the CLI's flags)

    def validate(self) -> None:
        """Raise :class:`FieldError` naming the first field that is wrong."""
        if not self.model:
            raise FieldError("model", "no model given")
        if self.output is not None and not self.output.strip():
            raise FieldError("output", "give an engine file to write")
        if self.opt_level is not None and not 0 <= self.opt_level <= 5:
            raise FieldError("opt_level", f"optimization level {self.opt_level} is out of range 0..5")
        if self.workspace_bytes is not None and self.workspace_bytes < 0:
            raise FieldError("workspace_bytes", "must be 0 or more")
        for t in self.targets:
            try:
                normalize_target(t)
            except InputError as exc:
                raise FieldError("targets", exc.message) from None
        for name, triple in self.shapes.items():
            if len(triple) != 3 or len({len(s) for s in triple}) != 1:
                raise FieldError("shapes", f"input '{name}': min/opt/max shapes have different ranks")
            if any(not a <= b <= c for a, b, c in zip(*triple, strict=True)):
                raise FieldError("shapes", f"input '{name}': need min <= opt <= max in every dimension")

    def engine_path(self) -> str:
        """The engine file the build writes."""
        return self.output if self.output else str(Path(self.model).with_suffix(".engine"))

    def options(self) -> BuildOptions:
        """The :class:`BuildOptions` of this request (one profile: the user's shapes, planned around)."""
        return BuildOptions(
            backend=self.backend, targets=list(self.targets), workspace_bytes=self.workspace_bytes,
            profiles=[dict(self.shapes)] if self.shapes else [], opt_level=self.opt_level,
            timing_cache=self.timing_cache, detailed_profiling=self.detailed_profiling, tf32=self.tf32,
            fp16=self.fp16, int8=self.int8, bf16=self.bf16, strongly_typed=self.strongly_typed,
            shapes_source=self.shapes_source,
        )

    def to_json(self) -> dict[str, Any]:
        """The request as JSON (what the window logs when it starts a build)."""
        doc = self.options().to_json()
        doc.update(model=self.model, output=self.engine_path())
        return doc


def run_build(request: BuildRequest, *, progress: ProgressFn | None = None, log: LogFn | None = None,
              cancel: CancelFn | None = None, parsed: ParsedFn | None = None) -> BuildResult:
    """Validate ``request`` (FieldError) and build it (:func:`~trtstudio.backends.build.build_engine`,
    whose callbacks these are)."""
    request.validate()
    return build_engine(request.model, request.engine_path(), request.options(), progress=progress, log=log,
                        cancel=cancel, parsed=parsed)
