"""The version of trtstudio: one leaf module, read by the package's ``__init__``, by ``pyproject.toml``'s
dynamic version and by every module that prints or records it (none of them imports the package's face)."""

__version__ = "0.1.0"
