"""The window's light and dark themes: the application palette (every colour role, the disabled
group included, placeholders too) and the plots' background and foreground (pyqtgraph), from one
table per theme.

``apply(app, dark)`` sets the palette and restyles every pyqtgraph plot shown now and later (an
application event filter restyles a plot when it is first shown, so plots built after the switch,
or before pyqtgraph was imported, follow). :func:`contrast_ratio` is WCAG 2's; the tests hold every
text/background pair of :data:`PAIRS` at 4.5 or more in both themes, disabled text included, and
the disabled text visibly dimmer than the enabled.
"""

from __future__ import annotations

import sys
from typing import Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QColor, QPalette

Role, Group = QPalette.ColorRole, QPalette.ColorGroup

# (role, active colour, disabled colour); the inactive group is the active one
DARK: tuple[tuple[QPalette.ColorRole, str, str], ...] = (
    (Role.Window, "#2b2b2b", "#2b2b2b"),
    (Role.WindowText, "#e6e6e6", "#9e9e9e"),
    (Role.Base, "#1f1f1f", "#262626"),
    (Role.AlternateBase, "#292929", "#292929"),
    (Role.Text, "#e6e6e6", "#9a9a9a"),
    (Role.PlaceholderText, "#a8a8a8", "#8f8f8f"),
    (Role.Button, "#3a3a3a", "#2f2f2f"),
    (Role.ButtonText, "#eeeeee", "#9a9a9a"),
    (Role.BrightText, "#ffffff", "#ffffff"),
    (Role.Highlight, "#2f65b8", "#3a3a3a"),
    (Role.HighlightedText, "#ffffff", "#a8a8a8"),
    (Role.ToolTipBase, "#3a3a3a", "#3a3a3a"),
    (Role.ToolTipText, "#f0f0f0", "#f0f0f0"),
    (Role.Link, "#7fb2ff", "#8f8f8f"),
    (Role.LinkVisited, "#c49bff", "#8f8f8f"),
    (Role.Light, "#505050", "#505050"),
    (Role.Midlight, "#444444", "#444444"),
    (Role.Mid, "#3a3a3a", "#3a3a3a"),
    (Role.Dark, "#1a1a1a", "#1a1a1a"),
    (Role.Shadow, "#0d0d0d", "#0d0d0d"),
)
# the plots: background, foreground (axes, ticks, titles, legend text)
PLOT = {True: ("#1f1f1f", "#dcdcdc"), False: ("#ffffff", "#000000")}

# (text role, background role): what is read on what
PAIRS = ((Role.WindowText, Role.Window), (Role.Text, Role.Base), (Role.Text, Role.AlternateBase),
         (Role.PlaceholderText, Role.Base), (Role.ButtonText, Role.Button),
         (Role.HighlightedText, Role.Highlight), (Role.ToolTipText, Role.ToolTipBase), (Role.Link, Role.Base))


def relative_luminance(colour: str | QColor) -> float:
    """WCAG 2's relative luminance of ``colour`` (0 black .. 1 white)."""
    c = QColor(colour)

    def lin(v: float) -> float:
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF())


def contrast_ratio(a: str | QColor, b: str | QColor) -> float:
    """WCAG 2's contrast ratio of two colours (1 .. 21; 4.5 is AA for body text)."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def palette(dark: bool, base: QPalette | None = None) -> QPalette:
    """The theme's palette: :data:`DARK` for ``dark``, else ``base`` (the style's standard palette)
    with its disabled text darkened where the style leaves it too faint to read (below 4.5:1)."""
    if dark:
        pal = QPalette()
        for role, active, disabled in DARK:
            for group in (Group.Active, Group.Inactive):
                pal.setColor(group, role, QColor(active))
            pal.setColor(Group.Disabled, role, QColor(disabled))
        return pal
    pal = QPalette(base) if base is not None else QPalette()
    for text, back in PAIRS:
        for group in (Group.Active, Group.Inactive, Group.Disabled):
            fg, bg = pal.color(group, text), pal.color(group, back)
            if contrast_ratio(fg, bg) < 4.5:
                pal.setColor(group, text, _readable(fg, bg))
    return pal


def _readable(fg: QColor, bg: QColor) -> QColor:
    """``fg`` moved toward black or white (whichever is away from ``bg``) until it reads on ``bg``."""
    towards = QColor("#000000") if relative_luminance(bg) > 0.18 else QColor("#ffffff")
    c = QColor(fg)
    for k in range(1, 21):
        t = k / 20
        c = QColor.fromRgbF(fg.redF() + (towards.redF() - fg.redF()) * t,
                            fg.greenF() + (towards.greenF() - fg.greenF()) * t,
                            fg.blueF() + (towards.blueF() - fg.blueF()) * t)
        if contrast_ratio(c, bg) >= 4.5:
            break
    return c


def style_plot(widget: Any, dark: bool) -> None:
    """Give a pyqtgraph ``GraphicsView`` (a PlotWidget, a GraphicsLayoutWidget) the theme's
    background, and its axes, titles and legends the theme's foreground."""
    pg = sys.modules.get("pyqtgraph")
    if pg is None:
        return
    bg, fg = PLOT[dark]
    widget.setBackground(bg)
    scene = widget.scene()
    if scene is None:
        return
    for item in scene.items():
        if isinstance(item, pg.AxisItem):
            item.setPen(fg)
            item.setTextPen(fg)
        elif isinstance(item, pg.LegendItem):
            item.setLabelTextColor(fg)
            item.setBrush(pg.mkBrush(bg))
        elif isinstance(item, pg.LabelItem):
            item.setAttr("color", fg)
            item.setText(item.text)


class _PlotStyler(QObject):
    """Restyles each pyqtgraph view when it is first shown (plots built after the theme was set)."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.dark = False
        self.done: set[int] = set()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Show:
            pg = sys.modules.get("pyqtgraph")
            if pg is not None and isinstance(obj, pg.GraphicsView) and id(obj) not in self.done:
                self.done.add(id(obj))
                style_plot(obj, self.dark)
        return False


def apply(app: Any, dark: bool) -> None:
    """Set the theme on ``app``: the palette, pyqtgraph's defaults and every plot (now and later)."""
    app.setPalette(palette(dark, None if dark else app.style().standardPalette()))
    bg, fg = PLOT[dark]
    pg = sys.modules.get("pyqtgraph")
    if pg is not None:
        pg.setConfigOptions(background=bg, foreground=fg)
    styler = app.findChild(_PlotStyler)
    if styler is None:
        styler = _PlotStyler(app)
        app.installEventFilter(styler)
    styler.dark = dark
    styler.done.clear()
    if pg is not None:  # the plots there now (through their windows: allWidgets() also lists widgets
        # whose deletion is pending, and touching those crashed a window's first theme)
        for top in app.topLevelWidgets():
            views = [top] if isinstance(top, pg.GraphicsView) else []
            for w in views + top.findChildren(pg.GraphicsView):
                style_plot(w, dark)
                styler.done.add(id(w))


def plot_colours(dark: bool) -> tuple[str, str]:
    """(background, foreground) of the plots in this theme."""
    return PLOT[dark]


__all__ = ["DARK", "PAIRS", "PLOT", "apply", "contrast_ratio", "palette", "plot_colours", "relative_luminance",
           "style_plot"]
