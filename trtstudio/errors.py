"""Errors that reach the user as one line: ``error: FILE: what is wrong``."""

from __future__ import annotations

import os


class InputError(Exception):
    """Bad input from the user (a file, a flag): CLI exits 2, GUI shows a dialog."""

    exit_code = 2

    def __init__(self, path: str | os.PathLike[str] | None, message: str) -> None:
        self.path = None if path is None else os.fspath(path)
        self.message = message
        super().__init__(self.one_line())

    def one_line(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class BuildError(Exception):
    """An engine build that ran and failed (CLI exits 1; findings and log still shown)."""

    exit_code = 1


class BackendError(Exception):
    """A backend that is missing, cannot load, or raised while running."""

    exit_code = 2


class FieldError(InputError):
    """Bad value in one field of a request (``shapes``, ``input``, ``iterations``...).

    The core names fields, not flags or widgets: the CLI turns ``field`` into its flag
    (``--shapes``), the window into its form label ("Run shape")."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(field, message)

    def named(self, name: str) -> InputError:
        """The same error with the field shown as ``name`` (a flag or a label)."""
        return InputError(name, self.message)
