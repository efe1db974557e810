"""The dark theme (issue 52 item 6): every text/background pair of the palette reads at WCAG 4.5:1
or more (disabled and placeholder text included, in both themes), disabled text is drawn dimmer
than enabled, and the plots follow the theme (pyqtgraph background and axes). The real MainWindow
rendered dark with the A100 fp32 engine open; the screenshot is kept under $TRTSTUDIO_SHOTS."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints")]

pytest.importorskip("PySide6")

from PySide6.QtGui import QColor, QPalette  # noqa: E402
from test_ui_engine_graph import engine_files, open_engine_graph, shot  # noqa: E402

from trtstudio.ui import theme  # noqa: E402
from trtstudio.ui.main_window import MainWindow  # noqa: E402

G = QPalette.ColorGroup


def test_contrast_ratio_is_wcag() -> None:
    # WCAG's own end points and its well-known mid grey on white
    assert theme.contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert theme.contrast_ratio("#ffffff", "#ffffff") == pytest.approx(1.0)
    assert theme.contrast_ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)


@pytest.mark.parametrize("dark", [True, False])
def test_every_text_reads_on_its_background(qapp: Any, dark: bool) -> None:
    pal = theme.palette(dark, None if dark else qapp.style().standardPalette())
    low = []
    for group in (G.Active, G.Inactive, G.Disabled):
        for text, back in theme.PAIRS:
            r = theme.contrast_ratio(pal.color(group, text), pal.color(group, back))
            if r < 4.5:
                low.append((group.name, text.name, back.name, round(r, 2)))
    assert not low, low
    bg, fg = theme.plot_colours(dark)
    assert theme.contrast_ratio(bg, fg) >= 4.5
    if dark:  # disabled drawn as disabled: dimmer than enabled, by a visible margin
        for role in (QPalette.ColorRole.ButtonText, QPalette.ColorRole.Text, QPalette.ColorRole.WindowText):
            on, off = pal.color(G.Active, role), pal.color(G.Disabled, role)
            assert theme.relative_luminance(on) - theme.relative_luminance(off) > 0.2


def test_dark_window_and_plots(qtbot: Any, window: MainWindow, trt_real: Path, tmp_path: Path) -> None:
    from PySide6.QtWidgets import QApplication, QPushButton

    open_engine_graph(qtbot, window, engine_files(trt_real, "fp32"))
    window.set_theme("Dark")
    try:
        app = QApplication.instance()
        assert window.theme == "Dark" and theme.relative_luminance(app.palette().color(QPalette.ColorRole.Window)) < 0.05
        import pyqtgraph as pg

        plots = [w for w in app.allWidgets() if isinstance(w, pg.GraphicsView)]
        assert plots
        window.engine_tabs.setCurrentIndex(next(i for i in range(window.engine_tabs.count())
                                                if window.engine_tabs.widget(i).findChildren(pg.GraphicsView)))
        qtbot.wait(50)
        shown = [w for w in plots if w.isVisible() and w.width() > 50]
        assert shown
        bg, fg = theme.plot_colours(True)
        for w in shown:
            img = w.grab().toImage()
            corner = QColor(img.pixel(2, 2))
            assert theme.relative_luminance(corner) < 0.05, corner.name()  # not white
            axes = [it for it in w.scene().items() if isinstance(it, pg.AxisItem)]
            assert all(QColor(a.textPen().color()).name() == QColor(fg).name() for a in axes)
        # a plot made after the switch is dark when shown
        late = pg.PlotWidget()
        qtbot.addWidget(late)
        late.show()
        qtbot.waitUntil(lambda: theme.relative_luminance(QColor(late.grab().toImage().pixel(3, 3))) < 0.05)
        # a disabled button is drawn dimmer than an enabled one
        on, off = QPushButton("Start"), QPushButton("Start")
        off.setEnabled(False)
        assert off.palette().color(G.Disabled, QPalette.ColorRole.ButtonText) != \
            on.palette().color(G.Active, QPalette.ColorRole.ButtonText)
        shot(window, "dark_window.png", tmp_path)
    finally:
        window.set_theme("Light")
