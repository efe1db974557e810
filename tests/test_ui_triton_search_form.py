"""The Triton config search dialog's form, without a server: a TensorRT plan's optimization profiles
and the GPUs its instances go on become the search's space; where they cannot apply, the status
line says so in one line and nothing starts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.gui]
pytest.importorskip("PySide6")
pytest.importorskip("tritonclient.http")


def _plan_entry(tmp_path: Path) -> Path:
    entry = tmp_path / "detector"
    (entry / "1").mkdir(parents=True)
    (entry / "1" / "model.plan").write_bytes(b"\0plan")  # never loaded: the form is checked
    (entry / "config.pbtxt").write_text('platform: "tensorrt_plan"\nmax_batch_size: 8\n'
                                        'instance_group [{ count: 1 kind: KIND_GPU }]\n')
    return entry


def test_profiles_and_gpus_fields_make_the_space_or_say_why_not(qtbot: Any, tmp_path: Path) -> None:
    from trtstudio.triton.variants import Variant
    from trtstudio.ui.triton_search_dialog import TritonSearchDialog

    dlg = TritonSearchDialog(model=str(_plan_entry(tmp_path)))
    qtbot.addWidget(dlg)
    dlg.resize(1280, 720)
    dlg.show()
    dlg.profiles_edit.setText("0,1")
    dlg.gpus_edit.setText("0")
    dlg.instances_edit.setText("1,2")
    dlg.batch_edit.setText("8")
    dlg.delay_edit.setText("off")
    space = dlg.request().settings.space
    assert space.profiles == [("0",), ("1",)] and space.gpus == (0,)
    keys = [v.key for v in space.grid()]
    assert len(keys) == 4 and all("_g0_prof" in k for k in keys)
    assert Variant.from_json(space.grid()[0].to_json()).profile == ("0",)
    shot = Path(os.environ.get("TRTSTUDIO_SHOT_DIR", str(tmp_path))) / "triton_search_form.png"
    dlg.grab().save(str(shot))
    # an ONNX model served by the python backend has no optimization profiles: one line, nothing starts
    onnx = Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"
    dlg.model_edit.setText(str(onnx))
    dlg.start()
    text = dlg.status_label.text()
    assert "Profiles" in text and "TensorRT plan" in text and "\n" not in text
    assert dlg._handle is None or dlg._handle.is_done()
    dlg.profiles_edit.setText("")
    dlg.start()  # GPUs on the python backend's CPU instances: refused, naming the field
    assert "GPUs" in dlg.status_label.text() and "KIND_CPU" in dlg.status_label.text()
