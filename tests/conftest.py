from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# QSettings of the tests go to a throwaway folder, never the user's ~/.config.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="trtstudio-test-config-")
sys.path.insert(0, str(Path(__file__).parent))

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "trt-real"
SAMPLE = Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"


def _qt_available() -> bool:
    try:
        import PySide6.QtCore  # noqa: F401
    except Exception:  # noqa: BLE001
        return False
    return True


@pytest.fixture
def trt_real() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip("real TensorRT fixtures (../shared/fixtures/trt-real) are absent")
    return FIXTURES


@pytest.fixture
def window(qtbot):
    """The real MainWindow, shown at 1400x900, shut down after the test (the window tests' one)."""
    from trtstudio.ui.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    yield win
    win.shutdown()


@pytest.fixture
def sample_model() -> Path:
    if not SAMPLE.is_file():
        pytest.skip("sample model not generated")
    return SAMPLE


collect_ignore_glob = [] if _qt_available() else ["test_ui_*.py"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _qt_available():
        return
    skip = pytest.mark.skip(reason="PySide6 not importable (Qt-less core run)")
    for item in items:
        if "gui" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _no_thread_left_behind(request: pytest.FixtureRequest):
    """Fail a test that leaves a QThread or a Python worker thread running (napari does the same)."""
    import threading

    before = set(threading.enumerate())
    yield
    if "gui" in request.keywords and _qt_available():
        from PySide6.QtCore import QThread

        from trtstudio.ui import workers

        # a worker that handed its result over may still be returning from its run(): give it 2 s
        alive = [t for t in workers.live_threads() if isinstance(t, QThread) and t.isRunning() and not t.wait(2000)]
        assert not alive, f"QThreads left running: {alive}"
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive() and not t.daemon]
    assert not leaked, f"threads left running: {leaked}"
