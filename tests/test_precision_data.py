"""Calibration/validation data: .npy/.npz folders, scripts, images, and the errors bad data gets."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx_models import conv_net

from trtstudio.errors import InputError
from trtstudio.precision.data import batches, load_samples, model_inputs


@pytest.fixture
def specs():
    return model_inputs(conv_net())


def test_npy_folder_single_and_batched(tmp_path, specs) -> None:
    rng = np.random.default_rng(0)
    np.save(tmp_path / "a.npy", rng.standard_normal((1, 3, 16, 16)).astype(np.float32))
    np.save(tmp_path / "b.npy", rng.standard_normal((3, 16, 16)).astype(np.float32))  # no batch axis
    np.save(tmp_path / "c.npy", rng.standard_normal((4, 3, 16, 16)).astype(np.float64))  # a batch, float64
    samples = load_samples(tmp_path, specs)
    assert len(samples) == 6
    assert all(s["x"].shape == (1, 3, 16, 16) and s["x"].dtype == np.float32 for s in samples)
    fed = batches(samples, specs, batch=4)
    assert [f["x"].shape[0] for f in fed] == [4, 2]
    assert len(load_samples(tmp_path, specs, limit=2)) == 2


def test_npz_and_script(tmp_path, specs) -> None:
    np.savez(tmp_path / "s.npz", x=np.zeros((2, 3, 16, 16), np.float32))
    assert len(load_samples(tmp_path / "s.npz", specs)) == 2
    script = tmp_path / "samples.py"
    script.write_text("import numpy as np\ndef samples():\n"
                      "    for i in range(3):\n        yield {'x': np.full((1, 3, 16, 16), i, np.float32)}\n")
    got = load_samples(script, specs)
    assert [float(s["x"].mean()) for s in got] == [0.0, 1.0, 2.0]


@pytest.mark.parametrize(
    ("array", "pattern"),
    [
        (np.zeros((1, 3, 8, 8), np.float32), r"input 'x' expects shape \[N,3,16,16\]; sample 0 has \[1, 3, 8, 8\]"),
        (np.zeros((1, 3, 16, 16), np.int32), r"input 'x' expects float32 \[N,3,16,16\]; sample 0 is int32"),
        (np.zeros((16, 16), np.float32), r"input 'x' expects shape \[N,3,16,16\]"),
    ],
)
def test_bad_arrays_name_input_and_shape(tmp_path, specs, array, pattern) -> None:
    np.save(tmp_path / "bad.npy", array)
    with pytest.raises(InputError, match=pattern) as info:
        load_samples(tmp_path, specs)
    assert info.value.path == str(tmp_path)


def test_zero_or_too_few_samples(tmp_path, specs) -> None:
    (tmp_path / "readme.txt").write_text("nothing here")
    with pytest.raises(InputError, match=r"0 calibration sample\(s\).*'x' float32 \[N,3,16,16\]"):
        load_samples(tmp_path, specs)
    np.save(tmp_path / "one.npy", np.zeros((1, 3, 16, 16), np.float32))
    with pytest.raises(InputError, match=r"1 calibration sample\(s\), at least 4"):
        load_samples(tmp_path, specs, min_samples=4)
    with pytest.raises(InputError, match="no such file"):
        load_samples(tmp_path / "missing", specs)


def test_wrong_names_and_broken_script(tmp_path, specs) -> None:
    np.savez(tmp_path / "s.npz", image=np.zeros((1, 3, 16, 16), np.float32))
    with pytest.raises(InputError, match=r"no data for input 'x' \(expects float32 \[N,3,16,16\]"):
        load_samples(tmp_path / "s.npz", specs)
    script = tmp_path / "bad.py"
    script.write_text("def samples():\n    raise RuntimeError('disk gone')\n    yield {}\n")
    with pytest.raises(InputError, match="samples\\(\\) raised RuntimeError: disk gone"):
        load_samples(script, specs)
    (tmp_path / "none.py").write_text("x = 1\n")
    with pytest.raises(InputError, match="must define samples"):
        load_samples(tmp_path / "none.py", specs)


def test_images_need_pillow_or_load(tmp_path, specs) -> None:
    (tmp_path / "cat.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    try:
        import PIL  # noqa: F401
    except ImportError:
        with pytest.raises(InputError, match="Pillow"):
            load_samples(tmp_path, specs)
    else:
        with pytest.raises(InputError, match="cannot read image"):
            load_samples(tmp_path, specs)


def test_model_inputs_skip_initializers(tmp_path) -> None:
    m = conv_net()
    m.graph.input.append(onnx.helper.make_tensor_value_info("w1", onnx.TensorProto.FLOAT, [8, 3, 3, 3]))
    assert [s["name"] for s in model_inputs(m)] == ["x"]


def test_batched_file_splits_for_a_fixed_batch_of_one(tmp_path) -> None:
    specs = [{"name": "x", "dtype": "float32", "shape": [1, 3, 16, 16]}]  # as --shapes x:1x3x16x16 makes it
    np.save(tmp_path / "b.npy", np.arange(4 * 3 * 16 * 16, dtype=np.float32).reshape(4, 3, 16, 16))
    samples = load_samples(tmp_path, specs)
    assert len(samples) == 4 and samples[3]["x"].shape == (1, 3, 16, 16)
    assert samples[1]["x"][0, 0, 0, 0] == 3 * 16 * 16
