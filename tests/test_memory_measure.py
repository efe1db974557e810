"""``trtstudio memory MODEL --measure``: N processes of a model on the GPU, predicted from one process
and a context probe, then measured (profiling/memory_measure.py). The measurement needs a CUDA GPU,
torch, onnx2torch and NVML (skipped without); its refusals are tested everywhere."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from trtstudio.cli import main

SAMPLE = Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"


def _cuda() -> bool:
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("onnx2torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.parametrize(("args", "words"), [
    (["--measure", "0,x"], "is not a list of process counts"),
    (["--measure", "0"], "must be 1 or more"),
    (["--measure", "--backend", "ort"], "runs torch-cuda models"),
])
def test_measure_refuses_in_one_line(args: list[str], words: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", str(SAMPLE), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and words in err[0]


def test_measure_takes_one_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", str(SAMPLE), str(SAMPLE), "--measure"]) == 2
    assert "one model at a time" in capsys.readouterr().err


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda(), reason="needs a CUDA GPU with torch and onnx2torch")
def test_one_two_and_four_processes_take_what_was_predicted(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", str(SAMPLE), "--measure", "1,2,4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "trtstudio.memory-measure/1" and [r["instances"] for r in doc["rows"]] == [1, 2, 4]
    assert doc["context"]["bytes"] > 100 * 2**20  # a CUDA context and cuBLAS/cuDNN take hundreds of MiB
    assert doc["per_process_bytes"] == doc["context"]["bytes"] + doc["model_bytes"]
    for r in doc["rows"]:
        assert r["predicted_bytes"] == r["instances"] * doc["per_process_bytes"]
        assert abs(r["error"]) < 0.10, r  # the benchmark holds three models to 5 %
    assert doc["rows"][2]["measured_bytes"] > 3 * doc["rows"][0]["measured_bytes"]  # memory grows by the process
