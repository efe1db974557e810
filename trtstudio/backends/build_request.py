"""One engine build for the CLI and the window: a :class:`BuildRequest` in, a
:class:`~trtstudio.backends.build.BuildResult` out, through :func:`run_build`.

``trtstudio build`` builds its request from its flags (``commands/build.py``); the window's build
dialog builds the same request from its form (``ui/build_dialog.py``). Both call :func:`run_build`,
so the same model and settings give the same ``trtstudio.build/1`` document. The request's
shapes (its one profile) are only what the user set (``--shapes``/``--min-shapes``/... or the dialog's cells the
user edited): every size the user left open comes from the one shape plan
(:func:`trtstudio.backends.shapes.plan_shapes`: metadata such as Ultralytics ``imgsz``, graph pins,
defaults), in the window as on the command line.

Errors in a request name its fields (``shapes``, ``targets``, ``opt_level``...) through
:class:`~trtstudio.errors.FieldError`: the CLI shows the field as its flag, the dialog as its label.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trtstudio.backends.build import (
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


@dataclass(kw_only=True)
class BuildRequest(BuildOptions):
    """What a build builds: an ONNX ``model`` into the engine file ``output``, with the build options.

    ``profiles`` holds at most the one profile of what the user set (the field ``shapes`` in errors);
    the sizes the user left open come from the shape plan."""

    model: str
    output: str | None = None  # the engine file (None: the model's path with .engine)

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
        for name, triple in (self.profiles[0] if self.profiles else {}).items():
            if len(triple) != 3 or len({len(s) for s in triple}) != 1:
                raise FieldError("shapes", f"input '{name}': min/opt/max shapes have different ranks")
            if any(not a <= b <= c for a, b, c in zip(*triple, strict=True)):
                raise FieldError("shapes", f"input '{name}': need min <= opt <= max in every dimension")

    def engine_path(self) -> str:
        """The engine file the build writes."""
        return self.output if self.output else str(Path(self.model).with_suffix(".engine"))

    def to_json(self) -> dict[str, Any]:
        """The request as JSON (what the window logs when it starts a build)."""
        return {"model": self.model, "output": self.engine_path(), **super().to_json()}


def run_build(request: BuildRequest, *, progress: ProgressFn | None = None, log: LogFn | None = None,
              cancel: CancelFn | None = None, parsed: ParsedFn | None = None) -> BuildResult:
    """Validate ``request`` (FieldError) and build it (:func:`~trtstudio.backends.build.build_engine`,
    whose callbacks these are)."""
    request.validate()
    return build_engine(request.model, request.engine_path(), request, progress=progress, log=log,
                        cancel=cancel, parsed=parsed)
