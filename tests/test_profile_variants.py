"""CUDA graph against eager as two variants of one run (``profiling.variants``, ``profile --cuda-graph``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from trtstudio.measure.ratio import ratio_interval
from trtstudio.profiling import variants

SAMPLE = Path(__file__).resolve().parents[1] / "trtstudio" / "resources" / "sample" / "mobilenetv2_035.onnx"


def _section(eager: list[float], graph: list[float]) -> dict[str, Any]:
    """A variants section made the way graph_vs_eager makes it, from per-round medians."""
    speedup = ratio_interval(eager, graph, paired=True).inverse()
    e, g = float(np.median(eager)), float(np.median(graph))
    side = {variants.EAGER: eager, variants.GRAPH: graph}
    return {"rounds": len(eager), "per_round": 30,
            **{k: {"label": variants.LABELS[k], "median_ms": float(np.median(v)), "enqueue_ms": None, "gpu_ms": 1.0}
               for k, v in side.items()},
            "verdict": variants.verdict(speedup, e, g), "speedup": speedup.to_json()}


def test_a_clear_speedup_names_the_launch_cost_and_noise_says_no_difference() -> None:
    rng = np.random.default_rng(0)
    eager = list(9.5 + rng.normal(0, 0.2, 10))
    graph = list(1.0 + rng.normal(0, 0.02, 10))
    sec = _section(eager, graph)
    assert sec["speedup"]["significant"] and sec["speedup"]["low"] > 5
    assert "faster than eager" in sec["verdict"] and "launching the work costs about 8." in sec["verdict"]
    text = "\n".join(variants.render_text(sec))
    assert "10 paired rounds" in text and "CUDA graph" in text and "-" in text  # no enqueue figure: a dash
    same = list(5.0 + rng.normal(0, 0.3, 10))
    other = [v + rng.normal(0, 0.3) for v in same]
    noisy = _section(same, other)
    assert not noisy["speedup"]["significant"]
    assert noisy["verdict"].startswith("no significant difference")


def test_cuda_graph_on_a_backend_that_cannot_capture_is_one_line() -> None:
    proc = subprocess.run([sys.executable, "-m", "trtstudio", "profile", str(SAMPLE), "--backend", "ort", "--cuda-graph",
                           "--iterations", "3"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --cuda-graph: backend 'ort' cannot capture CUDA graphs")
    assert "torch-cuda" in lines[0]


@pytest.mark.gui  # the Live profile panel: left out of the Qt-less core run
def test_catalogue_lists_the_graph_backends_the_panel_offers(qtbot: Any) -> None:
    from trtstudio.backends.catalogue import CATALOGUE, graph_backends
    from trtstudio.ui.profile_panel import ProfilePanel

    assert graph_backends() == {"tensorrt", "rtx", "torch", "torch-cuda"}
    assert all(CATALOGUE[b].to_json()["cuda_graph"] for b in graph_backends())
    panel = ProfilePanel()
    qtbot.addWidget(panel)
    panel.set_model(str(SAMPLE))
    qtbot.waitUntil(lambda: panel.start_button.isEnabled(), timeout=20_000)
    combo = panel.backend_combo
    combo.setCurrentIndex(combo.findData("ort"))
    assert not panel.graph_check.isEnabled()
    panel.graph_check.setChecked(True)
    assert panel.request().cuda_graph is False  # greyed out: not asked for
    combo.setCurrentIndex(combo.findData("torch-cuda"))
    assert panel.graph_check.isEnabled()
    assert panel.request().cuda_graph is True


try:
    import torch

    HAVE_CUDA = bool(torch.cuda.is_available())
except Exception:  # noqa: BLE001 - torch missing or broken: no GPU test
    HAVE_CUDA = False


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_CUDA, reason="no CUDA device visible to torch")
def test_profile_cuda_graph_shows_eager_and_graph_variants(tmp_path: Path) -> None:
    pytest.importorskip("onnx2torch")
    sys.path.insert(0, str(Path(__file__).parent))
    from shape_models import detector

    path = detector(tmp_path / "det.onnx", imgsz=[64, 64])
    proc = subprocess.run([sys.executable, "-m", "trtstudio", "profile", str(path), "--backend", "torch-cuda",
                           "--cuda-graph", "--iterations", "100", "--variant-rounds", "6", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    sec = doc["variants"]
    assert sec["rounds"] == 6 and sec["eager"]["count"] == sec["cuda_graph"]["count"] == 6 * sec["per_round"]
    assert sec["cuda_graph"]["enqueue_ms"] < sec["eager"]["enqueue_ms"]
    assert sec["speedup"]["method"] == "paired rounds" and sec["speedup"]["value"] > 0
    assert sec["verdict"]
