"""Fuzz: ONNX models mutated at the protobuf field level (opsets, dims, dangling inputs, op types,
external data that escapes the model's folder or has a bad offset, huge initializer dims, element
types, cycles) and at the byte level, through inspect, layers --onnx, profile and build.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import onnx
import pytest
from fuzz import LONG, harness, mutate, seeds
from onnx import TensorProto, helper

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("onnx")
    model = seeds.write_model(d)
    files = seeds.write_engine_seeds(d)
    return {"dir": d, "model": model, **files}


def _base() -> onnx.ModelProto:
    from onnx_models import conv_net

    return conv_net(batch=1)


def _external(m: onnx.ModelProto, **fields: str) -> onnx.ModelProto:
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.ClearField("float_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in fields.items():
        e = t.external_data.add()
        e.key, e.value = k, v
    return m


def _set(fn: Callable[[onnx.ModelProto], object]) -> Callable[[], onnx.ModelProto]:
    def make() -> onnx.ModelProto:
        m = _base()
        fn(m)
        return m
    return make


def _cycle(m: onnx.ModelProto) -> None:
    m.graph.node[0].input[0] = m.graph.node[1].output[0]


# name -> (model maker, what the outcome must say: "warning: <text>" on exit 0, or "error" text)
STRUCTURAL: dict[str, tuple[Callable[[], onnx.ModelProto], str]] = {
    "opset-99999": (_set(lambda m: setattr(m.opset_import[0], "version", 99999)), "warning:opset"),
    "opset-negative": (_set(lambda m: setattr(m.opset_import[0], "version", -3)), "warning:opset"),
    "custom-domain-opset": (_set(lambda m: m.opset_import.append(helper.make_opsetid("com.x", 7))), "ok"),
    "dim-negative": (_set(lambda m: setattr(m.graph.input[0].type.tensor_type.shape.dim[1], "dim_value", -5)),
                     "warning:negative"),
    "dangling-input": (_set(lambda m: m.graph.node[1].input.append("ghost")), "warning:ghost"),
    "empty-op-type": (_set(lambda m: setattr(m.graph.node[1], "op_type", "")), "any"),
    "unknown-op": (_set(lambda m: setattr(m.graph.node[1], "op_type", "NoSuchOp")), "any"),
    "cycle": (_set(_cycle), "error:cyclic"),
    "ir-huge": (_set(lambda m: setattr(m, "ir_version", 2**62)), "error:IR version"),
    "elem-type-999": (_set(lambda m: setattr(m.graph.input[0].type.tensor_type, "elem_type", 999)), "any"),
    "init-dims-huge": (_set(lambda m: m.graph.initializer[0].dims.extend([2**40, 2**40])), "any"),
    "init-dims-negative": (_set(lambda m: m.graph.initializer[1].dims.__setitem__(0, -7)), "any"),
    "no-nodes": (_set(lambda m: m.graph.ClearField("node")), "any"),
    "ext-escape": (_set(lambda m: _external(m, location="../../../../etc/passwd")), "error:outside"),
    "ext-absolute": (_set(lambda m: _external(m, location="/etc/passwd")), "error:outside"),
    "ext-offset-abc": (_set(lambda m: _external(m, location="w.bin", offset="abc")), "error:offset"),
    "ext-length-huge": (_set(lambda m: _external(m, location="w.bin", offset="0", length=str(10**400))), "error"),
    "ext-missing": (_set(lambda m: _external(m, location="nope.bin")), "error:not found"),
    "ext-dir": (_set(lambda m: _external(m, location=".")), "error"),
    "ext-fifo-like": (_set(lambda m: _external(m, location="/dev/zero")), "error:outside"),
}


def _inspect(f: Path, json_out: bool = True) -> harness.Outcome:
    return harness.run_main(["inspect", str(f)] + (["--json"] if json_out else []))


@pytest.mark.parametrize("name", sorted(STRUCTURAL))
def test_structural(world: dict[str, Path], tmp_path: Path, name: str) -> None:
    make, expect = STRUCTURAL[name]
    (tmp_path / "w.bin").write_bytes(b"\x00" * 16)
    f = tmp_path / f"{name}.onnx"
    f.write_bytes(make().SerializeToString())
    o = _inspect(f)
    doc = harness.check(o, file=f if o.rc else None, json_out=True)
    kind, _, text = expect.partition(":")
    if kind == "warning":
        assert o.rc == 0, str(o)
        assert any(text in w for w in doc["warnings"]), str(o)  # type: ignore[index]
        o2 = _inspect(f, json_out=False)
        assert o2.rc == 0 and any(text in ln for ln in o2.out.splitlines() if "warning:" in ln), str(o2)
    elif kind == "error":
        assert o.rc == 2 and text in o.err.replace(str(f), "FILE"), str(o)
    elif kind == "ok":
        assert o.rc == 0 and not doc["warnings"], str(o)  # type: ignore[index]
    if name.startswith("ext-") and o.rc == 0:
        raise AssertionError(f"external data case accepted: {o}")


def test_external_data_outside_is_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal happens before any open() of the escaping path."""
    import builtins

    f = tmp_path / "m.onnx"
    f.write_bytes(_external(_base(), location="../secret.bin").SerializeToString())
    secret = (tmp_path.parent / "secret.bin").resolve()
    secret.write_bytes(b"\x00" * 64)
    opened: list[str] = []
    real_open = builtins.open

    def spy(file, *a, **k):  # type: ignore[no-untyped-def]
        if isinstance(file, (str, Path)) and Path(file).resolve() == secret:
            opened.append(str(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr(builtins, "open", spy)
    o = _inspect(f)
    harness.check(o, file=f, allow_ok=False)
    assert "outside" in o.err and not opened


@pytest.mark.parametrize("seed", ["conv_net", "with_subgraphs", "sample"])
def test_bytes(world: dict[str, Path], tmp_path: Path, seed: str) -> None:
    if seed == "sample":
        data = (seeds.SAMPLE_DIR / "mobilenetv2_035.onnx").read_bytes()
    elif seed == "with_subgraphs":
        from onnx_models import with_subgraphs

        data = with_subgraphs().SerializeToString()
    else:
        data = world["model"].read_bytes()
    f = tmp_path / "m.onnx"
    for _tag, buf in mutate.byte_mutations(data, random.Random(seed), 300 if LONG else 60):
        f.write_bytes(buf)
        o = _inspect(f)
        harness.check(o, file=f if o.rc else None, json_out=True)


def test_op_type_bytes_flipped(tmp_path: Path) -> None:
    """Each byte of every op_type and node name flipped (the issue's TypeError in the summary)."""
    data = _base().SerializeToString()
    f = tmp_path / "m.onnx"
    targets = [b"Conv", b"Relu", b"Gemm", b"/conv1/Conv", b"Flatten"]
    for t in targets:
        i = data.find(t)
        for j in range(len(t)):
            for val in (0x00, 0x80, 0xFF, data[i + j] ^ 0x20):
                buf = bytearray(data)
                buf[i + j] = val
                f.write_bytes(bytes(buf))
                o = _inspect(f)
                harness.check(o, file=f if o.rc else None, json_out=True)


@pytest.mark.parametrize("name", ["dim-negative", "dangling-input", "cycle", "ext-escape", "unknown-op", "opset-99999"])
def test_other_commands_on_structural(world: dict[str, Path], tmp_path: Path, name: str) -> None:
    """layers --onnx, profile (ONNX Runtime) and build on the same models: 0, 1 (a run that failed) or 2."""
    make, _ = STRUCTURAL[name]
    f = tmp_path / f"{name}.onnx"
    f.write_bytes(make().SerializeToString())
    o = harness.run_main(["layers", str(world["layers"]), "--onnx", str(f), "--json"])
    harness.check(o, file=f if o.rc else None, json_out=True)
    o = harness.run_main(["profile", str(f), "--backend", "ort", "--iterations", "2", "--warmup", "0", "--json"])
    harness.check(o, file=f if o.rc == 2 else None, json_out=True, allow_run_failure=True)
