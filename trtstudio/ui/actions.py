"""The window's menus as one declarative table: (menu, text, shortcut, slot path) rows.

A slot path names a method reachable from the window (``"sessions.export_report_dialog"``,
``"current_view().fit"``: a call in the path is made when the action fires, so it reaches the view
current then). ``"-"`` is a separator; a menu of ``None`` adds a window-wide shortcut only; a slot
``"@key"`` is filled by the window (a submenu named by the text, or in place when the text is empty);
``"@shortcuts"`` is this module's Help > Keyboard shortcuts (:func:`shortcuts_table` of the window's
real QActions, so the page never drifts from the keys).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from PySide6.QtGui import QAction, QKeySequence

Key = QKeySequence.StandardKey


class ActionSpec(NamedTuple):
    menu: str | None
    text: str
    shortcut: Any = None
    slot: str = ""
    name: str = ""  # attribute the QAction is kept under (``act_<name>``), when given


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("&File", "&Open model or session...", Key.Open, "open_dialog", "open"),
    ActionSpec("&File", "Open &engine files...", "Ctrl+E", "open_engine_dialog"),
    ActionSpec("&File", "Open &recent", None, "@recent"),
    ActionSpec("&File", "-"),
    ActionSpec("&File", "Open sess&ion...", None, "sessions.open_session_dialog"),
    ActionSpec("&File", "Sa&ve session...", Key.Save, "sessions.save_session_dialog"),
    ActionSpec("&File", "E&xport report...", "Ctrl+Shift+E", "sessions.export_report_dialog"),
    ActionSpec("&File", "Save &screenshot...", "Ctrl+Shift+S", "save_screenshot_dialog"),
    ActionSpec("&File", "&Upgrade check (several TensorRT versions)...", None, "tools.open_upgrade_dialog"),
    ActionSpec("&File", "-"),
    ActionSpec("&File", "&Quit", Key.Quit, "close"),
    ActionSpec("&View", "&Fit", "F", "current_view().fit"),
    ActionSpec("&View", "Fit &whole graph", "Shift+F", "fit_whole"),
    ActionSpec("&View", "Zoom &in", Key.ZoomIn, "zoom_in"),
    ActionSpec("&View", "Zoom &out", Key.ZoomOut, "zoom_out"),
    ActionSpec("&View", "&Fold constant subgraphs", "Ctrl+Shift+F", "toggle_folding", "fold"),
    ActionSpec("&View", "&Engine graph (layers as nodes)", "Ctrl+Shift+G", "toggle_engine_graph", "engine_graph"),
    ActionSpec("&View", "F&ind", Key.Find, "search_ctl.focus"),
    ActionSpec(None, "Next match", "F3", "search_ctl.find_next"),
    ActionSpec(None, "Previous match", "Shift+F3", "search_ctl.find_previous"),
    ActionSpec("&View", "Clear &selection", "Esc", "graphs.clear_selection", "clear_selection"),
    ActionSpec("&View", "&Back (previous selection)", "Alt+Left", "graphs.back", "selection_back"),
    ActionSpec("&View", "Forwar&d (next selection)", "Alt+Right", "graphs.forward", "selection_forward"),
    ActionSpec("&View", "&Present (full screen, for a room)", "F11", "tools.present"),
    ActionSpec("&View", "-"),
    ActionSpec("&View", "", None, "@docks"),
    ActionSpec("&View", "&Theme", None, "@themes"),
    ActionSpec("&Engine", "&Build engine...", "Ctrl+B", "tools.open_build_dialog"),
    ActionSpec("&Engine", "Check TensorRT &support...", "Ctrl+K", "loader.check_support"),
    ActionSpec("&Engine", "&Precision sweep (FP16/BF16/INT8)...", "Ctrl+Shift+P", "tools.open_precision_dialog"),
    ActionSpec("&Engine", "E&xplain precision (why INT8 is not faster)...", None, "explain.open"),
    ActionSpec("&Engine", "-"),
    ActionSpec("&Engine", "Compare &with... (engine files or session)", "Ctrl+Shift+D", "compare.open_dialog"),
    ActionSpec("&Engine", "Compare with engine &folder...", None, "compare.open_folder_dialog"),
    ActionSpec("&Profile", "&Start", "F5", "tools.start_profile"),
    ActionSpec("&Profile", "S&top", "Shift+F5", "tools.stop_profile"),
    ActionSpec("&Profile", "&Target (this machine or an SSH host)...", None, "tools.choose_target"),
    ActionSpec("&Profile", "S&cenario (several models)...", None, "tools.open_scenario_dialog"),
    ActionSpec("&Profile", "&Triton Inference Server...", None, "tools.open_triton_dialog"),
    ActionSpec("&Profile", "Triton config searc&h...", None, "tools.open_triton_search_dialog"),
    ActionSpec("&Help", "&Keyboard shortcuts", "Ctrl+/", "@shortcuts", "shortcuts"),
    ActionSpec("&Help", "Check &environment...", None, "tools.check_environment"),
    ActionSpec("&Help", "&About", None, "tools.about"),
)


def resolve(window: Any, path: str) -> Callable[[], Any]:
    """A callable for slot ``path`` of ``window`` (resolved each time it fires)."""
    def call() -> Any:
        obj = window
        for part in path.split("."):
            if part.endswith("()"):
                obj = getattr(obj, part[:-2])()
            else:
                obj = getattr(obj, part)
        return obj()

    return call


def shortcuts_table(window: Any) -> list[tuple[str, str, str]]:
    """(menu, action, keys) of every QAction of ``window`` with a shortcut, as they are set now
    (menu actions and window-wide ones), sorted by menu then action."""
    from PySide6.QtWidgets import QMenu

    rows: set[tuple[str, str, str]] = set()
    for act in window.findChildren(QAction):
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in act.shortcuts() if not k.isEmpty()]
        if not keys:
            continue
        menus = [w for w in act.associatedObjects() if isinstance(w, QMenu)]
        where = menus[0].title().replace("&", "") if menus else "Window"
        rows.add((where, act.text().replace("&", ""), ", ".join(keys)))
    return sorted(rows)


def show_shortcuts(window: Any) -> Any:
    """Help > Keyboard shortcuts: a dialog with :func:`shortcuts_table`; returns the dialog."""
    from PySide6.QtWidgets import QAbstractItemView, QDialog, QTableWidget, QTableWidgetItem, QVBoxLayout

    rows = shortcuts_table(window)
    dlg = QDialog(window)
    dlg.setWindowTitle("Keyboard shortcuts")
    table = QTableWidget(len(rows), 3, dlg)
    table.setObjectName("shortcuts_table")
    table.setHorizontalHeaderLabels(["Menu", "Action", "Keys"])
    table.verticalHeader().hide()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            table.setItem(r, c, QTableWidgetItem(text))
    table.resizeColumnsToContents()
    table.horizontalHeader().setStretchLastSection(True)
    QVBoxLayout(dlg).addWidget(table)
    dlg.resize(560, 520)
    dlg.show()
    return dlg


def build_menus(window: Any, special: dict[str, Callable[[Any], None]]) -> dict[str, QAction]:
    """Create the menus and actions of :data:`ACTIONS` on ``window``; rows whose slot
    is ``@key`` call ``special[key](menu)``. Returns the named actions."""
    from PySide6.QtWidgets import QApplication

    from trtstudio.ui import chart_export

    app = QApplication.instance()
    if app is not None:  # every chart's context menu: export PNG/SVG, copy
        chart_export.install(app)
    menus: dict[str, Any] = {}
    named: dict[str, QAction] = {}
    for spec in ACTIONS:
        menu: Any = None
        if spec.menu is not None:
            menu = menus.get(spec.menu) or window.menuBar().addMenu(spec.menu)
            menus[spec.menu] = menu
        if spec.slot == "@shortcuts":
            act = QAction(spec.text, window)
            act.setShortcut(QKeySequence(spec.shortcut))
            act.triggered.connect(lambda _checked=False: show_shortcuts(window))
            menu.addAction(act)
            named[spec.name] = act
            continue
        if spec.slot.startswith("@"):  # filled by the window: in a submenu named ``text``, or in place
            special[spec.slot](menu.addMenu(spec.text) if spec.text else menu)
            continue
        if spec.text == "-":
            menu.addSeparator()
            continue
        act = QAction(spec.text, window)
        if spec.shortcut is not None:
            act.setShortcut(QKeySequence(spec.shortcut))
        fn = resolve(window, spec.slot)
        act.triggered.connect(lambda _checked=False, fn=fn: fn())
        (menu.addAction(act) if menu is not None else window.addAction(act))
        if spec.name:
            named[spec.name] = act
    return named
