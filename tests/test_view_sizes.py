"""The window's classes stay views of a reviewable size (issue 32, item 1): no class in
trtstudio/ui is over 500 lines, and main_window.py is at most 500 lines. Read with ast only, so
the Qt-less core run checks it too (hence not named test_ui_*, which conftest leaves out there)."""

from __future__ import annotations

import ast
from pathlib import Path

UI = Path(__file__).resolve().parents[1] / "trtstudio" / "ui"
MAX_CLASS_LINES = 500
MAX_MAIN_WINDOW_LINES = 500


def class_sizes() -> dict[str, int]:
    """``module.py:Class`` -> its lines (the class statement to its last line, decorators left out),
    nested classes included, for every module under trtstudio/ui."""
    sizes: dict[str, int] = {}
    for path in sorted(UI.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno is not None
                sizes[f"{path.relative_to(UI)}:{node.name}"] = node.end_lineno - node.lineno + 1
    return sizes


def test_the_measure_sees_the_ui_classes() -> None:
    sizes = class_sizes()
    assert "main_window.py:MainWindow" in sizes and "profile_panel.py:ProfilePanel" in sizes
    assert sizes["profile_panel.py:ProfilePanel"] > 50  # a real class measured, not a stub


def test_no_ui_class_is_over_500_lines() -> None:
    over = {name: n for name, n in class_sizes().items() if n > MAX_CLASS_LINES}
    assert not over, f"ui classes over {MAX_CLASS_LINES} lines (split them into views/controllers): {over}"


def test_main_window_module_is_at_most_500_lines() -> None:
    lines = len((UI / "main_window.py").read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MAIN_WINDOW_LINES, f"main_window.py has {lines} lines"
