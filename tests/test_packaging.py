"""Packaging files: the .desktop entry, AppStream metainfo, MIME type, icons, PyInstaller spec and script."""

from __future__ import annotations

import ast
import configparser
import importlib.util
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import trtstudio

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "packaging"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SESSION_MIME = "application/x-trtstudio-session"  # a .trtstudio session, the app's own document
SESSION_ICON = "application-x-trtstudio-session"


def png_header(path: Path) -> tuple[int, int, int, int]:
    """(width, height, bit depth, colour type) from a PNG's IHDR chunk; fails on anything else."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, f"{path}: not a PNG"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13, f"{path}: first chunk is {kind!r}"
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    assert data.rstrip(b"\x00")[-8:-4] == b"IEND", f"{path}: truncated (no IEND)"
    return width, height, depth, colour


def desktop_entry() -> configparser.SectionProxy:
    cp = configparser.ConfigParser(interpolation=None, strict=True)
    cp.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    cp.read(PKG / "trtstudio.desktop", encoding="utf-8")
    return cp["Desktop Entry"]


def test_desktop_file_has_the_required_keys() -> None:
    entry = desktop_entry()
    assert entry["Type"] == "Application"
    assert entry["Name"] == "trtstudio"
    assert entry["Exec"] == "trtstudio gui %F"
    assert entry["Icon"] == "trtstudio"
    assert entry["Terminal"] == "false"
    assert {"application/x-onnx", SESSION_MIME} <= set(entry["MimeType"].split(";"))
    for key in ("MimeType", "Categories", "Keywords"):
        assert entry[key].endswith(";"), f"{key} list must end with ';'"
    assert "Development" in entry["Categories"].split(";")


def test_metainfo_is_appstream_for_the_desktop_file() -> None:
    root = ET.parse(PKG / "io.github.trtstudio.metainfo.xml").getroot()
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == "io.github.trtstudio"
    for tag in ("name", "summary", "metadata_license", "project_license"):
        assert (root.findtext(tag) or "").strip(), f"<{tag}> is empty"
    assert root.findtext("project_license") == "Apache-2.0"
    assert len(root.findall("description/p")) >= 1
    launchable = root.find("launchable")
    assert launchable is not None and launchable.get("type") == "desktop-id"
    assert (PKG / (launchable.text or "")).is_file(), "launchable names a .desktop file that is not here"
    assert root.findtext("provides/binary") == "trtstudio"
    assert [m.text for m in root.findall("provides/mediatype")] == ["application/x-onnx", SESSION_MIME]
    releases = [r.get("version") for r in root.findall("releases/release")]
    assert trtstudio.__version__ in releases, "the current version has no <release>"


def test_mime_type_registers_onnx_and_sessions() -> None:
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    root = ET.parse(PKG / "trtstudio-mime.xml").getroot()
    types = {t.get("type"): t for t in root.findall("m:mime-type", ns)}
    assert [g.get("pattern") for g in types["application/x-onnx"].findall("m:glob", ns)] == ["*.onnx"]
    session = types[SESSION_MIME]
    assert [g.get("pattern") for g in session.findall("m:glob", ns)] == ["*.trtstudio"]
    assert session.find("m:icon", ns).get("name") == SESSION_ICON  # type: ignore[union-attr]
    from trtstudio.filekinds import SESSION_SUFFIX
    from trtstudio.report.session import SCHEMA

    assert SESSION_SUFFIX == ".trtstudio"
    magic = session.find("m:magic/m:match", ns)
    assert magic is not None and magic.get("value") == f'"{SCHEMA}"'  # what save_session writes near the top


def test_a_real_mime_database_knows_sessions_by_name_and_by_content(tmp_path: Path) -> None:
    """shared-mime-info's update-mime-database builds the database from our XML; Qt's QMimeDatabase
    (as a file manager's) then names a session file, and a session without its suffix by its content."""
    if shutil.which("update-mime-database") is None:
        pytest.skip("update-mime-database not installed (Debian: shared-mime-info)")
    if importlib.util.find_spec("PySide6") is None:
        pytest.skip("PySide6 not installed")
    (tmp_path / "share" / "mime" / "packages").mkdir(parents=True)
    shutil.copy(PKG / "trtstudio-mime.xml", tmp_path / "share" / "mime" / "packages")
    subprocess.run(["update-mime-database", str(tmp_path / "share" / "mime")], check=True, capture_output=True)
    from trtstudio.report.session import SCHEMA

    body = f'{{\n  "schema": "{SCHEMA}",\n  "title": null\n}}\n'
    (tmp_path / "run.trtstudio").write_text(body)
    (tmp_path / "run-copy").write_text(body)  # no suffix: the content decides
    code = ("import sys; from PySide6.QtCore import QMimeDatabase; db = QMimeDatabase()\n"
            "for f in sys.argv[1:]:\n    m = db.mimeTypeForFile(f); print(m.name(), m.iconName())")
    env = {"XDG_DATA_DIRS": str(tmp_path / "share"), "XDG_DATA_HOME": str(tmp_path / "home"),
           "QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "run.trtstudio"), str(tmp_path / "run-copy"),
                          str(ROOT / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx")],
                         capture_output=True, text=True, env=env, timeout=60, check=True).stdout.split("\n")
    assert out[:3] == [f"{SESSION_MIME} {SESSION_ICON}", f"{SESSION_MIME} {SESSION_ICON}",
                       "application/x-onnx application-x-onnx"]


@pytest.mark.parametrize("icon", ["apps/trtstudio", f"mimetypes/{SESSION_ICON}"])
@pytest.mark.parametrize("size", SIZES)
def test_icon_png_at_every_size(size: int, icon: str) -> None:
    path = PKG / "icons" / "hicolor" / f"{size}x{size}" / f"{icon}.png"
    assert path.is_file()
    width, height, depth, colour = png_header(path)
    assert (width, height) == (size, size)
    assert depth == 8 and colour == 6, "expected 8-bit RGBA (transparent corners)"


@pytest.mark.parametrize("name", ["trtstudio.svg", "trtstudio-session.svg"])
def test_svg_icon_is_square_svg(name: str) -> None:
    root = ET.parse(ROOT / "trtstudio" / "resources" / "icons" / name).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    _, _, w, h = (float(v) for v in (root.get("viewBox") or "").split())
    assert w == h > 0


def test_icon_sizes_of_the_script_match_the_committed_ones() -> None:
    committed = sorted(int(p.name.split("x")[0]) for p in (PKG / "icons" / "hicolor").iterdir() if p.is_dir())
    spec = importlib.util.spec_from_file_location("make_icons", PKG / "make_icons.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # imports no Qt at module level
    assert committed == sorted(mod.SIZES) == list(SIZES)


@pytest.mark.gui
def test_make_icons_renders_every_size(tmp_path: Path) -> None:
    if importlib.util.find_spec("PySide6") is None:
        pytest.skip("PySide6 not installed")
    proc = subprocess.run([sys.executable, str(PKG / "make_icons.py"), "--out", str(tmp_path / "hicolor")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for size in SIZES:
        for icon in ("apps/trtstudio", f"mimetypes/{SESSION_ICON}"):
            out = tmp_path / "hicolor" / f"{size}x{size}" / f"{icon}.png"
            assert png_header(out)[:2] == (size, size)
    # A rendered icon is not blank: the 64 px PNG compresses to more than a flat image would.
    assert (tmp_path / "hicolor" / "64x64" / "apps" / "trtstudio.png").stat().st_size > 1000
    assert (tmp_path / "hicolor" / "64x64" / "mimetypes" / f"{SESSION_ICON}.png").stat().st_size > 1000


def _spec_list(name: str) -> list[str]:
    tree = ast.parse((PKG / "trtstudio.spec").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError(f"{name} not assigned in trtstudio.spec")


def test_spec_keeps_onnxruntime_and_leaves_gpu_stacks_out() -> None:
    excludes = _spec_list("excludes")
    for mod in ("tensorrt", "tensorrt_rtx", "pycuda"):
        assert mod in excludes
    for mod in ("onnxruntime", "onnx", "numpy", "PySide6", "pyqtgraph", "trtstudio"):
        assert mod not in excludes, f"{mod} is needed by the bundle"
    text = (PKG / "trtstudio.spec").read_text()
    assert 'collect_submodules("trtstudio")' in text  # subcommands are imported by name
    assert "resources" in text


def test_entry_point_runs_the_cli() -> None:
    proc = subprocess.run([sys.executable, str(PKG / "entry.py"), "--version"], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"trtstudio {trtstudio.__version__}"


def test_build_script_is_valid_bash_and_checks_the_bundle() -> None:
    script = PKG / "build_bundle.sh"
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    text = script.read_text()
    assert "--screenshot" in text and "env -i" in text and "20480" in text


@pytest.mark.parametrize("tool,args,name", [
    ("desktop-file-validate", [], "trtstudio.desktop"),
    ("appstreamcli", ["validate", "--no-net"], "io.github.trtstudio.metainfo.xml"),
])
def test_freedesktop_validators(tool: str, args: list[str], name: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} not installed")
    proc = subprocess.run([tool, *args, str(PKG / name)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
