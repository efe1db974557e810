"""trtstudio's findings hold >= 97 % of TREx's true lint flags on every TREx engine in the fixtures
(benchmarks/trex_lint_parity.py states TREx's rules; a new TREx engine is counted without a new test)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "trex_lint_parity.py"


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("trex_lint_parity", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_parity_with_trex_linters_on_every_trex_engine(trt_real: Path) -> None:
    bench = _bench()
    if not (trt_real / bench.TREX).is_dir():
        pytest.skip("no TREx engines in the fixtures")
    doc = bench.parity(trt_real)
    graphs = [p for p in (trt_real / bench.TREX).rglob("*.json") if ".graph" in p.name]
    detailed = [p for p in graphs if all(isinstance(lay, dict) for lay in json.loads(p.read_text())["Layers"])]
    assert detailed and len(doc["engines"]) == len(detailed)  # every TREx engine with layer details is counted
    assert doc["expected"] > 0 and all(r["expected"] == r["matched"] + len(r["missing"]) for r in doc["engines"])
    missing = [(r["engine"], m["rule"], m["layer"]) for r in doc["engines"] for m in r["missing"]]
    assert doc["parity"] >= 0.97, f"parity {doc['parity']:.1%} ({doc['matched']}/{doc['expected']}); missing {missing}"
    # TREx's flags set apart as false each say why
    assert all(f["why"] for r in doc["engines"] for f in r["trex_false"])


def test_the_restored_flags_are_matched_at_info(trt_real: Path) -> None:
    """The input quantize of TREx's MobileNet-V2 residuals (QuantizeLinear_2) and the first convolution's
    3 input channels are TREx flags that our findings match, at info."""
    from trtstudio.engine.diagnose import diagnose
    from trtstudio.engine.load import load_engine

    bench = _bench()
    base = trt_real / bench.TREX / "release-11.0/tests/inputs/mobilenet_v2_residuals.qat.onnx.engine"
    graph = Path(f"{base}.graph.json")
    if not graph.is_file():
        pytest.skip("TREx's MobileNet-V2 residuals engine is absent")
    doc = json.loads(graph.read_text())
    true, _ = bench.trex_flags(doc)
    first = doc["Layers"][0]["Name"], doc["Layers"][1]["Name"]
    assert {"rule": "ReformatLinter.type_conversion", "layer": first[0]} in true and first[0] == "QuantizeLinear_2"
    assert {"rule": "ConvLinter.alignment", "layer": first[1]} in true
    fs = diagnose(load_engine([graph, Path(f"{base}.profile.json")]))
    said = {(f.layer, f.kind): f for f in fs if f.layer in first}
    quant, align = said[(first[0], "reformat")], said[(first[1], "unaligned_channels")]
    assert quant.severity == align.severity == "info"
    assert "--inputIOFormats=int8:chw4" in quant.hint and "C=3" in align.message and "expected" in align.hint
