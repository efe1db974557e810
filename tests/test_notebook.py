"""The tutorial notebook (docs/notebooks/engine_tour.ipynb) run end to end in a real Jupyter kernel
(nbclient + ipykernel), its outputs checked. Skipped, saying why, without TREx's example engines or
without the [notebook] extra."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "notebooks" / "engine_tour.ipynb"
TREX = ROOT.parent / "shared" / "fixtures" / "trt-real" / "NVIDIA_TensorRT_trex"
A100 = TREX / "release-11.0" / "examples" / "pytorch" / "resnet" / "A100"

nbformat = pytest.importorskip("nbformat", reason="the [notebook] extra (nbformat) is not installed")
nbclient = pytest.importorskip("nbclient", reason="the [notebook] extra (nbclient) is not installed")
pytest.importorskip("ipykernel", reason="the [notebook] extra (ipykernel) is not installed")


@pytest.mark.slow
@pytest.mark.skipif(not A100.is_dir(), reason=f"fixtures absent: {A100} (the notebook tours TREx's example engines)")
def test_engine_tour_runs_and_shows_what_it_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the notebook without outputs"
    monkeypatch.setenv("TRTSTUDIO_TREX_EXAMPLES", str(TREX))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=300,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    streams = "".join(o.get("text", "") for c in code for o in c.outputs if o.output_type == "stream")
    assert "NVIDIA A100 80GB PCIe" in streams and "TensorRT version not recorded" in streams
    assert "fp16 cuts" in streams and streams.count("convolutions aligned") == 2
    aligned = [json.loads(line.split(":", 1)[1].strip().replace("'", '"')) for line in streams.splitlines()
               if "convolutions aligned" in line]
    assert all(a["base_aligned"] == a["base"] == 21 == a["other_aligned"] for a in aligned)
    assert "INT8 is 2 % slower than fp16" in streams and "INT8 is 37 % faster than fp16" in streams
    rich = [o for c in code for o in c.outputs if o.output_type in ("display_data", "execute_result")]
    html = [o["data"]["text/html"] for o in rich if "text/html" in o.get("data", {})]
    svg = [o["data"]["image/svg+xml"] for o in rich if "image/svg+xml" in o.get("data", {})]
    assert len(svg) >= 4 and all(s.lstrip().startswith("<svg") for s in svg)
    assert any("<table" in h for h in html) and all("nan" not in h.lower().split() for h in html)
    assert not list(tmp_path.glob("*.html")), "the notebook removes the report it writes"
