"""`trtstudio triton-config`: the written config.pbtxt parses as Triton's ModelConfig protobuf and
says what the model is."""

from __future__ import annotations

from pathlib import Path

import onnx
import onnx_models as models
import pytest

from trtstudio.cli import main

model_config_pb2 = pytest.importorskip("tritonclient.grpc.model_config_pb2")
text_format = pytest.importorskip("google.protobuf.text_format")


def _config(folder: Path):  # type: ignore[no-untyped-def]
    return text_format.Parse((folder / "config.pbtxt").read_text(), model_config_pb2.ModelConfig())


def test_onnx_model_with_a_dynamic_batch(sample_model: Path, tmp_path: Path) -> None:
    out = tmp_path / "repo" / "mobilenet"
    assert main(["triton-config", str(sample_model), "-o", str(out), "--instances", "2"]) == 0
    cfg = _config(out)
    assert cfg.name == "mobilenet" and cfg.platform == "onnxruntime_onnx" and cfg.max_batch_size == 8
    m = onnx.load(str(sample_model), load_external_data=False)
    (inp,) = cfg.input
    assert inp.name == m.graph.input[0].name and inp.data_type == model_config_pb2.TYPE_FP32
    dims = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
    assert list(inp.dims) == dims[1:]  # the batch dim is Triton's, not in dims
    assert [o.name for o in cfg.output] == [o.name for o in m.graph.output]
    assert cfg.instance_group[0].count == 2 and cfg.HasField("dynamic_batching")
    assert (out / "1" / "model.onnx").read_bytes() == sample_model.read_bytes()


def test_static_model_and_an_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    static = tmp_path / "c.onnx"
    m = models.conv_net()
    for vi in [*m.graph.input, *m.graph.output]:  # a fixed batch of 1
        vi.type.tensor_type.shape.dim[0].ClearField("dim_param")
        vi.type.tensor_type.shape.dim[0].dim_value = 1
    onnx.save(m, str(static))
    out = tmp_path / "repo" / "conv"
    assert main(["triton-config", str(static), "-o", str(out)]) == 0
    cfg = _config(out)
    shape = [d.dim_value for d in onnx.load(str(static)).graph.input[0].type.tensor_type.shape.dim]
    assert cfg.max_batch_size == 0 and list(cfg.input[0].dims) == shape and not cfg.HasField("dynamic_batching")
    # a fixed first dim cannot be batched by Triton
    assert main(["triton-config", str(static), "-o", str(tmp_path / "repo" / "x"), "--max-batch", "4"]) == 2
    assert "dynamic first dimension" in capsys.readouterr().err
    # an engine needs the ONNX model it came from; then it is a tensorrt_plan with the engine copied
    engine = tmp_path / "c.engine"
    engine.write_bytes(b"\x00" * 64)  # a stand-in plan file: only copied, never read here
    assert main(["triton-config", str(engine), "-o", str(tmp_path / "repo" / "e")]) == 2
    assert "--onnx" in capsys.readouterr().err
    assert main(["triton-config", str(engine), "--onnx", str(static), "-o", str(tmp_path / "repo" / "e")]) == 0
    cfg = _config(tmp_path / "repo" / "e")
    assert cfg.platform == "tensorrt_plan" and (tmp_path / "repo" / "e" / "1" / "model.plan").read_bytes() == engine.read_bytes()
    # an existing folder is kept unless --force
    assert main(["triton-config", str(static), "-o", str(out)]) == 2
    assert main(["triton-config", str(static), "-o", str(out), "--force"]) == 0
