"""The one profiling session of the CLI and the window (trtstudio.profiling.session): ProfileRequest,
FieldError naming fields, RunRecord with the model's content hash, run_profile on real ONNX
Runtime sessions and the trtstudio.profile/1 document. No Qt."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx_models as models
import pytest
from backend_doubles import FailingOrtBackend, failing_factory

from trtstudio.errors import BackendError, FieldError, InputError
from trtstudio.profiling.runner import RunState
from trtstudio.profiling.session import (
    SCHEMA,
    ProfileOutcome,
    ProfileRequest,
    RunRecord,
    file_sha256,
    run_layers,
    run_profile,
)
from trtstudio.tasks import TaskEvent


@pytest.fixture
def conv(tmp_path: Path) -> Path:
    path = tmp_path / "conv.onnx"
    onnx.save(models.conv_net(), path)  # dynamic batch "N"
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- requests and their errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(("changes", "field"), [
    ({"iterations": 0}, "iterations"),
    ({"threads": 0}, "threads"),
    ({"layer_iterations": -1}, "layer_iterations"),
    ({"warmup": -1}, "warmup"),
    ({"duration_s": 0.0}, "duration_s"),
    ({"model": ""}, "model"),
])
def test_validate_names_the_field_not_a_flag(changes: dict[str, Any], field: str) -> None:
    req = ProfileRequest(**{"model": "m.onnx", **changes})
    with pytest.raises(FieldError) as info:
        req.validate()
    assert info.value.field == field
    assert "--" not in str(info.value) and str(info.value).startswith(f"{field}: ")
    assert {f.name for f in dataclasses.fields(ProfileRequest)} >= {info.value.field}
    assert info.value.named("--x").one_line().startswith("--x: ")  # what the CLI shows


def test_a_valid_request_passes_and_its_settings_are_json() -> None:
    req = ProfileRequest("m.onnx", backend="torch-cuda", shapes={"x": (2, 3, 16, 16)}, iterations=None, duration_s=0.5,
                         threads=2, cuda_graph=True)
    req.validate()
    settings = req.settings()
    assert set(settings) == {f.name for f in dataclasses.fields(ProfileRequest)}
    assert settings["shapes"] == {"x": [2, 3, 16, 16]} and settings["cuda_graph"] is True
    assert json.loads(json.dumps(settings)) == settings


def test_a_bad_shape_is_a_field_error_of_shapes(conv: Path) -> None:
    with pytest.raises(FieldError) as info:
        run_profile(ProfileRequest(str(conv), shapes={"x": (1, 3, 16)}, iterations=5))
    assert info.value.field == "shapes" and "rank" in info.value.message and "--" not in str(info.value)
    with pytest.raises(FieldError) as info:
        run_profile(ProfileRequest(str(conv), shapes={"nope": (1, 3, 16, 16)}, iterations=5))
    assert info.value.field == "shapes" and "nope" in info.value.message


def test_bad_input_data_names_the_data_file(conv: Path, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, x=np.zeros((1, 3, 8, 8), np.float32))
    with pytest.raises(InputError) as info:
        run_profile(ProfileRequest(str(conv), shapes={"x": (1, 3, 16, 16)}, input_path=str(wrong), iterations=5))
    assert info.value.path == str(wrong) and "[1, 3, 16, 16]" in info.value.message
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(InputError) as info:
        run_profile(ProfileRequest(str(conv), input_path=str(junk), iterations=5))
    assert info.value.path == str(junk)


def test_the_cli_turns_fields_into_flags(conv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from trtstudio.cli import main

    assert main(["profile", str(conv), "--shapes", "x:1x3x16", "--iterations", "3"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --shapes: ") and "rank" in err and "\n" not in err
    assert main(["profile", str(conv), "--iterations", "0"]) == 2
    assert capsys.readouterr().err.strip().startswith("error: --iterations: must be positive")


# -- runs and what they record ------------------------------------------------------------------------------


def test_run_records_the_model_it_ran(conv: Path) -> None:
    events: list[TaskEvent] = []
    req = ProfileRequest(str(conv), shapes={"x": (2, 3, 16, 16)}, iterations=40, warmup=3, threads=1)
    outcome = run_profile(req, RunState(on_event=events.append))
    rec = outcome.record
    assert rec.model == str(conv) and rec.model_sha256 == sha(conv) and rec.backend == "ort"
    assert rec.shapes == {"x": [2, 3, 16, 16]} and outcome.shapes == {"x": (2, 3, 16, 16)}
    assert rec.settings == req.settings() and rec.started > 0
    assert [e.kind for e in events] == ["loaded", "cold"]
    assert events[0].data["record"] is rec and events[0].data["batch"] == 2
    assert events[1].data["cold_ms"] > 0
    assert outcome.result.count == 40 and outcome.result.error is None and not outcome.result.stopped
    # the record decides whose run it is
    assert rec.same_model(str(conv), sha(conv))
    other = conv.with_name("other.onnx")
    onnx.save(models.conv_net(channels=4), other)
    assert not rec.same_model(str(other), sha(other))
    assert not rec.same_model(None, None)
    onnx.save(models.conv_net(channels=4), conv)  # the file changed since the run: not the model that ran
    assert not rec.same_model(str(conv), sha(conv))


def test_the_profile_document(conv: Path) -> None:
    outcome = run_profile(ProfileRequest(str(conv), iterations=25, warmup=2, per_layer=True, layer_iterations=3))
    doc = outcome.to_dict()
    assert doc["schema"] == SCHEMA == "trtstudio.profile/1"
    assert doc["model"] == str(conv) and doc["model_sha256"] == sha(conv) and doc["backend"] == "ort"
    assert doc["shapes"] == {"x": [1, 3, 16, 16]}  # the dynamic batch defaults to 1
    lat = doc["latency_ms"]
    assert lat["count"] == 25 and lat["min"] <= lat["median"] <= lat["p99"] <= lat["max"]
    assert doc["throughput"]["inferences_per_s"] > 0 and doc["error"] is None and doc["stopped"] is False
    assert "host_rss_bytes" in doc["memory"]
    names = {n.name for n in onnx.load(str(conv)).graph.node}
    assert doc["layers"] and {n for r in doc["layers"] for n in r["onnx_nodes"]} <= names
    assert json.loads(json.dumps(doc, default=float))["model_sha256"] == sha(conv)
    rd = outcome.run_data()
    assert rd.model == str(conv) and rd.record["model_sha256"] == sha(conv) and rd.name == "conv.onnx (ort)"
    assert rd.latency_ms.size == 25 and rd.layers == doc["layers"]


def test_a_timed_run_and_input_data(conv: Path, tmp_path: Path) -> None:
    data = tmp_path / "x.npy"
    np.save(data, np.ones((3, 3, 16, 16), np.float32))
    outcome = run_profile(ProfileRequest(str(conv), input_path=str(data), iterations=None, duration_s=0.3, warmup=1))
    assert outcome.shapes == {"x": (3, 3, 16, 16)}  # taken from the data
    assert outcome.result.count > 0 and outcome.result.active_s == pytest.approx(0.3, abs=0.15)
    assert outcome.record.settings["duration_s"] == 0.3 and outcome.record.settings["iterations"] is None


def test_a_per_layer_run_alone(conv: Path) -> None:
    outcome = run_layers(ProfileRequest(str(conv), layer_iterations=2))
    doc = outcome.to_dict()
    assert outcome.result is None and doc["layers"] and "latency_ms" not in doc
    assert doc["model_sha256"] == sha(conv) and "notes" in doc


class FailsEarly(FailingOrtBackend):
    fail_at = 30


def test_a_backend_error_mid_run_keeps_the_samples_and_closes_the_backend(conv: Path) -> None:
    made: list[FailingOrtBackend] = []
    factory = functools.partial(failing_factory, cls=FailsEarly, made=made)
    outcome = run_profile(ProfileRequest(str(conv), iterations=1_000, warmup=2), factory=factory)
    doc = outcome.to_dict()
    assert isinstance(outcome.result.error, BackendError)
    assert doc["error"].startswith("BackendError: simulated device loss")
    assert doc["latency_ms"]["count"] == FailsEarly.fail_at - 1 - 1 - 2  # minus the cold and warm-up runs
    assert any("run stopped by an error" in w for w in doc["warnings"])
    assert len(made) == 1 and made[0].closed
    with pytest.raises(FieldError):  # a request that fails while preparing closes its backend too
        run_profile(ProfileRequest(str(conv), shapes={"x": (1,)}), factory=factory)
    assert len(made) == 2 and made[1].closed


def test_outcome_document_without_a_result_keeps_the_notes() -> None:
    req = ProfileRequest("m.onnx")
    doc = ProfileOutcome(req, RunRecord("m.onnx", None, "ort"), notes=["a note"]).to_dict()
    assert doc["notes"] == ["a note"] and doc["model_sha256"] is None and doc["settings"] == {}


def test_file_sha256(tmp_path: Path, conv: Path) -> None:
    assert file_sha256(conv) == sha(conv)
    copy = shutil.copy(conv, tmp_path / "copy.onnx")
    assert file_sha256(copy) == file_sha256(conv)
    assert file_sha256(tmp_path / "missing.onnx") is None
    assert file_sha256(conv, chunk=7) == sha(conv)  # chunked reading gives the same digest
