"""File > Upgrade check...: the dialog drives real builds by two TensorRT-RTX runtimes (one installed by
``runtimes add`` into the test cache, the test environment's own), shows the side-by-side table and the
diff of the two in the Compare dock's view."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.rtx_runtimes import CACHE, Unavailable, runtimes

pytestmark = [pytest.mark.gui, pytest.mark.rtx, pytest.mark.slow]


def test_upgrade_dialog_table_and_diff(qtbot, tmp_path: Path) -> None:
    pytest.importorskip("tensorrt_rtx")
    rapid = pytest.importorskip("rapidocr_onnxruntime")
    try:
        managed = runtimes()
    except Unavailable as exc:
        pytest.skip(str(exc))
    from trtstudio.runtimes.upgrade import table_rows
    from trtstudio.ui.upgrade_dialog import UpgradeDialog

    model = Path(rapid.__file__).parent / "models" / "ch_ppocr_mobile_v2.0_cls_infer.onnx"
    dlg = UpgradeDialog(model=str(model), root=str(CACHE))
    qtbot.addWidget(dlg)
    listed = [dlg.runtime_list.item(i).data(256) for i in range(dlg.runtime_list.count())]
    assert set(managed) <= set(listed) and listed[-1] == "here"
    dlg.set_checked([managed[0], "here"])
    dlg.flags_edit.setText("--target sm86,sm120")
    request = dlg.request()
    assert request.runtimes == [managed[0], "here"] and request.build_args == ["--target", "sm86,sm120"]
    with qtbot.waitSignal(dlg.sig_finished, timeout=300_000) as blocker:
        dlg.run_button.click()
    result = blocker.args[0]
    assert not isinstance(result, BaseException), result
    doc = result.to_json()
    assert [c["ok"] for c in doc["runtimes"]] == [True, True]
    # the table is the text output's rows, a column per runtime
    rows = table_rows(doc)
    assert dlg.table.columnCount() == 2 and dlg.table.rowCount() == len(rows)
    for r, (label, cells) in enumerate(rows):
        assert dlg.table.verticalHeaderItem(r).text() == label
        assert [dlg.table.item(r, c).text() for c in range(2)] == cells
    assert all(c["precision"] and c["engine_bytes"] for c in doc["runtimes"])
    # both targets reached each child's build
    assert all(c["versions"]["tensorrt_rtx"] and len(c["runtime"]["version"]) for c in doc["runtimes"])
    # the diff of the two, as the Compare dock shows one
    assert dlg.other_combo.currentData() == 1 and dlg.base_combo.currentData() == 0
    pair = dlg.show_pair(0, 1)
    assert dlg.compare.model.rowCount() == len(pair.groups) > 0
    assert pair.base.name == doc["runtimes"][0]["name"] and pair.other.name == doc["runtimes"][1]["name"]
    assert doc["runtimes"][0]["name"] in dlg.compare.story.text()
    dlg.show()
    qtbot.waitExposed(dlg)
    shot = Path(os.environ.get("TRTSTUDIO_SHOTS", tmp_path)) / "upgrade_dialog.png"
    assert dlg.grab().save(str(shot)) and shot.stat().st_size > 0
