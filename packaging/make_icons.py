"""Render the icons under trtstudio/resources/icons/ to the hicolor PNG sizes under packaging/icons/:
the app (``trtstudio.svg`` -> ``apps/trtstudio.png``) and its session document
(``trtstudio-session.svg`` -> ``mimetypes/application-x-trtstudio-session.png``, the icon named by
``trtstudio-mime.xml``).

Uses PySide6's QSvgRenderer when it is installed (it is, with trtstudio), else cairosvg, else the
``rsvg-convert`` command. Run from anywhere: ``python packaging/make_icons.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SVG = ROOT / "trtstudio" / "resources" / "icons" / "trtstudio.svg"
SESSION_SVG = ROOT / "trtstudio" / "resources" / "icons" / "trtstudio-session.svg"
OUT = ROOT / "packaging" / "icons" / "hicolor"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
SESSION_ICON = "application-x-trtstudio-session"  # the icon name of MIME type application/x-trtstudio-session


def png_path(size: int, out: Path = OUT, context: str = "apps", name: str = "trtstudio") -> Path:
    """Where the PNG of one size goes: ``<out>/<n>x<n>/<context>/<name>.png`` (freedesktop hicolor
    layout; the app's icon by default)."""
    return out / f"{size}x{size}" / context / f"{name}.png"


def _render_qt(svg: Path, size: int, dest: Path) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 (fonts, painter)
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"error: {svg}: not a valid SVG")
    img = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(Qt.GlobalColor.transparent)
    painter = QPainter(img)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    if not img.save(str(dest)):  # format from the .png suffix
        raise SystemExit(f"error: {dest}: could not write PNG")


def _render_cairo(svg: Path, size: int, dest: Path) -> None:
    import cairosvg  # type: ignore[import-not-found]

    cairosvg.svg2png(url=str(svg), write_to=str(dest), output_width=size, output_height=size)


def _render_rsvg(svg: Path, size: int, dest: Path) -> None:
    subprocess.run(["rsvg-convert", "-w", str(size), "-h", str(size), "-o", str(dest), str(svg)], check=True)


def pick_renderer() -> tuple[str, Callable[[Path, int, Path], None]]:
    """The first available renderer: PySide6 QtSvg, cairosvg, rsvg-convert."""
    if importlib.util.find_spec("PySide6") is not None and importlib.util.find_spec("PySide6.QtSvg") is not None:
        return "PySide6.QtSvg", _render_qt
    if importlib.util.find_spec("cairosvg") is not None:
        return "cairosvg", _render_cairo
    if shutil.which("rsvg-convert"):
        return "rsvg-convert", _render_rsvg
    raise SystemExit("error: no SVG renderer: install PySide6-Essentials or cairosvg, or librsvg2-bin")


def main(argv: list[str] | None = None) -> int:
    """Render every size; print one line per PNG written."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--svg", type=Path, default=SVG, help="the app's icon")
    ap.add_argument("--session-svg", type=Path, default=SESSION_SVG, help="the session document's icon")
    ap.add_argument("--out", type=Path, default=OUT, help="hicolor folder (default packaging/icons/hicolor)")
    args = ap.parse_args(argv)
    name, render = pick_renderer()
    for svg, context, icon in ((args.svg, "apps", "trtstudio"), (args.session_svg, "mimetypes", SESSION_ICON)):
        for size in SIZES:
            dest = png_path(size, args.out, context, icon)
            dest.parent.mkdir(parents=True, exist_ok=True)
            render(svg, size, dest)
            print(f"{name}: {dest.relative_to(args.out.parent) if dest.is_relative_to(args.out.parent) else dest} "
                  f"({dest.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
