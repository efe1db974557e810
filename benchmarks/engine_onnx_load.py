"""Time ``graph.model.load_model`` on a synthetic 100,000-node ONNX model (benchmarks/synth.py):
the full load, and the deferred path the GUI can take (load without shape inference for the first
frame, ``infer_shapes_later`` in a worker afterwards), and check both give the same model.

    python benchmarks/engine_onnx_load.py [--nodes 100000] [--kind transformer] [--repeat 3]

Aim: the deferred load <= ~1 s (it sits inside the 2.5 s first-frame budget). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from trtstudio.graph.model import infer_shapes_later, load_model  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--kind", default="transformer")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.onnx"
        subprocess.run([sys.executable, str(ROOT / "benchmarks/synth.py"), "--nodes", str(args.nodes),
                        "-o", str(path), "--kind", args.kind], check=True, capture_output=True)
        full, lazy, later = [], [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            eager = load_model(path)
            full.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            model = load_model(path, infer_shapes=False)
            lazy.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            infer_shapes_later(model)
            later.append(time.perf_counter() - t0)
        same = eager.summary() == model.summary() and [t.to_json() for t in eager.graph.tensors.values()] == [
            t.to_json() for t in model.graph.tensors.values()]
        print(json.dumps({
            "bench": "onnx_load", "nodes": args.nodes, "kind": args.kind, "bytes": path.stat().st_size,
            "load_model_s": round(min(full), 3), "load_without_shapes_s": round(min(lazy), 3),
            "infer_shapes_later_s": round(min(later), 3), "same_model": same, "aim_first_frame_load_s": 1.0,
        }))


if __name__ == "__main__":
    main()
