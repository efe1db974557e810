"""The notebooks under docs/notebooks run end to end in a real Jupyter kernel (nbclient + ipykernel),
their outputs checked: the tutorial (engine_tour.ipynb), and from_trex.ipynb, which runs each row of
docs/from-trex.md on TREx's own engines and asserts TREx's figures. Skipped, saying why, without TREx's example engines or
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


FROM_TREX = ROOT / "docs" / "notebooks" / "from_trex.ipynb"
TREX_INPUTS = TREX / "release-11.0" / "tests" / "inputs"


def _execute(path: Path, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the notebook without outputs"
    monkeypatch.setenv("TRTSTUDIO_TREX_EXAMPLES", str(TREX))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


@pytest.mark.slow
@pytest.mark.skipif(not A100.is_dir(), reason=f"fixtures absent: {A100} (the notebook tours TREx's example engines)")
def test_engine_tour_runs_and_shows_what_it_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nb = _execute(NOTEBOOK, tmp_path, monkeypatch)
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


@pytest.mark.slow
@pytest.mark.skipif(not TREX_INPUTS.is_dir(), reason=f"fixtures absent: {TREX_INPUTS} (the notebook runs TREx's engines)")
def test_from_trex_rows_give_trex_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/from-trex.md's rows, each run on TREx's own engines in docs/notebooks/from_trex.ipynb, whose
    asserts hold TREx's figures computed from the JSON files (layer and convolution counts, time
    per inference, weights); every picture it shows survives ``jupyter nbconvert --to html``."""
    import base64
    import re
    import xml.etree.ElementTree as ET

    nb = _execute(FROM_TREX, tmp_path, monkeypatch)
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    # the rows of docs/from-trex.md that name a Python call are each run by a section of the notebook
    doc = (ROOT / "docs" / "from-trex.md").read_text()
    source = "".join(c.source for c in code)
    calls = ["open_engine", "summary()", "get_layers_by_type", "time_by_type", "time_by_precision", "plot_layers",
             "plot_timing", "graph(", "ts.diff", "ts.compare", "findings", "to_excel"]
    assert all(c in doc and c in source for c in calls), [c for c in calls if c not in doc or c not in source]
    streams = "".join(o.get("text", "") for c in code for o in c.outputs if o.output_type == "stream")
    assert "mobilenet_v2_residuals: per inference 0.355 ms (TREx: 0.356 ms)" in streams
    assert "53 convolutions; 34 of them CaskConvolution" in streams
    svgs = [o["data"]["image/svg+xml"] for c in code for o in c.outputs
            if o.output_type in ("display_data", "execute_result") and "image/svg+xml" in o.get("data", {})]
    assert len(svgs) == 4
    for s in svgs:
        assert ET.fromstring(s).tag == "{http://www.w3.org/2000/svg}svg"
    assert not list(tmp_path.iterdir()), "the notebook removes what it writes"
    exporters = pytest.importorskip("nbconvert.exporters", reason="nbconvert is not installed")
    page, _ = exporters.HTMLExporter().from_notebook_node(nb)
    images = re.findall(r'<img [^>]*src="data:image/svg\+xml;base64,([^"]+)"', page)
    assert len(images) == len(svgs)
    for b in images:  # an image without the SVG namespace is shown broken by every browser
        assert ET.fromstring(base64.b64decode(b)).tag == "{http://www.w3.org/2000/svg}svg"
