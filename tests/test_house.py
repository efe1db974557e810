"""House rules over the whole package's source, read as text (``ast``; nothing is imported, so this
runs in the Qt-blocked core pass too: no ``gui`` mark).

No function or method is longer than :data:`MAX_LINES` lines (``def`` line to last line, decorators
aside): a longer one is cut into named steps (issue 53 item 2)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import trtstudio

PACKAGE = Path(trtstudio.__file__).parent
MAX_LINES = 80

# Functions allowed over MAX_LINES for now, each with its reason: "path/inside/package.py:Qual.name".
# Empty: engine/diagnose.py and backends/torch* (split by other items of issue 53) have none over it
# either. An entry that is no longer long is fine; none may be added without a reason.
ALLOWED: dict[str, str] = {}


def long_functions(source: str, where: str = "", limit: int = MAX_LINES) -> Iterator[tuple[str, int]]:
    """``(where:Qualified.name, lines)`` for each function or method of ``source`` over ``limit``
    lines, nested ones included (``outer.inner``, ``Class.method``)."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                if lines > limit:
                    yield f"{where}:{name}", lines
                yield from walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
            else:
                yield from walk(child, prefix)

    yield from walk(ast.parse(source), "")


def package_long_functions() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        found.update(long_functions(path.read_text(encoding="utf-8"), path.relative_to(PACKAGE).as_posix()))
    return found


def test_no_function_over_the_limit() -> None:
    over = {name: n for name, n in package_long_functions().items() if name not in ALLOWED}
    assert not over, f"functions over {MAX_LINES} lines (cut them into named steps): {over}"


def test_allowed_entries_name_files_of_the_package_with_a_reason() -> None:
    for name, reason in ALLOWED.items():
        path = name.partition(":")[0]
        assert (PACKAGE / path).is_file(), f"{name}: no such file in the package"
        assert reason.strip(), f"{name}: no reason given"


def _function(name: str, body_lines: int, indent: str = "") -> str:
    """A function of ``1 + body_lines`` lines."""
    return "".join([f"{indent}def {name}():\n"] + [f"{indent}    x = {i}\n" for i in range(body_lines)])


def test_the_measure_counts_the_def_line_to_the_last_line_at_every_depth() -> None:
    src = (
        _function("at_limit", MAX_LINES - 1)
        + _function("over", MAX_LINES)
        + "class C:\n" + "    @staticmethod\n" + _function("method", MAX_LINES, "    ")
        + "def outer():\n" + _function("inner", MAX_LINES, "    ")
        + "if True:\n" + _function("guarded", MAX_LINES, "    ")
    )
    found = dict(long_functions(src, "m.py"))
    assert found == {"m.py:over": MAX_LINES + 1, "m.py:C.method": MAX_LINES + 1,
                     "m.py:outer": MAX_LINES + 2, "m.py:outer.inner": MAX_LINES + 1,
                     "m.py:guarded": MAX_LINES + 1}


def test_the_scan_reads_the_whole_package() -> None:
    files = list(PACKAGE.rglob("*.py"))
    assert len(files) > 100
    assert any(f.relative_to(PACKAGE).as_posix() == "ui/main_window.py" for f in files)
    # every file parses and the lower limit finds its long functions: the scan sees into every package
    seen = {name.partition(":")[0].partition("/")[0]
            for f in files for name, _ in long_functions(f.read_text(encoding="utf-8"),
                                                           f.relative_to(PACKAGE).as_posix(), limit=20)}
    assert {"ui", "engine", "report", "backends", "profiling"} <= seen
